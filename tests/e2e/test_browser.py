"""End-to-end tests: the real app (`streamlit run app.py`) in a real headless Chromium (Playwright).

Every page is visited and every one of its "Look closer" views opened, its buttons clicked, and no
exception element may appear; with $DPSYNTH_SCREENSHOTS set (`make screenshots` sets it to
assets/screens, which the README shows) a screenshot of each is saved there as <page>.png; `make test`
takes none (conftest.py). Chromium must be at /usr/bin/chromium (`make test` installs it): if it is
missing these tests FAIL, they never skip.

The server, the browser and the waiting helpers (the ``ui`` fixture) live in ``conftest.py``: every
action waits for the run it triggers to start and finish, recorded in the page, never by sleeping.
"""

from __future__ import annotations

import contextlib
import re

import pytest
from streamlit_wire import HEADLINE_VALUE_JS

from dashboard.registry import PAGES as REGISTRY

pytestmark = pytest.mark.e2e

EPSILON = "ε (privacy budget, log scale)"
#: Any chart: a first view's Vega-Lite figure or a detail view's Plotly one.
CHARTS = '[data-testid="stPlotlyChart"], [data-testid="stVegaLiteChart"]'

# url -> steps. A step is ("click", button label), ("view", a "Look closer" choice) or ("slider", label of a
# slider in the main area, notches to move it), done in order; every view of every page is opened once.
STEPS = {
    "home": [("click", "ε = 0.01 (strong privacy)"), ("click", "ε = 1")],
    "data": [("click", "Generate")],
    "pmm": [("view", "Partition tree"), ("view", "Cells of one level"), ("view", "Counts of one level"),
            ("view", "Noise per level"), ("view", "Several releases"), ("click", "Draw again")],
    "psmm": [("view", "The signed measure"), ("view", "True, noisy, projected"), ("view", "Projection against clipping")],
    "random_walk": [("view", "Running sums of the noise"), ("view", "Distributions on the line")],
    "sparse_marginals": [("view", "The tables"), ("view", "Certificate sweep"), ("click", "Run the certificate sweep"),
                         ("view", "The certificate")],
    "marginals": [("view", "The 1-way tables"), ("view", "Against PMM's tree"), ("view", "The 2-way tables and the fit")],
    "private_evolution": [("view", "One iteration"), ("view", "Iterations")],
    "low_dim": [("click", "Use a 3-D demo: points near a plane (n = 5000)"), ("view", "Against PMM on the full cube"),
                ("view", "Spectrum"), ("view", "Angle against ε"), ("click", "Run the angle sweep"),
                ("view", "Synthetic digits"), ("view", "Does it help a classifier?"),
                ("click", "Run the digits experiment"), ("view", "The two planes")],
    # a sweep up to 2,000 rows: what the browser must show is the sweep's result; the default sweep up to 20,000
    # rows (about ten seconds of W1) is run by tests/app/test_app.py::test_rates_three_decades_exact_or_within_one_percent
    "rates": [("slider", "n from 20 to", -1), ("click", "Run sweep")],
    "compare": [("click", "Run the comparison")],
    "audit": [("click", "Run the audit")],
}
# (url path, steps) for every page of the registry; the home page (the navigation's default) lives at "/"
PAGES = [("" if p.url == "home" else p.url, STEPS.get(p.url, [])) for p in REGISTRY]
# what a student must never see: internal names from the papers and the code
INTERNAL = ["seed 00", "params[", "U_T", "L_T", "step3", "exact_total", "theorem_4_1", "Traceback"]


def test_steps_are_for_registered_pages():
    assert set(STEPS) <= {p.url for p in REGISTRY}, set(STEPS) - {p.url for p in REGISTRY}
    assert set(ON_ARRIVAL) <= {p[0] or "home" for p in PAGES}, set(ON_ARRIVAL)


def assert_plain(ui, page, where: str) -> None:
    text = ui.visible_text(page, "app")
    found = [s for s in INTERNAL if s in text]
    assert not found, f"{where}: internal labels on screen: {found}"


def next_link_target(page, expected: str | None = None) -> str | None:
    """The url path the page's "Next: ..." link points to (None on the last page). When a link is
    expected it is waited for (up to 10 s): on a cold server the first page runs more than once, and a
    settle may end between two runs, before the link at the bottom of the page is drawn."""
    nxt = page.get_by_role("link", name=re.compile(r"^Next: "))
    if expected is not None:
        with contextlib.suppress(Exception):
            nxt.first.wait_for(timeout=10_000)
    if not nxt.count():
        return None
    href = nxt.first.get_attribute("href") or ""
    return href.split("?")[0].rstrip("/").rsplit("/", 1)[-1] if href.strip("/") else ""


@pytest.mark.parametrize("i", range(len(PAGES)), ids=[p[0] or "home" for p in PAGES])
def test_page(server, page, ui, i):
    """Open the page, check its lesson-path link, then every view and button in turn."""
    url, steps = PAGES[i]
    name = url or "home"
    ui.goto(page, f"{server}/{url}")
    ui.assert_no_exception(page, name)
    assert_plain(ui, page, name)
    if name in ON_ARRIVAL:  # what a page must show as it opens, checked in the same visit
        ON_ARRIVAL[name](page, ui)
    # the lesson path: "Next" leads through PAGES in order and the Glossary is the last lesson
    expected_next = PAGES[i + 1][0] if i + 1 < len(PAGES) else None
    assert next_link_target(page, expected_next) == expected_next, f"{name}: 'Next' should lead to {expected_next!r}"
    for kind, label, *notches in steps:
        if kind == "slider":
            ui.set_slider(page, label, *notches, sidebar=False)
        else:
            ui.click_button(page, label, role="radio" if kind == "view" else "button")
        ui.assert_no_exception(page, f"{name} after {kind} {label!r}")
        assert_plain(ui, page, f"{name} after {kind} {label!r}")
    if name != "home":  # Home's picture is its first screen: home_first_screen_shows_rows_and_the_attack
        ui.shot(page, name)


def test_following_next_and_extreme_epsilon(server, page, ui):
    """In one session: follow "Next" from Home to the first mechanism page (the link really
    navigates), then take ε to the slider's ends by the shareable URL (0.001 and 100) and move the
    slider, down to its smallest ε in the same session; the page keeps its figures and the URL follows the
    slider. The other mechanism pages
    are run at both ends in the AppTest suite (tests/app), which is cheaper than a browser."""
    ui.goto(page, f"{server}/")
    for _ in range(2):  # home -> data -> pmm
        nxt = page.get_by_role("link", name=re.compile(r"^Next: "))
        nxt.first.scroll_into_view_if_needed()
        ui.act(page, nxt.first.click)
        ui.assert_no_exception(page, page.url)
    assert page.url.split("?")[0].rstrip("/").endswith("/pmm"), page.url
    for eps in ("0.001", "100"):
        ui.goto(page, f"{server}/pmm?eps={eps}")
        ui.assert_no_exception(page, f"pmm at eps={eps}")
        assert_plain(ui, page, f"pmm at eps={eps}")
        assert page.locator(CHARTS).count() >= 1, f"pmm at eps={eps}: no figure"
    ui.set_slider(page, EPSILON, -1)  # 100 -> 50 on the 1-2-5 grid
    ui.assert_no_exception(page, "pmm after moving the slider")
    # the shareable state follows the slider: the URL changes with the run's result, which a loaded machine can
    # deliver after the run is seen to end; waited for (bounded), then asserted
    with contextlib.suppress(Exception):
        page.wait_for_function("() => location.search.includes('eps=50')", timeout=15_000)
    assert "eps=50" in page.url, page.url
    # in the same session to the slider's other end: the tree has 3 levels there, fewer than the level its
    # picture remembers from ε = 50 (a remembered value above a slider's new maximum raised an exception)
    thumb = page.locator('[data-testid="stSidebar"]').get_by_role("slider", name=EPSILON).first
    ui.act(page, lambda: thumb.press("Home"))
    ui.assert_no_exception(page, "pmm after the slider's Home key (ε = 0.001)")
    assert "eps=0.001" in page.url, page.url


def _upload(ui, page, name: str, data: bytes) -> None:
    # the CSV uploader comes first (the upload form's domain-file uploader follows once a file is read)
    file_input = page.locator('[data-testid="stFileUploader"] input[type="file"]').first
    ui.act(page, lambda: file_input.set_input_files(files=[{"name": name, "mimeType": "text/csv", "buffer": data}]))


def _type_number(ui, page, label: str, value: str) -> None:
    """Type into a box of the upload's form: nothing runs until the form's button is pressed."""
    box = page.get_by_label(label, exact=True)
    assert box.count(), f"no number input {label!r}"
    box.fill(value)
    box.press("Tab")


def test_upload_good_and_bad_csv(server, page, ui):
    ui.goto(page, f"{server}/data")
    ui.act(page, page.get_by_text("Upload CSV").click)

    # garbage: an error in words, no traceback
    _upload(ui, page, "bad.csv", b"\x00\x01\x02garbage,,,\n\xff\xfe")
    ui.assert_no_exception(page, "bad CSV upload")
    assert page.locator('[data-testid="stAlertContentError"]').count() >= 1, "a malformed CSV must show an error"
    ui.shot(page, "data_bad_csv")

    # a missing value: the file is refused with the count, and a box offers to drop those rows
    _upload(ui, page, "holes.csv", b"age,score\n1,2\n,3\n4,5\n")
    # the upload's runs may finish before the uploader has handed over the new file: wait for the
    # offer itself (an element, not a sleep; it fails after 30 s)
    offer = page.locator('[data-testid="stCheckbox"]').filter(has_text="Drop the rows with missing values")
    offer.wait_for(timeout=30_000)
    ui.assert_no_exception(page, "CSV with a missing value")
    assert "missing" in ui.visible_text(page), "a missing value must be reported"
    assert offer.count() == 1

    # a good file: the bounds must be typed (never read off the data) before it can be used
    rows = "\n".join(f"{i % 7},{(i * 3) % 11},{i % 5}" for i in range(300))
    _upload(ui, page, "good.csv", ("age,score,group\n" + rows + "\n").encode())
    # as for the missing value: wait for what this file shows (its bounds' inputs), not for the runs alone
    page.get_by_label("lower bound of age", exact=True).wait_for(timeout=30_000)
    ui.assert_no_exception(page, "good CSV upload")
    ui.click_button(page, "Use this data")
    ui.assert_no_exception(page, "using the data without bounds")
    text = ui.visible_text(page)
    assert "bound" in text and "age" in text, "missing bounds must be named"
    assert "Using good" not in text
    for label, value in [("lower bound of age", "0"), ("upper bound of age", "120"),
                         ("lower bound of score", "0"), ("upper bound of score", "10")]:
        _type_number(ui, page, label, value)
    ui.click_button(page, "Use this data")
    ui.assert_no_exception(page, "using the uploaded data")
    assert "Using good" in ui.visible_text(page)
    assert "good" in ui.visible_text(page, "sidebar")  # the sidebar shows the new data
    ui.shot(page, "data_upload")


def _mixed_csv(n: int = 400) -> bytes:
    """A small patients' table with two text columns (deterministic)."""
    regions = ("north", "east", "south", "west")
    rows = [f"{20 + (i * 37) % 65},{'F' if i % 2 else 'M'},{18 + (i * 13) % 17}.5,{regions[(i * 7) % 4]}"
            for i in range(n)]
    return ("age,sex,bmi,region\n" + "\n".join(rows) + "\n").encode()


def _choose_column(ui, page, label: str, option: str) -> None:
    box = page.locator('[data-testid="stMultiSelect"]').filter(has_text=label).locator("input").first
    box.click()
    box.fill(option)
    ui.act(page, lambda: box.press("Enter"))


def _open_expander(page, label: str) -> None:
    """Open an expander (the browser opens it; no script run follows)."""
    summary = page.locator('[data-testid="stExpander"] summary').filter(has_text=label).first
    summary.scroll_into_view_if_needed()
    summary.click()


def _type_text(ui, page, label: str, value: str) -> None:
    """Type into a text area of the upload's form: nothing runs until the form's button is pressed."""
    area = page.get_by_label(label, exact=True)
    assert area.count(), f"no text area {label!r}"
    area.fill(value)


def test_mixed_upload_declare_categories_release_with_pmm_and_download(server, page, ui, tmp_path):
    """Issue 26's path in a real browser: upload a CSV with text columns, declare their categories,
    release it with PMM, look at the counts per category, open the report of what the release
    preserves, download the private release."""
    ui.goto(page, f"{server}/data")
    ui.act(page, page.get_by_text("Upload CSV").click)
    _upload(ui, page, "patients.csv", _mixed_csv())
    page.get_by_text("Columns holding text").first.wait_for(timeout=30_000)
    for column in ("sex", "region"):
        _choose_column(ui, page, "Columns to use", column)
    for label, value in [("lower bound of age", "0"), ("upper bound of age", "120"),
                         ("lower bound of bmi", "10"), ("upper bound of bmi", "60")]:
        _type_number(ui, page, label, value)
    _type_text(ui, page, "categories of sex", "F|M")
    _type_text(ui, page, "categories of region", "north\neast\nsouth\nwest")
    ui.click_button(page, "Use this data")
    ui.assert_no_exception(page, "using the mixed upload")
    text = ui.visible_text(page)
    assert "Using patients" in text and "2 numeric, 2 categorical" in text, text[:2000]
    ui.shot(page, "data_mixed_upload")

    # within the session (a new URL would start a new session): the navigation's link
    link = page.locator('[data-testid="stSidebarNav"]').get_by_role("link", name="Partition tree (PMM)")
    ui.act(page, link.first.click)
    ui.assert_no_exception(page, "pmm on the mixed upload")
    assert_plain(ui, page, "pmm on the mixed upload")
    text = ui.visible_text(page)
    assert "patients" in ui.visible_text(page, "sidebar") and "Level 1 splits sex" in text, text[:3000]
    assert "Shares of the rows in every declared category" in text  # the counts per category are drawn
    _open_expander(page, "What the release preserves")  # the owner report
    page.get_by_role("tab", name="What W1 guarantees").first.wait_for(timeout=30_000)
    assert "1-way error, mean" in ui.visible_text(page)
    page.get_by_role("tab", name="Within categories").first.click()  # tabs switch in the browser
    page.get_by_text("Within each category of").first.wait_for(timeout=30_000)
    ui.assert_no_exception(page, "pmm: what the release preserves")
    ui.shot(page, "pmm_mixed")

    _open_expander(page, "Download a private release")
    ui.click_button(page, "Make a private release to download")
    ui.assert_no_exception(page, "making the fresh release")
    button = page.get_by_role("button", name="Synthetic data (CSV)").first
    button.wait_for(timeout=30_000)
    with page.expect_download(timeout=60_000) as info:
        button.click()
    path = tmp_path / "synthetic.csv"
    info.value.save_as(path)
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines[0] == "age,sex,bmi,region" and len(lines) > 100
    cells = [line.split(",") for line in lines[1:]]
    assert {c[1] for c in cells} <= {"F", "M"} and {c[3] for c in cells} <= {"north", "east", "south", "west"}


def test_clinic_table_on_the_data_page_and_auto_leads_to_the_marginal_tables(server, page, ui):
    """The bundled mixed table on the Data page: its declared domain before loading, then the Data page's pictures
    and the sentence on what `auto` picks, which names the marginal tables and why; its link opens their page, where
    the release, its tables and the comparison with PMM are drawn on the mixed table."""
    ui.goto(page, f"{server}/data")
    ui.act(page, page.locator('[data-testid="stRadio"]').get_by_text("Clinic (mixed)").first.click)
    assert "sex ∈ {F, M}" in ui.visible_text(page)
    ui.click_button(page, "Load")
    ui.assert_no_exception(page, "loading the clinic table")
    text = ui.visible_text(page)
    assert "Using clinic" in text and "3 numeric, 3 categorical" in text
    ui.shot(page, "data_mixed")
    assert "Without choosing a mechanism" in text and "this table gets Marginal tables:" in text, text[-2000:]
    link = page.get_by_role("link", name=re.compile(r"^Open Marginal tables")).first
    link.scroll_into_view_if_needed()
    ui.act(page, link.click)
    assert page.url.split("?")[0].rstrip("/").endswith("/marginals"), page.url
    ui.assert_no_exception(page, "marginals on the clinic table")
    assert_plain(ui, page, "marginals on the clinic table")
    ui.click_button(page, "Against PMM's tree", role="radio")
    ui.assert_no_exception(page, "marginals: against PMM's tree")
    text = ui.visible_text(page)
    assert "The correlation of age and bmi" in text and "in the release of the marginal tables" in text, text[-2000:]
    assert page.locator(CHARTS).count() >= 2  # the release's scatter (Vega-Lite) and the bars (Plotly)
    ui.click_button(page, "The 2-way tables and the fit", role="radio")
    ui.assert_no_exception(page, "marginals: the 2-way tables")
    ui.shot(page, "marginals_mixed")


HEADLINE_JS = """(bracket) => {""" + HEADLINE_VALUE_JS + """
  const m = headlineValue();
  const t = m ? m.textContent.trim() : '';
  const approx = t.startsWith('[') || t.startsWith('≈');  // a bracket: shown as [a, b] or, when narrow, ≈ v
  // the bracket state is checked in one evaluation with its sentence (the exact value may replace both
  // at any moment: reading them in two steps would race the fragment)
  const caps = Array.from(document.querySelectorAll('[data-testid="stMain"] [data-testid="stCaptionContainer"]'));
  const pending = caps.some(c => c.textContent.includes('certified to lie in') && c.textContent.includes('being computed'));
  // the exact state likewise with its sentence: the metric and the caption are two elements, drawn one after the other
  const exact = caps.some(c => /^W1 = [0-9.e-]+, exact/.test(c.textContent.trim()));
  return bracket ? (approx && pending) : (t !== '' && t !== '—' && !approx && exact);
}"""
#: The headline's first state: "bracket" (a certified bracket, the exact value pending) or "exact" (already
#: filled in: on a fresh browser context the metric's code can load after the fragment has swapped the
#: bracket for the exact value), null while neither is on screen.
HEADLINE_STATE_JS = """() => {""" + HEADLINE_VALUE_JS + """
  const m = headlineValue();
  const t = m ? m.textContent.trim() : '';
  const approx = t.startsWith('[') || t.startsWith('≈');
  const caps = Array.from(document.querySelectorAll('[data-testid="stMain"] [data-testid="stCaptionContainer"]'));
  const pending = caps.some(c => c.textContent.includes('certified to lie in') && c.textContent.includes('being computed'));
  const exact = caps.some(c => /^W1 = [0-9.e-]+, exact/.test(c.textContent.trim()));
  if (approx && pending) return 'bracket';
  // beyond the interactive budget's sparse sizes: the certified interval, the exact value on request
  if (approx && caps.some(c => c.textContent.includes('certified to lie in') && c.textContent.includes('when you ask'))) return 'ask';
  return (t !== '' && t !== '—' && !approx && exact) ? 'exact' : null;
}"""


def test_pmm_headline_shows_a_certified_bracket_then_fills_in_the_exact_value(server, page, ui):
    """Where the exact W1 takes longer than the page waits for it (dashboard.w1_live.WAIT_SECONDS), the
    headline first shows a certified bracket and says the exact value is being computed; the exact value
    then fills in by itself (the headline's fragment), with no action; beyond the interactive budget's sparse
    sizes, after the user asks for it (its button). PMM at ε = 0.001 on the default data (n = 5000 against a noisy
    number of synthetic points: about 5,800 at one seed, the exact value about a second after the page's wait on
    two quiet cores) with another teaching seed: a release no other test of this server computed, so its W1
    is not known yet. (At ε = 1 the exact value now comes within the wait, and the page shows it at once.)
    Every seed tried must show the exact value; the next seed is tried until one has shown the bracket first
    (and, under ``make screenshots``, its picture was taken). The bracket is photographed for the README
    (``pmm_headline.png``) when the picture can be taken before the exact value arrives; if it arrives during
    the picture at every seed the committed picture stays (it shows the same state of the same page). The
    bracket must be seen at one seed at least: at the first one, on a fresh browser context, the metric's code
    can load only after the exact value has replaced the bracket (seen once in a fresh-clone run), which is not
    a fault."""
    shot = False
    seen = []
    for seed in (7, 8, 9, 10):
        page.goto(f"{server}/pmm?seed={seed}&eps=0.001", wait_until="commit")
        state = page.wait_for_function(HEADLINE_STATE_JS, timeout=ui.hang_s * 1000, polling="raf").json_value()
        caption = page.locator('[data-testid="stCaptionContainer"]', has_text="certified to lie in")
        if state in ("bracket", "ask"):
            seen.append(seed)
        if state == "bracket" and not shot:
            taken = ui.shot_region(page, '[data-testid="stMain"] [data-testid="stHorizontalBlock"]:has([data-testid="stMetric"])',
                                   '[data-testid="stMain"] [data-testid="stCaptionContainer"]', "pmm_headline",
                                   end_text="certified to lie in")
            shot = taken and page.evaluate(HEADLINE_JS, True)
        # a seed whose noisy size takes the release beyond the interactive budget's sparse sizes (12,000 points in
        # all) stops at the budget's interval and offers the exact value on a button: pressed, it fills in the same way
        page.wait_for_function(EXACT_OR_ASK_JS, timeout=ui.hang_s * 1000, polling=100)
        ask = page.get_by_role("button", name=ASK_EXACT)
        if ask.count():
            ui.act(page, ask.first.click)
            page.wait_for_function(HEADLINE_JS, arg=False, timeout=ui.hang_s * 1000, polling=100)
        ui.wait_settled(page, 0.0)
        ui.assert_no_exception(page, "pmm after the exact W1 filled in")
        exact = page.locator('[data-testid="stCaptionContainer"]', has_text=re.compile(r"^W1 = [0-9.e-]+, exact"))
        assert exact.count() == 1, ui.visible_text(page)[:1500]
        assert not caption.count()
        if shot or (seen and not ui.shots):
            break
    assert seen, "the certified bracket never showed before the exact value at seeds 7-10"


ASK_EXACT = "Compute the exact W1"
#: The headline is exact, or the page offers the exact value on its button.
EXACT_OR_ASK_JS = ("() => { const exact = " + HEADLINE_JS + "; return exact(false) || Array.from("
                   "document.querySelectorAll('button')).some((b) => b.innerText.includes('" + ASK_EXACT + "')); }")

FIRST_SCREEN_END = "means in practice."
#: The first screen's region, from the page's top to the paragraph on what ε means (the README's first picture).
FIRST_SCREEN_JS = """(endText) => {
  const main = document.querySelector('[data-testid="stMain"]');
  const end = Array.from(main.querySelectorAll('[data-testid="stMarkdownContainer"]'))
    .find((e) => e.textContent.includes(endText));
  if (!end) return null;
  const rm = main.getBoundingClientRect(), re = end.getBoundingClientRect();
  return {x: rm.left, y: Math.max(rm.top, 0), width: rm.width, height: re.bottom + 24 - Math.max(rm.top, 0)};
}"""


def home_first_screen_shows_rows_and_the_attack(page, ui):
    """Home opens on the clinic table beside a release of it (two tables, labelled), what is protected and kept,
    the membership question with its chart (both tables' bars, the real table's answers) and what ε means: all
    before the mathematics. The first screen is photographed for the README (``home.png``). Checked by
    :func:`test_page` on Home as it opens (one visit of Home for both)."""
    main = page.locator('[data-testid="stMain"]')
    assert main.locator('[data-testid="stTable"]').count() >= 2
    text = ui.visible_text(page)
    for words in ("A clinic's table, and a private copy of it", "The real table", "The synthetic table: a real release",
                  "What is protected:", "What is kept:", "the average age is off by",
                  "The attack it stops: is this patient in the table?", "Is this patient in the table: age",
                  "The table answers 1; without this patient it would answer 0.", "releases from each table answer",
                  "What ε = 1 means in practice.", "be right at most 73% of the time"):
        assert words in text, words
    chart = main.locator('[data-testid="stVegaLiteChart"]').first  # the membership question's
    chart.scroll_into_view_if_needed()
    for label in ("releases from the table with the patient", "releases from the table without the patient",
                  "the table with the patient: 1", "the table without the patient: 0"):
        chart.get_by_text(label).first.wait_for(timeout=15_000)
    assert text.index(FIRST_SCREEN_END) < text.index("For the class: the mathematics")
    page.evaluate("""() => document.querySelectorAll('[data-testid="stMain"], [data-testid="stAppViewContainer"]')
                      .forEach(e => e.scrollTo(0, 0))""")
    size = page.viewport_size
    grown = ui.now(page)
    page.set_viewport_size({"width": size["width"], "height": 2600})
    ui.wait_dom_quiet(page, grown)
    clip = page.evaluate(FIRST_SCREEN_JS, FIRST_SCREEN_END)
    assert clip and clip["height"] > 600, clip
    if ui.shots:  # make screenshots (conftest.py)
        ui.SCREENS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(ui.SCREENS / "home.png"), clip=clip)
    page.set_viewport_size(size)


LESSON_BOX = '[data-testid="stExpander"]:has(summary:has-text("Lesson: try this")) details'


def _lesson_open(page) -> bool:
    box = page.locator(LESSON_BOX).first
    box.wait_for(timeout=15_000)
    return box.evaluate("e => e.open")


def test_the_lesson_box_stays_open_while_the_student_acts(server, page, ui):
    """On PMM the box closed at the first ε change; on PSMM it started closed (the page's second run). Now it
    is open on arrival, after an ε change and after the headline's exact W1 (one more run); and a box the
    teacher closed stays closed while the page reruns."""
    ui.goto(page, f"{server}/pmm")
    assert _lesson_open(page), "pmm: the lesson box is closed on arrival"
    ui.set_slider(page, EPSILON, -1)  # 1 -> 0.5: a new release, a new W1 job
    page.wait_for_function(HEADLINE_JS, arg=False, timeout=ui.hang_s * 1000, polling=100)  # the exact W1 is in
    ui.wait_settled(page, 0.0)
    assert _lesson_open(page), "pmm: the lesson box closed after an ε change"
    ui.goto(page, f"{server}/psmm")
    page.wait_for_function(HEADLINE_JS, arg=False, timeout=ui.hang_s * 1000, polling=100)
    ui.wait_settled(page, 0.0)
    assert _lesson_open(page), "psmm: the lesson box is closed after the page's runs"
    box = page.locator(LESSON_BOX).first
    box.locator("summary").first.click()
    page.wait_for_function("d => !d.open", arg=box.element_handle(), timeout=10_000)  # it folds: not at once
    ui.set_slider(page, EPSILON, 1)
    assert not _lesson_open(page), "psmm: the box the teacher closed opened again at an ε change"


def doc_links_open_the_document_in_a_new_tab(page, ui):
    """A document a page names is a link: on the Glossary, "docs/deviations.md" opens the Documentation page on
    that document in a new tab (a new session), and the page it was clicked on stays as it was. Checked by
    :func:`test_page` on the Glossary as it opens."""
    link = page.get_by_role("link", name="docs/deviations.md").first
    link.wait_for(timeout=15_000)
    with page.context.expect_page() as opened:
        link.click()
    doc = opened.value
    doc.wait_for_load_state()
    ui.wait_settled(doc, 0.0)
    doc.locator('[data-testid="stMain"] h1', has_text="Deviations from the papers").first.wait_for(timeout=30_000)
    ui.assert_no_exception(doc, "the Documentation page")
    assert "doc=deviations" in doc.url
    assert page.url.split("?")[0].rstrip("/").endswith("/glossary")  # the first tab did not move


#: Checks of a page as it opens, before its steps (:func:`test_page`): Home's first screen (the picture a stakeholder
#: sees first) and the Glossary's links to the project's documents.
ON_ARRIVAL = {"home": home_first_screen_shows_rows_and_the_attack,
              "glossary": doc_links_open_the_document_in_a_new_tab}
