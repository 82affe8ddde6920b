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
from ..validation import check_choice, check_int, check_points, param_error
from ._common import METRICS, pairwise, unit_diam
from .flows import grid_arcs, transshipment_pot

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
                  metric: str = "linf") -> BLProjectionResult:
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
    method = check_choice(method, "method", _OWNER, ("sparse", "dense"))
    metric = check_choice(metric, "metric", _OWNER, METRICS)
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
    m = nu_arr.size
    shape = None
    if grid_shape is not None:
        if isinstance(grid_shape, (str, bytes)) or not hasattr(grid_shape, "__len__"):
            raise param_error(_OWNER, "grid_shape", "a tuple (k, ..., k) of ints", grid_shape, kind=TypeError)
        shape = tuple(check_int(s, "grid_shape", _OWNER, low=1) for s in grid_shape)
        if not 1 <= len(shape) <= 6:
            raise param_error(_OWNER, "grid_shape", "a tuple of 1 to 6 ints", grid_shape)
        if len(set(shape)) != 1:
            raise param_error(_OWNER, "grid_shape", "a tuple (k, ..., k) with the same k on every axis "
                              "(king's moves are exact only on cubic cells)", grid_shape)
        if int(np.prod(shape)) != m:
            raise param_error(_OWNER, "grid_shape", f"a grid with {m} cells (the length of nu)", grid_shape)
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

    if method == "dense":
        if sup is None:
            raise param_error(_OWNER, "support", "an (m, d) array (or give grid_shape) with method='dense'",
                              None, kind=TypeError)
        if m > BL_DENSE_MAX_M:
            raise ValueError(
                f"The 'nu' parameter of {_OWNER} must have at most {BL_DENSE_MAX_M} entries with "
                f"method='dense' (2 m^2 LP variables). Got m = {m}. Use method='sparse' with grid_shape."
            )
        tau, value, det = _bl_dense(nu_arr, sup, metric)
    else:
        if shape is None:
            raise param_error(_OWNER, "grid_shape", "a tuple (k, ..., k) with method='sparse'", None,
                              kind=TypeError)
        if metric == "l2":
            raise ValueError(
                f"The 'metric' parameter of {_OWNER} must be 'linf' or 'l1' with method='sparse' (the grid "
                f"graph's path metric is not l2). Got 'l2'. Use method='dense' for l2."
            )
        tau, value, det = _bl_sparse(nu_arr, shape, metric)
    tau = np.clip(tau, 0.0, None)
    tau = tau / tau.sum()
    return BLProjectionResult(tau, float(value), method, metric, time.perf_counter() - t0, det)


def _bl_dense(nu: np.ndarray, Y: np.ndarray, metric: str):
    """[HVZ23] Algorithm 2 (as derived in the proof of Proposition 6) with HiGHS: variables u_ij, u'_ij (i != j), v_i, tau_i."""
    from scipy.optimize import linprog

    m, d = Y.shape
    diam = unit_diam(d, metric)
    C = pairwise(Y, Y, metric)
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
