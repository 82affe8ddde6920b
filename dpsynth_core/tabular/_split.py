"""Splitting a CSV file's text into cells, a chunk of rows at a time, column by column.

Two splitters give the same cells. Python's :mod:`csv` module (:func:`records`, :func:`data_chunks`) reads every
file: quoted cells, line breaks inside them, blank lines, and the errors that name a row (a row with too many or
too few cells, a quote never closed). pandas' C parser (:func:`plain_chunks`) reads a *plain* file ten times faster:
one without a quote, a lone carriage return or an unusual space character, whose data lines all have as many
cells as the header (:func:`plain_body` checks it on the whole text before anything is parsed). On such a file
both split every line at the separator and nothing else, so they give the same cells; a file that is not
plain is read by the csv module, whose messages stay what they were. tests/core/test_csv_split.py compares the two on generated
files.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterator, Sequence
from operator import methodcaller

import pandas as pd

from ..validation import plural
from ._cells import SPACE
from ._errors import CSVError

__all__ = ["DELIMITER_WORDS", "blank", "lines", "records", "data_chunks", "python_chunks", "plain_body",
           "plain_chunks"]

DELIMITER_WORDS = {",": "commas", ";": "semicolons", "\t": "tabs", "|": "vertical bars (|)"}
#: Characters Python counts as spaces (``str.isspace``, none above U+3000) that cells are not stripped of: a row
#: of such cells is blank for the csv splitter (its cells become empty) but not once stripped, so a file holding
#: one is not plain.
_ODD_SPACES = re.compile("[" + re.escape("".join(c for c in map(chr, range(0x3001))
                                                 if c.isspace() and c not in SPACE)) + "]")


def blank(rec: list[str]) -> bool:
    """A record of empty or whitespace-only cells (``[]`` for an empty line)."""
    return not any(rec) or "".join(rec).isspace()


def lines(text: str) -> Iterator[str]:
    r"""The lines of ``text`` with their ends (``\n``; a file with only ``\r`` ends is converted first).

    A generator of slices rather than ``io.StringIO``, which would hold a 4-byte-per-character copy.
    """
    if "\n" not in text:
        text = text.replace("\r", "\n")
    start, find, end = 0, text.find, len(text)
    while start < end:
        i = find("\n", start)
        if i < 0:
            yield text[start:]
            return
        yield text[start:i + 1]
        start = i + 1


def records(text: str, delimiter: str, What: str) -> Iterator[list[str]]:
    """The records of ``text``; a quoting error names its spreadsheet row."""
    reader = csv.reader(lines(text), delimiter=delimiter, quotechar='"', doublequote=True, strict=True)
    row = 0
    try:
        for rec in reader:
            row += 1
            yield rec
    except csv.Error as exc:
        row += 1
        msg = str(exc)
        if "field larger than field limit" in msg:
            detail = (f"a cell of row {row} is longer than {csv.field_size_limit()} characters "
                      f"(a quote (\") that is never closed?)")
        elif "unexpected end of data" in msg:
            detail = f"a quote (\") opened in row {row} is never closed"
        elif "new-line character seen in unquoted field" in msg:
            detail = f"row {row} has a line break inside a cell that is not quoted (mixed line endings?)"
        elif "expected after" in msg:
            detail = (f"row {row} has a quoted cell followed by other characters (a quote inside a "
                      f"cell must be doubled: \"\")")
        else:
            detail = f"row {row} is not valid CSV"
        raise CSVError(f"{What} cannot be split into cells: {detail}; fix that row.",
                       "structure", row=row) from None


def data_chunks(records: Iterator[list[str]], width: int, max_rows: int, What: str, delimiter: str,
                 chunk_rows: int) -> Iterator[tuple[list[str], int]]:
    """Data records in chunks ``(cells, n)``: the cells of ``n <= chunk_rows`` rows, row after row.

    Interior blank lines become rows of empty cells, blank lines at the end are dropped. Checks that
    each record has ``width`` cells and that there are at most ``max_rows`` rows (never holding more
    than ``max_rows + 1``). The cells are kept in one flat list: millions of small row lists would
    keep the garbage collector busy.
    """
    def too_many() -> CSVError:
        return CSVError(f"{What} has more than {max_rows} data rows; at most {max_rows} can be read: "
                        f"use a sample of the rows.", "too_many_rows", row=max_rows + 2)

    empty = [""] * width
    pending = 0  # blank records not yet known to be interior
    n = 0  # rows already yielded
    cells: list[str] = []
    rows = 0  # rows in ``cells``
    cap = min(chunk_rows, max_rows + 1)
    for rec in records:
        if not (len(rec) == width and rec[0] and not rec[0].isspace()):  # the common case skips this
            if blank(rec):
                pending += 1
                continue
            if len(rec) != width:
                row = n + rows + pending + 2
                hint = ""
                if delimiter == "," and len(rec) > width:
                    hint = (" (a comma inside a number or a text? Put text containing commas in quotes, and "
                            "write numbers with a dot as decimal mark)")
                raise CSVError(f"{What} is not a regular table: row {row} has {plural(len(rec), 'cell')} but "
                               f"the header has {width} (cells are separated by {DELIMITER_WORDS[delimiter]}); "
                               f"check that row for a missing or extra separator{hint}.", "structure", row=row)
        # the blank records before this one were interior: rows of empty cells, then the record
        pieces, pending = ((rec,) if not pending else [*([empty] * pending), rec]), 0
        for piece in pieces:
            cells.extend(piece)
            rows += 1
            if rows >= cap:
                if n + rows > max_rows:
                    raise too_many()
                yield cells, rows
                n += rows
                cells, rows, cap = [], 0, min(chunk_rows, max_rows - n + 1)
    if rows:
        yield cells, rows


def python_chunks(recs: Iterator[list[str]], width: int, max_rows: int, What: str, delimiter: str,
                  chunk_rows: int, wanted: Sequence[int]) -> Iterator[tuple[dict[int, pd.Series], int]]:
    """:func:`data_chunks` column by column: ``({j: the cells of column j as str, ...}, n)`` for the columns
    ``wanted``."""
    for cells, n in data_chunks(recs, width, max_rows, What, delimiter, chunk_rows):
        yield {j: pd.Series(cells[j::width], dtype="str") for j in wanted}, n


def plain_body(text: str, delimiter: str, width: int, max_rows: int) -> bytes | None:
    """The data lines of ``text`` (after the header's line, blank lines at the end dropped) as UTF-8 when the
    file is plain (module docstring): no quote, every carriage return before a line feed, no unusual space
    character, at most ``max_rows`` lines, each with ``width - 1`` separators and no longer than the csv
    module's cell limit, the last one not blank. None otherwise: the csv module reads the file."""
    if '"' in text or text.count("\r") != text.count("\r\n") or _ODD_SPACES.search(text):
        return None
    start = text.find("\n")
    body = text[start + 1:].rstrip("\r\n") if start >= 0 else ""
    if not body or body.startswith("\ufeff") or body.count("\n") >= max_rows:  # a mark pandas would drop
        return None
    rows = body.split("\n")  # at most max_rows of them
    if set(map(methodcaller("count", delimiter), rows)) != {width - 1} or blank(rows[-1].split(delimiter)):
        return None  # a short or long row (the csv module's error), or a blank last one (dropped by it)
    if max(map(len, rows)) > csv.field_size_limit():
        return None
    return body.encode("utf-8")


def plain_chunks(body: bytes, delimiter: str, width: int, chunk_rows: int,
                 wanted: Sequence[int]) -> Iterator[tuple[dict[int, pd.Series], int]]:
    """The cells of a plain file's data lines (:func:`plain_body`), column by column, ``chunk_rows`` rows at a
    time, as :func:`python_chunks` gives them."""
    reader = pd.read_csv(io.BytesIO(body), sep=delimiter, header=None, names=list(range(width)),
                         usecols=list(wanted) or [0],  # one column at least: the rows are counted
                         dtype=str, na_filter=False, quoting=csv.QUOTE_NONE, skip_blank_lines=False, engine="c",
                         index_col=False, chunksize=chunk_rows, encoding="utf-8")
    with reader:
        for frame in reader:
            yield {j: frame[j] for j in wanted}, len(frame)
