"""Private Evolution: reproductions of the simulations of [GFR25, Section 6] and the timing target.

Reproductions (Section 6 / Appendix E setting): Ω = unit l2 ball in R^2 (``Domain([-1,-1],[1,1])``
with ``region="ball"``), ε = 1, δ = 1e-4, T = 2 log(nε), n = 2000, other parameters from Theorem 4.1,
Gaussian histogram thresholded at H = 0 and renormalised, 20 seeds (the paper averages 100 runs).

* Figure 2 middle: from a single point at the origin, W1 must fall by at least 3x over the iterations.
* Algorithm 2 (histogram="dbl") from the origin, on fewer seeds (a dense LP per iteration).
* Figure 2 left: from S_0 = S (non-private teaching start), the best iteration count is 0.
* Figure 2 right: S_0 = (1 - 2β) S for a few β (curves only).
* Figure 4: data uniform in an l2 ball of radius 0.02 (clustered) and 0.5 around the origin, S_0 from
  the uniform Random API; "PE" (Gaussian + threshold 0) against "PE with Laplace noise + thresholding"
  (Section 4.2). Laplace must win at 0.02 and lose at 0.5.

W1 is the exact l2 Wasserstein-1 (POT) between the 2000 private points and S_t, in the paper's units
(the unit ball; twice the unit-cube value), averaged over seeds, for every iteration t = 0..T.

Timing: n = 10^5 private points in [-1, 1]^2, n_s = 2000, T = 10, target under 20 s, best of 3; the
flat Laplace histogram baseline is timed on the same data in the same run.

Usage: .venv/bin/python benchmarks/bench_private_evolution.py [--quick]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks.common import best_of, write  # noqa: E402
from dpsynth_core import Domain, run  # noqa: E402

DOM = Domain([-1.0, -1.0], [1.0, 1.0])
UNITS = 2.0  # unit-cube l2 distances times 2 = distances in the paper's unit ball
EPS, DELTA, N = 1.0, 1e-4, 2000


def quadrant_ball(n: int, rng: np.random.Generator) -> np.ndarray:
    """Uniform in the positive quadrant of the unit l2 ball (Section 6)."""
    g = np.abs(rng.standard_normal((n, 2)))
    g /= np.linalg.norm(g, axis=1)[:, None]
    return g * np.sqrt(rng.random(n))[:, None]


def ball(n: int, radius: float, rng: np.random.Generator) -> np.ndarray:
    """Uniform in the l2 ball of the given radius around the origin (Appendix E)."""
    g = rng.standard_normal((n, 2))
    g /= np.linalg.norm(g, axis=1)[:, None]
    return g * (radius * np.sqrt(rng.random(n)))[:, None]


def curves(make_data, seeds: int, **kw) -> dict:
    """Mean (and s.e.) of W1(S, S_t), t = 0..T, over seeds; data seed s, mechanism seed 1000 + s."""
    rows, params = [], None
    for s in range(seeds):
        X = make_data(np.random.default_rng(s))
        rel = run("private_evolution", X, DOM, epsilon=EPS, delta=DELTA, region="ball", rng=1000 + s, **kw)
        rows.append(np.asarray(rel.trace["owner"]["w1"]) * UNITS)
        params = rel.params
    W = np.vstack(rows)
    mean = W.mean(axis=0)
    return {
        "w1_mean": mean.tolist(),
        "w1_se": (W.std(axis=0, ddof=1) / np.sqrt(seeds)).tolist() if seeds > 1 else None,
        "best_iteration": int(np.argmin(mean)),
        "w1_start": float(mean[0]),
        "w1_final": float(mean[-1]),
        "w1_min": float(mean.min()),
        "params": {k: params[k] for k in ("iterations", "sigma", "alpha", "levels", "n_synthetic", "histogram",
                                          "count_threshold", "laplace_scale")},
    }


def reproductions(seeds: int) -> dict:
    out: dict = {"setting": {"domain": "unit l2 ball in R^2", "epsilon": EPS, "delta": DELTA, "n": N,
                             "seeds": seeds, "w1": "exact l2 W1 (POT), unit-ball units, mean over seeds"}}
    quad = lambda g: quadrant_ball(N, g)  # noqa: E731

    t0 = time.perf_counter()
    origin = curves(quad, seeds, init="origin")
    origin["fall_factor_final"] = origin["w1_start"] / origin["w1_final"]
    origin["fall_factor_best"] = origin["w1_start"] / origin["w1_min"]
    origin["target"] = "w1_start / w1_final >= 3"
    origin["pass"] = bool(origin["fall_factor_final"] >= 3.0)
    out["figure2_middle_origin"] = origin

    # Algorithm 2 itself (D_BL projection, dense LP): Theorem 4.1's n_s = 39 gives 39 x 9 = 351 <= 400 variations
    dbl_seeds = max(1, seeds // 4)
    dbl = curves(quad, dbl_seeds, init="origin", histogram="dbl")
    dbl["fall_factor_final"] = dbl["w1_start"] / dbl["w1_final"]
    dbl["seeds"] = dbl_seeds
    dbl["note"] = "Algorithm 2 (D_BL projection by the dense LP at every iteration); fewer seeds"
    out["algorithm2_dbl_origin"] = dbl

    private = curves(quad, seeds, init="private", allow_nonprivate_init=True)
    private["target"] = "best iteration count is 0"
    private["pass"] = bool(private["best_iteration"] == 0)
    out["figure2_left_s0_equals_s"] = private

    out["figure2_right_interpolate"] = {
        f"beta={b}": curves(quad, seeds, init="interpolate", beta=b, allow_nonprivate_init=True)
        for b in (0.05, 0.25, 0.5)
    }

    fig4 = {}
    for radius in (0.02, 0.5):
        data = lambda g, r=radius: ball(N, r, g)  # noqa: E731
        gauss = curves(data, seeds, init="uniform", histogram="threshold")
        lap = curves(data, seeds, init="uniform", histogram="laplace_threshold")
        fig4[f"radius={radius}"] = {"gaussian_threshold": gauss, "laplace_threshold": lap,
                                    "final_ratio_laplace_over_gaussian": lap["w1_final"] / gauss["w1_final"]}
    fig4["target"] = "Laplace+threshold beats Gaussian+threshold at radius 0.02 and loses at radius 0.5 (final W1)"
    fig4["pass"] = bool(fig4["radius=0.02"]["final_ratio_laplace_over_gaussian"] < 1.0
                        and fig4["radius=0.5"]["final_ratio_laplace_over_gaussian"] > 1.0)
    out["figure4_laplace_vs_gaussian"] = fig4
    out["seconds"] = time.perf_counter() - t0
    return out


def timing(n: int, repeat: int) -> dict:
    rng = np.random.default_rng(0)
    X = rng.random((n, 2)) * 2.0 - 1.0
    kw = dict(epsilon=1.0, delta=1e-5, n_synthetic=2000, iterations=10, rng=1)
    t_pe, rel = best_of(lambda: run("private_evolution", X, DOM, track_w1=False, **kw), repeat)
    t_pe_w1, rel_w1 = best_of(lambda: run("private_evolution", X, DOM, track_w1=True, **kw), 1)
    t_flat, flat = best_of(lambda: run("flat_histogram", X, DOM, epsilon=1.0, neighbours="replace", rng=1), repeat)
    # accuracy side by side: exact W1 on 2000-point subsamples (an estimate of the full W1), unit-cube l2
    import ot
    from scipy.spatial.distance import cdist

    g = np.random.default_rng(7)
    sub = DOM.to_unit(X[g.choice(n, 2000, replace=False)])

    def w1(Y):
        Yu = DOM.to_unit(Y[g.choice(Y.shape[0], min(2000, Y.shape[0]), replace=False)])
        return float(ot.emd2(np.full(2000, 1 / 2000), np.full(Yu.shape[0], 1 / Yu.shape[0]), cdist(sub, Yu)))

    return {
        "n": n, "n_synthetic": 2000, "iterations": 10, "variations_per_iteration": 2000 * rel.params[
            "variations_per_point"],
        "seconds": t_pe, "target_seconds": 20.0, "pass": bool(t_pe < 20.0),
        "seconds_with_owner_w1": t_pe_w1,
        "owner_w1_method": rel_w1.trace["owner"]["w1_method"],
        "flat_histogram_seconds": t_flat, "ratio_to_flat_histogram": t_pe / t_flat,
        "w1_l2_unit_cube_estimate": {"private_evolution": w1(rel.synthetic), "flat_histogram": w1(flat.synthetic),
                                     "note": "exact POT W1 between 2000-point subsamples; (1, 1e-5)-DP PE vs 1-DP "
                                             "flat histogram"},
        "timing": f"best of {repeat} runs, same process, track_w1=False",
    }


def main(quick: bool = False) -> dict:
    seeds = 5 if quick else 20
    out = {"quick": quick, "reproductions": reproductions(seeds),
           "timing": timing(10**4 if quick else 10**5, 1 if quick else 3)}
    r = out["reproductions"]
    summary = {
        "origin_fall_factor": r["figure2_middle_origin"]["fall_factor_final"],
        "s0_equals_s_best_iteration": r["figure2_left_s0_equals_s"]["best_iteration"],
        "fig4_ratio_r0.02": r["figure4_laplace_vs_gaussian"]["radius=0.02"]["final_ratio_laplace_over_gaussian"],
        "fig4_ratio_r0.5": r["figure4_laplace_vs_gaussian"]["radius=0.5"]["final_ratio_laplace_over_gaussian"],
        "dbl_origin_fall_factor": r["algorithm2_dbl_origin"]["fall_factor_final"],
        "timing_seconds": out["timing"]["seconds"],
        "all_pass": bool(r["figure2_middle_origin"]["pass"] and r["figure2_left_s0_equals_s"]["pass"]
                         and r["figure4_laplace_vs_gaussian"]["pass"] and out["timing"]["pass"]),
    }
    out["summary"] = summary
    print(summary)
    write("private_evolution", out)
    return out


if __name__ == "__main__":
    main(quick="--quick" in sys.argv)
