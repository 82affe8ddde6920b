"""The grid mechanisms on mixed tables: ``flat_histogram``, ``psmm`` and ``haar_walk`` (docs/mixed-data.md).

* The mixed grid (:mod:`dpsynth_core.mixed_grid`): cell counts against a direct computation, sampling
  in the cell's box and combination, the Gray order of the combinations.
* The mixed metric as a graph (:mod:`dpsynth_core.transport.mixed_cells`): shortest paths against a
  cost matrix built here; the BL projection (sparse graph) against the dense LP of [HVZ23, Algorithm 2]
  on that cost matrix, and the sparse solution's own BL distance in the true metric.
* Each mechanism on a mixed table: categories only from the declared lists, the ledger adds up, the
  notes say how categories were handled; Dask DataFrame input gives the same release; an audit of a
  pair that changes ONE record's category stays within ε; hostile inputs (1,000 categories, a single
  category, unicode, too many combinations) run or are refused clearly.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from mixed_tables import CATS
from mixed_tables import mixed_domain as _dom
from mixed_tables import mixed_table as _table
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import shortest_path

from dpsynth_core import Domain, limits, run
from dpsynth_core.audit import audit, count_shift
from dpsynth_core.grid import cell_centres
from dpsynth_core.haar import haar_analysis, pad_to_power_of_two
from dpsynth_core.mixed_grid import MixedGrid, gray_combinations, mixed_grid_counts
from dpsynth_core.transport import bl_projection
from dpsynth_core.transport.mixed_cells import mixed_grid_graph

GRID_MECHANISMS = ("flat_histogram", "psmm", "haar_walk")


# ------------------------------------------------------------------------ reference metric (built here)
def _cell_cost(k: int, d: int, sizes: tuple, weights: tuple, kind: str = "max") -> np.ndarray:
    """The metric between the cell centres of the mixed grid, built cell pair by cell pair from the
    definition: cell i = (combination i // k^d, numeric cell i % k^d), combination row-major."""
    Z = cell_centres(k, d)
    K, C = k**d, int(np.prod(sizes))
    combos = np.array(np.unravel_index(np.arange(C), sizes)).T  # (C, m), first column most significant
    m = C * K
    out = np.zeros((m, m))
    for i in range(m):
        for j in range(m):
            num = float(np.abs(Z[i % K] - Z[j % K]).max())
            differ = combos[i // K] != combos[j // K]
            cat = max([w for w, dj in zip(weights, differ, strict=True) if dj], default=0.0)
            out[i, j] = max(num, cat) if kind == "max" else num + cat
    return out


def _bl_distance(nu: np.ndarray, tau: np.ndarray, cost: np.ndarray, diam: float) -> float:
    """d_BL(ν, τ) = sup_{|f| <= diam, Lip f <= 1} Σ f (ν - τ) by its dual: a transport of (ν - τ)_+ onto
    (ν - τ)_- where any mass may instead go to (or come from) a dummy at cost diam, solved by POT."""
    import ot

    eta = nu - tau
    pos, neg = np.maximum(eta, 0.0), np.maximum(-eta, 0.0)
    a = np.r_[pos, neg.sum()]
    b = np.r_[neg, pos.sum()]
    M = np.zeros((a.size, b.size))
    M[:-1, :-1] = cost
    M[:-1, -1] = diam
    M[-1, :-1] = diam
    return float(ot.emd2(a, b, M, numItermax=10**8))


def _mixed_w1(A: np.ndarray, B: np.ndarray, dom: Domain) -> float:
    """Exact W1 in the mixed metric between two encoded tables (equal weights), dense POT."""
    import ot
    from scipy.spatial.distance import cdist

    UA, UB = dom.to_unit(A), dom.to_unit(B)
    num = dom.numeric_index
    M = cdist(UA[:, num], UB[:, num], metric="chebyshev")
    for j, w in zip(dom.categorical_index, dom.weights, strict=True):
        M = np.maximum(M, w * (UA[:, j][:, None] != UB[:, j][None, :]))
    return float(ot.emd2(np.full(len(UA), 1 / len(UA)), np.full(len(UB), 1 / len(UB)), M, numItermax=10**8))


# ------------------------------------------------------------------------------------- the mixed grid
def test_mixed_cell_counts_against_a_direct_computation():
    dom = _dom()
    U = dom.to_unit(_table(500, seed=2))
    k = 5
    got = mixed_grid_counts(U, k, dom.numeric_index, dom.categorical_index, dom.category_sizes)
    qa = np.minimum((U[:, 0] * k).astype(int), k - 1)
    qb = np.minimum((U[:, 1] * k).astype(int), k - 1)
    cell = (U[:, 2].astype(int) * 3 + U[:, 3].astype(int)) * k * k + qa * k + qb
    np.testing.assert_array_equal(got, np.bincount(cell, minlength=6 * k * k))
    assert got.sum() == 500 and got.dtype == np.int64


def test_sampling_puts_rows_in_their_cell_and_combination():
    dom = _dom()
    grid = MixedGrid(dom, 3)
    counts = np.zeros(grid.cells, dtype=np.int64)
    counts[[0, 17, 9 * 4 + 5, grid.cells - 1]] = [3, 2, 4, 1]  # combination 0, 1, 4 and 5
    frame = grid.sample(counts, np.random.default_rng(0))
    assert list(frame.columns) == list(dom.names) and len(frame) == 10
    # the sampled rows fall back into exactly these cells (counted by the same code as the private rows)
    back = mixed_grid_counts(dom.to_unit(frame), 3, dom.numeric_index, dom.categorical_index, dom.category_sizes)
    np.testing.assert_array_equal(back, counts)
    assert frame["sex"].tolist()[-1] == "M" and frame["region"].tolist()[-1] == "east"
    assert list(frame["region"].cat.categories) == CATS["region"]


@pytest.mark.parametrize("sizes, weights", [((2, 3), (1.0, 1.0)), ((3, 2, 4), (0.5, 2.0, 1.0)), ((5,), (1.0,)),
                                            ((1, 3), (1.0, 1.0))])
def test_gray_order_visits_every_combination_changing_one_column(sizes, weights):
    order, changed = gray_combinations(sizes, weights)
    C = int(np.prod(sizes))
    assert sorted(order.tolist()) == list(range(C))
    digits = np.array(np.unravel_index(order, sizes)).T
    steps = np.diff(digits, axis=0) != 0
    assert (steps.sum(axis=1) == 1).all()
    np.testing.assert_array_equal(np.argmax(steps, axis=1), changed)
    # the heaviest column changes least often: (c_j - 1) times when it is the most significant digit
    heaviest = int(np.argmax(weights))
    assert int((changed == heaviest).sum()) == sizes[heaviest] - 1


# ------------------------------------------------------------------------- the mixed metric as a graph
@pytest.mark.parametrize("k, d, sizes, weights, kind", [
    (3, 2, (2, 3), (1.0, 1.0), "max"),      # unit weights: one hub
    (4, 1, (3, 2, 2), (2.0, 1.5, 1.5), "max"),  # heavy weights: a tree of two levels
    (2, 2, (3,), (0.5,), "max"),            # 0.5 >= (k-1)/k = 0.5: still exact
    (3, 2, (2, 3), (0.5, 1.0), "sum"),      # a light column: l_inf + W
    (5, 1, (2, 2), (0.3, 3.0), "sum"),
])
def test_graph_path_metric_is_the_mixed_metric(k, d, sizes, weights, kind):
    g = mixed_grid_graph(k, d, sizes, weights)
    assert g.kind == kind
    N = g.cells + g.extra
    A = coo_matrix((g.cost, (g.src, g.dst)), shape=(N, N)).tocsr()
    D = shortest_path(A, directed=True)[:g.cells, :g.cells]
    np.testing.assert_allclose(D, _cell_cost(k, d, sizes, weights, kind), rtol=0, atol=1e-12)


@pytest.mark.parametrize("k, d, sizes, weights", [
    (3, 2, (2, 3), (1.0, 1.0)),
    (4, 1, (3, 2, 2), (2.0, 1.5, 1.5)),
    (2, 3, (2,), (1.0,)),
    (5, 1, (4,), (0.8,)),  # 0.8 = (k-1)/k: exact
])
def test_bl_projection_on_the_mixed_grid_equals_the_dense_lp(k, d, sizes, weights):
    """The sparse projection (graph of the mixed metric) against Algorithm 2's LP on the cost matrix built
    here: equal optimal values (1e-9: both solvers are exact, up to floating point), and the sparse
    solution's own BL distance to ν in the true metric is that optimum (τ need not be unique)."""
    rng = np.random.default_rng(k * 10 + d)
    m = int(np.prod(sizes)) * k**d
    cost = _cell_cost(k, d, sizes, weights)
    diam = max(1.0, max(weights))
    for trial in range(4):
        nu = rng.multinomial(150, rng.dirichlet(np.ones(m) * 0.7)) / 150 + rng.laplace(scale=0.015, size=m)
        if trial == 3:
            nu *= 1.3  # a total far from 1
        sparse = bl_projection(nu, grid_shape=(k,) * d, categories=sizes, weights=weights)
        dense = bl_projection(nu, cost=cost, diam=diam, method="dense")
        assert sparse.details["mixed_metric"] == "max" and sparse.metric == "mixed"
        assert sparse.value == pytest.approx(dense.value, abs=1e-9)
        assert _bl_distance(nu, sparse.tau, cost, diam) == pytest.approx(dense.value, abs=1e-9)
        assert sparse.tau.min() >= 0 and sparse.tau.sum() == pytest.approx(1.0)


def test_light_weights_project_exactly_in_the_sum_metric_and_say_so():
    k, d, sizes, weights = 3, 2, (2, 3), (0.5, 1.0)
    rng = np.random.default_rng(4)
    m = 6 * 9
    nu = rng.dirichlet(np.ones(m)) + rng.laplace(scale=0.01, size=m)
    sparse = bl_projection(nu, grid_shape=(k, k), categories=sizes, weights=weights)
    assert sparse.details["mixed_metric"] == "sum"
    dense_sum = bl_projection(nu, cost=_cell_cost(k, d, sizes, weights, "sum"), diam=2.0, method="dense")
    assert sparse.value == pytest.approx(dense_sum.value, abs=1e-9)
    # the mixed-metric LP (categories with method="dense") is the exact reference for the true metric
    dense_max = bl_projection(nu, grid_shape=(k, k), categories=sizes, weights=weights, method="dense")
    assert dense_max.value == pytest.approx(
        bl_projection(nu, cost=_cell_cost(k, d, sizes, weights), diam=1.0, method="dense").value, abs=1e-9)
    assert _bl_distance(nu, sparse.tau, _cell_cost(k, d, sizes, weights), 1.0) >= dense_max.value - 1e-9


@pytest.mark.parametrize("kwargs, match", [
    (dict(categories=(2, 3)), "a grid with 54 / 6 cells per combination"),
    (dict(categories=(2, 2), metric="l1"), "'linf' with categories"),
    (dict(categories=(2, 2), weights=(1.0,)), "a sequence of 2 positive floats"),
    (dict(categories=(2, 2), weights=(1.0, -1.0)), "positive finite floats"),
])
def test_bl_projection_mixed_arguments_are_checked(kwargs, match):
    with pytest.raises((ValueError, TypeError), match=match):
        bl_projection(np.ones(54) / 54, grid_shape=(2, 2), **kwargs)


# ---------------------------------------------------------------------------- the mechanisms, mixed
CASES = [
    ("flat_histogram", {}),
    ("psmm", {}),
    ("psmm", {"projection": "clip"}),
    ("haar_walk", {}),
    ("haar_walk", {"path": "hilbert"}),
    ("haar_walk", {"path": "mst", "grid": 3}),
]


@pytest.mark.parametrize("neighbours", ["add_remove", "replace"])
@pytest.mark.parametrize("name, kwargs", CASES)
def test_grid_mechanism_on_a_mixed_table(name, kwargs, neighbours):
    dom, df = _dom(), _table()
    rel = run(name, df, dom, epsilon=1.0, neighbours=neighbours, rng=5, **kwargs)
    syn = rel.synthetic
    assert isinstance(syn, pd.DataFrame) and list(syn.columns) == list(dom.names)
    for col, labels in CATS.items():
        assert set(syn[col].astype(str)) <= set(labels) and list(syn[col].cat.categories) == labels
    assert syn["age"].between(18, 90).all() and syn["bmi"].between(15, 45).all()
    assert rel.ledger.epsilon == pytest.approx(1.0) and rel.epsilon == 1.0
    assert any("6 category combinations" in e.step for e in rel.ledger.entries)
    assert any(n.startswith("Categories: each of the 6 combinations") for n in rel.notes)
    assert rel.params["combinations"] == 6 and rel.params["category_sizes"] == [2, 3]
    assert len(syn) == rel.params["n_synthetic"]
    # the category shares are close to the data's at ε = 1, n = 2000: a share is a sum of ~100-300 noisy
    # cells (scale <= 2: sd <= 40 records, 0.02 of n) plus the projection's moves; 0.08 leaves a margin
    # and still fails a broken category mapping (a swapped column moves a share by 0.2 or more)
    for col in CATS:
        real = df[col].value_counts(normalize=True)
        got = syn[col].astype(str).value_counts(normalize=True)
        assert (real - got.reindex(real.index, fill_value=0)).abs().max() < 0.08, (col, got)
    public = json.loads(rel.public_json(include_synthetic=True))
    assert public["domain"]["categories"] == CATS and public["synthetic"][0][2] in ("F", "M")


def test_psmm_mixed_notes_the_metric_of_its_projection():
    df = _table(800)
    heavy = run("psmm", df, _dom(weights={"region": 2.0}), epsilon=1.0, rng=1)
    assert heavy.params["mixed_metric"] == "max" and any("exact bounded-Lipschitz" in n for n in heavy.notes)
    light = run("psmm", df, _dom(weights={"sex": 0.3, "region": 0.3}), epsilon=1.0, rng=1)
    assert light.params["mixed_metric"] == "sum"
    assert any("below (k-1)/k" in n and "l_inf + W" in n for n in light.notes)
    # the bound uses the diameter of the metric the projection is exact in: 2 (heavy) and 1.3 (light)
    assert "diameter 2" in " ".join(heavy.notes) and "diameter 1.3" in " ".join(light.notes)
    assert 0 < heavy.bound and 0 < light.bound


def test_mixed_default_grid_uses_the_size_per_combination():
    """The default grid is the numeric rule at n̂/C per combination: with a public n the same as the numeric
    mechanism's grid at n/C on the numeric columns alone (public inputs only)."""
    df, dom = _table(6000), _dom()
    num_dom = Domain(lower=[18, 15], upper=[90, 45], names=["age", "bmi"])
    for name, key in (("flat_histogram", "bins"), ("psmm", "cells"), ("haar_walk", "grid")):
        mixed = run(name, df, dom, epsilon=1.0, n_public=6000, rng=0)
        numeric = run(name, df[["age", "bmi"]].iloc[:1000], num_dom, epsilon=1.0, n_public=1000, rng=0)
        assert mixed.params[key] == numeric.params[key], name


@pytest.mark.parametrize("name", GRID_MECHANISMS)
def test_mixed_dask_dataframe_gives_the_same_release(name):
    import dask.dataframe as dd

    dom, df = _dom(), _table(3000, seed=9)
    ref = run(name, df, dom, epsilon=1.0, rng=4)
    got = run(name, dd.from_pandas(df, npartitions=7), dom, epsilon=1.0, rng=4)
    pd.testing.assert_frame_equal(ref.synthetic, got.synthetic)
    assert ref.public_json() == got.public_json()


def test_mixed_releases_beat_a_release_that_ignores_the_data():
    """Exact W1 in the mixed metric (dense POT on the cost matrix built here): psmm and flat_histogram at
    ε = 1, n = 1500 are far closer to the data than uniform rows over the domain with uniform categories
    (W1 about 0.6 here); half of that is a loose margin, and a release that lost the link between the
    categories and the numeric columns (age by sex) fails it only partly, so the test also compares the
    mean age per sex (±8 years: the sexes differ by 20)."""
    dom, df = _dom(), _table(1500, seed=3)
    E = dom.read(df)
    rng = np.random.default_rng(0)
    U = np.column_stack([rng.random((1500, 2)), rng.integers(0, 2, 1500), rng.integers(0, 3, 1500)])
    uniform = _mixed_w1(E, dom.read(dom.from_unit(U)), dom)
    for name in ("psmm", "flat_histogram"):
        rel = run(name, df, dom, epsilon=1.0, rng=1)
        assert _mixed_w1(E, dom.read(rel.synthetic), dom) < 0.5 * uniform, name
        means = rel.synthetic.groupby("sex", observed=True)["age"].mean()
        assert abs(means["F"] - 40) < 8 and abs(means["M"] - 60) < 8, (name, means)


# ------------------------------------------------------------------------------------------ privacy
def _pair(n: int = 60, seed: int = 11) -> tuple[Domain, np.ndarray, np.ndarray]:
    """Encoded D and D' (replace): record 0's region changes, nothing else."""
    dom = _dom()
    E = dom.read(_table(n, seed=seed))
    E2 = E.copy()
    E2[0, 3] = (E[0, 3] + 1) % 3
    return dom, E, E2


def _cell(dom: Domain, row: np.ndarray, k: int) -> int:
    u = dom.to_unit(row[None])[0]
    qa, qb = (min(int(u[i] * k), k - 1) for i in (0, 1))
    return int((u[2] * 3 + u[3]) * k * k + qa * k + qb)


@pytest.mark.parametrize("name, kwargs", [("flat_histogram", dict(bins=2)),
                                          ("psmm", dict(cells=2, projection="clip"))])
def test_audit_changing_one_records_category_stays_within_epsilon(name, kwargs):
    """Replace neighbours: D' changes record 0's region. The record leaves one cell and enters another;
    each noisy count has scale Δ/ε = 2/ε, so the privacy-loss variable is count_shift on the two cells with
    weight 1/scale each (the Neyman-Pearson optimal statistic). At α = 0.05 with fixed seeds ε̂ <= ε must
    hold. (PSMM's projection is post-processing of the counts the statistic reads; 'clip' is faster.)
    Power at 500 trials (validity does not depend on the number): the same audit of either mechanism
    calibrated for 2ε (its noise scale halved, as a sensitivity of 1 for a category change would do) gives
    ε̂ of 1.49, 1.55 and 1.68 at audit seeds 3, 103 and 203, so that bug fails this test."""
    dom, E, E2 = _pair()
    eps, k = 1.0, 2
    old, new = _cell(dom, E[0], k), _cell(dom, E2[0], k)
    assert old != new
    base = mixed_grid_counts(dom.to_unit(E), k, dom.numeric_index, dom.categorical_index, dom.category_sizes)
    probe = run(name, E, dom, epsilon=eps, neighbours="replace", rng=0, **kwargs)
    scale = probe.params["noise_scale"]
    assert scale == pytest.approx(2.0 / eps)
    stat = count_shift("noisy_counts", [new, old], [base[new], base[old]], [1, -1], [1 / scale, 1 / scale])

    def mech(X, rng):
        return run(name, X, dom, epsilon=eps, neighbours="replace", rng=rng, **kwargs)

    res = audit(mech, E, E2, statistic=stat, trials=500, epsilon=eps, rng=3)
    assert np.unique(np.r_[res.samples_D, res.samples_D_prime]).size > 1
    assert res.epsilon_lower <= eps, res.summary()


def test_haar_walk_audit_changing_one_records_category_stays_within_epsilon():
    """Replace neighbours: D' changes record 0's region. The noisy path counts are c + [Φη] with
    discrete-Laplace noise on the integer Haar coefficients M^{-1}c, independent across coefficients; the
    change moves some coefficients by δ_l (±1 or ±2). The statistic is the privacy-loss variable of those
    coefficients, :math:`s = \\sum_l |z_l| - |z_l - \\delta_l|` with z the noisy coefficients minus D's
    (the Neyman-Pearson optimal test, as marginal_shift in tests/core/test_audit.py).

    One numeric cell per combination (grid 1): the path is the 6 combinations in Gray order (F,north),
    (F,south), (F,east), (M,east), (M,south), (M,north), padded to 8. Record 0 is made (M, east) and moves
    to (M, south): positions 3 -> 4 cross the top split, so every level's coefficient moves and the moved
    coefficients add up to the whole l1 sensitivity 2K (the worst pair: the loss is the declared ε).

    Power at 1000 trials: the same audit of the walk calibrated for 3ε gives ε̂ of 1.47, 1.38 and 1.42 at
    audit seeds 3, 103 and 203, so a bug that triples the loss fails this test. A 2ε calibration spreads
    too little over the six moved coefficients for a test-sized audit (0.86 to 0.92 at the 1500 trials
    used before); the walk's noise calibration is checked on its own, with a broken variant, in
    tests/core/test_haar_walk.py (test_empirical_privacy_of_the_release)."""
    dom, E, E2 = _pair()
    E[0, 2:] = [1, 2]
    E2[0, 2:] = [1, 1]
    eps, k = 1.0, 1
    probe = run("haar_walk", E, dom, epsilon=eps, neighbours="replace", grid=k, rng=0)
    order = np.asarray(probe.trace.path_order)

    def path_counts(X):
        U = dom.to_unit(X)
        return mixed_grid_counts(U, k, dom.numeric_index, dom.categorical_index, dom.category_sizes)[order]

    base = haar_analysis(pad_to_power_of_two(path_counts(E))[0])
    diff = haar_analysis(pad_to_power_of_two(path_counts(E2))[0]) - base
    idx = np.flatnonzero(diff)
    assert np.abs(diff).sum() == 2 * probe.params["levels_K"] == 6

    def stat(release):
        coef = haar_analysis(pad_to_power_of_two(np.asarray(release.trace.noisy_counts, dtype=float))[0])
        z = coef[idx] - base[idx]
        return float(np.sum(np.abs(z) - np.abs(z - diff[idx])))

    # The statistic reads the noisy counts only; the projection onto probability measures is post-processing
    # drawn after them, so projection="clip" releases the same noisy counts as the default isotonic projection
    # (checked here on two seeds) at about half the cost of a run, and the audit sees the same samples.
    for seed in (0, 1):
        same = [run("haar_walk", E, dom, epsilon=eps, neighbours="replace", grid=k, rng=seed, **extra).trace.noisy_counts
                for extra in ({}, {"projection": "clip"})]
        np.testing.assert_array_equal(*same)

    def mech(X, rng):
        return run("haar_walk", X, dom, epsilon=eps, neighbours="replace", grid=k, projection="clip", rng=rng)

    res = audit(mech, E, E2, statistic=stat, trials=1000, epsilon=eps, rng=5)
    assert np.unique(np.r_[res.samples_D, res.samples_D_prime]).size > 1
    assert res.epsilon_lower <= eps, res.summary()


def test_haar_walk_mixed_path_is_a_one_lipschitz_folding():
    """The positions grow by the mixed distance of every step (so the line-to-space map is 1-Lipschitz) and
    the path length is C × the numeric length + the category jumps."""
    dom = _dom(weights={"region": 0.5})
    rel = run("haar_walk", _table(500), dom, epsilon=1.0, grid=3, rng=0)
    tr = rel.trace
    order, pos = np.asarray(tr.path_order), np.asarray(tr.positions)
    assert sorted(order.tolist()) == list(range(6 * 9))
    cost = _cell_cost(3, 2, (2, 3), (1.0, 0.5))
    np.testing.assert_allclose(np.diff(pos), cost[order[:-1], order[1:]], rtol=0, atol=1e-12)
    path = rel.params["path"]
    # sex (weight 1) changes once, region (0.5) four times: 6 × 8/3 + 1 + 4 × 0.5
    assert path["length"] == pytest.approx(6 * 8 / 3 + 1 + 2.0) == pos[-1]
    assert rel.params["bound_terms"]["path_length"] == pytest.approx(path["length"])


# ------------------------------------------------------------------------------------ hostile inputs
@pytest.mark.parametrize("name", GRID_MECHANISMS)
def test_a_thousand_categories_and_a_single_one(name):
    labels = [f"c{i}" for i in range(1000)]
    dom = Domain(lower=[0], upper=[1], names=["x"], categories={"big": labels, "one": ["only"]})
    rng = np.random.default_rng(1)
    df = pd.DataFrame({"x": rng.random(300), "big": rng.choice(labels[:50], 300), "one": "only"})
    rel = run(name, df, dom, epsilon=1.0, rng=2)
    assert set(rel.synthetic["big"].astype(str)) <= set(labels)
    assert set(rel.synthetic["one"].astype(str)) == {"only"}
    assert rel.params["combinations"] == 1000 and rel.ledger.epsilon == pytest.approx(1.0)


@pytest.mark.parametrize("name", GRID_MECHANISMS)
def test_too_many_combinations_are_refused_clearly(name):
    labels = [f"c{i}" for i in range(1000)]
    dom = Domain(lower=[0], upper=[1], names=["x"], categories={"a": labels, "b": labels, "c": labels[:10]})
    df = pd.DataFrame({"x": [0.5, 0.2], "a": ["c1", "c2"], "b": ["c3", "c4"], "c": ["c0", "c1"]})
    with pytest.raises(ValueError, match=r"^The 'domain' parameter of " + name + r" must have at most \d+ "
                       r"combinations of categories .*declare fewer categories, merge rare ones into an 'other' "
                       r"category, or use pmm.*Got 1000 × 1000 × 10 = 10000000 combinations"):
        run(name, df, dom, epsilon=1.0, rng=0)


def test_grid_params_and_limits_count_the_combinations():
    dom, df = _dom(), _table(100)
    with pytest.raises(ValueError, match=r"'cells' parameter of psmm must be such that combinations × cells\^d "
                                         r"<= 65536 with projection='bl'. Got '6 combinations × 120\^2 = 86400'"):
        run("psmm", df, dom, epsilon=1.0, cells=120)
    with pytest.raises(ValueError, match=r"'bins' parameter of flat_histogram must be at most 2\^22 cells "
                                         r"\(combinations × bins\^d\). Got '6 combinations × 900\^2'"):
        run("flat_histogram", df, dom, epsilon=1.0, bins=900)
    with pytest.raises(ValueError, match=r"'grid' parameter of haar_walk must be such that 6 combinations × "
                                         r"grid\^d <= 2\^22 cells"):
        run("haar_walk", df, dom, epsilon=1.0, grid=900)
    with limits.override(max_cells=100):
        with pytest.raises(ValueError, match=r"'bins' parameter of flat_histogram must give at most 100 grid cells "
                                             r"\(dpsynth_core.limits max_cells\).*Got 6 combinations × 5\^2 = 150"):
            run("flat_histogram", df, dom, epsilon=1.0, bins=5)
        with pytest.raises(ValueError, match=r"^The 'domain' parameter of psmm must give at most 100 cells \(every "
                                             r"combination of categories is at least one\) \(dpsynth_core.limits "
                                             r"max_cells\); declare fewer categories.*or raise the limit.*Got 101 = "
                                             r"101 combinations"):
            run("psmm", df, Domain(lower=[0], upper=[1], names=["x"], categories={"a": [str(i) for i in range(101)]}),
                epsilon=1.0)


@pytest.mark.parametrize("name", GRID_MECHANISMS)
def test_unicode_names_and_categories(name):
    dom = Domain(lower=[0], upper=[10], names=["größe"], categories={"région": ["北", "南", "Ωmega"]})
    rng = np.random.default_rng(3)
    df = pd.DataFrame({"größe": rng.random(400) * 10, "région": rng.choice(["北", "南", "Ωmega"], 400)})
    rel = run(name, df, dom, epsilon=2.0, rng=1)
    assert set(rel.synthetic["région"].astype(str)) <= {"北", "南", "Ωmega"}
    assert json.loads(rel.public_json(include_synthetic=True))["synthetic"][0][1] in ("北", "南", "Ωmega")
