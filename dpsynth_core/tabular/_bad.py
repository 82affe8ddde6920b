"""Bad rows cost a row (``drop_bad_rows=True`` of the readers): the rows holding a bad cell are dropped,
counted and located, instead of the file being refused.

A **bad cell** is one the readers would otherwise refuse the file for: a cell of a numeric column that is
not a plain number (text, digits grouped by separators, a comma inside a number of a comma-separated file),
an infinite value, or a value outside a categorical column's declared categories (a column without an
``other`` category). Missing values are not bad cells: ``missing="drop"`` decides those.

How many rows were dropped, and which, is computed from the private data without noise: it is for the data
owner's eyes (the readers' notes, the command line's stderr, the dashboard's owner view), never part of a
release or an export. The release is made from the rows that are left, exactly as from a file without them.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..validation import plural
from ._categories import BAD_CODE, ColumnMatcher, category_text
from ._cells import COMMA, COMMA3, GROUPED, TEXT, classify, convert
from ._errors import CSVError, Note

__all__ = ["BadRows", "SHOWN_BAD", "drop_bad", "DATA_DEPENDENT", "bad_states", "clean_partition",
           "bad_rows_summary", "SUMMARY_META"]

#: Bad rows whose row number and column the notes list (the count covers them all).
SHOWN_BAD = 5
#: What every note on dropped rows says about its count.
DATA_DEPENDENT = ("The count depends on your data: it is for your eyes only, in no release, report or "
                  "export.")


@dataclass(frozen=True)
class BadRows:
    """The rows dropped for a bad cell: how many, and (row number, column) of the first :data:`SHOWN_BAD`
    (with the file's name as a third item when the rows come from several files)."""

    count: int = 0
    where: tuple[tuple, ...] = ()

    def note(self, row_word: str = "row") -> Note:
        """One sentence for :attr:`Table.notes <dpsynth_core.tabular.Table.notes>` (topic ``"bad_rows"``)."""
        shown = "; ".join(f"{row_word} {w[0]}{f' of {w[2]!r}' if len(w) > 2 else ''}, column {w[1]!r}"
                          for w in self.where)
        more = "; ..." if self.count > len(self.where) else ""
        return Note(f"Dropped {plural(self.count, 'row')} with a bad cell (not a number, infinite, or outside the "
                    f"declared categories): {shown}{more}. {DATA_DEPENDENT}", "bad_rows")


def bad_states(delimiter: str) -> list[int]:
    """The cell states (:mod:`._cells`) that are bad in a numeric column: text, grouped digits, and a comma
    inside a number of a comma-separated file."""
    return [TEXT, GROUPED] + ([COMMA, COMMA3] if delimiter == "," else [])


def drop_bad(X: np.ndarray, numeric: Sequence[str], C: np.ndarray, categorical: Sequence[str],
             chosen: Sequence[str], badcell: Mapping[str, np.ndarray], What: str,
             row_number: Callable[[int], int], row_word: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, BadRows]:
    """The rows without a bad cell: ``(X, C, index, bad)`` where ``index`` maps each kept row to its row in
    the arrays given (for the row numbers of later messages). ``badcell`` marks the bad cells of the numeric
    columns found while converting (text, grouped digits); infinite values and undeclared categories
    (:data:`BAD_CODE`) are found here. Refused, with the first location, when no row is left."""
    marks = {c: np.asarray(m, dtype=bool) for c, m in badcell.items()}
    for k, c in enumerate(numeric):
        inf = np.isinf(X[:, k])
        if inf.any():
            marks[c] = marks[c] | inf if c in marks else inf
    for t, c in enumerate(categorical):
        undeclared = C[:, t] == BAD_CODE
        if undeclared.any():
            marks[c] = undeclared
    n = X.shape[0]
    bad = np.zeros(n, dtype=bool)
    for m in marks.values():
        bad |= m
    count = int(bad.sum())
    if count == 0:
        return X, C, np.arange(n), BadRows()
    order = [c for c in chosen if c in marks]
    where = tuple((int(row_number(int(i))), next(c for c in order if marks[c][i]))
                  for i in np.flatnonzero(bad)[:SHOWN_BAD])
    if count == n:
        r, c = where[0]
        raise CSVError(f"{What} has a bad cell (not a number, infinite, or outside the declared categories) in every "
                       f"row ({plural(n, 'row')}, the first at {row_word} {r}, column {c!r}): no row is left once "
                       f"they are dropped.", "bad_rows", row=r, column=c, count=count)
    keep = np.flatnonzero(~bad)
    return X[keep], C[keep], keep, BadRows(count, where)


# ------------------------------------------------------------------------------- Dask partitions
#: The columns of :func:`bad_rows_summary`'s one-row frame per partition.
SUMMARY_META = pd.DataFrame({"rows": pd.Series(dtype="int64"), "bad": pd.Series(dtype="int64"),
                             "where": pd.Series(dtype="str"), "path": pd.Series(dtype="str")})


def _marked(frame: pd.DataFrame, numeric: Sequence[str], categories: Mapping, other: Mapping,
            tokens: Sequence[str], decimal: str, delimiter: str) -> tuple[pd.DataFrame, dict[str, np.ndarray]]:
    """The partition's columns converted by the readers' rules (numbers read as text become float64; a
    categorical column the declared labels' codes) and the bad cells of each column."""
    out, marks = {}, {}
    codes_bad = bad_states(delimiter)
    for c in numeric:
        col = frame[c]
        if pd.api.types.is_numeric_dtype(col.dtype):
            values, bad = col.to_numpy(dtype=float, na_value=np.nan), np.zeros(len(col), dtype=bool)
        else:  # a CSV column read as text: the cells classified as read_table classifies them
            cells = col.astype("string").fillna("").tolist()
            bad = np.isin(classify(cells), codes_bad)
            values = convert(["" if b else x for x, b in zip(cells, bad, strict=True)], decimal)
        marks[c] = bad | np.isinf(values)
        out[c] = values
    for c, labels in categories.items():
        m = ColumnMatcher(c, labels, other[c][0] if c in other else None, tokens)
        codes = m.codes(category_text(frame[c]), 0)
        marks[c] = codes == BAD_CODE
        out[c] = codes
    return pd.DataFrame(out, index=frame.index), marks


def clean_partition(frame: pd.DataFrame, numeric: Sequence[str], categories: Mapping, other: Mapping,
                    tokens: Sequence[str], decimal: str, delimiter: str, used: Sequence[str]) -> pd.DataFrame:
    """One partition of a Dask DataFrame with the rows holding a bad cell dropped (the dask engine's
    ``--drop-bad-rows``): numeric columns as float64 (NaN for a missing value), categorical ones as pandas
    categoricals of the declared labels (NaN for a missing value), in the order ``used``. Run on the workers;
    the same rules as :func:`~dpsynth_core.tabular.read_table` with ``drop_bad_rows=True``."""
    conv, marks = _marked(frame, numeric, categories, other, tokens, decimal, delimiter)
    keep = ~np.any(np.column_stack([m for m in marks.values()]), axis=1) if marks else np.ones(len(frame), bool)
    out = {}
    for c in used:
        if c in categories:
            # MISSING_CODE (-1) is pandas' code of a missing value: the row is dropped or refused later
            out[c] = pd.Categorical.from_codes(conv[c].to_numpy()[keep], categories=list(categories[c]))
        else:
            out[c] = conv[c].to_numpy()[keep]
    return pd.DataFrame(out, columns=list(used))


def bad_rows_summary(frame: pd.DataFrame, numeric: Sequence[str], categories: Mapping, other: Mapping,
                     tokens: Sequence[str], decimal: str, delimiter: str, used: Sequence[str],
                     path_column: str | None = None) -> pd.DataFrame:
    """One row per partition: its rows, its rows with a bad cell, the first :data:`SHOWN_BAD` of them as
    JSON ``[[row in the partition (0-based), column], ...]`` and the file it comes from (``path_column``,
    when the reader added one). The client adds the partitions up (a count of the private data: for the
    owner's eyes only)."""
    _, marks = _marked(frame, numeric, categories, other, tokens, decimal, delimiter)
    bad = np.any(np.column_stack([m for m in marks.values()]), axis=1) if marks else np.zeros(len(frame), bool)
    order = [c for c in used if c in marks]
    where = [[int(i), next(c for c in order if marks[c][i])] for i in np.flatnonzero(bad)[:SHOWN_BAD]]
    path = str(frame[path_column].iloc[0]) if path_column and len(frame) else ""
    return pd.DataFrame({"rows": [len(frame)], "bad": [int(bad.sum())], "where": [json.dumps(where)],
                         "path": [path]})
