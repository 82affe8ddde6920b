"""Public data domains.

A :class:`Domain` is what the data owner declares *before* looking at the data: the box
``[lower_1, upper_1] x ... x [lower_k, upper_k]`` of the numeric columns and, for categorical
columns, the list of their categories. Bounds and category lists are public inputs of every
mechanism; this module offers no function that derives them from data, on purpose
(docs/privacy-model.md §1; docs/mixed-data.md). A domain that was nevertheless read off the data (a
teaching shortcut) says so in its ``provenance``, and every release on it is labelled NOT
differentially private.

Mixed rows
    A row of a mixed domain lives in :math:`[0,1]^k \times C_1 \times \\dots \times C_m` after
    :meth:`Domain.to_unit`. The metric is

    .. math:: \rho(x, y) = \\max\\Big(\\|u_x - u_y\\|_\\infty,\\ \\max_j w_j\\,[c_{x,j} \ne c_{y,j}]\\Big)

    with weight :math:`w_j = 1` (the unit cube's diameter) unless declared otherwise. Internally a
    mixed row is encoded as d = k + m floats in the domain's column order: the numeric value (or its
    unit-cube coordinate) and, for a categorical column, the category's index in its declared list.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd

from .validation import check_points, fmt_value, param_error

__all__ = ["Domain", "CategoryMap", "PROVENANCES", "MAX_CATEGORIES", "check_categories"]

_OWNER = "Domain"
#: Where a domain came from: declared by the data owner (public), or read off the private data (NOT DP).
PROVENANCES = ("declared", "data")
#: Most categories one column may declare.
MAX_CATEGORIES = 100_000


class CategoryMap(Mapping):
    """Column name -> its declared categories (a tuple of strings), in the domain's column order.

    An immutable, hashable mapping (domains are dictionary keys of the dashboard's caches)."""

    __slots__ = ("_items",)

    def __init__(self, items: Sequence[tuple[str, tuple[str, ...]]] = ()) -> None:
        self._items = tuple((str(k), tuple(v)) for k, v in items)

    def __getitem__(self, key: str) -> tuple[str, ...]:
        for k, v in self._items:
            if k == key:
                return v
        raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        return (k for k, _ in self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __hash__(self) -> int:
        return hash(self._items)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, CategoryMap):
            return self._items == other._items
        return isinstance(other, Mapping) and dict(self._items) == {k: tuple(v) for k, v in other.items()}

    def __repr__(self) -> str:
        return "{" + ", ".join(f"{k!r}: {list(v)!r}" for k, v in self._items) + "}"


def _labels(name: str, values: Any, other: str | None, owner: str = _OWNER) -> tuple[str, ...]:
    """A column's declared categories as distinct, non-empty strings (plus its "other" label)."""
    what = f"for column {name!r} a non-empty list of distinct category names (strings)"
    if isinstance(values, (str, bytes)) or not isinstance(values, (Sequence, np.ndarray, pd.Index)):
        raise param_error(owner, "categories", what, values, kind=TypeError)
    labels = []
    for v in values:
        if isinstance(v, (float, np.floating)) and not math.isfinite(v):
            raise param_error(owner, "categories", what + " (no missing values)", values)
        if isinstance(v, bool) or not isinstance(v, (str, int, np.integer)):
            raise param_error(owner, "categories", what, f"{v!r} in column {name!r}", kind=TypeError)
        label = str(v).strip()
        if not label:
            raise param_error(owner, "categories", what, f"an empty name in column {name!r}")
        labels.append(label)
    if other is not None:
        if not isinstance(other, str) or not other.strip():
            raise param_error(owner, "other", f"for column {name!r} a non-empty string", other)
        if other.strip() not in labels:
            labels.append(other.strip())
    if not labels:
        raise param_error(owner, "categories", what, f"an empty list for column {name!r}")
    if len(set(labels)) != len(labels):
        dup = next(x for x in labels if labels.count(x) > 1)
        raise param_error(owner, "categories", what, f"{dup!r} twice in column {name!r}")
    if len(labels) > MAX_CATEGORIES:
        raise param_error(owner, "categories", f"at most {MAX_CATEGORIES} categories per column",
                          f"{len(labels)} in column {name!r}")
    return tuple(labels)


def check_categories(categories: Any, other: Any = None, *, owner: str = _OWNER) -> tuple[CategoryMap, CategoryMap]:
    """Declared categories checked and normalised, as :class:`Domain` stores them: (column -> labels,
    column -> its 'other' label). For readers that match a table's text columns against declared
    categories before the numeric columns (and so the whole domain) are known; ``owner`` names the
    public function in error messages."""
    if categories is None:
        categories = {}
    if not isinstance(categories, Mapping):
        raise param_error(owner, "categories", "a mapping of column name to its list of categories",
                          categories, kind=TypeError)
    other = {} if other is None else other
    if not isinstance(other, Mapping):
        raise param_error(owner, "other", "a mapping of column name to an 'other' category", other,
                          kind=TypeError)
    unknown = [k for k in other if k not in categories]
    if unknown:
        raise param_error(owner, "other", "keys that are categorical columns", repr(unknown[0]))
    items = []
    for name, values in categories.items():
        if not isinstance(name, str) or not name:
            raise param_error(owner, "categories", "keys that are non-empty column names", name)
        label = other.get(name)
        if isinstance(label, tuple) and len(label) == 1:  # an already normalised domain (replace)
            label = label[0]
        items.append((name, _labels(name, values, label, owner)))
    other_items = [(k, ((v[0] if isinstance(v, tuple) else str(v)).strip(),)) for k, v in other.items()]
    return CategoryMap(items), CategoryMap(other_items)


@dataclass(frozen=True)
class Domain:
    """A public domain: a box for the numeric columns, declared categories for the categorical ones.

    Parameters
    ----------
    lower, upper : sequence of float, length k
        Public bounds of the numeric columns with ``lower[i] < upper[i]``, all finite.
    names : sequence of str, optional
        Column names. Either the k numeric names (the categorical columns then follow, in the order
        of ``categories``) or all k + m names in the table's order. Default ``x0, x1, ...``.
    categories : mapping of str to sequence of str, optional
        The categorical columns and their categories, declared without looking at the data: the set
        of values present in a private file is itself private (one rare value can reveal a person).
    weights : mapping of str to float, optional
        Distance between two different categories of a column (default 1, the cube's diameter).
    other : mapping of str to str, optional
        Per categorical column, a category that receives every value outside the declared list
        (added to the list when missing). Without it such a value is an error naming its row.
    provenance : {"declared", "data"}
        "data" marks a domain read off the private data (a teaching shortcut): every release on it
        is NOT differentially private, and says so in its label and every export.
    integers : sequence of str, optional
        Numeric columns whose values are whole numbers (counts, ages in years, number of children),
        declared like the bounds. Every release rounds them to whole numbers inside the bounds
        (post-processing: :meth:`round_integers`), so a count never comes out as 3.716. Each needs a
        whole number between its bounds.

    Notes
    -----
    Mechanisms work in the unit cube: :meth:`to_unit` maps
    :math:`u_i = (x_i - \\mathrm{lower}_i) / (\\mathrm{upper}_i - \\mathrm{lower}_i)` and clamps into
    ``[0, 1]``; :meth:`from_unit` is its inverse. W1 values and bounds are reported in unit-cube
    coordinates with the l_inf metric (combined with the category weights by max on mixed domains)
    unless a caller asks otherwise.
    """

    lower: tuple[float, ...]
    upper: tuple[float, ...]
    names: tuple[str, ...] = field(default=())
    categories: CategoryMap = field(default_factory=CategoryMap)
    weights: tuple[float, ...] = field(default=())
    other: CategoryMap = field(default_factory=CategoryMap)
    provenance: str = "declared"
    integers: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        lower = self._as_bounds(self.lower, "lower")
        upper = self._as_bounds(self.upper, "upper")
        if len(lower) != len(upper):
            raise ValueError(
                f"The 'upper' parameter of Domain must have the same length as 'lower' ({len(lower)}). "
                f"Got length {len(upper)}."
            )
        for i, (lo, hi) in enumerate(zip(lower, upper, strict=True)):
            if not lo < hi:
                raise ValueError(
                    f"The 'upper' parameter of Domain must be greater than 'lower' in every coordinate. "
                    f"Got lower={lo:g} >= upper={hi:g} in coordinate {i}."
                )
            if not math.isfinite(hi - lo):
                raise ValueError(
                    f"The 'upper' parameter of Domain must give a finite width upper - lower. "
                    f"Got {hi:g} - {lo:g} in coordinate {i}."
                )
        if self.provenance not in PROVENANCES:
            raise param_error(_OWNER, "provenance", "'declared' or 'data'", self.provenance)
        cats, other = self._as_categories(self.categories, self.other)
        names = self._as_names(self.names, len(lower), cats)
        weights = self._as_weights(self.weights, cats)
        object.__setattr__(self, "lower", lower)
        object.__setattr__(self, "upper", upper)
        object.__setattr__(self, "names", names)
        object.__setattr__(self, "categories", cats)
        object.__setattr__(self, "weights", weights)
        object.__setattr__(self, "other", other)
        object.__setattr__(self, "integers", self._as_integers(self.integers, names, cats, lower, upper))

    @staticmethod
    def _as_categories(categories: Any, other: Any) -> tuple[CategoryMap, CategoryMap]:
        return check_categories(categories, other)

    @staticmethod
    def _as_names(names: Any, k: int, cats: CategoryMap) -> tuple[str, ...]:
        m = len(cats)
        given = tuple(names) if names else tuple(f"x{i}" for i in range(k))
        if not all(isinstance(s, str) and s for s in given):
            raise param_error(_OWNER, "names", f"a sequence of {k} (or {k + m}) non-empty strings", names)
        if len(given) == k:
            clash = [c for c in cats if c in given]
            if clash:
                raise param_error(_OWNER, "names", "numeric column names distinct from the categorical ones",
                                  f"{clash[0]!r} in both")
            out = given + tuple(cats)
        elif m and len(given) == k + m:
            missing = [c for c in cats if c not in given]
            if missing:
                raise param_error(_OWNER, "names", f"the {k} numeric and {m} categorical column names",
                                  f"no {missing[0]!r} among {list(given)}")
            out = given
        else:
            what = f"a sequence of {k} non-empty strings" + (f" (or {k + m} with the categorical columns)" if m else "")
            raise param_error(_OWNER, "names", what, names)
        if len(set(out)) != len(out):
            raise param_error(_OWNER, "names", "a sequence of distinct strings", names)
        return out

    @staticmethod
    def _as_integers(integers: Any, names: tuple[str, ...], cats: CategoryMap, lower: tuple[float, ...],
                     upper: tuple[float, ...]) -> tuple[str, ...]:
        if integers is None:
            return ()
        if isinstance(integers, (str, bytes)) or not isinstance(integers, (Sequence, np.ndarray, pd.Index)):
            raise param_error(_OWNER, "integers", "a list of numeric column names", integers, kind=TypeError)
        numeric = [n for n in names if n not in cats]
        out = []
        for name in integers:
            if not isinstance(name, str) or name not in names:
                close = difflib.get_close_matches(str(name), numeric, n=1)
                raise param_error(_OWNER, "integers", f"names of numeric columns ({', '.join(numeric)})",
                                  f"{name!r}{f' (did you mean {close[0]!r}?)' if close else ''}")
            if name in cats:
                raise param_error(_OWNER, "integers", "names of numeric columns (a categorical column's values "
                                  "are its categories)", repr(name))
            if name in out:
                raise param_error(_OWNER, "integers", "each column named once", repr(name))
            i = numeric.index(name)
            if math.ceil(lower[i]) > math.floor(upper[i]):
                raise param_error(_OWNER, "integers", f"columns with a whole number between their bounds; {name!r} "
                                  f"is bounded by [{lower[i]:g}, {upper[i]:g}]", repr(name))
            out.append(name)
        return tuple(n for n in numeric if n in out)  # in the table's column order

    @staticmethod
    def _as_weights(weights: Any, cats: CategoryMap) -> tuple[float, ...]:
        if isinstance(weights, tuple) and len(weights) == len(cats) and all(isinstance(w, float) for w in weights):
            return weights  # already normalised (dataclasses.replace)
        weights = {} if weights is None or weights == () else weights
        if not isinstance(weights, Mapping):
            raise param_error(_OWNER, "weights", "a mapping of categorical column name to a distance", weights,
                              kind=TypeError)
        unknown = [k for k in weights if k not in cats]
        if unknown:
            raise param_error(_OWNER, "weights", "keys that are categorical columns", repr(unknown[0]))
        out = []
        for name in cats:
            w = weights.get(name, 1.0)
            try:
                w = float(w)
            except (TypeError, ValueError):
                raise param_error(_OWNER, "weights", f"a positive finite float for {name!r}", w,
                                  kind=TypeError) from None
            if not (math.isfinite(w) and w > 0):
                raise param_error(_OWNER, "weights", f"a positive finite float for {name!r}", w)
            out.append(w)
        return tuple(out)

    @staticmethod
    def _as_bounds(values: Any, name: str) -> tuple[float, ...]:
        if isinstance(values, (str, bytes)):
            raise param_error(_OWNER, name, "a sequence of finite floats", values, kind=TypeError)
        if np.isscalar(values):
            values = [values]
        try:
            arr = np.asarray(values, dtype=float).ravel()
        except (TypeError, ValueError) as exc:
            raise param_error(_OWNER, name, "a sequence of finite floats", values, kind=TypeError) from exc
        if arr.size == 0:
            raise param_error(_OWNER, name, "a non-empty sequence of finite floats", values)
        if not np.isfinite(arr).all():
            raise param_error(_OWNER, name, "a sequence of finite floats", values)
        return tuple(float(v) for v in arr)

    # ------------------------------------------------------------------ constructors
    @classmethod
    def unit(cls, d: int, names: Sequence[str] | None = None) -> Domain:
        """The unit cube ``[0, 1]^d``."""
        if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d < 1:
            raise param_error("Domain.unit", "d", "an int in [1, inf)", d, kind=TypeError if not isinstance(d, (int, np.integer)) else ValueError)
        return cls(lower=[0.0] * int(d), upper=[1.0] * int(d), names=tuple(names) if names else ())

    @classmethod
    def parse(cls, text: str, names: Sequence[str] | None = None) -> Domain:
        """Parse ``"lo:hi,lo:hi,..."`` (the CLI's ``--bounds``). A single ``lo:hi`` with ``names``
        of length d is repeated d times."""
        if not isinstance(text, str) or not text.strip():
            raise param_error("Domain.parse", "bounds", "a string 'lo:hi,lo:hi,...'", text, kind=TypeError if not isinstance(text, str) else ValueError)
        lows, highs = [], []
        for part in text.split(","):
            bits = part.split(":")
            if len(bits) != 2:
                raise param_error("Domain.parse", "bounds", "a string 'lo:hi,lo:hi,...'", text)
            try:
                lows.append(float(bits[0]))
                highs.append(float(bits[1]))
            except ValueError as exc:
                raise param_error("Domain.parse", "bounds", "a string 'lo:hi,lo:hi,...' of numbers", text) from exc
        if names is not None and len(lows) == 1 and len(names) > 1:
            lows, highs = lows * len(names), highs * len(names)
        return cls(lower=lows, upper=highs, names=tuple(names) if names else ())

    @staticmethod
    def parse_categories(text: str) -> dict[str, list[str]]:
        """Parse ``"sex=F|M;region=north|south|east"`` (the CLI's ``--categories``) into a mapping for
        ``Domain(categories=...)``. Names and categories are stripped of surrounding spaces; ``|``
        separates the categories of a column, ``;`` the columns."""
        owner, what = "Domain.parse_categories", "a string 'column=a|b|c;column=x|y'"
        if not isinstance(text, str) or not text.strip():
            raise param_error(owner, "categories", what, text, kind=TypeError if not isinstance(text, str) else ValueError)
        out: dict[str, list[str]] = {}
        for part in text.split(";"):
            if not part.strip():
                continue
            name, eq, rest = part.partition("=")
            if not eq or not name.strip():
                raise param_error(owner, "categories", what, part.strip())
            if name.strip() in out:
                raise param_error(owner, "categories", what + " naming each column once", name.strip())
            out[name.strip()] = [c.strip() for c in rest.split("|")]
        if not out:
            raise param_error(owner, "categories", what, text)
        return out

    @classmethod
    def from_dict(cls, spec: Mapping[str, Any]) -> Domain:
        """The domain of :meth:`to_dict` (a JSON domain file: ``lower``, ``upper``, ``names`` and, for
        categorical columns, ``categories``, optionally ``weights``, ``other`` and ``provenance``)."""
        if not isinstance(spec, Mapping):
            raise param_error("Domain.from_dict", "spec", "a mapping (a JSON object)", spec, kind=TypeError)
        known = {"lower", "upper", "names", "numeric_names", "categories", "weights", "other", "provenance",
                 "integers"}
        unknown = sorted(set(spec) - known)
        if unknown:
            raise param_error("Domain.from_dict", "spec", f"keys among {sorted(known)}", repr(unknown[0]))
        for key in ("lower", "upper"):
            if key not in spec:
                raise param_error("Domain.from_dict", "spec", f"a {key!r} list of bounds", "none")
        dom = cls(lower=spec["lower"], upper=spec["upper"], names=tuple(spec.get("names") or ()),
                  categories=spec.get("categories") or {}, weights=spec.get("weights") or {},
                  other=spec.get("other") or {}, provenance=spec.get("provenance", "declared"),
                  integers=tuple(spec.get("integers") or ()))
        if "numeric_names" in spec and list(spec["numeric_names"] or ()) != list(dom.numeric_names):
            raise param_error("Domain.from_dict", "spec", f"'numeric_names' {list(dom.numeric_names)} (the columns "
                              "'lower' and 'upper' bound, in order)", spec["numeric_names"])
        return dom

    # ------------------------------------------------------------------ columns
    @property
    def d(self) -> int:
        """The number of columns (numeric and categorical)."""
        return len(self.names)

    @property
    def k(self) -> int:
        """The number of numeric columns."""
        return len(self.lower)

    @property
    def is_mixed(self) -> bool:
        """True when the domain has categorical columns."""
        return len(self.categories) > 0

    @property
    def declared(self) -> bool:
        """False when the domain was read off the private data (releases on it are not DP)."""
        return self.provenance == "declared"

    @property
    def numeric_names(self) -> tuple[str, ...]:
        return tuple(n for n in self.names if n not in self.categories)

    @property
    def integer_mask(self) -> np.ndarray:
        """Which numeric columns are declared whole numbers (a bool array over :attr:`numeric_names`)."""
        return np.array([n in self.integers for n in self.numeric_names], dtype=bool)

    def round_integers(self, X: Any) -> Any:
        """``X`` in the domain's units with its declared integer columns rounded to whole numbers inside
        the bounds (post-processing of a release; no other column changes). ``X`` is an array (n, k) of
        the numeric columns, an encoded array (n, d), or a DataFrame with the domain's columns; the
        result has the same type (a copy when anything is rounded)."""
        if not self.integers:
            return X
        lo = np.ceil(self.lower_array[self.integer_mask])
        hi = np.floor(self.upper_array[self.integer_mask])
        if isinstance(X, pd.DataFrame):
            out = X.copy()
            for name, a, b in zip(self.integers, lo, hi, strict=True):
                out[name] = np.clip(np.round(out[name].to_numpy(dtype=float)), a, b)
            return out
        arr = np.array(X, dtype=float, copy=True)
        if arr.ndim != 2 or arr.shape[1] not in (self.k, self.d):
            raise param_error("Domain.round_integers", "X", f"an array with {self.k} (or {self.d}) columns",
                              f"shape {arr.shape}")
        cols = self.numeric_index[self.integer_mask] if arr.shape[1] == self.d else np.flatnonzero(self.integer_mask)
        arr[:, cols] = np.clip(np.round(arr[:, cols]), lo, hi)
        return arr

    @property
    def numeric_index(self) -> np.ndarray:
        """Positions of the numeric columns in :attr:`names` (and in an encoded row)."""
        return np.array([i for i, n in enumerate(self.names) if n not in self.categories], dtype=np.int64)

    @property
    def categorical_index(self) -> np.ndarray:
        """Positions of the categorical columns in :attr:`names` (and in an encoded row), in the
        order of :attr:`categories`."""
        pos = {n: i for i, n in enumerate(self.names)}
        return np.array([pos[c] for c in self.categories], dtype=np.int64)

    @property
    def category_sizes(self) -> tuple[int, ...]:
        """Number of categories of each categorical column, in the order of :attr:`categories`."""
        return tuple(len(v) for v in self.categories.values())

    def weight(self, column: str) -> float:
        """The distance between two different categories of ``column``."""
        return self.weights[list(self.categories).index(column)]

    # ------------------------------------------------------------------ geometry
    @property
    def diameter(self) -> float:
        """The largest distance between two rows, in the units W1 is measured in: 1 for the unit cube with
        the largest-coordinate distance, or the heaviest category weight when it is larger (the mixed
        metric, docs/mixed-data.md). No W1 exceeds it, so a "bound" at or above it says nothing."""
        return max((1.0, *self.weights))

    @property
    def lower_array(self) -> np.ndarray:
        return np.asarray(self.lower, dtype=float)

    @property
    def upper_array(self) -> np.ndarray:
        return np.asarray(self.upper, dtype=float)

    @property
    def widths(self) -> np.ndarray:
        return self.upper_array - self.lower_array

    @property
    def center(self) -> np.ndarray:
        return (self.lower_array + self.upper_array) / 2.0

    def contains(self, X: Any) -> np.ndarray:
        """Boolean mask of the rows of ``X`` inside the box (bounds included; categories are always
        inside once read)."""
        arr = self.read(X, name="X", owner="Domain.contains", min_rows=0)
        num = arr[:, self.numeric_index] if self.is_mixed else arr
        return np.all((num >= self.lower_array) & (num <= self.upper_array), axis=1)

    def _check_frame_columns(self, X: pd.DataFrame, name: str, owner: str) -> None:
        """A DataFrame is read by column name, never by position: a domain without names (``x0``, ``x1``, ...)
        or one naming columns the frame lacks is an error saying what to change (matching by position would
        silently give one column another's bounds)."""
        missing = [c for c in self.names if c not in X.columns]
        if not missing:
            return
        cols = [str(c) for c in X.columns]
        if self.names == tuple(f"x{i}" for i in range(self.d)):
            raise ValueError(f"The '{name}' parameter of {owner} is a table with columns {cols[:8]}"
                             f"{' ...' if len(cols) > 8 else ''}, but the domain has no column names, so its bounds "
                             f"cannot be matched to them. Give the domain names=[...] in the order of its bounds, or "
                             f"pass X.to_numpy() to match the bounds to the columns by position.")
        close = difflib.get_close_matches(str(missing[0]), cols, n=1)
        raise ValueError(f"The '{name}' parameter of {owner} must have the domain's columns {list(self.names)}; "
                         f"it has no column {missing[0]!r}{f' (did you mean {close[0]!r}?)' if close else ''}. "
                         f"Its columns are {cols[:8]}{' ...' if len(cols) > 8 else ''}.")

    def read(self, X: Any, *, name: str = "X", owner: str = "Domain.read", min_rows: int = 1) -> np.ndarray:
        """``X`` checked and encoded as a float array (n, d) in this domain's column order.

        A DataFrame gives the domain's columns by name (extra columns are ignored). Numeric columns
        must be finite numbers; a categorical column's values are matched to the declared categories
        (as text: ``str(value)``), each replaced by its index in the list. A value outside the list is
        an error naming its row, column and value, unless the column has an ``other`` category. Without
        categorical columns an array (n, d) is accepted as well, as it always was.
        """
        if not self.is_mixed:
            if isinstance(X, pd.DataFrame):
                self._check_frame_columns(X, name, owner)
            cols = self.names if isinstance(X, pd.DataFrame) else None
            return check_points(X, name, owner, d=self.d, min_rows=min_rows, columns=cols)
        if not isinstance(X, pd.DataFrame):
            arr = check_points(X, name, owner, d=self.d, min_rows=min_rows)
            self._check_codes(arr, name, owner)  # an already encoded array (codes in the categorical columns)
            return arr
        missing = [c for c in self.names if c not in X.columns]
        if missing:
            raise ValueError(f"The '{name}' parameter of {owner} must have the columns {list(self.names)}. "
                             f"Got a table without {missing}.")
        num = check_points(X, name, owner, d=self.k, min_rows=min_rows, columns=self.numeric_names)
        out = np.empty((len(X), self.d), dtype=np.float64)
        out[:, self.numeric_index] = num
        for j, (col, labels) in zip(self.categorical_index, self.categories.items(), strict=True):
            out[:, j] = self._codes(X[col], col, labels, name, owner)
        return out

    def table(self, X: Any) -> pd.DataFrame:
        """Rows as a table with the domain's column names, categorical columns as pandas categoricals of their
        declared labels: a DataFrame (a release's synthetic data on a mixed domain) as it is, an array of
        encoded rows (categories as indices, as :meth:`read` gives them) decoded into a new frame."""
        if isinstance(X, pd.DataFrame):
            return X
        frame = pd.DataFrame(np.array(X, dtype=float), columns=list(self.names))
        for col, labels in self.categories.items():
            frame[col] = pd.Categorical.from_codes(frame[col].to_numpy().astype(np.int64), categories=list(labels))
        return frame

    def numeric_rows(self, X: Any) -> np.ndarray:
        """The numeric columns of rows, as floats: of a DataFrame with the domain's columns, of encoded rows
        (``d`` columns), or of numeric rows (``k`` columns, returned as they are)."""
        if isinstance(X, pd.DataFrame):
            return X.loc[:, list(self.numeric_names)].to_numpy(dtype=float)
        arr = np.asarray(X, dtype=float)
        return arr[:, self.numeric_index] if self.is_mixed and arr.ndim == 2 and arr.shape[1] == self.d else arr

    def _codes(self, values: pd.Series, col: str, labels: tuple[str, ...], name: str, owner: str) -> np.ndarray:
        """Indices of ``values`` in ``labels`` (exact text match), or an error naming the first bad row."""
        if isinstance(values.dtype, pd.CategoricalDtype) and list(values.cat.categories) == list(labels) \
                and all(label == label.strip() for label in labels):
            # a categorical of the declared labels (what the readers give): its codes are the indices the text
            # match below finds, without the text (a fifth of the time of reading a mixed table)
            codes = values.cat.codes.to_numpy().astype(np.int64)
            missing = codes < 0
        else:
            lookup = pd.Index(labels)
            missing = values.isna().to_numpy()
            text = values.astype("string").str.strip() if not missing.all() else values.astype("string")
            codes = lookup.get_indexer(text.fillna("").to_numpy(dtype=object))
        bad = (codes < 0) | missing
        if bad.any():
            other = self.other.get(col)
            if other is not None and not missing.any():
                codes[bad] = labels.index(other[0])
            else:
                i = int(np.flatnonzero(bad)[0])
                row = values.index[i]
                shown = "a missing value" if missing[i] else fmt_value(str(values.iloc[i]))
                raise ValueError(
                    f"The '{name}' parameter of {owner} must hold only the declared categories in column "
                    f"{col!r} ({_few(labels)}). Got {shown} at row {row}. Declare it in the domain's "
                    f"categories, fix the row, or give the column an 'other' category.")
        return codes.astype(np.float64)

    def _check_codes(self, arr: np.ndarray, name: str, owner: str) -> None:
        for j, col, size in zip(self.categorical_index, self.categories, self.category_sizes, strict=True):
            c = arr[:, j]
            bad = (c != np.floor(c)) | (c < 0) | (c >= size)
            if bad.any():
                i = int(np.flatnonzero(bad)[0])
                raise ValueError(f"The '{name}' parameter of {owner} must hold category indices in [0, {size}) "
                                 f"in column {col!r} (an encoded array), or be a DataFrame of the declared "
                                 f"categories. Got {fmt_value(float(c[i]))} at row {i}.")

    def to_unit(self, X: Any, *, return_clamped: bool = False, owner: str = "Domain.to_unit"):
        """Map ``X`` (n, d) into ``[0, 1]^k`` on the numeric columns, clamping points outside the box;
        categorical columns become (stay) their category indices.

        Returns
        -------
        U : ndarray of shape (n, d)
        n_clamped : int, only when ``return_clamped``
            Number of rows that had at least one numeric value outside the box, compared as the numbers
            are (``x < lower or x > upper``: the rule of :func:`dpsynth_core.clamping.clamping`, so that
            every front end counts alike). This number depends on the private data: it is an owner-side
            diagnostic, never part of a release.
        """
        arr = self.read(X, name="X", owner=owner, min_rows=0)
        raw = arr[:, self.numeric_index] if self.is_mixed else arr
        outside = np.any((raw < self.lower_array) | (raw > self.upper_array), axis=1) if return_clamped else None
        if self.is_mixed:
            U = arr.copy()
            num = self.numeric_index
            with np.errstate(over="ignore"):
                V = (arr[:, num] - self.lower_array) / self.widths
        else:
            with np.errstate(over="ignore"):  # |x| near 1e308 overflows to ±inf, which the clamp maps to 0 or 1
                V = U = (arr - self.lower_array) / self.widths
        np.clip(V, 0.0, 1.0, out=V)
        if self.is_mixed:
            U[:, num] = V
        if return_clamped:
            return U, int(outside.sum())
        return U

    def from_unit(self, U: Any, *, clip: bool = False) -> np.ndarray | pd.DataFrame:
        """Inverse of :meth:`to_unit` (no clamping): an array (n, d) for a numeric domain; for a mixed
        one a DataFrame in the domain's column order, categorical columns as pandas categoricals of the
        declared categories.

        ``clip``: clip the numeric values into [lower, upper] (``lower + u·width`` may round one ulp past
        ``upper`` at u = 1); the same numbers as ``np.clip`` of the result, without rebuilding a frame's
        columns."""
        arr = check_points(U, "U", "Domain.from_unit", d=self.d, min_rows=0)
        if not self.is_mixed:
            out = self.lower_array + arr * self.widths
            return np.clip(out, self.lower_array, self.upper_array, out=out) if clip else out
        self._check_codes(arr, "U", "Domain.from_unit")
        num = self.lower_array + arr[:, self.numeric_index] * self.widths
        if clip:
            np.clip(num, self.lower_array, self.upper_array, out=num)
        cols = {}
        it = iter(range(self.k))
        for j, col in enumerate(self.names):
            if col in self.categories:  # codes checked above: pandas need not check them again
                cols[col] = pd.Categorical.from_codes(arr[:, j].astype(np.int64), dtype=self._category_dtypes[col],
                                                      validate=False)
            else:
                cols[col] = num[:, next(it)]
        return pd.DataFrame(cols, copy=False)  # the domain's column order (the dict's); the arrays are new here

    @cached_property
    def _category_dtypes(self) -> dict[str, pd.CategoricalDtype]:
        """Each categorical column's pandas dtype, built once per domain: a release on a mixed table turns codes
        into categoricals on every run (the audits run thousands), and building the dtype from the labels each
        time cost most of :meth:`from_unit`."""
        return {col: pd.CategoricalDtype(list(labels)) for col, labels in self.categories.items()}

    def to_dict(self) -> dict:
        out = {"lower": list(self.lower), "upper": list(self.upper), "names": list(self.names)}
        if self.is_mixed:  # "lower"/"upper" bound the numeric columns only: say which, beside all the names
            out["numeric_names"] = list(self.numeric_names)
            out["categories"] = {k: list(v) for k, v in self.categories.items()}
            out["weights"] = dict(zip(self.categories, self.weights, strict=True))
            if self.other:
                out["other"] = {k: v[0] for k, v in self.other.items()}
        if self.integers:
            out["integers"] = list(self.integers)
        if not self.declared:
            out["provenance"] = self.provenance
        return out

    def __repr__(self) -> str:  # compact, readable in the dashboard
        bounds = dict(zip(self.numeric_names, zip(self.lower, self.upper, strict=True), strict=True))
        parts = ", ".join(f"{n}∈[{bounds[n][0]:g}, {bounds[n][1]:g}]" if n in bounds
                          else f"{n}∈{{{_few(self.categories[n])}}}" for n in self.names)
        return f"Domain({parts}{', read off the data' if not self.declared else ''})"


def _few(labels: Sequence[str], most: int = 6) -> str:
    shown = ", ".join(repr(x) for x in labels[:most])
    return shown + (f", … ({len(labels)} in all)" if len(labels) > most else "")
