"""The one policy for showing W1 while it improves (``dpsynth_core.transport.progressive``): which certified
results come for which public sizes, each certified, the last exact where an exact method fits; and the
certified bracket of a given width the Rates sweep measures."""

from __future__ import annotations

import numpy as np
import pytest

from dpsynth_core import Domain
from dpsynth_core.datasets import clinic
from dpsynth_core.transport import certified_w1, plan_metric, progressive_plan, progressive_w1, wasserstein1

DOM = Domain([0, 0], [1, 1])


@pytest.mark.parametrize("n, plan", [(400, "exact"), (5000, "rounds"), (10_000, "then_exact"),
                                     (100_000, "bracket_only")])
def test_plan_follows_the_library_policy_for_public_sizes(n, plan):
    # 400^2 pairs: dense POT within the interactive budget; 5000 + 5000 points: the budget's sparse method;
    # 2 * 10^4 points: the budget's grid interval, then the exact sparse method; 2 * 10^5: no exact method
    assert progressive_plan(n, n, 2) == plan


@pytest.mark.parametrize("n", [300, 3000])
def test_every_result_is_certified_and_the_last_is_exact(n):
    rng = np.random.default_rng(7)
    X, Y = rng.random((n, 2)), np.clip(rng.random((n, 2)) + 0.02, 0, 1)
    exact = wasserstein1(X, Y, domain=DOM, method="pot")
    results = list(progressive_w1(X, Y, DOM))
    assert results[-1].exact and abs(results[-1].value - exact) <= 1e-9 * max(exact, 1.0)
    for r in results:  # 1e-12: float64 rounding of the two solvers' costs
        assert r.lower - 1e-12 <= exact <= r.upper + 1e-12


def test_mixed_plans_follow_the_numeric_limits():
    """On categorical columns the policy reads the mixed metric: the numeric budget limits, no grid."""
    dom = clinic(n=50).domain
    assert plan_metric(dom) == "mixed" and plan_metric(DOM) == "linf"
    assert progressive_plan(600, 600, dom.d, "mixed") == "exact"  # dense POT within the interactive budget
    assert progressive_plan(2000, 2021, dom.d, "mixed") == "rounds"  # the clinic table: sparse rounds
    assert progressive_plan(7000, 7000, 2, "linf") == "then_exact"  # numeric: the grid's interval first
    # no grid for categories: the library's proven interval from every row first, then the exact rounds
    assert progressive_plan(7000, 7000, dom.d, "mixed") == "then_exact"
    assert progressive_plan(30_000, 30_000, dom.d, "mixed") == "bracket_only"  # beyond the exact sizes: never refused


def test_mixed_inputs_beyond_the_exact_sizes_get_the_libraries_proven_interval():
    """A mixed table beyond the exact sparse limit gets the policy's proven interval, never a refusal."""
    ds = clinic()
    X = np.tile(ds.X, (11, 1))  # 22 000 rows against 22 000: above the exact sparse limit (n + m = 40 000)
    first = next(progressive_w1(X, X, ds.domain))
    assert first.method == "interval" and first.certified and first.lower <= first.upper


def test_certified_w1_is_exact_when_small_and_within_target_when_large():
    rng = np.random.default_rng(11)
    small = rng.random((300, 2)), rng.random((300, 2))
    res = certified_w1(*small, DOM)
    assert res.exact and res.value == pytest.approx(wasserstein1(*small, domain=DOM, method="pot"), rel=1e-9)
    X, Y = rng.random((3000, 2)), np.clip(rng.random((3000, 2)) + 0.01, 0, 1)
    res = certified_w1(X, Y, DOM, target=0.01)
    assert res.exact or res.upper - res.lower <= 0.01 * res.upper
    assert certified_w1(X, np.zeros((0, 2)), DOM) is None  # an empty release has no W1
