"""Paths through grid cells and finite point sets: folding the cube onto a line ([BSV22, Sections 6–7];
[DLS+24, Appendix C.1]; docs/random-walk.md, "Folding the cube onto a line").

A path visits every cell of the ``k^d`` grid once. Placing the cells on the line at the cumulative
distance travelled along the path, :math:`w_1 = 0,\\ w_{j+1} = w_j + \\rho(z_{\\pi_j}, z_{\\pi_{j+1}})`, the map
:math:`w_j \\mapsto z_{\\pi_j}` from the line to the cube is 1-Lipschitz, so a W1 distance between measures
on the line bounds the W1 distance of their images in the cube [DLS+24, Eq. (27)]. The line has length
:math:`L = w_{N}`, the *path length*.

* :func:`snake_order`: boustrophedon order (reflected k-ary Gray code), any k and d; consecutive cells
  are axis neighbours, so every step has l_inf (and l1, l2) length 1/k and :math:`L = (k^d - 1)/k`.
* :func:`hilbert_order`: Hilbert curve ([Ski04], "Programming the Hilbert curve", transpose
  algorithm), k a power of two, any d >= 2 (d = 1 is the identity); also axis-neighbour steps.
* :func:`mst_order`: depth-first (preorder) tour of a minimum spanning tree of an arbitrary finite
  point set ([BSV22, Section 6]: the travelling-salesman / MST link). By the triangle inequality each
  step of the tour is at most the tree path between the two points, and the tree paths of a preorder walk
  cover every edge at most twice, so the tour length is at most 2 · (MST weight).

Every order is an index array into the row-major cells of :mod:`dpsynth_core.grid` (axis 0 most
significant), or into the rows of the point set for :func:`mst_order`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import sparse
from scipy.sparse import csgraph
from scipy.spatial import distance

from .grid import cell_centres
from .validation import check_choice, check_int, check_points, param_error

__all__ = [
    "PATHS",
    "METRICS",
    "GridPath",
    "snake_order",
    "hilbert_order",
    "mst_order",
    "mst_weight",
    "path_length",
    "path_positions",
    "grid_path",
    "MST_DENSE_MAX",
]

PATHS: tuple[str, ...] = ("snake", "hilbert", "mst")
METRICS: tuple[str, ...] = ("linf", "l2", "l1")
_MINKOWSKI = {"linf": np.inf, "l2": 2.0, "l1": 1.0}
#: Largest point set :func:`mst_order` handles with a dense distance matrix (32 MB of float64).
MST_DENSE_MAX = 2000
_MAX_CELLS = 2**24


def _check_grid(k: Any, d: Any, owner: str) -> tuple[int, int]:
    kk = check_int(k, "k", owner, low=1)
    dd = check_int(d, "d", owner, low=1, high=32)
    if kk**dd > _MAX_CELLS:
        raise param_error(owner, "k", f"such that k^d <= 2^24 cells (d={dd})", kk)
    return kk, dd


# ------------------------------------------------------------------------------------ snake
def snake_order(k: int, d: int) -> np.ndarray:
    """Boustrophedon ("snake") order of the ``k^d`` grid cells.

    .. math:: \\pi = (\\text{layer } 0: \\pi^{(d-1)},\\ \\text{layer } 1: \\mathrm{reverse}(\\pi^{(d-1)}),\\
              \\text{layer } 2: \\pi^{(d-1)}, \\dots)

    Recursive on the most significant axis: layer i of axis 0 is traversed with the (d-1)-dimensional
    snake, reversed on odd layers, so that a layer ends where the next one starts (one step along
    axis 0). This is the reflected k-ary Gray code.

    Parameters
    ----------
    k : int >= 1, cells per axis; d : int in [1, 32]; ``k^d <= 2^24``.

    Returns
    -------
    ndarray of shape (k^d,), int64: the row-major cell indices in path order (a permutation).
    """
    kk, dd = _check_grid(k, d, "snake_order")
    order = np.arange(kk, dtype=np.int64)
    for _ in range(1, dd):
        size = order.size
        layers = np.empty((kk, size), dtype=np.int64)
        layers[0::2] = order
        layers[1::2] = order[::-1]
        order = (np.arange(kk, dtype=np.int64)[:, None] * size + layers).ravel()
    return order


# ---------------------------------------------------------------------------------- Hilbert
def hilbert_order(k: int, d: int) -> np.ndarray:
    """Hilbert-curve order of the ``k^d`` grid cells, k a power of two.

    .. math:: h \\in \\{0, \\dots, k^d - 1\\} \\mapsto (x_0, \\dots, x_{d-1}) \\ \\text{(Skilling's TransposetoAxes)}

    The Hilbert index h is written in "transpose" form (bit q of coordinate i is bit
    :math:`q d + (d - 1 - i)` of h), Gray-decoded and untwisted level by level [Ski04], vectorised
    over all cells. Consecutive cells differ by one in exactly one coordinate for every d >= 2.

    Parameters
    ----------
    k : int, a power of two >= 1; d : int in [1, 32]; ``k^d <= 2^24``.
        d = 1 gives the identity order.

    Returns
    -------
    ndarray of shape (k^d,), int64: row-major cell indices in path order (a permutation).

    References
    ----------
    .. [Ski04] J. Skilling. Programming the Hilbert curve. AIP Conf. Proc. 707, 2004.
       See docs/references.md.
    """
    owner = "hilbert_order"
    kk, dd = _check_grid(k, d, owner)
    if kk & (kk - 1):
        raise param_error(owner, "k", "a power of two (the Hilbert curve lives on 2^b x ... x 2^b grids; "
                          "use path='snake' for other k)", kk)
    if dd == 1:
        return np.arange(kk, dtype=np.int64)
    bits = kk.bit_length() - 1
    n_cells = kk**dd
    if bits == 0:
        return np.zeros(1, dtype=np.int64)
    h = np.arange(n_cells, dtype=np.int64)
    X = np.zeros((dd, n_cells), dtype=np.int64)
    for q in range(bits):
        for i in range(dd):
            bit = (h >> (q * dd + (dd - 1 - i))) & 1
            X[i] |= bit << q
    # Gray decode by H ^ (H/2)
    t = X[dd - 1] >> 1
    for i in range(dd - 1, 0, -1):
        X[i] ^= X[i - 1]
    X[0] ^= t
    # undo excess work
    N = 2 << (bits - 1)
    Q = 2
    while Q != N:
        P = Q - 1
        for i in range(dd - 1, -1, -1):
            has = (X[i] & Q) != 0
            # invert where the bit is set
            X0_inv = X[0] ^ P
            # exchange low bits of X[0] and X[i] where it is not
            tt = (X[0] ^ X[i]) & P
            newX0 = np.where(has, X0_inv, X[0] ^ tt)
            if i != 0:
                X[i] = np.where(has, X[i], X[i] ^ tt)
            X[0] = newX0
        Q <<= 1
    idx = np.zeros(n_cells, dtype=np.int64)
    for i in range(dd):
        idx = idx * kk + X[i]
    return idx


# -------------------------------------------------------------------------------------- MST
def _minkowski(metric: str) -> float:
    return _MINKOWSKI[metric]


def _tour_from_tree(tree: sparse.spmatrix, start: int) -> np.ndarray:
    order = csgraph.depth_first_order(tree, start, directed=False, return_predecessors=False)
    return np.asarray(order, dtype=np.int64)


def _dense_graph(P: np.ndarray, metric: str) -> np.ndarray:
    """Complete distance matrix of distinct points (csgraph reads a zero as "no edge")."""
    if metric == "linf":
        return distance.squareform(distance.pdist(P, metric="chebyshev"))
    return distance.squareform(distance.pdist(P, metric="minkowski", p=_minkowski(metric)))


def _dedupe(P: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    uniq, inverse = np.unique(P, axis=0, return_inverse=True)
    return uniq, np.asarray(inverse).ravel()


def mst_order(points: Any, metric: str = "linf", *, start: int = 0, graph: Any = None) -> np.ndarray:
    """Depth-first (preorder) tour of a minimum spanning tree [BSV22, Section 6].

    .. math:: T = \\mathrm{MST}(P, \\rho), \\qquad \\pi = \\mathrm{preorder}_T(\\text{start}), \\qquad
              \\sum_j \\rho(p_{\\pi_j}, p_{\\pi_{j+1}}) \\le 2\\, w(T)

    Parameters
    ----------
    points : array_like of shape (N, d), N >= 1
        A finite point set (e.g. grid cell centres or public points in the unit cube).
    metric : {"linf", "l2", "l1"}, default "linf"
    start : int in [0, N), default 0
        Root of the depth-first walk.
    graph : scipy sparse matrix of shape (N, N) or None
        Candidate edges with their weights (e.g. grid neighbours). ``None``: the complete graph, built
        densely, for at most :data:`MST_DENSE_MAX` points. The tree is the MST of the graph given.

    Returns
    -------
    ndarray of shape (N,), int64: a permutation of ``range(N)``.

    References
    ----------
    .. [BSV22] M. Boedihardjo, T. Strohmer, R. Vershynin. Private measures, random walks, and synthetic data. arXiv:2204.09167, 2022.
       See docs/references.md.
    """
    owner = "mst_order"
    P = check_points(points, "points", owner)
    met = check_choice(metric, "metric", owner, METRICS)
    n = P.shape[0]
    s = check_int(start, "start", owner, low=0, high=n - 1)
    if graph is None:
        # duplicates: tour the distinct points, visit the copies of a point right after it (distance 0)
        uniq, inv = _dedupe(P)
        tree = _mst(uniq, met, None, owner)
        tour = _tour_from_tree(tree, int(inv[s]))
        rank = np.empty(uniq.shape[0], dtype=np.int64)
        rank[tour] = np.arange(tour.size)
        key = rank[inv] * 2 + (np.arange(n) != s)  # the start point first within its group
        order = np.lexsort((np.arange(n), key)).astype(np.int64)
        return order
    tree = _mst(P, met, graph, owner)
    order = _tour_from_tree(tree, s)
    if order.size != n:
        raise ValueError(f"The 'graph' parameter of {owner} must connect all {n} points. "
                         f"Got a graph whose component of the start point has {order.size} points.")
    return order


def _mst(P: np.ndarray, metric: str, graph: Any, owner: str) -> sparse.csr_matrix:
    n = P.shape[0]
    if graph is None:
        if n > MST_DENSE_MAX:
            raise param_error(owner, "points", f"at most {MST_DENSE_MAX} points without a sparse 'graph' "
                              "(the complete distance matrix is dense)", f"{n} points")
        if n == 1:
            return sparse.csr_matrix((1, 1))
        G = _dense_graph(P, metric)
    else:
        if not sparse.issparse(graph) or graph.shape != (n, n):
            raise param_error(owner, "graph", f"a scipy sparse matrix of shape ({n}, {n}) or None", graph,
                              kind=TypeError if not sparse.issparse(graph) else ValueError)
        G = graph
    return csgraph.minimum_spanning_tree(G).tocsr()


def mst_weight(points: Any, metric: str = "linf", *, graph: Any = None) -> float:
    """Total weight of the minimum spanning tree of ``points`` (see :func:`mst_order`)."""
    owner = "mst_weight"
    P = check_points(points, "points", owner)
    met = check_choice(metric, "metric", owner, METRICS)
    T = _mst(_dedupe(P)[0] if graph is None else P, met, graph, owner)
    return float(T.data.sum())


# ------------------------------------------------------------------------------ lengths
def path_positions(points: Any, order: Any, metric: str = "linf") -> np.ndarray:
    """Line coordinates :math:`w_j` of the points visited in ``order``: the distance travelled so far.

    .. math:: w_1 = 0, \\qquad w_{j+1} = w_j + \\rho(p_{\\pi_j}, p_{\\pi_{j+1}})

    Parameters
    ----------
    points : array_like (N, d); order : int array (N,), a permutation; metric : {"linf", "l2", "l1"}

    Returns
    -------
    ndarray of shape (N,), float64, nondecreasing; the last entry is the path length.
    """
    owner = "path_positions"
    P = check_points(points, "points", owner)
    met = check_choice(metric, "metric", owner, METRICS)
    o = np.asarray(order)
    if o.ndim != 1 or not np.issubdtype(o.dtype, np.integer) or o.size != P.shape[0] or (
            o.size and (o.min() < 0 or o.max() >= P.shape[0])):
        raise param_error(owner, "order", f"an int array of {P.shape[0]} indices into the points", order)
    steps = np.diff(P[o], axis=0)
    if met == "linf":
        lens = np.abs(steps).max(axis=1) if steps.size else np.zeros(0)
    elif met == "l1":
        lens = np.abs(steps).sum(axis=1)
    else:
        lens = np.sqrt((steps**2).sum(axis=1))
    return np.concatenate([[0.0], np.cumsum(lens)])


def path_length(points: Any, order: Any, metric: str = "linf") -> float:
    """Length :math:`\\sum_j \\rho(p_{\\pi_j}, p_{\\pi_{j+1}})` of the path through ``points`` in ``order``."""
    return float(path_positions(points, order, metric)[-1])


# ------------------------------------------------------------------------------ grid paths
@dataclass(frozen=True)
class GridPath:
    """A path through the ``k^d`` grid cells of the unit cube.

    Attributes
    ----------
    kind : str, one of :data:`PATHS`
    k, d : int
    order : int64 array (k^d,), row-major cell index of the j-th cell on the path
    positions : float64 array (k^d,), line coordinate :math:`w_j` of the j-th cell (unit-cube units)
    length : float, :math:`w_{k^d}`: ``(k^d - 1)/k`` for snake and Hilbert paths
    metric : str
    """

    kind: str
    k: int
    d: int
    order: np.ndarray
    positions: np.ndarray
    length: float
    metric: str = "linf"

    def to_dict(self) -> dict:
        return {"kind": self.kind, "k": self.k, "d": self.d, "cells": int(self.order.size),
                "length": self.length, "metric": self.metric}


def _grid_neighbour_graph(k: int, d: int) -> sparse.csr_matrix:
    """Axis-neighbour graph of the k^d cells with weight 1/k (l_inf, l1 and l2 agree)."""
    n = k**d
    rows, cols = [], []
    idx = np.arange(n, dtype=np.int64)
    stride = 1
    for _ in range(d):
        coord = (idx // stride) % k
        ok = coord < k - 1
        rows.append(idx[ok])
        cols.append(idx[ok] + stride)
        stride *= k
    r = np.concatenate(rows) if rows else np.zeros(0, dtype=np.int64)
    c = np.concatenate(cols) if cols else np.zeros(0, dtype=np.int64)
    return sparse.csr_matrix((np.full(r.size, 1.0 / k), (r, c)), shape=(n, n))


def grid_path(kind: str, k: int, d: int, metric: str = "linf") -> GridPath:
    """The path of ``kind`` through the ``k^d`` grid cells, with its line positions and length.

    .. math:: w_j = \\sum_{i < j} \\rho(z_{\\pi_i}, z_{\\pi_{i+1}}) \\quad (= (j-1)/k \\text{ for snake and Hilbert})

    Parameters
    ----------
    kind : {"snake", "hilbert", "mst"}
        "mst": depth-first tour of a minimum spanning tree of the cell centres over the axis-neighbour
        graph (every MST of the grid has weight :math:`(k^d-1)/k`; the tour is at most twice that).
    k : int >= 1 (a power of two for "hilbert"); d : int in [1, 32]; ``k^d <= 2^24``
    metric : {"linf", "l2", "l1"}, default "linf"

    Returns
    -------
    GridPath
    """
    owner = "grid_path"
    kd = check_choice(kind, "kind", owner, PATHS)
    kk, dd = _check_grid(k, d, owner)
    met = check_choice(metric, "metric", owner, METRICS)
    if kd == "snake" or dd == 1:
        order = snake_order(kk, dd)
    elif kd == "hilbert":
        order = hilbert_order(kk, dd)
    else:
        order = mst_order(cell_centres(kk, dd), met, graph=_grid_neighbour_graph(kk, dd))
    if kd in ("snake", "hilbert") or dd == 1:
        positions = np.arange(order.size, dtype=np.float64) / kk
    else:
        positions = path_positions(cell_centres(kk, dd), order, met)
    return GridPath(kind=kd, k=kk, d=dd, order=order, positions=positions, length=float(positions[-1]),
                    metric=met)
