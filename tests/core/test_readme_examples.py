"""The README's examples run as written.

* "## The library": every ```python block, in order, in one namespace, as a reader pasting them would.
* "## The command line": every `dpsynth` line of its ```bash blocks, in order, in one folder, through
  the console script's entry point (in process), on small input files made here; a heredoc writes
  its file as the shell would. The synth commands get `--seed 7` so that the test is reproducible.

The Dask examples further down write about 130 MB of Parquet and start a cluster;
tests/core/test_cli_dask.py covers that path."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpsynth_core.cli import main

README = Path(__file__).resolve().parents[2] / "README.md"


def _blocks(section: str, language: str) -> list[str]:
    """The ```language blocks of the README's section "## section"."""
    text = README.read_text(encoding="utf-8")
    start = text.index(f"\n## {section}\n")
    end = text.index("\n## ", start + 1)
    return re.findall(rf"```{language}\n(.*?)```", text[start:end], flags=re.S)


def _library_blocks() -> list[str]:
    return _blocks("The library", "python")


def _cli_steps() -> list[tuple[str, object]]:
    """The shell steps of "## The command line", in order: ("file", (name, text)) for a
    `cat > name <<'TAG'` heredoc, ("dpsynth", argv) for a `dpsynth` command (continuation lines
    joined, comments dropped). Any other command is an error: this test would not run it."""
    steps: list[tuple[str, object]] = []
    for block in _blocks("The command line", "bash"):
        lines = block.replace("\\\n", " ").splitlines()
        i = 0
        while i < len(lines):
            line = lines[i].strip()
            i += 1
            heredoc = re.fullmatch(r"cat > (\S+) <<'(\w+)'", line)
            if heredoc:
                name, tag = heredoc.groups()
                end = lines.index(tag, i)
                steps.append(("file", (name, "\n".join(lines[i:end]) + "\n")))
                i = end + 1
                continue
            argv = shlex.split(line, comments=True)
            if not argv:
                continue
            assert argv[0] == "dpsynth", f"a README command this test does not run: {line!r}"
            steps.append(("dpsynth", argv[1:]))
    return steps


def _write_inputs(folder: Path) -> None:
    """The files the command-line examples assume: people.csv (age, income) and data.csv (a, b and a
    column c they leave out, with a few missing values for --drop-missing)."""
    rng = np.random.default_rng(0)
    n = 400
    pd.DataFrame({"age": rng.uniform(18, 95, n).round(1),
                  "income": rng.gamma(2.0, 2e4, n).round(0)}).to_csv(folder / "people.csv", index=False)
    a = rng.normal(5, 2, n).clip(0, 10)
    data = pd.DataFrame({"a": a.round(3), "b": (a + rng.normal(0, 1, n)).clip(0, 10).round(3),
                         "c": rng.integers(0, 100, n)})
    data.loc[[3, 17, 200], "a"] = np.nan
    data.to_csv(folder / "data.csv", index=False)


def test_the_library_section_has_examples():
    blocks = _library_blocks()
    assert len(blocks) >= 3, blocks  # the first release, the mixed table, what the release preserves


@pytest.mark.timeout(300)
def test_readme_library_examples_run_and_do_what_they_say(tmp_path, monkeypatch):
    """Each block in order, in one namespace; after each, what its comments promise."""
    monkeypatch.chdir(tmp_path)
    first, mixed, report = _library_blocks()[:3]
    ns: dict = {}

    exec(compile(first, str(README), "exec"), ns)  # noqa: S102 - the README's own code
    rel = ns["rel"]
    assert isinstance(rel.synthetic, np.ndarray) and rel.synthetic.shape[1] == 2
    assert np.all((rel.synthetic >= 0) & (rel.synthetic <= 1))
    assert rel.is_dp and rel.privacy.startswith("(1, 0)-DP"), rel.privacy
    assert np.isclose(rel.ledger.to_frame()["epsilon"].sum(), 1.0)

    exec(compile(mixed, str(README), "exec"), ns)  # noqa: S102
    rel, dom = ns["rel"], ns["dom"]
    assert isinstance(rel.synthetic, pd.DataFrame) and list(rel.synthetic.columns) == list(dom.names)
    for col, labels in dom.categories.items():
        assert set(rel.synthetic[col].astype(str)) <= set(labels), col

    exec(compile(report, str(README), "exec"), ns)  # noqa: S102
    assert ns["rep"].to_frame("guarantees").shape[0] > 0
    assert ns["rep"].to_frame("downstream").shape[0] > 0


def test_the_command_line_section_has_examples():
    commands = [argv for kind, argv in _cli_steps() if kind == "dpsynth"]
    assert {argv[0] for argv in commands} >= {"list", "synth", "w1", "report"}, commands


@pytest.mark.timeout(120)
def test_readme_command_line_examples_run_and_do_what_they_say(tmp_path, monkeypatch, capsys):
    """Each command in order in one folder: every one exits 0; then what the section promises."""
    monkeypatch.chdir(tmp_path)
    _write_inputs(tmp_path)
    outputs: dict[str, str] = {}
    for kind, step in _cli_steps():
        if kind == "file":
            name, text = step
            (tmp_path / name).write_text(text, encoding="utf-8")
            continue
        argv = list(step) + (["--seed", "7"] if step[0] == "synth" else [])
        code = main(argv)
        out, err = capsys.readouterr()
        assert code == 0, f"dpsynth {shlex.join(step)} exited {code}: {err}"
        outputs[step[0]] = out

    assert "psmm" in outputs["list"] and "cells" in outputs["list"]
    assert 0 <= float(outputs["w1"].strip()) <= 1  # unit-cube units

    psmm = pd.read_csv(tmp_path / "out.csv")
    assert list(psmm.columns) == ["a", "b"] and len(psmm) > 0
    assert psmm.to_numpy().min() >= 0 and psmm.to_numpy().max() <= 10

    public = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    assert public["mechanism"] == "pmm" and "OWNER" not in json.dumps(public)
    owner = json.loads((tmp_path / "owner_report.json").read_text(encoding="utf-8"))
    assert owner["is_dp"] is False and owner["label"].startswith("OWNER VIEW")
    assert owner["n_real"] == 400 and owner["downstream"]["target"] == "income"

    mixed = pd.read_csv(tmp_path / "synthetic.csv")  # the last synth: the mixed health table
    assert list(mixed.columns) == ["age", "sex", "bmi", "region", "smoker"] and len(mixed) > 0
    assert set(mixed["sex"]) <= {"F", "M"} and set(mixed["region"]) <= {"north", "south", "east"}
