"""Tests of the sparse transshipment solver (dpsynth_core.transport.transshipment, docs/transport.md,
"Exact W1 by sparse transshipment") against POT's dense network simplex.

Tolerance: the solver reports exact only when its certified bracket is narrower than 1e-10 W1
(+ 1e-12 diam); dense POT's own rounding is ~1e-15 relative at these sizes. Agreement is asserted to
1e-9 relative (an order of magnitude above the certificate, far below any wrong plan: one misrouted
unit of mass among a few hundred changes W1 by ~1e-3 relative). Every round's bracket must contain
the dense value up to 1e-12 relative (POT's rounding). Fixed seeds throughout.
"""

from __future__ import annotations

import numpy as np
import ot
import pytest
from scipy.spatial.distance import cdist

from dpsynth_core.transport import GroundMetric, LpMetric, wasserstein1
from dpsynth_core.transport.transshipment import integer_masses, transshipment_w1, w1_rounds

CDIST = {"linf": "chebyshev", "l1": "cityblock", "l2": "euclidean"}
REL = 1e-9


def dense(X, Y, a, b, metric):
    return float(ot.emd2(a, b, cdist(X, Y, CDIST[metric]), numItermax=10**9))


def probs(w):
    w = np.asarray(w, float)
    return w / w.sum()


def instances(d, rng):
    """(name, X, Y, a, b): equal and unequal sizes, uniform / count-like / general weights, duplicated
    points, isolated far points, a degenerate grid with many equal distances, a collinear set."""
    u = lambda k: np.full(k, 1.0 / k)  # noqa: E731
    yield "equal_uniform", rng.random((300, d)), rng.random((300, d)) ** 2, u(300), u(300)
    yield "unequal_uniform", rng.random((257, d)), rng.random((131, d)) ** 3, u(257), u(131)
    yield "general_weights", rng.random((200, d)), rng.random((170, d)), probs(rng.random(200) ** 3), probs(rng.random(170))
    yield "count_weights", rng.random((150, d)), rng.random((90, d)), probs(rng.integers(1, 7, 150)), u(90)
    yield "duplicates", np.repeat(rng.random((25, d)), 9, axis=0), np.repeat(rng.random((30, d)), 6, axis=0), u(225), u(180)
    far = np.concatenate([rng.random((200, d)) * 0.2, [np.full(d, 50.0), np.full(d, -30.0)]])
    yield "far_points", far, rng.random((150, d)) * 0.2, u(202), u(150)
    yield "far_points_heavy", far, rng.random((150, d)) * 0.2, probs(np.r_[np.ones(200), 40.0, 25.0]), u(150)
    g = np.stack(np.meshgrid(*[np.arange(6) / 5] * d, indexing="ij"), -1).reshape(-1, d)
    yield "degenerate_grid", g, g[rng.permutation(len(g))[: len(g) // 2]] * 0.5, u(len(g)), u(len(g) // 2)
    line = np.zeros((120, d))
    line[:, 0] = rng.random(120)
    yield "collinear", line, line[:80] + 0.01, u(120), probs(rng.random(80))


@pytest.mark.parametrize("d", [2, 3])
@pytest.mark.parametrize("metric", ["linf", "l1", "l2"])
def test_exact_against_dense_pot_and_brackets_contain_it(d, metric):
    rng = np.random.default_rng(1000 + 10 * d + len(metric))
    for name, X, Y, a, b in instances(d, rng):
        ref = dense(X, Y, a, b, metric)
        rounds = list(w1_rounds(X, Y, a, b, metric))
        last = rounds[-1]
        assert last.certified, (name, last.details)
        assert abs(last.upper - ref) <= REL * ref + 1e-14, (name, last.upper, ref)
        for r in rounds:
            assert r.lower <= ref * (1 + 1e-12) + 1e-15 and ref <= r.upper * (1 + 1e-12) + 1e-15, (name, r.round)
        assert all(not r.certified for r in rounds[:-1])
        if name == "duplicates":  # copies are merged into one point with their summed weight
            assert (last.details["n_support"], last.details["m_support"]) == (25, 30)
        # the public entry point reports the same value as exact
        res = wasserstein1(X, Y, metric=metric, method="sparse", weights_x=a, weights_y=b, return_result=True)
        assert res.exact and res.certified and res.lower == res.value == res.upper
        assert abs(res.value - ref) <= REL * ref + 1e-14, name


def test_single_points_and_coincident_sets():
    x, y = np.array([[0.1, 0.2]]), np.array([[0.4, 0.9]])
    r, _ = transshipment_w1(x, y, np.ones(1), np.ones(1), "l1")
    assert r.certified and abs(r.upper - 1.0) < 1e-12
    Z = np.random.default_rng(3).random((40, 2))
    r, _ = transshipment_w1(Z, Z.copy(), np.full(40, 1 / 40), np.full(40, 1 / 40), "linf")
    assert r.certified and r.upper < 1e-12
    P = np.full((5, 2), 0.5)
    r, _ = transshipment_w1(P, P[:3], np.full(5, 0.2), np.full(3, 1 / 3), "l2")
    assert r.certified and r.upper == 0.0 and r.lower == 0.0


def test_integer_masses_exact_and_diffused():
    rng = np.random.default_rng(4)
    # uniform, unequal sizes: exact integers with a common total
    sa, sb, T, exact = integer_masses(np.full(6, 1 / 6), np.full(4, 1 / 4), np.arange(6), np.arange(4))
    assert exact and T == 12 and sa.tolist() == [2] * 6 and sb.tolist() == [3] * 4
    # count-like weights (counts 2, 3, 5 out of 10): exact
    sa, sb, T, exact = integer_masses(probs([2, 3, 5]), np.full(2, 0.5), np.arange(3), np.arange(2))
    assert exact and sa.sum() == sb.sum() == T and np.allclose(sa / T, [0.2, 0.3, 0.5], rtol=0, atol=0)
    # general weights: total 2^52, every partial sum along the order within 1/(2T) of the true one
    a = probs(rng.random(500))
    order = rng.permutation(500)
    sa, sb, T, exact = integer_masses(a, np.full(3, 1 / 3), order, np.arange(3))
    assert not exact and T == 2**52 and sa.sum() == T and (sa >= 0).all()
    part = np.cumsum(a[order]) - np.cumsum(sa[order]) / T
    assert np.abs(part).max() <= 1.0 / T + 1e-15


class ScaledLinf(GroundMetric):
    """A plug-in ground metric: 3 x the l_inf distance, through the GroundMetric interface (the way a
    mixed numeric/categorical metric will plug in)."""

    name = "3linf"

    def __init__(self):
        self.base = LpMetric("linf")

    def cost(self, P, Q):
        return 3.0 * self.base.cost(P, Q)

    def neighbours(self, Z, k):
        return self.base.neighbours(Z, k)

    def prepare(self, X, Y):
        base = self.base.prepare(X, Y)

        class Pair:
            def rows(self, v, k=1):
                # min_j 3 c_ij - v_j = 3 min_j (c_ij - v_j / 3)
                vals, idx = base.rows(np.asarray(v) / 3.0, k)
                return 3.0 * vals, idx

            def cols(self, u, k=1):
                vals, idx = base.cols(np.asarray(u) / 3.0, k)
                return 3.0 * vals, idx

        return Pair()

    def bound(self, X, Y):
        return 3.0 * self.base.bound(X, Y)

    def rounding(self, d):
        return 2 * self.base.rounding(d)


def test_a_plugged_in_ground_metric():
    rng = np.random.default_rng(5)
    X, Y = rng.random((200, 2)), rng.random((150, 2)) ** 2
    a, b = np.full(200, 1 / 200), probs(rng.random(150))
    ref = 3.0 * dense(X, Y, a, b, "linf")
    r, _ = transshipment_w1(X, Y, a, b, ScaledLinf())
    assert r.certified and abs(r.upper - ref) <= REL * ref


def test_a_round_limit_leaves_an_honest_bracket():
    rng = np.random.default_rng(6)
    X = rng.random((600, 2))
    Y = np.concatenate([rng.normal(0.3, 0.1, (300, 2)), rng.random((300, 2))])
    a = np.full(600, 1 / 600)
    ref = dense(X, Y, a, a, "linf")
    rounds = list(w1_rounds(X, Y, a, a, "linf", max_rounds=1))
    assert len(rounds) == 1 and not rounds[0].certified and "max_rounds" in rounds[0].details["stopped"]
    assert rounds[0].lower < ref < rounds[0].upper
    # warm starts (spare arcs switched on by a cost change) give the same certified value
    r, _ = transshipment_w1(X, Y, a, a, "linf", warm_starts=True)
    assert r.certified and abs(r.upper - ref) <= REL * ref


@pytest.mark.parametrize("metric", ["linf", "l2"])
def test_double_transform_tightens_the_brackets_and_keeps_them_proven(metric):
    """The second c-transform (psi back over Y) gives a lower bound at least as high in every round,
    still at most the dense optimum; the solves, hence the upper bounds, are the same."""
    rng = np.random.default_rng(7)
    X, Y = rng.random((400, 2)), rng.random((350, 2))  # two independent samples: a loose first round
    a, b = np.full(400, 1 / 400), np.full(350, 1 / 350)
    ref = dense(X, Y, a, b, metric)
    plain = list(w1_rounds(X, Y, a, b, metric))
    tight = list(w1_rounds(X, Y, a, b, metric, double_transform=True))
    assert len(plain) == len(tight) >= 2 and tight[-1].certified
    for p, t in zip(plain, tight, strict=True):
        assert t.upper == p.upper and p.lower <= t.lower <= ref * (1 + 1e-12)
    assert tight[0].lower > plain[0].lower  # strictly better where it matters, in the first round
