"""Run every benchmarks/bench_*.py (each writes benchmarks/results/<name>.json).

Usage: python benchmarks/run_all.py [--quick] [name ...]
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main(argv: list[str]) -> int:
    quick = "--quick" in argv
    names = [a for a in argv if not a.startswith("--")]
    scripts = sorted(HERE.glob("bench_*.py"))
    if names:
        scripts = [s for s in scripts if any(n in s.stem for n in names)]
    failed = []
    for script in scripts:
        t0 = time.perf_counter()
        print(f"== {script.name}", flush=True)
        cmd = [sys.executable, str(script)] + (["--quick"] if quick else [])
        rc = subprocess.call(cmd, cwd=HERE.parent)
        print(f"== {script.name}: exit {rc} in {time.perf_counter() - t0:.1f} s", flush=True)
        if rc:
            failed.append(script.name)
    if failed:
        print("failed:", ", ".join(failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
