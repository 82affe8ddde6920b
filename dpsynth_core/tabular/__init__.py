"""CSV and Parquet files: read a user's file into numeric and declared categorical columns (never
misread, explain in the user's words), and write synthetic data back.

:func:`read_table` is the one CSV reader of the project (the library's :func:`load_csv`, the CLI and
the dashboard's upload all go through it); :func:`read_parquet` is its twin for Parquet files. Each
returns a :class:`Table`: the numeric columns as float64 and the declared categorical columns as
pandas categoricals of their declared labels, plus what was detected and what was left out, in plain
sentences (:attr:`Table.notes`). Whatever it cannot read unambiguously it refuses with a :class:`CSVError`:
one line, naming the file as the caller describes it, the spreadsheet row and the column, and
saying what to change. Messages never echo a cell's value (it may be private), only positions,
header names and the general shape of the problem — with one exception: a value outside a column's
declared categories is shown (cut to 60 characters), since the owner needs it to complete the list.

Rules (each one has a test in ``tests/core/test_csv_table.py``, the categorical ones in
``tests/core/test_tabular_categories.py``)
----------------------------------------------------------------
Bytes
    UTF-8, with or without a byte-order mark. UTF-16, other encodings, NUL bytes and ZIP archives
    (an ``.xlsx`` workbook) are refused with the advice to save as "CSV UTF-8". The size is checked
    before reading: ``os.path.getsize`` for a path, at most ``max_bytes + 1`` bytes read from a
    stream. Nothing is written to disk or logged.
Separator
    One of ``,`` ``;`` tab ``|``. Excel's optional first line ``sep=;`` is honoured (and is not a
    row). Otherwise each candidate splits the first records (at most 200 records of the first
    64 KiB); the separator is the one candidate giving the same number of cells (> 1) on every
    record. Two such candidates: refused as ambiguous. None: the candidate splitting the header into
    the most cells (a comma when none splits it: a single column); every row is then checked to
    have as many cells as the header, so a wrong guess is an error, never a misread.
    (``csv.Sniffer`` is not used: it guesses letters or spaces as separators and raises on
    ordinary files.)
Numbers
    A cell is a number when, stripped of surrounding spaces, it is ``[+-]digits[.digits][e±digits]``
    (``.5`` and ``5.`` too) or ``inf``/``infinity``; nothing else (no ``1_000``, ``0x10``, ``1 000``,
    ``5%``, ``−5`` with a typographic minus). Decimal comma: only when the separator is not a comma, a cell like ``1,5`` is a number
    with a decimal comma. The file uses a decimal comma when its columns read contain such cells
    and no ``1.5``-style cell; it mixes both: refused. A cell like ``1,000`` or ``-12,345`` (1 to 3
    digits, a comma, exactly 3 digits) could be a thousands separator: the decimal comma is
    accepted only if at least one cell proves it (``0,5``, ``1,25``, ``1234,5``, ``1,5e3``), otherwise
    the file is refused as ambiguous. Thousands separators are never guessed: ``1,000,000``,
    ``1.000,5``, ``1 000`` and a quoted ``"1,000"`` in a comma-separated file are bad cells, reported
    with a hint.
Categorical columns (``categories=`` or ``domain=``)
    A column whose categories are declared is read as text, whatever it looks like, and left out of
    the numeric rules below (its commas are not decimal commas). Each cell, stripped, must be one of
    the declared labels (a declared label wins over a missing-value token), or is a missing value,
    or is undeclared: then the column's ``other`` category when the domain declares one, otherwise a
    :class:`CSVError` of kind ``"category"`` naming the row, the column and the value (the one cell
    value a message shows: the owner needs it to complete the list), with a hint when a declared
    label is close. The rules are shared with :func:`read_parquet` and the command line's Dask engine
    (:func:`normalise_partition`); docs/mixed-data.md, "Reading and writing".
Numeric or text column
    A column whose non-empty cells are at least half number-like (numbers, including infinite ones
    and cells with thousands separators or a misplaced comma) is NUMERIC: any other non-empty
    cell in it is an error naming the first one (row, column, what it looks like). Fewer than half:
    a TEXT column, left out and named in :attr:`Table.text_columns` and the notes (unless
    ``columns`` was given). Why one half: below it the column is mostly words, and a few
    number-like cells (codes such as ``12``) are expected in text; from one half up it is mostly
    numbers, and a word is more likely a typo (``O.01`` with a letter O) than meaningful text.
    ``True``/``False`` are text. A column with no value at all is left out and named in
    :attr:`Table.empty_columns` and the notes.
Header
    The first row (row 1) names the columns: surrounding spaces are stripped; an empty name,
    a name used twice, or a header made only of numbers ("add a header row") is refused with
    the positions. ``columns=[...]`` selects and orders columns by name.
Missing values
    An empty cell or ``NA``, ``N/A``, ``#N/A``, ``NaN``, ``null``, ``None`` (any case), in the
    columns read. ``missing="error"`` (default) refuses with the first location and the number of
    rows affected; ``missing="drop"`` drops those rows and reports how many (and the first row
    numbers). Infinite values (``inf``, or a number too large for a float) are always an error.
Rows
    Row numbers are those a spreadsheet shows: the header is row 1. Blank lines at the end are
    ignored; a blank line inside the file is a row of missing values (so later row numbers stay
    right). A quoted cell may contain separators, quotes (doubled) and line breaks.
Limits
    ``max_bytes`` (50 MiB), ``max_rows`` data rows (200,000), ``max_cols`` columns read (64) and
    ``max_file_cols`` columns in the header (1,024, checked before any data row is parsed).
    Parsing is two streaming passes over the decoded text in chunks of 2**18 cells: the first
    classifies every cell of the columns that may be numeric and keeps only per-column counts, the
    second converts the columns read. Memory beyond the text is one chunk plus the returned frame
    (and, for a plain file, a UTF-8 copy of its data lines for pandas' C parser).
    Conversion is exact (correctly rounded, like Python's ``float``): shortest-repr text reads back
    bit for bit. A plain file (no quote, no lone carriage return, every line with the header's
    number of cells) is split by pandas' C parser, any other by Python's csv module, with the same
    cells (:mod:`._split`): 0.5 s of CPU instead of 1.75 s for 200,000 rows of 5 columns, and the
    row-level errors are the csv module's, as they were.
Writing
    :func:`csv_bytes`: UTF-8, a header row, the shortest text that reads back to the same float64, so
    ``load_csv(csv_bytes(X, names))`` returns ``X`` exactly (the synthetic CSV of the export and the CLI);
    a DataFrame's categorical columns are written as their labels (quoted when needed) and read back
    exactly with the same declaration.

Modules: :mod:`.read` (the CSV reader and its passes), :mod:`.parquet` (the Parquet reader),
:mod:`._categories` (matching declared categories), :mod:`._cells` (what one cell is: states,
patterns, conversion), :mod:`._split` (the text split into cells: pandas' C parser or the csv module),
:mod:`._bad` (rows with a bad cell dropped: ``drop_bad_rows``, and the Dask engine's partitions), :mod:`.write`
(the writer).
"""

from __future__ import annotations

from ._bad import SUMMARY_META, BadRows, bad_rows_summary, clean_partition
from ._categories import category_dtype, normalise_partition
from ._cells import MISSING_TOKENS
from ._errors import Note
from .parquet import PARQUET_MISSING_TOKENS, PARQUET_SUFFIXES, read_parquet
from .read import (
    MAX_BYTES,
    MAX_COLS,
    MAX_FILE_COLS,
    MAX_ROWS,
    CSVError,
    Table,
    detect_delimiter,
    load_csv,
    read_preview,
    read_table,
)
from .write import csv_bytes

__all__ = [
    "CSVError",
    "Note",
    "Table",
    "read_table",
    "read_preview",
    "read_parquet",
    "load_csv",
    "detect_delimiter",
    "normalise_partition",
    "clean_partition",
    "bad_rows_summary",
    "BadRows",
    "SUMMARY_META",
    "category_dtype",
    "csv_bytes",
    "MAX_BYTES",
    "MAX_ROWS",
    "MAX_COLS",
    "MAX_FILE_COLS",
    "MISSING_TOKENS",
    "PARQUET_SUFFIXES",
    "PARQUET_MISSING_TOKENS",
]
