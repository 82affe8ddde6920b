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

import functools
import math
from dataclasses import dataclass

import numpy as np

from .validation import check_int, check_points, param_error

__all__ = [
    "MAX_DEPTH",
    "axis_bits",
    "grid_index",
    "count_tree",
    "leaf_counts",
    "cell_codes",
    "cell_bounds",
    "grid_to_code_order",
    "diameters",
    "deltas",
    "MixedSchedule",
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


def grid_to_code_order(hist: np.ndarray, depth: int, d: int) -> np.ndarray:
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
    return grid_to_code_order(hist, r, arr.shape[1])


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
    perm = grid_to_code_order(np.arange(int(np.prod(shape)), dtype=np.int64), r, d)
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


# ------------------------------------------------------------------------------- mixed partitions
@dataclass(frozen=True)
class MixedSchedule:
    """A binary hierarchical partition of :math:`[0,1]^k \\times C_1 \\times \\dots \\times C_m`.

    Level j+1 halves every level-j cell along ``axes[j]``: a numeric axis halves the interval, a
    categorical column halves the index range of its categories (bit by bit, most significant first,
    over :math:`B_j = \\lceil \\log_2 c_j \\rceil` bits). The order is greedy in the cell diameter
    under the mixed metric :math:`\\max(\\|\\cdot\\|_\\infty, \\max_j w_j [\\cdot \\ne \\cdot])`: each split
    goes to the axis whose contribution to the diameter is largest (a numeric axis halved h times
    contributes :math:`2^{-h}`, an unresolved categorical column :math:`w_j`; ties to categorical columns,
    then to the lowest index), which is what Theorem 11 of [HVZ23] rewards (its bound grows with
    :math:`\\Delta_j = 2^j \\mathrm{diam}_j`). With unit weights the categories are resolved first, then the
    numeric axes are split cyclically as in the numeric partition.

    Category indices at or above :math:`c_j` do not exist: a cell made only of them is *structurally
    empty* (:meth:`empty`), its count is 0 for every dataset.

    Parameters
    ----------
    k : int, number of numeric axes
    sizes : tuple of int, categories per categorical column
    weights : tuple of float, the columns' category distances
    depth : int, number of levels below the root
    """

    k: int
    sizes: tuple[int, ...]
    weights: tuple[float, ...]
    depth: int

    @property
    def bits(self) -> tuple[int, ...]:
        """:math:`B_j = \\lceil \\log_2 c_j \\rceil` bits per categorical column."""
        return tuple(int(c - 1).bit_length() for c in self.sizes)

    @property
    def axes(self) -> tuple[int, ...]:
        """Axis split at each level: 0..k-1 numeric, k+j the categorical column j."""
        return _mixed_axes(self.k, self.sizes, self.weights, self.depth)

    def diameters(self) -> np.ndarray:
        """Largest cell diameter (mixed metric, unit cube) at levels 0..depth."""
        h = np.zeros(self.k, dtype=np.int64)
        t = np.zeros(len(self.sizes), dtype=np.int64)
        B = np.array(self.bits, dtype=np.int64)
        w = np.array(self.weights, dtype=float)
        out = []
        for j in range(self.depth + 1):
            num = float(np.ldexp(1.0, -int(h.min()))) if self.k else 0.0
            cat = float(w[t < B].max()) if (t < B).any() else 0.0
            out.append(max(num, cat))
            if j < self.depth:
                a = self.axes[j]
                if a < self.k:
                    h[a] += 1
                else:
                    t[a - self.k] += 1
        return np.array(out)

    def deltas(self) -> np.ndarray:
        """:math:`\\Delta_{j-1}` for j = 0..depth, :math:`\\Delta_j = 2^j\\,\\mathrm{diam}_j`,
        :math:`\\Delta_{-1} = \\Delta_0` (as :func:`deltas` for the numeric partition)."""
        diam = self.diameters()
        j = np.arange(-1, self.depth)
        jj = np.maximum(j, 0)
        return np.ldexp(diam[jj], jj)

    def splits(self) -> tuple[np.ndarray, np.ndarray]:
        """Halvings of each numeric axis and bits used of each categorical column after ``depth`` levels."""
        axes = np.array(self.axes, dtype=np.int64)
        h = np.bincount(axes[axes < self.k], minlength=self.k) if self.k else np.zeros(0, dtype=np.int64)
        t = np.bincount(axes[axes >= self.k] - self.k, minlength=len(self.sizes))
        return h.astype(np.int64), t.astype(np.int64)

    def leaf_codes(self, E: np.ndarray, num: np.ndarray, cat: np.ndarray) -> np.ndarray:
        """Leaf code of each encoded unit row (numeric unit coordinates in columns ``num``, category
        indices in columns ``cat``): bits in split order, most significant first. O(n · depth)."""
        h_total, t_total = self.splits()
        B = self.bits
        q = []
        for a in range(self.k):
            kk = 1 << int(h_total[a])
            c = (E[:, num[a]] * kk).astype(np.int64)
            np.minimum(c, kk - 1, out=c)
            q.append(c)
        for j in range(len(self.sizes)):
            q.append(E[:, cat[j]].astype(np.int64) >> (B[j] - int(t_total[j])))
        used = np.concatenate([h_total, t_total]).astype(np.int64)
        seen = np.zeros(used.size, dtype=np.int64)
        code = np.zeros(E.shape[0], dtype=np.int64)
        for a in self.axes:
            seen[a] += 1
            code = (code << 1) | ((q[a] >> (used[a] - seen[a])) & 1)
        return code

    def leaf_counts(self, E: np.ndarray, num: np.ndarray, cat: np.ndarray) -> np.ndarray:
        """Counts of the :math:`2^r` leaves (code order) of the encoded unit rows ``E``."""
        return np.bincount(self.leaf_codes(E, num, cat), minlength=1 << self.depth).astype(np.int64)

    def leaf_parts(self, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """For leaf codes: the numeric cell's lower corner (n, k) and widths (k,), and per categorical
        column the first index and the number of its indices in the leaf (each (n, m))."""
        codes = np.asarray(codes, dtype=np.int64)
        h_total, t_total = self.splits()
        prefix = np.zeros((codes.size, self.k + len(self.sizes)), dtype=np.int64)
        for step, a in enumerate(self.axes):
            bit = (codes >> (self.depth - 1 - step)) & 1
            prefix[:, a] = (prefix[:, a] << 1) | bit
        widths = np.ldexp(1.0, -h_total) if self.k else np.zeros(0)
        lower = prefix[:, : self.k] * widths
        B = np.array(self.bits, dtype=np.int64)
        shift = B - t_total
        first = prefix[:, self.k:] << shift
        span = np.broadcast_to(np.left_shift(1, shift), first.shape)
        sizes = np.array(self.sizes, dtype=np.int64)
        count = np.clip(np.minimum(first + span, sizes) - first, 0, None)
        return lower, widths, first, count

    def empty(self) -> list[np.ndarray]:
        """Structurally empty cells of every level (boolean masks, code order, read-only): cells whose
        category index range lies entirely beyond a column's declared categories.

        They depend on the schedule alone (public), so they are computed once per schedule and kept
        (:func:`_empty_levels`): a page that releases many times on the same table (the dashboard's
        membership demonstration, 17 releases at depth 18 at ε = 100) would otherwise rebuild the
        :math:`2^r` leaves' parts for each."""
        return list(_empty_levels(self))

    def _empty_uncached(self) -> tuple[np.ndarray, ...]:
        _, _, _, count = self.leaf_parts(np.arange(1 << self.depth, dtype=np.int64))
        leaf = (count == 0).any(axis=1) if count.shape[1] else np.zeros(1 << self.depth, dtype=bool)
        levels = [leaf]
        for _ in range(self.depth):
            levels.append(levels[-1][0::2] & levels[-1][1::2])
        for mask in levels:
            mask.flags.writeable = False  # shared by every release on this schedule
        return tuple(levels[::-1])


@functools.lru_cache(maxsize=8)
def _empty_levels(schedule: MixedSchedule) -> tuple[np.ndarray, ...]:
    """:meth:`MixedSchedule.empty`'s masks, kept for the last few schedules (a frozen, hashable record;
    at most 8 kept: one mask per cell of every level, :math:`2^{r+1}` bytes at depth r)."""
    return schedule._empty_uncached()


@functools.cache
def _mixed_axes(k: int, sizes: tuple[int, ...], weights: tuple[float, ...], depth: int) -> tuple[int, ...]:
    B = [int(c - 1).bit_length() for c in sizes]
    h = [0] * k
    t = [0] * len(sizes)
    axes = []
    for _ in range(depth):
        best, best_key = None, None
        for j in range(len(sizes)):
            if t[j] < B[j]:
                key = (weights[j], 1, -j)
                if best_key is None or key > best_key:
                    best, best_key = k + j, key
        for a in range(k):
            key = (math.ldexp(1.0, -h[a]), 0, -a)
            if best_key is None or key > best_key:
                best, best_key = a, key
        if best is None:  # every category resolved and no numeric axis: nothing left to split
            raise param_error("MixedSchedule", "depth", f"at most {sum(B)} (the categories' bits; no numeric "
                              "axis to split further)", depth)
        axes.append(best)
        if best < k:
            h[best] += 1
        else:
            t[best - k] += 1
    return tuple(axes)
