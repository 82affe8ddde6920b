"""The README's examples run as written.

* "## The library": every ```python block, in order, in one namespace, as a reader pasting them would.
* "## The command line": its ```bash blocks, in order, as one script run by bash as a user types them --
  `source .venv/bin/activate` first, then the `dpsynth` lines, the heredoc -- in a folder that holds the
  project's environment (`.venv`, as in the project's folder after `make run`), the input files they assume
  and nothing else, with a PATH that does not hold the environment: the activation is what finds `dpsynth`.

The Dask examples further down write about 130 MB of Parquet and start a cluster;
tests/core/test_cli_dask.py covers that path."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

README = Path(__file__).resolve().parents[2] / "README.md"
#: The project's environment: the virtualenv this test runs in (``make setup`` makes it as ``.venv``).
VENV = Path(sys.prefix)


def _blocks(section: str, language: str) -> list[str]:
    """The ```language blocks of the README's section "## section"."""
    text = README.read_text(encoding="utf-8")
    start = text.index(f"\n## {section}\n")
    end = text.index("\n## ", start + 1)
    return re.findall(rf"```{language}\n(.*?)```", text[start:end], flags=re.S)


def _library_blocks() -> list[str]:
    return _blocks("The library", "python")


def _cli_script() -> str:
    """The bash blocks of "## The command line", in order, as one script."""
    return "\n".join(_blocks("The command line", "bash"))


def _cli_commands() -> list[list[str]]:
    """The `dpsynth` commands of the script (continuation lines joined, comments and heredocs' bodies
    left out), each as its argument list."""
    lines, out, skip_to = _cli_script().replace("\\\n", " ").splitlines(), [], None
    for line in lines:
        if skip_to is not None:
            skip_to = None if line.strip() == skip_to else skip_to
            continue
        heredoc = re.search(r"<<'(\w+)'", line)
        if heredoc:
            skip_to = heredoc.group(1)
            continue
        argv = shlex.split(line, comments=True)
        if argv and argv[0] == "dpsynth":
            out.append(argv[1:])
    return out


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


def test_the_command_line_section_has_examples_and_activates_the_environment_first():
    commands = _cli_commands()
    assert {argv[0] for argv in commands} >= {"list", "synth", "w1", "report"}, commands
    first = next(line for line in _cli_script().splitlines() if line.strip())
    assert first.split("#")[0].split() == ["source", ".venv/bin/activate"], first


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_readme_command_line_examples_run_through_a_shell_as_typed(tmp_path):
    """The section's script, run by bash with ``set -e`` in a folder holding ``.venv`` (a link to this
    environment) and the input files: every line exits 0; then what the section promises."""
    _write_inputs(tmp_path)
    (tmp_path / ".venv").symlink_to(VENV, target_is_directory=True)
    script = tmp_path / "readme_cli.sh"
    script.write_text("set -euo pipefail\n" + _cli_script(), encoding="utf-8")
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "LANG": "C.UTF-8"}
    assert not any(Path(p, "dpsynth").exists() for p in env["PATH"].split(":")), "dpsynth is on the bare PATH"
    proc = subprocess.run(["bash", str(script)], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=280)
    assert proc.returncode == 0, f"the README's command line failed:\n{proc.stderr[-3000:]}"

    assert "psmm" in proc.stdout and "cells" in proc.stdout  # dpsynth list -v
    w1 = [line for line in proc.stdout.splitlines() if re.fullmatch(r"[0-9.e-]+", line.strip())]
    assert w1 and 0 <= float(w1[0]) <= 1  # unit-cube units

    psmm = pd.read_csv(tmp_path / "out.csv")
    assert list(psmm.columns) == ["a", "b"] and psmm.to_numpy().min() >= 0 and psmm.to_numpy().max() <= 10

    public = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    assert public["mechanism"] == "pmm" and "OWNER" not in json.dumps(public)
    assert public["domain"]["integers"] == ["age"]  # the mixed health release: --integers age
    owner = json.loads((tmp_path / "owner_report.json").read_text(encoding="utf-8"))
    assert owner["is_dp"] is False and owner["label"].startswith("OWNER VIEW")
    assert owner["n_real"] == 400 and owner["downstream"]["target"] == "income"

    mixed = pd.read_csv(tmp_path / "synthetic.csv")  # the health table's release
    assert list(mixed.columns) == ["age", "sex", "bmi", "region", "smoker"]
    assert set(mixed["sex"]) <= {"F", "M"} and set(mixed["region"]) <= {"north", "south", "east"}
    assert np.array_equal(mixed["age"], mixed["age"].round())  # a declared integer column: whole numbers
    again = pd.read_csv(tmp_path / "again.csv")  # --domain report.json: the report's domain, as it is
    assert list(again.columns) == list(mixed.columns) and np.array_equal(again["age"], again["age"].round())
