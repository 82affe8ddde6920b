"""Tables with numeric and categorical columns in the dashboard (issue 26, item 5): the bundled Clinic
(mixed) source on every page, uploads with text columns (declared categories, an 'other' category, the
'use the values in this file' shortcut that makes every release NOT DP, undeclared values and missing
cells refused with their row), and the pictures of a mixed release.

Pages run on a 600-row sample of the clinic table (its declared domain) to stay fast.
"""

from __future__ import annotations

import io
import json

import numpy as np
import pandas as pd
import pytest
from apptest import PAGE_MECH, PAGES, errors, exceptions, goto, new_app, small_data

from dashboard import data as sources
from dashboard import upload
from dpsynth_core import MECHANISMS, export
from dpsynth_core.datasets import CLINIC_CATEGORIES, clinic

REFUSAL = "does not take categorical columns"


@pytest.fixture(scope="module")
def mixed_app():
    """The app after loading Clinic (mixed) through the Data page, as a user does."""
    at = new_app()
    goto(at, "data")
    at.radio(key="data_source").set_value("Clinic (mixed)").run()
    assert not at.exception, exceptions(at)
    assert any("sex ∈ {F, M}" in m.value for m in at.markdown)  # the declared domain is shown before loading
    at.button(key="data_load_mixed").click().run()
    assert not at.exception, exceptions(at)
    d = at.session_state["dataset"]
    assert d.name == "clinic" and d.domain.is_mixed and d.domain.declared
    assert any("Using `clinic`" in s.value for s in at.success)
    # a smaller sample of the same table and domain keeps the pages fast
    at.session_state["dataset"] = clinic(600)
    return at


@pytest.mark.parametrize("page", PAGES)
def test_mixed_source_on_every_page_renders_or_refuses_cleanly(mixed_app, page):
    at = goto(mixed_app, page)
    assert not at.exception, exceptions(at)
    assert not errors(at), errors(at)  # a refusal is information, never an error or a traceback
    mech = PAGE_MECH.get(page)
    infos = " ".join(i.value for i in at.info)
    if page in ("rates", "compare", "audit"):
        assert "on numeric columns" in infos and at.button(key=f"numeric_only_{page}")
    elif mech is not None and not MECHANISMS[mech].categorical:
        assert REFUSAL in infos, infos  # the library's own words, naming the mechanisms that take them
        assert "Partition tree (PMM)" in infos.split(REFUSAL, 1)[1]  # the pages of those that take them
        assert at.button(key=f"numeric_only_{page}")
    elif mech is not None:  # a mechanism that takes categorical columns: its release, with category pictures
        assert len(at.metric) >= 4
        charts = at.get("plotly_chart")
        assert len(charts) >= 2  # real against synthetic, and the rows per category
    if page == "data":
        assert any(c.value == "3 numeric, 3 categorical." for c in at.caption)
    mixed_app.session_state["neighbours"] = "add_remove"


def test_pmm_release_on_the_clinic_table(mixed_app):
    """PMM's release keeps the declared categories and says how the tree split them; every view renders."""
    at = goto(mixed_app, "pmm")
    info = at.session_state["release_info"]
    assert "DP" in info.privacy and abs(info.ledger["epsilon"].sum() - 1.0) < 1e-9
    captions = " ".join(c.value for c in at.caption)
    assert "Level 1 splits sex" in captions and "numeric columns (age, bmi, systolic_bp)" in captions
    metrics = {m.label: m.value for m in at.metric}
    # the headline: W1 under the mixed metric (at most 1 with unit weights; the library's tests check its value
    # against a dense reference), the same number the report's ceilings use (a mean's ceiling = W1 x its range)
    shown = float(metrics["Distance to the real data (W1)"])
    assert 0 < shown <= 1
    g = _report_tables(at)["statistic"]
    age_mean = g[(g["statistic"] == "mean") & (g["column"] == "age")]["ceiling from W1"].iloc[0]
    assert age_mean == pytest.approx(shown * (100 - 18), rel=5e-3)
    for view in ("Partition tree", "Cells of one level", "Counts of one level", "Noise per level", "Several releases"):
        at.segmented_control(key="pmm_view").set_value(view).run()
        assert not at.exception and not errors(at), (view, exceptions(at), errors(at))
        assert len(at.get("plotly_chart")) >= 3, view
        if view == "Cells of one level":
            assert any("numeric columns only" in c.value for c in at.caption)  # the maps say what they show
    # "What the release preserves": a numeric column within each category, chosen by the user (a tab)
    at.selectbox(key="pmm_pres_by").set_value("region").run()
    at.selectbox(key="pmm_pres_num").set_value("systolic_bp").run()
    assert not at.exception and not errors(at)
    # the private download: a fresh release, its CSV in the declared labels
    at.button(key="make_pmm").click().run()
    _, fresh = at.session_state["fresh_pmm"]
    assert fresh.label == "differentially private" and fresh.randomness["source"] == "fresh"
    frame = pd.read_csv(io.BytesIO(export.synthetic_csv(fresh)))
    assert list(frame.columns) == list(fresh.domain.names)
    for col, labels in CLINIC_CATEGORIES.items():
        assert set(frame[col]) <= set(labels), col


def _report_tables(at) -> dict:
    """The dataframes of the "What the release preserves" expander, by their first column's name."""
    box = next(e for e in at.expander if e.label.startswith("What the release preserves"))
    return {df.value.columns[0]: df.value for df in box.dataframe}


def test_what_the_release_preserves_shows_measured_differences_under_their_ceilings():
    """The owner report under a numeric release: every difference W1 controls with its ceiling (from the
    release's certified W1), and all of them under it; with a target, train on synthetic / test on real."""
    at = new_app(small_data())
    goto(at, "pmm")
    assert not at.exception and not errors(at), (exceptions(at), errors(at))
    tables = _report_tables(at)
    g = tables["statistic"]
    assert set(g["column"]) == {"a", "b"} and g["ceiling from W1"].notna().all()
    assert g["within"].all()  # KR duality: measured <= L x W1 for each (a violation would be a bug)
    w1 = float(at.metric[0].value)
    means = g[g["statistic"] == "mean"]
    assert np.allclose(means["ceiling from W1"], w1, rtol=0.01)  # range 1: the ceiling of a mean is W1 itself
    assert {"1-way error, mean", "2-way error, worst"} <= {m.label for m in at.metric}
    at.selectbox(key="pmm_pres_target").set_value("b").run()
    assert not at.exception and not errors(at), (exceptions(at), errors(at))
    down = _report_tables(at)["trained_on"]
    assert list(down["trained_on"]) == ["synthetic", "real", "baseline"] and (down["metric"] == "r2").all()
    assert np.isfinite(down["score"]).all() and (down["score"] <= 1).all()
    assert set(_report_tables(at)["first column"]["second column"]) == {"b"}  # the one pair (a, b)


def test_what_the_release_preserves_on_a_mixed_table(mixed_app):
    at = goto(mixed_app, "pmm")
    tables = _report_tables(at)
    g = tables["statistic"]
    # the mixed metric's W1 gives every statistic its ceiling, and every measured difference stays under it
    assert g["ceiling from W1"].notna().all() and g["within"].all()
    assert not any("No ceilings" in c.value for c in at.caption)
    cols = tables["column"]
    region = cols.set_index("column").loc["region"]
    real = clinic(600).to_frame()["region"].value_counts(normalize=True)
    assert region["kind"] == "categorical" and abs(region["largest share difference"]) <= 1
    assert region["at category"] in real.index
    at.selectbox(key="pmm_pres_target").set_value("diabetes").run()
    assert not at.exception and not errors(at), (exceptions(at), errors(at))
    down = _report_tables(at)["trained_on"]
    assert set(down["metric"]) == {"accuracy", "balanced_accuracy"}
    at.selectbox(key="pmm_pres_target").set_value("—").run()


def test_numeric_only_button_continues_on_the_numeric_columns():
    """low_dim stays numeric (private PCA needs a vector space): its page offers the numeric columns."""
    at = new_app(clinic(400))
    goto(at, "low_dim")
    assert any(REFUSAL in i.value for i in at.info)
    at.button(key="numeric_only_low_dim").click().run()
    assert not at.exception, exceptions(at)
    d = at.session_state["dataset"]
    assert d.domain.names == ("age", "bmi", "systolic_bp") and not d.domain.is_mixed
    assert d.domain.lower == (18.0, 10.0, 60.0)  # the declared bounds, kept
    assert not errors(at) and len(at.metric) >= 4  # low_dim now releases


@pytest.mark.parametrize("page,key,views", [
    ("psmm", "psmm_view", ["The signed measure", "True, noisy, projected", "Projection against clipping"]),
    ("random_walk", "rw_view", ["Running sums of the noise", "Distributions on the line", "The path through the grid",
                                "The Haar basis"]),
    ("sparse_marginals", "sm_view", ["The certificate", "The tables"]),
])
def test_grid_mechanism_views_on_the_clinic_table(mixed_app, page, key, views):
    """The grid mechanisms that take categorical columns: every detail view renders on the mixed table
    (the numeric grids with the combinations of categories summed, or a sentence where a picture needs a
    numeric grid), never an error."""
    if not MECHANISMS[PAGE_MECH[page]].categorical:
        pytest.fail(f"{PAGE_MECH[page]} takes categorical columns in this build; this test needs it")
    at = goto(mixed_app, page)
    for view in views:
        at.segmented_control(key=key).set_value(view).run()
        assert not at.exception and not errors(at), (page, view, exceptions(at), errors(at))
        assert len(at.get("plotly_chart")) >= 2, (page, view)
        captions = " ".join(c.value for c in at.caption)
        if page == "psmm":
            assert "numeric columns only" in captions and "combinations of categories" in captions
        if view == "The path through the grid":
            assert "drawn for a 2-D numeric grid only" in captions
    mixed_app.session_state["neighbours"] = "add_remove"


def test_pmm_button_loads_the_clinic_table():
    at = new_app(small_data())
    goto(at, "pmm")
    at.button(key="pmm_use_clinic").click().run()
    assert not at.exception, exceptions(at)
    assert at.session_state["dataset"].name == "clinic"
    assert "pmm_use_clinic" not in [b.key for b in at.button]  # offered only while the data are numeric
    assert not errors(at) and len(at.get("plotly_chart")) >= 2


# ------------------------------------------------------------------------------------------- uploads
def _people(n: int = 120, *, bad_row: int | None = None, hole_row: int | None = None) -> bytes:
    """A CSV with two numeric and two text columns (row r of the data is spreadsheet row r + 2)."""
    regions = ["north", "south", "east"]
    lines = ["age,sex,bmi,region"]
    for i in range(n):
        region = regions[i % 3]
        if i == bad_row:
            region = "Atlantis"
        sex = "F" if i % 2 else "M"
        if i == hole_row:
            sex = ""
        lines.append(f"{20 + i % 60},{sex},{18 + (i * 7) % 20},{region}")
    return ("\n".join(lines) + "\n").encode()


def _upload(at, name: str, data: bytes, columns: list[str]):
    goto(at, "data")
    at.radio(key="data_source").set_value("Upload CSV").run()
    at.file_uploader(key="data_upload").set_value((name, data, "text/csv")).run()
    assert not at.exception, exceptions(at)
    at.multiselect(key=f"data_cols_{name}").set_value(columns).run()
    return at


def _use(at):
    """Type the bounds of age and bmi in the form and press "Use this data" (the form's values reach the page
    with its button, with whatever else was typed since the last run)."""
    for key, value in (("data_lo_age", 0.0), ("data_hi_age", 120.0), ("data_lo_bmi", 10.0), ("data_hi_bmi", 60.0)):
        at.number_input(key=key).set_value(value)
    at.button(key="data_use_upload").click().run()
    return at


def test_upload_offers_text_columns_as_categories_and_uses_the_typed_ones():
    at = new_app()
    at = _upload(at, "people.csv", _people(), ["age", "sex", "bmi", "region"])
    assert any("holding text: 'sex', 'region'" in c.value for c in at.caption)
    assert not any(c.value.startswith("Left out") and "holding text" in c.value for c in at.caption)
    # without categories: refused with what to type, nothing used
    _use(at)
    assert any("Type the categories of 'sex'" in e for e in errors(at)), errors(at)
    assert at.session_state["dataset"].name != "people"
    at.text_area(key="data_cat_sex").input("F|M")
    at.text_area(key="data_cat_region").input("north\nsouth\neast\nwest")  # one per line; 'west' unused
    _use(at)
    assert not at.exception and not errors(at), (exceptions(at), errors(at))
    d = at.session_state["dataset"]
    assert d.name == "people" and d.domain.names == ("age", "sex", "bmi", "region")
    assert d.domain.categories == {"sex": ("F", "M"), "region": ("north", "south", "east", "west")}
    assert d.domain.declared and d.domain.upper == (120.0, 60.0)  # typed, not read off the file
    frame = d.to_frame()
    assert (frame["region"] == "west").sum() == 0 and (frame["region"] == "north").sum() == 40
    # the data page shows the categories, and PMM releases the table as DP with its category pictures
    assert any(c.value.startswith("2 numeric") for c in at.caption)
    goto(at, "pmm")
    assert not at.exception and not errors(at)
    rel_info = at.session_state["release_info"]
    assert "DP" in rel_info.privacy and "NOT" not in rel_info.privacy
    assert len(at.get("plotly_chart")) >= 2


def test_undeclared_value_is_refused_with_row_column_and_value_then_other_takes_it():
    at = new_app()
    at = _upload(at, "bad.csv", _people(bad_row=7), ["age", "sex", "bmi", "region"])
    at.text_area(key="data_cat_sex").input("F|M")
    at.text_area(key="data_cat_region").input("north|south|east")
    _use(at)
    assert not at.exception, exceptions(at)
    msg = " ".join(errors(at))
    # row 9 of the spreadsheet (data row 7; the header is row 1), the column and the value
    assert "column 'region'" in msg and "'Atlantis'" in msg and "row 9" in msg, msg
    assert at.session_state["dataset"].name != "bad"
    at.text_input(key="data_other_region").input("elsewhere")
    _use(at)
    assert not errors(at), errors(at)
    d = at.session_state["dataset"]
    assert d.domain.categories["region"] == ("north", "south", "east", "elsewhere")
    assert list(d.to_frame()["region"]).count("elsewhere") == 1


def test_missing_text_cell_is_refused_then_dropped_on_request():
    at = new_app()
    at = _upload(at, "holes.csv", _people(hole_row=3), ["age", "sex", "bmi", "region"])
    at.text_area(key="data_cat_sex").input("F|M")
    at.text_area(key="data_cat_region").input("north|south|east")
    _use(at)
    assert any("missing values" in e and "the first at row 5, column 'sex'" in e for e in errors(at)), errors(at)
    at.checkbox(key="data_drop_holes.csv").check().run()
    _use(at)
    assert not errors(at), errors(at)
    assert at.session_state["dataset"].n == 119
    assert any("Left out 1 row with a missing value" in i.value for i in at.info)


def test_use_the_values_in_this_file_makes_every_release_not_dp():
    at = new_app()
    at = _upload(at, "explore.csv", _people(), ["age", "sex", "bmi", "region"])
    at.checkbox(key="data_cats_from_data_explore.csv").check().run()
    assert not [t for t in at.text_area if t.key.startswith("data_cat_")]  # nothing to type then
    _use(at)
    assert not errors(at), errors(at)
    d = at.session_state["dataset"]
    assert d.domain.provenance == "data" and not d.domain.declared
    assert d.domain.categories["region"] == ("east", "north", "south")  # what the file holds (sorted)
    assert any("categories come from the data" in w.value for w in at.warning)
    goto(at, "pmm")
    assert not at.exception and not errors(at)
    assert "NOT differentially private" in at.session_state["release_info"].privacy
    assert {m.label: m.value for m in at.metric}["Privacy"] == "not private"
    assert any("NOT private: the bounds or categories" in w.value for w in at.warning)
    assert any("Downloads are disabled" in c.value for c in at.caption)
    assert any("read off the data" in c.value for c in at.sidebar.caption)
    # the label comes from the domain, whatever path produces the release: the library's export says it too
    from dpsynth_core.mechanisms import bind

    rel = bind("pmm", epsilon=1.0)(d.X, d.domain, rng=None)
    rep = json.loads(export.report_json(rel))
    assert rep["is_dp"] is False and rep["label"].startswith("NOT differentially private")


# ------------------------------------------------------------------------------- the upload form, directly
def test_parse_categories():
    assert upload.parse_categories("F|M") == ["F", "M"]
    assert upload.parse_categories(" north \n south\n\n east ") == ["north", "south", "east"]
    assert upload.parse_categories("a|b\nc") == ["a|b", "c"]  # lines win: a label may hold a bar
    assert upload.parse_categories("") == [] and upload.parse_categories(None) == []
    with pytest.raises(TypeError):
        upload.parse_categories(3)


def _form(**changes) -> upload.UploadForm:
    base = dict(filename="p.csv", columns=("age", "sex", "bmi", "region"), text_columns=("sex", "region"),
                lower={"age": 0, "bmi": 10}, upper={"age": 120, "bmi": 60},
                categories={"sex": "F|M", "region": "north|south|east"})
    return upload.UploadForm(**{**base, **changes})


def test_the_upload_form_declares_the_domain_and_reads_the_file_with_it():
    data = _people(60)
    preview = upload.read_upload(data, "p.csv", keep_text=True)
    assert preview.text_columns == ("sex", "region") and list(preview.preview.columns) == ["age", "sex", "bmi",
                                                                                          "region"]
    used = _form().use(data, preview)
    assert used.clamping.rows == 0 and used.dropped == 0 and used.dataset.X.shape == (60, 4)
    assert used.dataset.domain.declared and used.dataset.domain.categories["sex"] == ("F", "M")
    with pytest.raises(ValueError, match="'F' twice in column 'sex'"):
        _form(categories={"sex": "F|F|M", "region": "north"}).use(data, preview)
    with pytest.raises(ValueError, match="at least one column of numbers"):
        _form(columns=("sex",)).use(data, preview)
    many = "|".join(f"c{i}" for i in range(upload.MAX_UPLOAD_CATEGORIES + 1))
    with pytest.raises(ValueError, match="at most 1,000"):
        _form(categories={"sex": many, "region": "north"}).use(data, preview)
    with pytest.raises(ValueError, match="at most 64 columns"):
        _form(columns=("age",) * 65).use(data, preview)
    with pytest.raises(ValueError, match="no column 'nope'"):
        _form(columns=("age", "nope")).use(data, preview)


def test_the_upload_form_reads_the_categories_off_the_file_only_when_asked():
    ids = ("age,sex,bmi,region\n" + "\n".join(f"{20 + i % 60},id{i},{18 + i % 20},north" for i in range(60))
           + "\n").encode()
    preview = upload.read_upload(ids, "p.csv", keep_text=True)
    used = _form(categories={}, categories_from_data=True).use(ids, preview)
    assert used.dataset.domain.provenance == "data" and len(used.dataset.domain.categories["sex"]) == 60
    big = ("age,sex,bmi,region\n" + "\n".join(f"{20 + i % 60},id{i},{18 + i % 20},north" for i in range(1200))
           + "\n").encode()
    with pytest.raises(ValueError, match="too many for a categorical"):
        _form(categories={}, categories_from_data=True).use(big, upload.read_upload(big, "p.csv", keep_text=True))


def test_the_upload_form_takes_the_range_over_the_rows_it_keeps():
    """The data's own range (exploration only) over the rows a release of the chosen columns keeps: a missing
    value in a column not chosen does not drop a row from the range."""
    data = b"x,y,z\n0.2,1,\n0.9,2,5\n0.5,,6\n"
    preview = upload.read_upload(data, "g.csv", missing="drop", keep_text=True)
    form = upload.UploadForm("g.csv", columns=("x",), bounds_from_data=True, drop_missing=True)
    used = form.use(data, preview)
    assert used.dataset.domain.lower == (0.2,) and used.dataset.domain.upper == (0.9,) and used.dataset.n == 3
    assert used.clamping.rows == 0 and used.dataset.domain.provenance == "data"


def test_mixed_dataset_is_shareable_by_name():
    ds, src = sources.by_name("clinic")
    assert src.shareable and src.kind == "mixed" and ds.domain.is_mixed
    part = ds.numeric_only()
    assert part.domain.names == ds.domain.numeric_names and part.X.shape == (ds.n, 3)
    np.testing.assert_array_equal(ds.domain.numeric_rows(ds.to_frame()), part.X)
    np.testing.assert_array_equal(ds.domain.numeric_rows(ds.X), part.X)  # encoded rows: the same columns


def test_numeric_details_are_left_out_on_a_mixed_table():
    """A page whose detail views draw numeric grids skips them on a mixed table (and says so), so that a
    mechanism that starts taking categorical columns never meets a picture made for numeric cells."""
    from streamlit.testing.v1 import AppTest

    script = '''
import streamlit as st
from dashboard import ui as _ui
st.session_state["out"] = _ui.numeric_details(("release", "w1"))
'''
    for data, expected in ((clinic(50), None), (small_data(50), ("release", "w1"))):
        at = AppTest.from_string(script, default_timeout=60)
        at.session_state["dataset"] = data
        at.run()
        assert not at.exception, exceptions(at)
        assert at.session_state["out"] == expected
        assert bool(at.info) == (expected is None)


def test_a_shared_link_names_the_clinic_table():
    from apptest import APP, TIMEOUT
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params.update({"dataset": "clinic", "page": "data"})
    at.run()
    assert not at.exception, exceptions(at)
    assert at.session_state["dataset"].name == "clinic" and at.session_state["dataset"].domain.is_mixed
    assert at.query_params.get("dataset") in ("clinic", ["clinic"])  # and the URL keeps naming it
