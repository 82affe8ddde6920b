import numpy as np
import pandas as pd
import pytest

from dpsynth_core import Domain


def test_to_unit_from_unit_roundtrip_and_clamping():
    dom = Domain(lower=[-1, 10], upper=[1, 20], names=["a", "b"])
    X = np.array([[0.0, 15.0], [-1.0, 10.0], [5.0, 0.0]])
    U, n_clamped = dom.to_unit(X, return_clamped=True)
    assert n_clamped == 1
    assert U.tolist() == [[0.5, 0.5], [0.0, 0.0], [1.0, 0.0]]
    assert np.allclose(dom.from_unit(U[:2]), X[:2])
    assert dom.contains(X).tolist() == [True, True, False]


def test_dataframe_columns_selected_by_name():
    dom = Domain(lower=[0, 0], upper=[2, 4], names=["y", "x"])
    df = pd.DataFrame({"x": [4.0], "y": [1.0], "z": ["s"]})
    assert dom.to_unit(df).tolist() == [[0.5, 1.0]]


def test_frozen():
    dom = Domain.unit(2)
    with pytest.raises(AttributeError):
        dom.lower = (1.0, 1.0)


@pytest.mark.parametrize(
    "kwargs,exc,match",
    [
        (dict(lower=[1], upper=[0]), ValueError, "greater than 'lower'"),
        (dict(lower=[0], upper=[0]), ValueError, "greater than 'lower'"),
        (dict(lower=[0, 0], upper=[1]), ValueError, "same length"),
        (dict(lower=[np.nan], upper=[1]), ValueError, "'lower' parameter of Domain"),
        (dict(lower=[0], upper=[np.inf]), ValueError, "'upper' parameter of Domain"),
        (dict(lower="0", upper=[1]), TypeError, "'lower' parameter of Domain"),
        (dict(lower=[], upper=[]), ValueError, "non-empty"),
        (dict(lower=[-1e308], upper=[1e308]), ValueError, "finite width"),
        (dict(lower=[0, 0], upper=[1, 1], names=["a"]), ValueError, "'names' parameter"),
        (dict(lower=[0, 0], upper=[1, 1], names=["a", "a"]), ValueError, "distinct"),
    ],
)
def test_domain_validation(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        Domain(**kwargs)


def test_parse_bounds():
    dom = Domain.parse("0:1,-2:3.5")
    assert dom.lower == (0.0, -2.0) and dom.upper == (1.0, 3.5)
    assert Domain.parse("0:16", names=["a", "b", "c"]).d == 3
    for bad in ["", "0-1", "a:b", "0:1:2"]:
        with pytest.raises(ValueError):
            Domain.parse(bad)
    with pytest.raises(ValueError, match="greater"):
        Domain.parse("1:0")


def test_unit_and_dimension_mismatch():
    with pytest.raises(ValueError):
        Domain.unit(0)
    with pytest.raises(ValueError, match=r"shape \(n, 2\)"):
        Domain.unit(2).to_unit(np.ones((3, 3)))


def test_no_function_derives_bounds_from_data():
    # The privacy model forbids it: the class offers no constructor from a sample.
    public = [n for n in dir(Domain) if not n.startswith("_")]
    assert not [n for n in public if "fit" in n or "from_data" in n or "infer" in n]


# ----------------------------------------------------------------------------- integer columns
def test_integer_columns_declared_round_trip_and_checked():
    dom = Domain([0, 0], [10, 1], names=["children", "x"], integers=["children"])
    assert dom.integers == ("children",)
    assert dom.integer_mask.tolist() == [True, False]
    assert Domain.from_dict(dom.to_dict()) == dom
    assert "integers" not in Domain([0], [1]).to_dict()  # a domain without them reads as before
    with pytest.raises(ValueError, match="whole number between their bounds"):
        Domain([0.2], [0.8], integers=["x0"])
    with pytest.raises(ValueError, match="did you mean 'children'"):
        Domain([0, 0], [10, 1], names=["children", "x"], integers=["childern"])
    with pytest.raises(ValueError, match="numeric columns"):
        Domain([0], [1], names=["x", "sex"], categories={"sex": ["F", "M"]}, integers=["sex"])


def test_round_integers_keeps_other_columns_and_stays_inside_the_bounds():
    dom = Domain([0.5, 0], [9.5, 1], names=["k", "x"], integers=["k"])
    X = np.array([[0.5, 0.25], [3.716, 0.5], [9.5, 0.75]])
    out = dom.round_integers(X)
    assert out[:, 0].tolist() == [1.0, 4.0, 9.0]  # rounded, then clipped to the whole numbers in [0.5, 9.5]
    assert out[:, 1].tolist() == X[:, 1].tolist()
    assert X[1, 0] == 3.716  # the input is not changed


def test_every_mechanism_releases_whole_numbers_in_declared_integer_columns():
    from dpsynth_core import run

    dom = Domain([0, 0], [10, 1], names=["k", "x"], integers=["k"])
    X = np.random.default_rng(0).random((600, 2)) * [10, 1]
    for name in ("pmm", "psmm", "haar_walk", "flat_histogram", "low_dim"):
        Y = run(name, X, dom, epsilon=1.0, rng=0).synthetic
        assert np.array_equal(Y[:, 0], np.round(Y[:, 0])), name
        assert not np.array_equal(Y[:, 1], np.round(Y[:, 1])), name  # the other column is untouched
