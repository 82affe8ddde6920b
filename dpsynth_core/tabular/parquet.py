"""The Parquet reader: :func:`read_parquet`, the twin of :func:`~.read.read_table` for Parquet files.

A Parquet file carries its column types, so nothing is guessed: integer, floating-point and decimal
columns are numeric (read as float64); text columns (``string``, ``large_string``) and pandas
categoricals (``dictionary`` of text) are text, left out unless declared categorical. A declared
categorical column may hold text, a pandas categorical or integers (``3`` is the text ``"3"``); a
floating-point column is refused as categorical (its text, ``1.0``, is not the label ``1``; a numeric
column wants bounds). Categories are matched as the CSV reader matches them
(:mod:`._categories`): stripped text, a declared label, else a null or an empty text is missing, else
the value is undeclared (the column's ``other`` category, or an error naming the data row, the column
and the value). Unlike CSV, text such as ``NA`` is not a missing value here: Parquet has nulls.

Rows are numbered from 1, the first row of data ("data row 1"): a Parquet file has no header line.
Limits are checked on the file's footer (its size, its number of rows and columns) before any
column is read. pyarrow is needed (the ``dask`` extra installs it); it is imported when a file is read.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..validation import check_bool
from ._bad import BadRows, drop_bad
from ._categories import ColumnMatcher, declared
from ._cells import SPACE
from ._errors import Note
from .read import (
    MAX_BYTES,
    MAX_COLS,
    MAX_FILE_COLS,
    MAX_ROWS,
    CSVError,
    Table,
    build_frame,
    check_args,
    check_columns_exist,
    default_what,
    finite_rows,
    names_text,
    plural,
    read_bytes,
    read_notes,
    refuse_undeclared,
    size_text,
)

__all__ = ["read_parquet", "PARQUET_SUFFIXES", "PARQUET_MISSING_TOKENS"]

#: File names read as Parquet.
PARQUET_SUFFIXES = (".parquet", ".parq", ".pq")
#: In a categorical column of a Parquet file, only an empty text (and a null) is a missing value.
PARQUET_MISSING_TOKENS = ("",)


def _kind(t) -> str:
    """"numeric", "text", "integer" (numeric, and allowed as categorical), "float", or "other"."""
    import pyarrow as pa

    if pa.types.is_dictionary(t):
        return "text" if pa.types.is_string(t.value_type) or pa.types.is_large_string(t.value_type) else (
            "integer" if pa.types.is_integer(t.value_type) else "other")
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return "text"
    if pa.types.is_integer(t):
        return "integer"
    if pa.types.is_floating(t) or pa.types.is_decimal(t):
        return "float"
    return "other"


def _type_words(t) -> str:
    kind = _kind(t)
    return {"text": "text", "integer": "integers", "float": f"floating-point numbers ({t})"}.get(
        kind, f"values of type {t}")


def read_parquet(
    source: Any,
    *,
    columns: Sequence[str] | None = None,
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
    """Read a Parquet file into its numeric and declared categorical columns (see the module docstring).

    Parameters are those of :func:`~.read.read_table`: ``source`` is a path, the file's bytes or a
    binary file-like (an upload); ``columns``, ``categories`` and ``domain`` choose and declare the
    columns as there; ``missing`` refuses or drops rows with a null (or an empty text in a categorical
    column); ``drop_bad_rows`` drops the rows with an infinite value or a value outside a categorical
    column's declared categories (a Parquet column of numbers holds no text); the limits are checked on
    the footer before the columns are read.

    Returns
    -------
    Table
        As :func:`~.read.read_table` returns it; ``dialect`` is ``{"format": "parquet"}`` and row
        numbers in :class:`CSVError` count data rows from 1.
    """
    owner = "read_parquet"
    columns, missing, max_rows, max_cols, max_bytes, max_file_cols = check_args(
        columns, missing, max_rows, max_cols, max_bytes, max_file_cols, what, owner)
    drop_bad_rows = check_bool(drop_bad_rows, "drop_bad_rows", owner)
    decl = declared(categories, domain, columns, owner)
    columns = decl.columns
    if what is None:
        what = default_what(source, "Parquet")
    What = what[0].upper() + what[1:]
    try:
        import pyarrow as pa
        import pyarrow.compute as pc
        import pyarrow.parquet as pq
    except ImportError as exc:
        raise ImportError(f"Reading Parquet files needs pyarrow: pip install pyarrow ({exc}).") from None

    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        if not os.path.isfile(path):
            raise CSVError(f"{What} does not exist or is not a file: check the name and the folder.", "not_found")
        size = os.path.getsize(path)
        if size > max_bytes:
            raise CSVError(f"{What} is {size_text(size)}; at most {size_text(max_bytes)} can be read: use a sample "
                           f"of the rows or fewer columns.", "size")
        handle = path
    else:
        handle = pa.BufferReader(read_bytes(source, max_bytes, owner, what))
    try:
        pf = pq.ParquetFile(handle)
    except (pa.ArrowInvalid, pa.ArrowIOError, OSError) as exc:
        raise CSVError(f"{What} is not a readable Parquet file ({' '.join(str(exc).split())[:200]}): save it "
                       f"as Parquet, or as CSV UTF-8 and read it as CSV.", "binary") from None
    try:
        return _read(pf, pc, pa, decl, columns, missing, max_rows, max_cols, max_file_cols, What, drop_bad_rows)
    finally:
        pf.close()


def _read(pf, pc, pa, decl, columns, missing, max_rows, max_cols, max_file_cols, What, drop_bad_rows=False) -> Table:
    schema = pf.schema_arrow
    names = [str(n) for n in schema.names]
    if len(names) > max_file_cols:
        raise CSVError(f"{What} has {len(names)} columns; at most {max_file_cols} can be read: remove the "
                       f"columns you do not need.", "too_many_columns")
    if len(set(names)) != len(names):
        dup = next(n for n in names if names.count(n) > 1)
        raise CSVError(f"{What} names two columns {dup!r}: give each column a different name.", "header",
                       column=dup)
    n_rows = int(pf.metadata.num_rows)
    if n_rows > max_rows:
        raise CSVError(f"{What} has {n_rows} data rows; at most {max_rows} can be read: use a sample of the "
                       f"rows.", "too_many_rows")
    if n_rows == 0:
        raise CSVError(f"{What} has no rows: it needs at least one row of data.", "empty")
    check_columns_exist(names, list(columns or []) + [c for c in decl.categories if c not in (columns or [])],
                        decl, What)
    types = {n: schema.field(i).type for i, n in enumerate(names)}
    kinds = {n: _kind(t) for n, t in types.items()}
    cats = decl.categories
    for c in cats:
        if kinds[c] not in ("text", "integer"):
            hint = "; if it is numeric, give it bounds instead of categories" if kinds[c] == "float" else ""
            raise CSVError(f"{What}: column {c!r}, declared categorical, holds {_type_words(types[c])}; a "
                           f"categorical column must hold text or integers{hint}.", "text_column", column=c)
    numeric_kind = ("integer", "float")
    text_cols: list[str] = []
    if columns is None:
        chosen = [n for n in names if n in cats or kinds[n] in numeric_kind]
        text_cols = [n for n in names if n not in cats and kinds[n] not in numeric_kind]
        if not chosen:
            raise CSVError(f"{What} has no numeric column: its {plural(len(names), 'column')} hold "
                           f"{', '.join(sorted({_type_words(t) for t in types.values()}))}.", "no_numeric_column")
    else:
        for c in columns:
            if c not in cats and kinds[c] not in numeric_kind:
                raise CSVError(f"{What}: column {c!r} holds {_type_words(types[c])}, not numbers; choose columns "
                               f"that hold numbers, or declare its categories to read it as a categorical column.",
                               "text_column", column=c)
        chosen = list(columns) + [c for c in cats if c not in columns]
    if len(chosen) > max_cols:
        what = "numeric columns" if not cats else "columns to read"
        raise CSVError(f"{What} has {len(chosen)} {what}; at most {max_cols} can be read at once: choose the "
                       f"columns to use.", "too_many_columns")
    numeric = [c for c in chosen if c not in cats]
    data = pf.read(columns=chosen)
    X = np.empty((n_rows, len(numeric)))
    for i, c in enumerate(numeric):
        X[:, i] = pc.cast(data.column(c), pa.float64(), safe=False).to_numpy(zero_copy_only=False)  # rounded, as CSV
    matchers = [ColumnMatcher(c, labels, decl.other[c][0] if c in decl.other else None, PARQUET_MISSING_TOKENS)
                for c, labels in cats.items()]
    C = np.empty((n_rows, len(matchers)), dtype=np.int64)
    for t, m in enumerate(matchers):
        col = data.column(m.column)
        text = pc.cast(col, pa.string()).to_numpy(zero_copy_only=False)
        C[:, t] = m.codes(pd.Series(text, dtype="string").str.strip(SPACE), 0)
    del data
    index, bad = np.arange(n_rows), BadRows()
    if drop_bad_rows:
        X, C, index, bad = drop_bad(X, numeric, C, [m.column for m in matchers], chosen, {}, What,
                                    lambda r: r + 1, "data row")
    else:
        refuse_undeclared(matchers, What, lambda r: f"data row {r + 1}", lambda r: r + 1)
    keep, n_missing, dropped = finite_rows(X, numeric, C, [m.column for m in matchers], chosen, missing, What,
                                           lambda r: int(index[r]) + 1, "data row",
                                           "a null, or an empty text in a categorical column")
    frame = build_frame(X, numeric, C, matchers, chosen, keep)
    notes = read_notes(frame.shape[0], numeric, [], [], n_missing, dropped, matchers, "data row")
    if text_cols:
        notes.insert(1, Note(f"Left out {plural(len(text_cols), 'column')} holding text or values that are not "
                             f"numbers: {names_text(text_cols)}.", "text"))
    if bad.count:
        notes.append(bad.note("data row"))
    return Table(frame=frame, numeric=tuple(numeric), text_columns=tuple(text_cols), empty_columns=(),
                 dropped_rows=n_missing, dropped_row_numbers=dropped, dialect={"format": "parquet"},
                 notes=tuple(notes), categorical=tuple(m.column for m in matchers), categories=cats,
                 bad_rows=bad.count, bad_cells=bad.where)
