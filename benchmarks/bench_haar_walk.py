"""Superregular random walk ([BSV22]; docs/random-walk.md): partial sums vs i.i.d. Laplace, speed, W1 of haar_walk vs PMM.

Writes benchmarks/results/haar_walk.json. Run from the repository root:

    .venv/bin/python benchmarks/bench_haar_walk.py [--quick]

1. Mean over positions i of E|S_i|, S_i = Σ_{j<=i} noise_j, for superregular noise [Φη] (η ~ Lap(1/ε))
   and i.i.d. Laplace(1/ε) noise of the same ε, at m = 2^10, 2^16, 2^20 (targets: ratio at 2^16 <= 0.2;
   growth of the superregular walk from 2^10 to 2^20 within (21/11)^{3/2} x 1.3).
2. Noise + W1 projection (isotonic) at m = 2^20 (target < 2 s), and the whole mechanism at n = 10^6.
3. Mean exact W1 (1-D, ∫|F - G|) of haar_walk against PMM (and the flat histogram) at d = 1,
   n in {10^4, 10^6}, ε = 1, n public, beta(2, 5) data; plus a grid study behind haar_walk's default grid.
"""

from __future__ import annotations

import math
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks.common import best_of, write  # noqa: E402
from dpsynth_core import MECHANISMS, Domain, run  # noqa: E402
from dpsynth_core.grid import cell_of  # noqa: E402
from dpsynth_core.haar import iid_laplace_noise, prefix_row_norms, privatize_counts, superregular_noise  # noqa: E402
from dpsynth_core.mechanisms.haar_walk import closest_measure_on_line  # noqa: E402


def exact_w1_1d(x: np.ndarray, y: np.ndarray) -> float:
    """∫|F_x - F_y| exactly for two empirical measures on the line (O((n+m) log(n+m)))."""
    x, y = np.sort(np.ravel(x)), np.sort(np.ravel(y))
    allv = np.concatenate([x, y])
    allv.sort(kind="mergesort")
    dx = np.diff(allv)
    Fx = np.searchsorted(x, allv[:-1], side="right") / x.size
    Fy = np.searchsorted(y, allv[:-1], side="right") / y.size
    return float(np.sum(np.abs(Fx - Fy) * dx))


def _w1(x: np.ndarray, y: np.ndarray) -> tuple[float, str]:
    try:
        from dpsynth_core.transport import wasserstein1

        return float(wasserstein1(x.reshape(-1, 1), y.reshape(-1, 1), method="exact_1d")), "transport.exact_1d"
    except Exception:  # transport.py not there yet (or a different signature)
        return exact_w1_1d(x, y), "bench exact_w1_1d"


# --------------------------------------------------------------------------------- 1. walks
def partial_sums(quick: bool) -> dict:
    eps = 1.0
    draws = {10: 400, 16: 40, 20: 8} if not quick else {10: 100, 16: 10, 20: 2}
    out = {}
    rng = np.random.default_rng(0)
    for k, R in draws.items():
        m = 2**k
        acc = {"superregular": 0.0, "superregular_discrete": 0.0, "iid": 0.0}
        chunk = max(1, min(R, 2**22 // m))
        done = 0
        while done < R:
            r = min(chunk, R - done)
            acc["superregular"] += np.abs(np.cumsum(superregular_noise(m, eps, rng=rng, draws=r), axis=1)).sum()
            acc["superregular_discrete"] += np.abs(np.cumsum(
                superregular_noise(m, eps, rng=rng, draws=r, discrete=True), axis=1)).sum()
            acc["iid"] += np.abs(np.cumsum(iid_laplace_noise(m, eps, rng=rng, draws=r), axis=1)).sum()
            done += r
        means = {key: v / (R * m) for key, v in acc.items()}
        sd_sr = float((math.sqrt(2.0) / eps * prefix_row_norms(k)).mean())
        sd_iid = float((np.sqrt(2.0 * np.arange(1, m + 1)) / eps).mean())
        out[f"2^{k}"] = {
            "m": m, "draws": R, "mean_abs_partial_sum": means,
            "ratio_superregular_to_iid": means["superregular"] / means["iid"],
            "ratio_discrete_to_iid": means["superregular_discrete"] / means["iid"],
            "mean_sd_superregular_exact": sd_sr, "mean_sd_iid_exact": sd_iid, "ratio_of_mean_sd_exact": sd_sr / sd_iid,
            "lemma3_max_sd_bound": math.sqrt(2.0) / eps * (k + 1) ** 1.5,
        }
    growth = out["2^20"]["mean_abs_partial_sum"]["superregular"] / out["2^10"]["mean_abs_partial_sum"]["superregular"]
    target_growth = (21 / 11) ** 1.5 * 1.3
    out["targets"] = {
        "ratio_at_2^16": out["2^16"]["ratio_superregular_to_iid"], "ratio_target": 0.2,
        "ratio_ok": out["2^16"]["ratio_superregular_to_iid"] <= 0.2,
        "growth_2^10_to_2^20": growth, "growth_target": target_growth, "growth_ok": growth <= target_growth,
        "iid_growth_2^10_to_2^20": out["2^20"]["mean_abs_partial_sum"]["iid"] / out["2^10"]["mean_abs_partial_sum"]["iid"],
    }
    return out


# ---------------------------------------------------------------------------------- 2. speed
def speed(quick: bool) -> dict:
    m = 2**20
    n = 10**6
    rng = np.random.default_rng(1)
    U = rng.beta(2, 5, (n, 1))
    c = np.bincount(cell_of(U, m), minlength=m).astype(np.int64)
    positions = np.arange(m) / m
    res = {}
    for disc in (False, True):
        def job(disc=disc):
            noisy = privatize_counts(c, 1.0, "add_remove", np.random.default_rng(2), discrete=disc)
            return closest_measure_on_line(np.cumsum(noisy) / n, positions)

        t, F = best_of(job, 1 if quick else 3)
        res["discrete" if disc else "continuous"] = {"seconds": t, "target_seconds": 2.0, "ok": t < 2.0}
    X = rng.beta(2, 5, (n, 1))
    t_auto, _ = best_of(lambda: run("haar_walk", X, Domain.unit(1), epsilon=1.0, n_public=n, rng=3), 1)
    t_paper, _ = best_of(lambda: run("haar_walk", X, Domain.unit(1), epsilon=1.0, n_public=n, grid_rule="paper",
                                     rng=3), 1)
    return {"m": m, "noise_plus_projection": res, "timing": "best of 3 runs (1 with --quick)",
            "haar_walk_n1e6_seconds": {"auto_grid": t_auto, "paper_grid_2^20_cells": t_paper}}


# ---------------------------------------------------------------------------------- 3. W1
CONTENDERS = (
    ("haar_walk", {}, "haar_walk (auto grid)"),
    ("haar_walk", {"grid_rule": "paper"}, "haar_walk (paper grid ~ εn)"),
    ("haar_walk", {"rounding": "largest_remainder"}, "haar_walk (auto grid, largest remainder)"),
    ("pmm", {}, "pmm (default)"),
    ("pmm", {"depth_rule": "paper"}, "pmm (paper depth)"),
    ("flat_histogram", {}, "flat_histogram (baseline)"),
)


def w1_comparison(quick: bool) -> dict:
    sizes = {10**4: 20, 10**6: 5} if not quick else {10**4: 5, 10**5: 2}
    out = {}
    method = None
    for n, reps in sizes.items():
        X = np.random.default_rng(n).beta(2, 5, (n, 1))
        row = {}
        for name, kw, label in CONTENDERS:
            if name not in MECHANISMS:
                row[label] = "not registered"
                continue
            ws, bounds, secs = [], [], []
            for s in range(reps):
                t0 = time.perf_counter()
                rel = run(name, X, Domain.unit(1), epsilon=1.0, n_public=n, rng=s, **kw)
                secs.append(time.perf_counter() - t0)
                w, method = _w1(X[:, 0], rel.synthetic[:, 0])
                ws.append(w)
                bounds.append(rel.bound)
            row[label] = {"mean_w1": float(np.mean(ws)), "sd_w1": float(np.std(ws, ddof=1)) if reps > 1 else None,
                          "mean_bound": float(np.mean(bounds)) if bounds[0] is not None else None,
                          "mean_seconds": float(np.mean(secs)),
                          "params": {k: v for k, v in rel.params.items()
                                     if k in ("grid", "cells", "depth", "grid_rule", "bins")}}
        walk, pm = row.get("haar_walk (auto grid)"), row.get("pmm (default)")
        if isinstance(walk, dict) and isinstance(pm, dict):
            row["ratio_haar_walk_to_pmm"] = walk["mean_w1"] / pm["mean_w1"]
            paper_walk, paper_pmm = row["haar_walk (paper grid ~ εn)"], row["pmm (paper depth)"]
            row["ratio_paper_rules"] = paper_walk["mean_w1"] / paper_pmm["mean_w1"]
        out[f"n={n}"] = {"reps": reps, **row}
    out["w1_method"] = method
    out["setting"] = "d = 1, ε = 1, add/remove with n_public = n (no size spend), beta(2, 5) data, same seeds"
    return out


def grid_study(quick: bool) -> dict:
    """haar_walk's W1 against the number of cells (d = 1, exact) and cells per axis (d = 2, POT)."""
    out = {"d1": {}, "d2": {}}
    plan = {10**4: (range(4, 14), 10), 10**5: (range(6, 18), 4), 10**6: (range(8, 21), 2)}
    if quick:
        plan = {10**4: (range(4, 14), 3)}
    for n, (js, reps) in plan.items():
        X = np.random.default_rng(n + 1).beta(2, 5, (n, 1))
        res = {}
        for j in js:
            ws = [_w1(X[:, 0], run("haar_walk", X, Domain.unit(1), epsilon=1.0, n_public=n, grid=2**j,
                                   rng=s).synthetic[:, 0])[0] for s in range(reps)]
            res[f"2^{j}"] = float(np.mean(ws))
        best = min(res, key=res.get)
        auto = run("haar_walk", X, Domain.unit(1), epsilon=1.0, n_public=n, rng=0).params["cells"]
        paper = run("haar_walk", X, Domain.unit(1), epsilon=1.0, n_public=n, grid_rule="paper", rng=0).params["cells"]
        out["d1"][f"n={n}"] = {"reps": reps, "mean_w1_by_cells": res, "best": best,
                               "auto_cells": auto, "paper_cells": paper,
                               "auto_over_best": res.get(f"2^{int(math.log2(auto))}", float("nan")) / res[best],
                               "paper_over_best": res.get(f"2^{int(math.log2(paper))}", float("nan")) / res[best]}
    if not quick:
        import ot
        from scipy.spatial.distance import cdist

        n = 2000
        X = np.clip(np.random.default_rng(5).normal(0.5, 0.15, (n, 2)), 0, 1)
        a = np.full(n, 1.0 / n)
        res = {}
        for k in (4, 6, 7, 8, 11, 16, 23, 32, 45):
            ws = []
            for s in range(3):
                Y = run("haar_walk", X, Domain.unit(2), epsilon=1.0, n_public=n, grid=k, rng=s).synthetic
                ws.append(float(ot.emd2(a, np.full(len(Y), 1.0 / len(Y)), cdist(X, Y, "chebyshev"))))
            res[str(k)] = float(np.mean(ws))
        pm = []
        for s in range(3):
            Y = run("pmm", X, Domain.unit(2), epsilon=1.0, n_public=n, rng=s).synthetic
            pm.append(float(ot.emd2(a, np.full(len(Y), 1.0 / len(Y)), cdist(X, Y, "chebyshev"))))
        auto = run("haar_walk", X, Domain.unit(2), epsilon=1.0, n_public=n, rng=0).params["grid"]
        out["d2"] = {"n": n, "reps": 3, "data": "clipped N(0.5, 0.15^2) in [0,1]^2", "metric": "linf (POT exact)",
                     "mean_w1_by_cells_per_axis": res, "best": min(res, key=res.get), "auto_k": auto,
                     "paper_k": 45, "pmm_mean_w1": float(np.mean(pm))}
    return out


def main(quick: bool = False) -> dict:
    t0 = time.perf_counter()
    out = {"load_average_at_start": os.getloadavg()}
    out["partial_sums"] = partial_sums(quick)
    print("partial sums:", out["partial_sums"]["targets"], flush=True)
    out["speed"] = speed(quick)
    print("speed:", out["speed"], flush=True)
    out["w1_vs_pmm"] = w1_comparison(quick)
    print("w1:", {k: v.get("ratio_haar_walk_to_pmm") for k, v in out["w1_vs_pmm"].items() if isinstance(v, dict)},
          flush=True)
    out["grid_study"] = grid_study(quick)
    out["load_average_at_end"] = os.getloadavg()
    out["total_seconds"] = time.perf_counter() - t0
    out["quick"] = quick
    write("haar_walk", out)
    return out


if __name__ == "__main__":
    main(quick="--quick" in sys.argv)
