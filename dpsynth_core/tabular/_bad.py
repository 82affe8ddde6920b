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

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..validation import plural
from ._categories import BAD_CODE
from ._errors import CSVError

__all__ = ["BadRows", "SHOWN_BAD", "drop_bad", "DATA_DEPENDENT"]

#: Bad rows whose row number and column the notes list (the count covers them all).
SHOWN_BAD = 5
#: What every note on dropped rows says about its count.
DATA_DEPENDENT = ("The count depends on your data: it is for your eyes only, in no release, report or "
                  "export.")


@dataclass(frozen=True)
class BadRows:
    """The rows dropped for a bad cell: how many, and (row number, column) of the first :data:`SHOWN_BAD`."""

    count: int = 0
    where: tuple[tuple[int, str], ...] = ()

    def note(self, row_word: str = "row") -> str:
        """One sentence for :attr:`Table.notes <dpsynth_core.tabular.Table.notes>` (starts with "Dropped")."""
        shown = "; ".join(f"{row_word} {r}, column {c!r}" for r, c in self.where)
        more = "; ..." if self.count > len(self.where) else ""
        return (f"Dropped {plural(self.count, 'row')} with a bad cell (not a number, infinite, or outside the "
                f"declared categories): {shown}{more}. {DATA_DEPENDENT}")


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
