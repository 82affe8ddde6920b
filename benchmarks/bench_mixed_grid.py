"""W1 of the grid mechanisms on a mixed table against PMM (docs/mixed-data.md): are the default grids sane?

The table is the one of tests/core/test_mixed.py (age depends on sex, bmi, region; 2 numeric and 2
categorical columns, 6 combinations), n = 2000 and 10,000, ε = 0.3, 1, 3, every mechanism with its
default parameters (add/remove, a noisy size), a few seeds. W1 is exact, in the mixed metric with unit
weights (unit cube, l_inf, distance 1 between different categories), computed combination by
combination: with unit weights every move between two combinations costs exactly 1, at least any move
inside one, so an optimal plan matches as much mass as it can inside each combination and sends the rest
through a hub (cost 1/2 out, 1/2 in). Per combination that is one balanced transport between its real
rows plus a dummy and its synthetic rows plus a dummy (POT's network simplex), and W1 is their sum. The
script checks this against the dense POT solve on the full mixed cost matrix at n = 2000 (one release).

Usage::

    nice -n 10 .venv/bin/python benchmarks/bench_mixed_grid.py            # n = 2000 and 10,000, 2 seeds
    nice -n 10 .venv/bin/python benchmarks/bench_mixed_grid.py --quick    # n = 2000, 1 seed

Writes ``benchmarks/results/mixed_grid.json``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.common import write  # noqa: E402
from dpsynth_core import Domain, run  # noqa: E402

MECHANISMS = ("pmm", "psmm", "flat_histogram", "haar_walk")
EPSILONS = (0.3, 1.0, 3.0)
CATS = {"sex": ["F", "M"], "region": ["north", "south", "east"]}


def table(n: int, seed: int = 0) -> pd.DataFrame:
    """tests/core/test_mixed.py's ``_table``."""
    rng = np.random.default_rng(seed)
    sex = rng.choice(["F", "M"], n, p=[0.6, 0.4])
    age = np.where(sex == "F", rng.normal(40, 8, n), rng.normal(60, 8, n)).clip(18, 90)
    return pd.DataFrame({"age": age, "sex": sex, "bmi": rng.normal(27, 4, n).clip(15, 45),
                         "region": rng.choice(["north", "south", "east"], n, p=[0.5, 0.3, 0.2])})


def domain() -> Domain:
    return Domain(lower=[18, 15], upper=[90, 45], names=["age", "bmi"], categories=CATS)


def _emd2(a: np.ndarray, b: np.ndarray, M: np.ndarray) -> float:
    import ot

    value, log = ot.emd2(a, b, M, numItermax=10**9, log=True)
    assert int(log["result_code"]) == 1, log
    return float(value)


def w1_dense(UA: np.ndarray, UB: np.ndarray, dom: Domain) -> float:
    """Exact W1 on the full mixed cost matrix (unit-cube rows, category indices)."""
    from scipy.spatial.distance import cdist

    num = dom.numeric_index
    M = cdist(UA[:, num], UB[:, num], metric="chebyshev")
    for j, w in zip(dom.categorical_index, dom.weights, strict=True):
        M = np.maximum(M, w * (UA[:, j][:, None] != UB[:, j][None, :]))
    return _emd2(np.full(len(UA), 1 / len(UA)), np.full(len(UB), 1 / len(UB)), M)


def w1_by_combination(UA: np.ndarray, UB: np.ndarray, dom: Domain) -> float:
    """Exact W1 with unit weights, combination by combination through a hub (module docstring)."""
    from scipy.spatial.distance import cdist

    assert all(w == 1.0 for w in dom.weights)
    num, cat = dom.numeric_index, dom.categorical_index
    key_a = np.ravel_multi_index(UA[:, cat].astype(int).T, dom.category_sizes)
    key_b = np.ravel_multi_index(UB[:, cat].astype(int).T, dom.category_sizes)
    total = 0.0
    for c in range(int(np.prod(dom.category_sizes))):
        A, B = UA[key_a == c][:, num], UB[key_b == c][:, num]
        ma, mb = len(A) / len(UA), len(B) / len(UB)
        if ma + mb == 0:
            continue
        M = np.zeros((len(A) + 1, len(B) + 1))
        M[:-1, :-1] = cdist(A, B, metric="chebyshev") if len(A) and len(B) else 0.0
        M[:-1, -1] = 0.5
        M[-1, :-1] = 0.5
        a = np.r_[np.full(len(A), 1 / len(UA)), mb]
        b = np.r_[np.full(len(B), 1 / len(UB)), ma]
        total += _emd2(a, b, M)
    return total


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    sizes = (2000,) if args.quick else (2000, 10_000)
    seeds = (0,) if args.quick else (0, 1)
    dom = domain()
    rows, check = [], None
    for n in sizes:
        df = table(n, seed=12)
        U = dom.to_unit(df)
        for eps in EPSILONS:
            for name in MECHANISMS:
                for seed in seeds:
                    t0 = time.perf_counter()
                    rel = run(name, df, dom, epsilon=eps, rng=seed)
                    seconds = time.perf_counter() - t0
                    S = dom.to_unit(rel.synthetic)
                    w1 = w1_by_combination(U, S, dom)
                    if check is None and n == 2000:
                        check = {"n": n, "mechanism": name, "epsilon": eps, "by_combination": w1,
                                 "dense_pot": w1_dense(U, S, dom)}
                        assert abs(check["by_combination"] - check["dense_pot"]) < 1e-9, check
                    grid = rel.params.get("cells") if name == "psmm" else rel.params.get(
                        "bins" if name == "flat_histogram" else ("grid" if name == "haar_walk" else "depth"))
                    rows.append({"n": n, "epsilon": eps, "mechanism": name, "seed": seed, "w1": w1,
                                 "grid_or_depth": grid, "n_synthetic": len(S), "seconds": seconds})
                    print(f"n={n:6d} eps={eps:3.1f} {name:15s} seed={seed} W1={w1:.4f} grid/depth={grid} "
                          f"({seconds:.2f}s)", flush=True)
    summary = (pd.DataFrame(rows).groupby(["n", "epsilon", "mechanism"])["w1"].mean().unstack("mechanism")
               .reset_index())
    print(summary.to_string(index=False))
    write("mixed_grid", {"description": __doc__.split("\n")[0], "mechanisms": list(MECHANISMS),
                         "check_dense": check, "rows": rows,
                         "mean_w1": summary.to_dict(orient="records")})


if __name__ == "__main__":
    main()
