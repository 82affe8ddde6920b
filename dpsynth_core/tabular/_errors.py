"""The readers' one error type and their notes' type (:mod:`.read`, :mod:`.parquet`, :mod:`._categories`)."""

from __future__ import annotations

from ..validation import Advice

__all__ = ["CSVError", "KIND_ADVICE", "Note"]

#: The option that gets past each kind of error by dropping rows (each front end words it: a keyword of
#: read_table, a flag of the command line, a box of the dashboard's upload form).
KIND_ADVICE = {
    "not_a_number": (Advice("drop_bad_rows", True, "drop the rows that hold such cells"),),
    "infinite": (Advice("drop_bad_rows", True, "drop the rows that hold such cells"),),
    "category": (Advice("drop_bad_rows", True, "drop the rows that hold such values"),),
    "missing": (Advice("missing", "drop", "drop the rows with missing values"),),
}


class Note(str):
    """One sentence of :attr:`Table.notes <dpsynth_core.tabular.Table.notes>` (a plain ``str`` for people) with
    what it is about, for callers that treat some notes differently: ``topic`` is ``"separator"``,
    ``"decimal"``, ``"read"`` (what was read), ``"mapped"`` (values sent to an ``other`` category),
    ``"excluded"`` (columns left out as asked), ``"text"`` (text columns left out), ``"empty"``,
    ``"dropped"`` (rows with a missing value) or ``"bad_rows"`` (rows dropped for a bad cell, a note that says
    itself that its count is for the owner's eyes only)."""

    topic: str

    def __new__(cls, text: str, topic: str) -> Note:
        note = super().__new__(cls, text)
        note.topic = topic
        return note

    def __getnewargs__(self) -> tuple[str, str]:  # type: ignore[override]  # pickling keeps the topic
        return str(self), self.topic


class CSVError(ValueError):
    """A CSV file that cannot be read as it is. The message is one line for the person who has the file.

    Attributes
    ----------
    kind : str
        What went wrong, for callers that react to it (e.g. offer to drop rows on ``"missing"``):
        ``"size"``, ``"not_found"``, ``"encoding"``, ``"binary"``, ``"empty"``, ``"structure"``,
        ``"header"``, ``"too_many_rows"``, ``"too_many_columns"``, ``"no_such_column"``,
        ``"text_column"``, ``"empty_column"``, ``"no_numeric_column"``, ``"not_a_number"``, ``"decimal"``,
        ``"infinite"``, ``"missing"``, ``"category"`` (a value outside a column's declared categories),
        ``"bad_rows"`` (every row holds a bad cell: nothing is left once they are dropped).
    row : int or None
        Spreadsheet row of the first problem (the header is row 1).
    column : str or None
        Header name of the column of the first problem.
    count : int or None
        For ``"missing"``: the number of rows with a missing value in the columns read.
    advice : tuple of :class:`~dpsynth_core.validation.Advice`
        The reader's option that gets past it by dropping rows (:data:`KIND_ADVICE`), for each front end
        to word (``drop_bad_rows=True``, ``--drop-bad-rows``, the upload form's box).
    """

    def __init__(self, message: str, kind: str = "invalid", row: int | None = None,
                 column: str | None = None, count: int | None = None, advice: tuple | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.row = row
        self.column = column
        self.count = count
        self.advice = KIND_ADVICE.get(kind, ()) if advice is None else tuple(advice)
