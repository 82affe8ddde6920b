"""The writer: points (or a mixed table) as CSV bytes that the reader reads back exactly."""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..validation import check_points, param_error

__all__ = ["csv_bytes"]


def _check_names(names: Any, d: int, owner: str) -> list[str]:
    if isinstance(names, (str, bytes)) or not isinstance(names, Sequence) or not all(
            isinstance(c, str) and c for c in names):
        raise param_error(owner, "names", "a sequence of non-empty str", names, kind=TypeError)
    if len(names) != d or len(set(names)) != len(names):
        raise param_error(owner, "names", f"{d} distinct column names (one per column of X)", list(names))
    return list(names)


def _frame(X: pd.DataFrame, names: Sequence[str] | None, owner: str) -> pd.DataFrame:
    """A mixed table checked for writing: numeric columns finite, text columns without missing values."""
    cols = _check_names([str(c) for c in X.columns] if names is None else names, X.shape[1], owner)
    out = {}
    for c, name in zip(X.columns, cols, strict=True):
        s = X[c]
        if isinstance(s.dtype, pd.CategoricalDtype) or pd.api.types.is_object_dtype(s.dtype) \
                or pd.api.types.is_string_dtype(s.dtype):
            if s.isna().any():
                raise param_error(owner, "X", f"a table without missing values (column {name!r} has one)",
                                  f"row {int(np.flatnonzero(s.isna().to_numpy())[0])}")
            out[name] = s.astype(str).to_numpy()
        else:
            out[name] = check_points(s.to_numpy(dtype=np.float64).reshape(-1, 1), "X", owner, min_rows=0)[:, 0]
    return pd.DataFrame(out, columns=cols)


def csv_bytes(X: Any, names: Sequence[str] | None = None) -> bytes:
    """Export points, or a table with categorical columns, as UTF-8 CSV bytes with a header row (for
    downloads of synthetic data).

    Floats are written with the shortest text that reads back to the same float64; text (the labels
    of categorical columns) is written as it is, quoted when it holds a separator, a quote or a line
    break. So :func:`~.read.load_csv` of ``csv_bytes(X, names)`` returns ``X`` exactly, and
    ``read_table(csv_bytes(frame), categories=...)`` returns the same frame when its categories are
    declared again.

    Parameters
    ----------
    X : array-like of shape (m, d), or pandas.DataFrame
        Finite points (m may be 0); or a DataFrame of numeric columns (finite) and text or
        categorical columns (no missing value), written in its column order.
    names : sequence of d distinct non-empty str, optional
        Column names; default ``x0, ..., x{d-1}`` (a DataFrame's own column names).

    Returns
    -------
    bytes
        ``"name_0,...,name_{d-1}\\n"`` followed by one line per point.
    """
    owner = "csv_bytes"
    if isinstance(X, pd.DataFrame):
        frame = _frame(X, names, owner)
    else:
        arr = check_points(X, "X", owner, min_rows=0)
        cols = _check_names(tuple(f"x{i}" for i in range(arr.shape[1])) if names is None else names,
                            arr.shape[1], owner)
        frame = pd.DataFrame(arr, columns=cols)
    buf = io.StringIO()
    frame.to_csv(buf, index=False, lineterminator="\n")
    return buf.getvalue().encode("utf-8")
