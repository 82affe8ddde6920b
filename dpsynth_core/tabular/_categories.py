"""Declared categorical columns: a table's text matched against the categories the user declared.

Shared by the CSV reader (:mod:`.read`), the Parquet reader (:mod:`.parquet`) and the command line's
Dask engine, so that every reader of the project matches a cell alike:

* the cell's text, stripped of surrounding spaces, is one of the declared labels: that category (a
  declared label wins over a missing-value token, so a category may be called ``NA`` or ``None``);
* otherwise, a null or one of the format's missing-value tokens (compared case-insensitively; for
  CSV the reader's :data:`~._cells.MISSING_TOKENS`, for Parquet only the empty text) is a missing
  value, handled like a missing number (refused, or its row dropped on request);
* otherwise the value is undeclared: it goes to the column's ``other`` category when the domain
  declares one, and is an error naming the row, the column and the value when it does not. Never a
  silent drop or remap.

The undeclared value is the one cell value a message of :mod:`dpsynth_core.tabular` shows (cut to
60 characters): the person who holds the file needs it to complete the declared list, and the
message goes to them only (a terminal, the dashboard's owner view), never into an output.
"""

from __future__ import annotations

import difflib
import unicodedata
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..domain import CategoryMap, Domain, check_categories
from ..validation import param_error
from ._cells import NUMBER_LIKE, SPACE, cell_state
from ._errors import CSVError

__all__ = ["MISSING_CODE", "BAD_CODE", "Declared", "declared", "ColumnMatcher", "undeclared_message", "few_labels",
           "category_text", "normalise_partition", "category_dtype"]

#: The code of a missing value in a categorical column (before rows are dropped or the file refused).
MISSING_CODE = -1
#: The code of a value outside the declared categories (a column without an ``other`` category): the table
#: is refused, or, with ``drop_bad_rows``, its row is dropped.
BAD_CODE = -2
_SHOWN_CHARS = 60
_CLOSE_MATCH_LABELS = 1000  # difflib's suggestion only among at most this many labels (it is quadratic)


class Declared:
    """What the caller declared: the categorical columns with their labels and ``other`` labels, and,
    with a whole domain, the columns to read in its order."""

    __slots__ = ("categories", "other", "columns", "domain")

    def __init__(self, categories: CategoryMap, other: CategoryMap, columns: list[str] | None,
                 domain: Domain | None) -> None:
        self.categories = categories
        self.other = other
        self.columns = columns
        self.domain = domain

    def __bool__(self) -> bool:
        return len(self.categories) > 0


def declared(categories: Any, domain: Any, columns: Sequence[str] | None, owner: str) -> Declared:
    """The reader's ``categories`` / ``domain`` arguments, checked (``columns`` is already checked)."""
    if domain is not None:
        if not isinstance(domain, Domain):
            raise param_error(owner, "domain", "None or a dpsynth_core.Domain", domain, kind=TypeError)
        if categories is not None:
            raise param_error(owner, "categories", "None when a domain is given (the domain declares them)",
                              "both")
        if columns is not None:
            raise param_error(owner, "columns", "None when a domain is given (the domain names the columns)",
                              list(columns))
        return Declared(domain.categories, domain.other, list(domain.names), domain)
    if isinstance(categories, Domain):
        raise param_error(owner, "categories", "a mapping of column name to its categories (pass a Domain "
                          "as domain=)", categories, kind=TypeError)
    cats, other = check_categories(categories, None, owner=owner)
    return Declared(cats, other, None if columns is None else list(columns), None)


def few_labels(labels: Sequence[str], most: int = 6) -> str:
    shown = ", ".join(repr(x) for x in labels[:most])
    return shown + (f", … ({len(labels)} in all)" if len(labels) > most else "")


def _shown(value: str) -> str:
    text = repr(value)
    return text if len(text) <= _SHOWN_CHARS else text[:_SHOWN_CHARS - 3] + "...'"


def _number(text: str) -> float | None:
    if cell_state(text) not in NUMBER_LIKE:
        return None
    try:
        return float(text.replace(",", "."))
    except ValueError:
        return None


def _hint(value: str, labels: Sequence[str]) -> str:
    """Why ``value`` may not match, when a declared label is close (never a guess that is applied)."""
    nfc = unicodedata.normalize("NFC", value)
    for label in labels:
        if unicodedata.normalize("NFC", label) == nfc:
            return (f" (it differs from the declared {label!r} only in how its accents are encoded: save the "
                    f"file with composed (NFC) characters, or declare it as the file writes it)")
    folded = value.casefold()
    for label in labels:
        if label.casefold() == folded:
            return f" (categories are matched exactly, letter case included: did you mean {label!r}?)"
    num = _number(value)
    if num is not None:
        for label in labels:
            if _number(label) == num:
                return (f" (categories are matched as text, exactly: {value!r} is not the declared {label!r}; "
                        f"declare the text the file holds)")
        if not any(_number(label) is not None for label in labels):
            return " (a number: if the column is numeric, give it bounds instead of categories)"
    if len(labels) <= _CLOSE_MATCH_LABELS:
        close = difflib.get_close_matches(value, list(labels), n=1, cutoff=0.75)
        if close:
            return f" (did you mean {close[0]!r}?)"
    return ""


def undeclared_message(What: str, where: str, column: str, value: str, labels: Sequence[str],
                       n_rows: int | None) -> str:
    """The one-line message for a value outside a column's declared categories (``n_rows``: how many
    rows hold one in this column, when known)."""
    count = "" if n_rows is None else \
        f"; {n_rows} {'row holds' if n_rows == 1 else 'rows hold'} undeclared values in this column"
    return (f"{What} has a value outside the declared categories of column {column!r} at {where}: "
            f"{_shown(value)}{_hint(value, labels)}. The declared categories are {few_labels(labels)}"
            f"{count}. Declare every category the column "
            f"can take (a public list: write it from what the column may hold, not from this file), fix "
            f"the rows, or give the column an 'other' category.")


class ColumnMatcher:
    """Matches the cells of one categorical column, chunk by chunk; remembers the first undeclared
    value (its 0-based row in the table) and counts the undeclared and the 'other' rows."""

    def __init__(self, column: str, labels: Sequence[str], other: str | None, tokens: Sequence[str]) -> None:
        self.column = column
        self.labels = tuple(labels)
        self._index = pd.Index(list(self.labels), dtype=object)
        self.other_label = other
        self._other = self.labels.index(other) if other is not None else None
        self._tokens = tuple(tokens)
        self.first_bad: tuple[int, str] | None = None
        self.n_bad = 0
        self.n_other = 0

    def codes(self, text: pd.Series, row0: int) -> np.ndarray:
        """Codes (int64) of a chunk of stripped text (``pd.NA`` for a null): the label's index,
        :data:`MISSING_CODE` for a missing value; undeclared values get the 'other' code or are recorded."""
        text = text.astype("string").str.strip()  # every Unicode space, as the domain strips its labels
        values = text.to_numpy(dtype=object, na_value="")
        codes = self._index.get_indexer(values).astype(np.int64)
        unmatched = np.flatnonzero(codes < 0)
        if unmatched.size == 0:
            return codes
        sub = text.iloc[unmatched]
        missing = (sub.isna() | sub.str.lower().isin(self._tokens)).fillna(True).to_numpy(dtype=bool)
        codes[unmatched[missing]] = MISSING_CODE
        bad = unmatched[~missing]
        if bad.size:
            if self._other is not None:
                codes[bad] = self._other
                self.n_other += int(bad.size)
            else:
                codes[bad] = BAD_CODE  # the table is refused, or the row dropped (drop_bad_rows)
                if self.first_bad is None:
                    self.first_bad = (row0 + int(bad[0]), str(values[bad[0]]))
                self.n_bad += int(bad.size)
        return codes


def category_dtype(labels: Sequence[str]) -> pd.CategoricalDtype:
    """The dtype of a categorical column read with these declared labels."""
    return pd.CategoricalDtype(categories=list(labels))


def category_text(values: pd.Series) -> pd.Series:
    """A column's values as stripped text (pandas' string dtype, ``<NA>`` for a null): text as it is,
    integers in decimal. (A float column is refused before: its text, ``1.0``, is not ``1``.)"""
    if pd.api.types.is_float_dtype(values.dtype):
        # an integer column with nulls, as pandas holds it: back to the integers (exact below 2**53)
        values = values.astype("Int64")
    return values.astype("string").str.strip(SPACE)


def normalise_partition(frame: pd.DataFrame, categories: CategoryMap, other: CategoryMap, tokens: Sequence[str],
                        What: str, refuse_missing: bool) -> pd.DataFrame:
    """One partition of a Dask DataFrame with its categorical columns matched as the readers match them:
    pandas categoricals of the declared labels (``NaN`` for a missing value, or a :class:`CSVError` when
    ``refuse_missing``); an undeclared value goes to the column's ``other`` category or is a
    :class:`CSVError` naming the column and the value (a partition has no file row numbers to give).
    Run on the workers before :meth:`Domain.read` encodes the rows."""
    out = frame.copy()
    for col, labels in categories.items():
        m = ColumnMatcher(col, labels, other[col][0] if col in other else None, tokens)
        codes = m.codes(category_text(frame[col]), 0)
        if m.first_bad is not None:
            raise CSVError(undeclared_message(What, "a row (the dask engine reads the files in parallel and does "
                                              "not number their rows)", col, m.first_bad[1], labels, None),
                           "category", column=col)
        if refuse_missing and (codes == MISSING_CODE).any():
            raise CSVError(f"{What} has a missing value (an empty cell or a null) in the categorical column "
                           f"{col!r}: fill it in, or drop the rows with missing values.", "missing", column=col)
        out[col] = pd.Categorical.from_codes(codes, categories=list(labels))
    return out
