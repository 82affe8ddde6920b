"""What a user waits for in a real browser: the dashboard in headless Chromium (Playwright).

AppTest times the script alone; a browser adds the websocket, React, Plotly drawing and the
main thread's long tasks. This benchmark measures, per page (``url`` of ``dashboard.registry.PAGES``):

* **cold first visit**: a fresh ``streamlit run serve.py`` process, as ``make run`` starts it, and a
  fresh browser context navigate to ``http://host:port/<page>``. ``serve.py`` imports the libraries in
  its lifespan hook before the server listens (the time from launch to a healthy server is
  ``server_startup_s``), then computes every page's default view in the background
  (``dashboard.warm``); the visit starts when it has said so (``server_warm_s`` from launch): the
  first visit of a page to a server that has finished starting. ``--entry app.py`` measures plain
  ``streamlit run app.py``, which warms nothing: its first run imports the libraries and computes;
* **warm first visit**: a new browser context (new session), same server, after the cold visit;
* **ε notch**: with the page settled, the sidebar's ε slider ("ε (privacy budget, log scale)") is
  focused and ArrowRight / ArrowLeft are pressed alternately, K times (one notch on the log grid
  each; the first notch is a new ε, the later ones alternate between two cached values);
* **the slider's ends**: then End (ε = 100) and Home (ε = 0.001), each a new ε for the page, where the
  cost of a release is largest (a fine partition at large ε, heavy noise at small ε);
* **floor**: a hello-world app (title, a ``select_slider`` in the sidebar, a metric labelled
  like the W1 headline) measured the
  same way in the same run, so that the figures can be read as ratios to Streamlit's own cost;
* **floor + chart**: the same app with one of the dashboard's figures (real against synthetic, ``viz.scatter_compare``,
  a Vega-Lite chart of two panels of 600 drawn points), measured the same way: a chart's code is loaded and
  started once per browser tab when the first chart arrives (Plotly's about a second more than Vega-Lite's:
  benchmarks/bench_chart_engines.py), which a cold or first visit of every chart page pays. The acceptance
  gives each cold visit also as a ratio to it.

Nothing is sampled with sleeps. An init script installed in every page records, with
``performance.now()`` timestamps: every change of ``[data-testid=stApp]``'s
``data-test-script-state`` (``initial`` / ``running`` / ``notRunning`` / ``rerunRequested`` /
``stopRequested`` / ``compilationError``), the last DOM mutation, the text of the W1 headline metric
of the main area (found by its label), the key/pointer input events, the
main thread's long tasks, and each websocket message (start of a run = ``new_session``; end = ``script_finished`` and its status; size).

An action (navigation or key press) has *settled* when a run started after it has finished with a
status other than "finished early for a rerun", the script state is ``notRunning``, no element is
still a loading skeleton (``[data-testid=stSkeleton]``: Streamlit loads each element's code lazily
and shows a skeleton meanwhile; the script can be long finished while widgets are still skeletons),
and neither the state, the DOM nor the websocket changed for a quiet window (``--quiet-ms``, default
1500 ms). The websocket counts because the W1 headline's fragment polls every 0.5 s
(``dashboard.headline.POLL_SECONDS``) until the exact value is in: a poll that changes nothing on
screen still sends a run's start and ``script_finished``, so a page that polls is not idle. The window is
three poll intervals: the browser's timer starts after a poll's run has come back, so two polls can be
0.7 s or more apart, and an 800 ms window once ended between two (PSMM's page at ε = 0.001,
counted idle at 2.1 s while its headline was still a bracket). From the records:

* ``settle``: input -> the last transition to ``notRunning`` (the quiet window is not included; a
  run short enough never to show ``running`` settles when ``script_finished`` arrives);
* ``dom_settle``: input -> the last DOM mutation (Plotly draws after the run has finished: this is
  when the page stops changing on screen);
* ``skeletons_gone``: input -> the last loading skeleton was replaced by its element;
* ``ready``: the later of the two (the script is done AND every element is there);
* ``headline``: input -> the W1 headline metric shows its final text (None when the text
  did not change or the page has no W1 metric); ``headline_first``: input -> its first new text (the W1
  headline shows a certified bracket first and fills in the exact value later);
* ``acceptance``: issue 37's page-speed criteria per page (median notch until idle ≤ 1 s, until the W1
  headline is final ≤ 2.5 s, the worse end of the slider ≤ 5 s, cold visit ≤ 3 s, Home's notch ≤ 1.5×
  PMM's), with the same figures as ratios to the floor of the run; an end of the slider and a cold visit
  count until the later of settle and the final W1 headline;
* per action also the number of runs, runs cut short for a rerun, the time to the first run start,
  the script time seen by the browser, long-task time, and what came over the websocket (bytes by
  element type, decoded with Streamlit's protobufs);
* ``server``: the server is started with a hook that logs when the script produced each message, so
  the script time on the server (``server_script_s``), its slowest steps (the pause before an
  element, under the last heading) and how late ``script_finished`` reached the page
  (``finish_delivery_lag_s``) are known too (``--no-server-trace`` runs plain ``streamlit run``).

The navigation of a visit starts at ``performance.now() == 0`` (the document's time origin); a notch
starts at its ``keydown`` event. Pages that show an exception element or do not settle within
``--timeout`` seconds are recorded as errors; the run goes on. Nothing is asserted: this is a
measurement (run it on a quiet machine; the load average at start and end is recorded).

Usage::

    python benchmarks/bench_browser.py [--pages pmm,psmm] [--dataset clinic] [--notches 6] [--quiet-ms 1500] [--quick]

``--dataset NAME`` opens every page on a dataset a URL can name (``?dataset=NAME``: a bundled real or
mixed table such as ``clinic``, or a generator with its defaults) instead of the default data.

writes ``benchmarks/results/browser.json`` (``--out NAME``: ``NAME.json``). Chromium: ``--chromium`` / ``$DPSYNTH_CHROMIUM``
(default ``/usr/bin/chromium``).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
import urllib.parse
import urllib.request
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "tests" / "e2e"))  # streamlit_wire: the websocket decoding the browser tests use

from common import write  # noqa: E402
from streamlit_wire import FINISHED_EARLY_FOR_RERUN, HEADLINE_VALUE_JS, with_forward_msgs  # noqa: E402

from dashboard.registry import PAGES  # noqa: E402  (plain Python: no Streamlit import)

QUICK_PAGES = ["home", "pmm"]
# The default page (st.Page(default=True)) is served at "/": a fresh session asking for "/home" gets
# Streamlit's "Page not found" dialog and the main page, so Home is measured at "/".
URL_OF = {"home": ""}
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
VIEWPORT = {"width": 1400, "height": 1000}
EPS_LABEL = "ε (privacy budget, log scale)"
EXCEPTION = '[data-testid="stException"]'

# Installed before any page script runs (page.add_init_script). Records into window.__dps.
INSTRUMENT_JS = with_forward_msgs(HEADLINE_VALUE_JS + r"""
  if (window.__dps) return;
  const R = window.__dps = {state: [], ws: [], inputs: [], headline: [], longtasks: [], skeletons: [],
                            domLast: 0, domMutations: 0, domBatches: 0};
  const now = () => performance.now();
  let lastState, lastHeadline, lastSkeletons = 0;
  new MutationObserver((muts) => {
    const t = now();
    R.domLast = t; R.domMutations += muts.length; R.domBatches += 1;
    const app = document.querySelector('[data-testid="stApp"]');
    const s = app ? app.getAttribute('data-test-script-state') : null;
    if (s !== lastState) { lastState = s; R.state.push([t, s]); }
    const h = headlineValue();
    const text = h ? h.textContent : null;
    if (text !== lastHeadline) { lastHeadline = text; R.headline.push([t, text]); }
    const n = document.querySelectorAll('[data-testid="stSkeleton"]').length;
    if (n !== lastSkeletons) { lastSkeletons = n; R.skeletons.push([t, n]); }
  }).observe(document, {subtree: true, childList: true, attributes: true, characterData: true});
  for (const type of ['keydown', 'pointerdown']) {
    document.addEventListener(type, (e) => R.inputs.push([e.timeStamp, type, e.key || null]), true);
  }
  try {
    new PerformanceObserver((list) => list.getEntries().forEach(
      (e) => R.longtasks.push([e.startTime, e.duration]))).observe({type: 'longtask', buffered: true});
  } catch (e) { /* no long-task timing in this browser */ }
  onForwardMsg((t, kind, status, bytes) => R.ws.push([t, kind, status, bytes]));
""")

# True once the action that started at `since` has settled (see the module docstring).
#: The quiet window that settles a page whose W1 headline still shows a bracket (its job's polls may be seconds
#: apart while the solver holds the cores); a page that stays so longer is recorded with its bracket.
PENDING_QUIET_MS = 8000

SETTLED_JS = """([since, quiet, domCapMs]) => {
  const R = window.__dps;
  if (!R) return false;
  const t = performance.now();
  const ws = R.ws.filter((m) => m[0] >= since);
  const starts = ws.filter((m) => m[1] === 'start');
  if (!starts.length) return false;
  const lastStart = starts[starts.length - 1][0];
  const fins = ws.filter((m) => m[1] === 'finish' && m[0] >= lastStart);
  if (!fins.length || fins[fins.length - 1][2] === %d) return false;
  const s = R.state[R.state.length - 1];
  if (!s || s[1] !== 'notRunning' || t - s[0] < quiet) return false;
  if (document.querySelector('[data-testid="stSkeleton"], [data-stale="true"]')) return false;
  if (t - ws[ws.length - 1][0] < quiet) return false;  // a fragment poll is activity too
  // a W1 headline that is still a bracket (or "computing") has a job behind it whose fragment polls: on two busy
  // cores its polls can be more than the quiet window apart, so the page is settled only after a longer quiet
  const h = R.headline.length ? R.headline[R.headline.length - 1][1] : null;
  const pending = h !== null && (h.startsWith('[') || h.startsWith('≈') || h.startsWith('computing'));
  if (pending && (t - s[0] < %d || t - ws[ws.length - 1][0] < %d)) return false;
  return t - R.domLast >= quiet || t - s[0] >= domCapMs;
}""" % (FINISHED_EARLY_FOR_RERUN, PENDING_QUIET_MS, PENDING_QUIET_MS)

HELLO_APP = textwrap.dedent('''\
    """Floor for the browser benchmark: the least a Streamlit page with the same controls costs."""
    import streamlit as st

    st.title("Hello")
    grid = [0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0]
    eps = st.sidebar.select_slider("ε (privacy budget, log scale)", options=grid, value=1.0,
                                   format_func=lambda v: f"{v:g}")
    st.metric("f(ε) (W1)", f"{1.0 / (1.0 + eps):.4g}")
''')


#: The same page with the dashboard's real-against-synthetic figure (``viz.scatter_compare``, a Vega-Lite chart of two
#: panels of 600 drawn points each, as on every mechanism page): what Streamlit plus a chart cost before any page of
#: ours computes anything. A chart's code is loaded and started once per browser tab, when the first chart arrives.
CHART_APP = HELLO_APP + textwrap.dedent('''\
    import numpy as np

    from dpsynth_core import viz

    rng = np.random.default_rng(0)
    X, Y = rng.random((5000, 2)), rng.random((5000, 2))
    st.vega_lite_chart(viz.scatter_compare(X, Y, ("x0", "x1"), lower=np.zeros(2), upper=np.ones(2)), width="stretch")
''')
#: How it is served: as ``serve.py`` serves the dashboard, with the libraries imported before the server listens.
CHART_SERVE = textwrap.dedent('''\
    import sys
    from contextlib import asynccontextmanager

    import streamlit as st

    sys.path.insert(0, {root!r})


    @asynccontextmanager
    async def _warm(_app):
        import dpsynth_core.viz  # noqa: F401  (NumPy, Plotly)
        yield


    app = st.App({page!r}, lifespan=_warm)
''')


class PageError(Exception):
    """The page showed an exception element, timed out, or its controls misbehaved."""


# ------------------------------------------------------------------------------------ server
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# `streamlit run` with a hook that appends one JSON line per ForwardMsg the app session enqueues (the
# moment the script produced it): [epoch ms, kind, detail]. Epoch ms compare with the browser's
# performance.timeOrigin + performance.now() on the same machine. Cost: one short write per message.
TRACED_STREAMLIT = r"""
import json, sys, time
from streamlit.runtime.app_session import AppSession

trace = open(sys.argv.pop(1), "a", buffering=1)
enqueue = AppSession._enqueue_forward_msg


def traced(self, msg):
    kind, detail = msg.WhichOneof("type"), None
    if kind == "delta":
        d = msg.delta.WhichOneof("type")
        kind = "new_element:" + msg.delta.new_element.WhichOneof("type") if d == "new_element" else d
        if kind == "new_element:heading":
            detail = msg.delta.new_element.heading.body[:60]
    elif kind == "script_finished":
        detail = msg.script_finished
    trace.write(json.dumps([time.time() * 1000, kind, detail]) + "\n")
    return enqueue(self, msg)


AppSession._enqueue_forward_msg = traced
from streamlit.web.cli import main

sys.argv = ["streamlit", *sys.argv[1:]]
main()
"""


class Server:
    """``streamlit run <script>`` on a free port, healthy on ``/_stcore/health`` (context manager).
    With ``trace``, the server records when the script produced each message (:meth:`trace_between`)."""

    def __init__(self, script: Path, cwd: Path, *, trace: bool = True, startup_timeout: float = 60.0):
        self.script, self.cwd, self.trace, self.startup_timeout = script, cwd, trace, startup_timeout
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> Server:
        args = ["run", str(self.script), "--server.headless", "true", "--server.port", str(self.port),
                "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false",
                "--server.fileWatcherType", "none", "--server.runOnSave", "false"]
        self.log = tempfile.NamedTemporaryFile("w+", prefix="bench_browser_", suffix=".log", delete=False)
        self.trace_file = tempfile.NamedTemporaryFile("w+", prefix="bench_browser_", suffix=".jsonl",
                                                      delete=False)
        cmd = ([sys.executable, "-c", TRACED_STREAMLIT, self.trace_file.name, *args] if self.trace
               else [sys.executable, "-m", "streamlit", *args])
        self.proc = subprocess.Popen(cmd, cwd=self.cwd, env={**os.environ, "PYTHONUNBUFFERED": "1"},
                                     stdout=self.log, stderr=subprocess.STDOUT)
        t0 = time.perf_counter()
        while time.perf_counter() - t0 < self.startup_timeout and self.proc.poll() is None:
            with contextlib.suppress(OSError):
                with urllib.request.urlopen(self.base + "/_stcore/health", timeout=2) as r:
                    if r.read().decode().strip() == "ok":
                        self.startup_s = time.perf_counter() - t0
                        self.warm_s = self._wait_warm(t0)
                        return self
            time.sleep(0.1)  # polling a port that is not listening yet: nothing to wait on
        self.__exit__(None, None, None)
        raise RuntimeError(f"streamlit did not become healthy on {self.base}:\n{self.log_tail()}")

    def _wait_warm(self, t0: float) -> float | None:
        """``serve.py`` computes the default views in the background once it listens (dashboard.warm): wait for its
        line, so that a cold visit is a first visit to a server that has finished starting. Seconds from the
        start of the process; None for a server that does not warm (``app.py``, the floors)."""
        if self.script.name != "serve.py":
            return None
        from dashboard.warm import READY

        while time.perf_counter() - t0 < self.startup_timeout + 120 and self.proc.poll() is None:
            if READY in self.log_tail(20_000):
                return time.perf_counter() - t0
            time.sleep(0.1)  # a line in a file: nothing to wait on
        raise RuntimeError(f"the server did not finish its warm-up:\n{self.log_tail()}")

    def log_tail(self, n: int = 3000) -> str:
        self.log.flush()
        return Path(self.log.name).read_text(errors="replace")[-n:]

    def trace_between(self, t0: float, t1: float) -> list:
        """Trace lines [epoch ms, kind, detail] with t0 <= time <= t1 (empty without a trace)."""
        if not self.trace:
            return []
        import json

        lines = Path(self.trace_file.name).read_text(encoding="utf-8").splitlines()
        rows = [json.loads(line) for line in lines if line.strip()]
        return [r for r in rows if t0 <= r[0] <= t1]

    def __exit__(self, *exc) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for f in (self.log, self.trace_file):
            f.close()
            os.unlink(f.name)


def server_side(trace: list, origin_epoch: float, top: int = 6) -> dict:
    """What the server trace says about one action: script runs (first message to script_finished),
    and the longest pauses between two messages of a run (the script was computing the element that
    came next; labelled with the last heading before it)."""
    runs, gaps = [], []
    start = prev = None
    heading = ""
    for t, kind, detail in trace:
        if kind == "new_session":
            start = prev = t
            heading = ""
            continue
        if kind == "new_element:heading":
            heading = detail or ""
        if prev is not None:
            gaps.append((t - prev, kind, heading))
        prev = t
        if kind == "script_finished" and start is not None:
            runs.append({"start_s": round((start - origin_epoch) / 1000, 3), "script_s": round((t - start) / 1000, 3),
                         "status": detail})
            start = prev = None
    gaps.sort(reverse=True)
    return {"runs": runs, "script_s": sum(r["script_s"] for r in runs),
            "slowest_steps": [{"gap_s": round(g / 1000, 3), "then": k, "under": h} for g, k, h in gaps[:top]]}


# ------------------------------------------------------------------------------------ browser
@dataclass
class WsTap:
    """Websocket frames received by one page (Python side), decoded on demand."""

    frames: list = field(default_factory=list)

    def attach(self, page) -> None:
        page.on("websocket", lambda ws: ws.on("framereceived", self._received))

    def _received(self, payload) -> None:
        self.frames.append(payload)

    def take(self) -> dict:
        """Summary of the frames received since the last call: bytes and counts by message/element type
        (``ref_hash``: a message the browser already had, sent as a reference)."""
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

        frames, self.frames = self.frames, []
        count: Counter = Counter()
        size: Counter = Counter()
        for payload in frames:
            if not isinstance(payload, bytes | bytearray):
                continue
            msg = ForwardMsg()
            msg.ParseFromString(bytes(payload))
            kind = msg.WhichOneof("type") or ("ref_hash" if msg.ref_hash else "unknown")
            if kind == "delta":
                d = msg.delta.WhichOneof("type")
                kind = f"{d}:{msg.delta.new_element.WhichOneof('type')}" if d == "new_element" else d
            count[kind] += 1
            size[kind] += len(payload)
        order = sorted(size, key=size.get, reverse=True)
        return {"messages": sum(count.values()), "bytes": sum(size.values()),
                "by_type": {k: {"n": count[k], "bytes": size[k]} for k in order}}


def records(page) -> dict:
    """The page's records, with ``timeOrigin`` (epoch ms of performance.now() == 0)."""
    return page.evaluate("() => ({...window.__dps, timeOrigin: performance.timeOrigin})")


def wait_settled(page, since: float, *, quiet_ms: float, timeout_s: float, dom_cap_ms: float = 30_000) -> None:
    """Wait (in the browser, no sleeps) until the action started at ``since`` has settled."""
    try:
        page.wait_for_function(SETTLED_JS, arg=[since, quiet_ms, dom_cap_ms], timeout=timeout_s * 1000,
                               polling=50)
    except Exception as exc:  # playwright's TimeoutError, or the page went away
        raise PageError(f"not settled within {timeout_s:.0f} s ({type(exc).__name__}); "
                        f"since then: {_trail(page, since)}") from exc


def _trail(page, since: float) -> str:
    """What the records show after ``since`` (for an error message)."""
    try:
        rec = records(page)
    except Exception as exc:  # noqa: BLE001 - the page may be gone
        return f"(no records: {type(exc).__name__})"
    states = [(round((t - since) / 1000, 2), s) for t, s in rec["state"] if t >= since]
    runs = [(round((m[0] - since) / 1000, 2), m[1], m[2]) for m in rec["ws"]
            if m[0] >= since and m[1] in ("start", "finish")]
    inputs = [(round((t - since) / 1000, 2), kind, key) for t, kind, key in rec["inputs"] if t >= since]
    skel = rec["skeletons"][-1][1] if rec["skeletons"] else 0
    return (f"inputs {inputs}, states {states}, runs {runs}, loading skeletons {skel}, "
            f"last DOM change {(rec['domLast'] - since) / 1000:.2f} s")


def summarise(rec: dict, origin: float, *, headline_before: str | None) -> dict:
    """Figures of one action from the records (times in seconds from ``origin``, in ms)."""
    def sec(t: float | None) -> float | None:
        return None if t is None else (t - origin) / 1000

    states = [(t, s) for t, s in rec["state"] if t >= origin]
    ws = [m for m in rec["ws"] if m[0] >= origin]
    starts = [m[0] for m in ws if m[1] == "start"]
    fins = [(m[0], m[2]) for m in ws if m[1] == "finish"]
    # a short run can start and finish within one React commit: then the attribute never leaves
    # notRunning and the arrival of script_finished is when the page settled
    idle = [t for t, s in states if s == "notRunning"] or [t for t, _ in fins[-1:]]
    skel = [(t, n) for t, n in rec["skeletons"] if t >= origin]
    skeletons_gone = skel[-1][0] if skel and skel[-1][1] == 0 else None
    heads = [(t, x) for t, x in rec["headline"] if t >= origin]
    final = heads[-1][1] if heads else headline_before
    headline = None
    if final is not None and final != headline_before:
        headline = next(t for t, x in heads if x == final)
    tasks = [d for t, d in rec["longtasks"] if t + d >= origin]
    return {
        "settle_s": sec(idle[-1] if idle else None),
        "ready_s": sec(max(x for x in (idle[-1] if idle else None, skeletons_gone, origin) if x is not None)),
        "dom_settle_s": sec(rec["domLast"]),
        # the end of the last run of any kind, the headline fragment's polls included
        "last_run_end_s": sec(fins[-1][0] if fins else None),
        "headline_s": sec(headline),
        # the first new text of the headline (e.g. W1's certified bracket, before the exact value fills in)
        "headline_first_s": sec(next((t for t, x in heads if x is not None and x != headline_before), None)),
        "headline_texts": [[round(sec(t), 3), x] for t, x in heads],
        "skeletons_gone_s": sec(skeletons_gone),
        "skeletons_max": max((n for _, n in skel), default=0),
        "first_run_start_s": sec(starts[0] if starts else None),
        "browser_script_s": sum(f - s for s, (f, _) in zip(starts, fins, strict=False)) / 1000,
        "runs": len(starts),
        "runs_cut_for_rerun": sum(1 for _, status in fins if status == FINISHED_EARLY_FOR_RERUN),
        "state_transitions": [[round(sec(t), 3), s] for t, s in states],
        "long_tasks_s": sum(tasks) / 1000,
        "longest_task_s": max(tasks, default=0.0) / 1000,
        "ws_messages": len(ws),
        "ws_bytes": sum(m[3] for m in ws),
        "headline": final,
    }


def check_page(page) -> None:
    n = page.locator(EXCEPTION).count()
    if n:
        text = page.locator(EXCEPTION).first.inner_text()[:1500]
        raise PageError(f"{n} exception element(s): {text}")


def page_facts(page) -> dict:
    """What is on the settled page (elements that cost the browser)."""
    return page.evaluate("""() => ({
      plotly_charts: document.querySelectorAll('[data-testid="stPlotlyChart"]').length,
      vega_lite_charts: document.querySelectorAll('[data-testid="stVegaLiteChart"]').length,
      svg_paths: document.querySelectorAll('[data-testid="stPlotlyChart"] path').length,
      dom_nodes: document.getElementsByTagName('*').length,
      elements: document.querySelectorAll('[data-testid="stElementContainer"]').length,
      error_alerts: document.querySelectorAll('[data-testid="stAlertContentError"]').length,
      dom_mutations_total: window.__dps.domMutations,
    })""")


def with_server_side(row: dict, rec: dict, origin: float, server: Server) -> dict:
    """Add the server's view of the action (``server``) and how late its end reached the page:
    ``finish_delivery_lag_s`` = browser receives ``script_finished`` - server enqueued it (transport
    plus a main thread busy with earlier messages)."""
    t0 = rec["timeOrigin"] + origin
    side = server_side(server.trace_between(t0, time.time() * 1000), t0)
    row["server"] = side
    row["server_script_s"] = side["script_s"] if side["runs"] else None
    fins = [m[0] for m in rec["ws"] if m[0] >= origin and m[1] == "finish"]
    if fins and side["runs"]:
        last = side["runs"][-1]
        server_end = t0 + (last["start_s"] + last["script_s"]) * 1000
        row["finish_delivery_lag_s"] = (rec["timeOrigin"] + fins[-1] - server_end) / 1000
    return row


def visit(context, server: Server, url: str, *, quiet_ms: float, timeout_s: float) -> dict:
    """Open ``url`` in a new page of ``context``; figures from the document's time origin."""
    page = context.new_page()
    tap = WsTap()
    tap.attach(page)
    page.goto(url, wait_until="commit", timeout=timeout_s * 1000)
    wait_settled(page, 0.0, quiet_ms=quiet_ms, timeout_s=timeout_s)
    check_page(page)
    rec = records(page)
    row = with_server_side(summarise(rec, 0.0, headline_before=None), rec, 0.0, server)
    row["ws"] = tap.take()
    row["page"] = page_facts(page)
    row["dialogs"] = close_dialogs(page)
    return {"page": page, "tap": tap, "row": row}


def close_dialogs(page) -> list[str]:
    """Texts of open modal dialogs (e.g. Streamlit's "Page not found"), then close them: a modal holds
    the keyboard focus, so the ε notches would go nowhere."""
    texts = [d.inner_text()[:300] for d in page.get_by_role("dialog").all() if d.is_visible()]
    for _ in texts:
        page.keyboard.press("Escape")
    return texts


def eps_thumb(page):
    """The sidebar's ε slider (its focusable thumb), whatever widget library draws it."""
    sidebar = page.locator('[data-testid="stSidebar"]')
    by_name = sidebar.get_by_role("slider", name=EPS_LABEL)
    if by_name.count():
        return by_name.first
    first = sidebar.locator('[data-testid="stSlider"]').first
    return first.locator('input[type="range"], [role="slider"]').first


def slider_value(thumb) -> str | None:
    return thumb.evaluate("e => e.getAttribute('aria-valuetext') ?? e.getAttribute('aria-valuenow') ?? e.value")


def press(page, tap: WsTap, server: Server, key: str, *, quiet_ms: float, timeout_s: float) -> dict:
    """Press ``key`` on the ε slider and wait until the page has settled; the settled record of the press."""
    thumb = eps_thumb(page)
    if not thumb.count():
        raise PageError("no ε slider in the sidebar")
    before = slider_value(thumb)
    rec = records(page)
    head_before = rec["headline"][-1][1] if rec["headline"] else None
    since = page.evaluate("() => performance.now()")
    tap.take()
    thumb.press(key)
    wait_settled(page, since, quiet_ms=quiet_ms, timeout_s=timeout_s)
    check_page(page)
    rec = records(page)
    keydown = [t for t, kind, name in rec["inputs"] if t >= since and kind == "keydown" and name == key]
    origin = keydown[0] if keydown else since
    row = with_server_side(summarise(rec, origin, headline_before=head_before), rec, origin, server)
    after = slider_value(eps_thumb(page))
    if after == before:
        raise PageError(f"{key} did not change ε (still {before})")
    row.update({"key": key, "eps_before": before, "eps_after": after, "ws": tap.take()})
    return row


def notches(page, tap: WsTap, server: Server, k: int, *, quiet_ms: float, timeout_s: float) -> list[dict]:
    """Press ArrowRight / ArrowLeft alternately on the ε slider; one settled record per press."""
    return [press(page, tap, server, "ArrowRight" if i % 2 == 0 else "ArrowLeft", quiet_ms=quiet_ms,
                  timeout_s=timeout_s) for i in range(k)]


def extremes(page, tap: WsTap, server: Server, *, quiet_ms: float, timeout_s: float) -> list[dict]:
    """The slider's ends: End (the largest ε, 100) then Home (the smallest, 0.001), each a new ε for the
    page; one settled record per press."""
    return [press(page, tap, server, key, quiet_ms=quiet_ms, timeout_s=timeout_s) for key in ("End", "Home")]


def _stats(rows: list[dict], name: str) -> dict:
    vals = [r[name] for r in rows if r.get(name) is not None]
    if not vals:
        return {"median": None, "min": None, "max": None}
    return {"median": statistics.median(vals), "min": min(vals), "max": max(vals)}


def measure_app(browser, script: Path, path: str, *, k: int, quiet_ms: float, timeout_s: float,
                trace: bool = True, query: str = "", extreme: bool = True) -> dict:
    """Cold visit (fresh server), warm first visit (new context), then K ε notches on one page."""
    row: dict = {"url_path": path, "query": query, "errors": [], "load_average_before": os.getloadavg()}
    with Server(script, ROOT, trace=trace) as server:
        row["server_startup_s"], row["server_warm_s"] = server.startup_s, server.warm_s
        url = f"{server.base}/{path}{query}"
        try:
            for phase in ("cold", "warm"):
                ctx = browser.new_context(viewport=VIEWPORT)
                ctx.add_init_script(INSTRUMENT_JS)
                try:
                    v = visit(ctx, server, url, quiet_ms=quiet_ms, timeout_s=timeout_s)
                    row[phase] = v["row"]
                    if phase == "warm":
                        row["notches"] = notches(v["page"], v["tap"], server, k, quiet_ms=quiet_ms,
                                                 timeout_s=timeout_s)
                        if extreme:
                            row["extremes"] = extremes(v["page"], v["tap"], server, quiet_ms=quiet_ms,
                                                       timeout_s=timeout_s)
                finally:
                    ctx.close()
        except PageError as exc:
            row["errors"].append(str(exc))
            row["server_log_tail"] = server.log_tail(1500)
    ns = row.get("notches", [])
    settle = _stats(ns, "settle_s")
    cold, warm = row.get("cold", {}), row.get("warm", {})
    row.update({
        "cold_settle_s": cold.get("settle_s"), "cold_headline_s": cold.get("headline_s"),
        "cold_ready_s": cold.get("ready_s"),
        "cold_dom_settle_s": cold.get("dom_settle_s"),
        "warm_first_visit_s": warm.get("settle_s"), "warm_first_visit_ready_s": warm.get("ready_s"),
        "warm_first_visit_dom_s": warm.get("dom_settle_s"),
        "notch_settle_median_s": settle["median"], "notch_settle_min_s": settle["min"],
        "notch_settle_max_s": settle["max"],
        "notch_headline_median_s": _stats(ns, "headline_s")["median"],
        "first_notch_headline_first_s": ns[0].get("headline_first_s") if ns else None,
        "first_notch_headline_s": ns[0].get("headline_s") if ns else None,
        "notch_dom_settle_median_s": _stats(ns, "dom_settle_s")["median"],
        "notch_browser_script_median_s": _stats(ns, "browser_script_s")["median"],
        "notch_server_script_median_s": _stats(ns, "server_script_s")["median"],
        "notch_delivery_lag_median_s": _stats(ns, "finish_delivery_lag_s")["median"],
        "notch_long_tasks_median_s": _stats(ns, "long_tasks_s")["median"],
        "notch_ws_bytes_median": _stats(ns, "ws_bytes")["median"],
        "first_notch_settle_s": ns[0]["settle_s"] if ns else None,
        "runs_per_notch": [n["runs"] for n in ns],
        **extreme_figures(row.get("extremes", [])),
    })
    return row


def extreme_figures(xs: list[dict]) -> dict:
    """Per end of the slider (``End``: ε = 100, ``Home``: ε = 0.001) its settle and final-headline times,
    and the worst of both ends (the later of settle and headline, the page's answer at that ε)."""
    out: dict = {}
    for x in xs:
        end = {"End": "eps_max", "Home": "eps_min"}[x["key"]]
        out[f"{end}_settle_s"], out[f"{end}_headline_s"] = x["settle_s"], x.get("headline_s")
    done = [max(v for v in (x["settle_s"], x.get("headline_s")) if v is not None) for x in xs
            if x["settle_s"] is not None]
    out["extreme_worst_s"] = max(done, default=None)
    return out


def acceptance(floor: dict, rows: list[dict], floor_chart: dict | None = None) -> dict:
    """Issue 37's page-speed criteria, per page and overall, from this run's figures (seconds, and the
    same figures as ratios to the hello-world floor of this run, for a shared machine; a cold visit also as
    a ratio to the floor with one of the dashboard's charts, :data:`CHART_APP`)."""
    f_notch, f_cold = floor.get("notch_settle_median_s"), floor.get("cold_settle_s")
    f_chart = None if floor_chart is None else _answered(floor_chart)
    by = {r["name"]: r for r in rows}
    pmm = by.get("pmm", {}).get("notch_settle_median_s")
    pages = {}
    for r in rows:
        notch, head = r.get("notch_settle_median_s"), r.get("notch_headline_median_s")
        # a cold visit is answered when its script is done AND its W1 headline is final (as at the slider's ends:
        # the exact value can come after the first run, with one more run of the page)
        worst = r.get("extreme_worst_s")
        cold = _answered(r)
        checks = {"notch_idle_le_1s": notch is not None and notch <= 1.0,
                  "notch_w1_final_le_2_5s": head is None or head <= 2.5,
                  "extreme_le_5s": worst is None or worst <= 5.0,
                  "cold_le_3s": cold is not None and cold <= 3.0}
        if r["name"] == "home" and pmm:
            checks["home_le_1_5x_pmm"] = notch is not None and notch <= 1.5 * pmm
        pages[r["name"]] = {
            "figures_s": {"notch": notch, "w1_final": head, "extreme_worst": worst, "cold": cold},
            "ratio_to_floor": {"notch": _ratio(notch, f_notch), "extreme_worst": _ratio(worst, f_notch),
                               "cold": _ratio(cold, f_cold), "cold_to_chart_floor": _ratio(cold, f_chart)},
            "checks": checks, "holds": all(checks.values()) and not r.get("errors")}
    return {"pages": pages, "all_hold": all(p["holds"] for p in pages.values())}


def _answered(r: dict) -> float | None:
    """When a cold visit was answered: its script done and its W1 headline final (when it has one)."""
    xs = [r.get(k) for k in ("cold_settle_s", "cold_headline_s")]
    return max((x for x in xs if x is not None), default=None)


def _ratio(x: float | None, floor: float | None) -> float | None:
    return None if x is None or not floor else x / floor


def mechanism_relation(mechanism: str | None) -> str:
    """``?rel=replace`` for a mechanism that supports only replace neighbours (otherwise its page
    only offers a switch and runs nothing), read from the registry when it can be imported."""
    if mechanism is None:
        return ""
    try:
        from dpsynth_core.mechanisms import load_all

        spec = load_all().get(mechanism)
    except Exception:  # noqa: BLE001 - the registry is optional for this benchmark
        return ""
    if spec is not None and "add_remove" not in spec.neighbours:
        return f"?rel={spec.neighbours[0]}"
    return ""


def with_dataset(query: str, dataset: str | None) -> str:
    """``query`` (``""`` or ``?a=b``) with ``dataset=NAME`` added when a dataset is named."""
    if not dataset:
        return query
    return f"{query}{'&' if query else '?'}dataset={urllib.parse.quote(dataset)}"


# ------------------------------------------------------------------------------------- report
def fmt(x) -> str:
    return "—" if x is None else f"{x:6.2f}"


TABLE = [("cold", "cold_settle_s"), ("c.rdy", "cold_ready_s"), ("c.dom", "cold_dom_settle_s"),
         ("warm", "warm_first_visit_s"), ("w.rdy", "warm_first_visit_ready_s"), ("w.dom", "warm_first_visit_dom_s"),
         ("notch", "notch_settle_median_s"), ("min", "notch_settle_min_s"), ("max", "notch_settle_max_s"),
         ("n.head", "notch_headline_median_s"), ("n.dom", "notch_dom_settle_median_s"),
         ("n.srv", "notch_server_script_median_s"), ("n.long", "notch_long_tasks_median_s"),
         ("ε=100", "eps_max_settle_s"), ("h100", "eps_max_headline_s"), ("ε=.001", "eps_min_settle_s"),
         ("h.001", "eps_min_headline_s")]


def print_table(floor: dict, rows: list[dict]) -> None:
    head = f"{'page':17}" + "".join(f" {h:>6}" for h, _ in TABLE) + "  runs  errors"
    print(head)
    print("-" * len(head))
    for r in [floor, *rows]:
        runs = r.get("runs_per_notch") or []
        print(f"{r['name']:17}" + "".join(f" {fmt(r.get(k))}" for _, k in TABLE)
              + f"  {max(runs, default=0):>4}  {'; '.join(e[:60] for e in r.get('errors', []))}")
    print("seconds. cold/warm = first visit on a fresh/warm server, settle (script done), rdy (no loading "
          "skeleton left), dom (DOM stopped changing); notch = ε notch settle, median (min, max); n.head = "
          "to the final W1 headline; n.dom = until the DOM stopped changing; n.srv = script time on the "
          "server; n.long = main-thread long tasks; runs = most runs per notch; ε=100 / ε=.001 = the slider's End / "
          "Home key, settle; h100 / h.001 = to the final W1 headline there")


def rounded(obj, digits: int = 4):
    """``obj`` with every float rounded (milliseconds are the resolution of these records)."""
    if isinstance(obj, float):
        return round(obj, digits)
    if isinstance(obj, dict):
        return {k: rounded(v, digits) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [rounded(v, digits) for v in obj]
    return obj


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pages", default=None, help="comma-separated url paths (default: every page of dashboard.registry.PAGES)")
    ap.add_argument("--dataset", default=None,
                    help="open the pages on this dataset (a name a URL can carry, e.g. clinic; default: the default data)")
    ap.add_argument("--notches", type=int, default=6, help="ε notches per page (K)")
    ap.add_argument("--quiet-ms", type=float, default=1500.0, help="quiet window that ends a settle")
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds before a page is recorded as timed out")
    ap.add_argument("--quick", action="store_true", help="home and pmm only, 3 notches")
    ap.add_argument("--chromium", default=os.environ.get("DPSYNTH_CHROMIUM", "/usr/bin/chromium"))
    ap.add_argument("--no-write", action="store_true", help="print only, do not write browser.json")
    ap.add_argument("--out", default="browser",
                    help="results file name under benchmarks/results/ (default browser, i.e. browser.json)")
    ap.add_argument("--no-server-trace", action="store_true", help="plain `streamlit run`, no message log")
    ap.add_argument("--entry", default="serve.py", choices=("serve.py", "app.py"),
                    help="the script `streamlit run` starts (serve.py is what `make run` uses)")
    ap.add_argument("--note", default="", help="free text stored in the JSON (e.g. what else ran meanwhile)")
    args = ap.parse_args(argv)
    mechanisms = {p.url: p.mechanism for p in PAGES}
    if args.quick:
        pages = QUICK_PAGES
    elif args.pages:
        pages = [p.strip() for p in args.pages.split(",") if p.strip()]
    else:
        pages = list(mechanisms)
    k = 3 if args.quick else args.notches
    if not Path(args.chromium).exists():
        sys.exit(f"Chromium not found at {args.chromium} (set --chromium or DPSYNTH_CHROMIUM)")

    from playwright.sync_api import sync_playwright

    load_start = os.getloadavg()
    t_start = time.perf_counter()
    opts = {"k": k, "quiet_ms": args.quiet_ms, "timeout_s": args.timeout, "trace": not args.no_server_trace}
    rows = []
    with sync_playwright() as pw, tempfile.TemporaryDirectory(prefix="bench_browser_floor_") as tmp:
        browser = pw.chromium.launch(executable_path=args.chromium, args=CHROMIUM_ARGS, headless=True)
        hello = Path(tmp) / "hello.py"
        hello.write_text(HELLO_APP)
        floor = {"name": "floor (hello)", **measure_app(browser, hello, "", **opts)}
        print(f"floor: cold {fmt(floor['cold_settle_s'])} s, notch {fmt(floor['notch_settle_median_s'])} s",
              flush=True)
        (Path(tmp) / "chart.py").write_text(CHART_APP)
        chart = Path(tmp) / "chart_serve.py"
        chart.write_text(CHART_SERVE.format(root=str(ROOT), page=str(Path(tmp) / "chart.py")))
        floor_chart = {"name": "floor + chart", **measure_app(browser, chart, "", **opts)}
        print(f"floor + chart: cold {fmt(floor_chart['cold_settle_s'])} s (ready "
              f"{fmt(floor_chart['cold_ready_s'])} s), warm {fmt(floor_chart['warm_first_visit_s'])} s", flush=True)
        queries = {path: with_dataset(mechanism_relation(mechanisms.get(path)), args.dataset) for path in pages}
        for path in pages:
            row = {"name": path, **measure_app(browser, ROOT / args.entry, URL_OF.get(path, path),
                                                 query=queries[path], **opts)}
            rows.append(row)
            print(f"{path}: cold {fmt(row['cold_settle_s'])} s, warm {fmt(row['warm_first_visit_s'])} s, notch "
                  f"{fmt(row['notch_settle_median_s'])} s, load {os.getloadavg()[0]:.2f}"
                  + (f"  ERROR {row['errors']}" if row["errors"] else ""), flush=True)
        version = browser.version
        browser.close()
    load_end = os.getloadavg()
    print_table(floor, [floor_chart, *rows])
    print(f"load average: start {load_start}, end {load_end}")
    payload = {
        "note": args.note,
        "parameters": {"pages": pages, "notches": k, "quiet_ms": args.quiet_ms, "timeout_s": args.timeout,
                       "quick": args.quick, "viewport": VIEWPORT, "chromium_args": CHROMIUM_ARGS,
                       "server_trace": not args.no_server_trace, "entry": args.entry, "dataset": args.dataset},
        "chromium": version,
        "load_average_start": load_start,
        "load_average_end": load_end,
        "wall_s": time.perf_counter() - t_start,
        "floor": floor,
        "floor_chart": floor_chart,
        "acceptance": acceptance(floor, rows, floor_chart),
        "pages": {r["name"]: r for r in rows},
    }
    payload = rounded(payload)
    if not args.no_write:
        write(args.out, payload)
    return payload


if __name__ == "__main__":
    main()
