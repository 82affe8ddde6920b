"""PMM [HVZ23, Algorithms 3–4, Theorems 9–11, Corollary 12].

Comparability of the paper's maps for integer inputs (why the clamp in ``comparable_split`` is a
no-op there): with a, b, m integers and the deficit case m >= a + b, the proportional target
x* = m a/(a+b) satisfies a <= x* <= m - b, and rounding to the nearest integer keeps an integer
bound on either side; the uniform target (m + a - b)/2 satisfies the same inequalities. The surplus
case is symmetric. The property tests below check the outputs directly anyway.
"""

import math

import numpy as np
import ot
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpsynth_core import MECHANISMS, Domain, partition, run
from dpsynth_core.mechanisms import pmm
from dpsynth_core.mechanisms.pmm import (
    add_level_noise,
    comparable_split,
    consistent_counts,
    dlaplace_variance,
    least_squares_tree,
    level_sigmas,
)
from dpsynth_core.theory import (
    AUTO_MAX_DEPTH,
    AUTO_SHIFT,
    MAX_PMM_DEPTH,
    bound_depth,
    default_depth,
    paper_depth,
    pmm_theorem10,
    pmm_theorem11,
)

DOM2 = Domain.unit(2)


def _X(n=400, d=2, seed=0):
    return np.random.default_rng(seed).random((n, d))


# ----------------------------------------------------------------------------------- validation
@pytest.mark.parametrize(
    "kwargs, exc, pattern",
    [
        (dict(depth=-1), ValueError, r"'depth' parameter of pmm must be an int in \[0, 24\]"),
        (dict(depth=MAX_PMM_DEPTH + 1), ValueError, r"'depth' parameter of pmm must be an int in \[0, 24\]"),
        (dict(depth=2.5), ValueError, r"'depth' parameter of pmm"),
        (dict(depth="3"), TypeError, r"'depth' parameter of pmm"),
        (dict(depth_rule="deep"), ValueError, r"'depth_rule' parameter of pmm must be one of 'auto', 'paper'"),
        (dict(depth_rule=3), TypeError, r"'depth_rule' parameter of pmm"),
        (dict(noise="geometric"), ValueError, r"'noise' parameter of pmm must be one of 'optimal', 'uniform'"),
        (dict(noise=[1.0, -2.0]), ValueError, r"'noise' parameter of pmm must be a sequence of finite positive"),
        (dict(noise=[1.0, float("nan")]), ValueError, r"'noise' parameter of pmm must be a sequence of finite"),
        (dict(noise=[]), ValueError, r"'noise' parameter of pmm must be 'optimal', 'uniform' or a sequence of 1"),
        (dict(noise=[[1.0, 2.0]]), ValueError, r"'noise' parameter of pmm"),
        (dict(noise=["a", "b"]), TypeError, r"'noise' parameter of pmm"),
        (dict(noise=[1.0, 1.0, 1.0], depth=4), ValueError, r"'noise' parameter of pmm must be a sequence of depth"),
        (dict(consistency="lsq"), ValueError, r"'consistency' parameter of pmm must be one of 'proportional'"),
        (dict(placement="corner"), ValueError, r"'placement' parameter of pmm must be one of 'uniform', 'center'"),
        (dict(n_public=0), ValueError, r"'n_public' parameter of pmm must be an int in \[1, "),
        (dict(n_public="10"), TypeError, r"'n_public' parameter of pmm"),
        (dict(neighbours="swap"), ValueError, r"'neighbours' parameter of pmm"),
        (dict(epsilon=-1.0), ValueError, r"'epsilon' parameter of pmm must be a float in \[1e-06, 1000000\]"),
        (dict(rng=-3), ValueError, r"'rng' parameter of pmm"),
        (dict(rng="seed"), TypeError, r"'rng' parameter of pmm"),
    ],
)
def test_validation(kwargs, exc, pattern):
    kw = {"epsilon": 1.0, "rng": 0} | kwargs
    with pytest.raises(exc, match=pattern):
        pmm(_X(20), DOM2, **kw)


def test_validation_domain_and_data():
    with pytest.raises(TypeError, match="'domain' parameter of pmm"):
        pmm(_X(20), [[0, 0], [1, 1]], epsilon=1.0)
    with pytest.raises(ValueError, match="'X' parameter of pmm"):
        pmm(_X(20, d=3), DOM2, epsilon=1.0)


# ------------------------------------------------------------------------------------- registry
def test_registered_with_full_schema():
    spec = MECHANISMS["pmm"]
    assert spec.func is pmm and spec.dp == "pure" and set(spec.neighbours) == {"add_remove", "replace"}
    names = {p.name for p in spec.params}
    assert {"depth", "depth_rule", "noise", "consistency", "placement", "n_public"} <= names
    assert all(p.help for p in spec.params)
    assert spec.param("consistency").choices == ("proportional", "uniform", "least_squares")


# -------------------------------------------------------------------------------- determinism
def test_same_seed_same_release_and_different_seeds_differ():
    X = _X(800)
    a = pmm(X, DOM2, epsilon=1.0, rng=7)
    b = run("pmm", X, DOM2, epsilon=1.0, rng=7)
    assert np.array_equal(a.synthetic, b.synthetic)
    for key in ("noisy_counts", "consistent_counts"):
        assert all(np.array_equal(u, v) for u, v in zip(getattr(a.trace, key), getattr(b.trace, key), strict=True))
    c = pmm(X, DOM2, epsilon=1.0, rng=8)
    assert not np.array_equal(a.synthetic[: min(len(a.synthetic), len(c.synthetic))],
                              c.synthetic[: min(len(a.synthetic), len(c.synthetic))])
    g = np.random.default_rng(3)
    assert pmm(X, DOM2, epsilon=1.0, rng=g).synthetic.shape[1] == 2


# ------------------------------------------------------------------------- noise and privacy
@pytest.mark.parametrize("d", [1, 2, 3])
@pytest.mark.parametrize("depth", [0, 1, 5, 12])
def test_a4_sigmas_spend_exactly_epsilon(d, depth):
    sig = level_sigmas(depth, d, 0.7, split="optimal", neighbours="add_remove")
    assert math.isclose(np.sum(1.0 / sig), 0.7, rel_tol=1e-12)
    w = partition.deltas(depth, d)
    S = np.sqrt(w).sum()
    assert np.allclose(sig, S / (0.7 * np.sqrt(w)))  # A.4: σ_j = S / (ε √Δ_{j-1})
    rep = level_sigmas(depth, d, 0.7, split="optimal", neighbours="replace")
    assert rep[0] == 0.0
    if depth >= 1:
        assert math.isclose(np.sum(2.0 / rep[1:]), 0.7, rel_tol=1e-12)
    uni = level_sigmas(depth, d, 0.7, split="uniform")
    assert np.allclose(uni, (depth + 1) / 0.7)


def test_sequence_noise_is_a_shape_rescaled_to_epsilon():
    rel = pmm(_X(300), DOM2, epsilon=2.0, noise=[4.0, 2.0, 1.0, 1.0], rng=0)
    s = np.array(rel.params["sigmas"])
    assert rel.params["depth"] == 3 and rel.params["noise"] == "given"
    assert np.allclose(s / s[-1], [4, 2, 1, 1]) and math.isclose(np.sum(1 / s), 2.0, rel_tol=1e-12)
    assert rel.bound == pytest.approx(pmm_theorem10(rel.params["n_for_parameters"], s, 2))
    assert "Theorem 10" in rel.bound_kind


def test_ledger_and_size_rules():
    X = _X(1000)
    rel = pmm(X, DOM2, epsilon=1.0, rng=0)  # depth rule needs n: 5% buys a noisy size
    assert rel.ledger.entries[0].epsilon == pytest.approx(0.05) and rel.params["n_source"] == "noisy"
    assert math.isclose(rel.ledger.epsilon, 1.0) and len(rel.ledger) == rel.params["depth"] + 2
    assert math.isclose(np.sum(1 / np.array(rel.params["sigmas"])), 0.95, rel_tol=1e-9)
    rel = pmm(X, DOM2, epsilon=1.0, depth=6, rng=0)  # nothing needs n: the whole ε goes to the tree
    assert math.isclose(np.sum(1 / np.array(rel.params["sigmas"])), 1.0, rel_tol=1e-9)
    assert rel.params["n_source"] == "released size (DP)" and rel.params["n_for_parameters"] == len(rel.synthetic)
    rel = pmm(X, DOM2, epsilon=1.0, n_public=1000, rng=0)
    assert rel.params["n_source"] == "n_public" and rel.params["depth"] == default_depth(1000, 1.0, 2)
    rel = pmm(X, DOM2, epsilon=1.0, neighbours="replace", rng=0)
    s = np.array(rel.params["sigmas"])
    assert s[0] == 0.0 and math.isclose(np.sum(2 / s[1:]), 1.0, rel_tol=1e-9)
    assert rel.synthetic.shape == (1000, 2)  # exact root: n is public under replace
    assert rel.trace.consistent_counts[0][0] == 1000
    rel = pmm(X, DOM2, epsilon=1.0, neighbours="replace", depth=0, rng=0)
    assert rel.synthetic.shape == (1000, 2) and math.isclose(rel.ledger.epsilon, 1.0)


def test_params_hold_no_true_size_under_add_remove():
    X = _X(1234)
    rel = pmm(X, DOM2, epsilon=0.5, rng=1)
    assert rel.params["size"]["source"] == "noisy"
    assert rel.owner.n == 1234
    assert "owner" not in rel.public()["params"]


def _path_levels(tree, code, depth):
    """Counts of the cells containing a point of leaf ``code`` at every level 0..depth."""
    return np.array([tree[j][code >> (depth - j)] for j in range(depth + 1)])


def _log_ratio(k1, k2):
    return math.log(k1 / k2), math.sqrt(1.0 / k1 + 1.0 / k2)  # delta-method s.e. of a log ratio


def test_theorem9_empirical_privacy_add_remove():
    """Neighbouring D, D' = D + x*: the noisy counts on the path of cells containing x* (root to the
    finest cell) is where they differ. Event E = {every path count <= its value under D}. Under D it
    has probability prod_j 1/(1+p_j), under D' prod_j p_j/(1+p_j), p_j = exp(-1/σ_j): the ratio is
    exactly exp(sum_j 1/σ_j) = exp(ε) (Theorem 9 is tight on this event), so the test has power; the
    same pipeline with half the noise has log-ratio 2ε and must fail."""
    depth, eps, N = 4, 1.0, 200_000
    D = _X(40, seed=5)
    x_star = np.array([[0.83, 0.21]])
    Dp = np.vstack([D, x_star])
    sig = np.array(pmm(D, DOM2, epsilon=eps, depth=depth, rng=0).params["sigmas"])
    code = int(partition.cell_codes(x_star, depth)[0])
    cD = _path_levels(partition.count_tree(D, depth), code, depth)
    cDp = _path_levels(partition.count_tree(Dp, depth), code, depth)
    assert np.all(cDp - cD == 1)
    rng = np.random.default_rng(2024)

    def freq(counts, sigmas, event_levels):
        levels = [np.full((N, 1), c) for c in counts]
        noisy = np.hstack(add_level_noise(levels, sigmas, rng))
        return int(np.all(noisy[:, event_levels] <= cD[event_levels], axis=1).sum())

    all_levels = np.arange(depth + 1)
    k1, k2 = freq(cD, sig, all_levels), freq(cDp, sig, all_levels)
    lr, se = _log_ratio(k1, k2)
    # Tolerance 5 s.e. (s.e. ≈ 0.02 here): a false alarm has probability < 1e-6.
    assert lr <= eps + 5 * se
    assert lr >= eps - 5 * se  # the event attains ε: the check is not vacuous
    # finest cell alone: log-ratio 1/σ_r <= ε
    k1, k2 = freq(cD, sig, [depth]), freq(cDp, sig, [depth])
    lr_leaf, se_leaf = _log_ratio(k1, k2)
    assert lr_leaf <= eps + 5 * se_leaf and abs(lr_leaf - 1 / sig[-1]) < 5 * se_leaf
    # a broken variant with half the noise on every level spends 2ε: detected
    k1, k2 = freq(cD, sig / 2, all_levels), freq(cDp, sig / 2, all_levels)
    lr_bad, se_bad = _log_ratio(k1, k2)
    assert lr_bad > eps + 5 * se_bad


def test_theorem9_empirical_privacy_replace():
    """Replace: one record moves from leaf A to leaf B (different halves). The root is exact; on
    every level j >= 1 the A-path count drops by 1 and the B-path count rises by 1. Event
    {A-path counts >= D's, B-path counts <= D's} has ratio prod_j p_j^{-2} = exp(sum 2/σ_j) = e^ε."""
    depth, eps, N = 3, 1.0, 200_000
    D = _X(30, seed=9)
    a_pt, b_pt = np.array([[0.1, 0.1]]), np.array([[0.9, 0.8]])
    D1, D2 = np.vstack([D, a_pt]), np.vstack([D, b_pt])
    sig = np.array(pmm(D1, DOM2, epsilon=eps, depth=depth, neighbours="replace", rng=0).params["sigmas"])
    assert sig[0] == 0.0
    ca, cb = (int(partition.cell_codes(p, depth)[0]) for p in (a_pt, b_pt))
    t1, t2 = partition.count_tree(D1, depth), partition.count_tree(D2, depth)
    A1, B1 = _path_levels(t1, ca, depth), _path_levels(t1, cb, depth)
    A2, B2 = _path_levels(t2, ca, depth), _path_levels(t2, cb, depth)
    rng = np.random.default_rng(99)

    def freq(A, B, sigmas):
        na = np.hstack(add_level_noise([np.full((N, 1), c) for c in A], sigmas, rng))
        nb = np.hstack(add_level_noise([np.full((N, 1), c) for c in B], sigmas, rng))
        return int((np.all(na[:, 1:] >= A1[1:], axis=1) & np.all(nb[:, 1:] <= B1[1:], axis=1)).sum())

    lr, se = _log_ratio(freq(A1, B1, sig), freq(A2, B2, sig))
    assert abs(lr - eps) <= 5 * se  # tight at ε (5 s.e. tolerance, s.e. ≈ 0.03)
    lr_bad, se_bad = _log_ratio(freq(A1, B1, sig / 2), freq(A2, B2, sig / 2))
    assert lr_bad > eps + 5 * se_bad


def test_discrete_laplace_variance_formula():
    from scipy import stats

    for s in (0.3, 1.0, 7.5):
        assert dlaplace_variance(s) == pytest.approx(stats.dlaplace(a=1 / s).var(), rel=1e-10)
    assert dlaplace_variance(0.0) == 0.0


# ------------------------------------------------------------------------------- consistency
def test_comparable_split_exhaustive_small():
    a, b, m = np.meshgrid(np.arange(8), np.arange(8), np.arange(20), indexing="ij")
    a, b, m = a.ravel(), b.ravel(), m.ravel()
    for method in ("proportional", "uniform"):
        x = comparable_split(m, a, b, method)
        y = m - x
        assert np.all(x >= 0) and np.all(y >= 0)
        up = (x >= a) & (y >= b)
        down = (x <= a) & (y <= b)
        assert np.all(up | down)
    # proportional is round(m a / (a+b)) (halves up), even split for a + b = 0
    x = comparable_split(m, a, b, "proportional")
    s = a + b
    ref = np.where(s > 0, np.floor(m * a / np.maximum(s, 1) + 0.5), m // 2)
    assert np.array_equal(x, ref)
    # uniform is the nearest point of Z_+^2 ∩ L(m) to (a, b) in the Euclidean metric
    x = comparable_split(m, a, b, "uniform")
    for i in range(a.size):
        cand = np.arange(m[i] + 1)
        dist = (cand - a[i]) ** 2 + (m[i] - cand - b[i]) ** 2
        assert dist[x[i]] == dist.min()


@st.composite
def noisy_trees(draw):
    depth = draw(st.integers(1, 6))
    big = draw(st.booleans())
    hi = 10**6 if big else 12
    levels = [np.array(draw(st.lists(st.integers(-hi, hi), min_size=1 << j, max_size=1 << j)), dtype=np.int64)
              for j in range(depth + 1)]
    sig = np.array(draw(st.lists(st.floats(0.2, 50.0), min_size=depth + 1, max_size=depth + 1)))
    return levels, sig


@given(noisy_trees(), st.sampled_from(["proportional", "uniform", "least_squares"]))
def test_consistency_property(tree, method):
    noisy, sig = tree
    clipped, cons, inputs, ls = consistent_counts(noisy, sig, method)
    r = len(noisy) - 1
    assert cons[0][0] == inputs[0][0]
    for j in range(r + 1):
        assert cons[j].dtype.kind == "i" and np.all(cons[j] >= 0)
        assert np.array_equal(clipped[j], np.maximum(noisy[j], 0))
    for j in range(r):
        a, b = cons[j + 1][0::2], cons[j + 1][1::2]
        assert np.array_equal(a + b, cons[j])  # parent = sum of children
        ia, ib = inputs[j + 1][0::2], inputs[j + 1][1::2]
        assert np.all(((a >= ia) & (b >= ib)) | ((a <= ia) & (b <= ib)))  # comparable at every node
    if method != "least_squares":
        assert all(np.array_equal(i, c) for i, c in zip(inputs, clipped, strict=True))
    else:
        for j in range(r):
            assert np.allclose(ls[j + 1][0::2] + ls[j + 1][1::2], ls[j], atol=1e-6 * (1 + np.abs(ls[j]).max()))


def test_least_squares_matches_dense_weighted_least_squares():
    rng = np.random.default_rng(3)
    depth = 3
    for exact_root in (False, True):
        sig = rng.uniform(0.5, 4.0, depth + 1)
        if exact_root:
            sig[0] = 0.0
        noisy = [rng.integers(-5, 30, 1 << j).astype(float) for j in range(depth + 1)]
        est = least_squares_tree(noisy, dlaplace_variance(sig))
        # dense reference: unknown leaves x (2^r); node θ at level j sums its 2^{r-j} leaves
        rows, y, w = [], [], []
        for j in range(depth + 1):
            width = 1 << (depth - j)
            for t in range(1 << j):
                row = np.zeros(1 << depth)
                row[t * width:(t + 1) * width] = 1.0
                rows.append(row)
                y.append(noisy[j][t])
                w.append(1.0 / math.sqrt(dlaplace_variance(sig[j]) if sig[j] > 0 else 1e-12))
        A, y, w = np.array(rows), np.array(y), np.array(w)
        leaves = np.linalg.lstsq(A * w[:, None], y * w, rcond=None)[0]
        assert np.allclose(est[-1], leaves, atol=1e-6)
        if exact_root:
            assert est[0][0] == pytest.approx(noisy[0][0])


def test_consistent_counts_batch_matches_single():
    rng = np.random.default_rng(0)
    sig = np.array([3.0, 2.0, 1.5])
    single = [rng.integers(-3, 20, (5, 1 << j)) for j in range(3)]
    for method in ("proportional", "uniform", "least_squares"):
        _, batch, _, _ = consistent_counts(single, sig, method)
        for i in range(5):
            _, one, _, _ = consistent_counts([s[i] for s in single], sig, method)
            assert all(np.array_equal(batch[j][i], one[j]) for j in range(3))


# -------------------------------------------------------------------------------- the release
@pytest.mark.parametrize("consistency", ["proportional", "uniform", "least_squares"])
def test_release_structure_and_trace(consistency):
    X = _X(3000, d=3)
    dom = Domain(lower=[-2, 0, 10], upper=[2, 1, 20])
    rel = pmm(dom.from_unit(X), dom, epsilon=1.5, consistency=consistency, rng=4)
    r, d = rel.params["depth"], 3
    tr = rel.trace
    assert len(rel.params["sigmas"]) == r + 1 and len(tr.noisy_counts) == r + 1
    for j in range(r + 1):
        for key in ("noisy_counts", "clipped_counts", "consistent_counts"):
            assert getattr(tr, key)[j].shape == (1 << j,)
        assert np.array_equal(rel.owner.true_counts[j], partition.count_tree(X, r)[j])
    assert len(rel.synthetic) == tr.consistent_counts[0][0] == rel.params["n_synthetic"]
    assert np.all(dom.contains(rel.synthetic))
    # each synthetic row lies in the leaf its code names, and the leaf tally is the consistent leaf count
    U = dom.to_unit(rel.synthetic)
    assert np.array_equal(partition.cell_codes(U, r), tr.leaf_codes)
    assert np.array_equal(np.bincount(tr.leaf_codes, minlength=1 << r), tr.consistent_counts[-1])
    assert np.allclose(tr.diameters, partition.diameters(r, d))
    assert (consistency == "least_squares") == (tr.ls_estimates is not None)
    assert (consistency == "least_squares") == any("Lemma 17" in n for n in rel.notes)


def test_center_placement_puts_points_at_leaf_centres():
    rel = pmm(_X(500), DOM2, epsilon=1.0, depth=6, placement="center", rng=0)
    lo, hi = partition.cell_bounds(6, 2, rel.trace.leaf_codes)
    assert np.allclose(rel.synthetic, (lo + hi) / 2)


def test_huge_epsilon_reproduces_the_counts():
    X = _X(2000, d=2, seed=3)
    for consistency in ("proportional", "uniform", "least_squares"):
        rel = pmm(X, DOM2, epsilon=1e6, depth=8, consistency=consistency, rng=0)
        true = rel.owner.true_counts
        assert all(np.array_equal(c, t) for c, t in zip(rel.trace.consistent_counts, true, strict=True))


@pytest.mark.parametrize("d", [1, 5])
def test_edge_cases(d):
    dom = Domain.unit(d)
    one = pmm(np.full((1, d), 0.3), dom, epsilon=1.0, rng=0)
    assert one.synthetic.shape[1] == d
    corner = np.zeros((300, d))
    rel = pmm(corner, dom, epsilon=0.01, rng=0)  # tiny ε, all points in one corner
    assert rel.synthetic.shape[1] == d and np.all(dom.contains(rel.synthetic))
    outside = pmm(np.full((50, d), 7.0), dom, epsilon=1.0, depth=3, rng=0)  # clamped into the box
    assert outside.owner.n_clamped == 50


# ------------------------------------------------------------------------------------- depth rules
def test_depth_rules():
    assert paper_depth(1024, 1.0, 2) == 10 and paper_depth(1024, 1.0, 1) == 9
    assert paper_depth(1000, 0.5, 3) == 9  # log2(500) = 8.97 rounds to 9
    assert paper_depth(1, 0.01, 2) == 0 and paper_depth(10**12, 1.0, 2) == MAX_PMM_DEPTH
    for n, eps, d in [(5000, 1.0, 2), (10**6, 0.5, 3), (300, 2.0, 1), (10**5, 1.0, 1), (4000, 2.0, 5)]:
        r = bound_depth(n, eps, d)
        b = [pmm_theorem11(n, eps, d, k) for k in range(MAX_PMM_DEPTH + 1)]
        assert b[r] == pytest.approx(min(b))
        for cons in ("least_squares", "proportional", "uniform"):
            got = default_depth(n, eps, d, cons)
            if d == 1:
                assert got == min(r, AUTO_MAX_DEPTH)
            else:
                shift = AUTO_SHIFT[cons].get(d, AUTO_SHIFT[cons][3])
                assert got == min(max(paper_depth(n, eps, d) - shift, 0), AUTO_MAX_DEPTH)
    assert default_depth(5000, 0.95, 2) == 11 and default_depth(10**6, 1.0, 2) == AUTO_MAX_DEPTH == 16
    assert default_depth(5000, 0.95, 2, "proportional") == 9
    # the defaults study: least squares one level deeper than Corollary 12 in d = 5, 6 (4000 * 2 = 2^12.97)
    assert [default_depth(4000, 2.0, d) for d in (3, 4, 5, 6, 7, 64)] == [13, 13, 14, 14, 13, 13]
    rel = pmm(_X(1000), DOM2, epsilon=1.0, depth_rule="paper", n_public=1000, rng=0)
    assert rel.params["depth"] == 10 and rel.params["depth_rule"] == "paper"
    rel = pmm(_X(1000), DOM2, epsilon=1.0, depth=3, rng=0)
    assert rel.params["depth_rule"] == "given"


# ------------------------------------------------------------------------- accuracy (Theorem 11)
def _data(kind, n, d, rng):
    if kind == "uniform":
        return rng.random((n, d))
    if kind == "two_clusters":
        c = np.where(rng.random(n)[:, None] < 0.5, 0.25, 0.75)
        return np.clip(c + 0.06 * rng.standard_normal((n, d)), 0, 1)
    return 0.02 * rng.random((n, d))  # one corner


def _w1_exact(X, Y):
    """Exact W1 (l_inf) between empirical measures; rows of Y may repeat (aggregated as weights)."""
    if X.shape[1] == 1:
        from scipy.stats import wasserstein_distance

        return wasserstein_distance(X[:, 0], Y[:, 0])
    Yu, w = np.unique(Y, axis=0, return_counts=True)
    M = ot.dist(X, Yu, metric="chebyshev")
    return float(ot.emd2(np.full(len(X), 1 / len(X)), w / w.sum(), M, numItermax=10**7))


@pytest.mark.slow
@pytest.mark.parametrize("d", [1, 2, 3])
@pytest.mark.parametrize("n", [500, 2000])
def test_mean_w1_below_theorem11(d, n):
    """Mean exact W1 over 5 seeded runs is below Theorem 11's bound (the paper's printed constant,
    the smaller one) for ε in {0.5, 2} and three data shapes, with the default depth rule and A.4
    noise. Checked for the paper's proportional map (what Theorem 10's proof covers) and, as an
    empirical statement only, for the default least-squares consistency (n = 500: keeps the file fast).
    n = 2000 in d >= 2 uses leaf-centre placement (Algorithm 4 allows any placement in the leaf and
    Theorem 10's step 3 covers it) so that exact POT runs on the aggregated leaf support.

    Why 5 runs suffice (20 before; the exact W1s are most of the cost): over 20 runs per configuration the
    mean W1 was at most 0.21 of the bound (d = 2, n = 500, corner, ε = 0.5, proportional) and the standard
    deviation of one run at most 0.067 of it (d = 1), so the mean of 5 runs has a standard error of at most
    0.03 of the bound: the bound sits more than 25 standard errors above every measured mean, and the check
    fails only when the mechanism's error or the bound really changes (a mean W1 about 5 times the
    present one), as it did with 20 runs."""
    placement = "center" if (n == 2000 and d >= 2) else "uniform"
    worst = 0.0
    for eps in (0.5, 2.0):
        for kind in ("uniform", "two_clusters", "corner"):
            X = _data(kind, n, d, np.random.default_rng(11))
            for consistency in ("proportional", "least_squares") if n == 500 else ("proportional",):
                w, rel = [], None
                for seed in range(5):
                    rel = pmm(X, Domain.unit(d), epsilon=eps, n_public=n, placement=placement,
                              consistency=consistency, rng=seed)
                    w.append(_w1_exact(X, rel.synthetic))
                assert rel.bound == pytest.approx(pmm_theorem11(n, eps, d, rel.params["depth"]))
                # the bound is on the expectation; the s.e. of 5 runs' mean (<= 0.03 of the bound) is far
                # below the margins seen here (the mean is at most about a fifth of the bound: docstring)
                assert np.mean(w) < rel.bound, (kind, eps, consistency, np.mean(w), rel.bound)
                worst = max(worst, np.mean(w) / rel.bound)
    assert worst > 0.01  # the comparison is not vacuous: the bound is within two orders of magnitude


@pytest.mark.parametrize("lower, upper", [([0, 0, 0], [1, 1, 1]), ([-3, 0.1, 5], [1, 0.7, 13]), ([-1, 2, 0], [3, 4, 0.75])])
def test_fast_coding_matches_to_unit_and_count_tree(lower, upper):
    """pmm codes the points one axis at a time in domain units; the cells must be exactly those of
    ``partition.leaf_counts(domain.to_unit(X))``, including points on cell faces and outside the box."""
    from dpsynth_core.mechanisms.pmm import _coded_leaf_counts

    dom = Domain(lower=lower, upper=upper)
    rng = np.random.default_rng(0)
    U = rng.random((5000, 3))
    U[:500] = rng.integers(0, 9, (500, 3)) / 8.0  # exactly on dyadic faces, including 0 and 1
    U[500:600] = rng.uniform(-0.5, 1.5, (100, 3))  # outside: clamped
    X = dom.lower_array + U * dom.widths
    for depth in (0, 1, 5, 9):
        leaves, n_clamped = _coded_leaf_counts(X, dom, depth)
        ref_U, ref_clamped = dom.to_unit(X, return_clamped=True)
        assert np.array_equal(leaves, partition.leaf_counts(ref_U, depth))
        assert n_clamped == ref_clamped
