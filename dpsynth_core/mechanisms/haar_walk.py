"""The superregular random walk mechanism: private measures on a line and on folded grids
([BSV22, Theorem 3.1, Sections 5–7]; [DLS+24, Appendix B (Lemma 3), Appendix C.1]; docs/random-walk.md).

Pipeline (unit cube, l_inf metric):

1. Cells. d = 1: ``grid`` = m cells of width 1/m; d >= 2: ``grid`` = k cells per axis (``k^d`` cells).
2. Path. The cells in path order (:mod:`dpsynth_core.paths`), placed on the line at their path
   positions :math:`w_1 < \\dots < w_N` (spacing 1/k for snake and Hilbert). d = 1 is the line itself.
3. Counts along the path :math:`c \\in \\mathbb{Z}^N` and superregular noise
   :math:`\\tilde c = c + [\\Phi\\eta]_{1:N}` (:func:`dpsynth_core.haar.privatize_counts`): ε-DP.
4. Signed measure :math:`\\nu = \\tilde c/\\hat n` on the line and the closest probability measure in W1,

   .. math:: \\tau = \\arg\\min_{F_\\tau} \\sum_{j=1}^{N-1} (w_{j+1} - w_j)\\,|F_\\nu(w_j) - F_\\tau(w_j)|
             \\quad\\text{s.t. } 0 \\le F_\\tau(w_1) \\le \\dots \\le F_\\tau(w_{N-1}) \\le F_\\tau(w_N) = 1,

   (the identity of [Val73] for signed measures; [BSV22, Eq. (2.7), Section 5]; the term j = N is
   constant): a weighted L1 isotonic regression, solved exactly by :func:`isotonic_l1`.
5. Synthetic data: :math:`\\tau` rounded to :math:`\\hat n` points (cumulative rounding by default),
   placed uniformly inside their cells, mapped back to the domain.

Mixed tables (docs/mixed-data.md, "The Haar walk"): the cells are every combination of the declared
categories times the numeric grid (:mod:`dpsynth_core.mixed_grid`); the path visits the combinations in
a reflected Gray-code order, the numeric path inside each (reversed every other combination), so that
consecutive combinations are joined by one step of length :math:`w_j` (the weight of the one column that
changes). The line positions add these jumps, so the folding stays 1-Lipschitz and the bound uses the
whole path length.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import defaults, limits
from ..domain import Domain
from ..grid import grid_counts, largest_remainder, points_in_cells
from ..haar import iid_laplace_noise, levels_for, privatize_counts
from ..mixed_grid import MixedGrid, check_combinations, combinations, gray_combinations, per_combination_size
from ..paths import PATHS, GridPath, grid_path
from ..privacy import SIZE_SHARE, Ledger, SizeEstimate, count_sensitivity, resolve_size
from ..theory import BoundKind, Theory
from ..validation import check_float, param_error
from .contract import Config, Prepared, mechanism, n_public_param, n_synthetic_param, param
from .release import OwnerView, Release, Trace

__all__ = ["haar_walk", "HaarWalkConfig", "HaarWalkTrace", "HaarWalkOwner", "isotonic_l1", "isotonic_l1_slope_trick",
           "closest_measure_on_line", "line_w1", "cumulative_rounding", "default_grid", "MAX_CELLS", "MAX_DIM"]

#: Largest number of cells the mechanism builds (a 2^22 vector of counts and its trace).
MAX_CELLS = 2**22
#: Largest dimension: the paths through the grid (:mod:`dpsynth_core.paths`) are built for d <= 32 (and
#: beyond d = 22 the 2^22 cells leave one cell per axis).
MAX_DIM = 32
MAX_DIM_REASON = "the paths through the grid are built for d <= 32; beyond d = 22 the 2^22 cells leave one per axis"
PROJECTIONS = ("isotonic", "clip")
ROUNDINGS = ("cumulative", "largest_remainder")
NOISES = ("discrete", "continuous")
#: Default-grid rules: the defaults study's (issue 27), the earlier εn/log rule and the paper's εn.
GRID_RULES = ("study", "log", "paper")


# ------------------------------------------------------------------------ isotonic regression
def _check_isotonic_args(y: Any, w: Any, lower: Any, upper: Any, owner: str):
    yy = np.asarray(y, dtype=np.float64)
    if yy.ndim != 1 or not np.all(np.isfinite(yy)):
        raise param_error(owner, "y", "a finite 1-D array", y)
    if w is None:
        ww = np.ones_like(yy)
    else:
        ww = np.asarray(w, dtype=np.float64)
        if ww.shape != yy.shape or not np.all(np.isfinite(ww)) or np.any(ww < 0):
            raise param_error(owner, "w", f"a finite non-negative array of shape {yy.shape}", w)
    lo = -math.inf if lower == -math.inf else check_float(lower, "lower", owner)
    hi = math.inf if upper == math.inf else check_float(upper, "upper", owner)
    if lo > hi:
        raise param_error(owner, "upper", f"at least lower={lo:g}", hi)
    return yy, ww, lo, hi


def isotonic_l1(y: Any, w: Any = None, *, lower: float = -math.inf, upper: float = math.inf) -> np.ndarray:
    """Exact weighted L1 isotonic regression on a chain, vectorised, :math:`O(N \\log N)`.

    .. math:: \\hat x = \\arg\\min_{x_1 \\le \\dots \\le x_N,\\ \\ell \\le x_i \\le u} \\sum_i w_i |x_i - y_i|

    Method (threshold decomposition). For :math:`x, y` in the sorted distinct values :math:`v_0 < \\dots < v_{K-1}`
    of y, :math:`|x - y| = \\sum_q (v_q - v_{q-1})\\,|[x \\ge v_q] - [y \\ge v_q]|`, so the problem splits into
    one binary isotonic problem per threshold :math:`v_q`: choose a cut p (:math:`x_i \\ge v_q` iff :math:`i \\ge p`)
    minimising :math:`\\sum_{i<p} w_i [y_i \\ge v_q] + \\sum_{i \\ge p} w_i [y_i < v_q]`, a prefix-sum argmin.
    Smallest minimising cuts are nondecreasing in q (the binary problems are nested), which gives a
    divide-and-conquer over thresholds: the median threshold's cut splits the index range for the lower
    and upper halves. Every recursion level is one pass of numpy over at most N entries (segmented
    cumulative sums and minima), and there are :math:`\\lceil\\log_2 K\\rceil` levels. An L1 solution takes
    values among the :math:`y_i`; the box constraint is the clipped unconstrained solution (thresholds
    outside :math:`[\\ell, u]` are forced).

    Parameters
    ----------
    y : array_like (N,), finite
    w : array_like (N,), finite, >= 0, optional (default all ones)
    lower, upper : float, default -inf, inf
        Box constraint, ``lower <= upper``.

    Returns
    -------
    ndarray (N,), nondecreasing, in [lower, upper]: a minimiser (the minimiser need not be unique).
    """
    owner = "isotonic_l1"
    yy, ww, lo, hi = _check_isotonic_args(y, w, lower, upper, owner)
    n = yy.size
    if n == 0:
        return yy.copy()
    v, ranks = np.unique(yy, return_inverse=True)  # y_i = v[ranks_i]; y_i >= v_q  <=>  ranks_i >= q
    ranks = ranks.ravel()
    K = v.size
    if K == 1:
        return np.clip(np.full(n, v[0]), lo, hi)
    # integer arithmetic when the weights are all equal (exact prefix sums, exact ties)
    if np.all(ww == ww[0]):
        wq = np.ones(n, dtype=np.int64) if ww[0] > 0 else np.zeros(n, dtype=np.int64)
    else:
        wq = ww
    cut = np.zeros(K, dtype=np.int64)  # cut[q] for thresholds q = 1..K-1 (cut[0] = 0)
    # segments: index range [a, b) and the thresholds [qlo, qhi) whose cuts lie in it
    a = np.array([0], dtype=np.int64)
    b = np.array([n], dtype=np.int64)
    qlo = np.array([1], dtype=np.int64)
    qhi = np.array([K], dtype=np.int64)
    while a.size:
        empty = a == b
        if np.any(empty):  # an empty index range: every threshold in [qlo, qhi) cuts at a
            lens_q = qhi[empty] - qlo[empty]
            qs = np.repeat(qlo[empty] - np.cumsum(np.r_[0, lens_q[:-1]]), lens_q) + np.arange(lens_q.sum())
            cut[qs] = np.repeat(a[empty], lens_q)
            keep = ~empty
            a, b, qlo, qhi = a[keep], b[keep], qlo[keep], qhi[keep]
            if not a.size:
                break
        qm = (qlo + qhi) // 2
        p = _median_cuts(ranks, wq, a, b, qm)
        cut[qm] = p
        # the lower thresholds cut in [a, p], the upper ones in [p, b]
        sel = np.stack([qlo < qm, qm + 1 < qhi], axis=1)
        a, b = np.stack([a, p], axis=1)[sel], np.stack([p, b], axis=1)[sel]
        qlo, qhi = np.stack([qlo, qm + 1], axis=1)[sel], np.stack([qm, qhi], axis=1)[sel]
    # x_i = v[#{q >= 1 : cut[q] <= i}] (cuts are nondecreasing in q)
    count = np.cumsum(np.bincount(cut[1:], minlength=n + 1))[:n]
    return np.clip(v[count], lo, hi)


def _median_cuts(ranks: np.ndarray, wq: np.ndarray, a: np.ndarray, b: np.ndarray, qm: np.ndarray) -> np.ndarray:
    """One level of :func:`isotonic_l1`'s divide and conquer: for every segment ``[a, b)`` the smallest
    minimising cut of the binary problem at threshold ``qm``, in one numpy pass over the segments
    (segmented prefix sums of :math:`\\pm w_i`, their minima and first argmins)."""
    lens = b - a
    starts = np.r_[0, np.cumsum(lens)[:-1]]
    total = int(lens.sum())
    idx = np.arange(total, dtype=np.int64) + np.repeat(a - starts, lens)
    thr = np.repeat(qm, lens)
    s = np.where(ranks[idx] >= thr, wq[idx], -wq[idx])
    cs = np.cumsum(s)
    base = np.r_[0, cs][starts]  # cumulative sum before each segment
    seg = cs - np.repeat(base, lens)  # prefix sums within the segment (cut after entry)
    segmin = np.minimum.reduceat(seg, starts)
    hit = np.where(seg == np.repeat(segmin, lens), np.arange(total, dtype=np.int64), total)
    pos = np.minimum.reduceat(hit, starts) - starts  # first argmin offset within each segment
    return np.where(segmin < 0, a + pos + 1, a)  # the empty prefix (cut at a) costs 0


def isotonic_l1_slope_trick(y: Any, w: Any = None, *, lower: float = -math.inf,
                            upper: float = math.inf) -> np.ndarray:
    """Reference solver for :func:`isotonic_l1`: the weighted slope trick with a heap, :math:`O(N\\log N)`.

    .. math:: g_i(x) = \\min_{x' \\le x}\\big(g_{i-1}(x') + w_i|x' - y_i|\\big)

    :math:`g_i` is convex, piecewise linear and nonincreasing; its breakpoints (with slope jumps as
    weights) sit in a max-heap. Adding :math:`w_i|x - y_i|` pushes :math:`(y_i, w_i)`; if larger breakpoints
    exist, weight :math:`w_i` is removed from the top (the slope right of the minimum must stay 0) and
    re-inserted at :math:`y_i`. The solution is recovered backwards: :math:`x_N = ` top after step N,
    :math:`x_i = \\min(x_{i+1}, \\mathrm{top}_i)`. Pure Python loop: for tests and moderate N.

    Parameters and returns as in :func:`isotonic_l1`.
    """
    owner = "isotonic_l1_slope_trick"
    yy, ww, lo, hi = _check_isotonic_args(y, w, lower, upper, owner)
    n = yy.size
    heap: list[list[float]] = []  # entries [-value, weight]
    tops = np.empty(n)
    for i in range(n):
        yi, wi = float(yy[i]), float(ww[i])
        if wi > 0:
            heapq.heappush(heap, [-yi, wi])
            rest = wi
            while rest > 0:
                top = heap[0]
                if -top[0] <= yi:
                    break
                take = min(rest, top[1])
                rest -= take
                if take >= top[1]:
                    heapq.heappop(heap)
                else:
                    top[1] -= take
            moved = wi - rest
            if moved > 0:
                heapq.heappush(heap, [-yi, moved])
        tops[i] = -heap[0][0] if heap else yi
    x = np.empty(n)
    if n:
        x[-1] = tops[-1]
        for i in range(n - 2, -1, -1):
            x[i] = min(x[i + 1], tops[i])
    return np.clip(x, lo, hi)


def line_w1(positions: Any, F: Any, G: Any) -> float:
    """W1 on the line between two (signed) measures given by their CDFs at the atoms [Val73].

    .. math:: W_1 = \\sum_{j=1}^{N-1} (w_{j+1} - w_j)\\,|F(w_j) - G(w_j)|

    Parameters
    ----------
    positions : (N,) nondecreasing; F, G : (N,) CDF values at the positions (equal totals assumed).

    References
    ----------
    .. [Val73] S. S. Vallender. Calculation of the Wasserstein distance between probability distributions on the line. Theory Probab. Appl. 18(4), 1973.
       See docs/references.md.
    """
    w = np.asarray(positions, dtype=np.float64)
    diff = np.abs(np.asarray(F, dtype=np.float64) - np.asarray(G, dtype=np.float64))
    return math.fsum(np.diff(w) * diff[:-1])  # correctly rounded: the same bits on every CPU (BLAS dot is not)


def closest_measure_on_line(signed_cdf: Any, positions: Any, projection: str = "isotonic",
                            masses: Any = None) -> np.ndarray:
    """The probability CDF on the atoms closest in W1 to a signed CDF [BSV22, Section 5].

    .. math:: F_\\tau = \\arg\\min \\sum_{j<N} (w_{j+1} - w_j)|F_\\nu(w_j) - F_\\tau(w_j)|,\\
              F_\\tau \\text{ nondecreasing in } [0, 1],\\ F_\\tau(w_N) = 1

    Parameters
    ----------
    signed_cdf : (N,) :math:`F_\\nu(w_j)`
    positions : (N,) increasing :math:`w_j`
    projection : {"isotonic", "clip"}
        "isotonic": the exact W1 projection above (:func:`isotonic_l1`). "clip": the naive alternative
        :math:`\\tau \\propto \\max(\\nu, 0)` (uniform if all masses are <= 0); not a W1 projection.
    masses : (N,) the signed masses (needed for "clip"; default the increments of ``signed_cdf``)

    Returns
    -------
    (N,) nondecreasing CDF with last entry exactly 1.
    """
    F = np.asarray(signed_cdf, dtype=np.float64)
    w = np.asarray(positions, dtype=np.float64)
    N = F.size
    if projection == "clip":
        nu = np.diff(np.r_[0.0, F]) if masses is None else np.asarray(masses, dtype=np.float64)
        tau = np.maximum(nu, 0.0)
        tau = tau / tau.sum() if tau.sum() > 0 else np.full(N, 1.0 / N)
        out = np.cumsum(tau)
    else:
        out = np.empty(N)
        if N > 1:
            out[:-1] = isotonic_l1(F[:-1], np.diff(w), lower=0.0, upper=1.0)
    out[-1] = 1.0
    return out


def cumulative_rounding(cdf: Any, size: int) -> np.ndarray:
    """Integer counts from a CDF by rounding the cumulative sums (systematic rounding).

    .. math:: r_j = \\lfloor s F(w_j) + 1/2 \\rfloor - \\lfloor s F(w_{j-1}) + 1/2 \\rfloor

    Counts sum to s, are >= 0 for a nondecreasing F, each within 1 of :math:`s\\tau_j`, and every
    cumulative count is within 1/2 of :math:`s F(w_j)`: the W1 rounding error on the line is at most
    :math:`L/(2s)` (largest-remainder rounding only bounds each count, and its cumulative error can
    grow like a random walk).
    """
    F = np.asarray(cdf, dtype=np.float64)
    R = np.floor(size * F + 0.5).astype(np.int64)
    R[-1] = size
    return np.diff(np.r_[0, R])


# -------------------------------------------------------------------------------- grid rule
def default_grid(n: int, epsilon: float, d: int, path: str = "snake", rule: str = "study") -> int:
    """The default grid from the public or noisy n: cells per axis k (d >= 2) or cells m (d = 1).

    ``rule="study"`` (default): :func:`dpsynth_core.defaults.haar_walk_grid`,
    :math:`k = c_d (\\varepsilon n)^{1/(d+1)}` (a power of two on the line, at least 2 per axis in d >= 2),
    fitted by the defaults study (benchmarks/defaults_study.py, docs/defaults.md): within 1.08x of the best
    grid in hindsight on average over 81 settings (d = 1..6), and growing with εn in every d. ``epsilon`` is
    then the walk's budget per unit of the counts' sensitivity (the mechanism passes ε'/Δ). For the Hilbert
    path (d >= 2) the rule's k is rounded to the nearest power of two.

    The two earlier rules, with :math:`C = \\varepsilon n/\\log_2(\\varepsilon n)^{a}`:

    .. math:: d = 1:\\ m = 2^{\\mathrm{round}(\\log_2 C)};
              \\qquad d \\ge 2:\\ k = \\mathrm{round}(C^{1/d})\\ (\\text{Hilbert: } 2^{\\mathrm{round}(\\log_2(C)/d)})

    ``rule="paper"``: a = 0, i.e. about εn cells (the m ≈ εn of [HVZ23, Corollary 8]; docs/deviations.md
    §8). ``rule="log"`` (the default before the defaults study): a = 2 for d = 1 and a = 3/2 for d >= 2,
    balancing the cell side 1/k against Lemma 3's :math:`(K+1)^{3/2}` noise factor; the grid study
    (benchmarks/bench_haar_walk.py, ε = 1, beta(2, 5) data, d = 1 and 2: benchmarks/results/haar_walk.json,
    "grid_study") measured it against "paper". The defaults study found it 1.8x the best grid on average and
    stuck at 2-3 cells per axis in d = 4 (docs/defaults.md). At least 1 cell per axis and at most
    :data:`MAX_CELLS` cells in total.
    """
    if rule == "study":
        k = defaults.haar_walk_grid(max(int(round(n)), 1), epsilon, d)
        if d == 1 or path != "hilbert":
            return k
        b = max(0, int(round(math.log2(k))))
        while b > 0 and (1 << b) ** d > MAX_CELLS:
            b -= 1
        return 1 << b
    x = max(float(epsilon) * float(n), 1.0)
    if rule == "log" and x > 2.0:
        x = max(x / math.log2(x) ** (2.0 if d == 1 else 1.5), 1.0)
    if d == 1:
        k = int(round(math.log2(x)))
        return 1 << max(0, min(k, int(math.log2(MAX_CELLS))))
    if path == "hilbert":
        b = max(0, int(round(math.log2(x) / d)))
        while b > 0 and (1 << b) ** d > MAX_CELLS:
            b -= 1
        return 1 << b
    k = max(1, min(int(round(x ** (1.0 / d))), int(MAX_CELLS ** (1.0 / d)) + 1))
    while k > 1 and k**d > MAX_CELLS:  # at most one or two steps after the min above
        k -= 1
    return k


# ------------------------------------------------------------------------------- mechanism
@dataclass(frozen=True)
class HaarWalkConfig(Config):
    """The walk's parameters. ``grid`` is checked against the dimension in :meth:`check_domain`."""

    grid: int | None = param(
        "int", None, "d = 1: number of cells on [0, 1]; d ≥ 2: cells per axis k, k^d cells (a power of two for the "
        "Hilbert path). At most 2^22 cells. Default: from the public or noisy n by 'grid_rule'.", low=1,
        high=MAX_CELLS, log=True)
    grid_rule: str = param(
        "choice", "study", "Default grid when 'grid' is empty: 'study' = rule dpsynth_core.defaults.haar_walk_grid, "
        "k = c_d (ε'n)^{1/(d+1)} per axis (ε' = the walk's ε / sensitivity), fitted by the defaults study "
        "(benchmarks/defaults_study.py, docs/defaults.md); 'log' = the earlier rule, about εn/log2(εn)^2 cells "
        "(d = 1) or εn/log2(εn)^{3/2} (d ≥ 2); 'paper' = about εn cells.", choices=GRID_RULES)
    path: str = param(
        "choice", "snake", "Order of the grid cells on the line (d ≥ 2): boustrophedon 'snake', Hilbert curve, or the "
        "depth-first tour of a minimum spanning tree (length ≤ 2·MST).", choices=PATHS)
    projection: str = param(
        "choice", "isotonic", "Signed measure → probability measure: the exact W1 projection on the line (weighted L1 "
        "isotonic regression of the CDF) or the naive clip-and-normalise.", choices=PROJECTIONS)
    rounding: str = param(
        "choice", "cumulative", "Probability measure → integer counts: round the CDF (W1 error ≤ L/2n) or largest "
        "remainder on each cell.", choices=ROUNDINGS, advanced=True)
    noise: str = param(
        "choice", "discrete", "Laplace noise on the Haar coefficients: integer (discrete Laplace of scale "
        "(K+1)Δ/ε' on the integer coefficients M_K^{-1}c) or continuous (Laplace of scale Δ/ε' on Φ^{-1}c; "
        "dpsynth_core.haar). Same ε.", choices=NOISES, advanced=True)
    n_synthetic: int | None = n_synthetic_param(
        "Synthetic points; default n_public, n under replace, the noisy size or the noisy total, capped at "
        "dpsynth_core.limits max_synthetic_rows (post-processing, noted in the release).")
    n_public: int | None = n_public_param()

    def check_domain(self, domain: Domain, owner: str) -> None:
        """A given grid: at most 2^22 cells in the domain's (numeric) dimension, times the combinations of
        categories of a mixed domain (and within the current limits), a power of two for the Hilbert path."""
        super().check_domain(domain, owner)
        C = combinations(domain.category_sizes)
        if domain.is_mixed:
            check_combinations(domain, MAX_CELLS, owner=owner, why="at most 2^22 cells")
        if self.grid is None:
            return
        g, d = self.grid, domain.k
        cells = C * (g if d == 1 else g**d)
        if cells > MAX_CELLS:
            what = f"such that grid^d <= 2^22 cells (d={d})" if C == 1 else \
                f"such that {C} combinations × grid^d <= 2^22 cells (d={d} numeric)"
            raise param_error(owner, "grid", what, g)
        if d >= 2 and self.path == "hilbert" and g & (g - 1):
            raise param_error(owner, "grid", "a power of two with path='hilbert'", g)
        of = "" if C == 1 else f" × {C} combinations"
        limits.check_planned(cells, "max_cells", owner=owner, param="grid", what="cells", fix="pass a smaller grid",
                             got=f"{cells} cells (given grid {g}, d={d}{of})")


@dataclass(frozen=True)
class HaarWalkTrace(Trace):
    """The walk's intermediates (DP or public). Arrays along the path have one entry per cell, in path order.

    ``cells`` (N), ``cells_per_axis`` (k; N = k^d, or N = k in 1-D), ``d`` and ``path_kind`` ("snake" in 1-D)
    describe the grid and the path; ``levels_K`` the Haar levels (:math:`2^K \\ge N`); ``coefficient_scale`` is b,
    the Laplace scale of the Haar coefficients, ``iid_equal_privacy_scale`` the scale Δ/ε' of i.i.d. Laplace
    noise of the same privacy (the pictures' comparison). ``path_order`` is the row-major index of the j-th
    cell, ``positions`` its line coordinate :math:`w_j`; ``noisy_counts`` :math:`\\tilde c`, ``signed_cdf``
    :math:`F_\\nu`, ``projected_cdf`` :math:`F_\\tau`, ``tau`` :math:`\\tau` and ``synthetic_counts`` the
    synthetic points per cell. On a mixed domain ``d`` counts the numeric axes, ``combinations`` the
    combinations of categories (``category_sizes`` per column), and a cell index is combination × k^d +
    numeric cell (:mod:`dpsynth_core.mixed_grid`)."""

    cells: int
    cells_per_axis: int
    d: int
    path_kind: str
    levels_K: int
    coefficient_scale: float
    iid_equal_privacy_scale: float
    path_order: np.ndarray
    positions: np.ndarray
    noisy_counts: np.ndarray
    signed_cdf: np.ndarray
    projected_cdf: np.ndarray
    tau: np.ndarray
    synthetic_counts: np.ndarray
    combinations: int = 1
    category_sizes: tuple = ()


@dataclass(frozen=True)
class HaarWalkOwner(OwnerView):
    """Owner view (NOT DP), along the path: the true counts and CDF, the superregular noise and its running
    sums, and an i.i.d. Laplace walk of the same privacy (``iid_*``; never released, for comparison only:
    ``true_counts + iid_noise`` would be a second release of the counts)."""

    true_counts: np.ndarray
    true_cdf: np.ndarray
    noise: np.ndarray
    noise_partial_sums: np.ndarray
    iid_noise: np.ndarray
    iid_noise_partial_sums: np.ndarray
    iid_noisy_counts: np.ndarray
    iid_signed_cdf: np.ndarray


@dataclass(frozen=True)
class _Line:
    """Steps 4-5 on the line: the normalisation n̂ and its source, the signed and projected CDFs, τ, the output
    size (and the record of its cap), the synthetic counts per cell and the exact W1 of the rounding."""

    n_hat: int
    n_source: str
    signed_cdf: np.ndarray
    projected_cdf: np.ndarray
    tau: np.ndarray
    n_out: int
    capped: dict | None
    out_counts: np.ndarray
    rounding_w1: float


@mechanism(
    name="haar_walk",
    title="Superregular random walk (Haar noise on a path)",
    paper=("Boedihardjo, Strohmer, Vershynin, Private measures, random walks, and synthetic data (2022) [BSV22]; "
           "Donhauser et al., Certified private data release for sparse Lipschitz functions (AISTATS 2024) "
           "[DLS+24]"),
    algorithm="[BSV22] Theorem 3.1 (superregular walk), Section 5 (private measure on the line), Sections 6-7 "
              "(folding); [DLS+24] Appendices B-C, Lemma 3 and Eq. (30) (bound)",
    dp="pure",
    neighbours=("add_remove", "replace"),
    config=HaarWalkConfig,
    theory=Theory(proven=True, bound_label="random walk: its proven bound"),
    categorical=True,
    max_dim=MAX_DIM,
    max_dim_reason=MAX_DIM_REASON,
    summary="Counts along a path through the grid, Haar-correlated Laplace noise whose partial sums grow "
            "like log^{3/2} m, the closest probability measure on the line in W1, points in the cells.",
)
def haar_walk(p: Prepared[HaarWalkConfig]) -> Release[HaarWalkTrace, HaarWalkOwner]:
    """Private measure from the superregular random walk [BSV22, Theorem 3.1, Sections 5–7].

    .. math:: \\tilde c = c + [\\Phi\\eta]_{1:N},\\ \\eta_i \\sim \\mathrm{Lap}(\\Delta/\\varepsilon'),\\quad
              F_\\tau = \\arg\\min_{F \\uparrow,\\ 0 \\le F \\le 1,\\ F(w_N) = 1}
              \\sum_{j<N} (w_{j+1} - w_j)\\,\\Big|\\tfrac{1}{\\hat n}\\textstyle\\sum_{i \\le j} \\tilde c_i - F(w_j)\\Big|

    Parameters
    ----------
    X : array (n, d), DataFrame or Dask collection; domain : Domain (public bounds, d <= 32 numeric columns)
        On a mixed domain (declared categories) the cells are every combination of categories times the numeric
        grid, visited along one path (docs/mixed-data.md, "The Haar walk"); ``grid`` is then per combination.
    epsilon : float in (0, inf)
        Under add/remove without ``n_public``, when ``grid`` or ``n_synthetic`` is left to its default, a share
        ``SIZE_SHARE`` (5%) buys a noisy size; the rest ε' goes to the counts.
    neighbours : {"add_remove", "replace"}
        Δ = 1 under add/remove; under replace n is public, the total Haar coefficient is exact and the others get
        scale :math:`2K/((K+1)\\varepsilon')`.
    grid, grid_rule, path, projection, rounding, noise, n_synthetic, n_public
        Declared in :class:`HaarWalkConfig` (listed below). Cells are checked against ``limits.max_cells``
        (refused) and the output against ``max_synthetic_rows`` (capped, or refused when given) before anything
        is allocated (docs/privacy-model.md).

    Returns
    -------
    Release[HaarWalkTrace, HaarWalkOwner]
        ``synthetic`` (n_synthetic, d) in domain units. ``bound`` (isotonic projection only) is the expected W1
        bound in unit-cube l_inf units, :math:`h + \\frac{2L}{\\hat n}(\\sqrt2\\, b\\,(K+1)^{3/2} + e_n) + R`
        ([DLS+24, Eq. (30), Lemma 3]; the terms and the argument: :func:`_bound`, docs/random-walk.md, "Bound").

    References
    ----------
    .. [BSV22] M. Boedihardjo, T. Strohmer, R. Vershynin. Private measures, random walks, and synthetic data. arXiv:2204.09167, 2022.
    .. [DLS+24] K. Donhauser, J. Lokna, A. Sanyal, M. Boedihardjo, R. Hönig, F. Yang. Certified private data release for sparse Lipschitz functions. AISTATS 2024.
    .. [Val73] S. S. Vallender. Calculation of the Wasserstein distance between probability distributions on the line. Theory Probab. Appl. 18(4), 1973.
    See docs/references.md for the full entries.
    """
    d = p.domain.k  # numeric axes (all of them on a numeric domain)
    ledger = Ledger()
    size = _size_if_needed(p, ledger)
    eps_c = p.epsilon - ledger.epsilon
    k = _grid(p, size, eps_c)
    gp = grid_path(p.config.path if d >= 2 else "snake", k, d)
    grid = MixedGrid(p.domain, k) if p.domain.is_mixed else None
    path = _Path.numeric(gp) if grid is None else _Path.mixed(gp, p.domain.category_sizes, p.domain.weights)
    c = _counts_along(p, k, grid, path)
    K = levels_for(c.size)
    noisy, noise, b = _noisy_walk(p, c, K, eps_c, ledger, grid)
    line = _measure_on_line(p, size, noisy, path.positions)
    synthetic = _points(p, k, grid, path, line)
    bound, bound_kind, bound_terms = _bound(p, size, k, b, K, path.length, line)
    trace = HaarWalkTrace(
        cells=c.size, cells_per_axis=k, d=d, path_kind=gp.kind, levels_K=K, coefficient_scale=b,
        iid_equal_privacy_scale=count_sensitivity(p.neighbours) / eps_c, path_order=path.order,
        positions=path.positions, noisy_counts=noisy, signed_cdf=line.signed_cdf, projected_cdf=line.projected_cdf,
        tau=line.tau, synthetic_counts=line.out_counts, combinations=1 if grid is None else grid.combinations,
        category_sizes=p.domain.category_sizes)
    return p.finish(synthetic, ledger=ledger, trace=trace, owner=_owner(p, c, noise, eps_c, line),
                    params=_params(p, size, k, path, K, b, eps_c, line, bound_terms), bound=bound,
                    bound_kind=bound_kind, bound_type=BoundKind.NONE if bound is None else BoundKind.PROVEN,
                    capped=line.capped, notes=[] if grid is None else [grid.describe(), path.note])


def _counts_along(p: Prepared[HaarWalkConfig], k: int, grid: MixedGrid | None, path: _Path) -> np.ndarray:
    """Step 2, the one pass over the private rows. grid_counts has exactly k^d entries (cell_of clips every axis
    to [0, k-1]; on a mixed domain C k^d, one per combination of categories and numeric cell) and the path visits
    each cell once (a permutation, paths.grid_path / _Path.mixed), so this is the vector of counts along the
    path."""
    return (p.rows.sum(grid_counts, k) if grid is None else grid.counts(p.rows))[path.order]


def _points(p: Prepared[HaarWalkConfig], k: int, grid: MixedGrid | None, path: _Path, line: _Line) -> np.ndarray:
    """Step 6: the synthetic counts back in grid order, and that many points in each cell (domain units)."""
    cells_out = np.zeros(path.order.size, dtype=np.int64)
    cells_out[path.order] = line.out_counts
    if grid is None:
        return p.domain.from_unit(points_in_cells(cells_out, k, p.domain.k, p.rng))
    return grid.sample(cells_out, p.rng)


def _owner(p: Prepared[HaarWalkConfig], c: np.ndarray, noise: np.ndarray, eps_c: float, line: _Line) -> HaarWalkOwner:
    """The owner's view: the true counts and the walk's noise, with an i.i.d. Laplace walk of equal privacy for
    comparison (c + i.i.d. noise would be a second release of c: it is never released and costs nothing)."""
    iid = iid_laplace_noise(c.size, scale=count_sensitivity(p.neighbours) / eps_c, rng=p.rng,
                            discrete=(p.config.noise == "discrete"))
    return HaarWalkOwner(
        n=p.n, n_clamped=p.n_clamped, true_counts=c, true_cdf=np.cumsum(c) / max(p.n, 1), noise=noise,
        noise_partial_sums=np.cumsum(noise), iid_noise=iid, iid_noise_partial_sums=np.cumsum(iid),
        iid_noisy_counts=c + iid, iid_signed_cdf=np.cumsum(c + iid) / line.n_hat)


@dataclass(frozen=True)
class _Path:
    """The cells in path order (``order``: cell indices), their line positions, the path length, the public
    record of the path (``params["path"]``) and, on a mixed domain, the note that describes it."""

    order: np.ndarray
    positions: np.ndarray
    length: float
    record: dict
    note: str = ""

    @classmethod
    def numeric(cls, gp: GridPath) -> _Path:
        return cls(gp.order, gp.positions, gp.length, gp.to_dict())

    @classmethod
    def mixed(cls, gp: GridPath, sizes: tuple[int, ...], weights: tuple[float, ...]) -> _Path:
        """The combinations in reflected Gray-code order (:func:`dpsynth_core.mixed_grid.gray_combinations`:
        consecutive ones differ in one column j), the numeric path ``gp`` inside each, reversed every other
        combination so that a combination ends in the numeric cell where the next one starts: the step between
        them has length exactly :math:`w_j` in the mixed metric, and the positions add it (1-Lipschitz folding)."""
        combos, changed = gray_combinations(sizes, weights)
        C, K = combos.size, gp.order.size
        odd = (np.arange(C) % 2 == 1)[:, None]
        order = (combos[:, None] * K + np.where(odd, gp.order[::-1][None, :], gp.order[None, :])).ravel()
        jumps = np.asarray(weights, dtype=np.float64)[changed]
        start = np.arange(C) * gp.length + np.concatenate([[0.0], np.cumsum(jumps)])
        inner = np.where(odd, (gp.length - gp.positions[::-1])[None, :], gp.positions[None, :])
        positions = (start[:, None] + inner).ravel()
        length = float(positions[-1])
        record = {**gp.to_dict(), "cells": int(order.size), "length": length, "combinations": int(C),
                  "numeric_length": gp.length, "category_jumps": int(jumps.size),
                  "category_jump_length": float(math.fsum(jumps)),
                  "combination_order": "reflected Gray code, heaviest column most significant"}
        note = (f"Path: the {C} combinations of categories in reflected Gray-code order (consecutive ones differ in "
                f"one column; the heaviest column changes least), the numeric {gp.kind} path inside each (reversed "
                f"every other one), so {jumps.size} steps change one category, each of length w_j "
                f"({math.fsum(jumps):.4g} in all). Path length L = {length:.4g} = {C} × {gp.length:.4g} + "
                f"{math.fsum(jumps):.4g}; the bound uses this L.")
        return cls(order, positions, length, record, note)


def _size_if_needed(p: Prepared[HaarWalkConfig], ledger: Ledger) -> SizeEstimate | None:
    """The size estimate, bought only when something needs n: the default grid or output size. A declared n,
    or n under replace, is public: it costs nothing and normalises the counts (step 4)."""
    cfg = p.config
    if cfg.grid is not None and cfg.n_synthetic is not None and cfg.n_public is None and p.neighbours != "replace":
        return None
    size = resolve_size(p.n, epsilon=p.epsilon, neighbours=p.neighbours, n_public=cfg.n_public, rng=p.rng,
                        owner=p.owner)
    if size.epsilon_spent:
        ledger.add("noisy size (discrete Laplace)", size.epsilon_spent)
    return size


def _grid(p: Prepared[HaarWalkConfig], size: SizeEstimate | None, eps_c: float) -> int:
    """Step 1: the given grid (checked by :meth:`HaarWalkConfig.check_domain`) or :func:`default_grid` at the
    public or noisy n, checked against the limits before anything is allocated."""
    cfg, d = p.config, p.domain.k
    if cfg.grid is not None:
        return cfg.grid
    sizes = p.domain.category_sizes
    C = combinations(sizes)
    # the study's rule reads ε per unit of the counts' sensitivity (the earlier rules read ε' itself)
    eps_rule = eps_c / count_sensitivity(p.neighbours) if cfg.grid_rule == "study" else eps_c
    if C == 1:
        g = default_grid(size.n, eps_rule, d, cfg.path, cfg.grid_rule)  # a default grid: _size_if_needed bought a size
    else:  # public quantities only: the rule at the mean size of a combination, n̂ / C, then C × cells <= 2^22
        g = default_grid(per_combination_size(size.n, sizes), eps_rule, d, cfg.path, cfg.grid_rule)
        while g > 1 and C * (g if d == 1 else g**d) > MAX_CELLS:
            g = g // 2 if d == 1 or cfg.path == "hilbert" else g - 1
    cells = C * (g if d == 1 else g**d)
    of = "" if C == 1 else f" × {C} combinations"
    limits.check_planned(cells, "max_cells", owner=p.owner, param="grid", what="cells", fix="pass a smaller grid",
                         got=f"{cells} cells (default grid {g}, d={d}{of})")
    return g


def _noisy_walk(p: Prepared[HaarWalkConfig], c: np.ndarray, K: int, eps_c: float, ledger: Ledger,
                grid: MixedGrid | None = None) -> tuple[np.ndarray, np.ndarray, float]:
    """Step 3: the ε'-DP counts :math:`\\tilde c = c + [\\Phi\\eta]_{1:N}` (:func:`dpsynth_core.haar.privatize_counts`),
    the noise (owner-side) and the Laplace scale b of the K-level Haar coefficients; one ledger entry."""
    noisy, noise = privatize_counts(c, eps_c, p.neighbours, p.rng, discrete=(p.config.noise == "discrete"),
                                    return_noise=True)
    if p.neighbours == "add_remove":
        b = 1.0 / eps_c
    else:
        b = 2.0 * K / ((K + 1) * eps_c) if K > 0 else 0.0
    of = "" if grid is None else f" ({grid.combinations} category combinations × {grid.numeric_cells} numeric cells)"
    ledger.add(f"Haar (superregular) noise on {c.size} path counts{of}, coefficient scale {b:.4g}", eps_c)
    return noisy, noise, b


def _measure_on_line(p: Prepared[HaarWalkConfig], size: SizeEstimate | None, noisy: np.ndarray,
                     positions: np.ndarray) -> _Line:
    """Steps 4-5 (post-processing): the signed measure :math:`\\tilde c/\\hat n` (n̂ public: the public n, n under
    replace, the noisy size, or the noisy total), the closest probability measure on the line, rounded to the
    output size (the given one, or n̂ capped at the output limits)."""
    cfg = p.config
    if size is not None:
        n_hat, n_source = size.n, size.source
    else:
        n_hat, n_source = max(1, int(round(float(noisy.sum())))), "noisy total of the path counts"
    signed_cdf = np.cumsum(noisy) / n_hat
    proj_cdf = closest_measure_on_line(signed_cdf, positions, cfg.projection, masses=noisy / n_hat)
    tau = np.diff(np.r_[0.0, proj_cdf])
    capped = None
    if cfg.n_synthetic is not None:
        n_out = cfg.n_synthetic
    else:  # a public n or a DP size (always bought when n_synthetic is left out): capping it is post-processing
        n_out, capped = limits.cap_rows(n_hat, source=f"n from {n_source}", d=p.domain.d)
    if cfg.rounding == "cumulative":
        out_counts = cumulative_rounding(proj_cdf, n_out)
    else:
        out_counts = largest_remainder(np.maximum(tau, 0.0), n_out)
    rounding_w1 = line_w1(positions, proj_cdf, np.cumsum(out_counts) / n_out)
    return _Line(n_hat=n_hat, n_source=n_source, signed_cdf=signed_cdf, projected_cdf=proj_cdf, tau=tau,
                 n_out=int(n_out), capped=capped, out_counts=out_counts, rounding_w1=rounding_w1)


def _bound(p: Prepared[HaarWalkConfig], size: SizeEstimate | None, k: int, b: float, K: int, path_length: float,
           line: _Line) -> tuple[float | None, str, dict]:
    """The expected-W1 bound in unit-cube l_inf units, and its terms; no bound for the clip projection:

    .. math:: h + \\frac{2L}{\\hat n}\\Big(\\sqrt2\\, b\\,(K+1)^{3/2} + e_n\\Big) + R

    from [DLS+24, Eq. (30)] with [DLS+24, Lemma 3] (:math:`\\|\\Phi^{-1}\\|_1 = 1`,
    :math:`\\max_i\\|\\sum_{j\\le i}\\Phi_j\\|_2 \\le (K+1)^{3/2}`, Var Lap(b) = 2b², explicit constants) and the
    minimality argument of [BSV22, Section 5] (the projection at most doubles the signed error):
    h = cell side (data to cell centres and back, h/2 each), L = path length on the line (1-Lipschitz
    folding, [DLS+24, Eq. (27)]), b = the Laplace scale of η, :math:`e_n` = the expected error of a noisy
    size (:math:`\\sqrt2/(0.05\\varepsilon)`, or the noisy total's :math:`\\sqrt2 b (K+1)^{3/2}`; 0 for a public
    n), R = the exact (public) W1 of the rounding on the line. Evaluated at the public or noisy
    :math:`\\hat n` in place of n. The accuracy theorem of [BSV22] itself (Proposition 5.1) states only
    :math:`\\lesssim \\log^{3/2}` rates: its constants are not given."""
    h = 1.0 / k
    lemma3 = math.sqrt(2.0) * b * (K + 1) ** 1.5
    if size is None:
        e_n = lemma3
    elif size.source == "noisy":
        e_n = math.sqrt(2.0) / (SIZE_SHARE * p.epsilon)
    else:
        e_n = 0.0
    terms = {"discretisation": h, "lemma3_partial_sum_sd": lemma3, "size_error": e_n, "path_length": path_length,
             "rounding_w1": line.rounding_w1}
    if p.config.projection != "isotonic":
        return None, "no paper bound: clip-and-normalise is not the W1 projection", terms
    bound = h + 2.0 * path_length * (lemma3 + e_n) / line.n_hat + line.rounding_w1
    return bound, ("expected W1 bound: [DLS+24, Eq. (30), Lemma 3] (explicit constants), projection minimality "
                   "[BSV22, Section 5], exact rounding error; at the public/noisy n"), terms


def _params(p: Prepared[HaarWalkConfig], size: SizeEstimate | None, k: int, path: _Path, K: int, b: float,
            eps_c: float, line: _Line, bound_terms: dict) -> dict:
    """The public record of the release (every resolved parameter)."""
    cfg, N = p.config, path.order.size
    sens = count_sensitivity(p.neighbours)
    extra = {} if not p.domain.is_mixed else {"numeric_d": p.domain.k, "category_sizes": list(p.domain.category_sizes),
                                              "combinations": combinations(p.domain.category_sizes)}
    return {
        **extra,
        "grid": k, "grid_rule": cfg.grid_rule if cfg.grid is None else "given", "cells": N, "cells_per_axis": k,
        "d": p.domain.d, "cell_side": 1.0 / k, "path": path.record, "levels_K": K, "padded_length": 1 << K,
        "noise": cfg.noise, "coefficient_scale": b,
        "discrete_coefficient_scale": (K + 1) * b if cfg.noise == "discrete" else None,
        "sensitivity": sens, "epsilon_counts": eps_c, "iid_equal_privacy_scale": sens / eps_c,
        "projection": cfg.projection, "rounding": cfg.rounding, "n_synthetic": line.n_out,
        "normalisation": {"n": int(line.n_hat), "source": line.n_source},
        "size": size.to_dict() if size is not None else None,
        "bound_terms": bound_terms,
    }
