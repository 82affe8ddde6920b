"""Bounds that clamp rows: one count and one decision for the library, the command line and the dashboard.

Every mechanism moves a numeric value outside the declared bounds onto the nearest bound (clamping, in
:meth:`Domain.to_unit <dpsynth_core.Domain.to_unit>`). When many rows lie outside, the bounds are probably a
typo or the wrong unit, and the release describes the box's edges rather than the data. :func:`clamping`
counts those rows once, by the one rule every caller uses (a row is outside when one of its numeric values
is below its lower or above its upper bound, compared as the numbers are, bounds included); the returned
:class:`Clamping` carries the decision and the words.

The decision (docs/privacy-model.md, "Bounds that clamp most rows"): **warn, naming the share, and let the
release go ahead** -- above :data:`CLAMP_WARNING_SHARE` of the rows a warning, above
:data:`CLAMP_MOST_SHARE` a stronger one that names the column and its unit. Never a refusal: the bounds are
the user's public choice (clamping with narrow bounds is a legitimate, private way to top-code a column),
and a release that exists or not depending on how many private rows lie outside would let that unprotected
fact leak to whoever sees the outputs. The count is computed from the private data without noise: it is for
the data owner's eyes (a Python warning, the command line's stderr, the dashboard's owner view), never part
of a release or an export.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np

from .domain import Domain
from .validation import Advice, param_error

__all__ = ["Clamping", "clamping", "clamping_of_release", "warn_clamping", "ClampedRowsWarning",
           "CLAMP_WARNING_SHARE", "CLAMP_MOST_SHARE", "BOUNDS_ADVICE"]

#: Share of the private rows clamped into the domain above which every front end warns.
CLAMP_WARNING_SHARE = 0.01
#: Share above which the warning says that most of the data is replaced by the box's edges.
CLAMP_MOST_SHARE = 0.5
#: What to change, for each front end to word (the domain's bounds; ``--bounds``; the bound boxes).
BOUNDS_ADVICE = (Advice("bounds", None, "the range each column can take in principle, in its unit"),)


class ClampedRowsWarning(UserWarning):
    """Many private rows lay outside the domain's bounds and were clamped into them (owner's eyes only:
    the count is computed from the private data without noise, and is in no release or export). The
    :class:`Clamping` is the warning's ``clamping`` attribute."""

    def __init__(self, message: str, clamping: Clamping | None = None) -> None:
        super().__init__(message)
        self.clamping = clamping


@dataclass(frozen=True)
class Clamping:
    """How many rows the bounds clamp, and what every front end does about it.

    Attributes
    ----------
    n : int
        Rows counted.
    rows : int
        Rows with at least one numeric value outside its bounds.
    below, above : mapping of str to int
        Per numeric column, the rows below its lower and above its upper bound (empty when only the
        total is known: a release from Dask input counts the total in its pass).
    """

    n: int
    rows: int
    below: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))
    above: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))
    advice: tuple = BOUNDS_ADVICE

    @property
    def share(self) -> float:
        return self.rows / self.n if self.n else 0.0

    @property
    def level(self) -> str:
        """"none" (at most :data:`CLAMP_WARNING_SHARE`), "some" or "most" (above :data:`CLAMP_MOST_SHARE`)."""
        if not self.n or self.rows <= CLAMP_WARNING_SHARE * self.n:
            return "none"
        return "most" if self.rows > CLAMP_MOST_SHARE * self.n else "some"

    @property
    def warns(self) -> bool:
        return self.level != "none"

    @property
    def goes_ahead(self) -> bool:
        """Always True: the release goes ahead whatever the share (the module docstring says why)."""
        return True

    @property
    def worst(self) -> str | None:
        """The numeric column with the most values outside its bounds (None when unknown or none)."""
        counts = {c: self.below.get(c, 0) + self.above.get(c, 0) for c in {*self.below, *self.above}}
        counts = {c: k for c, k in counts.items() if k}
        return max(counts, key=lambda c: (counts[c], c)) if counts else None

    def columns_text(self, most: int = 4) -> str:
        """"'age' (5,000 below, 12 above), ..." for the columns with values outside, the worst first."""
        items = [(c, self.below.get(c, 0), self.above.get(c, 0)) for c in {*self.below, *self.above}]
        items = sorted((t for t in items if t[1] + t[2]), key=lambda t: (-(t[1] + t[2]), t[0]))
        text = ", ".join(f"{c!r} ({b:,} below, {a:,} above)" for c, b, a in items[:most])
        return text + (", ..." if len(items) > most else "")

    def message(self, bounds: str = "the bounds") -> str | None:
        """The warning in plain words (None when there is none); ``bounds`` names what to change in the
        words of the interface that shows it ("--bounds", "the domain's lower and upper bounds", "the
        bound boxes")."""
        if not self.warns:
            return None
        cols = self.columns_text()
        head = (f"{self.rows:,} of {self.n:,} rows ({self.share:.0%}) have a value outside the bounds and are moved "
                f"onto them before the release{': ' + cols if cols else ''}.")
        if self.level == "most":
            where = f" (most of them in {self.worst!r})" if self.worst else ""
            fix = (f" Most of the data is replaced by the box's edges{where}: check {bounds} and the unit of that "
                   f"column.")
        else:
            fix = f" Check {bounds}: they should be the range the values can take in principle."
        return (head + fix + " The release goes ahead: the bounds are your public choice. Owner view: counted from "
                "your data, in no release or export.")


def clamping(X: Any, domain: Domain) -> Clamping:
    """Count the rows of ``X`` (read by ``domain.read``: a DataFrame by column name, or an array in the
    domain's column order) with a numeric value outside the domain's bounds, per column and in all. The
    same rule as :meth:`Domain.to_unit`'s count (``rel.owner.n_clamped``), so every front end gives the same
    numbers. An owner view: computed from the private data without noise."""
    if not isinstance(domain, Domain):
        raise param_error("clamping", "domain", "a Domain", domain, kind=TypeError)
    arr = domain.read(X, name="X", owner="clamping", min_rows=0)
    num = arr[:, domain.numeric_index] if domain.is_mixed else arr
    lo, hi = num < domain.lower_array, num > domain.upper_array
    names = domain.numeric_names
    return Clamping(int(num.shape[0]), int(np.any(lo | hi, axis=1).sum()),
                    MappingProxyType(dict(zip(names, (int(v) for v in lo.sum(axis=0)), strict=True))),
                    MappingProxyType(dict(zip(names, (int(v) for v in hi.sum(axis=0)), strict=True))))


def clamping_of_release(rel: Any) -> Clamping | None:
    """The total a release counted in its own pass (``rel.owner.n`` and ``rel.owner.n_clamped``: the same
    rule as :func:`clamping`), without per-column counts -- for data read partition by partition (Dask),
    where a second pass would cost a read of every file. None when the release did not count."""
    owner = getattr(rel, "owner", None)
    n, rows = getattr(owner, "n", None), getattr(owner, "n_clamped", None)
    if n is None or rows is None:
        return None
    return Clamping(int(n), int(rows))


def warn_clamping(c: Clamping | None, *, bounds: str = "the domain's lower and upper bounds",
                  stacklevel: int = 3) -> None:
    """A :class:`ClampedRowsWarning` carrying ``c`` when it warns (the library's front end)."""
    if c is not None and c.warns:
        warnings.warn(ClampedRowsWarning(c.message(bounds), c), stacklevel=stacklevel)
