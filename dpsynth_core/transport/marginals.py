"""W1 between s-dimensional marginals: the utility loss of a sparse-marginal release.

.. math:: \\mathcal U(\\mu_X, \\mu_Y) = \\max_{S \\subset [d],\\ |S| = s} W_1\\big(P^S_\\#\\mu_X, P^S_\\#\\mu_Y\\big)

[DLS+24, Eq. (1)]. Each marginal is an ordinary W1 problem (:func:`dpsynth_core.transport.wasserstein1`).
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from ..domain import Domain
from ..validation import check_bool, check_choice, check_int, check_points, param_error
from ._common import METRICS, check_weights

__all__ = ["marginal_subsets", "unique_weighted", "sparse_utility_loss"]


def marginal_subsets(d: int, s: int) -> list[tuple[int, ...]]:
    """All K = C(d, s) subsets of s coordinates, in lexicographic order.

    Parameters
    ----------
    d : int >= 1; s : int in [1, d]

    Returns
    -------
    list of K tuples of s increasing coordinate indices.
    """
    dd = check_int(d, "d", "marginal_subsets", low=1)
    ss = check_int(s, "s", "marginal_subsets", low=1, high=dd)
    return list(itertools.combinations(range(dd), ss))


def unique_weighted(P: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows of P with their summed weights (exact: W1 does not change)."""
    uniq, inv = np.unique(P, axis=0, return_inverse=True)
    return uniq, np.bincount(inv.ravel(), weights=w, minlength=uniq.shape[0])


def sparse_utility_loss(X: Any, Y: Any, s: int, domain: Domain | None = None, *, metric: str = "linf",
                        method: str = "auto", weights_x: Any = None, weights_y: Any = None,
                        return_details: bool = False, budget: str | None = None):
    """The largest W1 over all s-dimensional marginals: the utility loss of [DLS+24, Eq. (1)].

    .. math:: \\mathcal U(\\mu_X, \\mu_Y) = \\max_{S \\subset [d],\\ |S| = s} W_1\\big(P^S_\\#\\mu_X, P^S_\\#\\mu_Y\\big)

    Both measures are probability measures (uniform weights or the given ones, normalised); W1 uses
    the l_inf metric on ``[0,1]^s`` in unit-cube coordinates ([DLS+24], Theorem 1 and Appendix C: the
    s-sparse 1-Lipschitz functions w.r.t. l_inf). Each marginal's points are merged into weighted unique
    points first (exact; synthetic data often repeats points), then passed to
    :func:`wasserstein1` (exact 1-D for s = 1, exact POT or the grid / certified
    sparse methods for s >= 2, per ``method``).

    Parameters
    ----------
    X : array (n, d); Y : array (m, d), in domain units (unit cube when ``domain`` is None)
    s : int in [1, d]
    domain : Domain or None
    metric : {"linf", "l1", "l2"}, default "linf" (the paper's)
    method : str, default "auto", passed to ``wasserstein1``
    budget : {None, "interactive", "preview"}, passed to ``wasserstein1`` (what "auto" may spend)
    weights_x, weights_y : arrays of non-negative weights, optional
    return_details : bool, default False
        Also return a dict with the per-subset values and subsets.

    Returns
    -------
    float, or (float, dict) with ``return_details``: per-subset values, the worst subset, ``lower`` /
    ``upper`` (the maximum over subsets of each marginal's proven bounds: equal to the value for exact
    methods, the grid interval otherwise), ``exact`` and the ``W1Result`` of every marginal.
    """
    from .w1 import wasserstein1

    owner = "sparse_utility_loss"
    return_details = check_bool(return_details, "return_details", owner)
    if domain is not None and not isinstance(domain, Domain):
        raise param_error(owner, "domain", "a dpsynth_core.Domain or None", domain, kind=TypeError)
    A = check_points(X, "X", owner, d=None if domain is None else domain.d)
    B = check_points(Y, "Y", owner, d=A.shape[1])
    d = A.shape[1]
    ss = check_int(s, "s", owner, low=1, high=d)
    check_choice(metric, "metric", owner, METRICS)
    if domain is not None:
        A = domain.to_unit(A, owner=owner)
        B = domain.to_unit(B, owner=owner)

    wa = check_weights(weights_x, A.shape[0], "weights_x", owner)
    wb = check_weights(weights_y, B.shape[0], "weights_y", owner)
    subsets = marginal_subsets(d, ss)
    values = []
    extra = []
    for S in subsets:
        Pa, qa = unique_weighted(A[:, S], wa)
        Pb, qb = unique_weighted(B[:, S], wb)
        res = wasserstein1(Pa, Pb, metric=metric, method=method, weights_x=qa, weights_y=qb, budget=budget,
                           return_result=True)
        values.append(float(res.value))
        extra.append(res)
    values_arr = np.asarray(values)
    worst = int(np.argmax(values_arr))
    out = float(values_arr[worst])
    if not return_details:
        return out
    details = {"per_subset": values_arr, "subsets": [list(S) for S in subsets], "argmax": list(subsets[worst]),
               "lower": float(max(r.lower for r in extra)), "upper": float(max(r.upper for r in extra)),
               "exact": bool(all(r.exact for r in extra)), "methods": sorted({r.method for r in extra}),
               "results": extra}
    return out, details
