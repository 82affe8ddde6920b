"""``dpsynth synth --engine dask`` (issue #20): Parquet and CSV files read lazily, the same release.

The dask engine hands a Dask DataFrame to the same mechanism; with the same seed the synthetic CSV
and the report must be byte for byte those of the numpy engine on the concatenated rows. Most tests
compute with Dask's synchronous scheduler (``DPSYNTH_DASK_SCHEDULER=synchronous``, the CLI's switch
for tests and debugging); one test starts the real ``distributed.LocalCluster`` the CLI uses by
default.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpsynth_core import cli
from dpsynth_core import rows as rows_module
from dpsynth_core.cli import _common as cli_common
from dpsynth_core.cli import _dask as cli_dask
from dpsynth_core.cli import main

BOUNDS = "0:10,-1:1"


@pytest.fixture(autouse=True)
def _synchronous(monkeypatch):
    monkeypatch.setenv(cli.SCHEDULER_ENV, "synchronous")


def _data(n=900, seed=0):
    return np.random.default_rng(seed).random((n, 2)) * [10.0, 2.0] + [0.0, -1.0]


def _write_csv(path: Path, X: np.ndarray, names=("a", "b")) -> Path:
    lines = [",".join(names)] + [",".join(repr(float(v)) for v in row) for row in X]
    path.write_text("\n".join(lines) + "\n")
    return path


def _write_parts(folder: Path, X: np.ndarray, kind: str, parts: int = 3) -> list[Path]:
    """X split into ``parts`` files (uneven sizes); Parquet files also carry a text column."""
    folder.mkdir(parents=True, exist_ok=True)
    cuts = np.array_split(np.arange(X.shape[0]), parts)
    out = []
    for i, idx in enumerate(cuts):
        if kind == "parquet":
            path = folder / f"part-{i}.parquet"
            pd.DataFrame({"a": X[idx, 0], "name": ["x"] * len(idx), "b": X[idx, 1]}).to_parquet(path)
        else:
            path = _write_csv(folder / f"part-{i}.csv", X[idx])
        out.append(path)
    return out


def _synth(args, tmp_path, tag):
    out, rep = tmp_path / f"{tag}.csv", tmp_path / f"{tag}.json"
    code = main(["synth", *args, "-o", str(out), "--report", str(rep)])
    return code, out, rep


def _numpy_reference(X, tmp_path, options):
    whole = _write_csv(tmp_path / "whole.csv", X)
    code, out, rep = _synth([str(whole), *options], tmp_path, "numpy")
    assert code == 0
    return out.read_bytes(), rep.read_bytes()


def _one_error_line(capsys) -> str:
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith("dpsynth: error: ") and "Traceback" not in err
    return lines[0]


# ------------------------------------------------------------------------ identical releases
CASES = [
    ("pmm", ["--param", "depth=6"]),
    ("psmm", []),
    ("flat_histogram", []),
    ("haar_walk", []),
    ("pmm", ["--neighbours", "replace"]),
    ("sparse_marginals", []),
    ("private_evolution", ["--delta", "1e-6", "--param", "iterations=2"]),
    ("per_point_laplace", []),
    ("low_dim", ["--param", "target_dim=1"]),
]


@pytest.mark.parametrize(("mechanism", "extra"), CASES)
def test_parquet_glob_gives_the_numpy_release(mechanism, extra, tmp_path, capsys):
    X = _data()
    _write_parts(tmp_path / "data", X, "parquet")
    options = ["-m", mechanism, "-e", "1", "-b", BOUNDS, "--seed", "7", "--columns", "a,b", *extra]
    want_csv, want_rep = _numpy_reference(X, tmp_path, options)
    capsys.readouterr()
    code, out, rep = _synth([str(tmp_path / "data" / "*.parquet"), "--engine", "dask", *options], tmp_path, "dask")
    assert code == 0
    assert out.read_bytes() == want_csv
    assert rep.read_bytes() == want_rep
    report = json.loads(rep.read_text())
    assert "reproducible, not private" in report["label"]
    err = capsys.readouterr().err
    assert "3 Parquet file(s)" in err and "NOT private" in err and "wrote" in err


def test_csv_directory_and_text_column_left_out(tmp_path, capsys):
    X = _data(seed=1)
    _write_parts(tmp_path / "csvs", X, "csv", parts=4)
    options = ["-m", "pmm", "-e", "1", "-b", BOUNDS, "--seed", "3"]
    want_csv, want_rep = _numpy_reference(X, tmp_path, options)
    code, out, rep = _synth([str(tmp_path / "csvs"), "--engine", "dask", *options], tmp_path, "dask")
    assert code == 0
    assert out.read_bytes() == want_csv and rep.read_bytes() == want_rep
    # Parquet with a text column and no --columns: the text column is left out, as the numpy engine does
    _write_parts(tmp_path / "pq", X, "parquet")
    capsys.readouterr()
    code, out2, rep2 = _synth([str(tmp_path / "pq"), "--engine", "dask", *options], tmp_path, "dask2")
    assert code == 0
    assert out2.read_bytes() == want_csv and rep2.read_bytes() == want_rep
    assert "left out 1 column(s) not holding numbers: 'name'" in capsys.readouterr().err


def test_csv_separator_follows_the_numpy_engines_rule(tmp_path, capsys):
    """The separator is detected by dpsynth_core.tabular's rule: semicolons are read; a file that splits
    equally well at two separators is refused with the same advice, and nothing is written."""
    X = _data(seed=2)
    options = ["-m", "pmm", "-e", "1", "-b", BOUNDS, "--seed", "3"]
    want_csv, want_rep = _numpy_reference(X, tmp_path, options)
    semi = tmp_path / "semi"
    semi.mkdir()
    (semi / "part-0.csv").write_text("a;b\n" + "".join(f"{float(x)!r};{float(y)!r}\n" for x, y in X))
    code, out, rep = _synth([str(semi), "--engine", "dask", *options], tmp_path, "semi")
    assert code == 0 and out.read_bytes() == want_csv and rep.read_bytes() == want_rep
    both = tmp_path / "both"
    both.mkdir()
    (both / "part-0.csv").write_text("a,b;c\n" + "".join(f"{i},{i};{i}\n" for i in range(30)))
    capsys.readouterr()
    code, out, rep = _synth([str(both), "--engine", "dask", *options], tmp_path, "both")
    assert code != 0 and not out.exists() and not rep.exists()
    assert "could be split into columns" in _one_error_line(capsys)


def test_decimal_commas_and_a_bad_encoding_are_read_as_the_numpy_engine_reads_them(tmp_path, capsys):
    """A semicolon file with decimal commas: the numpy engine reads it (its note says so); the Dask engine left
    the column out as text, silently changing the release. Now both give the same bytes. A Latin-1 file and a
    missing input get the numpy engine's words, not a codec's or the OS's."""
    X = _data(seed=4)
    options = ["-m", "pmm", "-e", "1", "-b", BOUNDS, "--seed", "3"]
    comma = tmp_path / "comma.csv"
    comma.write_text("a;b\n" + "".join(f"{float(x)!r};{float(y)!r}\n".replace(".", ",") for x, y in X))
    code, want_csv, want_rep = _synth([str(comma), *options], tmp_path, "numpy")
    assert code == 0
    code, out, rep = _synth([str(comma), "--engine", "dask", *options], tmp_path, "dask")
    assert code == 0 and out.read_bytes() == want_csv.read_bytes() and rep.read_bytes() == want_rep.read_bytes()
    assert out.read_text().splitlines()[0] == "a,b"  # both columns, none left out
    capsys.readouterr()
    latin = tmp_path / "latin.csv"
    latin.write_bytes("a,b\n1,2\n3,4\n".encode() + "5,6 # Müller\n".encode("latin-1"))
    code, out, _ = _synth([str(latin), "--engine", "dask", *options], tmp_path, "latin_out")
    assert code == 1 and not out.exists()
    assert "is not UTF-8 text" in _one_error_line(capsys)
    code, _, _ = _synth([str(tmp_path / "nope.csv"), "--engine", "dask", *options], tmp_path, "nope")
    assert code == 1 and "is not a file, a folder or a glob pattern" in _one_error_line(capsys)


@pytest.mark.slow
def test_local_cluster_end_to_end(tmp_path, monkeypatch, capsys):
    """The default: a distributed.LocalCluster of worker processes, started and closed by the CLI."""
    monkeypatch.delenv(cli.SCHEDULER_ENV, raising=False)
    X = _data(n=2000, seed=4)
    _write_parts(tmp_path / "data", X, "parquet", parts=5)
    options = ["-m", "psmm", "-e", "1", "-b", BOUNDS, "--seed", "5", "--columns", "a,b"]
    want_csv, want_rep = _numpy_reference(X, tmp_path, options)
    capsys.readouterr()
    code, out, rep = _synth([str(tmp_path / "data" / "*.parquet"), "--engine", "dask",
                             "--workers", "2", "--memory-limit", "1GB", *options], tmp_path, "dask")
    err = capsys.readouterr().err
    assert code == 0, err
    assert out.read_bytes() == want_csv and rep.read_bytes() == want_rep
    assert "local Dask cluster: 2 worker process(es), 1 thread each, memory limit 0.93 GiB per worker" in err
    assert "Dask tasks" in err


# ------------------------------------------------------------------------ clear errors
def test_glob_without_files(tmp_path, capsys):
    code = main(["synth", str(tmp_path / "nowhere" / "*.parquet"), "--engine", "dask", "-m", "pmm", "-e", "1",
                 "-b", BOUNDS, "-o", str(tmp_path / "out.csv")])
    assert code == 1
    assert "matches no file" in _one_error_line(capsys)
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["synth", str(empty), "--engine", "dask", "-m", "pmm", "-e", "1", "-b", BOUNDS,
                 "-o", str(tmp_path / "out.csv")]) == 1
    assert "holds no Parquet (*.parquet) or CSV (*.csv) file" in _one_error_line(capsys)
    assert not (tmp_path / "out.csv").exists()


@pytest.mark.parametrize(("columns", "message"), [
    ("a,zz", "has no column 'zz'; its columns are 'a', 'name', 'b'"),
    ("a,nme", "(did you mean 'name'?)"),
    ("a,name", "column 'name' holds text, not numbers"),
])
def test_bad_columns(columns, message, tmp_path, capsys):
    _write_parts(tmp_path / "data", _data(), "parquet")
    code = main(["synth", str(tmp_path / "data" / "*.parquet"), "--engine", "dask", "-m", "pmm", "-e", "1",
                 "-b", BOUNDS, "--columns", columns, "-o", str(tmp_path / "out.csv")])
    assert code == 1
    line = _one_error_line(capsys)
    assert message in line and "(3 Parquet files)" in line
    assert not (tmp_path / "out.csv").exists()


def test_text_cell_and_missing_value_in_csv(tmp_path, capsys):
    folder = tmp_path / "csvs"
    _write_parts(folder, _data(), "csv")
    with open(folder / "part-2.csv", "a") as fh:
        fh.write("secret-text,0.5\n")
    code = main(["synth", str(folder / "*.csv"), "--engine", "dask", "-m", "pmm", "-e", "1", "-b", BOUNDS, "-q",
                 "-o", str(tmp_path / "out.csv")])
    assert code == 1
    line = _one_error_line(capsys)
    # found again by the numpy engine's reader: the file, the row (header = 1) and the column; no cell quoted
    assert "The input file 'part-2.csv' has a cell that is not a number at row 302, column 'a'" in line, line
    assert "secret-text" not in line and "--columns" in line
    # beyond the re-reading budget: the general message, still without the cell
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(cli_dask, "LOCATE_MAX_BYTES", 100)
        code = main(["synth", str(folder / "*.csv"), "--engine", "dask", "-m", "pmm", "-e", "1", "-b", BOUNDS, "-q",
                     "-o", str(tmp_path / "out.csv")])
    assert code == 1
    line = _one_error_line(capsys)
    assert "holds text, not a number" in line and "secret-text" not in line
    (folder / "part-2.csv").write_text("a,b\n1.0,\n2.0,0.5\n")
    code = main(["synth", str(folder / "*.csv"), "--engine", "dask", "-m", "pmm", "-e", "1", "-b", BOUNDS, "-q",
                 "-o", str(tmp_path / "out.csv")])
    assert code == 1
    line = _one_error_line(capsys)
    assert "missing or infinite value in column 'b'" in line and "--drop-missing" in line
    code = main(["synth", str(folder / "*.csv"), "--engine", "dask", "-m", "pmm", "-e", "1", "-b", BOUNDS,
                 "--drop-missing", "-q", "-o", str(tmp_path / "out.csv")])
    assert code == 0 and (tmp_path / "out.csv").exists()


def test_usage_errors(tmp_path, capsys):
    base = ["synth", str(tmp_path / "*.parquet"), "-m", "pmm", "-e", "1", "-b", BOUNDS, "-o", str(tmp_path / "o.csv")]
    assert main([*base, "--engine", "numpy", "--scheduler", "tcp://127.0.0.1:8786"]) == 2
    assert "needs --engine dask" in capsys.readouterr().err
    assert main([*base, "--workers", "2"]) == 2
    assert "needs --engine dask" in capsys.readouterr().err
    assert main([*base, "--scheduler", "tcp://127.0.0.1:8786", "--memory-limit", "2GB"]) == 2
    assert "--scheduler replaces" in capsys.readouterr().err
    # a glob the shell expanded: argparse sees several inputs, the message says to quote it
    assert main(["synth", "a.parquet", "b.parquet", "--engine", "dask", "-m", "pmm", "-e", "1", "-b", BOUNDS,
                 "-o", str(tmp_path / "o.csv")]) == 2
    assert "must be quoted, e.g. 'data/*.parquet'" in capsys.readouterr().err
    # the numpy engine reads one CSV file and says so for a glob
    assert main(base) == 1
    assert "use --engine dask" in _one_error_line(capsys)


def test_unknown_local_scheduler_and_unreachable_cluster(tmp_path, monkeypatch, capsys):
    _write_parts(tmp_path / "data", _data(), "parquet")
    base = ["synth", str(tmp_path / "data"), "-m", "pmm", "-e", "1", "-b", BOUNDS, "--columns", "a,b",
            "-o", str(tmp_path / "o.csv")]
    monkeypatch.setenv(cli.SCHEDULER_ENV, "gpu")
    assert main([*base, "--engine", "dask", "-q"]) == 1
    assert "DPSYNTH_DASK_SCHEDULER must be one of synchronous, threads, processes" in _one_error_line(capsys)
    monkeypatch.setattr(cli_dask, "CONNECT_TIMEOUT", 1)
    assert main([*base, "-q", "--scheduler", "tcp://127.0.0.1:1"]) == 1  # --scheduler implies the dask engine
    assert "could not connect to the Dask scheduler at 'tcp://127.0.0.1:1'" in _one_error_line(capsys)
    assert not (tmp_path / "o.csv").exists()


# ------------------------------------------------------------------------ nothing half-written
def test_corrupt_parquet_file_writes_nothing(tmp_path, capsys):
    files = _write_parts(tmp_path / "data", _data(), "parquet")
    files[1].write_bytes(files[1].read_bytes()[: 200])  # a truncated file among good ones
    out, rep = tmp_path / "out.csv", tmp_path / "out.json"
    out.write_text("previous run\n")
    code = main(["synth", str(tmp_path / "data" / "*.parquet"), "--engine", "dask", "-m", "pmm", "-e", "1",
                 "-b", BOUNDS, "--columns", "a,b", "-q", "-o", str(out), "--report", str(rep)])
    assert code == 1
    _one_error_line(capsys)
    assert out.read_text() == "previous run\n" and not rep.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data", "out.csv"]  # no temporary file left


def test_failing_worker_writes_nothing(tmp_path, monkeypatch, capsys):
    _write_parts(tmp_path / "data", _data(), "parquet")
    real = rows_module._block_stat
    calls = []

    def flaky(block, spec, stat, args):
        calls.append(1)
        if len(calls) == 2:
            raise ConnectionResetError("the worker went away")
        return real(block, spec, stat, args)

    monkeypatch.setattr(rows_module, "_block_stat", flaky)
    out, rep = tmp_path / "out.csv", tmp_path / "out.json"
    code = main(["synth", str(tmp_path / "data"), "--engine", "dask", "-m", "psmm", "-e", "1", "-b", BOUNDS,
                 "--columns", "a,b", "-q", "-o", str(out), "--report", str(rep)])
    assert code == 1
    line = _one_error_line(capsys)
    assert "a Dask worker failed" in line and "the worker went away" in line and "No output was written" in line
    assert not out.exists() and not rep.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data"]


def test_outputs_are_all_or_nothing(tmp_path):
    a, b = tmp_path / "a.csv", tmp_path / "b.json"
    a.write_text("old\n")
    with pytest.raises(AttributeError):  # the second output cannot be written (not text)
        cli_common.write_outputs([(str(a), b"new\n"), (str(b), 12345)])
    assert a.read_text() == "old\n" and not b.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.csv"]
    cli_common.write_outputs([(str(a), b"new\n"), (str(b), "{}\n")])
    assert a.read_text() == "new\n" and b.read_text() == "{}\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.csv", "b.json"]


def test_missing_output_directory_refused_before_the_run(tmp_path, monkeypatch, capsys):
    _write_parts(tmp_path / "data", _data(), "parquet")
    monkeypatch.setattr(rows_module, "_block_stat", None)  # the data must not even be read
    code = main(["synth", str(tmp_path / "data"), "--engine", "dask", "-m", "pmm", "-e", "1", "-b", BOUNDS,
                 "-o", str(tmp_path / "out.csv"), "--report", str(tmp_path / "no" / "such" / "r.json")])
    assert code == 1
    assert "No such file or directory" in _one_error_line(capsys)
    assert not (tmp_path / "out.csv").exists()


# ------------------------------------------------------------------------ progress and warnings
def test_progress_lines_and_quiet(tmp_path, monkeypatch, capsys):
    _write_parts(tmp_path / "data", _data(), "parquet", parts=4)
    real = rows_module._block_stat

    def slow(block, spec, stat, args):
        import time

        time.sleep(0.05)
        return real(block, spec, stat, args)

    monkeypatch.setattr(rows_module, "_block_stat", slow)
    monkeypatch.setattr(cli_common, "HEARTBEAT_SECONDS", 0.02)
    args = ["synth", str(tmp_path / "data"), "--engine", "dask", "-m", "pmm", "-e", "1", "-b", BOUNDS,
            "--columns", "a,b", "-o", str(tmp_path / "out.csv")]
    assert main(args) == 0
    err = capsys.readouterr().err
    assert "pmm: still running (" in err and "Dask tasks finished so far:" in err
    assert main([*args, "--quiet"]) == 0
    assert capsys.readouterr().err == ""


def test_clamping_warning_uses_the_mechanisms_count(tmp_path, capsys):
    X = _data(n=1000, seed=2)
    X[:50, 0] = 12.0  # 5% of the rows above the upper bound of 'a'
    _write_parts(tmp_path / "data", X, "parquet")
    whole = _write_csv(tmp_path / "whole.csv", X)
    options = ["-m", "pmm", "-e", "1", "-b", BOUNDS, "--columns", "a,b", "-q", "--seed", "1"]
    assert main(["synth", str(whole), "-o", str(tmp_path / "n.csv"), *options]) == 0
    numpy_err = capsys.readouterr().err
    assert main(["synth", str(tmp_path / "data"), "--engine", "dask", "-o", str(tmp_path / "d.csv"), *options]) == 0
    dask_err = capsys.readouterr().err
    # one count and one decision (dpsynth_core.clamping): the dask engine's from the mechanism's own pass,
    # without the per-column detail a second pass would cost
    head = "warning: 50 of 1,000 rows (5%) have a value outside the bounds"
    assert head in numpy_err and "'a' (0 below, 50 above)" in numpy_err
    assert head in dask_err and "The release goes ahead" in dask_err and "Owner view" in dask_err
