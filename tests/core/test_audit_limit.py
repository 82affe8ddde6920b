"""The audit's detection limit (dpsynth_core.audit): the largest ε̂ a number of releases can show, the
verdict above it ("cannot decide", never a pass), the raise of the releases within a bounded cost, and
the teaching audit the dashboard's Audit page runs in one call.

Exactness: the limit is compared with the audit's own Clopper–Pearson bounds (scipy's Beta quantiles)
to 1e-9, and with a brute-force maximum over every pair of counts. The statistical checks use fixed
seeds; a deterministic mechanism (a different output on D and on D') reaches the limit exactly.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpsynth_core.audit import (
    BROKEN_PMM,
    HEADROOM,
    PATH_STATISTIC,
    STATISTICS,
    audit,
    clopper_pearson,
    detection_limit,
    planned_limit,
    runs_for_limit,
    teaching_audit,
    teaching_statistics,
    trials_for_limit,
)
from dpsynth_core.datasets import default_dataset

PAIR = (np.zeros((1, 1)), np.zeros((2, 1)))  # D has one row, D' two: the mechanisms below tell them apart


def _tell_apart(X, rng):
    """Privacy loss infinite: 0 on D, 1 on D' (every audit of it is at its detection limit)."""
    return float(X.shape[0] == 2)


def test_the_limit_is_the_largest_bound_over_every_pair_of_counts():
    # brute force over all (k_D, k_P) in {0..N}^2 with the audit's Clopper–Pearson bounds at β = α/(2K)
    N, K, alpha = 30, 4, 0.05
    level = alpha / (2 * K)
    k = np.arange(N + 1)
    lo = clopper_pearson(k, N, level, "lower")
    hi = clopper_pearson(k, N, level, "upper")
    with np.errstate(divide="ignore"):
        best = float(np.max(np.log(lo[:, None] / hi[None, :])))
    assert detection_limit(N, K, alpha=alpha) == pytest.approx(best, abs=1e-9)
    # the closed form log((β^(1/N) - δ) / (1 - β^(1/N))), with δ too
    for n_test, delta in ((750, 0.0), (750, 1e-3), (2000, 0.0)):
        x = (alpha / 8) ** (1 / n_test)
        assert detection_limit(n_test, 4, delta=delta) == pytest.approx(math.log((x - delta) / (1 - x)), abs=1e-9)
    assert detection_limit(750, 4) == pytest.approx(4.99, abs=0.01)  # 1,000 trials, a quarter for selection
    assert planned_limit(1000) == detection_limit(750, 4)
    assert detection_limit(5, 4, delta=0.9) == 0.0  # δ larger than any lower bound: nothing can be shown


def test_fewest_trials_and_test_runs_for_a_limit():
    for target in (1.0, 5.0, 6.0, 8.5):
        for delta in (0.0, 1e-5):
            t = trials_for_limit(target, delta=delta)
            assert planned_limit(t, delta=delta) > target >= planned_limit(t - 1, delta=delta)
            n = runs_for_limit(target, 4, delta=delta)
            assert detection_limit(n, 4, delta=delta) > target >= detection_limit(n - 1, 4, delta=delta)
    assert trials_for_limit(6.0) == 2735
    assert trials_for_limit(200.0) is None  # beyond MAX_TRIALS


def test_a_deterministic_difference_reaches_the_limit_and_no_further():
    res = audit(_tell_apart, *PAIR, statistic=lambda r: r, trials=1000, epsilon=1.0, rng=0)
    assert res.epsilon_lower == pytest.approx(res.detection_limit, rel=1e-12)
    assert res.verdict == "violation" and not res.passed and res.decided
    assert res.detection_limit == pytest.approx(detection_limit(750, res.events_tested), rel=1e-12)


def test_above_its_limit_the_audit_cannot_decide_and_says_so():
    # declared ε = 5 is above the limit of 1,000 trials (4.99): no outcome could show a violation
    res = audit(_tell_apart, *PAIR, statistic=lambda r: r, trials=1000, epsilon=5.0, rng=0)
    assert res.epsilon_lower <= res.detection_limit < 5.0
    assert res.verdict == "cannot decide" and not res.passed and not res.violation and not res.decided
    text = res.sentence()
    assert "cannot see violations above ε ≈ 4.99 with 1,000 releases" in text
    assert f"{trials_for_limit(5.0):,} releases per dataset" in text
    assert res.to_dict()["verdict"] == "cannot decide" and "detection limit 4.992" in res.summary()


def test_the_audit_raises_its_releases_within_max_trials():
    # with room: the fewest trials whose limit is ε + HEADROOM, and the violation is then seen
    res = audit(_tell_apart, *PAIR, statistic=lambda r: r, trials=1000, epsilon=5.0, rng=0, max_trials=5000)
    assert res.trials == trials_for_limit(5.0 + HEADROOM) == 2735 and res.requested_trials == 1000
    assert res.detection_limit > 5.0 + HEADROOM and res.verdict == "violation"
    assert "raised its releases from 1,000 to 2,735" in res.sentence()
    # without room (ε = 10 needs about 400,000): the requested trials, and "cannot decide"
    res = audit(_tell_apart, *PAIR, statistic=lambda r: r, trials=1000, epsilon=10.0, rng=0, max_trials=5000)
    assert res.trials == 1000 and res.requested_trials is None and res.verdict == "cannot decide"
    # a limit already high enough: nothing raised
    res = audit(_tell_apart, *PAIR, statistic=lambda r: r, trials=1000, epsilon=1.0, rng=0, max_trials=5000)
    assert res.trials == 1000 and res.requested_trials is None


def test_max_trials_is_checked():
    with pytest.raises(ValueError, match="'max_trials' parameter of audit"):
        audit(_tell_apart, *PAIR, statistic=lambda r: r, trials=1000, epsilon=1.0, max_trials=500)


def test_teaching_audit_statistics_and_refusals():
    assert teaching_statistics("pmm")[0] == PATH_STATISTIC == teaching_statistics(BROKEN_PMM)[0]
    assert teaching_statistics("psmm") == STATISTICS
    ds = default_dataset()
    with pytest.raises(ValueError, match="'mechanism' parameter of teaching_audit"):
        teaching_audit(ds.X, ds.domain, "nope", kind="add", point=[0.5, 0.5], epsilon=1.0)
    with pytest.raises(ValueError, match="'statistic' parameter of teaching_audit"):
        teaching_audit(ds.X, ds.domain, "psmm", kind="add", point=[0.5, 0.5], epsilon=1.0, statistic=PATH_STATISTIC)


@pytest.mark.slow
def test_teaching_audit_catches_the_broken_pmm_or_says_it_cannot_decide():
    """The Audit page's lesson, in the library: the broken PMM (2ε spent, ε claimed) is caught at ε = 1 with
    1,000 releases, at ε = 5 after the raise to 2,735 (its true loss 10 is far above), and at ε = 10 the audit
    cannot decide within 5,000 releases. Fixed seed 0 (a level-0.05 test; the violations are by margins of
    0.7 and 1.0 in ε̂, far outside the seeds' spread)."""
    ds = default_dataset()
    kw = dict(kind="add", point=ds.domain.center, rows=50, trials=1000, max_trials=5000, rng=0)
    one = teaching_audit(ds.X, ds.domain, BROKEN_PMM, epsilon=1.0, **kw)
    assert one.verdict == "violation" and one.trials == 1000
    five = teaching_audit(ds.X, ds.domain, BROKEN_PMM, epsilon=5.0, **kw)
    assert five.verdict == "violation" and five.trials == 2735 and five.epsilon_lower > 5.0
    ten = teaching_audit(ds.X, ds.domain, BROKEN_PMM, epsilon=10.0, **kw)
    assert ten.verdict == "cannot decide" and ten.trials == 1000
    assert "cannot see violations above ε ≈ 4.99 with 1,000 releases" in ten.sentence()
