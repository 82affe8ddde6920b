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
neighbours, the compiled kd-tree branch and bound of :mod:`._kdtree` for the c-transforms).
:class:`MixedMetric` implements the mixed metric of docs/mixed-data.md (numeric and categorical columns)
by an isometric embedding into l_inf (:meth:`MixedMetric.embed`), so the same exact kd-tree machinery
answers its neighbour and c-transform queries. Both also give the dense matrix ``pairwise(P, Q)`` (the
"pot" method). :func:`ground_metric` returns the built-in one for a name.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _kdtree as K
from ._common import KDTREE_P, METRICS, extent_diam, pairwise, rowdist

__all__ = ["GroundMetric", "LpMetric", "MixedMetric", "ground_metric", "mixed_cost"]


class GroundMetric:
    """The interface of a ground metric (see the module docstring). Subclasses implement all of it."""

    name: str = "abstract"
    #: Violated pairs of every row (and column) the solver adds per round unless told otherwise: a metric
    #: with many equal distances (the mixed metric) has many pairs violated by the same amount, and a
    #: larger batch saves rounds.
    column_batch: int = 4
    #: Column generation also adds the pairs whose slack is below this fraction of the diameter (nearly
    #: tight, not yet violated): pairs the next optimum is likely to need, added a round early.
    near_tight: float = 0.0
    #: Once a bracket is within 0.1% (transshipment.BIPARTITE_FROM), solve on a bipartite graph X -> Y
    #: grown by this many smallest-slack pairs of every row per round (0: stay on the transshipment graph). Worth it where chains of short arcs cost more than the
    #: direct move (l2); where many pairs tie (l_inf, l1) it takes 15-60 rounds instead of 4.
    bipartite_batch: int = 0

    def rounding(self, d: int) -> float:  # pragma: no cover - interface
        """Bound on the relative error of one computed distance in dimension d."""
        raise NotImplementedError

    def cost(self, P: np.ndarray, Q: np.ndarray) -> np.ndarray:  # pragma: no cover - interface
        """Distances between matching rows of P and Q."""
        raise NotImplementedError

    def pairwise(self, P: np.ndarray, Q: np.ndarray) -> np.ndarray:  # pragma: no cover - interface
        """The (len(P), len(Q)) matrix of distances (the dense method's cost)."""
        raise NotImplementedError

    def neighbours(self, Z: np.ndarray, k: int) -> np.ndarray:  # pragma: no cover - interface
        """(N, k) indices of the k nearest other points of every row of Z (ties in any order)."""
        raise NotImplementedError

    def prepare(self, X: np.ndarray, Y: np.ndarray):  # pragma: no cover - interface
        raise NotImplementedError

    def bound(self, X: np.ndarray, Y: np.ndarray) -> float:  # pragma: no cover - interface
        raise NotImplementedError

    def coordinates(self, P: np.ndarray) -> np.ndarray:  # pragma: no cover - interface
        """Coordinates in which this metric is the l_p distance of :attr:`kdtree_p` (the identity for
        an l_p metric, the isometric embedding for the mixed one): where the coarse start of the
        transshipment solver averages, shifts and queries points."""
        raise NotImplementedError

    #: the p of the l_p distance on :meth:`coordinates` (SciPy's cKDTree convention)
    kdtree_p: float = np.inf


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
        self.p = self.kdtree_p = KDTREE_P[name]
        # l2: a long move is never a chain of short arcs at the same cost (the triangle inequality is
        # strict off a line), so every move of the plan must become a direct arc; larger batches save
        # rounds (benchmarks/bench_transport.py: 5 rounds instead of 9 at n = 5000)
        self.column_batch = 16 if name == "l2" else 4
        # and with the nearly tight pairs too (slack below 1e-3 of the diameter): 4 rounds instead of 6,
        # 1.4 s instead of 1.9 s at n = 5000; no gain measured for l_inf and l1
        self.near_tight = 1e-3 if name == "l2" else 0.0
        # l2: the bipartite phase, 24 smallest slacks of every row per round (n = 5000: 0.90 s against
        # 1.3 s without it; 2*10^4: 25 s against 29.5 s; docs/transport.md)
        self.bipartite_batch = 24 if name == "l2" else 0

    def rounding(self, d):
        # d subtractions, a sum of d terms (l1, l2) and a square root (l2): at most d + 2 roundings
        return (d + 2) * 2.0**-52

    def cost(self, P, Q):
        return rowdist(P, Q, self.name)

    def pairwise(self, P, Q):
        return pairwise(P, Q, self.name)

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

    def coordinates(self, P):
        return np.asarray(P, dtype=float)


def _nearest(P: np.ndarray, Q: np.ndarray) -> np.ndarray:
    """Index in P of the l_inf-nearest row to every row of Q."""
    from scipy.spatial import cKDTree

    _, j = cKDTree(P).query(Q, k=1, p=np.inf, workers=-1)
    return np.asarray(j, dtype=np.int64)


def mixed_cost(P: Any, Q: Any, weights: Any) -> np.ndarray:
    """Pairwise distances under the mixed metric of docs/mixed-data.md, on encoded unit coordinates.

    .. math:: \\rho(p, q) = \\max\\Big(\\max_{j:\\ w_j = 0} |p_j - q_j|,\\ \\max_{j:\\ w_j > 0} w_j\\,[p_j \\ne q_j]\\Big)

    ``weights[j] == 0`` marks a numeric column (l_inf on the unit cube), ``weights[j] > 0`` a categorical
    one (its coordinate a category index, two different categories at distance w_j). With every weight 0
    this is the l_inf distance.

    Returns
    -------
    ndarray (len(P), len(Q)).
    """
    A = np.asarray(P, dtype=float)
    B = np.asarray(Q, dtype=float)
    w = np.asarray(weights, dtype=float).ravel()
    out = np.zeros((A.shape[0], B.shape[0]))
    for j, wj in enumerate(w.tolist()):
        if wj > 0:
            np.maximum(out, wj * (A[:, j, None] != B[None, :, j]), out=out)
        else:
            np.maximum(out, np.abs(A[:, j, None] - B[None, :, j]), out=out)
    return out


class MixedMetric(GroundMetric):
    """The mixed metric of docs/mixed-data.md on encoded unit rows (numeric coordinates in [0, 1],
    category indices in the categorical columns):

    .. math:: \\rho(x, y) = \\max\\big(\\|u_x - u_y\\|_\\infty,\\ \\max_j w_j\\,[c_{x,j} \\ne c_{y,j}]\\big)

    Exact nearest neighbours and c-transforms come from an isometric embedding into l_inf
    (:meth:`embed`): a categorical column with c categories and weight w becomes ceil(log2 c) coordinates,
    w times the binary digits of the category's index. Two different indices differ in at least one
    digit, so the largest coordinate difference of the block is w; equal ones give 0. Hence
    :math:`\\rho(x, y) = \\|\\phi(x) - \\phi(y)\\|_\\infty` exactly (the same floating-point
    operations), and :class:`LpMetric`'s kd-trees answer every query of the transshipment solver on
    :math:`\\phi(X), \\phi(Y)` without approximation.

    Parameters
    ----------
    weights : array (d,)
        0 for a numeric column, the weight w_j > 0 of a categorical one.
    sizes : array (d,) of int
        Number of categories of each categorical column (ignored for numeric ones).
    """

    name = "mixed"
    column_batch = 16
    #: Most combinations of categories for which :meth:`neighbours` adds the arcs between combinations.
    MAX_GROUPS = 64

    def __init__(self, weights: Any, sizes: Any):
        self.weights = np.asarray(weights, dtype=float).ravel()
        self.sizes = np.asarray(sizes, dtype=np.int64).ravel()
        if self.weights.shape != self.sizes.shape or np.any(self.weights < 0):
            raise ValueError("MixedMetric needs one non-negative weight and one size per column")
        self.categorical = np.flatnonzero(self.weights > 0)
        self.numeric = np.flatnonzero(self.weights == 0)
        self._linf = LpMetric("linf")

    @classmethod
    def from_domain(cls, domain) -> MixedMetric:
        """The mixed metric of a :class:`dpsynth_core.Domain` (its weights; numeric columns weight 0)."""
        w = np.zeros(domain.d)
        sizes = np.zeros(domain.d, dtype=np.int64)
        w[domain.categorical_index] = domain.weights
        sizes[domain.categorical_index] = domain.category_sizes
        return cls(w, sizes)

    def embed(self, E: np.ndarray) -> np.ndarray:
        """The l_inf embedding: numeric columns as they are, then each categorical column as w_j times
        the ceil(log2 c_j) binary digits of its index (at least one digit)."""
        E = np.asarray(E, dtype=float)
        blocks = [E[:, self.numeric]]
        for j in self.categorical.tolist():
            bits = max(1, int(self.sizes[j] - 1).bit_length())
            codes = E[:, j].astype(np.int64)
            digits = (codes[:, None] >> np.arange(bits)[None, :]) & 1
            blocks.append(self.weights[j] * digits.astype(float))
        return np.ascontiguousarray(np.concatenate(blocks, axis=1))

    def rounding(self, d):
        return self._linf.rounding(d)

    def cost(self, P, Q):
        out = np.abs(P[:, self.numeric] - Q[:, self.numeric]).max(axis=1, initial=0.0)
        for j in self.categorical.tolist():
            np.maximum(out, self.weights[j] * (P[:, j] != Q[:, j]), out=out)
        return out

    def pairwise(self, P, Q):
        # SciPy's Chebyshev distance on the embedding: the same numbers as mixed_cost bit for bit (the class
        # docstring), about 20 times faster than its column-by-column passes over the (len(P), len(Q)) matrix
        return pairwise(self.embed(P), self.embed(Q), "linf")

    def neighbours(self, Z, k):
        """The k nearest neighbours (in the embedding), plus, when there are at most
        :attr:`MAX_GROUPS` combinations of categories among the rows, every row's nearest neighbour in
        each other combination: the arcs a move between combinations needs (without them the first
        solves route such moves through chains and the first brackets are wide)."""
        nn = self._linf.neighbours(self.embed(Z), k)
        if self.categorical.size == 0:
            return nn
        _, g = np.unique(Z[:, self.categorical], axis=0, return_inverse=True)
        g = g.ravel()
        C = int(g.max()) + 1
        if C <= 1 or C > self.MAX_GROUPS:
            return nn
        extra = np.repeat(np.arange(Z.shape[0], dtype=np.int64)[:, None], C, axis=1)  # self: no arc
        num = np.ascontiguousarray(Z[:, self.numeric])
        for h in range(C):
            inside = np.flatnonzero(g == h)
            others = np.flatnonzero(g != h)
            if self.numeric.size == 0:
                extra[others, h] = inside[0]
                continue
            extra[others, h] = inside[_nearest(num[inside], num[others])]
        return np.concatenate([nn, extra], axis=1)

    def prepare(self, X, Y):
        return self._linf.prepare(self.embed(X), self.embed(Y))

    def bound(self, X, Y):
        return extent_diam(self.embed(X), self.embed(Y), "linf")

    def coordinates(self, P):
        return self.embed(P)


def ground_metric(metric) -> GroundMetric:
    """The ground metric for a name ("linf", "l1", "l2") or a :class:`GroundMetric` as is."""
    if isinstance(metric, GroundMetric):
        return metric
    return LpMetric(metric)
