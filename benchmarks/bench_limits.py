"""Worst cases of every mechanism at the ends of the ε range (docs/privacy-model.md, "Resource limits").

Every mechanism runs on n = 40 uniform rows at ε = 1e-6 and ε = 1e6 (the documented range,
:data:`dpsynth_core.privacy.EPSILON_MIN` / ``EPSILON_MAX``) for d in {1, 2, 10, 32, 50} (up to the
mechanism's ``max_dim``), with its default parameters (δ = 1e-5 where one is needed). Each run is a
fresh child process so that its peak resident memory is its own; a run is stopped after ``--timeout``
seconds and its address space is capped at ``--max-gb`` (a run that hits either is recorded as such,
not retried). Recorded per case: wall time of the call, peak resident memory of the child (the
``Maximum resident set size`` of ``/usr/bin/time -v``) and the part of it above the child's memory
after the imports, output rows, or the refusal message.

Extra cases: sparse_marginals at d = 50 with the defaults of the hostile test (n = 8, ε = 1), and its
s = 1 default k (``default_k``) at several n.

``--reader`` instead times the command line at the readers' own limit (issue 36): a 200,000-row mixed table
(3 numeric columns, 2 of them declared whole, and 2 categorical), released by ``dpsynth synth`` and compared
with its own release by ``dpsynth w1`` and ``dpsynth report``, each a fresh process of the installed command;
it writes ``benchmarks/results/reader_limit.json`` (exit codes, wall times, the ratios to ``synth``'s time in
the same run, W1's interval, load averages).

Usage::

    python benchmarks/bench_limits.py --label after            # all mechanisms
    python benchmarks/bench_limits.py --label before --timeout 60 --only flat_histogram haar_walk
    python benchmarks/bench_limits.py --reader                 # the CLI at the readers' limit

Results are merged into ``benchmarks/results/limits.json`` under ``--label`` (other labels are kept),
with the machine's load average at the start and the end of the run (the cores are shared: times
under load are longer than on a quiet machine).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.common import RESULTS, write  # noqa: E402

EPSILONS = (1e-6, 1e6)
DIMS = (1, 2, 10, 32, 50)
N = 40

_CHILD = r"""
import json, resource, sys, time
import numpy as np
max_gb = float(sys.argv[1])
resource.setrlimit(resource.RLIMIT_AS, (int(max_gb * 2**30), int(max_gb * 2**30)))
from dpsynth_core import Domain
from dpsynth_core.mechanisms import MECHANISMS, load_all, run
load_all()
case = json.loads(sys.argv[2])
name, d, n, eps = case["name"], case["d"], case["n"], case["epsilon"]
kw = dict(case.get("kwargs", {}))
if MECHANISMS[name].needs_delta:
    kw.setdefault("delta", 1e-5)
X = np.random.default_rng(d).random((n, d))
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
out = {}
t0 = time.perf_counter()
try:
    rel = run(name, X, Domain.unit(d), epsilon=eps, rng=0, **kw)
    out["outcome"] = "release"
    out["rows"] = int(rel.synthetic.shape[0])
    out["capped"] = [n for n in rel.notes if "limit" in n.lower()][:1]
except (TypeError, ValueError) as exc:
    out["outcome"] = "refused"
    out["message"] = str(exc)
except MemoryError:
    out["outcome"] = "MemoryError"
out["seconds"] = time.perf_counter() - t0
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
out["peak_rss_mb"] = peak / 1024.0
out["peak_above_imports_mb"] = (peak - base) / 1024.0
print("RESULT " + json.dumps(out))
"""

_DEFAULT_K = r"""
import json, sys, time
from dpsynth_core.mechanisms.sparse_marginals import default_k
out = []
for n in (40, 1000, 10**6):
    t0 = time.perf_counter()
    k = default_k(n, 1.0, 2, 1)
    out.append({"n": n, "epsilon": 1.0, "d": 2, "s": 1, "k": k, "seconds": time.perf_counter() - t0})
print("RESULT " + json.dumps(out))
"""


def _child(code: str, args: list[str], timeout: float):
    try:
        proc = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=timeout,
                              cwd=str(Path(__file__).resolve().parents[1]))
    except subprocess.TimeoutExpired:
        return {"outcome": f"timeout (> {timeout:g} s)"}
    for line in proc.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    tail = (proc.stderr or "").strip().splitlines()[-1:] or ["no output"]
    return {"outcome": "crashed", "message": tail[0][:300], "returncode": proc.returncode}


def reader_limit(rows: int = 200_000) -> dict:
    """``dpsynth synth``, ``w1`` and ``report`` on a mixed table of ``rows`` rows (the readers' limit) and its
    own release; each a fresh process, timed by wall clock (see the module docstring)."""
    import tempfile
    import time

    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(7)
    table = pd.DataFrame({"age": rng.uniform(18, 90, rows).round(), "bmi": rng.normal(27, 4, rows).clip(15, 45).round(1),
                          "visits": rng.poisson(2.5, rows).clip(0, 30).astype(float), "sex": rng.choice(["F", "M"], rows),
                          "region": rng.choice(["north", "east", "south", "west"], rows)})
    dom = ["-b", "0:120,10:60,0:30", "--categories", "sex=F|M;region=north|east|south|west", "--integers", "age,visits"]
    exe = [sys.executable, "-m", "dpsynth_core.cli"]
    out: dict = {"rows": rows, "load_start": list(os.getloadavg())}
    with tempfile.TemporaryDirectory() as tmp:
        big, syn = os.path.join(tmp, "big.csv"), os.path.join(tmp, "syn.csv")
        table.to_csv(big, index=False)
        steps = {"synth": [*exe, "synth", big, "-m", "pmm", "-e", "1", *dom, "-o", syn, "-q"],
                 "w1": [*exe, "w1", big, syn, *dom, "--json", "-q"],
                 "report": [*exe, "report", big, syn, *dom, "-o", os.path.join(tmp, "owner.json"), "-q"]}
        for name, cmd in steps.items():
            t0 = time.perf_counter()
            proc = subprocess.run(cmd, capture_output=True, text=True)
            out[name] = {"exit_code": proc.returncode, "seconds": time.perf_counter() - t0,
                         "stderr": proc.stderr.strip()[-600:]}
            if name == "w1" and proc.returncode == 0:
                out[name]["result"] = json.loads(proc.stdout)
            if name == "synth":
                out[name]["synthetic_rows"] = sum(1 for _ in open(syn)) - 1 if proc.returncode == 0 else None
            print(name, json.dumps(out[name])[:400], flush=True)
    for name in ("w1", "report"):
        out[name]["over_synth"] = out[name]["seconds"] / out["synth"]["seconds"]
    out["load_end"] = list(os.getloadavg())
    write("reader_limit", {"description": "The command line at the readers' limit (benchmarks/bench_limits.py "
                                          "--reader); a shared 2-core machine: read the ratios and the load", **out})
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--label", default="after")
    ap.add_argument("--timeout", type=float, default=120.0)
    ap.add_argument("--max-gb", type=float, default=6.0)
    ap.add_argument("--only", nargs="*", default=None)
    ap.add_argument("--reader", action="store_true", help="only the CLI at the readers' limit (reader_limit.json)")
    args = ap.parse_args(argv)
    if args.reader:
        reader_limit()
        return

    from dpsynth_core.mechanisms import MECHANISMS, load_all

    load_all()
    names = sorted(MECHANISMS) if not args.only else args.only
    cases = []
    for name in names:
        max_dim = MECHANISMS[name].max_dim
        for eps in EPSILONS:
            for d in DIMS:
                if max_dim is not None and d > max_dim:
                    continue
                cases.append({"name": name, "d": d, "n": N, "epsilon": eps})
    if not args.only or "sparse_marginals" in names:
        cases.append({"name": "sparse_marginals", "d": 50, "n": 8, "epsilon": 1.0, "tag": "hostile test defaults"})
    load_start = os.getloadavg()
    runs = []
    for case in cases:
        res = _child(_CHILD, [str(args.max_gb), json.dumps(case)], args.timeout)
        runs.append({**case, **res})
        print(json.dumps(runs[-1]), flush=True)
    worst = {}
    for r in runs:
        if "tag" in r:
            continue
        failed = r["outcome"] not in ("release", "refused")
        key = (failed, r.get("seconds", float("inf")))
        w = worst.get(r["name"])
        if w is None or key > (w["outcome"] not in ("release", "refused"), w.get("seconds", float("inf"))):
            worst[r["name"]] = r
    dk = None
    if not args.only or "sparse_marginals" in names:
        dk = _child(_DEFAULT_K, [], args.timeout)

    path = RESULTS / "limits.json"
    previous = json.loads(path.read_text()) if path.exists() else {}
    previous.pop("machine", None)
    labelled = previous.get("runs", {})
    entry = {"settings": {"n": N, "epsilons": list(EPSILONS), "dims": list(DIMS), "timeout_s": args.timeout,
                          "address_space_cap_gb": args.max_gb},
             "load_averages_1_5_15_min": [{"mechanisms": "all" if not args.only else names,
                                           "start": list(load_start), "end": list(os.getloadavg())}],
             "worst_per_mechanism": worst, "cases": runs}
    if dk is not None:
        entry["sparse_marginals_default_k_s1"] = dk
    if args.only and args.label in labelled:  # a partial run updates the named mechanisms only
        old = labelled[args.label]
        keep = [c for c in old.get("cases", []) if c["name"] not in names]
        entry["cases"] = keep + runs
        entry["worst_per_mechanism"] = {**old.get("worst_per_mechanism", {}), **worst}
        entry["load_averages_1_5_15_min"] = old.get("load_averages_1_5_15_min", []) + entry["load_averages_1_5_15_min"]
        if dk is None and "sparse_marginals_default_k_s1" in old:
            entry["sparse_marginals_default_k_s1"] = old["sparse_marginals_default_k_s1"]
    labelled[args.label] = entry
    write("limits", {"description": "Worst case per mechanism at epsilon = 1e-6 and 1e6, n = 40, d up to 50 "
                                    "(benchmarks/bench_limits.py)", "runs": labelled})


if __name__ == "__main__":
    main()
