import math

import numpy as np
import pytest
from scipy.stats import norm

from dpsynth_core.privacy import (
    Ledger,
    check_neighbours,
    count_sensitivity,
    gaussian_delta,
    gaussian_epsilon,
    gaussian_mu,
    gaussian_sigma,
    resolve_size,
)


def test_gaussian_delta_matches_closed_form_where_it_is_stable():
    for eps, mu in [(0.5, 0.3), (1.0, 1.0), (3.0, 2.0), (0.0, 0.7)]:
        plain = norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * norm.cdf(-eps / mu - mu / 2)
        assert gaussian_delta(eps, mu) == pytest.approx(plain, rel=1e-10, abs=1e-300)


def test_gaussian_delta_stable_at_large_epsilon():
    # The plain formula returns nan (inf * 0) here; the log-space one a tiny non-negative number.
    with np.errstate(all="ignore"):
        plain = norm.cdf(-800 / 0.5 + 0.25) - np.exp(800.0) * norm.cdf(-800 / 0.5 - 0.25)
    assert not np.isfinite(plain) or plain == 0
    d = gaussian_delta(800.0, 0.5)
    assert d >= 0 and math.isfinite(d)


def test_mu_one_point_known_value():
    # Dong-Roth-Su: 1-GDP is (ε, δ(ε))-DP with δ(1) = Φ(-1/2) - e Φ(-3/2) ≈ 0.1269.
    assert gaussian_delta(1.0, 1.0) == pytest.approx(norm.cdf(-0.5) - math.e * norm.cdf(-1.5), rel=1e-12)
    assert gaussian_mu(1.0, gaussian_delta(1.0, 1.0)) == pytest.approx(1.0, rel=1e-9)


@pytest.mark.parametrize("eps,delta,sens,T", [(1.0, 1e-5, 1.0, 1), (0.3, 1e-6, math.sqrt(2), 10), (8.0, 1e-3, 2.0, 50)])
def test_sigma_epsilon_roundtrip(eps, delta, sens, T):
    sigma = gaussian_sigma(eps, delta, sens, T)
    assert gaussian_epsilon(sigma, delta, sens, T) == pytest.approx(eps, rel=1e-8)
    # and the implied μ gives exactly δ at ε
    assert gaussian_delta(eps, math.sqrt(T) * sens / sigma) == pytest.approx(delta, rel=1e-7)


def test_sigma_monotone():
    base = gaussian_sigma(1.0, 1e-5, 1.0, 10)
    assert gaussian_sigma(2.0, 1e-5, 1.0, 10) < base  # more ε, less noise
    assert gaussian_sigma(1.0, 1e-3, 1.0, 10) < base  # more δ, less noise
    assert gaussian_sigma(1.0, 1e-5, 1.0, 20) > base  # more compositions, more noise
    assert gaussian_sigma(1.0, 1e-5, 2.0, 10) == pytest.approx(2 * base)


def test_composition_is_sqrt_T():
    assert gaussian_sigma(1.0, 1e-5, 1.0, 4) == pytest.approx(2 * gaussian_sigma(1.0, 1e-5, 1.0, 1), rel=1e-9)


@pytest.mark.parametrize(
    "call,exc,match",
    [
        (lambda: gaussian_sigma(0.0, 1e-5), ValueError, "'epsilon' parameter of gaussian_sigma"),
        (lambda: gaussian_sigma(1.0, 0.0), ValueError, "'delta' parameter of gaussian_sigma"),
        (lambda: gaussian_sigma(1.0, 1.0), ValueError, "'delta'"),
        (lambda: gaussian_sigma(1.0, 1e-5, 0.0), ValueError, "'sensitivity'"),
        (lambda: gaussian_sigma(1.0, 1e-5, 1.0, 0), ValueError, "'compositions'"),
        (lambda: gaussian_epsilon(0.0, 1e-5), ValueError, "'sigma' parameter of gaussian_epsilon"),
        (lambda: gaussian_delta(-1.0, 1.0), ValueError, "'epsilon' parameter of gaussian_delta"),
        (lambda: gaussian_delta(1.0, 0.0), ValueError, "'mu'"),
        (lambda: check_neighbours("swap", "pmm"), ValueError, "'neighbours' parameter of pmm"),
        (lambda: check_neighbours("add_remove", "x", ("replace",)), ValueError, "does not support"),
        (lambda: Ledger().add("s", -1.0), ValueError, "'epsilon' parameter of Ledger.add"),
    ],
)
def test_validation(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


def test_ledger_adds_up():
    led = Ledger().add("a", 0.25).add("b", 0.5, 1e-6).add("c", 0.25)
    assert led.epsilon == 1.0 and led.delta == 1e-6
    assert list(led.to_frame().columns) == ["step", "epsilon", "delta"]
    assert len(led) == 3


def test_count_sensitivity():
    assert count_sensitivity("add_remove") == 1
    assert count_sensitivity("replace") == 2


def test_resolve_size_rules():
    g = np.random.default_rng(0)
    s = resolve_size(1000, epsilon=1.0, neighbours="add_remove", n_public=500, rng=g, owner="x")
    assert (s.n, s.source, s.epsilon_spent) == (500, "n_public", 0.0)
    s = resolve_size(1000, epsilon=1.0, neighbours="replace", n_public=None, rng=g, owner="x")
    assert (s.n, s.source, s.epsilon_spent) == (1000, "replace", 0.0)
    draws = [resolve_size(1000, epsilon=1.0, neighbours="add_remove", n_public=None, rng=g, owner="x")
             for _ in range(2000)]
    assert all(d.source == "noisy" and d.epsilon_spent == pytest.approx(0.05) for d in draws)
    values = np.array([d.n for d in draws])
    # Lap_Z(20) has sd ≈ 28.3; the mean of 2000 draws has s.e. ≈ 0.63, tolerance 4 s.e.
    assert abs(values.mean() - 1000) < 2.6
    assert 24 < values.std() < 32.5
    with pytest.raises(ValueError, match="'n_public' parameter of x"):
        resolve_size(10, epsilon=1.0, neighbours="add_remove", n_public=0, rng=g, owner="x")
