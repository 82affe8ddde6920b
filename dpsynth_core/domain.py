"""Public data domains.

A :class:`Domain` is the box ``[lower_1, upper_1] x ... x [lower_d, upper_d]`` that the data owner
declares *before* looking at the data. Bounds are public inputs of every mechanism; this module
offers no function that derives them from data, on purpose (docs/privacy-model.md §1).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .validation import check_points, param_error

__all__ = ["Domain"]

_OWNER = "Domain"


@dataclass(frozen=True)
class Domain:
    """A public axis-aligned box with optional column names.

    Parameters
    ----------
    lower, upper : sequence of float, length d
        Public bounds with ``lower[i] < upper[i]``, all finite.
    names : sequence of str, optional
        Column names (default ``x0, x1, ...``).

    Notes
    -----
    Mechanisms work in the unit cube: :meth:`to_unit` maps
    :math:`u_i = (x_i - \\mathrm{lower}_i) / (\\mathrm{upper}_i - \\mathrm{lower}_i)` and clamps into
    ``[0, 1]``; :meth:`from_unit` is its inverse. W1 values and bounds are reported in unit-cube
    coordinates with the l_inf metric unless a caller asks otherwise.
    """

    lower: tuple[float, ...]
    upper: tuple[float, ...]
    names: tuple[str, ...] = field(default=())

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
        names = tuple(self.names) if self.names else tuple(f"x{i}" for i in range(len(lower)))
        if len(names) != len(lower) or not all(isinstance(s, str) and s for s in names):
            raise param_error(_OWNER, "names", f"a sequence of {len(lower)} non-empty strings", self.names)
        if len(set(names)) != len(names):
            raise param_error(_OWNER, "names", "a sequence of distinct strings", self.names)
        object.__setattr__(self, "lower", lower)
        object.__setattr__(self, "upper", upper)
        object.__setattr__(self, "names", names)

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

    # ------------------------------------------------------------------ geometry
    @property
    def d(self) -> int:
        return len(self.lower)

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
        """Boolean mask of the rows of ``X`` inside the box (bounds included)."""
        arr = check_points(X, "X", "Domain.contains", d=self.d, min_rows=0, columns=self._cols(X))
        return np.all((arr >= self.lower_array) & (arr <= self.upper_array), axis=1)

    def _cols(self, X: Any) -> Sequence[str] | None:
        if isinstance(X, pd.DataFrame) and all(n in X.columns for n in self.names):
            return self.names
        return None

    def to_unit(self, X: Any, *, return_clamped: bool = False, owner: str = "Domain.to_unit"):
        """Map ``X`` (n, d) into ``[0, 1]^d``, clamping points outside the box.

        Returns
        -------
        U : ndarray of shape (n, d)
        n_clamped : int, only when ``return_clamped``
            Number of rows that had at least one coordinate outside the box. This number depends
            on the private data: it is an owner-side diagnostic, never part of a release.
        """
        arr = check_points(X, "X", owner, d=self.d, min_rows=0, columns=self._cols(X))
        with np.errstate(over="ignore"):  # |x| near 1e308 overflows to ±inf, which the clamp maps to 0 or 1
            U = (arr - self.lower_array) / self.widths
        outside = np.any((U < 0.0) | (U > 1.0), axis=1)
        np.clip(U, 0.0, 1.0, out=U)
        if return_clamped:
            return U, int(outside.sum())
        return U

    def from_unit(self, U: Any) -> np.ndarray:
        """Inverse of :meth:`to_unit` (no clamping)."""
        arr = check_points(U, "U", "Domain.from_unit", d=self.d, min_rows=0)
        return self.lower_array + arr * self.widths

    def to_dict(self) -> dict:
        return {"lower": list(self.lower), "upper": list(self.upper), "names": list(self.names)}

    def __repr__(self) -> str:  # compact, readable in the dashboard
        parts = ", ".join(f"{n}∈[{lo:g}, {hi:g}]" for n, lo, hi in zip(self.names, self.lower, self.upper, strict=True))
        return f"Domain({parts})"
