"""The wide-table fit: a tree of 2-way tables, exact and without an iterative solver.

Beyond :data:`~.fit.DENSE_MAX_CELLS` cells the coarse joint grid cannot be built. The wide model keeps the
same noisy tables (every fine 1-way table and every coarse 2-way table, measured as for the dense fit) and
fits a distribution that factorises over a tree of columns [CL68]:

.. math:: p(x) = \\prod_{(u,v) \\in E} p_{uv}(x_u, x_v) \\Big/ \\prod_{v} p_v(x_v)^{\\deg v - 1}.

1. **Column margins.** Each column's coarse 1-way distribution is the inverse-variance weighted mean of
   every noisy table that holds it (its fine 1-way table summed into coarse bins, and the row or column
   sums of its d - 1 pair tables), projected onto {x >= 0, Σx = N} (:func:`~.sampling.simplex_projection`).
2. **The tree.** The maximum spanning tree (SciPy's ``minimum_spanning_tree`` on reversed weights) of the
   pairs' dependence: the L1 distance of the noisy pair table from the product of its column margins,
   minus that distance's expected value under the noise alone (a pair of independent columns scores
   about 0 whatever its number of cells). This reads only the noisy tables: the tree is post-processing
   and costs no privacy (the selection of MST [MMS21] spends budget because MST does not measure every
   pair; here every pair is measured, which the certificate needs).
3. **Edge tables.** Each tree pair's noisy table, clipped at 0, is raked (iterative proportional fitting,
   the KL projection onto the tables with given margins) to the two column margins of step 1, so all the
   tables agree where they overlap and the tree formula above is a distribution with exactly these
   margins. Raking is written here because SciPy and NumPy have none; it is a few lines on C × C tables.
4. **Sampling** is ancestral from a root, with largest-remainder counts at every step (each parent bin's
   children within one row of their conditional share), as the dense model does on the joint.

The interface is the dense model's (:class:`~.fit.DenseJoint`): ``marginal(axes)`` in counts and
``sample(m, rng)`` rows of coarse cells. A pair off the tree has the marginal the tree implies (the
columns are independent given the path between them): pairs the tree misses lose their dependence beyond
that, and the certificate (which covers every pair) shows it.

References: [CL68] C. Chow, C. Liu. Approximating discrete probability distributions with dependence trees.
IEEE Trans. Inf. Theory 1968. [MMS21] R. McKenna, G. Miklau, D. Sheldon. Winning the NIST contest: a
scalable and general approach to differentially private synthetic data. JPC 2021. See docs/references.md.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import breadth_first_order, minimum_spanning_tree

from ...grid import largest_remainder
from .fit import Measurement
from .sampling import simplex_projection

__all__ = ["TreeJoint", "fit_tree", "column_margins", "spanning_tree", "rake"]

#: Expected |Z| over the s.d. of a centred Gaussian Z: √(2/π) (the noise's expected L1 per cell, used as
#: the offset of the dependence score; for the discrete Laplace it is a close, slightly larger figure).
_ABS_MEAN = math.sqrt(2.0 / math.pi)


def column_margins(shape: tuple[int, ...], measurements: list[Measurement], total: float) -> list[np.ndarray]:
    """Step 1: every column's coarse distribution (probabilities) from all the noisy tables that hold it."""
    num = [np.zeros(c) for c in shape]
    den = [np.zeros(c) for c in shape]
    for m in measurements:
        for k, axis in enumerate(m.axes):
            other = tuple(a for a in range(len(m.axes)) if a != k)
            values = m.values.sum(axis=other) if other else m.values
            var = m.variance.sum(axis=other) if other else m.variance
            num[axis] += values / var
            den[axis] += 1.0 / var
    out = []
    for a, b in zip(num, den, strict=True):
        x = simplex_projection(a / b, total) / max(total, 1e-300)
        out.append(x if x.sum() > 0 else np.full(a.size, 1.0 / a.size))
    return out


def _dependence(m: Measurement, margins: list[np.ndarray], total: float) -> float:
    """Step 2's score of one pair: the L1 distance of its noisy table from independence, less its expected
    value under the noise alone, over N."""
    i, j = m.axes
    indep = total * np.outer(margins[i], margins[j])
    return float(np.abs(m.values - indep).sum() - _ABS_MEAN * np.sqrt(m.variance).sum()) / total


def spanning_tree(d: int, pairs: list[tuple[int, int]], scores: list[float]) -> list[tuple[int, int]]:
    """The maximum spanning tree of the complete graph on ``d`` columns with the given pair scores (SciPy:
    the minimum spanning tree of ``top - score``, all weights positive so that no edge reads as absent)."""
    s = np.asarray(scores, dtype=float)
    weights = (s.max() + 1.0) - s
    rows, cols = zip(*pairs, strict=True)
    graph = csr_matrix((weights, (rows, cols)), shape=(d, d))
    tree = minimum_spanning_tree(graph).tocoo()
    return sorted((int(min(a, b)), int(max(a, b))) for a, b in zip(tree.row, tree.col, strict=True))


def rake(table: np.ndarray, rows: np.ndarray, cols: np.ndarray, *, iterations: int = 1000,
         tol: float = 1e-12) -> np.ndarray:
    """Step 3: iterative proportional fitting of a non-negative table to row sums ``rows`` and column sums
    ``cols`` (equal totals). A tiny floor keeps every cell positive, so a row whose noisy counts all
    clipped to 0 takes the column margins' shape (independence) instead of staying empty."""
    total = float(rows.sum())
    x = np.maximum(table, 0.0) + 1e-9 * max(total, 1e-300) / table.size
    for _ in range(iterations):
        x *= _ratio(rows, x.sum(axis=1))[:, None]
        x *= _ratio(cols, x.sum(axis=0))[None, :]
        if np.abs(x.sum(axis=1) - rows).max() <= tol * max(total, 1e-300):
            break
    return x


def _ratio(target: np.ndarray, current: np.ndarray) -> np.ndarray:
    """target / current, 0 where the current sum is 0 (a margin of 0 empties its row or column)."""
    return np.divide(target, current, out=np.zeros_like(target, dtype=float), where=current > 0)


@dataclass
class TreeJoint:
    """A distribution that factorises over a tree of columns (module docstring).

    ``margins[v]`` is column v's coarse distribution; ``edges`` the tree's pairs (i < j) and ``tables`` their
    joint distributions (C_i, C_j); ``order`` a breadth-first order from column 0 and ``parent[v]`` v's
    parent in it (-1 at the root); ``total`` the size it stands for."""

    margins: list
    edges: list
    tables: list
    order: np.ndarray
    parent: np.ndarray
    total: float
    iterations: int = 0
    scores: list | None = None

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(m.size for m in self.margins)

    @property
    def cells(self) -> int:
        """Numbers the model holds (margins and edge tables)."""
        return sum(m.size for m in self.margins) + sum(t.size for t in self.tables)

    def _table(self, u: int, v: int) -> np.ndarray:
        """The edge table oriented (u, v)."""
        k = self.edges.index((min(u, v), max(u, v)))
        return self.tables[k] if u < v else self.tables[k].T

    def conditional(self, u: int, v: int) -> np.ndarray:
        """P(x_v | x_u) for a tree edge, rows indexed by u's bin (v's margin where u's bin has no mass)."""
        t = self._table(u, v)
        pu = t.sum(axis=1, keepdims=True)
        return np.where(pu > 0, t / np.where(pu > 0, pu, 1.0), self.margins[v][None, :])

    def _path(self, i: int, j: int) -> list[int]:
        """The columns on the tree path from i to j."""
        up_i, up_j = [i], [j]
        while self.parent[up_i[-1]] >= 0:
            up_i.append(int(self.parent[up_i[-1]]))
        while self.parent[up_j[-1]] >= 0:
            up_j.append(int(self.parent[up_j[-1]]))
        common = next(v for v in up_i if v in up_j)
        return up_i[:up_i.index(common) + 1] + up_j[:up_j.index(common)][::-1]

    def marginal(self, axes: tuple[int, ...]) -> np.ndarray:
        """The model's table over one or two columns (sorted), in counts of ``total`` records; a pair off
        the tree is the product of the conditionals along the path between them."""
        axes = tuple(sorted(axes))
        if len(axes) == 1:
            return self.margins[axes[0]] * self.total
        i, j = axes
        path = self._path(i, j)
        out = np.diag(self.margins[i])
        for u, v in zip(path[:-1], path[1:], strict=True):
            out = out @ self.conditional(u, v)
        return out * self.total

    def sample(self, m: int, rng: np.random.Generator) -> np.ndarray:
        """``m`` rows of coarse cells (m, d), ancestral from the root: the root's bins by largest remainder
        of m p_root; for each child, the rows of each parent bin by largest remainder of the conditional;
        each in random order."""
        d = len(self.margins)
        out = np.empty((int(m), d), dtype=np.int64)
        root = int(self.order[0])
        first = np.repeat(np.arange(self.margins[root].size), largest_remainder(self.margins[root], int(m)))
        out[:, root] = first[rng.permutation(first.size)]
        for v in self.order[1:]:
            u = int(self.parent[v])
            cond = self.conditional(u, int(v))
            col = np.empty(int(m), dtype=np.int64)
            by = np.argsort(out[:, u], kind="stable")
            sizes = np.bincount(out[:, u], minlength=cond.shape[0])
            start = 0
            for b, k in enumerate(sizes):
                if k:
                    picks = np.repeat(np.arange(cond.shape[1]), largest_remainder(cond[b], int(k)))
                    col[by[start:start + k]] = picks[rng.permutation(int(k))]
                start += k
            out[:, v] = col
        return out


def fit_tree(shape: tuple[int, ...], measurements: list[Measurement], total: float) -> TreeJoint:
    """The tree model of the noisy tables (module docstring, steps 1-3): ``measurements`` as for
    :func:`~.fit.fit_dense` (each column's coarse-summed 1-way table and every pair's 2-way table)."""
    d = len(shape)
    margins = column_margins(shape, measurements, total)
    two = {m.axes: m for m in measurements if len(m.axes) == 2}
    pairs = sorted(two)
    scores = [_dependence(two[pr], margins, total) for pr in pairs]
    edges = spanning_tree(d, pairs, scores) if d > 1 else []
    tables = []
    for i, j in edges:
        t = rake(two[(i, j)].values, margins[i] * total, margins[j] * total)
        tables.append(t / t.sum())
    if edges:
        r, c = zip(*edges, strict=True)
        graph = csr_matrix((np.ones(len(edges)), (r, c)), shape=(d, d))
        order, pred = breadth_first_order(graph, 0, directed=False, return_predecessors=True)
    else:
        order, pred = np.zeros(1, dtype=np.int64), np.full(1, -9999)
    parent = np.where(pred < 0, -1, pred).astype(np.int64)
    return TreeJoint(margins=margins, edges=edges, tables=tables, order=np.asarray(order, dtype=np.int64),
                     parent=parent, total=float(total), scores=scores)
