"""What every W1 method shares: the metrics, weight vectors, the result type, POT's checked solve.

The three ground metrics are handled in one place (:data:`METRICS`, :func:`norm_of_abs`,
:func:`pairwise`, :func:`rowdist`, :func:`unit_diam`), so that no solver carries its own
``if metric == ...`` ladder.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..validation import param_error

__all__ = ["METRICS", "CDIST", "KDTREE_P", "W1Result", "check_weights", "norm_of_abs", "pairwise", "rowdist",
           "unit_diam", "cell_diam", "extent_diam", "emd_checked"]

METRICS = ("linf", "l1", "l2")
#: scipy.spatial.distance.cdist's name of each metric.
CDIST = {"linf": "chebyshev", "l1": "cityblock", "l2": "euclidean"}
#: Minkowski p of each metric (scipy.spatial.cKDTree.query).
KDTREE_P = {"linf": np.inf, "l1": 1, "l2": 2}
#: numItermax handed to POT's network simplex (its default, 1e5, stops early at ~5000 points).
POT_ITERMAX = 10**12


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
        *all* pairs and equal primal and dual objectives (pot), or exact by construction (exact_1d).
        The grid's interval is certified by the same check on the binned problem; the sparse
        method's bracket is always proven (a feasible plan's cost and a feasible dual over all
        pairs), exact when it closed.
    iterations : int
        Column-generation rounds ("sparse"), 1 otherwise.
    seconds : float
        Wall time.
    details : dict
        Method-specific figures (arcs, grid size, gap, dual violation, ...).
    advice : tuple of :class:`~dpsynth_core.validation.Advice`
        For a result that is not exact: what to change for the exact value (each front end words it).
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
    advice: tuple = ()

    def __float__(self) -> float:
        return float(self.value)

    @property
    def width(self) -> float:
        """Width of the proven interval (0 for exact methods)."""
        return float(self.upper - self.lower)

    def to_dict(self) -> dict:
        """The figures as plain values (no solver details)."""
        return {"value": float(self.value), "lower": float(self.lower), "upper": float(self.upper),
                "method": self.method, "exact": bool(self.exact), "certified": bool(self.certified)}


def check_weights(w: Any, n: int, name: str, owner: str) -> np.ndarray:
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


def _linf(D: np.ndarray, axis: int) -> np.ndarray:
    return D.max(axis=axis)


def _l1(D: np.ndarray, axis: int) -> np.ndarray:
    return D.sum(axis=axis)


def _l2(D: np.ndarray, axis: int) -> np.ndarray:
    return np.sqrt((D * D).sum(axis=axis))


_NORMS = {"linf": _linf, "l1": _l1, "l2": _l2}


def norm_of_abs(D: np.ndarray, metric: str, axis: int = -1) -> np.ndarray:
    """The metric's norm of an array of absolute coordinate differences, along ``axis``."""
    return _NORMS[metric](D, axis)


def pairwise(X: np.ndarray, Y: np.ndarray, metric: str) -> np.ndarray:
    """The (n, m) matrix of distances between the rows of X and of Y."""
    from scipy.spatial.distance import cdist

    return cdist(X, Y, metric=CDIST[metric])


def rowdist(X: np.ndarray, Y: np.ndarray, metric: str) -> np.ndarray:
    """Distances between matching rows of X and Y."""
    return norm_of_abs(np.abs(X - Y), metric, axis=1)


def unit_diam(d: int, metric: str) -> float:
    """Diameter of [0,1]^d in the metric."""
    return {"linf": 1.0, "l1": float(d), "l2": math.sqrt(d)}[metric]


def cell_diam(k: int, d: int, metric: str) -> float:
    """Diameter of a cell of side 1/k in the metric."""
    return unit_diam(d, metric) / k


def extent_diam(X: np.ndarray, Y: np.ndarray, metric: str) -> float:
    """Diameter of the bounding box of X and Y together (an upper bound of every distance)."""
    hi = np.maximum(X.max(axis=0), Y.max(axis=0))
    lo = np.minimum(X.min(axis=0), Y.min(axis=0))
    return float(rowdist(hi[None], lo[None], metric)[0])


def emd_checked(a: np.ndarray, b: np.ndarray, M: Any, what: str):
    """ot.emd with a large numItermax; raise RuntimeError unless POT reports optimality."""
    import ot

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        G, log = ot.emd(a, b, M, numItermax=POT_ITERMAX, log=True, check_marginals=False)
    code = int(log.get("result_code", -1))
    if code != 1:
        msgs = "; ".join(str(w.message) for w in caught)
        raise RuntimeError(
            f"POT's network simplex did not reach optimality in {what} (result_code={code}, "
            f"warning={log.get('warning')!r}{'; ' + msgs if msgs else ''})."
        )
    return G, log
