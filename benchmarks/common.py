"""Small helpers shared by the benchmark scripts: timing, peak memory, JSON output."""

from __future__ import annotations

import json
import os
import platform
import time
import tracemalloc
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"


def best_of(fn, repeat: int = 3):
    """Minimum wall time over ``repeat`` calls (and the last result)."""
    best, out = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def peak_memory(fn):
    """Peak traced Python/numpy allocation (bytes) during ``fn()``."""
    tracemalloc.start()
    try:
        out = fn()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak, out


def machine() -> dict:
    import numpy as np

    return {"python": platform.python_version(), "numpy": np.__version__, "cpus": os.cpu_count(),
            "platform": platform.platform(), "date": time.strftime("%Y-%m-%d %H:%M:%S")}


def write(name: str, payload: dict) -> Path:
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{name}.json"
    payload = {"machine": machine(), **payload}
    path.write_text(json.dumps(payload, indent=2, default=float))
    print(f"wrote {path}")
    return path


def load_cache(path: Path) -> dict:
    """A benchmark's JSON-lines cache: its rows by their "key" (a later row of the same key wins)."""
    rows = {}
    if path.exists():
        for line in path.read_text().splitlines():
            if line.strip():
                r = json.loads(line)
                rows[r["key"]] = r
    return rows


def put(rows: dict, row: dict, path: Path) -> None:
    """Keep ``row`` in ``rows`` and append it to the cache at ``path``."""
    rows[row["key"]] = row
    with path.open("a") as f:
        f.write(json.dumps(row) + "\n")


def run_phases(out: Path, description: str, phases: dict, argv: list[str]) -> None:
    """Run the named phases (all of ``phases`` when ``argv`` is empty) and merge their results into the JSON at
    ``out``, keeping the phases not run this time."""
    chosen = argv or list(phases)
    payload = json.loads(out.read_text()) if out.exists() else {}
    payload.update({"machine": machine(), "description": description})
    for phase, fn in phases.items():
        if phase in chosen:
            payload[phase] = fn()
    out.write_text(json.dumps(payload, indent=1, default=float))
    print("wrote", out)
