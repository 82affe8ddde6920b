"""The bounded-Lipschitz projection of a signed measure onto the probability vectors.

[HVZ23, Algorithm 2]: the probability vector closest to a signed measure in the bounded-Lipschitz
distance,

.. math:: \\hat\\tau = \\arg\\min_{\\tau \\in \\Delta_m} d_{BL}(\\nu, \\tau), \\qquad
          d_{BL}(\\nu, \\tau) = \\sup_{\\|f\\|_{Lip} \\le 1} \\Big|\\sum_i f(y_i)(\\nu_i - \\tau_i)\\Big|,

with the paper's Lipschitz norm :math:`\\|f\\|_{Lip} = \\max\\{Lip(f), \\|f\\|_\\infty / diam(\\Omega)\\}`
and :math:`\\Omega = [0,1]^d` (diam 1 in l_inf, d in l1, sqrt(d) in l2). The dense LP (HiGHS [HH18]) is
the reference; on a regular grid the same optimum is a sparse min-cost flow (docs/pmm-psmm.md).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp

from ..grid import cell_centres
from ..validation import check_choice, check_float, check_int, check_points, param_error
from ._common import METRICS, pairwise, unit_diam
from .flows import grid_arcs, transshipment_pot
from .mixed_cells import mixed_cell_costs, mixed_diam, mixed_grid_graph

__all__ = ["BLProjectionResult", "bl_projection", "BL_DENSE_MAX_M"]

#: Largest support of the dense Algorithm 2 LP (2 m^2 variables).
BL_DENSE_MAX_M = 400
_OWNER = "bl_projection"


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
        "dense" (the LP of [HVZ23, Algorithm 2] as derived in its proof; docs/deviations.md §4) or "sparse" (grid-graph min-cost flow).
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


def bl_projection(nu: Any, support: Any = None, *, grid_shape: Any = None, method: str = "sparse",
                  metric: str = "linf", categories: Any = None, weights: Any = None, cost: Any = None,
                  diam: Any = None) -> BLProjectionResult:
    """The probability vector closest to a signed measure in bounded-Lipschitz distance.

    [HVZ23, Algorithm 2 and Proposition 6]:

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
        every cell to a sink of demand 1 whose flows are tau (docs/pmm-psmm.md). Solved exactly
        with POT's network simplex; O(m 3^d) arcs.
    metric : {"linf", "l1", "l2"}, default "linf"
        "sparse" accepts "linf" and "l1" only.
    categories : sequence of ints >= 1, optional
        A *mixed* grid (docs/mixed-data.md): the number of categories of each categorical column. The
        cells are then every combination of categories (row-major, first column most significant) times
        the ``grid_shape`` numeric grid, nu in the order combination x k^d + numeric cell
        (:mod:`dpsynth_core.mixed_grid`), and the metric is the mixed metric
        :math:`\\max(\\|z_a - z_b\\|_\\infty, \\max_{j: c_j \\ne c'_j} w_j)` with diam :math:`\\max(1, \\max_j w_j)`.
        "dense" solves the LP on that metric. "sparse" solves it on the graph of
        :func:`dpsynth_core.transport.mixed_cells.mixed_grid_graph`, exact for the mixed metric when every
        weight is at least (k-1)/k (always with unit weights); with a lighter column its path metric is
        l_inf + W (between the mixed metric and twice it, diam 1 + max w) and the projection is exact for
        that metric: ``details["mixed_metric"]`` says which ("max" or "sum").
    weights : sequence of floats > 0, optional
        The category weights :math:`w_j` (default 1), with ``categories``.
    cost : array (m, m), optional
        "dense" only: the ground distances between the m support points (symmetric, zero diagonal,
        non-negative), in place of ``support`` and ``metric`` -- any finite metric space.
    diam : float > 0, optional
        The diameter of the space in the bound :math:`|f| \\le \\mathrm{diam}`, with ``cost`` (default: the
        largest entry of ``cost``).

    Returns
    -------
    BLProjectionResult
        ``tau`` (clipped at 0, renormalised), ``value`` = :math:`d_{BL}(\\nu, \\hat\\tau)`.

    Notes
    -----
    "dense" solves the dual derived in the proof of Proposition 6, not the LP as printed in Algorithm 2
    (:func:`_bl_dense`; docs/deviations.md §4).
    """
    t0 = time.perf_counter()
    method = check_choice(method, "method", _OWNER, ("sparse", "dense"))
    metric = check_choice(metric, "metric", _OWNER, METRICS)
    nu_arr = _check_nu(nu)
    if cost is not None or categories is not None:
        return _bl_other_metric(nu_arr, grid_shape, method, metric, categories, weights, cost, diam, support, t0)
    shape = None if grid_shape is None else _check_shape(grid_shape, nu_arr.size)
    sup = _check_support(support, nu_arr.size, shape)
    if method == "dense":
        tau, value, det = _dense(nu_arr, sup, metric)
    else:
        tau, value, det = _sparse(nu_arr, shape, metric)
    tau = np.clip(tau, 0.0, None)
    tau = tau / tau.sum()
    return BLProjectionResult(tau, float(value), method, metric, time.perf_counter() - t0, det)


def _check_support(support: Any, m: int, shape: tuple[int, ...] | None) -> np.ndarray | None:
    """The support points: ``support`` checked (m points in the unit cube; the grid's cell centres when a grid is
    given), or the cell centres of the grid, or None."""
    sup = None
    if support is not None:
        sup = check_points(support, "support", _OWNER)
        if sup.shape[0] != m:
            raise param_error(_OWNER, "support", f"an array with {m} rows (one per entry of nu)", sup)
        if sup.min() < 0 or sup.max() > 1:
            raise param_error(_OWNER, "support", "points in the unit cube [0, 1]^d", sup)
    if shape is not None:
        centres = cell_centres(shape[0], len(shape))
        if sup is None:
            sup = centres
        elif sup.shape != centres.shape or not np.allclose(sup, centres, atol=1e-12):
            raise param_error(_OWNER, "support", "the grid's cell centres (row-major) when grid_shape is given", sup)
    return sup


def _dense(nu: np.ndarray, sup: np.ndarray | None, metric: str) -> tuple[np.ndarray, float, dict]:
    """method='dense': the LP on the support's distances (at most :data:`BL_DENSE_MAX_M` points)."""
    if sup is None:
        raise param_error(_OWNER, "support", "an (m, d) array (or give grid_shape) with method='dense'",
                          None, kind=TypeError)
    if nu.size > BL_DENSE_MAX_M:
        raise ValueError(
            f"The 'nu' parameter of {_OWNER} must have at most {BL_DENSE_MAX_M} entries with "
            f"method='dense' (2 m^2 LP variables). Got m = {nu.size}. Use method='sparse' with grid_shape."
        )
    return _bl_dense(nu, pairwise(sup, sup, metric), unit_diam(sup.shape[1], metric))


def _sparse(nu: np.ndarray, shape: tuple[int, ...] | None, metric: str) -> tuple[np.ndarray, float, dict]:
    """method='sparse': the min-cost flow on the grid graph (l_inf or l1)."""
    if shape is None:
        raise param_error(_OWNER, "grid_shape", "a tuple (k, ..., k) with method='sparse'", None,
                          kind=TypeError)
    if metric == "l2":
        raise ValueError(
            f"The 'metric' parameter of {_OWNER} must be 'linf' or 'l1' with method='sparse' (the grid "
            f"graph's path metric is not l2). Got 'l2'. Use method='dense' for l2."
        )
    return _bl_sparse(nu, shape, metric)


def _check_nu(nu: Any) -> np.ndarray:
    if isinstance(nu, (str, bytes)) or nu is None:
        raise param_error(_OWNER, "nu", "a 1-D array of finite floats", nu, kind=TypeError)
    nu_arr = np.asarray(nu)
    if nu_arr.dtype == object or not np.issubdtype(nu_arr.dtype, np.number) or np.iscomplexobj(nu_arr):
        raise param_error(_OWNER, "nu", "a 1-D array of finite floats", nu_arr, kind=TypeError)
    nu_arr = nu_arr.astype(np.float64)
    if nu_arr.ndim != 1 or nu_arr.size < 1:
        raise param_error(_OWNER, "nu", "a non-empty 1-D array", nu_arr)
    if not np.isfinite(nu_arr).all():
        raise param_error(_OWNER, "nu", "a 1-D array of finite floats", nu_arr)
    return nu_arr


def _check_shape(grid_shape: Any, m: int, combinations: int = 1) -> tuple[int, ...]:
    if isinstance(grid_shape, (str, bytes)) or not hasattr(grid_shape, "__len__"):
        raise param_error(_OWNER, "grid_shape", "a tuple (k, ..., k) of ints", grid_shape, kind=TypeError)
    shape = tuple(check_int(s, "grid_shape", _OWNER, low=1) for s in grid_shape)
    if not 1 <= len(shape) <= 6:
        raise param_error(_OWNER, "grid_shape", "a tuple of 1 to 6 ints", grid_shape)
    if len(set(shape)) != 1:
        raise param_error(_OWNER, "grid_shape", "a tuple (k, ..., k) with the same k on every axis "
                          "(king's moves are exact only on cubic cells)", grid_shape)
    if combinations * int(np.prod(shape)) != m:
        what = f"{m} cells (the length of nu)" if combinations == 1 else \
            f"{m} / {combinations} cells per combination (the length of nu over the combinations)"
        raise param_error(_OWNER, "grid_shape", f"a grid with {what}", grid_shape)
    return shape


def _check_categories(categories: Any, weights: Any) -> tuple[tuple[int, ...], tuple[float, ...]]:
    what = "a non-empty sequence of category counts (ints >= 1), one per categorical column"
    if isinstance(categories, (str, bytes)) or not hasattr(categories, "__len__") or not len(categories):
        raise param_error(_OWNER, "categories", what, categories, kind=TypeError)
    sizes = tuple(check_int(c, "categories", _OWNER, low=1) for c in categories)
    if weights is None:
        return sizes, (1.0,) * len(sizes)
    if isinstance(weights, (str, bytes)) or not hasattr(weights, "__len__") or len(weights) != len(sizes):
        raise param_error(_OWNER, "weights", f"a sequence of {len(sizes)} positive floats (one per column)", weights)
    w = tuple(float(x) for x in weights)
    if not all(np.isfinite(x) and x > 0 for x in w):
        raise param_error(_OWNER, "weights", "positive finite floats", weights)
    return sizes, w


def _bl_other_metric(nu: np.ndarray, grid_shape: Any, method: str, metric: str, categories: Any, weights: Any,
                     cost: Any, diam: Any, support: Any, t0: float) -> BLProjectionResult:
    """The projection on a mixed grid (``categories``) or on a given cost matrix (``cost``, dense)."""
    m = nu.size
    if cost is not None:
        if method != "dense" or categories is not None or support is not None or grid_shape is not None:
            raise param_error(_OWNER, "cost", "given with method='dense' alone (no support, grid_shape or "
                              "categories)", "a cost matrix with other arguments")
        C = check_points(cost, "cost", _OWNER, d=m)
        if C.shape != (m, m) or (C < 0).any() or np.abs(C - C.T).max() > 1e-12 or np.abs(np.diag(C)).max() > 0:
            raise param_error(_OWNER, "cost", f"a symmetric ({m}, {m}) matrix of non-negative distances with a "
                              "zero diagonal", C)
        D = float(C.max()) if diam is None else check_float(diam, "diam", _OWNER, low=0.0, low_open=True)
        kind, label = "given", "given cost matrix"
    else:
        if metric != "linf":
            raise param_error(_OWNER, "metric", "'linf' with categories (the mixed metric combines l_inf with "
                              "the category weights)", metric)
        if grid_shape is None:
            raise param_error(_OWNER, "grid_shape", "a tuple (k, ..., k) (the numeric grid) with categories", None,
                              kind=TypeError)
        sizes, w = _check_categories(categories, weights)
        shape = _check_shape(grid_shape, m, int(np.prod(sizes, dtype=np.int64)))
        label = "mixed"
    if m > BL_DENSE_MAX_M and method == "dense":
        raise ValueError(
            f"The 'nu' parameter of {_OWNER} must have at most {BL_DENSE_MAX_M} entries with "
            f"method='dense' (2 m^2 LP variables). Got m = {m}. Use method='sparse' with grid_shape."
        )
    if cost is None and method == "dense":
        C, D, kind = mixed_cell_costs(shape[0], len(shape), sizes, w, "max"), mixed_diam(w, "max"), "max"
    if method == "dense":
        tau, value, det = _bl_dense(nu, C, D)
    else:
        g = mixed_grid_graph(shape[0], len(shape), sizes, w)
        tau, value, det = _bl_flow(nu, g.src, g.dst, g.cost, g.extra, g.diam)
        kind = g.kind
    det = {**det, "mixed_metric": kind} if label == "mixed" else det
    tau = np.clip(tau, 0.0, None)
    tau = tau / tau.sum()
    return BLProjectionResult(tau, float(value), method, label, time.perf_counter() - t0, det)


def _bl_dense(nu: np.ndarray, C: np.ndarray, diam: float):
    """[HVZ23] Algorithm 2 (as derived in the proof of Proposition 6) with HiGHS on the distance matrix C
    between the support points: variables u_ij, u'_ij (i != j), v_i, tau_i.

    The LP printed in Algorithm 2 writes the constraint of cell i as
    :math:`\\sum_j (u_{ij} - u'_{ij}) + v_i + \\tau_i \\ge \\nu_i`; the dual of the primal in the proof
    of Proposition 6 (A.4) also has the transposed terms :math:`\\sum_j (u'_{ji} - u_{ji})` (the
    multipliers of the constraints where i is the second index). Without them the LP no longer
    encodes the Lipschitz constraint; we implement the dual as derived in A.4. Its optimum is
    :math:`d_{BL} + (\\nu(\\Omega) - 1)` (the change of variables f' = f + 1); we report d_BL."""
    from scipy.optimize import linprog

    m = C.shape[0]
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
    """Grid-graph min-cost flow for the BL projection (docs/pmm-psmm.md), exact via POT.

    Nodes: cells 0..m-1 (supply nu_i), ground g = m (supply 1 - sum nu), sink s = m+1 (demand 1).
    Arcs: grid moves (cost 1/k), i <-> g (cost diam), i -> s (cost 0, flow tau_i).
    """
    k, d = shape[0], len(shape)
    m = k**d
    diam = unit_diam(d, metric)
    src, dst = grid_arcs(k, d, metric)
    cells = np.arange(m)
    g, s = m, m + 1
    S = np.concatenate([src, cells, np.full(m, g), cells])
    T = np.concatenate([dst, np.full(m, g), cells, np.full(m, s)])
    cost = np.concatenate([np.full(src.size, 1.0 / k), np.full(2 * m, diam), np.zeros(m)])
    supply = np.concatenate([nu, [1.0 - nu.sum(), -1.0]])
    value, flows, _ = transshipment_pot(supply, S, T, cost, "bl_projection(method='sparse')")
    tau = flows[-m:]
    det = {"solver": "POT network simplex (sparse transshipment)", "arcs": int(S.size), "nodes": m + 2}
    return tau, value, det


def _bl_flow(nu: np.ndarray, src: np.ndarray, dst: np.ndarray, arc_cost: np.ndarray, extra: int, diam: float):
    """The min-cost flow of :func:`_bl_sparse` on any graph whose path metric between the m cells is the
    metric: cells 0..m-1 (supply nu_i), ``extra`` transit nodes (supply 0), ground (supply 1 - sum nu,
    arcs of cost diam to and from every cell), sink (demand 1, arcs of cost 0 from every cell: tau)."""
    m = nu.size
    cells = np.arange(m)
    g, s = m + extra, m + extra + 1
    S = np.concatenate([src, cells, np.full(m, g), cells])
    T = np.concatenate([dst, np.full(m, g), cells, np.full(m, s)])
    cost = np.concatenate([arc_cost, np.full(2 * m, diam), np.zeros(m)])
    supply = np.concatenate([nu, np.zeros(extra), [1.0 - nu.sum(), -1.0]])
    value, flows, _ = transshipment_pot(supply, S, T, cost, "bl_projection(method='sparse', categories=...)")
    tau = flows[-m:]
    det = {"solver": "POT network simplex (sparse transshipment)", "arcs": int(S.size), "nodes": m + extra + 2}
    return tau, value, det
