"""The mixed metric between the cells of a mixed grid, as a dense matrix and as a sparse graph.

Cells are (combination c, numeric cell a) with index :math:`c \\cdot k^d + a` (:mod:`dpsynth_core.mixed_grid`);
the metric between their centres is the mixed metric of docs/mixed-data.md,

.. math:: \\rho((c, a), (c', b)) = \\max\\big(\\|z_a - z_b\\|_\\infty,\\ W(c, c')\\big), \\qquad
          W(c, c') = \\max_{j:\\ c_j \\ne c'_j} w_j \\quad (0 \\text{ when } c = c').

:math:`W` is an *ultrametric* on the combinations (the columns where c and c'' differ are among those
where c, c' or c', c'' differ), so it is the path metric of a tree: sort the distinct weights
:math:`g_1 > \\dots > g_L`; a node of level :math:`\\ell < L` is an assignment of the columns of weight
:math:`\\ge g_\\ell` (the root, level 0, assigns none) at height :math:`g_{\\ell+1}/2`; edges join a node to
its parent (cost :math:`(g_\\ell - g_{\\ell+1})/2`) and every cell to the level-(L-1) node of its
combination (cost :math:`g_L/2`). Two combinations first differing in a column of weight :math:`g_\\ell`
meet at level :math:`\\ell - 1`, at path length :math:`2 \\cdot g_\\ell/2 = W(c, c')`. With unit weights the
tree is one hub: every move between combinations costs 1.

:func:`mixed_grid_graph` joins the king's-move graph of each combination's numeric grid (arcs of cost
1/k, path metric the l_inf distance between centres) with this tree. Its path metric is

* **exactly** :math:`\\rho` when every weight is at least :math:`(k-1)/k`, the largest numeric distance
  between two centres (always with the default unit weights): then :math:`W(c, c') \\ge \\|z_a - z_b\\|_\\infty`
  for :math:`c \\ne c'`, the tree realises :math:`\\rho = W`, and a path through the tree between two cells of
  one combination costs :math:`g_L \\ge (k-1)/k`, never less than the grid path;
* otherwise (a *light* column, :math:`w_j < (k-1)/k`) the graph uses one tree per numeric cell and its
  path metric is :math:`\\rho' = \\|z_a - z_b\\|_\\infty + W(c, c')`, with :math:`\\rho \\le \\rho' \\le 2\\rho`: the
  projection is then exact for :math:`\\rho'`, not for :math:`\\rho`, and says so (``kind = "sum"``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..grid import cell_centres
from .flows import grid_arcs

__all__ = ["MixedGraph", "mixed_grid_graph", "mixed_cell_costs", "mixed_diam", "exact_for_max",
           "combination_distances", "MIXED_KINDS"]

#: "max": the mixed metric itself; "sum": numeric distance plus category distance (light weights).
MIXED_KINDS = ("max", "sum")


def exact_for_max(k: int, weights: Sequence[float]) -> bool:
    """True when :func:`mixed_grid_graph` realises the mixed metric exactly: every weight is at least
    :math:`(k-1)/k` (the largest l_inf distance between two numeric cell centres)."""
    return not len(weights) or min(float(w) for w in weights) >= (k - 1) / k


def mixed_diam(weights: Sequence[float], kind: str = "max") -> float:
    """Diameter of :math:`[0,1]^d \\times C_1 \\times \\dots \\times C_m` in the metric of ``kind``:
    :math:`\\max(1, \\max_j w_j)` for the mixed metric, :math:`1 + \\max_j w_j` for the sum metric."""
    wmax = max((float(w) for w in weights), default=0.0)
    return max(1.0, wmax) if kind == "max" else 1.0 + wmax


def _digits(C: int, sizes: Sequence[int]) -> np.ndarray:
    """(C, m) category indices of every combination (row-major, first column most significant)."""
    out = np.empty((C, len(sizes)), dtype=np.int64)
    rest = np.arange(C, dtype=np.int64)
    for j in range(len(sizes) - 1, -1, -1):
        out[:, j] = rest % int(sizes[j])
        rest //= int(sizes[j])
    return out


def combination_distances(sizes: Sequence[int], weights: Sequence[float]) -> np.ndarray:
    """(C, C) matrix of :math:`W(c, c') = \\max_{j: c_j \\ne c'_j} w_j` between all combinations."""
    C = int(np.prod(sizes, dtype=np.int64)) if len(sizes) else 1
    D = _digits(C, sizes)
    W = np.zeros((C, C))
    for j, w in enumerate(weights):
        W = np.maximum(W, float(w) * (D[:, j][:, None] != D[:, j][None, :]))
    return W


def mixed_cell_costs(k: int, d: int, sizes: Sequence[int], weights: Sequence[float], kind: str = "max") -> np.ndarray:
    """Dense (m, m) distances between the cell centres of the mixed grid, :math:`m = \\prod_j c_j \\cdot k^d`,
    in the metric of ``kind`` ("max": the mixed metric; "sum": l_inf plus W)."""
    Z = cell_centres(k, d)
    num = np.abs(Z[:, None, :] - Z[None, :, :]).max(axis=2)
    W = combination_distances(sizes, weights)
    K = Z.shape[0]
    big_num = np.tile(num, (W.shape[0], W.shape[0]))
    big_w = np.repeat(np.repeat(W, K, axis=0), K, axis=1)
    return np.maximum(big_num, big_w) if kind == "max" else big_num + big_w


@dataclass(frozen=True)
class MixedGraph:
    """A sparse graph on the m cells and ``extra`` tree nodes (numbered m, m+1, ...), arcs in both directions.

    ``kind``: "max" (path metric = the mixed metric between the centres) or "sum" (= l_inf + W);
    ``diam``: the space's diameter in that metric (:func:`mixed_diam`)."""

    src: np.ndarray
    dst: np.ndarray
    cost: np.ndarray
    cells: int
    extra: int
    kind: str
    diam: float


def _tree(sizes: Sequence[int], weights: Sequence[float]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray,
                                                                     float, int]:
    """The ultrametric tree of W (module docstring). Returns (child, parent, edge cost) of the tree edges
    (node ids from 0), the level-(L-1) node of every combination, the cost g_L/2 of a cell's edge, and
    the number of tree nodes."""
    groups = sorted({float(w) for w in weights}, reverse=True)  # g_1 > ... > g_L
    L = len(groups)
    C = int(np.prod(sizes, dtype=np.int64))
    D = _digits(C, sizes)
    key = np.zeros(C, dtype=np.int64)  # the level-l node of each combination (within its level)
    offset, child, parent, cost = 1, [], [], []  # node 0 is the root (level 0)
    prev_offset, prev_count = 0, 1
    for lev in range(1, L):
        cols = [j for j, w in enumerate(weights) if float(w) == groups[lev - 1]]
        radix = 1
        for j in cols:
            key = key * int(sizes[j]) + D[:, j]
            radix *= int(sizes[j])
        count = prev_count * radix
        nodes = np.arange(count, dtype=np.int64)
        child.append(offset + nodes)
        parent.append(prev_offset + nodes // radix)
        cost.append(np.full(count, (groups[lev - 1] - groups[lev]) / 2.0))
        prev_offset, prev_count = offset, count
        offset += count
    return (_cat(child, np.int64), _cat(parent, np.int64), _cat(cost, np.float64), prev_offset + key,
            groups[-1] / 2.0, offset)


def _cat(parts: list, dtype: type) -> np.ndarray:
    return np.concatenate(parts) if parts else np.zeros(0, dtype=dtype)


def mixed_grid_graph(k: int, d: int, sizes: Sequence[int], weights: Sequence[float]) -> MixedGraph:
    """The sparse graph of the mixed grid (module docstring): king's moves of cost 1/k inside every
    combination, plus the ultrametric tree of the categories (one shared tree when
    :func:`exact_for_max`, else one per numeric cell). Arcs: O(m 3^d) for the grids, 2m + 2 (tree edges)."""
    K = k**d
    C = int(np.prod(sizes, dtype=np.int64))
    m = C * K
    gs, gd = grid_arcs(k, d, "linf")
    offs = (np.arange(C, dtype=np.int64) * K)[:, None]
    src = [(gs[None, :] + offs).ravel()]
    dst = [(gd[None, :] + offs).ravel()]
    cost = [np.full(src[0].size, 1.0 / k)]
    t_child, t_parent, t_cost, leaf_of, cell_cost, T = _tree(sizes, weights)
    kind = "max" if exact_for_max(k, weights) else "sum"
    copies = 1 if kind == "max" else K
    cells = np.arange(m, dtype=np.int64)
    combo, a = np.divmod(cells, K)
    attach = m + (0 if kind == "max" else a * T) + leaf_of[combo]
    base = m + (np.arange(copies, dtype=np.int64) * T)[:, None]
    tc, tp = (t_child[None, :] + base).ravel(), (t_parent[None, :] + base).ravel()
    tw = np.tile(t_cost, copies)
    src += [cells, attach, tc, tp]
    dst += [attach, cells, tp, tc]
    cost += [np.full(m, cell_cost), np.full(m, cell_cost), tw, tw]
    return MixedGraph(np.concatenate(src), np.concatenate(dst), np.concatenate(cost), m, copies * T, kind,
                      mixed_diam(weights, kind))
