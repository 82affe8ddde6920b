"""The analyst's workflow of issue 36 on the library and the command line: W1 at every size the readers
accept, bad rows that cost a row, one answer to bounds that clamp most rows, a warning where ε protects
nothing, the domain that travels, integer columns declared and compared as integers.

Most tests run the command in process (``main``); the 200,000-row acceptance table runs the installed
console script (marked slow: about a minute on two cores; benchmarks/bench_limits.py times it).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpsynth_core import ClampedRowsWarning, Domain, run
from dpsynth_core import transport as tr
from dpsynth_core.clamping import clamping
from dpsynth_core.cli import SCHEDULER_ENV, main
from dpsynth_core.domain_file import DomainFileError, domain_json, read_domain
from dpsynth_core.privacy import WEAK_EPSILON, weak_epsilon_note
from dpsynth_core.tabular import read_table

CATS = "sex=F|M;region=north|east|south|west"
DOM = Domain([0, 10, 0], [120, 60, 30], names=["age", "bmi", "visits", "sex", "region"],
             categories={"sex": ["F", "M"], "region": ["north", "east", "south", "west"]})


def _table(n: int, seed: int = 0) -> pd.DataFrame:
    """A mixed table: 3 numeric columns (two of whole numbers) and 2 categorical ones."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"age": rng.uniform(18, 90, n).round(), "bmi": rng.normal(27, 4, n).clip(15, 45).round(1),
                         "visits": rng.poisson(2.5, n).clip(0, 30).astype(float),
                         "sex": rng.choice(["F", "M"], n), "region": rng.choice(["north", "east", "south", "west"], n)})


def _err(capsys) -> str:
    return capsys.readouterr().err


# ------------------------------------------------------------------------------------- W1 at every size
def test_w1_and_report_beyond_the_exact_sizes_exit_0_with_a_certified_interval_in_flags(tmp_path, capsys,
                                                                                      monkeypatch):
    """The exact limits lowered (the same path as a 200,000-row table, at a size where dense POT gives the
    reference): ``w1`` prints the interval's upper end, says on stderr that it is an interval and which flags
    give the exact value -- flags, never Python keywords; ``report`` uses the same interval for its ceilings."""
    real, syn = _table(700, 1), _table(650, 2)
    real.to_csv(tmp_path / "real.csv", index=False)
    syn.to_csv(tmp_path / "syn.csv", index=False)
    exact = tr.wasserstein1(real, syn, domain=DOM, method="pot")
    monkeypatch.setattr(tr.policy, "AUTO_MIXED_POT_PAIRS", 1000)
    monkeypatch.setattr(tr.policy, "AUTO_MIXED_UNBALANCED_PAIRS", 1000)
    monkeypatch.setattr(tr.policy, "AUTO_SPARSE_MAX_POINTS", 1000)
    args = [str(tmp_path / "real.csv"), str(tmp_path / "syn.csv"), "-b", "0:120,10:60,0:30", "--categories", CATS]
    assert main(["w1", *args, "-q"]) == 0
    out, err = capsys.readouterr()
    lo, hi = (float(v) for v in re.search(r"certified to lie in \[([^,]+), ([^\]]+)\]", err).groups())
    assert lo <= exact * (1 + 1e-9) and exact <= hi * (1 + 1e-6) and float(out) == pytest.approx(hi, rel=1e-5)
    assert "--method sparse" in err and "--max-seconds S" in err and "method=" not in err and "max_seconds" not in err
    assert main(["w1", *args, "--json", "-q"]) == 0
    figures = json.loads(capsys.readouterr().out)
    assert figures["method"] == "interval" and figures["exact"] is False and figures["lower"] <= figures["w1"]
    assert main(["report", *args, "-o", str(tmp_path / "owner.json"), "-q"]) == 0
    err = _err(capsys)
    assert "upper end of a certified interval" in err and "--method sparse" in err and "--w1 W" in err
    rep = json.loads((tmp_path / "owner.json").read_text())
    assert rep["w1"]["value"] >= exact * (1 - 1e-12) and "certified interval" in rep["w1"]["source"]
    assert all(g["holds"] for g in rep["guarantees"]) and rep["contradictions"] == 0


def test_w1_and_report_read_a_synthetic_file_above_the_readers_limit_for_data(tmp_path, capsys):
    """``synth`` at the reader's limit writes a noisy number of rows, a few more: ``w1`` and ``report`` read
    the synthetic file up to what ``synth`` writes (1,000,000 rows), the data file up to the reader's limit."""
    from dpsynth_core.tabular.read import MAX_ROWS

    rng = np.random.default_rng(3)
    pd.DataFrame({"x": rng.random(500)}).to_csv(tmp_path / "real.csv", index=False)
    pd.DataFrame({"x": rng.random(MAX_ROWS + 37).round(4)}).to_csv(tmp_path / "syn.csv", index=False)
    assert main(["w1", str(tmp_path / "real.csv"), str(tmp_path / "syn.csv"), "-b", "0:1", "-q"]) == 0
    assert 0 <= float(capsys.readouterr().out) <= 1
    assert main(["report", str(tmp_path / "real.csv"), str(tmp_path / "syn.csv"), "-b", "0:1", "-q"]) == 0
    assert f"{MAX_ROWS + 37} rows" in capsys.readouterr().out


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_a_200000_row_mixed_table_released_and_compared_with_its_release(tmp_path):
    """Issue 36's acceptance table: 3 numeric + 2 categorical columns, 200,000 rows, released by the installed
    ``dpsynth synth`` and compared with its own release by ``dpsynth w1`` and ``dpsynth report``: both exit 0,
    the first with a value or a certified interval and saying which."""
    _table(200_000, 7).to_csv(tmp_path / "big.csv", index=False)
    exe = [sys.executable, "-m", "dpsynth_core.cli"]
    dom = ["-b", "0:120,10:60,0:30", "--categories", CATS, "--integers", "age,visits"]
    synth = subprocess.run([*exe, "synth", str(tmp_path / "big.csv"), "-m", "pmm", "-e", "1", *dom, "-q",
                            "-o", str(tmp_path / "syn.csv")], capture_output=True, text=True)
    assert synth.returncode == 0, synth.stderr
    w1 = subprocess.run([*exe, "w1", str(tmp_path / "big.csv"), str(tmp_path / "syn.csv"), *dom, "--json", "-q"],
                        capture_output=True, text=True)
    assert w1.returncode == 0, w1.stderr
    figures = json.loads(w1.stdout)
    assert 0 <= figures["lower"] <= figures["w1"] <= figures["upper"] <= 1
    assert figures["exact"] or "certified to lie in" in w1.stderr
    rep = subprocess.run([*exe, "report", str(tmp_path / "big.csv"), str(tmp_path / "syn.csv"), *dom, "-q"],
                         capture_output=True, text=True)
    assert rep.returncode == 0, rep.stderr
    assert "W1 = " in rep.stdout and "Integer columns" in rep.stdout


# ------------------------------------------------------------------------------------- bad rows
def _bad_cell_csv(path: Path) -> pd.DataFrame:
    """A table with one stray word in a numeric column (row 5 of the file, column 'age'); returns the
    table without that row."""
    df = _table(300, 4)
    text = df.astype({"age": object})
    text.loc[3, "age"] = "forty"
    text.to_csv(path, index=False)
    return df.drop(index=3).reset_index(drop=True)


@pytest.mark.parametrize("engine", ["numpy", "dask"])
def test_one_bad_cell_costs_one_row_and_the_count_stays_out_of_the_outputs(engine, tmp_path, capsys, monkeypatch):
    """Refused without the flag (naming it); with --drop-bad-rows the release is made from the other rows:
    stderr says how many and where, and the outputs are byte for byte those of the file without the row (so
    nothing in them depends on the count)."""
    monkeypatch.setenv(SCHEDULER_ENV, "synchronous")
    clean = _bad_cell_csv(tmp_path / "bad.csv")
    clean.to_csv(tmp_path / "clean.csv", index=False)
    common = ["-m", "pmm", "-e", "1", "-b", "0:120,10:60,0:30", "--categories", CATS, "--seed", "11",
              "--engine", engine]
    assert main(["synth", str(tmp_path / "bad.csv"), *common, "-o", str(tmp_path / "x.csv")]) == 1
    assert "add --drop-bad-rows to drop the rows that hold such cells" in _err(capsys)
    assert main(["synth", str(tmp_path / "bad.csv"), *common, "--drop-bad-rows", "-o", str(tmp_path / "a.csv"),
                 "--report", str(tmp_path / "a.json")]) == 0
    err = _err(capsys)
    assert "warning: " in err and "Dropped 1 row with a bad cell" in err and "row 5" in err and "'age'" in err
    assert "for your eyes only, in no release, report or export" in err
    assert main(["synth", str(tmp_path / "clean.csv"), *common, "-o", str(tmp_path / "b.csv"),
                 "--report", str(tmp_path / "b.json")]) == 0
    assert (tmp_path / "a.csv").read_bytes() == (tmp_path / "b.csv").read_bytes()
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()


def test_drop_bad_rows_in_the_library_drops_and_locates_every_kind_of_bad_cell():
    data = b"age,bmi,sex\n30,22,F\nthirty,23,M\n40,inf,F\n50,25,X\n60,26,M\n"
    t = read_table(data, categories={"sex": ["F", "M"]}, drop_bad_rows=True)
    assert t.frame["age"].tolist() == [30.0, 60.0] and t.bad_rows == 3
    assert t.bad_cells == ((3, "age"), (4, "bmi"), (5, "sex"))
    assert any(n.startswith("Dropped 3 rows with a bad cell") and "The count depends on your data" in n
               for n in t.notes)
    with pytest.raises(ValueError, match="drop the rows that hold such cells") as info:
        read_table(data, categories={"sex": ["F", "M"]})
    assert [a.python() for a in info.value.advice] == ["drop_bad_rows=True"]


# ------------------------------------------------------------------------------------- clamping: one answer
def test_bounds_clamping_90_percent_get_the_same_decision_and_counts_from_library_cli_and_dashboard(tmp_path,
                                                                                                    capsys):
    """The library's run, the library's count, the command line and the dashboard (its upload form and a
    mechanism page, in Streamlit's AppTest) on the same table and bounds: the same numbers, the same decision
    (a warning naming the share; the release goes ahead), each front end naming what to change in its own
    terms."""
    df = _table(1000, 5)
    df.loc[df.index[:100], "age"] = 55.0  # 10% inside 40:70 on age, everything else in its bounds
    df.loc[df.index[100:], "age"] = np.where(np.arange(900) % 2, 20.0, 85.0)
    df.to_csv(tmp_path / "t.csv", index=False)
    dom = Domain([40, 10, 0], [70, 60, 30], names=list(df.columns), categories=DOM.categories)
    counted = clamping(df, dom)
    assert (counted.n, counted.rows, counted.level) == (1000, 900, "most") and counted.goes_ahead
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rel = run("pmm", df, dom, epsilon=1.0)
    lib = [w for w in caught if issubclass(w.category, ClampedRowsWarning)]
    assert len(lib) == 1 and lib[0].message.clamping == counted and rel.owner.n_clamped == 900
    assert main(["synth", str(tmp_path / "t.csv"), "-m", "pmm", "-e", "1", "-b", "40:70,10:60,0:30",
                 "--categories", CATS, "-o", str(tmp_path / "o.csv"), "-q"]) == 0
    err = _err(capsys)
    assert (tmp_path / "o.csv").exists()  # the same decision: the release went ahead
    head = "900 of 1,000 rows (90%) have a value outside the bounds"
    assert head in str(lib[0].message) and head in err and "'age' (450 below, 450 above)" in err
    assert "check --bounds and the unit of that column" in err
    assert "check the domain's lower and upper bounds" in str(lib[0].message)
    shown = _dashboard_uses(tmp_path / "t.csv", {"age": (40, 70), "bmi": (10, 60), "visits": (0, 30)},
                            {"sex": "F|M", "region": "north|east|south|west"})
    assert len(shown["data"]) == 1 and len(shown["pmm"]) == 1, shown  # said once on each page
    for text in (shown["data"][0], shown["pmm"][0]):
        assert head in text and "'age' (450 below, 450 above)" in text
        assert "check the bound boxes of the upload form on the Data and bounds page" in text
    assert shown["used"] == (1000, dom) and shown["released"]  # the same decision: the release went ahead


def _dashboard_uses(path: Path, bounds: dict, categories: dict) -> dict:
    """The dashboard (AppTest) given the CSV ``path``: every column chosen, the bounds and categories typed,
    "Use this data"; then the PMM page. Returns the clamping warnings each page showed, the table used (n and
    domain) and whether PMM released it."""
    root = Path(__file__).resolve().parents[2]
    for extra in (str(root), str(root / "tests" / "app")):
        if extra not in sys.path:
            sys.path.insert(0, extra)
    from apptest import errors, exceptions, goto, new_app

    at = goto(new_app(), "data")
    at.radio(key="data_source").set_value("Upload CSV").run()
    name = path.name
    at.file_uploader(key="data_upload").set_value((name, path.read_bytes(), "text/csv")).run()
    at.multiselect(key=f"data_cols_{name}").set_value(list(pd.read_csv(path, nrows=0).columns)).run()
    for column, (lo, hi) in bounds.items():
        at.number_input(key=f"data_lo_{column}").set_value(float(lo))
        at.number_input(key=f"data_hi_{column}").set_value(float(hi))
    for column, text in categories.items():
        at.text_area(key=f"data_cat_{column}").input(text)
    at.button(key="data_use_upload").click().run()
    assert not exceptions(at) and not errors(at), (exceptions(at), errors(at))

    def clamping_warnings():
        return [w.value for w in at.warning if "outside the bounds" in w.value]

    shown = {"data": clamping_warnings(), "used": (at.session_state["dataset"].n, at.session_state["dataset"].domain)}
    goto(at, "pmm")
    assert not exceptions(at) and not errors(at), (exceptions(at), errors(at))
    shown["pmm"] = clamping_warnings()
    shown["released"] = at.session_state["release_info"] is not None
    return shown


def test_the_unit_cube_count_and_the_clamping_count_are_one_rule_even_where_rounding_differs():
    """x a hair above the upper bound maps to exactly 1.0 in the unit cube: it is still outside (both counts
    compare the numbers as they are)."""
    dom = Domain([0.1], [0.7])
    X = np.array([[np.nextafter(0.7, 1.0)], [0.7], [0.1], [0.4]])
    U, n_clamped = dom.to_unit(X, return_clamped=True)
    assert U[0, 0] == 1.0 and n_clamped == clamping(X, dom).rows == 1


# ------------------------------------------------------------------------------------- ε without protection
def test_epsilon_above_ten_gets_a_warning_in_the_library_and_on_the_command_line(tmp_path, capsys):
    df = _table(200, 6)
    df.to_csv(tmp_path / "t.csv", index=False)
    rel = run("pmm", df, DOM, epsilon=1e6, rng=1)
    assert rel.notes[0] == weak_epsilon_note(1e6) and "no meaningful protection" in rel.notes[0]
    assert not any("meaningful" in n for n in run("pmm", df, DOM, epsilon=WEAK_EPSILON, rng=1).notes)
    assert main(["synth", str(tmp_path / "t.csv"), "-m", "pmm", "-e", "1e6", "-b", "0:120,10:60,0:30",
                 "--categories", CATS, "-o", str(tmp_path / "o.csv"), "--report", str(tmp_path / "r.json"),
                 "-q"]) == 0
    err = _err(capsys)
    assert "warning: ε = 1e+06 gives no meaningful protection" in err and "Give --epsilon of at most 10" in err
    assert json.loads((tmp_path / "r.json").read_text())["notes"][0].startswith("ε = 1e+06 gives no meaningful")


# ------------------------------------------------------------------------------------- the domain travels
def test_the_reports_domain_block_declares_the_next_release_as_it_is(tmp_path, capsys):
    df = _table(400, 8)
    df.to_csv(tmp_path / "t.csv", index=False)
    flags = ["-b", "0:120,10:60,0:30", "--categories", CATS, "--integers", "age,visits"]
    assert main(["synth", str(tmp_path / "t.csv"), "-m", "pmm", "-e", "1", *flags, "--seed", "3",
                 "-o", str(tmp_path / "a.csv"), "--report", str(tmp_path / "public.json"), "-q"]) == 0
    assert main(["report", str(tmp_path / "t.csv"), str(tmp_path / "a.csv"), *flags, "-o",
                 str(tmp_path / "owner.json"), "-q"]) == 0
    for source in ("public.json", "owner.json"):
        assert main(["synth", str(tmp_path / "t.csv"), "-m", "pmm", "-e", "1", "--domain", str(tmp_path / source),
                     "--seed", "3", "-o", str(tmp_path / "b.csv"), "-q"]) == 0
        assert (tmp_path / "b.csv").read_bytes() == (tmp_path / "a.csv").read_bytes(), source
    capsys.readouterr()
    # the domain file itself (the dashboard's download), and its errors in the file's terms
    dom = read_domain(tmp_path / "public.json")
    assert dom.integers == ("age", "visits") and read_domain(domain_json(dom).encode()) == dom
    with pytest.raises(DomainFileError, match=r"not valid JSON: .* at line 1, column"):
        read_domain(b'{"lower": [0}')
    with pytest.raises(DomainFileError, match="'lower' list of bounds"):
        read_domain({"upper": [1]})


# ------------------------------------------------------------------------------------- integer columns
def test_integer_columns_are_declared_never_inferred_and_compared_as_integers(tmp_path, capsys):
    df = _table(600, 9)
    df.to_csv(tmp_path / "t.csv", index=False)
    dom = ["-b", "0:120,10:60,0:30", "--categories", CATS]
    assert main(["synth", str(tmp_path / "t.csv"), "-m", "pmm", "-e", "1", *dom, "--integers", "visits",
                 "-o", str(tmp_path / "s.csv"), "-q"]) == 0
    syn = pd.read_csv(tmp_path / "s.csv")
    assert np.array_equal(syn["visits"], syn["visits"].round()) and not np.array_equal(syn["age"], syn["age"].round())
    assert main(["report", str(tmp_path / "t.csv"), str(tmp_path / "s.csv"), *dom, "--integers", "visits",
                 "-o", str(tmp_path / "r.json")]) == 0
    out = capsys.readouterr().out
    assert "Integer columns" in out and "visits" in out.split("Integer columns")[1].split("\n\n")[0]
    col = next(c for c in json.loads((tmp_path / "r.json").read_text())["columns"] if c["name"] == "visits")
    assert col["integer"] is True and col["synthetic_whole"] == 1.0 and col["values"] == list(range(31))
    assert sum(col["real_value_shares"]) == pytest.approx(1.0) and len(col["synthetic_value_shares"]) == 31
    # whole numbers in the file are not declared integers: 'age' holds only whole numbers and stays numeric
    assert main(["report", str(tmp_path / "t.csv"), str(tmp_path / "s.csv"), *dom, "-o", "-", "-q"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert "integers" not in rep["domain"] and not any(c.get("integer") for c in rep["columns"])
    # a wrong declaration is said in the command's words
    assert main(["synth", str(tmp_path / "t.csv"), "-m", "pmm", "-e", "1", *dom, "--integers", "sex",
                 "-o", str(tmp_path / "x.csv")]) == 1
    assert "'integers' parameter of dpsynth synth must name numeric columns" in _err(capsys)
