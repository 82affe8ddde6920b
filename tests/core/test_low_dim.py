"""Tests of the low-dimensional mechanism [HSVZ23, Algorithms 1–5, Theorem 2.1, Appendix E]."""

from __future__ import annotations

import dataclasses
import importlib
import json
import math

import numpy as np
import ot
import pytest

from dpsynth_core import MECHANISMS, Domain, run
from dpsynth_core.datasets import affine_plane
from dpsynth_core.mechanisms import low_dim
from dpsynth_core.mechanisms.pmm import PMMOwner, PMMTrace
from dpsynth_core.mechanisms.psmm import PSMMOwner, PSMMTrace
from dpsynth_core.noise import laplace as honest_laplace

LD = importlib.import_module("dpsynth_core.mechanisms.low_dim")  # the module (the package attribute is the function)


def _plane(n=600, D=6, k=2, noise=0.01, seed=0):
    return affine_plane(n, D=D, d_prime=k, noise=noise, rng=seed)


# ------------------------------------------------------------------ covariance sensitivity (Theorem 2.1)
def _neighbour_pairs(n, d, rng):
    """Random and adversarial replace-neighbours in [0,1]^d: (X, X') differing in row 0."""
    pairs = []
    for _ in range(300):  # random data, random replacement
        X = rng.random((n, d))
        Y = X.copy()
        Y[0] = rng.random(d)
        pairs.append((X, Y))
    for _ in range(300):  # corner data (entries 0/1), the replaced row moved to another corner
        X = rng.integers(0, 2, (n, d)).astype(float)
        Y = X.copy()
        Y[0] = rng.integers(0, 2, d)
        pairs.append((X, Y))
    for fill in (0.0, 1.0, 0.5):  # everyone at one point, one record jumps to a far corner
        X = np.full((n, d), fill)
        Y = X.copy()
        Y[0] = 1.0 - np.round(X[0])
        pairs.append((X, Y))
        Y2 = X.copy()
        Y2[0] = np.r_[np.ones(d // 2), np.zeros(d - d // 2)]
        pairs.append((X, Y2))
    return pairs


def _worst_pair_search(n, d, rng, iters=60):
    """Local search for the neighbouring pair maximising sum_ij |M_ij - M'_ij|: start from random
    data and a random replacement, then repeatedly move single coordinates (of any row, or of the
    replacement) to 0 or 1 when that increases the objective (the objective is piecewise quadratic
    in each coordinate, so the corners of [0,1] are natural candidates)."""
    X = rng.random((n, d))
    xp = rng.random(d)

    def obj(X, xp):
        Y = X.copy()
        Y[0] = xp
        return float(np.abs(LD.covariance_matrix(X) - LD.covariance_matrix(Y)).sum())

    best = obj(X, xp)
    for _ in range(iters):
        i, k = int(rng.integers(-1, n)), int(rng.integers(0, d))
        for val in (0.0, 1.0, float(rng.random())):
            X2, xp2 = X.copy(), xp.copy()
            if i < 0:
                xp2[k] = val
            else:
                X2[i, k] = val
            v = obj(X2, xp2)
            if v > best:
                best, X, xp = v, X2, xp2
    return best


@pytest.mark.parametrize("n, d", [(2, 3), (3, 2), (10, 3), (50, 4)])
def test_covariance_has_the_stated_sensitivity(n, d):
    """The default calibration rests on sum_ij |M_ij - M'_ij| <= d^2 (n+1)/(n(n-1)) under replace
    (module docstring; the paper's 6d^2/n is 5-6x larger). Checked exactly (no randomness in M) on
    random and adversarial neighbouring pairs and by a local search towards the worst pair; the
    everyone-at-the-origin pair must reach d^2/n, within a factor 1 + 2/n of the bound, which shows
    the bound is nearly attained and the search has power."""
    rng = np.random.default_rng(0)
    bound = LD.covariance_sensitivity(n, d)
    assert bound == pytest.approx(d * d * (n + 1) / (n * (n - 1)))
    assert LD.covariance_sensitivity(n, d, "paper") == pytest.approx(6 * d * d / n)
    worst_entry, worst_sum = 0.0, 0.0
    for X, Y in _neighbour_pairs(n, d, rng):
        D = np.abs(LD.covariance_matrix(X) - LD.covariance_matrix(Y))
        worst_entry = max(worst_entry, float(D.max()))
        worst_sum = max(worst_sum, float(D.sum()))
    for _ in range(20):
        worst_sum = max(worst_sum, _worst_pair_search(n, d, rng))
    assert worst_sum <= bound * (1 + 1e-12)
    assert worst_entry <= 6.0 / n + 1e-12  # the paper's per-entry claim holds too
    # power: the everyone-at-0 pair moves every entry by exactly 1/n, sum d^2/n
    assert worst_sum >= d * d / n * (1 - 1e-12)
    assert worst_sum >= bound / (1 + 2.0 / (n - 1)) - 1e-12


def test_a_sensitivity_claim_below_the_truth_is_caught():
    """The search above refutes a claimed bound that is too small: 0.9 d^2/n is exceeded."""
    rng = np.random.default_rng(1)
    n, d = 10, 3
    found = max(float(np.abs(LD.covariance_matrix(X) - LD.covariance_matrix(Y)).sum())
                for X, Y in _neighbour_pairs(n, d, rng))
    assert found > 0.9 * d * d / n


def _implied_epsilon(noise_mats, n, d, rule="tight"):
    """ε that the measured noise gives at the stated l1 sensitivity Δ1 (the worst pair moves every
    entry by Δ1/d², the everyone-at-the-origin pair of the sensitivity test): the Laplace privacy
    loss sum_{i<j} (Δ1/d²)/b_off + sum_i (Δ1/d²)/b_diag (the released upper triangle; the lower
    one is its copy), with the Laplace scales b estimated by the
    mean absolute value (the MLE)."""
    iu = np.triu_indices(d, 1)
    off = np.abs(noise_mats[:, iu[0], iu[1]]).mean()
    diag = np.abs(noise_mats[:, np.arange(d), np.arange(d)]).mean()
    per = LD.covariance_sensitivity(n, d, rule) / (d * d)
    return (d * (d - 1) / 2) * per / off + d * per / diag, off, diag


def _noise_draws(n, d, eps, draws, seed, rule="tight"):
    rng = np.random.default_rng(seed)
    X = rng.random((n, d))
    mats = []
    for _ in range(draws):
        M_hat, M, A, sigma = LD.private_covariance(X, eps, rng, rule)
        assert np.allclose(M_hat - M, A) and np.allclose(A, A.T)
        mats.append(A)
    return np.array(mats), sigma


@pytest.mark.parametrize("rule", ["tight", "paper"])
def test_covariance_noise_is_calibrated_to_the_stated_sensitivity(rule):
    """The symmetric Laplace matrix has off-diagonal scale σ = Δ1/(2ε) and diagonal 2σ, so the
    privacy loss at the stated sensitivity is exactly ε (proof of Theorem 2.1); "paper" gives the
    paper's σ = 3d²/(εn). 3000 draws at d = 3 give 9000 off-diagonal and 9000 diagonal samples: the
    relative standard error of each mean |A| is 1/sqrt(9000) ~ 1.1%, so 5% is > 4 standard errors."""
    n, d, eps = 40, 3, 0.7
    mats, sigma = _noise_draws(n, d, eps, 3000, 1, rule)
    if rule == "paper":
        assert sigma == pytest.approx(3 * d * d / (eps * n))
    else:
        assert sigma == pytest.approx(d * d * (n + 1) / (n * (n - 1)) / (2 * eps))
    implied, off, diag = _implied_epsilon(mats, n, d, rule)
    assert off == pytest.approx(sigma, rel=0.05)
    assert diag == pytest.approx(2 * sigma, rel=0.05)
    assert implied == pytest.approx(eps, rel=0.05)


def test_half_noise_variant_is_caught(monkeypatch):
    """A broken Algorithm 2 with half the noise spends 2ε at the stated sensitivity: the same check
    measures about 2ε and fails (> 1.5ε is > 40 standard errors away from ε)."""
    monkeypatch.setattr(LD, "laplace", lambda scale, size, rng: honest_laplace(scale / 2.0, size, rng))
    n, d, eps = 40, 3, 0.7
    mats, _ = _noise_draws(n, d, eps, 3000, 1)
    implied, _, _ = _implied_epsilon(mats, n, d)
    assert implied > 1.5 * eps
    assert not math.isclose(implied, eps, rel_tol=0.05)


@pytest.mark.parametrize("rule", ["tight", "paper"])
def test_release_uses_the_calibrated_covariance_noise(rule):
    """End to end: the release's noisy covariance minus the true one is symmetric with the step's
    σ = Δ1/(2ε/3); over 60 seeds (60 x 15 off-diagonal draws at d = 6) the mean |A_ij| is within
    10% of σ (relative s.e. 1/sqrt(900) ~ 3.3%)."""
    ds = _plane(n=300, D=6)
    eps = 3.0
    offs = []
    for seed in range(60):
        rel = low_dim(ds.X, ds.domain, epsilon=eps, covariance_noise=rule, plan="paper", rng=seed)
        A = rel.trace.noisy_covariance - rel.owner.true_covariance
        assert np.allclose(A, A.T)
        offs.append(np.abs(A[np.triu_indices(6, 1)]))
        sigma = rel.params["covariance_sigma"]
    expected = 3 * 36 / ((eps / 3) * 300) if rule == "paper" else 36 * 301 / (300 * 299) / (2 * eps / 3)
    assert sigma == pytest.approx(expected)
    assert rel.params["covariance_noise"] == rule
    assert np.mean(offs) == pytest.approx(sigma, rel=0.10)


def test_mean_noise_scale():
    """Algorithm 3: Lap(d/((ε/3) n)) per coordinate; 400 releases at d = 4 (1600 samples, relative
    s.e. of mean |λ| 2.5%): within 10%; half the scale would be 20 s.e. away."""
    rng = np.random.default_rng(3)
    X = rng.random((50, 4))
    lams = []
    for seed in range(400):
        rel = low_dim(X, Domain.unit(4), epsilon=1.5, plan="paper", rng=seed)
        lams.append(rel.owner.mean_noise)
    b = rel.params["mean_scale"]
    assert b == pytest.approx(4 / (0.5 * 50))
    assert np.abs(lams).mean() == pytest.approx(b, rel=0.10)
    assert np.allclose(rel.trace.private_mean, X.mean(axis=0) + lams[-1])


# ------------------------------------------------------------------ ledger, domain, determinism
@pytest.mark.parametrize("kw", [dict(), dict(subroutine="psmm"), dict(adaptive=True), dict(box="projected_cube"),
                                dict(target_dim=1)])
@pytest.mark.parametrize("eps", [0.3, 2.0, 7.0])
def test_ledger_sums_to_epsilon(kw, eps):
    ds = _plane(n=300, D=5)
    rel = low_dim(ds.X, ds.domain, epsilon=eps, plan="paper", rng=0, **kw)
    steps = rel.ledger.to_frame()
    assert rel.ledger.epsilon == pytest.approx(eps, rel=1e-12)
    assert rel.epsilon == eps and rel.delta == 0.0 and rel.neighbours == "replace"
    assert steps.epsilon.iloc[0] == pytest.approx(eps / 3) and "covariance" in steps.step.iloc[0]
    mean_row = steps[steps.step.str.contains("private mean")]
    assert len(mean_row) == 1 and mean_row.epsilon.iloc[0] == pytest.approx(eps / 3)
    sub = steps[steps.step.str.startswith(rel.params["subroutine"] + ":")]
    assert len(sub) >= 1 and sub.epsilon.sum() == pytest.approx(eps / 3)
    assert sub.epsilon.sum() == pytest.approx(rel.params["subroutine_params"].get("epsilon_tree",
                                                                                  rel.params["epsilon_subroutine"]))
    if kw.get("adaptive"):
        chosen = steps[steps.step.str.contains("Appendix E")]
        assert len(chosen) == 1 and chosen.epsilon.iloc[0] == 0.0


@pytest.mark.parametrize("box", ["paper", "projected_cube"])
def test_output_lies_in_the_domain_and_projected_points_in_the_box(box):
    rng = np.random.default_rng(5)
    dom = Domain(lower=[-1.0, 0.0, 10.0, -5.0], upper=[3.0, 0.5, 20.0, 5.0])
    X = dom.from_unit(rng.random((400, 4)))
    X[:5] *= 10.0  # a few points outside the box: clamped
    for eps in (0.05, 1.0, 1e4):
        rel = low_dim(X, dom, epsilon=eps, plan="paper", rng=1, box=box)
        assert rel.synthetic.shape == (400, 4)  # PMM under replace releases n points
        assert np.all(dom.contains(rel.synthetic))
        assert rel.owner.projected_summary["n_outside_box"] == 0
        assert rel.owner.n_clamped >= 1


def test_determinism():
    ds = _plane(n=300)
    a = low_dim(ds.X, ds.domain, epsilon=1.0, plan="paper", rng=11)
    b = low_dim(ds.X, ds.domain, epsilon=1.0, plan="paper", rng=np.random.default_rng(11))
    c = low_dim(ds.X, ds.domain, epsilon=1.0, plan="paper", rng=12)
    assert np.array_equal(a.synthetic, b.synthetic)
    assert np.array_equal(a.trace.private_basis, b.trace.private_basis)
    assert not np.array_equal(a.synthetic, c.synthetic)


# ------------------------------------------------------------------ accuracy of the private subspace
def test_principal_angles_vanish_at_huge_epsilon():
    """At ε = 10^6 the covariance noise is σ = 9·36/(10^6·1000) ≈ 3e-7 against a spectral gap of
    ~1e-2 (plane patch of scale ~0.2, noise sd 0.01), so by Davis-Kahan sin θ <= 2||A||/gap ~ 1e-4:
    the angles are below 1e-3. At ε = 1 (σ ≈ 0.3 ≫ the gap) they are not small, which shows the
    check can fail."""
    ds = _plane(n=1000, D=6)
    rel = low_dim(ds.X, ds.domain, epsilon=1e6, plan="paper", rng=0)
    ang = rel.owner.principal_angles
    assert ang.shape == (2,) and np.all(ang < 1e-3)
    rough = low_dim(ds.X, ds.domain, epsilon=1.0, plan="paper", rng=0)
    assert rough.owner.principal_angles.max() > 0.1


def test_huge_epsilon_reproduces_the_data_and_respects_the_bound():
    """At ε = 10^6 every noise vanishes; the error is the subroutine's resolution and the noise off
    the plane (sd 0.01): exact W1 (POT, l_inf, unit cube) below 0.05 and below the reported bound."""
    ds = _plane(n=400, D=6, noise=0.005)
    rel = low_dim(ds.X, ds.domain, epsilon=1e6, plan="paper", rng=2)
    a = np.full(400, 1 / 400)
    b = np.full(rel.synthetic.shape[0], 1 / rel.synthetic.shape[0])
    M = ot.dist(ds.X, rel.synthetic, metric="chebyshev")
    w1 = ot.emd2(a, b, M, numItermax=10**7)
    assert w1 < 0.05
    assert w1 <= rel.bound
    assert rel.bound == pytest.approx(rel.trace.bound_terms["total"])


def test_bound_terms():
    ds = _plane(n=500)
    rel = low_dim(ds.X, ds.domain, epsilon=2.0, plan="paper", rng=0)
    t = rel.trace.bound_terms
    assert set(t) == {"rank_approximation", "private_pca", "mean_in_projection", "subroutine", "mean_shift", "total"}
    assert all(v >= 0 for v in t.values())
    assert t["total"] == pytest.approx(sum(v for k, v in t.items() if k != "total"))
    # the owner-side bound differs only in the tail term (true tail instead of the (E.2) estimate)
    own = rel.owner.bound_terms_true_tail
    assert {k: own[k] for k in t if k not in ("rank_approximation", "total")} == pytest.approx(
        {k: t[k] for k in t if k not in ("rank_approximation", "total")})
    assert own["rank_approximation"] == pytest.approx(2 * math.sqrt(2 * rel.owner.tail))
    # E||A||: the Monte Carlo estimate sits near the semicircle edge 2 sqrt(2d) σ (within 35% at d = 6)
    e = LD.expected_noise_norm(6, 1.0)
    assert 0.65 * 2 * math.sqrt(12) < e < 1.35 * 2 * math.sqrt(12)


def test_projected_cube_box_is_narrower_and_exact():
    ds = _plane(n=300, D=8)
    rel = low_dim(ds.X, ds.domain, epsilon=2.0, plan="paper", rng=0, box="projected_cube")
    paper = low_dim(ds.X, ds.domain, epsilon=2.0, plan="paper", rng=0)
    w_cube = np.asarray(rel.params["box_upper"]) - np.asarray(rel.params["box_lower"])
    w_paper = np.asarray(paper.params["box_upper"]) - np.asarray(paper.params["box_lower"])
    assert np.all(w_cube < w_paper)
    # exact: the box is the image of the cube's vertices' extreme coordinates
    V, c = rel.trace.private_basis, rel.trace.private_mean
    corners = (np.random.default_rng(0).integers(0, 2, (4000, 8)) - c) @ V
    lo, hi = rel.trace.box_lower, rel.trace.box_upper
    assert np.all(corners >= lo - 1e-9) and np.all(corners <= hi + 1e-9)
    verts = np.where(V < 0, 1.0, 0.0)  # column k: the vertex minimising coordinate k
    best_lo = np.einsum("ik,ik->k", verts - c[:, None], V)
    assert np.allclose(best_lo, lo, atol=1e-9)


# ------------------------------------------------------------------ Appendix E
def test_choose_target_dim_formula():
    spec = np.array([1.0, 0.5, 0.2, 1e-6, 1e-7, -1e-4])
    k, obj = LD.choose_target_dim(spec, n=10**9, epsilon=10.0, d=6)
    expected = [math.sqrt(max(spec[j:].sum(), 0)) + math.sqrt(6 / j) * (1e10) ** (-1 / j)
                + math.sqrt(j * 6**2.5 / 1e10) for j in range(2, 7)]
    assert np.allclose(obj, expected) and k == 2 + int(np.argmin(expected))
    assert k == 3
    assert LD.choose_target_dim(np.array([0.3]), n=10, epsilon=1.0, d=1)[0] == 1


def test_adaptive_picks_the_plane_dimension_at_huge_epsilon():
    ds = affine_plane(2000, D=6, d_prime=3, noise=0.0, rng=4)
    rel = low_dim(ds.X, ds.domain, epsilon=1e6, adaptive=True, target_dim=2, plan="paper", rng=0)
    assert rel.params["target_dim"] == 3 and rel.params["target_dim_requested"] == 2
    assert rel.trace.selection["chosen"] == 3
    assert rel.trace.private_basis.shape == (6, 3)


# ------------------------------------------------------------------ trace and public view
def test_trace_and_public_view():
    ds = _plane(n=300)
    rel = low_dim(ds.X, ds.domain, epsilon=2.0, plan="paper", rng=0)
    tr, own = LD.LowDimTrace.of(rel), LD.LowDimOwner.of(rel)
    assert (tr.d, tr.target_dim, tr.subroutine_name) == (6, 2, "pmm")
    assert tr.noisy_spectrum.shape == (6,) and np.all(np.diff(tr.noisy_spectrum) <= 1e-15)
    V = tr.private_basis
    assert V.shape == (6, 2) and np.allclose(V.T @ V, np.eye(2))
    assert tr.R == pytest.approx(math.sqrt(6) + np.linalg.norm(tr.private_mean))
    assert tr.synthetic_coordinates.shape == (rel.synthetic.shape[0], 2)
    # the sub-step's typed results: its DP trace in the trace, its owner view (true counts) in the owner view
    assert isinstance(tr.subroutine, PMMTrace) and isinstance(own.subroutine, PMMOwner)
    assert own.subroutine.n == own.n == 300 and own.subroutine.true_counts[0].sum() == 300
    assert not {f.name for f in dataclasses.fields(tr)} & {f.name for f in dataclasses.fields(own)} - {"subroutine"}
    assert own.true_basis.shape == (6, 2) and own.projected_coordinates.shape == (300, 2)
    assert own.true_spectrum.shape == (6,)
    psmm_rel = low_dim(ds.X, ds.domain, epsilon=2.0, plan="paper", rng=0, subroutine="psmm")
    assert isinstance(psmm_rel.trace.subroutine, PSMMTrace) and isinstance(psmm_rel.owner.subroutine, PSMMOwner)
    assert psmm_rel.trace.subroutine_name == "psmm"
    with pytest.raises(TypeError, match="not a LowDimOwner"):
        LD.LowDimOwner.of(run("pmm", ds.X, ds.domain, epsilon=2.0, rng=0))
    public = json.loads(rel.public_json())
    assert "trace" not in public and "true" not in json.dumps(public["params"])
    # shift back: synthetic rows are V a + mean_priv, clipped to the cube
    U = np.clip(tr.synthetic_coordinates @ V.T + tr.private_mean, 0, 1)
    assert np.allclose(ds.domain.from_unit(U), rel.synthetic)


def test_registry_entry():
    spec = MECHANISMS["low_dim"]
    assert spec.func is low_dim is LD.low_dim
    assert spec.neighbours == ("replace",) and spec.default_neighbours == "replace"
    assert [p.name for p in spec.params] == ["plan", "target_dim", "subroutine", "adaptive", "box", "budget_split",
                                             "covariance_noise"]
    rel = run("low_dim", np.random.default_rng(0).random((50, 2)) * 4 - 1, Domain([-1, -1], [3, 3]), epsilon=2.0,
              plan="paper", rng=1)
    assert rel.synthetic.shape == (50, 2) and rel.params["target_dim"] == 2


# ------------------------------------------------------------------ validation
def test_validation_rules():
    ds = _plane(n=50, D=4)
    X, dom = ds.X, ds.domain
    with pytest.raises(ValueError, match=r"The 'neighbours' parameter of low_dim must be one of 'replace' "
                                         r"\(this mechanism does not support 'add_remove'\)"):
        low_dim(X, dom, epsilon=1.0, neighbours="add_remove")
    with pytest.raises(ValueError, match=r"The 'target_dim' parameter of low_dim must be an int in \[1, 4\]. Got 5"):
        low_dim(X, dom, epsilon=1.0, target_dim=5)
    with pytest.raises(ValueError, match=r"The 'target_dim' parameter of low_dim must be an int in \[1, 4\]. Got 0"):
        low_dim(X, dom, epsilon=1.0, target_dim=0)
    with pytest.raises(ValueError, match=r"The 'target_dim' parameter of low_dim must be an int"):
        low_dim(X, dom, epsilon=1.0, target_dim=2.5)
    with pytest.raises(TypeError, match=r"The 'target_dim' parameter of low_dim must be an int"):
        low_dim(X, dom, epsilon=1.0, target_dim="2")
    with pytest.raises(ValueError, match=r"The 'subroutine' parameter of low_dim must be one of 'auto', 'pmm', 'psmm'"):
        low_dim(X, dom, epsilon=1.0, subroutine="haar")
    with pytest.raises(TypeError, match=r"The 'adaptive' parameter of low_dim must be a bool"):
        low_dim(X, dom, epsilon=1.0, adaptive=1)
    with pytest.raises(ValueError, match=r"The 'box' parameter of low_dim must be one of 'auto', 'paper', 'projected_cube'"):
        low_dim(X, dom, epsilon=1.0, box="ball")
    with pytest.raises(ValueError, match=r"The 'X' parameter of low_dim must be a table of at least 2 rows"):
        low_dim(X[:1], dom, epsilon=1.0)
    with pytest.raises(ValueError, match=r"The 'epsilon' parameter of low_dim must be a float in "):
        low_dim(X, dom, epsilon=0.0)  # the project-wide range (privacy.EPSILON_MIN, EPSILON_MAX)
    with pytest.raises(TypeError, match=r"The 'domain' parameter of low_dim must be a dpsynth_core.Domain"):
        low_dim(X, [0, 1], epsilon=1.0)
    with pytest.raises(ValueError, match=r"The 'rng' parameter of low_dim must be"):
        low_dim(X, dom, epsilon=1.0, rng=-1)
    X8 = np.random.default_rng(0).random((40, 8))
    with pytest.raises(ValueError, match=r"The 'target_dim' parameter of low_dim must be an int in \[1, 6\] with "
                                         r"subroutine='psmm'"):
        low_dim(X8, Domain.unit(8), epsilon=1.0, subroutine="psmm", target_dim=7)
    # adaptive with PSMM stays within PSMM's range
    rel = low_dim(X8, Domain.unit(8), epsilon=1.0, subroutine="psmm", adaptive=True, rng=0)
    assert 2 <= rel.params["target_dim"] <= 6


# ------------------------------------------------------------------ the defaults study's plan (issue 27)
def test_default_plan_hands_over_to_psmm_in_full_dimension():
    """d <= 6: the plan 'study' releases PSMM in full dimension with the whole ε under replace, at
    dpsynth_core.defaults.psmm_cells(n, ε/2, d): the same release as calling PSMM that way (same seed)."""
    ds = _plane(n=400, D=4)
    rel = low_dim(ds.X, ds.domain, epsilon=1.0, rng=5)
    k = round(1.2 * (400 * math.sinh(0.5)) ** 0.2)  # the PSMM rule in d = 4, c = 1.2, at ε/2
    direct = run("psmm", ds.X, ds.domain, epsilon=1.0, neighbours="replace", cells=k, rng=5)
    assert rel.params["handover"] == "psmm" and rel.params["subroutine_params"]["cells"] == k
    assert np.array_equal(rel.synthetic, direct.synthetic)
    assert rel.ledger.epsilon == pytest.approx(1.0, rel=1e-12) and rel.neighbours == "replace"
    assert all(e.step.startswith("psmm: ") for e in rel.ledger.entries)
    tr = LD.LowDimHandoverTrace.of(rel)
    assert tr.mechanism == "psmm" and isinstance(tr.subroutine, PSMMTrace)
    assert isinstance(LD.LowDimHandoverOwner.of(rel).subroutine, PSMMOwner)
    assert rel.bound == direct.bound and any("no projection" in note for note in rel.notes)
    with pytest.raises(TypeError, match="not a LowDimTrace"):
        LD.LowDimTrace.of(rel)


@pytest.mark.parametrize("kw", [dict(plan="paper"), dict(target_dim=2), dict(subroutine="pmm"),
                                dict(box="projected_cube"), dict(budget_split="thirds"), dict(adaptive=True)])
def test_any_projection_parameter_makes_the_plan_project(kw):
    ds = _plane(n=300, D=4)
    rel = low_dim(ds.X, ds.domain, epsilon=2.0, rng=0, **kw)
    tr = LD.LowDimTrace.of(rel)
    expected_sub = kw.get("subroutine", "pmm" if kw.get("plan") == "paper" else "psmm")
    assert tr.subroutine_name == rel.params["subroutine"] == expected_sub
    assert rel.params["plan"] == kw.get("plan", "study") and "handover" not in rel.params


def test_plan_in_high_dimension():
    """d > 6: PMM in full dimension when εn < 250 (the digits at ε = 1), else project on d' = 2 with PSMM,
    the paper's box and thirds."""
    ds = _plane(n=100, D=8)
    small = low_dim(ds.X, ds.domain, epsilon=1.0, rng=0)  # εn = 100
    assert small.params["handover"] == "pmm" and isinstance(small.trace.subroutine, PMMTrace)
    assert "εn = 100 < 250" in small.params["reason"]
    big = low_dim(ds.X, ds.domain, epsilon=3.0, rng=0)  # εn = 300
    assert (big.params["target_dim"], big.params["subroutine"], big.params["box"]) == (2, "psmm", "paper")
    assert big.params["budget_split"] == pytest.approx([1 / 3] * 3)
    assert [e.epsilon for e in big.ledger.entries[:2]] == [1.0, 1.0]


def test_budget_split():
    """The shares (covariance, mean, subroutine) reach the ledger; they must be in (0, 1) and sum to 1."""
    ds = _plane(n=300, D=5)
    rel = low_dim(ds.X, ds.domain, epsilon=2.0, budget_split=(0.2, 0.1, 0.7), rng=0)
    steps = rel.ledger.to_frame()
    assert steps.epsilon.iloc[0] == pytest.approx(0.4) and "covariance" in steps.step.iloc[0]
    assert steps[steps.step.str.contains("private mean")].epsilon.iloc[0] == pytest.approx(0.2)
    assert rel.params["epsilon_subroutine"] == pytest.approx(1.4) and rel.ledger.epsilon == pytest.approx(2.0)
    assert rel.params["mean_scale"] == pytest.approx(5 / (0.2 * 300))
    same = low_dim(ds.X, ds.domain, epsilon=2.0, budget_split="0.2,0.1,0.7", rng=0)
    assert np.array_equal(same.synthetic, rel.synthetic)
    assert low_dim(ds.X, ds.domain, epsilon=2.0, budget_split="subroutine", rng=0).params["budget_split"] == \
        pytest.approx([0.2, 0.1, 0.7])
    for bad in ((0.5, 0.5, 0.5), (0.0, 0.3, 0.7), (0.5, 0.5), "half"):
        with pytest.raises((ValueError, TypeError), match=r"The 'budget_split' parameter of low_dim must be 'auto', "
                                                          r"'thirds', 'subroutine' or three shares in \(0, 1\)"):
            low_dim(ds.X, ds.domain, epsilon=2.0, budget_split=bad)
