"""Tests for the certified sparse-marginal release [DLS+24, Algorithm 1, Eqs. (4), (10), (17), Section 5.1]."""

from __future__ import annotations

import importlib
import inspect
import math
import pkgutil

import numpy as np
import ot
import pytest
from scipy import stats

from dpsynth_core import MECHANISMS, Domain, run
from dpsynth_core.datasets import shift_scenario
from dpsynth_core.grid import cell_of
from dpsynth_core.haar import haar_analysis
from dpsynth_core.mechanisms.sparse_marginals.mechanism import rows_for_two_cells
from dpsynth_core.mechanisms.sparse_marginals.query import default_k

sm = importlib.import_module("dpsynth_core.mechanisms.sparse_marginals")
#: the package's modules, for the steps the package face does not re-export
query, proxies, certificate, mechanism = (importlib.import_module(f"dpsynth_core.mechanisms.sparse_marginals.{m}")
                                          for m in ("query", "proxies", "certificate", "mechanism"))


def _data(n=300, d=3, seed=0):
    g = np.random.default_rng(seed)
    return np.clip(g.normal(0.4, 0.15, size=(n, d)) + 0.2 * g.random((n, 1)), 0, 1)


# ----------------------------------------------------------------------------- query operator
def test_marginal_vector_sums_and_replace_sensitivity():
    X = _data(50, 4)
    v = sm.marginal_vector(X, 2, 5)
    assert v.shape == (6, 25)
    np.testing.assert_allclose(v.sum(axis=1), 1.0, atol=1e-12)
    X2 = X.copy()
    X2[0] = [0.99, 0.01, 0.99, 0.01]
    v2 = sm.marginal_vector(X2, 2, 5)
    # replace: every block moves by at most 2/n in l1 (Section 3)
    assert np.all(np.abs(v - v2).sum(axis=1) <= 2 / 50 + 1e-12)
    assert np.abs(v - v2).sum(axis=1).max() == pytest.approx(2 / 50)


def test_marginal_vector_path_order_is_snake_permutation():
    X = _data(80, 3)
    row = sm.marginal_vector(X, 2, 4, order="row")
    path = sm.marginal_vector(X, 2, 4, order="path")
    order, rank = query.path_rank(4, 2)
    np.testing.assert_array_equal(path, row[:, order])
    np.testing.assert_array_equal(row, path[:, rank])


def test_noise_scale_formula_and_exact_total():
    assert sm.noise_scale(2000, 1.0, 4, 2) == pytest.approx(2 * 6 / 2000)
    # k = 8, s = 2: 64 cells, L = 6 levels -> factor 6/7
    assert sm.noise_scale(2000, 1.0, 4, 2, 8, exact_total=True) == pytest.approx(2 * 6 / 2000 * 6 / 7)
    with pytest.raises(ValueError, match="'k' parameter of noise_scale"):
        sm.noise_scale(2000, 1.0, 4, 2, exact_total=True)


def test_exact_total_noise_keeps_block_totals():
    eta = sm.haar_block_noise(3, 8, 2, 0.1, rng=0, draws=50, exact_total=True)
    np.testing.assert_allclose(eta.sum(axis=-1), 0.0, atol=1e-12)
    eta2 = sm.haar_block_noise(3, 8, 2, 0.1, rng=0, draws=50)
    assert np.abs(eta2.sum(axis=-1)).max() > 1e-3


# ------------------------------------------------------------------------------- proxy losses
def test_proxy_lt_hand_computed():
    # one block of 4 cells on the path, k = 2: cumulative sums (0.1, -0.1, 0.2, 0.0)
    w = np.array([[0.1, -0.2, 0.3, -0.2]])
    assert sm.proxy_lt(w, 2) == pytest.approx((0.1 + 0.1 + 0.2 + 0.0) / 2)
    w2 = np.array([[0.1, -0.2, 0.3, -0.2], [0.0, 0.0, 0.0, 0.5]])
    np.testing.assert_allclose(sm.proxy_lt(w2, 2, per_block=True), [0.2, 0.25])
    assert sm.proxy_lt(w2, 2) == pytest.approx(0.25)


@pytest.mark.parametrize("k,s", [(5, 1), (4, 2), (8, 2), (21, 2), (3, 3)])
def test_proxy_ut_matches_eq17_lp(k, s):
    # exact transport (dense for k^s <= 400, sparse king-move transshipment above) vs the LP over f
    g = np.random.default_rng(k * 10 + s)
    for _ in range(3):
        w = g.laplace(size=k**s) * 0.02
        assert sm.proxy_ut(w[None, :], k, s) == pytest.approx(sm.proxy_ut_lp(w, k, s), rel=1e-8, abs=1e-12)


def test_proxy_ut_is_w1_on_probability_vectors():
    # On im(T) (probability vectors) U_T is the l_inf W1 between the grid measures (Section 5.4)
    g = np.random.default_rng(3)
    k = 6
    a = g.random(k * k)
    b = g.random(k * k)
    a /= a.sum()
    b /= b.sum()
    from dpsynth_core.grid import cell_centres

    C = cell_centres(k, 2)
    w1 = ot.emd2(a, b, ot.dist(C, C, metric="chebyshev"), numItermax=10**7)
    assert sm.proxy_ut((a - b)[None, :], k, 2) == pytest.approx(w1, rel=1e-9)
    # and L_T dominates it (Definition 2: the snake path is 1-Lipschitz onto the grid)
    order, _ = query.path_rank(k, 2)
    assert sm.proxy_lt((a - b)[order][None, :], k) >= w1 - 1e-12


# ------------------------------------------------------------------------------------- Step 3
def _small_lp_case(seed, K_d=(3, 2), k=3, N=25):
    d, s = K_d
    g = np.random.default_rng(seed)
    X = _data(60, d, seed)
    v = sm.marginal_vector(X, s, k) + sm.haar_block_noise(math.comb(d, s), k, s, 0.02, rng=g)
    Z = sm.discretise_support(g.random((N, d)), k)
    _, rank = query.path_rank(k, s)
    cells = np.array([cell_of(Z[:, S], k) for S in sm.marginal_subsets(d, s)])
    return v, Z, cells, rank


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("tie_break", [0.0, sm.TIE_BREAK])
def test_sparse_step3_lp_matches_dense(seed, tie_break):
    v, Z, cells, rank = _small_lp_case(seed)
    sp = sm.step3_lp(v, rank[cells], 3, tie_break=tie_break)
    de = sm.step3_dense_lp(v, rank[cells], 3, tie_break=tie_break)
    assert sp["lp_value"] == pytest.approx(de["lp_value"], abs=1e-7)
    assert sp["objective"] == pytest.approx(de["objective"], abs=1e-6)
    # the optimum is L_T(v_DP, T mu) of the returned measure, up to the tie-break (relative λ)
    u = np.array([np.bincount(rank[c], weights=sp["alpha"], minlength=9) for c in cells])
    lt = sm.proxy_lt(v - u, 3)
    assert lt == pytest.approx(sp["objective"], abs=1e-7)
    assert np.all(sp["alpha"] >= 0) and sp["alpha"].sum() == pytest.approx(1.0)


def test_sparse_step3_lp_beats_every_vertex_of_the_simplex():
    # the LP optimum is no worse than putting all mass on any single public point
    v, Z, cells, rank = _small_lp_case(7, N=15)
    sp = sm.step3_lp(v, rank[cells], 3, tie_break=0.0)
    for j in range(Z.shape[0]):
        u = np.array([np.bincount(rank[c[j:j + 1]], minlength=9) for c in cells]).astype(float)
        assert sm.proxy_lt(v - u, 3) >= sp["objective"] - 1e-9


@pytest.mark.parametrize("seed", range(3))
def test_step3_ut_lp_optimum_is_ut_of_its_measure(seed):
    v, Z, cells, rank = _small_lp_case(seed, k=4, N=30)
    v_row = v[:, rank]
    res = sm.step3_ut_lp(v_row, cells, 4, 2, tie_break=0.0)
    u = np.array([np.bincount(c, weights=res["alpha"], minlength=16) for c in cells])
    assert sm.proxy_ut(v_row - u, 4, 2) == pytest.approx(res["objective"], abs=1e-7)
    # and it is no worse (in U_T) than the L_T solution
    lt = sm.step3_lp(v, rank[cells], 4)
    u2 = np.array([np.bincount(c, weights=lt["alpha"], minlength=16) for c in cells])
    assert res["objective"] <= sm.proxy_ut(v_row - u2, 4, 2) + 1e-7


# -------------------------------------------------------------------------------- mechanism
def _rel(**kw):
    X = _data(400, 3, 1)
    args = dict(epsilon=1.0, s=2, k=4, rng=5, public_size=300, mc_draws=50)
    args.update(kw)
    return X, sm.sparse_marginals(X, Domain.unit(3), **args)


@pytest.mark.parametrize("cert", ["U_T", "L_T"])
@pytest.mark.parametrize("snap", [True, False])
def test_certificate_terms_nonnegative_and_add_up(cert, snap):
    X, rel = _rel(certificate=cert, snap_public=snap)
    for name, terms in rel.trace.certificate.items():
        parts = ["discretisation", "privatisation_quantile", "projection_proxy", "projection_support"]
        assert all(getattr(terms, p) >= 0 for p in parts)
        assert terms.total == pytest.approx(sum(getattr(terms, p) for p in parts), rel=1e-12)
        assert terms.projection == pytest.approx(terms.projection_proxy + terms.projection_support)
        assert terms.discretisation == pytest.approx(1 / 8)
        # the quantile is the ⌈(1-δ)(M+1)⌉-th smallest Monte Carlo draw (δ = 0.1, M = 50: the 46th)
        mc = np.sort(rel.trace.mc_samples[name])
        assert terms.privatisation_quantile == mc[math.ceil(0.9 * (mc.size + 1)) - 1] == mc[45]
    # the released bound is the consistent certificate (Eq. (4) with G∘Π); the paper's one is kept
    assert set(rel.trace.certificate) == {"U_T", "L_T", "U_T_consistent", "L_T_consistent"} - (
        set() if cert == "U_T" else {"U_T", "U_T_consistent"})
    assert rel.bound == rel.trace.certificate[f"{cert}_consistent"].total
    assert rel.params["certificate_key"] == f"{cert}_consistent"
    if snap:
        assert rel.trace.certificate[cert].projection_support == 0.0
    else:
        assert 0 < rel.trace.certificate[cert].projection_support <= 1 / 8
        assert rel.trace.certificate["L_T_consistent"].projection_support == \
            rel.trace.certificate["L_T"].projection_support
    if cert == "U_T":
        ut = rel.trace.certificate["U_T_consistent"]
        assert ut.projection_support == 0.0  # the exact KR term includes the support offsets
        assert ut.projection_kind.startswith("exact KR")
        # exact term <= U_T(Π v_DP, T mu) + U(T^-1 T mu, mu) (triangle inequality), equal when snapped
        assert ut.projection_proxy <= ut.projection_via_grid + 1e-12
        if snap:
            assert ut.projection_proxy == ut.projection_via_grid
        else:
            assert ut.projection_proxy < ut.projection_via_grid  # measured: 0.127 vs 0.143
    # the projection term is recomputable from the released trace (it is private)
    noisy, proj = rel.trace.noisy_marginals, rel.trace.projected_marginals
    order = rel.trace.snake_order
    assert rel.trace.certificate["L_T"].projection_proxy == pytest.approx(
        sm.proxy_lt((noisy - proj)[:, order], 4))
    # projected marginals are those of the released synthetic points
    np.testing.assert_allclose(proj, sm.marginal_vector(rel.synthetic, 2, 4, order="row"), atol=1e-12)


def test_consistency_none_releases_the_papers_certificate():
    _, a = _rel(consistency="none", rng=4)
    _, b = _rel(rng=4)
    assert set(a.trace.certificate) == {"U_T", "L_T"}
    assert a.bound == a.trace.certificate["U_T"].total
    # same noise, same Step 3, same paper certificate; only the released bound differs
    np.testing.assert_array_equal(a.synthetic, b.synthetic)
    assert a.trace.certificate["U_T"] == b.trace.certificate["U_T"]
    np.testing.assert_array_equal(a.trace.noisy_marginals, a.trace.consistent_marginals)
    assert a.params["consistency_projection"] == "none" and b.params["consistency_projection"] == "GLS"


def test_release_contents():
    X, rel = _rel()
    assert rel.synthetic.shape == (400, 3)
    assert rel.epsilon == 1.0 and rel.delta == 0.0 and rel.neighbours == "replace"
    for key in ("s", "k", "delta_cert", "mc_draws", "K", "noise_scale", "certificate", "step3", "noise"):
        assert key in rel.params
    assert rel.params["K"] == 3
    np.testing.assert_allclose(rel.owner.true_marginals, sm.marginal_vector(X, 2, 4, order="row"))
    assert "n" not in rel.params
    assert any("uniformly" in n for n in rel.notes)
    s53 = rel.trace.section_5_3
    assert s53["L_T(v_DP, T mu)"] == pytest.approx(rel.trace.certificate["L_T"].projection_proxy)
    # synthetic points lie on the grid centres when snapped (Section 5.1: D_pub ⊂ T_k)
    frac = rel.synthetic * 4 - 0.5
    np.testing.assert_allclose(frac, np.round(frac), atol=1e-9)


def test_determinism():
    _, a = _rel(rng=11)
    _, b = _rel(rng=11)
    np.testing.assert_array_equal(a.synthetic, b.synthetic)
    assert a.bound == b.bound
    _, c = _rel(rng=12)
    assert not np.array_equal(a.synthetic, c.synthetic)


def test_registry_and_run():
    spec = MECHANISMS["sparse_marginals"]
    assert spec.neighbours == ("replace",) and spec.default_neighbours == "replace" and spec.dp == "pure"
    sig = inspect.signature(sm.sparse_marginals)
    for p in spec.params:
        assert p.name in sig.parameters
        assert sig.parameters[p.name].default == p.default
    X = _data(200, 3, 2)
    rel = run("sparse_marginals", X, Domain.unit(3), epsilon=1.0, k=3, public_size=200, mc_draws=20, rng=0)
    assert rel.mechanism == "sparse_marginals"
    # the subpackage is one module of the registry (its own modules are not mechanisms), registered once
    mechanisms = importlib.import_module("dpsynth_core.mechanisms")
    listed = [info.name for info in pkgutil.iter_modules(mechanisms.__path__)]
    assert listed.count("sparse_marginals") == 1 and not {"query", "mechanism", "certificate"} & set(listed)
    assert spec.func is sm.sparse_marginals and spec.config is sm.SparseMarginalsConfig
    assert spec.param("s").high == 6 and spec.theory is not None and not spec.theory.proven


def test_typed_trace_and_owner():
    X, rel = _rel()
    tr = sm.SparseMarginalsTrace.of(rel)
    assert tr.released is tr.certificate[tr.certificate_key] and rel.bound == tr.released.total
    assert tr.certificate_key == rel.params["certificate_key"] == "U_T_consistent"
    assert (tr.s, tr.k, tr.K, tr.delta_cert) == (2, 4, 3, 0.1) and tr.subsets == rel.params["subsets"]
    assert tr.support_size == rel.params["support_size"] == tr.weights.size
    own = sm.SparseMarginalsOwner.of(rel)
    assert (own.n, own.n_clamped) == (400, 0)
    assert all(v is not None and v > 0 for v in (own.noise_lt, own.noise_ut, own.noise_lt_consistent,
                                                 own.noise_ut_consistent))
    # U_T is computed only when the release uses it, Π only with the consistency projection
    _, lt = _rel(certificate="L_T", consistency="none")
    assert lt.owner.noise_lt > 0 and lt.owner.noise_ut is lt.owner.noise_lt_consistent is lt.owner.noise_ut_consistent
    assert lt.owner.noise_ut is None and set(lt.trace.certificate) == {"L_T"}
    with pytest.raises(TypeError, match="not a SparseMarginalsTrace"):
        sm.SparseMarginalsTrace.of(run("flat_histogram", X, Domain.unit(3), epsilon=1.0, rng=0))


def test_public_grid_full_and_array_public():
    X = _data(300, 2, 4)
    dom = Domain(lower=[0, 0], upper=[2, 2])
    rel = sm.sparse_marginals(X * 2, dom, epsilon=1.0, s=2, k=4, public="grid", mc_draws=20, rng=0)
    assert rel.params["support_size"] == 16  # all of T_k,d: the exact Step 3 (Eq. 12)
    P = np.random.default_rng(0).random((100, 2)) * 2
    rel2 = sm.sparse_marginals(X * 2, dom, epsilon=1.0, s=2, k=4, public=P, mc_draws=20, rng=0)
    assert "given by the caller" in rel2.params["public"]
    assert rel2.synthetic.max() <= 2.0


def test_public_dataframe_columns_follow_the_domain_names():
    # a DataFrame of public points is matched to the domain's column names, as the private X is
    import pandas as pd

    X = _data(200, 2, 4)
    dom = Domain(lower=[0, 0], upper=[1, 1], names=("a", "b"))
    P = np.random.default_rng(1).random((80, 2))
    frame = pd.DataFrame({"extra": 0.5, "b": P[:, 1], "a": P[:, 0]})
    kw = dict(epsilon=1.0, k=3, mc_draws=20, rng=0)
    a, b = sm.sparse_marginals(X, dom, public=P, **kw), sm.sparse_marginals(X, dom, public=frame, **kw)
    np.testing.assert_array_equal(a.synthetic, b.synthetic)
    assert a.bound == b.bound and a.params == b.params
    with pytest.raises(ValueError, match="'public' parameter of sparse_marginals"):  # 3 columns, none named a
        sm.sparse_marginals(X, dom, public=frame.rename(columns={"a": "c"}), **kw)


def test_step3_ut_option_lowers_projection_term():
    _, a = _rel(step3="L_T", rng=3)
    _, b = _rel(step3="U_T", rng=3)
    np.testing.assert_array_equal(a.trace.noisy_marginals, b.trace.noisy_marginals)
    assert b.trace.certificate_lp_measure["U_T"].projection_proxy <= \
        a.trace.certificate_lp_measure["U_T"].projection_proxy + 1e-7


# -------------------------------------------------------------------------------- validation
@pytest.mark.parametrize("kw,exc,match", [
    (dict(epsilon=0), ValueError, "'epsilon' parameter of sparse_marginals"),
    (dict(epsilon="1"), TypeError, "'epsilon' parameter of sparse_marginals"),
    (dict(s=4), ValueError, r"'s' parameter of sparse_marginals must be an int in \[1, 3\]"),
    (dict(s=7), ValueError, r"'s' parameter of sparse_marginals must be an int in \[1, 6\]"),
    (dict(s=0), ValueError, "'s' parameter of sparse_marginals"),
    (dict(s=1.5), ValueError, "'s' parameter of sparse_marginals"),
    (dict(k=0), ValueError, "'k' parameter of sparse_marginals"),
    (dict(k="8"), TypeError, "'k' parameter of sparse_marginals"),
    (dict(k=300), ValueError, r"'k' parameter of sparse_marginals must be an int with k\^s <= 65536"),
    (dict(public="gaussian"), ValueError, "'public' parameter of sparse_marginals must be one of 'uniform', 'grid'"),
    (dict(public=np.zeros((5, 2))), ValueError, "'public' parameter of sparse_marginals"),
    (dict(public=np.array([[0.5, np.nan, 0.5]])), ValueError, "'public' parameter of sparse_marginals"),
    (dict(public=None), TypeError, "'public' parameter of sparse_marginals must be one of 'uniform', 'grid'"),
    (dict(public_size=0), ValueError, "'public_size' parameter of sparse_marginals"),
    (dict(snap_public=1), TypeError, "'snap_public' parameter of sparse_marginals"),
    (dict(certificate="W1"), ValueError, "'certificate' parameter of sparse_marginals"),
    (dict(step3="L2"), ValueError, "'step3' parameter of sparse_marginals"),
    (dict(noise="gauss"), ValueError, "'noise' parameter of sparse_marginals"),
    (dict(consistency="yes"), ValueError, "'consistency' parameter of sparse_marginals"),
    (dict(delta_cert=0.0), ValueError, "'delta_cert' parameter of sparse_marginals"),
    (dict(delta_cert=0.9), ValueError, "'delta_cert' parameter of sparse_marginals"),
    (dict(mc_draws=5), ValueError, "'mc_draws' parameter of sparse_marginals"),
    (dict(n_synthetic=0), ValueError, "'n_synthetic' parameter of sparse_marginals"),
    (dict(neighbours="add_remove"), ValueError, "does not support 'add_remove'"),
    (dict(neighbours="swap"), ValueError, "'neighbours' parameter of sparse_marginals"),
    (dict(rng=-1), ValueError, "'rng' parameter of sparse_marginals"),
])
def test_validation(kw, exc, match):
    X = _data(50, 3)
    args = dict(epsilon=1.0, k=3, public_size=50, mc_draws=20, rng=0)
    args.update(kw)
    with pytest.raises(exc, match=match):
        sm.sparse_marginals(X, Domain.unit(3), **args)


def test_validation_total_cells():
    X = np.random.default_rng(0).random((20, 12))
    with pytest.raises(ValueError, match=r"'k' parameter of sparse_marginals must be an int with C\(d, s\) k\^s"):
        sm.sparse_marginals(X, Domain.unit(12), epsilon=1.0, s=2, k=200)


def test_validation_domain_and_data():
    with pytest.raises(TypeError, match="'domain' parameter of sparse_marginals"):
        sm.sparse_marginals(_data(20, 2), [0, 1], epsilon=1.0)
    with pytest.raises(ValueError, match="'X' parameter of sparse_marginals"):
        sm.sparse_marginals(_data(20, 2), Domain.unit(3), epsilon=1.0)


def test_validation_utility_loss_and_helpers():
    X = _data(20, 3)
    with pytest.raises(ValueError, match="'s' parameter of sparse_utility_loss"):
        sm.sparse_utility_loss(X, X, 4)
    with pytest.raises(ValueError, match="'Y' parameter of sparse_utility_loss"):
        sm.sparse_utility_loss(X, X[:, :2], 1)
    with pytest.raises(ValueError, match="'weights_y' parameter of sparse_utility_loss"):
        sm.sparse_utility_loss(X, X, 1, weights_y=-np.ones(20))
    with pytest.raises(ValueError, match="'metric' parameter of sparse_utility_loss"):
        sm.sparse_utility_loss(X, X, 1, metric="cosine")
    with pytest.raises(TypeError, match="'domain' parameter of sparse_utility_loss"):
        sm.sparse_utility_loss(X, X, 1, domain="unit")
    with pytest.raises(ValueError, match="'shift' parameter of shift_scenario"):
        shift_scenario(10, 3, 1.5)
    with pytest.raises(ValueError, match="'d' parameter of shift_scenario"):
        shift_scenario(10, 1, 0.5)
    with pytest.raises(ValueError, match="'n' parameter of shift_scenario"):
        shift_scenario(0, 3, 0.5)
    with pytest.raises(ValueError, match="'s' parameter of marginal_subsets"):
        sm.marginal_subsets(3, 4)
    with pytest.raises(ValueError, match="'order' parameter of marginal_vector"):
        sm.marginal_vector(X, 2, 3, order="hilbert")


# ------------------------------------------------------------------------------- utility loss
def test_sparse_utility_loss_matches_brute_force_pot():
    g = np.random.default_rng(0)
    X = g.random((40, 3))
    Y = g.random((30, 3))
    vals = []
    for S in sm.marginal_subsets(3, 2):
        M = ot.dist(X[:, S], Y[:, S], metric="chebyshev")
        vals.append(ot.emd2(np.full(40, 1 / 40), np.full(30, 1 / 30), M, numItermax=10**7))
    val, det = sm.sparse_utility_loss(X, Y, 2, return_details=True)
    assert val == pytest.approx(max(vals), rel=1e-9)
    np.testing.assert_allclose(det["per_subset"], vals, rtol=1e-9)
    assert det["exact"] and det["lower"] == pytest.approx(val) and det["upper"] == pytest.approx(val)
    assert det["argmax"] == list(sm.marginal_subsets(3, 2)[int(np.argmax(vals))])
    # s = 1: exact 1-D, the integral of |F - G|
    v1 = max(stats.wasserstein_distance(X[:, j], Y[:, j]) for j in range(3))
    assert sm.sparse_utility_loss(X, Y, 1) == pytest.approx(v1, rel=1e-9)


def test_sparse_utility_loss_duplicates_weights_and_domain():
    g = np.random.default_rng(1)
    X = g.random((25, 2))
    Y = g.random((10, 2))
    Yrep = np.repeat(Y, 3, axis=0)
    assert sm.sparse_utility_loss(X, Yrep, 2) == pytest.approx(sm.sparse_utility_loss(X, Y, 2), rel=1e-12)
    w = np.arange(1, 11, dtype=float)
    Yw = np.repeat(Y, np.arange(1, 11), axis=0)
    assert sm.sparse_utility_loss(X, Y, 2, weights_y=w) == pytest.approx(sm.sparse_utility_loss(X, Yw, 2),
                                                                          rel=1e-9)
    dom = Domain(lower=[0, -1], upper=[10, 1])
    scaled = lambda A: np.column_stack([A[:, 0] * 10, A[:, 1] * 2 - 1])  # noqa: E731
    assert sm.sparse_utility_loss(scaled(X), scaled(Y), 2, dom) == pytest.approx(
        sm.sparse_utility_loss(X, Y, 2), rel=1e-12)
    assert sm.sparse_utility_loss(X, X, 2) == pytest.approx(0.0, abs=1e-15)


# ---------------------------------------------------------------------------- empirical privacy
def _loss_stat(y_path, a, a2, b):
    """Privacy loss ln p_D(y)/p_D'(y) of the Haar coefficients for Laplace scale b (the claimed scale)."""
    c = haar_analysis(y_path, scaled=True)  # Φ^{-1} y = Φ^{-1} v + η̃ (k^s = 16: no padding)
    return ((np.abs(c - a2) - np.abs(c - a)) / b).sum(axis=(-1, -2))


@pytest.mark.slow
@pytest.mark.parametrize("exact_total", [False, True])
def test_empirical_privacy_of_noisy_marginals(exact_total):
    # Neighbouring datasets (replace one record, moved across the cube) and the noisy marginal vector
    # v_DP = T mu_D + [Φ η̃] of Step 2, the released private statistic. Event: the privacy loss of the
    # claimed Laplace scale is at least τ = 0.5ε. For the correct mechanism the true density ratio on
    # the event is at most e^ε (its loss is at most ε everywhere); for the broken one (noise calibrated
    # to one block, forgetting the factor K = 3) it is at least e^{3τ} = e^{1.5ε}. With 200,000 draws
    # per dataset and Clopper-Pearson bounds at level 1e-4 each, the lower confidence bound of the log
    # ratio separates the two cases (measured: 0.18 / 0.44 for the correct paper / exact-total noise,
    # 1.25 / 1.56 for the broken ones).
    n, d, s, k, eps = 40, 3, 2, 4, 1.0
    X = _data(n, d, 9)
    X[0] = [0.02, 0.02, 0.02]
    X2 = X.copy()
    X2[0] = [0.98, 0.98, 0.98]
    v = sm.marginal_vector(X, s, k)
    v2 = sm.marginal_vector(X2, s, k)
    a, a2 = haar_analysis(v, scaled=True), haar_analysis(v2, scaled=True)
    b = sm.noise_scale(n, eps, d, s, k, exact_total=exact_total)
    N = 200_000
    tau = 0.5 * eps

    def log_ratio_lower(scale):
        e1 = _loss_stat(v + sm.haar_block_noise(3, k, s, scale, rng=1, draws=N, exact_total=exact_total), a, a2, b)
        e2 = _loss_stat(v2 + sm.haar_block_noise(3, k, s, scale, rng=2, draws=N, exact_total=exact_total),
                        a, a2, b)
        c1, c2 = int((e1 >= tau).sum()), int((e2 >= tau).sum())
        lo1 = stats.beta.ppf(1e-4, c1, N - c1 + 1)
        hi2 = stats.beta.ppf(1 - 1e-4, c2 + 1, N - c2)
        return math.log(lo1 / hi2), c1, c2

    good, c1, c2 = log_ratio_lower(b)
    assert c2 > 100  # the event has power
    assert good <= eps
    broken, _, _ = log_ratio_lower(b / 3)
    assert broken > eps


# ------------------------------------------------------------------- consistent certificate
@pytest.mark.parametrize("d,s,k", [(4, 2, 5), (4, 3, 3), (3, 1, 6), (5, 2, 4)])
def test_consistency_projection_is_identity_on_query_differences(d, s, k):
    # Validity of the consistent certificate rests on Π(Tμ_D - Tμ) = Tμ_D - Tμ (module docstring)
    g = np.random.default_rng(d * 100 + s * 10 + k)
    X1, X2 = g.random((70, d)) ** 2, g.random((90, d))
    w2 = g.random(90)
    x = sm.marginal_vector(X1, s, k, order="row") - sm.marginal_vector(X2, s, k, w2 / w2.sum(), order="row")
    A = sm.consistency_constraints(d, s, k)
    assert np.abs(A @ x.ravel()).max() < 1e-12
    for exact_total in (True, False):
        cmap = sm.consistency_map(d, s, k, exact_total=exact_total)
        np.testing.assert_allclose(sm.consistent_part(x, cmap), x, atol=1e-12)
        # and Π maps noisy vectors to consistent zero-total ones (the noise directions are removed)
        eta = sm.haar_block_noise(math.comb(d, s), k, s, 0.01, rng=g, draws=20, exact_total=exact_total)
        order, rank = query.path_rank(k, s)
        pe = sm.consistent_part(eta[..., rank], cmap)
        assert np.abs(pe.reshape(20, -1) @ A.T.toarray()).max() < 1e-12


def test_consistency_projection_lowers_the_noise_quantile():
    # d=4, s=2, k=8: over 400 fixed-seed draws the 0.9-quantile of U_T(0, Πη) is below that of U_T(0, η)
    # (measured 0.133 vs 0.152 at the benchmark's scale; GLS removes the inconsistent noise components).
    # A deterministic check with a 5% margin: the sampling error of a 0.9-quantile from 400 draws is ~2%.
    K, k, s = 6, 8, 2
    b = sm.noise_scale(2000, 1.0, 4, 2, k, exact_total=True)
    _, rank = query.path_rank(k, s)
    eta = sm.haar_block_noise(K, k, s, b, rng=0, draws=400, exact_total=True)[..., rank]
    cmap = sm.consistency_map(4, 2, 8, exact_total=True)
    q_old = np.quantile(sm.proxy_ut(eta, k, s), 0.9)
    q_new = np.quantile(sm.proxy_ut(sm.consistent_part(eta, cmap), k, s), 0.9)
    assert q_new < 0.95 * q_old


def test_kr_grid_points_matches_dense_lp_and_pot():
    from scipy.optimize import linprog

    from dpsynth_core.grid import cell_centres

    g = np.random.default_rng(11)
    k, s = 3, 2
    C = cell_centres(k, s)
    for trial in range(4):
        w = g.normal(size=k * k) * 0.1 + 1 / 9  # signed, total != 1 in general
        P = g.random((5, s))
        a = g.random(5)
        a /= a.sum()
        val = sm.kr_grid_points(w, k, s, P, a)
        # dense LP over f on {0} ∪ centres ∪ points: max Σ f(c_i) w_i - Σ f(p_j) a_j, |f_i - f_j| <= d_ij, f(0) = 0
        Z = np.vstack([np.zeros((1, s)), C, P])
        coef = np.concatenate([[0.0], w, -a])
        n = Z.shape[0]
        D = np.max(np.abs(Z[:, None] - Z[None]), axis=2)
        iu = np.triu_indices(n, 1)
        rows = np.zeros((2 * len(iu[0]), n))
        for r, (i, j) in enumerate(zip(*iu, strict=True)):
            rows[2 * r, i], rows[2 * r, j] = 1, -1
            rows[2 * r + 1, i], rows[2 * r + 1, j] = -1, 1
        bounds = [(0, 0)] + [(None, None)] * (n - 1)
        res = linprog(-coef, A_ub=rows, b_ub=np.repeat(D[iu], 2), bounds=bounds, method="highs")
        assert res.status == 0
        assert val == pytest.approx(-res.fun, abs=1e-9)
        if trial == 0:
            # probability weights on the centres: it is the l_inf W1, as POT computes it
            p = np.abs(w) / np.abs(w).sum()
            w1 = ot.emd2(p, a, ot.dist(C, P, metric="chebyshev"))
            assert sm.kr_grid_points(p, k, s, P, a) == pytest.approx(w1, abs=1e-12)
    # points on the centres: the exact term is U_T of the difference (the snapped case)
    u = g.random(9)
    u /= u.sum()
    w = g.normal(size=9) * 0.05 + u
    keep = u > 0
    assert sm.kr_grid_points(w, k, s, C[keep], u[keep]) == pytest.approx(sm.proxy_ut((w - u)[None], k, s),
                                                                         abs=1e-12)


def test_consistent_certificate_below_papers_on_seeded_runs():
    # Not a theorem for the snapped default (Π changes both the quantile and the projection term), so a
    # fixed-seed check on the coverage setting of the benchmark (n=2000, d=4, s=2, k=8): the consistent
    # U_T certificate is below the paper's in every one of 4 runs; measured ratios 0.90-0.95.
    for seed in range(4):
        X, P, dom = shift_scenario(2000, 4, 0.3, rng=seed, n_public=4000)
        rel = sm.sparse_marginals(X, dom, epsilon=1.0, s=2, k=8, public=P, rng=10_000 + seed)
        new, old = rel.trace.certificate["U_T_consistent"], rel.trace.certificate["U_T"]
        assert new.total < old.total
        assert new.privatisation_quantile < old.privatisation_quantile


def test_consistency_both_fits_the_consistent_marginals():
    _, rel = _rel(consistency="both", rng=6)
    order = rel.trace.snake_order
    lt = sm.proxy_lt((rel.trace.consistent_marginals - rel.trace.lp_marginals)[:, order], 4)
    # Step 3's optimum is L_T(Π v_DP, T mu) of its measure, up to the tie-break (relative λ = 1e-3)
    assert rel.trace.lp["objective"] == pytest.approx(lt, rel=2e-3)
    _, rel2 = _rel(consistency="certificate", rng=6)
    np.testing.assert_array_equal(rel.trace.consistent_marginals, rel2.trace.consistent_marginals)
    assert not np.array_equal(rel.trace.lp_marginals, rel2.trace.lp_marginals)


# --------------------------------------------------------------------------- coverage (small)
def test_small_coverage_check():
    # 30 seeded runs (n=400, d=3, s=2, k=4, δ=0.1): the certificate fails with probability at most δ
    # (Lemma 1, up to the Monte Carlo error of the quantile). Binomial(30, 0.1) exceeds 7 with
    # probability 0.007, so at most 7 failures are allowed; measured: 0.
    fails = 0
    for seed in range(30):
        X, _, dom = shift_scenario(400, 3, 0.3, rng=seed, n_public=10)
        rel = sm.sparse_marginals(X, dom, epsilon=1.0, s=2, k=4, public_size=400, mc_draws=100, rng=100 + seed)
        loss = sm.sparse_utility_loss(X, rel.synthetic, 2, dom)
        fails += loss > rel.bound
        assert rel.trace.certificate["U_T"].total <= rel.trace.certificate["L_T"].total + 0.5
    assert fails <= 7


# ----------------------------------------------------------------------------- shift scenario
def test_shift_scenario():
    X, P, dom = shift_scenario(500, 4, 0.0, rng=0, n_public=600)
    assert X.shape == (500, 4) and P.shape == (600, 4) and dom.d == 4
    assert X.min() >= 0 and X.max() <= 1
    X1, P1, _ = shift_scenario(500, 4, 1.0, rng=0, n_public=600)
    np.testing.assert_array_equal(X, X1)  # the private sample does not depend on the shift
    # no shift: public and private come from one law; full shift: the public data moves away
    d0 = sm.sparse_utility_loss(X, P, 2)
    d1 = sm.sparse_utility_loss(X1, P1, 2)
    assert d1 > 2 * d0
    Xb, Pb, _ = shift_scenario(500, 4, 0.5, rng=0, n_public=600)
    Xc, Pc, _ = shift_scenario(500, 4, 0.5, rng=0, n_public=600)
    np.testing.assert_array_equal(Pb, Pc)


def test_default_k_rule():
    k_small = sm.default_k(2000, 1.0, 4, 2)
    k_big = sm.default_k(200_000, 1.0, 4, 2)
    assert 1 <= k_small < k_big
    assert sm.default_k(2000, 1.0, 4, 2) == k_small  # deterministic, data-independent
    X = _data(300, 3)
    rel = sm.sparse_marginals(X, Domain.unit(3), epsilon=1.0, public_size=100, mc_draws=20, rng=0)
    assert rel.params["k"] == sm.default_k(300, 1.0, 3, 2)


# ------------------------------------------------------------------ the Monte Carlo quantile
def test_mc_order_is_the_exchangeable_order_statistic():
    # j = ⌈(1-δ)(M+1)⌉: M = 200, δ = 0.1 -> 181 (exceeded w.p. 20/201 <= 0.1; the plain ⌈(1-δ)M⌉ = 180 gives
    # 21/201 = 0.104); M = 50 -> 46; M = 9, δ = 0.1 -> 9 (the smallest M that admits δ = 0.1).
    assert sm.mc_order(200, 0.1) == 181 and sm.mc_order(50, 0.1) == 46 and sm.mc_order(9, 0.1) == 9
    assert sm.mc_order(999, 0.001) == 999 and sm.mc_order(20, 0.5) == 11
    for M in (20, 50, 200, 1000):
        for delta in (0.001, 0.01, 0.05, 0.1, 0.25, 0.5):
            if M < (1 - delta) / delta:
                continue
            j = sm.mc_order(M, delta)
            assert (M + 1 - j) / (M + 1) <= delta + 1e-12  # exceeded with probability at most δ
            assert j == 1 or (M + 2 - j) / (M + 1) > delta  # and j is the smallest such order
    samples = np.random.default_rng(0).permutation(np.arange(1.0, 201.0))
    assert certificate.quantile_high(samples, 0.1) == 181.0


def test_mc_order_exceedance_matches_exchangeability():
    """A fresh draw Z_0 and M Monte Carlo draws of one continuous law (Uniform(0, 1), any law gives the same
    rank distribution) exceed the j-th order statistic with probability (M+1-j)/(M+1). At M = 20, δ = 0.1:
    j = 19, 2/21 = 0.0952 <= δ, while the plain ⌈(1-δ)M⌉ = 18 gives 3/21 = 0.143 > δ. 200,000 trials:
    s.e. <= 0.0008, tolerance 5 s.e. = 0.004, far below the 0.048 between the two rules."""
    rng = np.random.default_rng(3)
    M, delta, trials = 20, 0.1, 200_000
    z = rng.random((trials, M + 1))
    srt = np.sort(z[:, 1:], axis=1)
    j = sm.mc_order(M, delta)
    freq = float(np.mean(z[:, 0] > srt[:, j - 1]))
    se = math.sqrt(delta * (1 - delta) / trials)
    assert abs(freq - (M + 1 - j) / (M + 1)) < 5 * se and freq <= delta + 5 * se
    old = math.ceil((1 - delta) * M)
    assert float(np.mean(z[:, 0] > srt[:, old - 1])) > delta + 10 * se  # the old rule over-runs δ


def test_mc_draws_too_few_for_delta_cert_refused_before_work(monkeypatch):
    # δ = 0.01 needs M >= 99: the 21st of 20 draws does not exist. Refused before the default grid is searched.
    monkeypatch.setattr(mechanism, "default_k", lambda *a, **k: pytest.fail("default_k ran before the refusal"))
    with pytest.raises(ValueError, match=r"The 'mc_draws' parameter of sparse_marginals must be at least 99 for "
                                         r"delta_cert=0.01.*Got 20; pass more mc_draws or a larger delta_cert"):
        sm.sparse_marginals(_data(100, 3, 1), Domain.unit(3), epsilon=1.0, delta_cert=0.01, mc_draws=20, rng=0)


def test_solve_plan_bounds_the_exact_solves_and_a_soft_budget_stays_conservative():
    """ut_solve_plan (cheap bounds only) is an upper bound on what ut_quantile charges; with a soft budget
    below it the declined solves use their proven upper bounds, so the quantile can only grow."""
    from dpsynth_core import limits

    K, k, s, M = 3, 6, 2, 60
    _, rank = query.path_rank(k, s)
    w = sm.haar_block_noise(K, k, s, 0.01, rng=4, draws=M, exact_total=True)[..., rank]
    plan = certificate.ut_solve_plan(w, k, s, 0.1)
    hard = proxies.SolveBudget("sparse_marginals", k=k, s=s, K=K, mc_draws=M)
    q_exact, _ = certificate.ut_quantile(w, k, s, 0.1, hard)
    assert 0 < hard.used <= plan
    exact_all = np.array([proxies.ut_block_max(row, k, s) for row in w])
    assert q_exact == np.sort(exact_all)[sm.mc_order(M, 0.1) - 1]
    with limits.override(max_transport_solves=max(1, hard.used // 3)):
        soft = proxies.SolveBudget("sparse_marginals", k=k, s=s, K=K, mc_draws=M, soft=True)
        q_soft, _ = certificate.ut_quantile(w, k, s, 0.1, soft)
    assert soft.declined > 0 and soft.used <= soft.limit
    assert q_soft >= q_exact


def test_the_default_grid_keeps_two_cells_where_the_bound_would_take_one():
    # the smallest n with at least 2 cells per axis by the bound alone, found by doubling and bisection
    need = rows_for_two_cells(442, 1.0, 4, 2)
    assert default_k(need, 1.0, 4, 2) >= 2 and default_k(need - 1, 1.0, 4, 2) == 1
    assert rows_for_two_cells(5000, 1.0, 2, 2) == 5000  # already 2 or more: nothing to add
    assert default_k(300, 1.0, 4, 2) == 1 and default_k(300, 1.0, 4, 2, k_min=2) == 2
    X = np.random.default_rng(0).random((300, 4))
    rel = run("sparse_marginals", X, Domain([0.0] * 4, [1.0] * 4), epsilon=1.0, rng=0)
    assert rel.params["k"] == 2  # not the one cell the bound alone would take: that release is the box's centre
    note = rel.notes[-1]
    assert note.startswith("With 300 rows at ε = 1 the paper's expected-loss bound (Eq. 15) is smallest at one cell")
    assert f"From about {need:,} rows at this ε" in note  # the same smallest n from 300 as from 442
    assert np.unique(rel.synthetic[:, 0]).size > 1  # a numeric column is no longer collapsed to one value
    # a k given by the user gets no such note, and k = 1 stays available
    given = run("sparse_marginals", X, Domain([0.0] * 4, [1.0] * 4), epsilon=1.0, rng=0, k=1)
    assert not any(n.startswith("With 300 rows") for n in given.notes)
    assert np.unique(given.synthetic, axis=0).shape[0] == 1
