"""Ground metrics as objects: what the transshipment solver needs to know about a cost.

The solver of :mod:`.transshipment` never looks at coordinates itself. It asks its ground metric for

* ``cost(P, Q)`` -- the distances between matching rows (the cost of arcs of the flow graph);
* ``neighbours(Z, k)`` -- the k nearest neighbours of every point of Z (the initial sparse graph);
* ``prepare(X, Y)`` -- an object answering c-transform queries over *all* pairs X x Y without forming
  them: ``rows(v, k)`` gives, for every i, the k smallest :math:`c(x_i, y_j) - v_j` and their j
  (ascending), ``cols(u, k)`` the same for every j over i;
* ``bound(X, Y)`` -- an upper bound of every distance (scales integer costs and the tolerances);
* ``rounding(d)`` -- a bound on the relative floating-point error of one computed distance in
  dimension d (the certificate's margin).

:class:`LpMetric` implements it for l_inf, l1 and l2 in any dimension (SciPy's cKDTree for the
neighbours, the compiled kd-tree branch and bound of :mod:`._kdtree` for the c-transforms). Another
ground metric (e.g. one mixing numeric and categorical columns) plugs in by implementing the same
members; :func:`ground_metric` returns the built-in one for a name.
"""

from __future__ import annotations

import numpy as np

from . import _kdtree as K
from ._common import KDTREE_P, METRICS, extent_diam, rowdist

__all__ = ["GroundMetric", "LpMetric", "ground_metric"]


class GroundMetric:
    """The interface of a ground metric (see the module docstring). Subclasses implement all of it."""

    name: str = "abstract"

    def rounding(self, d: int) -> float:  # pragma: no cover - interface
        """Bound on the relative error of one computed distance in dimension d."""
        raise NotImplementedError

    def cost(self, P: np.ndarray, Q: np.ndarray) -> np.ndarray:  # pragma: no cover - interface
        raise NotImplementedError

    def neighbours(self, Z: np.ndarray, k: int) -> np.ndarray:  # pragma: no cover - interface
        """(N, k) indices of the k nearest other points of every row of Z (ties in any order)."""
        raise NotImplementedError

    def prepare(self, X: np.ndarray, Y: np.ndarray):  # pragma: no cover - interface
        raise NotImplementedError

    def bound(self, X: np.ndarray, Y: np.ndarray) -> float:  # pragma: no cover - interface
        raise NotImplementedError


class _LpPair:
    """c-transform queries over X x Y for an l_p metric: one kd-tree per side, built once."""

    def __init__(self, X: np.ndarray, Y: np.ndarray, code: int):
        self.X = np.ascontiguousarray(X, dtype=float)
        self.Y = np.ascontiguousarray(Y, dtype=float)
        self.code = code
        self._ty = K.heap_tree(self.Y)
        self._tx = None

    def _query(self, P, tree, v, k):
        lo, hi, Ql, idxl, L = tree
        price = np.ascontiguousarray(-np.asarray(v, dtype=float))
        k = max(1, min(int(k), price.size))
        vals, inds, _ = K.c_knn(P, k, 0.0, self.code, lo, hi, K.node_pmin(price, idxl, L), Ql, idxl,
                                      price)
        return vals, inds

    def rows(self, v: np.ndarray, k: int = 1):
        """For every i: the k smallest c(x_i, y_j) - v_j over all j, ascending, and their j."""
        return self._query(self.X, self._ty, v, k)

    def cols(self, u: np.ndarray, k: int = 1):
        """For every j: the k smallest c(x_i, y_j) - u_i over all i, ascending, and their i."""
        if self._tx is None:
            self._tx = K.heap_tree(self.X)
        return self._query(self.Y, self._tx, u, k)


class LpMetric(GroundMetric):
    """l_inf, l1 or l2 between points of R^d."""

    def __init__(self, name: str):
        if name not in METRICS:
            raise ValueError(f"unknown l_p metric {name!r}; expected one of {METRICS}")
        self.name = name
        self.p = KDTREE_P[name]

    def rounding(self, d):
        # d subtractions, a sum of d terms (l1, l2) and a square root (l2): at most d + 2 roundings
        return (d + 2) * 2.0**-52

    def cost(self, P, Q):
        return rowdist(P, Q, self.name)

    def neighbours(self, Z, k):
        from scipy.spatial import cKDTree

        k = min(int(k), Z.shape[0] - 1)
        if k <= 0:
            return np.zeros((Z.shape[0], 0), dtype=np.int64)
        _, nn = cKDTree(Z).query(Z, k=k + 1, p=self.p, workers=-1)
        return np.asarray(nn, dtype=np.int64).reshape(Z.shape[0], k + 1)

    def prepare(self, X, Y):
        return _LpPair(X, Y, {"linf": K.LINF, "l1": K.L1, "l2": K.L2}[self.name])

    def bound(self, X, Y):
        return extent_diam(X, Y, self.name)


def ground_metric(metric) -> GroundMetric:
    """The ground metric for a name ("linf", "l1", "l2") or a :class:`GroundMetric` as is."""
    if isinstance(metric, GroundMetric):
        return metric
    return LpMetric(metric)
