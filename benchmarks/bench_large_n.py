"""Does PMM pull away from the flat histogram as n grows? Exact W1 at large n (issue 28, item 4).

PMM, PSMM, the superregular random walk (haar_walk) and the flat Laplace histogram, each with its
defaults (the flat histogram at its rule-chosen grid, dpsynth_core.defaults.flat_histogram_bins), on the two-cluster mixture of
benchmarks/depth_study.py, d = 2, eps = 1, n = 10^3 .. 2*10^4 (5*10^4 on request), a few seeds per n. W1 (l_inf, unit
cube) between the data and each release is computed **exactly** by
``wasserstein1(method="sparse")`` (certified to 1e-10; docs/transport.md), where the grid interval of
bench_pmm_psmm.py could not separate the mechanisms. Also reported: the ratio PMM / flat per n and the
log-log slope of mean W1 against n for every mechanism (Theorem 11 of [HVZ23] predicts PMM's W1 ~
(eps n)^(-1/d) up to logs).

Writes benchmarks/results/large_n.json. Run from the repo root under ``nice``:
``nice -n 10 .venv/bin/python benchmarks/bench_large_n.py [--quick] [--50k]`` (three seeds up to
10^4, two at 2*10^4: about 2 minutes on a quiet machine, 45 under a load of 6; ``--50k`` adds n = 5*10^4 with one seed,
over an hour more; ``--n=20000 --seeds=1 --mechanisms=pmm,flat_histogram --out=large_n_20k`` runs one
size for the named mechanisms into its own file). The file is rewritten after every release; ``complete_n`` lists the sizes whose
seeds all ran, and the summary covers those.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.common import write  # noqa: E402
from benchmarks.depth_study import make_data  # noqa: E402
from dpsynth_core import Domain, run  # noqa: E402
from dpsynth_core.transport import wasserstein1  # noqa: E402

MECHANISMS = ("pmm", "psmm", "haar_walk", "flat_histogram")


def summarise(rows: list[dict], ns: list[int]) -> dict:
    summary: dict = {}
    for n in ns:
        for mech in MECHANISMS:
            w = np.array([r["w1"] for r in rows if r["mechanism"] == mech and r["n"] == n])
            summary.setdefault(str(n), {})[mech] = {"mean": float(w.mean()),
                                                    "sd": float(w.std(ddof=1)) if w.size > 1 else None,
                                                    "reps": int(w.size)}
        s = summary[str(n)]
        s["ratio_pmm_over_flat"] = s["pmm"]["mean"] / s["flat_histogram"]["mean"]
        s["ratio_psmm_over_flat"] = s["psmm"]["mean"] / s["flat_histogram"]["mean"]
    if len(ns) >= 2:
        summary["slope_loglog"] = {mech: float(np.polyfit(np.log(ns), np.log([summary[str(n)][mech]["mean"] for n in ns]),
                                                          1)[0]) for mech in MECHANISMS}
    return summary


def _payload(rows: list[dict], ns, seeds, d: int, eps: float, mechanisms=MECHANISMS) -> dict:
    done = [n for n in ns if sum(r["n"] == n for r in rows) == seeds[n] * len(mechanisms)]
    return {"setup": {"data": "two_clusters (benchmarks/depth_study.make_data, seed = n)", "d": d, "epsilon": eps,
                      "metric": "linf, unit cube", "w1": "wasserstein1(method='sparse'), exact and certified",
                      "mechanisms": "defaults of each (flat_histogram: its rule-chosen grid, dpsynth_core.defaults.flat_histogram_bins)",
                      "seeds": {str(k): v for k, v in seeds.items()}},
            "complete_n": done, "rows": rows,
            "summary": summarise(rows, done) if done and tuple(mechanisms) == MECHANISMS else {},
            "all_exact": all(r["exact"] for r in rows)}


def main(ns, seeds, mechanisms=MECHANISMS, name: str = "large_n") -> dict:
    d, eps = 2, 1.0
    dom = Domain.unit(d)
    rows: list[dict] = []
    out: dict = {}
    for n in ns:
        X = make_data("two_clusters", n, d, seed=n)
        for mech in mechanisms:
            for s in range(seeds[n]):
                t0 = time.perf_counter()
                rel = run(mech, X, dom, epsilon=eps, rng=1000 * s + 1)
                t_rel = time.perf_counter() - t0
                r = wasserstein1(X, rel.synthetic, domain=dom, method="sparse", return_result=True)
                rows.append({"mechanism": mech, "n": n, "seed": s, "w1": r.value, "lower": r.lower,
                             "upper": r.upper, "exact": bool(r.exact), "w1_seconds": r.seconds,
                             "w1_rounds": r.iterations, "release_seconds": t_rel,
                             "n_synthetic": int(rel.synthetic.shape[0]),
                             "params": {k: v for k, v in rel.params.items()
                                        if isinstance(v, (int, float, str, bool)) and k in
                                        ("depth", "bins", "grid", "grid_rule", "n_synthetic")}})
                print(f"n={n} {mech} seed={s}: W1 {r.value:.6f} exact={r.exact} ({r.seconds:.1f}s, load "
                      f"{os.getloadavg()[0]:.1f})", flush=True)
                # written after every release, so that a run stopped part way keeps what it measured
                out = _payload(rows, ns, seeds, d, eps, mechanisms)
                write(name, out)
    for n in out["complete_n"] if out["summary"] else []:
        s = out["summary"][str(n)]
        print(n, " ".join(f"{m}={s[m]['mean']:.5f}" for m in MECHANISMS), f"pmm/flat={s['ratio_pmm_over_flat']:.3f}")
    print("slopes", out["summary"].get("slope_loglog"))
    return out


if __name__ == "__main__":
    opts = dict(a.split("=", 1) for a in sys.argv[1:] if a.startswith("--") and "=" in a)
    if "--n" in opts:
        # one size, e.g. --n=20000 --seeds=1 --mechanisms=pmm,flat_histogram --out=large_n_20k
        n0 = int(opts["--n"])
        main([n0], {n0: int(opts.get("--seeds", 1))},
             tuple(opts.get("--mechanisms", ",".join(MECHANISMS)).split(",")), opts.get("--out", f"large_n_{n0}"))
        sys.exit(0)
    if "--quick" in sys.argv:
        sizes = [1000, 3000]
    else:
        sizes = [1000, 2000, 5000, 10_000, 20_000] + ([50_000] if "--50k" in sys.argv else [])
    main(sizes, {n: (1 if n >= 50_000 else 2 if "--quick" in sys.argv or n >= 20_000 else 3) for n in sizes})
