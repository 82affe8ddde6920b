"""An uploaded CSV file and what its owner declares for it (no Streamlit here).

The file is read by the library's reader (:func:`dpsynth_core.tabular.read_table`: separator and decimal
comma detected, bad cells reported by row and column, missing values refused or dropped on request) under
the dashboard's caps; before anything is declared, in its text-preview mode (the columns holding text read
as text, for the owner's eyes). The owner then declares, in an :class:`UploadForm`, the columns to use, the
PUBLIC bounds of the numeric ones and the categories of the text ones; :meth:`UploadForm.use` builds the
public domain from what was typed and reads the file again with it (categorical columns matched against
their declared categories by the reader, a value outside them refused with its row, or sent to the column's
``other`` category). Nothing here derives bounds or categories from the private data, except on the owner's
explicit "NOT private" request, which the domain then carries (``provenance="data"``: no release of it is
DP). The file stays in memory (never written to disk or logged).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from dpsynth_core.clamping import Clamping, clamping
from dpsynth_core.dataset import Dataset
from dpsynth_core.domain import Domain
from dpsynth_core.tabular import MAX_BYTES, Table, read_preview, read_table
from dpsynth_core.validation import check_float, plural

__all__ = ["MAX_UPLOAD_BYTES", "MAX_UPLOAD_ROWS", "MAX_UPLOAD_COLUMNS", "MAX_UPLOAD_CATEGORIES", "SMALL_TABLE",
           "read_upload", "parse_categories", "small_table_note", "UploadForm", "Upload", "form_values"]

#: Upload caps: a browser demo, not a data warehouse (the command line reads larger files).
MAX_UPLOAD_ROWS = 200_000
#: The largest file read (the library's byte cap; the browser refuses larger ones, .streamlit/config.toml), and
#: the largest the Data page keeps in the session's memory so that the work on it survives a visit to another page.
MAX_UPLOAD_BYTES = MAX_BYTES
MAX_UPLOAD_COLUMNS = 64
#: Most categories one column of an upload may have (typed, or read off the file for exploration).
MAX_UPLOAD_CATEGORIES = 1_000
#: Below this many rows the Data page cautions that a private release is mostly noise.
SMALL_TABLE = 50


def read_upload(data: bytes, filename: str, *, missing: str = "error", exclude: Sequence[str] = (),
                keep_text: bool = False, domain: Domain | None = None, drop_bad_rows: bool = False) -> Table:
    """Read an uploaded CSV (bytes) with the library's rules and the dashboard's caps: its numeric columns
    (``exclude`` names columns the user chose to leave out, never read nor checked), with ``keep_text`` its
    text columns as text too (the reader's text-preview mode, :func:`~dpsynth_core.tabular.read_preview`), or
    with ``domain`` the columns of a declared domain (categorical ones matched against their categories).
    ``drop_bad_rows`` drops the rows holding a bad cell (not a number, infinite, an undeclared category) instead
    of refusing the file; the table's notes say how many and where (the owner's eyes only)."""
    if not isinstance(data, (bytes, bytearray)):
        raise TypeError(f"The uploaded file {filename!r} must arrive as bytes. Got {type(data).__name__}.")
    caps = {"max_rows": MAX_UPLOAD_ROWS, "max_cols": MAX_UPLOAD_COLUMNS, "what": f"the uploaded file {filename!r}",
            "drop_bad_rows": bool(drop_bad_rows)}
    if keep_text:
        return read_preview(bytes(data), missing=missing, exclude=exclude, **caps)
    return read_table(bytes(data), missing=missing, exclude=None if domain is not None else exclude, domain=domain,
                      **caps)


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


@dataclass(frozen=True)
class Upload:
    """A table made from an upload (:meth:`UploadForm.use`): the ``dataset``; the rows the typed bounds clamp
    (``clamping``, the library's one count and decision, :func:`dpsynth_core.clamping.clamping`: a warning
    naming the share, the release goes ahead); how many rows were dropped for a missing value in a column used
    (``dropped``) and for a bad cell (``bad_rows``, with the reader's ``bad_note`` saying where). Every count is
    an owner view: computed from the data, shown to the owner, never exported."""

    dataset: Dataset
    clamping: Clamping
    dropped: int
    bad_rows: int = 0
    bad_note: str | None = None


@dataclass(frozen=True)
class UploadForm:
    """What the owner chose and typed for the uploaded file ``filename``: everything "Use this data" needs.

    ``columns`` are the columns used, in the file's order; those among ``text_columns`` (the file's columns
    holding text) are categorical, the others numeric. ``lower``/``upper`` map a numeric column to its typed
    bound (None: not typed yet), ``categories`` a categorical column to the text typed (:func:`parse_categories`),
    ``other`` to an optional category receiving every value outside the list. ``bounds_from_data`` and
    ``categories_from_data`` take the file's own range and values instead (NOT private: exploration only).
    ``drop_missing`` drops rows with a missing value instead of refusing them, ``drop_bad_rows`` rows with a bad
    cell (the reader's option); ``excluded`` are the columns left out of the reading. ``integers`` are the
    numeric columns declared to hold whole numbers (every release rounds them: ``Domain(integers=...)``);
    ``weights`` the categorical columns' weights when a domain file gave them (1 otherwise).
    """

    filename: str
    columns: tuple[str, ...] = ()
    text_columns: tuple[str, ...] = ()
    lower: Mapping[str, Any] = field(default_factory=dict)
    upper: Mapping[str, Any] = field(default_factory=dict)
    bounds_from_data: bool = False
    categories: Mapping[str, str] = field(default_factory=dict)
    other: Mapping[str, str] = field(default_factory=dict)
    categories_from_data: bool = False
    drop_missing: bool = False
    excluded: tuple[str, ...] = ()
    drop_bad_rows: bool = False
    integers: tuple[str, ...] = ()
    weights: Mapping[str, float] = field(default_factory=dict)

    @property
    def numeric(self) -> list[str]:
        return [c for c in self.columns if c not in self.text_columns]

    @property
    def categorical(self) -> list[str]:
        return [c for c in self.columns if c in self.text_columns]

    @property
    def missing(self) -> str:
        """The reader's ``missing``: "drop" or "error"."""
        return "drop" if self.drop_missing else "error"

    @property
    def not_private(self) -> bool:
        """True when the bounds or the categories come from the file itself: no release of it is DP."""
        return self.bounds_from_data or (self.categories_from_data and bool(self.categorical))

    @property
    def name(self) -> str:
        return self.filename.rsplit(".", 1)[0] or "upload"

    def domain(self, data: bytes, preview: Table) -> Domain:
        """The public domain declared: refused, with the column to fix, when a column is missing, a bound is
        missing or reversed, or a category list is empty or too long."""
        self._check_columns(preview)
        numeric, categorical = self.numeric, self.categorical
        seen = None
        if self.bounds_from_data or (self.categories_from_data and categorical):
            # the file's own range and values, over the rows a release of these columns keeps (NOT private)
            others = [c for c in preview.numeric if c not in numeric]
            seen = read_upload(data, self.filename, missing=self.missing, exclude=list(self.excluded) + others,
                               keep_text=True, drop_bad_rows=self.drop_bad_rows)
        lo, hi = self._bounds(seen)
        declared = {c: self._labels(c, seen) for c in categorical}
        other = {c: v.strip() for c, v in self.other.items()
                 if c in declared and isinstance(v, str) and v.strip() and not self.categories_from_data}
        return Domain(lo, hi, names=tuple(self.columns), categories=declared, other=other,
                      weights={c: w for c, w in self.weights.items() if c in declared},
                      integers=tuple(c for c in numeric if c in self.integers),
                      provenance="data" if self.not_private else "declared")

    def use(self, data: bytes, preview: Table) -> Upload:
        """The table the owner declared, read again with its domain, and the library's count of the rows its
        bounds clamp (:func:`~dpsynth_core.clamping.clamping`): bounds that clamp most rows get the library's
        warning, never a refusal (the bounds are the owner's public choice; docs/privacy-model.md)."""
        dom = self.domain(data, preview)
        table = read_upload(data, self.filename, missing=self.missing, domain=dom, drop_bad_rows=self.drop_bad_rows)
        ds = Dataset.from_frame(table.frame, dom, self.name, self._description(dom))
        bad_note = next((str(n) for n in table.notes if n.topic == "bad_rows"), None)
        return Upload(ds, clamping(ds.X, dom), table.dropped_rows, int(table.bad_rows or 0), bad_note)

    def _check_columns(self, preview: Table) -> None:
        if not self.columns:
            raise ValueError("Choose at least one column.")
        if len(self.columns) > MAX_UPLOAD_COLUMNS:
            raise ValueError(f"Choose at most {MAX_UPLOAD_COLUMNS} columns (you chose {len(self.columns)}).")
        known = set(preview.numeric) | set(preview.text_columns)
        unknown = [c for c in self.columns if c not in known]
        if unknown:
            raise ValueError(f"The uploaded file has no column {unknown[0]!r}.")
        if not self.numeric:
            raise ValueError("Choose at least one column of numbers as well: the mechanisms need a numeric column "
                             "besides the categorical ones.")

    def _bounds(self, seen: Table | None) -> tuple[list[float], list[float]]:
        """The typed bounds of the numeric columns (or, asked for, the file's own range: a constant column
        still gets a box of width 1)."""
        if self.bounds_from_data and seen is not None:
            frame = seen.frame.loc[:, self.numeric]
            lo, hi = frame.min(axis=0), frame.max(axis=0)
            return [float(v) for v in lo], [float(b if b > a else a + 1.0) for a, b in zip(lo, hi, strict=True)]
        for c in self.numeric:
            if self.lower.get(c) is None or self.upper.get(c) is None:
                raise ValueError(f"Type the lower and the upper bound of {c!r}: the range its values can take in "
                                 "principle (for example an age in [0, 120]), not the range of this file.")
        lo = [check_float(self.lower[c], f"lower bound of {c!r}", "the Data page") for c in self.numeric]
        hi = [check_float(self.upper[c], f"upper bound of {c!r}", "the Data page") for c in self.numeric]
        bad = [c for c, a, b in zip(self.numeric, lo, hi, strict=True) if not a < b]
        if bad:
            raise ValueError(f"The lower bound of {bad[0]!r} must be below its upper bound: change one of them.")
        return lo, hi

    def _labels(self, column: str, seen: Table | None) -> list[str]:
        """The categories of a categorical column: typed, or (asked for) the values the file holds."""
        if self.categories_from_data and seen is not None:
            labels = sorted(set(seen.preview[column].dropna()))
            if len(labels) > MAX_UPLOAD_CATEGORIES:
                raise ValueError(f"Column {column!r} holds {len(labels):,} different values: too many for a "
                                 f"categorical column (at most {MAX_UPLOAD_CATEGORIES:,}). Leave it out.")
            return labels
        labels = parse_categories(self.categories.get(column))
        if not labels:
            raise ValueError(f"Type the categories of {column!r}: every value it can take in principle, one per line "
                             "or separated by | (for example F|M), not the values of this file.")
        if len(labels) > MAX_UPLOAD_CATEGORIES:
            raise ValueError(f"Column {column!r} has {len(labels):,} categories: at most {MAX_UPLOAD_CATEGORIES:,} "
                             "can be used here.")
        return labels

    def _description(self, dom: Domain) -> str:
        notes = []
        if self.bounds_from_data:
            notes.append("Bounds taken from the data: NOT private (exploration only).")
        if self.categories_from_data and self.categorical:
            notes.append("Categories taken from the data: NOT private (exploration only).")
        elif self.categorical:
            notes.append("Categories declared: " + "; ".join(f"{c} ∈ {{{', '.join(dom.categories[c])}}}"
                                                              for c in self.categorical) + ".")
        return (f"Uploaded file {self.filename!r}: columns {', '.join(self.columns)}."
                + "".join(" " + n for n in notes))


def form_values(dom: Domain, filename: str, order: Sequence[str], text_columns: Sequence[str]) -> dict[str, Any]:
    """What the upload form holds when it declares ``dom`` for the file ``filename`` (its columns ``order``, those
    holding text ``text_columns``): {widget key: value} for the columns to use, the bounds, the categories (one
    per line), the 'other' categories and the whole-number columns, and the weights (no box: carried as they
    are). Refused, with what to change, when the domain does not fit the file or was read off data (then it
    is not public, and the form would declare it as if it were)."""
    if not dom.declared:
        raise ValueError("This domain file says its bounds or categories were read off the data, so they are not "
                         "public: type public bounds and categories instead.")
    missing = [c for c in dom.names if c not in order]
    if missing:
        raise ValueError(f"The domain file names {plural(len(missing), 'column')} that the file {filename!r} does "
                         f"not have ({', '.join(repr(c) for c in missing)}): use the domain file of this table, or "
                         "rename the columns.")
    texts = set(text_columns)
    wrong = [c for c in dom.numeric_names if c in texts]
    if wrong:
        raise ValueError(f"The domain file gives bounds to {wrong[0]!r}, which holds text in the file {filename!r}: "
                         "declare its categories instead.")
    coded = [c for c in dom.categories if c not in texts]
    if coded:
        raise ValueError(f"The domain file declares categories for {coded[0]!r}, which holds numbers in the file "
                         f"{filename!r}: the upload form reads such a column as numeric, with bounds.")
    values: dict[str, Any] = {f"data_cols_{filename}": [c for c in order if c in dom.names],
                              f"data_from_data_{filename}": False, f"data_cats_from_data_{filename}": False,
                              f"data_int_{filename}": [c for c in dom.numeric_names if c in dom.integers],
                              "_weights": dict(zip(dom.categories, dom.weights, strict=True))}
    for c, lo, hi in zip(dom.numeric_names, dom.lower, dom.upper, strict=True):
        values[f"data_lo_{c}"], values[f"data_hi_{c}"] = float(lo), float(hi)
    for c, labels in dom.categories.items():
        values[f"data_cat_{c}"] = "\n".join(labels)
        values[f"data_other_{c}"] = dom.other[c][0] if c in dom.other else ""
    return values
