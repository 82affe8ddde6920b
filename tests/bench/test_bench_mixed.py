"""The pure helpers of benchmarks/bench_mixed.py: the mixed W1, the marginal errors and the decoding of the
peers' releases. The benchmark itself (the peers' own environment, minutes of CPU) is not run here."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from scipy.optimize import linear_sum_assignment

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks import bench_mixed as bm  # noqa: E402
from dpsynth_core import Domain  # noqa: E402
from dpsynth_core.transport.marginals import mixed_cost  # noqa: E402


def _dom() -> Domain:
    return Domain([0.0, 10.0], [1.0, 20.0], names=["a", "sex", "b", "region"],
                  categories={"sex": ["F", "M"], "region": ["n", "e", "s"]}, weights={"region": 0.5})


def test_column_weights_follow_the_encoded_order():
    assert bm.column_weights(_dom()).tolist() == [0.0, 1.0, 0.0, 0.5]


def test_mixed_w1_of_a_hand_computed_pair():
    # rows (numeric, category): u0 = (0, 0), u1 = (0.5, 1); v0 = (0.1, 0), v1 = (0.5, 0). Costs: u0-v0 0.1,
    # u0-v1 0.5, u1-v0 1, u1-v1 1 (different categories). Best plan u0->v0, u1->v1: (0.1 + 1) / 2.
    U = np.array([[0.0, 0.0], [0.5, 1.0]])
    V = np.array([[0.1, 0.0], [0.5, 0.0]])
    value, exact = bm.mixed_w1(U, V, np.array([0.0, 1.0]))
    assert exact
    assert value == pytest.approx(0.55, abs=1e-12)
    value, _ = bm.mixed_w1(U, V, np.array([0.0, 0.25]))  # weight 0.25: u1-v0 0.4, u1-v1 0.25 -> (0.1 + 0.25) / 2
    assert value == pytest.approx(0.175, abs=1e-12)


def test_mixed_w1_equals_the_optimal_assignment():
    # with n = m and uniform weights W1 is the optimal assignment's mean cost (Birkhoff): SciPy's Hungarian
    # solver on the same cost matrix is an independent reference; both are exact, so 1e-9 is rounding only
    gen = np.random.default_rng(3)
    dom = _dom()
    for n in (5, 40):
        U = np.column_stack([gen.random(n), gen.integers(0, 2, n), gen.random(n), gen.integers(0, 3, n)])
        V = np.column_stack([gen.random(n), gen.integers(0, 2, n), gen.random(n), gen.integers(0, 3, n)])
        w = bm.column_weights(dom)
        M = mixed_cost(U, V, w)
        r, c = linear_sum_assignment(M)
        value, exact = bm.mixed_w1(U, V, w)
        assert exact
        assert value == pytest.approx(M[r, c].mean(), abs=1e-9)


def test_marginal_errors_zero_on_identical_sets_and_one_on_disjoint_categories():
    dom = _dom()
    gen = np.random.default_rng(0)
    U = np.column_stack([gen.random(50), gen.integers(0, 2, 50), gen.random(50), gen.integers(0, 3, 50)])
    same = bm.marginal_errors(U, U.copy(), dom)
    assert same == {"marg1": 0.0, "marg2": 0.0, "marg1_cat": 0.0, "marg1_num": 0.0}
    U2, V2 = U.copy(), U.copy()  # every real row F, every synthetic row M: the sex marginals are disjoint
    U2[:, 1], V2[:, 1] = 0, 1
    got = bm.marginal_errors(U2, V2, dom)
    assert got["marg1_cat"] == pytest.approx(0.5)  # sex: 1, region: 0
    assert got["marg1_num"] == 0.0
    # every pair with the sex column is disjoint (TV 1), the other 3 of the 6 pairs identical
    assert got["marg2"] == pytest.approx(3 / 6)


def test_marginal_errors_of_a_hand_computed_numeric_column():
    # one numeric column: real rows in bins 0 and 9 (half each), synthetic all in bin 0: TV = 1/2
    dom = Domain([0.0], [1.0], names=["x"], categories={"c": ["p", "q"]})
    U = np.array([[0.01, 0], [0.99, 0]])
    V = np.array([[0.02, 0], [0.03, 0]])
    got = bm.marginal_errors(U, V, dom)
    assert got["marg1_num"] == pytest.approx(0.5)
    assert got["marg1_cat"] == 0.0
    assert got["marg2"] == pytest.approx(0.5)


def test_peer_columns_give_one_bin_per_declared_category_with_the_code_as_midpoint():
    dom = _dom()
    lo, hi, nb = bm.peer_columns(dom, 8)
    assert nb == [8, 2, 8, 3]
    assert (lo[0], hi[0], lo[2], hi[2]) == (0.0, 1.0, 10.0, 20.0)
    for i, k in ((1, 2), (3, 3)):
        mids = lo[i] + (np.arange(k) + 0.5) * (hi[i] - lo[i]) / nb[i]
        assert mids == pytest.approx(np.arange(k), abs=1e-12)


def test_decode_peer_keeps_bins_and_rounds_codes():
    dom = _dom()
    bins = 4
    # midpoints of bins 1 and 3 of [0, 1] and of bins 0 and 2 of [10, 20]; codes as smartnoise returns floats
    Y = np.array([[0.375, 0.9999999, 11.25, 2.0000001], [0.875, 0.0, 16.25, 0.0]])
    out = bm.decode_peer(Y, dom, bins, np.random.default_rng(1))
    assert out[:, 1].tolist() == [1.0, 0.0] and out[:, 3].tolist() == [2.0, 0.0]
    assert 0.25 <= out[0, 0] < 0.5 and 0.75 <= out[1, 0] < 1.0
    assert 10.0 <= out[0, 2] < 12.5 and 15.0 <= out[1, 2] < 17.5


def test_metrics_w1_equals_the_librarys_mixed_wasserstein1():
    # two exact computations of the same quantity (the benchmark's dense solve on mixed_cost, and
    # wasserstein1 with a mixed domain, dense POT as well): equal up to rounding
    from dpsynth_core.transport import wasserstein1

    dom = _dom()
    gen = np.random.default_rng(7)
    X = np.column_stack([gen.random(60), gen.integers(0, 2, 60), 10 + 10 * gen.random(60), gen.integers(0, 3, 60)])
    Y = np.column_stack([gen.random(45), gen.integers(0, 2, 45), 10 + 10 * gen.random(45), gen.integers(0, 3, 45)])
    got = bm.metrics(X, Y, dom)
    ref = wasserstein1(X, Y, domain=dom, method="pot", return_result=True)
    assert got["exact"] and ref.exact
    assert got["w1"] == pytest.approx(ref.value, abs=1e-9)
