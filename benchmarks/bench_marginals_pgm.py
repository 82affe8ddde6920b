"""Worker of ``bench_marginals_wide.py pgm``: private-pgm's ``mbi`` fits the noisy tables of one marginal-table
release on its tree. Runs in the peers' environment (``benchmarks/peers/.venv-peers``: ``mbi==1.1.0`` and jax),
never imported by the library or the suite.

Input ``<dir>/in.npz`` (the coarse shape, the size, the iterations, the tree's pairs, all pairs, and per
measurement its axes, noisy values and noise s.d.); output ``<dir>/out.json``: the fitted model's coarse table
of every column and of every pair (variable elimination off the tree), the fit's wall and CPU seconds
(jax's compilation included, as a user of one release pays it) and the mbi version.
"""

from __future__ import annotations

import json
import sys
import time
from importlib.metadata import version
from pathlib import Path

import numpy as np


def main(folder: str) -> None:
    from mbi import Domain, LinearMeasurement, estimation

    data = np.load(Path(folder) / "in.npz")
    shape = [int(s) for s in data["shape"]]
    names = [f"c{j}" for j in range(len(shape))]
    dom = Domain(names, shape)
    meas = []
    for k in range(int(data["count"])):
        clique = tuple(names[int(a)] for a in data[f"axes{k}"])
        sd = data[f"sd{k}"]
        # mbi takes one s.d. per measurement: the coarse-summed 1-way tables have equal variance per cell only
        # when the fine bins split evenly; the largest s.d. is used (the weights differ by at most a few percent)
        meas.append(LinearMeasurement(data[f"values{k}"].ravel(), clique, stddev=float(np.max(sd))))
    w0, c0 = time.perf_counter(), time.process_time()
    model = estimation.mirror_descent(dom, meas, known_total=float(data["total"]), iters=int(data["iters"]))
    one = [np.asarray(model.project((names[j],)).datavector(flatten=False)).tolist() for j in range(len(shape))]
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    two = [np.asarray(model.project((names[int(i)], names[int(j)])).datavector(flatten=False)).tolist()
           for i, j in data["pairs"]]
    out = {"one": one, "two": two, "wall": wall, "cpu": cpu, "version": version("mbi")}
    (Path(folder) / "out.json").write_text(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv[1])
