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

Every case runs in its own subprocess (a fresh cluster, so the peaks belong to that case).

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

ROWS_PER_FILE = 5_000_000
SEED = 20261125


# ------------------------------------------------------------------------------ data on disk
def _write_dataset(directory: Path, rows: int, d: int, seed: int) -> list[str]:
    """``rows`` rows of d columns in Parquet files of at most ROWS_PER_FILE rows, written file by file
    (the generator never holds more than one file). Reused when a manifest says it matches."""
    import numpy as np
    import pandas as pd

    manifest = directory / "manifest.json"
    want = {"rows": rows, "d": d, "seed": seed, "rows_per_file": ROWS_PER_FILE}
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
        m = min(ROWS_PER_FILE, rows - done)
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


def _reset_peak() -> bool:
    """Reset VmHWM to the current RSS (Linux >= 4.0: writing 5 to /proc/self/clear_refs)."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:  # pragma: no cover
        return False


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


def run_case(name: str, files: list[str], baseline_rows: int, workers: int, memory_limit: str) -> dict:
    """Child process: the in-memory baseline, then the Dask run on a fresh LocalCluster."""
    import dask.dataframe as dd
    import numpy as np
    import pandas as pd
    from dask.distributed import Client, LocalCluster

    from dpsynth_core import Domain
    from dpsynth_core.mechanisms import run

    mech, kw = _case_settings(name)
    d = len(pd.read_parquet(files[0]).columns)
    names = tuple(f"x{j}" for j in range(d))
    dom = Domain(lower=[0.0] * d, upper=[1.0] * d, names=names)

    # ---- in-memory baseline: the first baseline_rows rows as one NumPy array
    parts, got = [], 0
    for f in files:
        if got >= baseline_rows:
            break
        frame = pd.read_parquet(f)
        parts.append(frame.to_numpy(dtype=float)[: baseline_rows - got])
        got += parts[-1].shape[0]
    X = np.concatenate(parts)
    del parts
    times = []
    for _ in range(2):
        t0 = time.perf_counter()
        mem_rel = run(mech, X, dom, rng=SEED, **kw)
        times.append(time.perf_counter() - t0)
    t_mem = min(times)
    same_n_digest = _digest(mem_rel) if baseline_rows >= _rows_of(files) else None
    del X, mem_rel
    import gc

    gc.collect()
    client_peak_before = _peak_rss_mb()
    reset = _reset_peak()  # the client's peak below is that of the Dask run alone

    # ---- Dask: a fresh local cluster; the data are read from Parquet inside the workers
    cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, memory_limit=memory_limit,
                           dashboard_address=None)
    client = Client(cluster)
    try:
        client.run(lambda: __import__("dpsynth_core.mechanisms").mechanisms.load_all())  # warm imports
        frame = dd.read_parquet(files)
        dask_times = []
        for _ in range(2):
            t0 = time.perf_counter()
            rel = run(mech, frame, dom, rng=SEED, **kw)
            dask_times.append(time.perf_counter() - t0)
        worker_peaks = client.run(_peak_rss_mb)
    finally:
        client.close()
        cluster.close()
    n = _rows_of(files)
    out = {
        "mechanism": mech, "params": kw, "rows": n, "d": d, "partitions": len(files),
        "workers": workers, "threads_per_worker": 1, "worker_memory_limit": memory_limit,
        "dask_seconds": min(dask_times), "dask_seconds_runs": dask_times,
        "numpy_rows": baseline_rows, "numpy_seconds": t_mem, "numpy_seconds_runs": times,
        "seconds_per_million_rows": {"dask": min(dask_times) / n * 1e6, "numpy": t_mem / baseline_rows * 1e6},
        "ratio_per_row_dask_over_numpy": (min(dask_times) / n) / (t_mem / baseline_rows),
        "peak_rss_mb": {"client": _peak_rss_mb(), "client_peak_reset_before_dask": reset,
                        "client_during_numpy_baseline": client_peak_before,
                        "workers": dict(worker_peaks.items()), "max_worker": max(worker_peaks.values())},
        "n_synthetic": int(rel.synthetic.shape[0]),
        "privacy": rel.privacy,
    }
    if same_n_digest is not None:
        out["identical_to_numpy"] = same_n_digest == _digest(rel)
    return out


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
    cmd = [sys.executable, "-m", "dpsynth_core.cli", "synth", pattern, "--engine", "dask", "-m", "pmm", "-e", "1",
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

    if args.case:  # child: one case, JSON on stdout's last line
        files = json.loads(Path(args.files).read_text())
        print(json.dumps(run_case(args.case, files, args.baseline_rows, args.workers, args.memory_limit)))
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
        listing = data / f"files_{case}.json"
        listing.write_text(json.dumps(files))
        cmd = [sys.executable, __file__, "--case", case, "--files", str(listing), "--baseline-rows", str(baseline),
               "--workers", str(args.workers), "--memory-limit", args.memory_limit]
        print(f"-- {case}: {_rows_of(files)} rows", flush=True)
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=HERE.parent)
        if proc.returncode:
            print(proc.stderr[-3000:], file=sys.stderr)
            return {"error": proc.stderr.strip().splitlines()[-1:] or ["exit " + str(proc.returncode)]}
        res = json.loads(proc.stdout.strip().splitlines()[-1])
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
    results["cases"] = cases
    from common import write

    write("scale" if not args.quick else "scale_quick", results)
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
