"""Runs smartnoise-synth synthesizers inside the peers' own virtual environment (``.venv-peers``).

Called by ``benchmarks/bench_peers.py``; never imported by the project. Reads a job file (JSON):
``{"data": {"<table>": "<npz path>"}, "jobs": [{"id", "table", "synth", "epsilon", "delta", "seed",
"bins"}]}`` (``bins``: one number for every column, or a list with one per column; an optional
``mbi_method``, "round" or "sample", is passed to private-pgm's ``synthetic_data`` by AIM and MST);
each npz holds ``X`` (n, d) and the DECLARED bounds ``lower``, ``upper`` (d,). Every
column is given to the synthesizer through smartnoise's own ``BinTransformer(lower, upper, bins)``, so
no privacy budget is spent on bounds and none is read off the data by the transformer. Writes one JSON
line per job to the output path: the released rows (bin midpoints, as smartnoise returns them), the
process CPU seconds of fit + sample, the versions, and the synthesizer's own notion of n.

Usage: ``.venv-peers/bin/python worker.py jobs.json out.jsonl``
"""

from __future__ import annotations

import contextlib
import io
import json
import random
import sys
import time
import warnings

import numpy as np


def run_job(job: dict, X: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> dict:
    import pandas as pd
    from snsynth import Synthesizer
    from snsynth.transform.bin import BinTransformer
    from snsynth.transform.table import TableTransformer

    d = X.shape[1]
    cols = [f"c{j}" for j in range(d)]
    df = pd.DataFrame(X, columns=cols)
    bins = job["bins"] if isinstance(job["bins"], list) else [job["bins"]] * d  # one number, or one per column
    tt = TableTransformer([BinTransformer(bins=int(bins[j]), lower=float(lower[j]), upper=float(upper[j]))
                           for j in range(d)])
    seed = int(job["seed"])
    np.random.seed(seed)  # noqa: NPY002 - smartnoise and private-pgm draw from NumPy's and Python's global generators
    random.seed(seed)
    kwargs = {}
    if job["synth"] in ("mst", "aim"):
        kwargs["delta"] = float(job["delta"])
    if job["synth"] == "mst":
        kwargs["verbose"] = False
    t0 = time.process_time()
    with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        synth = Synthesizer.create(job["synth"], epsilon=float(job["epsilon"]), **kwargs)
        synth.fit(df, transformer=tt, preprocessor_eps=0.0)
        if job.get("mbi_method"):  # private-pgm's way of drawing rows ("round", its default, or "sample")
            import functools

            model = synth.synthesizer  # a frozen dataclass: set the instance attribute past its __setattr__
            object.__setattr__(model, "synthetic_data", functools.partial(model.synthetic_data, method=job["mbi_method"]))
        n_out = int(job.get("n_samples") or len(df))
        out = synth.sample(n_out)
    cpu = time.process_time() - t0
    Y = np.asarray(out[cols] if hasattr(out, "columns") else out, dtype=float)
    return {"id": job["id"], "Y": Y.tolist(), "cpu": cpu, "num_rows_attr": getattr(synth, "num_rows", None)}


def main(argv: list[str]) -> None:
    spec = json.loads(open(argv[0]).read())
    data = {}
    for table, path in spec["data"].items():
        z = np.load(path)
        data[table] = (z["X"], z["lower"], z["upper"])
    import importlib.metadata as md

    versions = {p: md.version(p) for p in ("smartnoise-synth", "mbi", "numpy", "opendp")}
    with open(argv[1], "a") as f:
        for job in spec["jobs"]:
            X, lo, hi = data[job["table"]]
            try:
                row = run_job(job, X, lo, hi)
            except Exception as e:  # recorded, not hidden: the bench reports failed runs
                row = {"id": job["id"], "error": f"{type(e).__name__}: {e}"[:500]}
            row["versions"] = versions
            f.write(json.dumps(row) + "\n")
            f.flush()
            print(f"{job['id']}: {row.get('cpu', row.get('error'))}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
