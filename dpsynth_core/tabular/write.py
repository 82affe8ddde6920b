"""The writer: points as CSV bytes that the reader reads back bit for bit."""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import Any

import pandas as pd

from ..validation import check_points, param_error

__all__ = ["csv_bytes"]


def csv_bytes(X: Any, names: Sequence[str] | None = None) -> bytes:
    """Export points as UTF-8 CSV bytes with a header row (for downloads of synthetic data).

    Floats are written with the shortest text that reads back to the same float64, so
    :func:`~.read.load_csv` of ``csv_bytes(X, names)`` returns ``X`` exactly.

    Parameters
    ----------
    X : array-like of shape (m, d)
        Finite points (m may be 0).
    names : sequence of d distinct non-empty str, optional
        Column names; default ``x0, ..., x{d-1}``.

    Returns
    -------
    bytes
        ``"name_0,...,name_{d-1}\\n"`` followed by one line per point.
    """
    owner = "csv_bytes"
    arr = check_points(X, "X", owner, min_rows=0)
    if names is None:
        names = tuple(f"x{i}" for i in range(arr.shape[1]))
    if isinstance(names, (str, bytes)) or not isinstance(names, Sequence) or not all(
            isinstance(c, str) and c for c in names):
        raise param_error(owner, "names", "a sequence of non-empty str", names, kind=TypeError)
    if len(names) != arr.shape[1] or len(set(names)) != len(names):
        raise param_error(owner, "names", f"{arr.shape[1]} distinct column names (one per column of X)",
                          list(names))
    buf = io.StringIO()
    pd.DataFrame(arr, columns=list(names)).to_csv(buf, index=False, lineterminator="\n")
    return buf.getvalue().encode("utf-8")
