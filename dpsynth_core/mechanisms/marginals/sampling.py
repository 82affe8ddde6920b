"""Sampling: from the fitted coarse joint and the noisy fine 1-way tables to synthetic rows.

1. ``m`` coarse cells from the model (``model.sample``: largest-remainder counts in random order).
2. Per column and coarse bin, the fine bins' masses: the noisy fine counts of that coarse bin projected
   onto {x >= 0, Σx = the model's mass of the coarse bin} in the Euclidean norm (:func:`simplex_projection`,
   the least-squares non-negative fit to the noisy counts given the coarse mass; negative noise in empty
   bins is removed rather than clipped into mass). The rows of a coarse bin then get fine bins by
   largest remainder of those masses, in random order (so within a coarse cell the columns' fine bins
   are independent).
3. A value in its fine bin: uniform in the bin for a numeric column; the whole value for an integer column
   with one bin per value, a uniformly drawn whole value of the bin's run otherwise; the category.

Everything here is post-processing of the noisy tables and public inputs.
"""

from __future__ import annotations

import numpy as np

from ...grid import largest_remainder
from .tables import Column, Layout

__all__ = ["simplex_projection", "fine_masses", "draw_rows"]


def simplex_projection(v: np.ndarray, total: float) -> np.ndarray:
    """The Euclidean projection of ``v`` onto {x >= 0, Σx = total} (zero when total <= 0).

    The sort-based algorithm (Held, Wolfe, Crowder 1974; Duchi et al. 2008): x = max(v - τ, 0) with τ the
    threshold that makes the sum right. Written here because SciPy has no simplex projection."""
    v = np.asarray(v, dtype=float)
    if total <= 0 or v.size == 0:
        return np.zeros_like(v)
    u = np.sort(v)[::-1]
    css = np.cumsum(u) - total
    ind = np.arange(1, v.size + 1)
    ok = np.flatnonzero(u - css / ind > 0)
    r = int(ok[-1]) + 1 if ok.size else 1
    return np.maximum(v - css[r - 1] / r, 0.0)


def fine_masses(col: Column, noisy_fine: np.ndarray, coarse_mass: np.ndarray) -> np.ndarray:
    """The fine bins' masses of one column: per coarse bin, the simplex projection of its noisy fine counts
    onto the coarse bin's mass (step 2 of the module docstring)."""
    out = np.zeros(col.fine)
    for b in range(col.coarse):
        sel = col.to_coarse == b
        out[sel] = simplex_projection(noisy_fine[sel], float(coarse_mass[b]))
    return out


def _fine_bins(col: Column, coarse: np.ndarray, masses: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A fine bin for each row, given its coarse bin: largest remainder of the bin's fine masses."""
    out = np.empty(coarse.size, dtype=np.int64)
    for b in range(col.coarse):
        rows = np.flatnonzero(coarse == b)
        if rows.size == 0:
            continue
        sel = np.flatnonzero(col.to_coarse == b)
        w = masses[sel]
        if not w.sum() > 0:
            w = np.ones(sel.size)
        picks = np.repeat(sel, largest_remainder(w, rows.size))
        out[rows] = picks[rng.permutation(rows.size)]
    return out


def _values(col: Column, fine: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Unit coordinates (categorical: codes) of rows in the given fine bins (step 3)."""
    if col.kind == "categorical":
        return fine.astype(float)
    if col.kind == "integer":
        if col.one_per_value:
            return col.unit_of_value(col.first + fine)
        lo, hi = col.starts[fine], col.starts[fine + 1]
        pick = lo + np.floor(rng.random(fine.size) * (hi - lo)).astype(np.int64)
        return col.unit_of_value(col.first + np.minimum(pick, hi - 1))
    return (fine + rng.random(fine.size)) / col.fine


def draw_rows(layout: Layout, cells: np.ndarray, masses: list[np.ndarray], rng: np.random.Generator) -> np.ndarray:
    """Rows in unit coordinates (categorical columns as codes) from coarse cells (m, d) and each column's
    fine masses."""
    out = np.empty(cells.shape, dtype=float)
    for j, col in enumerate(layout.columns):
        fine = _fine_bins(col, cells[:, j], masses[j], rng)
        out[:, j] = _values(col, fine, rng)
    return out
