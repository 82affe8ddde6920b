"""Exact W1 between point clouds as a sparse min-cost transshipment, with a dual certificate.

Because the ground cost is a metric, W1 is also the min-cost flow on the complete graph over
:math:`Z = X \\cup Y` with supplies :math:`a` on X and demands :math:`b` on Y: mass may pass through
intermediate points, which by the triangle inequality never helps, so the optima agree. On a
k-nearest-neighbour graph long moves run as chains of short arcs, so a few arcs per point carry an
almost optimal flow from the first solve on. :func:`w1_rounds` then works in rounds:

1. **Graph.** The k nearest neighbours of every point of Z, as arcs in both directions, plus the
   north-west-corner plan along a Morton (space-filling-curve) order of Z: a feasible X -> Y plan, so
   the flow problem is feasible on any data (a kNN graph alone can be disconnected).
2. **Solve** the min-cost flow on the graph exactly with LEMON's network simplex [Kov15] (``pylmcf``):
   integer supplies (exact for uniform and count-like weights, otherwise rounded to 2^-52 along the
   Morton order), integer costs at 2^-40 of the point sets' diameter, capacities far above the flow.
3. **Certificate**, recomputed in float64 so that it does not depend on the integer rounding:
   *upper bound* = the float64 cost of the flow plus, when the supplies were rounded, the cost of
   moving the rounding residual along the Morton path (together a feasible transport of the given
   measures); *lower bound* = the best dual over **all** n x m pairs obtained from the solver's node
   potentials by the c-transform :math:`\\psi_i = \\min_j c(x_i, y_j) - v_j` (and the same from the other
   side), computed exactly by kd-tree branch and bound without forming the pairs
   (:mod:`.metrics`), minus a margin for the rounding of the distances.
4. **Column generation.** Pairs whose dual constraint is violated (the few most violated of each row
   and column) are added as direct arcs and the flow is solved again, until the bracket is narrower
   than ``rtol`` W1 (+ 1e-12 diam): then ``exact`` and ``certified``. Every round yields its bracket,
   so a caller may stop early with a proven interval.
5. **Bipartite phase** (l2): once a bracket is within 0.1%, the graphs are X -> Y only, grown from the
   c-transforms' smallest-slack lists (:meth:`_Solver.to_bipartite`).
6. **Warm solves**: a round whose graph only grew is solved from the last optimum's basis by
   :mod:`._simplex` instead of LEMON's cold start (:meth:`_Solver.solve`).

The ground metric is an object (:class:`.metrics.GroundMetric`): the solver only asks it for arc
costs, nearest neighbours and c-transforms. See docs/transport.md, "Exact W1 by sparse transshipment".
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Iterator

import numpy as np

from ._common import KDTREE_P, POT_ITERMAX, pairwise
from ._simplex import build_tree, flow_is_feasible, pivot
from .metrics import GroundMetric, ground_metric

__all__ = ["Round", "w1_rounds", "transshipment_w1", "integer_masses", "DEFAULT_RTOL"]

#: Relative width below which a bracket is reported as the exact W1.
DEFAULT_RTOL = 1e-10
#: Integer costs: the diameter of the point sets is 2^COST_BITS units.
COST_BITS = 40
#: Total supply when the weights have no small common denominator: masses resolved to 2^-52.
SUPPLY_BITS = 52


@dataclass
class Round:
    """One round of :func:`w1_rounds`: a proven bracket and what it cost."""

    round: int
    lower: float
    upper: float
    certified: bool
    seconds: float
    arcs: int
    added: int = 0
    solve_s: float = 0.0
    check_s: float = 0.0
    details: dict = field(default_factory=dict)

    @property
    def rel_width(self) -> float:
        return (self.upper - self.lower) / self.upper if self.upper > 0 else 0.0


def _morton_order(U: np.ndarray, bits: int = 10) -> np.ndarray:
    """Order of the rows of U along a Z-order (Morton) curve of their bounding box."""
    lo = U.min(axis=0)
    span = np.maximum(U.max(axis=0) - lo, 1e-300)
    d = U.shape[1]
    bits = max(1, min(bits, 62 // max(1, d)))
    q = np.clip(((U - lo) / span * (2**bits - 1)).astype(np.int64), 0, 2**bits - 1)
    code = np.zeros(U.shape[0], dtype=np.int64)
    for bit in range(bits - 1, -1, -1):
        for ax in range(d):
            code = (code << 1) | ((q[:, ax] >> bit) & 1)
    return np.argsort(code, kind="stable")


def _merge_duplicates(P: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Identical rows merged into one with their summed weight (exact: W1 does not change). A cloud of
    copies would otherwise fill every point's k nearest neighbours with copies at distance 0."""
    U, inv = np.unique(P, axis=0, return_inverse=True)
    if U.shape[0] == P.shape[0]:
        return P, w
    return U, np.bincount(inv.ravel(), weights=w, minlength=U.shape[0])


def _counts(w: np.ndarray, max_mult: int = 12) -> np.ndarray | None:
    """Integer counts c with w = c / sum(c) to 1e-12 relative (uniform or count-like weights), or None."""
    q = w / w.min()
    for mult in range(1, max_mult + 1):
        c = np.rint(q * mult)
        if np.all(np.abs(q * mult - c) <= 1e-12 * c) and c.sum() < 2**40:
            return c.astype(np.int64)
    return None


def integer_masses(a: np.ndarray, b: np.ndarray, order_a: np.ndarray, order_b: np.ndarray):
    """Integer supplies (sa, sb) with equal totals T approximating the probability vectors a, b.

    Exact (up to the float rounding of a, b) when both are count-like (:func:`_counts`) and the common
    total fits; otherwise T = 2^52 and the masses are rounded along the given orders (error diffusion:
    every partial sum along the order is within 1/(2T) of the true one). Returns (sa, sb, T, exact)."""
    ca, cb = _counts(a), _counts(b)
    if ca is not None and cb is not None:
        Wa, Wb = int(ca.sum()), int(cb.sum())
        g = math.gcd(Wa, Wb)
        T = Wa // g * Wb
        if T <= 2**SUPPLY_BITS:
            return ca * (Wb // g), cb * (Wa // g), T, True
    T = 2**SUPPLY_BITS

    def diffuse(w, order):
        cum = np.cumsum(w[order])
        t = np.rint(cum / cum[-1] * T).astype(np.int64)
        t[-1] = T
        s = np.empty(w.size, dtype=np.int64)
        s[order] = np.diff(np.concatenate([[0], t]))
        return s

    return diffuse(a, order_a), diffuse(b, order_b), T, False


def _unique_keys(x: np.ndarray) -> np.ndarray:
    """Sorted distinct values of a 1-D integer array (arc keys). ``np.unique`` on int64 takes a hash
    path in NumPy 2.x that measured 27x slower than sorting for 250,000 keys (45 ms against 1.7 ms)."""
    x = np.sort(np.asarray(x).ravel())
    if x.size < 2:
        return x
    first = np.empty(x.size, dtype=bool)
    first[0] = True
    np.not_equal(x[1:], x[:-1], out=first[1:])
    return x[first]


def _merge(key: np.ndarray, ckey: np.ndarray, extra: np.ndarray, cost) -> tuple[np.ndarray, np.ndarray]:
    """The sorted union of the arc keys ``key`` (sorted, with costs ``ckey``) and ``extra``, with costs
    (computed for the new keys only)."""
    if extra.size == 0:
        return key, ckey
    extra = _unique_keys(extra)
    at = np.minimum(np.searchsorted(key, extra), max(key.size - 1, 0))
    extra = extra[key[at] != extra] if key.size else extra
    if extra.size == 0:
        return key, ckey
    allk = np.concatenate([key, extra])
    order = np.argsort(allk, kind="stable")  # two sorted runs: a linear merge
    return allk[order], np.concatenate([ckey, cost(extra)])[order]


def _nw_corner(sa: np.ndarray, sb: np.ndarray, oa: np.ndarray, ob: np.ndarray):
    """Arcs (i, j) of the north-west-corner plan of integer masses along the orders oa, ob (n + m - 1
    arcs at most): a feasible transport plan, used to make every restricted problem feasible."""
    ca = np.cumsum(sa[oa])
    cb = np.cumsum(sb[ob])
    starts = _unique_keys(np.concatenate([[0], ca[:-1], cb[:-1]]))
    i = np.searchsorted(ca, starts, side="right")
    j = np.searchsorted(cb, starts, side="right")
    return oa[i], ob[j]


#: The bipartite phase starts once a bracket is this narrow (relative width): from a wider one the
#: smallest-slack lists of the check miss many of the optimal pairs and the next flow can be far worse
#: (l2, "skew", benchmarks/bench_transport.py: at n = 2*10^4 switching after a 0.79% bracket took 12
#: rounds and 64 s, after 0.077% 7 rounds and 25 s, never 29.5 s; at 5000, 0.90 s, 1.01 s and 1.3 s; at
#: 10^4, 4.7 s, 4.6 s and 7.0 s).
BIPARTITE_FROM = 0.001

#: A warm solve by :mod:`._simplex` gives up (LEMON solves instead) after this many pivots per node,
#: and is not tried when the round adds more than TREE_MAX_NEW arcs per arc of the last graph (n = 5000,
#: about 3.5 microseconds a pivot: a round adding 20-30% to the graph took 7,000-22,000 pivots,
#: 0.06-0.14 s, against LEMON's cold 0.10-0.20 s; the l2 round that doubles it ran past 40,000 pivots).
TREE_MAX_PIVOTS = 4
TREE_MAX_NEW = 0.5
#: Pivots per call of the compiled loop, between two looks at the clock.
TREE_CHUNK = 2000
#: ... and gives up once it has taken this many times LEMON's (estimated) cold solve of the round.
TREE_TIME_FACTOR = 3.0

#: Cells of the coarse start: about this many (dense POT between the occupied cells of X and Y takes
#: ~0.03 s; 300-1000 measured at n = 5000, 700 the fastest to a 1% bracket on l_inf and l2).
COARSE_MAX_CELLS = 700


def _cells(P: np.ndarray, w: np.ndarray, lo: np.ndarray, span: np.ndarray, g: int):
    """The occupied cells of a g^d grid over the box (lo, lo + span): every row's cell, and each cell's
    mass and w-weighted mean."""
    d = P.shape[1]
    q = np.clip(((P - lo) / span * g).astype(np.int64), 0, g - 1)
    _, inv = np.unique(np.ravel_multi_index(q.T, (g,) * d), return_inverse=True)
    inv = inv.ravel()
    mass = np.bincount(inv, weights=w)
    mean = np.stack([np.bincount(inv, weights=w * P[:, t]) for t in range(d)], axis=1) / mass[:, None]
    return inv, mass, mean


#: Most coarse moves per point: a cell sending to more cells hands them out round-robin among its points,
#: so the queries stay below this many per point (a point mass against a spread set would otherwise ask
#: n x 700 of them).
COARSE_MOVES_PER_POINT = 8


def _shifted_queries(cell: np.ndarray, sup_from: np.ndarray, sup_to: np.ndarray, n_from: int):
    """Pairs (p, J): for every point p, the coarse moves (cell[p], J) of the plan's support, at most
    :data:`COARSE_MOVES_PER_POINT` of them (round-robin over the cell's points when it has more).
    sup_from/sup_to: the support's pairs sorted by sup_from."""
    start = np.searchsorted(sup_from, np.arange(n_from + 1))
    deg = np.diff(start)[cell]
    reps = np.minimum(deg, COARSE_MOVES_PER_POINT)
    pts = np.repeat(np.arange(cell.size), reps)
    off = np.arange(pts.size) - np.repeat(np.cumsum(reps) - reps, reps)
    off = (off + pts * COARSE_MOVES_PER_POINT) % deg[pts]
    return pts, sup_to[start[cell[pts]] + off]


def _coarse_arcs(X, Y, a, b, metric: GroundMetric, cells: int, q: int) -> np.ndarray:
    """Arcs X -> Y suggested by a coarse solution (the coarse start of :func:`w1_rounds`).

    Both point sets are binned on a common grid of about ``cells`` cells (in the metric's
    :meth:`~.metrics.GroundMetric.coordinates`); dense POT solves the transport between the occupied
    cells (masses at their weighted means). For every point x in a cell I and every cell J that I
    sends mass to, x gets arcs to the q points of Y nearest to x + (mean_J - mean_I), and the same
    from the side of Y: the long moves of the plan as direct arcs, so the first solve is already within
    about 1% of W1 where a kNN graph alone routes them as chains (benchmarks/bench_transport.py). Only a
    heuristic for the graph: exactness and the bracket come from the certificate as before.
    Returns arc keys i * (n + m) + n + j."""
    import ot
    from scipy.spatial import cKDTree

    n, m = X.shape[0], Y.shape[0]
    U, V = metric.coordinates(X), metric.coordinates(Y)
    lo = np.minimum(U.min(axis=0), V.min(axis=0))
    span = np.maximum(np.maximum(U.max(axis=0), V.max(axis=0)) - lo, 1e-300)
    d = U.shape[1]
    g = max(2, int(round(cells ** (1.0 / d))))
    ix, wa, ca = _cells(U, a, lo, span, g)
    iy, wb, cb = _cells(V, b, lo, span, g)
    name = {p: nm for nm, p in KDTREE_P.items()}[metric.kdtree_p]  # the l_p of the coordinates
    P = ot.emd(wa / wa.sum(), wb / wb.sum(), pairwise(ca, cb, name), numItermax=POT_ITERMAX)
    ci, cj = np.nonzero(P > 0)  # the coarse plan's support: cell ci of X sends to cell cj of Y
    q = min(q, m, n)
    pts, to = _shifted_queries(ix, ci, cj, wa.size)
    _, nj = cKDTree(V).query(U[pts] + (cb[to] - ca[ix[pts]]), k=q, p=metric.kdtree_p, workers=-1)
    o = np.argsort(cj, kind="stable")
    pts2, fr = _shifted_queries(iy, cj[o], ci[o], wb.size)
    _, ni = cKDTree(U).query(V[pts2] - (cb[iy[pts2]] - ca[fr]), k=q, p=metric.kdtree_p, workers=-1)
    N = n + m
    src = np.concatenate([np.repeat(pts, q), np.asarray(ni, dtype=np.int64).ravel()])
    dst = np.concatenate([np.asarray(nj, dtype=np.int64).ravel(), np.repeat(pts2, q)])
    return src * N + n + dst


def _repair_cost(Z: np.ndarray, resid: np.ndarray, order: np.ndarray, metric: GroundMetric) -> float:
    """Cost of a flow along the path ``order`` of Z that moves the residual masses ``resid`` (true
    minus integer/T) into balance: sum over path steps of |partial sum| x step length."""
    if not np.any(resid):
        return 0.0
    part = np.cumsum(resid[order])[:-1]
    step = metric.cost(Z[order[:-1]], Z[order[1:]])
    return math.fsum(np.abs(part) * step)


def w1_rounds(X: np.ndarray, Y: np.ndarray, a: np.ndarray, b: np.ndarray, metric, *, k: int | None = None,
              start: str = "auto", coarse_q: int = 2, rtol: float = DEFAULT_RTOL, max_rounds: int = 60,
              add_per_row: int | None = None,
              add_per_col: int | None = None, pool_k: int = 4, warm_starts: bool = False,
              warm_share: float = 0.9, double_transform: bool = False,
              target: float | None = None, bipartite: int | None = None,
              tree_warm: bool | None = None) -> Iterator[Round]:
    """Successive certified brackets of W1 between sum_i a_i delta_{x_i} and sum_j b_j delta_{y_j}.

    Yields one :class:`Round` per solve; the last one is certified (``certified=True``, bracket width
    at most rtol W1 + 1e-12 diam) unless ``max_rounds`` ran out or the integer costs cannot resolve the
    remaining gap (both reported in the last round's details). a and b are probability vectors;
    ``metric`` a name or a :class:`.metrics.GroundMetric`.

    ``start``: ``"coarse"`` adds the arcs of a coarse solution (:func:`_coarse_arcs`, ``coarse_q``
    targets per point and coarse move) to the kNN graph: the first bracket is about 1% wide where the
    kNN graph alone gives about 10% on data whose mass travels far, at ~0.1 s more set-up (n = 5000);
    ``"knn"`` builds the kNN graph alone; ``"auto"`` (default) takes "coarse" for l2 (fewer rounds to
    the exact value) and "knn" otherwise (the same rounds to the exact value on a smaller graph);
    callers that stop at a bracket (:func:`transshipment_w1` with a target or a time budget) pass
    "coarse". Measured in benchmarks/bench_transport.py. ``k``: neighbours per point of the initial
    graph (default 8 for "knn", 5 for "coarse"). ``add_per_row`` / ``add_per_col``: at most this
    many violated pairs of every row (point of X) / column (point of Y) become arcs per round
    (``add_per_col=0`` skips the column c-transform; default: the metric's ``column_batch``, 4 for l_p, 16
    for the mixed metric). ``warm_starts``: build the next graph with spare
    arcs (the ``pool_k`` smallest slacks of every row and column of the last check, switched off by a
    prohibitive cost); when at least ``warm_share`` of the next violated pairs are spare arcs, switch
    them on by a cost change and let LEMON re-solve from its previous basis instead of rebuilding
    (measured in benchmarks/bench_transport.py; off by default, see docs/transport.md).
    ``double_transform``: also take the c-transform of psi back over Y (one more kd-tree pass per
    round): a tighter lower bound in the early rounds, for callers that show brackets. ``target``: a
    caller that will stop at a bracket of this relative width; a round that reaches it skips the column
    c-transform (one kd-tree pass of three). ``bipartite``: from the second round on, solve on a
    bipartite graph X -> Y of the ``bipartite`` smallest-slack pairs of every row (pruned by reduced
    cost when the warm solves are off: :meth:`_Solver.to_bipartite`), once a bracket is within ``BIPARTITE_FROM`` (0.1%); 0 stays on
    the transshipment graph; default the metric's ``bipartite_batch`` (24 for l2, 0 otherwise), and 0
    with ``warm_starts``. ``tree_warm`` (default on, off with ``warm_starts``): rounds whose graph only
    grew are solved from the last optimum's basis by :mod:`._simplex` instead of LEMON's cold start
    (:meth:`_Solver.solve`; n = 5000: about 0.6 s instead of 1.0-1.2 s to the exact value on "skew").
    """
    t_start = time.perf_counter()
    metric = ground_metric(metric)
    add_per_row = metric.column_batch if add_per_row is None else add_per_row
    add_per_col = metric.column_batch if add_per_col is None else add_per_col
    start, k = _resolve_start(start, metric, k)
    bip = (0 if warm_starts else metric.bipartite_batch) if bipartite is None else max(0, int(bipartite))
    s = _Solver(X, Y, a, b, metric, k, coarse_q if start == "coarse" else 0)
    if s.diam == 0.0:  # every point at the same place
        yield Round(1, 0.0, 0.0, True, time.perf_counter() - t_start, 0, details={"note": "all points coincide"})
        return
    s.warm_starts, s.pool_k, s.warm_share = warm_starts, pool_k, warm_share
    s.tree_warm = (not warm_starts) if tree_warm is None else bool(tree_warm and not warm_starts)
    t_setup = time.perf_counter() - t_start
    for rnd in range(1, max_rounds + 1):
        t0 = time.perf_counter()
        warm = s.solve()
        t_solve = time.perf_counter() - t0
        t1 = time.perf_counter()
        kr, kc = (bip, 0) if s.bipartite else (add_per_row, add_per_col)
        lower, upper, check = s.certify(kr, kc, double_transform, target)
        tol = rtol * upper + 1e-12 * s.diam
        certified = upper - lower <= tol
        rec = s.record(rnd, lower, upper, certified, elapsed=time.perf_counter() - t_start, solve_s=t_solve,
                       check_s=time.perf_counter() - t1, setup_s=t_setup, warm=warm)
        if certified:
            yield rec
            return
        if bip and (s.bipartite or rec.rel_width <= BIPARTITE_FROM):
            s.to_bipartite(rec, check, bip)
        else:
            s.add_violated(rec, check, 0.25 * tol - metric.near_tight * s.diam, add_per_row, add_per_col)
        if rec.added == 0:
            rec.details["stopped"] = ("no violated pair left above the threshold: the integer costs (2^-40 diam) "
                                      "cannot resolve the remaining gap")
            yield rec
            return
        if rnd == max_rounds:
            rec.details["stopped"] = f"max_rounds={max_rounds} reached"
        yield rec


def _resolve_start(start: str, metric: GroundMetric, k: int | None) -> tuple[str, int]:
    """:func:`w1_rounds`' ``start`` and ``k`` resolved: "auto" is "coarse" for l2, "knn" otherwise; a metric
    defined elsewhere without coordinates to bin and shift gets the kNN graph alone; k = 5 with "coarse", 8 with
    "knn" unless given."""
    if start not in ("auto", "coarse", "knn"):
        raise ValueError(f"start must be 'auto', 'coarse' or 'knn', not {start!r}")
    if start == "auto":
        start = "coarse" if metric.name == "l2" else "knn"
    if start == "coarse" and type(metric).coordinates is GroundMetric.coordinates:
        start = "knn"
    return start, (5 if start == "coarse" else 8) if k is None else k


class _Solver:
    """The state of :func:`w1_rounds` between rounds, one method per step: the set-up (masses, the
    initial graph), :meth:`solve` (the min-cost flow on the current graph), :meth:`certify` (the
    float64 bracket) and :meth:`add_violated` (column generation, warm or by a rebuild)."""

    #: cost of a spare arc: never worth using while it is switched off
    OFF = np.int64(2**60)

    def __init__(self, X, Y, a, b, metric: GroundMetric, k: int, coarse_q: int = 0):
        self.metric = metric
        ia, jb = np.flatnonzero(a > 0), np.flatnonzero(b > 0)
        self.X, self.a = _merge_duplicates(X[ia], a[ia])
        self.Y, self.b = _merge_duplicates(Y[jb], b[jb])
        self.n, self.m = n, m = self.X.shape[0], self.Y.shape[0]
        self.N = n + m
        self.Z = np.concatenate([self.X, self.Y])
        self.diam = float(metric.bound(self.X, self.Y))
        if self.diam == 0.0:
            return
        order = _morton_order(self.Z)
        ox, oy = order[order < n], order[order >= n] - n
        sa, sb, self.T, self.masses_exact = integer_masses(self.a, self.b, ox, oy)
        self.supply = np.concatenate([sa, -sb])
        resid = np.concatenate([self.a - sa / self.T, -(self.b - sb / self.T)])
        self.repair = _repair_cost(self.Z, resid, order, metric)
        self.R = 2.0**COST_BITS / self.diam  # integer cost units per unit of distance
        self.key = self._initial_arcs(k, sa, sb, ox, oy)
        if coarse_q > 0 and min(n, m) > 1:
            cells = min(COARSE_MAX_CELLS, max(4, self.N // 10))
            self.key = _unique_keys(np.concatenate([self.key, _coarse_arcs(self.X, self.Y, self.a, self.b, metric,
                                                                               cells, coarse_q)]))
        self.ckey = self.arc_cost(self.key)
        self.pair = metric.prepare(self.X, self.Y)
        self.margin_rel = metric.rounding(self.X.shape[1])
        self.pool = np.zeros(0, dtype=np.int64)  # spare arcs built into the graph, switched off
        self.pending = np.zeros(0, dtype=np.int64)  # violated pairs waiting for the next rebuild
        self.G = None
        self.warm_starts, self.pool_k, self.warm_share = False, 4, 0.9
        self.bipartite = False  # the graph is the bipartite one of :meth:`to_bipartite`
        self.tree_warm, self.tree, self.pivots = False, None, 0  # warm solves by ._simplex (see solve)
        self.tree_note, self.lemon_s, self.lemon_arcs = "", 0.0, 0  # why a warm solve gave up; LEMON's last

    def arc_cost(self, keys: np.ndarray) -> np.ndarray:
        return self.metric.cost(self.Z[keys // self.N], self.Z[keys % self.N])

    def _initial_arcs(self, k, sa, sb, ox, oy) -> np.ndarray:
        """Step 1, the initial graph: kNN of Z both ways + the north-west-corner plan along the Morton order."""
        N = self.N
        nn = self.metric.neighbours(self.Z, k)
        src0 = np.repeat(np.arange(N, dtype=np.int64), nn.shape[1])
        dst0 = nn.ravel()
        nwi, nwj = _nw_corner(sa, sb, ox, oy)
        self.nw = _unique_keys(nwi * N + nwj + self.n)  # kept in every graph: it makes the problem feasible
        S = np.concatenate([src0, dst0, nwi])
        Tt = np.concatenate([dst0, src0, nwj + self.n])
        keep = S != Tt
        return _unique_keys(S[keep] * N + Tt[keep])

    def record(self, rnd: int, lower: float, upper: float, certified: bool, *, elapsed: float, solve_s: float,
               check_s: float, setup_s: float, warm: bool | str) -> Round:
        """The :class:`Round` of a certified check (the bracket, the graph's size, the timings and the solver's
        state in ``details``); the note of why a warm solve gave up is reported once."""
        rec = Round(rnd, lower, max(upper, lower), bool(certified), elapsed, int(self.on.sum()), solve_s=solve_s,
                    check_s=check_s,
                    details={"masses_exact": self.masses_exact, "total_supply": self.T, "repair": self.repair,
                             "setup_s": setup_s, "n_support": self.n, "m_support": self.m, "warm": warm,
                             "spare": int(self.allkey.size - self.on.sum()),
                             "pivots": self.pivots if warm == "tree" else None, "tree_note": self.tree_note})
        self.tree_note = ""
        return rec

    def solve(self) -> bool | str:
        """Step 2: the min-cost flow on the current graph. With ``tree_warm`` a graph that only grew since
        the last optimum is solved by :mod:`._simplex` from the last basis (returns "tree"), falling back
        to LEMON when it cannot (a graph that lost arcs, too many pivots, a flow that fails the check);
        otherwise LEMON, rebuilt unless a cost-change warm re-solve was set up (returns whether it was).
        Sets the flow ``F`` and the potentials ``pi``."""
        import pylmcf

        if self.G is None and self.tree is not None and self._solve_tree():
            return "tree"
        warm = self.G is not None
        if not warm:
            self.allkey, self.c_all = _merge(self.key, self.ckey, self.pool, self.arc_cost)
            self.on = (np.isin(self.allkey, self.key, assume_unique=True) if self.pool.size
                       else np.ones(self.allkey.size, dtype=bool))
            src, dst = self.allkey // self.N, self.allkey % self.N
            self.C_all = np.rint(self.c_all * self.R).astype(np.int64)
            self.G = pylmcf.Graph(self.N, src.astype(np.int32), dst.astype(np.int32))
            self.G.set_node_supply(self.supply)
            self.G.set_edge_capacities(np.full(self.allkey.size, self.T, dtype=np.int64))
        self.G.set_edge_costs(np.where(self.on, self.C_all, self.OFF))
        t0 = time.perf_counter()
        self.G.solve()
        if not warm:
            self.lemon_s, self.lemon_arcs = time.perf_counter() - t0, self.allkey.size
        self.F = self.G.result()
        self.pi = self.G.potentials()
        if self.tree_warm and not self.pool.size:
            self._start_tree()
        return warm

    def _start_tree(self) -> None:
        """Keep a basis of LEMON's optimum for the next rounds' warm solves (:func:`._simplex.build_tree`)."""
        src, dst = self.allkey // self.N, self.allkey % self.N
        ok, *tree = build_tree(self.N, src, dst, self.C_all, self.F.astype(np.int64), self.pi.astype(np.int64), 0)
        self.tree = (self.allkey, self.F.astype(np.int64), *tree) if ok else None

    def _solve_tree(self) -> bool:
        """The warm solve of :meth:`solve`: the new graph's arcs are the old ones plus new ones (else
        False); the old basis, with the new arcs at flow 0, is pivoted to the optimum by
        :func:`._simplex.pivot` (at most ``TREE_MAX_PIVOTS`` per node, at most ``TREE_MAX_NEW`` new arcs
        per old one; else False). The flow must pass
        :func:`._simplex.flow_is_feasible` (else False). A False leaves the solve to LEMON."""
        old_key, old_flow, in_tree_old, parent, pred_old, depth, pot, fc, nsib, psib = self.tree
        self.tree = None  # the arrays below are updated in place: never reused after a failure
        key, ckey = _merge(self.key, self.ckey, self.pool, self.arc_cost)
        if key.size > (1 + TREE_MAX_NEW) * old_key.size:
            return False
        pos = np.searchsorted(key, old_key)
        if pos.size and (pos[-1] >= key.size or not np.array_equal(key[pos], old_key)):
            return False
        E = key.size
        flow = np.zeros(E, dtype=np.int64)
        flow[pos] = old_flow
        in_tree = np.zeros(E, dtype=bool)
        in_tree[pos] = in_tree_old
        pred = np.where(pred_old >= 0, pos[np.maximum(pred_old, 0)], -1)
        C = np.rint(ckey * self.R).astype(np.int64)
        src, dst = key // self.N, key % self.N
        # in chunks: give up once it has taken TREE_TIME_FACTOR times as long as LEMON's cold solve would
        # (its last one, scaled by the arcs). Measured: a cap at 1x gave up on rounds that finish at
        # 1.1-2x (n = 5000 "near", 5*10^4 "near": 13.1 s instead of 11.0 s); predicting the pivots from the
        # new arcs fails too (0.45-2.8 pivots per new arc). The cap is for the pathological round only.
        # Pivots cost more on larger trees: 3.5 us at 10^4 nodes, about 90 us at 10^5.
        budget = TREE_TIME_FACTOR * self.lemon_s * E / self.lemon_arcs if self.lemon_arcs else float("inf")
        cap, pivots, t0 = TREE_MAX_PIVOTS * self.N, 0, time.perf_counter()
        while True:
            done, ok = pivot(src, dst, C, flow, in_tree, parent, pred, depth, pot, fc, nsib, psib,
                             min(TREE_CHUNK, cap - pivots))
            pivots += done
            if ok:
                break
            spent = time.perf_counter() - t0
            if pivots >= cap or spent > budget:
                self.tree_note = f"gave up after {pivots} pivots in {spent:.2f} s (budget {budget:.2f} s)"
                return False
        if not flow_is_feasible(self.N, src, dst, flow, self.supply):
            self.tree_note = "flow failed the conservation check"
            return False
        self.allkey, self.c_all, self.C_all = key, ckey, C
        self.on = np.ones(E, dtype=bool)
        self.F, self.pi, self.pivots = flow, pot.copy(), int(pivots)
        self.tree = (key, flow, in_tree, parent, pred, depth, pot, fc, nsib, psib)
        return True

    def certify(self, add_per_row: int, add_per_col: int, double_transform: bool, target: float | None = None):
        """Step 3, the bracket in float64. Upper: the flow's cost (+ moving the rounding residual, if
        any). Lower: c-transforms of the potentials over all pairs. Returns (lower, upper, what the
        c-transforms listed: u, v, the k smallest slacks of every row and column and their indices).
        With a ``target`` width, the second and the column transforms are skipped when the bracket is
        already that narrow (they only tighten the lower bound and list violated pairs of columns; n = 5000:
        0.018 s of checking instead of 0.05 s in a round that meets 1% with the first transform)."""
        n, a, b, diam = self.n, self.a, self.b, self.diam
        pos = self.F > 0
        upper = math.fsum(self.F[pos].astype(float) * self.c_all[pos]) / self.T + self.repair
        upper *= 1.0 + 4 * 2.0**-52 + self.margin_rel
        u = -self.pi[:n].astype(float) / self.R
        v = self.pi[n:].astype(float) / self.R
        kr = max(add_per_row, self.pool_k if self.warm_starts else 0)
        kc = max(add_per_col, self.pool_k if self.warm_starts else 0)
        rv, rj = self.pair.rows(v, kr)
        psi = rv[:, 0]
        lb = math.fsum(a * psi) + math.fsum(b * v)
        mag = diam + max(float(np.abs(u).max()), float(np.abs(v).max()), float(np.abs(psi).max()))

        def lower_of(lb_, mag_):
            return max(0.0, lb_ - (self.margin_rel * diam + 8 * 2.0**-52 * mag_))

        def narrow_enough():
            return target is not None and upper - lower_of(lb, mag) <= target * upper

        if double_transform and not narrow_enough():
            # the c-transform of psi back over Y: v2_j = min_i c_ij - psi_i >= v_j, so (psi, v2) is a
            # better feasible dual (the first rounds' potentials come from a graph on which far moves
            # are chains, and one transform recovers only part of the loss)
            v2 = self.pair.cols(psi, 1)[0][:, 0]
            lb = max(lb, math.fsum(a * psi) + math.fsum(b * v2))
            mag = max(mag, diam + float(np.abs(v2).max()))
        if kc > 0 and not narrow_enough():
            cu, ci = self.pair.cols(u, kc)
            phi = cu[:, 0]
            lb = max(lb, math.fsum(a * u) + math.fsum(b * phi))
            mag = max(mag, diam + float(np.abs(phi).max()))
        else:  # no column transform asked, or the bracket is already as narrow as the caller wants
            cu, ci = np.zeros((self.m, 0)), np.zeros((self.m, 0), dtype=np.int64)
        return lower_of(lb, mag), upper, (u, v, rv, rj, cu, ci)

    def add_violated(self, rec: Round, check, thr: float, add_per_row: int, add_per_col: int) -> None:
        """Step 4, column generation: the few most violated pairs of each row and column (u_i + v_j >
        c_ij + thr; a negative thr also takes nearly tight pairs, see ``GroundMetric.near_tight``) become
        arcs, switched on warm or by a rebuild of the graph. Sets ``rec.added``."""
        u, v, rv, rj, cu, ci = check
        n, N = self.n, self.N
        vr = rv < u[:, None] - thr
        vc = cu < v[:, None] - thr
        vr[:, add_per_row:] = False
        vc[:, add_per_col:] = False
        r_i, r_t = np.nonzero(vr)
        c_j, c_t = np.nonzero(vc)
        new = _unique_keys(np.concatenate([r_i * N + n + rj[r_i, r_t], ci[c_j, c_t] * N + n + c_j]))
        allkey, on = self.allkey, self.on
        at = np.minimum(np.searchsorted(allkey, new), allkey.size - 1)
        built = allkey[at] == new
        fresh = ~on[at[built]]
        if self.warm_starts and fresh.sum() >= self.warm_share * (fresh.size + (~built).sum()):
            # some violated pairs are spare arcs of this graph: switch them on by a cost change and
            # re-solve warm from the current basis; the others wait for the next rebuild
            on[at[built][fresh]] = True
            self.pending = _unique_keys(np.concatenate([self.pending, new[~built]]))
            rec.added = int(fresh.sum())
            rec.details["pending"] = int(self.pending.size)
            return
        rec.added = int((~built).sum() + fresh.sum())
        self.key, self.ckey = _merge(allkey[on], self.c_all[on], np.concatenate([self.pending, new]),
                                     self.arc_cost)
        self.pending = np.zeros(0, dtype=np.int64)
        if self.warm_starts:
            # rebuild; the other listed pairs of this check (the pool_k smallest slacks of every row
            # and column, violated or nearly tight) become the next graph's spare arcs
            self.pool = np.setdiff1d(_unique_keys(np.concatenate([
                np.repeat(np.arange(n), rj.shape[1]) * N + n + rj.ravel(),
                ci.ravel() * N + n + np.repeat(np.arange(self.m), ci.shape[1])])), self.key, assume_unique=True)
        self.G = None

    def to_bipartite(self, rec: Round, check, batch: int) -> None:
        """Step 4 on a bipartite graph (the metric's ``bipartite_batch``, l2): the next graph is X -> Y
        only, built from the c-transforms' lists of the smallest slacks c_ij - v_j of every row (the
        ``batch`` first; violated or nearly tight, the pairs the next optimum is likely to use) and the
        north-west-corner plan (feasibility). The first time, also the column lists of the first check
        and the arcs that carry the first flow. On l2 a long move costs less direct than as a chain of
        short arcs, so the optimum is made of direct pairs; a bipartite graph with as many arcs solves
        about 1.5x faster than the transshipment graph (n = 5000, docs/transport.md).

        Afterwards, with the warm solves off (with them the graph only grows, so that the rounds stay
        warm), the graph is pruned by reduced cost when the masses are exact integers: with the
        feasible dual (psi, v) of the last check (lower bound LB) and the last flow's cost U, an
        integral plan that puts one unit (1/T of the mass) on a pair of reduced cost
        r = c_ij - psi_i - v_j costs at least LB + r/T, so no optimal plan uses a pair with r > T (U - LB);
        such pairs are dropped. The certificate does not rely on it (it is recomputed over all pairs
        every round). Sets ``rec.added`` (pairs new to the graph) and ``rec.details["pruned"]``."""
        u, v, rv, rj, cu, ci = check
        n, N = self.n, self.N
        rows = np.repeat(np.arange(n, dtype=np.int64), min(batch, rj.shape[1])) * N + n + rj[:, :batch].ravel()
        if not self.bipartite:
            cols = ci.ravel() * N + n + np.repeat(np.arange(self.m, dtype=np.int64), ci.shape[1])
            key = _unique_keys(np.concatenate([rows, cols, self.nw, self.allkey[self.F > 0]]))
            at = np.minimum(np.searchsorted(self.allkey, key), self.allkey.size - 1)
            rec.added = int((self.allkey[at] != key).sum())
            self.key, self.ckey = key, self.arc_cost(key)
            self.bipartite, self.G, self.pool = True, None, np.zeros(0, dtype=np.int64)
            return
        key, ckey = _merge(self.allkey, self.c_all, rows, self.arc_cost)
        rec.added = int(key.size - self.allkey.size)
        if self.masses_exact and rec.added > 0 and not self.tree_warm:
            psi = rv[:, 0]
            lb = math.fsum(self.a * psi) + math.fsum(self.b * v)
            tau = self.T * max(rec.upper - lb, 0.0) * (1.0 + 1e-6) + 1e-9 * self.diam
            i, j = key // N, key % N - n
            bip = (i < n) & (j >= 0)
            keep = np.zeros(key.size, dtype=bool)
            keep[bip] = ckey[bip] - psi[i[bip]] - v[j[bip]] <= tau
            keep |= np.isin(key, self.nw, assume_unique=True)
            rec.details["pruned"] = int(key.size - keep.sum())
            key, ckey = key[keep], ckey[keep]
        self.key, self.ckey, self.G = key, ckey, None


def transshipment_w1(X, Y, a, b, metric, *, max_seconds: float | None = None, target: float | None = None,
                     rtol: float = DEFAULT_RTOL, **kw) -> tuple[Round, list[dict]]:
    """Run :func:`w1_rounds` until certified exact, or until the bracket's relative width is at most
    ``target``, or until another round would probably end after ``max_seconds`` (predicted from the
    last round's duration; at least one round is always run). Returns (the last round, a summary of
    every round)."""
    t0 = time.perf_counter()
    hist: list[dict] = []
    last = None
    prev = 0.0
    if max_seconds is not None or target is not None:
        kw.setdefault("double_transform", True)  # a run that may stop early: the tighter bracket
        kw.setdefault("start", "coarse")  # and the narrow first bracket
    for r in w1_rounds(X, Y, a, b, metric, rtol=rtol, target=target, **kw):
        last = r
        warm = r.details.get("warm")
        hist.append({"round": r.round, "lower": r.lower, "upper": r.upper, "arcs": r.arcs, "added": r.added,
                     "solve_s": r.solve_s, "check_s": r.check_s, "seconds": r.seconds,
                     "solver": "warm tree" if warm == "tree" else "LEMON warm" if warm else "LEMON"})
        now = time.perf_counter() - t0
        if target is not None and r.rel_width <= target:
            break
        if max_seconds is not None and now + (now - prev) > max_seconds:
            break
        prev = now
    return last, hist
