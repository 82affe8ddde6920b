"""Wasserstein-1 distances and the bounded-Lipschitz projection.

What this module computes
-------------------------
* :func:`wasserstein1` -- W1 between two weighted point sets,

  .. math:: W_1(\\mu, \\nu) = \\min_{\\gamma \\in \\Gamma(a, b)} \\sum_{i,j} \\gamma_{ij} \\, \\rho(x_i, y_j),

  with :math:`\\rho` the l_inf (default), l1 or l2 metric, by one of the methods:

  ``"exact_1d"``  d = 1: :math:`\\int |F - G|`, exact, O((n+m) log(n+m)).
  ``"pot"``       POT's network simplex on the dense cost matrix (exact; n*m <= 2.5e7); the result
                  code is checked (POT stops silently at its default ``numItermax``) and the duals
                  are verified over all pairs.
  ``"grid"``      both sets binned on a ``k^d`` grid of the unit cube; the transport between the
                  two histograms is solved *exactly* as a min-cost flow on the grid graph (king's
                  moves for l_inf, 2d-neighbour moves for l1: their path metrics are the l_inf / l1
                  distances between cell centres), so the true W1 lies in ``[value - h, value + h]``
                  with ``h`` the cell's diameter (MATH_NOTES, "Exact W1 at scale").
  ``"sparse"``    certified exact W1 between point clouds (issue 10), never forming the n x m
                  pairs. Equal sizes with uniform weights (the assignment case): auction with
                  epsilon-scaling whose bids search a kd-tree of Y (compiled, ``_assign``), then an
                  exact c-transform over all pairs as the dual certificate. Otherwise: network
                  simplex on a sparse set of candidate arcs, a check of dual feasibility over *all*
                  pairs with a vectorised kd-tree branch-and-bound, adding violated arcs until none
                  is left.
  ``"sliced"``    sliced W1 with random l2 projections: a preview, not W1 (a lower bound for l2).
  ``"auto"``      exact_1d (d = 1), pot (n*m <= 2.5e7), else grid (128^2 in 2-D, 20^3 in 3-D) for
                  l_inf / l1 and sparse for l2 up to n + m = 20,000 (refused beyond, with a message);
                  an uncertified number is never reported as exact.

* :func:`bl_projection` -- seed 000, Algorithm 2 (Proposition 6): the probability vector closest to
  a signed measure in the bounded-Lipschitz distance,

  .. math:: \\hat\\tau = \\arg\\min_{\\tau \\in \\Delta_m} d_{BL}(\\nu, \\tau), \\qquad
            d_{BL}(\\nu, \\tau) = \\sup_{\\|f\\|_{Lip} \\le 1} \\Big|\\sum_i f(y_i)(\\nu_i - \\tau_i)\\Big|,

  with seed 000's Lipschitz norm :math:`\\|f\\|_{Lip} = \\max\\{Lip(f), \\|f\\|_\\infty / diam(\\Omega)\\}`
  and :math:`\\Omega = [0,1]^d` (diam 1 in l_inf, d in l1, sqrt(d) in l2).

Conventions
-----------
Points are used as given, or mapped to the unit cube with ``domain.to_unit`` when a domain is
passed (W1 then in unit-cube units). Dual potentials follow POT's convention: the dual of the
transport LP is :math:`\\max a^\\top u + b^\\top v` subject to :math:`u_i + v_j \\le c(x_i, y_j)`.
"""

from __future__ import annotations

import itertools
import math
import time
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp

from .validation import check_bool, check_choice, check_int, check_points, check_rng, param_error

__all__ = [
    "W1Result",
    "BLProjectionResult",
    "wasserstein1",
    "bl_projection",
    "check_dual_certificate",
    "w1_1d",
    "sliced_w1",
    "POT_MAX_PAIRS",
    "AUTO_POT_PAIRS",
    "METRICS",
    "W1_METHODS",
    "sparse_utility_loss",
]

METRICS = ("linf", "l1", "l2")
W1_METHODS = ("auto", "exact_1d", "pot", "grid", "sparse", "sliced")
#: Largest n*m the dense "pot" method accepts (about 5000 x 5000: a 200 MB cost matrix, ~6 s).
POT_MAX_PAIRS = 25_000_000
#: Kept for callers: "auto" now uses "pot" up to POT_MAX_PAIRS (measured faster than "sparse").
AUTO_POT_PAIRS = POT_MAX_PAIRS
#: Largest n + m for which "auto" runs the certified sparse method (l2 above the POT limit); measured
#: 20-45 s at n = m = 10^4 in 2-D on 2 cores (assignment path), 70-130 s at 2*10^4 (issue 10 notes).
AUTO_SPARSE_MAX_POINTS = 20_000

#: Cells per axis of the grid used by "auto" above the POT limit (about 1 s each, MATH_NOTES).
_AUTO_GRID = {2: 128, 3: 20}
#: Largest support of the dense Algorithm 2 LP (2 m^2 variables).
BL_DENSE_MAX_M = 400
#: numItermax handed to POT's network simplex (its default, 1e5, stops early at ~5000 points).
_POT_ITERMAX = 10**12
_OWNER = "wasserstein1"
_CENTRE_BOUND = True
_BL_OWNER = "bl_projection"


# ------------------------------------------------------------------------------------ results
@dataclass(frozen=True)
class W1Result:
    """A W1 value with what is known about it.

    Attributes
    ----------
    value : float
        The reported number (the exact W1 for exact methods).
    lower, upper : float
        Proven bounds on the true W1 (``lower == upper == value`` for exact methods; the grid
        interval ``[value - h, value + h]``; for "sliced" only a lower bound, ``upper = inf``).
    method : str
        The method that produced the value (never "auto").
    exact : bool
        True when ``value`` is the W1 of the given measures up to floating-point rounding.
    certified : bool
        True when optimality was verified a posteriori: primal feasibility, dual feasibility over
        *all* pairs and equal primal and dual objectives (pot, sparse), or exact by construction
        (exact_1d). The grid's interval is certified by the same check on the binned problem.
    iterations : int
        Column-generation rounds ("sparse"), 1 otherwise.
    seconds : float
        Wall time.
    details : dict
        Method-specific figures (arcs, grid size, gap, dual violation, ...).
    """

    value: float
    lower: float
    upper: float
    method: str
    exact: bool
    certified: bool
    iterations: int = 1
    seconds: float = 0.0
    details: dict = field(default_factory=dict)

    def __float__(self) -> float:
        return float(self.value)


@dataclass(frozen=True)
class BLProjectionResult:
    """Output of :func:`bl_projection`.

    Attributes
    ----------
    tau : ndarray, shape (m,)
        The projected probability vector (non-negative, sums to 1).
    value : float
        The optimal bounded-Lipschitz distance :math:`d_{BL}(\\nu, \\hat\\tau)` (LP optimum).
    method : str
        "dense" (seed 000 Algorithm 2 LP) or "sparse" (grid-graph min-cost flow).
    metric : str
    seconds : float
    details : dict
        Solver information (status, variables, constraints, solver name).
    """

    tau: np.ndarray
    value: float
    method: str
    metric: str
    seconds: float = 0.0
    details: dict = field(default_factory=dict)


# ------------------------------------------------------------------------------------ helpers
def _check_weights(w: Any, n: int, name: str, owner: str = _OWNER) -> np.ndarray:
    """Probability vector of length n from non-negative finite weights with a positive sum."""
    if w is None:
        return np.full(n, 1.0 / n)
    if isinstance(w, (str, bytes)):
        raise param_error(owner, name, f"an array of {n} non-negative weights", w, kind=TypeError)
    try:
        arr = np.asarray(w)
    except Exception as exc:  # pragma: no cover - ragged input
        raise param_error(owner, name, f"an array of {n} non-negative weights", type(w).__name__,
                          kind=TypeError) from exc
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == np.bool_) \
            or np.iscomplexobj(arr):
        raise param_error(owner, name, f"a numeric array of {n} non-negative weights", arr, kind=TypeError)
    arr = arr.astype(np.float64).ravel() if arr.ndim <= 1 else arr.astype(np.float64)
    if arr.ndim != 1 or arr.shape[0] != n:
        raise param_error(owner, name, f"an array of length {n} (one weight per point)", arr)
    if not np.isfinite(arr).all():
        raise param_error(owner, name, "an array of finite weights", arr)
    if (arr < 0).any():
        raise param_error(owner, name, "an array of non-negative weights", arr)
    total = arr.sum()
    if not total > 0:
        raise param_error(owner, name, "an array of weights with a positive sum", arr)
    return arr / total


def _pairwise(X: np.ndarray, Y: np.ndarray, metric: str) -> np.ndarray:
    from scipy.spatial.distance import cdist

    return cdist(X, Y, metric={"linf": "chebyshev", "l1": "cityblock", "l2": "euclidean"}[metric])


def _rowdist(X: np.ndarray, Y: np.ndarray, metric: str) -> np.ndarray:
    """Distances between matching rows of X and Y."""
    D = np.abs(X - Y)
    if metric == "linf":
        return D.max(axis=1)
    if metric == "l1":
        return D.sum(axis=1)
    return np.sqrt((D * D).sum(axis=1))


def _unit_diam(d: int, metric: str) -> float:
    """Diameter of [0,1]^d in the metric."""
    return {"linf": 1.0, "l1": float(d), "l2": math.sqrt(d)}[metric]


def _cell_diam(k: int, d: int, metric: str) -> float:
    """Diameter of a cell of side 1/k in the metric."""
    return _unit_diam(d, metric) / k


def _emd_checked(a: np.ndarray, b: np.ndarray, M: Any, what: str):
    """ot.emd with a large numItermax; raise RuntimeError unless POT reports optimality."""
    import ot

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        G, log = ot.emd(a, b, M, numItermax=_POT_ITERMAX, log=True, check_marginals=False)
    code = int(log.get("result_code", -1))
    if code != 1:
        msgs = "; ".join(str(w.message) for w in caught)
        raise RuntimeError(
            f"POT's network simplex did not reach optimality in {what} (result_code={code}, "
            f"warning={log.get('warning')!r}{'; ' + msgs if msgs else ''})."
        )
    return G, log


# ------------------------------------------------------------------------------------ 1-D
def w1_1d(x: np.ndarray, y: np.ndarray, a: np.ndarray, b: np.ndarray) -> float:
    """Exact W1 on the line, :math:`\\int |F_a - G_b|`, for probability vectors a, b.

    O((n+m) log(n+m)). Used by ``wasserstein1(method="exact_1d")``.
    """
    x = np.asarray(x, dtype=float).ravel()
    y = np.asarray(y, dtype=float).ravel()
    t = np.concatenate([x, y])
    w = np.concatenate([a, -b])
    order = np.argsort(t, kind="mergesort")
    t, w = t[order], w[order]
    diff = np.abs(np.cumsum(w)[:-1])
    with np.errstate(over="ignore", invalid="ignore"):
        gaps = np.diff(t)  # may overflow to inf for supports spanning ±1e308
        terms = np.where(diff > 0, diff * gaps, 0.0)  # no inf * 0 where the CDFs agree
    return float(np.sum(terms))


# ------------------------------------------------------------------------------------ sliced
def sliced_w1(X: np.ndarray, Y: np.ndarray, a: np.ndarray, b: np.ndarray, *, n_projections: int = 256,
              rng: Any = None) -> float:
    """Sliced W1 (POT's ``sliced_wasserstein_distance`` with p=1) over random unit directions.

    .. math:: SW_1 = \\frac{1}{L} \\sum_{l=1}^{L} W_1(\\theta_l^\\top \\mu, \\theta_l^\\top \\nu)

    An approximation for previews only. Each slice is a lower bound of the l2 W1 (projection on a
    unit vector is 1-Lipschitz), so the average is too.
    """
    import ot

    gen = check_rng(rng, "sliced_w1")
    d = X.shape[1]
    theta = gen.standard_normal((d, n_projections))
    theta /= np.linalg.norm(theta, axis=0, keepdims=True)
    return float(ot.sliced_wasserstein_distance(X, Y, a, b, n_projections=n_projections, p=1,
                                                projections=theta))


# ------------------------------------------------------------------------------------ grid graph
def _grid_moves(d: int, metric: str) -> list[tuple[int, ...]]:
    if metric == "linf":
        return [m for m in itertools.product((-1, 0, 1), repeat=d) if any(m)]
    return [tuple(s if a == c else 0 for c in range(d)) for a in range(d) for s in (-1, 1)]


def _grid_arcs(k: int, d: int, metric: str) -> tuple[np.ndarray, np.ndarray]:
    """Directed arcs (src, dst) of the k^d grid graph (row-major cells): king's moves (3^d - 1
    neighbours) for l_inf, axis moves (2d neighbours) for l1. Every arc has length 1/k in the metric,
    and the graph's path metric equals the metric between cell centres."""
    idx = np.arange(k**d, dtype=np.int64).reshape((k,) * d)
    src, dst = [], []
    for mv in _grid_moves(d, metric):
        s = tuple(slice(max(0, -o), k - max(0, o)) for o in mv)
        t = tuple(slice(max(0, o), k - max(0, -o)) for o in mv)
        src.append(idx[s].ravel())
        dst.append(idx[t].ravel())
    if not src:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    return np.concatenate(src), np.concatenate(dst)


def _transshipment_pot(supply: np.ndarray, src: np.ndarray, dst: np.ndarray, cost: np.ndarray,
                       what: str) -> tuple[float, np.ndarray, np.ndarray]:
    """Exact min-cost flow (uncapacitated transshipment) with POT's sparse network simplex.

    Minimise :math:`\\sum_e c_e x_e` over :math:`x \\ge 0` with net outflow ``supply[k]`` at every
    node. Written as a transportation problem (Orden's reduction): node k is a source of mass
    ``max(s_k, 0) + B`` and a sink of mass ``max(-s_k, 0) + B``; arc k -> l becomes the pair
    (source k, sink l) with cost c_kl and (source k, sink k) costs 0. With ``B`` = the total positive
    supply (an upper bound on the throughput of any node in an acyclic optimal flow) both problems
    have the same optimum. Returns (value, arc flows, node potentials).
    """
    value, f_arcs, U, _V, _err = _transshipment(supply, src, dst, cost, what, slack=1.0)
    return value, f_arcs, U


def _transshipment(supply: np.ndarray, src: np.ndarray, dst: np.ndarray, cost: np.ndarray, what: str,
                   slack: float = 1.0) -> tuple[float, np.ndarray, np.ndarray, np.ndarray, float]:
    """Orden's reduction solved by POT (see :func:`_transshipment_pot`) with ``B = slack * supply``.

    Returns (value, arc flows, source potentials U, sink potentials V, conservation error
    :math:`\\sum_k |\\text{net outflow}_k - s_k|`). With ``slack > 1`` every self arc (k, k) carries
    flow ``B - inflow_k > 0``, so complementary slackness forces ``U_k + V_k = 0`` at every node:
    ``f = U = -V`` is then one potential on the nodes (the Kantorovich-Rubinstein dual on the arcs).
    The arcs (src, dst) must be distinct and without loops.
    """
    N = supply.size
    s = np.concatenate([src, np.arange(N)])
    t = np.concatenate([dst, np.arange(N)])
    c = np.concatenate([cost, np.zeros(N)])
    M = sp.coo_array((c, (s, t)), shape=(N, N))  # explicit zero costs (self arcs) are kept
    pos = np.maximum(supply, 0.0)
    neg = np.maximum(-supply, 0.0)
    B0 = max(float(pos.sum()), float(neg.sum()))
    if B0 <= 0:
        return 0.0, np.zeros(src.size), np.zeros(N), np.zeros(N), 0.0
    B = slack * B0
    a = pos + B
    bb = neg + B
    bb = bb * (a.sum() / bb.sum())
    try:
        G, log = _emd_checked(a, bb, M, what)
    except RuntimeError:
        # POT declares infeasibility when rounding leaves a few ulps on an artificial arc (its test is
        # an exact comparison with 0). The problem is feasible (connected graph, balanced supplies):
        # solve it again with dyadic masses, exactly balanced, so that every flow update is exact.
        total = float(a.sum())
        q = 50 - int(math.ceil(math.log2(total)))
        scale = 2.0**q
        si = np.round(supply * scale)
        si[np.argmax(np.abs(si))] -= si.sum()
        Bi = np.ceil(B * scale)
        a = (np.maximum(si, 0) + Bi) / scale
        bb = (np.maximum(-si, 0) + Bi) / scale
        G, log = _emd_checked(a, bb, M, what)
    G = sp.coo_matrix(G)
    gr, gc, gv = np.asarray(G.row, np.int64), np.asarray(G.col, np.int64), np.asarray(G.data, float)
    real = gr != gc
    gr, gc, gv = gr[real], gc[real], gv[real]
    # flows on the real arcs, matched by key (arcs are distinct)
    akey = src.astype(np.int64) * N + dst
    order = np.argsort(akey, kind="stable")
    pos_in = np.searchsorted(akey[order], gr * N + gc)
    pos_in = np.minimum(pos_in, akey.size - 1)
    f_arcs = np.zeros(src.size)
    hit = akey[order][pos_in] == gr * N + gc
    np.add.at(f_arcs, order[pos_in[hit]], gv[hit])
    value = float(np.dot(f_arcs, cost))
    net = np.bincount(src, weights=f_arcs, minlength=N) - np.bincount(dst, weights=f_arcs, minlength=N)
    err = float(np.abs(net - supply).sum()) + float(np.abs(gv[~hit]).sum()) + float(-min(0.0, f_arcs.min(initial=0.0)))
    return value, f_arcs, np.asarray(log["u"], float), np.asarray(log["v"], float), err


def _default_grid(d: int, n: int, m: int) -> int:
    """Cells per axis for the grid method: the largest k with k^d (3^d) <= 6e5 arcs, capped at 256
    (256^2 in 2-D, 28^3 in 3-D, 9^4, 4^5, ...), at least 2. Public sizes only (n, m of the inputs)."""
    k = 256 if d <= 2 else max(2, int((6e5 / 3**d) ** (1.0 / d)))
    if d == 1:
        k = 4096
    return max(2, k)


def _bin(U: np.ndarray, w: np.ndarray, k: int) -> np.ndarray:
    from .grid import cell_of

    return np.bincount(cell_of(U, k), weights=w, minlength=k ** U.shape[1])


def _grid_w1_hist(a: np.ndarray, b: np.ndarray, k: int, d: int, metric: str) -> tuple[float, dict]:
    """Exact W1 between two histograms on the k^d grid (cell centres), via the grid-graph flow."""
    src, dst = _grid_arcs(k, d, metric)
    cost = np.full(src.size, 1.0 / k)
    value, flows, _ = _transshipment_pot(a - b, src, dst, cost, "wasserstein1(method='grid')")
    return value, {"arcs": int(src.size), "cells": int(k**d)}


# ------------------------------------------------------------------------------------ sparse W1
class _VTree:
    """A balanced kd-tree over Y stored level by level (vectorised build and search), each node with
    its bounding box and the maximum potential v of its points. Used to find all pairs with
    u_i + v_j - c(x_i, y_j) > thr without forming the n x m pairs (branch and bound)."""

    def __init__(self, Y: np.ndarray, v: np.ndarray, leaf: int = 16):
        m, d = Y.shape
        L = max(0, int(math.ceil(math.log2(max(1, m) / leaf))))
        size = leaf * 2**L
        perm = np.concatenate([np.arange(m), np.full(size - m, -1)])
        # padding entries copy an existing point and get v = -inf, so they never violate
        self.L, self.leaf, self.d = L, leaf, d
        for lev in range(L):
            nodes = 2**lev
            P = perm.reshape(nodes, -1)
            Pc = np.where(P < 0, P.max(axis=1, keepdims=True).clip(0), P)
            pts = Y[Pc]  # (nodes, seg, d)
            span = pts.max(axis=1) - pts.min(axis=1)
            ax = span.argmax(axis=1)
            key = np.take_along_axis(pts, ax[:, None, None], axis=2)[:, :, 0]
            key = np.where(P < 0, np.inf, key)
            order = np.argsort(key, axis=1, kind="stable")
            perm = np.take_along_axis(P, order, axis=1).ravel()
        self.perm = perm
        valid = perm >= 0
        safe = np.where(valid, perm, 0)
        self.Yl = Y[safe].reshape(2**L, leaf, d)
        self.vl = np.where(valid, v[safe], -np.inf).reshape(2**L, leaf)
        self.idx = perm.reshape(2**L, leaf)
        # bounding boxes bottom-up (padding excluded)
        lo = np.where(valid[:, None], Y[safe], np.inf).reshape(2**L, leaf, d).min(axis=1)
        hi = np.where(valid[:, None], Y[safe], -np.inf).reshape(2**L, leaf, d).max(axis=1)
        vm = self.vl.max(axis=1)
        self.lo, self.hi, self.vmax = [lo], [hi], [vm]
        for _ in range(L):
            lo = np.minimum(lo[0::2], lo[1::2])
            hi = np.maximum(hi[0::2], hi[1::2])
            vm = np.maximum(vm[0::2], vm[1::2])
            self.lo.insert(0, lo)
            self.hi.insert(0, hi)
            self.vmax.insert(0, vm)
        self.metric = None
        self.Yflat = self.Yl.reshape(-1, d)
        self.vflat = self.vl.ravel()

    def _centre_bounds(self, metric: str) -> None:
        """Per node: its box centre z and g = max_j (v_j + c(y_j, z)) over its points, so that
        v_j - c(x, y_j) <= g - c(x, z) for every x (triangle inequality). Tighter than the box
        bound when the large potentials sit far from x inside the node."""
        if self.metric == metric:
            return
        self.metric = metric
        self.ctr, self.g = [], []
        for lev in range(self.L + 1):
            with np.errstate(invalid="ignore"):
                z = 0.5 * (self.lo[lev] + self.hi[lev])  # empty (padding-only) nodes: inf - inf
            z = np.where(np.isfinite(z), z, 0.0)
            nodes = 2**lev
            pts = self.Yflat.reshape(nodes, -1, self.d)
            D = np.abs(pts - z[:, None, :])
            if metric == "linf":
                c = D.max(axis=2)
            elif metric == "l1":
                c = D.sum(axis=2)
            else:
                c = np.sqrt((D * D).sum(axis=2))
            self.ctr.append(z)
            self.g.append((self.vflat.reshape(nodes, -1) + c).max(axis=1))

    @staticmethod
    def _boxdist(x: np.ndarray, lo: np.ndarray, hi: np.ndarray, metric: str) -> np.ndarray:
        g = np.maximum(np.maximum(lo - x, x - hi), 0.0)
        if metric == "linf":
            return g.max(axis=1)
        if metric == "l1":
            return g.sum(axis=1)
        return np.sqrt((g * g).sum(axis=1))

    def violations(self, X: np.ndarray, u: np.ndarray, metric: str, thr: float,
                   chunk: int = 4096, max_pairs: int = 4_000_000):
        """All (i, j, u_i + v_j - c_ij) with u_i + v_j - c_ij > thr. Bounds are pruned with a small
        safety margin so that rounding in the box bound cannot hide a violation."""
        out_i, out_j, out_g = [], [], []
        n = X.shape[0]
        ext = float(np.max(np.abs(self.Yflat))) + (float(np.max(np.abs(X))) if n else 0.0)
        vfin = self.vflat[np.isfinite(self.vflat)]
        margin = 1e-12 * (1.0 + (float(np.max(np.abs(u))) if n else 0.0) + float(np.max(np.abs(vfin), initial=0.0)) + ext)
        self._centre_bounds(metric)
        for s0 in range(0, n, chunk):
            q = np.arange(s0, min(n, s0 + chunk))
            node = np.zeros(q.size, dtype=np.int64)
            for lev in range(self.L + 1):
                xq = X[q]
                bound = u[q] + self.vmax[lev][node] - self._boxdist(xq, self.lo[lev][node], self.hi[lev][node], metric)
                if _CENTRE_BOUND:
                    bound = np.minimum(bound, u[q] + self.g[lev][node] - _rowdist(xq, self.ctr[lev][node], metric))
                keep = bound > thr - margin
                q, node = q[keep], node[keep]
                if lev < self.L:
                    q = np.repeat(q, 2)
                    node = (2 * np.repeat(node, 2) + np.tile([0, 1], node.size))
                if q.size > max_pairs * 4:
                    raise MemoryError("dual check frontier too large")
            # leaves: exact check, in slices to bound memory
            for s1 in range(0, q.size, max_pairs // self.leaf + 1):
                qq, nn = q[s1:s1 + max_pairs // self.leaf + 1], node[s1:s1 + max_pairs // self.leaf + 1]
                Yp = self.Yl[nn]  # (p, leaf, d)
                D = np.abs(Yp - X[qq][:, None, :])
                if metric == "linf":
                    c = D.max(axis=2)
                elif metric == "l1":
                    c = D.sum(axis=2)
                else:
                    c = np.sqrt((D * D).sum(axis=2))
                g = u[qq][:, None] + self.vl[nn] - c
                hit = g > thr
                if hit.any():
                    r, col = np.nonzero(hit)
                    out_i.append(qq[r])
                    out_j.append(self.idx[nn[r], col])
                    out_g.append(g[r, col])
        if out_i:
            return np.concatenate(out_i), np.concatenate(out_j), np.concatenate(out_g)
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0)


def check_dual_certificate(X: Any, Y: Any, a: Any, b: Any, u: Any, v: Any, metric: str = "linf") -> float:
    """Largest violation of the transport dual constraints over *all* pairs.

    .. math:: \\max\\Big(0, \\max_{i: a_i > 0,\\ j: b_j > 0} \\; u_i + v_j - c(x_i, y_j)\\Big)

    computed exactly without forming the n x m pairs (kd-tree branch and bound over Y, each node
    carrying max v). Zero means (u, v) is dual feasible, so :math:`a^\\top u + b^\\top v \\le W_1`.

    Parameters
    ----------
    X : array, shape (n, d);  Y : array, shape (m, d)
    a : array, shape (n,);  b : array, shape (m,)
        Non-negative weights (only their supports matter).
    u : array, shape (n,);  v : array, shape (m,)
        Candidate dual potentials (POT's convention).
    metric : {"linf", "l1", "l2"}

    Returns
    -------
    float
        The maximum violation (0.0 when dual feasible).
    """
    owner = "check_dual_certificate"
    metric = check_choice(metric, "metric", owner, METRICS)
    X = check_points(X, "X", owner)
    Y = check_points(Y, "Y", owner, d=X.shape[1])
    a = _check_weights(a, X.shape[0], "a", owner)
    b = _check_weights(b, Y.shape[0], "b", owner)
    u = np.asarray(u, dtype=float).ravel()
    v = np.asarray(v, dtype=float).ravel()
    if u.shape[0] != X.shape[0]:
        raise param_error(owner, "u", f"an array of length {X.shape[0]}", u)
    if v.shape[0] != Y.shape[0]:
        raise param_error(owner, "v", f"an array of length {Y.shape[0]}", v)
    if not (np.isfinite(u).all() and np.isfinite(v).all()):
        raise ValueError("The 'u' and 'v' parameters of check_dual_certificate must be finite.")
    ia, jb = a > 0, b > 0
    return _max_violation(X[ia], Y[jb], u[ia], v[jb], metric)


def _max_violation(X, Y, u, v, metric) -> float:
    tree = _VTree(Y, v)
    i, j, g = tree.violations(X, u, metric, 0.0)
    return float(max(0.0, g.max())) if g.size else 0.0


def _morton_order(U: np.ndarray, bits: int = 10) -> np.ndarray:
    lo = U.min(axis=0)
    span = np.maximum(U.max(axis=0) - lo, 1e-300)
    q = np.clip(((U - lo) / span * (2**bits - 1)).astype(np.int64), 0, 2**bits - 1)
    code = np.zeros(U.shape[0], dtype=np.int64)
    d = U.shape[1]
    for bit in range(bits - 1, -1, -1):
        for a in range(d):
            code = (code << 1) | ((q[:, a] >> bit) & 1)
    return np.argsort(code, kind="stable")


def _nw_corner(a: np.ndarray, b: np.ndarray, oa: np.ndarray, ob: np.ndarray):
    """Arcs of the north-west-corner plan along the orders oa, ob: a feasible plan (n+m-1 arcs)."""
    ca = np.cumsum(a[oa])
    cb = np.cumsum(b[ob])
    ca[-1] = cb[-1] = 1.0
    brk = np.unique(np.concatenate([[0.0], ca, cb]))
    mid = 0.5 * (brk[:-1] + brk[1:])
    i = np.minimum(np.searchsorted(ca, mid, side="right"), a.size - 1)
    j = np.minimum(np.searchsorted(cb, mid, side="right"), b.size - 1)
    return oa[i], ob[j]


def _top_per_row(vi, vj, vg, k):
    o = np.lexsort((-vg, vi))
    vi, vj = vi[o], vj[o]
    first = np.r_[0, np.flatnonzero(np.diff(vi)) + 1]
    rank = np.arange(vi.size) - np.repeat(first, np.diff(np.r_[first, vi.size]))
    sel = rank < k
    return vi[sel], vj[sel]


def _sparse_w1(X: np.ndarray, Y: np.ndarray, a: np.ndarray, b: np.ndarray, metric: str, *,
               k: int = 12, max_rounds: int = 60, add_per_row: int = 2, add_per_col: int = 2) -> tuple[float, dict]:
    """Certified exact W1 by column generation on the transshipment (Kantorovich-Rubinstein) form.

    Because the ground cost is a metric, W1 is also the min-cost flow on the complete graph over
    :math:`Z = X \\cup Y` with supplies :math:`a` on X and demands :math:`b` on Y (mass may pass
    through intermediate points; by the triangle inequality this never helps, so the optima agree).
    On a sparse graph the flow value is an upper bound, and its node potential f is 1-Lipschitz
    along the graph's arcs; mass travels along chains of short arcs, so a few short arcs per point
    carry most of the optimal flow -- unlike the bipartite form, whose optimal arcs are long.

    1. Graph: the ``k`` nearest neighbours of every point of Z (both directions) and the
       north-west-corner plan along a Morton order (X -> Y arcs: a feasible plan, so the restricted
       problem is always feasible even on disconnected clusters).
    2. Solve the restricted transshipment exactly (POT's network simplex, Orden's reduction with
       slack 2, so that the potentials satisfy U_k + V_k = 0 at every node), read
       :math:`u_i = U_{x_i}`, :math:`v_j = V_{y_j}`.
    3. Check :math:`u_i + v_j \\le c(x_i, y_j)` over *all* pairs X x Y without forming them (kd-tree
       branch and bound); add the direct arcs x_i -> y_j of the ``add_per_row`` most violated pairs
       of each row and ``add_per_col`` of each column; go to 2. While violations are large only
       those above a quarter of the largest (estimated on a subsample of rows) are listed; the
       stopping test uses the full threshold: half of what the certificate tolerates
       (1e-9 W1 + 1e-12 diam minus the current duality gap), at least 2e-10 W1.
    4. Certificate: W1 lies in [a.u + b.v - max violation, primal cost + repair] (shifting u by the
       exact max violation over all pairs gives a feasible dual; the flow decomposes into a plan of
       no larger cost). Certified when the interval is narrower than 1e-9 W1 + 1e-12 diam (the
       acceptance tolerance of issue 10; POT's potentials carry ~1e-10 relative rounding at 10^4).

    Returns (primal value, details); every round records its solve and check seconds and the arcs added.
    """
    from scipy.spatial import cKDTree

    ia, jb = np.flatnonzero(a > 0), np.flatnonzero(b > 0)
    X, Y, a, b = X[ia], Y[jb], a[ia], b[jb]
    n, m = X.shape[0], Y.shape[0]
    N = n + m
    p = {"linf": np.inf, "l1": 1, "l2": 2}[metric]
    t0 = time.perf_counter()
    Z = np.concatenate([X, Y])
    supply = np.concatenate([a, -b])
    K = min(k, N - 1)
    parts_s, parts_t = [], []
    if K > 0:
        _, nn = cKDTree(Z).query(Z, k=K + 1, p=p, workers=-1)
        nn = np.asarray(nn).reshape(N, K + 1)
        ks = np.repeat(np.arange(N), K + 1)
        kt = nn.ravel()
        parts_s += [ks, kt]
        parts_t += [kt, ks]
    order = _morton_order(Z)
    nw_i, nw_j = _nw_corner(a, b, order[order < n], order[order >= n] - n)
    parts_s.append(nw_i)
    parts_t.append(nw_j + n)
    S, T = np.concatenate(parts_s).astype(np.int64), np.concatenate(parts_t).astype(np.int64)
    keep = S != T
    key = np.unique(S[keep] * N + T[keep])
    t_cand = time.perf_counter() - t0
    history = []
    diam = float(_rowdist(np.maximum(X.max(0), Y.max(0))[None], np.minimum(X.min(0), Y.min(0))[None], metric)[0])
    scale = max(diam, 1e-300)
    sample = np.arange(0, n, max(1, n // 2000))
    done = False
    for rnd in range(1, max_rounds + 1):
        tr0 = time.perf_counter()
        src, dst = key // N, key % N
        cost = _rowdist(Z[src], Z[dst], metric)
        ts = time.perf_counter()
        primal, flows, U, V, flow_err = _transshipment(supply, src, dst, cost, "wasserstein1(method='sparse')",
                                                       slack=2.0)
        t_solve = time.perf_counter() - ts
        u, v = U[:n], V[n:]
        tc = time.perf_counter()
        # violations below this budget cannot prevent certification: the final interval is
        # [a.u + b.v - max violation, primal], accepted when narrower than gap_tol (1e-9 W1 + 1e-12 diam).
        # POT's potentials carry ~1e-10 relative rounding at 10^4 points: a tighter stop only chases noise.
        gap_tol = 1e-9 * abs(primal) + 1e-12 * scale
        base = max(2e-10 * primal + 1e-13 * scale,
                   0.5 * (gap_tol - max(0.0, primal - float(np.dot(a, u) + np.dot(b, v)))))
        tree = _VTree(Y, v)
        # estimate the largest violation on a subsample of rows, list only the big ones while they last
        _, _, sg = tree.violations(X[sample], u[sample], metric, base)
        thr = max(base, 0.25 * float(sg.max())) if sg.size else base
        vi, vj, vg = tree.violations(X, u, metric, thr)
        if vi.size == 0 and thr > base:
            thr = base
            vi, vj, vg = tree.violations(X, u, metric, thr)
        t_check = time.perf_counter() - tc
        rec = {"round": rnd, "arcs": int(key.size), "primal": primal, "solve_s": t_solve, "check_s": t_check,
               "threshold": thr, "violations": int(vi.size), "max_violation": float(vg.max()) if vg.size else 0.0}
        if vi.size == 0:
            done = True
            rec["added"] = 0
            rec["round_s"] = time.perf_counter() - tr0
            history.append(rec)
            break
        ni, nj = _top_per_row(vi, vj, vg, add_per_row)
        cj, ci = _top_per_row(vj, vi, vg, add_per_col)
        new = np.unique(np.concatenate([ni.astype(np.int64) * N + n + nj, ci.astype(np.int64) * N + n + cj]))
        before = key.size
        key = np.union1d(key, new)
        rec["added"] = int(key.size - before)
        rec["round_s"] = time.perf_counter() - tr0
        history.append(rec)
    dual = float(np.dot(a, u) + np.dot(b, v))
    tf = time.perf_counter()
    # exact maximum violation over all pairs (threshold 0), for the rigorous lower bound
    viol = _max_violation(X, Y, u, v, metric) if done else history[-1]["max_violation"]
    t_final = time.perf_counter() - tf
    lower = dual - viol  # (u - viol, v) is dual feasible and sum(a) = 1
    # the flow decomposes into a transport plan of no larger cost; a conservation error e is repaired
    # by moving mass e at most diam
    upper = primal + diam * flow_err
    gap_tol = 1e-9 * abs(primal) + 1e-12 * scale
    certified = bool(done and flow_err < 1e-9 and upper - lower <= gap_tol)
    details = {"formulation": "transshipment on kNN graph + column generation", "candidate_seconds": t_cand,
               "k": k, "rounds": history, "final_check_seconds": t_final, "primal": primal, "dual": dual,
               "duality_gap": primal - dual, "max_dual_violation": viol, "marginal_error": flow_err,
               "lower": max(0.0, lower), "upper": upper, "certified": certified, "n_support": n, "m_support": m}
    return primal, details


def _heap_tree(Y: np.ndarray):
    """The kd-tree of :class:`_VTree` laid out as a heap (node h has children 2h+1, 2h+2)."""
    t = _VTree(Y, np.zeros(Y.shape[0]))
    lo = np.ascontiguousarray(np.concatenate(t.lo))
    hi = np.ascontiguousarray(np.concatenate(t.hi))
    return lo, hi, np.ascontiguousarray(t.Yl), np.ascontiguousarray(t.idx.astype(np.int64)), t.L


def _assignment_applies(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal sizes and uniform weights: the assignment case of :func:`_assignment_w1`."""
    return bool(a.size == b.size and a.size >= 2 and np.all(a == a[0]) and np.all(b == b[0]))


def _assignment_w1(X: np.ndarray, Y: np.ndarray, metric: str, *, rtol: float = 1e-9, theta: float = 4.0,
                   cache: int = 8, max_bids: int | None = None) -> tuple[float, dict]:
    """Certified exact W1 between two clouds of n points each with uniform weights.

    With uniform weights and n = m the transport polytope's vertices are permutation matrices
    (Birkhoff), so W1 is the optimal assignment cost divided by n. Solved by Bertsekas' forward
    auction with epsilon-scaling on the *complete* bipartite graph, never formed: every bid finds its
    best and second-best object by exact branch and bound over a kd-tree of Y whose nodes carry the
    minimum price below them (``_assign.auction_full``). Prices are kept between phases; eps is divided
    by ``theta`` per phase down to rtol/4 of the assignment cost (+ 2.5e-13 diam).

    Certificate (checked, not assumed): primal P = (1/n) sum_i c(x_i, y_sigma(i)) for the permutation
    sigma (feasible); dual D = (1/n) sum_i (f_i - margin) - (1/n) sum_j p_j with f_i = min_j c(x_i, y_j) +
    p_j, the exact c-transform over *all* j recomputed by a separate branch and bound
    (``_assign.c_knn``, tau = 0), so (f - margin, -p) is dual feasible over every pair; ``margin``
    (1e-15 of the magnitudes) covers floating-point rounding of the distances. Certified when
    P - D <= rtol P + 1e-12 diam; eps-complementary slackness makes the gap at most eps.
    """
    from . import _assign as A

    t0 = time.perf_counter()
    n = X.shape[0]
    code = {"linf": A.LINF, "l1": A.L1, "l2": A.L2}[metric]
    X = np.ascontiguousarray(X, dtype=float)
    Y = np.ascontiguousarray(Y, dtype=float)
    lo, hi, Yl, idxl, L = _heap_tree(Y)
    leaf_of = np.empty(n, dtype=np.int64)
    valid = idxl >= 0
    leaf_of[idxl[valid]] = np.nonzero(valid)[0]
    t_setup = time.perf_counter() - t0
    diam = float(_rowdist(np.maximum(X.max(0), Y.max(0))[None], np.minimum(X.min(0), Y.min(0))[None], metric)[0])
    big = diam + 1.0
    if max_bids is None:
        max_bids = 10**10
    price = np.zeros(n)
    pm = A.node_pmin(price, idxl, L)
    po = np.full(n, -1, dtype=np.int64)
    op = np.full(n, -1, dtype=np.int64)

    def primal():
        return float(_rowdist(X, Y[po], metric).mean())

    def target(P):
        return 0.25 * (rtol * P + 1e-12 * diam)

    cache_j = np.full((n, cache), -1, dtype=np.int64)
    cache_c = np.full((n, cache), np.inf)
    cache_lb = np.full(n, -np.inf)
    visits_mean = float("nan")

    def certificate_dual():
        nonlocal visits_mean
        vals, _, visits = A.c_knn(X, 1, 0.0, code, lo, hi, A.node_pmin(price, idxl, L), Yl, idxl, price)
        margin = 1e-15 * (diam + float(np.abs(price).max(initial=0.0)) + float(np.abs(X).max()) + 1.0)
        visits_mean = float(visits.mean())
        return float(np.mean(vals[:, 0] - margin) - np.mean(price))

    phases = []
    done = False
    eps = max(diam / 4.0, 1e-300)
    ta = time.perf_counter()
    while True:
        tp = time.perf_counter()
        po[:] = -1
        op[:] = -1
        bids, searches = A.auction_full(X, code, lo, hi, pm, Yl, idxl, leaf_of, price, po, op, eps, big, max_bids,
                                        cache_j, cache_c, cache_lb)
        if bids < 0:
            break
        P = primal()
        phase = {"eps": eps, "bids": int(bids), "searches": int(searches), "primal": P}
        phases.append(phase)
        if eps <= 64 * target(P):
            # the duality gap is at most eps; near the target, test the certificate after every phase
            # (one exact c-transform) and stop as soon as it holds
            phase["dual"] = D = certificate_dual()
            done = P - D <= rtol * P + 1e-12 * diam or eps <= target(P)
        phase["seconds"] = time.perf_counter() - tp
        if done:
            break
        eps = max(eps / theta, target(P))
    t_auction = time.perf_counter() - ta
    tc = time.perf_counter()
    P = primal() if done else math.inf
    D = certificate_dual() if done else -math.inf
    t_check = time.perf_counter() - tc
    certified = bool(done and P - D <= rtol * P + 1e-12 * diam)
    details = {"formulation": "assignment (n = m, uniform weights): auction with eps-scaling on the implicit complete "
                              "graph (kd-tree bids) + exact c-transform certificate",
               "setup_seconds": t_setup, "auction_seconds": t_auction, "check_seconds": t_check,
               "phases": phases, "bids": int(sum(p["bids"] for p in phases)),
               "searches": int(sum(p["searches"] for p in phases)),
               "check_mean_nodes_visited": visits_mean, "primal": P, "dual": D, "duality_gap": P - D,
               "final_eps": eps, "certified": certified, "lower": max(0.0, D) if done else 0.0, "upper": P,
               "n_support": n, "m_support": n}
    return P, details


# ------------------------------------------------------------------------------------ W1
def wasserstein1(X: Any, Y: Any, *, domain: Any = None, metric: str = "linf", method: str = "auto",
                 weights_x: Any = None, weights_y: Any = None, grid: int | None = None,
                 return_result: bool = False, n_projections: int = 256, rng: Any = None):
    """Wasserstein-1 distance between two weighted point sets.

    .. math:: W_1(\\mu, \\nu) = \\min_{\\gamma \\ge 0,\\ \\gamma 1 = a,\\ \\gamma^\\top 1 = b}
              \\sum_{i,j} \\gamma_{ij} \\, \\|x_i - y_j\\|

    Parameters
    ----------
    X : array or DataFrame, shape (n, d), n >= 1
    Y : array or DataFrame, shape (m, d), m >= 1, same d
    domain : Domain, optional
        When given both sets are mapped with ``domain.to_unit`` (clamped into the box) and W1 is in
        unit-cube units; otherwise coordinates are used as they are.
    metric : {"linf", "l1", "l2"}, default "linf"
    method : {"auto", "exact_1d", "pot", "grid", "sparse", "sliced"}, default "auto"
        See the module docstring. "exact_1d" needs d = 1; "pot" needs n*m <= 2.5e7; "grid" needs
        points in [0,1]^d (pass ``domain`` otherwise) and metric l_inf or l1; "sliced" is an
        approximation (``exact=False``).
    weights_x : array, shape (n,), optional;  weights_y : array, shape (m,), optional
        Non-negative, finite, positive sum; normalised to probability vectors. Default uniform.
    grid : int in [2, 4096], optional
        Cells per axis of the "grid" method (default 256 in 2-D, 28 in 3-D, see ``_default_grid``).
    return_result : bool, default False
        Return a :class:`W1Result` instead of a float.
    n_projections : int in [1, 10^5], default 256
        Directions of the "sliced" method.
    rng : Generator, int or None
        Randomness of the "sliced" directions only.

    Returns
    -------
    float or W1Result

    Notes
    -----
    MATH_NOTES "Exact W1 at scale"; seed 000 eq. (1.1) for the duality used by the certificates.
    """
    t0 = time.perf_counter()
    metric = check_choice(metric, "metric", _OWNER, METRICS)
    method = check_choice(method, "method", _OWNER, W1_METHODS)
    return_result = check_bool(return_result, "return_result", _OWNER)
    if domain is not None:
        from .domain import Domain

        if not isinstance(domain, Domain):
            raise param_error(_OWNER, "domain", "a Domain or None", domain, kind=TypeError)
        X = domain.to_unit(check_points(X, "X", _OWNER, d=domain.d, columns=domain._cols(X)), owner=_OWNER)
        Y = domain.to_unit(check_points(Y, "Y", _OWNER, d=domain.d, columns=domain._cols(Y)), owner=_OWNER)
    else:
        X = check_points(X, "X", _OWNER)
        Y = check_points(Y, "Y", _OWNER, d=X.shape[1])
    n, d = X.shape
    m = Y.shape[0]
    a = _check_weights(weights_x, n, "weights_x")
    b = _check_weights(weights_y, m, "weights_y")
    if grid is not None:
        grid = check_int(grid, "grid", _OWNER, low=2, high=4096)
    n_projections = check_int(n_projections, "n_projections", _OWNER, low=1, high=100_000)

    chosen = method
    if method == "auto":
        # measured (benchmarks/bench_transport.py, exact_w1.json): dense POT beats the certified sparse
        # method at every size it accepts (sparse/pot 1.3-2.4 at n = m = 3000-10^4 on the assignment path,
        # 4-9 on the general path), so auto uses it up to its limit; above it, the grid interval (l_inf,
        # l1, about a second) or the certified sparse method (l2, no exact grid graph; ~40 s at n = m = 10^4).
        if d == 1:
            chosen = "exact_1d"
        elif n * m <= POT_MAX_PAIRS:
            chosen = "pot"
        elif metric == "l2":
            if n + m > AUTO_SPARSE_MAX_POINTS:
                raise ValueError(
                    f"The 'method' parameter of wasserstein1 must name an approximation for l2 at this size: "
                    f"exact l2 W1 is available up to n*m = {POT_MAX_PAIRS:.3g} (pot) or n+m = "
                    f"{AUTO_SPARSE_MAX_POINTS} (sparse, about a minute). Got 'auto' with n={n}, m={m}; use "
                    f"metric='linf' or 'l1' (grid interval) or method='sliced'."
                )
            chosen = "sparse"
        else:
            chosen = "grid"
            if grid is None:
                grid = _AUTO_GRID.get(d, _default_grid(d, n, m))

    res = _dispatch(chosen, X, Y, a, b, metric, grid, n_projections, rng)
    if method == "auto" and chosen == "sparse" and not res.certified and metric != "l2":
        res = _dispatch("grid", X, Y, a, b, metric, grid, n_projections, rng)
    res = W1Result(res.value, res.lower, res.upper, res.method, res.exact, res.certified, res.iterations,
                   time.perf_counter() - t0, {**res.details, "requested_method": method})
    return res if return_result else float(res.value)


def _dispatch(method, X, Y, a, b, metric, grid, n_projections, rng) -> W1Result:
    n, d = X.shape
    m = Y.shape[0]
    t0 = time.perf_counter()
    if method == "exact_1d":
        if d != 1:
            raise ValueError(f"The 'method' parameter of {_OWNER} is 'exact_1d', which needs d = 1. Got d = {d}.")
        v = w1_1d(X[:, 0], Y[:, 0], a, b)
        return W1Result(v, v, v, "exact_1d", True, True, 1, time.perf_counter() - t0, {})
    if method == "pot":
        if n * m > POT_MAX_PAIRS:
            raise ValueError(
                f"The 'method' parameter of {_OWNER} is 'pot', which is limited to n*m <= {POT_MAX_PAIRS} "
                f"(about 5000 x 5000). Got n*m = {n * m}. Use method='sparse' or 'grid'."
            )
        ia, jb = a > 0, b > 0
        Xs, Ys, aa, bb = X[ia], Y[jb], a[ia], b[jb]
        M = _pairwise(Xs, Ys, metric)
        G, log = _emd_checked(aa, bb, M, "wasserstein1(method='pot')")
        value = float(np.sum(G * M))
        u, v = np.asarray(log["u"]), np.asarray(log["v"])
        viol = float(max(0.0, np.max(u[:, None] + v[None, :] - M)))
        dual = float(aa @ u + bb @ v)
        scale = float(M.max(initial=0.0))
        # POT's potentials carry ~1e-10 relative rounding at a few thousand points; a dual violation of
        # viol proves W1 >= dual - viol, so certify when that interval is below 1e-9 relative (the
        # acceptance tolerance of issue 10), as for the sparse method.
        gap = abs(value - dual) + viol
        certified = gap <= 1e-9 * max(value, 1e-3 * scale) + 1e-14 * scale
        return W1Result(value, value, value, "pot", True, bool(certified), 1, time.perf_counter() - t0,
                        {"dual": dual, "max_dual_violation": viol})
    if method == "grid":
        if metric == "l2":
            raise ValueError(
                f"The 'metric' parameter of {_OWNER} must be 'linf' or 'l1' with method='grid' (the grid "
                f"graph's path metric is not the l2 distance). Got 'l2'."
            )
        if X.min() < 0 or Y.min() < 0 or X.max() > 1 or Y.max() > 1:
            raise ValueError(
                f"The 'X' parameter of {_OWNER} must lie in the unit cube [0, 1]^d with method='grid' "
                f"(pass domain= to map the data). Got coordinates outside [0, 1]."
            )
        k = grid if grid is not None else _default_grid(d, n, m)
        if k**d > 2_000_000:
            if grid is None:
                raise ValueError(
                    f"The 'method' parameter of {_OWNER} must not be 'grid' in dimension {d}: even 2 cells per "
                    f"axis make {k}^{d} > 2e6 cells. Got 'grid'; use 'pot' (n*m <= {POT_MAX_PAIRS:.3g})."
                )
            raise ValueError(f"The 'grid' parameter of {_OWNER} must give at most 2e6 cells (grid^d). "
                             f"Got {k} in dimension {d}.")
        ha, hb = _bin(X, a, k), _bin(Y, b, k)
        v, det = _grid_w1_hist(ha, hb, k, d, metric)
        h = _cell_diam(k, d, metric)
        return W1Result(v, max(0.0, v - h), v + h, "grid", False, True, 1, time.perf_counter() - t0,
                        {**det, "grid": k, "h": h})
    if method == "sparse":
        if _assignment_applies(a, b):
            v, det = _assignment_w1(X, Y, metric)
        else:
            v, det = _sparse_w1(X, Y, a, b, metric)
        cert = det["certified"]
        lo, hi = (v, v) if cert else (det["lower"], det["upper"])
        rounds = det["phases"] if "phases" in det else det["rounds"]  # eps phases / column-generation rounds
        return W1Result(v, lo, hi, "sparse", cert, cert, len(rounds), time.perf_counter() - t0, det)
    if method == "sliced":
        v = sliced_w1(X, Y, a, b, n_projections=n_projections, rng=rng)
        lower = v / math.sqrt(d) if metric == "linf" else v
        return W1Result(v, lower, math.inf, "sliced", False, False, 1, time.perf_counter() - t0,
                        {"n_projections": n_projections,
                         "note": "approximation; lower bound of W1 (l2, l1), of sqrt(d) W1 (linf)"})
    raise AssertionError(method)  # pragma: no cover


# ------------------------------------------------------------------------------------ BL projection
def bl_projection(nu: Any, support: Any = None, *, grid_shape: Any = None, method: str = "sparse",
                  metric: str = "linf") -> BLProjectionResult:
    """The probability vector closest to a signed measure in bounded-Lipschitz distance.

    Seed 000, Algorithm 2 (Proposition 6, proof in A.4):

    .. math:: \\hat\\tau = \\arg\\min_{\\tau \\ge 0,\\ \\sum\\tau = 1} \\;
              \\sup_{\\|f\\|_{Lip} \\le 1} \\Big| \\sum_{i=1}^m f(y_i)(\\nu_i - \\tau_i) \\Big|,
              \\qquad \\|f\\|_{Lip} = \\max\\{Lip(f), \\|f\\|_\\infty / diam\\,\\Omega\\}

    on :math:`\\Omega = [0,1]^d` (diam 1 in l_inf, d in l1, sqrt(d) in l2).

    Parameters
    ----------
    nu : array, shape (m,)
        The signed measure (finite; entries may be negative; need not sum to 1).
    support : array, shape (m, d), optional
        Points y_i in [0,1]^d. Required by "dense" unless ``grid_shape`` is given (then the cell
        centres). With "sparse" it is optional and, if given, must be the grid's cell centres.
    grid_shape : tuple of ints (k, ..., k), optional
        A regular grid with the same k >= 1 on every axis, d in [1, 6]; nu is in the row-major cell
        order of :func:`dpsynth_core.grid.cell_centres`. Required by "sparse".
    method : {"sparse", "dense"}, default "sparse"
        "dense": the Algorithm 2 LP with 2 m(m-1) + 2m variables (HiGHS), m <= 400, any support.
        "sparse": the same optimum on a grid as a min-cost flow on the grid graph (king's moves for
        l_inf, axis moves for l1: their path metrics are the metric between centres) plus a ground
        node with arcs of cost diam to every cell (the bound |f| <= diam) and arcs of cost 0 from
        every cell to a sink of demand 1 whose flows are tau (MATH_NOTES, PSMM). Solved exactly
        with POT's network simplex; O(m 3^d) arcs.
    metric : {"linf", "l1", "l2"}, default "linf"
        "sparse" accepts "linf" and "l1" only.

    Returns
    -------
    BLProjectionResult
        ``tau`` (clipped at 0, renormalised), ``value`` = :math:`d_{BL}(\\nu, \\hat\\tau)`.

    Notes
    -----
    The LP printed in Algorithm 2 writes the constraint of cell i as
    :math:`\\sum_j (u_{ij} - u'_{ij}) + v_i + \\tau_i \\ge \\nu_i`; the dual of the primal in the proof
    of Proposition 6 (A.4) also has the transposed terms :math:`\\sum_j (u'_{ji} - u_{ji})` (the
    multipliers of the constraints where i is the second index). Without them the LP no longer
    encodes the Lipschitz constraint; we implement the dual as derived in A.4. Its optimum is
    :math:`d_{BL} + (\\nu(\\Omega) - 1)` (the change of variables f' = f + 1); we report d_BL.
    """
    t0 = time.perf_counter()
    method = check_choice(method, "method", _BL_OWNER, ("sparse", "dense"))
    metric = check_choice(metric, "metric", _BL_OWNER, METRICS)
    if isinstance(nu, (str, bytes)) or nu is None:
        raise param_error(_BL_OWNER, "nu", "a 1-D array of finite floats", nu, kind=TypeError)
    nu_arr = np.asarray(nu)
    if nu_arr.dtype == object or not np.issubdtype(nu_arr.dtype, np.number) or np.iscomplexobj(nu_arr):
        raise param_error(_BL_OWNER, "nu", "a 1-D array of finite floats", nu_arr, kind=TypeError)
    nu_arr = nu_arr.astype(np.float64)
    if nu_arr.ndim != 1 or nu_arr.size < 1:
        raise param_error(_BL_OWNER, "nu", "a non-empty 1-D array", nu_arr)
    if not np.isfinite(nu_arr).all():
        raise param_error(_BL_OWNER, "nu", "a 1-D array of finite floats", nu_arr)
    m = nu_arr.size
    shape = None
    if grid_shape is not None:
        if isinstance(grid_shape, (str, bytes)) or not hasattr(grid_shape, "__len__"):
            raise param_error(_BL_OWNER, "grid_shape", "a tuple (k, ..., k) of ints", grid_shape, kind=TypeError)
        shape = tuple(check_int(s, "grid_shape", _BL_OWNER, low=1) for s in grid_shape)
        if not 1 <= len(shape) <= 6:
            raise param_error(_BL_OWNER, "grid_shape", "a tuple of 1 to 6 ints", grid_shape)
        if len(set(shape)) != 1:
            raise param_error(_BL_OWNER, "grid_shape", "a tuple (k, ..., k) with the same k on every axis "
                              "(king's moves are exact only on cubic cells)", grid_shape)
        if int(np.prod(shape)) != m:
            raise param_error(_BL_OWNER, "grid_shape", f"a grid with {m} cells (the length of nu)", grid_shape)
    sup = None
    if support is not None:
        sup = check_points(support, "support", _BL_OWNER)
        if sup.shape[0] != m:
            raise param_error(_BL_OWNER, "support", f"an array with {m} rows (one per entry of nu)", sup)
        if sup.min() < 0 or sup.max() > 1:
            raise param_error(_BL_OWNER, "support", "points in the unit cube [0, 1]^d", sup)
    if shape is not None:
        from .grid import cell_centres

        centres = cell_centres(shape[0], len(shape))
        if sup is None:
            sup = centres
        elif sup.shape != centres.shape or not np.allclose(sup, centres, atol=1e-12):
            raise param_error(_BL_OWNER, "support", "the grid's cell centres (row-major) when grid_shape is given", sup)

    if method == "dense":
        if sup is None:
            raise param_error(_BL_OWNER, "support", "an (m, d) array (or give grid_shape) with method='dense'",
                              None, kind=TypeError)
        if m > BL_DENSE_MAX_M:
            raise ValueError(
                f"The 'nu' parameter of {_BL_OWNER} must have at most {BL_DENSE_MAX_M} entries with "
                f"method='dense' (2 m^2 LP variables). Got m = {m}. Use method='sparse' with grid_shape."
            )
        tau, value, det = _bl_dense(nu_arr, sup, metric)
    else:
        if shape is None:
            raise param_error(_BL_OWNER, "grid_shape", "a tuple (k, ..., k) with method='sparse'", None,
                              kind=TypeError)
        if metric == "l2":
            raise ValueError(
                f"The 'metric' parameter of {_BL_OWNER} must be 'linf' or 'l1' with method='sparse' (the grid "
                f"graph's path metric is not l2). Got 'l2'. Use method='dense' for l2."
            )
        tau, value, det = _bl_sparse(nu_arr, shape, metric)
    tau = np.clip(tau, 0.0, None)
    tau = tau / tau.sum()
    return BLProjectionResult(tau, float(value), method, metric, time.perf_counter() - t0, det)


def _bl_dense(nu: np.ndarray, Y: np.ndarray, metric: str):
    """Seed 000 Algorithm 2 (as derived in A.4) with HiGHS: variables u_ij, u'_ij (i != j), v_i, tau_i."""
    from scipy.optimize import linprog

    m, d = Y.shape
    diam = _unit_diam(d, metric)
    C = _pairwise(Y, Y, metric)
    Ii, Jj = np.nonzero(~np.eye(m, dtype=bool))
    P = Ii.size
    # columns: u (P), u' (P), v (m), tau (m); rows: m cell constraints (>=), written as -(...) <= -nu
    cols_u = np.arange(P)
    cols_up = P + np.arange(P)
    cols_v = 2 * P + np.arange(m)
    cols_t = 2 * P + m + np.arange(m)
    # coefficient of f'_k: +u_kj - u_ik (i.e. u_ij enters row i with +1 and row j with -1); u' opposite.
    rows = np.concatenate([Ii, Jj, Ii, Jj, np.arange(m), np.arange(m)])
    cols = np.concatenate([cols_u, cols_u, cols_up, cols_up, cols_v, cols_t])
    vals = np.concatenate([np.ones(P), -np.ones(P), -np.ones(P), np.ones(P), np.ones(m), np.ones(m)])
    A = sp.csr_matrix((-vals, (rows, cols)), shape=(m, 2 * P + 2 * m))
    c = np.concatenate([C[Ii, Jj], C[Ii, Jj], 2.0 * diam * np.ones(m), np.zeros(m)])
    A_eq = sp.csr_matrix((np.ones(m), (np.zeros(m, int), cols_t)), shape=(1, 2 * P + 2 * m))
    res = linprog(c, A_ub=A, b_ub=-nu, A_eq=A_eq, b_eq=[1.0], bounds=(0, None), method="highs")
    if res.status != 0:
        raise RuntimeError(f"HiGHS failed on the dense BL projection LP: {res.message}")
    tau = res.x[cols_t]
    # the LP optimum is d_BL + (nu(Omega) - 1) * diam (f' = f + diam); report d_BL
    value = float(res.fun) - (float(nu.sum()) - 1.0) * diam
    det = {"solver": "scipy.optimize.linprog(method='highs')", "variables": int(c.size), "constraints": m + 1,
           "status": res.message, "lp_objective": float(res.fun)}
    return tau, value, det


def _bl_sparse(nu: np.ndarray, shape: tuple[int, ...], metric: str):
    """Grid-graph min-cost flow for the BL projection (MATH_NOTES, PSMM), exact via POT.

    Nodes: cells 0..m-1 (supply nu_i), ground g = m (supply 1 - sum nu), sink s = m+1 (demand 1).
    Arcs: grid moves (cost 1/k), i <-> g (cost diam), i -> s (cost 0, flow tau_i).
    """
    k, d = shape[0], len(shape)
    m = k**d
    diam = _unit_diam(d, metric)
    src, dst = _grid_arcs(k, d, metric)
    cells = np.arange(m)
    g, s = m, m + 1
    S = np.concatenate([src, cells, np.full(m, g), cells])
    T = np.concatenate([dst, np.full(m, g), cells, np.full(m, s)])
    cost = np.concatenate([np.full(src.size, 1.0 / k), np.full(2 * m, diam), np.zeros(m)])
    supply = np.concatenate([nu, [1.0 - nu.sum(), -1.0]])
    value, flows, _ = _transshipment_pot(supply, S, T, cost, "bl_projection(method='sparse')")
    tau = flows[-m:]
    det = {"solver": "POT network simplex (sparse transshipment)", "arcs": int(S.size), "nodes": m + 2}
    return tau, value, det


def sparse_utility_loss(X: Any, Y: Any, s: int, domain: Any = None, **kwargs: Any):
    """The utility loss of seed 002, Eq. (1): the largest W1 over all s-dimensional marginals.

    .. math:: \\mathcal U(\\mu_X, \\mu_Y) = \\max_{|S| = s} W_1(P^S_\\#\\mu_X, P^S_\\#\\mu_Y)

    Implemented beside the certified sparse-marginal mechanism; see
    :func:`dpsynth_core.mechanisms.sparse_marginals.sparse_utility_loss` for the parameters.
    """
    from .mechanisms.sparse_marginals import sparse_utility_loss as _impl

    return _impl(X, Y, s, domain, **kwargs)
