"""The ``dpsynth`` command line (dpsynth_core.cli): round trips, public-only reports, one-line errors."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from dpsynth_core import Domain, run
from dpsynth_core.cli import main
from dpsynth_core.mechanisms import MECHANISMS, load_all
from dpsynth_core.tabular import load_csv
from dpsynth_core.tabular.read import MAX_ROWS
from dpsynth_core.transport import wasserstein1

load_all()

FORBIDDEN = ("owner", "true", "trace")


def _write_csv(path: Path, X: np.ndarray, names=("a", "b")) -> Path:
    lines = [",".join(names)] + [",".join(repr(float(v)) for v in row) for row in X]
    path.write_text("\n".join(lines) + "\n")
    return path


def _keys(obj, prefix=""):
    """Every key of a nested JSON object, with its path."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield prefix + str(k), str(k)
            yield from _keys(v, prefix + str(k) + ".")
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _keys(v, f"{prefix}{i}.")


def _assert_public_only(report: dict) -> None:
    for path, key in _keys(report):
        low = key.lower()
        assert not any(word in low for word in FORBIDDEN), f"owner-side key in the report: {path}"
    assert "synthetic" not in report  # the rows are in the CSV, not the report


@pytest.fixture
def data(tmp_path):
    X = np.random.default_rng(0).random((300, 2)) * [10.0, 2.0] + [0.0, -1.0]
    return X, _write_csv(tmp_path / "private.csv", X)


def _one_error_line(capsys, code_expected_nonzero=True):
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith("dpsynth: error: ") and "Traceback" not in err
    return lines[0]


# ------------------------------------------------------------------------------ round trips
def test_round_trip_in_process(data, tmp_path, capsys):
    X, src = data
    out, rep = tmp_path / "synthetic.csv", tmp_path / "report.json"
    code = main(["synth", "--mechanism", "pmm", "--epsilon", "1", "--bounds", "0:10,-1:1", "--param", "depth=6",
                 "--seed", "3", str(src), "-o", str(out), "--report", str(rep)])
    assert code == 0
    err = capsys.readouterr().err
    assert "running pmm" in err and "wrote" in err  # progress on stderr
    syn = load_csv(out)
    assert list(syn.columns) == ["a", "b"] and syn.shape[0] >= 1
    assert np.all(syn["a"].between(0, 10)) and np.all(syn["b"].between(-1, 1))
    report = json.loads(rep.read_text())
    _assert_public_only(report)
    # the report is exactly Release.public() without the rows (same seed, same release)
    dom = Domain([0, -1], [10, 1], names=["a", "b"])
    rel = run("pmm", load_csv(src), dom, epsilon=1.0, depth=6, rng=3)
    assert report == json.loads(rel.public_json(include_synthetic=False))
    assert report["params"]["depth"] == 6 and report["n_synthetic"] == syn.shape[0]
    # exact float round trip; the file lists the rows in random order (a permutation of the release)
    order = np.lexsort(rel.synthetic.T[::-1])
    got = syn.to_numpy()
    np.testing.assert_array_equal(got[np.lexsort(got.T[::-1])], rel.synthetic[order])
    assert not np.array_equal(got, rel.synthetic)
    # W1 by `dpsynth w1` equals the library's value (unit-cube units, l_inf)
    assert main(["w1", str(src), str(out), "--bounds", "0:10,-1:1", "-q"]) == 0
    value = float(capsys.readouterr().out.strip())
    assert value == pytest.approx(wasserstein1(X, rel.synthetic, domain=dom, metric="linf"), rel=1e-12)
    assert main(["w1", str(src), str(out), "--bounds", "0:10,-1:1", "-q", "--json", "--metric", "l1"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["metric"] == "l1" and res["lower"] <= res["w1"] <= res["upper"] and res["exact"]


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_round_trip_with_the_installed_console_script(data, tmp_path):
    _, src = data
    exe = Path(sys.executable).with_name("dpsynth")
    assert exe.exists(), "the dpsynth console script is not installed in the venv"
    out, rep = tmp_path / "syn.csv", tmp_path / "rep.json"
    proc = subprocess.run([str(exe), "synth", "-m", "flat_histogram", "-e", "2", "-b", "0:10,-1:1", "--seed", "1",
                           str(src), "-o", str(out), "--report", str(rep)], capture_output=True, text=True,
                          timeout=100)
    assert proc.returncode == 0, proc.stderr
    assert "flat_histogram done" in proc.stderr and proc.stdout == ""
    _assert_public_only(json.loads(rep.read_text()))
    proc = subprocess.run([str(exe), "w1", str(src), str(out), "-b", "0:10,-1:1", "-q"], capture_output=True,
                          text=True, timeout=100)
    assert proc.returncode == 0, proc.stderr
    w1 = float(proc.stdout.strip())
    # unit-cube l_inf units: in [0, 1]; a 2-D flat histogram at ε = 2, n = 300 is far from 0 and from 1
    assert 0.0 < w1 < 0.5
    proc = subprocess.run([str(exe), "synth", "-m", "pmm", "-e", "-1", "-b", "0:10,-1:1", str(src), "-o",
                           str(out), "-q"], capture_output=True, text=True, timeout=100)
    assert proc.returncode == 1 and proc.stderr.strip().count("\n") == 0
    assert proc.stderr.startswith("dpsynth: error: The 'epsilon' parameter of pmm must be a float in [1e-06, 1000000].")


# Small parameters for the mechanisms whose defaults are slow on a test-sized file.
FAST = {"private_evolution": ["iterations=2", "n_synthetic=50", "track_w1=false"],
        "sparse_marginals": ["public_size=200", "mc_draws=20"]}


@pytest.mark.timeout(120)
@pytest.mark.parametrize("name", sorted(MECHANISMS))
def test_every_mechanism_report_is_public_only(name, data, tmp_path, capsys):
    _, src = data
    spec = MECHANISMS[name]
    argv = ["synth", "-m", name, "-e", "1", "-b", "0:10,-1:1", "--seed", "0", str(src), "-o",
            str(tmp_path / "s.csv"), "--report", str(tmp_path / "r.json"), "-q"]
    if spec.needs_delta:
        argv += ["--delta", "1e-5"]
    for p in FAST.get(name, []):
        argv += ["--param", p]
    assert main(argv) == 0, capsys.readouterr().err
    report = json.loads((tmp_path / "r.json").read_text())
    _assert_public_only(report)
    assert report["mechanism"] == name and report["neighbours"] == spec.default_neighbours
    assert sum(e["epsilon"] for e in report["ledger"]) == pytest.approx(1.0)


def test_stdout_output_and_list(data, capsys):
    _, src = data
    assert main(["synth", "-m", "haar_walk", "-e", "1", "-b", "0:10,-1:1", str(src), "-o", "-", "-q"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "a,b" and len(out) > 10
    assert main(["list"]) == 0
    listing = capsys.readouterr().out
    assert all(name in listing for name in MECHANISMS)
    assert main(["list", "-v"]) == 0
    verbose = capsys.readouterr().out
    assert "--param depth=<int>" in verbose
    assert main(["--help"]) == 0 and "synth" in capsys.readouterr().out


#: Every parameter whose default comes from a rule of the defaults study (issue 27): (mechanism, parameter, rule).
STUDY_DEFAULTS = [("flat_histogram", "bins", "flat_histogram_bins"), ("psmm", "cells", "psmm_cells"),
                  ("haar_walk", "grid_rule", "haar_walk_grid"), ("pmm", "depth_rule", "pmm_depth"),
                  ("low_dim", "plan", "low_dim_plan")]


def test_list_names_the_rule_and_the_study_of_every_default(capsys):
    """``dpsynth list -v`` prints, for every default chosen by the defaults study, the rule's name in
    dpsynth_core.defaults and where the study lives; the named rule exists."""
    from dpsynth_core import defaults

    assert main(["list", "-v"]) == 0
    verbose = capsys.readouterr().out
    blocks, current = {}, None
    for line in verbose.splitlines():
        if line and not line.startswith(" "):
            current = line.split()[0]
        elif current:
            blocks.setdefault(current, []).append(line)
    for mech, name, rule in STUDY_DEFAULTS:
        line = next(ln for ln in blocks[mech] if ln.strip().startswith(f"--param {name}="))
        assert f"dpsynth_core.defaults.{rule}" in line, line
        assert "benchmarks/defaults_study.py" in line and "docs/defaults.md" in line, line
        assert callable(getattr(defaults, rule))
    # the Haar walk's grid and PMM's depth point to their rule parameters
    assert any("by 'grid_rule'" in ln for ln in blocks["haar_walk"] if "--param grid=" in ln)


def test_a_reader_that_leaves_early_is_not_an_error(monkeypatch, capsys):
    """``dpsynth list -v | head``: the pipe closes under the command, which stops quietly with exit code
    141 (128 + SIGPIPE, as a shell reports it) and no error line."""
    class ClosedPipe(io.StringIO):
        def write(self, text):
            raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr(sys, "stdout", ClosedPipe())
    assert main(["list", "-v"]) == 141
    assert capsys.readouterr().err == ""


def test_replace_neighbours_and_columns(tmp_path, capsys):
    X = np.random.default_rng(1).random((50, 3))
    src = _write_csv(tmp_path / "x.csv", X, names=("u", "v", "w"))
    out, rep = tmp_path / "o.csv", tmp_path / "r.json"
    assert main(["synth", "-m", "pmm", "-e", "1", "-b", "0:1", "--columns", "w,u", "--neighbours", "replace",
                 "--seed", "0", str(src), "-o", str(out), "--report", str(rep), "-q"]) == 0
    assert list(load_csv(out).columns) == ["w", "u"]
    report = json.loads(rep.read_text())
    assert report["neighbours"] == "replace" and report["domain"]["names"] == ["w", "u"]


# ------------------------------------------------------------------------------------ errors
@pytest.mark.parametrize("extra, match", [
    (["-m", "pmm", "-e", "-1"], "The 'epsilon' parameter of pmm must be a float in [1e-06, 1000000]. Got -1."),
    (["-m", "pmm", "-e", "abc"], "The 'epsilon' parameter of pmm must be a float. Got 'abc'."),
    (["-m", "pmm", "-e", "nan"], "The 'epsilon' parameter of pmm must be a float in [1e-06, 1000000]."),
    (["-m", "nope", "-e", "1"], "The 'mechanism' parameter of dpsynth synth must be one of"),
    (["-m", "pmm", "-e", "1", "-p", "depth=abc"], "The 'depth' parameter of pmm"),
    (["-m", "pmm", "-e", "1", "-p", "depth=99"], "The 'depth' parameter of pmm must be an int in [0, 24]"),
    (["-m", "pmm", "-e", "1", "-p", "colour=red"], "must name a parameter of pmm"),
    (["-m", "pmm", "-e", "1", "-p", "depth"], "must be key=value"),
    (["-m", "pmm", "-e", "1", "-p", "depth=2", "-p", "depth=3"], "once"),
    (["-m", "pmm", "-e", "1", "--delta", "1e-5"], "The 'delta' parameter of pmm is not used"),
    (["-m", "private_evolution", "-e", "1"], "The 'delta' parameter of private_evolution must be given"),
    (["-m", "sparse_marginals", "-e", "1", "--neighbours", "add_remove"],
     "The 'neighbours' parameter of sparse_marginals must be one of 'replace'"),
    (["-m", "pmm", "-e", "1", "--seed", "-4"], "The 'seed' parameter of dpsynth must be an int in [0, inf)"),
    (["-m", "pmm", "-e", "1", "--n-public", "x"], "The 'n_public' parameter of pmm must be an int"),
    (["-m", "per_point_laplace", "-e", "1", "--n-public", "5"], "The 'n_public' parameter of per_point_laplace"),
    (["-m", "pmm", "-e", "1", "--columns", "a,,b"], "The 'columns' parameter of dpsynth"),
    (["-m", "pmm", "-e", "1", "--columns", "zz"], "no column 'zz'"),
])
def test_bad_parameters_give_one_line_and_exit_1(extra, match, data, tmp_path, capsys):
    _, src = data
    argv = ["synth", *extra, "-b", "0:10,-1:1", str(src), "-o", str(tmp_path / "o.csv"), "-q"]
    assert main(argv) == 1
    line = _one_error_line(capsys)
    assert match in line, line
    assert not (tmp_path / "o.csv").exists()  # nothing written on error


@pytest.mark.parametrize("bounds, match", [
    ("1:0,-1:1", "must give each column a lower bound below its upper bound. Got '1:0' for column 'a'."),
    ("0:10,-1:1,0:1", "The 'bounds' parameter of dpsynth synth must give one 'lo:hi' per column"),
    ("0-10,-1:1", "Got '0-10' for column 'a'."),
    ("0:inf,-1:1", "with finite numbers and lo < hi, e.g. 0:120. Got '0:inf' for column 'a'."),
    ("a:b,c:d", "The 'bounds' parameter of dpsynth synth must give 'lo:hi' per column (2 column(s): a, b)"),
])
def test_bad_bounds(bounds, match, data, tmp_path, capsys):
    _, src = data
    assert main(["synth", "-m", "pmm", "-e", "1", "-b", bounds, str(src), "-o", str(tmp_path / "o.csv"), "-q"]) == 1
    assert match in _one_error_line(capsys)


@pytest.mark.parametrize("content, match", [
    ("a,b\n", "at least one data row"),
    ("", "non-empty CSV"),
    ("a,b\n1,2\n3,nan\n", "row 3"),
    ("a,b\n1,2\n3,inf\n", "infinite"),
    ("1,2\n3,4\n", "header"),
    ("a,b\nx,y\n", "numeric column"),
])
def test_bad_csv_files(content, match, tmp_path, capsys):
    src = tmp_path / "bad.csv"
    src.write_text(content)
    assert main(["synth", "-m", "pmm", "-e", "1", "-b", "0:1", str(src), "-o", str(tmp_path / "o.csv"), "-q"]) == 1
    assert match in _one_error_line(capsys)
    assert main(["w1", str(src), str(src), "-b", "0:1", "-q"]) == 1
    assert match in _one_error_line(capsys)


def test_files_and_usage_errors(data, tmp_path, capsys):
    X, src = data
    # a missing file
    assert main(["synth", "-m", "pmm", "-e", "1", "-b", "0:1", str(tmp_path / "nope.csv"), "-o",
                 str(tmp_path / "o.csv"), "-q"]) == 1
    assert "not a file" in _one_error_line(capsys)
    # the output would overwrite the private input
    before = src.read_bytes()
    assert main(["synth", "-m", "pmm", "-e", "1", "-b", "0:10,-1:1", str(src), "-o", str(src), "-q"]) == 1
    assert "must not be the input file" in _one_error_line(capsys) and src.read_bytes() == before
    # an unwritable output path
    assert main(["synth", "-m", "pmm", "-e", "1", "-b", "0:10,-1:1", str(src), "-o",
                 str(tmp_path / "no" / "dir" / "o.csv"), "-q"]) == 1
    assert "No such file or directory" in _one_error_line(capsys)
    # usage errors: exit code 2, one line
    for argv in ([], ["synth"], ["synth", "-m", "pmm", "-e", "1", str(src), "-o", "x.csv"], ["frobnicate"],
                 ["w1", str(src)], ["synth", "--bogus"]):
        assert main(argv) == 2, argv
        _one_error_line(capsys)
    # w1: the data lack a column of the synthetic file, unknown metric and method
    other = _write_csv(tmp_path / "other.csv", X, names=("a", "c"))
    assert main(["w1", str(src), str(other), "-b", "0:10,-1:1", "-q"]) == 1
    assert "The data file" in (line := _one_error_line(capsys)) and "has no column 'c'" in line
    assert main(["w1", str(src), str(src), "-b", "0:10,-1:1", "--metric", "l3", "-q"]) == 1
    assert "--metric of dpsynth w1 must be one of" in _one_error_line(capsys)  # the CLI's words: its flag
    assert main(["w1", str(src), str(src), "-b", "0:10,-1:1", "--method", "magic", "-q"]) == 1
    assert "--method of dpsynth w1 must be one of" in _one_error_line(capsys)


def test_errors_after_progress_still_end_in_one_error_line(data, tmp_path, capsys):
    _, src = data
    assert main(["synth", "-m", "pmm", "-e", "0", "-b", "0:10,-1:1", str(src), "-o", str(tmp_path / "o.csv")]) == 1
    err = capsys.readouterr().err.splitlines()
    assert err[-1].startswith("dpsynth: error: The 'epsilon' parameter of pmm")
    assert [ln for ln in err if ln.startswith("dpsynth: error")] == [err[-1]] and all(ln.startswith("dpsynth: ") for ln in err)


def test_stderr_reveals_nothing_about_the_input_size(data, tmp_path, capsys):
    """Progress lines are public: they never print the private number of rows (300 here)."""
    _, src = data
    assert main(["synth", "-m", "pmm", "-e", "1", "-b", "0:10,-1:1", "--seed", "0", str(src), "-o",
                 str(tmp_path / "o.csv"), "--report", str(tmp_path / "r.json")]) == 0
    err = capsys.readouterr().err.splitlines()
    # the synthetic size (public, in the report) is the only row count printed
    assert not any("300" in ln for ln in err if "synthetic rows" not in ln)
    report = json.loads((tmp_path / "r.json").read_text())
    # a pinned seed lets anyone undo the noise: the report says so
    assert report["randomness"]["source"] == "seed" and report["label"].startswith("reproducible, not private")
    assert any("NOT private" in ln for ln in err)


def test_long_runs_report_progress(capsys):
    """The heartbeat prints "still running" on stderr while a step runs, and nothing with --quiet."""
    import argparse
    import time as _time

    from dpsynth_core.cli._common import Heartbeat

    with Heartbeat(argparse.Namespace(quiet=False), "pmm", interval=0.05):
        _time.sleep(0.3)
    err = capsys.readouterr().err
    assert "dpsynth: pmm: still running" in err
    with Heartbeat(argparse.Namespace(quiet=True), "pmm", interval=0.05):
        _time.sleep(0.2)
    assert capsys.readouterr().err == ""


# ------------------------------------------------------------------ files as users make them
def test_w1_uses_the_synthetic_files_columns(tmp_path, capsys):
    """The data file usually has more columns than the synthetic one: w1 compares the synthetic columns."""
    rng = np.random.default_rng(4)
    X = rng.random((80, 3))
    data = _write_csv(tmp_path / "data.csv", X, names=("a", "b", "c"))
    syn = _write_csv(tmp_path / "syn.csv", X[:40, [2, 0]], names=("c", "a"))
    assert main(["w1", str(data), str(syn), "-b", "0:1", "-q"]) == 0
    value = float(capsys.readouterr().out.strip())
    assert value == pytest.approx(wasserstein1(X[:, [2, 0]], X[:40, [2, 0]], metric="linf"), rel=1e-12)


def test_w1_says_when_the_number_it_prints_is_not_w1(tmp_path, capsys):
    """A method that is not exact (the grid) prints its estimate; stderr says, even with -q, that it is not
    W1 and gives the certified interval, which contains the exact value."""
    rng = np.random.default_rng(5)
    X, Y = rng.random((300, 4)), rng.beta(2, 3, size=(200, 4))
    data = _write_csv(tmp_path / "data.csv", X, names=("a", "b", "c", "d"))
    syn = _write_csv(tmp_path / "syn.csv", Y, names=("a", "b", "c", "d"))
    assert main(["w1", str(data), str(syn), "-b", "0:1", "--method", "grid", "-q"]) == 0
    out, err = capsys.readouterr()
    lo, hi = (float(v) for v in re.search(r"certified to lie in \[([^,]+), ([^\]]+)\]", err).groups())
    assert "NOT the exact W1" in err and lo <= float(out) <= hi
    assert lo <= wasserstein1(X, Y, method="pot") <= hi
    # the default (auto) in d = 4 at this size is exact, and says nothing of the kind
    assert main(["w1", str(data), str(syn), "-b", "0:1", "-q"]) == 0
    out, err = capsys.readouterr()
    assert err == "" and float(out) == pytest.approx(wasserstein1(X, Y, method="pot"), rel=1e-9)


def test_a_capped_output_is_said_and_max_rows_sets_the_cap(tmp_path, capsys):
    """The output limit rounds a large release to fewer points: the command says so on stderr (even with
    -q), and --max-rows moves the limit (here down to 300, below the release's ~1200 rows, so that the
    test stays small; raising it works the same way). A bad value is refused before any reading."""
    rng = np.random.default_rng(6)
    src = _write_csv(tmp_path / "data.csv", rng.random((1200, 2)), names=("a", "b"))
    out = tmp_path / "o.csv"
    assert main(["synth", "-m", "pmm", "-e", "1", "-b", "0:1", str(src), "-o", str(out), "-q", "--max-rows", "300"]) == 0
    err = capsys.readouterr().err
    assert re.search(r"warning: the output was capped at 300 rows \(the release planned 1,\d{3}", err), err
    assert len(out.read_text().splitlines()) == 301
    assert main(["synth", "-m", "pmm", "-e", "1", "-b", "0:1", str(src), "-o", str(out), "-q", "--max-rows", "1e4"]) == 0
    assert capsys.readouterr().err == "" and len(out.read_text().splitlines()) > 1000
    assert main(["synth", "-m", "pmm", "-e", "1", "-b", "0:1", str(tmp_path / "missing.csv"), "-o", str(out), "-q",
                 "--max-rows", "lots"]) == 1
    assert "'max-rows' parameter of dpsynth synth must be a whole number of rows >= 1" in _one_error_line(capsys)


def test_wrong_column_lists_the_columns_with_a_close_match(data, tmp_path, capsys):
    _, src = data
    assert main(["synth", "-m", "pmm", "-e", "1", "-b", "0:1", "--columns", "a,bb", str(src), "-o",
                 str(tmp_path / "o.csv"), "-q"]) == 1
    line = _one_error_line(capsys)
    assert "has no column 'bb' (did you mean 'b'?); its columns are 'a', 'b'." in line
    assert main(["synth", "-m", "pmn", "-e", "1", "-b", "0:1", str(src), "-o", str(tmp_path / "o.csv"), "-q"]) == 1
    assert "(did you mean 'pmm'?)" in _one_error_line(capsys)


def test_bounds_that_clamp_most_rows_warn_with_the_count(tmp_path, capsys):
    """-b 0:100 on an income column clamps every value: a warning says how many rows and where."""
    income = np.random.default_rng(5).uniform(20_000, 90_000, size=(50, 1))
    src = _write_csv(tmp_path / "income.csv", income, names=("income",))
    assert main(["synth", "-m", "pmm", "-e", "1", "-b", "0:100", str(src), "-o", str(tmp_path / "o.csv"), "-q"]) == 0
    err = capsys.readouterr().err
    assert "warning: 50 of 50 rows (100%)" in err and "'income' (0 below, 50 above)" in err and "check --bounds" in err
    assert "The release goes ahead" in err and (tmp_path / "o.csv").exists()
    # bounds that fit: no warning
    assert main(["synth", "-m", "pmm", "-e", "1", "-b", "0:100000", str(src), "-o", str(tmp_path / "o.csv"),
                 "-q"]) == 0
    assert "warning" not in capsys.readouterr().err


def test_semicolon_decimal_comma_file_and_missing_values(tmp_path, capsys):
    src = tmp_path / "eu.csv"
    rows = "".join(f"0,{i:02d};{i % 3},5\n" for i in range(1, 60))
    src.write_text("x;y\n0,25;1,5\n0,75;2\n0,5;\n" + rows)
    out = tmp_path / "o.csv"
    assert main(["synth", "-m", "pmm", "-e", "1", "-b", "0:1,0:3", str(src), "-o", str(out), "-q"]) == 1
    line = _one_error_line(capsys)
    assert "row 4, column 'y'" in line and "--drop-missing" in line
    assert main(["synth", "-m", "pmm", "-e", "1", "-b", "0:1,0:3", "--drop-missing", str(src), "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert "decimal mark" in err and "warning" in err and "Dropped 1 row" in err
    assert out.read_text().splitlines()[0] == "x,y"


def test_fresh_randomness_by_default(data, tmp_path, capsys):
    """Without --seed two runs differ and the report says the randomness was fresh (private)."""
    _, src = data
    outs = []
    for i in range(2):
        out, rep = tmp_path / f"o{i}.csv", tmp_path / f"r{i}.json"
        assert main(["synth", "-m", "pmm", "-e", "1", "-b", "0:10,-1:1", str(src), "-o", str(out), "--report",
                     str(rep), "-q"]) == 0
        report = json.loads(rep.read_text())
        assert report["randomness"]["source"] == "fresh" and report["label"] == "differentially private"
        outs.append(out.read_bytes())
    assert outs[0] != outs[1]


def test_the_report_never_replaces_the_synthetic_data_and_output_paths_are_named(data, tmp_path, capsys):
    X, src = data
    out = tmp_path / "o.csv"
    out.write_text("keep me\n")
    for report in (str(out), str(tmp_path / "." / "o.csv")):  # the same file, spelled twice
        assert main(["synth", "-m", "pmm", "-e", "1", "-b", "0:10,-1:1", str(src), "-o", str(out), "--report", report,
                     "-q"]) == 1
        line = _one_error_line(capsys)
        assert "must not be the synthetic data's file" in line and "o_report.json" in line, line
        assert out.read_text() == "keep me\n"  # nothing written, nothing lost
    assert main(["synth", "-m", "pmm", "-e", "1", "-b", "0:10,-1:1", str(src), "-o", "-", "--report", "-", "-q"]) == 1
    assert "must not both go to the standard output" in _one_error_line(capsys)
    # a folder as the output, and a folder that does not exist: said as the output's problem
    assert main(["synth", "-m", "pmm", "-e", "1", "-b", "0:10,-1:1", str(src), "-o", str(tmp_path), "-q"]) == 1
    assert "is a folder" in _one_error_line(capsys)
    assert main(["synth", "-m", "pmm", "-e", "1", "-b", "0:10,-1:1", str(src), "-o", str(tmp_path / "no" / "o.csv"),
                 "-q"]) == 1
    assert "its folder" in _one_error_line(capsys)
    # a mechanism typed in capitals or with a dash is recognised in the hint
    assert main(["synth", "-m", "PMM", "-e", "1", "-b", "0:10,-1:1", str(src), "-o", str(out), "-q"]) == 1
    assert "(did you mean 'pmm'?)" in _one_error_line(capsys)
    assert main(["synth", "-m", "flat-histogram", "-e", "1", "-b", "0:10,-1:1", str(src), "-o", str(out), "-q"]) == 1
    assert "(did you mean 'flat_histogram'?)" in _one_error_line(capsys)


def test_an_empty_release_is_written_with_a_warning(data, tmp_path, capsys):
    # at ε = 0.001 the noisy size of 300 rows is often 0 (noise scale 20,000): seed 0 gives an empty release here;
    # the run succeeds (the release is valid and private) and says so on stderr, not only in the report's notes
    X, src = data
    out = tmp_path / "o.csv"
    for seed in range(20):
        assert main(["synth", "-m", "pmm", "-e", "0.001", "-b", "0:10,-1:1", str(src), "-o", str(out), "-q",
                     "--seed", str(seed)]) == 0
        err = capsys.readouterr().err
        if len(out.read_text().splitlines()) == 1:  # the header only
            assert "warning: the release has no rows" in err, err
            break
        assert "no rows" not in err
    else:
        pytest.fail("no seed in 0..19 gave an empty release at ε = 0.001; the test needs one")


@pytest.mark.parametrize(("flag", "message"), [
    (["-e", "0"], "The 'epsilon' parameter of pmm must be a float in [1e-06, 1000000]. Got 0."),
    (["-e", "1e9"], "The 'epsilon' parameter of pmm must be a float in [1e-06, 1000000]. Got 1000000000."),
    (["-e", "1", "--param", "depth=1000"], "The 'depth' parameter of pmm must be an int in"),
])
def test_epsilon_and_parameters_are_checked_before_the_data_is_read(flag, message, tmp_path, capsys):
    # the input does not exist: the error is about ε or the parameter, so they were checked first
    assert main(["synth", "-m", "pmm", *flag, "-b", "0:1", str(tmp_path / "not_there.csv"), "-o",
                 str(tmp_path / "o.csv")]) == 1
    line = _one_error_line(capsys)
    assert message in line, line


def test_report_target_not_among_the_columns_is_said_in_the_commands_words(data, tmp_path, capsys):
    X, src = data
    syn = _write_csv(tmp_path / "syn.csv", X[:50])
    assert main(["report", str(src), str(syn), "-b", "0:10,-1:1", "--target", "salary", "-o",
                 str(tmp_path / "r.json"), "-q"]) == 1
    line = _one_error_line(capsys)
    assert "--target 'salary' of dpsynth report must be one of the columns read ('a', 'b')" in line, line
    assert "evaluate.report" not in line and not (tmp_path / "r.json").exists()



def test_w1_of_files_too_large_to_read_says_what_to_do(data, tmp_path, capsys):
    # one row more than the reader's limit (200,000): refused with what to do, for w1 as for synth
    X, src = data
    big = tmp_path / "big.csv"
    big.write_text("a,b\n" + "0.5,0.25\n" * (MAX_ROWS + 1))
    assert main(["w1", str(big), str(src), "-b", "0:10,-1:1", "-q"]) == 1
    line = _one_error_line(capsys)
    assert "at most 200000 can be read" in line and "compare a random sample of the rows of each" in line, line
