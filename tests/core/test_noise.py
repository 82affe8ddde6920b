"""Noise samplers: goodness of fit against scipy's reference laws, determinism, validation.

Chi-square tests use fixed seeds, so they are deterministic; the threshold p > 1e-3 is the usual
level for a goodness-of-fit check (a correct sampler fails it with probability 0.001 over seeds) and
the power test below shows the same procedure rejects a 10% scale error at these sample sizes.
"""

import numpy as np
import pytest
from scipy import stats

from dpsynth_core.noise import discrete_laplace, gaussian, laplace


def _chi2_pvalue(draws: np.ndarray, sigma: float) -> float:
    ref = stats.dlaplace(a=1.0 / sigma)
    qs = np.unique(ref.ppf(np.linspace(0.02, 0.98, 25)).astype(np.int64))
    edges = np.concatenate([[-np.inf], qs.astype(float), [np.inf]])  # bins (e_i, e_{i+1}]
    cdf = ref.cdf(edges)
    expected = np.diff(cdf) * draws.size
    observed = np.histogram(draws, bins=np.concatenate([[-np.inf], qs + 0.5, [np.inf]]))[0]
    keep = expected > 0
    return stats.chisquare(observed[keep], expected[keep] * observed.sum() / expected[keep].sum()).pvalue


@pytest.mark.parametrize("sigma", [0.5, 1.0, 10.0, 1000.0])
def test_fast_sampler_matches_dlaplace(sigma):
    draws = discrete_laplace(sigma, 200_000, np.random.default_rng(1))
    assert draws.dtype == np.int64
    assert _chi2_pvalue(draws, sigma) > 1e-3


@pytest.mark.parametrize("sigma", [0.5, 1.0, 10.0, 1000.0])
def test_exact_sampler_matches_dlaplace(sigma):
    draws = discrete_laplace(sigma, 20_000, np.random.default_rng(2), exact=True)
    assert draws.dtype == np.int64
    assert _chi2_pvalue(draws, sigma) > 1e-3


def test_goodness_of_fit_has_power():
    # Draws with a 10% larger scale must be rejected by the same procedure at the same sizes.
    assert _chi2_pvalue(discrete_laplace(11.0, 200_000, np.random.default_rng(1)), 10.0) < 1e-6
    assert _chi2_pvalue(discrete_laplace(1.1, 20_000, np.random.default_rng(2), exact=True), 1.0) < 1e-3


def test_exact_sampler_is_integer_only_for_rational_scale():
    # Scale 3/2 is exact in binary; the pmf ratio P(0)/P(1) = e^{2/3}.
    draws = discrete_laplace(1.5, 60_000, np.random.default_rng(3), exact=True)
    p0, p1 = np.mean(draws == 0), np.mean(np.abs(draws) == 1) / 2
    # 60k draws: P(0)≈0.32, P(±1)≈0.16 each; standard error of the log-ratio ≈ 0.02, tolerance 5 s.e.
    assert abs(np.log(p0 / p1) - 2 / 3) < 0.1


def test_same_seed_same_draws():
    for exact in (False, True):
        a = discrete_laplace(3.0, 100, np.random.default_rng(9), exact=exact)
        b = discrete_laplace(3.0, 100, 9, exact=exact)
        assert np.array_equal(a, b)
    assert np.array_equal(laplace(1.0, 5, 4), laplace(1.0, 5, 4))
    assert np.array_equal(gaussian(1.0, 5, 4), gaussian(1.0, 5, 4))


def test_shapes_and_scalar():
    assert isinstance(discrete_laplace(1.0, None, 0), int)
    assert discrete_laplace(1.0, (3, 4), 0).shape == (3, 4)
    assert discrete_laplace(1.0, (2, 2), 0, exact=True).shape == (2, 2)
    assert laplace(1.0, (2, 3), 0).shape == (2, 3)


def test_tiny_scale_is_almost_surely_zero():
    assert np.all(discrete_laplace(1e-3, 10_000, 0) == 0)


def test_continuous_samplers_moments():
    # 200k draws: the s.e. of the sample std is about σ/√(2N) ≈ 0.16% (Gaussian), and about 0.25%
    # for Laplace (kurtosis 6); 2% tolerances are > 8 s.e.
    g = gaussian(2.0, 200_000, 5)
    assert abs(g.std() - 2.0) < 0.04
    lap = laplace(3.0, 200_000, 5)
    assert abs(lap.std() - 3.0 * np.sqrt(2)) < 0.085


@pytest.mark.parametrize(
    "call,exc,match",
    [
        (lambda: discrete_laplace(0.0, 3, 0), ValueError, "'scale' parameter of discrete_laplace"),
        (lambda: discrete_laplace(-1.0, 3, 0), ValueError, "'scale' parameter of discrete_laplace"),
        (lambda: discrete_laplace("1", 3, 0), TypeError, "'scale'"),
        (lambda: discrete_laplace(1.0, -1, 0), ValueError, "'size'"),
        (lambda: discrete_laplace(1.0, 3, "x"), TypeError, "'rng'"),
        (lambda: discrete_laplace(1.0, 3, 0, exact=1), TypeError, "'exact'"),
        (lambda: laplace(0.0, 3, 0), ValueError, "'scale' parameter of laplace"),
        (lambda: gaussian(np.nan, 3, 0), ValueError, "'sigma' parameter of gaussian"),
    ],
)
def test_validation(call, exc, match):
    with pytest.raises(exc, match=match):
        call()
