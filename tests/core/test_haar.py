"""Haar matrix, fast transforms and superregular noise ([BSV22, Theorem 3.1]; [DLS+24, Lemma 3])."""

import math

import numpy as np
import pytest
from scipy import stats

from dpsynth_core import haar


def explicit_M(k):
    """M_k built column by column from its definition (docs/random-walk.md, "The transposed Haar matrix"; [DLS+24, Appendix B]), independent
    of the fast transforms."""
    m = 2**k
    M = np.zeros((m, m))
    M[:, 0] = 1.0 / m
    col = 1
    for lev in range(1, k + 1):
        nblocks = 2 ** (lev - 1)
        length = m // nblocks
        val = 2 ** (lev - 1) / m
        for j in range(nblocks):
            M[j * length: j * length + length // 2, col] = val
            M[j * length + length // 2: (j + 1) * length, col] = -val
            col += 1
    assert col == m
    return M


# ------------------------------------------------------------------------------ transforms
@pytest.mark.parametrize("k", range(0, 9))
def test_fast_synthesis_and_analysis_equal_the_explicit_matrix(k):
    rng = np.random.default_rng(k)
    M = explicit_M(k)
    Phi = (k + 1) * M
    A = rng.normal(size=(3, 2**k))
    # batch rows: M a for each row a
    assert np.allclose(haar.haar_synthesis(A), A @ M.T, atol=1e-12)
    assert np.allclose(haar.haar_synthesis(A, scaled=True), A @ Phi.T, atol=1e-11)
    Minv = np.linalg.inv(M)
    assert np.allclose(haar.haar_analysis(A), A @ Minv.T, atol=1e-9)
    assert np.allclose(haar.haar_analysis(A, scaled=True), A @ np.linalg.inv(Phi).T, atol=1e-9)
    if k <= 6:
        assert np.allclose(haar.haar_matrix(k), M) and np.allclose(haar.haar_matrix(k, scaled=True), Phi)
        assert np.array_equal(haar.haar_inverse_matrix(k), np.rint(Minv).astype(np.int64))


@pytest.mark.parametrize("k", range(0, 9))
def test_lemma3_norms(k):
    M = explicit_M(k)
    Phi = (k + 1) * M
    Phinv = np.linalg.inv(Phi)
    # ||Φ^{-1}||_1 = max column l1 norm = 1 exactly; M_k^{-1} has entries in {-1,0,1}, k+1 per column
    assert np.abs(Phinv).sum(axis=0).max() == pytest.approx(1.0, abs=1e-12)
    Minv = np.linalg.inv(M)
    assert np.allclose(Minv, np.rint(Minv), atol=1e-9)
    assert set(np.unique(np.rint(Minv))) <= {-1.0, 0.0, 1.0}
    assert np.all((np.abs(np.rint(Minv)) > 0).sum(axis=0) == k + 1)
    assert np.allclose(np.abs(M).sum(axis=0), 1.0)  # every column of M_k has l1 norm 1
    prefix = np.cumsum(Phi, axis=0)  # row i = sum of the first i+1 rows of Φ
    l2 = np.linalg.norm(prefix, axis=1)
    assert l2.max() <= (k + 1) ** 1.5 + 1e-9
    assert np.abs(prefix).sum(axis=1).max() <= (k + 1) ** 2 + 1e-9
    assert np.allclose(haar.prefix_row_norms(k), l2)
    assert np.allclose(haar.prefix_row_norms(k, scaled=False), l2 / (k + 1))


def test_analysis_of_counts_is_exact_integer():
    c = np.random.default_rng(0).integers(0, 1000, 2**10)
    a = haar.haar_analysis(c)
    assert a.dtype == np.int64 and a[0] == c.sum()
    assert np.array_equal(haar.haar_synthesis(a), c.astype(float))  # dyadic arithmetic is exact


def test_large_transform_roundtrip():
    a = np.random.default_rng(1).laplace(size=2**18)
    x = haar.haar_synthesis(a, scaled=True)
    assert np.allclose(haar.haar_analysis(x, scaled=True), a, atol=1e-10)


def test_padding():
    c = np.arange(1, 6)
    padded, k = haar.pad_to_power_of_two(c)
    assert k == 3 and np.array_equal(padded, [1, 2, 3, 4, 5, 0, 0, 0]) and padded.dtype == c.dtype
    assert haar.levels_for(1) == 0 and haar.levels_for(2) == 1 and haar.levels_for(1025) == 11


# ---------------------------------------------------------------------------------- noise
def test_superregular_coefficients_are_laplace():
    # Φ^{-1}(noise) must be i.i.d. Laplace(Δ/ε). KS test on 200 x 256 coefficients with a fixed seed;
    # a wrong scale by 10% moves the KS statistic to ~0.03, far above the 1% critical value ~0.007.
    b = 2.0 / 0.5
    noise = haar.superregular_noise(256, epsilon=0.5, sensitivity=2.0, rng=3, draws=200)
    coef = haar.haar_analysis(noise, scaled=True).ravel()
    assert stats.kstest(coef, stats.laplace(scale=b).cdf).pvalue > 0.01
    assert stats.kstest(coef, stats.laplace(scale=1.1 * b).cdf).pvalue < 1e-6


def test_discrete_noise_has_integer_dlaplace_coefficients():
    k, eps = 4, 0.8
    noise = haar.superregular_noise(2**k, epsilon=eps, rng=4, discrete=True, draws=4000)
    coef = haar.haar_analysis(noise)  # M^{-1} noise = ξ
    assert np.allclose(coef, np.rint(coef))
    xi = np.rint(coef).astype(int).ravel()
    sigma = (k + 1) / eps
    # chi-square goodness of fit to dlaplace(a = 1/σ) on |z| <= 15 plus the two tails (64,000 draws)
    ref = stats.dlaplace(1.0 / sigma)
    edges = np.arange(-15, 16)
    obs = np.array([np.sum(xi < -15)] + [np.sum(xi == z) for z in edges] + [np.sum(xi > 15)])
    p = np.r_[ref.cdf(-16), ref.pmf(edges), ref.sf(15)]
    chi2 = ((obs - xi.size * p) ** 2 / (xi.size * p)).sum()
    assert stats.chi2(obs.size - 1).sf(chi2) > 0.001


def test_partial_sum_variance_matches_lemma3_geometry():
    # Var(S_i) = 2 b^2 ||Σ_{j<=i} Φ_j||^2 exactly; 3000 draws give a relative s.e. of the variance
    # ~ sqrt(5/3000) ≈ 4% for Laplace sums (kurtosis <= 6); tolerance 20% on every position.
    k, b = 6, 1.5
    S = np.cumsum(haar.superregular_noise(2**k, scale=b, rng=5, draws=3000), axis=1)
    exact = 2 * b**2 * haar.prefix_row_norms(k) ** 2
    assert np.all(np.abs(S.var(axis=0) / exact - 1.0) < 0.2)
    assert np.sqrt(exact).max() <= haar.noise_partial_sum_bound(2**k, b)


def test_superregular_walk_is_much_flatter_than_iid():
    # m = 2^12, 200 draws. Predicted from Lemma 3's geometry: sd(S_i) = sqrt(2) b ||Σ_{j<=i} Φ_j||_2
    # (mean over i: 21.5 b) against sqrt(2 i) b for i.i.d. (mean 60.4 b), ratio 0.356. E|S|/sd lies
    # between 1/sqrt(2) (one Laplace term) and sqrt(2/pi) (Gaussian limit); with a 5% Monte Carlo margin
    # the superregular mean |S_i| must lie in [0.67, 0.84] x mean sd, and the ratio to i.i.d. below 0.45.
    k, eps = 12, 1.0
    m = 2**k
    sr = np.abs(np.cumsum(haar.superregular_noise(m, eps, rng=6, draws=200), axis=1)).mean()
    iid = np.abs(np.cumsum(haar.iid_laplace_noise(m, eps, rng=7, draws=200), axis=1)).mean()
    sd_mean = (math.sqrt(2.0) * haar.prefix_row_norms(k)).mean()
    assert 0.67 * sd_mean <= sr <= 0.84 * sd_mean
    assert sr / iid < 0.45


def test_truncation_for_non_powers_of_two():
    full = haar.superregular_noise(16, 1.0, rng=8)
    part = haar.superregular_noise(11, 1.0, rng=8)
    assert np.array_equal(full[:11], part)


def test_privatize_counts_relations():
    c = np.array([5, 0, 2, 7, 1, 0, 0, 3])
    noisy, noise = haar.privatize_counts(c, 1.0, "replace", rng=0, return_noise=True)
    assert np.allclose(noisy - c, noise)
    assert noise.sum() == pytest.approx(0.0, abs=1e-9)  # the total is exact under replace (n public)
    coef = haar.haar_analysis(noise, scaled=True)
    assert coef[0] == pytest.approx(0.0, abs=1e-12) and np.all(coef[1:] != 0)
    assert np.array_equal(haar.privatize_counts([4], 1.0, "replace", rng=0), [4.0])
    # add/remove: the same stream as superregular_noise with scale 1/ε
    a = haar.privatize_counts(c, 0.5, "add_remove", rng=9)
    assert np.allclose(a - c, haar.superregular_noise(8, scale=2.0, rng=9))
    d = haar.privatize_counts(c, 0.5, rng=9, discrete=True)
    assert np.allclose(haar.haar_analysis(d - c), np.rint(haar.haar_analysis(d - c)))


def test_determinism():
    a = haar.superregular_noise(100, 1.0, rng=11)
    b = haar.superregular_noise(100, 1.0, rng=np.random.default_rng(11))
    assert np.array_equal(a, b)
    assert not np.array_equal(a, haar.superregular_noise(100, 1.0, rng=12))


# ---------------------------------------------------------------------- empirical privacy
def empirical_epsilon(noisy_d, noisy_d1, c, c1, *, discrete):
    """log P_D(E)/P_D'(E) for the most powerful event: on each Haar coefficient that the extra record
    moves, the output lies on the side away from D'. The event is a set of outputs (computed from the
    released vector by the public map Φ^{-1}), fixed before looking at the draws."""
    if discrete:
        a, a1 = haar.haar_analysis(np.asarray(c)), haar.haar_analysis(np.asarray(c1))
        z, z1 = np.rint(haar.haar_analysis(noisy_d)), np.rint(haar.haar_analysis(noisy_d1))
    else:
        a, a1 = haar.haar_analysis(np.asarray(c, float), scaled=True), haar.haar_analysis(np.asarray(c1, float),
                                                                                           scaled=True)
        z, z1 = haar.haar_analysis(noisy_d, scaled=True), haar.haar_analysis(noisy_d1, scaled=True)
    move = a1 - a
    J = np.flatnonzero(move)
    s = np.sign(move[J])

    def event(zz):
        return np.all(s * (zz[:, J] - a[J]) <= 0, axis=1)

    p, p1 = event(z).mean(), event(z1).mean()
    return math.log(p / p1), p, p1


@pytest.mark.parametrize("neighbours", ["add_remove", "replace"])
@pytest.mark.parametrize("discrete", [False, True])
def test_empirical_privacy_and_a_broken_variant(neighbours, discrete):
    # add/remove: D' = D plus one record in cell 5; replace: one record moves from cell 2 to cell 5.
    # For the correct calibration the event has P_D/P_D' = e^ε exactly (every moved coefficient on
    # the far side; Laplace: 1/2 vs e^{-|δ|/b}/2 per coefficient, discrete: 1/(1+p) vs p^{|δ|}/(1+p)),
    # P_D between 0.06 and 0.2 with 200,000 draws per side: s.e. of the log ratio <= 0.02,
    # tolerance 0.1 (5 s.e.). Calibrating to 2ε (half the noise) doubles the loss: caught.
    eps, N = 1.0, 200_000
    c = np.array([3, 1, 4, 1, 5, 9, 2, 6])
    c1 = c.copy()
    c1[5] += 1
    if neighbours == "replace":
        c1[2] -= 1
    rng = np.random.default_rng(2024)

    def run(e):
        nd = haar.privatize_counts(c, e, neighbours, rng, discrete=discrete, draws=N)
        nd1 = haar.privatize_counts(c1, e, neighbours, rng, discrete=discrete, draws=N)
        return empirical_epsilon(nd, nd1, c, c1, discrete=discrete)[0]

    assert abs(run(eps) - eps) < 0.1
    assert run(2 * eps) > eps + 0.5


def test_single_count_marginal_respects_epsilon():
    # The law of one noisy count on the path (the count that moves) under D and D': every event
    # ratio is at most e^ε. Events {y_5 > t} for several t, 200,000 draws each: tolerance 0.1 on the
    # log ratio (>= 5 s.e. where both probabilities exceed 2%).
    eps, N = 1.0, 200_000
    c = np.array([3, 1, 4, 1, 5, 9, 2, 6])
    rng = np.random.default_rng(99)
    y = c[5] + haar.superregular_noise(8, eps, rng=rng, draws=N)[:, 5]
    y1 = c[5] + 1 + haar.superregular_noise(8, eps, rng=rng, draws=N)[:, 5]
    for t in np.quantile(y, [0.05, 0.25, 0.5, 0.75, 0.95]):
        p, p1 = np.mean(y > t), np.mean(y1 > t)
        assert abs(math.log(p1 / p)) < eps + 0.1


# ------------------------------------------------------------------------------ validation
def test_validation_rules():
    with pytest.raises(ValueError, match="The 'a' parameter of haar_synthesis must be of length a power of two"):
        haar.haar_synthesis(np.ones(6))
    with pytest.raises(ValueError, match="The 'a' parameter of haar_synthesis must be an array"):
        haar.haar_synthesis(3.0)
    with pytest.raises(ValueError, match="The 'x' parameter of haar_analysis must be of length a power of two"):
        haar.haar_analysis(np.ones(3))
    with pytest.raises(TypeError, match="The 'x' parameter of haar_analysis must be a numeric array"):
        haar.haar_analysis(np.array(["a", "b"]))
    with pytest.raises(TypeError, match="The 'scaled' parameter of haar_synthesis must be a bool"):
        haar.haar_synthesis(np.ones(4), scaled=1)
    with pytest.raises(ValueError, match="The 'k' parameter of haar_matrix must be an int in \\[0, 12\\]"):
        haar.haar_matrix(13)
    with pytest.raises(ValueError, match="The 'k' parameter of haar_inverse_matrix must be an int"):
        haar.haar_inverse_matrix(-1)
    with pytest.raises(ValueError, match="The 'k' parameter of prefix_row_norms must be an int"):
        haar.prefix_row_norms(31)
    with pytest.raises(ValueError, match="The 'm' parameter of levels_for must be an int in \\[1"):
        haar.levels_for(0)
    with pytest.raises(ValueError, match="The 'c' parameter of pad_to_power_of_two must be a 1-D array"):
        haar.pad_to_power_of_two(np.ones((2, 2)))
    with pytest.raises(ValueError, match="The 'm' parameter of superregular_noise must be an int"):
        haar.superregular_noise(0, 1.0)
    with pytest.raises(ValueError, match="The 'epsilon' parameter of superregular_noise must be given"):
        haar.superregular_noise(4)
    with pytest.raises(ValueError, match="The 'scale' parameter of superregular_noise must be None"):
        haar.superregular_noise(4, 1.0, scale=1.0)
    with pytest.raises(ValueError, match="The 'epsilon' parameter of superregular_noise must be a float in \\(0, inf\\)"):
        haar.superregular_noise(4, -1.0)
    with pytest.raises(ValueError, match="The 'sensitivity' parameter of superregular_noise must be a float"):
        haar.superregular_noise(4, 1.0, 0.0)
    with pytest.raises(ValueError, match="The 'scale' parameter of superregular_noise must be a float"):
        haar.superregular_noise(4, scale=0.0)
    with pytest.raises(ValueError, match="The 'draws' parameter of superregular_noise must be an int"):
        haar.superregular_noise(4, 1.0, draws=0)
    with pytest.raises(TypeError, match="The 'discrete' parameter of superregular_noise must be a bool"):
        haar.superregular_noise(4, 1.0, discrete="yes")
    with pytest.raises(TypeError, match="The 'rng' parameter of superregular_noise"):
        haar.superregular_noise(4, 1.0, rng="seed")
    with pytest.raises(ValueError, match="The 'epsilon' parameter of iid_laplace_noise must be given"):
        haar.iid_laplace_noise(4)
    with pytest.raises(ValueError, match="The 'm' parameter of iid_laplace_noise must be an int"):
        haar.iid_laplace_noise(0, 1.0)
    with pytest.raises(ValueError, match="The 'c' parameter of privatize_counts must be a non-empty 1-D array"):
        haar.privatize_counts(np.array([1.5, 2.0]), 1.0)
    with pytest.raises(ValueError, match="The 'c' parameter of privatize_counts must be a non-empty 1-D array"):
        haar.privatize_counts(np.ones((2, 2), dtype=int), 1.0)
    with pytest.raises(TypeError, match="The 'c' parameter of privatize_counts"):
        haar.privatize_counts(np.array(["a"]), 1.0)
    with pytest.raises(ValueError, match="The 'neighbours' parameter of privatize_counts must be one of"):
        haar.privatize_counts([1, 2], 1.0, "swap")
    with pytest.raises(ValueError, match="The 'epsilon' parameter of privatize_counts must be a float in \\(0, inf\\)"):
        haar.privatize_counts([1, 2], 0.0)
    with pytest.raises(ValueError, match="The 'scale' parameter of noise_partial_sum_bound must be a float"):
        haar.noise_partial_sum_bound(8, -1.0)
