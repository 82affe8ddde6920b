"""The proxy losses of [DLS+24]: L_T (Eq. (10)) and the tighter U_T (Eq. (17)), exact.

* :func:`proxy_lt`: cumulative sums along the snake path.
* :func:`proxy_ut`: per block an exact transport problem (POT's network simplex) by
  Kantorovich–Rubinstein duality; :func:`proxy_ut_lp` is the LP of Eq. (17) over f (HiGHS), the
  slow reference.
* Exact U_T under a budget: :func:`ut_bounds` (cheap lower and upper bounds), :func:`ut_exact` and
  :func:`ut_block_max` (solving only the blocks that can attain the maximum), and
  :class:`SolveBudget`, which counts the exact solves of a certificate against
  ``dpsynth_core.limits`` ``max_transport_solves``.
"""

from __future__ import annotations

import functools
import itertools
import math
import warnings
from typing import Any

import numpy as np
from scipy import sparse
from scipy.optimize import linprog

from ... import limits
from ...grid import cell_centres
from .query import path_rank

__all__ = ["proxy_lt", "proxy_ut", "proxy_ut_lp", "king_edges", "emd_value", "ut_bounds", "ut_exact", "ut_block_max",
           "solve_cost", "SolveBudget"]

#: Above this many cells per block U_T uses the sparse king-move transshipment instead of a dense cost.
_DENSE_UT_MAX = 400


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
        return np.array([ut_block_max(row, k, s) for row in flat]).reshape(w.shape[:-2])
    flat = w.reshape(-1, w.shape[-1])
    vals = np.array([ut_exact(row, k, s, None) for row in flat]).reshape(w.shape[:-1])
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
    edges = king_edges(k, s)
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


# ------------------------------------------------------------------------------ exact transport
@functools.lru_cache(maxsize=16)
def _ut_dense_cost(k: int, s: int) -> np.ndarray:
    """l_inf distances among {origin} ∪ T_{k,s} (row-major cells), node 0 the origin."""
    pts = np.vstack([np.zeros((1, s)), cell_centres(k, s)])
    cost = np.max(np.abs(pts[:, None, :] - pts[None, :, :]), axis=2)
    cost.setflags(write=False)
    return cost


@functools.lru_cache(maxsize=16)
def king_edges(k: int, s: int) -> np.ndarray:
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


def emd_value(a: np.ndarray, b: np.ndarray, M) -> float:
    """Exact optimal transport cost between ``a`` and ``b`` (equal masses) by POT's network simplex, ``ot.emd2``'s
    value bit for bit. A solve that does not end optimal is an error, never a number.

    A dense cost with positive masses goes to POT's compiled solver (``ot.lp.emd_wrap.emd_c``, as the marginal
    tables' certificate does) with exactly the inputs ``ot.emd2`` would give it (``b`` rescaled to a's mass by the
    same expression): on the certificates' blocks of 2-100 cells ``ot.emd2``'s backend detection, checks and dual
    centring cost about 30 times the solve, and one certificate solves thousands. Anything else (a sparse cost,
    a zero mass that ``ot.emd2`` would filter out, masses that differ) goes through ``ot.emd2``."""
    if isinstance(M, np.ndarray) and M.dtype == np.float64 and M.flags.c_contiguous:
        a = np.asarray(a, dtype=np.float64)
        b = np.asarray(b, dtype=np.float64)
        if (a.ndim == b.ndim == 1 and M.shape == (a.size, b.size) and np.all(a > 0) and np.all(b > 0)
                and abs(float(a.sum(0)) - float(b.sum(0))) < 1.5e-6):  # ot.emd2's own mass check (decimal=6)
            from ot.lp.emd_wrap import check_result, emd_c

            b_solver = b * a.sum(0) / b.sum(0, keepdims=True)  # ot.emd2's rescaling, the same expression
            if np.all(b_solver > 0):
                _, value, _, _, code = emd_c(a, b_solver, M, 100_000_000, 1)
                if code != 1:
                    raise RuntimeError(f"POT's network simplex did not reach optimality: {check_result(code)}")
                return float(value)
    return _emd2_value(a, b, M)


def _emd2_value(a: np.ndarray, b: np.ndarray, M) -> float:
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
        return emd_value(a, b, np.ascontiguousarray(_ut_dense_cost(k, s)[np.ix_(pos, neg)]))
    # Sparse transshipment on the king-move graph (l_inf distance between grid centres is the graph
    # distance with edge length 1/k); the origin connects to the corner cell (distance 1/2k), which
    # realises ||z||_inf = 1/2k + (graph distance to the corner) for every centre z. Written as a
    # transportation problem with a buffer B on every node (zero-cost self arcs).
    edges = king_edges(k, s)
    n_nodes = m + 1
    rows = np.concatenate([edges[:, 0] + 1, [0, 1], np.arange(n_nodes)])
    cols = np.concatenate([edges[:, 1] + 1, [1, 0], np.arange(n_nodes)])
    cost = np.concatenate([np.full(edges.shape[0], 1.0 / k), [0.5 / k, 0.5 / k], np.zeros(n_nodes)])
    M = sparse.coo_matrix((cost, (rows, cols)), shape=(n_nodes, n_nodes))
    B = float(np.abs(nu).sum())
    a = B + np.maximum(nu, 0.0)
    b = B + np.maximum(-nu, 0.0)
    b = b * (a.sum() / b.sum())
    return emd_value(a, b, M)


# ------------------------------------------------------------------------- U_T within a budget
_BOUND_SLACK = 1e-12
#: An exact transport solve on a block of m cells counts ⌈m / _SOLVE_CELLS⌉ solves against the limit.
_SOLVE_CELLS = 64


def solve_cost(m: int) -> int:
    """What one exact solve on m cells (or transport nodes) counts against ``max_transport_solves``."""
    return max(1, -(-int(m) // _SOLVE_CELLS))


class SolveBudget:
    """Counts exact transport solves of a certificate against ``limits.current().max_transport_solves``.

    An explicit choice (``k`` given) is *hard*: its plan (:func:`.certificate.ut_solve_plan`, from the cheap bounds)
    is checked before any solve and a plan above the limit raises the project's one-line ValueError
    naming ``k`` (the cells per block drive the cost) and what else to change (:meth:`refuse`). The
    default grid is chosen so that its plan fits (:func:`.certificate.default_k_within_budget`) and is *soft*: should
    its fresh draws still need more, the remaining solves are declined and their proven upper bounds
    used (a looser, still valid certificate, noted in the release). The count depends on public inputs,
    fresh noise and the DP output (v_DP, α): refusing on it is post-processing."""

    def __init__(self, owner: str, *, k: int, s: int, K: int, mc_draws: int, soft: bool = False):
        self.limit = limits.current().max_transport_solves
        self.used = 0
        self.declined = 0
        self.bounded = 0  # mixed blocks above the dense limit: proven upper bounds (.mixed.DENSE_MIXED_MAX)
        self.planned = 0
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

    def plan(self, solves: int) -> None:
        """Add solves planned from the cheap bounds (before any exact solve); a hard budget refuses as
        soon as the plan exceeds the limit, a soft one only records it."""
        self.planned += int(solves)
        if self.planned > self.limit and not self.soft:
            self.refuse(self.planned)

    def charge(self, m: int) -> bool:
        """Count one exact solve on m cells; True if it may run. Over the limit a hard budget raises and a
        soft one declines: the caller then uses a proven upper bound."""
        cost = solve_cost(m)
        if self.used + cost <= self.limit:
            self.used += cost
            return True
        if self.soft:
            self.declined += 1
            return False
        self.refuse()


def ut_bounds(w_row: np.ndarray, k: int, s: int) -> tuple[np.ndarray, np.ndarray]:
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
    order, _ = path_rank(k, s)
    cent = cell_centres(k, s)
    norms = cent.max(axis=1)
    ub = np.abs(w) @ norms
    tails = np.cumsum(w[..., order][..., ::-1], axis=-1)[..., ::-1]
    ub = np.minimum(ub, np.abs(tails[..., 0]) * (0.5 / k) + np.abs(tails[..., 1:]).sum(axis=-1) / k)
    lb = np.abs(w @ np.column_stack([norms, cent])).max(axis=-1)
    return lb * (1.0 - _BOUND_SLACK), ub * (1.0 + _BOUND_SLACK)


def ut_exact(w: np.ndarray, k: int, s: int, budget: SolveBudget | None) -> float:
    if w.size == 1:  # one cell: the centre is at distance 1/2k from the origin
        return abs(float(w[0])) * (0.5 / k)
    if not np.any(w):
        return 0.0
    if budget is not None and not budget.charge(w.size):
        # a soft budget declined: the cheap upper bound is a proven bound on the exact value (conservative)
        return float(ut_bounds(w[None, :], k, s)[1][0])
    return _ut_one(w, k, s)


def ut_block_max(w_row: np.ndarray, k: int, s: int, budget: SolveBudget | None = None,
                  bounds: tuple[np.ndarray, np.ndarray] | None = None) -> float:
    """:math:`\\max_S \\mathcal U_T` of the blocks of ``w_row`` (K, k^s), exact, solving only the blocks
    whose upper bound (:func:`ut_bounds`) exceeds the best exact value found so far."""
    lb, ub = ut_bounds(w_row, k, s) if bounds is None else bounds
    best = -math.inf
    for b in np.argsort(-ub, kind="stable"):
        if ub[b] <= best:
            break
        best = max(best, ut_exact(w_row[b], k, s, budget))
    return float(max(best, 0.0))
