"""How long a user waits while declaring an upload on the Data page, in a real browser (headless Chromium).

The user uploads a CSV of ``--columns`` numeric columns, adds every column to *Columns to use* (the first
two are chosen for them), types the lower and the upper bound of each column (a value, then Tab), and
presses **Use this data**. After every action the page is watched as the browser tests watch it
(``tests/e2e/conftest.py``: the script runs seen on the websocket, the script state, loading skeletons):
when a run starts within ``--grace-ms`` of the action, the wait is the time until it has settled; when none
starts, the user did not wait. The sum over the declaration is what the user waited for.

``--root DIR`` measures another checkout of the project (e.g. an older commit exported with ``git archive``)
with this machine's Python environment. Nothing is asserted: a measurement (the load average at start and
end is recorded; re-run on a quiet machine for figures to quote).

Usage::

    python benchmarks/bench_upload_form.py [--root DIR] [--columns 5] [--out upload_form]

writes ``benchmarks/results/<out>.json``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "tests" / "e2e"))
from conftest import ARGS, CHROMIUM, INSTRUMENT_JS, QUIET_MS, SETTLED_JS, VIEWPORT  # noqa: E402


def _csv(columns: int, rows: int = 300) -> bytes:
    header = ",".join(f"x{j}" for j in range(columns))
    lines = [",".join(f"{((i * (j + 3)) % 97) / 97:.4f}" for j in range(columns)) for i in range(rows)]
    return (header + "\n" + "\n".join(lines) + "\n").encode()


def _server(root: Path) -> tuple[subprocess.Popen, str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cmd = [sys.executable, "-m", "streamlit", "run", "serve.py", "--server.port", str(port), "--server.headless",
           "true", "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false",
           "--server.fileWatcherType", "none"]
    proc = subprocess.Popen(cmd, cwd=root, env={**os.environ, "PYTHONUNBUFFERED": "1"},
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError):
            with urllib.request.urlopen(base + "/_stcore/health", timeout=2) as r:
                if r.read().decode().strip() == "ok":
                    return proc, base
        time.sleep(0.2)  # not listening yet: nothing to wait on
    proc.kill()
    raise RuntimeError(f"the server in {root} did not start")


def _wait(page, since: float, grace_ms: float, timeout_s: float = 120.0) -> float:
    """Seconds from ``since`` until the run the action caused has settled; 0 when no run started."""
    started = page.evaluate("""([since, grace]) => new Promise((done) => {
        const t0 = performance.now();
        const poll = () => {
          const R = window.__e2e;
          if (R && R.runs.some((r) => r[0] >= since && r[1] === 'start')) return done(true);
          if (performance.now() - t0 > grace) return done(false);
          setTimeout(poll, 20);
        };
        poll();
      })""", [since, grace_ms])
    if not started:
        return 0.0
    page.wait_for_function(SETTLED_JS, arg=[since, QUIET_MS], timeout=timeout_s * 1000, polling=50)
    rec = page.evaluate("() => window.__e2e")
    ends = [t for t, kind, _ in rec["runs"] if kind == "finish" and t >= since]
    states = [t for t, s in rec["state"] if t >= since and s == "notRunning"]
    return (max(ends + states) - since) / 1000.0


def _act(page, action, grace_ms: float) -> float:
    since = page.evaluate("() => performance.now()")
    action()
    return _wait(page, since, grace_ms)


def measure(root: Path, columns: int, grace_ms: float) -> dict:
    from playwright.sync_api import sync_playwright

    proc, base = _server(root)
    steps = []
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=ARGS, headless=True)
            ctx = browser.new_context(viewport=VIEWPORT)
            ctx.add_init_script(INSTRUMENT_JS)
            page = ctx.new_page()
            page.goto(base + "/data", wait_until="commit")
            page.wait_for_function(SETTLED_JS, arg=[0.0, QUIET_MS], timeout=120_000, polling=50)
            _act(page, page.get_by_text("Upload CSV").click, grace_ms)
            path = Path(tempfile.mkdtemp()) / "wide.csv"
            path.write_bytes(_csv(columns))
            _act(page, lambda: page.locator('input[type="file"]').set_input_files(str(path)), 5000)
            page.get_by_label("lower bound of x0", exact=True).wait_for(timeout=60_000)
            box = page.locator('[data-testid="stMultiSelect"]').filter(has_text="Columns to use").locator("input").first
            for j in range(2, columns):
                box.click()
                box.fill(f"x{j}")
                steps.append(("choose column", _act(page, lambda: box.press("Enter"), grace_ms)))
            page.get_by_label(f"lower bound of x{columns - 1}", exact=True).wait_for(timeout=60_000)
            for j in range(columns):
                for side, value in (("lower", "0"), ("upper", "1")):
                    field = page.get_by_label(f"{side} bound of x{j}", exact=True)
                    field.fill(value)
                    steps.append(("type a bound", _act(page, lambda f=field: f.press("Tab"), grace_ms)))
            use = page.get_by_role("button", name="Use this data", exact=True).first
            steps.append(("use this data", _act(page, use.click, grace_ms)))
            used = "Using wide" in page.locator('[data-testid="stMain"]').inner_text()
            browser.close()
    finally:
        proc.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=10)
    by_kind: dict[str, float] = {}
    for kind, seconds in steps:
        by_kind[kind] = by_kind.get(kind, 0.0) + seconds
    return {"root": str(root), "columns": columns, "used": used, "waited_s": sum(s for _, s in steps),
            "waited_by_action_s": by_kind, "actions": [{"action": k, "waited_s": s} for k, s in steps]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", type=Path, default=ROOT)
    ap.add_argument("--columns", type=int, default=5)
    ap.add_argument("--grace-ms", type=float, default=600.0)
    ap.add_argument("--out", default="upload_form")
    args = ap.parse_args()
    load_start = os.getloadavg()
    result = measure(args.root.resolve(), args.columns, args.grace_ms)
    result.update(load_average_start=load_start, load_average_end=os.getloadavg(), cores=os.cpu_count())
    out = HERE / "results" / f"{args.out}.json"
    out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(json.dumps({k: result[k] for k in ("columns", "used", "waited_s", "waited_by_action_s",
                                              "load_average_start", "load_average_end")}, indent=2))


if __name__ == "__main__":
    main()
