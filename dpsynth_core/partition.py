"""Binary hierarchical partitions of the unit cube and their count trees [HVZ23, Section 4].

Level j of the partition has the :math:`2^j` cells :math:`\\Omega_\\theta`, :math:`\\theta\\in\\{0,1\\}^j`.
Level j+1 halves every level-j cell along axis :math:`j \\bmod d` (cyclic splits), so after j splits
axis a has been halved :math:`b_a(j) = \\lceil (j - a)/d \\rceil^+` times. A cell's l_inf diameter is
its longest side :math:`\\mathrm{diam}_j = 2^{-\\lfloor j/d \\rfloor}`, and
:math:`\\Delta_j = 2^j\\,\\mathrm{diam}_j`, :math:`\\Delta_{-1} := \\Delta_0 = 1` ([HVZ23, (4.1)]; docs/pmm-psmm.md, "Partition").

Cell codes are the integers :math:`\\theta = \\sum_t \\theta_t 2^{j-1-t}` (bit t is the side of the
t-th split, most significant first), so the children of cell c at level j are 2c and 2c+1 at level
j+1 — the usual heap layout, and level j's counts are pairwise sums of level j+1's.

The count tree of n points for all levels 0..r costs O(n·d + 2^r): one row-major grid index and one
``np.bincount`` at the finest level, one axis permutation (a reshape/transpose of the 2^r counts
into code order, no per-point bit interleaving), then pairwise sums up the tree.
"""

from __future__ import annotations

import numpy as np

from .validation import check_int, check_points

__all__ = [
    "MAX_DEPTH",
    "axis_bits",
    "grid_index",
    "count_tree",
    "leaf_counts",
    "cell_codes",
    "cell_bounds",
    "diameters",
    "deltas",
]

#: Deepest partition we build (2^26 leaves, 512 MiB of int64 per level).
MAX_DEPTH = 26


def axis_bits(depth: int, d: int) -> np.ndarray:
    """Number of halvings of each axis after ``depth`` cyclic splits: :math:`\\lceil (r-a)/d\\rceil^+`."""
    a = np.arange(d)
    return np.maximum(0, (depth - a + d - 1) // d)


def diameters(depth: int, d: int) -> np.ndarray:
    """l_inf diameters :math:`2^{-\\lfloor j/d\\rfloor}` of level-j cells, j = 0..depth."""
    j = np.arange(depth + 1)
    return np.ldexp(1.0, -(j // d))


def deltas(depth: int, d: int) -> np.ndarray:
    """:math:`\\Delta_{j-1}` for j = 0..depth, i.e. ``[Δ_{-1}=Δ_0, Δ_0, Δ_1, ..., Δ_{r-1}]``
    with :math:`\\Delta_j = 2^j\\,\\mathrm{diam}_j` [HVZ23, (A.4)]."""
    j = np.arange(-1, depth)
    jj = np.maximum(j, 0)
    return np.ldexp(1.0, jj - jj // d)


def _check(U, depth, owner):
    arr = check_points(U, "U", owner, min_rows=0)
    r = check_int(depth, "depth", owner, low=0, high=MAX_DEPTH)
    return arr, r


def grid_index(U: np.ndarray, depth: int) -> tuple[np.ndarray, tuple[int, ...]]:
    """Row-major index of each point's finest cell on the grid of shape ``2^{b_a}`` per axis.

    Coordinates equal to 1 fall in the last cell. Returns (index (n,), grid shape).
    """
    d = U.shape[1]
    bits = axis_bits(depth, d)
    shape = tuple(int(1 << int(b)) for b in bits)
    idx = None
    for a in range(d):
        k = shape[a]
        c = (U[:, a] * k).astype(np.int64)
        np.minimum(c, k - 1, out=c)
        idx = c if idx is None else idx * k + c
    return idx, shape


def _grid_to_code_order(hist: np.ndarray, depth: int, d: int) -> np.ndarray:
    """Reorder a flat row-major grid histogram (axis bits MSB first) into cell-code order."""
    if d == 1 or depth == 0:
        return hist
    bits = axis_bits(depth, d)
    # Dimension list of the reshaped array: axis 0's bits (MSB..LSB), then axis 1's, ...
    offsets = np.concatenate([[0], np.cumsum(bits)[:-1]])
    order = [int(offsets[t % d] + t // d) for t in range(depth)]  # split t -> (axis t%d, bit t//d)
    return np.ascontiguousarray(hist.reshape((2,) * depth).transpose(order)).reshape(-1)


def leaf_counts(U, depth: int) -> np.ndarray:
    """Counts of the :math:`2^r` finest cells in code order (O(n·d + 2^r))."""
    arr, r = _check(U, depth, "leaf_counts")
    idx, shape = grid_index(arr, r)
    hist = np.bincount(idx, minlength=int(np.prod(shape)))
    return _grid_to_code_order(hist, r, arr.shape[1])


def count_tree(U, depth: int) -> list[np.ndarray]:
    """Counts of every level of the partition, levels 0..depth.

    Parameters
    ----------
    U : array of shape (n, d), points in :math:`[0,1]^d`
    depth : int in [0, 26]

    Returns
    -------
    list of int64 arrays; element j has length :math:`2^j` and
    :math:`\\mathrm{tree}[j][\\theta] = |\\{i : U_i \\in \\Omega_\\theta\\}|`.
    """
    leaves = leaf_counts(U, depth)
    levels = [leaves]
    for _ in range(int(depth)):
        levels.append(levels[-1][0::2] + levels[-1][1::2])  # children of c are 2c, 2c+1
    return levels[::-1]


def cell_codes(U, depth: int) -> np.ndarray:
    """Code (0..2^r-1) of the level-``depth`` cell containing each point."""
    arr, r = _check(U, depth, "cell_codes")
    d = arr.shape[1]
    idx, shape = grid_index(arr, r)
    perm = _grid_to_code_order(np.arange(int(np.prod(shape)), dtype=np.int64), r, d)
    inv = np.empty_like(perm)
    inv[perm] = np.arange(perm.size, dtype=np.int64)
    return inv[idx]


def cell_bounds(level: int, d: int, codes: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Lower and upper corners, shape (len(codes), d), of level-``level`` cells (all cells by default)."""
    j = check_int(level, "level", "cell_bounds", low=0, high=MAX_DEPTH)
    dd = check_int(d, "d", "cell_bounds", low=1)
    theta = np.arange(1 << j, dtype=np.int64) if codes is None else np.asarray(codes, dtype=np.int64)
    coords = np.zeros((theta.size, dd), dtype=np.int64)
    for t in range(j):
        bit = (theta >> (j - 1 - t)) & 1
        a = t % dd
        coords[:, a] = (coords[:, a] << 1) | bit
    widths = np.ldexp(1.0, -axis_bits(j, dd))
    lower = coords * widths
    return lower, lower + widths
