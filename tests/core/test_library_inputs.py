"""The library's own guards on a user's table: a DataFrame is read by column name, never by position, and
bounds that clamp many rows are said (owner's eyes only)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from dpsynth_core import ClampedRowsWarning, Domain, run


def _table(n: int = 400, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"bp": rng.uniform(60, 200, n), "age": rng.uniform(0, 100, n)})


def test_a_table_and_a_domain_without_names_is_an_error_not_a_match_by_position():
    """Before: the bounds [0, 120] (meant for age) were applied to 'bp', the first column, silently."""
    with pytest.raises(ValueError, match=r"the domain has no column names.*Give the domain names=\[\.\.\.\]"):
        run("pmm", _table(), Domain(lower=[0, 50], upper=[120, 250]), epsilon=1.0, rng=0)


def test_a_domain_column_missing_from_the_table_is_named_with_a_close_match():
    dom = Domain(lower=[0, 50], upper=[120, 250], names=["agee", "bp"])
    with pytest.raises(ValueError, match=r"has no column 'agee' \(did you mean 'age'\?\)"):
        run("pmm", _table(), dom, epsilon=1.0, rng=0)


def test_columns_are_matched_by_name_whatever_their_order():
    """The same table in two column orders gives the same release (same seed): the domain's order wins."""
    df = _table()
    dom = Domain(lower=[0, 50], upper=[120, 250], names=["age", "bp"])
    a = run("pmm", df, dom, epsilon=1.0, rng=3)
    b = run("pmm", df[["age", "bp"]], dom, epsilon=1.0, rng=3)
    np.testing.assert_array_equal(a.synthetic, b.synthetic)
    # the first column of the release is age: inside age's bounds, and not bp's
    assert a.synthetic[:, 0].max() <= 120 and a.synthetic[:, 1].min() >= 50


def test_bounds_that_clamp_many_rows_warn_with_the_count_and_no_more():
    df = _table()
    narrow = Domain(lower=[0, 50], upper=[50, 250], names=["age", "bp"])  # about half the ages lie above 50
    with pytest.warns(ClampedRowsWarning, match=r"of 400 rows \(\d+%\) have a value outside the bounds") as rec:
        rel = run("pmm", df, narrow, epsilon=1.0, rng=0)
    assert str(rel.owner.n_clamped) in str(rec[0].message).replace(",", "")
    assert 150 <= rel.owner.n_clamped <= 250
    assert "n_clamped" not in rel.public_json()  # the count is owner-side: in no public output
    wide = Domain(lower=[0, 50], upper=[120, 250], names=["age", "bp"])
    with warnings.catch_warnings():
        warnings.simplefilter("error", ClampedRowsWarning)  # within the bounds: no warning
        run("pmm", df, wide, epsilon=1.0, rng=0)


@pytest.mark.parametrize("frame, kind, words", [
    (pd.DataFrame({"age": [30.0, np.nan, 50.0], "bp": [100.0, 110.0, 120.0]}), ValueError,
     r"a missing value \(NaN\) at row 1 \(counting from 0\), column 'age': drop or fill such rows first"),
    (pd.DataFrame({"age": [30.0, 40.0], "bp": [100.0, np.inf]}), ValueError, r"an infinite value at row 1 .*column 'bp'"),
    (pd.DataFrame({"age": pd.Series([], dtype=float), "bp": pd.Series([], dtype=float)}), ValueError,
     r"must have at least 1 row\. Got a table with 0 rows and columns \['age', 'bp'\]"),
    (pd.DataFrame({"age": pd.to_datetime(["2020-01-01"] * 3), "bp": [1.0, 2.0, 3.0]}), TypeError,
     r"'age' holds dates or times: convert it to a number first"),
    (pd.DataFrame([[30.0, 100.0, 31.0]], columns=["age", "bp", "age"]), ValueError,
     r"has the column name 'age' more than once"),
])
def test_a_tables_problem_is_said_by_column_name(frame, kind, words):
    """Each message names the column (not its position) and what to do; before, NaN was "column 0", an empty
    table "array of shape (0, 2)", a date column just "non-numeric", a repeated name "non-numeric ['age', 'age']"."""
    dom = Domain(lower=[0, 50], upper=[120, 250], names=["age", "bp"])
    with pytest.raises(kind, match=words):
        run("pmm", frame, dom, epsilon=1.0, rng=0)


def test_an_approximate_dp_mechanism_without_delta_says_what_to_pass():
    with pytest.raises(ValueError, match=r"'delta' parameter of private_evolution must be a float in \(0, 1\), e\.g\. "
                                         r"delta=1e-6.*Got 'no delta'"):
        run("private_evolution", np.random.default_rng(0).random((50, 2)), Domain.unit(2), epsilon=1.0)
