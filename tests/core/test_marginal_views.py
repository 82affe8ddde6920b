"""The marginal tables' release shown table by table, and the comparison of releases (dpsynth_core.marginal_views)."""

from __future__ import annotations

import numpy as np
import pytest

from dpsynth_core import Domain, run
from dpsynth_core.datasets import clinic
from dpsynth_core.marginal_views import (
    keep_and_lose,
    one_way_view,
    pair_names,
    three_way_errors,
    two_way_view,
)
from dpsynth_core.mechanisms.marginals import MarginalsTrace


@pytest.fixture(scope="module")
def mixed():
    ds = clinic(600)
    return ds, run("marginals", ds.X, ds.domain, epsilon=1.0, rng=3)


def test_the_views_are_the_trace_and_the_release_counted_in_its_bins(mixed):
    ds, rel = mixed
    tr = MarginalsTrace.of(rel)
    assert pair_names(rel) == [(ds.domain.names[i], ds.domain.names[j]) for i, j in tr.layout.pairs]
    for j, col in enumerate(tr.layout.columns):
        v = one_way_view(rel, j)
        assert v.column == col.name and len(v.labels) == col.fine
        np.testing.assert_array_equal(v.noisy, tr.noisy_one[j])  # the release's own noisy table, as released
        assert v.true.sum() == ds.n and v.synthetic.sum() == len(rel.synthetic)
        if col.kind == "categorical":
            assert v.labels == tuple(ds.domain.categories[col.name])
    age = one_way_view(rel, ds.domain.names.index("age"))
    assert age.labels[0].startswith("[18, ") and age.labels[-1].endswith(", 100]")  # the declared bounds, closed last
    for p, (a, b) in enumerate(pair_names(rel)):
        t = two_way_view(rel, p)
        assert t.columns == (a, b) and t.noisy.shape == t.true.shape == t.fitted.shape == t.synthetic.shape
        assert t.noisy.shape == (len(t.row_labels), len(t.col_labels))
        np.testing.assert_array_equal(t.noisy, tr.noisy_two[p])
        assert t.true.sum() == ds.n and t.synthetic.sum() == len(rel.synthetic)
        # the fitted joint on the pair is a distribution scaled to the fitted size: no negative cell
        assert t.fitted.min() >= 0 and t.fitted.sum() == pytest.approx(rel.params["n_hat"], rel=1e-9)


def test_with_two_columns_the_pair_is_the_fitted_joint_and_the_rows_follow_it():
    """Two columns: the 2-way table is the whole coarse joint, and the released rows fill each of its cells within
    one row of the fitted share (largest remainder); the fine 1-way bins of a coarse bin add up to it."""
    rng = np.random.default_rng(1)
    X = np.clip(rng.normal([0.3, 0.6], 0.1, size=(3000, 2)), 0, 1)
    dom = Domain([0, 0], [1, 1], names=("a", "b"))
    rel = run("marginals", X, dom, epsilon=1.0, rng=0)
    tr = MarginalsTrace.of(rel)
    t = two_way_view(rel, 0)
    assert t.fitted.size == tr.layout.joint_cells
    share = t.fitted / rel.params["n_hat"] * len(rel.synthetic)
    assert np.abs(t.synthetic - share).max() < 1.0
    a = one_way_view(rel, 0)
    np.testing.assert_array_equal(np.bincount(tr.layout.columns[0].to_coarse, weights=a.synthetic), t.synthetic.sum(1))


def test_the_tree_model_of_a_wide_table_gives_every_pair_its_table(mixed):
    """The tree model (``model="tree"``, as a wide table gets) has no dense joint: a pair's fitted table is the
    tree's (off the tree, the product of the conditionals along the path), a distribution of the fitted size."""
    ds, _ = mixed
    rel = run("marginals", ds.X, ds.domain, epsilon=1.0, rng=3, model="tree")
    assert rel.params["model"]["kind"] == "tree"
    for p in range(len(pair_names(rel))):
        t = two_way_view(rel, p)
        assert t.fitted.shape == t.noisy.shape and t.fitted.min() >= 0
        assert t.fitted.sum() == pytest.approx(MarginalsTrace.of(rel).model.total, rel=1e-9)


def test_views_refuse_other_releases_and_bad_indices(mixed):
    ds, rel = mixed
    other = run("pmm", ds.X, ds.domain, epsilon=1.0, rng=0)
    with pytest.raises(ValueError, match="marginal tables"):
        one_way_view(other, 0)
    with pytest.raises(ValueError, match="'j'"):
        one_way_view(rel, ds.d)
    with pytest.raises(ValueError, match="'p'"):
        two_way_view(rel, -1)


def test_three_way_errors_see_what_the_pairs_cannot():
    """Three columns with every pair independent but the triple dependent (c = a XOR b): a table that keeps the
    pairs and breaks the triple has 3-way error 1/2 and 2-way errors near 0 (n = 4000, fixed seed: the
    sampling error of a share is about 0.01; the tolerance 0.03 is three of them)."""
    rng = np.random.default_rng(0)
    a, b = rng.integers(0, 2, 4000), rng.integers(0, 2, 4000)
    real = np.c_[a, b, a ^ b].astype(float)
    fake = np.c_[a, b, 1 - (a ^ b)].astype(float)  # same pairs (all independent), the opposite triple
    dom = Domain([0, 0, 0], [1, 1, 1], names=("a", "b", "c"))
    assert three_way_errors(real, real, dom, bins=2).tolist() == [0.0]
    assert three_way_errors(real, fake, dom, bins=2)[0] == pytest.approx(1.0)  # disjoint supports
    kl = keep_and_lose(real, {"same pairs": fake, "itself": real}, dom, w1={"itself": 0.0}, pair=("c", "a"),
                       bins=2, pair_bins=2, triple_bins=2)
    t = kl.table.set_index("release")
    assert kl.pair == ("a", "c") and kl.triples == 1 and kl.association_kind == "pearson"
    assert t.at["same pairs", "two_way"] < 0.03 and t.at["same pairs", "three_way"] == pytest.approx(1.0)
    assert t.at["itself", "three_way"] == 0.0 and t.at["itself", "w1"] == 0.0 and np.isnan(t.at["same pairs", "w1"])
    assert three_way_errors(real[:, :2], fake[:, :2], Domain([0, 0], [1, 1])).size == 0  # two columns: no triple


def test_keep_and_lose_checks_its_inputs(mixed):
    ds, rel = mixed
    with pytest.raises(ValueError, match="'pair'"):
        keep_and_lose(ds.X, {"m": rel.synthetic}, ds.domain, w1={}, pair=("age", "age"))
    with pytest.raises(ValueError, match="'synthetic'"):
        keep_and_lose(ds.X, {}, ds.domain, w1={})
