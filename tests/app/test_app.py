"""Streamlit AppTest over every page of the dashboard, and interaction tests.

Small data (n = 400) keeps the whole file fast: the tests put it in session state before the pages
run. Pages whose mechanism has not landed must say so with st.info (never an exception).
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from apptest import APP, PAGE_MECH, PAGES, TIMEOUT, charts, errors, goto, new_app, small_data
from streamlit.testing.v1 import AppTest

from dashboard import settings as dash_settings
from dashboard import upload
from dashboard.lessons import LESSONS
from dpsynth_core import MECHANISMS, Domain, export, wording
from dpsynth_core.datasets import Dataset
from dpsynth_core.experiments import digits_per_class
from dpsynth_core.mechanisms import bind
from dpsynth_core.transport import wasserstein1
from dpsynth_core.wording import bound_cell


@pytest.fixture(scope="module")
def app():
    return new_app(small_data())


@pytest.mark.parametrize("page", PAGES)
def test_every_page_renders(app, page):
    goto(app, page)
    assert not app.exception, [e.value for e in app.exception]
    assert len(app.title) >= 1
    # the sidebar always carries the privacy controls
    assert app.sidebar.select_slider(key="epsilon").value == app.session_state["epsilon"]
    assert len(app.sidebar.radio) >= 1 and len(app.sidebar.number_input) >= 1
    mech = PAGE_MECH.get(page)
    if mech is not None:
        before = app.session_state["neighbours"]
        # a page whose mechanism needs the other relation switches it and says so (never an error)
        assert app.session_state["neighbours"] in MECHANISMS[mech].neighbours
        if before not in MECHANISMS[mech].neighbours:
            assert any("switched" in i.value for i in app.info)
        assert not app.exception, [e.value for e in app.exception]
        assert not errors(app), errors(app)
        assert len(app.metric) >= 4  # W1, bound, size, privacy
        assert any("material/lock" in c.value for c in app.caption), "owner-side views must be labelled"
        assert len(charts(app)) >= 1  # real against synthetic (Vega-Lite)
        app.sidebar.radio(key="neighbours").set_value("add_remove").run()


def test_a_relation_switched_by_a_page_is_given_back_on_the_next_page():
    # Certified marginals needs n public: it switches the relation for its own page; the next page restores
    # the user's choice and says so; a relation the user sets afterwards stays.
    app = new_app()
    assert app.session_state["neighbours"] == "add_remove"
    goto(app, "sparse_marginals")
    assert app.session_state["neighbours"] == "replace"
    assert any("for this page" in i.value for i in app.info)
    app.run()  # another run of the same page (a fragment's last poll, a widget): the note stays
    assert any("for this page" in i.value for i in app.info)
    goto(app, "pmm")
    assert not app.exception, [e.value for e in app.exception]
    assert app.session_state["neighbours"] == "add_remove"
    assert [t.value for t in app.toast] == ["Back to *add / remove one record* neighbours (Certified marginals had switched them)."]
    assert "add/remove neighbours" in app.session_state["release_info"].privacy
    app.sidebar.radio(key="neighbours").set_value("replace").run()  # the user's own choice: it stays
    goto(app, "psmm")
    assert app.session_state["neighbours"] == "replace"
    assert "_relation_restore" not in app.session_state


def test_the_privacy_headline_fits_a_quarter_of_the_page():
    # δ moves to the label ("ε = 1, δ = 1e-06" was cut off at 1400 px on the Private Evolution page)
    app = new_app(small_data())  # the labels and the size help do not depend on n
    goto(app, "private_evolution")
    assert not app.exception, [e.value for e in app.exception]
    metrics = {m.label: m.value for m in app.metric}
    assert metrics["Privacy (δ = 10⁻⁶)"] == "ε = 1", metrics
    goto(app, "pmm")
    assert {m.label: m.value for m in app.metric}["Privacy"] == "ε = 1"  # pure DP: no δ at all
    # at ε = 0.001 the release's size follows a noisy count whose noise has scale 20,000: the help says so
    app.sidebar.select_slider(key="epsilon").set_value(0.001).run()
    size = next(m for m in app.metric if m.label == "Synthetic points")
    assert "discrete Laplace noise of scale 20,000" in size.help, size.help
    assert [wording.delta_text(x) for x in (1e-6, 1e-12, 5e-7)] == ["10⁻⁶", "10⁻¹²", "5e-07"]


def test_default_dataset_and_state():
    at = new_app()
    d = at.session_state["dataset"]
    assert d.X.shape == (5000, 2)
    assert at.session_state["epsilon"] == 1.0 and at.session_state["seed"] == 0
    assert at.session_state["neighbours"] == "add_remove"


def test_query_params_set_the_state():
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params.update({"eps": "0.013", "seed": "7", "rel": "replace", "delta": "1e-7"})
    at.run()
    assert not at.exception
    assert at.session_state["epsilon"] == 0.01  # snapped to the slider's grid
    assert at.session_state["seed"] == 7
    assert at.session_state["neighbours"] == "replace"


def test_bad_query_params_are_reported_not_raised():
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params.update({"eps": "-3", "seed": "abc", "dataset": "no_such_data"})
    at.run()
    assert not at.exception
    assert at.session_state["epsilon"] == 1.0
    warnings = " ".join(w.value for w in at.sidebar.warning)
    assert "eps='-3'" in warnings and "seed='abc'" in warnings and "no_such_data" in warnings


@pytest.mark.parametrize("eps", [0.001, 100.0])
def test_extreme_epsilon_on_home(eps):
    at = new_app(small_data())
    at.sidebar.select_slider(key="epsilon").set_value(eps).run()
    assert not at.exception, [e.value for e in at.exception]
    assert not errors(at), errors(at)
    info = at.session_state["release_info"]
    assert f"{eps:.4g}" in info.privacy


@pytest.mark.parametrize("page", list(PAGE_MECH))
def test_extreme_epsilon_on_every_mechanism_page(page):
    """The slider's ends (0.001 and 100) on every mechanism page: no exception, no error, the
    headline metrics and at least one figure (the browser test does this on one page only)."""
    at = new_app(small_data())
    for eps in (0.001, 100.0):
        at.sidebar.select_slider(key="epsilon").set_value(eps)
        goto(at, page)
        assert not at.exception, (page, eps, [e.value for e in at.exception])
        assert at.title[0].value == LESSONS[page].title  # really on that page
        assert not errors(at), (page, eps, errors(at))
        assert len(at.metric) >= 4 and len(charts(at)) >= 1, (page, eps)
        assert at.session_state["epsilon"] == eps


def test_changing_epsilon_changes_the_release(app):
    goto(app, "home")
    app.sidebar.select_slider(key="epsilon").set_value(0.1).run()
    first = app.session_state["release_info"]
    app.sidebar.select_slider(key="epsilon").set_value(10.0).run()
    second = app.session_state["release_info"]
    assert not app.exception
    assert "(0.1," in first.privacy and "(10," in second.privacy
    assert abs(second.ledger["epsilon"].sum() - 10.0) < 1e-9  # the ledger sums to ε


def test_unsupported_relation_is_a_clear_error():
    at = new_app(small_data())
    at.sidebar.radio(key="neighbours").set_value("replace").run()
    goto(at, "home")
    assert not at.exception
    at.sidebar.radio(key="neighbours").set_value("add_remove").run()
    assert not at.exception


# ------------------------------------------------------------------------------------ upload
GOOD = b"age,score,city\n" + b"\n".join(f"{i % 90},{(i * 7) % 100},x".encode() for i in range(200)) + b"\n"


def test_upload_good_csv_through_the_page():
    at = new_app()
    goto(at, "data")
    at.radio(key="data_source").set_value("Upload CSV").run()
    at.file_uploader(key="data_upload").set_value(("people.csv", GOOD, "text/csv")).run()
    assert not at.exception, [e.value for e in at.exception]
    assert not errors(at), errors(at)
    cols = at.multiselect(key="data_cols_people.csv")
    assert cols.value == ["age", "score"]
    assert any("holding text: 'city'" in c.value for c in at.caption)  # the text column is named, not dropped silently
    # bounds are never suggested: using the file without typing them is refused with what to do
    at.button(key="data_use_upload").click().run()
    assert any("Type the lower and the upper bound of 'age'" in e for e in errors(at))
    for key, value in (("data_lo_age", 0.0), ("data_hi_age", 120.0), ("data_lo_score", 0.0), ("data_hi_score", 100.0)):
        at.number_input(key=key).set_value(value)
    at.button(key="data_use_upload").click().run()
    assert not at.exception
    d = at.session_state["dataset"]
    assert d.name == "people" and d.X.shape == (200, 2)
    assert d.domain.upper == (120.0, 100.0)  # typed by the user, not taken from the data (max 89, 98)
    assert any("Using `people`" in s.value for s in at.success)


def test_a_one_row_table_is_used_with_a_caution_and_low_dim_says_why_it_cannot_run():
    at = new_app()
    goto(at, "data")
    at.radio(key="data_source").set_value("Upload CSV").run()
    at.file_uploader(key="data_upload").set_value(("one.csv", b"x,y\n0.3,0.7\n", "text/csv")).run()
    for key, value in (("data_lo_x", 0.0), ("data_hi_x", 1.0), ("data_lo_y", 0.0), ("data_hi_y", 1.0)):
        at.number_input(key=key).set_value(value)
    at.button(key="data_use_upload").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.session_state["dataset"].n == 1
    assert any("Using `one`: 1 row, d = 2." in s.value for s in at.success)  # "1 row", not "1 rows"
    assert any(w.value.startswith("Only 1 row: the mechanisms run, but one person is 100 % of the data") and
               "Low-dimensional data needs at least 2 rows" in w.value and "from this one row" in w.value
               for w in at.warning), [w.value for w in at.warning]
    assert any(c.value.startswith("n = 1 row (") for c in at.sidebar.caption)
    goto(at, "low_dim")
    assert not at.exception, [e.value for e in at.exception]
    assert not errors(at), errors(at)  # said before running, as a warning in the page's words, not an error
    assert any(w.value.startswith("Low-dimensional synthetic data (private PCA + PMM/PSMM) needs at least 2 rows "
                                  "and this table has 1 row: low_dim estimates the data's covariance")
               for w in at.warning), [w.value for w in at.warning]


def test_upload_protects_the_user():
    """Bounds that clamp most rows get the library's warning and the table is used (one decision for the
    library, the command line and the dashboard: tests/core/test_cli_workflow.py); missing values can be dropped
    on request; the data's own range can be used for exploration only, which marks every release as not
    private."""
    at = new_app()
    goto(at, "data")
    at.radio(key="data_source").set_value("Upload CSV").run()
    income = b"income,age\n" + b"\n".join(f"{20000 + 300 * i},{20 + i % 60}".encode() for i in range(100)) + b"\n"
    at.file_uploader(key="data_upload").set_value(("income.csv", income, "text/csv")).run()
    for key, value in (("data_lo_income", 0.0), ("data_hi_income", 100.0), ("data_lo_age", 0.0),
                       ("data_hi_age", 120.0)):
        at.number_input(key=key).set_value(value)
    at.button(key="data_use_upload").click().run()
    assert not errors(at), errors(at)
    assert any("100 of 100 rows (100%) have a value outside the bounds" in w.value and "(most of them in 'income')"
               in w.value and "check the bound boxes of the upload form" in w.value for w in at.warning), \
        [w.value for w in at.warning]
    assert at.session_state["dataset"].name == "income"  # the release goes ahead: the bounds are the user's choice
    # missing values: refused with a count, then dropped on request
    gappy = b"x,y\n" + b"\n".join(f"{i / 100},{'' if i % 10 == 0 else i / 200}".encode() for i in range(1, 60)) + b"\n"
    at.file_uploader(key="data_upload").set_value(("gappy.csv", gappy, "text/csv")).run()
    assert any("missing values" in e for e in errors(at))
    at.checkbox(key="data_drop_gappy.csv").check().run()
    assert not errors(at), errors(at)
    assert any("Dropped 5 rows" in c.value for c in at.caption)
    at.multiselect(key="data_cols_gappy.csv").set_value(["x", "y"]).run()
    # the data's own range: allowed for exploration, marked NOT private everywhere, downloads disabled
    at.checkbox(key="data_from_data_gappy.csv").check().run()
    at.button(key="data_use_upload").click().run()
    assert at.session_state["dataset_source"].bounds_from_data
    assert at.session_state["dataset"].domain.provenance == "data"  # the domain itself says so (label, exports)
    goto(at, "pmm")
    assert not at.exception
    assert any("NOT private: the bounds or categories of this dataset were read off the data" in w.value for w in at.warning)


@pytest.mark.parametrize("content", [b"", b"\x00\xff\xfe\x00garbage", b"a,b\n1,2\n3\n4,5,6,7\n", b"a,b\n"])
def test_upload_malformed_csv_shows_an_error(content):
    at = new_app()
    goto(at, "data")
    at.radio(key="data_source").set_value("Upload CSV").run()
    at.file_uploader(key="data_upload").set_value(("bad.csv", content, "text/csv")).run()
    assert not at.exception, [e.value for e in at.exception]
    assert errors(at), "a malformed file must produce st.error"
    assert at.session_state["dataset"].name != "bad"  # the previous dataset is kept


def test_reversed_bounds_are_refused_with_a_message():
    at = new_app()
    goto(at, "data")
    at.radio(key="data_source").set_value("Upload CSV").run()
    at.file_uploader(key="data_upload").set_value(("people.csv", GOOD, "text/csv")).run()
    for key, value in (("data_lo_age", 5.0), ("data_hi_age", 1.0), ("data_lo_score", 0.0), ("data_hi_score", 100.0)):
        at.number_input(key=key).set_value(value)
    at.button(key="data_use_upload").click().run()
    assert not at.exception
    assert any("lower bound of 'age' must be below its upper bound" in e for e in errors(at))


def test_read_upload_direct():
    table = upload.read_upload(GOOD, "people.csv")
    assert {"age", "score"} <= set(table.frame.columns)
    with pytest.raises(ValueError, match="empty"):
        upload.read_upload(b"", "e.csv")
    with pytest.raises(TypeError, match="bytes"):
        upload.read_upload(123, "e.csv")
    big = b"a\n" + b"1\n" * (upload.MAX_UPLOAD_ROWS + 1)
    with pytest.raises(ValueError, match="at most"):
        upload.read_upload(big, "big.csv")


def test_the_upload_form_checks_columns_and_counts_outside_rows():
    preview = upload.read_upload(GOOD, "people.csv", keep_text=True)
    form = upload.UploadForm("people.csv", columns=("age", "score"), text_columns=preview.text_columns,
                             lower={"age": 0, "score": 0}, upper={"age": 50, "score": 100})
    used = form.use(GOOD, preview)
    assert used.clamping.rows == int((preview.frame["age"] > 50).sum()) and used.dataset.domain.upper == (50.0, 100.0)
    assert used.clamping.above["age"] == used.clamping.rows and used.clamping.goes_ahead
    with pytest.raises(ValueError, match="no column 'nope'"):
        upload.UploadForm("people.csv", columns=("nope",)).use(GOOD, preview)
    with pytest.raises(ValueError, match="at least one column"):
        upload.UploadForm("people.csv").use(GOOD, preview)


def test_a_column_with_a_bad_cell_can_be_left_out_on_the_page():
    """A cell that is not a number names its column; a box leaves that column out and reads the rest, a
    second bad column can be left out too, and unchecking a box reads its column again."""
    at = new_app()
    goto(at, "data")
    at.radio(key="data_source").set_value("Upload CSV").run()
    people = b"name,age,income\nalice,34,52000\nbob,51,61000\ncarol,forty,48000\n"
    at.file_uploader(key="data_upload").set_value(("people.csv", people, "text/csv")).run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("not a number at row 4, column 'age'" in e for e in errors(at)), errors(at)
    box = at.checkbox(key="data_skip_people.csv_age")
    assert box.label == "Leave out the column 'age' and read the rest" and not box.value
    box.check().run()
    assert not at.exception, [e.value for e in at.exception]
    assert not errors(at), errors(at)
    assert at.session_state["data_skipped_people.csv"] == ("age",)
    assert any("Left out as you asked: 'age'" in c.value for c in at.caption)
    assert at.checkbox(key="data_skip_people.csv_age").value  # still on screen, to undo
    # unchecking reads the column again (and refuses it again); checking leaves it out again
    at.checkbox(key="data_skip_people.csv_age").uncheck().run()
    assert any("column 'age'" in e for e in errors(at)) and at.session_state["data_skipped_people.csv"] == ()
    at.checkbox(key="data_skip_people.csv_age").check().run()
    assert not errors(at), errors(at)
    cols = at.multiselect(key="data_cols_people.csv")
    assert "age" not in cols.options and cols.value == ["income"]
    at.number_input(key="data_lo_income").set_value(0.0)
    at.number_input(key="data_hi_income").set_value(1e6)
    at.button(key="data_use_upload").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert not errors(at), errors(at)
    d = at.session_state["dataset"]
    assert d.name == "people" and "income" in d.domain.names and "age" not in d.domain.names
    assert d.X.shape == (3, 1)
    # a second bad column can be left out as well
    two = b"age,income,score\n34,52000,1\nforty,61000,2\n51,?,3\n"
    at.file_uploader(key="data_upload").set_value(("two.csv", two, "text/csv")).run()
    at.checkbox(key="data_skip_two.csv_age").check().run()
    assert any("column 'income'" in e for e in errors(at)), errors(at)
    at.checkbox(key="data_skip_two.csv_income").check().run()
    assert not errors(at), errors(at)
    assert at.session_state["data_skipped_two.csv"] == ("age", "income")
    assert at.multiselect(key="data_cols_two.csv").value == ["score"]


# ------------------------------------------------------------------------------- dashboard layer
def test_epsilon_grid_and_snapping():
    grid, snap = dash_settings.EPSILON_GRID, dash_settings.snap_epsilon
    assert grid[0] == 0.001 and grid[-1] == 100.0
    assert snap(0.9) == 1.0 and snap(3e-4) == 0.001 and snap(1e9) == 100.0
    assert snap("x") == 1.0 and snap(float("nan")) == 1.0


def test_downloads_are_public_fields_of_a_fresh_release():
    """What the dashboard offers for download: the allow-listed report and the shuffled CSV of a release
    drawn with fresh randomness (rng=None), never the teaching seed's."""
    import json

    d = small_data()
    rel = bind("flat_histogram", epsilon=1.0)(d.X, d.domain, rng=None)
    rep = json.loads(export.report_json(rel))
    assert "trace" not in rep and "owner" not in json.dumps(rep) and "w1" not in rep
    assert rep["randomness"]["source"] == "fresh" and rep["label"] == "differentially private"
    assert rep["epsilon"] == 1.0 and rep["mechanism"] == "flat_histogram"
    assert "synthetic" not in rep  # the rows go in the CSV download
    csv = export.synthetic_csv(rel).decode()
    assert csv.splitlines()[0] == "a,b" and len(csv.splitlines()) == rel.synthetic.shape[0] + 1


def test_interactive_w1_is_zero_for_identical_sets_and_near_the_shift_otherwise():
    d = small_data()
    same = wasserstein1(d.X, d.X, domain=d.domain, budget="interactive", return_result=True)
    assert same.lower <= 1e-9 and same.value <= 1e-9 + same.width
    shifted = np.clip(d.X + 0.2, 0, 1)
    w = wasserstein1(d.X, shifted, domain=d.domain, budget="interactive", return_result=True)
    # the shift is 0.2 in l_inf for almost every point (clipping shortens a few): W1 is near 0.2
    assert w.lower - 1e-9 <= 0.2 + 1e-9 and w.upper >= 0.15


def test_parse_query():
    q = dash_settings.parse_query({"eps": "0.5", "seed": "3", "rel": "bogus", "delta": "2", "page": "pmm"})
    assert q["epsilon"] == 0.5 and q["seed"] == 3 and q["page"] == "pmm"
    assert "rel='bogus'" in q["ignored"] and "delta='2'" in q["ignored"]
    assert q["adjusted"] == []  # 0.5 is a step of the slider: nothing to say


def test_parse_query_says_when_a_link_value_is_snapped():
    # beyond the slider's ends and between its steps: snapped to the nearest step, and said so
    q = dash_settings.parse_query({"eps": "0.0001", "delta": "5e-7"})
    assert q["epsilon"] == 0.001 and q["delta"] == 1e-6
    assert q["adjusted"] == ["The link's eps=0.0001 is outside the slider's range 0.001 to 100: ε = 0.001 is used "
                             "instead.", "The link's delta=5e-07 is between the slider's steps: δ = 1e-06 is used instead."]
    q = dash_settings.parse_query({"eps": "1000"})
    assert q["epsilon"] == 100 and "outside the slider's range" in q["adjusted"][0]
    q = dash_settings.parse_query({"eps": "0.7"})
    assert q["epsilon"] == 0.5 and q["adjusted"] == ["The link's eps=0.7 is between the slider's steps: ε = 0.5 is "
                                                     "used instead."]


# ------------------------------------------------------------------------ sweeps and compare
def test_rates_sweep_and_switch_mechanism():
    at = new_app(small_data(300))
    goto(at, "rates")
    assert any("Run sweep" in i.value for i in at.info)
    at.multiselect(key="rates_mechs").set_value(["flat_histogram"]).run()
    at.slider(key="rates_reps").set_value(2).run()
    at.select_slider(key="rates_n").set_value(200).run()
    at.select_slider(key="rates_density").set_value(3).run()
    at.button(key="rates_run").click().run()
    assert not at.exception, [e.value for e in at.exception]
    key, df = at.session_state["rates_result"]
    # n from 20 to 200, 3 per decade on the log scale (20 * 10^(k/3)), 2 repeats, one mechanism
    assert sorted(df["n"].unique()) == [20, 43, 93, 200] and len(df) == 8
    assert (df["w1"] > 0).all() and (df["mechanism"] == "flat_histogram").all()
    assert df["w1_exact"].all()  # at most 200 x 200 pairs: dense POT, exact
    table = at.dataframe[0].value
    assert re.fullmatch(r"\[-?[0-9.]+, -?[0-9.]+\]", table["95% interval of a"].iloc[0])
    lo, hi = (float(v) for v in table["95% interval of a"].iloc[0][1:-1].split(","))
    assert lo <= table["fitted slope a"].iloc[0] <= hi
    # switch the mechanism: the previous results stay, marked as stale, until the next sweep
    at.multiselect(key="rates_mechs").set_value(["private_evolution"]).run()
    assert not at.exception
    stale = [i.value for i in at.info if "**Earlier result**" in i.value]
    assert stale and "mechanisms changed since" in stale[0] and "Flat Laplace histogram" in stale[0], stale
    # sweep over ε
    at.radio(key="rates_axis").set_value("ε").run()
    at.select_slider(key="rates_n_eps").set_value(500).run()
    at.multiselect(key="rates_mechs").set_value(["flat_histogram"]).run()
    at.slider(key="rates_reps").set_value(1).run()
    at.button(key="rates_run").click().run()
    assert not at.exception
    _, df = at.session_state["rates_result"]
    assert df["epsilon"].nunique() == 6 and df["n"].nunique() == 1


def test_rates_default_sweep_spans_three_decades():
    at = new_app(small_data(300))
    goto(at, "rates")
    points = next(c.value for c in at.caption if c.value.startswith("Points: n ∈"))
    ns = [int(v.replace(",", "")) for v in re.search(r"\{(.*?)\}", points).group(1).split(", ")]
    assert ns[0] == 20 and ns[-1] == 20_000 and len(ns) >= 7, ns


@pytest.mark.slow
def test_rates_three_decades_exact_or_within_one_percent():
    """A sweep from 20 to 20 000 rows: every W1 exact or certified within 1%, a slope with its band."""
    at = new_app()  # the default data (5000 rows, resampled)
    goto(at, "rates")
    at.multiselect(key="rates_mechs").set_value(["pmm"]).run()
    at.slider(key="rates_reps").set_value(1).run()
    at.button(key="rates_run").click().run()
    assert not at.exception, [e.value for e in at.exception]
    _, df = at.session_state["rates_result"]
    assert df["n"].min() == 20 and df["n"].max() == 20_000
    width = (df["w1_upper"] - df["w1_lower"]) / df["w1_upper"]
    assert (df["w1_exact"] | (width <= 0.01)).all(), df[["n", "w1_lower", "w1_upper", "w1_exact"]]
    assert ((df["w1_lower"] <= df["w1"]) & (df["w1"] <= df["w1_upper"])).all()
    table = at.dataframe[0].value
    assert table["95% interval of a"].iloc[0].startswith("[")


def test_compare_runs_every_mechanism_and_explains_refusals():
    at = new_app(small_data(300))
    goto(at, "compare")
    at.button(key="compare_run").click().run()
    assert not at.exception, [e.value for e in at.exception]
    _, (df, synth, best) = at.session_state["compare_result"]
    # the mechanisms that support only replace are left out under add/remove, said in words before running
    replace_only = {n for n, spec in MECHANISMS.items() if "add_remove" not in spec.neighbours}
    assert "per_point_laplace" in replace_only
    assert set(df["mechanism"]) == set(MECHANISMS) - replace_only
    assert any("Left out under *add / remove one record*" in w.value and "Per-point Laplace noise" in w.value
               for w in at.warning)
    assert best is not None and best["rule_bins"] == df[df["mechanism"] == "flat_histogram"].iloc[0]["resolved"]["bins"]
    assert set(synth) == set(df[df["status"] == "ok"]["mechanism"])
    # every release's bound in the table, with its kind in the headlines' words (one vocabulary)
    table = at.dataframe[0].value
    ok = df[df["status"] == "ok"]
    assert list(table["Bound on W1"]) == [bound_cell(b, t, v) for b, t, v in zip(ok["bound"], ok["bound_type"],
                                                                              ok["bound_vacuous"], strict=True)]
    assert any(c.endswith("(rate only)") for c in table["Bound on W1"])  # PSMM's rate is named, never drawn as a bound


def test_audit_page_runs_an_audit_and_respects_the_relation():
    at = new_app(small_data(300))
    goto(at, "audit")
    assert not at.exception
    at.selectbox(key="audit_mech").set_value("flat_histogram").run()
    at.select_slider(key="audit_trials").set_value(200).run()
    at.select_slider(key="audit_n").set_value(100).run()
    at.button(key="audit_run").click().run()
    assert not at.exception, [e.value for e in at.exception]
    _, res = at.session_state["audit_result"]
    assert res.trials == 200 and res.epsilon_declared == 1.0
    # a correct mechanism passes (probability >= 95% by the audit's construction; fixed seed)
    assert res.passed
    assert len(at.get("plotly_chart")) >= 1
    # under replace, only 'move' is a neighbouring pair
    at.sidebar.radio(key="neighbours").set_value("replace").run()
    assert not at.exception
    assert at.radio(key="audit_kind_replace").options == ["moving a record"]
    assert any("a neighbouring pair of the release's relation" in c.value for c in at.caption)
    # a move under add/remove is covered by group privacy: declared 2ε
    at.sidebar.radio(key="neighbours").set_value("add_remove").run()
    at.radio(key="audit_kind_add_remove").set_value("move").run()
    assert any("2ε by group privacy" in c.value for c in at.caption)


def test_page_query_parameter_opens_that_page():
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params.update({"page": "data", "eps": "2"})
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.title[0].value == "The data and its public bounds"
    assert at.session_state["epsilon"] == 2.0
    assert at.query_params.get("page") in ("data", ["data"])  # the URL keeps describing the state


def test_page_inputs_survive_a_page_switch(app):
    goto(app, "pmm")
    if "pmm" not in MECHANISMS:
        pytest.fail("pmm is registered in this build; this test needs it")
    app.selectbox(key="pmm__consistency").set_value("uniform").run()
    goto(app, "home")
    goto(app, "pmm")
    assert app.selectbox(key="pmm__consistency").value == "uniform"
    app.selectbox(key="pmm__consistency").set_value("proportional").run()


def test_pmm_draw_again_changes_the_draws(app):
    goto(app, "pmm")
    app.segmented_control(key="pmm_view").set_value("Several releases").run()
    before = app.session_state["pmm_offset"] if "pmm_offset" in app.session_state else 0
    app.button(key="pmm_draw").click().run()
    assert not app.exception
    assert app.session_state["pmm_offset"] == before + app.slider(key="pmm_k").value


def test_safe_turns_errors_into_messages_without_tracebacks():
    script = '''
import streamlit as st
from dashboard import ui as _ui

def bad_value():
    raise ValueError("The 'x' parameter of f must be positive. Got -1.")

def crash():
    secret = 123.456
    raise RuntimeError(f"internal failure near value {secret}")

assert _ui.safe(bad_value) is None
assert _ui.safe(crash, what="testing") is None
st.write("still running")
'''
    at = AppTest.from_string(script, default_timeout=TIMEOUT)
    at.run()
    assert not at.exception
    msgs = errors(at)
    assert msgs[0] == "The 'x' parameter of f must be positive. Got -1."
    assert "RuntimeError" in msgs[1] and "settings are kept" in msgs[1]
    details = " ".join(c.value for c in at.code)
    assert "RuntimeError" in details and "123.456" not in details  # no message, no values, in the browser
    assert at.markdown[-1].value == "still running"


def test_home_epsilon_buttons_set_the_sidebar():
    at = new_app(small_data())
    at.button(key="home_eps_0.01").click().run()
    assert not at.exception
    assert at.session_state["epsilon"] == 0.01
    assert at.sidebar.select_slider(key="epsilon").value == 0.01
    assert "(0.01," in at.session_state["release_info"].privacy


def test_low_dim_demo_sweep_and_digits():
    if "low_dim" not in MECHANISMS:
        pytest.fail("low_dim is registered in this build; this test needs it")
    at = new_app(small_data())
    goto(at, "low_dim")
    at.button(key="ld_use_plane").click().run()
    assert at.session_state["dataset"].d == 3
    assert at.session_state["neighbours"] == "replace"  # low_dim needs n public: switched on entry
    assert not at.exception, [e.value for e in at.exception]
    assert not errors(at), errors(at)
    assert len(charts(at)) >= 1  # the scatter (the detail views start closed)
    at.segmented_control(key="ld_view").set_value("The two planes").run()
    assert len(charts(at)) >= 2  # the scatter and the two planes
    for view in ("Spectrum", "Against PMM on the full cube"):
        at.segmented_control(key="ld_view").set_value(view).run()
        assert not at.exception and not errors(at), errors(at)
    at.segmented_control(key="ld_view").set_value("Angle against ε").run()
    at.multiselect(key="ld_eps").set_value([1.0, 100.0]).run()
    at.slider(key="ld_reps").set_value(1).run()
    at.button(key="ld_run").click().run()
    assert not at.exception
    _, df = at.session_state["ld_result"]
    assert list(df["epsilon"]) == [1.0, 100.0]
    # the private subspace approaches the true one as ε grows (seed 004, Theorem 2.1): at ε = 100 with
    # n = 5000 points within 0.02 of a plane, the covariance noise (σ ≈ 5e-4) is far below the
    # eigen-gap, so the largest angle is small; at ε = 1 it is not smaller than at ε = 100
    assert df["angle"].iloc[1] < 10.0 and df["angle"].iloc[1] <= df["angle"].iloc[0] + 1e-9
    at.segmented_control(key="ld_view").set_value("Synthetic digits").run()
    assert not at.exception and len(charts(at)) >= 2  # the scatter and the digits
    imgs, labels = digits_per_class(4.0, 4, rng=0)
    assert imgs.shape == (60, 64) and sorted(set(labels)) == list(range(10))
    # the classifier experiment ([HSVZ23], Figure 2) at one setting
    at.segmented_control(key="ld_view").set_value("Does it help a classifier?").run()
    at.multiselect(key="ld_svm_eps").set_value([8.0]).run()
    at.multiselect(key="ld_svm_dims").set_value([2]).run()
    at.button(key="ld_svm_run").click().run()
    assert not at.exception, [e.value for e in at.exception]
    _, df = at.session_state["ld_svm"]
    assert set(df["method"]) == {"low_dim", "pmm_full", "real"}
    assert df["accuracy"].between(0, 1).all()


@pytest.mark.parametrize("d", [1, 5])
def test_mechanism_pages_in_other_dimensions_never_raise(d):
    """1-D and 5-D data under both relations: pages either work or say why, never an exception."""
    rng = np.random.default_rng(d)
    data = Dataset(rng.random((200, d)), Domain([0] * d, [1] * d), f"d{d}")
    at = new_app(data)
    for page in PAGE_MECH:
        for rel in ("add_remove", "replace"):
            at.session_state["neighbours"] = rel
            goto(at, page)
            assert not at.exception, (d, page, rel, [e.value for e in at.exception])
            if PAGE_MECH[page] in MECHANISMS and rel in MECHANISMS[PAGE_MECH[page]].neighbours:
                assert not errors(at), (d, page, rel, errors(at))


# ------------------------------------------------------------------------------- lesson path
def test_lesson_path_walks_every_page_with_plain_labels(app):
    """Every page of the lesson path renders with its lesson; no internal label is on screen."""
    from dashboard.lessons import LESSONS, ORDER

    for url in ORDER:
        goto(app, url)
        assert not app.exception, (url, [e.value for e in app.exception])
        assert app.title[0].value == LESSONS[url].title
        # the release's technical notes are the library's own wording for programmers, shown collapsed under
        # "Technical notes"; everything a student reads without opening them must be plain
        technical = {c.value for exp in app.expander if exp.label.startswith("Technical notes") for c in exp.caption}
        text = " ".join(str(e.value) for kind in (app.markdown, app.caption, app.title, app.info) for e in kind
                        if e.value not in technical)
        for label in ("seed 00", "params[", "U_T", "step3", "exact_total"):
            assert label not in text, (url, label)


def test_private_downloads_are_fresh_releases(app):
    goto(app, "pmm")
    app.button(key="make_pmm").click().run()
    assert not app.exception
    fp, fresh = app.session_state["fresh_pmm"]
    assert fresh.randomness["source"] == "fresh" and fresh.label == "differentially private"



def test_private_evolution_page_teaches_convergence_on_the_default_data():
    """The PE page on the dashboard's default data (5000 points, ε = 1): the W1-per-iteration picture is
    computed on request (issue 37: most of a run's time) and then shown without opening a view, labelled
    owner view, and the release is at least 3 times closer to the data than the start (issue 27: measured
    about 20x on this data and seed)."""
    at = new_app()
    goto(at, "private_evolution")
    assert not at.exception and not errors(at), errors(at)
    assert not any("W1 after each iteration" in c.proto.spec for c in at.get("plotly_chart"))
    at.toggle(key="pe_show_w1").set_value(True).run()
    assert not at.exception and not errors(at), errors(at)
    chart = next(c for c in at.get("plotly_chart") if "W1 after each iteration" in c.proto.spec)
    assert "owner view" in chart.proto.spec
    caption = next(c.value for c in at.caption if "at the start" in c.value and "for the release" in c.value)
    assert "material/lock" in caption
    start, release = (float(x) for x in re.findall(r"([0-9.]+) (?:at the start|for the release)", caption))
    assert release < start / 3, caption
    assert any("What PE is good for" in m.value for m in at.markdown)


def test_wide_table_w1_is_an_interval_not_a_grid_of_3_to_the_d_arcs():
    """18 numeric columns, 2,000 rows: the headline's W1 no longer builds the grid graph's 3^18 king's moves per
    cell (a MemoryError before); the policy answers with the proven interval from every row, on the PMM page and
    on the marginal tables' page (auto's choice for such a table)."""
    d = 18
    data = Dataset(np.random.default_rng(18).random((2000, d)), Domain([0] * d, [1] * d), "wide18")
    at = new_app(data)
    for page in ("pmm", "marginals"):
        goto(at, page)
        assert not at.exception and not errors(at), (page, [e.value for e in at.exception], errors(at))
