"""End-to-end tests: the real app (`streamlit run app.py`) in a real headless Chromium (Playwright).

Every page is visited, its main control clicked, no exception element may appear, and a
screenshot is saved to $DPSYNTH_SCREENSHOTS/<page>.png: `make screenshots` sets it to assets/screens
(the README shows them); `make test` writes them to a temporary folder so that a test run leaves
the checkout unchanged. Chromium must be at /usr/bin/chromium (installed by .ci/run): if it is
missing these tests FAIL, they never skip.

The server, the browser and the waiting helpers (the ``ui`` fixture) live in ``conftest.py``: every
action waits for the run it triggers to start and finish, recorded in the page, never by sleeping.
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.e2e

EPSILON = "ε (privacy budget, log scale)"

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


def switch_relation_if_offered(ui, page, where: str) -> None:
    for switch in ("Use replace neighbours", "Use add/remove neighbours"):
        if page.get_by_role("button", name=switch).count():
            ui.click_button(page, switch)
            ui.assert_no_exception(page, f"{where} after {switch!r}")


@pytest.mark.parametrize("url,buttons", PAGES, ids=[p[0] for p in PAGES])
def test_page(server, page, ui, url, buttons):
    ui.goto(page, f"{server}/{url}")
    ui.assert_no_exception(page, url)
    switch_relation_if_offered(ui, page, url)
    for label in buttons:
        assert page.get_by_role("button", name=label).count(), f"{url}: no button {label!r}"
        ui.click_button(page, label)
        ui.assert_no_exception(page, f"{url} after clicking {label!r}")
        switch_relation_if_offered(ui, page, url)
    if url in TICK:
        ui.act(page, page.get_by_text(TICK[url]).first.click)
        ui.assert_no_exception(page, f"{url} after ticking {TICK[url]!r}")
    ui.shot(page, url)


def test_epsilon_extremes(server, page, ui):
    """ε = 0.001 and ε = 100 (the slider's ends) on the PMM page: no exception."""
    ui.goto(page, f"{server}/pmm?eps=0.001")
    ui.assert_no_exception(page, "pmm at eps=0.001")
    ui.goto(page, f"{server}/pmm?eps=100")
    ui.assert_no_exception(page, "pmm at eps=100")
    ui.set_slider(page, EPSILON, -3)  # 100 -> 10 on the 1-2-5 grid
    ui.assert_no_exception(page, "pmm after moving the slider")
    assert "eps=10" in page.url  # the shareable state follows the slider


def test_upload_good_and_bad_csv(server, page, ui):
    ui.goto(page, f"{server}/data")
    ui.act(page, page.get_by_text("Upload CSV").click)
    file_input = page.locator('[data-testid="stFileUploader"] input[type="file"]')
    ui.act(page, lambda: file_input.set_input_files(files=[
        {"name": "bad.csv", "mimeType": "text/csv", "buffer": b"\x00\x01\x02garbage,,,\n\xff\xfe"}]))
    ui.assert_no_exception(page, "bad CSV upload")
    assert page.locator('[data-testid="stAlertContentError"]').count() >= 1, "a malformed CSV must show an error"
    ui.shot(page, "data_bad_csv")
    rows = "\n".join(f"{i % 7},{(i * 3) % 11},{i % 5}" for i in range(300))
    ui.act(page, lambda: file_input.set_input_files(files=[
        {"name": "good.csv", "mimeType": "text/csv", "buffer": ("age,score,group\n" + rows + "\n").encode()}]))
    ui.assert_no_exception(page, "good CSV upload")
    ui.click_button(page, "Use this data")
    ui.assert_no_exception(page, "using the uploaded data")
    assert page.get_by_text("Using good").count() >= 1
    assert "good" in ui.visible_text(page, "sidebar")  # the sidebar shows the new data
