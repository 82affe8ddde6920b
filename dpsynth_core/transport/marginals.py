"""W1 between s-dimensional marginals: the utility loss of a sparse-marginal release.

.. math:: \\mathcal U(\\mu_X, \\mu_Y) = \\max_{S \\subset [d],\\ |S| = s} W_1\\big(P^S_\\#\\mu_X, P^S_\\#\\mu_Y\\big)

[DLS+24, Eq. (1)]. Each marginal is an ordinary W1 problem (:func:`dpsynth_core.transport.wasserstein1`).
On a mixed domain (docs/mixed-data.md) a marginal over a categorical column is a W1 problem under the
mixed metric (:func:`mixed_cost`), solved exactly by dense transport (POT).
"""

from __future__ import annotations

import itertools
import time
from typing import Any

import numpy as np

from ..domain import Domain
from ..validation import check_bool, check_choice, check_int, check_points, param_error
from ._common import METRICS, W1Result, check_weights, emd_checked
from .dense import POT_MAX_PAIRS
from .metrics import mixed_cost
from .w1 import wasserstein1

__all__ = ["marginal_subsets", "unique_weighted", "mixed_cost", "sparse_utility_loss"]


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


def _mixed_w1(Pa: np.ndarray, qa: np.ndarray, Pb: np.ndarray, qb: np.ndarray, weights: np.ndarray,
              owner: str) -> W1Result:
    """Exact W1 of two weighted point sets under the mixed metric: POT's network simplex on the dense cost."""
    t0 = time.perf_counter()
    if Pa.shape[0] * Pb.shape[0] > POT_MAX_PAIRS:
        raise ValueError(
            f"The 'X' parameter of {owner} must give marginals of at most {POT_MAX_PAIRS} point pairs on a mixed "
            f"domain (a marginal over a categorical column is solved exactly on a dense cost). Got "
            f"{Pa.shape[0]} x {Pb.shape[0]} distinct points; pass fewer rows (a subsample).")
    M = mixed_cost(Pa, Pb, weights)
    G, _ = emd_checked(qa, qb * (qa.sum() / qb.sum()), M, f"the mixed marginal W1 of {owner}")
    value = float(np.sum(G * M))
    return W1Result(value=value, lower=value, upper=value, method="pot", exact=True, certified=False,
                    seconds=time.perf_counter() - t0, details={"metric": "mixed", "pairs": int(M.size)})


def _read(X: Any, Y: Any, domain: Domain | None, metric: str, method: str,
          owner: str) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """The two point sets checked: on a mixed domain read and encoded in unit coordinates (the metric must be
    l_inf and the method "auto" or "pot"), with the category weight of every column (0 for numeric ones);
    otherwise arrays of the domain's width, in their units (and no weights)."""
    if domain is None or not domain.is_mixed:
        A = check_points(X, "X", owner, d=None if domain is None else domain.d)
        return A, check_points(Y, "Y", owner, d=A.shape[1]), None
    A = domain.to_unit(domain.read(X, name="X", owner=owner), owner=owner)
    B = domain.to_unit(domain.read(Y, name="Y", owner=owner), owner=owner)
    check_choice(metric, "metric", owner, ("linf",))
    check_choice(method, "method", owner, ("auto", "pot"))
    cat_w = np.zeros(domain.d)
    cat_w[domain.categorical_index] = domain.weights
    return A, B, cat_w


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

    On a mixed domain (``domain.is_mixed``) the metric is the mixed metric of docs/mixed-data.md (l_inf on
    the numeric unit coordinates, w_j between two different categories of column j, combined by max): a
    marginal of numeric columns only is solved as above, one over a categorical column exactly by dense
    transport with that cost (:func:`mixed_cost`, POT; ``method`` must be "auto" or "pot", ``metric``
    "linf"). X and Y may then be DataFrames with the categories as text, or encoded arrays
    (:meth:`dpsynth_core.Domain.read`).

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
    owner = "sparse_utility_loss"
    return_details = check_bool(return_details, "return_details", owner)
    if domain is not None and not isinstance(domain, Domain):
        raise param_error(owner, "domain", "a dpsynth_core.Domain or None", domain, kind=TypeError)
    mixed = domain is not None and domain.is_mixed
    A, B, cat_w = _read(X, Y, domain, metric, method, owner)
    d = A.shape[1]
    ss = check_int(s, "s", owner, low=1, high=d)
    check_choice(metric, "metric", owner, METRICS)
    if domain is not None and not mixed:
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
        if mixed and np.any(cat_w[list(S)] > 0):
            res = _mixed_w1(Pa, qa, Pb, qb, cat_w[list(S)], owner)
        else:
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
