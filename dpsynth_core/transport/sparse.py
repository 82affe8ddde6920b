"""``wasserstein1(method="sparse")``: certified exact W1 between point clouds without the n x m pairs.

The solver is :mod:`.transshipment` (a min-cost transshipment on a k-nearest-neighbour graph, solved
by LEMON's network simplex, certified by the c-transform of its potentials over all pairs, with
column generation until the bracket closes). This module adapts it to :func:`wasserstein1` and
provides :func:`check_dual_certificate`, the all-pairs dual check, on the same kd-tree c-transform.
See docs/transport.md, "Exact W1 by sparse transshipment".
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from ..validation import check_choice, check_points, param_error
from ._common import METRICS, W1Result, check_weights
from .metrics import ground_metric
from .transshipment import DEFAULT_RTOL, transshipment_w1

__all__ = ["check_dual_certificate", "solve", "round_result"]


def check_dual_certificate(X: Any, Y: Any, a: Any, b: Any, u: Any, v: Any, metric: str = "linf") -> float:
    """Largest violation of the transport dual constraints over *all* pairs.

    .. math:: \\max\\Big(0, \\max_{i: a_i > 0,\\ j: b_j > 0} \\; u_i + v_j - c(x_i, y_j)\\Big)

    computed exactly without forming the n x m pairs: the c-transform
    :math:`\\psi_i = \\min_j c(x_i, y_j) - v_j` by kd-tree branch and bound, then
    :math:`\\max_i u_i - \\psi_i`. Zero means (u, v) is dual feasible, so
    :math:`a^\\top u + b^\\top v \\le W_1`.

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
    a = check_weights(a, X.shape[0], "a", owner)
    b = check_weights(b, Y.shape[0], "b", owner)
    u = np.asarray(u, dtype=float).ravel()
    v = np.asarray(v, dtype=float).ravel()
    if u.shape[0] != X.shape[0]:
        raise param_error(owner, "u", f"an array of length {X.shape[0]}", u)
    if v.shape[0] != Y.shape[0]:
        raise param_error(owner, "v", f"an array of length {Y.shape[0]}", v)
    if not (np.isfinite(u).all() and np.isfinite(v).all()):
        raise ValueError("The 'u' and 'v' parameters of check_dual_certificate must be finite.")
    ia, jb = a > 0, b > 0
    psi, _ = ground_metric(metric).prepare(X[ia], Y[jb]).rows(v[jb], 1)
    return float(max(0.0, float(np.max(u[ia] - psi[:, 0]))))


def solve(X: np.ndarray, Y: np.ndarray, a: np.ndarray, b: np.ndarray, metric: str, owner: str, *,
          max_seconds: float | None = None, target: float | None = None,
          rtol: float = DEFAULT_RTOL) -> W1Result:
    """``wasserstein1(method="sparse")``: exact and certified when the bracket closes; with
    ``max_seconds`` or ``target`` possibly stopped earlier with the certified bracket of the last round
    (``exact=False``)."""
    t0 = time.perf_counter()
    last, hist = transshipment_w1(X, Y, a, b, metric, max_seconds=max_seconds, target=target, rtol=rtol)
    return round_result(last, hist, time.perf_counter() - t0)


def round_result(last, hist: list, seconds: float) -> W1Result:
    """The :class:`W1Result` of a round of :func:`.transshipment.w1_rounds`: exact when its bracket
    closed (value = the flow's cost), otherwise the bracket with ``exact=False``. Either way the
    bracket is proven (``certified=True``): its ends are a feasible plan's cost and a feasible dual."""
    cert = last.certified
    value = last.upper
    lo, hi = (value, value) if cert else (last.lower, last.upper)
    det = {"formulation": "transshipment on a kNN graph (LEMON network simplex) + c-transform certificate",
           "rounds": hist, **last.details, "lower": last.lower, "upper": last.upper, "closed": cert,
           "rel_width": last.rel_width}
    return W1Result(value, lo, hi, "sparse", cert, True, len(hist), seconds, det)
