"""The reader: :func:`read_table` (the rules are in the package's docstring), :func:`load_csv` (its
frame only, for the library's users) and :func:`detect_delimiter` (the separator rule alone)."""

from __future__ import annotations

import codecs
import csv
import difflib
import os
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..domain import CategoryMap
from ..validation import check_bool, check_choice, check_int, param_error, plural
from ._bad import BadRows, bad_states, drop_bad
from ._categories import MISSING_CODE, ColumnMatcher, Declared, declared, undeclared_message
from ._cells import (
    COMMA,
    COMMA3,
    DOT,
    MISSING,
    MISSING_TOKENS,
    NUMBER_LIKE,
    SPACE,
    STATE_HINTS,
    TEXT,
    CellStats,
    cell_state,
    classify,
    convert,
    earliest,
)
from ._errors import CSVError, Note
from ._split import DELIMITER_WORDS, blank, lines, plain_body, plain_chunks, python_chunks, records

__all__ = ["CSVError", "Table", "read_table", "read_preview", "load_csv", "detect_delimiter", "MAX_BYTES", "MAX_ROWS", "MAX_COLS",
           "MAX_FILE_COLS"]

#: Default largest file size, in bytes.
MAX_BYTES = 50 * 2**20
#: Default largest number of data rows (the header excluded).
MAX_ROWS = 200_000
#: Default largest number of columns read (returned).
MAX_COLS = 64
#: Default largest number of columns in the header (text columns included).
MAX_FILE_COLS = 1024
_DELIMITERS = (",", ";", "\t", "|")
_SAMPLE_CHARS = 64 * 1024
_SAMPLE_RECORDS = 200
_CHUNK_CELLS = 2**18
_SHOWN_ROWS = 10  # row numbers listed for dropped rows


@dataclass(frozen=True, eq=False)
class Table:
    """What :func:`read_table` read.

    Attributes
    ----------
    frame : pandas.DataFrame
        The columns read, a fresh ``RangeIndex``: numeric columns as float64, every value finite;
        declared categorical columns as pandas categoricals whose categories are the declared labels
        (in their declared order; the ``other`` label included), every value one of them.
        :meth:`Domain.read <dpsynth_core.Domain.read>` and every mechanism take it as it is.
    numeric : tuple of str
        Names of the numeric columns read (in the order of ``frame``).
    text_columns : tuple of str
        Columns left out because they hold text and were not declared categorical (only when
        ``columns`` was not given).
    empty_columns : tuple of str
        Columns left out because they hold no value at all (only when ``columns`` was not given).
    dropped_rows : int
        Rows dropped for a missing value (``missing="drop"``), counting only the columns read.
    dropped_row_numbers : tuple of int
        Spreadsheet row numbers (header = row 1) of the first dropped rows (at most 10).
    dialect : dict
        ``{"delimiter": ",", "decimal": ".", "thousands": None, "encoding": "utf-8"}``
        (``"utf-8-sig"`` with a byte-order mark). Thousands separators are never accepted.
    notes : tuple of Note
        Plain sentences (each a ``str`` with a ``topic``: :class:`Note`): the separator and decimal mark detected, what was read, what was left
        out and why, how many rows were dropped, how many values went to an ``other`` category.
    categorical : tuple of str
        Names of the declared categorical columns read (in the order of ``frame``).
    categories : CategoryMap
        Their declared labels (the ``other`` label included), column by column.
    bad_rows : int
        Rows dropped for a bad cell (``drop_bad_rows=True``): a count of the private data, for the owner's
        eyes only.
    bad_cells : tuple of (int, str)
        Row number and column of the first of them (at most 5).
    preview : pandas.DataFrame or None
        From :func:`read_preview`: the file as a preview shows it, the columns of ``frame`` and the text columns
        (:attr:`text_columns`) in the file's order, on the rows of ``frame``; a text cell stripped, a missing
        one (empty, ``NA``, ...) None. Private values, for the owner's eyes (before the categories are
        declared). None otherwise.
    """

    frame: Any
    numeric: tuple[str, ...]
    text_columns: tuple[str, ...]
    empty_columns: tuple[str, ...]
    dropped_rows: int
    dropped_row_numbers: tuple[int, ...]
    dialect: dict
    notes: tuple[str, ...]
    categorical: tuple[str, ...] = ()
    categories: CategoryMap = CategoryMap()
    bad_rows: int = 0
    bad_cells: tuple[tuple[int, str], ...] = ()
    preview: Any = None

    @property
    def columns(self) -> tuple[str, ...]:
        """Every column read, in the order of ``frame``."""
        return tuple(str(c) for c in self.frame.columns)


def read_table(
    source: Any,
    *,
    columns: Sequence[str] | None = None,
    exclude: Sequence[str] | None = None,
    categories: Mapping[str, Sequence[str]] | None = None,
    domain: Any = None,
    missing: str = "error",
    drop_bad_rows: bool = False,
    max_rows: int = MAX_ROWS,
    max_cols: int = MAX_COLS,
    max_bytes: int = MAX_BYTES,
    max_file_cols: int = MAX_FILE_COLS,
    what: str | None = None,
) -> Table:
    """Read a CSV file with a header row into its numeric columns (see the module docstring for the rules).

    Parameters
    ----------
    source : str, os.PathLike, bytes or binary file-like
        A path, the file's bytes, or an object with ``getvalue()`` or ``read()`` returning bytes
        (Streamlit's ``UploadedFile``, :class:`io.BytesIO`, a file opened with ``"rb"``).
    columns : sequence of str, optional
        Columns to read, in this order. Default: every numeric column of the file (and every
        declared categorical column, all in the file's order). Declared categorical columns that
        ``columns`` does not name follow it, in the order of ``categories``.
    exclude : sequence of str, optional
        Columns to leave out of that default choice, by their header names (only without ``columns``
        and ``domain``, which name the columns to read; empty or None leaves nothing out). An excluded
        column is never read nor checked, so a cell that is not a number there is no error; the notes
        name it ("Left out as asked: 'age'."). Each must be a column of the file (else a
        :class:`CSVError` of kind ``"no_such_column"``) and none a declared categorical column.
    categories : mapping of str to sequence of str, optional
        Declared categorical columns and their categories (public inputs, as for
        :class:`~dpsynth_core.Domain`): each is read as text, whatever it looks like (a column of
        ``1`` and ``2`` declared ``["1", "2"]`` is categorical), and every cell, stripped of
        surrounding spaces, must be one of its declared labels or a missing value; any other value is
        a :class:`CSVError` (kind ``"category"``) naming its row, its column and the value.
    domain : Domain, optional
        A whole public domain instead of ``columns`` and ``categories``: its columns are read (the
        numeric ones as numbers, the categorical ones matched against its categories; an undeclared
        value goes to the column's ``other`` category when it has one).
    missing : {"error", "drop"}
        What to do with rows that have a missing value in a column read: refuse the file, or
        drop them (reported in :attr:`Table.dropped_rows` and the notes). In a categorical column a
        cell is missing when it is empty or a missing-value token (``NA``, ``null``, ...) that is
        not one of its declared labels.
    drop_bad_rows : bool, default False
        Drop the rows holding a bad cell (not a plain number, infinite, outside the declared categories:
        :mod:`._bad`) instead of refusing the file; how many and where are in :attr:`Table.bad_rows`,
        :attr:`Table.bad_cells` and the notes (a count of the private data: for the owner's eyes only).
    max_rows, max_cols, max_bytes, max_file_cols : int in [1, inf)
        Largest accepted number of data rows, of columns read, of bytes, of columns in the header.
        Each limit is inclusive and checked before the data it bounds is held in memory.
    what : str, optional
        How to name the file in messages, e.g. ``"the uploaded file 'people.csv'"``. Default:
        ``"the file '<path>'"`` for a path, ``"the file '<name>'"`` for a file-like with a
        ``name``, ``"the CSV data"`` otherwise.

    Returns
    -------
    Table

    Raises
    ------
    TypeError
        A wrong argument type (``source`` not a path, bytes or binary file-like; a text stream;
        ``columns`` or ``exclude`` not a sequence of str; ``what`` not a str; ``domain`` not a Domain).
    ValueError
        A wrong argument value (``missing`` not "error" or "drop", a limit below 1, an empty or
        repeated ``columns``, a repeated ``exclude``, an empty or repeated category list, ``domain`` with
        ``columns`` or ``categories``, ``exclude`` with ``columns`` or ``domain``, ``exclude`` naming a
        declared categorical column).
    CSVError
        (a ValueError) The file cannot be read as it is; see :class:`CSVError`.
    """
    return _read_table(source, columns=columns, categories=categories, domain=domain, missing=missing,
                       max_rows=max_rows, max_cols=max_cols, max_bytes=max_bytes, max_file_cols=max_file_cols,
                       what=what, owner="read_table", exclude=exclude, drop_bad_rows=drop_bad_rows)


def read_preview(source: Any, *, exclude: Sequence[str] | None = None, missing: str = "error",
                 drop_bad_rows: bool = False, max_rows: int = MAX_ROWS, max_cols: int = MAX_COLS,
                 max_bytes: int = MAX_BYTES, max_file_cols: int = MAX_FILE_COLS, what: str | None = None) -> Table:
    """:func:`read_table`'s text-preview mode: every numeric column (but those ``exclude`` names), and the
    columns holding text read as text into :attr:`Table.preview` beside them, in the file's order, instead of
    being left out (still named in :attr:`Table.text_columns`; a missing text cell is None, not checked
    against ``missing``). For a caller that shows a file before its owner declares which text columns are
    categorical and their categories (the dashboard's upload); the other arguments are :func:`read_table`'s."""
    return _read_table(source, columns=None, missing=missing, max_rows=max_rows, max_cols=max_cols,
                       max_bytes=max_bytes, max_file_cols=max_file_cols, what=what, owner="read_preview",
                       exclude=exclude, drop_bad_rows=drop_bad_rows, keep_text=True)


def detect_delimiter(path: str | os.PathLike, what: str) -> str:
    """The separator of the CSV file at ``path`` by :func:`read_table`'s rule (the module docstring,
    "Separator"), decided on the file's first 64 KiB: for readers that parse the file themselves
    (the command line's Dask engine), so that every reader of the project splits a file alike.

    ``what`` names the file in messages, as in :func:`read_table`. Raises :class:`CSVError` when two
    separators fit equally well; a file no separator splits gives a comma (one column).
    """
    with open(path, "rb") as fh:
        sample = fh.read(_SAMPLE_CHARS + 1).decode("utf-8-sig", errors="replace")
    return _detect_delimiter(sample, what[:1].upper() + what[1:])


def load_csv(
    source: Any,
    *,
    columns: Sequence[str] | None = None,
    categories: Mapping[str, Sequence[str]] | None = None,
    domain: Any = None,
    max_rows: int = 200_000,
    max_cols: int = 64,
    max_bytes: int = 50 * 2**20,
):
    """Read a CSV file with a header row into a DataFrame of its numeric columns.

    A thin wrapper over :func:`read_table` (the package's docstring has the rules: separator
    and decimal-comma detection, numeric versus text columns, header checks, limits) that returns
    only the frame, refuses missing values and names the file ``"the file '<path>'"`` or
    ``"the CSV data"``. Callers that want the notes (text columns left out, separator detected),
    ``missing="drop"`` or their own wording of the file use ``read_table`` directly.

    Parameters
    ----------
    source : str, os.PathLike, bytes or binary file-like
        A path, the file's bytes, or an object with ``getvalue()`` or ``read()`` returning bytes.
    columns : sequence of str, optional
        Columns to return, in this order. Default: every numeric column of the file.
    categories, domain : optional
        Declared categorical columns, as in :func:`read_table`.
    max_rows : int in [1, inf)
        Largest accepted number of data rows (the header excluded).
    max_cols : int in [1, inf)
        Largest accepted number of returned columns.
    max_bytes : int in [1, inf)
        Largest accepted file size in bytes.

    Returns
    -------
    pandas.DataFrame of shape (n, k)
        float64 columns, n >= 1 rows, all values finite (declared categorical columns as pandas
        categoricals of their declared labels).

    Raises
    ------
    TypeError
        ``source`` is not a path, bytes or binary file-like; ``columns`` is not a sequence of str.
    ValueError
        A wrong limit or ``columns`` value; :class:`CSVError` (a ValueError)
        for a file that cannot be read as it is, with the spreadsheet row (header = row 1) and
        column of the first problem and what to change.
    """
    return _read_table(source, columns=columns, categories=categories, domain=domain, missing="error",
                       max_rows=max_rows, max_cols=max_cols, max_bytes=max_bytes, max_file_cols=MAX_FILE_COLS,
                       what=None, owner="load_csv").frame


def names_text(names: Sequence[str], limit: int = 10) -> str:
    shown = ", ".join(repr(n) for n in names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")


def size_text(n: int) -> str:
    if n < 10 * 1024:
        return plural(n, "byte")
    if n < 2**20:
        return f"{n / 1024:.3g} KB"
    return f"{n / 2**20:.3g} MB"


def _letter(j: int) -> str:
    """Spreadsheet column letter of the 0-based column index ``j`` (0 -> A, 26 -> AA)."""
    out = ""
    j += 1
    while j:
        j, r = divmod(j - 1, 26)
        out = chr(65 + r) + out
    return out


def _position(j: int) -> str:
    return f"column {j + 1} ({_letter(j)})"


def default_what(source: Any, kind: str = "CSV") -> str:
    if isinstance(source, (str, os.PathLike)):
        return f"the file {os.fsdecode(os.fspath(source))!r}"
    name = getattr(source, "name", None)
    if isinstance(name, str) and name:
        return f"the file {os.path.basename(name) or name!r}"
    return f"the {kind} data"


def read_bytes(source: Any, max_bytes: int, owner: str, what: str) -> bytes:
    """The raw bytes of ``source``, refusing more than ``max_bytes`` before holding them when it can."""
    What = what[0].upper() + what[1:]

    def too_big(size: int | None) -> CSVError:
        got = f"is {size_text(size)}" if size is not None else f"is larger than {size_text(max_bytes)}"
        return CSVError(f"{What} {got}; at most {size_text(max_bytes)} can be read: use a sample of the rows "
                        f"or fewer columns.", "size")

    if isinstance(source, (bytes, bytearray, memoryview)):
        view = memoryview(source)
        if view.nbytes > max_bytes:
            raise too_big(view.nbytes)
        return source if isinstance(source, bytes) else bytes(view)
    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        if not os.path.isfile(path):
            raise CSVError(f"{What} does not exist or is not a file: check the name and the folder.", "not_found")
        size = os.path.getsize(path)
        if size > max_bytes:
            raise too_big(size)
        with open(path, "rb") as fh:
            data = fh.read(max_bytes + 1)
        if len(data) > max_bytes:  # the file grew since getsize
            raise too_big(None)
        return data
    if hasattr(source, "getvalue") or hasattr(source, "read"):
        if hasattr(source, "getbuffer"):  # BytesIO (and Streamlit's UploadedFile): size without a copy
            with source.getbuffer() as view:
                if view.nbytes > max_bytes:
                    raise too_big(view.nbytes)
        if hasattr(source, "getvalue"):  # the whole content, whatever was already read
            data, known = source.getvalue(), True
        else:
            data, known = source.read(max_bytes + 1), False
        if isinstance(data, str):
            raise TypeError(f"The 'source' parameter of {owner} must be opened in binary mode ('rb'). "
                            f"Got a text stream.")
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise TypeError(f"The 'source' parameter of {owner} must be a binary file-like object returning "
                            f"bytes. Got one returning {type(data).__name__}.")
        data = bytes(data)
        if len(data) > max_bytes:
            raise too_big(len(data) if known else None)
        return data
    raise TypeError(f"The 'source' parameter of {owner} must be a path, bytes or a binary file-like object. "
                    f"Got {type(source).__name__}.")


def _decode(data: bytes, What: str) -> tuple[str, str]:
    """(text, encoding name) of UTF-8 ``data``; refuses binary, UTF-16 and other encodings."""
    save = "save it as 'CSV UTF-8' (in Excel: File > Save As > CSV UTF-8)"
    if data.startswith(b"PAR1"):
        raise CSVError(f"{What} is a Parquet file, not a CSV file: read it with read_parquet (the command line "
                       f"reads a file named *.parquet as Parquet).", "binary")
    if data.startswith(b"PK\x03\x04"):
        raise CSVError(f"{What} is a ZIP archive (an Excel .xlsx workbook?), not a CSV file: {save}.", "binary")
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        raise CSVError(f"{What} is UTF-16 text, not UTF-8: {save}.", "encoding")
    if b"\x00" in data:
        raise CSVError(f"{What} contains NUL characters: it is a binary file or UTF-16 text, not a CSV "
                       f"file; {save}.", "binary")
    bom = data.startswith(codecs.BOM_UTF8)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise CSVError(f"{What} is not UTF-8 text (the first unreadable character is on line {line}): "
                       f"{save}.", "encoding", row=line) from None
    return text, "utf-8-sig" if bom else "utf-8"


def _sample_counts(sample: str, delimiter: str, truncated: bool) -> list[int]:
    """Cells per non-blank record of ``sample`` split at ``delimiter`` (a partial last record dropped)."""
    counts: list[int] = []
    reader = csv.reader(lines(sample), delimiter=delimiter, quotechar='"', strict=False)
    complete = not truncated
    try:
        for rec in reader:
            if not blank(rec):
                counts.append(len(rec))
            if len(counts) >= _SAMPLE_RECORDS:
                complete = True
                break
    except csv.Error:
        complete = False
    if not complete and len(counts) > 1:
        counts.pop()
    return counts


def _detect_delimiter(text: str, What: str) -> str:
    truncated = len(text) > _SAMPLE_CHARS
    sample = text[:_SAMPLE_CHARS]
    counts = {d: _sample_counts(sample, d, truncated) for d in _DELIMITERS}
    consistent = {d: c[0] for d, c in counts.items() if c and all(k == c[0] for k in c)}
    good = [d for d in _DELIMITERS if consistent.get(d, 0) > 1]
    if len(good) == 1:
        return good[0]
    if len(good) > 1:
        options = " or ".join(f"at {DELIMITER_WORDS[d]} ({consistent[d]} columns)" for d in good)
        raise CSVError(f"{What} could be split into columns {options}: save it as comma-separated with a dot "
                       f"as decimal mark (or add a first line 'sep=;' naming the separator).", "structure")
    header = {d: c[0] for d, c in counts.items() if c}
    best = max(_DELIMITERS, key=lambda d: header.get(d, 0))  # the first of the widest
    return best if header.get(best, 0) > 1 else ","


def check_args(columns, missing, max_rows, max_cols, max_bytes, max_file_cols, what, owner):
    max_rows = check_int(max_rows, "max_rows", owner, low=1)
    max_cols = check_int(max_cols, "max_cols", owner, low=1)
    max_bytes = check_int(max_bytes, "max_bytes", owner, low=1)
    max_file_cols = check_int(max_file_cols, "max_file_cols", owner, low=1)
    missing = check_choice(missing, "missing", owner, ("error", "drop"))
    if what is not None and (not isinstance(what, str) or not what.strip()):
        raise param_error(owner, "what", "None or a non-empty str", what, kind=TypeError)
    if columns is not None:
        if isinstance(columns, (str, bytes)) or not isinstance(columns, Sequence) or not all(
                isinstance(c, str) for c in columns):
            raise param_error(owner, "columns", "None or a sequence of column names (str)", columns,
                              kind=TypeError)
        if len(columns) == 0 or len(set(columns)) != len(columns):
            raise param_error(owner, "columns", "None or a non-empty sequence of distinct column names",
                              list(columns))
        columns = list(columns)
    return columns, missing, max_rows, max_cols, max_bytes, max_file_cols


def check_exclude(exclude, decl: Declared, owner: str) -> list[str]:
    """:func:`read_table`'s ``exclude`` checked against the other arguments (``decl``, already checked):
    the distinct names it lists ([] for None or empty). Whether the file has them is checked once its
    header is read (so they are at most as many as its columns)."""
    if exclude is None:
        return []
    if isinstance(exclude, (str, bytes)) or not isinstance(exclude, Sequence) or not all(
            isinstance(c, str) for c in exclude):
        raise param_error(owner, "exclude", "None or a sequence of column names (str)", exclude, kind=TypeError)
    if len(exclude) == 0:
        return []
    if len(set(exclude)) != len(exclude):
        raise param_error(owner, "exclude", "a sequence of distinct column names", list(exclude))
    if decl.columns is not None:
        given = "a domain" if decl.domain is not None else "'columns'"
        raise param_error(owner, "exclude", f"None or empty when {given} is given (it names the columns to read)",
                          list(exclude))
    cats = [c for c in exclude if c in decl.categories]
    if cats:
        raise param_error(owner, "exclude", "names of columns that are not declared categorical (leave a "
                          "categorical column out of categories instead)", cats[0])
    return list(exclude)


def _check_header(names: list[str], What: str, max_file_cols: int) -> None:
    if len(names) > max_file_cols:
        raise CSVError(f"{What} has {len(names)} columns; at most {max_file_cols} can be read: remove the "
                       f"columns you do not need.", "too_many_columns", row=1)
    if not any(names):
        raise CSVError(f"{What} has an empty first line: row 1 must be the header naming the columns.",
                       "header", row=1)
    if all(cell_state(n) in NUMBER_LIKE for n in names):
        raise CSVError(f"{What} has numbers in its first line instead of column names: add a header row "
                       f"naming the columns.", "header", row=1)
    for j, n in enumerate(names):
        if not n:
            raise CSVError(f"{What} has an empty column name in the header (row 1), {_position(j)}: give "
                           f"every column a name.", "header", row=1)
    seen: dict[str, int] = {}
    for j, n in enumerate(names):
        if n in seen:
            raise CSVError(f"{What} names two columns {n!r} in the header (row 1), {_position(seen[n])} and "
                           f"{_position(j)}: give each column a different name.", "header", row=1, column=n)
        seen[n] = j


_EMPTY = "{What} is empty: it must be a non-empty CSV file with a header row (column names) and at least one data row."


@dataclass(frozen=True)
class _Scan:
    """What the first pass learnt: the header, the number of data rows and the state counts of every column."""

    names: list[str]
    index: dict[str, int]
    stats: CellStats
    n_rows: int
    chunk_rows: int
    #: The data lines of a plain file (:func:`._split.plain_body`: pandas' C parser splits it), None otherwise.
    plain: bytes | None = None

    @property
    def width(self) -> int:
        return len(self.names)

    def chunks(self, text: str, delimiter: str, What: str, max_rows: int,
               wanted: Sequence[int]) -> Iterator[tuple[dict[int, pd.Series], int]]:
        """The data rows again, chunk by chunk, the columns ``wanted`` (file positions) as str Series."""
        if self.plain is not None:
            return plain_chunks(self.plain, delimiter, self.width, self.chunk_rows, wanted)
        recs = records(text, delimiter, What)
        next(recs)  # the header
        return python_chunks(recs, self.width, max_rows, What, delimiter, self.chunk_rows, wanted)


def _read_table(source, *, columns, categories=None, domain=None, missing, max_rows, max_cols, max_bytes,
                max_file_cols, what, owner, exclude=None, drop_bad_rows=False, keep_text=False):
    """:func:`read_table` with the name of the public function in argument errors (``owner``)."""
    columns, missing, max_rows, max_cols, max_bytes, max_file_cols = check_args(
        columns, missing, max_rows, max_cols, max_bytes, max_file_cols, what, owner)
    drop_bad_rows = check_bool(drop_bad_rows, "drop_bad_rows", owner)
    decl = declared(categories, domain, columns, owner)
    columns = decl.columns
    exclude = check_exclude(exclude, decl, owner)
    if what is None:
        what = default_what(source)
    What = what[0].upper() + what[1:]
    text, encoding = _decode(read_bytes(source, max_bytes, owner, what), What)
    if not text or text.isspace():
        raise CSVError(_EMPTY.format(What=What), "empty")
    notes: list[str] = []
    text, delimiter = _separator(text, What, notes)
    scan = _first_pass(text, delimiter, What, columns, decl, max_rows, max_file_cols, exclude)
    chosen, numeric, text_cols, empty_cols = _choose_columns(scan, columns, decl, max_cols, What, exclude)
    cols = [scan.index[c] for c in numeric]
    decimal = _decimal_mark(scan, cols, delimiter, What, notes)
    bad_cols = _bad_cells(scan, cols, delimiter, decimal, What, drop_bad_rows)
    matchers = [ColumnMatcher(c, labels, decl.other[c][0] if c in decl.other else None, MISSING_TOKENS)
                for c, labels in decl.categories.items()]
    X, C, badcell, T = _second_pass(text, delimiter, What, scan, cols, decimal, max_rows,
                                    [(scan.index[m.column], m) for m in matchers], bad_cols, bad_states(delimiter),
                                    [scan.index[c] for c in text_cols] if keep_text else [])
    index, bad = np.arange(X.shape[0]), BadRows()
    if drop_bad_rows:
        X, C, index, bad = drop_bad(X, numeric, C, [m.column for m in matchers], chosen, badcell, What,
                                    lambda r: r + 2, "row")
    else:
        refuse_undeclared(matchers, What, lambda r: f"row {r + 2}", lambda r: r + 2)
    keep, n_missing, dropped = finite_rows(X, numeric, C, [m.column for m in matchers], chosen, missing, What,
                                            lambda r: int(index[r]) + 2, "row")
    frame = build_frame(X, numeric, C, matchers, chosen, keep)
    notes += read_notes(frame.shape[0], numeric, [] if keep_text else text_cols, empty_cols, n_missing, dropped,
                        matchers, excluded=exclude)
    if bad.count:
        notes.append(bad.note("row"))
    dialect = {"delimiter": delimiter, "decimal": decimal, "thousands": None, "encoding": encoding}
    return Table(frame=frame, numeric=tuple(numeric), text_columns=tuple(text_cols),
                 empty_columns=tuple(empty_cols), dropped_rows=n_missing, dropped_row_numbers=dropped,
                 dialect=dialect, notes=tuple(notes), categorical=tuple(m.column for m in matchers),
                 categories=decl.categories, bad_rows=bad.count, bad_cells=bad.where,
                 preview=_preview(frame, T, text_cols, index, keep, scan.names) if keep_text else None)


def _separator(text: str, What: str, notes: list[str]) -> tuple[str, str]:
    """(the text without Excel's optional 'sep=X' first line, the separator): declared there, or detected."""
    declared = re.match(r"sep=(.)\r?(?:\n|$)", text) if text.startswith("sep=") else None
    if declared:
        delimiter = declared.group(1)
        if delimiter not in _DELIMITERS:
            raise CSVError(f"{What} declares the separator {delimiter!r} on its first line; only commas, "
                           f"semicolons, tabs and vertical bars (|) are supported.", "structure", row=1)
        notes.append(Note(f"Cells are separated by {DELIMITER_WORDS[delimiter]}, as the first line 'sep=' "
                          f"says (that line is not counted as a row).", "separator"))
        return text[declared.end():], delimiter
    delimiter = _detect_delimiter(text, What)
    notes.append(Note(f"Cells are separated by {DELIMITER_WORDS[delimiter]}.", "separator"))
    return text, delimiter


def _first_pass(text: str, delimiter: str, What: str, columns, decl: Declared, max_rows: int,
                max_file_cols: int, exclude: Sequence[str] = ()) -> _Scan:
    """Pass 1: the header, the structure, the row count and the state of every cell (kept as per-column counts)
    of the columns that may be numeric (not those declared categorical, nor those left out)."""
    recs = records(text, delimiter, What)
    header = next(recs, None)
    if header is None:
        raise CSVError(_EMPTY.format(What=What), "empty")
    names = [c.strip(SPACE) for c in header]
    _check_header(names, What, max_file_cols)
    width = len(names)
    index = {n: j for j, n in enumerate(names)}
    check_columns_exist(names, list(columns or []) + [c for c in decl.categories if c not in (columns or [])],
                        decl, What)
    check_columns_exist(names, exclude, decl, What)  # at most as many names as the header's, once they exist
    chunk_rows = max(1, _CHUNK_CELLS // width)
    wanted = [j for j, c in enumerate(names) if c not in decl.categories and c not in exclude]
    plain = plain_body(text, delimiter, width, max_rows)
    if plain is not None:
        stats, n_rows = _classified(plain_chunks(plain, delimiter, width, chunk_rows, wanted), width)
    else:  # the csv module: every file, every row's error
        stats, n_rows = _classified(python_chunks(recs, width, max_rows, What, delimiter, chunk_rows, wanted), width)
    if n_rows == 0:
        raise CSVError(f"{What} has a header row but no data: it needs at least one data row.", "empty")
    return _Scan(names=names, index=index, stats=stats, n_rows=n_rows, chunk_rows=chunk_rows, plain=plain)


def _classified(chunks: Iterator[tuple[dict[int, pd.Series], int]], width: int) -> tuple[CellStats, int]:
    """The state counts of the columns in ``chunks`` and the number of rows."""
    stats, n_rows = CellStats(width), 0
    for columns, n in chunks:
        stats.add(columns, n_rows)
        n_rows += n
    return stats, n_rows


def check_columns_exist(names: Sequence[str], wanted: Sequence[str], decl: Declared, What: str) -> None:
    """Refuse a requested or declared column that the file does not have (with a close name, if any)."""
    have = set(names)
    for c in wanted:
        if c not in have:
            close = difflib.get_close_matches(c, list(names), n=1, cutoff=0.6)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            role = ("declared categorical " if c in decl.categories else "") + \
                ("column of the domain " if decl.domain is not None else "column ")
            raise CSVError(f"{What} has no {role}{c!r}{hint}; its columns are {names_text(list(names))}.",
                           "no_such_column", column=c)


def _choose_columns(scan: _Scan, columns, decl: Declared, max_cols: int, What: str,
                    exclude: Sequence[str] = ()) -> tuple[list[str], list[str], list[str], list[str]]:
    """(the columns read, the numeric ones among them, the text columns left out, the empty columns left
    out): every numeric column and every declared categorical one but those ``exclude`` names, or
    ``columns`` (then the declared categorical columns it does not name) once each numeric one is checked
    to hold numbers."""
    names, stats, width = scan.names, scan.stats, scan.width
    cats = decl.categories
    values = stats.count[list(NUMBER_LIKE)].sum(axis=0)
    filled = scan.n_rows - stats.count[MISSING]
    excluded = set(exclude)
    kind = ["categorical" if names[j] in cats else "excluded" if names[j] in excluded
            else "empty" if filled[j] == 0 else "text" if 2 * values[j] < filled[j] else "numeric"
            for j in range(width)]
    text_cols: list[str] = []
    empty_cols: list[str] = []
    if columns is None:
        text_cols = [n for n, k in zip(names, kind, strict=True) if k == "text"]
        empty_cols = [n for n, k in zip(names, kind, strict=True) if k == "empty"]
        chosen = [n for n, k in zip(names, kind, strict=True) if k in ("numeric", "categorical")]
        if not chosen and excluded:
            raise CSVError(f"{What} has no numeric column besides the {plural(len(exclude), 'column')} left out "
                           f"({names_text(list(exclude))}): leave out fewer columns.", "no_numeric_column")
        if not chosen:
            hint = "if its numbers have thousands separators, units or a decimal comma, save it as " \
                   "comma-separated with a dot as decimal mark and plain numbers"
            if width == 1:
                hint += " (it has a single column: are its cells separated by something other than commas, " \
                        "semicolons, tabs or |?)"
            raise CSVError(f"{What} has no numeric column: its {plural(width, 'column')} hold text or are "
                           f"empty; {hint}.", "no_numeric_column")
    else:
        for c in columns:
            j = scan.index[c]
            if kind[j] == "categorical":
                continue
            if kind[j] == "empty":
                raise CSVError(f"{What}: column {c!r} is empty (no values); choose columns that hold numbers.",
                               "empty_column", column=c)
            if kind[j] == "text":
                r, _ = stats.first_of([TEXT], j)
                raise CSVError(f"{What}: column {c!r} holds text, not numbers (the first text is at row {r + 2}); "
                               f"choose columns that hold numbers, or declare its categories to read it as a "
                               f"categorical column.", "text_column", row=r + 2, column=c)
        chosen = list(columns) + [c for c in cats if c not in columns]
    if len(chosen) > max_cols:
        what = "numeric columns" if not cats else "columns to read"
        raise CSVError(f"{What} has {len(chosen)} {what}; at most {max_cols} can be read at once: "
                       f"choose the columns to use.", "too_many_columns")
    return chosen, [c for c in chosen if c not in cats], text_cols, empty_cols


def _decimal_mark(scan: _Scan, cols: list[int], delimiter: str, What: str, notes: list[str]) -> str:
    """The decimal mark: a comma only with another separator, and only when no cell contradicts it."""
    stats, names = scan.stats, scan.names
    if delimiter == ",":
        return "."
    comma = int(stats.count[[COMMA, COMMA3]][:, cols].sum())
    if not comma:
        return "."
    r_c, j_c, _ = earliest(stats, [COMMA, COMMA3], cols)
    r_d, j_d, _ = earliest(stats, [DOT], cols)
    if r_d >= 0:
        raise CSVError(f"{What} mixes decimal marks: row {r_c + 2}, column {names[j_c]!r} has a number "
                       f"with a comma and row {r_d + 2}, column {names[j_d]!r} one with a dot; use one "
                       f"decimal mark and no thousands separators, e.g. save it as comma-separated with "
                       f"a dot as decimal mark.", "decimal", row=r_c + 2, column=names[j_c])
    if not stats.count[COMMA][cols].any():
        raise CSVError(f"{What} has numbers such as 1,000 (first at row {r_c + 2}, column "
                       f"{names[j_c]!r}) whose comma could be a decimal mark or a thousands separator: "
                       f"save it as comma-separated with a dot as decimal mark and no thousands "
                       f"separators.", "decimal", row=r_c + 2, column=names[j_c])
    notes.append(Note("Numbers use a comma as decimal mark (1,5 is read as 1.5).", "decimal"))
    return ","


def _bad_cells(scan: _Scan, cols: list[int], delimiter: str, decimal: str, What: str, drop: bool) -> list[int]:
    """The columns read (file positions) that hold a bad cell, when they are to be dropped (``drop``);
    otherwise the first bad cell refuses the file, with its row, its column and a hint."""
    bad_codes = bad_states(delimiter)
    if drop:
        return [j for j in cols if scan.stats.count[bad_codes, j].any()]
    r, j, code = earliest(scan.stats, bad_codes, cols)
    if r >= 0:
        hint = scan.stats.text_hint.get(j, "not a plain number") if code == TEXT else STATE_HINTS[code]
        example = "1000 or 1,5" if decimal == "," else "1000 or 1.5"
        raise CSVError(f"{What} has a cell that is not a number at row {r + 2}, column {scan.names[j]!r}: {hint}; "
                       f"write plain numbers such as {example}, drop the rows that hold such cells, or leave the "
                       f"column out if it is not numeric.", "not_a_number", row=r + 2, column=scan.names[j])
    return []


def _second_pass(text: str, delimiter: str, What: str, scan: _Scan, cols: list[int], decimal: str,
                 max_rows: int, matchers: list[tuple[int, ColumnMatcher]], bad_cols: Sequence[int] = (),
                 bad_codes: Sequence[int] = (), text_cols: Sequence[int] = ()
                 ) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray], list[list[str]]]:
    """Pass 2: the values of the numeric columns read, (rows, numeric columns) float64 (NaN for a missing
    value), the codes of the categorical ones, (rows, categorical columns) int64 (see ColumnMatcher), the
    bad cells of the columns ``bad_cols`` (by name; read as missing here, their rows dropped later), and the
    cells of the ``text_cols`` as they are (one list per column: the text-preview mode)."""
    X = np.empty((scan.n_rows, len(cols)))
    C = np.empty((scan.n_rows, len(matchers)), dtype=np.int64)
    badcell = {scan.names[j]: np.zeros(scan.n_rows, dtype=bool) for j in bad_cols}
    T: list[list[str]] = [[] for _ in text_cols]
    row0 = 0
    wanted = sorted({*cols, *(j for j, _ in matchers), *text_cols})
    for columns, n in scan.chunks(text, delimiter, What, max_rows, wanted):
        for j in bad_cols:  # the cells that are not numbers become missing values of rows dropped later
            mask = np.isin(classify(columns[j]), bad_codes)
            badcell[scan.names[j]][row0:row0 + n] = mask
            if mask.any():
                columns[j] = columns[j].where(~mask, "")
        for k, j in enumerate(cols):
            X[row0:row0 + n, k] = convert(columns[j], decimal)
        for t, (j, matcher) in enumerate(matchers):
            C[row0:row0 + n, t] = matcher.codes(columns[j].str.strip(SPACE), row0)
        for column, j in zip(T, text_cols, strict=True):
            column.extend(columns[j].tolist())
        row0 += n
    return X, C, badcell, T


def _preview(frame: pd.DataFrame, T: list[list[str]], text_cols: Sequence[str], index: np.ndarray,
             keep: np.ndarray | None, header: Sequence[str]) -> pd.DataFrame:
    """The text-preview table: the columns read and the text columns (cells stripped, a missing-value token
    None) in the file's order, on the rows ``frame`` holds (those ``index`` names after the bad rows were
    dropped, then ``keep``)."""
    data = {}
    for name, cells in zip(text_cols, T, strict=True):
        values = pd.Series(cells, dtype="object").str.strip(SPACE).iloc[index]
        values = values.where(~values.str.lower().isin(MISSING_TOKENS), None)
        data[name] = (values if keep is None else values[keep]).reset_index(drop=True)
    data.update({c: frame[c] for c in frame.columns})
    return pd.DataFrame({c: data[c] for c in header if c in data})


def refuse_undeclared(matchers: Sequence[ColumnMatcher], What: str, where, row_number) -> None:
    """The first value outside the declared categories (earliest row, then leftmost column) as a
    :class:`CSVError`; ``where(r)`` words the 0-based row ``r`` (``"row 7"``), ``row_number(r)`` is
    :attr:`CSVError.row`."""
    bad = [m for m in matchers if m.first_bad is not None]
    if not bad:
        return
    m = min(bad, key=lambda m: m.first_bad[0])
    r, value = m.first_bad
    raise CSVError(undeclared_message(What, where(r), m.column, value, m.labels, m.n_bad), "category",
                   row=row_number(r), column=m.column)


def build_frame(X: np.ndarray, numeric: Sequence[str], C: np.ndarray, matchers: Sequence[ColumnMatcher],
                chosen: Sequence[str], keep: np.ndarray | None) -> pd.DataFrame:
    """The frame of :class:`Table`: float64 numeric columns, categoricals of the declared labels, in the
    order ``chosen``; only the rows ``keep`` (all when None)."""
    if keep is not None:
        X, C = X[keep], C[keep]
    if not matchers:
        return pd.DataFrame(X, columns=list(chosen), copy=False)
    num = {c: i for i, c in enumerate(numeric)}
    cat = {m.column: (t, m) for t, m in enumerate(matchers)}
    data = {}
    for c in chosen:
        if c in num:
            data[c] = X[:, num[c]]
        else:
            t, m = cat[c]
            data[c] = pd.Categorical.from_codes(C[:, t], categories=list(m.labels))
    return pd.DataFrame(data, columns=list(chosen))


def finite_rows(X: np.ndarray, numeric: Sequence[str], C: np.ndarray, categorical: Sequence[str],
                 chosen: Sequence[str], missing: str, What: str, row_number, row_word: str,
                 missing_words: str = "an empty cell, NA or NaN") -> tuple[np.ndarray | None, int, tuple[int, ...]]:
    """(the rows kept, None for all; the number of rows with a missing value; the first of their row
    numbers): an infinite value is refused; a missing one (NaN, or a categorical code MISSING_CODE)
    refuses the file (``missing="error"``) or drops its row. ``row_number(i)`` numbers the 0-based row
    ``i`` as the file's reader shows it, ``row_word`` names such a number ("row", "data row")."""
    inf = np.isinf(X)
    if inf.any():
        i, k = (int(v) for v in np.argwhere(inf)[0])
        r = row_number(i)
        raise CSVError(f"{What} has an infinite value at {row_word} {r}, column {numeric[k]!r} (inf, or a number "
                       f"too large for a float): replace it with a finite number.", "infinite", row=r,
                       column=numeric[k])
    nan_rows = np.isnan(X).any(axis=1)
    if len(categorical):
        nan_rows |= (C == MISSING_CODE).any(axis=1)
    n_missing = int(nan_rows.sum())
    if not n_missing:
        return None, 0, ()
    i = int(np.argmax(nan_rows))
    holes = dict(zip(numeric, np.isnan(X[i]), strict=True)) | dict(zip(categorical, C[i] == MISSING_CODE, strict=True))
    col = next(c for c in chosen if holes[c])
    r = row_number(i)
    if missing == "error":
        rows_word = plural(n_missing, "row")
        raise CSVError(f"{What} has missing values ({missing_words}) in {rows_word}, the first at "
                       f"{row_word} {r}, column {col!r}: fill them in, or choose to drop the {rows_word} "
                       f"with missing values.", "missing", row=r, column=col, count=n_missing)
    if n_missing == X.shape[0]:
        raise CSVError(f"{What} has a missing value in every row ({plural(X.shape[0], 'row')}, the first at "
                       f"{row_word} {r}, column {col!r}): no row is left once they are dropped.",
                       "missing", row=r, column=col, count=n_missing)
    dropped = tuple(int(row_number(int(v))) for v in np.flatnonzero(nan_rows)[:_SHOWN_ROWS])
    return ~nan_rows, n_missing, dropped



def read_notes(n_rows: int, chosen: list[str], text_cols: list[str], empty_cols: list[str], n_missing: int,
                dropped: tuple[int, ...], matchers: Sequence[ColumnMatcher] = (), row_word: str = "row", *,
                excluded: Sequence[str] = ()) -> list[Note]:
    """The sentences of :attr:`Table.notes` on what was read, left out (``excluded``: as the caller asked)
    and dropped."""
    cats = [m.column for m in matchers]
    if not cats:
        notes = [Note(f"Read {plural(n_rows, 'row')} and {plural(len(chosen), 'numeric column')}: "
                      f"{names_text(chosen)}.", "read")]
    else:
        num = f"{plural(len(chosen), 'numeric column')}{': ' + names_text(chosen) if chosen else ''}"
        notes = [Note(f"Read {plural(n_rows, 'row')}, {num}, and {plural(len(cats), 'categorical column')}: "
                      f"{names_text(cats)}.", "read")]
    for m in matchers:
        if m.n_other:
            notes.append(Note(f"Mapped {plural(m.n_other, 'value')} of column {m.column!r} outside its declared "
                              f"categories to its 'other' category {m.other_label!r}.", "mapped"))
    if excluded:
        notes.append(Note(f"Left out as asked: {names_text(list(excluded))}.", "excluded"))
    if text_cols:
        notes.append(Note(f"Left out {plural(len(text_cols), 'column')} holding text: {names_text(text_cols)}.", "text"))
    if empty_cols:
        notes.append(Note(f"Left out {plural(len(empty_cols), 'empty column')}: {names_text(empty_cols)}.", "empty"))
    if n_missing:
        more = ", ..." if n_missing > len(dropped) else ""
        notes.append(Note(f"Dropped {plural(n_missing, 'row')} with missing values "
                          f"({row_word if n_missing == 1 else row_word + 's'} {', '.join(map(str, dropped))}{more}).",
                          "dropped"))
    return notes
