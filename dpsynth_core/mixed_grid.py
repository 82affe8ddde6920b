"""Regular grids on a mixed domain: every combination of categories times the numeric ``k^k_num`` grid.

Shared by the grid mechanisms on mixed tables (``flat_histogram``, ``psmm``, ``haar_walk``;
docs/mixed-data.md). A row of a mixed domain, encoded by :meth:`dpsynth_core.domain.Domain.to_unit`,
has numeric coordinates in [0, 1] and category indices. Its *combination* is the row-major index of
its categories (the first categorical column of ``domain.categories`` most significant); its *cell*
is

.. math:: \\text{cell} = \\text{combination} \\cdot k^{k_{num}} + \\text{numeric cell},

with the numeric cell row-major as in :mod:`dpsynth_core.grid`, so the grid has
:math:`\\prod_j c_j \\cdot k^{k_{num}}` cells, each a numeric box of side 1/k times one combination
of declared categories. Every record lies in exactly one cell, which is all the privacy of a
cell-count mechanism needs; the combinations are public (the declared lists), never read off the data.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from . import limits
from .domain import Domain
from .grid import cell_of

__all__ = ["MixedGrid", "combinations", "mixed_grid_counts", "gray_combinations", "check_combinations",
           "per_combination_size"]


def combinations(sizes: Sequence[int]) -> int:
    """The number of category combinations :math:`\\prod_j c_j` (an exact Python int; 1 without columns)."""
    return math.prod(int(s) for s in sizes)


def per_combination_size(n: float, sizes: Sequence[int]) -> float:
    """The mean number of records per combination, :math:`n / \\prod_j c_j` (at least 1): the size the
    default grid rules use on a mixed domain. ``n`` must be public or DP (the public or noisy size)."""
    return max(float(n) / float(combinations(sizes)), 1.0)


def _combination_of(E: np.ndarray, cat: np.ndarray, sizes: Sequence[int]) -> np.ndarray:
    combo = np.zeros(E.shape[0], dtype=np.int64)
    for j, s in zip(cat, sizes, strict=True):
        combo = combo * int(s) + E[:, j].astype(np.int64)
    return combo


def mixed_grid_counts(E: np.ndarray, k: int, num: np.ndarray, cat: np.ndarray, sizes: tuple[int, ...]) -> np.ndarray:
    """Counts of the mixed cells (combination-major), int64: the per-record statistic of the grid
    mechanisms on mixed data (``Rows.sum``; in memory and per Dask partition alike).

    ``E``: encoded unit rows (numeric in [0, 1] at ``num``, category indices at ``cat``)."""
    K = k ** len(num)
    cells = _combination_of(E, cat, sizes) * K + cell_of(E[:, num], k)
    return np.bincount(cells, minlength=combinations(sizes) * K).astype(np.int64)


def gray_combinations(sizes: Sequence[int], weights: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    """Every combination once, consecutive ones differing in exactly one column: the reflected
    mixed-radix Gray code, with the heaviest column most significant (it changes least often).

    Returns ``(order, changed)``: ``order[i]`` the row-major combination index of the i-th
    combination, ``changed[i]`` the categorical column (position in ``sizes``) that differs between
    combinations i and i + 1 (length C - 1)."""
    m = len(sizes)
    digits_order = sorted(range(m), key=lambda j: (-float(weights[j]), j))  # most significant first
    seq = np.zeros((1, 0), dtype=np.int64)
    for j in reversed(digits_order):
        blocks = [np.column_stack([np.full(seq.shape[0], v, dtype=np.int64), seq if v % 2 == 0 else seq[::-1]])
                  for v in range(int(sizes[j]))]
        seq = np.vstack(blocks)
    digits = np.empty_like(seq)  # back to the domain's column order
    digits[:, digits_order] = seq
    order = np.zeros(seq.shape[0], dtype=np.int64)
    for j in range(m):
        order = order * int(sizes[j]) + digits[:, j]
    changed = np.argmax(np.diff(digits, axis=0) != 0, axis=1) if seq.shape[0] > 1 else np.zeros(0, np.int64)
    return order, changed.astype(np.int64)


def check_combinations(domain: Domain, cap: int, *, owner: str, why: str) -> None:
    """Refuse a domain whose combinations of categories alone exceed the mechanism's ``cap`` on its cells
    or ``dpsynth_core.limits`` ``max_cells`` (each combination is at least one cell), before anything is
    allocated, with the project's message naming what to change."""
    C = combinations(domain.category_sizes)
    sizes = " × ".join(str(s) for s in domain.category_sizes)
    fix = ("declare fewer categories, merge rare ones into an 'other' category, or use pmm (its depth, not the "
           "combinations, sets its number of cells)")
    got = f"{sizes} = {C} combinations of the categorical columns {list(domain.categories)}"
    if C > cap:
        raise ValueError(
            f"The 'domain' parameter of {owner} must have at most {cap} combinations of categories ({why}; every "
            f"combination is at least one cell): {fix}. Got {got}.")
    limits.check_planned(C, "max_cells", owner=owner, param="domain", what="cells (every combination of categories "
                         "is at least one)", fix=fix, got=got)


@dataclass(frozen=True)
class MixedGrid:
    """The mixed grid of a domain with ``k`` cells per numeric axis (module docstring).

    Attributes
    ----------
    domain : Domain
    k : int
        Cells per numeric axis.
    """

    domain: Domain
    k: int

    @property
    def sizes(self) -> tuple[int, ...]:
        return self.domain.category_sizes

    @property
    def combinations(self) -> int:
        return combinations(self.sizes)

    @property
    def numeric_cells(self) -> int:
        """Cells of one combination, :math:`k^{k_{num}}`."""
        return self.k ** self.domain.k

    @property
    def cells(self) -> int:
        return self.combinations * self.numeric_cells

    def counts(self, rows) -> np.ndarray:
        """The exact cell counts of the private rows (:class:`dpsynth_core.rows.Rows`), one pass."""
        return rows.sum(mixed_grid_counts, self.k, self.domain.numeric_index, self.domain.categorical_index,
                        self.sizes)

    def sample(self, counts: np.ndarray, rng: np.random.Generator) -> pd.DataFrame:
        """``counts[c]`` rows in each cell c: numeric coordinates uniform in the cell's box, the categories
        of the cell's combination (declared labels only). A DataFrame in the domain's column order."""
        counts = np.asarray(counts, dtype=np.int64)
        dom, k, d_num = self.domain, self.k, self.domain.k
        rest = np.repeat(np.arange(counts.size, dtype=np.int64), counts)
        combo, cell = np.divmod(rest, self.numeric_cells)
        del rest
        coords = np.empty((cell.size, d_num))
        for a in range(d_num - 1, -1, -1):
            coords[:, a] = cell % k
            cell //= k
        u = rng.random(coords.shape)
        u += coords
        u /= k
        np.clip(u, 0.0, 1.0, out=u)
        E = np.empty((u.shape[0], dom.d))
        E[:, dom.numeric_index] = u
        for j, s in zip(dom.categorical_index[::-1], self.sizes[::-1], strict=True):
            E[:, j] = combo % s
            combo //= s
        return dom.from_unit(E, clip=True)  # lower + u·width may round one ulp past upper

    def describe(self) -> str:
        """One sentence for a release's notes: how the categories were handled."""
        sizes = " × ".join(f"{c} ({s})" for c, s in zip(self.domain.categories, self.sizes, strict=True))
        return (f"Categories: each of the {self.combinations} combinations of the declared categories ({sizes}) "
                f"holds its own {self.k}^{self.domain.k} numeric grid ({self.cells} cells in all); every record "
                f"is in exactly one cell, so the count noise and the privacy are those of a numeric grid; "
                f"synthetic categories are those of their cell's combination (declared values only).")
