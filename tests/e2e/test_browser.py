"""End-to-end tests: the real app (`streamlit run app.py`) in a real headless Chromium (Playwright).

Every page is visited, its main control clicked, no exception element may appear, and a
screenshot is saved to $DPSYNTH_SCREENSHOTS/<page>.png: `make screenshots` sets it to assets/screens
(the README shows them); `make test` writes them to a temporary folder so that a test run leaves
the checkout unchanged. Chromium must be at
/usr/bin/chromium (installed by .ci/run): if it is missing these tests FAIL, they never skip.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCREENS = Path(os.environ.get("DPSYNTH_SCREENSHOTS") or Path(tempfile.gettempdir()) / "dpsynth-screens")
if not SCREENS.is_absolute():
    SCREENS = ROOT / SCREENS
CHROMIUM = Path(os.environ.get("DPSYNTH_CHROMIUM", "/usr/bin/chromium"))
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]
EXCEPTION = '[data-testid="stException"]'

pytestmark = pytest.mark.e2e


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server():
    port = _free_port()
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    cmd = [sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port), "--server.headless",
           "true", "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false",
           "--server.fileWatcherType", "none", "--server.runOnSave", "false"]
    log = tempfile.NamedTemporaryFile("w+", prefix="dpsynth_streamlit_", suffix=".log", delete=False)
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    deadline = time.time() + 60
    ok = False
    while time.time() < deadline:
        if proc.poll() is not None:
            break
        with contextlib.suppress(OSError):
            with urllib.request.urlopen(base + "/_stcore/health", timeout=2) as r:
                ok = r.read().decode().strip() == "ok"
        if ok:
            break
        time.sleep(0.3)
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


@pytest.fixture(scope="module")
def browser():
    if not CHROMIUM.exists():
        pytest.fail(f"Chromium is required for the e2e tests but was not found at {CHROMIUM}. Install it "
                    "(apt-get install chromium, as .ci/run does) or set DPSYNTH_CHROMIUM to its path.")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=str(CHROMIUM), args=ARGS, headless=True)
        yield b
        b.close()


@pytest.fixture
def page(browser):
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    pg = ctx.new_page()
    yield pg
    ctx.close()


STATE_JS = "() => { const a = document.querySelector('[data-testid=\"stApp\"]'); " \
           "return a ? a.getAttribute('data-test-script-state') : null }"


def script_state(page) -> str | None:
    return page.evaluate(STATE_JS)


def wait_idle(page, timeout: float = 120.0, *, expect_run: bool = False) -> None:
    """Wait until the script run finished (stApp's data-test-script-state is "notRunning" for ~0.75 s
    in a row). With ``expect_run``, first wait (briefly) for the run a click triggers to start."""
    page.wait_for_selector('[data-testid="stAppViewContainer"]', timeout=timeout * 1000)
    if expect_run:
        deadline = time.time() + 3.0
        while time.time() < deadline and script_state(page) != "running":
            page.wait_for_timeout(100)
    deadline = time.time() + timeout
    quiet = 0
    while time.time() < deadline:
        quiet = quiet + 1 if script_state(page) == "notRunning" else 0
        if quiet >= 3:
            break
        page.wait_for_timeout(250)
    else:
        pytest.fail(f"the app was still running after {timeout:.0f} s")
    page.wait_for_selector('[data-testid="stMain"] h1', timeout=10_000)
    page.wait_for_timeout(300)  # let plotly finish drawing


def no_exception(page, where: str) -> None:
    n = page.locator(EXCEPTION).count()
    if n:
        text = page.locator(EXCEPTION).first.inner_text()[:2000]
        pytest.fail(f"{where}: {n} exception element(s) on the page:\n{text}")


def shot(page, name: str, max_height: int = 5000) -> None:
    """Screenshot of the whole page: Streamlit scrolls inside its main container, so the viewport is
    grown to the content's height first (capped), then restored."""
    SCREENS.mkdir(parents=True, exist_ok=True)
    page.evaluate("() => { window.scrollTo(0, 0); document.querySelectorAll('[data-testid=\"stMain\"], "
                  "[data-testid=\"stAppViewContainer\"]').forEach(e => e.scrollTo(0, 0)); }")
    size = page.viewport_size
    height = page.evaluate(
        "() => Math.max(...Array.from(document.querySelectorAll('[data-testid=\"stMain\"], "
        "[data-testid=\"stAppViewContainer\"], [data-testid=\"stSidebar\"] > div'))"
        ".map(e => e.scrollHeight), document.body.scrollHeight)")
    page.set_viewport_size({"width": size["width"], "height": int(min(max(height, size["height"]), max_height))})
    page.wait_for_timeout(600)  # plotly redraws on resize
    page.screenshot(path=str(SCREENS / f"{name}.png"), full_page=True)
    page.set_viewport_size(size)


def click(page, label: str) -> None:
    btn = page.get_by_role("button", name=label).first
    btn.scroll_into_view_if_needed()
    btn.click()
    wait_idle(page, expect_run=True)


def set_epsilon(page, steps: int) -> None:
    """Move the sidebar's ε slider with the keyboard (positive = larger ε)."""
    thumb = page.locator('[data-testid="stSidebar"] input[type="range"][aria-label^="ε"]').first
    thumb.focus()
    key = "ArrowRight" if steps > 0 else "ArrowLeft"
    for _ in range(abs(steps)):
        thumb.press(key)
    wait_idle(page, expect_run=True)


# (url path, buttons to click in order); a relation switch ("Use replace neighbours") is clicked
# whenever a page offers one
PAGES = [
    ("home", ["ε = 0.01 (strong privacy)", "ε = 1"]),
    ("data", ["Generate"]),
    ("pmm", ["Draw again"]),
    ("psmm", []),
    ("random_walk", []),
    ("sparse_marginals", ["Run certificate sweep"]),
    ("private_evolution", []),
    ("low_dim", ["Use a 3-D demo: points near a plane (n = 5000)", "Run angle sweep", "Synthesise digits"]),
    ("rates", ["Run sweep"]),
    ("compare", ["Run comparison"]),
    ("audit", ["Run audit"]),
]
# checkboxes ticked after the buttons (label text)
TICK = {"private_evolution": "Track W1 to the private data"}


def switch_relation_if_offered(page, where: str) -> None:
    for switch in ("Use replace neighbours", "Use add/remove neighbours"):
        if page.get_by_role("button", name=switch).count():
            click(page, switch)
            no_exception(page, f"{where} after {switch!r}")


@pytest.mark.parametrize("url,buttons", PAGES, ids=[p[0] for p in PAGES])
def test_page(server, page, url, buttons):
    page.goto(f"{server}/{url}")
    wait_idle(page)
    no_exception(page, url)
    switch_relation_if_offered(page, url)
    for label in buttons:
        assert page.get_by_role("button", name=label).count(), f"{url}: no button {label!r}"
        click(page, label)
        no_exception(page, f"{url} after clicking {label!r}")
        switch_relation_if_offered(page, url)
    if url in TICK:
        page.get_by_text(TICK[url]).first.click()
        wait_idle(page, expect_run=True)
        no_exception(page, f"{url} after ticking {TICK[url]!r}")
    shot(page, url)


def test_epsilon_extremes(server, page):
    """ε = 0.001 and ε = 100 (the slider's ends) on the PMM page: no exception."""
    page.goto(f"{server}/pmm?eps=0.001")
    wait_idle(page)
    no_exception(page, "pmm at eps=0.001")
    page.goto(f"{server}/pmm?eps=100")
    wait_idle(page)
    no_exception(page, "pmm at eps=100")
    set_epsilon(page, -3)  # 100 -> 10 on the 1-2-5 grid
    no_exception(page, "pmm after moving the slider")
    assert "eps=10" in page.url  # the shareable state follows the slider


def test_upload_good_and_bad_csv(server, page):
    page.goto(f"{server}/data")
    wait_idle(page)
    page.get_by_text("Upload CSV").click()
    wait_idle(page, expect_run=True)
    file_input = page.locator('[data-testid="stFileUploader"] input[type="file"]')
    file_input.set_input_files(files=[{"name": "bad.csv", "mimeType": "text/csv",
                                       "buffer": b"\x00\x01\x02garbage,,,\n\xff\xfe"}])
    wait_idle(page, expect_run=True)
    no_exception(page, "bad CSV upload")
    assert page.locator('[data-testid="stAlertContentError"]').count() >= 1, "a malformed CSV must show an error"
    shot(page, "data_bad_csv")
    rows = "\n".join(f"{i % 7},{(i * 3) % 11},{i % 5}" for i in range(300))
    file_input.set_input_files(files=[{"name": "good.csv", "mimeType": "text/csv",
                                       "buffer": ("age,score,group\n" + rows + "\n").encode()}])
    wait_idle(page, expect_run=True)
    no_exception(page, "good CSV upload")
    click(page, "Use this data")
    no_exception(page, "using the uploaded data")
    assert page.get_by_text("Using good").count() >= 1
    assert "good" in page.locator('[data-testid="stSidebar"]').inner_text()  # the sidebar shows the new data
