"""Regular grids on the unit cube: cell indices, centres, rounding a measure to points, sampling.

Shared by the grid mechanisms (PSMM, the flat histogram, the Haar walk). Cells of the
``k^d`` grid are indexed row-major (axis 0 most significant).
"""

from __future__ import annotations

import numpy as np

from .validation import check_int

__all__ = ["grid_counts", "cell_centres", "cell_of", "largest_remainder", "points_in_cells", "default_cells_per_axis"]


def cell_of(U: np.ndarray, k: int) -> np.ndarray:
    """Row-major index of each point's cell in the ``k^d`` grid (points on the upper face go in the last cell)."""
    idx = np.zeros(U.shape[0], dtype=np.int64)
    for a in range(U.shape[1]):
        c = (U[:, a] * k).astype(np.int64)
        np.clip(c, 0, k - 1, out=c)
        idx = idx * k + c
    return idx


def grid_counts(U: np.ndarray, k: int) -> np.ndarray:
    """Counts of the ``k^d`` cells, flat row-major, int64."""
    kk = check_int(k, "k", "grid_counts", low=1)
    return np.bincount(cell_of(U, kk), minlength=kk ** U.shape[1]).astype(np.int64)


def cell_centres(k: int, d: int) -> np.ndarray:
    """Centres ``(2i+1)/(2k)`` of the ``k^d`` cells, shape (k^d, d), row-major."""
    ticks = (np.arange(k) + 0.5) / k
    mesh = np.meshgrid(*([ticks] * d), indexing="ij")
    return np.stack([m.ravel() for m in mesh], axis=1)


def largest_remainder(weights: np.ndarray, m: int) -> np.ndarray:
    """Integer counts summing to ``m`` proportional to non-negative ``weights`` (Hamilton's method).

    Each count is ``floor(m w_i / Σw)`` plus one for the largest remainders (ties to the smallest index),
    so every count is within 1 of its exact share.
    """
    w = np.asarray(weights, dtype=float)
    total = w.sum()
    if m <= 0 or total <= 0:
        return np.zeros(w.shape, dtype=np.int64)
    exact = w * (m / total)
    base = np.floor(exact).astype(np.int64)
    short = int(m - base.sum())
    if short > 0:
        rem = exact - base
        order = np.argsort(-rem, kind="stable")[:short]
        base[order] += 1
    return base


def points_in_cells(counts: np.ndarray, k: int, d: int, rng: np.random.Generator, placement: str = "uniform") -> np.ndarray:
    """``counts[c]`` points in each cell c of the ``k^d`` grid, uniform in the cell or at its centre.

    Returns an array of shape (Σ counts, d) in the unit cube, rows in cell order.
    """
    counts = np.asarray(counts, dtype=np.int64)
    rest = np.repeat(np.arange(counts.size, dtype=np.int64), counts)
    coords = np.empty((rest.size, d))
    for a in range(d - 1, -1, -1):
        coords[:, a] = rest % k
        rest //= k
    del rest
    if placement != "uniform":
        coords += 0.5
        coords /= k
        return coords
    # in place, two (m, d) arrays at most: offset + coords is the same float sum as coords + offset
    out = rng.random(coords.shape)
    out += coords
    del coords
    out /= k
    return out


def default_cells_per_axis(n: int, epsilon: float, d: int, *, cap_cells: int = 2**16) -> int:
    """``k`` with ``k^d ≈ ε n`` (the choice m ≈ εn cells of [HVZ23, Corollary 8]), at least 1,
    with at most ``cap_cells`` cells in total."""
    k = max(1, min(int(round(max(epsilon * n, 1.0) ** (1.0 / d))), int(cap_cells ** (1.0 / d)) + 1))
    while k > 1 and k**d > cap_cells:  # at most one or two steps after the min above
        k -= 1
    return k
