"""Foundations figures: count tree vs grid+bincount, discrete Laplace vs rng.laplace.

The transport figures (grid W1 at 10^6 points, POT at 3000) are in bench_transport.py.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks.common import best_of, write  # noqa: E402
from dpsynth_core.noise import discrete_laplace  # noqa: E402
from dpsynth_core.partition import count_tree  # noqa: E402


def baseline_grid_bincount(U: np.ndarray, depth: int) -> np.ndarray:
    """Row-major grid index + one np.bincount on the same finest grid (no tree)."""
    d = U.shape[1]
    bits = [max(0, (depth - a + d - 1) // d) for a in range(d)]
    idx = np.zeros(U.shape[0], dtype=np.int64)
    for a in range(d):
        k = 1 << bits[a]
        c = (U[:, a] * k).astype(np.int64)
        np.minimum(c, k - 1, out=c)
        idx = idx * k + c
    return np.bincount(idx, minlength=1 << depth)


def main(quick: bool = False) -> dict:
    rng = np.random.default_rng(0)
    n, d, r = (10**5 if quick else 10**6), 2, 20
    U = rng.random((n, d))
    repeat = 5
    t_base, base = best_of(lambda: baseline_grid_bincount(U, r), repeat)
    t_tree, tree = best_of(lambda: count_tree(U, r), repeat)
    assert tree[-1].sum() == base.sum() == n
    m = 10**6 if quick else 10**7
    t_lap, _ = best_of(lambda: np.random.default_rng(1).laplace(0.0, 1.0, m), repeat)
    t_dl, _ = best_of(lambda: discrete_laplace(1.0, m, np.random.default_rng(1)), repeat)
    t_ex, _ = best_of(lambda: discrete_laplace(1.0, 10_000, np.random.default_rng(1), exact=True), 1)
    out = {
        "count_tree": {"n": n, "d": d, "depth": r, "seconds": t_tree, "baseline_seconds": t_base,
                       "ratio": t_tree / t_base, "target_ratio": 2.0},
        "discrete_laplace": {"draws": m, "seconds": t_dl, "rng_laplace_seconds": t_lap, "ratio": t_dl / t_lap,
                             "target_ratio": 3.0, "exact_sampler_seconds_per_10k": t_ex},
        "timing": f"best of {repeat} runs, same process",
    }
    from benchmarks.bench_transport import foundations as transport_figures

    out["transport"] = transport_figures(quick)  # (c) grid W1 at 10^6 points, (d) POT exact at 3000
    print(out)
    write("foundations", out)
    return out


if __name__ == "__main__":
    main(quick="--quick" in sys.argv)
