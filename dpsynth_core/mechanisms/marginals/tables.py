"""Which tables and which bins: the public layout of the measured marginals, and the one read of the rows.

Every column gets a **fine** binning (its 1-way table) and a **coarse** one (its axis in the 2-way tables);
each coarse bin is a union of consecutive fine bins, so a coarse count is a sum of fine ones and the fine
1-way table refines the coarse joint.

* **numeric**: ``fine`` equal bins of the declared range, ``coarse`` unions of them (fine bin f in
  coarse bin ⌊f·coarse/fine⌋);
* **integer** (a column of ``Domain.integers``): the whole values between the bounds. At most ``fine``
  of them: one bin per value (a column that is 0 in 68 % of the rows keeps its spike exactly, and the
  release draws the values themselves); more: the smallest and the largest value alone (a spike at a bound
  keeps its bin) and the others in ``fine - 2`` runs of consecutive values of near-equal length.
  Coarse bins group consecutive fine bins as for a numeric column;
* **categorical**: one bin per declared category, fine and coarse alike.

Nothing here looks at the data: the bins follow from the domain (bounds, declared integers, declared
categories) and the two resolutions. :func:`marginal_counts` is the per-record statistic the mechanism
sums over the rows (:meth:`dpsynth_core.rows.Rows.sum`): integer counts of every fine 1-way table and
every coarse 2-way table, which add up over partitions exactly (Dask gives the same counts).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field

import numpy as np

from ...domain import Domain

__all__ = ["KINDS", "Column", "Layout", "plan_layout", "marginal_counts", "coarse_of_fine"]

#: The kinds of column.
KINDS: tuple[str, ...] = ("numeric", "integer", "categorical")


def coarse_of_fine(fine: int, coarse: int) -> np.ndarray:
    """Coarse bin of each of ``fine`` consecutive fine bins: ⌊f·c/fine⌋ with c = min(coarse, fine)."""
    c = min(int(coarse), int(fine))
    return (np.arange(fine, dtype=np.int64) * c) // int(fine)


@dataclass(frozen=True)
class Column:
    """One column's bins (public).

    ``fine`` and ``coarse`` are the numbers of bins; ``to_coarse[f]`` is the coarse bin of fine bin f.
    ``lower``/``upper`` are the declared bounds (numeric kinds). An integer column's fine bin f holds the
    whole values ``first + starts[f]`` to ``first + starts[f + 1] - 1``. ``weight`` is a categorical
    column's distance between two different categories (0 for the numeric kinds).
    """

    name: str
    kind: str
    fine: int
    to_coarse: np.ndarray
    lower: float = 0.0
    upper: float = 1.0
    first: int = 0
    starts: np.ndarray = field(default_factory=lambda: np.zeros(1, dtype=np.int64))
    weight: float = 0.0

    @property
    def coarse(self) -> int:
        return int(self.to_coarse[-1]) + 1

    @property
    def values(self) -> int:
        """Whole values of an integer column (0 otherwise)."""
        return int(self.starts[-1]) if self.kind == "integer" else 0

    @property
    def one_per_value(self) -> bool:
        """An integer column with one fine bin per whole value."""
        return self.kind == "integer" and self.values == self.fine

    def fine_of(self, u: np.ndarray) -> np.ndarray:
        """The fine bin of each unit coordinate (a categorical column: its code)."""
        if self.kind == "categorical":
            return u.astype(np.int64)
        if self.kind == "integer":
            x = self.lower + u * (self.upper - self.lower)
            off = np.clip(np.rint(x) - self.first, 0, self.values - 1).astype(np.int64)
            return off if self.one_per_value else np.searchsorted(self.starts, off, side="right") - 1
        return np.clip((u * self.fine).astype(np.int64), 0, self.fine - 1)

    def unit_of_value(self, v: np.ndarray) -> np.ndarray:
        """Unit coordinate of whole values of an integer column."""
        return (np.asarray(v, dtype=float) - self.lower) / (self.upper - self.lower)

    def fine_extent(self) -> tuple[np.ndarray, np.ndarray]:
        """Per fine bin, the smallest and largest unit coordinate a record in it can have (a categorical
        column: its code twice)."""
        f = np.arange(self.fine)
        if self.kind == "categorical":
            return f.astype(float), f.astype(float)
        if self.kind == "integer":
            lo = np.clip(self.unit_of_value(self.first + self.starts[:-1]), 0.0, 1.0)
            hi = np.clip(self.unit_of_value(self.first + self.starts[1:] - 1), 0.0, 1.0)
            return lo, hi
        return f / self.fine, (f + 1) / self.fine

    def coarse_extent(self) -> tuple[np.ndarray, np.ndarray]:
        """Per coarse bin, the smallest and largest unit coordinate of its records."""
        lo, hi = self.fine_extent()
        out_lo = np.full(self.coarse, np.inf)
        out_hi = np.full(self.coarse, -np.inf)
        np.minimum.at(out_lo, self.to_coarse, lo)
        np.maximum.at(out_hi, self.to_coarse, hi)
        return out_lo, out_hi


@dataclass(frozen=True)
class Layout:
    """The measured tables: every column's fine 1-way table and the coarse 2-way table of each pair."""

    columns: tuple[Column, ...]
    pairs: tuple[tuple[int, int], ...]

    @property
    def d(self) -> int:
        return len(self.columns)

    @property
    def coarse_shape(self) -> tuple[int, ...]:
        return tuple(c.coarse for c in self.columns)

    @property
    def joint_cells(self) -> int:
        """Cells of the coarse joint grid (the product of the coarse bins)."""
        return math.prod(self.coarse_shape)

    @property
    def cells_one(self) -> int:
        """Cells of all 1-way tables."""
        return sum(c.fine for c in self.columns)

    @property
    def cells_two(self) -> int:
        """Cells of all 2-way tables."""
        return sum(self.columns[i].coarse * self.columns[j].coarse for i, j in self.pairs)

    def describe(self) -> list[dict]:
        """The public record of each column's bins (for ``params``)."""
        out = []
        for c in self.columns:
            entry = {"name": c.name, "kind": c.kind, "fine": c.fine, "coarse": c.coarse}
            if c.kind == "integer":
                entry["values"] = c.values
                entry["first"] = c.first
            out.append(entry)
        return out


def _integer_starts(values: int, fine: int) -> np.ndarray:
    """Offsets of the first value of each fine bin of an integer column: one bin per value when there are at
    most ``fine`` values; else the smallest and the largest value alone and the others in ``fine - 2`` runs
    of near-equal length (a spike at a bound, as zero-inflated counts have, keeps its own bin: on the study's
    survey, 41 values in 16 bins, the share of zeros was off by 39 points with equal runs and by under 3 with
    the ends alone, at the same W1)."""
    if values <= fine:
        return np.arange(values + 1, dtype=np.int64)
    if fine < 4:
        return np.rint(np.linspace(0, values, fine + 1)).astype(np.int64)
    inner = np.rint(np.linspace(1, values - 1, fine - 1)).astype(np.int64)
    return np.concatenate([[0], inner, [values]]).astype(np.int64)


def plan_layout(domain: Domain, fine: int, coarse: int) -> Layout:
    """The bins of every column of ``domain`` at ``fine`` bins per numeric 1-way table and ``coarse`` per
    numeric axis of a 2-way table (public inputs only); all pairs of columns."""
    cols = []
    num = 0
    for name in domain.names:
        if name in domain.categories:
            size = len(domain.categories[name])
            cols.append(Column(name, "categorical", size, np.arange(size, dtype=np.int64),
                               weight=domain.weight(name)))
            continue
        lo, hi = domain.lower[num], domain.upper[num]
        num += 1
        if name in domain.integers:
            first, last = math.ceil(lo), math.floor(hi)
            starts = _integer_starts(last - first + 1, fine)
            f = starts.size - 1
            cols.append(Column(name, "integer", f, coarse_of_fine(f, coarse), lo, hi, first, starts))
        else:
            cols.append(Column(name, "numeric", fine, coarse_of_fine(fine, coarse), lo, hi))
    pairs = tuple(itertools.combinations(range(len(cols)), 2))
    return Layout(tuple(cols), pairs)


def marginal_counts(U: np.ndarray, layout: Layout) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """The per-record statistic: integer counts of every fine 1-way table and every coarse 2-way table
    (flattened row-major) of the rows ``U`` (unit coordinates; categorical columns as codes)."""
    fine = np.empty(U.shape, dtype=np.int64)
    for j, col in enumerate(layout.columns):
        fine[:, j] = col.fine_of(U[:, j])
    one = [np.bincount(fine[:, j], minlength=c.fine).astype(np.int64) for j, c in enumerate(layout.columns)]
    coarse = np.empty_like(fine)
    for j, col in enumerate(layout.columns):
        coarse[:, j] = col.to_coarse[fine[:, j]]
    two = []
    for i, j in layout.pairs:
        ci, cj = layout.columns[i].coarse, layout.columns[j].coarse
        two.append(np.bincount(coarse[:, i] * cj + coarse[:, j], minlength=ci * cj).astype(np.int64))
    return one, two
