"""The warm network simplex of dpsynth_core.transport._simplex against LEMON (pylmcf).

Integer costs and supplies, so the optima must agree exactly (no tolerance): LEMON's optimal cost on the
grown graph equals the warm solve's, the warm flow is feasible, and its potentials prove it optimal
(every reduced cost >= 0, every tree arc's = 0). Costs are drawn from a small range on purpose: many ties
and zero costs make degenerate pivots, the case where a simplex can cycle or mis-update its tree.
"""

from __future__ import annotations

import numpy as np
import pylmcf
import pytest

from dpsynth_core.transport._simplex import build_tree, flow_is_feasible, pivot
from dpsynth_core.transport.transshipment import w1_rounds


def _random_problem(rng, N, E, cmax):
    # a random path through all nodes (both directions) keeps the graph connected and the problem feasible
    perm = rng.permutation(N)
    src = np.concatenate([perm[:-1], perm[1:], rng.integers(0, N, E)])
    dst = np.concatenate([perm[1:], perm[:-1], rng.integers(0, N, E)])
    keep = src != dst
    key = np.unique(src[keep] * N + dst[keep])
    supply = rng.integers(-5, 6, N)
    supply[-1] -= supply.sum()
    return key, supply


def _lemon(N, key, cost, supply):
    src, dst = key // N, key % N
    G = pylmcf.Graph(N, src.astype(np.int32), dst.astype(np.int32))
    G.set_node_supply(supply)
    G.set_edge_capacities(np.full(key.size, 10**6, dtype=np.int64))
    G.set_edge_costs(cost)
    G.solve()
    return G.result().astype(np.int64), G.potentials().astype(np.int64)


@pytest.mark.parametrize("seed", range(12))
def test_warm_solve_after_new_arcs_equals_lemon_cold(seed):
    rng = np.random.default_rng(seed)
    N = int(rng.integers(20, 80))
    key, supply = _random_problem(rng, N, 3 * N, 0)
    cost = rng.integers(0, 6, key.size).astype(np.int64)
    flow, pi = _lemon(N, key, cost, supply)
    src, dst = key // N, key % N
    ok, in_tree, parent, pred, depth, pot, fc, ns, ps = build_tree(N, src, dst, cost, flow, pi, 0)
    assert ok and in_tree.sum() == N - 1
    # from the basis of an optimum the simplex stays at the optimal cost (a tree completed with arcs
    # that are not tight may take a few degenerate pivots, never a worse flow)
    f0 = flow.copy()
    pivots, done = pivot(src, dst, cost, f0, in_tree.copy(), parent.copy(), pred.copy(), depth.copy(),
                         pot.copy(), fc.copy(), ns.copy(), ps.copy(), 10**6)
    assert done and int((f0 * cost).sum()) == int((flow * cost).sum())
    # grow the graph (cheap new arcs, so they matter), keep the basis, pivot
    extra = np.unique(rng.integers(0, N, 2 * N) * N + rng.integers(0, N, 2 * N))
    extra = extra[(extra // N != extra % N) & ~np.isin(extra, key)]
    key2 = np.union1d(key, extra)
    cost2 = np.zeros(key2.size, dtype=np.int64)
    pos = np.searchsorted(key2, key)
    cost2[pos] = cost
    new = ~np.isin(key2, key)
    cost2[new] = rng.integers(0, 3, int(new.sum()))
    flow2 = np.zeros(key2.size, dtype=np.int64)
    flow2[pos] = flow
    tree2 = np.zeros(key2.size, dtype=bool)
    tree2[pos] = in_tree
    pred2 = np.where(pred >= 0, pos[np.maximum(pred, 0)], -1)
    s2, d2 = key2 // N, key2 % N
    pivots, done = pivot(s2, d2, cost2, flow2, tree2, parent, pred2, depth, pot, fc, ns, ps, 10**6)
    assert done
    assert flow_is_feasible(N, s2, d2, flow2, supply)
    ref_flow, _ = _lemon(N, key2, cost2, supply)
    assert int((flow2 * cost2).sum()) == int((ref_flow * cost2).sum())
    rc = cost2 + pot[s2] - pot[d2]
    assert rc.min() >= 0 and np.all(rc[tree2] == 0) and tree2.sum() == N - 1
    # the tree structure is consistent: every node but the root hangs by its pred arc, at depth + 1
    for v in range(1, N):
        assert {s2[pred2[v]], d2[pred2[v]]} == {v, parent[v]} and depth[v] == depth[parent[v]] + 1


def test_build_tree_refuses_a_cyclic_flow_and_a_disconnected_graph():
    N = 4
    src, dst = np.array([0, 1, 2, 0]), np.array([1, 2, 0, 3])
    cost = np.ones(4, dtype=np.int64)
    assert not build_tree(N, src, dst, cost, np.array([1, 1, 1, 0]), np.zeros(N, dtype=np.int64), 0)[0]
    src, dst = np.array([0, 2]), np.array([1, 3])  # two components
    assert not build_tree(N, src, dst, np.ones(2, dtype=np.int64), np.zeros(2, dtype=np.int64),
                          np.zeros(N, dtype=np.int64), 0)[0]


def test_the_pivot_limit_is_reported_and_infeasible_flows_are_caught():
    rng = np.random.default_rng(5)
    N = 40
    key, supply = _random_problem(rng, N, 120, 0)
    src, dst = key // N, key % N
    cost = rng.integers(1, 50, key.size).astype(np.int64)
    flow, pi = _lemon(N, key, cost, supply)
    ok, in_tree, parent, pred, depth, pot, fc, ns, ps = build_tree(N, src, dst, cost, flow, pi, 0)
    cost[~in_tree] = 0  # every non-basic arc now prices in
    assert pivot(src, dst, cost, flow, in_tree, parent, pred, depth, pot, fc, ns, ps, 0) == (0, False)
    bad = flow.copy()
    bad[np.argmax(bad)] -= 1
    assert flow_is_feasible(N, src, dst, flow, supply) and not flow_is_feasible(N, src, dst, bad, supply)


def test_transshipment_rounds_use_the_warm_solves_and_agree_with_cold_ones():
    """In the solver: rounds after the first are warm ("tree"), and the exact value is the same to the
    last bit as with LEMON's cold solve every round (both are certified; the flows may differ at ties,
    the optimal integer cost may not)."""
    rng = np.random.default_rng(71)
    n = 1500
    X = rng.random((n, 2))
    Y = np.concatenate([rng.normal(0.3, 0.1, (n // 2, 2)), rng.random((n - n // 2, 2))])
    w = np.full(n, 1 / n)
    for metric in ("linf", "l1", "l2"):
        warm = list(w1_rounds(X, Y, w, w, metric, tree_warm=True))
        cold = list(w1_rounds(X, Y, w, w, metric, tree_warm=False))
        assert warm[-1].certified and cold[-1].certified
        assert any(r.details["warm"] == "tree" for r in warm), metric
        assert not any(r.details["warm"] == "tree" for r in cold)
        assert abs(warm[-1].upper - cold[-1].upper) <= 1e-12 * cold[-1].upper, metric
