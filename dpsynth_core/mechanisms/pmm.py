"""Private Measure Mechanism (PMM): He, Vershynin, Zhu [HVZ23, Algorithms 3–4].

The unit cube is split by the binary hierarchical partition of :mod:`dpsynth_core.partition`
(level j+1 halves every level-j cell along axis ``j mod d``). Every count of levels 0..r receives
integer noise :math:`\\lambda_\\theta \\sim \\mathrm{Lap}_\\mathbb{Z}(\\sigma_j)`, the noisy counts are
clipped at 0 and made consistent top-down (Algorithm 3), and :math:`m_\\theta` points are placed in
each leaf (Algorithm 4).

Privacy ([HVZ23, Theorem 9]; docs/privacy-model.md §2)
    add/remove: one count per level moves by 1, :math:`\\varepsilon = \\sum_{j=0}^r 1/\\sigma_j`.
    replace: n is public, the root count is released exactly and two counts per level j >= 1 move
    by 1, :math:`\\varepsilon = \\sum_{j=1}^r 2/\\sigma_j`.

Noise split (A.4, generalised to the noised levels J and the sensitivity s)
    :math:`\\sigma_j = s\\,S/(\\varepsilon\\sqrt{\\Delta_{j-1}})`, :math:`S = \\sum_{j\\in J}\\sqrt{\\Delta_{j-1}}`,
    the minimiser of Theorem 10's bound under the budget :math:`\\sum_{j\\in J} s/\\sigma_j = \\varepsilon`.

Depth
    ``depth_rule="paper"`` is Corollary 12 (:math:`r = \\log_2(\\varepsilon n)` rounded, minus one
    for d = 1). The default ``"auto"`` (:func:`default_depth`) comes from the depth study in
    ``benchmarks/depth_study.py`` (exact W1, 42 settings of n, ε, d and data shape): Corollary 12's
    depth is the rate-optimal order but too deep in 2-D at moderate n, where leaf noise swamps leaf
    counts; in 5-D and 6-D the defaults study (``benchmarks/defaults_study.py``) found one level deeper
    than Corollary 12 best, where each axis is otherwise split only r/d times.

Consistency
    ``"least_squares"`` (default) is the generalised least-squares estimate of the whole tree ([HRMS10],
    with per-level variances: an exact two-pass O(2^r) algorithm),
    rounded to integers and then made consistent by the top-down comparable map. It is
    post-processing (no privacy cost) and lowered W1 against the proportional map in the depth study
    (each map at its best depth; benchmarks/results/pmm_depth_study.json,
    "least_squares_vs_proportional"), but Theorem 10's proof (Lemma 17) covers the paper's maps only:
    ``"proportional"`` and ``"uniform"`` (Section 4.2), kept as options.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import limits, partition
from ..domain import Domain
from ..grid import largest_remainder
from ..noise import discrete_laplace
from ..privacy import Ledger, SizeEstimate, count_sensitivity, resolve_size
from ..theory import (
    DEPTH_RULES,
    MAX_PMM_DEPTH,
    BoundKind,
    Theory,
    mixed_depth,
    mixed_theorem11,
    pmm_resolution,
    pmm_theorem10,
    pmm_theorem11,
    resolve_depth,
)
from ..validation import param_error
from .contract import Config, Prepared, mechanism, n_public_param, param
from .release import OwnerView, Release, Trace

__all__ = [
    "pmm",
    "PMMConfig",
    "PMMTrace",
    "PMMOwner",
    "NOISE_SPLITS",
    "CONSISTENCY",
    "PLACEMENTS",
    "level_sigmas",
    "dlaplace_variance",
    "add_level_noise",
    "consistent_counts",
    "least_squares_tree",
    "comparable_split",
]

OWNER = "pmm"
NOISE_SPLITS = ("optimal", "uniform")
CONSISTENCY = ("proportional", "uniform", "least_squares")
PLACEMENTS = ("uniform", "center")
# ------------------------------------------------------------------------------------------ noise
def level_sigmas(depth: int, d: int, epsilon: float, *, split: Any = "optimal",
                 neighbours: str = "add_remove", deltas: np.ndarray | None = None) -> np.ndarray:
    """Noise scales :math:`\\sigma_0..\\sigma_r` spending exactly ``epsilon`` (Theorem 9).

    .. math:: \\sigma_j = \\frac{s\\,S}{\\varepsilon\\sqrt{w_j}}, \\quad S = \\sum_{j \\in J}\\sqrt{w_j}
              \\quad\\Rightarrow\\quad \\sum_{j\\in J} s/\\sigma_j = \\varepsilon

    Parameters
    ----------
    depth : int >= 0
    d : int >= 1
    epsilon : float > 0
        Budget of the tree.
    split : "optimal", "uniform" or sequence of depth+1 positive floats
        "optimal": A.4, :math:`w_j = \\Delta_{j-1}` (minimises Theorem 10's bound);
        "uniform": all noised levels share the budget equally;
        a sequence: the *shape* of the scales, :math:`\\sigma_j \\propto` ``split[j]``, rescaled to spend
        exactly ``epsilon`` (so that :math:`\\sigma_j = c\\,\\mathrm{split}_j`).
    neighbours : "add_remove" (s = 1, levels J = 0..r) or "replace" (s = 2, J = 1..r, root exact).
    deltas : array (depth+1,), optional
        :math:`\\Delta_{j-1}` of another partition (a mixed one, :class:`~dpsynth_core.partition.MixedSchedule`);
        default the numeric partition's.

    Returns
    -------
    ndarray (depth+1,); entry 0 is 0.0 under replace (the root count is exact: no noise).

    References
    ----------
    .. [HVZ23] Y. He, R. Vershynin, Y. Zhu. Algorithmically Effective Differentially Private Synthetic Data. COLT 2023.
       See docs/references.md.
    """
    s = count_sensitivity(neighbours)
    first = 0 if neighbours == "add_remove" else 1
    sig = np.zeros(depth + 1)
    if depth + 1 - first <= 0:
        return sig  # replace at depth 0: only the (public) root, nothing is noised
    if isinstance(split, str):
        if split == "optimal":
            w = (partition.deltas(depth, d) if deltas is None else np.asarray(deltas, dtype=float))[first:]
            root_w = np.sqrt(w)
            sig[first:] = s * root_w.sum() / (epsilon * root_w)
        else:  # uniform
            sig[first:] = s * (depth + 1 - first) / epsilon
        return sig
    shape = np.asarray(split, dtype=float)[first:]
    c = s * np.sum(1.0 / shape) / epsilon
    sig[first:] = c * shape
    return sig


def dlaplace_variance(sigma: np.ndarray | float) -> np.ndarray:
    """Variance of :math:`\\mathrm{Lap}_\\mathbb{Z}(\\sigma)`: :math:`2p/(1-p)^2`, :math:`p = e^{-1/\\sigma}`
    (0 for sigma = 0, an exact count)."""
    s = np.asarray(sigma, dtype=float)
    out = np.zeros_like(s)
    pos = s > 0
    p = np.exp(-1.0 / s[pos])
    out[pos] = 2.0 * p / (-np.expm1(-1.0 / s[pos])) ** 2
    return out


def add_level_noise(levels: Sequence[np.ndarray], sigmas: np.ndarray, rng: np.random.Generator) -> list[np.ndarray]:
    """Raw noisy counts :math:`n_\\theta + \\lambda_\\theta`, :math:`\\lambda_\\theta \\sim \\mathrm{Lap}_\\mathbb{Z}(\\sigma_j)`
    i.i.d. (Algorithm 4, "Add noise"); levels with :math:`\\sigma_j = 0` are returned exactly.

    ``levels[j]`` may have any leading batch shape ``(..., 2^j)`` (tests draw many copies at once).
    """
    out = []
    for c, s in zip(levels, sigmas, strict=True):
        c = np.asarray(c, dtype=np.int64)
        out.append(c.copy() if s == 0 else c + discrete_laplace(float(s), c.shape, rng))
    return out


# ------------------------------------------------------------------------------------ consistency
def comparable_split(m: np.ndarray, a: np.ndarray, b: np.ndarray, method: str) -> np.ndarray:
    """First child of the comparable split of ``m`` given the non-negative integer pair ``(a, b)``.

    Returns integer ``x`` with ``(x, m - x)`` on the line :math:`L(m)`, non-negative, and comparable
    with ``(a, b)``: :math:`x \\ge a, m - x \\ge b` when :math:`m \\ge a + b` (deficit) and
    :math:`x \\le a, m - x \\le b` otherwise (Algorithm 3).

    * ``"proportional"``: :math:`x = \\mathrm{round}(m\\,a/(a+b))` (halves rounded up), even split
      (:math:`\\lfloor m/2 \\rfloor`) when :math:`a + b = 0`.
    * ``"uniform"``: the nearest point of :math:`\\mathbb{Z}^2_+ \\cap L(m)` in the Euclidean metric,
      :math:`x = (m + a - b)/2` rounded down on ties, clipped to [0, m].

    Both are finally clamped to the comparable interval
    :math:`[\\max(0, \\min(a, m-b)), \\min(m, \\max(a, m-b))]` (never empty); for integer inputs the
    clamp is a no-op (proved in the module docstring of the tests), it only guards overflow paths.
    """
    m = np.asarray(m, dtype=np.int64)
    a = np.asarray(a, dtype=np.int64)
    b = np.asarray(b, dtype=np.int64)
    if method == "uniform":
        x = (m + a - b) >> 1  # floor((m + a - b) / 2)
    else:
        s = a + b
        # m·a is an exact int64 product (counts < 2^31); one correctly rounded division then makes the
        # half-way cases exact. Beyond that float64 is monotone and the clamp restores comparability.
        safe = int(m.max(initial=0)) < (1 << 31) and int(a.max(initial=0)) < (1 << 31)
        prod = m * a if safe else m.astype(float) * a
        x = np.floor(prod / np.maximum(s, 1) + 0.5).astype(np.int64)
        even = s == 0
        if even.any():
            x[even] = (m[even] if m.shape == x.shape else np.broadcast_to(m, x.shape)[even]) >> 1
    lo = np.minimum(a, m - b)
    np.maximum(lo, 0, out=lo)
    hi = np.maximum(a, m - b)
    np.minimum(hi, m, out=hi)
    np.maximum(x, lo, out=x)
    np.minimum(x, hi, out=x)
    return x


def _interleave(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    out = np.empty(x.shape[:-1] + (2 * x.shape[-1],), dtype=np.int64)
    out[..., 0::2] = x
    out[..., 1::2] = y
    return out


def _top_down(inputs: Sequence[np.ndarray], root: np.ndarray, method: str,
              empty: Sequence[np.ndarray] | None = None) -> list[np.ndarray]:
    """Algorithm 3: ``m_root = root``; at every node split ``m_θ`` comparably with the children's inputs.

    ``empty`` (mixed partitions): structurally empty cells per level; a node with one empty child
    gives all its count to the other (an empty cell holds no point of any dataset)."""
    out = [np.asarray(root, dtype=np.int64)]
    for j in range(len(inputs) - 1):
        child = inputs[j + 1]
        a, b = child[..., 0::2], child[..., 1::2]
        m = out[j]
        x = comparable_split(m, a, b, method)
        if empty is not None:
            x = np.where(empty[j + 1][1::2], m, np.where(empty[j + 1][0::2], 0, x))
        out.append(_interleave(x, m - x))
    return out


def least_squares_tree(noisy: Sequence[np.ndarray], variances: np.ndarray) -> list[np.ndarray]:
    """Generalised least-squares estimate of the count tree ([HRMS10], per-level variances).

    .. math:: \\hat x = \\arg\\min_{x \\text{ consistent}} \\sum_\\theta (y_\\theta - x_\\theta)^2 / v_{j(\\theta)}

    Two passes, O(2^r): bottom-up, the best subtree estimate
    :math:`z_\\theta = (y_\\theta V_c + (z_{\\theta0} + z_{\\theta1}) v_j)/(v_j + V_c)` with
    :math:`V_c = 2V_{j+1}`, :math:`V_j = v_j V_c/(v_j + V_c)`; top-down, the parent's surplus
    :math:`\\hat x_\\theta - z_{\\theta 0} - z_{\\theta 1}` is shared equally by the two children (equal
    variances within a level). A level with variance 0 (the exact root under replace) is kept exactly.
    Leading batch dimensions are allowed.

    Returns
    -------
    list of float arrays, consistent (:math:`\\hat x_\\theta = \\hat x_{\\theta0} + \\hat x_{\\theta1}`).

    References
    ----------
    .. [HRMS10] M. Hay, V. Rastogi, G. Miklau, D. Suciu. Boosting the Accuracy of Differentially Private Histograms Through Consistency. PVLDB 3(1), 2010.
       See docs/references.md.
    """
    r = len(noisy) - 1
    v = np.asarray(variances, dtype=float)
    z = [None] * (r + 1)
    z[r] = np.asarray(noisy[r], dtype=float)
    V = v[r]
    for j in range(r - 1, -1, -1):
        zc = z[j + 1][..., 0::2] + z[j + 1][..., 1::2]
        Vc = 2.0 * V
        y = np.asarray(noisy[j], dtype=float)
        if v[j] == 0.0:
            z[j], V = y, 0.0
        elif Vc == 0.0:
            z[j], V = zc, 0.0
        else:
            z[j] = (y * Vc + zc * v[j]) / (v[j] + Vc)
            V = v[j] * Vc / (v[j] + Vc)
    x = [z[0]]
    for j in range(r):
        zj = z[j + 1]
        half = (x[j] - zj[..., 0::2] - zj[..., 1::2]) / 2.0
        xx = np.empty_like(zj)
        xx[..., 0::2] = zj[..., 0::2] + half
        xx[..., 1::2] = zj[..., 1::2] + half
        x.append(xx)
    return x


def masked_least_squares_tree(noisy: Sequence[np.ndarray], variances: np.ndarray,
                              empty: Sequence[np.ndarray]) -> list[np.ndarray]:
    """:func:`least_squares_tree` with cells known to be exactly 0 (the structurally empty cells of a
    mixed partition: variance 0 per cell).

    The same two passes with per-cell variances: bottom-up
    :math:`z_\\theta = (y_\\theta V_c + z_c v_\\theta)/(v_\\theta + V_c)`, :math:`V_c = V_{\\theta0} + V_{\\theta1}`,
    :math:`V_\\theta = v_\\theta V_c/(v_\\theta + V_c)`; top-down the parent's surplus is shared in proportion
    to the children's variances :math:`V_{\\theta0}, V_{\\theta1}` (equal halves when they are equal; an
    exact child gets none), which is the generalised least-squares solution for independent cells.
    """
    r = len(noisy) - 1
    v = [np.where(empty[j], 0.0, float(variances[j])) for j in range(r + 1)]
    z: list = [None] * (r + 1)
    V: list = [None] * (r + 1)
    z[r] = np.where(empty[r], 0.0, np.asarray(noisy[r], dtype=float))
    V[r] = v[r]
    for j in range(r - 1, -1, -1):
        zc = z[j + 1][0::2] + z[j + 1][1::2]
        Vc = V[j + 1][0::2] + V[j + 1][1::2]
        y = np.where(empty[j], 0.0, np.asarray(noisy[j], dtype=float))
        tot = v[j] + Vc
        safe = np.where(tot > 0, tot, 1.0)
        z[j] = np.where(v[j] == 0.0, y, np.where(Vc == 0.0, zc, (y * Vc + zc * v[j]) / safe))
        V[j] = np.where(tot > 0, v[j] * Vc / safe, 0.0)
    x = [z[0]]
    for j in range(r):
        zl, zr = z[j + 1][0::2], z[j + 1][1::2]
        Vl, Vr = V[j + 1][0::2], V[j + 1][1::2]
        Vs = Vl + Vr
        share = np.where(Vs > 0, Vl / np.where(Vs > 0, Vs, 1.0), 0.5)
        surplus = x[j] - zl - zr
        out = np.empty_like(z[j + 1])
        out[0::2] = zl + share * surplus
        out[1::2] = zr + (1.0 - share) * surplus
        x.append(np.where(empty[j + 1], 0.0, out))
    return x


def consistent_counts(noisy: Sequence[np.ndarray], sigmas: np.ndarray, method: str = "proportional",
                      empty: Sequence[np.ndarray] | None = None):
    """Clip the raw noisy counts and make them consistent (Algorithm 3 or least squares + Algorithm 3).

    Parameters
    ----------
    noisy : list of int arrays, ``noisy[j]`` of shape (..., 2^j): raw noisy counts :math:`n_\\theta+\\lambda_\\theta`
    sigmas : array (r+1,), the noise scales (0 = exact level)
    method : "proportional", "uniform" or "least_squares"

    Returns
    -------
    clipped : list of int arrays, :math:`n'_\\theta = (n_\\theta + \\lambda_\\theta)_+`
    consistent : list of int arrays :math:`m_\\theta`, non-negative, :math:`m_\\theta = m_{\\theta0} + m_{\\theta1}`
    inputs : list of int arrays the comparable map was applied to (``clipped`` for the paper's
        maps; the rounded non-negative least-squares counts for ``"least_squares"``)
    ls : list of float arrays (least-squares estimates) or None

    ``empty`` (mixed partitions): structurally empty cells per level, whose counts are 0 for every
    dataset: their noisy values are replaced by 0 (public knowledge, post-processing) and they keep 0.
    """
    if empty is not None:
        noisy = [np.where(e, 0, c) for c, e in zip(noisy, empty, strict=True)]
    clipped = [np.maximum(c, 0) for c in noisy]
    if method == "least_squares":
        variances = dlaplace_variance(sigmas)
        ls = (least_squares_tree(noisy, variances) if empty is None
              else masked_least_squares_tree(noisy, variances, empty))
        inputs = [np.maximum(np.rint(t), 0).astype(np.int64) for t in ls]
        return clipped, _top_down(inputs, inputs[0], "proportional", empty), inputs, ls
    return clipped, _top_down(clipped, clipped[0], method, empty), clipped, None


# ------------------------------------------------------------------------------------------ output
def _leaf_lower_corners(depth: int, d: int, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Lower corners (len(codes), d) of level-``depth`` cells and the cell widths (d,).

    O(2^r) through the code <-> row-major grid permutation, instead of a loop over the r bits."""
    bits = partition.axis_bits(depth, d)
    widths = np.ldexp(1.0, -bits)
    if d == 1 or depth == 0:
        grid_idx = codes
    else:
        perm = partition.grid_to_code_order(np.arange(1 << depth, dtype=np.int64), depth, d)
        grid_idx = perm[codes]  # code c -> row-major grid index
    coords = np.empty((codes.size, d), dtype=np.int64)
    rest = np.asarray(grid_idx, dtype=np.int64).copy()
    for a in range(d - 1, -1, -1):
        coords[:, a] = rest & ((1 << int(bits[a])) - 1)
        rest >>= int(bits[a])
    return coords * widths, widths


def _sample_leaves(leaf_counts: np.ndarray, depth: int, domain, placement: str, rng: np.random.Generator):
    """``m_θ`` points in each leaf, uniform in the leaf or at its centre, directly in domain units.

    Returns (synthetic (m, d), leaf code of each row (int32), rows in leaf-code order)."""
    d = domain.d
    occ = np.flatnonzero(leaf_counts)
    cnt = leaf_counts[occ]
    m = int(cnt.sum())
    lower, widths = _leaf_lower_corners(depth, d, occ)
    scale = widths * domain.widths  # leaf side in domain units
    if placement == "uniform":
        out = rng.random((m, d))
    else:
        out = np.full((m, d), 0.5)
    upper = domain.upper_array
    for a in range(d):  # column-wise in place: 1-D loops, no (m, d) temporaries
        col = out[:, a]
        col *= scale[a]
        col += np.repeat(domain.lower[a] + lower[:, a] * domain.widths[a], cnt)
        # lower + non-negative terms never falls below lower in floating point; only the upper face
        # can be crossed, by one rounding
        if m and col.max() > upper[a]:
            np.minimum(col, upper[a], out=col)
    codes = np.repeat(occ.astype(np.int32), cnt)
    return out, codes


def _coded_leaf_counts(arr: np.ndarray, domain, depth: int) -> tuple[np.ndarray, int]:
    """Leaf counts (cell-code order) of the rows of ``arr`` (domain units) and the number of rows clamped.

    Bit-for-bit the same cells as ``partition.leaf_counts(domain.to_unit(arr), depth)`` — per axis
    :math:`u = (x - \\mathrm{lower})/\\mathrm{width}`, clamped to [0, 1], cell :math:`\\min(\\lfloor u k\\rfloor, k-1)`
    — but one axis at a time, without materialising the (n, d) unit-cube copy: O(n d) time and
    three n-vectors of working memory."""
    n, d = arr.shape
    bits = partition.axis_bits(depth, d)
    lo, hi, w = domain.lower_array, domain.upper_array, domain.widths
    idx = None
    outside = None
    for a in range(d):
        k = 1 << int(bits[a])
        u = arr[:, a] - lo[a] if lo[a] != 0.0 else arr[:, a].copy()
        mant, _ = math.frexp(w[a])
        if mant == 0.5:
            # width a power of two: (x - lo)/w·k = (x - lo)·(k/w) exactly, one pass saved
            u *= k / w[a]
            top = float(k)
        else:
            u /= w[a]
            top = 1.0
        umin, umax = (float(u.min()), float(u.max())) if n else (0.0, 0.0)
        bad = (arr[:, a] < lo[a]) | (arr[:, a] > hi[a])  # counted as the numbers are (clamping.clamping's rule)
        if bad.any():
            outside = bad if outside is None else (outside | bad)
        if umin < 0.0 or umax > top:
            np.clip(u, 0.0, top, out=u)
        if k == 1:
            continue
        if top == 1.0:
            u *= k
        c = u.astype(np.int64)
        del u
        if umax >= top:  # only u == 1 (after clamping) lands on index k
            np.minimum(c, k - 1, out=c)
        if idx is None:
            idx = c
        else:
            idx *= k
            idx += c
            del c
    n_clamped = 0 if outside is None else int(outside.sum())
    if idx is None:
        return np.array([n], dtype=np.int64), n_clamped
    hist = np.bincount(idx, minlength=1 << depth)
    return partition.grid_to_code_order(hist, depth, d), n_clamped


def _compact(levels: Sequence[np.ndarray]) -> list[np.ndarray]:
    """int32 copies when every value fits (halves the trace), int64 otherwise."""
    lim = np.iinfo(np.int32)
    out = []
    for c in levels:
        if c.size and (c.max() > lim.max or c.min() < lim.min):
            out.append(np.asarray(c, dtype=np.int64))
        else:
            out.append(c.astype(np.int32))
    return out


# ---------------------------------------------------------------------------------------- mechanism
def _check_noise(value: Any, owner: str) -> Any:
    """``noise``: one of :data:`NOISE_SPLITS`, or a sequence of 1 to 25 positive relative scales."""
    if isinstance(value, str):
        if value not in NOISE_SPLITS:
            raise param_error(owner, "noise", "one of " + ", ".join(repr(c) for c in NOISE_SPLITS), value)
        return value
    try:
        shape = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise param_error(owner, "noise", "'optimal', 'uniform' or a sequence of positive floats", value,
                          kind=TypeError) from None
    if shape.ndim != 1 or shape.size < 1 or shape.size > MAX_PMM_DEPTH + 1:
        raise param_error(owner, "noise", f"'optimal', 'uniform' or a sequence of 1 to {MAX_PMM_DEPTH + 1} "
                          "positive floats", value)
    if not np.all(np.isfinite(shape)) or np.any(shape <= 0):
        raise param_error(owner, "noise", "a sequence of finite positive floats", value)
    return shape


@dataclass(frozen=True)
class PMMConfig(Config):
    """PMM's parameters. ``noise`` is a split name or (Python API) an array of depth+1 relative scales."""

    depth: int | None = param(
        "int", None, "Depth r of the binary partition (2^r leaves; time O(nd + 2^r), memory O(2^r)). Default: the "
        "depth rule below, from the public or noisy n; with a sequence of noise scales, its length - 1.", low=0,
        high=MAX_PMM_DEPTH)
    depth_rule: str = param(
        "choice", "auto", "How the default depth is chosen from (n, ε, d): 'auto' = rule dpsynth_core.defaults.pmm_depth "
        "of the depth study (d = 2, 3) and the defaults study (d = 4-6; benchmarks/defaults_study.py, docs/defaults.md): "
        "with least squares Corollary 12's depth minus 1 level in 2-D, Corollary 12's depth in 3-D and 4-D, plus 1 level "
        "in 5-D and 6-D; the bound-minimising depth in 1-D; at most 16; 'paper' = Corollary 12, r = log2(εn) (−1 for d = 1); 'bound' = the depth minimising Theorem 11's "
        "bound.", choices=DEPTH_RULES)
    noise: Any = param(
        "choice", "optimal", "Split of ε across levels: 'optimal' = A.4, σ_j ∝ 1/√Δ_{j−1} (minimises Theorem 10); "
        "'uniform' = the same σ on every level. The Python API also takes a sequence of depth+1 relative scales, "
        "rescaled to spend exactly the tree's ε (the first is ignored under replace: the root is exact).",
        choices=NOISE_SPLITS, check=_check_noise)
    consistency: str = param(
        "choice", "least_squares", "Making noisy counts consistent: 'least_squares' (default: the tree estimate of "
        "Hay et al. [HRMS10], then the comparable integer rounding; lower W1 in the depth study, "
        "benchmarks/results/pmm_depth_study.json; but Theorem 10's proof does not cover it), or the paper's "
        "comparable maps (Algorithm 3) 'proportional' and 'uniform'.", choices=CONSISTENCY)
    placement: str = param(
        "choice", "uniform", "Where the m_θ points of a leaf go: uniformly at random in the leaf, or at its centre "
        "(Algorithm 4 allows any choice).",
        choices=PLACEMENTS, advanced=True)
    n_public: int | None = n_public_param(
        "Public dataset size for the depth rule and the bound; without it (add/remove) 5% of ε buys a noisy size "
        "when one is needed.")

    @property
    def shape(self) -> np.ndarray | None:
        """The relative noise scales, when ``noise`` is a sequence."""
        return None if isinstance(self.noise, str) else np.asarray(self.noise, dtype=float)

    @property
    def split(self) -> str:
        """The split's name: "optimal", "uniform" or "given" (a sequence)."""
        return self.noise if isinstance(self.noise, str) else "given"

    def check_domain(self, domain, owner: str) -> None:
        super().check_domain(domain, owner)
        if self.depth is not None and self.shape is not None and self.shape.size != self.depth + 1:
            raise param_error(owner, "noise", f"a sequence of depth + 1 = {self.depth + 1} scales", self.noise)


@dataclass(frozen=True)
class PMMTrace(Trace):
    """PMM's intermediates (all DP). Count lists: level j has 2^j entries in cell-code order
    (:mod:`dpsynth_core.partition`; cell bounds of level j: ``partition.cell_bounds(j, d)``).
    ``leaf_codes`` is the leaf of every synthetic row; ``ls_estimates``/``ls_rounded`` are set with
    least-squares consistency only."""

    depth: int
    d: int
    consistency: str
    sigmas: np.ndarray
    level_epsilons: np.ndarray
    diameters: np.ndarray
    deltas: np.ndarray
    split_axes: np.ndarray
    noisy_counts: list
    clipped_counts: list
    consistent_counts: list
    leaf_codes: np.ndarray
    ls_estimates: list | None = None
    ls_rounded: list | None = None

    @property
    def noise_scales(self) -> np.ndarray:
        """σ_j per level, NaN for a level released exactly (the root under replace): what a picture draws."""
        sig = np.asarray(self.sigmas, dtype=float)
        return np.where(sig > 0, sig, np.nan)

    def level_cells(self, level: int, domain: Domain) -> tuple[np.ndarray, np.ndarray]:
        """Lower and upper corners (unit cube) of the numeric part of every cell of ``level``, in cell-code order,
        on the release's ``domain``; on a domain with categorical columns the numeric part of each cell of the
        mixed partition (:class:`~dpsynth_core.partition.MixedSchedule`; cells that differ only in their
        categories share it)."""
        if domain.is_mixed:
            lower, widths, _, _ = partition.MixedSchedule(domain.k, domain.category_sizes, domain.weights,
                                                          level).leaf_parts(np.arange(1 << level, dtype=np.int64))
            return lower, lower + widths
        return partition.cell_bounds(level, self.d)


@dataclass(frozen=True)
class PMMOwner(OwnerView):
    """Owner view (NOT DP): the true counts of every level."""

    true_counts: list


@mechanism(
    name="pmm",
    title="PMM — private measure mechanism",
    paper="He, Vershynin, Zhu, Algorithmically effective DP synthetic data (COLT 2023) [HVZ23]",
    algorithm="[HVZ23] Algorithms 3-4; Theorems 9-11, Corollary 12",
    dp="pure",
    neighbours=("add_remove", "replace"),
    categorical=True,
    config=PMMConfig,
    theory=Theory(proven=True, bound_label="PMM: Theorem 11 of [HVZ23] (for reference: proved for its own "
                                           "consistency maps)"),
    summary="Noisy counts on a binary hierarchical partition, made consistent top-down, sampled in the leaves.",
)
def pmm(p: Prepared[PMMConfig]) -> Release[PMMTrace, PMMOwner]:
    """Private Measure Mechanism [HVZ23, Algorithm 4 with Algorithm 3].

    .. math:: n'_\\theta = (n_\\theta + \\lambda_\\theta)_+,\\ \\lambda_\\theta \\sim \\mathrm{Lap}_\\mathbb{Z}(\\sigma_j);
              \\quad \\mathbb{E}\\,W_1(\\mu_\\mathcal{X}, \\mu_\\mathcal{Y}) \\le
              \\frac{\\sqrt 2}{\\varepsilon n}\\Big(\\sum_{j=0}^r \\sqrt{\\Delta_{j-1}}\\Big)^2 + \\delta

    Parameters
    ----------
    X : array (n, d), DataFrame, Dask array or Dask DataFrame; domain : Domain (public bounds)
        Private data, clamped into ``domain``; the mechanism works in the unit cube with the l_inf metric. A
        Dask collection is read partition by partition (:mod:`dpsynth_core.rows`): the same rng, the same release.
    epsilon : float in (0, inf)
        Total privacy budget (Theorem 9), including the noisy size when one is bought.
    neighbours : {"add_remove", "replace"}
        Sensitivity 1 per level (add/remove) or 2 per level below an exact root (replace, n public).
    depth, depth_rule, noise, consistency, placement, n_public
        Declared in :class:`PMMConfig` (listed below); the rules are :func:`default_depth`, :func:`paper_depth`,
        :func:`bound_depth`, the splits :func:`level_sigmas`, the maps :func:`consistent_counts`.

    Returns
    -------
    Release[PMMTrace, PMMOwner]
        ``synthetic`` has :math:`m = m_\\emptyset` rows (the consistent root count), in leaf order, or
        ``max_synthetic_rows`` when m exceeds it (:func:`_leaf_measure`). ``params``: every resolved parameter
        (depth and the rule that chose it, σ and ε per level, the n used and its source). ``bound``: Theorem 11
        (A.4 split) or Theorem 10 (other splits), evaluated at the public/noisy n (or the released size when no n
        was needed), unit-cube l_inf units.

    Notes
    -----
    Time O(n d + 2^r), memory O(n d + 2^r); nothing is quadratic. The :math:`2^r` leaves are checked against
    ``dpsynth_core.limits`` ``max_cells`` before the tree is built (:func:`_plan_depth`).

    References
    ----------
    .. [HVZ23] Y. He, R. Vershynin, Y. Zhu. Algorithmically Effective Differentially Private Synthetic Data. COLT 2023.
    .. [HRMS10] M. Hay, V. Rastogi, G. Miklau, D. Suciu. Boosting the Accuracy of Differentially Private Histograms Through Consistency. PVLDB 3(1), 2010.
    See docs/references.md for the full entries.
    """
    cfg = p.config
    ledger = Ledger()
    t = _plan_tree(p, ledger)
    true_levels, n_clamped = _true_levels(p, t.geo, t.depth)
    noisy = add_level_noise(true_levels, t.sigmas, p.rng)
    clipped, cons, inputs, ls = consistent_counts(noisy, t.sigmas, cfg.consistency, t.geo.empty)
    leaf, m, m_out, capped = _leaf_measure(p, cons)
    synthetic, leaf_codes = t.geo.sample(leaf, cfg.placement, p.rng)

    n_bound, n_source = (t.size.n, t.size.source) if t.size is not None else (max(m, 1), "released size (DP)")
    bound, bound_kind, bound_type, notes = _bound_and_notes(p, t.geo, n_bound, n_source, t.eps_tree, t.sigmas, m)
    trace = PMMTrace(
        depth=t.depth, d=p.domain.d, consistency=cfg.consistency, sigmas=t.sigmas, level_epsilons=t.level_eps,
        diameters=t.geo.diameters, deltas=t.geo.deltas, split_axes=t.geo.split_axes,
        noisy_counts=_compact(noisy), clipped_counts=_compact(clipped),
        consistent_counts=_compact(cons), leaf_codes=leaf_codes,
        ls_estimates=None if ls is None else [e.astype(np.float32) for e in ls],  # float32: pictures only
        ls_rounded=None if ls is None else _compact(inputs))
    owner = PMMOwner(n=p.n, n_clamped=n_clamped, true_counts=_compact(true_levels))
    return p.finish(synthetic, ledger=ledger, trace=trace, owner=owner, params=_params(p, t, m_out, n_bound, n_source),
                    bound=bound, bound_kind=bound_kind, bound_type=bound_type, notes=notes, capped=capped)


@dataclass(frozen=True)
class _Tree:
    """The tree's public plan: the size estimate (None when nothing needed n), the depth and the rule that chose
    it ("given" for a given depth), the partition, the tree's ε, σ and ε per level."""

    size: SizeEstimate | None
    depth: int
    rule_used: str
    geo: _Numeric | _Mixed
    eps_tree: float
    sigmas: np.ndarray
    level_eps: np.ndarray


def _plan_tree(p: Prepared[PMMConfig], ledger: Ledger) -> _Tree:
    """Everything public about the tree before the data is read: the depth (:func:`_plan_depth`, which buys a
    noisy size if needed), the partition, the noise per level (:func:`level_sigmas`) and its ledger entries."""
    cfg = p.config
    size, depth, rule_used = _plan_depth(p, ledger)
    geo = _Mixed(p.domain, depth) if p.domain.is_mixed else _Numeric(p.domain, depth)
    eps_tree = p.epsilon - ledger.epsilon
    sigmas = level_sigmas(depth, p.domain.d, eps_tree, split=cfg.shape if cfg.shape is not None else cfg.split,
                          neighbours=p.neighbours, deltas=geo.deltas)
    level_eps = _spend_levels(p, ledger, depth, sigmas)
    return _Tree(size, depth, rule_used, geo, eps_tree, sigmas, level_eps)


def _params(p: Prepared[PMMConfig], t: _Tree, m_out: int, n_bound: int, n_source: str) -> dict:
    """The public record of the release (every resolved parameter)."""
    cfg = p.config
    return {
        "depth": t.depth, "depth_rule": t.rule_used, "leaves": 1 << t.depth, "noise": cfg.split,
        "sigmas": t.sigmas.tolist(), "level_epsilons": t.level_eps.tolist(), "epsilon_tree": t.eps_tree,
        "sensitivity": count_sensitivity(p.neighbours), "consistency": cfg.consistency,
        "placement": cfg.placement, "n_synthetic": m_out, "n_for_parameters": n_bound, "n_source": n_source,
        "resolution": t.geo.resolution, "size": t.size.to_dict() if t.size is not None else None,
    }


def _leaf_measure(p: Prepared[PMMConfig], cons: list[np.ndarray]) -> tuple[np.ndarray, int, int, dict | None]:
    """The consistent leaf counts to sample, the consistent root m, the output size and the record of its cap.
    When m exceeds ``dpsynth_core.limits`` ``max_synthetic_rows`` (a tiny ε makes the noisy root huge) the leaf
    measure is rounded to that many points (largest remainder): m is the consistent noisy root (DP), so this
    is post-processing; ``notes`` and ``params["limits"]`` say so."""
    leaf, m = cons[-1], int(cons[0][0])
    m_out, capped = limits.cap_rows(m, source="the consistent noisy root count", d=p.domain.d)
    if capped is not None:
        leaf = largest_remainder(leaf, m_out)
    return leaf, m, m_out, capped


def _true_levels(p: Prepared[PMMConfig], geo: _Numeric | _Mixed, depth: int) -> tuple[list[np.ndarray], int]:
    """The one pass over the private rows: leaf counts, summed over blocks (exact integers), O(n d + 2^r), and
    every level above them; under replace the root is the public n. Also the number of clamped rows."""
    leaves, n_clamped = geo.leaf_counts(p.rows)
    true_levels = _levels_from_leaves(leaves, depth)
    if p.neighbours == "replace":
        true_levels[0] = np.array([p.n], dtype=np.int64)
    return true_levels, n_clamped


class _Numeric:
    """The numeric partition of [0,1]^d (cyclic splits; :mod:`dpsynth_core.partition`)."""

    empty = None

    def __init__(self, domain: Domain, depth: int) -> None:
        self.domain, self.depth, d = domain, depth, domain.d
        self.deltas = partition.deltas(depth, d)
        self.diameters = partition.diameters(depth, d)
        self.split_axes = np.arange(depth) % d
        self.resolution = pmm_resolution(depth, d)

    def leaf_counts(self, rows: Any) -> tuple[np.ndarray, int]:
        return rows.sum(_coded_leaf_counts, self.domain, self.depth, unit=False)

    def sample(self, leaf: np.ndarray, placement: str, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        return _sample_leaves(leaf, self.depth, self.domain, placement, rng)

    def theorem11(self, n: int, epsilon: float, neighbours: str) -> float:
        return pmm_theorem11(n, epsilon, self.domain.d, self.depth, neighbours=neighbours)

    def theorem10(self, n: int, sigmas: np.ndarray) -> float:
        return pmm_theorem10(n, sigmas, self.domain.d)


class _Mixed:
    """The mixed partition of [0,1]^k x C_1 x ... x C_m (:class:`~dpsynth_core.partition.MixedSchedule`):
    the categories split as well as the intervals, in the order of the cell diameters; structurally
    empty cells (category indices beyond a column's list) hold 0 for every dataset."""

    def __init__(self, domain: Domain, depth: int) -> None:
        self.domain, self.depth = domain, depth
        self.schedule = partition.MixedSchedule(domain.k, domain.category_sizes, domain.weights, depth)
        self.deltas = self.schedule.deltas()
        self.diameters = self.schedule.diameters()
        self.split_axes = np.array(self.schedule.axes, dtype=np.int64)
        self.resolution = float(self.diameters[-1])
        self.empty = self.schedule.empty()

    def leaf_counts(self, rows: Any) -> tuple[np.ndarray, int]:
        num, cat = self.domain.numeric_index, self.domain.categorical_index
        return rows.sum(_mixed_leaf_counts, self.schedule, num, cat), rows.n_clamped

    def sample(self, leaf: np.ndarray, placement: str, rng: np.random.Generator) -> tuple[Any, np.ndarray]:
        """``leaf[c]`` rows in leaf c: numeric coordinates uniform in the leaf's box (or at its centre),
        each categorical value uniform among the leaf's declared categories."""
        occ = np.flatnonzero(leaf)
        cnt = leaf[occ]
        m = int(cnt.sum())
        lower, widths, first, count = self.schedule.leaf_parts(occ)
        E = np.empty((m, self.domain.d))
        num, cat = self.domain.numeric_index, self.domain.categorical_index
        if num.size:
            u = rng.random((m, num.size)) if placement == "uniform" else np.full((m, num.size), 0.5)
            E[:, num] = np.repeat(lower, cnt, axis=0) + u * widths
        if cat.size:
            pick = np.floor(rng.random((m, cat.size)) * np.repeat(count, cnt, axis=0)).astype(np.int64)
            E[:, cat] = np.repeat(first, cnt, axis=0) + np.minimum(pick, np.repeat(count, cnt, axis=0) - 1)
        np.clip(E[:, num], 0.0, 1.0, out=E[:, num]) if num.size else None
        return self.domain.from_unit(E), np.repeat(occ.astype(np.int32), cnt)

    def theorem11(self, n: int, epsilon: float, neighbours: str) -> float:
        return mixed_theorem11(n, epsilon, self.schedule, neighbours=neighbours)

    def theorem10(self, n: int, sigmas: np.ndarray) -> float:
        return float(2.0 * np.sqrt(2.0) / n * math.fsum(np.asarray(sigmas) * self.deltas) + self.resolution)


def _mixed_leaf_counts(E: np.ndarray, schedule: partition.MixedSchedule, num: np.ndarray,
                       cat: np.ndarray) -> np.ndarray:
    """Leaf counts (code order) of encoded unit rows: the per-record statistic of PMM on mixed data."""
    return schedule.leaf_counts(E, num, cat)


def _plan_depth(p: Prepared[PMMConfig], ledger: Ledger) -> tuple[SizeEstimate | None, int, str]:
    """The size estimate (bought only when needed), the depth and the rule that chose it.

    The depth rule needs n; a declared n (or n under replace, public) costs nothing and also serves the
    bound. Under add/remove with a given depth no size is bought. The leaves are checked against the
    limits before anything is allocated."""
    cfg = p.config
    depth = cfg.depth if cfg.depth is not None else (None if cfg.shape is None else cfg.shape.size - 1)
    size = None
    if depth is None or cfg.n_public is not None or p.neighbours == "replace":
        size = resolve_size(p.n, epsilon=p.epsilon, neighbours=p.neighbours, n_public=cfg.n_public, rng=p.rng,
                            owner=p.owner)
        if size.epsilon_spent:
            ledger.add("noisy size for the depth rule (discrete Laplace)", size.epsilon_spent)
    rule_used = "given"
    if depth is None:
        eps = p.epsilon - ledger.epsilon
        if p.domain.is_mixed:
            depth = mixed_depth(cfg.depth_rule, size.n, eps, p.domain.k, p.domain.category_sizes, p.domain.weights,
                                p.neighbours, cfg.consistency)
        else:
            depth = resolve_depth(cfg.depth_rule, size.n, eps, p.domain.d, p.neighbours, cfg.consistency)
        rule_used = cfg.depth_rule
    limits.check_planned(1 << depth, "max_cells", owner=p.owner, param="depth", what="leaves",
                         fix="pass a smaller depth", got=f"depth {depth} ({1 << depth} leaves)")
    return size, depth, rule_used


def _spend_levels(p: Prepared, ledger: Ledger, depth: int, sigmas: np.ndarray) -> np.ndarray:
    """One ledger entry per noised level; they add up to the tree's ε (Theorem 9). Returns ε per level."""
    sens = count_sensitivity(p.neighbours)
    level_eps = np.where(sigmas > 0, sens / np.where(sigmas > 0, sigmas, 1.0), 0.0)
    if p.neighbours == "replace" and depth == 0:
        level_eps = np.zeros(1)
    noised = [j for j in range(depth + 1) if sigmas[j] > 0]
    if not noised:  # replace with depth 0: only the public n is released; ε holds trivially
        ledger.add("unused (depth 0 under replace releases only the public n)", p.epsilon - ledger.epsilon)
        return level_eps
    for j in noised[:-1]:
        ledger.add(f"level {j} counts (discrete Laplace, σ={sigmas[j]:.4g})", float(level_eps[j]))
    last = noised[-1]
    ledger.add(f"level {last} counts (discrete Laplace, σ={sigmas[last]:.4g})", max(0.0, p.epsilon - ledger.epsilon))
    return level_eps


def _levels_from_leaves(leaves: np.ndarray, depth: int) -> list[np.ndarray]:
    """The counts of every level, root first, from the leaf counts (children of c are 2c, 2c+1)."""
    levels = [leaves]
    for _ in range(depth):
        levels.append(levels[-1][0::2] + levels[-1][1::2])
    return levels[::-1]


def _bound_and_notes(p: Prepared[PMMConfig], geo: Any, n_bound: int, n_source: str, eps_tree: float,
                     sigmas: np.ndarray, m: int) -> tuple[float, str, BoundKind, list[str]]:
    """Theorem 11 (A.4 split) or Theorem 10 (other splits) at a public or DP n, its kind (proven, or for
    reference with a consistency map the proof does not cover) and the release's notes."""
    cfg = p.config
    if cfg.split == "optimal":
        bound = geo.theorem11(n_bound, eps_tree, p.neighbours)
        bound_kind = "Theorem 11 (expected W1, A.4 noise)"
    else:
        bound = geo.theorem10(n_bound, sigmas)
        bound_kind = "Theorem 10 (expected W1, given σ_j)"
    metric = "unit cube, l_inf metric" + (" combined with the category weights by max" if p.domain.is_mixed else "")
    notes = [f"Bound evaluated at n = {n_bound} ({n_source}); {metric}."]
    bound_type = BoundKind.PROVEN
    if cfg.consistency == "least_squares":
        bound_type = BoundKind.REFERENCE
        bound_kind += "; proof covers the paper's maps only"
        notes.append("Theorem 10's proof (Lemma 17) covers the paper's consistency maps only (proportional, "
                     "uniform); with least_squares the bound is shown for reference, not proved.")
    if m == 0:
        notes.append("The consistent root count is 0 (the noisy total was <= 0): the release has no synthetic "
                     "points. Use a larger ε or more data.")
    if p.neighbours == "replace":
        notes.append("Replace neighbours: n is public, the root count is exact and each level j ≥ 1 has "
                     "sensitivity 2 (ε = Σ_{j≥1} 2/σ_j).")
    return float(bound), bound_kind, bound_type, notes
