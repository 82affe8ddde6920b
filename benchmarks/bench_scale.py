"""Data beyond memory (issue #20): mechanisms on Parquet files through a local Dask cluster.

Writes benchmarks/results/scale.json. For each case it records the wall time of the mechanism call
on the Dask DataFrame (read lazily from Parquet on disk, computed by a ``distributed.LocalCluster``
of one single-threaded worker process per core) and, in the same run, on a NumPy array already in
memory; the peak resident memory (``ru_maxrss``) of the client process and of every worker; and
whether the two releases are identical (the design says they are: same rng, same counts).

Cases (the issue's acceptance):
  * pmm, psmm: 10^8 rows, d = 2 (about 1.6 GB of float64 in Parquet). The in-memory baseline runs
    at 10^7 rows (the NumPy path at 10^8 would need the whole 1.6 GB array, which is what the Dask
    path avoids); the figure is the ratio of times per row, Dask at 10^8 over NumPy at 10^7.
  * low_dim: 10^7 rows, d = 10; private_evolution: 10^7 rows, d = 2, 2000 synthetic points,
    5 iterations. Both paths at the same n; the ratio is of times.
  * cli: ``dpsynth synth 'DIR/*.parquet' --engine dask`` on the 10^8 rows, end to end, writing the
    synthetic CSV and the public report.

Each path of each case runs in its own subprocess (the Dask one with a fresh cluster), so every peak
belongs to that path alone: the client's peak is not inflated by the in-memory baseline.

Usage: python benchmarks/bench_scale.py [--quick] [--rows N] [--data DIR] [--only pmm,psmm,...]
``--quick`` runs everything at 10^6 rows (a smoke test of the script, not the figures).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

#: Parquet files of about 80 MB of float64 (5*10^6 rows at d = 2): a partition is one file, and a
#: worker holds a few copies of one partition (the table, the checked array, the unit-cube copy).
FILE_VALUES = 10_000_000
SEED = 20261125


# ------------------------------------------------------------------------------ data on disk
def _write_dataset(directory: Path, rows: int, d: int, seed: int) -> list[str]:
    """``rows`` rows of d columns in Parquet files of FILE_VALUES // d rows, written file by file
    (the generator never holds more than one file). Reused when a manifest says it matches."""
    import numpy as np
    import pandas as pd

    manifest = directory / "manifest.json"
    rows_per_file = FILE_VALUES // d
    want = {"rows": rows, "d": d, "seed": seed, "rows_per_file": rows_per_file}
    if manifest.exists() and json.loads(manifest.read_text()) == want:
        return sorted(str(p) for p in directory.glob("*.parquet"))
    directory.mkdir(parents=True, exist_ok=True)
    for old in directory.glob("*.parquet"):
        old.unlink()
    rng = np.random.default_rng(seed)
    names = [f"x{j}" for j in range(d)]
    done, k = 0, 0
    files = []
    while done < rows:
        m = min(rows_per_file, rows - done)
        if d == 2:  # a correlated blob, some rows outside the unit box (they get clamped)
            a = rng.normal(0.5, 0.15, m)
            cols = [a, np.clip(0.6 * a + rng.normal(0.2, 0.1, m), -0.2, 1.2)]
        else:  # near a 2-dimensional subspace of R^d: low_dim's setting
            z = rng.normal(0.0, 1.0, (m, 2))
            basis = np.random.default_rng(seed + 1).normal(0.0, 1.0, (2, d)) / np.sqrt(d)
            cols = list((0.5 + 0.12 * (z @ basis) + rng.normal(0.0, 0.01, (m, d))).T)
        path = directory / f"part-{k:04d}.parquet"
        pd.DataFrame(dict(zip(names, cols, strict=True))).to_parquet(path, index=False)
        files.append(str(path))
        done += m
        k += 1
    manifest.write_text(json.dumps(want))
    return files


# ------------------------------------------------------------------------------ one case (child)
def _peak_rss_mb() -> float:
    """This process's peak resident memory (VmHWM, MiB). Not ``ru_maxrss``: Linux carries that across
    fork and exec, so a worker would report its parent's peak."""
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024.0
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # pragma: no cover - not Linux


def _case_settings(name: str) -> tuple[str, dict]:
    if name == "pmm":
        return "pmm", {"epsilon": 1.0}
    if name == "psmm":
        return "psmm", {"epsilon": 1.0}
    if name == "low_dim":
        return "low_dim", {"epsilon": 1.0, "target_dim": 2}
    if name == "private_evolution":
        return "private_evolution", {"epsilon": 1.0, "delta": 1e-6, "n_synthetic": 2000, "iterations": 5,
                                     "track_w1": False}
    raise SystemExit(f"unknown case {name}")


def _digest(rel) -> str:
    import hashlib

    from dpsynth_core.mechanisms.base import to_jsonable

    return hashlib.sha256(json.dumps(to_jsonable(rel.public()), sort_keys=True).encode()).hexdigest()


def _domain_of(files: list[str]):
    import pyarrow.parquet as pq

    from dpsynth_core import Domain

    d = len(pq.ParquetFile(files[0]).schema_arrow.names)
    return Domain(lower=[0.0] * d, upper=[1.0] * d, names=tuple(f"x{j}" for j in range(d)))


def run_numpy(name: str, files: list[str], baseline_rows: int) -> dict:
    """Child process: the in-memory path on the first ``baseline_rows`` rows as one NumPy array."""
    import numpy as np
    import pandas as pd

    from dpsynth_core.mechanisms import run

    mech, kw = _case_settings(name)
    dom = _domain_of(files)
    parts, got = [], 0
    for f in files:
        if got >= baseline_rows:
            break
        parts.append(pd.read_parquet(f).to_numpy(dtype=float)[: baseline_rows - got])
        got += parts[-1].shape[0]
    X = np.concatenate(parts)
    del parts
    times = []
    for _ in range(2):
        t0 = time.perf_counter()
        rel = run(mech, X, dom, rng=SEED, **kw)
        times.append(time.perf_counter() - t0)
    return {"numpy_rows": int(X.shape[0]), "numpy_seconds": min(times), "numpy_seconds_runs": times,
            "numpy_peak_rss_mb": _peak_rss_mb(), "digest": _digest(rel)}


def run_dask(name: str, files: list[str], workers: int, memory_limit: str) -> dict:
    """Child process: the Dask path on a fresh LocalCluster; the data are read inside the workers."""
    import dask.dataframe as dd
    from dask.distributed import Client, LocalCluster

    from dpsynth_core.mechanisms import run

    mech, kw = _case_settings(name)
    dom = _domain_of(files)
    cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, memory_limit=memory_limit,
                           dashboard_address=None)
    client = Client(cluster)
    try:
        client.run(lambda: __import__("dpsynth_core.mechanisms").mechanisms.load_all())  # warm imports
        frame = dd.read_parquet(files)
        times = []
        for _ in range(2):
            t0 = time.perf_counter()
            rel = run(mech, frame, dom, rng=SEED, **kw)
            times.append(time.perf_counter() - t0)
        worker_peaks = client.run(_peak_rss_mb)
    finally:
        client.close()
        cluster.close()
    return {"mechanism": mech, "params": kw, "rows": _rows_of(files), "d": dom.d, "partitions": len(files),
            "workers": workers, "threads_per_worker": 1, "worker_memory_limit": memory_limit,
            "dask_seconds": min(times), "dask_seconds_runs": times,
            "peak_rss_mb": {"client": _peak_rss_mb(), "workers": dict(worker_peaks.items()),
                            "max_worker": max(worker_peaks.values())},
            "n_synthetic": int(rel.synthetic.shape[0]), "privacy": rel.privacy, "digest": _digest(rel)}


def _rows_of(files: list[str]) -> int:
    import pyarrow.parquet as pq

    return sum(pq.ParquetFile(f).metadata.num_rows for f in files)


def run_cli(files: list[str], out_dir: Path) -> dict:
    """The CLI end to end on the Parquet files (its own LocalCluster)."""
    import pandas as pd

    out_csv, report = out_dir / "synthetic.csv", out_dir / "report.json"
    for p in (out_csv, report):
        if p.exists():
            p.unlink()
    pattern = str(Path(files[0]).parent / "*.parquet")
    cmd = [sys.executable, "-m", "dpsynth_core.cli", "synth", pattern, "--engine", "dask", "--memory-limit", "1.5GB",
           "-m", "pmm", "-e", "1",
           "-b", "0:1,0:1", "-o", str(out_csv), "--report", str(report)]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=HERE.parent)
    seconds = time.perf_counter() - t0
    res = {"command": " ".join(cmd[1:]), "exit": proc.returncode, "seconds": seconds,
           "stderr_tail": proc.stderr.strip().splitlines()[-5:]}
    if proc.returncode == 0:
        rep = json.loads(report.read_text())
        res.update({"synthetic_rows": int(len(pd.read_csv(out_csv))), "report_privacy": rep.get("privacy"),
                    "report_keys": sorted(rep)})
    return res


# ------------------------------------------------------------------------------ driver
def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="10^6 rows: a smoke test of the script")
    ap.add_argument("--rows", type=float, default=None, help="rows for pmm/psmm/cli (default 1e8)")
    ap.add_argument("--data", default=os.path.join(tempfile.gettempdir(), "dpsynth-scale"),
                    help="where the Parquet files are written (reused across runs)")
    ap.add_argument("--only", default="pmm,psmm,low_dim,private_evolution,cli")
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--memory-limit", default="1.5GB")
    ap.add_argument("--case", default=None, help=argparse.SUPPRESS)  # child mode
    ap.add_argument("--files", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--baseline-rows", type=int, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)

    if args.case:  # child: one path of one case, JSON on stdout's last line
        files = json.loads(Path(args.files).read_text())
        case, path = args.case.split(":")
        out = (run_numpy(case, files, args.baseline_rows) if path == "numpy" else
               run_dask(case, files, args.workers, args.memory_limit))
        print(json.dumps(out))
        return 0

    big = int(args.rows or (1e6 if args.quick else 1e8))
    medium = min(big, int(1e6 if args.quick else 1e7))
    data = Path(args.data)
    only = args.only.split(",")
    results: dict = {"settings": {"rows": big, "medium_rows": medium, "workers": args.workers,
                                  "memory_limit": args.memory_limit, "quick": args.quick, "data": str(data)}}
    t0 = time.perf_counter()
    files2 = _write_dataset(data / f"d2_{big}", big, 2, SEED)
    results["settings"]["write_seconds_d2"] = time.perf_counter() - t0
    results["settings"]["bytes_on_disk_d2"] = sum(os.path.getsize(f) for f in files2)
    files10 = None
    if "low_dim" in only:
        files10 = _write_dataset(data / f"d10_{medium}", medium, 10, SEED)

    def child(case: str, files: list[str], baseline: int) -> dict:
        """The two paths in two fresh processes (so each peak is its own), then the figures."""
        listing = data / f"files_{case}.json"
        listing.write_text(json.dumps(files))
        print(f"-- {case}: {_rows_of(files)} rows", flush=True)
        got = {}
        for path in ("numpy", "dask"):
            cmd = [sys.executable, __file__, "--case", f"{case}:{path}", "--files", str(listing), "--baseline-rows",
                   str(baseline), "--workers", str(args.workers), "--memory-limit", args.memory_limit]
            proc = subprocess.run(cmd, capture_output=True, text=True, cwd=HERE.parent)
            if proc.returncode:
                print(proc.stderr[-3000:], file=sys.stderr)
                return {"error": f"{path}: " + (proc.stderr.strip().splitlines() or ["exit " + str(proc.returncode)])[-1]}
            got[path] = json.loads(proc.stdout.strip().splitlines()[-1])
        mem, dsk = got["numpy"], got["dask"]
        res = {**dsk, **{k: v for k, v in mem.items() if k != "digest"}}
        res.pop("digest")
        res["peak_rss_mb"]["numpy_process"] = mem["numpy_peak_rss_mb"]
        res.pop("numpy_peak_rss_mb")
        res["seconds_per_million_rows"] = {"dask": dsk["dask_seconds"] / dsk["rows"] * 1e6,
                                           "numpy": mem["numpy_seconds"] / mem["numpy_rows"] * 1e6}
        res["ratio_per_row_dask_over_numpy"] = ((dsk["dask_seconds"] / dsk["rows"])
                                                / (mem["numpy_seconds"] / mem["numpy_rows"]))
        if mem["numpy_rows"] == dsk["rows"]:
            res["identical_to_numpy"] = mem["digest"] == dsk["digest"]
        print(json.dumps({k: res[k] for k in ("dask_seconds", "numpy_seconds", "ratio_per_row_dask_over_numpy",
                                              "peak_rss_mb")}), flush=True)
        return res

    cases = {}
    for case in ("pmm", "psmm"):
        if case in only:
            cases[case] = child(case, files2, medium)
    if "private_evolution" in only:
        sub = _prefix(files2, medium)
        cases["private_evolution"] = child("private_evolution", sub, medium)
    if "low_dim" in only:
        cases["low_dim"] = child("low_dim", files10, medium)
    if "cli" in only:
        print("-- cli", flush=True)
        cases["cli"] = run_cli(files2, data)
        print(json.dumps(cases["cli"]), flush=True)
    from common import RESULTS, write

    name = "scale" if not args.quick else "scale_quick"
    previous = RESULTS / f"{name}.json"
    if previous.exists() and set(only) != {"pmm", "psmm", "low_dim", "private_evolution", "cli"}:
        # a partial run (--only) updates its cases and keeps the others, each with the date it ran
        old = json.loads(previous.read_text()).get("cases", {})
        cases = {**old, **cases}
    for case in only:
        if case in cases:
            cases[case]["date"] = time.strftime("%Y-%m-%d %H:%M:%S")
    results["cases"] = cases
    write(name, results)
    return 0


def _prefix(files: list[str], rows: int) -> list[str]:
    out, got = [], 0
    for f in files:
        if got >= rows:
            break
        out.append(f)
        got += _rows_of([f])
    return out


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
