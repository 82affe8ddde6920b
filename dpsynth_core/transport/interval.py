"""``wasserstein1(method="interval")``: a proven interval for W1 between tables too large for the exact
methods, from every row, in seconds.

Beyond the exact methods' sizes the mixed metric and l2 have no grid. This method answers there
(:func:`dpsynth_core.transport.policy.plan_w1`) with two bounds, each computed without the n x m pairs:

* a proven **upper bound**, the cost of one transport plan (:func:`plan_upper_bound`): exact inside small
  dyadic cells, between cells at the largest distance their rows can have. It is the reported value: W1
  is at most this;
* a proven **lower bound** (:func:`marginal_lower_bound`): the one-column marginals' exact W1 (a function of
  one coordinate that is 1-Lipschitz on the line is 1-Lipschitz for the metric).

``certified=True`` (both ends are proven); ``exact`` only when they meet. docs/transport.md, "A proven
interval at any size", has the argument and the measured widths.
"""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Iterator
from typing import Any

import numpy as np

from ._common import KDTREE_P, POT_ITERMAX, W1Result, pairwise
from .exact1d import w1_1d
from .metrics import GroundMetric, MixedMetric, ground_metric

__all__ = ["solve", "solve_rounds", "plan_upper_bound", "plan_upper_bounds", "marginal_lower_bound", "CELL_ROWS",
           "CELL_WORK", "MAX_LEVELS", "STEPS"]

#: Most levels of the dyadic cells (side 2^-40 of the sets' extent: below float64's resolution of the
#: coordinates, where the rows of a cell coincide).
MAX_LEVELS = 40


def _relabel(key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Dense ids 0..k-1 of int64 keys (by sorting: NumPy 2's hash path of np.unique is slower on int64), and the
    stable order that sorts them (the ids rank the keys, so it sorts the ids too)."""
    order = np.argsort(key, kind="stable")
    ks = key[order]
    new = np.empty(ks.size, dtype=bool)
    new[:1] = True
    np.not_equal(ks[1:], ks[:-1], out=new[1:])
    ids = np.empty(key.size, dtype=np.int64)
    ids[order] = np.cumsum(new) - 1
    return ids, order


#: Rows (of both sets) in a cell of :func:`plan_upper_bound`, whose transport is solved exactly: CELL_WORK / N
#: within CELL_ROWS. Larger cells give a tighter bound and a slower one (a dense solve each, about cells^2
#: pairs), so N x cell rows -- the total work -- stays about the same at every N. Measured
#: (benchmarks/bench_transport.py --interval, benchmarks/results/interval_w1.json): on a 3 numeric + 2
#: categorical table against its PMM release, the upper end 1.29-1.40 times W1 at n = m = 5,000 to 20,000
#: and 19.5 s at n = m = 200,000 (load 10 on two cores).
CELL_ROWS = (1024, 4096)
CELL_WORK = 2**29
#: How many bounds :func:`plan_upper_bounds` gives while the cells' transports are solved (and one before).
STEPS = 20
_NORM = {"linf": lambda e: e.max(axis=-1), "l1": lambda e: e.sum(axis=-1),
         "l2": lambda e: np.sqrt((e * e).sum(axis=-1))}


def _cells(U: np.ndarray, cell_rows: int) -> list[np.ndarray]:
    """The rows of every leaf: dyadic cells of the unit cube split level by level until they hold at most
    ``cell_rows`` rows (or :data:`MAX_LEVELS` is reached, where the rows of a cell coincide)."""
    shifts = np.arange(U.shape[1], dtype=np.int64)
    gid = np.zeros(U.shape[0], dtype=np.int64)
    open_rows, leaves = np.arange(U.shape[0]), []
    for j in range(1, MAX_LEVELS + 1):
        if open_rows.size <= cell_rows:
            leaves.append(open_rows)
            break
        g = 2.0 ** j
        q = np.minimum(np.floor(U[open_rows] * g), g - 1).astype(np.int64)
        gid, order = _relabel(gid * (1 << U.shape[1]) + ((q & 1) << shifts).sum(axis=1))
        size = np.bincount(gid)
        done = (size <= cell_rows) if j < MAX_LEVELS else np.ones(size.size, dtype=bool)
        starts = np.concatenate([[0], np.cumsum(size)])
        leaves += [open_rows[order[starts[c]:starts[c + 1]]] for c in np.flatnonzero(done)]
        keep = ~done[gid]
        open_rows, gid = open_rows[keep], gid[keep]
        if open_rows.size == 0:
            break
    return leaves


def plan_upper_bound(X: np.ndarray, Y: np.ndarray, a: np.ndarray, b: np.ndarray, metric: Any, *,
                     cell_rows: int | None = None) -> tuple[float, dict]:
    """A proven upper bound on W1: the cost of one transport plan, exact inside small cells, between cells
    at the largest distance their rows can have.

    The rows are placed in coordinates where the metric is a norm of the coordinate differences
    (``metric.coordinates``: the mixed metric's embedding is l_inf exactly; l_p rows are their own). Their
    bounding cube is cut into dyadic cells, split level by level until each holds at most ``cell_rows`` rows
    of both sets together (:func:`_cells`). The plan: in every cell c a share
    :math:`r_c = \\min(\\mu(c), \\nu(c))` of both sides moves by the optimal plan of the cell (dense POT under
    the true metric: :math:`r_c W_1(\\mu_c, \\nu_c)` with :math:`\\mu_c, \\nu_c` the normalised restrictions);
    the excess :math:`(\\mu(c) - \\nu(c))_+` of one side moves to the other side's excess in other cells by
    the optimal transport between the cells' excesses for the cost :math:`D(c, c')`, the metric's norm of the
    extent of the bounding box of the rows of c and c' together -- no row of c is farther than that from a
    row of c'. Both parts are feasible transports, so their total cost bounds W1 from above:

    .. math:: W_1 \\le \\sum_c r_c W_1(\\mu_c, \\nu_c) + \\min_{\\gamma} \\sum_{c, c'} \\gamma_{cc'} D(c, c')

    (never above the diameter bound ``metric.bound``). ``cell_rows`` defaults to :data:`CELL_WORK` / (n + m)
    within :data:`CELL_ROWS`. Returns (bound, details): the last of :func:`plan_upper_bounds`.
    """
    return deque(plan_upper_bounds(X, Y, a, b, metric, cell_rows=cell_rows), maxlen=1)[0]


def plan_upper_bounds(X: np.ndarray, Y: np.ndarray, a: np.ndarray, b: np.ndarray, metric: Any, *,
                      cell_rows: int | None = None, steps: int = STEPS) -> Iterator[tuple[float, dict]]:
    """:func:`plan_upper_bound` while it is computed: proven upper bounds, each at most the one before, the
    last one :func:`plan_upper_bound`'s.

    The cells' exact transports take most of the time (about 90% at 200,000 + 200,000 rows). Before a cell's
    transport is solved its share :math:`r_c` still moves inside the cell at no more than the metric's norm of
    the cell's own extent, :math:`D(c, c)` (no two rows of c are farther apart), so
    :math:`\\sum_{c \\text{ solved}} r_c W_1(\\mu_c, \\nu_c) + \\sum_{c \\text{ not yet}} r_c D(c, c)` plus the
    part between cells is the cost of a feasible plan at every moment. The cells are solved largest term
    first, and a bound is given before the first one and after every ``steps``-th part of them:
    ``details["cells_solved"]`` of ``details["cells"]`` say how far it is (a front end's progress).
    The order changes nothing in the last bound (``math.fsum`` is exact)."""
    gm: GroundMetric = ground_metric(metric)
    diam = float(gm.bound(X, Y))
    if cell_rows is None:
        cell_rows = int(np.clip(CELL_WORK // (X.shape[0] + Y.shape[0]), *CELL_ROWS))
    if type(gm).coordinates is GroundMetric.coordinates:
        yield diam, {"upper_from": "the diameter"}
        return
    Z = np.concatenate([gm.coordinates(X), gm.coordinates(Y)])
    lo = Z.min(axis=0)
    S = float((Z.max(axis=0) - lo).max())
    if S == 0.0 or Z.shape[1] > 40:  # all rows equal, or too many coordinates for the cells' keys
        yield diam, {"upper_from": "the diameter"}
        return
    norm = _NORM["linf" if isinstance(gm, MixedMetric) else getattr(gm, "name", "linf")]
    n, w = X.shape[0], np.concatenate([a, -b])
    cost = _cell_costs(X, Y, Z, gm)
    leaves = _cells((Z - lo) / S, cell_rows)
    excess = np.array([math.fsum(w[rows]) for rows in leaves])
    box_lo = np.array([Z[rows].min(axis=0) for rows in leaves])
    box_hi = np.array([Z[rows].max(axis=0) for rows in leaves])
    between = _between_cost(excess, box_lo, box_hi, norm)
    share = np.array([min(math.fsum(a[rows[rows < n]]), math.fsum(b[rows[rows >= n] - n])) for rows in leaves])
    pending = share * norm(box_hi - box_lo)  # each cell's term before its transport is solved
    about = {"upper_from": f"exact transport inside cells of at most {cell_rows} rows, the cells' excesses moved "
                           "at the largest distance between their rows", "cells": len(leaves),
             "between_cost": between}
    order = np.argsort(-pending, kind="stable")
    solved = np.zeros(len(leaves))
    marks = set(np.linspace(0, len(leaves), max(int(steps), 1) + 1).round().astype(int).tolist())
    best = math.inf
    for k in range(len(leaves) + 1):
        if k in marks:
            done = order[:k]
            inside = math.fsum([*solved[done].tolist(), *np.delete(pending, done).tolist()])
            bound = min(diam, (inside + between) * (1 + 1e-9))
            best = min(best, bound)
            yield best, {**about, "cells_solved": k, **({"inside_cost": inside} if k == len(leaves) else {})}
        if k < len(leaves):
            rows = leaves[order[k]]
            solved[order[k]] = _leaf_cost(a, b, rows[rows < n], rows[rows >= n] - n, cost)


def _between_cost(excess: np.ndarray, lo: np.ndarray, hi: np.ndarray, norm) -> float:
    """The optimal transport of the cells' positive excesses to their negative ones, for the cost D(c, c')
    (the norm of the extent of the two cells' bounding box together). Any feasible plan would do; POT's is
    optimal."""
    import ot

    src, dst = np.flatnonzero(excess > 0), np.flatnonzero(excess < 0)
    if src.size == 0 or dst.size == 0:
        return 0.0
    ext = np.maximum(hi[src][:, None, :], hi[dst][None, :, :]) - np.minimum(lo[src][:, None, :], lo[dst][None, :, :])
    D = norm(ext)
    p, q = excess[src], -excess[dst]
    t = min(float(p.sum()), float(q.sum()))  # equal up to rounding: the plan moves the smaller total
    G = ot.emd(p / p.sum(), q / q.sum(), D, numItermax=POT_ITERMAX)
    return t * float(np.sum(G * D)) + abs(float(p.sum()) - float(q.sum())) * float(D.max())


def _cell_costs(X: np.ndarray, Y: np.ndarray, Z: np.ndarray, gm: GroundMetric):
    """``cost(ix, iy)``: the metric's (len(ix), len(iy)) matrix between rows ix of X and iy of Y. Where the metric is
    an l_p distance of its coordinates ``Z`` (X's rows, then Y's; the mixed metric's embedding is l_inf exactly),
    SciPy's cdist on the rows of Z: the same numbers as ``gm.pairwise``, without embedding each cell's rows
    again; ``gm.pairwise`` otherwise."""
    n = X.shape[0]
    name = {p: nm for nm, p in KDTREE_P.items()}.get(gm.kdtree_p)
    if name is None:
        return lambda ix, iy: gm.pairwise(X[ix], Y[iy])
    return lambda ix, iy: pairwise(Z[ix], Z[n + iy], name)


def _leaf_cost(a: np.ndarray, b: np.ndarray, ix: np.ndarray, iy: np.ndarray, cost) -> float:
    """:math:`r_c W_1(\\mu_c, \\nu_c)` of one cell (rows ix of X, iy of Y; ``cost`` from :func:`_cell_costs`): the
    cost of POT's optimal plan between the normalised restrictions, times the smaller of the two masses (0 when a
    side is empty). Any feasible plan's cost is an upper bound, so its optimality is not needed. POT's checks of the
    marginals and its centring of the dual potentials are skipped: the masses are normalised here and the
    potentials are not used (the plan is the same)."""
    import ot

    if ix.size == 0 or iy.size == 0:
        return 0.0
    p, q = a[ix], b[iy]
    r = min(float(p.sum()), float(q.sum()))
    if r <= 0.0:
        return 0.0
    M = cost(ix, iy)
    G = ot.emd(p / p.sum(), q / q.sum(), M, numItermax=POT_ITERMAX, center_dual=False, check_marginals=False)
    return r * float(np.sum(G * M))


def marginal_lower_bound(X: np.ndarray, Y: np.ndarray, a: np.ndarray, b: np.ndarray, metric: Any) -> float:
    """A proven lower bound from the one-column marginals, exact at any size: a function of one numeric
    coordinate that is 1-Lipschitz on the line is 1-Lipschitz for l_inf, l2 and the mixed metric, so W1 is at
    least every numeric column's own W1 (:func:`.exact1d.w1_1d`); a sum of such functions is 1-Lipschitz for
    l1 (W1 >= their sum); a category's indicator is 1/w_j-Lipschitz under the mixed metric (W1 >= w_j times
    the column's total variation). 0 for a metric that is none of these."""
    gm = ground_metric(metric)
    name = getattr(gm, "name", "")
    if isinstance(gm, MixedMetric):
        numeric, cats = gm.numeric.tolist(), gm.categorical.tolist()
    elif name in ("linf", "l1", "l2"):
        numeric, cats = list(range(X.shape[1])), []
    else:
        return 0.0
    one = [w1_1d(X[:, k], Y[:, k], a, b) for k in numeric]
    if name == "l1":
        return max(0.0, math.fsum(one) * (1 - 1e-12))
    for j in cats:
        size = int(gm.sizes[j])
        p = np.bincount(X[:, j].astype(np.int64), weights=a, minlength=size)
        q = np.bincount(Y[:, j].astype(np.int64), weights=b, minlength=size)
        one.append(float(gm.weights[j]) * 0.5 * float(np.abs(p - q).sum()))
    return max(0.0, max(one, default=0.0) * (1 - 1e-12))


def solve(X: np.ndarray, Y: np.ndarray, a: np.ndarray, b: np.ndarray, metric: Any, owner: str) -> W1Result:
    """``wasserstein1(method="interval")`` (the module docstring): the value is the proven upper end."""
    return deque(solve_rounds(X, Y, a, b, metric, owner), maxlen=1)[0]


def solve_rounds(X: np.ndarray, Y: np.ndarray, a: np.ndarray, b: np.ndarray, metric: Any,
                 owner: str) -> Iterator[W1Result]:
    """:func:`solve` while it is computed: a proven interval as soon as the cells are known, narrower ones as
    their transports are solved (:func:`plan_upper_bounds`), the last one :func:`solve`'s. Every result is
    certified; ``details["cells_solved"]`` of ``details["cells"]`` say how far the computation is."""
    t0 = time.perf_counter()
    gm = ground_metric(metric)
    lower = marginal_lower_bound(X, Y, a, b, gm)
    scale = max(1.0, float(gm.bound(X, Y)))
    for upper, details in plan_upper_bounds(X, Y, a, b, gm):
        upper = max(upper, lower)
        exact = upper - lower <= 1e-12 * scale
        details = {"formulation": "a feasible plan's cost above (exact transport inside cells), the one-column "
                                  "marginals' W1 below", "lower_from": "the one-column marginals", **details}
        yield W1Result(float(upper), float(lower), float(upper), "interval", bool(exact), True, 1,
                       time.perf_counter() - t0, details)
