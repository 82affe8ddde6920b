"""The readers' one error type (:mod:`.read`, :mod:`.parquet`, :mod:`._categories`)."""

from __future__ import annotations

__all__ = ["CSVError"]


class CSVError(ValueError):
    """A CSV file that cannot be read as it is. The message is one line for the person who has the file.

    Attributes
    ----------
    kind : str
        What went wrong, for callers that react to it (e.g. offer to drop rows on ``"missing"``):
        ``"size"``, ``"not_found"``, ``"encoding"``, ``"binary"``, ``"empty"``, ``"structure"``,
        ``"header"``, ``"too_many_rows"``, ``"too_many_columns"``, ``"no_such_column"``,
        ``"text_column"``, ``"empty_column"``, ``"no_numeric_column"``, ``"not_a_number"``, ``"decimal"``,
        ``"infinite"``, ``"missing"``, ``"category"`` (a value outside a column's declared categories).
    row : int or None
        Spreadsheet row of the first problem (the header is row 1).
    column : str or None
        Header name of the column of the first problem.
    count : int or None
        For ``"missing"``: the number of rows with a missing value in the columns read.
    """

    def __init__(self, message: str, kind: str = "invalid", row: int | None = None,
                 column: str | None = None, count: int | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.row = row
        self.column = column
        self.count = count
