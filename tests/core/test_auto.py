"""``auto``: the mechanism picked for a table's public shape (dpsynth_core.defaults.auto_mechanism), through
``run("auto", ...)`` and ``dpsynth synth -m auto``; the release names the choice and why."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from dpsynth_core import Domain, run
from dpsynth_core.cli import main
from dpsynth_core.defaults import MARGINALS_MAX_JOINT, auto_mechanism


def test_the_rule_reads_the_public_shape_only():
    assert auto_mechanism(Domain.unit(1), epsilon=1.0).mechanism == "psmm"
    assert auto_mechanism(Domain.unit(2), epsilon=1.0, delta=1e-5).mechanism == "psmm"
    assert auto_mechanism(Domain.unit(2), epsilon=1.0, delta=1e-5).delta is None  # PSMM is pure
    three = auto_mechanism(Domain.unit(3), epsilon=0.3, delta=1e-5)
    assert three.mechanism == "marginals" and three.delta == 1e-5
    mixed = Domain([0.0], [1.0], names=("x", "c"), categories={"c": ["a", "b"]})
    assert auto_mechanism(mixed, epsilon=1.0).mechanism == "marginals"
    d = int(np.log2(MARGINALS_MAX_JOINT)) + 1  # 2^d joint cells even at 2 bins per axis: above the dense cap
    wide = auto_mechanism(Domain.unit(d), epsilon=1.0)  # wide: the marginal tables fit a tree (no PMM fallback)
    assert wide.mechanism == "marginals" and f"{2**d:,} cells" in wide.reason and "tree" in wide.reason


def test_run_auto_names_its_choice():
    X = np.random.default_rng(0).random((200, 3))
    rel = run("auto", X, Domain.unit(3), epsilon=1.0, delta=1e-5, rng=0)
    assert rel.mechanism == "marginals"
    assert rel.params["auto"]["chosen"] == "marginals" and rel.params["auto"]["reason"]
    assert rel.notes[0].startswith("auto chose marginals: 3 numeric columns")
    two = run("auto", X[:, :2], Domain.unit(2), epsilon=1.0, delta=1e-5, rng=0)
    assert two.mechanism == "psmm" and two.delta == 0.0
    assert "the δ given is not used" in two.notes[0]
    assert json.loads(two.public_json())["params"]["auto"]["chosen"] == "psmm"


def test_auto_refuses_mechanism_parameters():
    X = np.random.default_rng(0).random((50, 3))
    with pytest.raises(TypeError, match="'params' parameter of auto"):
        run("auto", X, Domain.unit(3), epsilon=1.0, fine=8)
    with pytest.raises(ValueError, match="epsilon"):
        run("auto", X, Domain.unit(3), epsilon=-1.0)


def test_cli_auto(tmp_path, capsys):
    rng = np.random.default_rng(1)
    src = tmp_path / "in.csv"
    pd.DataFrame({"a": rng.random(300), "b": rng.random(300), "c": rng.random(300)}).to_csv(src, index=False)
    out, report = tmp_path / "out.csv", tmp_path / "report.json"
    code = main(["synth", "-m", "auto", "-e", "1", "--delta", "1e-5", "-b", "0:1,0:1,0:1", str(src), "-o", str(out),
                 "--report", str(report), "-q"])
    assert code == 0
    rep = json.loads(report.read_text())
    assert rep["mechanism"] == "marginals" and rep["params"]["auto"]["chosen"] == "marginals"
    assert len(pd.read_csv(out)) > 0
    capsys.readouterr()
    assert main(["synth", "-m", "auto", "-e", "1", "-b", "0:1,0:1,0:1", "-p", "fine=8", str(src), "-o", str(out),
                 "-q"]) != 0
    assert "must be left out with -m auto" in capsys.readouterr().err
