"""Parameter checks with one message format.

Every public function of :mod:`dpsynth_core` validates its inputs through these helpers so that
users see a single pattern (docs/README.md, "Library conventions"):

    The 'epsilon' parameter of pmm must be a float in (0, inf). Got -1.

``TypeError`` is raised for a wrong type, ``ValueError`` for a wrong value.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

__all__ = [
    "param_error",
    "check_float",
    "check_int",
    "check_choice",
    "plural",
    "check_bool",
    "check_rng",
    "check_points",
    "check_probability",
    "fmt_value",
    "Advice",
]


@dataclass(frozen=True)
class Advice:
    """An option the user may change, said once by the library and worded by each front end in its own
    terms (a keyword in Python, a flag on the command line, a control in the dashboard).

    ``param`` is the library's keyword (``"method"``, ``"max_seconds"``, ``"bounds"``, ``"drop_bad_rows"``),
    ``value`` what to set it to (None: the user chooses), ``why`` the reason in plain words that name no
    interface. A result or an error carries a tuple of them (``W1Result.advice``, ``CSVError.advice``,
    ``Clamping.advice``)."""

    param: str
    value: Any = None
    why: str = ""

    def python(self) -> str:
        """In the library's words, e.g. ``method='sparse'``."""
        return self.param if self.value is None else f"{self.param}={self.value!r}"


def fmt_value(value: Any) -> str:
    """Short, readable rendering of a user value for an error message."""
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, np.ndarray):
        return f"array of shape {value.shape} and dtype {value.dtype}"
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def param_error(owner: str, name: str, expected: str, value: Any, *, kind: type = ValueError) -> Exception:
    """Build the exception with the project's message format (not raised)."""
    return kind(f"The '{name}' parameter of {owner} must be {expected}. Got {fmt_value(value)}.")


def _interval(low: float, high: float, low_open: bool, high_open: bool) -> str:
    def f(x: float) -> str:
        if x == math.inf:
            return "inf"
        if x == -math.inf:
            return "-inf"
        return fmt_value(float(x))

    return f"{'(' if low_open else '['}{f(low)}, {f(high)}{')' if high_open else ']'}"


def check_float(
    value: Any,
    name: str,
    owner: str,
    *,
    low: float = -math.inf,
    high: float = math.inf,
    low_open: bool = False,
    high_open: bool = False,
) -> float:
    """Return ``value`` as a float in the given interval, or raise.

    Infinite endpoints are always open; NaN is never accepted. Booleans and strings are type errors.
    """
    low_open = low_open or low == -math.inf
    high_open = high_open or high == math.inf
    # the message is written only on failure: these checks run on every call of every mechanism
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise param_error(owner, name, _float_expected(low, high, low_open, high_open), value, kind=TypeError)
    x = float(value)
    ok = not math.isnan(x)
    ok = ok and (x > low if low_open else x >= low)
    ok = ok and (x < high if high_open else x <= high)
    if not ok:
        raise param_error(owner, name, _float_expected(low, high, low_open, high_open), value)
    return x


def _float_expected(low: float, high: float, low_open: bool, high_open: bool) -> str:
    return f"a float in {_interval(low, high, low_open, high_open)}"


def check_probability(value: Any, name: str, owner: str) -> float:
    """A float in (0, 1)."""
    return check_float(value, name, owner, low=0.0, high=1.0, low_open=True, high_open=True)


def check_int(value: Any, name: str, owner: str, *, low: int | None = None, high: int | None = None) -> int:
    """Return ``value`` as an int in ``[low, high]`` (either end optional), or raise.

    Integral floats such as ``3.0`` are accepted; ``3.5``, booleans and strings are not.
    """
    if isinstance(value, bool):
        raise param_error(owner, name, _int_expected(low, high), value, kind=TypeError)
    if isinstance(value, numbers.Integral):
        x = int(value)
    elif isinstance(value, numbers.Real) and math.isfinite(float(value)) and float(value).is_integer():
        x = int(value)
    elif isinstance(value, numbers.Real):
        raise param_error(owner, name, _int_expected(low, high), value)
    else:
        raise param_error(owner, name, _int_expected(low, high), value, kind=TypeError)
    if (low is not None and x < low) or (high is not None and x > high):
        raise param_error(owner, name, _int_expected(low, high), value)
    return x


def _int_expected(low: int | None, high: int | None) -> str:
    lo = "-inf" if low is None else str(low)
    hi = "inf" if high is None else str(high)
    return f"an int in [{lo}, {hi}]".replace("[-inf", "(-inf").replace("inf]", "inf)")


def check_choice(value: Any, name: str, owner: str, choices: Sequence[str]) -> str:
    """Return ``value`` if it is one of ``choices`` (strings), or raise."""
    if isinstance(value, str) and value in choices:
        return value
    expected = "one of " + ", ".join(repr(c) for c in choices)
    if not isinstance(value, str):
        raise param_error(owner, name, expected, value, kind=TypeError)
    raise param_error(owner, name, expected, value)


def check_bool(value: Any, name: str, owner: str) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise param_error(owner, name, "a bool", value, kind=TypeError)
    return bool(value)


def check_rng(rng: Any, owner: str, name: str = "rng") -> np.random.Generator:
    """Normalise ``rng`` (Generator, int seed or None) once with :func:`numpy.random.default_rng`."""
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None:
        return np.random.default_rng()
    if isinstance(rng, bool) or not isinstance(rng, numbers.Integral):
        raise param_error(owner, name, "a numpy Generator, a non-negative int seed or None", rng, kind=TypeError)
    if int(rng) < 0:
        raise param_error(owner, name, "a numpy Generator, a non-negative int seed or None", rng)
    return np.random.default_rng(int(rng))


def check_points(
    X: Any,
    name: str,
    owner: str,
    *,
    d: int | None = None,
    min_rows: int = 1,
    max_dim: int | None = None,
    columns: Sequence[str] | None = None,
) -> np.ndarray:
    """Return ``X`` as a finite float64 array of shape (n, d), or raise.

    ``X`` may be an array-like or a pandas DataFrame. When it is a DataFrame and ``columns`` is
    given, those columns are selected (a missing column is a ``ValueError`` naming it). A 1-D input
    is read as n points in dimension 1 when ``d`` is None or 1.
    """
    labels = None  # a DataFrame's column names, for the messages below
    if isinstance(X, pd.DataFrame):
        if columns is not None:
            missing = [c for c in columns if c not in X.columns]
            if missing:
                raise ValueError(
                    f"The '{name}' parameter of {owner} must have the columns {list(columns)}. "
                    f"Got a table without {missing}."
                )
            X = X.loc[:, list(columns)]
        dup = X.columns[X.columns.duplicated()].unique().tolist()
        if dup:
            raise ValueError(f"The '{name}' parameter of {owner} has the column name {str(dup[0])!r} more than once: "
                             f"give every column its own name.")
        labels = [str(c) for c in X.columns]
        non_numeric = [c for c in X.columns if not pd.api.types.is_numeric_dtype(X[c])]
        if non_numeric:
            times = [c for c in non_numeric if pd.api.types.is_datetime64_any_dtype(X[c])
                     or pd.api.types.is_timedelta64_dtype(X[c])]
            hint = (f" ({str(times[0])!r} holds dates or times: convert it to a number first, e.g. days since a "
                    "fixed date, with public bounds)" if times else "")
            raise param_error(owner, name, "numeric; non-numeric columns " + repr(non_numeric[:5]) + hint,
                              "a DataFrame", kind=TypeError)
        X = X.to_numpy(dtype=float)
    if isinstance(X, (str, bytes)) or X is None or isinstance(X, numbers.Number):
        raise param_error(owner, name, "an array of shape (n, d)", X, kind=TypeError)
    try:
        arr = np.asarray(X)
    except Exception as exc:  # ragged lists and the like
        raise param_error(owner, name, "an array of shape (n, d)", type(X).__name__, kind=TypeError) from exc
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == np.bool_):
        raise param_error(owner, name, "a numeric array of shape (n, d)", arr, kind=TypeError)
    if np.iscomplexobj(arr):
        raise param_error(owner, name, "a real array of shape (n, d)", arr, kind=TypeError)
    arr = arr.astype(np.float64, copy=False)
    if arr.ndim == 1 and (d is None or d == 1):
        arr = arr.reshape(-1, 1)
    if arr.ndim != 2:
        raise param_error(owner, name, "an array of shape (n, d)", arr)
    if d is not None and arr.shape[1] != d:
        raise param_error(owner, name, f"an array of shape (n, {d}) matching the domain", arr)
    if arr.shape[1] < 1:
        raise param_error(owner, name, "an array with at least one column", arr)
    if max_dim is not None and arr.shape[1] > max_dim:
        raise param_error(owner, name, f"an array with at most {max_dim} columns", arr)
    if arr.shape[0] < min_rows:
        if labels is not None:  # a table: said with its columns, not as an array's shape
            raise ValueError(f"The '{name}' parameter of {owner} must have at least {plural(min_rows, 'row')}. "
                             f"Got a table with {plural(arr.shape[0], 'row')} and columns {labels[:8]}.")
        raise param_error(owner, name, f"an array with at least {min_rows} row(s)", arr)
    if not np.isfinite(arr).all():
        bad = np.argwhere(~np.isfinite(arr))[0]
        col = f"column {labels[int(bad[1])]!r}" if labels else f"column {int(bad[1])}"
        what = "a missing value (NaN)" if np.isnan(arr[bad[0], bad[1]]) else "an infinite value"
        raise ValueError(
            f"The '{name}' parameter of {owner} must contain only finite values. "
            f"Got {what} at row {int(bad[0])} (counting from 0), {col}: drop or fill such rows first."
        )
    return arr


def plural(n: int, word: str, plural: str | None = None) -> str:
    """"1 row", "0 rows", "3 categories" (``plural`` for an irregular word)."""
    return f"{n} {word if n == 1 else (plural or word + 's')}"
