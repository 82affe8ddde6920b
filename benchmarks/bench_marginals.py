"""The marginal-table mechanism (``marginals``, issue 34): speed, its relation to ``sparse_marginals``, and the
noise family's accounting.

Phases
    speed     one release at the defaults (pure ε, and δ = 1e-5) of three Gaussian clusters in d = 3, 4, 6, 8
              (numeric) and of the generated clinic (6 columns, 3 categorical), n = 10^4 and 10^5, ε = 1, three
              repeats; PMM at its defaults on the same data in the same run (the ratio is what to compare
              across machines). Wall and CPU seconds, and the load average before and after (the machine
              is shared: numbers taken under load say so).
    family    ``sparse_marginals`` (the paper's Algorithm 1, replace, its defaults) against ``marginals``
              (replace and add/remove, its defaults) on the generated survey of 3,000 rows (``study_data.survey``:
              spiked whole-number columns and categories), ε = 1, three seeds: the certificate, the exact W1
              of the 2-way marginals, the 1-/2-way errors, the share of zeros of the spiked column.
    noise     for δ = 1e-5 and ε = 0.3, 1, 3: the largest zCDP ρ of Gaussian noise composed exactly (μ-GDP,
              ``privacy.gaussian_rho``) and of noise only known to be ρ-zCDP (the discrete Gaussian, through
              the general conversion ``privacy.zcdp_delta``), and the ratio of their noise s.d. (√ of the ρ ratio).

Results: ``benchmarks/results/marginals.json``. Usage::

    nice -n 10 .venv/bin/python benchmarks/bench_marginals.py [speed] [family] [noise]
"""

from __future__ import annotations

import json
import math
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks import bench_mixed, study_data  # noqa: E402
from benchmarks.common import RESULTS, run_phases  # noqa: E402
from dpsynth_core import datasets, run  # noqa: E402
from dpsynth_core.privacy import gaussian_rho, zcdp_delta  # noqa: E402
from dpsynth_core.transport.marginals import sparse_utility_loss  # noqa: E402

OUT = RESULTS / "marginals.json"


def _timed(fn) -> tuple[float, float, object]:
    w0, c0 = time.perf_counter(), time.process_time()
    out = fn()
    return time.perf_counter() - w0, time.process_time() - c0, out


def _table(kind: str, d: int, n: int):
    if kind == "clinic":
        ds = datasets.clinic(n, rng=11)
    else:
        ds = datasets.gaussian_mixture(n, d=d, k=3, spread=0.05, rng=11)
    return np.asarray(ds.X), ds.domain


def phase_speed(repeats: int = 3) -> list[dict]:
    out = []
    cases = [("gm", d, n) for d in (3, 4, 6, 8) for n in (10_000, 100_000)] + [("clinic", 6, 10_000),
                                                                               ("clinic", 6, 100_000)]
    for kind, d, n in cases:
        X, dom = _table(kind, d, n)
        load0 = os.getloadavg()[0]
        times = {"marginals": [], "marginals_delta": [], "pmm": []}
        for r in range(repeats):
            for label, kw in (("marginals", {}), ("marginals_delta", {"delta": 1e-5}), ("pmm", {})):
                name = "pmm" if label == "pmm" else "marginals"
                wall, cpu, _ = _timed(lambda name=name, kw=kw, r=r, X=X, dom=dom: run(name, X, dom, epsilon=1.0, rng=r,
                                                                                      **kw))
                times[label].append((wall, cpu))
        row = {"table": kind, "d": d, "n": n, "load_before": load0, "load_after": os.getloadavg()[0]}
        for label, ts in times.items():
            row[f"{label}_wall"] = float(np.median([t[0] for t in ts]))
            row[f"{label}_cpu"] = float(np.median([t[1] for t in ts]))
        row["ratio_to_pmm_wall"] = row["marginals_wall"] / row["pmm_wall"]
        out.append(row)
        print(json.dumps(row), flush=True)
    return out


def phase_family(seeds=(0, 1, 2)) -> list[dict]:
    # 3,000 rows: the exact W1 of a 2-way marginal over a categorical column is a dense transport problem (at
    # most 2.5e7 point pairs: sparse_utility_loss refuses the survey's 6,366 rows)
    X, dom, _ = study_data.load("survey:6", 3000, data_seed=1000)
    hours = list(dom.names).index("hours")
    out = []
    for label, name, kw in (("sparse_marginals (replace, defaults)", "sparse_marginals", {}),
                            ("marginals (replace, defaults)", "marginals", {"neighbours": "replace"}),
                            ("marginals (add/remove, defaults)", "marginals", {})):
        for seed in seeds:
            wall, cpu, rel = _timed(lambda name=name, kw=kw, seed=seed: run(name, X, dom, epsilon=1.0, rng=seed, **kw))
            Y = dom.read(rel.synthetic)
            err = bench_mixed.marginal_errors(dom.to_unit(X), dom.to_unit(Y), dom)
            row = {"mechanism": label, "seed": seed, "bound": rel.bound, "w1_2way": sparse_utility_loss(X, Y, 2, domain=dom),
                   "marg1": err["marg1"], "marg1_num": err["marg1_num"], "marg2": err["marg2"],
                   "zeros_real": float(np.mean(X[:, hours] == 0)), "zeros_synthetic": float(np.mean(Y[:, hours] == 0)),
                   "k": rel.params.get("k"), "wall": wall, "cpu": cpu}
            out.append(row)
            print(json.dumps(row), flush=True)
    return out


def _zcdp_rho(eps: float, delta: float) -> float:
    """The largest ρ with zcdp_delta(ρ, ε) <= δ (bisection in log ρ)."""
    lo, hi = 1e-8, 10.0
    for _ in range(200):
        mid = math.sqrt(lo * hi)
        lo, hi = (mid, hi) if zcdp_delta(mid, eps) <= delta else (lo, mid)
    return lo


def phase_noise(delta: float = 1e-5) -> list[dict]:
    out = []
    for eps in (0.3, 1.0, 3.0):
        exact, general = gaussian_rho(eps, delta), _zcdp_rho(eps, delta)
        out.append({"epsilon": eps, "delta": delta, "rho_gaussian_exact": exact, "rho_zcdp_general": general,
                    "sd_ratio_discrete_over_gaussian": math.sqrt(exact / general)})
        print(json.dumps(out[-1]), flush=True)
    return out


def main(argv: list[str]) -> None:
    run_phases(OUT, __doc__, {"speed": phase_speed, "family": phase_family, "noise": phase_noise}, argv)


if __name__ == "__main__":
    main(sys.argv[1:])
