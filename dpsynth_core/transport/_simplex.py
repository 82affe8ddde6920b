r"""A primal network simplex that takes new arcs into a warm basis (compiled with numba).

What LEMON's network simplex (``pylmcf``) lacks for column generation: its graphs are static, so a round
that adds a handful of arcs to an optimal flow pays a cold solve from an artificial basis (0.15-0.20 s on
the 10,000 nodes and 120,000 arcs of a 5000-point problem, however few arcs were added). Here the basis
of the last optimum is kept: new arcs enter as non-basic arcs at flow 0 (the basis stays primal
feasible) and the simplex pivots only as far as they make it. Used by
:mod:`dpsynth_core.transport.transshipment` for the rounds after the first, whose graph only grows; the
first solve, and any round this solver gives up on, stays with LEMON.

The problem: min sum_e c_e f_e over f >= 0 with out-flow minus in-flow = supply at every node, integer
costs c_e >= 0 and supplies; arcs are uncapacitated (the callers' capacities, the total supply, never
bind). Potentials follow LEMON's convention: reduced cost c_e + pi(source) - pi(target), zero on the arcs
of the basis (a spanning tree).

- :func:`build_tree` makes a basis from a feasible flow: the arcs with positive flow (a forest when the
  flow is a vertex, which a simplex optimum is), then arcs tight under the given potentials, then any
  arcs, joined by union-find into a spanning tree of the (connected) graph; the tree's potentials are
  recomputed from the root. Every arc outside the tree carries no flow, so the basis is feasible.
- :func:`pivot` runs block-search pricing (the most negative reduced cost in blocks of about sqrt(E)
  arcs, LEMON's default rule) and pivots: the cycle of the entering arc and the tree path between its
  ends, the flow moved by the smallest flow of its backward arcs, the last such arc in the cycle's
  orientation from the apex leaving (Cunningham's rule [AMO93, Chapter 11]), the cut subtree hung
  again under the entering arc and its depths and potentials updated. The rule prevents cycling only
  from a strongly feasible tree, which :func:`build_tree` does not guarantee; the caller's cap on the
  pivots is what bounds a degenerate run (then LEMON solves the round). Most pivots are degenerate
  (50-90% at n = 5000). A strongly feasible start was measured and dropped: the flow's forest with each
  component hung from an extra root by an artificial arc (about 4,500 of them at n = 5000) made the
  second round 20-30% slower, the artificial arcs leaving the tree one degenerate pivot at a time.

Nothing returned here is trusted blindly: the caller checks that the flow is non-negative and
conserves every supply before taking its cost as an upper bound, and the lower bound comes from the
c-transform of the potentials over all pairs, which is a valid bound whatever the potentials are.
"""

from __future__ import annotations

import numba as nb
import numpy as np

__all__ = ["build_tree", "pivot", "flow_is_feasible"]


@nb.njit(cache=True)
def _find(uf, x):
    r = x
    while uf[r] != r:
        r = uf[r]
    while uf[x] != r:  # path compression
        nxt = uf[x]
        uf[x] = r
        x = nxt
    return r


@nb.njit(cache=True)
def _spanning_arcs(N, src, dst, cost, flow, pot_hint):
    """The arcs of a spanning tree, joined by union-find: every arc with positive flow, then arcs tight under
    ``pot_hint``, then any. Returns ``(ok, in_tree)``; ``ok`` is False when the arcs with flow contain a cycle
    or the graph is not connected."""
    E = src.size
    uf = np.arange(N)
    in_tree = np.zeros(E, dtype=np.bool_)
    added = 0
    for phase in range(3):
        for e in range(E):
            if in_tree[e]:
                continue
            if phase == 0 and flow[e] <= 0:
                continue
            if phase == 1 and (flow[e] > 0 or cost[e] + pot_hint[src[e]] - pot_hint[dst[e]] != 0):
                continue
            a = _find(uf, src[e])
            b = _find(uf, dst[e])
            if a == b:
                if phase == 0:
                    return False, in_tree
                continue
            uf[a] = b
            in_tree[e] = True
            added += 1
            if added == N - 1:
                break
        if added == N - 1:
            break
    return added == N - 1, in_tree


@nb.njit(cache=True)
def _tree_adjacency(N, src, dst, in_tree):
    """The tree's adjacency in CSR form: the arcs at node v are ``adj[deg[v]:deg[v + 1]]``."""
    E = src.size
    deg = np.zeros(N + 1, dtype=np.int64)
    for e in range(E):
        if in_tree[e]:
            deg[src[e] + 1] += 1
            deg[dst[e] + 1] += 1
    for i in range(N):
        deg[i + 1] += deg[i]
    adj = np.empty(deg[N], dtype=np.int64)
    fill = deg[:N].copy()
    for e in range(E):
        if in_tree[e]:
            adj[fill[src[e]]] = e
            fill[src[e]] += 1
            adj[fill[dst[e]]] = e
            fill[dst[e]] += 1
    return deg, adj


@nb.njit(cache=True)
def build_tree(N, src, dst, cost, flow, pot_hint, root):
    """A spanning-tree basis containing every arc with positive flow.

    Returns ``(ok, in_tree, parent, pred, depth, pot, first_child, next_sib, prev_sib)``; ``ok`` is False
    when the arcs with flow contain a cycle (not a vertex) or the graph is not connected (then the arrays
    after ``in_tree`` are placeholders)."""
    ok, in_tree = _spanning_arcs(N, src, dst, cost, flow, pot_hint)
    if not ok:
        none = np.full(N, -1, dtype=np.int64)
        return (False, in_tree, none, none, none, none, none, none, none)
    deg, adj = _tree_adjacency(N, src, dst, in_tree)  # then a traversal from the root
    parent = np.full(N, -1, dtype=np.int64)
    pred = np.full(N, -1, dtype=np.int64)
    depth = np.zeros(N, dtype=np.int64)
    pot = np.zeros(N, dtype=np.int64)
    first_child = np.full(N, -1, dtype=np.int64)
    next_sib = np.full(N, -1, dtype=np.int64)
    prev_sib = np.full(N, -1, dtype=np.int64)
    seen = np.zeros(N, dtype=np.bool_)
    stack = np.empty(N, dtype=np.int64)
    stack[0] = root
    sp = 1
    seen[root] = True
    while sp > 0:
        sp -= 1
        v = stack[sp]
        for k in range(deg[v], deg[v + 1]):
            e = adj[k]
            w = dst[e] if src[e] == v else src[e]
            if seen[w]:
                continue
            seen[w] = True
            parent[w] = v
            pred[w] = e
            depth[w] = depth[v] + 1
            pot[w] = pot[v] + cost[e] if src[e] == v else pot[v] - cost[e]
            # w becomes the first child of v
            nxt = first_child[v]
            next_sib[w] = nxt
            if nxt >= 0:
                prev_sib[nxt] = w
            first_child[v] = w
            stack[sp] = w
            sp += 1
    return (True, in_tree, parent, pred, depth, pot, first_child, next_sib, prev_sib)


@nb.njit(cache=True, inline="always")
def _unlink(v, parent, first_child, next_sib, prev_sib):
    p = parent[v]
    pv, nv = prev_sib[v], next_sib[v]
    if pv >= 0:
        next_sib[pv] = nv
    else:
        first_child[p] = nv
    if nv >= 0:
        prev_sib[nv] = pv
    prev_sib[v] = -1
    next_sib[v] = -1


@nb.njit(cache=True, inline="always")
def _link(v, p, first_child, next_sib, prev_sib):
    nxt = first_child[p]
    next_sib[v] = nxt
    prev_sib[v] = -1
    if nxt >= 0:
        prev_sib[nxt] = v
    first_child[p] = v


@nb.njit(cache=True)
def _price(src, dst, cost, pot, in_tree, start, block):
    """Block search: the arc of most negative reduced cost in the first block (of ``block`` arcs from
    ``start``, cyclically) that has one; -1 when no arc has a negative reduced cost. Returns (arc, next
    start)."""
    E = src.size
    best = -1
    best_rc = 0
    e = start
    cnt = 0
    for _ in range(E):
        if not in_tree[e]:
            rc = cost[e] + pot[src[e]] - pot[dst[e]]
            if rc < best_rc:
                best_rc = rc
                best = e
        e += 1
        if e == E:
            e = 0
        cnt += 1
        if cnt == block:
            if best >= 0:
                break
            cnt = 0
    return best, e


@nb.njit(cache=True)
def _cycle(s, t, src, flow, parent, pred, depth, spath, tpath):
    """The cycle of the entering arc s -> t: the tree paths from s and t up to their apex (into spath,
    tpath), the flow ``delta`` it can carry (the smallest flow of its backward arcs: on t's path the arcs
    parent -> x, on s's path the arcs x -> parent) and the leaving arc, the last blocking arc in the
    cycle's orientation from the apex (apex -> s, entering, t -> apex), i.e. the first one met going
    apex -> t, then s -> apex. Returns (ns, nt, delta, node whose pred arc leaves, side: 1 on t's path,
    -1 on s's)."""
    ns = 0
    nt = 0
    a, b = s, t
    while a != b:
        if depth[a] >= depth[b]:
            spath[ns] = a
            ns += 1
            a = parent[a]
        else:
            tpath[nt] = b
            nt += 1
            b = parent[b]
    delta = np.int64(2**62)
    for k in range(nt):
        arc = pred[tpath[k]]
        if src[arc] != tpath[k] and flow[arc] < delta:
            delta = flow[arc]
    for k in range(ns):
        arc = pred[spath[k]]
        if src[arc] == spath[k] and flow[arc] < delta:
            delta = flow[arc]
    for k in range(nt - 1, -1, -1):
        arc = pred[tpath[k]]
        if src[arc] != tpath[k] and flow[arc] == delta:
            return ns, nt, delta, tpath[k], 1
    for k in range(ns):
        arc = pred[spath[k]]
        if src[arc] == spath[k] and flow[arc] == delta:
            return ns, nt, delta, spath[k], -1
    return ns, nt, delta, -1, 0  # not reached: costs >= 0 leave every cycle a backward arc


@nb.njit(cache=True)
def _augment(best, delta, src, flow, pred, spath, ns, tpath, nt):
    """Move ``delta`` around the cycle: up on the entering arc and the forward arcs, down on the backward ones."""
    flow[best] += delta
    for k in range(nt):
        arc = pred[tpath[k]]
        flow[arc] += delta if src[arc] == tpath[k] else -delta
    for k in range(ns):
        arc = pred[spath[k]]
        flow[arc] += -delta if src[arc] == spath[k] else delta


@nb.njit(cache=True)
def _rehang(q, r, best, leave, src, cost, parent, pred, depth, pot, first_child, next_sib, prev_sib, stack):
    """The subtree below the leaving arc (``pred[leave]``), which holds q, hangs again from r by the
    entering arc ``best``: the path q .. leave is reversed, then depths and potentials of the moved
    subtree are recomputed from r."""
    prev_node = r
    prev_arc = best
    x = q
    while True:
        old_parent = parent[x]
        old_arc = pred[x]
        _unlink(x, parent, first_child, next_sib, prev_sib)
        parent[x] = prev_node
        pred[x] = prev_arc
        _link(x, prev_node, first_child, next_sib, prev_sib)
        if x == leave:
            break
        prev_node = x
        prev_arc = old_arc
        x = old_parent
    stack[0] = q
    sp = 1
    while sp > 0:
        sp -= 1
        v = stack[sp]
        p = parent[v]
        arc = pred[v]
        depth[v] = depth[p] + 1
        pot[v] = pot[p] + cost[arc] if src[arc] == p else pot[p] - cost[arc]
        c = first_child[v]
        while c >= 0:
            stack[sp] = c
            sp += 1
            c = next_sib[c]


@nb.njit(cache=True)
def pivot(src, dst, cost, flow, in_tree, parent, pred, depth, pot, first_child, next_sib, prev_sib,
          max_pivots):
    """Primal simplex from the given basis until no arc has a negative reduced cost (returns
    ``(pivots, True)``) or ``max_pivots`` pivots were made (``(pivots, False)``). Arrays are updated in
    place."""
    N = parent.size
    block = max(int(np.sqrt(src.size)), 10)
    spath = np.empty(N, dtype=np.int64)
    tpath = np.empty(N, dtype=np.int64)
    stack = np.empty(N, dtype=np.int64)
    start = 0
    it = 0
    while True:
        best, start = _price(src, dst, cost, pot, in_tree, start, block)
        if best < 0:
            return it, True
        if it >= max_pivots:
            return it, False
        it += 1
        s, t = src[best], dst[best]
        ns, nt, delta, leave, side = _cycle(s, t, src, flow, parent, pred, depth, spath, tpath)
        if delta > 0:
            _augment(best, delta, src, flow, pred, spath, ns, tpath, nt)
        in_tree[pred[leave]] = False
        in_tree[best] = True
        if side == 1:  # the subtree cut off holds t: it hangs again from s, and the other way round
            _rehang(t, s, best, leave, src, cost, parent, pred, depth, pot, first_child, next_sib, prev_sib, stack)
        else:
            _rehang(s, t, best, leave, src, cost, parent, pred, depth, pot, first_child, next_sib, prev_sib, stack)


@nb.njit(cache=True)
def _net_flow(N, src, dst, flow):
    net = np.zeros(N, dtype=np.int64)
    for e in range(src.size):
        net[src[e]] += flow[e]
        net[dst[e]] -= flow[e]
    return net


def flow_is_feasible(N: int, src: np.ndarray, dst: np.ndarray, flow: np.ndarray, supply: np.ndarray) -> bool:
    """Whether ``flow`` is non-negative and out-flow minus in-flow equals ``supply`` at every node
    (exact integer arithmetic)."""
    if flow.size and flow.min() < 0:
        return False
    return bool(np.array_equal(_net_flow(N, src, dst, flow), supply))
