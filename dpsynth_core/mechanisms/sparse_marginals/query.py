"""Steps 1 and 2 of [DLS+24, Algorithm 1]: the query operator T and its Haar-transformed Laplace noise.

* The query T: for each of the K = C(d, s) subsets S the histogram of the S-marginal on the grid
  :math:`T_{k,s}`, cells in snake-path order (:func:`path_rank`); :func:`marginal_counts` is the
  per-record statistic the mechanism sums over the private rows, :func:`marginal_vector` the
  normalised vector.
* The noise: per block :math:`[\\Phi\\tilde\\eta^S]_{1:k^s}` with Laplace coefficients of scale
  :func:`noise_scale` (Lemma 2), drawn by :func:`haar_block_noise`; :func:`block_noise_factor` is its
  covariance factor (the consistency projection's GLS weights).
* The default grid :func:`default_k`: the k minimising the paper's expected-loss bound (Eq. (15)).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...grid import cell_of
from ...haar import haar_synthesis, levels_for, prefix_row_norms, superregular_noise
from ...paths import snake_order
from ...transport.marginals import marginal_subsets
from ...validation import (
    check_bool,
    check_choice,
    check_float,
    check_int,
    check_points,
    check_rng,
    param_error,
)

__all__ = ["NOISES", "MAX_CELLS_PER_BLOCK", "MAX_CELLS_TOTAL", "Grid", "path_rank", "marginal_bins", "marginal_counts",
           "marginal_vector", "noise_scale", "haar_block_noise", "block_noise_factor", "default_k"]

#: Noise laws (``noise=...``): the paper's Laplace on every Haar coefficient, or exact block totals.
NOISES: tuple[str, ...] = ("paper", "exact_total")
#: Largest k^s (cells per block) and K·k^s (entries of the query vector) accepted.
MAX_CELLS_PER_BLOCK = 2**16
MAX_CELLS_TOTAL = 2**21


# ----------------------------------------------------------------------------- query operator
@functools.lru_cache(maxsize=64)
def path_rank(k: int, s: int) -> tuple[np.ndarray, np.ndarray]:
    """(order, rank): ``order[p]`` = row-major cell at path position p; ``rank[c]`` = position of cell c."""
    order = snake_order(k, s)
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size, dtype=np.int64)
    order.setflags(write=False)
    rank.setflags(write=False)
    return order, rank


@dataclass(frozen=True)
class Grid:
    """The public layout of the query vector: K = C(d, s) blocks, one per subset S of s coordinates
    (:func:`~dpsynth_core.transport.marginals.marginal_subsets` order), of k^s cells each, ordered
    along the snake path (``order``, ``rank``: :func:`path_rank`).

    On a mixed domain ``blocks`` (:class:`~.mixed.MixedBlocks`) describes blocks of different sizes
    padded to a common width ``m``; ``order`` and ``rank`` are then (K, m) arrays, one row per block, and
    :meth:`to_row`, :meth:`to_path`, :meth:`bins`, :meth:`noise` dispatch to it."""

    d: int
    s: int
    k: int
    blocks: Any = None

    @property
    def mixed(self) -> bool:
        return self.blocks is not None

    @functools.cached_property
    def subsets(self) -> list[tuple[int, ...]]:
        return marginal_subsets(self.d, self.s)

    @property
    def K(self) -> int:
        """Number of blocks, C(d, s)."""
        return len(self.subsets)

    @property
    def m(self) -> int:
        """Cells per block, k^s (on a mixed domain the padded width, the largest block's cells)."""
        return self.blocks.m if self.mixed else self.k**self.s

    @property
    def order(self) -> np.ndarray:
        """``order[p]``: the row-major cell at path position p (per block on a mixed domain)."""
        return self.blocks.order if self.mixed else path_rank(self.k, self.s)[0]

    @property
    def rank(self) -> np.ndarray:
        """``rank[c]``: the path position of row-major cell c (per block on a mixed domain)."""
        return self.blocks.rank if self.mixed else path_rank(self.k, self.s)[1]

    def to_row(self, w_path: np.ndarray) -> np.ndarray:
        """Blocks in path order -> row-major cell order (row-major cell c sits at path position rank[c])."""
        return self.blocks.to_row(w_path) if self.mixed else w_path[..., self.rank]

    def to_path(self, w_row: np.ndarray) -> np.ndarray:
        """Blocks in row-major cell order -> path order."""
        return self.blocks.to_path(w_row) if self.mixed else w_row[..., self.order]

    def bins(self, points: np.ndarray, weights: np.ndarray | None) -> np.ndarray:
        """Counts (``weights`` None) or summed weights per cell of the points (unit rows), path order."""
        if self.mixed:
            return self.blocks.bins(points, weights)
        return marginal_bins(points, self.s, self.k, "path", weights)

    def noise(self, scale: Any, rng: np.random.Generator, *, draws: int | None = None,
              exact_total: bool) -> np.ndarray:
        """The Haar-transformed Laplace noise of every block (:func:`haar_block_noise`; on a mixed domain
        per block of its own size, ``scale`` one value per block)."""
        if self.mixed:
            return self.blocks.noise(scale, rng, draws=draws, exact_total=exact_total)
        return haar_block_noise(self.K, self.k, self.s, scale, rng, draws=draws, exact_total=exact_total)

    def cells_of(self, points: np.ndarray, b: int) -> np.ndarray:
        """Row-major cell of each point (unit rows) in block b."""
        if self.mixed:
            return self.blocks.cell_index(points, b)
        return cell_of(points[:, self.subsets[b]], self.k)

    @property
    def uniform(self) -> np.ndarray | float:
        """The block totals' uniform tables c0: 1/m_S on every cell of block S (0 on padding)."""
        if not self.mixed:
            return 1.0 / self.m
        return np.where(self.blocks.real, 1.0 / self.blocks.cells[:, None], 0.0)


def marginal_bins(arr: np.ndarray, s: int, k: int, order: str, weights: np.ndarray | None) -> np.ndarray:
    """The one implementation of the s-marginal histograms (arguments already checked).

    Without ``weights``: int64 counts (K, k^s), exactly additive over disjoint row blocks; with
    ``weights``: their float sums per cell (``np.bincount`` weights)."""
    subsets = marginal_subsets(arr.shape[1], s)
    m = k**s
    out = np.empty((len(subsets), m), dtype=np.int64 if weights is None else np.float64)
    _, rank = path_rank(k, s)
    for b, S in enumerate(subsets):
        cells = cell_of(arr[:, S], k)
        if order == "path":
            cells = rank[cells]
        out[b] = np.bincount(cells, weights=weights, minlength=m)
    return out


def marginal_counts(U: Any, s: int, k: int, order: str = "path") -> np.ndarray:
    """The per-record statistic of the query operator: integer counts of all discretised s-marginals.

    .. math:: c^S_i = \\#\\{x \\in U : P^S x \\in \\text{cell } i \\text{ of } T_{k,s}\\}, \\quad S \\subset [d],\\ |S| = s

    Counts of disjoint row blocks add up to the counts of their union, exactly (int64), so
    :meth:`dpsynth_core.rows.Rows.sum` computes them block by block (in memory: once on all rows; with
    Dask: per partition, merged in a tree) with the same result. :func:`marginal_vector` is
    ``marginal_counts(U, s, k, order) / n``.

    Parameters
    ----------
    U : array (n, d) in the unit cube (n may be 0: an empty block)
    s : int in [1, d]; k : int >= 1
    order : {"path", "row"}
        Cell order within a block: along the snake path (the paper's ordering) or row-major.

    Returns
    -------
    int64 ndarray of shape (K, k^s), K = C(d, s), each row summing to n.
    """
    owner = "marginal_counts"
    arr = check_points(U, "U", owner, min_rows=0)
    ss = check_int(s, "s", owner, low=1, high=arr.shape[1])
    kk = check_int(k, "k", owner, low=1)
    check_choice(order, "order", owner, ("path", "row"))
    return marginal_bins(arr, ss, kk, order, None)


def marginal_vector(U: Any, s: int, k: int, weights: Any = None, *, order: str = "path") -> np.ndarray:
    """The query operator T of [DLS+24, Section 3]: all discretised s-marginals.

    .. math:: (T\\mu)^S_i = \\mu\\{x : P^S x \\in \\text{cell } i \\text{ of } T_{k,s}\\}, \\quad S \\subset [d],\\ |S| = s

    Parameters
    ----------
    U : array (n, d) in the unit cube
    s : int in [1, d]; k : int >= 1
    weights : array (n,) of non-negative weights summing to 1, optional (default uniform 1/n)
    order : {"path", "row"}
        Cell order within a block: along the snake path (the paper's ordering) or row-major.

    Returns
    -------
    ndarray of shape (K, k^s), each row summing to 1 (for probability weights). With uniform weights
    each entry is the count of its cell (:func:`marginal_counts`) divided by n, correctly rounded.
    """
    owner = "marginal_vector"
    arr = check_points(U, "U", owner)
    ss = check_int(s, "s", owner, low=1, high=arr.shape[1])
    kk = check_int(k, "k", owner, low=1)
    check_choice(order, "order", owner, ("path", "row"))
    if weights is None:
        return marginal_bins(arr, ss, kk, order, None) / arr.shape[0]
    return marginal_bins(arr, ss, kk, order, np.asarray(weights, dtype=float))


# -------------------------------------------------------------------------------------- noise
def noise_scale(n: int, epsilon: float, d: int, s: int, k: int | None = None, *, exact_total: bool = False) -> float:
    """Laplace scale of the Haar coefficients [DLS+24, Lemma 2, Section 3].

    .. math:: b = \\frac{\\|\\Phi^{-1}\\|_1 \\Delta_T}{\\varepsilon} = \\frac{2\\binom{d}{s}}{n\\varepsilon}
              \\qquad\\Big(\\text{exact total: } b = \\frac{2\\binom{d}{s}}{n\\varepsilon}\\cdot\\frac{L}{L+1},\\
              L = \\lceil \\log_2 k^s \\rceil\\Big)

    Paper (``exact_total=False``): under replace each block moves by at most 2/n in l1 and
    :math:`\\|\\Phi^{-1}\\|_1 = 1` (Lemma 3), so the K blocks have :math:`\\Delta = 2K/n` after :math:`\\Phi^{-1}`.
    Exact total: under replace every block sums to 1 for every dataset, so the root Haar coefficient
    :math:`(\\Phi^{-1}v)_0 = 1/(L+1)` is public and needs no noise; one record moves the other coefficients of
    :math:`M_L^{-1}v` by at most 2/n per level (one ±1/n for each of the two cells), i.e.
    :math:`\\|\\Phi^{-1}(v - v')\\|_1 \\le 2L/((L+1)n)` per block (docs/sparse-marginals.md, "Step 2: noise": under replace the block totals
    are exact; :func:`dpsynth_core.haar.privatize_counts` does the same).

    Parameters
    ----------
    n : int >= 1 (public under replace); epsilon : float in (0, inf); d : int >= 1; s : int in [1, d]
    k : int >= 1, needed with ``exact_total``
    exact_total : bool, default False

    References
    ----------
    .. [DLS+24] K. Donhauser, J. Lokna, A. Sanyal, M. Boedihardjo, R. Hönig, F. Yang. Certified private data release for sparse Lipschitz functions. AISTATS 2024.
       See docs/references.md.
    """
    owner = "noise_scale"
    nn = check_int(n, "n", owner, low=1)
    eps = check_float(epsilon, "epsilon", owner, low=0.0, low_open=True)
    dd = check_int(d, "d", owner, low=1)
    ss = check_int(s, "s", owner, low=1, high=dd)
    b = 2.0 * math.comb(dd, ss) / (nn * eps)
    if check_bool(exact_total, "exact_total", owner):
        if k is None:
            raise param_error(owner, "k", "an int >= 1 when exact_total is True", k)
        lev = levels_for(check_int(k, "k", owner, low=1) ** ss)
        b *= lev / (lev + 1.0) if lev > 0 else 1.0
    return b


def haar_block_noise(K: int, k: int, s: int, scale: float, rng: Any = None, *, draws: int | None = None,
                     exact_total: bool = False) -> np.ndarray:
    """Independent superregular noise :math:`[\\Phi\\tilde\\eta^S]_{1:k^s}` for each of K blocks (Eq. (7)).

    Parameters
    ----------
    K : int >= 1 blocks; k, s : grid of ``k^s`` cells per block; scale : float in (0, inf), Laplace scale b
    rng : numpy Generator, int or None
    draws : int or None
        Independent draws stacked along a leading axis.
    exact_total : bool, default False
        Leave the root Haar coefficient (the block's total mass) noiseless (see :func:`noise_scale`).

    Returns
    -------
    ndarray of shape (K, k^s) or (draws, K, k^s), in path order.
    """
    owner = "haar_block_noise"
    KK = check_int(K, "K", owner, low=1)
    m = check_int(k, "k", owner, low=1) ** check_int(s, "s", owner, low=1)
    gen = check_rng(rng, owner)
    nd = 1 if draws is None else check_int(draws, "draws", owner, low=1)
    if m == 1:
        # One cell: Φ = (0 + 1) M_0 = [1], the noise is the Laplace coefficient itself.
        noise = np.zeros((nd * KK, 1)) if exact_total else gen.laplace(0.0, scale, (nd * KK, 1))
    else:
        noise = superregular_noise(m, scale=scale, rng=gen, draws=nd * KK, exact_total=bool(exact_total))
    noise = noise.reshape(nd, KK, m)
    return noise[0] if draws is None else noise


@functools.lru_cache(maxsize=16)
def block_noise_factor(k: int, s: int, exact_total: bool) -> np.ndarray:
    """F (m, 2^L) with block noise = b·F·η̃ in row-major cell order (η̃ i.i.d. standard Laplace)."""
    m = k**s
    if m == 1:
        F = np.zeros((1, 1)) if exact_total else np.ones((1, 1))
    else:
        lev = levels_for(m)
        F = haar_synthesis(np.eye(1 << lev), scaled=True).T[:m]  # column j = Φ e_j, path positions
        if exact_total:
            F = F[:, 1:]
        _, rank = path_rank(k, s)
        F = F[rank]  # row-major cell c sits at path position rank[c]
    F = np.ascontiguousarray(F)
    F.setflags(write=False)
    return F


# ---------------------------------------------------------------------------------- default k
def default_k(n: int, epsilon: float, d: int, s: int, *, k_max: int | None = None, k_min: int = 1) -> int:
    """Data-independent default grid: the k minimising the paper's expected-loss bound.

    .. math:: k^\\star = \\arg\\min_k \\ \\frac{1}{2k} + \\frac{2}{k}\\sum_{l=1}^{k^s} \\sqrt2\\, b\\,
              \\Big\\|\\sum_{j \\le l} \\Phi_j\\Big\\|_2, \\qquad b = \\frac{2\\binom ds}{n\\varepsilon}

    i.e. Eq. (15) (:math:`\\mathbb E\\,\\mathcal U \\le 1/2k + 2\\,\\mathbb E\\,\\mathcal L_T(0, \\eta)`) with Jensen's
    bound :math:`\\mathbb E|\\sum_{j\\le l}\\eta_j| \\le \\mathrm{sd}` of Eq. (30) for each block (the maximum over
    blocks is not accounted for). It depends on (n, ε, d, s) only. Theorem 1 gives the order
    :math:`k \\asymp (\\binom ds \\log(\\varepsilon n)^2/(n\\varepsilon))^{-1/s}` without constants.

    Parameters
    ----------
    n : int >= 1; epsilon : float in (0, inf); d : int >= 1; s : int in [1, d]
    k_max : int, optional; default: the largest k with ``k^s <= 4096``.
    k_min : int, default 1
        The smallest k searched (at most ``k_max``). The mechanism's default grid searches from 2: at k = 1
        every released point is the box's centre (docs/sparse-marginals.md, "Default grid").

    The search is over the bounded set k = 1..k_max (at most 4096 values, for s = 1), evaluated at
    once: the sum over l depends on k only through the prefix length k^s and the Haar depth
    :math:`L = \\lceil\\log_2 k^s\\rceil`, so one cumulative sum per depth (at most 13) gives every
    candidate; the cost does not grow with n.
    """
    b = noise_scale(n, epsilon, d, s)
    if k_max is None:
        k_max = max(1, int(math.floor(4096 ** (1.0 / s) + 1e-9)))
    ks = np.arange(1, int(k_max) + 1)
    vals = np.empty(ks.size)
    ms = ks.astype(np.int64) ** s
    levs = np.array([levels_for(int(m)) for m in ms])
    for lev in np.unique(levs):  # one cumulative sum per Haar depth (at most 13)
        sel = levs == lev
        prefix = np.cumsum(_prefix_norms(int(lev)))
        vals[sel] = 0.5 / ks[sel] + 2.0 * math.sqrt(2.0) * b * prefix[ms[sel] - 1] / ks[sel]
    best_k, best = 1, math.inf
    floor = min(max(1, int(k_min)), int(k_max))
    for k, val in zip(ks.tolist(), vals.tolist(), strict=True):  # first k that improves by more than 1e-15
        if k >= floor and val < best - 1e-15:
            best_k, best = k, val
    return best_k


@functools.lru_cache(maxsize=32)
def _prefix_norms(lev: int) -> np.ndarray:
    out = prefix_row_norms(lev, scaled=True)
    out.setflags(write=False)
    return out
