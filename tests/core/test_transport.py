"""Tests of dpsynth_core.transport: W1 methods against POT's dense exact solver, the grid interval,
the sparse certified method (docs/transport.md, "Certified sparse W1"), the BL projection ([HVZ23,
Algorithm 2]; docs/deviations.md §4) and every
validation rule.

Tolerances: exact methods must agree with ``ot.emd2`` to 1e-9 relative (the certification
tolerance of docs/transport.md, "Certified sparse W1"); both sides are network-simplex / sorted-CDF computations in float64, whose rounding
error is ~1e-15 relative at these sizes, so 1e-9 leaves a wide margin yet fails on any wrong plan.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import ot
import pytest
from scipy.optimize import linprog
from scipy.spatial.distance import cdist

import dpsynth_core.transport as tr
from dpsynth_core.domain import Domain
from dpsynth_core.grid import cell_centres
from dpsynth_core.transport import (
    BLProjectionResult,
    W1Result,
    bl_projection,
    check_dual_certificate,
    wasserstein1,
)

CDIST = {"linf": "chebyshev", "l1": "cityblock", "l2": "euclidean"}
REL = 1e-9


def dense_w1(X, Y, a=None, b=None, metric="linf"):
    X = np.asarray(X, float).reshape(len(X), -1)
    Y = np.asarray(Y, float).reshape(len(Y), -1)
    a = np.full(len(X), 1 / len(X)) if a is None else np.asarray(a, float) / np.sum(a)
    b = np.full(len(Y), 1 / len(Y)) if b is None else np.asarray(b, float) / np.sum(b)
    return float(ot.emd2(a, b, cdist(X, Y, CDIST[metric]), numItermax=10**9))


def rel_err(x, ref):
    return abs(x - ref) / max(abs(ref), 1e-300)


# ------------------------------------------------------------------------------ exact methods vs POT
@pytest.mark.parametrize("d", [1, 2, 3])
@pytest.mark.parametrize("metric", ["linf", "l1", "l2"])
def test_exact_methods_agree_with_pot(d, metric):
    rng = np.random.default_rng(100 + 10 * d + len(metric))
    for rep in range(3):
        n, m = rng.integers(20, 160, size=2)
        X = rng.random((n, d))
        Y = rng.random((m, d)) ** 2
        a = rng.random(n) if rep else None
        b = rng.random(m) if rep else None
        ref = dense_w1(X, Y, a, b, metric)
        methods = ["pot", "sparse"] + (["exact_1d"] if d == 1 else [])
        for meth in methods:
            r = wasserstein1(X, Y, metric=metric, method=meth, weights_x=a, weights_y=b, return_result=True)
            assert rel_err(r.value, ref) < REL, (meth, r.value, ref)
            assert r.exact and r.certified and r.method == meth
            assert r.lower == r.value == r.upper


def test_exact_1d_weighted_against_scipy():
    from scipy.stats import wasserstein_distance

    rng = np.random.default_rng(3)
    x, y = rng.normal(size=500), rng.exponential(size=300)
    a, b = rng.random(500), rng.random(300)
    ref = wasserstein_distance(x, y, a, b)
    assert rel_err(wasserstein1(x, y, method="exact_1d", weights_x=a, weights_y=b), ref) < REL


def test_auto_routes_and_certifies(monkeypatch):
    rng = np.random.default_rng(4)
    r1 = wasserstein1(rng.random(50), rng.random(40), return_result=True)
    assert r1.method == "exact_1d" and r1.exact
    X, Y = rng.random((60, 2)), rng.random((70, 2))
    r2 = wasserstein1(X, Y, return_result=True)
    assert r2.method == "pot" and r2.exact and r2.certified and r2.details["requested_method"] == "auto"
    # above the measured POT/sparse crossover (lowered here to keep the test fast): the exact sparse
    # method in d = 2, 3 for every metric
    monkeypatch.setattr(tr.policy, "AUTO_POT_PAIRS", 100)
    for metric in ("linf", "l1", "l2"):
        r3 = wasserstein1(X, Y, metric=metric, return_result=True)
        assert r3.method == "sparse" and r3.exact and r3.certified
        assert rel_err(r3.value, dense_w1(X, Y, metric=metric)) < REL
    # above the sparse limit: the grid interval (l_inf, l1), sparse for l2 up to 20 000 points
    monkeypatch.setattr(tr.policy, "AUTO_SPARSE_MAX_POINTS", 100)
    r4 = wasserstein1(X, Y, return_result=True)
    assert r4.method == "grid" and not r4.exact and r4.details["grid"] == 128
    assert r4.lower <= dense_w1(X, Y) <= r4.upper
    assert wasserstein1(X, Y, metric="l2", return_result=True).method == "sparse"
    monkeypatch.setattr(tr.policy, "L2_SPARSE_MAX_POINTS", 100)  # above it l2, which has no grid: the interval
    r_l2 = wasserstein1(X, Y, metric="l2", return_result=True)
    assert r_l2.method == "interval" and r_l2.certified and not r_l2.exact
    assert r_l2.lower <= dense_w1(X, Y, metric="l2") * (1 + 1e-12) and dense_w1(X, Y, metric="l2") <= r_l2.upper
    # d = 4 to 8 (measured, exact_w1_dims.json): as in 2-D, dense POT, then the exact sparse method, then the grid
    monkeypatch.undo()
    X4, Y4 = rng.random((60, 4)), rng.random((50, 4))
    assert wasserstein1(X4, Y4, return_result=True).method == "pot"
    monkeypatch.setattr(tr.policy, "AUTO_POT_PAIRS", 100)
    r5 = wasserstein1(X4, Y4, return_result=True)
    assert r5.method == "sparse" and r5.exact and rel_err(r5.value, dense_w1(X4, Y4)) < REL
    monkeypatch.setattr(tr.policy, "AUTO_SPARSE_MAX_POINTS", 100)
    r6 = wasserstein1(X4, Y4, return_result=True)
    assert r6.method == "grid" and not r6.exact
    assert r6.lower <= dense_w1(X4, Y4) <= r6.upper
    # d = 9 was not measured: dense POT up to its own limit, then the grid
    X9, Y9 = rng.random((60, 9)), rng.random((50, 9))
    assert wasserstein1(X9, Y9, return_result=True).method == "pot"
    monkeypatch.setattr(tr.policy, "POT_MAX_PAIRS", 100)
    r7 = wasserstein1(X9, Y9, return_result=True)
    assert r7.method == "grid" and not r7.exact
    assert r7.lower <= dense_w1(X9, Y9) <= r7.upper


def test_choose_method_budgets():
    cm = tr.choose_method
    assert cm(5000, 5000, 2) == ("sparse", None)
    assert cm(1000, 1000, 2) == ("pot", None)
    assert cm(60_000, 60_000, 2) == ("grid", 128)
    assert cm(5000, 5000, 2, budget="interactive") == ("sparse", None)
    assert cm(1000, 1000, 2, budget="interactive") == ("pot", None)
    assert cm(20_000, 20_000, 2, budget="interactive") == ("grid", 128)
    assert cm(1000, 1000, 3, budget="preview") == ("sparse", None)
    assert cm(5000, 5000, 2, budget="preview") == ("grid", 64)
    assert cm(5000, 5000, 5) == ("sparse", None)
    assert cm(1000, 1000, 8) == ("pot", None)
    assert cm(5000, 5000, 8, budget="interactive") == ("sparse", None)
    assert cm(30_000, 30_000, 6)[0] == "grid"
    assert cm(5000, 5000, 9) == ("pot", None)
    # l2 has no grid: beyond the sparse limits the interval from every row, never a refusal
    assert cm(20_000, 20_000, 2, "l2", budget="interactive") == ("interval", None)
    assert cm(30_000, 30_000, 9, "l2") == ("interval", None)


def test_budgeted_sparse_returns_a_proven_bracket(monkeypatch):
    """A sparse run stopped early (time budget or target width) reports its certified bracket, never
    an exact value; the bracket contains the dense optimum (up to POT's rounding, 1e-12 relative)."""
    rng = np.random.default_rng(5)
    X = rng.random((400, 2))
    Y = np.concatenate([rng.normal(0.3, 0.1, (150, 2)), rng.random((150, 2))])
    ref = dense_w1(X, Y)
    r = wasserstein1(X, Y, method="sparse", max_seconds=1e-9, return_result=True)
    assert r.iterations == 1 and not r.exact and r.certified
    assert r.lower * (1 - 1e-12) <= ref <= r.upper * (1 + 1e-12) and r.lower < r.upper
    r = wasserstein1(X, Y, method="sparse", target_width=0.05, return_result=True)
    assert r.details["rel_width"] <= 0.05 and r.lower * (1 - 1e-12) <= ref <= r.upper * (1 + 1e-12)
    # the interactive budget at a size above its dense-POT limit: the sparse method, stopped at its
    # target width (the time limit is lifted here so that the outcome does not depend on the machine)
    monkeypatch.setattr(tr.policy, "BUDGET_POT_PAIRS", {"interactive": 100, "preview": 100})
    monkeypatch.setitem(tr.policy.BUDGET_SPARSE, "interactive", {**tr.policy.BUDGET_SPARSE["interactive"],
                                                                  "max_seconds": None})
    r = wasserstein1(X, Y, budget="interactive", return_result=True)
    assert r.method == "sparse" and r.lower * (1 - 1e-12) <= ref <= r.upper * (1 + 1e-12)
    assert r.details["rel_width"] <= 0.01 and not r.exact
    # it stopped at the first round whose bracket was narrow enough (with the coarse start, often the first)
    assert all(h["upper"] - h["lower"] > 0.01 * h["upper"] for h in r.details["rounds"][:-1])


def test_wasserstein1_rounds_brackets_shrink_to_the_exact_value():
    rng = np.random.default_rng(6)
    X, Y = rng.random((500, 2)), rng.random((300, 2)) ** 2
    a = rng.random(500)
    ref = dense_w1(X, Y, a=a)
    rounds = list(tr.wasserstein1_rounds(X, Y, weights_x=a))
    assert len(rounds) >= 2 and rounds[-1].exact and rel_err(rounds[-1].value, ref) < REL
    for r in rounds:
        assert r.certified and r.lower * (1 - 1e-12) <= ref <= r.upper * (1 + 1e-12)
    assert all(not r.exact for r in rounds[:-1])
    with pytest.raises(ValueError, match=r"'metric' parameter of wasserstein1_rounds"):
        next(tr.wasserstein1_rounds(X, Y, metric="l3"))


def test_pot_raises_when_not_optimal(monkeypatch):
    rng = np.random.default_rng(6)
    monkeypatch.setattr(tr._common, "POT_ITERMAX", 2)
    with pytest.raises(RuntimeError, match="did not reach optimality"):
        wasserstein1(rng.random((200, 2)), rng.random((200, 2)), method="pot")


def test_domain_maps_to_unit_cube():
    rng = np.random.default_rng(7)
    U, V = rng.random((80, 2)), rng.random((90, 2))
    dom = Domain(lower=[-10, 5], upper=[30, 6])
    X, Y = dom.from_unit(U), dom.from_unit(V)
    assert rel_err(wasserstein1(X, Y, domain=dom), wasserstein1(U, V)) < REL


def test_result_object_and_float():
    rng = np.random.default_rng(8)
    X, Y = rng.random((20, 2)), rng.random((25, 2))
    r = wasserstein1(X, Y, return_result=True)
    assert isinstance(r, W1Result) and float(r) == r.value
    assert isinstance(wasserstein1(X, Y), float)
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.value = 0.0  # type: ignore[misc]


# ------------------------------------------------------------------------------ grid method
@pytest.mark.parametrize("d,k,metric", [(2, 8, "linf"), (2, 16, "l1"), (3, 5, "linf"), (1, 32, "linf")])
def test_grid_exact_on_binned_measures_and_interval(d, k, metric):
    rng = np.random.default_rng(9 + d + k)
    X = rng.random((300, d))
    Y = rng.beta(2, 5, size=(250, d))
    a, b = rng.random(300), rng.random(250)
    r = wasserstein1(X, Y, method="grid", grid=k, metric=metric, weights_x=a, weights_y=b, return_result=True)
    # exact for the binned measures: dense POT between the two histograms on the cell centres
    from dpsynth_core.grid import cell_of

    ha = np.bincount(cell_of(X, k), weights=a / a.sum(), minlength=k**d)
    hb = np.bincount(cell_of(Y, k), weights=b / b.sum(), minlength=k**d)
    C = cell_centres(k, d)
    ref_binned = float(ot.emd2(ha, hb, cdist(C, C, CDIST[metric]), numItermax=10**9))
    assert rel_err(r.value, ref_binned) < REL
    # the interval [value - h, value + h] holds the true W1
    true = dense_w1(X, Y, a, b, metric)
    h = {"linf": 1.0, "l1": float(d)}[metric] / k
    assert r.upper - r.value == pytest.approx(h) and r.lower == pytest.approx(max(0.0, r.value - h))
    assert r.lower <= true <= r.upper
    assert not r.exact and r.method == "grid"


def test_sliced_is_a_deterministic_lower_bound():
    rng = np.random.default_rng(10)
    X, Y = rng.random((200, 3)), rng.random((150, 3)) ** 2
    s1 = wasserstein1(X, Y, method="sliced", metric="l2", rng=1, return_result=True)
    s2 = wasserstein1(X, Y, method="sliced", metric="l2", rng=1, return_result=True)
    assert s1.value == s2.value and not s1.exact and not s1.certified
    # every 1-D projection on a unit vector is 1-Lipschitz in l2: the sliced value is a lower bound
    assert s1.value <= dense_w1(X, Y, metric="l2") + 1e-12
    sl = wasserstein1(X, Y, method="sliced", metric="linf", rng=1, return_result=True)
    assert sl.lower <= dense_w1(X, Y, metric="linf") + 1e-12


# ---------------------------------------------------------------------------- sparse (certified W1)
def _instances(d, rng):
    n = 300
    yield "duplicates", np.repeat(rng.random((30, d)), 10, axis=0), np.repeat(rng.random((25, d)), 8, axis=0), None, None
    yield "point_mass", rng.random((n, d)), np.full((1, d), 0.3), None, None
    yield "identical", (Z := rng.random((n, d))), Z.copy(), None, None
    far = np.concatenate([rng.random((150, d)) * 0.05, 0.95 + rng.random((150, d)) * 0.05])
    far2 = np.concatenate([rng.random((40, d)) * 0.05, 0.95 + rng.random((260, d)) * 0.05])
    yield "far_clusters_unequal", far, far2, None, None
    yield "unequal_sizes_weights", rng.random((500, d)), rng.random((37, d)) ** 3, rng.random(500) ** 4, rng.random(37)
    w = rng.random(n)
    w[rng.random(n) < 0.3] = 0.0
    yield "zero_weights", rng.random((n, d)), rng.random((200, d)), w, None
    g = (np.round(rng.random((n, d)) * 6) / 6)
    yield "lattice_ties", g, np.round(rng.random((250, d)) * 6) / 6, None, None


@pytest.mark.slow
@pytest.mark.parametrize("d", [2, 3])
@pytest.mark.parametrize("metric", ["linf", "l1", "l2"])
def test_sparse_adversarial_instances(d, metric):
    rng = np.random.default_rng(20 + d)
    for name, X, Y, a, b in _instances(d, rng):
        ref = dense_w1(X, Y, a, b, metric)
        r = wasserstein1(X, Y, method="sparse", metric=metric, weights_x=a, weights_y=b, return_result=True)
        assert r.certified and r.exact, name
        if ref == 0:
            assert abs(r.value) < 1e-12, name
        else:
            assert rel_err(r.value, ref) < REL, (name, r.value, ref)


@pytest.mark.slow
@pytest.mark.parametrize("d,n,m", [(2, 2000, 1500), (3, 1500, 1200)])
def test_sparse_matches_dense_pot_at_a_few_thousand_points(d, n, m):
    rng = np.random.default_rng(30 + d)
    X = rng.random((n, d))
    Y = np.concatenate([rng.normal(0.3, 0.1, (m // 2, d)), rng.random((m - m // 2, d))])
    ref = dense_w1(X, Y)
    r = wasserstein1(X, Y, method="sparse", return_result=True)
    assert r.certified and rel_err(r.value, ref) < REL


@pytest.mark.parametrize("metric", ["linf", "l1", "l2"])
def test_dual_certificate_matches_brute_force_and_rejects_perturbation(metric):
    rng = np.random.default_rng(40)
    X, Y = rng.random((150, 2)), rng.random((120, 2))
    a, b = np.full(150, 1 / 150), np.full(120, 1 / 120)
    M = cdist(X, Y, CDIST[metric])
    _, log = ot.emd(a, b, M, numItermax=10**8, log=True)
    u, v = np.asarray(log["u"]), np.asarray(log["v"])
    # optimal duals: feasible up to rounding
    assert check_dual_certificate(X, Y, a, b, u, v, metric) < 1e-12
    # a deliberately perturbed dual is rejected with the exact violation
    v_bad = v.copy()
    v_bad[7] += 1e-3
    viol = check_dual_certificate(X, Y, a, b, u, v_bad, metric)
    assert viol == pytest.approx(np.max(u[:, None] + v_bad[None, :] - M), abs=1e-12)
    assert viol >= 1e-3 - 1e-12
    # random potentials: equal to the brute-force maximum
    ur, vr = rng.normal(0, 0.3, 150), rng.normal(0, 0.3, 120)
    brute = max(0.0, float(np.max(ur[:, None] + vr[None, :] - M)))
    assert check_dual_certificate(X, Y, a, b, ur, vr, metric) == pytest.approx(brute, abs=1e-12)
    # zero-weight points do not count
    a0 = a.copy()
    i_bad = int(np.argmax(np.max(u[:, None] + v_bad[None, :] - M, axis=1)))
    a0[i_bad] = 0.0
    assert check_dual_certificate(X, Y, a0, b, u, v_bad, metric) <= viol


def test_sparse_certificate_details_are_consistent():
    rng = np.random.default_rng(41)
    X, Y = rng.random((400, 2)), rng.random((300, 2))
    r = wasserstein1(X, Y, method="sparse", return_result=True)
    det = r.details
    assert det["lower"] <= r.value == det["upper"]
    assert det["upper"] - det["lower"] <= 1e-10 * r.value + 1e-12 * 2
    assert r.iterations == len(det["rounds"]) and det["rounds"][-1]["added"] == 0
    assert det["masses_exact"] and det["repair"] == 0.0  # uniform weights: integer supplies are exact
    brackets = [(h["lower"], h["upper"]) for h in det["rounds"]]
    assert all(lo <= det["upper"] * (1 + 1e-12) and det["lower"] <= hi * (1 + 1e-12) for lo, hi in brackets)


# ------------------------------------------------- sparse, equal sizes with uniform weights
def _equal_size_instances(d, rng):
    n = 400
    yield "random_skewed", rng.random((n, d)), rng.random((n, d)) ** 1.5
    yield "duplicates", np.repeat(rng.random((40, d)), 10, axis=0), np.repeat(rng.random((50, d)), 8, axis=0)
    yield "one_point_mass", rng.random((n, d)), np.full((n, d), 0.3)
    yield "identical", (Z := rng.random((n, d))), Z.copy()
    far = np.concatenate([rng.random((300, d)) * 0.05, 0.95 + rng.random((100, d)) * 0.05])
    far2 = np.concatenate([rng.random((60, d)) * 0.05, 0.95 + rng.random((340, d)) * 0.05])
    yield "far_clusters_unequal", far, far2
    yield "lattice_ties", np.round(rng.random((n, d)) * 5) / 5, np.round(rng.random((n, d)) * 5) / 5
    yield "not_unit_scale", rng.normal(0, 50, (n, d)), rng.normal(20, 30, (n, d))


@pytest.mark.parametrize("d", [2, 3])
@pytest.mark.parametrize("metric", ["linf", "l1", "l2"])
def test_sparse_equal_sizes_equals_dense_pot(d, metric):
    """Equal sizes, uniform weights (the assignment case), equal to ot.emd2 to 1e-9 relative; the
    certified bracket of every round contains the dense optimum (up to POT's rounding)."""
    rng = np.random.default_rng(50 + d)
    for name, X, Y in _equal_size_instances(d, rng):
        ref = dense_w1(X, Y, metric=metric)
        r = wasserstein1(X, Y, method="sparse", metric=metric, return_result=True)
        assert r.certified and r.exact, name
        scale = 1e-12 * max(1.0, float(np.abs(np.concatenate([X, Y])).max()))
        for h in r.details["rounds"]:
            assert h["lower"] <= ref + scale and ref <= h["upper"] + scale, name
        if ref == 0:
            assert abs(r.value) < 1e-12, name
        else:
            assert rel_err(r.value, ref) < REL, (name, r.value, ref)


def _exact_on_the_hard_instances(d, rng, metric, **kw):
    """transshipment_w1(**kw) on the adversarial and the equal-size instances: certified at dense POT's
    value to 1e-9 relative, every round's bracket containing it (up to 1e-12 of the points' scale)."""
    from dpsynth_core.transport.transshipment import transshipment_w1

    cases = [(name, X, Y, a, b) for name, X, Y, a, b in _instances(d, rng)]
    cases += [(name, X, Y, None, None) for name, X, Y in _equal_size_instances(d, rng)]
    for name, X, Y, a, b in cases:
        ref = dense_w1(X, Y, a, b, metric)
        pa = np.full(len(X), 1 / len(X)) if a is None else a / a.sum()
        pb = np.full(len(Y), 1 / len(Y)) if b is None else b / b.sum()
        last, hist = transshipment_w1(X, Y, pa, pb, metric, **kw)
        assert last.certified, name
        scale = 1e-12 * max(1.0, float(np.abs(np.concatenate([X, Y])).max()))
        for h in hist:
            assert h["lower"] <= ref + scale and ref <= h["upper"] + scale, name
        assert abs(last.upper - ref) <= REL * ref + scale, (name, last.upper, ref)


@pytest.mark.parametrize("d", [2, 3])
@pytest.mark.parametrize("metric", ["linf", "l1", "l2"])
@pytest.mark.parametrize("start", ["knn", "coarse"])
def test_both_starts_are_exact_on_the_hard_instances(d, metric, start):
    """The initial graph is only a heuristic: with either start (the kNN graph alone, or with the arcs
    of the coarse solution) the solver ends certified at dense POT's value to 1e-9 relative, and every
    round's bracket contains it, on the adversarial and the equal-size instances (weights, duplicates,
    a point mass, far clusters, lattice ties, points far from the unit box)."""
    _exact_on_the_hard_instances(d, np.random.default_rng(60 + d), metric, start=start)


def test_coarse_start_bounds_its_queries_per_point():
    """A cell that sends mass to many cells (a point mass against a spread set) hands its moves out
    round-robin: at most COARSE_MOVES_PER_POINT queries per point, and together its points still cover
    every move of the coarse plan."""
    from dpsynth_core.transport.transshipment import COARSE_MOVES_PER_POINT, _shifted_queries

    n, targets = 200, 700
    cell = np.zeros(n, dtype=np.int64)  # every point in cell 0
    sup_from = np.zeros(targets, dtype=np.int64)
    sup_to = np.arange(targets)
    pts, to = _shifted_queries(cell, sup_from, sup_to, 1)
    assert pts.size == n * COARSE_MOVES_PER_POINT and np.bincount(pts).max() == COARSE_MOVES_PER_POINT
    assert set(to.tolist()) == set(range(targets))
    # a cell with few moves: every point gets all of them
    pts, to = _shifted_queries(np.array([0, 0, 1]), np.array([0, 0, 1]), np.array([5, 6, 7]), 2)
    assert sorted(zip(pts.tolist(), to.tolist(), strict=True)) == [(0, 5), (0, 6), (1, 5), (1, 6), (2, 7)]


def test_coarse_start_narrows_the_first_bracket():
    """What the coarse start is for (benchmarks/bench_transport.py): on data whose mass travels far
    (uniform against half a tight blob, n = m = 1500, seed fixed), the first bracket with the coarse
    arcs is at least 3x narrower than the kNN graph's alone (measured: about 1e-2 against 1e-1; 3x
    leaves room for other seeds)."""
    from dpsynth_core.transport.transshipment import w1_rounds

    rng = np.random.default_rng(70)
    n = 1500
    X = rng.random((n, 2))
    Y = np.concatenate([rng.normal(0.3, 0.1, (n // 2, 2)), rng.random((n - n // 2, 2))])
    w = np.full(n, 1 / n)
    first = {s: next(iter(w1_rounds(X, Y, w, w, "linf", start=s))).rel_width for s in ("knn", "coarse")}
    assert first["coarse"] * 3 <= first["knn"], first
    with pytest.raises(ValueError, match="start must be"):
        next(iter(w1_rounds(X, Y, w, w, "linf", start="fast")))


@pytest.mark.parametrize("metric,bipartite", [("l2", 0), ("l2", 24), ("l2", 4), ("linf", 8), ("l1", 8)])
def test_the_bipartite_phase_is_exact_on_the_hard_instances(metric, bipartite, monkeypatch):
    """From the second round on, l2 solves on a bipartite graph of smallest-slack pairs, pruned by
    reduced cost; it only changes which arcs the solver sees, never the certificate. With it off (0),
    at its default (24), with a tiny batch (4) and forced onto l_inf/l1 (where it is slow but must stay
    right): certified at dense POT's value to 1e-9, every round's bracket containing it (d = 2). The phase
    is made to start after the first round whatever its bracket (by default at 0.1%, which these small
    instances often reach exact without it), and it is checked that it ran."""
    from dpsynth_core.transport import transshipment as ts

    monkeypatch.setattr(ts, "BIPARTITE_FROM", 1.0)
    calls = []
    real = ts._Solver.to_bipartite
    monkeypatch.setattr(ts._Solver, "to_bipartite", lambda self, *a: (calls.append(1), real(self, *a))[1])
    _exact_on_the_hard_instances(2, np.random.default_rng(64), metric, bipartite=bipartite)
    assert (len(calls) > 0) == (bipartite > 0)


def test_reduced_cost_pruning_never_drops_a_pair_of_the_optimal_plan(monkeypatch):
    """The pruning rule of the bipartite phase: with a feasible dual (psi, v) of lower bound LB and a
    flow of cost U, no integral optimal plan puts a unit (1/T) on a pair of reduced cost above T(U - LB).
    n = m with uniform weights: dense POT's plan is a permutation (integral), so none of its pairs may
    be among those dropped, in any round; and the rule must actually drop pairs here (it is tested, not
    idle). The pruning serves LEMON's cold solves: with the warm solves of ._simplex (the default) the
    bipartite graph only grows, so this runs with ``tree_warm=False``."""
    from dpsynth_core.transport import transshipment as ts

    rng = np.random.default_rng(65)
    n = 2000
    X = rng.random((n, 2))
    Y = np.concatenate([rng.normal(0.3, 0.1, (n // 2, 2)), rng.random((n - n // 2, 2))])
    G = ot.emd(np.full(n, 1 / n), np.full(n, 1 / n), cdist(X, Y), numItermax=10**8)
    i, j = np.nonzero(G > 0.5 / n)
    assert i.size == n  # a permutation
    N = 2 * n
    plan = set((i * N + n + j).tolist())
    dropped = []
    real = ts._Solver.to_bipartite

    def spy(self, rec, check, batch):
        was_bipartite, before = self.bipartite, self.allkey
        real(self, rec, check, batch)
        if was_bipartite:
            rj = check[3][:, :batch]
            cand = ts._unique_keys(np.concatenate([before, np.repeat(np.arange(n), rj.shape[1]) * N + n + rj.ravel()]))
            dropped.append(np.setdiff1d(cand, self.key, assume_unique=True))

    monkeypatch.setattr(ts._Solver, "to_bipartite", spy)
    # start the phase at a 1% bracket (default 0.1%) so that this instance has pruned rounds: the rule
    # does not depend on when the phase starts
    monkeypatch.setattr(ts, "BIPARTITE_FROM", 0.01)
    last, _ = ts.transshipment_w1(X, Y, np.full(n, 1 / n), np.full(n, 1 / n), "l2", tree_warm=False)
    assert last.certified and abs(last.upper - ot.emd2(np.full(n, 1 / n), np.full(n, 1 / n), cdist(X, Y),
                                                       numItermax=10**8)) < 1e-9 * last.upper
    gone = np.concatenate(dropped) if dropped else np.zeros(0, dtype=np.int64)
    gone = gone[(gone // N < n) & (gone % N >= n)]  # X -> Y pairs (the first flow's other arcs go too)
    assert gone.size > 0
    assert not plan.intersection(gone.tolist())


def test_c_transform_kernel_against_brute_force():
    """The kd-tree c-transform (the certificate's lower bound) against the n x m matrix: the k smallest
    c(x_i, y_j) - v_j of every row, exactly, and the rows and columns of the same problem agree; a
    dual raised above its c-transform is rejected by the all-pairs check."""
    from dpsynth_core.transport.metrics import ground_metric

    rng = np.random.default_rng(62)
    n, m = 250, 180
    X, Y = rng.random((n, 2)), rng.random((m, 2)) ** 1.5
    for metric in ("linf", "l1", "l2"):
        M = cdist(X, Y, CDIST[metric])
        v, u = rng.normal(0, 0.2, m), rng.normal(0, 0.2, n)
        pair = ground_metric(metric).prepare(X, Y)
        vals, inds = pair.rows(v, 3)
        R = M - v[None, :]
        assert np.allclose(vals, np.sort(R, axis=1)[:, :3], atol=1e-15, rtol=0)
        assert np.array_equal(inds[:, 0], R.argmin(axis=1))
        cvals, cinds = pair.cols(u, 2)
        Rc = M - u[:, None]
        assert np.allclose(cvals, np.sort(Rc, axis=0)[:2].T, atol=1e-15, rtol=0)
        assert np.array_equal(cinds[:, 0], Rc.argmin(axis=0))
    f = vals[:, 0].copy()
    assert check_dual_certificate(X, Y, np.full(n, 1 / n), np.full(m, 1 / m), f, v, "l2") < 1e-15
    f[5] += 1e-4
    assert check_dual_certificate(X, Y, np.full(n, 1 / n), np.full(m, 1 / m), f, v, "l2") >= 1e-4 - 1e-15


# ------------------------------------------------------------------------------ BL projection
def primal_dbl(nu, tau, Y, metric="linf"):
    """Independent d_BL(nu, tau): max sum (nu - tau) f over |f_i - f_j| <= c_ij, |f| <= diam."""
    m, d = Y.shape
    diam = {"linf": 1.0, "l1": float(d), "l2": np.sqrt(d)}[metric]
    C = cdist(Y, Y, CDIST[metric])
    Ii, Jj = np.nonzero(~np.eye(m, dtype=bool))
    import scipy.sparse as sp

    A = sp.csr_matrix((np.r_[np.ones(Ii.size), -np.ones(Ii.size)],
                       (np.r_[np.arange(Ii.size), np.arange(Ii.size)], np.r_[Ii, Jj])), shape=(Ii.size, m))
    r = linprog(-(nu - tau), A_ub=A, b_ub=C[Ii, Jj], bounds=(-diam, diam), method="highs")
    assert r.status == 0
    return -r.fun


def test_bl_sparse_equals_dense_on_20_random_signed_measures():
    rng = np.random.default_rng(50)
    shapes = [(4, 4), (8, 8), (4, 4, 4), (3, 3), (16,), (2, 2, 2)]
    for t in range(20):
        shape = shapes[t % len(shapes)]
        m = int(np.prod(shape))
        n = int(rng.integers(5, 200))
        nu = (rng.multinomial(n, np.full(m, 1 / m)) + rng.laplace(0, 1 / 0.5, m)) / n  # PSMM-like
        dense = bl_projection(nu, grid_shape=shape, method="dense")
        sparse = bl_projection(nu, grid_shape=shape, method="sparse")
        # both LPs are solved to optimality; HiGHS's feasibility tolerance is 1e-7
        assert abs(dense.value - sparse.value) < 1e-7, (shape, dense.value, sparse.value)
        for res in (dense, sparse):
            assert isinstance(res, BLProjectionResult)
            assert np.all(res.tau >= 0) and abs(res.tau.sum() - 1) < 1e-12
            # the reported value is d_BL(nu, tau) computed independently from the primal (Prop. 6)
            assert abs(primal_dbl(nu, res.tau, cell_centres(shape[0], len(shape))) - res.value) < 1e-7


def test_bl_projection_is_optimal_and_l1():
    rng = np.random.default_rng(51)
    shape = (5, 5)
    Y = cell_centres(5, 2)
    nu = rng.normal(1 / 25, 0.05, 25)
    best = bl_projection(nu, grid_shape=shape)
    for _ in range(5):
        tau = rng.dirichlet(np.ones(25))
        assert primal_dbl(nu, tau, Y) >= best.value - 1e-9
    # l1: 4-neighbour grid graph against the dense LP
    d1 = bl_projection(nu, grid_shape=shape, method="dense", metric="l1")
    s1 = bl_projection(nu, grid_shape=shape, method="sparse", metric="l1")
    assert abs(d1.value - s1.value) < 1e-7
    # dense on a general support with l2
    sup = rng.random((30, 2))
    nu2 = rng.normal(1 / 30, 0.05, 30)
    r2 = bl_projection(nu2, sup, method="dense", metric="l2")
    assert abs(primal_dbl(nu2, r2.tau, sup, "l2") - r2.value) < 1e-7


def test_bl_projection_of_a_probability_vector_is_itself():
    rng = np.random.default_rng(52)
    p = rng.dirichlet(np.ones(16))
    r = bl_projection(p, grid_shape=(4, 4))
    assert r.value < 1e-12 and np.allclose(r.tau, p, atol=1e-12)


def test_bl_all_negative_measure():
    # no mass to move: the best tau costs at least the bound term; value = d_BL(nu, tau) still holds
    nu = -np.full(9, 0.1)
    r = bl_projection(nu, grid_shape=(3, 3))
    assert abs(primal_dbl(nu, r.tau, cell_centres(3, 2)) - r.value) < 1e-7


# ------------------------------------------------------------------------------ validation rules
X2 = np.random.default_rng(0).random((10, 2))
Y2 = np.random.default_rng(1).random((12, 2))


@pytest.mark.parametrize("kwargs,exc,match", [
    ({"metric": "l3"}, ValueError, r"The 'metric' parameter of wasserstein1 must be one of"),
    ({"metric": 2}, TypeError, r"'metric' parameter of wasserstein1"),
    ({"method": "exact"}, ValueError, r"The 'method' parameter of wasserstein1 must be one of"),
    ({"return_result": 1}, TypeError, r"'return_result' parameter of wasserstein1 must be a bool"),
    ({"weights_x": -np.ones(10)}, ValueError, r"'weights_x' .* non-negative"),
    ({"weights_x": np.r_[np.nan, np.ones(9)]}, ValueError, r"'weights_x' .* finite"),
    ({"weights_x": np.zeros(10)}, ValueError, r"'weights_x' .* positive sum"),
    ({"weights_y": np.ones(11)}, ValueError, r"'weights_y' .* length 12"),
    ({"weights_y": "uniform"}, TypeError, r"'weights_y' parameter of wasserstein1"),
    ({"weights_y": np.ones((12, 2))}, ValueError, r"'weights_y' .* length 12"),
    ({"grid": 1}, ValueError, r"'grid' parameter of wasserstein1 must be an int in \[2, 4096\]"),
    ({"grid": 2.5}, ValueError, r"'grid' parameter of wasserstein1"),
    ({"grid": "8"}, TypeError, r"'grid' parameter of wasserstein1"),
    ({"n_projections": 0}, ValueError, r"'n_projections' parameter of wasserstein1"),
    ({"method": "exact_1d"}, ValueError, r"'exact_1d', which needs d = 1"),
    ({"method": "grid", "metric": "l2"}, ValueError, r"'metric' parameter of wasserstein1 must be 'linf' or 'l1'"),
    ({"method": "grid", "grid": 2000}, ValueError, r"'grid' parameter of wasserstein1 must give at most 2e6 cells \(grid\^d\). Got 2000"),
    ({"domain": "unit"}, TypeError, r"'domain' parameter of wasserstein1 must be a Domain"),
    ({"domain": Domain.unit(3)}, ValueError, r"'X' parameter of wasserstein1 must be an array of shape \(n, 3\)"),
])
def test_wasserstein1_validation(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        wasserstein1(X2, Y2, **kwargs)


def test_wasserstein1_point_validation(monkeypatch):
    with pytest.raises(ValueError, match=r"'Y' parameter of wasserstein1 must be an array of shape \(n, 2\)"):
        wasserstein1(X2, np.ones((5, 3)))
    with pytest.raises(TypeError, match=r"'X' parameter of wasserstein1"):
        wasserstein1("abc", Y2)
    with pytest.raises(ValueError, match=r"'X' parameter of wasserstein1 must contain only finite values"):
        wasserstein1(np.array([[0.0, np.inf]]), Y2)
    with pytest.raises(ValueError, match=r"'Y' parameter of wasserstein1 must be an array with at least 1 row"):
        wasserstein1(X2, np.zeros((0, 2)))
    with pytest.raises(ValueError, match=r"'X' parameter of wasserstein1 must lie in the unit cube"):
        wasserstein1(X2 * 3, Y2, method="grid")
    monkeypatch.setattr(tr.dense, "POT_MAX_PAIRS", 100)
    with pytest.raises(ValueError, match=r"'pot', which is limited to n\*m <= 100"):
        wasserstein1(X2, Y2, method="pot")


NU16 = np.full(16, 1 / 16)


@pytest.mark.parametrize("args,kwargs,exc,match", [
    ((NU16,), {"grid_shape": (4, 4), "method": "lp"}, ValueError, r"'method' parameter of bl_projection must be one of"),
    ((NU16,), {"grid_shape": (4, 4), "metric": "max"}, ValueError, r"'metric' parameter of bl_projection must be one of"),
    (("abc",), {"grid_shape": (4, 4)}, TypeError, r"'nu' parameter of bl_projection"),
    ((np.ones((4, 4)),), {"grid_shape": (4, 4)}, ValueError, r"'nu' parameter of bl_projection must be a non-empty 1-D"),
    ((np.zeros(0),), {"grid_shape": (4, 4)}, ValueError, r"'nu' parameter of bl_projection must be a non-empty 1-D"),
    ((np.r_[np.nan, NU16[1:]],), {"grid_shape": (4, 4)}, ValueError, r"'nu' parameter of bl_projection must be a 1-D array of finite"),
    ((NU16,), {"grid_shape": 16}, TypeError, r"'grid_shape' parameter of bl_projection"),
    ((NU16,), {"grid_shape": (2, 8)}, ValueError, r"'grid_shape' .* same k on every axis"),
    ((NU16,), {"grid_shape": (4, 5)}, ValueError, r"'grid_shape' .* same k on every axis"),
    ((NU16,), {"grid_shape": (5, 5)}, ValueError, r"'grid_shape' parameter of bl_projection must be a grid with 16 cells"),
    ((np.ones(1),), {"grid_shape": (1,) * 7}, ValueError, r"'grid_shape' parameter of bl_projection must be a tuple of 1 to 6"),
    ((NU16,), {"grid_shape": (4.5, 4.5)}, ValueError, r"'grid_shape' parameter of bl_projection"),
    ((NU16, np.zeros((15, 2))), {"method": "dense"}, ValueError, r"'support' parameter of bl_projection must be an array with 16 rows"),
    ((NU16, np.full((16, 2), 2.0)), {"method": "dense"}, ValueError, r"'support' .* unit cube"),
    ((NU16, np.full((16, 2), 0.5)), {"grid_shape": (4, 4)}, ValueError, r"'support' .* cell centres"),
    ((NU16,), {"method": "dense"}, TypeError, r"'support' parameter of bl_projection"),
    ((NU16,), {"method": "sparse"}, TypeError, r"'grid_shape' parameter of bl_projection"),
    ((NU16,), {"grid_shape": (4, 4), "metric": "l2"}, ValueError, r"'metric' parameter of bl_projection must be 'linf' or 'l1'"),
    ((np.full(441, 1 / 441),), {"grid_shape": (21, 21), "method": "dense"}, ValueError, r"at most 400 entries with method='dense'"),
])
def test_bl_projection_validation(args, kwargs, exc, match):
    with pytest.raises(exc, match=match):
        bl_projection(*args, **kwargs)


def test_check_dual_certificate_validation():
    a, b = np.full(10, 0.1), np.full(12, 1 / 12)
    with pytest.raises(ValueError, match=r"'u' parameter of check_dual_certificate must be an array of length 10"):
        check_dual_certificate(X2, Y2, a, b, np.zeros(9), np.zeros(12))
    with pytest.raises(ValueError, match=r"'v' parameter of check_dual_certificate must be an array of length 12"):
        check_dual_certificate(X2, Y2, a, b, np.zeros(10), np.zeros(11))
    with pytest.raises(ValueError, match=r"'u' and 'v' parameters of check_dual_certificate must be finite"):
        check_dual_certificate(X2, Y2, a, b, np.full(10, np.nan), np.zeros(12))
    with pytest.raises(ValueError, match=r"'metric' parameter of check_dual_certificate"):
        check_dual_certificate(X2, Y2, a, b, np.zeros(10), np.zeros(12), "lp")
    with pytest.raises(ValueError, match=r"'a' parameter of check_dual_certificate .* non-negative"):
        check_dual_certificate(X2, Y2, -a, b, np.zeros(10), np.zeros(12))
