"""Certified private release for sparse Lipschitz queries (Donhauser et al., AISTATS 2024 [DLS+24]).

The utility loss of a synthetic measure μ against the data's empirical measure μ_D is the largest
Wasserstein-1 distance over all s-dimensional marginals ([DLS+24, Eq. (1)]; l_inf metric on
``[0,1]^s``, probability measures, unit-cube coordinates):

.. math:: \\mathcal U(\\mu_D, \\mu) = \\max_{S \\subset [d],\\ |S| = s} W_1(P^S_\\# \\mu_D, P^S_\\# \\mu)

Algorithm 1 of the paper, as implemented by :func:`sparse_marginals`:

1. **Query operator** T: for every subset S of s coordinates (K = C(d, s) blocks) the normalised
   histogram of the S-marginal on the grid :math:`T_{k,s}` (``k^s`` cells of side 1/k, centres
   ``(2i-1)/2k``), cells ordered along the boustrophedon (snake) path, whose consecutive centres are
   l_inf neighbours at distance 1/k (Section 3, Appendix C.1). Under replace neighbours one record
   moves two entries of each block by 1/n: :math:`\\Delta_T = 2K/n` (Section 3, Lemma 4's proof).
2. **Noise**: per block :math:`v^S_{DP} = v^S + [\\Phi \\tilde\\eta^S]_{1:k^s}` with Φ the rescaled
   transposed Haar matrix of Lemma 3 (``||Φ^{-1}||_1 = 1``, padding to a power of two) and
   :math:`\\tilde\\eta \\sim \\mathrm{Lap}(\\|\\Phi^{-1}\\|_1\\Delta_T/\\varepsilon) = \\mathrm{Lap}(2K/(n\\varepsilon))`
   i.i.d. (Eq. (7), Lemma 2): ε-DP. The noise comes from :func:`dpsynth_core.haar.superregular_noise`.
3. **Projection** (Eq. (12) restricted to measures on public points, Section 5.1, Eq. (16)):
   minimise the proxy loss of Eq. (10)

   .. math:: \\mathcal L_T(v, u) = \\max_S \\frac1k \\sum_{l=1}^{k^s} \\Big|\\sum_{i \\le l} v^S_i - u^S_i\\Big|

   over :math:`\\mu = \\sum_j \\alpha_j \\delta_{z_j}`, α in the simplex, as a sparse linear program
   with cumulative-sum variables per block (:func:`step3_lp`).
4. **Certificate** (Eq. (4), Lemma 1): with probability at least 1 - δ over the noise, for every
   probability measure μ,

   .. math:: \\mathcal U(\\mu_D, \\mu) \\le \\underbrace{\\tfrac{1}{2k}}_{\\text{discretisation}}
             + \\underbrace{q_{1-\\delta}(\\mathcal G(0, \\eta))}_{\\text{privatisation}}
             + \\underbrace{\\mathcal G(v_{DP}, T\\mu) + \\mathcal U(T^{-1}T\\mu, \\mu)}_{\\text{projection}}

   with G = L_T (Eq. (10)) or the tighter :math:`\\mathcal U_T` of Eq. (17) (:func:`proxy_ut`). The
   quantile is estimated by Monte Carlo over M fresh noise draws (no data involved), so the whole
   certificate is differentially private (post-processing of v_DP and public inputs). The estimate is
   the ⌈(1-δ)(M+1)⌉-th smallest draw (:func:`mc_order`): by exchangeability of the noise actually added
   with the M fresh draws, the release's privatisation term exceeds it with probability at most δ,
   over the noise and the draws together, so the certificate holds with probability at least 1-δ
   exactly (the ⌈(1-δ)M⌉-th draw would be exceeded with probability slightly above δ).

5. **Consistent certificate** (the default released bound; not in the paper, an instance of its
   Lemma 1). Lemma 1 needs only a proxy G that is translation invariant, satisfies the triangle
   inequality and dominates U on differences of query vectors, :math:`x = \\mathbb T\\mu_D - \\mathbb T\\mu`.
   Every such x lies in :math:`\\ker A` (:func:`consistency_constraints`: zero block totals; the
   s-marginals of one signed measure share their (s-1)-marginals). For *any* fixed matrix M the map
   :math:`\\Pi = I - MA` is the identity on :math:`\\ker A`, so :math:`\\mathcal G_\\Pi(v, u) = \\mathcal G(\\Pi(v - u))`
   is again a valid proxy: translation invariant, a seminorm (triangle inequality), and
   :math:`\\mathcal G_\\Pi(\\mathbb T\\mu_D, \\mathbb T\\mu) = \\mathcal G(\\mathbb T\\mu_D, \\mathbb T\\mu)`. Lemma 1 then gives, w.p.
   :math:`\\ge 1-\\delta`, :math:`\\mathcal U(\\mu_D,\\mu) \\le 1/2k + q_{1-\\delta}(\\mathcal G(\\Pi\\eta)) + \\mathcal G(\\Pi v_{DP} - \\mathbb T\\mu)
   + \\mathcal U(\\mathbb T^{-1}\\mathbb T\\mu, \\mu)` uniformly in μ (:math:`\\Pi\\mathbb T\\mu = \\mathbb T\\mu` up to the block
   totals, which the affine version :math:`v_{cons} = c_0 + \\Pi(v_{DP} - c_0)`, c0 the uniform tables, keeps).
   Π is fixed before the data are seen (it depends on d, s, k and the noise law only), so the bound is
   post-processing of :math:`v_{DP}`; the quantile is a Monte Carlo estimate over fresh draws of
   :math:`\\Pi\\eta`. M is the generalised-least-squares choice (:func:`consistency_map`), which removes the
   components of the noise that no dataset can produce (inconsistent lower marginals; with the paper's
   noise also the block totals). With G = U_T, per block
   :math:`W_1(P^S\\mu_D, P^S\\mu) \\le \\|P^S\\mu_D - T^{-1}v^S\\|_{KR} + \\|T^{-1}(\\Pi\\eta)^S\\|_{KR}
   + \\|T^{-1}v^S_{cons} - P^S\\mu\\|_{KR}` (norm of zero-mass signed measures, the origin absorbing any
   mass imbalance as in Eq. (17)); the first term is at most 1/2k, the second is the block's
   :math:`\\mathcal U_T(0, \\Pi\\eta)`, and the last is computed exactly (:func:`kr_grid_points`): for public
   points snapped to :math:`T_{k,d}` it *equals* the block's :math:`\\mathcal U_T(\\Pi v_{DP}, \\mathbb T\\mu)`
   (both measures live on the grid centres), for unsnapped points it is at most
   :math:`\\mathcal U_T(\\Pi v_{DP}, \\mathbb T\\mu) + \\mathcal U(\\mathbb T^{-1}\\mathbb T\\mu, \\mu)` by the triangle inequality.
   With one quantile for the maximum over blocks, the maximum over blocks of the per-block sum equals
   the sum of the per-term maxima (only the projection term varies by block). The paper's certificates
   (Π = I) stay in the trace. The effect of the projection on the U_T quantile, the projection term,
   the certificate / loss ratio and the exceedance frequency (n = 2000, d = 4, s = 2, k = 8, ε = 1, two
   datasets) is measured in ``benchmarks/results/sparse_marginals.json`` ("coverage_tightness").

Only the replace relation is supported: the histograms are normalised by n, which must be public
(the paper's setting). Under add/remove the mechanism refuses to run.

The private rows are read once, through the integer counts of all the discretised s-marginals
(:func:`marginal_counts`, a per-record statistic summed by :meth:`dpsynth_core.rows.Rows.sum`); the
true query vector is those counts divided by the public n, correctly rounded per cell. Everything
else (noise, Step 3, certificate, the owner-side trace) uses only the counts, public inputs and fresh
noise, so X may be a Dask array or DataFrame that does not fit in memory, and with the same rng the
release is bit for bit the one for the same rows in memory, in any number of partitions.
"""

from __future__ import annotations

import functools
import itertools
import math
import time
import warnings
from typing import Any

import numpy as np
from scipy import sparse
from scipy.optimize import linprog

from .. import limits
from ..domain import Domain
from ..grid import cell_centres, cell_of, largest_remainder
from ..haar import haar_synthesis, levels_for, superregular_noise
from ..paths import snake_order
from ..privacy import Ledger
from ..theory import Theory, marginal_rate
from ..transport.marginals import marginal_subsets, sparse_utility_loss, unique_weighted
from ..validation import (
    check_bool,
    check_choice,
    check_float,
    check_int,
    check_points,
    check_rng,
    param_error,
)
from .base import ParamSpec, Release, prepare, register

__all__ = [
    "sparse_marginals",
    "sparse_utility_loss",
    "marginal_subsets",
    "marginal_vector",
    "marginal_counts",
    "noise_scale",
    "haar_block_noise",
    "proxy_lt",
    "proxy_ut",
    "proxy_ut_lp",
    "step3_lp",
    "step3_dense_lp",
    "step3_ut_lp",
    "NOISES",
    "CONSISTENCY",
    "consistency_constraints",
    "consistency_map",
    "consistent_part",
    "kr_grid_points",
    "default_k",
    "discretise_support",
    "shift_scenario",
    "PUBLIC_GENERATORS",
    "CERTIFICATES",
    "MAX_CELLS_PER_BLOCK",
    "MAX_CELLS_TOTAL",
]

_OWNER = "sparse_marginals"
#: Data-independent generators of public candidate points (``public=...``).
PUBLIC_GENERATORS: tuple[str, ...] = ("uniform", "grid")
CERTIFICATES: tuple[str, ...] = ("U_T", "L_T")
NOISES: tuple[str, ...] = ("paper", "exact_total")
#: Where the consistency projection Π of the noisy marginals is used (module docstring).
CONSISTENCY: tuple[str, ...] = ("certificate", "both", "none")
#: Largest k^s (cells per block) and K·k^s (entries of the query vector) accepted.
MAX_CELLS_PER_BLOCK = 2**16
MAX_CELLS_TOTAL = 2**21
#: Weight of the tie-breaking term in Step 3 (see :func:`step3_lp`).
TIE_BREAK = 1e-3
#: Above this many cells per block U_T uses the sparse king-move transshipment instead of a dense cost.
_DENSE_UT_MAX = 400
#: Consistency projection (:func:`consistency_map`): size limits and the GLS limit on cells per block.
_CONS_MAX_ROWS = 4000
_CONS_MAX_ENTRIES = 20_000_000
_CONS_GLS_MAX_CELLS = 1024
#: Largest number of transport nodes for the exact unsnapped projection term (:func:`kr_grid_points`).
_DIRECT_MAX_NODES = 3000


# ----------------------------------------------------------------------------- query operator
@functools.lru_cache(maxsize=64)
def _path_rank(k: int, s: int) -> tuple[np.ndarray, np.ndarray]:
    """(order, rank): ``order[p]`` = row-major cell at path position p; ``rank[c]`` = position of cell c."""
    order = snake_order(k, s)
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size, dtype=np.int64)
    order.setflags(write=False)
    rank.setflags(write=False)
    return order, rank


def _marginal_bins(arr: np.ndarray, s: int, k: int, order: str, weights: np.ndarray | None) -> np.ndarray:
    """The one implementation of the s-marginal histograms (arguments already checked).

    Without ``weights``: int64 counts (K, k^s), exactly additive over disjoint row blocks; with
    ``weights``: their float sums per cell (``np.bincount`` weights)."""
    subsets = marginal_subsets(arr.shape[1], s)
    m = k**s
    out = np.empty((len(subsets), m), dtype=np.int64 if weights is None else np.float64)
    _, rank = _path_rank(k, s)
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
    return _marginal_bins(arr, ss, kk, order, None)


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
        return _marginal_bins(arr, ss, kk, order, None) / arr.shape[0]
    return _marginal_bins(arr, ss, kk, order, np.asarray(weights, dtype=float))


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


# ------------------------------------------------------------------------------- proxy losses
def proxy_lt(w_path: Any, k: int, *, per_block: bool = False):
    """The proxy loss of [DLS+24, Eq. (10)] of a signed vector ``w = v - u`` (blocks in path order).

    .. math:: \\mathcal L_T(v, u) = \\max_S \\frac1k \\sum_{l=1}^{k^s} \\Big|\\sum_{i\\le l} w^S_i\\Big|

    Parameters
    ----------
    w_path : array (..., K, k^s), cells of each block in snake-path order
    k : int >= 1
    per_block : bool, default False
        Return the per-block values (..., K) instead of their maximum (...,).

    References
    ----------
    .. [DLS+24] K. Donhauser, J. Lokna, A. Sanyal, M. Boedihardjo, R. Hönig, F. Yang. Certified private data release for sparse Lipschitz functions. AISTATS 2024.
       See docs/references.md.
    """
    w = np.asarray(w_path, dtype=float)
    vals = np.abs(np.cumsum(w, axis=-1)).sum(axis=-1) / float(k)
    return vals if per_block else vals.max(axis=-1)


@functools.lru_cache(maxsize=16)
def _ut_dense_cost(k: int, s: int) -> np.ndarray:
    """l_inf distances among {origin} ∪ T_{k,s} (row-major cells), node 0 the origin."""
    pts = np.vstack([np.zeros((1, s)), cell_centres(k, s)])
    cost = np.max(np.abs(pts[:, None, :] - pts[None, :, :]), axis=2)
    cost.setflags(write=False)
    return cost


@functools.lru_cache(maxsize=16)
def _king_edges(k: int, s: int) -> np.ndarray:
    """Directed king-move edges (pairs of row-major cells at l_inf distance 1/k) of the k^s grid."""
    idx = np.arange(k**s, dtype=np.int64).reshape((k,) * s)
    parts = []
    for off in itertools.product((-1, 0, 1), repeat=s):
        if not any(off):
            continue
        src = idx[tuple(slice(max(0, -o), k - max(0, o)) for o in off)]
        dst = idx[tuple(slice(max(0, o), k - max(0, -o)) for o in off)]
        parts.append(np.stack([src.ravel(), dst.ravel()], axis=1))
    edges = np.concatenate(parts) if parts else np.zeros((0, 2), dtype=np.int64)
    edges.setflags(write=False)
    return edges


def _emd_value(a: np.ndarray, b: np.ndarray, M) -> float:
    import ot

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # we read POT's status instead of its warnings
        val, log = ot.emd2(a, b, M, numItermax=100_000_000, log=True)
    if log.get("warning") is not None:
        raise RuntimeError(f"POT's network simplex did not reach optimality: {log['warning']}")
    return float(val)


def _ut_one(w: np.ndarray, k: int, s: int) -> float:
    """U_T of one block (signed vector w, row-major cells), exact by Kantorovich–Rubinstein duality.

    With f(0) = 0 at the origin, :math:`\\sum_i f(z_i) w_i = \\int f\\,d\\nu` for the zero-mass signed
    measure :math:`\\nu = \\sum_i w_i\\delta_{z_i} - (\\sum_i w_i)\\delta_0`, so
    :math:`\\mathcal U_T = W_1(\\nu^+, \\nu^-)` on :math:`\\{0\\} \\cup T_{k,s}` with the l_inf metric.
    """
    m = w.size
    nu = np.concatenate([[-w.sum()], w])
    if not np.any(nu):
        return 0.0
    if m <= _DENSE_UT_MAX:
        pos, neg = nu > 0, nu < 0
        a, b = nu[pos], -nu[neg]
        b = b * (a.sum() / b.sum())  # remove rounding imbalance (relative 1e-16)
        return _emd_value(a, b, np.ascontiguousarray(_ut_dense_cost(k, s)[np.ix_(pos, neg)]))
    # Sparse transshipment on the king-move graph (l_inf distance between grid centres is the graph
    # distance with edge length 1/k); the origin connects to the corner cell (distance 1/2k), which
    # realises ||z||_inf = 1/2k + (graph distance to the corner) for every centre z. Written as a
    # transportation problem with a buffer B on every node (zero-cost self arcs).
    edges = _king_edges(k, s)
    n_nodes = m + 1
    rows = np.concatenate([edges[:, 0] + 1, [0, 1], np.arange(n_nodes)])
    cols = np.concatenate([edges[:, 1] + 1, [1, 0], np.arange(n_nodes)])
    cost = np.concatenate([np.full(edges.shape[0], 1.0 / k), [0.5 / k, 0.5 / k], np.zeros(n_nodes)])
    M = sparse.coo_matrix((cost, (rows, cols)), shape=(n_nodes, n_nodes))
    B = float(np.abs(nu).sum())
    a = B + np.maximum(nu, 0.0)
    b = B + np.maximum(-nu, 0.0)
    b = b * (a.sum() / b.sum())
    return _emd_value(a, b, M)


#: Relative slack on the cheap U_T bounds (they are exact-arithmetic bounds; the slack absorbs rounding).
_BOUND_SLACK = 1e-12
#: An exact transport solve on a block of m cells counts ⌈m / _SOLVE_CELLS⌉ solves against the limit.
_SOLVE_CELLS = 64


def _solve_cost(m: int) -> int:
    """What one exact solve on m cells (or transport nodes) counts against ``max_transport_solves``."""
    return max(1, -(-int(m) // _SOLVE_CELLS))


class _SolveBudget:
    """Counts exact transport solves of a certificate against ``limits.current().max_transport_solves``.

    An explicit choice (``k`` given) is *hard*: its plan (:func:`_ut_solve_plan`, from the cheap bounds)
    is checked before any solve and a plan above the limit raises the project's one-line ValueError
    naming ``k`` (the cells per block drive the cost) and what else to change (:meth:`refuse`). The
    default grid is chosen so that its plan fits (:func:`_default_k_within_budget`) and is *soft*: should
    its fresh draws still need more, the remaining solves are declined and their proven upper bounds
    used (a looser, still valid certificate, noted in the release). The count depends on public inputs,
    fresh noise and the DP output (v_DP, α): refusing on it is post-processing."""

    def __init__(self, owner: str, *, k: int, s: int, K: int, mc_draws: int, soft: bool = False):
        self.limit = limits.current().max_transport_solves
        self.used = 0
        self.declined = 0
        self.soft = soft
        self.owner, self.k, self.s, self.K, self.mc_draws = owner, k, s, K, mc_draws

    def refuse(self, planned: int | None = None) -> None:
        need = "more" if planned is None else f"up to {planned}"
        raise ValueError(
            f"The 'k' parameter of {self.owner} must keep the certificate within {self.limit} exact transport "
            f"solves (dpsynth_core.limits max_transport_solves); pass a smaller k or s, fewer mc_draws, "
            f"certificate='L_T' (no transport), or raise the limit with "
            f"dpsynth_core.limits.override(max_transport_solves=...). Got k={self.k} ({self.K} blocks of "
            f"{self.k}^{self.s} cells, {self.mc_draws} Monte Carlo draws), which needs {need}.")

    def charge(self, m: int) -> bool:
        """Count one exact solve on m cells; True if it may run. Over the limit a hard budget raises and a
        soft one declines: the caller then uses a proven upper bound."""
        cost = _solve_cost(m)
        if self.used + cost <= self.limit:
            self.used += cost
            return True
        if self.soft:
            self.declined += 1
            return False
        self.refuse()


def _ut_bounds(w_row: np.ndarray, k: int, s: int) -> tuple[np.ndarray, np.ndarray]:
    """Cheap lower and upper bounds on :math:`\\mathcal U_T` of every block, arrays (..., K).

    Upper: every admissible f has :math:`|f(z)| \\le \\|z\\|_\\infty` (f(0) = 0), so
    :math:`\\mathcal U_T \\le \\sum_i |w_i|\\,\\|z_i\\|_\\infty`; and along the snake path (first cell the
    corner, :math:`\\|z\\|_\\infty = 1/2k`; consecutive centres at distance 1/k) summation by parts gives
    :math:`\\sum_l f_l w_l = f_1 R_1 + \\sum_{l \\ge 2}(f_l - f_{l-1})R_l \\le |R_1|/2k + \\sum_{l\\ge2}|R_l|/k`
    with the tail sums :math:`R_l = \\sum_{i \\ge l} w_i`. Lower: :math:`|\\sum_i f(z_i) w_i|` for the
    admissible :math:`f = \\|z\\|_\\infty` and :math:`f = z_a` (a = 1..s). Both are widened by a relative
    1e-12 against rounding; for one cell (k^s = 1) they coincide with the exact value :math:`|w|/2k`.
    """
    w = np.asarray(w_row, dtype=float)
    order, _ = _path_rank(k, s)
    cent = cell_centres(k, s)
    norms = cent.max(axis=1)
    ub = np.abs(w) @ norms
    tails = np.cumsum(w[..., order][..., ::-1], axis=-1)[..., ::-1]
    ub = np.minimum(ub, np.abs(tails[..., 0]) * (0.5 / k) + np.abs(tails[..., 1:]).sum(axis=-1) / k)
    lb = np.abs(w @ np.column_stack([norms, cent])).max(axis=-1)
    return lb * (1.0 - _BOUND_SLACK), ub * (1.0 + _BOUND_SLACK)


def _ut_exact(w: np.ndarray, k: int, s: int, budget: _SolveBudget | None) -> float:
    if w.size == 1:  # one cell: the centre is at distance 1/2k from the origin
        return abs(float(w[0])) * (0.5 / k)
    if not np.any(w):
        return 0.0
    if budget is not None and not budget.charge(w.size):
        # a soft budget declined: the cheap upper bound is a proven bound on the exact value (conservative)
        return float(_ut_bounds(w[None, :], k, s)[1][0])
    return _ut_one(w, k, s)


def _ut_block_max(w_row: np.ndarray, k: int, s: int, budget: _SolveBudget | None = None,
                  bounds: tuple[np.ndarray, np.ndarray] | None = None) -> float:
    """:math:`\\max_S \\mathcal U_T` of the blocks of ``w_row`` (K, k^s), exact, solving only the blocks
    whose upper bound (:func:`_ut_bounds`) exceeds the best exact value found so far."""
    lb, ub = _ut_bounds(w_row, k, s) if bounds is None else bounds
    best = -math.inf
    for b in np.argsort(-ub, kind="stable"):
        if ub[b] <= best:
            break
        best = max(best, _ut_exact(w_row[b], k, s, budget))
    return float(max(best, 0.0))


def _ut_solve_plan(w_row: np.ndarray, k: int, s: int, delta: float | None = None) -> int:
    """An upper bound, from the cheap bounds only (no transport solve), on what :func:`_ut_quantile`
    (``delta`` given; ``w_row`` of shape (M, K, k^s)) or :func:`_ut_block_max` (``delta=None``, shape
    (K, k^s)) can charge to the solve budget.

    A draw is refined only while its interval [max lb, max ub] meets the order statistic's range, which
    only narrows as draws are refined, so the draws whose initial interval meets the initial range are a
    superset of the refined ones. Within a draw, :func:`_ut_block_max` solves blocks by decreasing upper
    bound and stops at the first whose upper bound is at most the best exact value; the block with the
    largest lower bound comes before any block whose upper bound is below that lower bound, so only
    blocks with ub >= max lb can be solved. One-cell and all-zero blocks cost nothing."""
    w = np.asarray(w_row, dtype=float)
    if k**s == 1:
        return 0
    lb, ub = _ut_bounds(w, k, s)
    if delta is None:
        lb, ub, w = lb[None], ub[None], w[None]
    lo, hi = lb.max(axis=-1), ub.max(axis=-1)
    if delta is None:
        open_ = np.ones(lo.shape, dtype=bool)
    else:
        r = mc_order(lo.size, delta) - 1
        q_lo, q_hi = float(np.partition(lo, r)[r]), float(np.partition(hi, r)[r])
        open_ = (hi >= q_lo) & (lo <= q_hi)
    solvable = (ub >= lo[:, None]) & np.any(w != 0, axis=-1)
    return int(solvable[open_].sum()) * _solve_cost(k**s)


def _default_k_within_budget(k0: int, s: int, K: int, M: int, delta: float, n_quantiles: int, exact_total: bool,
                             rng: np.random.Generator, allowance: int) -> int:
    """The largest k <= k0 whose estimated exact-solve plan for ``n_quantiles`` U_T quantiles is at most
    ``allowance``, each solve weighted by its own cost (one solve on m cells counts ⌈m/64⌉ against the
    limit but takes time of order m², so the default stays fast; the limit itself is the unweighted count):
    :func:`_ut_solve_plan` on at most 40 planning draws of the noise law (U_T and its bounds
    are positively homogeneous, so the plan does not depend on the noise scale, hence not on n or ε),
    scaled to M draws; bisection between 1 (no solve: one cell) and k0. Data-independent; the planning
    draws are not the certificate's."""
    Mp = min(M, 40)
    dp = max(delta, 1.0 / (Mp + 1))

    def fits(k: int) -> bool:
        if k**s == 1:
            return True
        _, rank = _path_rank(k, s)
        w = haar_block_noise(K, k, s, 1.0, rng, draws=Mp, exact_total=exact_total)[..., rank]
        # weighted by the cost of one solve again: a dense solve on m cells takes time of order m^2
        return n_quantiles * _ut_solve_plan(w, k, s, dp) * _solve_cost(k**s) * M / Mp <= allowance

    if fits(k0):
        return k0
    lo, hi = 1, k0
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if fits(mid) else (lo, mid)
    return lo


def _ut_quantile(w_row: np.ndarray, k: int, s: int, delta: float,
                 budget: _SolveBudget | None = None) -> tuple[float, np.ndarray]:
    """The Monte Carlo (1-δ) quantile (:func:`_quantile_high`, order statistic :func:`mc_order`) of :math:`\\max_S \\mathcal U_T` over the
    draws of ``w_row`` (M, K, k^s), exact, and the samples it is the order statistic of.

    Each draw's maximum lies in [max of the lower bounds, max of the upper bounds]; only the draws whose
    interval can still contain the order statistic are computed exactly (:func:`_ut_block_max`), until
    it is determined. The returned samples are exact for those draws; for the others they are the
    bound on the same side of the quantile (the upper bound below it, the lower bound above it), so the
    same order statistic of the samples is the quantile."""
    M = w_row.shape[0]
    lb, ub = _ut_bounds(w_row, k, s)
    lo, hi = lb.max(axis=-1), ub.max(axis=-1)
    exact = np.full(M, np.nan)
    known = np.zeros(M, dtype=bool)
    r = mc_order(M, delta) - 1

    def refine(t: int) -> None:
        exact[t] = _ut_block_max(w_row[t], k, s, budget, (lb[t], ub[t]))
        known[t] = True

    while True:
        lo_e = np.where(known, exact, lo)
        hi_e = np.where(known, exact, hi)
        q_lo = float(np.partition(lo_e, r)[r])
        q_hi = float(np.partition(hi_e, r)[r])
        open_ = ~known & (lo_e <= q_hi) & (hi_e >= q_lo) & ~((lo_e == hi_e) & (lo_e == q_hi))
        if q_lo == q_hi and not np.any(~known & (lo_e < q_hi) & (hi_e > q_hi)):
            break
        cand = np.flatnonzero(open_)
        if cand.size <= 4:
            picks = cand
        else:  # the undetermined draws at the order statistic of the lower and of the upper ends
            picks = {int(cand[np.argmin(np.abs(lo_e[cand] - q_lo))]), int(cand[np.argmin(np.abs(hi_e[cand] - q_hi))])}
        for t in picks:
            refine(int(t))
    q = q_hi
    samples = np.where(known, exact, np.where(hi <= q, hi, lo))
    return q, samples


def proxy_ut(w_row: Any, k: int, s: int, *, per_block: bool = False):
    """The tighter proxy loss :math:`\\mathcal U_T` of [DLS+24, Eq. (17)], exact.

    .. math:: \\mathcal U_T(v, u) = \\max_S \\sup_{f \\in \\mathcal F(T_{k,s}),\\ f(0) = 0}
              \\Big|\\sum_{z_i \\in T_{k,s}} f(z_i)\\,(v^S_i - u^S_i)\\Big|

    f ranges over 1-Lipschitz functions (l_inf) on :math:`T_{k,s} \\cup \\{0\\}`, 0 the origin of
    ``[0,1]^s``. Computed per block as an exact transport problem (POT's network simplex): a dense one
    for ``k^s <= 400``, else the sparse king-move transshipment. :func:`proxy_ut_lp` is the LP of
    Eq. (17) written over f, the slow reference.

    Parameters
    ----------
    w_row : array (..., K, k^s) of ``v - u``, cells in row-major order (U_T does not depend on the order)
    k, s : int >= 1
    per_block : bool, default False

    Returns
    -------
    float array of shape (...,) (or (..., K) with ``per_block``).

    References
    ----------
    .. [DLS+24] K. Donhauser, J. Lokna, A. Sanyal, M. Boedihardjo, R. Hönig, F. Yang. Certified private data release for sparse Lipschitz functions. AISTATS 2024.
       See docs/references.md.
    """
    w = np.asarray(w_row, dtype=float)
    if not per_block:  # the maximum over blocks, solving only the blocks that can attain it
        flat = w.reshape((-1,) + w.shape[-2:])
        return np.array([_ut_block_max(row, k, s) for row in flat]).reshape(w.shape[:-2])
    flat = w.reshape(-1, w.shape[-1])
    vals = np.array([_ut_exact(row, k, s, None) for row in flat]).reshape(w.shape[:-1])
    return vals


def proxy_ut_lp(w_block: Any, k: int, s: int) -> float:
    """Reference for one block of :func:`proxy_ut`: the LP of Eq. (17) over f on the grid (HiGHS).

    .. math:: \\max_f \\sum_i f_i w_i \\ \\text{s.t.}\\ |f_i - f_j| \\le 1/k \\text{ (king neighbours)},\\ |f_{corner}| \\le 1/2k

    King-neighbour constraints give every pairwise l_inf constraint (path metric of the grid), and the
    corner constraint with them gives :math:`|f(z)| \\le \\|z\\|_\\infty = |f(z) - f(0)|`. The problem is
    symmetric in f ↦ -f, so the maximum is the supremum of the absolute value.
    """
    w = np.asarray(w_block, dtype=float).ravel()
    m = w.size
    edges = _king_edges(k, s)
    e = edges[edges[:, 0] < edges[:, 1]]
    ne = e.shape[0]
    rows = np.repeat(np.arange(ne), 2)
    A = sparse.csr_matrix((np.tile([1.0, -1.0], ne), (rows, e.ravel())), shape=(ne, m))
    A = sparse.vstack([A, -A]).tocsr()
    bounds = [(-1.0, 1.0)] * m
    bounds[0] = (-0.5 / k, 0.5 / k)
    res = linprog(-w, A_ub=A, b_ub=np.full(2 * ne, 1.0 / k), bounds=bounds, method="highs")
    if res.status != 0:  # pragma: no cover - always feasible (f = 0) and bounded
        raise RuntimeError(f"U_T reference LP failed: {res.message}")
    return float(-res.fun)


# ---------------------------------------------------------------------------------- default k
def default_k(n: int, epsilon: float, d: int, s: int, *, k_max: int | None = None) -> int:
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
    for k, val in zip(ks.tolist(), vals.tolist(), strict=True):  # first k that improves by more than 1e-15
        if val < best - 1e-15:
            best_k, best = k, val
    return best_k


@functools.lru_cache(maxsize=32)
def _prefix_norms(lev: int) -> np.ndarray:
    from ..haar import prefix_row_norms

    out = prefix_row_norms(lev, scaled=True)
    out.setflags(write=False)
    return out


# ------------------------------------------------------------------------------ public support
def discretise_support(P: np.ndarray, k: int) -> np.ndarray:
    """Move points of the unit cube to the centres of their cells of :math:`T_{k,d}` and drop duplicates.

    Section 5.1 takes the public points in :math:`T_k`, so that :math:`T^{-1}T\\mu = \\mu` and the last
    projection term of Eq. (4) vanishes.

    Returns
    -------
    ndarray (n_unique, d) of cell centres, sorted row-major.
    """
    idx = np.clip(np.floor(P * k).astype(np.int64), 0, k - 1)
    uniq = np.unique(idx, axis=0)
    return (uniq + 0.5) / k


def _public_points(public: Any, public_size: int, domain: Domain, k: int, rng: np.random.Generator):
    """Public candidates in the unit cube and a description."""
    d = domain.d
    if public is None:
        public = "uniform"
    if isinstance(public, str):
        name = check_choice(public, "public", _OWNER, PUBLIC_GENERATORS)
        if name == "uniform":
            return rng.random((public_size, d)), f"{public_size} points drawn uniformly on the domain (data-independent)"
        total = k**d
        if total <= public_size:
            return cell_centres(k, d), f"all {total} centres of the k^d grid (exact Step 3 over T_k,d)"
        # uniform subset of the grid centres without materialising k^d of them
        picks = set()
        while len(picks) < public_size:
            picks.update(int(x) for x in rng.integers(0, total, size=public_size - len(picks)))
        flat = np.array(sorted(picks), dtype=np.int64)
        coords = np.empty((flat.size, d))
        rest = flat.copy()
        for a in range(d - 1, -1, -1):
            coords[:, a] = rest % k
            rest //= k
        return (coords + 0.5) / k, f"{public_size} of the {total} k^d grid centres, chosen uniformly (data-independent)"
    arr = check_points(public, "public", _OWNER, d=d, columns=domain._cols(public))
    U = domain.to_unit(arr, owner=_OWNER)
    return U, f"{arr.shape[0]} public points given by the caller"


# ------------------------------------------------------------------------------------- Step 3
def _cum_targets(v_path: np.ndarray) -> np.ndarray:
    return np.cumsum(v_path, axis=-1)


def step3_lp(v_path: Any, pos: Any, k: int, *, tie_break: float = TIE_BREAK) -> dict:
    """Step 3 of Algorithm 1 over measures on public points [DLS+24, Section 5.1, Eq. (16)], sparse.

    .. math:: \\min_{\\alpha \\in \\Delta^{N-1}} \\ t + \\frac{\\lambda}{K}\\sum_S \\ell_S \\quad \\text{s.t.}\\quad
              \\ell_S = \\frac1k\\sum_l e_{S,l} \\le t,\\quad e_{S,l} \\ge |c_{S,l} - P_{S,l}|,\\quad
              P_{S,l} = P_{S,l-1} + \\sum_{j:\\ \\mathrm{pos}_S(z_j) = l} \\alpha_j

    with :math:`c_{S,l} = \\sum_{i\\le l} (v_{DP})^S_i` and cumulative-mass variables :math:`P_{S,l}`, so the
    constraint matrix has :math:`O(K(N + k^s))` non-zeros (the dense form, :func:`step3_dense_lp`, has
    :math:`O(K N k^s)`). Solved with HiGHS' interior-point method and crossover. At the optimum :math:`t = \\mathcal L_T(v_{DP}, T\\mu)` up to the tie-break:
    λ > 0 also lowers the non-maximal blocks (any minimiser of the max is allowed by Eq. (12)); it moves
    t by at most a relative λ. Solved with HiGHS (``scipy.optimize.linprog``).

    Parameters
    ----------
    v_path : array (K, m), the noisy query vector, blocks in path order (m = k^s)
    pos : int array (K, N): path position of public point j's cell in block S
    k : int >= 1
    tie_break : float >= 0, λ

    Returns
    -------
    dict with ``alpha`` (N,) on the simplex, ``objective`` (t at the optimum), ``lp_value`` (full objective),
    ``seconds``, ``nnz``, ``n_variables``, ``n_constraints``.

    References
    ----------
    .. [DLS+24] K. Donhauser, J. Lokna, A. Sanyal, M. Boedihardjo, R. Hönig, F. Yang. Certified private data release for sparse Lipschitz functions. AISTATS 2024.
    .. [HH18] Q. Huangfu, J. A. J. Hall. Parallelizing the dual revised simplex method. Math. Prog. Comp. 10(1), 2018.
    See docs/references.md for the full entries.
    """
    v = np.asarray(v_path, dtype=float)
    pos = np.asarray(pos, dtype=np.int64)
    K, m = v.shape
    N = pos.shape[1]
    c = _cum_targets(v)
    t0 = time.perf_counter()
    nP = K * m
    iP = N  # offset of P
    iE = N + nP  # offset of e
    it = N + 2 * nP  # t
    n_var = it + 1
    blk = np.arange(K)[:, None]
    lidx = np.arange(m)[None, :]
    Pcol = iP + blk * m + lidx  # (K, m)
    Ecol = iE + blk * m + lidx
    # Equalities: row 0 = simplex; row 1 + b m + l: P_{b,l} - P_{b,l-1} - sum alpha_j(pos=l) = 0
    r_eq = [np.zeros(N, dtype=np.int64)]
    c_eq = [np.arange(N)]
    d_eq = [np.ones(N)]
    rows_bl = 1 + blk * m + lidx
    r_eq += [rows_bl.ravel(), rows_bl[:, 1:].ravel()]
    c_eq += [Pcol.ravel(), Pcol[:, :-1].ravel()]
    d_eq += [np.ones(nP), -np.ones(K * (m - 1))]
    r_eq.append((1 + blk * m + pos).ravel())
    c_eq.append(np.broadcast_to(np.arange(N)[None, :], (K, N)).ravel())
    d_eq.append(-np.ones(K * N))
    A_eq = sparse.csr_matrix((np.concatenate(d_eq), (np.concatenate(r_eq), np.concatenate(c_eq))),
                             shape=(1 + nP, n_var))
    b_eq = np.zeros(1 + nP)
    b_eq[0] = 1.0
    # Inequalities: -P - e <= -c ; P - e <= c ; (1/k) sum_l e_{b,l} - t <= 0
    r1 = np.arange(nP)
    r2 = nP + np.arange(nP)
    r3 = 2 * nP + np.repeat(np.arange(K), m)
    rows = np.concatenate([r1, r1, r2, r2, r3, 2 * nP + np.arange(K)])
    cols = np.concatenate([Pcol.ravel(), Ecol.ravel(), Pcol.ravel(), Ecol.ravel(), Ecol.ravel(), np.full(K, it)])
    data = np.concatenate([-np.ones(nP), -np.ones(nP), np.ones(nP), -np.ones(nP), np.full(nP, 1.0 / k),
                           -np.ones(K)])
    A_ub = sparse.csr_matrix((data, (rows, cols)), shape=(2 * nP + K, n_var))
    b_ub = np.concatenate([-c.ravel(), c.ravel(), np.zeros(K)])
    obj = np.zeros(n_var)
    obj[it] = 1.0
    obj[iE:it] = tie_break / (K * k)
    bounds = np.zeros((n_var, 2))
    bounds[:, 1] = np.inf
    bounds[iP:iE] = (-np.inf, np.inf)
    # HiGHS interior point (with crossover to a vertex): faster than the simplex default on these sparse LPs
    res = linprog(obj, A_ub=A_ub, b_ub=b_ub, A_eq=A_eq, b_eq=b_eq, bounds=bounds, method="highs-ipm")
    if res.status != 0:
        raise RuntimeError(f"Step 3 LP failed (HiGHS status {res.status}): {res.message}")
    alpha = np.clip(res.x[:N], 0.0, None)
    alpha /= alpha.sum()
    return {"alpha": alpha, "objective": float(res.x[it]), "lp_value": float(res.fun),
            "seconds": time.perf_counter() - t0, "nnz": int(A_eq.nnz + A_ub.nnz), "n_variables": n_var,
            "n_constraints": int(A_eq.shape[0] + A_ub.shape[0])}


def step3_ut_lp(v_row: Any, cells: Any, k: int, s: int, *, tie_break: float = TIE_BREAK) -> dict:
    """Step 3 with the proxy :math:`\\mathcal U_T` (Eq. (17)) over measures on public points, as one sparse LP.

    Algorithm 1 minimises the certificate :math:`\\mathcal B_{\\mathcal G}(\\mu, v_{DP})` over μ; with
    :math:`\\mathcal G = \\mathcal U_T` that is :math:`\\min_\\mu \\mathcal U_T(v_{DP}, T\\mu)`. Over all of
    :math:`\\mathcal M_P(T_{k,d})` this is intractable (Section 5.4), but over the measures on N public points
    (Section 5.1) it is a linear program of polynomial size: per block a min-cost flow on the king-move
    graph of :math:`T_{k,s}` plus the origin (edge costs 1/k, origin–corner 1/2k) whose supplies
    :math:`v^S_{DP} - (T\\mu)^S` are linear in α,

    .. math:: \\min_{\\alpha \\in \\Delta^{N-1},\\, f \\ge 0} t + \\frac{\\lambda}{K}\\sum_S \\ell_S,\\quad
              \\ell_S = \\sum_e c_e f^S_e \\le t,\\quad
              \\sum_{e \\in \\mathrm{out}(i)} f^S_e - \\sum_{e \\in \\mathrm{in}(i)} f^S_e = (v_{DP})^S_i - (T\\mu)^S_i

    (flow conservation at every cell; the origin absorbs the imbalance). By LP duality with Eq. (17)
    each :math:`\\ell_S` at the optimum is :math:`\\mathcal U_T` of its block. Not in the paper; an option.

    Parameters
    ----------
    v_row : array (K, k^s), noisy query vector, row-major cells
    cells : int array (K, N), row-major cell of public point j in block S
    k, s : int; tie_break : float >= 0

    Returns
    -------
    dict as :func:`step3_lp` (``objective`` = max_S U_T at the optimum).
    """
    v = np.asarray(v_row, dtype=float)
    cells = np.asarray(cells, dtype=np.int64)
    K, m = v.shape
    N = cells.shape[1]
    t0 = time.perf_counter()
    king = _king_edges(k, s)  # directed, both directions present
    # edges of one block: king edges (cells 1..m) + origin(0) <-> corner(1)
    tails = np.concatenate([king[:, 0] + 1, [0, 1]])
    heads = np.concatenate([king[:, 1] + 1, [1, 0]])
    cost = np.concatenate([np.full(king.shape[0], 1.0 / k), [0.5 / k, 0.5 / k]])
    E = tails.size
    iF = N
    it = N + K * E
    n_var = it + 1
    # conservation rows for cells 1..m of every block (origin row is implied): out - in + (T mu)_i = v_i
    r_eq, c_eq, d_eq = [np.zeros(N, dtype=np.int64)], [np.arange(N)], [np.ones(N)]
    for bl in range(K):
        base = 1 + bl * m
        col = iF + bl * E + np.arange(E)
        ok_t = tails > 0
        ok_h = heads > 0
        r_eq += [base + tails[ok_t] - 1, base + heads[ok_h] - 1, base + cells[bl]]
        c_eq += [col[ok_t], col[ok_h], np.arange(N)]
        d_eq += [np.ones(ok_t.sum()), -np.ones(ok_h.sum()), np.ones(N)]
    A_eq = sparse.csr_matrix((np.concatenate(d_eq), (np.concatenate(r_eq), np.concatenate(c_eq))),
                             shape=(1 + K * m, n_var))
    b_eq = np.concatenate([[1.0], v.ravel()])
    rows = np.concatenate([np.repeat(np.arange(K), E), np.arange(K)])
    cols = np.concatenate([iF + np.arange(K * E), np.full(K, it)])
    data = np.concatenate([np.tile(cost, K), -np.ones(K)])
    A_ub = sparse.csr_matrix((data, (rows, cols)), shape=(K, n_var))
    obj = np.zeros(n_var)
    obj[it] = 1.0
    obj[iF:it] = np.tile(cost, K) * (tie_break / K)
    res = linprog(obj, A_ub=A_ub, b_ub=np.zeros(K), A_eq=A_eq, b_eq=b_eq, bounds=(0, None), method="highs-ipm")
    if res.status != 0:
        raise RuntimeError(f"Step 3 (U_T) LP failed (HiGHS status {res.status}): {res.message}")
    alpha = np.clip(res.x[:N], 0.0, None)
    alpha /= alpha.sum()
    return {"alpha": alpha, "objective": float(res.x[it]), "lp_value": float(res.fun),
            "seconds": time.perf_counter() - t0, "nnz": int(A_eq.nnz + A_ub.nnz), "n_variables": n_var,
            "n_constraints": int(A_eq.shape[0] + A_ub.shape[0])}


def step3_dense_lp(v_path: Any, pos: Any, k: int, *, tie_break: float = TIE_BREAK) -> dict:
    """Reference for :func:`step3_lp`: the same LP with dense cumulative matrices (small cases only).

    .. math:: \\min\\ t + \\frac{\\lambda}{K}\\sum_S \\ell_S,\\quad e_S \\ge \\pm(c_S - C_S\\alpha),\\quad
              (C_S)_{l j} = 1[\\mathrm{pos}_S(z_j) \\le l]

    Returns a dict with ``alpha``, ``objective`` and ``lp_value`` as :func:`step3_lp`.
    """
    v = np.asarray(v_path, dtype=float)
    pos = np.asarray(pos, dtype=np.int64)
    K, m = v.shape
    N = pos.shape[1]
    c = _cum_targets(v)
    n_var = N + K * m + 1
    A = []
    b = []
    for bl in range(K):
        C = (pos[bl][None, :] <= np.arange(m)[:, None]).astype(float)  # (m, N)
        E = np.zeros((m, K * m))
        E[:, bl * m:(bl + 1) * m] = np.eye(m)
        A.append(np.hstack([-C, -E, np.zeros((m, 1))]))
        b.append(-c[bl])
        A.append(np.hstack([C, -E, np.zeros((m, 1))]))
        b.append(c[bl])
        row = np.zeros((1, n_var))
        row[0, N + bl * m: N + (bl + 1) * m] = 1.0 / k
        row[0, -1] = -1.0
        A.append(row)
        b.append([0.0])
    A_ub = np.vstack(A)
    b_ub = np.concatenate(b)
    A_eq = np.zeros((1, n_var))
    A_eq[0, :N] = 1.0
    obj = np.zeros(n_var)
    obj[-1] = 1.0
    obj[N:-1] = tie_break / (K * k)
    res = linprog(obj, A_ub=A_ub, b_ub=b_ub, A_eq=A_eq, b_eq=[1.0], bounds=[(0, None)] * n_var, method="highs")
    if res.status != 0:  # pragma: no cover
        raise RuntimeError(f"dense Step 3 LP failed: {res.message}")
    alpha = np.clip(res.x[:N], 0.0, None)
    return {"alpha": alpha / alpha.sum(), "objective": float(res.x[-1]), "lp_value": float(res.fun)}


# ------------------------------------------------------------------------------- certificate
def mc_order(M: int, delta: float, owner: str = "mc_order") -> int:
    """The order statistic j = ⌈(1-δ)(M+1)⌉ whose j-th smallest of M Monte Carlo draws bounds a fresh draw
    with probability at least 1-δ; refuses when j > M (too few draws for δ).

    Let :math:`Z_0` be the privatisation term of the release (:math:`\\mathcal G(\\eta)` or
    :math:`\\mathcal G(\\Pi\\eta)` of the noise actually added) and :math:`Z_1, \\dots, Z_M` the same
    function of M fresh draws of the noise law. The M + 1 values are i.i.d., hence exchangeable, so
    for continuous draws the rank of :math:`Z_0` among them is uniform on {1, ..., M+1} and

    .. math:: P\\big(Z_0 > Z_{(j)}\\big) = P(\\text{rank of } Z_0 > j) = \\frac{M + 1 - j}{M + 1} \\le \\delta
              \\iff j \\ge (1-\\delta)(M+1),

    with :math:`Z_{(j)}` the j-th smallest of the M fresh draws; ties only lower the left side. The
    probability is over the release's noise and the Monte Carlo draws together, which is what the
    certificate's statement (Eq. (4) via Lemma 1, [DLS+24]) needs: exactly at most δ, not
    approximately. The smallest such j is ⌈(1-δ)(M+1)⌉; it exists among M draws only when
    :math:`M \\ge (1-\\delta)/\\delta`. (The ⌈(1-δ)M⌉-th draw, the plain empirical quantile, is exceeded
    with probability (M+1-⌈(1-δ)M⌉)/(M+1), e.g. 21/201 ≈ 0.104 > 0.1 at M = 200, δ = 0.1.)
    See docs/sparse-marginals.md, "Step 4: certificate", and docs/deviations.md §9.

    References
    ----------
    .. [DLS+24] K. Donhauser, J. Lokna, A. Sanyal, M. Boedihardjo, R. Hönig, F. Yang. Certified private data
       release for sparse Lipschitz functions. AISTATS 2024. See docs/references.md.
    """
    M = int(M)
    j = math.ceil((1.0 - float(delta)) * (M + 1) - 1e-12)
    if j > M:
        need = math.ceil((1.0 - float(delta)) / float(delta) - 1e-12)
        raise ValueError(
            f"The 'mc_draws' parameter of {owner} must be at least {need} for delta_cert={float(delta):g}: the "
            f"certificate uses the ⌈(1-δ)(M+1)⌉-th smallest of M Monte Carlo draws, which needs "
            f"M >= (1-δ)/δ. Got {M}; pass more mc_draws or a larger delta_cert.")
    return max(1, j)


def _quantile_high(samples: np.ndarray, delta: float) -> float:
    """The ⌈(1-δ)(M+1)⌉-th smallest of M samples (:func:`mc_order`): exceeded by a fresh draw of the same
    law with probability at most δ."""
    srt = np.sort(np.asarray(samples, dtype=float))
    return float(srt[mc_order(srt.size, delta) - 1])


def _support_discretisation(points: np.ndarray, weights: np.ndarray, subsets, k: int) -> float:
    """:math:`\\mathcal U(T^{-1}T\\mu, \\mu) = \\max_S \\sum_j \\alpha_j \\|z_j^S - c(z_j^S)\\|_\\infty` exactly.

    Moving every point to its own cell centre is an optimal coupling: the own centre is the nearest
    centre, and every coupling moves each unit of mass at least that far.
    """
    centre = (np.clip(np.floor(points * k), 0, k - 1) + 0.5) / k
    dev = np.abs(points - centre)
    return float(max(float(np.dot(weights, dev[:, list(S)].max(axis=1))) for S in subsets))


def _certificate_terms(proxy: str, *, k: int, quantile: float, proj_proxy: float, proj_support: float) -> dict:
    disc = 0.5 / k
    return {
        "proxy": proxy,
        "discretisation": disc,
        "privatisation_quantile": quantile,
        "projection_proxy": proj_proxy,
        "projection_support": proj_support,
        "projection": proj_proxy + proj_support,
        "total": disc + quantile + proj_proxy + proj_support,
    }


# ------------------------------------------------------------------- consistency projection
def consistency_constraints(d: int, s: int, k: int) -> sparse.csr_matrix:
    """Linear constraints A with :math:`A\\,\\mathbb T(\\rho_1 - \\rho_2) = 0` for all probability measures ρ1, ρ2.

    Rows (row-major cells within each block, blocks in :func:`marginal_subsets` order):

    * the total of every block (differences of probability measures have zero mass per block);
    * for every (s-1)-subset R and every block S ⊃ R other than the first such block S_R: the
      R-marginal of block S minus the R-marginal of block S_R (the s-marginals of one signed measure
      share their lower marginals).

    Rows may be linearly dependent. ``ker A`` contains the difference space
    :math:`L_0 = \\mathbb T(\\mathcal M_0)` of the query operator (zero-mass signed measures), which is
    all that the certificate needs (module docstring); whether it equals :math:`L_0` only affects tightness.

    Returns
    -------
    scipy.sparse.csr_matrix of shape (n_rows, C(d, s) k^s).
    """
    owner = "consistency_constraints"
    dd = check_int(d, "d", owner, low=1)
    ss = check_int(s, "s", owner, low=1, high=dd)
    kk = check_int(k, "k", owner, low=1)
    subsets = marginal_subsets(dd, ss)
    K, m = len(subsets), kk**ss
    coords = np.array(np.unravel_index(np.arange(m), (kk,) * ss)).T  # (m, s) row-major cell coordinates
    rows, cols, vals = [], [], []
    n_rows = 0
    for b in range(K):  # totals
        rows.append(np.full(m, n_rows))
        cols.append(b * m + np.arange(m))
        vals.append(np.ones(m))
        n_rows += 1
    if ss >= 2:
        mr = kk ** (ss - 1)
        for R in itertools.combinations(range(dd), ss - 1):
            blocks = [b for b, S in enumerate(subsets) if set(R) <= set(S)]

            def r_index(b: int, R: tuple[int, ...] = R) -> np.ndarray:
                keep = [i for i, a in enumerate(subsets[b]) if a in R]
                return np.ravel_multi_index(tuple(coords[:, keep].T), (kk,) * (ss - 1))

            first = r_index(blocks[0])
            for b in blocks[1:]:
                rows += [n_rows + first, n_rows + r_index(b)]
                cols += [blocks[0] * m + np.arange(m), b * m + np.arange(m)]
                vals += [np.ones(m), -np.ones(m)]
                n_rows += mr
    return sparse.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                             shape=(n_rows, K * m))


@functools.lru_cache(maxsize=16)
def _block_noise_factor(k: int, s: int, exact_total: bool) -> np.ndarray:
    """F (m, 2^L) with block noise = b·F·η̃ in row-major cell order (η̃ i.i.d. standard Laplace)."""
    m = k**s
    if m == 1:
        F = np.zeros((1, 1)) if exact_total else np.ones((1, 1))
    else:
        lev = levels_for(m)
        F = haar_synthesis(np.eye(1 << lev), scaled=True).T[:m]  # column j = Φ e_j, path positions
        if exact_total:
            F = F[:, 1:]
        _, rank = _path_rank(k, s)
        F = F[rank]  # row-major cell c sits at path position rank[c]
    F = np.ascontiguousarray(F)
    F.setflags(write=False)
    return F


@functools.lru_cache(maxsize=8)
def consistency_map(d: int, s: int, k: int, *, exact_total: bool = True):
    """The linear map Π = I - M A of the consistent certificate (module docstring), or None if too large.

    A is :func:`consistency_constraints`. M is the generalised-least-squares choice
    :math:`M = \\Sigma A^\\top (A\\Sigma A^\\top)^+` with Σ the covariance of the Haar noise (block
    diagonal, per block :math:`F F^\\top`, :func:`_block_noise_factor`) when ``k^s <= 1024``, the Euclidean
    :math:`M = A^\\top (AA^\\top)^+` above that. *Any* M gives :math:`\\Pi x = x` on ``ker A``, which is what
    validity needs; M only decides how much of the noise Π removes (GLS: the best linear unbiased
    estimate of the consistent marginals, so :math:`\\Pi\\eta` has the smallest covariance).

    Returns
    -------
    dict with ``A`` (csr), ``M`` (dense (K k^s, rows)), ``kind`` ("GLS" or "euclidean"), ``rows``,
    ``rank``; or None when ``rows > 4000`` or ``K k^s · rows > 2·10^7`` (then Π = I).
    """
    A = consistency_constraints(d, s, k)
    n_rows, n_cols = A.shape
    if n_rows > _CONS_MAX_ROWS or n_rows * n_cols > _CONS_MAX_ENTRIES:
        return None
    m = k**s
    K = n_cols // m
    Ad = A.toarray()
    F = _block_noise_factor(k, s, bool(exact_total)) if m <= _CONS_GLS_MAX_CELLS else None
    r_dim = n_cols if F is None else K * F.shape[1]
    if n_rows > r_dim:
        return _consistency_map_columns(A, Ad, F, K, m)
    if m <= _CONS_GLS_MAX_CELLS:
        F = _block_noise_factor(k, s, bool(exact_total))
        SAt = np.empty((n_cols, n_rows))  # Σ A^T, block by block
        for b in range(K):
            Ab = Ad[:, b * m:(b + 1) * m]
            SAt[b * m:(b + 1) * m] = F @ (F.T @ Ab.T)
        G = Ad @ SAt
        kind = "GLS"
    else:
        SAt = Ad.T.copy()
        G = Ad @ Ad.T
        kind = "euclidean"
    G = 0.5 * (G + G.T)
    lam, V = np.linalg.eigh(G)
    keep = lam > 1e-10 * max(float(lam.max()), 1e-300)
    Gp = (V[:, keep] / lam[keep]) @ V[:, keep].T
    M = SAt @ Gp
    M.setflags(write=False)
    return {"A": A, "M": M, "kind": kind, "rows": int(n_rows), "rank": int(keep.sum())}


def _consistency_map_columns(A, Ad: np.ndarray, F: np.ndarray | None, K: int, m: int) -> dict:
    """:func:`consistency_map` through the smaller Gram matrix when A has more rows than Σ has factor columns.

    With :math:`\\Sigma = \\mathcal F\\mathcal F^\\top` (:math:`\\mathcal F` block diagonal with blocks F; the
    identity for the Euclidean choice) and :math:`B = A\\mathcal F`,
    :math:`M = \\Sigma A^\\top (A\\Sigma A^\\top)^+ = \\mathcal F B^\\top (BB^\\top)^+ = \\mathcal F (B^\\top B)^+ B^\\top`:
    the same M from an eigendecomposition of :math:`B^\\top B` (columns × columns) instead of
    :math:`BB^\\top` (rows × rows). High d with small k has many more constraints (shared lower
    marginals) than cells."""
    n_rows, n_cols = Ad.shape
    if F is None:
        B, kind, rb = Ad, "euclidean", m
    else:
        F = F[:, np.any(F != 0, axis=0)]  # a zero column adds nothing to Σ (one cell, exact totals: F = 0)
        rb = F.shape[1]
        B = np.empty((n_rows, K * rb))
        for b in range(K):
            B[:, b * rb:(b + 1) * rb] = Ad[:, b * m:(b + 1) * m] @ F
        kind = "GLS"
    if B.shape[1] == 0:  # no noise to remove (one cell per block with exact totals): Π = I
        M = np.zeros((n_cols, n_rows))
        M.setflags(write=False)
        return {"A": A, "M": M, "kind": kind, "rows": int(n_rows), "rank": 0}
    H = B.T @ B
    H = 0.5 * (H + H.T)
    lam, V = np.linalg.eigh(H)
    keep = lam > 1e-10 * max(float(lam.max()), 1e-300)
    X = ((V[:, keep] / lam[keep]) @ V[:, keep].T) @ B.T  # (B^T B)^+ B^T = B^+, shape (K rb, rows)
    if F is None:
        M = X
    else:
        M = np.empty((n_cols, n_rows))
        for b in range(K):
            M[b * m:(b + 1) * m] = F @ X[b * rb:(b + 1) * rb]
    M.setflags(write=False)
    return {"A": A, "M": M, "kind": kind, "rows": int(n_rows), "rank": int(keep.sum())}


def consistent_part(w_row: Any, cmap: dict | None) -> np.ndarray:
    """:math:`\\Pi w = w - M A w` for arrays (..., K, k^s) in row-major cell order (identity if ``cmap`` is None)."""
    w = np.asarray(w_row, dtype=float)
    if cmap is None:
        return w.copy()
    flat = w.reshape(-1, w.shape[-2] * w.shape[-1])
    Aw = (cmap["A"] @ flat.T).T
    return (flat - Aw @ cmap["M"].T).reshape(w.shape)


def kr_grid_points(w_row: Any, k: int, s: int, points: Any, weights: Any) -> float:
    """Exact :math:`\\|\\sum_i w_i\\delta_{c_i} - \\sum_j \\alpha_j\\delta_{p_j}\\|_{KR,0}` on ``[0,1]^s`` (l_inf).

    :math:`\\|\\nu\\|_{KR,0} = \\sup\\{\\int f\\,d\\nu : f\\ 1\\text{-Lipschitz},\\ f(0) = 0\\}` (the norm of
    Eq. (17); for zero-mass ν it is the KR norm and for the difference of two probability measures it
    is W1). c_i are the centres of :math:`T_{k,s}` (row-major), w signed; p_j points of ``[0,1]^s`` with
    weights α_j. Computed as :math:`W_1(\\nu^+, \\nu^-)` after sending the mass imbalance to the origin
    (dense transport, POT). Lipschitz functions on the finite support extend to the cube (McShane), so
    the supremum over the cube equals the one over the support.
    """
    w = np.asarray(w_row, dtype=float).ravel()
    P = np.asarray(points, dtype=float).reshape(-1, s)
    a = np.asarray(weights, dtype=float).ravel()
    cent = cell_centres(k, s)
    nz = w != 0
    pts = np.vstack([np.zeros((1, s)), cent[nz], P])
    nu = np.concatenate([[a.sum() - w.sum()], w[nz], -a])
    pos, neg = nu > 0, nu < 0
    if not pos.any() or not neg.any():
        return 0.0
    A_, B_ = nu[pos], -nu[neg]
    B_ = B_ * (A_.sum() / B_.sum())  # rounding imbalance only (the origin balances the masses)
    cost = np.max(np.abs(pts[pos][:, None, :] - pts[neg][None, :, :]), axis=2)
    return _emd_value(A_, B_, np.ascontiguousarray(cost))


def _direct_projection(v_row: np.ndarray, pts: np.ndarray, wts: np.ndarray, subsets, k: int, s: int) -> np.ndarray:
    """Per block :math:`\\|T^{-1}v^S - P^S_\\#\\mu\\|_{KR,0}` for μ = Σ α_j δ_{z_j} (points merged per block)."""
    out = np.empty(len(subsets))
    for b, S in enumerate(subsets):
        Pu, wu = unique_weighted(pts[:, list(S)], wts)
        out[b] = kr_grid_points(v_row[b], k, s, Pu, wu)
    return out


# ------------------------------------------------------------------------------- the mechanism
@register(dict(
    theory=Theory(proven=False, rate=marginal_rate),
    name="sparse_marginals",
    title="Certified sparse-marginal release (Donhauser et al.)",
    paper=("Donhauser, Lokna, Sanyal, Boedihardjo, Hönig, Yang, Certified private data release for sparse Lipschitz "
           "functions (AISTATS 2024) [DLS+24]"),
    algorithm="[DLS+24] Algorithm 1 with public-data Step 3 (Section 5.1); certificate Eq. (4) with U_T (Eq. 17) or L_T (Eq. 10)",
    dp="pure",
    neighbours=("replace",),
    default_neighbours="replace",
    params=(
        ParamSpec("s", "int", 2, "Marginal order: the utility loss is the largest W1 over all s-dimensional "
                  "marginals (Eq. 1).", low=1, high=6),
        ParamSpec("k", "int", None, "Cells per axis of each marginal grid (k^s cells per block); default: the k "
                  "minimising the expected-loss bound of Eq. (15) for (n, ε, d, s), no data used.", low=1,
                  high=4096),
        ParamSpec("public", "choice", "uniform", "Public candidate points the synthetic measure lives on "
                  "(Section 5.1): a data-independent generator here; an array through the API.",
                  choices=PUBLIC_GENERATORS),
        ParamSpec("public_size", "int", 4000, "Number of generated public candidates (the paper uses 4000).",
                  low=1, high=200_000, log=True),
        ParamSpec("snap_public", "bool", True, "Move public points to their cell centres in T_k,d (Section 5.1: "
                  "D_pub ⊂ T_k), so the last projection term of Eq. (4) is zero."),
        ParamSpec("certificate", "choice", "U_T", "Proxy loss in the released certificate: U_T (Eq. 17, tighter) "
                  "or L_T (Eq. 10).", choices=CERTIFICATES),
        ParamSpec("delta_cert", "float", 0.1, "The certificate holds with probability at least 1 - delta_cert "
                  "over the noise (Lemma 1).", low=0.001, high=0.5, log=True),
        ParamSpec("step3", "choice", "L_T", "Proxy minimised by the Step 3 LP: L_T (the paper) or U_T "
                  "(Algorithm 1 with G = U_T, an LP over public-point measures; not in the paper).",
                  choices=CERTIFICATES),
        ParamSpec("noise", "choice", "exact_total", "exact_total: under replace the block totals are public and get "
                  "no noise, the other Haar coefficients slightly less (same ε; docs/sparse-marginals.md, 'Step 2: noise'); paper: "
                  "Laplace(2K/(nε)) on every Haar coefficient (Lemma 2).",
                  choices=NOISES),
        ParamSpec("consistency", "choice", "certificate", "certificate: the released bound uses the proxy composed "
                  "with the consistency projection Π of the noisy marginals (Lemma 1 with G∘Π; removes the noise "
                  "components that no dataset can have, valid by the same proof); both: Step 3 also fits Π v_DP; "
                  "none: the paper's Eq. (4) as printed.", choices=CONSISTENCY),
        ParamSpec("mc_draws", "int", 200, "Monte Carlo noise draws for the privatisation quantile (no data used; "
                  "the paper uses 200).", low=20, high=100_000, log=True, advanced=True),
        ParamSpec("n_synthetic", "int", None, "Synthetic points (largest-remainder rounding of the measure); "
                  "default n (public under replace).", low=1, high=10_000_000, advanced=True),
    ),
    summary="All s-way marginals on k^s grids with Haar-transformed Laplace noise, projected onto measures over "
            "public points by a sparse LP, released with a private high-probability bound on the utility loss.",
))
def sparse_marginals(X, domain, *, epsilon, s=2, k=None, public="uniform", public_size=4000, snap_public=True,
                     certificate="U_T", delta_cert=0.1, mc_draws=200, step3="L_T", noise="exact_total",
                     consistency="certificate", n_synthetic=None, neighbours="replace", rng=None) -> Release:
    """Certified DP release for s-sparse Lipschitz queries [DLS+24, Algorithm 1, Sections 3 and 5].

    .. math:: \\mathcal B(\\mu, v_{DP}) = \\frac{1}{2k} + q_{1-\\delta}\\big(\\mathcal G(0,\\eta)\\big)
              + \\mathcal G(v_{DP}, T\\mu) + \\mathcal U(T^{-1}T\\mu, \\mu) \\ \\ge\\ \\mathcal U(\\mu_D, \\mu)
              \\ \\text{w.p.} \\ge 1 - \\delta

    Steps (module docstring): noisy marginals :math:`v_{DP} = T\\mu_D + [\\Phi\\tilde\\eta]` with
    :math:`\\tilde\\eta \\sim \\mathrm{Lap}(2K/(n\\varepsilon))` (Eq. (7), Lemma 2), Step 3 as the sparse LP of
    Section 5.1 (:func:`step3_lp`), rounding of the optimal measure to ``n_synthetic`` points (largest
    remainder), and the certificate of Eq. (4) evaluated *on the released points* (Lemma 1 holds
    uniformly over μ, so the bound applies to the rounded measure; the LP measure's certificate is in
    the trace).

    Parameters
    ----------
    X : array (n, d), DataFrame, Dask array (n, d) or Dask DataFrame
        Private data in domain units (clamped into the domain). Read only through the marginal
        counts (:func:`marginal_counts`), so a Dask collection is never materialised.
    domain : Domain (public bounds)
    epsilon : float in (0, inf)
    s : int in [1, d], default 2
        Sparsity: the utility loss is over all s-dimensional marginals (K = C(d, s) blocks).
    k : int in [1, 4096] or None
        Cells per axis of every marginal grid, with ``k^s <= 2^16`` and ``K k^s <= 2^21``.
        ``None``: :func:`default_k` (data-independent).
    public : "uniform" (default), "grid", None (= "uniform") or array (n_pub, d) in domain units
        Public candidates (Section 5.1). "uniform": ``public_size`` i.i.d. uniform points of
        the domain, drawn from ``rng`` (no data used). "grid": the centres of :math:`T_{k,d}` (all of them
        when ``k^d <= public_size`` — then Step 3 is the exact Eq. (12) — else a uniform subset).
    public_size : int in [1, 200000], default 4000 (the paper's n_a)
    snap_public : bool, default True
        Replace public points by their cell centres in :math:`T_{k,d}` (and merge duplicates), as in
        Section 5.1 (:math:`D_{pub} \\subset T_k`): the support term :math:`\\mathcal U(T^{-1}T\\mu, \\mu)` is 0.
        ``False`` keeps the points; the term is then computed exactly and added to the certificate.
    certificate : {"U_T", "L_T"}, default "U_T"
        Proxy loss G of the released certificate (Eq. (17) or Eq. (10)); Step 3 always minimises L_T
        (Section 5.4: optimising U_T over measures is not tractable).
    delta_cert : float in [0.001, 0.5], default 0.1
    mc_draws : int in [20, 100000], default 200
        Monte Carlo draws of η for the quantile: the ⌈(1-δ)(M+1)⌉-th smallest draw is used, which a
        fresh draw exceeds with probability at most δ (:func:`mc_order`); refused when M < (1-δ)/δ.
    step3 : {"L_T", "U_T"}, default "L_T"
        Proxy minimised in Step 3: L_T (the paper, Eq. (12)/(16), :func:`step3_lp`) or U_T
        (Algorithm 1 with G = U_T, tractable over public points: :func:`step3_ut_lp`; not in the paper).
    noise : {"exact_total", "paper"}, default "exact_total"
        "paper": Laplace(2K/(nε)) on every Haar coefficient (Lemma 2). "exact_total": under replace the
        total mass of each block is public (it is 1), its Haar coefficient gets no noise and the others
        Laplace(2K/(nε)·L/(L+1)) (:func:`noise_scale`); same ε, less noise (docs/deviations.md §9, "Sparse marginals": under
        replace the block totals are exact; :func:`dpsynth_core.haar.privatize_counts` does the same). Its effect
        on the certificate's privatisation quantiles (n = 2000, d = 4, k = 8) is measured in
        benchmarks/results/sparse_marginals.json ("variants", noise=paper against the default).
    consistency : {"certificate", "both", "none"}, default "certificate"
        "certificate": the released bound is Eq. (4) with the proxy :math:`\\mathcal G\\circ\\Pi`, Π the
        consistency projection of the noisy marginals (:func:`consistency_map`, module docstring); for
        ``snap_public=False`` its projection term is the exact KR distance to the released points.
        "both": Step 3 also fits :math:`\\Pi v_{DP}` instead of :math:`v_{DP}` (post-processing; lowers the
        loss). "none": the paper's Eq. (4) as printed. The paper's certificates are always in the trace
        (keys "U_T" and "L_T"), the consistent ones under "U_T_consistent" and "L_T_consistent".
    n_synthetic : int in [1, 10^7] or None (default n)
    neighbours : "replace" only (n is public; add/remove is refused)
    rng : numpy Generator, int or None

    Returns
    -------
    Release
        ``bound`` is the certificate for the released synthetic data (unit cube, l_inf, Eq. (1));
        ``trace`` holds the noisy and projected marginals (K, k^s) in row-major cell order, the
        certificate terms for U_T and L_T, the Monte Carlo samples, the LP summary and the Section 5.3
        comparison; ``trace["owner"]`` the true marginals and the realised proxy losses of the noise.

    References
    ----------
    .. [DLS+24] K. Donhauser, J. Lokna, A. Sanyal, M. Boedihardjo, R. Hönig, F. Yang. Certified private data release for sparse Lipschitz functions. AISTATS 2024.
    .. [HH18] Q. Huangfu, J. A. J. Hall. Parallelizing the dual revised simplex method. Math. Prog. Comp. 10(1), 2018.
    See docs/references.md for the full entries.
    """
    owner = _OWNER
    p = prepare(X, domain, owner=owner, epsilon=epsilon, neighbours=neighbours, rng=rng, supported=("replace",))
    d = domain.d
    ss = check_int(s, "s", owner, low=1, high=d)
    K = math.comb(d, ss)
    M_draws = check_int(mc_draws, "mc_draws", owner, low=20, high=100_000)
    dlt = check_float(delta_cert, "delta_cert", owner, low=0.001, high=0.5)
    mc_order(M_draws, dlt, owner)  # refuses before any work when mc_draws is too small for delta_cert
    lim = limits.current()
    # Resource limits (dpsynth_core.limits), from public inputs only, before anything is allocated: the
    # query vector (K k^s entries) and the Monte Carlo noise of the certificate (mc_draws K k^s entries).
    limits.check_planned(M_draws * K, "max_cells", owner=owner, param="mc_draws", what="Monte Carlo entries",
                         fix="pass fewer mc_draws or a smaller s",
                         got=f"{M_draws} draws x C({d}, {ss}) = {K} blocks = {M_draws * K} entries at k = 1")
    psize_req = check_int(public_size, "public_size", owner, low=1, high=200_000)
    if k is None:
        cells_cap = min(MAX_CELLS_TOTAL, lim.max_cells // M_draws) // K
        k_cap = max(1, min(int(math.floor(4096 ** (1.0 / ss) + 1e-9)), int(math.floor(cells_cap ** (1.0 / ss) + 1e-9))))
        while k_cap > 1 and (k_cap**ss > cells_cap or K * (min(psize_req, k_cap**d) + 7 * k_cap**ss)
                             > lim.max_lp_nonzeros):
            k_cap -= 1
        kk = default_k(p.n, p.epsilon, d, ss, k_max=k_cap)
        k_rule = "default_k: minimiser of 1/2k + 2 E L_T(0, eta) (Eq. 15 with Eq. 30), data-independent"
        if k_cap < int(math.floor(4096 ** (1.0 / ss) + 1e-9)):
            k_rule += f"; searched up to k = {k_cap} (dpsynth_core.limits max_cells)"
    else:
        kk = check_int(k, "k", owner, low=1, high=4096)
        k_rule = "given"
    m = kk**ss
    if m > MAX_CELLS_PER_BLOCK:
        raise param_error(owner, "k", f"an int with k^s <= {MAX_CELLS_PER_BLOCK} (s={ss})", k)
    if K * m > MAX_CELLS_TOTAL:
        raise param_error(owner, "k", f"an int with C(d, s) k^s <= {MAX_CELLS_TOTAL} (d={d}, s={ss}, "
                          f"C(d, s)={K})", kk)
    limits.check_planned(M_draws * K * m, "max_cells", owner=owner, param="k", what="Monte Carlo entries",
                         fix="pass a smaller k or fewer mc_draws",
                         got=f"{M_draws} draws x {K} blocks x {kk}^{ss} cells = {M_draws * K * m} entries")
    psize = check_int(public_size, "public_size", owner, low=1, high=200_000)
    snap = check_bool(snap_public, "snap_public", owner)
    cert = check_choice(certificate, "certificate", owner, CERTIFICATES)
    st3 = check_choice(step3, "step3", owner, CERTIFICATES)
    noise_kind = check_choice(noise, "noise", owner, NOISES)
    exact_total = noise_kind == "exact_total"
    cons = check_choice(consistency, "consistency", owner, CONSISTENCY)
    need_ut = cert == "U_T" or st3 == "U_T"
    n_ut_quantiles = (1 + (cons != "none")) if need_ut else 0
    # Monte Carlo draws of the certificate and the default grid's planning draws: fresh noise from child
    # streams of rng, independent of the release's noise and of each other (no data involved).
    mc_gen, plan_gen = p.rng.spawn(2)
    if k is None and n_ut_quantiles:
        # the default grid must fit the exact-solve budget: the largest k <= the default whose estimated
        # plan (from independent planning draws, so the certificate's draws stay unselected) is at most
        # half the limit; the certificate's own plan is checked below and a default run never refuses on it
        kk_default = kk
        kk = _default_k_within_budget(kk, ss, K, M_draws, dlt, n_ut_quantiles, exact_total, plan_gen,
                                      limits.current().max_transport_solves // 2)
        if kk < kk_default:
            k_rule += (f"; lowered from k = {kk_default} so that the certificate's exact transport solves fit "
                       f"dpsynth_core.limits max_transport_solves")
        m = kk**ss
    capped = None
    if n_synthetic is None:  # n is public under replace: capping the output size is post-processing
        m_syn, capped = limits.cap_rows(p.n, source="the public n (replace)", d=d)
    else:
        m_syn = check_int(n_synthetic, "n_synthetic", owner, low=1)
        limits.check_rows(m_syn, d, owner=owner)
    if isinstance(public, str):
        check_choice(public, "public", owner, PUBLIC_GENERATORS)
    gen = p.rng
    subsets = marginal_subsets(d, ss)
    order, rank = _path_rank(kk, ss)

    # Step 1: query operator (owner-side values). The only read of the private rows: integer marginal
    # counts summed over the rows (in memory once; with Dask per partition, merged exactly), then
    # divided by the public n here, correctly rounded per cell, whatever the partitioning.
    v_true = p.rows.sum(marginal_counts, ss, kk, "path") / p.n
    # Step 2: Haar-transformed Laplace noise, per block (Eq. (7), Lemma 2)
    b = noise_scale(p.n, p.epsilon, d, ss, kk, exact_total=exact_total)
    eta = haar_block_noise(K, kk, ss, b, gen, exact_total=exact_total)
    v_dp = v_true + eta
    # Consistency projection (post-processing of v_DP): v_cons = c0 + Π (v_DP - c0), c0 the uniform tables
    cmap = consistency_map(d, ss, kk, exact_total=exact_total) if cons != "none" else None
    v_dp_row = v_dp[:, rank]
    v_cons_row = v_dp_row.copy() if cmap is None else 1.0 / m + consistent_part(v_dp_row - 1.0 / m, cmap)
    v_cons = v_cons_row[:, order]
    ledger = Ledger().add(f"noisy {ss}-marginals: Haar-transformed Laplace, scale {b:.4g} (Lemma 2"
                          + (", exact totals" if exact_total else "") + ")", p.epsilon)

    # Certificate's Monte Carlo draws (fresh noise, no data) and its exact-solve plan, before the work
    mc_eta = haar_block_noise(K, kk, ss, b, mc_gen, draws=M_draws, exact_total=exact_total)  # path order
    mc_eta_row = mc_eta[..., rank]
    mc_pi = consistent_part(mc_eta_row, cmap) if cons != "none" else None  # Π η for the fresh draws
    plan = 0
    if need_ut:
        plan = _ut_solve_plan(mc_eta_row, kk, ss, dlt)
        if mc_pi is not None:
            plan += _ut_solve_plan(mc_pi, kk, ss, dlt)
    budget = _SolveBudget(owner, k=kk, s=ss, K=K, mc_draws=M_draws, soft=k is None)
    if plan > budget.limit and not budget.soft:
        budget.refuse(plan)  # an explicit choice: refused before Step 3 and before any exact solve

    # Public candidates (data-independent or given)
    pub_raw, pub_desc = _public_points(public, psize, domain, kk, gen)
    support = discretise_support(pub_raw, kk) if snap else pub_raw
    cells = np.empty((K, support.shape[0]), dtype=np.int64)
    for bl, S in enumerate(subsets):
        cells[bl] = cell_of(support[:, S], kk)

    # Step 3: sparse LP over measures on the public support; its constraint matrix has about
    # K (N + 7 k^s) non-zeros (public sizes: K, k, the public support), checked before it is built
    nnz = K * (support.shape[0] + 7 * m)
    limits.check_planned(nnz, "max_lp_nonzeros", owner=owner, param="public_size", what="Step 3 LP non-zeros",
                         fix="pass a smaller public_size or k",
                         got=f"C({d}, {ss}) = {K} blocks x ({support.shape[0]} public points + 7 x {kk}^{ss} cells) "
                             f"= {nnz}")
    v_fit = v_cons if cons == "both" else v_dp
    if st3 == "L_T":
        lp = step3_lp(v_fit, rank[cells], kk)
    else:
        lp = step3_ut_lp(v_fit[:, rank], cells, kk, ss)
    alpha = lp["alpha"]

    # Rounding to points (largest remainder) and the released empirical measure
    counts = largest_remainder(alpha, m_syn)
    keep = counts > 0
    syn_support, syn_w = support[keep], counts[keep] / m_syn
    U_syn = np.repeat(support, counts, axis=0)
    U_syn = U_syn[gen.permutation(U_syn.shape[0])]

    # Certificate (Eq. (4)): Monte Carlo quantile with fresh noise (no data)
    mc_lt = proxy_lt(mc_eta, kk)
    q_lt = _quantile_high(mc_lt, dlt)

    def to_row(w_path: np.ndarray) -> np.ndarray:  # row-major cell c sits at path position rank[c]
        return w_path[..., rank]

    def proj_terms(weights_pts: np.ndarray, pts: np.ndarray) -> tuple[np.ndarray, float]:
        u_path = _marginal_bins(pts, ss, kk, "path", weights_pts)  # T mu of the public measure
        sup = 0.0 if snap else _support_discretisation(pts, weights_pts, subsets, kk)
        return u_path, sup

    u_syn, sup_syn = proj_terms(syn_w, syn_support)
    u_lp, sup_lp = proj_terms(alpha, support)
    # the paper's Eq. (4) with G = L_T and G = U_T (always reported)
    lt_syn = float(proxy_lt(v_dp - u_syn, kk))
    lt_lp = float(proxy_lt(v_dp - u_lp, kk))
    terms = {"L_T": _certificate_terms("L_T", k=kk, quantile=q_lt, proj_proxy=lt_syn, proj_support=sup_syn)}
    terms_lp = {"L_T": _certificate_terms("L_T", k=kk, quantile=q_lt, proj_proxy=lt_lp, proj_support=sup_lp)}
    mc = {"L_T": mc_lt}
    owner_trace = {
        "true_marginals": to_row(v_true),
        "L_T(0,eta)": float(proxy_lt(eta, kk)),
        "n": p.n,
        "n_clamped": p.n_clamped,
    }
    if need_ut and not budget.soft:
        # the projection terms' plan (residual maxima over blocks; the direct KR terms of unsnapped points),
        # from the cheap bounds: an explicit choice is refused here, before any exact solve
        res_rows = [to_row(v_dp - u_syn), to_row(v_dp - u_lp)]
        if cons != "none":
            res_rows += [v_cons_row - to_row(u_syn), v_cons_row - to_row(u_lp)]
        plan += sum(_ut_solve_plan(r_row, kk, ss) for r_row in res_rows)
        if cons != "none" and not snap:
            plan += sum(K * (_solve_cost(m) + _solve_cost(m + 1 + n_pts)) for n_pts in (syn_support.shape[0],
                                                                                    support.shape[0])
                        if m + 1 + n_pts <= _DIRECT_MAX_NODES)
        if plan > budget.limit:
            budget.refuse(plan)
    if need_ut:
        # exact quantile and maxima, solving only the blocks and draws that decide them (_ut_quantile)
        q_ut, mc_ut = _ut_quantile(mc_eta_row, kk, ss, dlt, budget)
        ut_syn = _ut_block_max(to_row(v_dp - u_syn), kk, ss, budget)
        ut_lp = _ut_block_max(to_row(v_dp - u_lp), kk, ss, budget)
        terms["U_T"] = _certificate_terms("U_T", k=kk, quantile=q_ut, proj_proxy=ut_syn, proj_support=sup_syn)
        terms_lp["U_T"] = _certificate_terms("U_T", k=kk, quantile=q_ut, proj_proxy=ut_lp, proj_support=sup_lp)
        mc["U_T"] = mc_ut
        owner_trace["U_T(0,eta)"] = _ut_block_max(to_row(eta), kk, ss)  # owner-side: never refused
    # the consistent certificate: Eq. (4) with G∘Π (module docstring)
    if cons != "none":
        mc_lt_c = proxy_lt(mc_pi[..., order], kk)
        q_lt_c = _quantile_high(mc_lt_c, dlt)
        r_syn, r_lp = v_cons_row - to_row(u_syn), v_cons_row - to_row(u_lp)
        terms["L_T_consistent"] = _certificate_terms(
            "L_T∘Π", k=kk, quantile=q_lt_c, proj_proxy=float(proxy_lt(r_syn[:, order], kk)), proj_support=sup_syn)
        terms_lp["L_T_consistent"] = _certificate_terms(
            "L_T∘Π", k=kk, quantile=q_lt_c, proj_proxy=float(proxy_lt(r_lp[:, order], kk)), proj_support=sup_lp)
        mc["L_T_consistent"] = mc_lt_c
        owner_trace["L_T(0,Pi eta)"] = float(proxy_lt(consistent_part(to_row(eta), cmap)[:, order], kk))
        if need_ut:
            q_ut_c, mc_ut_c = _ut_quantile(mc_pi, kk, ss, dlt, budget)
            mc["U_T_consistent"] = mc_ut_c
            owner_trace["U_T(0,Pi eta)"] = _ut_block_max(consistent_part(to_row(eta), cmap), kk, ss)

            def ut_projection(r_row: np.ndarray, pts: np.ndarray, wts: np.ndarray, sup: float) -> dict:
                if snap or m + 1 + pts.shape[0] > _DIRECT_MAX_NODES:
                    # snapped: the exact KR term is U_T of the block (the measures live on the centres); only
                    # the maximum over blocks enters the certificate
                    top = _ut_block_max(r_row, kk, ss, budget) + sup
                    return {"per_block": np.array([top]), "exact": snap, "via_grid": float(top)}
                via_grid = np.array([_ut_exact(row, kk, ss, budget) for row in r_row]) + sup
                if not all([budget.charge(m + 1 + pts.shape[0]) for _ in subsets]):  # a soft budget declined
                    return {"per_block": via_grid, "exact": False, "via_grid": float(via_grid.max())}
                direct = _direct_projection(v_cons_row, pts, wts, subsets, kk, ss)
                return {"per_block": np.minimum(direct, via_grid), "exact": True, "via_grid": float(via_grid.max())}

            for store, (r_row, pts, wts, sup) in ((terms, (r_syn, syn_support, syn_w, sup_syn)),
                                                  (terms_lp, (r_lp, support, alpha, sup_lp))):
                pr = ut_projection(r_row, pts, wts, sup)
                t = _certificate_terms("U_T∘Π", k=kk, quantile=q_ut_c, proj_proxy=float(pr["per_block"].max()),
                                       proj_support=0.0)
                t["projection_kind"] = ("exact KR distance ||T^-1 Π v_DP - P^S mu||, max over blocks" if pr["exact"]
                                        else "U_T(Π v_DP, T mu) + U(T^-1 T mu, mu) (too large for the exact term)")
                t["projection_via_grid"] = pr["via_grid"]
                store["U_T_consistent"] = t
    cert_key = f"{cert}_consistent" if cons != "none" else cert
    bound = terms[cert_key]["total"]

    section_5_3 = {
        "L_T(v_DP, T mu)": lt_syn,
        "L_T(0, eta) MC mean": float(np.mean(mc_lt)),
        "L_T(0, eta) MC q05": float(np.quantile(mc_lt, 0.05)),
        "L_T(0, eta) MC q95": float(np.quantile(mc_lt, 0.95)),
        "ratio to MC mean": lt_syn / float(np.mean(mc_lt)) if np.mean(mc_lt) > 0 else float("nan"),
        "note": "Section 5.3: once L_T(v_DP, T mu) is about L_T(v_DP, T mu_D) = L_T(0, eta), further "
                "optimisation of Step 3 (e.g. more public points) cannot be expected to help.",
    }
    if "U_T_consistent" in terms:
        section_5_3["U_T(Pi v_DP, T mu)"] = terms["U_T_consistent"]["projection_proxy"]
        section_5_3["U_T(0, Pi eta) MC mean"] = float(np.mean(mc["U_T_consistent"]))
    notes = [
        f"Public candidates: {pub_desc}" + ("; moved to their cell centres in T_k,d (Section 5.1)." if snap else "."),
        f"bound = certificate (Eq. 4, proxy {cert}): with probability >= {1 - dlt:g} over the noise the utility "
        f"loss (largest W1 over all {ss}-marginals, l_inf, unit cube) of the released points is at most "
        f"{bound:.4g}. The (1-δ)-quantile is the ⌈(1-δ)(M+1)⌉-th smallest of M = {M_draws} fresh noise draws (exceeded with probability at most δ).",
        ("Consistent certificate (trace key " + cert_key + "): Eq. (4) with the proxy composed with the "
         f"consistency projection Π ({'identity: too many constraints' if cmap is None else cmap['kind']}); "
         "the paper's Eq. (4) as printed is under key " + cert + f" ({terms[cert]['total']:.4g})."
         + (" Step 3 fitted Π v_DP." if cons == "both" else "")) if cons != "none"
        else "Certificate: the paper's Eq. (4) as printed (consistency='none').",
        "Only replace neighbours: the marginal histograms are normalised by the public size n.",
    ]
    params = {
        "s": ss, "k": kk, "k_rule": k_rule, "K": K, "cells_per_block": m, "haar_levels": levels_for(m),
        "delta_cert": dlt, "mc_draws": M_draws, "noise_scale": b, "sensitivity": 2.0 * K / p.n,
        "certificate": cert, "certificate_key": cert_key, "step3": st3, "noise": noise_kind, "consistency": cons,
        "consistency_projection": ("none" if cons == "none" else "identity (too large)" if cmap is None
                                   else cmap["kind"]), "public": pub_desc, "public_size": int(pub_raw.shape[0]),
        "support_size": int(support.shape[0]), "snap_public": snap, "n_synthetic": m_syn,
        "subsets": [list(S) for S in subsets], "path": "snake", "tie_break": TIE_BREAK,
    }
    if capped is not None:
        params["limits"] = capped
        notes.append(limits.cap_note(capped, owner))
    if budget.declined:  # the default grid's certificate met the solve limit: proven upper bounds took over
        params["certificate_upper_bounds"] = budget.declined
        notes.append(f"The certificate reached dpsynth_core.limits max_transport_solves ({budget.limit}): "
                     f"{budget.declined} exact transport solve(s) were replaced by their proven upper bounds, so "
                     f"the bound is valid but looser than the exact computation.")
    trace = {
        "subsets": [list(S) for S in subsets],
        "snake_order": np.asarray(order),
        "noisy_marginals": to_row(v_dp),
        "consistent_marginals": v_cons_row,
        "projected_marginals": to_row(u_syn),
        "lp_marginals": to_row(u_lp),
        "certificate": terms,
        "certificate_lp_measure": terms_lp,
        "mc_samples": mc,
        "lp": {k_: v_ for k_, v_ in lp.items() if k_ != "alpha"},
        "support": support,
        "weights": alpha,
        "section_5_3": section_5_3,
        "transport_solves": budget.used,
        "owner": owner_trace,
    }
    return Release(
        synthetic=domain.from_unit(U_syn), epsilon=p.epsilon, delta=0.0, neighbours=p.neighbours,
        mechanism=owner, domain=domain, ledger=ledger, params=params, bound=bound,
        bound_kind=f"certificate (Eq. 4, {cert}): high-probability (1-δ={1 - dlt:g}) upper bound on the utility "
                   f"loss of Eq. (1) for the released points; private",
        trace=trace, notes=notes,
    )


# -------------------------------------------------------------------------- shift scenario
def shift_scenario(n: int, d: int = 4, shift: float = 0.5, rng: Any = None, *, n_public: int = 4000,
                   names: tuple[str, ...] | None = None):
    """Private and public data with a distribution shift (the idea of [DLS+24, Figures 1–2]), generated.

    The private data is a mixture of three correlated Gaussian clusters (clipped to ``[0,1]^d``), in the
    spirit of census covariates (age, schooling, hours, ...). The public data is drawn from the same
    family with every cluster mean moved by ``shift · 0.35`` along a fixed direction, the mixture weights
    tilted towards the last cluster and the spread widened by ``1 + shift``; ``shift = 0`` gives two
    samples of one distribution. Public data of the first kind helps Step 3; strongly shifted public data
    puts little mass where the private data is, which the certificate's projection term reports.

    Parameters
    ----------
    n : int >= 1, private size; d : int in [2, 20], default 4
    shift : float in [0, 1], default 0.5
    rng : numpy Generator, int or None
    n_public : int >= 1, default 4000
    names : optional column names

    Returns
    -------
    X : ndarray (n, d) private; P : ndarray (n_public, d) public; domain : Domain (the unit cube)
    """
    owner = "shift_scenario"
    nn = check_int(n, "n", owner, low=1)
    dd = check_int(d, "d", owner, low=2, high=20)
    sh = check_float(shift, "shift", owner, low=0.0, high=1.0)
    npub = check_int(n_public, "n_public", owner, low=1)
    gen = check_rng(rng, owner)
    # Fixed (seeded) geometry of the clusters, independent of rng so both draws share it.
    geo = np.random.default_rng(20240202)
    means = np.clip(geo.uniform(0.2, 0.8, size=(3, dd)), 0.0, 1.0)
    covs = []
    for _ in range(3):
        A = geo.normal(size=(dd, dd)) * 0.06
        covs.append(A @ A.T + np.eye(dd) * 0.004)
    direction = np.ones(dd) / math.sqrt(dd)
    weights = np.array([0.45, 0.35, 0.20])

    def sample(size: int, mu: np.ndarray, w: np.ndarray, spread: float) -> np.ndarray:
        lab = gen.choice(3, size=size, p=w)
        out = np.empty((size, dd))
        for c in range(3):
            idx = np.flatnonzero(lab == c)
            out[idx] = gen.multivariate_normal(mu[c], covs[c] * spread**2, size=idx.size)
        return np.clip(out, 0.0, 1.0)

    X = sample(nn, means, weights, 1.0)
    w_pub = weights * np.array([1.0 - 0.6 * sh, 1.0, 1.0 + 2.0 * sh])
    P = sample(npub, means + sh * 0.35 * direction, w_pub / w_pub.sum(), 1.0 + sh)
    dom = Domain.unit(dd, names=names)
    return X, P, dom
