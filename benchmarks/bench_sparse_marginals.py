"""Certified sparse-marginal release (issue 5; seed 002): coverage, tightness, Step 3 time, k trade-off.

Writes ``benchmarks/results/sparse_marginals.json``. Run from the repository root:

    .venv/bin/python benchmarks/bench_sparse_marginals.py [--quick]

1. Coverage / tightness: 200 seeded runs (n = 2000, d = 4, s = 2, k = 8, ε = 1, δ_cert = 0.1) on two
   datasets; the fraction of runs whose exact utility loss (Eq. (1)) exceeds the certificate (target
   <= δ + 0.03) and the median certificate / loss (target <= 4 for U_T; L_T reported too). Default
   mechanism settings, plus smaller studies of the paper's noise calibration and of the U_T Step 3.
2. Step 3 at d = 5, s = 2, k = 25 with 4000 public points (target < 60 s), L_T (paper) and U_T LPs.
3. Utility loss and certificate terms against k (the trade-off of the paper's Figure 1d), with the
   loss of the raw public data for comparison (the baseline measured in the same run).
"""

from __future__ import annotations

import argparse
import importlib
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks.common import write  # noqa: E402
from dpsynth_core import Domain  # noqa: E402
from dpsynth_core.grid import cell_of  # noqa: E402

sm = importlib.import_module("dpsynth_core.mechanisms.sparse_marginals")


def corner_clusters(n: int, d: int, rng: np.random.Generator) -> np.ndarray:
    """Dataset B: two tight clusters near opposite corners plus 10% uniform background."""
    lab = rng.random(n)
    X = np.empty((n, d))
    a = lab < 0.6
    b = (lab >= 0.6) & (lab < 0.9)
    c = lab >= 0.9
    X[a] = 0.2 + 0.06 * rng.standard_normal((a.sum(), d))
    X[b] = 0.75 + 0.08 * rng.standard_normal((b.sum(), d))
    X[c] = rng.random((c.sum(), d))
    return np.clip(X, 0.0, 1.0)


def dataset(name: str, seed: int, n: int = 2000, d: int = 4):
    rng = np.random.default_rng(seed)
    if name == "mixture+shifted_public":
        X, P, dom = sm.shift_scenario(n, d, 0.3, rng=rng, n_public=4000)
        return X, dom, P
    X = corner_clusters(n, d, rng)
    return X, Domain.unit(d), None  # default public: 4000 uniform points


def coverage(name: str, runs: int, **kw) -> dict:
    exceed = {"U_T": 0, "L_T": 0}
    ratios = {"U_T": [], "L_T": []}
    losses, certs, seconds = [], {"U_T": [], "L_T": []}, []
    terms = {"discretisation": [], "privatisation_quantile": [], "projection": []}
    for seed in range(runs):
        X, dom, P = dataset(name, seed)
        t0 = time.perf_counter()
        rel = sm.sparse_marginals(X, dom, epsilon=1.0, s=2, k=8, delta_cert=0.1, public=P, rng=10_000 + seed, **kw)
        seconds.append(time.perf_counter() - t0)
        loss = sm.sparse_utility_loss(X, rel.synthetic, 2, dom)
        losses.append(loss)
        for c in ("U_T", "L_T"):
            b = rel.trace["certificate"][c]["total"]
            certs[c].append(b)
            exceed[c] += loss > b
            ratios[c].append(b / loss)
        for t in terms:
            terms[t].append(rel.trace["certificate"]["U_T"][t])
    out = {
        "runs": runs, "settings": {"n": 2000, "d": 4, "s": 2, "k": 8, "epsilon": 1.0, "delta_cert": 0.1, **kw},
        "exceed_fraction": {c: exceed[c] / runs for c in exceed},
        "coverage_target": "exceed_fraction <= delta_cert + 0.03 = 0.13",
        "median_ratio": {c: float(np.median(ratios[c])) for c in ratios},
        "ratio_quantiles_10_90": {c: [float(np.quantile(ratios[c], 0.1)), float(np.quantile(ratios[c], 0.9))]
                                  for c in ratios},
        "tightness_target": "median U_T certificate / loss <= 4",
        "median_loss": float(np.median(losses)),
        "median_certificate": {c: float(np.median(certs[c])) for c in certs},
        "median_U_T_terms": {t: float(np.median(v)) for t, v in terms.items()},
        "median_seconds_per_run": float(np.median(seconds)),
    }
    print(name, kw, out["exceed_fraction"], out["median_ratio"], out["median_loss"], flush=True)
    return out


def step3_timing(quick: bool) -> dict:
    d, s, k, npub = 5, 2, 25, 4000
    X, P, dom = sm.shift_scenario(20_000, d, 0.3, rng=0, n_public=npub)
    rng = np.random.default_rng(1)
    K = math.comb(d, s)
    _, rank = sm._path_rank(k, s)
    v = sm.marginal_vector(X, s, k)
    b = sm.noise_scale(X.shape[0], 1.0, d, s, k, exact_total=True)
    v_dp = v + sm.haar_block_noise(K, k, s, b, rng, exact_total=True)
    out = {"d": d, "s": s, "k": k, "K": K, "cells_per_block": k**s, "n_private": X.shape[0]}
    for kind, raw in (("uniform_public", rng.random((npub, d))), ("shifted_public", P)):
        sup = sm.discretise_support(raw, k)
        cells = np.array([cell_of(sup[:, S], k) for S in sm.marginal_subsets(d, s)])
        lt = sm.step3_lp(v_dp, rank[cells], k)
        row = {"public_points": npub, "support_after_snapping": int(sup.shape[0]),
               "L_T_lp_seconds": lt["seconds"], "L_T_objective": lt["objective"], "L_T_nnz": lt["nnz"],
               "L_T_variables": lt["n_variables"], "target": "< 60 s"}
        if not quick or kind == "uniform_public":
            ut = sm.step3_ut_lp(v_dp[:, rank], cells, k, s)
            row.update({"U_T_lp_seconds": ut["seconds"], "U_T_objective": ut["objective"], "U_T_nnz": ut["nnz"]})
        out[kind] = row
        print("step3", kind, row, flush=True)
    t0 = time.perf_counter()
    rel = sm.sparse_marginals(X, dom, epsilon=1.0, s=s, k=k, public=P, certificate="L_T", rng=2)
    out["end_to_end_L_T_certificate_seconds"] = time.perf_counter() - t0
    out["end_to_end_bound"] = rel.bound
    return out


def k_sweep(quick: bool) -> dict:
    n, d = 20_000, 4
    ks = [2, 4, 6, 8, 12, 16] if quick else [2, 4, 6, 8, 10, 12, 16, 20]
    reps = 1 if quick else 3
    rows = []
    for k in ks:
        acc = {"loss": [], "U_T": [], "L_T": [], "disc": [], "priv_U_T": [], "proj_U_T": [], "priv_L_T": [],
               "proj_L_T": [], "public_raw_loss": []}
        for r in range(reps):
            X, P, dom = sm.shift_scenario(n, d, 0.3, rng=100 + r, n_public=4000)
            rel = sm.sparse_marginals(X, dom, epsilon=1.0, s=2, k=k, public=P, rng=200 + r,
                                      mc_draws=100 if quick else 200)
            acc["loss"].append(sm.sparse_utility_loss(X, rel.synthetic, 2, dom))
            if k == ks[0]:
                acc["public_raw_loss"].append(sm.sparse_utility_loss(X, P, 2, dom))
            for c in ("U_T", "L_T"):
                t = rel.trace["certificate"][c]
                acc[c].append(t["total"])
                acc[f"priv_{c}"].append(t["privatisation_quantile"])
                acc[f"proj_{c}"].append(t["projection"])
            acc["disc"].append(0.5 / k)
        row = {"k": k, **{key: float(np.mean(v)) for key, v in acc.items() if v}}
        rows.append(row)
        print("k", row, flush=True)
    best_loss = min(rows, key=lambda r_: r_["loss"])["k"]
    best_cert = min(rows, key=lambda r_: r_["U_T"])["k"]
    return {"n": n, "d": d, "s": 2, "epsilon": 1.0, "shift": 0.3, "reps": reps, "rows": rows,
            "k_min_loss": best_loss, "k_min_U_T_certificate": best_cert,
            "default_k": sm.default_k(n, 1.0, d, 2),
            "public_raw_loss": rows[0].get("public_raw_loss")}


def main(quick: bool = False) -> dict:
    runs = 20 if quick else 200
    small = 10 if quick else 50
    t0 = time.perf_counter()
    datasets = ["mixture+shifted_public", "corner_clusters+uniform_public"]
    cov = {name: coverage(name, runs) for name in datasets}
    variants = {}
    for name in datasets:
        variants[name] = {
            "noise=paper": coverage(name, small, noise="paper"),
            "step3=U_T": coverage(name, small, step3="U_T"),
            "noise=paper,step3=U_T": coverage(name, small, noise="paper", step3="U_T"),
        }
    payload = {
        "quick": quick,
        "coverage_tightness": cov,
        "variants": variants,
        "step3_timing": step3_timing(quick),
        "k_tradeoff": k_sweep(quick),
    }
    payload["seconds_total"] = time.perf_counter() - t0
    write("sparse_marginals", payload)
    return payload


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    main(quick=ap.parse_args().quick)
