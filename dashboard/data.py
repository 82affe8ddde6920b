"""Datasets as the dashboard holds them (no Streamlit here).

A dataset is the library's :class:`~dpsynth_core.datasets.Dataset` (points, PUBLIC domain, name,
description, labels) plus a :class:`Source` saying how to rebuild it from a shareable URL. Uploads
are read with the library's CSV rules (:func:`dpsynth_core.tabular.read_table`: separator and
decimal comma detected, bad cells reported by row and column, text columns named, missing values
refused or dropped on request) under the dashboard's caps, and get the bounds the user TYPED. A
text column can be used as a categorical column with the categories the user TYPED
(:func:`upload_dataset`); its cells are read by :func:`read_upload_text`, the one place that reads
text columns until the library's reader does. Nothing here derives bounds, scales, grids or
categories from the private data, except on the user's explicit "NOT private" request, which the
domain then carries (``provenance="data"``: no release of it is DP). An uploaded file stays in memory
(never written to disk or logged).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from dpsynth_core import datasets as lib
from dpsynth_core.datasets import Dataset
from dpsynth_core.domain import Domain
from dpsynth_core.tabular import MAX_BYTES, MISSING_TOKENS, CSVError, Table, read_table
from dpsynth_core.validation import check_float, plural

__all__ = ["Source", "MAX_UPLOAD_BYTES", "MAX_UPLOAD_ROWS", "MAX_UPLOAD_COLUMNS", "MAX_UPLOAD_CATEGORIES", "default", "generate", "real",
           "real_names", "mixed", "mixed_names", "by_name", "read_upload", "read_upload_text", "parse_categories",
           "upload_dataset", "MAX_CLAMPED_SHARE", "SMALL_TABLE", "small_table_note"]

#: Upload caps: a browser demo, not a data warehouse (the command line reads larger files).
MAX_UPLOAD_ROWS = 200_000
#: The largest file read (the library's byte cap; the browser refuses larger ones, .streamlit/config.toml), and
#: the largest the Data page keeps in the session's memory so that the work on it survives a visit to another page.
MAX_UPLOAD_BYTES = MAX_BYTES
MAX_UPLOAD_COLUMNS = 64
#: Most categories one column of an upload may have (typed, or read off the file for exploration).
MAX_UPLOAD_CATEGORIES = 1_000


@dataclass(frozen=True)
class Source:
    """Where a dataset came from: ``kind`` in {"default", "generator", "real", "mixed", "upload"}."""

    kind: str
    name: str
    params: Mapping[str, Any] = field(default_factory=dict)
    #: True when the bounds or categories were read off the data ("use the data's range", "use the values
    #: in this file"): then no release of this dataset is differentially private (the bounds leak the
    #: extremes, the categories the rare values). The dataset's domain says so too (``provenance="data"``).
    bounds_from_data: bool = False

    @property
    def shareable(self) -> bool:
        """Whether a URL can name it (an upload cannot: the file stays with its owner)."""
        return self.kind in ("default", "real", "mixed") or (self.kind == "generator" and not self.params)


def default() -> tuple[Dataset, Source]:
    """The embedded default: two Gaussian clusters in the unit square, n = 5000."""
    ds = lib.default_dataset()
    return ds, Source("default", ds.name)


def generate(name: str, params: Mapping[str, Any]) -> Dataset:
    """Generator ``name`` of :data:`dpsynth_core.datasets.GENERATORS` with ``params`` (validated by it)."""
    if name not in lib.GENERATORS:
        raise ValueError(f"There is no data generator called {name!r}; choose one of {', '.join(lib.GENERATORS)}.")
    return lib.GENERATORS[name][0](**dict(params))


def real_names() -> list[str]:
    return list(lib.REAL_DATASETS)


def real(name: str) -> Dataset:
    """A bundled real dataset with its documented public bounds."""
    if name not in lib.REAL_DATASETS:
        raise ValueError(f"There is no bundled dataset called {name!r}; choose one of {', '.join(real_names())}.")
    return lib.REAL_DATASETS[name]()


def mixed_names() -> list[str]:
    """The bundled tables with categorical columns."""
    return list(lib.MIXED_DATASETS)


def mixed(name: str) -> Dataset:
    """A bundled table with categorical columns, with its declared public domain."""
    if name not in lib.MIXED_DATASETS:
        raise ValueError(f"There is no bundled mixed table called {name!r}; choose one of {', '.join(mixed_names())}.")
    return lib.MIXED_DATASETS[name]()


def by_name(name: str) -> tuple[Dataset, Source]:
    """The dataset a URL names: a bundled dataset (real or mixed), a generator with its defaults, or the default."""
    if name in lib.REAL_DATASETS:
        return real(name), Source("real", name)
    if name in lib.MIXED_DATASETS:
        return mixed(name), Source("mixed", name)
    if name in lib.GENERATORS:
        return generate(name, {p.name: p.default for p in lib.GENERATORS[name][1]}), Source("generator", name)
    ds, src = default()
    if name == ds.name:
        return ds, src
    raise ValueError(f"The link names a dataset {name!r} that does not exist: use a generator "
                     f"({', '.join(lib.GENERATORS)}), a bundled dataset ({', '.join(real_names() + mixed_names())}) or "
                     f"{ds.name!r}.")


def read_upload(data: bytes, filename: str, *, missing: str = "error", exclude: Sequence[str] = ()) -> Table:
    """Read an uploaded CSV (bytes) with the library's rules and the dashboard's caps; ``exclude`` names
    columns the user chose to leave out (never read nor checked: ``read_table``'s ``exclude``)."""
    if not isinstance(data, (bytes, bytearray)):
        raise TypeError(f"The uploaded file {filename!r} must arrive as bytes. Got {type(data).__name__}.")
    return read_table(bytes(data), missing=missing, exclude=exclude, max_rows=MAX_UPLOAD_ROWS,
                      max_cols=MAX_UPLOAD_COLUMNS, what=f"the uploaded file {filename!r}")


#: Share of rows outside the typed bounds above which an upload is refused: such bounds are a typo or
#: the wrong unit, and clamping most of the data would silently replace it by the box's edges.
MAX_CLAMPED_SHARE = 0.5


#: Below this many rows the Data page cautions that a private release is mostly noise.
SMALL_TABLE = 50


def small_table_note(n: int) -> str | None:
    """A caution for a table of fewer than :data:`SMALL_TABLE` rows (``None`` otherwise): every mechanism
    runs, but one person is a large share of the data, so the noise that hides them dominates."""
    if n >= SMALL_TABLE:
        return None
    share = 100.0 / n
    these = "this one row" if n == 1 else f"these {plural(n, 'row')}"
    return (f"Only {plural(n, 'row')}: the mechanisms run, but one person is {share:.0f} % of the data, so the noise "
            "that hides them dominates any release" + ("; Low-dimensional data needs at least 2 rows" if n < 2 else "")
            + f", and the Rates page's larger n are drawn with replacement from {these}. A table of a few hundred "
            "rows or more shows what differential privacy can keep.")


def parse_categories(text: str | None) -> list[str]:
    """The categories a user typed or pasted: one per line, or separated by ``|`` (``F|M``); surrounding
    spaces and empty entries are dropped (duplicates are left for the domain to refuse by name)."""
    if text is None:
        return []
    if not isinstance(text, str):
        raise TypeError(f"The categories must be typed as text. Got {type(text).__name__}.")
    parts = text.splitlines() if "\n" in text.strip() else text.split("|")
    return [p.strip() for p in parts if p.strip()]


_STRIP = " \t\r\n\v\f\u00a0\u2007\u202f\u3000\ufeff"  # what the CSV reader strips around a cell
_MISSING = frozenset(MISSING_TOKENS)


def _is_missing(cell: str) -> bool:
    return cell.strip(_STRIP).lower() in _MISSING


def read_upload_text(data: bytes, table: Table, columns: Sequence[str], *, missing: str = "error") -> pd.DataFrame:
    """The numeric columns :func:`read_upload` read (``table``) with the text ``columns`` of the same file:
    one table, its columns in the file's order, its index the spreadsheet row numbers (header = row 1),
    so that an error names the row the user sees.

    THE one place the dashboard reads text columns: when :mod:`dpsynth_core.tabular` reads declared text
    columns as categorical (branch ``io``), this function becomes a call to it. Until then it splits the
    bytes with the separator the library detected (``table.dialect``), as the library's reader does
    (Python's ``csv`` module, double quotes, Excel's ``sep=`` first line, blank lines at the end
    ignored), and lines up its rows with the table: the rows the reader dropped for a missing number
    (``missing="drop"``) are dropped here too, checked against the reader's count. Text cells are
    stripped; a missing cell (empty, ``NA``, ...) is a missing value: with ``missing="drop"`` its row is
    dropped too, with ``"error"`` it is refused as the reader refuses a missing number (a :class:`CSVError`
    of kind ``"missing"`` with the row, the column and the count), with ``"keep"`` (a preview) it stays
    missing (None). The file was bounded (size, rows,
    columns) by :func:`read_upload` before this runs.
    """
    if not isinstance(data, (bytes, bytearray)):
        raise TypeError(f"The uploaded file must arrive as bytes. Got {type(data).__name__}.")
    if missing not in ("error", "drop", "keep"):
        raise ValueError(f"missing must be 'error', 'drop' or 'keep'. Got {missing!r}.")
    text = bytes(data).decode(table.dialect.get("encoding", "utf-8"), errors="strict")
    if text.startswith("\ufeff"):
        text = text[1:]
    if text.startswith("sep=") and "\n" in text[:8]:
        text = text[text.index("\n") + 1:]
    records = csv.reader(io.StringIO(text, newline=""), delimiter=table.dialect["delimiter"], quotechar='"',
                         doublequote=True, strict=True)
    header = [c.strip(_STRIP) for c in next(records, [])]
    wanted = list(dict.fromkeys(columns))
    unknown = [c for c in wanted if c not in header]
    if unknown:
        raise ValueError(f"The uploaded file has no column {unknown[0]!r}.")
    text_idx = [header.index(c) for c in wanted]
    num_idx = [header.index(c) for c in table.numeric] if table.dropped_rows else []
    cells: list[list[str]] = []
    gone: list[bool] = []  # a missing number: the reader dropped the row (missing="drop")
    blank: list[bool] = []
    for rec in records:
        cells.append([rec[j] if j < len(rec) else "" for j in text_idx])
        gone.append(any(j >= len(rec) or _is_missing(rec[j]) for j in num_idx))
        blank.append(not any(c.strip(_STRIP) for c in rec))
    while blank and blank[-1]:  # blank lines at the end: the reader ignores them
        cells.pop()
        gone.pop()
        blank.pop()
    rows = np.arange(2, len(cells) + 2)
    keep = ~np.asarray(gone, dtype=bool)
    if int((~keep).sum()) != table.dropped_rows or int(keep.sum()) != len(table.frame):
        raise ValueError("The text columns of the uploaded file could not be lined up with its numbers (a row "
                         "the reader counted differently): save the file again as 'CSV UTF-8' and upload it again.")
    frame = table.frame.copy()
    frame.index = rows[keep]
    for name, j in zip(wanted, range(len(wanted)), strict=True):
        values = [c[j].strip(_STRIP) for c, k in zip(cells, keep, strict=True) if k]
        frame[name] = pd.Series([None if v.lower() in _MISSING else v for v in values], index=frame.index,
                                dtype="object")
    holes = frame[wanted].isna().any(axis=1) if wanted else pd.Series(False, index=frame.index)
    if holes.any() and missing == "error":
        first = int(holes.idxmax())
        col = next(c for c in wanted if pd.isna(frame.at[first, c]))
        count = int(holes.sum())
        raise CSVError(f"The uploaded file has a missing value in row {first}, column {col!r} ({count} row"
                       f"{'s' if count != 1 else ''} with missing values in the text columns chosen): fill them "
                       "in, or drop those rows.", "missing", row=first, column=col, count=count)
    frame = frame[[c for c in header if c in frame.columns]]  # the file's order
    return frame if missing == "keep" else frame[~holes]


def upload_dataset(frame, columns: Sequence[str], lower: Sequence[Any], upper: Sequence[Any],
                   filename: str = "upload.csv", *, from_data: bool = False,
                   categories: Mapping[str, Any] | None = None, categories_from_data: bool = False,
                   other: Mapping[str, str] | None = None) -> tuple[Dataset, int]:
    """The chosen columns of an uploaded frame with the public bounds (and categories) the user typed.

    ``columns`` are all the columns used, in order; ``lower``/``upper`` hold the bounds of its numeric
    columns (those not in ``categories``), in order. ``categories`` maps each column used as
    categorical to its declared categories (a list, or the text typed: :func:`parse_categories`);
    ``other`` to an optional category receiving every value outside the list. A value outside the
    declared categories (without ``other``) is refused with its row, column and value.

    ``from_data=True`` takes the numeric columns' own minimum and maximum, ``categories_from_data=True``
    the categorical columns' own values (exploration only): the domain then says ``provenance="data"``
    and no release of the dataset is differentially private. Refused, with the column to fix, when a
    bound is missing or reversed, a category list is empty, or more than :data:`MAX_CLAMPED_SHARE` of
    the rows fall outside the bounds. Returns the dataset and the number of rows outside the bounds
    (every mechanism clamps them; an owner-side count, shown to the owner, never exported).
    """
    if len(columns) == 0:
        raise ValueError("Choose at least one column.")
    if len(columns) > MAX_UPLOAD_COLUMNS:
        raise ValueError(f"Choose at most {MAX_UPLOAD_COLUMNS} columns (you chose {len(columns)}).")
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(f"The uploaded file has no column {missing[0]!r}.")
    categories = dict(categories or {})
    other = {k: v.strip() for k, v in (other or {}).items() if isinstance(v, str) and v.strip()}
    cat_cols = [c for c in columns if c in categories]
    numeric = [c for c in columns if c not in categories]
    if not numeric:
        raise ValueError("Choose at least one column of numbers as well: the mechanisms need a numeric column "
                         "besides the categorical ones.")
    X = frame.loc[:, numeric].to_numpy(dtype=float)
    if from_data:
        lo, hi = X.min(axis=0), X.max(axis=0)
        hi = np.where(hi > lo, hi, lo + 1.0)  # a constant column still gets a box
        lower, upper = lo.tolist(), hi.tolist()
    if len(lower) != len(numeric) or len(upper) != len(numeric):
        raise ValueError(f"Type a lower and an upper bound for each of the {len(numeric)} numeric columns.")
    for c, a, b in zip(numeric, lower, upper, strict=True):
        if a is None or b is None:
            raise ValueError(f"Type the lower and the upper bound of {c!r}: the range its values can take in "
                             "principle (for example an age in [0, 120]), not the range of this file.")
    lo = [check_float(v, f"lower bound of {c!r}", "the Data page") for c, v in zip(numeric, lower, strict=True)]
    hi = [check_float(v, f"upper bound of {c!r}", "the Data page") for c, v in zip(numeric, upper, strict=True)]
    bad = [c for c, a, b in zip(numeric, lo, hi, strict=True) if not a < b]
    if bad:
        raise ValueError(f"The lower bound of {bad[0]!r} must be below its upper bound: change one of them.")
    declared: dict[str, list[str]] = {}
    for c in cat_cols:
        if categories_from_data:
            values = frame[c].dropna().astype(str).str.strip()
            labels = sorted(set(values[values != ""]))
            if len(labels) > MAX_UPLOAD_CATEGORIES:
                raise ValueError(f"Column {c!r} holds {len(labels):,} different values: too many for a categorical "
                                 f"column (at most {MAX_UPLOAD_CATEGORIES:,}). Leave it out.")
        else:
            given = categories[c]
            labels = parse_categories(given) if isinstance(given, str) or given is None else [str(x) for x in given]
            if not labels:
                raise ValueError(f"Type the categories of {c!r}: every value it can take in principle, one per line "
                                 "or separated by | (for example F|M), not the values of this file.")
            if len(labels) > MAX_UPLOAD_CATEGORIES:
                raise ValueError(f"Column {c!r} has {len(labels):,} categories: at most {MAX_UPLOAD_CATEGORIES:,} "
                                 "can be used here.")
        declared[c] = labels
    provenance = "data" if (from_data or (categories_from_data and cat_cols)) else "declared"
    dom = Domain(lo, hi, names=tuple(str(c) for c in columns), categories=declared,
                 other={c: v for c, v in other.items() if c in declared and not categories_from_data},
                 provenance=provenance)
    if cat_cols:
        X = dom.read(frame.loc[:, list(columns)], name="rows", owner="the uploaded file")
    num = X[:, dom.numeric_index] if cat_cols else X
    inside = dom.contains(X)
    outside = int((~inside).sum())
    if outside > MAX_CLAMPED_SHARE * X.shape[0]:
        per_col = (num < dom.lower_array) | (num > dom.upper_array)
        worst = str(numeric[int(np.argmax(per_col.sum(axis=0)))])
        raise ValueError(f"{outside} of {X.shape[0]} rows are outside the bounds you typed (most of them in "
                         f"{worst!r}): every mechanism would move them onto the box's edge. Check the bounds and "
                         "the unit of that column.")
    name = filename.rsplit(".", 1)[0] or "upload"
    notes = []
    if from_data:
        notes.append("Bounds taken from the data: NOT private (exploration only).")
    if categories_from_data and cat_cols:
        notes.append("Categories taken from the data: NOT private (exploration only).")
    elif cat_cols:
        notes.append("Categories declared: " + "; ".join(f"{c} ∈ {{{', '.join(dom.categories[c])}}}"
                                                          for c in cat_cols) + ".")
    return Dataset(X, dom, name, f"Uploaded file {filename!r}: columns {', '.join(map(str, columns))}."
                   + "".join(" " + n for n in notes)), outside
