"""The end-to-end harness: one real ``streamlit run serve.py`` server per test session, one headless
Chromium with a profile of its own, a new tab (= a fresh Streamlit session) per test, and honest waits.

Waiting without sleeps
----------------------
Every page gets an init script (:data:`INSTRUMENT_JS`) that records, with ``performance.now()``
timestamps, what the app does instead of sampling it:

* each change of ``[data-testid=stApp]``'s ``data-test-script-state`` (``initial``, ``running``,
  ``notRunning``, ``rerunRequested``, ...), from a MutationObserver;
* each script run seen on the websocket: its start (the ``new_session`` ForwardMsg) and its end
  (``script_finished`` with its status), decoded by ``streamlit_wire.py`` (shared with
  ``benchmarks/bench_browser.py``);
* the time of the last DOM mutation (for screenshots).

An action (a navigation, a click, a key press) has *settled* when, after the moment just before
the action, a run has STARTED and the last run has FINISHED with a status other than "finished
early for a rerun" (``st.rerun()``, or the switch to ``st.navigation`` on a cold server, is followed
by another run), the script state has been ``notRunning`` for a short quiet window (a rerun asked by
the browser would show up as a new state), and no element is still a loading skeleton: Streamlit
loads each element's code lazily and shows ``[data-testid=stSkeleton]`` meanwhile, so the script can
be long finished while the buttons of the page are not there yet (that was the "no button
'Generate'" flake: on a fresh browser context the widgets' code waits behind Plotly's 4.7 MB
bundle, seconds on a busy machine). The quiet window is a condition on recorded timestamps, not a
sleep; timeouts are hang guards only, far above normal times.

Helpers (via the ``ui`` fixture): :func:`goto`, :func:`click_button`, :func:`act`,
:func:`set_slider`, :func:`wait_settled`, :func:`visible_text`, :func:`assert_no_exception`,
:func:`shot`.

Chromium must be at ``/usr/bin/chromium`` (or ``$DPSYNTH_CHROMIUM``): if it is missing the tests FAIL
with a message, they never skip. Screenshots are taken only when ``$DPSYNTH_SCREENSHOTS`` names a folder
(``make screenshots`` sets it to assets/screens): a full-page picture regrows the viewport and redraws
every figure twice, and nothing in ``make test`` looks at the pictures (they went to a temporary folder).
The helpers :func:`shot` and :func:`shot_region` are then no-ops; every check of a test runs either way.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import tempfile
import time
import types
import urllib.request
from collections.abc import Callable
from pathlib import Path

import pytest
from streamlit_wire import FINISHED_EARLY_FOR_RERUN, with_forward_msgs

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # the tests read the page registry (dashboard/registry.py)
    sys.path.insert(0, str(ROOT))
#: where the screenshots go; None: no screenshots (module docstring)
SCREENS = Path(os.environ["DPSYNTH_SCREENSHOTS"]) if os.environ.get("DPSYNTH_SCREENSHOTS") else None
if SCREENS is not None and not SCREENS.is_absolute():
    SCREENS = ROOT / SCREENS
CHROMIUM = Path(os.environ.get("DPSYNTH_CHROMIUM", "/usr/bin/chromium"))
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
#: A laptop's browser window: Chromium draws it with 45% fewer pixels than a 1400 x 1000 one, which took the browser
#: tests 11% more CPU (four pages' tests: 36.5 s against 32.3 s). The screenshots for the README are taken at 1400 x
#: 1000 (``$DPSYNTH_SCREENSHOTS``, ``make screenshots``).
VIEWPORT = {"width": 1400, "height": 1000} if SCREENS is not None else {"width": 1100, "height": 700}
EXCEPTION = '[data-testid="stException"]'
HANG_S = 120.0  # hang guard for one action; normal actions take seconds
QUIET_MS = 250  # notRunning this long after the last finished run: no rerun follows

INSTRUMENT_JS = with_forward_msgs(r"""
  if (window.__e2e) return;
  const R = window.__e2e = {state: [], runs: [], domLast: 0};
  let last;
  new MutationObserver(() => {
    const t = performance.now();
    R.domLast = t;
    const app = document.querySelector('[data-testid="stApp"]');
    const s = app ? app.getAttribute('data-test-script-state') : null;
    if (s !== last) { last = s; R.state.push([t, s]); }
  }).observe(document, {subtree: true, childList: true, attributes: true, characterData: true});
  onForwardMsg((t, kind, status) => { if (kind === 'start' || kind === 'finish') R.runs.push([t, kind, status]); });
""")

SETTLED_JS = """([since, quiet]) => {
  const R = window.__e2e;
  if (!R) return false;
  const runs = R.runs.filter((r) => r[0] >= since);
  const starts = runs.filter((r) => r[1] === 'start');
  if (!starts.length) return false;
  const lastStart = starts[starts.length - 1][0];
  const fins = runs.filter((r) => r[1] === 'finish' && r[0] >= lastStart);
  if (!fins.length || fins[fins.length - 1][2] === %d) return false;
  const s = R.state[R.state.length - 1];
  if (!s || s[1] !== 'notRunning' || performance.now() - s[0] < quiet) return false;
  return !document.querySelector('[data-testid="stSkeleton"], [data-stale="true"]');
}""" % FINISHED_EARLY_FOR_RERUN

DOM_QUIET_JS = "([since, quiet]) => window.__e2e && performance.now() - Math.max(since, window.__e2e.domLast) >= quiet"


# ------------------------------------------------------------------------------------ fixtures
def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def server():
    """Base URL of ``streamlit run serve.py`` (as ``make run`` starts the dashboard) on a free port (one server
    for the whole session)."""
    port = _free_port()
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    cmd = [sys.executable, "-m", "streamlit", "run", "serve.py", "--server.port", str(port), "--server.headless",
           "true", "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false",
           "--server.fileWatcherType", "none", "--server.runOnSave", "false"]
    log = tempfile.NamedTemporaryFile("w+", prefix="dpsynth_streamlit_", suffix=".log", delete=False)
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    ok = False
    while not ok and time.monotonic() < deadline and proc.poll() is None:
        with contextlib.suppress(OSError):
            with urllib.request.urlopen(base + "/_stcore/health", timeout=2) as r:
                ok = r.read().decode().strip() == "ok"
        if not ok:
            time.sleep(0.2)  # the port is not listening yet: there is nothing to wait on
    if not ok:
        proc.kill()
        log.seek(0)
        pytest.fail(f"streamlit did not become healthy on {base} within 60 s (exit code {proc.poll()}):\n"
                    + log.read()[-3000:])
    yield base
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
    log.close()
    os.unlink(log.name)


@pytest.fixture(scope="session")
def browser(tmp_path_factory):
    """Headless Chromium with a profile of its own for the session: a browser context whose tabs share the disk
    cache, so the app's scripts are compiled once rather than on every page (a tenth of the browser's CPU
    over the suite; fresh contexts have no code cache). A missing browser is a failure with instructions,
    never a skip."""
    if not CHROMIUM.exists():
        pytest.fail(f"Chromium is required for the e2e tests but was not found at {CHROMIUM}. Install it "
                    "(apt-get install chromium, as .ci/run does) or set DPSYNTH_CHROMIUM to its path.")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        ctx = pw.chromium.launch_persistent_context(str(tmp_path_factory.mktemp("chromium-profile")),
                                                    executable_path=str(CHROMIUM), args=ARGS, headless=True,
                                                    viewport=VIEWPORT)
        ctx.add_init_script(INSTRUMENT_JS)
        yield ctx
        ctx.close()


@pytest.fixture
def page(browser):
    """A new tab, instrumented: its own websocket, so a new Streamlit session (the app keeps no state in the
    browser's storage)."""
    pg = browser.new_page()
    yield pg
    pg.close()


@pytest.fixture(scope="session")
def ui() -> types.SimpleNamespace:
    """The helpers below, for the test modules (``ui.click_button(page, "Run")``)."""
    return types.SimpleNamespace(goto=goto, act=act, click_button=click_button, set_slider=set_slider,
                                 wait_settled=wait_settled, visible_text=visible_text,
                                 assert_no_exception=assert_no_exception, shot=shot, shot_region=shot_region, hang_s=HANG_S,
                                 now=now, wait_dom_quiet=wait_dom_quiet, SCREENS=SCREENS, shots=SCREENS is not None)


# ------------------------------------------------------------------------------------- waiting
def now(page) -> float:
    """The page's clock (``performance.now()``, ms): take it just BEFORE an action."""
    return page.evaluate("() => performance.now()")


def _trail(page, since: float) -> str:
    """What the records show after ``since``, for failure messages."""
    try:
        rec = page.evaluate("() => window.__e2e")
    except Exception as exc:  # noqa: BLE001 - the page may be gone
        return f"(no records: {type(exc).__name__})"
    if not rec:
        return "(the page has no records: was it opened from the `page` fixture?)"
    states = [(round((t - since) / 1000, 2), s) for t, s in rec["state"] if t >= since]
    runs = [(round((t - since) / 1000, 2), kind, status) for t, kind, status in rec["runs"] if t >= since]
    skeletons = page.locator('[data-testid="stSkeleton"]').count()
    return f"script states {states}, runs {runs}, loading skeletons now {skeletons}"


def wait_settled(page, since: float = 0.0, timeout: float = HANG_S) -> None:
    """Wait until the run(s) caused by an action taken after ``since`` (see :func:`now`) have
    finished and the page shows their result (module docstring). ``since=0`` is the start of the
    document, i.e. a navigation."""
    try:
        page.wait_for_function(SETTLED_JS, arg=[since, QUIET_MS], timeout=timeout * 1000, polling=50)
    except Exception as exc:  # playwright's TimeoutError or a closed page
        pytest.fail(f"the app did not settle within {timeout:.0f} s after the action ({type(exc).__name__}); "
                    f"since the action: {_trail(page, since)}")


def act(page, action: Callable[[], object], timeout: float = HANG_S) -> None:
    """Do ``action`` (a click, a key press, a file upload...) and wait until the run it triggers has
    started and finished."""
    since = now(page)
    action()
    wait_settled(page, since, timeout)


def goto(page, url: str) -> None:
    """Open ``url`` and wait for its run(s) to finish."""
    page.goto(url, wait_until="commit")
    wait_settled(page, 0.0)
    page.locator('[data-testid="stMain"] h1').first.wait_for(timeout=10_000)  # every page has a title


def click_button(page, name: str, *, role: str = "button") -> None:
    """Click the first button called ``name`` (it must exist) and wait for the run it triggers. The
    options of a segmented control (the pages' "Look closer") have ``role="radio"``."""
    btn = page.get_by_role(role, name=name, exact=True).first
    with contextlib.suppress(Exception):  # an element that arrives with the next delta: wait for it, not a sleep
        btn.wait_for(timeout=15_000)
    if not btn.count():
        names = [t for t in page.get_by_role(role).all_inner_texts() if t.strip()]
        pytest.fail(f"no {role} {name!r} on {page.url}; those with a name: {names[:30]}")
    btn.scroll_into_view_if_needed()
    act(page, btn.click)


def slider_value(thumb) -> str | None:
    return thumb.evaluate("e => e.getAttribute('aria-valuetext') ?? e.getAttribute('aria-valuenow') ?? e.value")


def set_slider(page, label: str, steps: int, *, sidebar: bool = True) -> str | None:
    """Move the slider ``label`` by ``steps`` notches with the keyboard (positive = right), waiting for
    the rerun of each notch; returns the value it shows afterwards."""
    scope = page.locator('[data-testid="stSidebar"]') if sidebar else page.locator('[data-testid="stMain"]')
    thumb = scope.get_by_role("slider", name=label).first
    if not thumb.count():
        pytest.fail(f"no slider {label!r} in the {'sidebar' if sidebar else 'main area'} of {page.url}")
    key = "ArrowRight" if steps > 0 else "ArrowLeft"
    for _ in range(abs(steps)):
        before = slider_value(thumb)
        act(page, lambda: thumb.press(key))
        if slider_value(thumb) == before:
            pytest.fail(f"slider {label!r}: {key} did not move it from {before}")
    return slider_value(thumb)


# --------------------------------------------------------------------------------- inspecting
def visible_text(page, where: str = "main") -> str:
    """The text a user sees in the main area (``where="main"``), the sidebar or the whole app."""
    selector = {"main": '[data-testid="stMain"]', "sidebar": '[data-testid="stSidebar"]',
                "app": '[data-testid="stApp"]'}[where]
    return page.locator(selector).inner_text()


def assert_no_exception(page, where: str) -> None:
    """Fail if the page shows a Streamlit exception element (with its text)."""
    n = page.locator(EXCEPTION).count()
    if n:
        text = page.locator(EXCEPTION).first.inner_text()[:2000]
        pytest.fail(f"{where}: {n} exception element(s) on the page:\n{text}")


def wait_dom_quiet(page, since: float = 0.0, quiet_ms: float = 500, timeout: float = HANG_S) -> None:
    """Wait until neither ``since`` nor the last DOM change is less than ``quiet_ms`` ago (Plotly
    draws, and redraws after a resize, once the run has finished)."""
    try:
        page.wait_for_function(DOM_QUIET_JS, arg=[since, quiet_ms], timeout=timeout * 1000, polling=50)
    except Exception as exc:  # playwright's TimeoutError or a closed page
        pytest.fail(f"the page kept changing for {timeout:.0f} s ({type(exc).__name__})")


def shot(page, name: str, max_height: int = 5000) -> None:
    """Screenshot of the whole page to ``SCREENS/<name>.png``. Streamlit scrolls inside its main
    container, so the viewport is grown to the content's height first (capped), then restored; the
    picture is taken once Plotly has redrawn for the new size (the DOM is quiet). Nothing without
    ``$DPSYNTH_SCREENSHOTS`` (module docstring)."""
    if SCREENS is None:
        return
    SCREENS.mkdir(parents=True, exist_ok=True)
    page.mouse.move(2, 2)  # no tooltip of whatever the last click left the pointer on
    page.evaluate("() => { window.scrollTo(0, 0); document.querySelectorAll('[data-testid=\"stMain\"], "
                  "[data-testid=\"stAppViewContainer\"]').forEach(e => e.scrollTo(0, 0)); }")
    size = page.viewport_size
    height = page.evaluate(
        "() => Math.max(...Array.from(document.querySelectorAll('[data-testid=\"stMain\"], "
        "[data-testid=\"stAppViewContainer\"], [data-testid=\"stSidebar\"] > div'))"
        ".map(e => e.scrollHeight), document.body.scrollHeight)")
    resized = now(page)
    page.set_viewport_size({"width": size["width"], "height": int(min(max(height, size["height"]), max_height))})
    wait_dom_quiet(page, resized)
    page.screenshot(path=str(SCREENS / f"{name}.png"), full_page=True)
    page.set_viewport_size(size)





REGION_JS = """([start, end, endText, pad]) => {
  const a = document.querySelector(start);
  const b = Array.from(document.querySelectorAll(end)).find((e) => !endText || e.textContent.includes(endText));
  const main = document.querySelector('[data-testid="stMain"]');
  if (!a || !b || !main) return null;
  b.scrollIntoView({block: 'center'});
  const ra = a.getBoundingClientRect(), rb = b.getBoundingClientRect(), rm = main.getBoundingClientRect();
  const top = Math.max(ra.top - pad, 0);
  return {x: rm.left, y: top, width: rm.width, height: rb.bottom + pad - top};
}"""


def shot_region(page, start: str, end: str, name: str, *, end_text: str = "", pad: int = 16) -> bool:
    """Screenshot of the main area from the first element matching the CSS selector ``start`` down to the
    first matching ``end`` that contains ``end_text`` to ``SCREENS/<name>.png``, measured and taken at once,
    for a state that lasts
    a moment (a headline filling in: its fragment replaces its elements as it reruns, so no element is
    waited for). Returns False (nothing written) when an element is missing or no screenshots are taken
    (no ``$DPSYNTH_SCREENSHOTS``)."""
    if SCREENS is None:
        return False
    SCREENS.mkdir(parents=True, exist_ok=True)
    clip = page.evaluate(REGION_JS, [start, end, end_text, pad])
    if not clip:
        return False
    page.screenshot(path=str(SCREENS / f"{name}.png"), clip=clip)
    return True
