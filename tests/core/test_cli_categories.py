"""Categorical columns on the command line (issue 26 item 4): ``--categories``, ``--domain`` (a JSON
domain file), Parquet input, the dask engine, and hostile inputs, each a one-line error with nothing
written.

The dask tests compute with Dask's synchronous scheduler (``DPSYNTH_DASK_SCHEDULER=synchronous``), as
tests/core/test_cli_dask.py does; the releases must be byte for byte those of the numpy engine.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpsynth_core import Domain, export
from dpsynth_core import cli as cli_package
from dpsynth_core.cli import main
from dpsynth_core.cli._common import DOMAIN_FILE_MAX_BYTES
from dpsynth_core.domain import MAX_CATEGORIES
from dpsynth_core.mechanisms import run
from dpsynth_core.tabular import read_table

CATS = "sex=F|M;region=north|south|east"
BOUNDS = "0:120,10:60"
DOMAIN = {"lower": [0, 10], "upper": [120, 60], "names": ["age", "sex", "bmi", "region"],
          "categories": {"sex": ["F", "M"], "region": ["north", "south", "east"]}}


@pytest.fixture(autouse=True)
def _synchronous(monkeypatch):
    monkeypatch.setenv(cli_package.SCHEDULER_ENV, "synchronous")


def _table(n: int = 600, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"age": rng.uniform(18, 90, n).round(2), "sex": rng.choice(["F", "M"], n),
                         "bmi": rng.normal(27, 4, n).clip(15, 45), "region": rng.choice(["north", "south", "east"], n)})


def _write(path: Path, df: pd.DataFrame) -> Path:
    if path.suffix == ".parquet":
        df.to_parquet(path, index=False)
    else:
        df.to_csv(path, index=False)
    return path


def _synth(args, out: Path) -> int:
    return main(["synth", *args, "-o", str(out), "-q"])


def _one_error_line(capsys) -> str:
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith("dpsynth: error: ") and "Traceback" not in err
    return lines[0]


def _nothing_written(folder: Path, keep: set[str]) -> None:
    """No output and no temporary file next to the inputs."""
    assert {p.name for p in folder.iterdir()} == keep


# ------------------------------------------------------------------------------------------ releases
def test_synth_writes_the_declared_labels_and_matches_the_library(tmp_path, capsys):
    df = _table()
    src = _write(tmp_path / "people.csv", df)
    out, rep = tmp_path / "syn.csv", tmp_path / "rep.json"
    code = main(["synth", str(src), "-m", "pmm", "-e", "1", "-b", BOUNDS, "--categories", CATS, "--seed", "4",
                 "-o", str(out), "--report", str(rep)])
    assert code == 0
    err = capsys.readouterr().err
    assert "numeric column(s) 'age', 'bmi' and categorical column(s) 'sex', 'region'" in err
    assert "(2 numeric, 2 categorical)" in err
    dom = Domain.from_dict(DOMAIN)
    rel = run("pmm", df, dom, epsilon=1.0, rng=4)
    assert out.read_bytes() == export.synthetic_csv(rel, rng=4)
    assert out.read_text().splitlines()[0] == "age,sex,bmi,region"
    back = read_table(out, domain=dom)
    assert set(back.frame["region"].astype(str)) <= {"north", "south", "east"}
    assert json.loads(rep.read_text())["domain"]["categories"] == DOMAIN["categories"]


def test_a_domain_file_gives_the_same_release_as_the_flags(tmp_path):
    src = _write(tmp_path / "people.csv", _table(seed=1))
    (tmp_path / "dom.json").write_text(json.dumps(DOMAIN, indent=2))
    common = ["-m", "pmm", "-e", "1", "--seed", "2"]
    assert _synth([str(src), *common, "-b", BOUNDS, "--categories", CATS], tmp_path / "a.csv") == 0
    assert _synth([str(src), *common, "--domain", str(tmp_path / "dom.json")], tmp_path / "b.csv") == 0
    assert (tmp_path / "a.csv").read_bytes() == (tmp_path / "b.csv").read_bytes()


def test_numpy_parquet_and_dask_engines_give_one_release(tmp_path):
    """CSV, a Parquet file (numpy engine), a CSV glob and a Parquet directory with a pandas categorical
    and a text column (dask engine): the same bytes."""
    df = _table(900, seed=2)
    whole = _write(tmp_path / "whole.csv", df)
    pq_file = _write(tmp_path / "whole.parquet", df)
    (tmp_path / "csv").mkdir()
    (tmp_path / "pq").mkdir()
    for i, idx in enumerate(np.array_split(np.arange(len(df)), 3)):
        part = df.iloc[idx]
        _write(tmp_path / "csv" / f"p{i}.csv", part)
        _write(tmp_path / "pq" / f"p{i}.parquet", part.assign(sex=pd.Categorical(part["sex"])))
    opts = ["-m", "pmm", "-e", "1", "-b", BOUNDS, "--categories", CATS, "--seed", "8"]
    runs = {"csv": [str(whole)], "parquet": [str(pq_file)],
            "dask-csv": [str(tmp_path / "csv" / "*.csv"), "--engine", "dask"],
            "dask-parquet": [str(tmp_path / "pq"), "--engine", "dask"]}
    outputs = {}
    for tag, inp in runs.items():
        out, rep = tmp_path / f"{tag}.out.csv", tmp_path / f"{tag}.json"
        assert main(["synth", *inp, *opts, "-o", str(out), "--report", str(rep), "-q"]) == 0, tag
        outputs[tag] = (out.read_bytes(), rep.read_bytes())
    assert len(set(outputs.values())) == 1


def test_labels_that_look_like_numbers_or_missing_values(tmp_path):
    """'grade' holds 1, 2, 3 and 'zone' holds NA (North America) and None: declared, they are labels."""
    df = _table(300, seed=3).assign(grade=np.tile([1, 2, 3], 100), zone=np.tile(["NA", "EU", "None"], 100))
    src = _write(tmp_path / "t.csv", df)
    for engine in ("numpy", "dask"):
        out = tmp_path / f"{engine}.out.csv"
        assert _synth([str(src), "--engine", engine, "-m", "pmm", "-e", "2", "-b", BOUNDS, "--seed", "1",
                       "--categories", CATS + ";grade=1|2|3;zone=NA|EU|None"], out) == 0
    assert (tmp_path / "numpy.out.csv").read_bytes() == (tmp_path / "dask.out.csv").read_bytes()
    back = read_table(tmp_path / "numpy.out.csv", categories={"grade": ["1", "2", "3"], "zone": ["NA", "EU", "None"],
                                                               "sex": ["F", "M"], "region": ["north", "south", "east"]})
    assert set(back.frame["zone"].astype(str)) <= {"NA", "EU", "None"} and back.dropped_rows == 0


def test_unicode_names_labels_with_commas_and_quotes_and_a_thousand_categories(tmp_path):
    rng = np.random.default_rng(4)
    n = 400
    city = ["Zürich", "São Paulo, BR", 'the "Big" Apple', "x;y|z"]
    codes = [f"c{i:03d}" for i in range(1000)]
    df = pd.DataFrame({"âge": rng.uniform(0, 100, n), "ville": rng.choice(city, n), "code": rng.choice(codes, n)})
    src = _write(tmp_path / "u.csv", df)
    dom = {"lower": [0], "upper": [100], "names": ["âge", "ville", "code"], "categories": {"ville": city, "code": codes}}
    (tmp_path / "u.json").write_text(json.dumps(dom, ensure_ascii=False), encoding="utf-8")
    out = tmp_path / "out.csv"
    assert _synth([str(src), "--domain", str(tmp_path / "u.json"), "-m", "pmm", "-e", "1", "--seed", "3"], out) == 0
    back = read_table(out, domain=Domain.from_dict(dom))
    assert back.columns == ("âge", "ville", "code") and set(back.frame["ville"].astype(str)) <= set(city)
    # the same 1,000 categories on the command line
    out2 = tmp_path / "out2.csv"
    assert _synth([str(src), "-b", "0:100", "--categories", "code=" + "|".join(codes), "-m", "pmm", "-e", "1",
                   "--seed", "3"], out2) == 0
    assert read_table(out2, categories={"code": codes}).columns == ("âge", "code")


def _dense_mixed_w1(A: pd.DataFrame, B: pd.DataFrame) -> float:
    """W1 under the mixed metric of DOMAIN (unit weights), by ot.emd2 on a cost built here from the labels."""
    import ot

    def unit(df):
        return np.column_stack([(df["age"] - 0) / 120, (df["bmi"] - 10) / 50])

    UA, UB = unit(A), unit(B)
    cost = np.abs(UA[:, None, :] - UB[None, :, :]).max(axis=2)
    for col in ("sex", "region"):
        cost = np.maximum(cost, (A[col].to_numpy()[:, None] != B[col].to_numpy()[None, :]).astype(float))
    return float(ot.emd2(np.full(len(A), 1 / len(A)), np.full(len(B), 1 / len(B)), cost, numItermax=10**8))


def test_w1_compares_categorical_columns_under_the_mixed_metric(tmp_path, capsys):
    df = _table(300, seed=4)
    src = _write(tmp_path / "p.csv", df)
    syn = tmp_path / "syn.csv"
    assert _synth([str(src), "-m", "pmm", "-e", "1", "-b", BOUNDS, "--categories", CATS, "--seed", "2"], syn) == 0
    (tmp_path / "dom.json").write_text(json.dumps(DOMAIN))
    ref = _dense_mixed_w1(df, pd.read_csv(syn))
    assert ref > 0.01
    for extra in (["-b", BOUNDS, "--categories", CATS], ["--domain", str(tmp_path / "dom.json")]):
        capsys.readouterr()
        assert main(["w1", str(src), str(src), *extra, "-q"]) == 0
        assert float(capsys.readouterr().out) == 0.0
        assert main(["w1", str(src), str(syn), *extra, "--json"]) == 0
        captured = capsys.readouterr()
        figures = json.loads(captured.out)
        assert figures["metric"] == "mixed" and figures["exact"] is True
        assert figures["w1"] == pytest.approx(ref, rel=1e-9, abs=1e-12)
        assert "mixed metric" in captured.err
    # the mixed metric is built on l_inf: another metric is refused in one line, naming it
    assert main(["w1", str(src), str(syn), "-b", BOUNDS, "--categories", CATS, "--metric", "l1", "-q"]) == 1
    assert "--metric of dpsynth w1 must be 'linf' on a domain with categorical columns" in _one_error_line(capsys)
    # the numeric columns alone still compare (text columns left out, as before)
    assert main(["w1", str(src), str(src), "-b", BOUNDS, "-q"]) == 0
    assert float(capsys.readouterr().out) == pytest.approx(0.0, abs=1e-12)


def test_list_says_who_takes_categorical_columns(capsys):
    assert main(["list", "-v"]) == 0
    blocks: dict[str, list[str]] = {}
    for line in capsys.readouterr().out.splitlines()[1:]:
        if not line.startswith(" "):
            name = line.split()[0]
            blocks[name] = []
        else:
            blocks[name].append(line.strip())
    said = {name: [ln for ln in lines if ln.startswith("categorical columns (--categories, --domain): ")]
            for name, lines in blocks.items()}
    assert all(len(v) == 1 for v in said.values()), said
    assert said["pmm"] == ["categorical columns (--categories, --domain): yes"]
    assert said["low_dim"] == ["categorical columns (--categories, --domain): no, numeric columns only"]
    assert main(["synth", "--help"]) == 0
    helptext = capsys.readouterr().out
    assert '"categories": {"sex": ["F", "M"]' in helptext and "--bounds, --categories, --integers and\n      --columns are refused" in helptext


# ------------------------------------------------------------------------------------------ hostile inputs
def _hostile_csv(tmp_path: Path) -> Path:
    return _write(tmp_path / "in.csv", pd.DataFrame({"age": [30.5, 41, 52, 60], "sex": ["F", "M", "F", "M"],
                                                     "bmi": [22, 25, 30, 28], "region": ["north", "south", "east", "north"],
                                                     "grade": ["1.0", "2.0", "1.0", "3.0"]}))


HOSTILE = [
    ("undeclared category", ["-b", BOUNDS, "--categories", "sex=F|M;region=north|south"], 1,
     "has a value outside the declared categories of column 'region' at row 4: 'east'"),
    ("empty category list", ["-b", BOUNDS, "--categories", "sex=;region=north|south|east"], 1,
     "an empty name in column 'sex'"),
    ("trailing separator", ["-b", BOUNDS, "--categories", "sex=F|M|;region=north|south|east"], 1,
     "an empty name in column 'sex'"),
    ("no column name", ["-b", BOUNDS, "--categories", "=F|M"], 1, "The 'categories' parameter of dpsynth synth"),
    ("category that is also a number", ["-b", BOUNDS, "--categories", CATS + ";grade=1|2|3"], 1,
     "at row 2: '1.0' (categories are matched as text, exactly: '1.0' is not the declared '1'"),
    ("too many categories", ["-b", BOUNDS, "--categories", "sex=" + "|".join(map(str, range(MAX_CATEGORIES + 1)))], 1,
     f"at most {MAX_CATEGORIES} categories per column"),
    ("unicode label undeclared", ["-b", BOUNDS, "--categories", "sex=F|M;region=nörth|south|east"], 1,
     "at row 2: 'north' (did you mean 'nörth'?)"),
    ("declared column not in the file", ["-b", BOUNDS, "--categories", CATS + ";smoker=yes|no"], 1,
     "has no declared categorical column 'smoker'"),
    ("numeric column declared categorical", ["-b", "0:120", "--categories", CATS + ";bmi=low|high"], 1,
     "at row 2: '22' (a number: if the column is numeric, give it bounds instead of categories)"),
    ("bounds for the categorical columns too", ["-b", "0:120,0:1,10:60,0:1", "--categories", CATS], 1,
     "must give one 'lo:hi' per numeric column (3 numeric column(s): age, bmi, grade)"),
    ("numeric-only mechanism", ["-b", BOUNDS, "--categories", CATS, "-m", "low_dim"], 1,
     "low_dim reads numeric columns only (these mechanisms take categorical ones: "),
    ("only categorical columns", ["-b", BOUNDS, "--categories", CATS, "--columns", "sex"], 1,
     "must include at least one numeric column"),
    ("domain and bounds", ["-b", BOUNDS, "--domain", "dom.json"], 2, "--bounds and --domain both declare the columns"),
    ("no domain at all", [], 2, "the public domain is required: --bounds"),
]


@pytest.mark.parametrize(("case", "args", "code", "expected"), HOSTILE, ids=[h[0] for h in HOSTILE])
def test_hostile_flags_fail_clearly_and_write_nothing(case, args, code, expected, tmp_path, capsys, monkeypatch):
    src = _hostile_csv(tmp_path)
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "out.csv"
    mech = [] if "-m" in args else ["-m", "pmm"]
    assert main(["synth", str(src), *mech, "-e", "1", *args, "-o", str(out), "--report", str(tmp_path / "r.json"), "-q"]) \
        == code
    line = _one_error_line(capsys)
    assert expected in line, line
    _nothing_written(tmp_path, {"in.csv"})


def test_an_existing_output_is_left_untouched(tmp_path, capsys):
    src = _hostile_csv(tmp_path)
    out = tmp_path / "out.csv"
    out.write_text("previous release\n")
    assert _synth([str(src), "-m", "pmm", "-e", "1", "-b", BOUNDS, "--categories", "sex=F"], out) == 1
    assert "at row 3: 'M'" in _one_error_line(capsys)
    assert out.read_text() == "previous release\n"


def test_missing_category_is_refused_or_dropped_on_request(tmp_path, capsys):
    df = _table(40).astype({"region": object})
    df.loc[5, "region"] = None
    src = _write(tmp_path / "m.csv", df)
    for engine in ("numpy", "dask"):
        out = tmp_path / f"{engine}.csv"
        assert _synth([str(src), "--engine", engine, "-m", "pmm", "-e", "1", "-b", BOUNDS, "--categories", CATS], out) == 1
        line = _one_error_line(capsys)
        assert "missing value" in line and "'region'" in line and "(add --drop-missing to drop them)" in line
        assert not out.exists()
        assert _synth([str(src), "--engine", engine, "-m", "pmm", "-e", "1", "-b", BOUNDS, "--categories", CATS,
                       "--drop-missing", "--seed", "1"], out) == 0
        capsys.readouterr()  # the numpy engine's owner-side warning about the dropped row
    assert (tmp_path / "numpy.csv").read_bytes() == (tmp_path / "dask.csv").read_bytes()


def test_dask_engine_hostile_inputs_write_nothing(tmp_path, capsys):
    (tmp_path / "pq").mkdir()
    df = _table(90).assign(score=np.linspace(0, 1, 90))
    for i, idx in enumerate(np.array_split(np.arange(90), 3)):
        _write(tmp_path / "pq" / f"p{i}.parquet", df.iloc[idx])
    base = ["synth", str(tmp_path / "pq"), "--engine", "dask", "-m", "pmm", "-e", "1", "-o", str(tmp_path / "o.csv"), "-q"]
    cases = [
        (["-b", BOUNDS + ",0:1", "--categories", "sex=F|M;region=north|south"],
         "has a value outside the declared categories of column 'region' at a row (the dask engine"),
        (["-b", "0:120,10:60", "--categories", CATS + ";score=0|1"],
         "column 'score', declared categorical, holds values of type float64; a categorical column must hold text "
         "or integers; if it is numeric, give it bounds"),
        (["-b", BOUNDS + ",0:1", "--categories", CATS + ";smoker=yes|no"], "has no declared categorical column 'smoker'"),
    ]
    for extra, expected in cases:
        assert main([*base, *extra]) == 1
        line = _one_error_line(capsys)
        assert expected in line, line
        assert not (tmp_path / "o.csv").exists()


@pytest.mark.parametrize(("text", "expected"), [
    ('{\n  "lower": [0, 10],\n  "upper": [120 60]\n}\n', "is not valid JSON: Expecting ',' delimiter at line 3, column 17"),
    ('{"lower": [0], "upper": [1], "names": ["age"], "categories": {"sex": []}}',
     "is not a valid domain: The 'categories' parameter of Domain must be for column 'sex' a non-empty list"),
    ('{"lower": [0], "upper": [1], "names": ["age"], "categories": {"sex": ["F"]}, "categories": {"sex": ["M"]}}',
     "is not a valid domain: the key 'categories' appears twice in one object; give each key once"),
    ('{"lower": [5], "upper": [1], "names": ["age"]}', "is not a valid domain: The 'upper' parameter of Domain must be greater"),
    ('{"lower": [0], "upper": [1], "names": ["age"], "categoris": {}}', "keys among"),
    ('[0, 1]', "must be a mapping (a JSON object)"),
    (b'{"lower": [0], "upper": [1], "names": ["\xe9"]}', "is not UTF-8 text (the first unreadable character is on line 1)"),
])
def test_domain_file_errors(text, expected, tmp_path, capsys):
    src = _hostile_csv(tmp_path)
    dom = tmp_path / "dom.json"
    dom.write_bytes(text if isinstance(text, bytes) else text.encode())
    assert _synth([str(src), "-m", "pmm", "-e", "1", "--domain", str(dom)], tmp_path / "o.csv") == 1
    line = _one_error_line(capsys)
    assert f"The domain file {str(dom)!r}" in line and expected in line, line
    _nothing_written(tmp_path, {"in.csv", "dom.json"})


def test_domain_file_size_is_checked_before_reading(tmp_path, capsys, monkeypatch):
    from dpsynth_core import domain_file

    src = _hostile_csv(tmp_path)
    dom = tmp_path / "dom.json"
    dom.write_text(json.dumps(DOMAIN))
    monkeypatch.setattr(domain_file, "DOMAIN_FILE_MAX_BYTES", 10)
    assert _synth([str(src), "-m", "pmm", "-e", "1", "--domain", str(dom)], tmp_path / "o.csv") == 1
    assert "a domain file may have at most 10 bytes" in _one_error_line(capsys)
    assert DOMAIN_FILE_MAX_BYTES >= 2**20  # the real limit leaves room for 100,000 categories of short names
    assert main(["synth", str(src), "-m", "pmm", "-e", "1", "--domain", str(tmp_path / "none.json"),
                 "-o", str(tmp_path / "o.csv")]) == 1
    assert "No such file or directory: " in _one_error_line(capsys)


def test_domain_file_other_category_weights_and_provenance(tmp_path, capsys):
    """An 'other' category receives the undeclared values in both engines (the numpy engine warns with
    the count, owner view); a domain read off the data makes the release say it is NOT DP."""
    df = _table(300, seed=6)
    src = _write(tmp_path / "p.csv", df)
    spec = {**DOMAIN, "categories": {"sex": ["F", "M"], "region": ["north", "south"]},
            "other": {"region": "elsewhere"}, "weights": {"region": 0.5}}
    (tmp_path / "dom.json").write_text(json.dumps(spec))
    outs = []
    for engine in ("numpy", "dask"):
        out, rep = tmp_path / f"{engine}.csv", tmp_path / f"{engine}.json"
        assert main(["synth", str(src), "--engine", engine, "--domain", str(tmp_path / "dom.json"), "-m", "pmm",
                     "-e", "1", "--seed", "2", "-o", str(out), "--report", str(rep), "-q"]) == 0
        outs.append((out.read_bytes(), rep.read_bytes()))
        err = capsys.readouterr().err
        if engine == "numpy":
            n_east = int((df["region"] == "east").sum())
            assert f"Mapped {n_east} values of column 'region' outside its declared categories to its 'other' " \
                   f"category 'elsewhere'. (owner view: not in any output)" in err
    assert outs[0] == outs[1]
    report = json.loads(outs[0][1])
    assert report["domain"]["categories"]["region"] == ["north", "south", "elsewhere"]
    assert report["domain"]["weights"]["region"] == 0.5
    assert set(read_table(tmp_path / "numpy.csv", domain=Domain.from_dict(spec)).frame["region"].astype(str)) \
        <= {"north", "south", "elsewhere"}
    (tmp_path / "data.json").write_text(json.dumps({**DOMAIN, "provenance": "data"}))
    out, rep = tmp_path / "nd.csv", tmp_path / "nd.json"
    assert main(["synth", str(src), "--domain", str(tmp_path / "data.json"), "-m", "pmm", "-e", "1", "-o", str(out),
                 "--report", str(rep), "-q"]) == 0
    assert "read off the data (provenance 'data'): no release on it is differentially private" in capsys.readouterr().err
    report = json.loads(rep.read_text())
    assert report["is_dp"] is False and "NOT differentially private" in report["label"]


def test_report_reads_categorical_columns_with_the_same_options(tmp_path, capsys):
    """`dpsynth report` takes --categories / --domain through the shared helpers: the categorical columns
    are compared (shares of the declared categories), and an undeclared value is refused as in synth."""
    df = _table(300, seed=7)
    real = _write(tmp_path / "real.csv", df)
    syn = tmp_path / "syn.csv"
    assert _synth([str(real), "-m", "pmm", "-e", "2", "-b", BOUNDS, "--categories", CATS, "--seed", "1"], syn) == 0
    (tmp_path / "dom.json").write_text(json.dumps(DOMAIN))
    outs = []
    for extra in (["-b", BOUNDS, "--categories", CATS], ["--domain", str(tmp_path / "dom.json")]):
        out = tmp_path / f"rep{len(outs)}.json"
        assert main(["report", str(real), str(syn), *extra, "--w1", "none", "-o", str(out), "-q"]) == 0
        capsys.readouterr()
        outs.append(json.loads(out.read_text()))
    assert outs[0] == outs[1]
    # --w1 auto (the default): the mixed metric's W1, exact, and its ceilings hold
    out = tmp_path / "auto.json"
    assert main(["report", str(real), str(syn), "-b", BOUNDS, "--categories", CATS, "-o", str(out), "-q"]) == 0
    auto = json.loads(out.read_text())
    assert auto["w1"]["value"] == pytest.approx(_dense_mixed_w1(df, pd.read_csv(syn)), rel=1e-9, abs=1e-12)
    assert auto["w1"]["source"] == "computed by pot under the mixed metric (exact)"
    assert auto["guarantees"] and all(g["holds"] is True for g in auto["guarantees"])
    kinds = {c["name"]: c["kind"] for c in outs[0]["columns"]}
    assert kinds == {"age": "numeric", "sex": "categorical", "bmi": "numeric", "region": "categorical"}
    assert main(["report", str(real), str(syn), "-b", BOUNDS, "--categories", "sex=F|M;region=north|south",
                 "--w1", "none", "-q"]) == 1
    assert "outside the declared categories of column 'region'" in _one_error_line(capsys)
