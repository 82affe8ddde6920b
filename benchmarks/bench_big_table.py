"""The library's operations on a table at the readers' limit (200,000 rows: 3 numeric columns, 2 of them whole
numbers, and 2 categorical ones, the acceptance table of tests/core/test_cli_workflow.py), this tree against a
baseline tree in the same run.

Each operation runs in a fresh child process with ``PYTHONPATH`` set to one tree (so both trees run on the
same installed packages), alternating baseline and this tree ``--repeat`` times; the CPU seconds of the
operation (``time.process_time``, the imports excluded) and its wall seconds are recorded, and the ratio of the
medians (this tree / baseline). The operations:

* ``read_table``: the data file (200,000 rows) with its domain declared;
* ``read_table_csv_module``: the same in this tree with pandas' C parser switched off (the csv module's
  splitter alone: what a file with quotes costs);
* ``domain_read``: a read table encoded by :meth:`Domain.read` (categorical columns to their indices);
* ``mixed_pairwise``: the mixed metric's dense matrix between 3,000 and 2,000 rows;
* ``interval``: ``wasserstein1(method="interval")`` between the data and a PMM release of it (ε = 1, seed 7).

Usage::

    git archive <commit> | tar -x -C /tmp/base      # the baseline tree
    python benchmarks/bench_big_table.py --baseline /tmp/base --repeat 3

Writes ``benchmarks/results/big_table.json`` with the load averages at the start and the end (the cores are
shared: CPU seconds move less than wall seconds under load, and the ratios are taken in the same run).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.common import write  # noqa: E402

OPS = ("read_table", "read_table_csv_module", "domain_read", "mixed_pairwise", "interval")

_CHILD = r"""
import json, sys, time
import numpy as np
from dpsynth_core import Domain
from dpsynth_core.tabular import read_table
from dpsynth_core.transport import wasserstein1
from dpsynth_core.transport.metrics import MixedMetric
op, folder = sys.argv[1], sys.argv[2]
DOM = Domain([0, 10, 0], [120, 60, 30], names=["age", "bmi", "visits", "sex", "region"],
             categories={"sex": ["F", "M"], "region": ["north", "east", "south", "west"]})
if op == "read_table_csv_module":
    from dpsynth_core.tabular import read as module
    module.plain_body = lambda *a, **k: None
if op in ("domain_read", "interval"):
    real = read_table(folder + "/big.csv", domain=DOM).frame
    syn = read_table(folder + "/syn.csv", domain=DOM, max_rows=10**6).frame
if op == "mixed_pairwise":
    gm = MixedMetric.from_domain(DOM)
    X = DOM.to_unit(read_table(folder + "/big.csv", domain=DOM).frame)
    P, Q = X[:3000], X[3000:5000]
out = {}
t0, c0 = time.perf_counter(), time.process_time()
if op.startswith("read_table"):
    out["rows"] = read_table(folder + "/big.csv", domain=DOM).frame.shape[0]
elif op == "domain_read":
    out["rows"] = DOM.read(real).shape[0]
elif op == "mixed_pairwise":
    out["sum"] = float(gm.pairwise(P, Q).sum())
else:
    res = wasserstein1(real, syn, domain=DOM, method="interval", return_result=True)
    out.update(lower=res.lower, upper=res.upper, cells=res.details["cells"])
out["cpu"], out["wall"] = time.process_time() - c0, time.perf_counter() - t0
print("RESULT " + json.dumps(out))
"""


def _data(folder: Path) -> None:
    """The test's table (tests/core/test_cli_workflow.py, seed 7) and a PMM release of it, as CSV files."""
    import numpy as np
    import pandas as pd

    from dpsynth_core import Domain, run
    from dpsynth_core.export import synthetic_csv

    n = 200_000
    rng = np.random.default_rng(7)
    df = pd.DataFrame({"age": rng.uniform(18, 90, n).round(), "bmi": rng.normal(27, 4, n).clip(15, 45).round(1),
                       "visits": rng.poisson(2.5, n).clip(0, 30).astype(float),
                       "sex": rng.choice(["F", "M"], n), "region": rng.choice(["north", "east", "south", "west"], n)})
    df.to_csv(folder / "big.csv", index=False)
    dom = Domain([0, 10, 0], [120, 60, 30], names=list(df.columns),
                 categories={"sex": ["F", "M"], "region": ["north", "east", "south", "west"]})
    (folder / "syn.csv").write_bytes(synthetic_csv(run("pmm", df, dom, epsilon=1.0, rng=7), rng=7))


def _once(tree: Path, op: str, folder: Path) -> dict:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    out = subprocess.run([sys.executable, "-c", _CHILD, op, str(folder)], capture_output=True, text=True, env=env,
                         cwd=str(tree), check=True).stdout
    return json.loads(next(line for line in out.splitlines() if line.startswith("RESULT "))[7:])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--baseline", required=True, help="a tree of the project to compare against")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--only", nargs="*", default=list(OPS), choices=OPS)
    args = ap.parse_args()
    load_start = os.getloadavg()
    trees = {"baseline": Path(args.baseline).resolve(), "this": ROOT}
    rows = {}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        _data(folder)
        for op in args.only:
            runs = {"baseline": [], "this": []}
            for _ in range(args.repeat):
                for label, tree in trees.items():
                    if op == "read_table_csv_module" and label == "baseline":
                        continue
                    runs[label].append(_once(tree, op, folder))
                    print(op, label, runs[label][-1], flush=True)
            row = {label: {"cpu_median": statistics.median(r["cpu"] for r in rs),
                           "wall_median": statistics.median(r["wall"] for r in rs), "runs": rs}
                   for label, rs in runs.items() if rs}
            if "baseline" in row:
                row["cpu_ratio"] = row["this"]["cpu_median"] / row["baseline"]["cpu_median"]
                row["wall_ratio"] = row["this"]["wall_median"] / row["baseline"]["wall_median"]
            rows[op] = row
    write("big_table", {"baseline": str(trees["baseline"]), "repeat": args.repeat, "operations": rows,
                        "load_average_start": load_start, "load_average_end": os.getloadavg()})


if __name__ == "__main__":
    main()
