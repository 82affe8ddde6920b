"""zCDP accounting (dpsynth_core.privacy: gaussian_rho, rho_delta, zcdp_delta) against independent computations.

* The exact conversion of a Gaussian composition (``rho_delta``) against the privacy-loss distribution
  integrated numerically: one release (``scipy.integrate.quad``) and two releases with different noise
  (a two-dimensional sum on a fine grid), tolerance 1e-6 relative (quadrature) and 1e-4 (grid sum).
* The general conversion ``zcdp_delta`` [CKS20, Corollary 13] against the same formula minimised over the
  Rényi order by a dense grid (no log transform, no optimiser), and checked conservative: above the
  brute-force δ of one discrete Gaussian release (a sum of its exact pmf over the integers), which is
  ρ-zCDP [CKS20], and above the exact Gaussian value.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate
from scipy.stats import norm

from dpsynth_core.privacy import gaussian_rho, rho_delta, zcdp_delta


def _pld_delta_one(sigma: float, eps: float) -> float:
    """δ(ε) of one Gaussian release of sensitivity 1: ∫ max(0, p(x) - e^ε q(x)) dx, p = N(0, σ²), q = N(1, σ²)."""
    f = lambda x: max(0.0, norm.pdf(x, 0.0, sigma) - math.exp(eps) * norm.pdf(x, 1.0, sigma))  # noqa: E731
    # p > e^ε q only for x < 1/2 - εσ²: integrate the positive part up to there
    top = 0.5 - eps * sigma * sigma
    value, _ = integrate.quad(f, top - 40 * sigma, top, epsabs=1e-14, epsrel=1e-10, limit=200)
    return value


@pytest.mark.parametrize("sigma,eps", [(1.0, 0.5), (2.0, 1.0), (4.0, 0.3), (0.7, 3.0)])
def test_rho_delta_is_the_exact_delta_of_one_gaussian_release(sigma, eps):
    rho = 1.0 / (2.0 * sigma * sigma)
    assert rho_delta(rho, eps) == pytest.approx(_pld_delta_one(sigma, eps), rel=1e-6)


def test_rho_delta_is_exact_for_a_composition_with_different_noise():
    """Two releases (σ_a, σ_b), both of sensitivity 1: the pair's δ(ε) = Σ max(0, p - e^ε q) over a fine
    grid of the two noise coordinates (cell 0.004 wide, ±12σ), against rho_delta at ρ_a + ρ_b."""
    sa, sb, eps = 1.5, 3.0, 0.8
    h = 0.004
    xa = np.arange(-12 * sa, 12 * sa + 1, h)
    xb = np.arange(-12 * sb, 12 * sb + 1, h)
    pa, qa = norm.pdf(xa, 0, sa), norm.pdf(xa, 1, sa)
    total = 0.0
    for i in range(0, xb.size, 500):  # in strips, to keep memory small
        pb, qb = norm.pdf(xb[i:i + 500], 0, sb), norm.pdf(xb[i:i + 500], 1, sb)
        total += np.maximum(np.outer(pb, pa) - math.exp(eps) * np.outer(qb, qa), 0.0).sum()
    brute = total * h * h
    rho = 1 / (2 * sa * sa) + 1 / (2 * sb * sb)
    assert rho_delta(rho, eps) == pytest.approx(brute, rel=1e-4)


@pytest.mark.parametrize("eps,delta", [(0.3, 1e-5), (1.0, 1e-5), (3.0, 1e-6), (1.0, 1e-3)])
def test_gaussian_rho_round_trip(eps, delta):
    rho = gaussian_rho(eps, delta)
    assert rho_delta(rho, eps) == pytest.approx(delta, rel=1e-6)
    assert rho_delta(rho * 1.01, eps) > delta  # the largest such ρ


def _grid_zcdp_delta(rho: float, eps: float) -> float:
    """[CKS20, Corollary 13] minimised over a dense grid of Rényi orders, computed directly."""
    a = 1.0 + np.logspace(-6, 7, 400_001)
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        vals = np.exp((a - 1) * (a * rho - eps)) / (a - 1) * (1 - 1 / a) ** a
    return float(np.nanmin(vals))


@pytest.mark.parametrize("rho,eps", [(0.003, 0.3), (0.03, 1.0), (0.25, 3.0), (1.0, 2.0), (0.5, 0.1)])
def test_zcdp_delta_matches_a_grid_over_renyi_orders(rho, eps):
    assert zcdp_delta(rho, eps) == pytest.approx(min(1.0, _grid_zcdp_delta(rho, eps)), rel=1e-4)


def _discrete_gaussian_delta(sigma: float, eps: float) -> float:
    """Brute force δ(ε) of one discrete Gaussian release N_Z(0, σ²) of sensitivity 1: the sum over the
    integers of max(0, P(z) - e^ε P(z - 1)), the pmf normalised exactly over ±60σ."""
    z = np.arange(-int(60 * sigma) - 2, int(60 * sigma) + 3)
    w = np.exp(-z.astype(float) ** 2 / (2 * sigma * sigma))
    pmf = w / w.sum()
    shifted = np.exp(-(z - 1.0) ** 2 / (2 * sigma * sigma)) / w.sum()
    return float(np.maximum(pmf - math.exp(eps) * shifted, 0.0).sum())


@pytest.mark.parametrize("sigma,eps", [(1.0, 1.0), (3.0, 0.5), (8.0, 0.2), (0.6, 4.0)])
def test_zcdp_delta_is_conservative(sigma, eps):
    """The discrete Gaussian is 1/(2σ²)-zCDP [CKS20]: the general conversion must lie above its exact δ,
    and above the exact δ of the continuous Gaussian of the same ρ (the conversion is not tight)."""
    rho = 1 / (2 * sigma * sigma)
    general = zcdp_delta(rho, eps)
    assert general >= _discrete_gaussian_delta(sigma, eps)
    assert general >= rho_delta(rho, eps)
    assert general <= 1.0
