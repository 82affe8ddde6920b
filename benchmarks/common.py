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
