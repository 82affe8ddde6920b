"""The analyst's workflow of issue 36 on the dashboard: W1 for a 200,000-row mixed table on every mechanism page
(a proven interval with its progress, never a red box), bad rows that cost a row, the weak-ε warning, the
domain that travels (download, ``dpsynth synth --domain``, the upload form), whole-number columns, the library's
advice worded as the dashboard's controls, and results kept with all their inputs (earlier work is labelled).

The library and command-line side is tests/core/test_cli_workflow.py (its clamping test drives the dashboard
too). The 200,000-row tests are marked slow: each runs the interval method at the readers' limit (about 20 s
on a loaded two-core machine) and a fresh release to download; benchmarks/bench_dashboard.py --dataset
mixed200k times them.
"""

from __future__ import annotations

import io
import json
import logging
import threading
import time

import numpy as np
import pandas as pd
import pytest
from apptest import APP, TIMEOUT, errors, exceptions, goto, new_app, small_data
from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage
from streamlit.testing.v1 import AppTest

from dashboard import registry, w1_live
from dashboard.controls import ADVICE_CONTROLS, DROP_BAD_ROWS, advice_words, with_controls
from dashboard.downloads import release_stem_part
from dashboard.fingerprint import inputs
from dashboard.headline import progress_text
from dpsynth_core import Domain
from dpsynth_core.clamping import BOUNDS_ADVICE
from dpsynth_core.dataset import Dataset
from dpsynth_core.domain_file import domain_json, read_domain
from dpsynth_core.privacy import weak_epsilon_note
from dpsynth_core.tabular._errors import KIND_ADVICE
from dpsynth_core.transport import W1Result, advice_for

BOUNDS = {"age": (0.0, 120.0), "bmi": (10.0, 60.0), "visits": (0.0, 30.0)}
CATEGORIES = {"sex": "F|M", "region": "north|east|south|west"}
COLUMNS = ["age", "bmi", "visits", "sex", "region"]
DOM = Domain([0, 10, 0], [120, 60, 30], names=COLUMNS,
             categories={"sex": ["F", "M"], "region": ["north", "east", "south", "west"]})
#: What a page must never show as advice: the library's keywords and the command line's flags.
NOT_CONTROLS = ("method=", "max_seconds", "drop_bad_rows", "--method", "--max-seconds", "--drop-bad-rows", "w1=")


def _table(n: int, seed: int = 0) -> pd.DataFrame:
    """A mixed table: 3 numeric columns (age and visits whole numbers) and 2 categorical ones."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"age": rng.uniform(18, 90, n).round(), "bmi": rng.normal(27, 4, n).clip(15, 45).round(1),
                         "visits": rng.poisson(2.5, n).clip(0, 30).astype(float),
                         "sex": rng.choice(["F", "M"], n), "region": rng.choice(["north", "east", "south", "west"], n)})


def _csv(df: pd.DataFrame) -> bytes:
    buf = io.StringIO()
    df.to_csv(buf, index=False)
    return buf.getvalue().encode()


def _upload(at: AppTest, name: str, data: bytes) -> AppTest:
    goto(at, "data")
    at.radio(key="data_source").set_value("Upload CSV").run()
    at.file_uploader(key="data_upload").set_value((name, data, "text/csv")).run()
    assert not at.exception, exceptions(at)
    return at


def _declare(at: AppTest, name: str, *, integers=(), use: bool = True) -> AppTest:
    """Every column chosen, the bounds and categories typed, optionally the whole-number columns; then "Use this
    data" (or "Save for later")."""
    at.multiselect(key=f"data_cols_{name}").set_value(COLUMNS).run()
    for column, (lo, hi) in BOUNDS.items():
        at.number_input(key=f"data_lo_{column}").set_value(lo)
        at.number_input(key=f"data_hi_{column}").set_value(hi)
    for column, text in CATEGORIES.items():
        at.text_area(key=f"data_cat_{column}").input(text)
    if integers:
        at.multiselect(key=f"data_int_{name}").set_value(list(integers))
    at.button(key="data_use_upload" if use else "data_save_upload").click().run()
    assert not at.exception, exceptions(at)
    return at


@pytest.fixture
def saved(monkeypatch):
    """Every file the page offers for download, by file name (what a browser would save)."""
    files: dict[str, bytes] = {}
    original = MemoryMediaFileStorage.load_and_get_id

    def record(self, path_or_data, mimetype, kind, filename=None):
        if filename:
            files[filename] = path_or_data if isinstance(path_or_data, bytes) else str(path_or_data).encode()
        return original(self, path_or_data, mimetype, kind, filename)

    monkeypatch.setattr(MemoryMediaFileStorage, "load_and_get_id", record)
    return files


def _texts(at: AppTest) -> list[str]:
    return [str(e.value) for kind in (at.markdown, at.caption, at.info, at.warning, at.error, at.success)
            for e in kind]


# ------------------------------------------------------------------------------- a 200,000-row mixed table
@pytest.fixture(scope="module")
def big():
    """The 200,000-row mixed table, uploaded as a CSV and declared in the upload form (the readers' limit)."""
    df = _table(200_000, 0)
    at = _declare(_upload(new_app(), "big.csv", _csv(df)), "big.csv")
    assert not errors(at), errors(at)
    ds = at.session_state["dataset"]
    assert ds.n == 200_000 and ds.domain == DOM
    return ds


@pytest.fixture
def held_start():
    """``hold()``: from then on, jobs wait for a gate before they start (the page is drawn while the interval is
    not known yet). Called after the app's first run (the home page's own W1 must not wait)."""
    gate, jobs, previous = threading.Event(), [], []

    def runner(job):
        jobs.append(job)
        threading.Thread(target=lambda: (gate.wait(), w1_live.run(job)), daemon=True).start()

    def hold():
        w1_live.clear()
        previous.append(w1_live.set_runner(runner))
        return gate, jobs

    yield hold
    gate.set()
    if previous:
        w1_live.set_runner(previous[0])
    for job in jobs:
        deadline = time.monotonic() + 300
        while not job.finished and job.state != "cancelled" and time.monotonic() < deadline:
            _wait_a_second(job)


def _wait_a_second(job: w1_live.Job) -> None:
    """Block until the job has finished or for about a second. ``Job.wait`` returns at once past ``seconds`` after
    the job's start, so a loop calling it with a fixed ``seconds`` would spin on a core the job needs."""
    job.wait(target=0.0, seconds=time.perf_counter() - job.started + 1.0)


#: The pages this test drives with the 200,000-row table: PMM (the tree), the marginal tables (auto's choice for a
#: mixed table) and the low-dimensional page (which offers the numeric columns). Every mechanism page is driven
#: the same way by ``benchmarks/bench_dashboard.py --dataset mixed200k`` (results/dashboard_mixed200k.json);
#: here the other four cost about 95 s of the suite's CPU and exercise the same headline and panel code.
MECHANISM_PAGES = ["pmm", "marginals", "low_dim"]


@pytest.mark.slow
@pytest.mark.parametrize("page", MECHANISM_PAGES)
def test_a_200000_row_mixed_table_on_the_mechanism_pages(big, page, held_start, saved, caplog):
    """The headline shows its progress while the proven interval is computed, then the interval; what the
    release preserves has its ceilings; the downloads work; no red box, no error in the server log, no advice
    worded as a keyword or a flag."""
    caplog.set_level(logging.WARNING, logger="dpsynth.dashboard")
    at = new_app(big)
    gate, jobs = held_start()
    goto(at, page)
    assert not exceptions(at) and not errors(at), (exceptions(at), errors(at))
    if registry.by_url(page).mechanism == "low_dim":  # no categorical columns: the offer of the numeric ones
        gate.set()
        at.button(key="numeric_only_low_dim").click().run()
        assert not exceptions(at) and not errors(at), (exceptions(at), errors(at))
        assert at.session_state["dataset"].domain.names == ("age", "bmi", "visits")
    else:
        job = jobs[-1]
        assert job.plan == "bracket_only" and job.interval_rows == (200_000, job.inputs[1].shape[0])
        assert next(m.value for m in at.metric if m.label.startswith("Distance")) == "computing …"
        bars = at.get("progress")
        assert len(bars) == 1 and "from every row (200,000 + " in bars[0].proto.text, bars
        assert any("come when the headline's W1 is known" in c.value for c in at.caption)
        gate.set()
        while not job.finished:
            _wait_a_second(job)
        assert job.state == "done" and job.latest.details["cells_solved"] == job.latest.details["cells"]
        assert [r[2] for r in job.history] == sorted((r[2] for r in job.history), reverse=True)  # it narrowed
        at.run()
        assert not exceptions(at) and not errors(at), (exceptions(at), errors(at))
        shown = next(m.value for m in at.metric if m.label.startswith("Distance"))
        assert shown.startswith("[") or shown.startswith("≈"), shown
        assert any(c.value.startswith("W1 is certified to lie in") for c in at.caption)
        assert not at.get("progress")
    ceilings = [c.value for c in at.caption if c.value.startswith("Every statistic that is L-Lipschitz")]
    assert ceilings, "no ceilings in what the release preserves"
    make = [b for b in at.button if b.key and b.key.startswith("make_")]
    assert len(make) == 1
    make[0].click().run()
    assert not exceptions(at) and not errors(at), (exceptions(at), errors(at))
    ds = at.session_state["dataset"]
    mine = {k: v for k, v in saved.items() if k.startswith(release_stem_part(ds.name) + "_")}  # not the home page's
    csv = next(v for k, v in mine.items() if k.endswith("_synthetic.csv"))
    assert csv.decode().splitlines()[0] == ",".join(ds.domain.names)
    report = json.loads(next(v for k, v in mine.items() if k.endswith("_report.json")))
    assert report["epsilon"] == 1.0 and Domain.from_dict(report["domain"]) == ds.domain
    assert read_domain(mine[f"{release_stem_part(ds.name)}_domain.json"]) == ds.domain
    text = " ".join(_texts(at))
    assert not [w for w in NOT_CONTROLS if w in text], [w for w in NOT_CONTROLS if w in text]
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], [r.getMessage() for r in caplog.records]


def test_the_interval_progress_says_how_far_it_is():
    job = w1_live.Job("k", "bracket_only", lambda: iter(()), inputs=(np.zeros((200_000, 5)), np.zeros((200_177, 5))),
                      metric="mixed")
    assert job.progress == 0.0 and "next in line" in progress_text(job)  # queued behind another job
    job.state = "running"
    assert "placing the rows in small cells" in progress_text(job)
    assert not job.waits_for_first  # the interval at this size: the page does not wait for it
    job.latest = W1Result(0.03, 0.01, 0.03, "interval", False, True, details={"cells": 1090, "cells_solved": 436})
    assert job.progress == pytest.approx(0.4) and "436 of 1,090 cells" in progress_text(job)
    numeric = w1_live.Job("k", "bracket_only", lambda: iter(()), inputs=(np.zeros((9, 3)), np.zeros((9, 3))))
    assert numeric.progress is None and numeric.waits_for_first  # the grid: within the page's wait


# ------------------------------------------------------------------------------- bad rows cost a row
def test_a_bad_cell_costs_its_row_said_to_the_owner_and_kept_out_of_every_download(saved):
    df = _table(300, 3)
    raw = _csv(df).decode().splitlines()
    raw[6] = raw[6].replace(raw[6].split(",")[0], "thirty", 1)  # data row 5, spreadsheet row 7, column 'age'
    at = _upload(new_app(), "bad.csv", ("\n".join(raw) + "\n").encode())
    refusal = " ".join(errors(at))
    assert "row 7, column 'age'" in refusal and f"(the box *{DROP_BAD_ROWS}* of the upload form)" in refusal
    assert not [w for w in NOT_CONTROLS if w in refusal], refusal
    at.checkbox(key="data_dropbad_bad.csv").check().run()
    assert not errors(at), errors(at)
    note = next(c.value for c in at.caption if "Dropped 1 row with a bad cell" in c.value)
    assert "row 7, column 'age'" in note and "owner view" in note and "never part of a release" in note
    _declare(at, "bad.csv")
    assert not errors(at), errors(at)
    used = at.session_state["dataset"]
    clean = Dataset.from_frame(df.drop(index=5).reset_index(drop=True), DOM, "clean", "")
    assert used.n == 299 and np.array_equal(used.X, clean.X)  # exactly the other rows
    assert any("Dropped 1 row with a bad cell" in i.value and "owner view" in i.value for i in at.info)
    goto(at, "pmm")
    at.button(key="make_pmm").click().run()
    assert not exceptions(at) and not errors(at), (exceptions(at), errors(at))
    assert {k.rsplit("_", 1)[-1] for k in saved} >= {"synthetic.csv", "report.json", "domain.json"}
    for name, content in saved.items():  # the count and where: in no download
        text = content.decode()
        assert "Dropped" not in text and "bad cell" not in text and "row 7" not in text, name
        assert "thirty" not in text, name


def test_a_value_outside_the_declared_categories_costs_its_row_too():
    df = _table(200, 4)
    df.loc[10, "region"] = "Atlantis"
    at = _declare(_upload(new_app(), "cats.csv", _csv(df)), "cats.csv")
    refusal = " ".join(errors(at))
    assert "'Atlantis'" in refusal and f"*{DROP_BAD_ROWS}*" in refusal, refusal
    assert at.session_state["dataset"].name != "cats"
    at.checkbox(key="data_dropbad_cats.csv").check().run()
    at.button(key="data_use_upload").click().run()
    assert not errors(at), errors(at)
    assert at.session_state["dataset"].n == 199
    assert any("Dropped 1 row with a bad cell" in i.value and "'region'" in i.value for i in at.info)


# ------------------------------------------------------------------------------- ε without protection
@pytest.mark.parametrize("name", ["eps", "epsilon"])
def test_epsilon_of_a_million_in_a_link_gets_the_librarys_warning(name):
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params[name] = "1e6"
    at.query_params["dataset"] = "clinic"
    at.run()
    assert not exceptions(at)
    note = weak_epsilon_note(100.0)  # the link's ε is snapped to the slider's top, said in the sidebar
    sidebar = [w.value for w in at.sidebar.warning]
    assert any(f"{name}=1e+06 is outside the slider's range" in w for w in sidebar) and note in sidebar, sidebar
    goto(at, "pmm")
    assert not exceptions(at) and not errors(at), errors(at)
    assert [w.value for w in at.main.warning].count(note) == 1  # the release's warning, once (not in its notes)
    technical = [c.value for exp in at.expander if exp.label.startswith("Technical notes") for c in exp.caption]
    assert note not in technical
    at.sidebar.select_slider(key="epsilon").set_value(10.0).run()
    assert not any("no meaningful protection" in w.value for w in at.warning)


def test_sweeps_and_the_digits_say_when_their_largest_epsilon_protects_nothing():
    at = goto(new_app(small_data()), "low_dim")
    at.button(key="ld_use_plane").click().run()
    at.segmented_control(key="ld_view").set_value("Angle against ε").run()
    assert any(c.value.endswith(weak_epsilon_note(100.0)) for c in at.caption)  # the default choices reach 100
    at.multiselect(key="ld_eps").set_value([0.3, 1.0]).run()
    assert not any("no meaningful protection" in c.value for c in at.caption)
    at.segmented_control(key="ld_view").set_value("Synthetic digits").run()
    assert any(c.value.endswith(weak_epsilon_note(1000.0)) for c in at.caption)


# ------------------------------------------------------------------------------- the domain travels
def test_the_domain_travels_from_the_dashboard_to_the_command_line_and_back(tmp_path, saved):
    from dpsynth_core.cli import main

    df = _table(400, 7)
    at = _declare(_upload(new_app(), "people.csv", _csv(df)), "people.csv", integers=("age", "visits"))
    declared = at.session_state["dataset"].domain
    assert declared.integers == ("age", "visits") and declared.names == tuple(COLUMNS)
    file = saved["people_domain.json"]  # the Data page's "This table's public domain"
    assert file.decode() == domain_json(declared) and read_domain(file) == declared
    (tmp_path / "people_domain.json").write_bytes(file)
    df.to_csv(tmp_path / "people.csv", index=False)
    assert main(["synth", str(tmp_path / "people.csv"), "-m", "pmm", "-e", "1", "--domain",
                 str(tmp_path / "people_domain.json"), "-o", str(tmp_path / "syn.csv"), "-q"]) == 0
    syn = pd.read_csv(tmp_path / "syn.csv")
    assert list(syn.columns) == COLUMNS and (syn["age"] % 1 == 0).all()  # whole numbers, as declared
    # back: a new session fills the upload form from the domain file, and uses the same domain
    at = _upload(new_app(), "people.csv", _csv(df))
    at.file_uploader(key="data_domain_file_people.csv").set_value(("people_domain.json", file,
                                                                   "application/json")).run()
    assert not exceptions(at) and not errors(at), errors(at)
    assert at.multiselect(key="data_cols_people.csv").value == COLUMNS
    assert at.number_input(key="data_hi_bmi").value == 60.0 and at.text_area(key="data_cat_region").value == \
        "north\neast\nsouth\nwest"
    assert at.multiselect(key="data_int_people.csv").value == ["age", "visits"]
    at.button(key="data_use_upload").click().run()
    assert not errors(at), errors(at)
    assert at.session_state["dataset"].domain == declared


def test_a_domain_file_that_does_not_fit_is_said_in_its_own_words():
    df = _table(100, 8)
    at = _upload(new_app(), "p.csv", _csv(df))
    for content, words in [(b"{not json", "is not valid JSON"),
                           (domain_json(Domain([0], [1], names=["height"])).encode(), "'height'"),
                           (domain_json(Domain([0], [1], names=["age"], provenance="data")).encode(),
                            "read off the data")]:
        at.file_uploader(key="data_domain_file_p.csv").set_value(("d.json", content, "application/json")).run()
        assert not exceptions(at)
        assert any(words in e for e in errors(at)), (words, errors(at))
        at.file_uploader(key="data_domain_file_p.csv").set_value(None).run()


# ------------------------------------------------------------------------------- whole-number columns
def test_whole_number_columns_are_kept_with_the_users_work_and_every_release_rounds_them():
    at = _declare(_upload(new_app(), "ints.csv", _csv(_table(300, 9))), "ints.csv", integers=("visits",),
                  use=False)
    goto(at, "pmm")
    goto(at, "data")  # the work is kept across pages, as the bounds are
    assert at.multiselect(key="data_int_ints.csv").value == ["visits"]
    at.button(key="data_use_upload").click().run()
    assert at.session_state["dataset"].domain.integers == ("visits",)
    goto(at, "pmm")
    assert not exceptions(at) and not errors(at)
    at.button(key="make_pmm").click().run()
    fresh = at.session_state["fresh_pmm"][1]
    visits = fresh.domain.table(fresh.synthetic)["visits"]
    assert fresh.domain.integers == ("visits",) and (visits % 1 == 0).all() and visits.between(0, 30).all()


# ------------------------------------------------------------------------------- the library's advice
def test_every_advice_of_the_library_has_the_dashboards_words_or_none():
    advice = [a for group in KIND_ADVICE.values() for a in group] + list(BOUNDS_ADVICE)
    advice += list(advice_for(W1Result(0.3, 0.2, 0.3, "interval", False, True)))
    advice += list(advice_for(W1Result(0.3, 0.2, 0.3, "sparse", False, True)))
    assert {a.param for a in advice} == set(ADVICE_CONTROLS)
    for a in advice:
        words = advice_words(a)
        keyword = (a.param,) if "_" in a.param else ()  # "drop_bad_rows", not the word "missing" of a label
        assert words is None or not any(w in words for w in ("=", "--", *keyword)), words
    message = "The CSV data has a cell that is not a number at row 3, column 'age': drop the rows that hold such cells."
    assert with_controls(message, KIND_ADVICE["not_a_number"]).endswith(
        f"drop the rows that hold such cells (the box *{DROP_BAD_ROWS}* of the upload form).")
    with pytest.raises(KeyError, match="ADVICE_CONTROLS"):
        advice_words(type(advice[0])("a_new_option", 1, "why"))


# ------------------------------------------------------------------------------- results never stale
def _other_content(n: int = 400) -> Dataset:
    """A table with the same name, size and domain as small_data() but other rows."""
    other = small_data(n, seed=2)
    assert other.name == small_data(n).name and other.n == n and not np.array_equal(other.X, small_data(n).X)
    return other


def _earlier(at: AppTest) -> list[str]:
    return [i.value for i in at.info if "**Earlier result**" in i.value or "**A release made earlier**" in i.value]


def test_the_certificate_sweep_of_another_table_is_labelled_earlier_work():
    at = goto(new_app(small_data()), "sparse_marginals")
    at.segmented_control(key="sm_view").set_value("Certificate sweep").run()
    at.multiselect(key="sm_eps").set_value([1.0]).run()
    at.slider(key="sm_reps").set_value(1).run()
    at.button(key="sm_run").click().run()
    assert not exceptions(at) and not errors(at), errors(at)
    assert not _earlier(at)
    at.session_state["dataset"] = _other_content()  # same name and size, other rows: another table
    at.run()
    earlier = _earlier(at)
    assert len(earlier) == 1 and "small (400 rows)" in earlier[0] and "(data changed since)" in earlier[0], earlier
    assert "**Run the certificate sweep**" in earlier[0]


def test_the_angle_sweep_is_labelled_earlier_work_when_its_repeats_or_epsilons_change():
    at = goto(new_app(small_data()), "low_dim")
    at.button(key="ld_use_plane").click().run()
    at.segmented_control(key="ld_view").set_value("Angle against ε").run()
    at.multiselect(key="ld_eps").set_value([1.0, 3.0]).run()
    at.slider(key="ld_reps").set_value(1).run()
    at.button(key="ld_run").click().run()
    assert not exceptions(at) and not errors(at) and not _earlier(at)
    at.slider(key="ld_reps").set_value(2).run()
    earlier = _earlier(at)
    assert len(earlier) == 1 and "(repeats changed since)" in earlier[0] and "repeats: 1" in earlier[0], earlier
    at.slider(key="ld_reps").set_value(1).run()
    assert not _earlier(at)  # the same inputs again: the result is current
    at.multiselect(key="ld_eps").set_value([1.0, 10.0]).run()
    assert any("(ε changed since)" in e and "ε ∈ {1, 3}" in e for e in _earlier(at)), _earlier(at)


def test_the_digits_experiment_is_labelled_earlier_work_when_its_inputs_change():
    at = goto(new_app(small_data()), "low_dim")
    at.button(key="ld_use_plane").click().run()
    at.segmented_control(key="ld_view").set_value("Does it help a classifier?").run()
    at.multiselect(key="ld_svm_eps").set_value([8.0]).run()
    at.multiselect(key="ld_svm_dims").set_value([2]).run()
    at.button(key="ld_svm_run").click().run()
    assert not exceptions(at) and not errors(at) and not _earlier(at)
    at.multiselect(key="ld_svm_dims").set_value([2, 4]).run()
    assert any("(dimensions changed since)" in e for e in _earlier(at)), _earlier(at)
    at.multiselect(key="ld_svm_dims").set_value([2]).run()
    at.sidebar.number_input(key="seed").set_value(7).run()
    assert any("(seed changed since)" in e and "seed 0" in e for e in _earlier(at)), _earlier(at)


def test_a_comparison_and_a_fresh_release_of_another_table_are_earlier_work():
    at = goto(new_app(small_data(300)), "compare")
    at.multiselect(key="compare_mechs").set_value(["flat_histogram", "pmm"]).run()
    at.button(key="compare_run").click().run()
    assert not exceptions(at) and not errors(at) and not _earlier(at)
    at.session_state["dataset"] = _other_content(300)
    at.run()
    assert any("(data changed since)" in e for e in _earlier(at)), _earlier(at)
    goto(at, "pmm")
    at.button(key="make_pmm").click().run()
    assert not _earlier(at) and any(b.proto.label == "Synthetic data (CSV)" for b in at.get("download_button"))
    at.session_state["dataset"] = small_data(300)
    at.run()
    earlier = _earlier(at)
    assert len(earlier) == 1 and earlier[0].startswith("**A release made earlier**") and "(data changed since)" in \
        earlier[0], earlier
    assert not any(b.proto.label == "Synthetic data (CSV)" for b in at.get("download_button"))  # not offered as current


def test_inputs_compare_by_content_and_say_what_changed():
    a, b = small_data(300), _other_content(300)
    assert inputs(data=a, epsilon=1.0) == inputs(data=small_data(300), epsilon=1.0)  # equal rows: equal inputs
    assert inputs(data=b, epsilon=1.0).changed(inputs(data=a, epsilon=1.0)) == ["data"]
    assert inputs(data=a, epsilon=[1.0, 3.0], repeats=2).changed(inputs(data=a, epsilon=[1.0], repeats=2)) == ["ε"]
    assert inputs(data=a, delta=1e-6, neighbours="replace").words() == \
        "small (300 rows); δ = 10⁻⁶; replace one record neighbours"
    shifted = Dataset(a.X, Domain([0, 0], [1, 2], names=("a", "b")), a.name, "")  # the domain is an input too
    assert inputs(data=shifted).changed(inputs(data=a)) == ["data"]
