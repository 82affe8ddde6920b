"""theory.fit_slope_ci: the log-log least-squares slope with the regression's standard error."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dpsynth_core.theory import fit_slope, fit_slope_ci


def _power_law(seed: int, slope: float = -0.5, sigma: float = 0.2, reps: int = 3):
    rng = np.random.default_rng(seed)
    x = np.repeat(np.geomspace(20, 20_000, 7), reps)
    return x, 0.8 * x**slope * np.exp(rng.normal(0, sigma, x.size))


def test_agrees_with_scipy_linregress_on_log_axes():
    x, y = _power_law(1)
    fit = fit_slope_ci(x, y)
    ref = stats.linregress(np.log(x), np.log(y))
    assert fit.slope == pytest.approx(ref.slope, abs=1e-12) and fit.intercept == pytest.approx(ref.intercept, abs=1e-12)
    assert fit.se == pytest.approx(ref.stderr, rel=1e-10)
    t = stats.t.ppf(0.975, x.size - 2)
    assert (fit.low, fit.high) == pytest.approx((ref.slope - t * ref.stderr, ref.slope + t * ref.stderr), rel=1e-10)
    assert (fit.slope, fit.intercept) == pytest.approx(fit_slope(x, y), abs=1e-12)


def test_band_contains_the_line_and_is_narrowest_at_the_centre():
    x, y = _power_law(2)
    fit = fit_slope_ci(x, y)
    xs = np.geomspace(20, 20_000, 31)
    lo, hi = fit.band(xs)
    line = fit.line(xs)
    assert np.all(lo < line) and np.all(line < hi)
    ratio = hi / lo
    assert np.argmin(ratio) == 15  # the mean of log x of a symmetric design is the middle of the grid


def test_coverage_of_the_true_slope():
    # 200 fixed seeds: the 95% interval should cover the true slope about 190 times; a binomial(200, 0.95)
    # falls below 180 or above 199 with probability < 0.2%, so this bound fails only for a wrong interval
    covered = sum(fit.low <= -0.5 <= fit.high for fit in (fit_slope_ci(*_power_law(s)) for s in range(200)))
    assert 180 <= covered <= 199, covered


def test_too_few_points_give_nan_not_an_error():
    fit = fit_slope_ci([10, 100], [0.1, 0.01])
    assert fit.slope == pytest.approx(-1.0) and math.isnan(fit.se) and math.isnan(fit.low)
    assert all(math.isnan(v) for v in fit.band([10, 100])[0])
    assert math.isnan(fit_slope_ci([10, 10, 10], [0.1, 0.2, 0.3]).slope)
    with pytest.raises(ValueError, match="fit_slope_ci"):
        fit_slope_ci([1, 2, 3], [1, 2])
