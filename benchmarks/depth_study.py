"""PMM depth / noise-split / consistency study (docs/deviations.md §2): which default minimises exact W1?

A depth rule may depend only on the public (n, ε, d) (and on public parameters such as the
consistency map). We measure, with exact W1 (POT network simplex, l_inf, unit cube; exact 1-D CDF
formula for d = 1), the mean W1 of PMM over seeded runs for every depth
``r = r_paper - c`` with shifts c = 0..6 around Corollary 12's depth, for the paper's proportional
map and the least-squares consistency, on three data shapes (uniform, two-cluster mixture,
one-corner), several n, ε and d in {1, 2, 3}. Then:

* phase A — per setting the best shift, and for each fixed shift rule its *regret*
  (mean W1 of the rule / best mean W1 in that setting), averaged and worst-case over settings;
  the bound-minimising depth (``depth_rule="bound"``) is scored the same way;
* phase B — noise splits at each consistency's chosen shift: σ_j ∝ Δ_{j-1}^{-α} for
  α in {0 (uniform), 0.25, 0.5 (A.4), 0.75, 1}.

Writes ``benchmarks/results/pmm_depth_study.json``. ``--quick`` runs a reduced grid (minutes; the
full grid takes about 25 minutes on 2 shared cores); ``--summarise-only`` recomputes the summaries
from the existing results file. Usage: ``.venv/bin/python benchmarks/depth_study.py [--quick]``.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.common import write  # noqa: E402
from dpsynth_core import Domain, partition  # noqa: E402
from dpsynth_core.mechanisms.pmm import pmm  # noqa: E402
from dpsynth_core.theory import bound_depth, paper_depth  # noqa: E402


# ------------------------------------------------------------------------------------- data, W1
def make_data(kind: str, n: int, d: int, seed: int) -> np.ndarray:
    """uniform: U[0,1]^d; two_clusters: equal mixture of N(0.3·1, 0.08²I) and N(0.7·1, 0.08²I),
    clipped to the cube; corner: uniform in [0, 0.05]^d."""
    rng = np.random.default_rng(seed)
    if kind == "uniform":
        return rng.random((n, d))
    if kind == "two_clusters":
        c = np.where(rng.random(n)[:, None] < 0.5, 0.3, 0.7)
        return np.clip(c + 0.08 * rng.standard_normal((n, d)), 0.0, 1.0)
    if kind == "corner":
        return 0.05 * rng.random((n, d))
    raise ValueError(kind)


def w1_exact(X: np.ndarray, Y: np.ndarray) -> float:
    """Exact W1 (l_inf) between the empirical measures of X and Y (rows of Y may repeat)."""
    if X.shape[1] == 1:
        from scipy.stats import wasserstein_distance

        return float(wasserstein_distance(X[:, 0], Y[:, 0]))
    import ot

    M = ot.dist(X, Y, metric="chebyshev")
    return float(ot.emd2(np.full(len(X), 1.0 / len(X)), np.full(len(Y), 1.0 / len(Y)), M, numItermax=10**8))


def alpha_split(depth: int, d: int, alpha: float) -> np.ndarray:
    """σ_j ∝ Δ_{j-1}^{-α}: α = 0.5 is A.4, α = 0 the uniform split."""
    return partition.deltas(depth, d) ** (-alpha)


def mean_w1(X, d, eps, depth, consistency, split, reps, seed0=0):
    dom = Domain.unit(d)
    noise = split if isinstance(split, str) else alpha_split(depth, d, split)
    w = []
    for s in range(reps):
        rel = pmm(X, dom, epsilon=eps, depth=depth, consistency=consistency, noise=noise, n_public=len(X),
                  rng=seed0 + s)
        w.append(w1_exact(X, rel.synthetic))
    w = np.asarray(w)
    return float(w.mean()), float(w.std(ddof=1) / np.sqrt(reps)) if reps > 1 else 0.0


# ---------------------------------------------------------------------------------------- study
def settings(quick: bool):
    if quick:
        return [(1, 2000, 1.0), (2, 1000, 0.5), (2, 1000, 2.0), (3, 1000, 2.0)], ("two_clusters", "uniform"), 4
    out = []
    for n in (1000, 10_000, 100_000):
        for eps in (0.5, 2.0):
            out.append((1, n, eps))
    for d in (2, 3):
        for eps in (0.5, 2.0, 8.0):
            out.append((d, 1000, eps))
        out.append((d, 2000, 1.0))
    return out, ("uniform", "two_clusters", "corner"), 8


SHIFTS = tuple(range(0, 7))
CONSISTENCIES = ("proportional", "least_squares")


def phase_a(quick: bool) -> list[dict]:
    rows = []
    sets, kinds, reps = settings(quick)
    for d, n, eps in sets:
        for kind in kinds:
            X = make_data(kind, n, d, seed=1000 + d)
            r_paper = paper_depth(n, eps, d)
            for cons in CONSISTENCIES:
                t0 = time.perf_counter()
                for c in SHIFTS:
                    r = r_paper - c
                    if r < 0:
                        continue
                    m, se = mean_w1(X, d, eps, r, cons, "optimal", reps if n <= 10_000 or d == 1 else 3)
                    rows.append(dict(phase="A", d=d, n=n, eps=eps, data=kind, consistency=cons, split="optimal",
                                     shift=c, depth=r, paper_depth=r_paper,
                                     bound_depth=bound_depth(n, eps, d), w1=m, se=se))
                print(f"A d={d} n={n} eps={eps} {kind:12s} {cons:14s} "
                      + " ".join(f"c{row['shift']}:{row['w1']:.4f}" for row in rows
                                 if row["d"] == d and row["n"] == n and row["eps"] == eps and row["data"] == kind
                                 and row["consistency"] == cons)
                      + f"  ({time.perf_counter() - t0:.0f}s)", flush=True)
    return rows


def summarise_a(rows: list[dict]) -> dict:
    out = {}
    for cons in CONSISTENCIES:
        part = [r for r in rows if r["consistency"] == cons]
        keys = sorted({(r["d"], r["n"], r["eps"], r["data"]) for r in part})
        regrets = {c: [] for c in SHIFTS}
        regrets_by_d = {}
        bound_regret, best_shifts = [], []
        for key in keys:
            sub = {r["shift"]: r for r in part if (r["d"], r["n"], r["eps"], r["data"]) == key}
            best = min(v["w1"] for v in sub.values())
            best_shift = min(sub, key=lambda c: sub[c]["w1"])
            best_shifts.append(dict(d=key[0], n=key[1], eps=key[2], data=key[3], best_shift=best_shift,
                                    best_w1=best))
            for c in SHIFTS:
                if c in sub:
                    regrets[c].append(sub[c]["w1"] / best)
                    regrets_by_d.setdefault((key[0], c), []).append(sub[c]["w1"] / best)
            rb = [v for v in sub.values() if v["depth"] == v["bound_depth"]]
            if rb:
                bound_regret.append(rb[0]["w1"] / best)
        out[cons] = {
            "mean_regret_by_shift": {c: float(np.mean(v)) for c, v in regrets.items() if v},
            "max_regret_by_shift": {c: float(np.max(v)) for c, v in regrets.items() if v},
            "mean_regret_by_d_and_shift": {f"d={d},shift={c}": float(np.mean(v))
                                           for (d, c), v in sorted(regrets_by_d.items())},
            "bound_rule_mean_regret": float(np.mean(bound_regret)) if bound_regret else None,
            "bound_rule_settings_covered": len(bound_regret),
            "best_shift_per_setting": best_shifts,
        }
        mr = out[cons]["mean_regret_by_shift"]
        out[cons]["best_fixed_shift"] = int(min(mr, key=mr.get))
        by_d = {}
        for d in sorted({k[0] for k in keys}):
            cand = {c: float(np.mean(regrets_by_d[(d, c)])) for c in SHIFTS if (d, c) in regrets_by_d}
            by_d[d] = int(min(cand, key=cand.get))
        out[cons]["best_fixed_shift_by_d"] = by_d
    return out


def rule_depth(rule: tuple, n: int, eps: float, d: int) -> int:
    """Candidate rules, functions of (n, ε, d) only: ("shift", c) = r_paper - c;
    ("snap", c) = r_paper - c rounded down to a multiple of d (whole halvings of every axis: an
    extra level that does not shrink the leaves' l_inf diameter only adds noise); ("bound",)."""
    if rule[0] == "bound":
        return bound_depth(n, eps, d)
    r = max(0, paper_depth(n, eps, d) - rule[1])
    if rule[0] == "snap":
        r = d * (r // d)
    return r


CANDIDATE_RULES = [("shift", c) for c in SHIFTS] + [("snap", c) for c in SHIFTS] + [("bound",)]


def evaluate_rules(rows: list[dict]) -> dict:
    """Regret of each candidate rule: W1 at the rule's depth / best W1 over the measured depths, per
    setting (d, n, ε, data); summarised by the geometric mean and the maximum, overall and per d.
    A rule is scored only on settings where its depth was measured (``covered``)."""
    out = {}
    for cons in CONSISTENCIES:
        part = [r for r in rows if r["phase"] == "A" and r["consistency"] == cons]
        keys = sorted({(r["d"], r["n"], r["eps"], r["data"]) for r in part})
        table = {}
        for rule in CANDIDATE_RULES:
            regrets, by_d = [], {}
            for key in keys:
                sub = {r["depth"]: r["w1"] for r in part if (r["d"], r["n"], r["eps"], r["data"]) == key}
                depth = rule_depth(rule, key[1], key[2], key[0])
                if depth in sub:
                    g = sub[depth] / min(sub.values())
                    regrets.append(g)
                    by_d.setdefault(key[0], []).append(g)
            if regrets:
                table["-".join(map(str, rule))] = {
                    "geo_mean_regret": float(np.exp(np.mean(np.log(regrets)))),
                    "max_regret": float(np.max(regrets)), "covered": len(regrets), "of": len(keys),
                    "geo_mean_regret_by_d": {d: float(np.exp(np.mean(np.log(v)))) for d, v in sorted(by_d.items())},
                }
        full = {k: v for k, v in table.items() if v["covered"] == v["of"]}
        best = min(full, key=lambda k: full[k]["geo_mean_regret"]) if full else None
        out[cons] = {"rules": table, "best_rule_fully_covered": best}
    return out


def phase_b(rows_a: list[dict], summary: dict, quick: bool) -> list[dict]:
    rows = []
    sets, kinds, reps = settings(quick)
    alphas = (0.0, 0.25, 0.5, 0.75, 1.0)
    for d, n, eps in sets:
        if d == 1 and n > 10_000:
            continue
        for kind in kinds[:2]:
            X = make_data(kind, n, d, seed=1000 + d)
            for cons in CONSISTENCIES:
                c = summary[cons]["best_fixed_shift_by_d"].get(d, summary[cons]["best_fixed_shift"])
                r = max(0, paper_depth(n, eps, d) - c)
                line = []
                for a in alphas:
                    m, se = mean_w1(X, d, eps, r, cons, a, reps, seed0=500)
                    rows.append(dict(phase="B", d=d, n=n, eps=eps, data=kind, consistency=cons, alpha=a, depth=r,
                                     shift=c, w1=m, se=se))
                    line.append(f"a{a}:{m:.4f}")
                print(f"B d={d} n={n} eps={eps} {kind:12s} {cons:14s} r={r} " + " ".join(line), flush=True)
    return rows


def summarise_b(rows: list[dict]) -> dict:
    out = {}
    for cons in CONSISTENCIES:
        part = [r for r in rows if r["consistency"] == cons]
        keys = sorted({(r["d"], r["n"], r["eps"], r["data"]) for r in part})
        rel = {}
        for key in keys:
            sub = {r["alpha"]: r["w1"] for r in part if (r["d"], r["n"], r["eps"], r["data"]) == key}
            for a, v in sub.items():
                rel.setdefault(a, []).append(v / sub[0.5])
        out[cons] = {"mean_w1_relative_to_A4_by_alpha": {a: float(np.mean(v)) for a, v in sorted(rel.items())},
                     "max_w1_relative_to_A4_by_alpha": {a: float(np.max(v)) for a, v in sorted(rel.items())}}
    return out


def consistency_gain(rows: list[dict]) -> dict:
    """W1 of least squares / W1 of the proportional map, each at its best measured depth, per setting."""
    part = [r for r in rows if r["phase"] == "A"]
    keys = sorted({(r["d"], r["n"], r["eps"], r["data"]) for r in part})
    ratios, by_d = [], {}
    for key in keys:
        best = {c: min(r["w1"] for r in part if (r["d"], r["n"], r["eps"], r["data"]) == key
                       and r["consistency"] == c) for c in CONSISTENCIES}
        g = best["least_squares"] / best["proportional"]
        ratios.append(g)
        by_d.setdefault(key[0], []).append(g)
    return {"geo_mean": float(np.exp(np.mean(np.log(ratios)))), "min": float(np.min(ratios)),
            "max": float(np.max(ratios)),
            "geo_mean_by_d": {d: float(np.exp(np.mean(np.log(v)))) for d, v in sorted(by_d.items())}}


def conclusions(rules: dict, gain: dict, sum_b: dict) -> list[str]:
    out = [f"least squares / proportional at each one's best depth: geometric mean {gain['geo_mean']:.3f} "
           f"(range {gain['min']:.2f}-{gain['max']:.2f}, by d {gain['geo_mean_by_d']}) -> default "
           "consistency 'least_squares'."]
    for cons in CONSISTENCIES:
        t = rules[cons]["rules"]
        best_by_d = {}
        for d in (1, 2, 3):
            cand = {k: v["geo_mean_regret_by_d"].get(d) for k, v in t.items()
                    if v["covered"] == v["of"] or k == "bound"}
            cand = {k: v for k, v in cand.items() if v is not None}
            k = min(cand, key=cand.get)
            best_by_d[d] = f"{k} ({cand[k]:.3f}; Corollary 12 = shift-0: {t['shift-0']['geo_mean_regret_by_d'][d]:.3f})"
        out.append(f"{cons}: best rule per d (geometric-mean regret): {best_by_d}")
    for cons, v in sum_b.items():
        rel = v["mean_w1_relative_to_A4_by_alpha"]
        out.append(f"{cons}: noise split sigma_j ~ Delta^-alpha, mean W1 relative to A.4 (alpha=0.5): "
                   + ", ".join(f"{a}: {x:.3f}" for a, x in rel.items()) + " -> keep A.4.")
    return out


def main(argv: list[str] | None = None) -> dict:
    argv = sys.argv[1:] if argv is None else argv
    quick = "--quick" in argv
    t0 = time.perf_counter()
    if "--summarise-only" in argv:  # recompute the summaries from an existing results file
        import json

        from benchmarks.common import RESULTS

        old = json.loads((RESULTS / "pmm_depth_study.json").read_text())
        rows = old["rows"]
        rows_a = [r for r in rows if r["phase"] == "A"]
        rows_b = [r for r in rows if r["phase"] == "B"]
        quick, seconds = old.get("quick", False), old.get("seconds")
    else:
        rows_a = phase_a(quick)
        rows_b = None
        seconds = None
    sum_a = summarise_a(rows_a)
    rules = evaluate_rules(rows_a)
    print({k: v["best_rule_fully_covered"] for k, v in rules.items()})
    if rows_b is None:
        rows_b = phase_b(rows_a, sum_a, quick)
    sum_b = summarise_b(rows_b)
    gain = consistency_gain(rows_a)
    concl = conclusions(rules, gain, sum_b)
    print("\n".join(concl))
    payload = {
        "description": __doc__,
        "quick": quick,
        "w1": "exact: POT network simplex (d >= 2), CDF formula (d = 1); l_inf, unit cube",
        "conclusions": concl,
        "least_squares_vs_proportional": gain,
        "depth_rules": rules,
        "summary_phase_a": sum_a,
        "summary_phase_b": sum_b,
        "rows": rows_a + rows_b,
        "seconds": seconds if seconds is not None else time.perf_counter() - t0,
    }
    write("pmm_depth_study", payload)
    return payload


if __name__ == "__main__":
    main()
