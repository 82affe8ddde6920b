"""Benchmarks of PMM and PSMM [HVZ23] (docs/pmm-psmm.md). Writes ``benchmarks/results/pmm_psmm.json``.

Parts (each figure is measured against a baseline in the same run):

1. ``pmm_scaling``: PMM end-to-end (validation, coding, counts, noise, consistency, sampling) against
   the "row-major grid index + np.bincount" of the same leaf grid, for n = 10^4 .. 10^7 (d = 2, 5),
   ε = 1, default parameters; peak traced memory (tracemalloc) against the input array's bytes.
   Acceptance: n = 10^6, d = 2 within 5x the baseline, peak extra memory < 4x the input.
2. ``psmm_projection``: the exact BL projection (sparse grid LP) time against the number of cells;
   acceptance 128x128 < 2 s, 32^3 < 30 s.
3. ``w1_curves``: exact W1 (POT) of PMM, PSMM and the flat histogram (defaults) against n and ε
   (two-cluster mixture, d = 2).
4. ``accuracy_ratio``: n = 5000, d = 2, ε = 1, two-cluster mixture, mean exact W1 of 10 runs: PMM
   with its defaults (and other variants) / the flat histogram at its best grid (scanned with the
   data in view, which favours the baseline). Target <= 0.9.
5. ``accuracy_ratio_large``: the same ratio at n = 10^5 and 10^6 with the grid W1 of
   ``transport.wasserstein1(method="grid")`` and its certified interval [value - h, value + h];
   the ratio interval is [lo_pmm / hi_flat, hi_pmm / lo_flat] and we say when it is too wide to tell.

Usage: ``.venv/bin/python benchmarks/bench_pmm_psmm.py [--quick] [--only=part1,part2]`` (parts:
pmm_scaling, psmm_projection, accuracy_ratio, w1_curves, accuracy_ratio_large). The full run takes
about 15 minutes of CPU (exact POT W1 at n = 5000 dominates); ``--quick`` about 4.
"""

from __future__ import annotations

import gc
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.common import write  # noqa: E402
from benchmarks.depth_study import make_data, w1_exact  # noqa: E402
from dpsynth_core import Domain, partition, run  # noqa: E402
from dpsynth_core.mechanisms.psmm import project  # noqa: E402


def timed(fn, repeat):
    best, out = float("inf"), None
    for _ in range(repeat):
        gc.collect()
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def baseline_counts(X, depth):
    """Row-major grid index of the raw points on PMM's leaf grid + np.bincount (no validation)."""
    idx, shape = partition.grid_index(X, depth)
    return np.bincount(idx, minlength=int(np.prod(shape)))


# ------------------------------------------------------------------------------ 1. scaling
def pmm_scaling(quick: bool) -> dict:
    rows = []
    ns = (10**4, 10**5, 10**6) if quick else (10**4, 10**5, 10**6, 10**7)
    for d in (2, 5):
        dom = Domain.unit(d)
        for n in ns:
            if d == 5 and n == 10**7 and quick:
                continue
            X = np.random.default_rng(n + d).random((n, d))
            rep = 7 if n <= 10**6 else 2
            depth = run("pmm", X, dom, epsilon=1.0, rng=0).params["depth"]
            t_pmm, t_base = float("inf"), float("inf")
            for i in range(rep):  # interleaved, so that both see the same machine load; minimum of each
                gc.collect()
                t0 = time.perf_counter()
                baseline_counts(X, depth)
                t_base = min(t_base, time.perf_counter() - t0)
                gc.collect()
                t0 = time.perf_counter()
                rel = run("pmm", X, dom, epsilon=1.0, rng=i)
                t_pmm = min(t_pmm, time.perf_counter() - t0)
            gc.collect()
            tracemalloc.start()
            run("pmm", X, dom, epsilon=1.0, rng=0)
            _, peak = tracemalloc.get_traced_memory()
            tracemalloc.stop()
            row = dict(d=d, n=n, depth=depth, consistency=rel.params["consistency"], pmm_seconds=t_pmm,
                       baseline_seconds=t_base, time_ratio=t_pmm / t_base, peak_bytes=peak,
                       input_bytes=X.nbytes, memory_ratio=peak / X.nbytes, n_synthetic=len(rel.synthetic))
            rows.append(row)
            print(f"scaling d={d} n={n:>8} r={depth:2d}: pmm {t_pmm * 1e3:8.1f} ms, baseline {t_base * 1e3:7.1f} ms, "
                  f"x{row['time_ratio']:.2f}; peak {peak / 2**20:7.1f} MiB = {row['memory_ratio']:.2f} x input",
                  flush=True)
            del X, rel
    acc = [r for r in rows if r["d"] == 2 and r["n"] == 10**6][0]
    return {"rows": rows, "acceptance_n1e6_d2": {"time_ratio": acc["time_ratio"], "time_target": 5.0,
                                                 "memory_ratio": acc["memory_ratio"], "memory_target": 4.0,
                                                 "pass": acc["time_ratio"] <= 5.0 and acc["memory_ratio"] < 4.0}}


# ------------------------------------------------------------------------ 2. PSMM projection
def psmm_projection(quick: bool) -> dict:
    rows = []
    grids = [(2, 32), (2, 64), (2, 128)] + ([] if quick else [(2, 192)]) + [(3, 16), (3, 32)]
    # warm-up (imports, first solver call)
    project(np.full(16, 1 / 16), 4, 2, "bl")
    for d, k in grids:
        X = make_data("two_clusters", 100_000, d, seed=7)
        rel = run("psmm", X, Domain.unit(d), epsilon=1.0, cells=k, projection="clip", n_public=len(X), rng=0)
        nu = rel.trace["noisy_signed_measure"]
        t, (tau, summary) = timed(lambda: project(nu, k, d, "bl"), 1)  # noqa: B023
        t_clip, _ = timed(lambda: project(nu, k, d, "clip"), 3)  # noqa: B023
        rows.append(dict(d=d, k=k, cells=k**d, bl_seconds=t, clip_seconds=t_clip, bl_value=summary["bl_value"],
                         arcs=summary["solver"].get("arcs"), dense_lp_variables=2 * (k**d) ** 2))
        print(f"projection d={d} k={k:3d} cells={k**d:6d}: {t:7.2f} s (clip {t_clip * 1e3:.2f} ms), "
              f"BL value {summary['bl_value']:.5f}", flush=True)
    t128 = [r["bl_seconds"] for r in rows if r["d"] == 2 and r["k"] == 128][0]
    t32 = [r["bl_seconds"] for r in rows if r["d"] == 3 and r["k"] == 32][0]
    return {"rows": rows, "acceptance": {"128x128_seconds": t128, "128x128_target": 2.0, "32^3_seconds": t32,
                                         "32^3_target": 30.0, "pass": t128 < 2.0 and t32 < 30.0}}


# ----------------------------------------------------------------------------- 3. W1 curves
MECHS = {
    "pmm (default)": ("pmm", {}),
    "pmm (paper: Cor. 12 depth, proportional)": ("pmm", {"depth_rule": "paper", "consistency": "proportional"}),
    "psmm (bl)": ("psmm", {}),
    "flat_histogram (default grid)": ("flat_histogram", {}),
}


def w1_curves(quick: bool) -> dict:
    rows = []
    reps = 3 if quick else 5
    if quick:
        grid = [(500, 0.5), (500, 2.0), (2000, 0.5), (2000, 2.0)]
    else:  # n sweep at ε = 1, ε sweep at n = 2000
        grid = [(n, 1.0) for n in (500, 1000, 2000, 4000)] + [(2000, e) for e in (0.25, 0.5, 2.0, 4.0)]
    for n, eps in grid:
        X = make_data("two_clusters", n, 2, seed=3)
        for label, (mech, kw) in MECHS.items():
            w = [w1_exact(X, run(mech, X, Domain.unit(2), epsilon=eps, rng=s, **kw).synthetic)
                 for s in range(reps)]
            rows.append(dict(n=n, eps=eps, mechanism=label, w1_mean=float(np.mean(w)),
                             w1_se=float(np.std(w, ddof=1) / np.sqrt(reps))))
        print(f"w1 n={n} eps={eps}: " + ", ".join(f"{r['mechanism']}={r['w1_mean']:.4f}"
                                                 for r in rows[-len(MECHS):]), flush=True)
    return {"data": "two_clusters d=2", "w1": "exact (POT, l_inf, unit cube)", "reps": reps, "rows": rows}


# --------------------------------------------------------------------------- 4. the ratio
VARIANTS = {
    "pmm default": {},
    "pmm paper (Cor. 12 depth, A.4, proportional)": {"depth_rule": "paper", "consistency": "proportional"},
    "pmm auto depth, proportional": {"consistency": "proportional"},
    "pmm paper depth, least squares": {"depth_rule": "paper", "consistency": "least_squares"},
}


def accuracy_ratio(quick: bool) -> dict:
    n, d, eps, reps = 5000, 2, 1.0, (4 if quick else 10)
    X = make_data("two_clusters", n, d, seed=2024)
    dom = Domain.unit(d)
    flat = {}
    for bins in ((10, 14, 18) if quick else (10, 12, 14, 16, 18, 20)):
        w = [w1_exact(X, run("flat_histogram", X, dom, epsilon=eps, bins=bins, rng=s).synthetic) for s in range(reps)]
        flat[bins] = (float(np.mean(w)), float(np.std(w, ddof=1) / np.sqrt(reps)))
        print(f"ratio n=5000 flat bins={bins}: {flat[bins][0]:.5f} ± {flat[bins][1]:.5f}", flush=True)
    best_bins = min(flat, key=lambda b: flat[b][0])
    best = flat[best_bins][0]
    out = {}
    for label, kw in VARIANTS.items():
        if quick and label not in ("pmm default", "pmm paper (Cor. 12 depth, A.4, proportional)"):
            continue
        rels = [run("pmm", X, dom, epsilon=eps, rng=s, **kw) for s in range(reps)]
        w = [w1_exact(X, r.synthetic) for r in rels]
        m, se = float(np.mean(w)), float(np.std(w, ddof=1) / np.sqrt(reps))
        out[label] = dict(w1_mean=m, w1_se=se, ratio=m / best, depth=rels[0].params["depth"],
                          consistency=rels[0].params["consistency"], depth_rule=rels[0].params["depth_rule"])
        print(f"ratio n=5000 {label}: W1 {m:.5f} ± {se:.5f}, depth {out[label]['depth']}, ratio {m / best:.3f}",
              flush=True)
    return {"setting": dict(n=n, d=d, epsilon=eps, data="two_clusters", reps=reps, w1="exact (POT)"),
            "flat_by_bins": {str(b): v for b, v in flat.items()}, "flat_best_bins": best_bins, "flat_best_w1": best,
            "pmm": out, "target": 0.9, "pass": out["pmm default"]["ratio"] <= 0.9}


def accuracy_ratio_large(quick: bool) -> dict:
    from dpsynth_core.transport import wasserstein1

    res = {}
    for n in ((10**5,) if quick else (10**5, 10**6)):
        d, eps = 2, 1.0
        X = make_data("two_clusters", n, d, seed=99)
        reps = 2
        flat = {}
        t0 = time.perf_counter()
        grid_bins = (32, 64) if quick else ((16, 24, 32, 48) if n <= 10**5 else (32, 48, 64, 96))
        for bins in grid_bins:
            vals = [wasserstein1(X, run("flat_histogram", X, Domain.unit(d), epsilon=eps, bins=bins, rng=s).synthetic,
                                 method="grid", return_result=True) for s in range(reps)]
            flat[bins] = dict(value=float(np.mean([v.value for v in vals])),
                              lower=float(np.mean([v.lower for v in vals])),
                              upper=float(np.mean([v.upper for v in vals])))
            print(f"large n={n} flat bins={bins}: grid W1 {flat[bins]['value']:.5f} "
                  f"[{flat[bins]['lower']:.5f}, {flat[bins]['upper']:.5f}]", flush=True)
        best_bins = min(flat, key=lambda b: flat[b]["value"])
        fb = flat[best_bins]
        vals = [wasserstein1(X, run("pmm", X, Domain.unit(d), epsilon=eps, rng=s).synthetic, method="grid",
                             return_result=True) for s in range(reps)]
        pm = dict(value=float(np.mean([v.value for v in vals])), lower=float(np.mean([v.lower for v in vals])),
                  upper=float(np.mean([v.upper for v in vals])), grid=vals[0].details.get("grid"))
        ratio = pm["value"] / fb["value"]
        lo = pm["lower"] / fb["upper"] if fb["upper"] > 0 else float("nan")
        hi = pm["upper"] / fb["lower"] if fb["lower"] > 0 else float("inf")
        verdict = ("PMM better (certified)" if hi < 1 else "flat better (certified)" if lo > 1
                   else "interval too wide to tell")
        res[str(n)] = dict(flat_best_bins=best_bins, flat=flat, pmm=pm, ratio_point=ratio, ratio_interval=[lo, hi],
                           meets_0_9_certified=hi <= 0.9, verdict=verdict, reps=reps,
                           seconds=time.perf_counter() - t0)
        print(f"large n={n}: pmm grid W1 {pm['value']:.5f} [{pm['lower']:.5f}, {pm['upper']:.5f}], ratio "
              f"{ratio:.3f} in [{lo:.3f}, {hi:.3f}]: {verdict}", flush=True)
    return res


PARTS = {
    "pmm_scaling": pmm_scaling,
    "psmm_projection": psmm_projection,
    "accuracy_ratio": accuracy_ratio,
    "w1_curves": w1_curves,
    "accuracy_ratio_large": accuracy_ratio_large,
}


def main(argv: list[str] | None = None) -> dict:
    """Run every part (or ``--only a,b``), writing the JSON after each part; parts not run keep
    their previous results in the file."""
    import json

    from benchmarks.common import RESULTS

    argv = sys.argv[1:] if argv is None else argv
    quick = "--quick" in argv
    only = next((a.split("=", 1)[1] for a in argv if a.startswith("--only=")), None)
    names = list(PARTS) if only is None else [p for p in only.split(",") if p in PARTS]
    path = RESULTS / "pmm_psmm.json"
    payload = json.loads(path.read_text()) if (only and path.exists()) else {}
    payload.pop("machine", None)
    payload["quick"] = quick
    for name in names:
        t0 = time.perf_counter()
        payload[name] = PARTS[name](quick)
        payload[name + "_seconds"] = time.perf_counter() - t0
        write("pmm_psmm", payload)
    return payload


if __name__ == "__main__":
    main()
