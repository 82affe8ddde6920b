"""PSMM [HVZ23, Algorithms 1–2]."""

import math

import numpy as np
import pytest
from scipy import stats

from dpsynth_core import MECHANISMS, Domain, run
from dpsynth_core.grid import cell_centres, grid_counts
from dpsynth_core.mechanisms import psmm
from dpsynth_core.mechanisms.psmm import project
from dpsynth_core.theory import psmm_theorem7
from dpsynth_core.transport import bl_projection

DOM2 = Domain.unit(2)


def _X(n=400, d=2, seed=0):
    return np.random.default_rng(seed).random((n, d))


@pytest.mark.parametrize(
    "kwargs, exc, pattern",
    [
        (dict(cells=0), ValueError, r"'cells' parameter of psmm must be an int in \[1, 4096\]"),
        (dict(cells=5000), ValueError, r"'cells' parameter of psmm must be an int in \[1, 4096\]"),
        (dict(cells="8"), TypeError, r"'cells' parameter of psmm"),
        (dict(cells=300), ValueError, r"'cells' parameter of psmm must be such that cells\^d <= 65536"),
        (dict(cells=3000, projection="clip"), ValueError, r"cells\^d <= 4194304 with projection='clip'"),
        (dict(projection="l2"), ValueError, r"'projection' parameter of psmm must be one of 'bl', 'clip'"),
        (dict(projection=None), TypeError, r"'projection' parameter of psmm"),
        (dict(n_synthetic=0), ValueError, r"'n_synthetic' parameter of psmm must be an int in \[1, inf\)"),
        (dict(n_synthetic=1.5), ValueError, r"'n_synthetic' parameter of psmm"),
        (dict(n_public=0), ValueError, r"'n_public' parameter of psmm must be an int in \[1, "),
        (dict(neighbours="swap"), ValueError, r"'neighbours' parameter of psmm"),
        (dict(epsilon=0), ValueError, r"'epsilon' parameter of psmm must be a float in \[1e-06, 1000000\]"),
        (dict(rng=1.5), TypeError, r"'rng' parameter of psmm"),
    ],
)
def test_validation(kwargs, exc, pattern):
    kw = {"epsilon": 1.0, "rng": 0} | kwargs
    with pytest.raises(exc, match=pattern):
        psmm(_X(20), DOM2, **kw)


def test_registered_with_full_schema():
    spec = MECHANISMS["psmm"]
    assert spec.func is psmm and spec.dp == "pure"
    assert {p.name for p in spec.params} == {"cells", "projection", "n_synthetic", "n_public"}
    assert all(p.help for p in spec.params) and spec.param("projection").choices == ("bl", "clip")


def test_determinism():
    X = _X(1500)
    a = psmm(X, DOM2, epsilon=1.0, cells=12, rng=5)
    b = run("psmm", X, DOM2, epsilon=1.0, cells=12, rng=5)
    assert np.array_equal(a.synthetic, b.synthetic)
    assert np.array_equal(a.trace.projected_measure, b.trace.projected_measure)
    c = psmm(X, DOM2, epsilon=1.0, cells=12, rng=6)
    assert not np.array_equal(a.trace.noisy_counts, c.trace.noisy_counts)


@pytest.mark.parametrize("k, d", [(8, 1), (16, 1), (3, 2), (4, 2), (5, 2), (3, 3)])
def test_sparse_projection_equals_dense_algorithm2(k, d):
    """The sparse grid LP reaches the optimum of the paper's dense LP (Algorithm 2) to 1e-7, on the
    noisy signed measures PSMM actually produces (low ε: many negative cells)."""
    X = _X(60, d=d, seed=k)
    for seed in range(3):
        rel = psmm(X, Domain.unit(d), epsilon=0.3, cells=k, n_public=60, rng=seed)
        nu = rel.trace.noisy_signed_measure
        dense = bl_projection(nu, grid_shape=(k,) * d, method="dense")
        assert abs(rel.params["bl_value"] - dense.value) < 1e-7
        assert rel.trace.transport["bl_value"] == rel.params["bl_value"]
        tau = rel.trace.projected_measure
        assert np.all(tau >= 0) and tau.sum() == pytest.approx(1.0)
        # the dense LP's τ is also a probability vector with the same objective
        assert dense.tau.sum() == pytest.approx(1.0)


def test_clip_projection_is_positive_part_renormalised():
    nu = np.array([0.5, -0.2, 0.3, 0.0, 0.6])
    tau, summary = project(nu, 5, 1, "clip")
    assert np.allclose(tau, [0.5, 0, 0.3, 0, 0.6] / np.float64(1.4))
    assert summary["negative_cells"] == 1 and summary["negative_mass"] == pytest.approx(0.2)
    tau, _ = project(np.array([-1.0, -2.0]), 2, 1, "clip")
    assert np.allclose(tau, [0.5, 0.5])


def test_bl_projection_of_a_probability_measure_is_itself():
    nu = np.random.default_rng(0).random(25)
    nu /= nu.sum()
    tau, summary = project(nu, 5, 2, "bl")
    assert summary["bl_value"] == pytest.approx(0.0, abs=1e-12) and np.allclose(tau, nu)


def test_privacy_parameters_and_ledger():
    X = _X(2000)
    rel = psmm(X, DOM2, epsilon=1.0, rng=0)
    assert rel.ledger.entries[0].epsilon == pytest.approx(0.05) and rel.params["n_source"] == "noisy"
    assert rel.params["noise_scale"] == pytest.approx(1 / 0.95) and math.isclose(rel.ledger.epsilon, 1.0)
    # the defaults study's rule (dpsynth_core.defaults.psmm_cells): k = round(1.55 (n̂ sinh ε')^{1/3}) in d = 2
    assert rel.params["cells"] == round(1.55 * (rel.params["n_hat"] * math.sinh(0.95)) ** (1 / 3))
    assert len(rel.synthetic) == rel.params["n_hat"]
    rel = psmm(X, DOM2, epsilon=1.0, neighbours="replace", cells=10, rng=0)
    assert rel.params["noise_scale"] == pytest.approx(2.0) and len(rel.ledger) == 1
    assert rel.params["n_hat"] == 2000 and len(rel.synthetic) == 2000
    rel = psmm(X, DOM2, epsilon=1.0, n_public=2000, n_synthetic=777, cells=10, rng=0)
    assert len(rel.ledger) == 1 and len(rel.synthetic) == 777
    assert rel.bound == pytest.approx(psmm_theorem7(2000, 1.0, 2, 10))
    assert "constant-free" in rel.bound_kind


def test_noise_is_discrete_laplace_with_the_stated_scale():
    """Pooled λ = noisy - true over 40 runs x 400 cells (16000 draws) against Lap_Z(Δ/ε') with a
    chi-square goodness-of-fit test on |λ| in {0..7, >=8} x sign; threshold p > 1e-4 (a false alarm
    once in 10^4 runs), and the half-scale alternative is rejected."""
    X = _X(300)
    lam = []
    for seed in range(40):
        rel = psmm(X, DOM2, epsilon=0.8, cells=20, projection="clip", n_public=300, rng=seed)
        lam.append(rel.trace.noisy_counts - rel.owner.true_counts)
    lam = np.concatenate(lam)
    scale = rel.params["noise_scale"]
    assert scale == pytest.approx(1 / 0.8)

    def pvalue(s):
        law = stats.dlaplace(a=1.0 / s)
        edges = np.arange(-8, 9)
        obs = np.array([(lam < -7).sum()] + [(lam == v).sum() for v in edges[1:-1]] + [(lam > 7).sum()])
        probs = np.array([law.cdf(-8)] + [law.pmf(v) for v in edges[1:-1]] + [law.sf(7)])
        return stats.chisquare(obs, probs / probs.sum() * obs.sum()).pvalue

    assert pvalue(scale) > 1e-4
    assert pvalue(scale / 2) < 1e-4


def test_trace_and_synthetic():
    X = _X(3000, d=2, seed=4)
    dom = Domain(lower=[-5, 0], upper=[5, 2])
    rel = psmm(dom.from_unit(X), dom, epsilon=2.0, cells=16, rng=1)
    tr = rel.trace
    assert tr.noisy_signed_measure.shape == (256,) and tr.projected_measure.shape == (256,)
    assert np.array_equal(rel.owner.true_counts, grid_counts(X, 16))
    assert np.array_equal(grid_counts(dom.to_unit(rel.synthetic), 16), tr.synthetic_counts)
    assert np.all(dom.contains(rel.synthetic))
    t = tr.transport
    assert t["mass_removed"] >= 0 and t["mass_added"] >= 0 and t["negative_cells"] >= 0
    # largest remainder: each synthetic count is within 1 of its exact share of n_synthetic
    m = rel.params["n_synthetic"]
    assert np.all(np.abs(tr.synthetic_counts - m * tr.projected_measure) < 1.0)


def test_huge_epsilon_reproduces_the_grid_histogram():
    X = _X(1000, seed=2)
    rel = psmm(X, DOM2, epsilon=1e6, cells=8, n_public=1000, rng=0)
    assert np.array_equal(grid_counts(rel.synthetic, 8), grid_counts(X, 8))
    assert rel.params["bl_value"] == pytest.approx(0.0, abs=1e-9)
    assert np.allclose(cell_centres(8, 2).shape, (64, 2))


def _dbl(nu, tau, centres):
    """d_BL(ν, τ) from its definition (primal LP over f, the slow reference): maximise Σ f_i (ν_i - τ_i)
    subject to f_i - f_j <= ||y_i - y_j||_inf and |f_i| <= 1 (diam of the unit cube = 1)."""
    from scipy.optimize import linprog

    m = nu.size
    D = np.abs(centres[:, None, :] - centres[None, :, :]).max(axis=2)
    rows, cols = np.nonzero(~np.eye(m, dtype=bool))
    A = np.zeros((rows.size, m))
    A[np.arange(rows.size), rows] = 1.0
    A[np.arange(rows.size), cols] = -1.0
    res = linprog(-(nu - tau), A_ub=A, b_ub=D[rows, cols], bounds=(-1, 1), method="highs")
    assert res.status == 0
    return -res.fun


@pytest.mark.parametrize("k, d", [(4, 2), (6, 1), (3, 3)])
def test_projection_attains_its_value_and_beats_clip(k, d):
    """τ_bl attains the reported d_BL(ν, τ) (checked with the primal LP over f) and no probability
    vector is closer: in particular not the clipped one."""
    X = _X(40, d=d, seed=3)
    rel = psmm(X, Domain.unit(d), epsilon=0.2, cells=k, n_public=40, rng=3)
    nu, tau = rel.trace.noisy_signed_measure, rel.trace.projected_measure
    centres = cell_centres(k, d)
    assert _dbl(nu, tau, centres) == pytest.approx(rel.params["bl_value"], abs=1e-7)
    tau_clip, _ = project(nu, k, d, "clip")
    assert rel.params["bl_value"] <= _dbl(nu, tau_clip, centres) + 1e-9
    uniform = np.full(nu.size, 1.0 / nu.size)
    assert rel.params["bl_value"] <= _dbl(nu, uniform, centres) + 1e-9
