"""One test per validation rule of dpsynth_core.validation, and the message format of docs/README.md, "Library conventions"."""

import math

import numpy as np
import pandas as pd
import pytest

from dpsynth_core.validation import (
    check_bool,
    check_choice,
    check_float,
    check_int,
    check_points,
    check_probability,
    check_rng,
)


def test_message_format_matches_design():
    with pytest.raises(ValueError) as exc:
        check_float(-1, "epsilon", "pmm", low=0.0, low_open=True)
    assert str(exc.value) == "The 'epsilon' parameter of pmm must be a float in (0, inf). Got -1."


@pytest.mark.parametrize("bad", [0, -1, math.inf, math.nan])
def test_float_value_errors(bad):
    with pytest.raises(ValueError, match=r"'epsilon' parameter of pmm must be a float in \(0, inf\)"):
        check_float(bad, "epsilon", "pmm", low=0.0, low_open=True)


@pytest.mark.parametrize("bad", ["1", None, True, [1.0], 1 + 2j])
def test_float_type_errors(bad):
    with pytest.raises(TypeError, match="'epsilon' parameter of pmm must be a float"):
        check_float(bad, "epsilon", "pmm", low=0.0, low_open=True)


def test_float_closed_interval_and_numpy_scalars():
    assert check_float(np.float32(0.5), "x", "f", low=0.0, high=1.0) == 0.5
    assert check_float(0, "x", "f", low=0.0, high=1.0) == 0.0
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        check_float(1.5, "x", "f", low=0.0, high=1.0)


def test_probability_is_open():
    for bad in (0.0, 1.0):
        with pytest.raises(ValueError, match=r"\(0, 1\)"):
            check_probability(bad, "delta", "pe")
    assert check_probability(1e-5, "delta", "pe") == 1e-5


def test_int_rules():
    assert check_int(3.0, "depth", "pmm", low=0) == 3
    assert check_int(np.int64(4), "depth", "pmm", low=0, high=26) == 4
    with pytest.raises(ValueError, match=r"must be an int in \[0, 26\]. Got 27"):
        check_int(27, "depth", "pmm", low=0, high=26)
    with pytest.raises(ValueError, match="must be an int"):
        check_int(2.5, "depth", "pmm", low=0)
    with pytest.raises(TypeError, match="must be an int"):
        check_int("3", "depth", "pmm", low=0)
    with pytest.raises(TypeError):
        check_int(True, "depth", "pmm", low=0)
    with pytest.raises(ValueError):
        check_int(math.nan, "depth", "pmm")


def test_choice_rules():
    assert check_choice("a", "mode", "f", ("a", "b")) == "a"
    with pytest.raises(ValueError, match="must be one of 'a', 'b'. Got 'c'"):
        check_choice("c", "mode", "f", ("a", "b"))
    with pytest.raises(TypeError):
        check_choice(1, "mode", "f", ("a", "b"))


def test_bool_rule():
    assert check_bool(np.bool_(True), "x", "f") is True
    with pytest.raises(TypeError, match="must be a bool"):
        check_bool(1, "x", "f")


def test_rng_rules():
    g = np.random.default_rng(0)
    assert check_rng(g, "f") is g
    assert isinstance(check_rng(None, "f"), np.random.Generator)
    a, b = check_rng(7, "f").random(3), check_rng(7, "f").random(3)
    assert np.array_equal(a, b)
    with pytest.raises(ValueError):
        check_rng(-1, "f")
    with pytest.raises(TypeError):
        check_rng("seed", "f")


def test_points_rules():
    assert check_points([1.0, 2.0], "X", "f").shape == (2, 1)
    assert check_points(np.ones((3, 2), dtype=np.int32), "X", "f", d=2).dtype == np.float64
    df = pd.DataFrame({"a": [1.0, 2.0], "b": [3.0, 4.0], "c": [5, 6]})
    assert check_points(df, "X", "f", columns=["b", "a"]).tolist() == [[3.0, 1.0], [4.0, 2.0]]
    with pytest.raises(ValueError, match=r"must have the columns \[.z.\]. Got a table without"):
        check_points(df, "X", "f", columns=["z"])
    with pytest.raises(TypeError, match="non-numeric"):
        check_points(pd.DataFrame({"s": ["x", "y"]}), "X", "f")
    with pytest.raises(ValueError, match=r"shape \(n, 3\)"):
        check_points(np.ones((3, 2)), "X", "f", d=3)
    with pytest.raises(ValueError, match="at least 1 row"):
        check_points(np.ones((0, 2)), "X", "f")
    with pytest.raises(ValueError, match=r"a missing value \(NaN\) at row 1 \(counting from 0\), column 0"):
        check_points([[0.0], [np.nan]], "X", "f")
    with pytest.raises(ValueError, match="finite"):
        check_points([[np.inf, 0.0]], "X", "f")
    with pytest.raises(TypeError):
        check_points("abc", "X", "f")
    with pytest.raises(TypeError):
        check_points(np.array(["a", "b"]), "X", "f")
    with pytest.raises(ValueError, match="shape"):
        check_points(np.ones((2, 2, 2)), "X", "f")
    with pytest.raises(ValueError, match="at most 3 columns"):
        check_points(np.ones((2, 4)), "X", "f", max_dim=3)
