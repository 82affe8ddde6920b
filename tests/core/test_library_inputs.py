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
    with pytest.warns(ClampedRowsWarning, match=r"of 400 rows \(\d+%\) had a value outside the domain's bounds") as rec:
        rel = run("pmm", df, narrow, epsilon=1.0, rng=0)
    assert str(rel.owner.n_clamped) in str(rec[0].message).replace(",", "")
    assert 150 <= rel.owner.n_clamped <= 250
    assert "n_clamped" not in rel.public_json()  # the count is owner-side: in no public output
    wide = Domain(lower=[0, 50], upper=[120, 250], names=["age", "bp"])
    with warnings.catch_warnings():
        warnings.simplefilter("error", ClampedRowsWarning)  # within the bounds: no warning
        run("pmm", df, wide, epsilon=1.0, rng=0)
