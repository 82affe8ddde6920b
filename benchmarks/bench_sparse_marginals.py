"""Certified sparse-marginal release [DLS+24]: coverage, tightness, Step 3 time, k trade-off.

Writes ``benchmarks/results/sparse_marginals.json``. Run from the repository root:

    .venv/bin/python benchmarks/bench_sparse_marginals.py [--quick] [--sections coverage,variants,step3,k]
                                                          [--runs N] [--out NAME]

1. Coverage / tightness: 200 seeded runs (n = 2000, d = 4, s = 2, k = 8, ε = 1, δ_cert = 0.1) on two
   datasets; the fraction of runs whose exact utility loss (Eq. (1)) exceeds the certificate (target
   <= δ + 0.03) and the median certificate / loss (target <= 4 for U_T; L_T reported too), for the
   released (consistent, G∘Π) certificates and the paper's Eq. (4) as printed (same runs). Default
   mechanism settings, plus smaller studies of the paper's noise calibration, of the U_T Step 3 and of
   Step 3 on the consistent marginals (consistency="both").
2. Step 3 at d = 5, s = 2, k = 25 with 4000 public points (target < 60 s), L_T (paper) and U_T LPs.
3. Utility loss and certificate terms against k (the trade-off of the paper's Figure 1d), with the
   loss of the raw public data for comparison (the baseline measured in the same run).
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks.common import machine, write  # noqa: E402
from dpsynth_core import Domain  # noqa: E402
from dpsynth_core.datasets import shift_scenario  # noqa: E402
from dpsynth_core.grid import cell_of  # noqa: E402

sm = importlib.import_module("dpsynth_core.mechanisms.sparse_marginals")
query = importlib.import_module("dpsynth_core.mechanisms.sparse_marginals.query")


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
        X, P, dom = shift_scenario(n, d, 0.3, rng=rng, n_public=4000)
        return X, dom, P
    X = corner_clusters(n, d, rng)
    return X, Domain.unit(d), "uniform"  # the default public candidates: 4000 uniform points


CERTS = ("U_T_consistent", "L_T_consistent", "U_T", "L_T")


def coverage(name: str, runs: int, **kw) -> dict:
    exceed = {c: 0 for c in CERTS}
    ratios = {c: [] for c in CERTS}
    losses, certs, seconds = [], {c: [] for c in CERTS}, []
    terms = {c: {"discretisation": [], "privatisation_quantile": [], "projection": []}
             for c in ("U_T_consistent", "U_T")}
    for seed in range(runs):
        X, dom, P = dataset(name, seed)
        t0 = time.perf_counter()
        rel = sm.sparse_marginals(X, dom, epsilon=1.0, s=2, k=8, delta_cert=0.1, public=P, rng=10_000 + seed, **kw)
        seconds.append(time.perf_counter() - t0)
        loss = sm.sparse_utility_loss(X, rel.synthetic, 2, dom)
        losses.append(loss)
        assert rel.bound == rel.trace.certificate["U_T_consistent"].total
        for c in CERTS:
            b = rel.trace.certificate[c].total
            certs[c].append(b)
            exceed[c] += loss > b
            ratios[c].append(b / loss)
        for c in terms:
            for t in terms[c]:
                terms[c][t].append(getattr(rel.trace.certificate[c], t))
    out = {
        "runs": runs, "settings": {"n": 2000, "d": 4, "s": 2, "k": 8, "epsilon": 1.0, "delta_cert": 0.1, **kw},
        "certificates": "U_T_consistent (released, rel.bound) and L_T_consistent: Eq. (4) with G∘Π (module "
                        "docstring); U_T and L_T: the paper's Eq. (4) as printed, same runs",
        "exceed_fraction": {c: exceed[c] / runs for c in exceed},
        "coverage_target": "exceed_fraction <= delta_cert + 0.03 = 0.13",
        "median_ratio": {c: float(np.median(ratios[c])) for c in ratios},
        "ratio_quantiles_10_90": {c: [float(np.quantile(ratios[c], 0.1)), float(np.quantile(ratios[c], 0.9))]
                                  for c in ratios},
        "tightness_target": "median U_T certificate / loss <= 4",
        "median_loss": float(np.median(losses)),
        "median_certificate": {c: float(np.median(certs[c])) for c in certs},
        "median_terms": {c: {t: float(np.median(v)) for t, v in terms[c].items()} for c in terms},
        "median_seconds_per_run": float(np.median(seconds)),
    }
    print(name, kw, out["exceed_fraction"], out["median_ratio"], out["median_loss"], out["median_terms"],
          flush=True)
    return out


def step3_timing(quick: bool) -> dict:
    d, s, k, npub = 5, 2, 25, 4000
    X, P, dom = shift_scenario(20_000, d, 0.3, rng=0, n_public=npub)
    rng = np.random.default_rng(1)
    K = math.comb(d, s)
    _, rank = query.path_rank(k, s)
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
        acc = {"loss": [], "U_T_consistent": [], "U_T": [], "L_T": [], "disc": [], "priv_U_T_consistent": [],
               "proj_U_T_consistent": [], "priv_U_T": [], "proj_U_T": [], "priv_L_T": [], "proj_L_T": [],
               "public_raw_loss": []}
        for r in range(reps):
            X, P, dom = shift_scenario(n, d, 0.3, rng=100 + r, n_public=4000)
            rel = sm.sparse_marginals(X, dom, epsilon=1.0, s=2, k=k, public=P, rng=200 + r,
                                      mc_draws=100 if quick else 200)
            acc["loss"].append(sm.sparse_utility_loss(X, rel.synthetic, 2, dom))
            if k == ks[0]:
                acc["public_raw_loss"].append(sm.sparse_utility_loss(X, P, 2, dom))
            for c in ("U_T_consistent", "U_T", "L_T"):
                t = rel.trace.certificate[c]
                acc[c].append(t.total)
                acc[f"priv_{c}"].append(t.privatisation_quantile)
                acc[f"proj_{c}"].append(t.projection)
            acc["disc"].append(0.5 / k)
        row = {"k": k, **{key: float(np.mean(v)) for key, v in acc.items() if v}}
        rows.append(row)
        print("k", row, flush=True)
    best_loss = min(rows, key=lambda r_: r_["loss"])["k"]
    best_cert = min(rows, key=lambda r_: r_["U_T_consistent"])["k"]
    return {"n": n, "d": d, "s": 2, "epsilon": 1.0, "shift": 0.3, "reps": reps, "rows": rows,
            "k_min_loss": best_loss, "k_min_U_T_certificate": best_cert,
            "default_k": sm.default_k(n, 1.0, d, 2),
            "public_raw_loss": rows[0].get("public_raw_loss")}


SECTIONS = ("coverage", "variants", "step3", "k")


def main(quick: bool = False, sections: tuple[str, ...] = SECTIONS, runs: int | None = None,
         out: str = "sparse_marginals") -> dict:
    runs = runs if runs is not None else (20 if quick else 200)
    small = 10 if quick else 50
    t0 = time.perf_counter()
    datasets = ["mixture+shifted_public", "corner_clusters+uniform_public"]
    payload: dict = {"quick": quick, "sections": list(sections)}
    if "coverage" in sections:
        payload["coverage_tightness"] = {name: coverage(name, runs) for name in datasets}
    if "variants" in sections:
        payload["variants"] = {name: {
            "noise=paper": coverage(name, small, noise="paper"),
            "step3=U_T": coverage(name, small, step3="U_T"),
            "consistency=both": coverage(name, small, consistency="both"),
            "consistency=both,step3=U_T": coverage(name, small, consistency="both", step3="U_T"),
        } for name in datasets}
    if "step3" in sections:
        payload["step3_timing"] = step3_timing(quick)
    if "k" in sections:
        payload["k_tradeoff"] = k_sweep(quick)
    payload["seconds_total"] = time.perf_counter() - t0
    if "/" in out:  # a path outside benchmarks/results (partial runs)
        Path(out).write_text(json.dumps({"machine": machine(), **payload}, indent=2, default=float))
    else:
        write(out, payload)
    return payload


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer runs (20 / 10) and a shorter k sweep")
    ap.add_argument("--sections", default=",".join(SECTIONS),
                    help="comma-separated subset of " + ",".join(SECTIONS))
    ap.add_argument("--runs", type=int, default=None, help="coverage runs per dataset (default 200, quick 20)")
    ap.add_argument("--out", default="sparse_marginals", help="result name (benchmarks/results/<out>.json), or a file path if it contains '/'")
    a = ap.parse_args()
    secs = tuple(x for x in a.sections.split(",") if x)
    bad = [x for x in secs if x not in SECTIONS]
    if bad:
        ap.error(f"unknown sections {bad}; choose from {SECTIONS}")
    main(quick=a.quick, sections=secs, runs=a.runs, out=a.out)
