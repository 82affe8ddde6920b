"""The marginal tables on wide tables: the tree model (dpsynth_core.mechanisms.marginals.tree), the release that
uses it beyond the dense grid's limit, ``auto`` and the CLI on a 20-column mixed table.

Statistical checks use fixed seeds; each states its tolerance and why.
"""

from __future__ import annotations

import itertools
import json
import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpsynth_core import Domain, limits, run
from dpsynth_core.cli import main
from dpsynth_core.defaults import MARGINALS_MAX_JOINT, auto_mechanism
from dpsynth_core.mechanisms.marginals import DENSE_MAX_CELLS, Measurement
from dpsynth_core.mechanisms.marginals.tree import TreeJoint, fit_tree, rake
from dpsynth_core.transport.marginals import sparse_utility_loss

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from benchmarks.bench_marginals_wide import wide_table  # noqa: E402


def _tree_distribution(shape, edges, rng):
    """A random distribution that factorises over ``edges`` (a tree rooted at 0, parents before children), as a
    dense array: the reference the tree model must reproduce."""
    d = len(shape)
    p = rng.dirichlet(np.ones(shape[0]))
    joint = p.reshape([shape[0]] + [1] * (d - 1))
    for u, v in edges:
        cond = rng.dirichlet(np.full(shape[v], 0.5), size=shape[u])  # P(x_v | x_u)
        view = [1] * d
        view[u], view[v] = shape[u], shape[v]
        joint = joint * cond.reshape(view)
    return joint


def _exact_measurements(joint, total):
    d = joint.ndim
    out = []
    for j in range(d):
        m = joint.sum(axis=tuple(a for a in range(d) if a != j)) * total
        out.append(Measurement((j,), m, np.ones_like(m)))
    for i, j in itertools.combinations(range(d), 2):
        m = joint.sum(axis=tuple(a for a in range(d) if a not in (i, j))) * total
        out.append(Measurement((i, j), m, np.ones_like(m)))
    return out


# ------------------------------------------------------------------------------------------ the model
def test_tree_model_recovers_a_tree_distribution_from_exact_tables():
    """Noise-free tables of a distribution that factorises over a tree: the fit finds that tree (the maximum
    spanning tree of the dependence) and every 1- and 2-way marginal, off the tree too, within 1e-6 counts of
    1000: raking's floor puts 1e-9 of the total in every cell of a table (at most 1e-9 x 1000 x 20 cells = 2e-5
    before raking takes most of it back out; 1.6e-7 seen) and stops at 1e-12 of the total."""
    rng = np.random.default_rng(3)
    shape, edges = (3, 4, 2, 5, 3), [(0, 1), (0, 2), (1, 3), (3, 4)]
    joint = _tree_distribution(shape, edges, rng)
    model = fit_tree(shape, _exact_measurements(joint, 1000.0), 1000.0)
    assert sorted(model.edges) == sorted(edges)
    d = len(shape)
    for axes in [(j,) for j in range(d)] + list(itertools.combinations(range(d), 2)):
        ref = joint.sum(axis=tuple(a for a in range(d) if a not in axes)) * 1000.0
        np.testing.assert_allclose(model.marginal(axes), ref, rtol=0, atol=1e-6)


def test_tree_sampling_keeps_every_conditional_count_within_one_row():
    rng = np.random.default_rng(5)
    shape, edges = (4, 3, 5, 2), [(0, 1), (1, 2), (1, 3)]
    joint = _tree_distribution(shape, edges, rng)
    model = fit_tree(shape, _exact_measurements(joint, 500.0), 500.0)
    m = 777
    rows = model.sample(m, np.random.default_rng(0))
    assert rows.shape == (m, 4) and rows.dtype == np.int64
    # the root: largest remainder of m p_root, every count within one row of its share
    assert np.abs(np.bincount(rows[:, 0], minlength=4) - m * model.margins[0]).max() < 1.0
    for u, v in model.edges:
        parent, child = (u, v) if model.parent[v] == u else (v, u)
        cond = model.conditional(parent, child)
        for b in range(shape[parent]):
            sel = rows[:, parent] == b
            got = np.bincount(rows[sel, child], minlength=shape[child])
            assert np.abs(got - sel.sum() * cond[b]).max() < 1.0


def test_raking_matches_both_margins_and_empties_zero_rows():
    table = np.array([[5.0, -2.0, 1.0], [-1.0, -3.0, -0.5], [2.0, 2.0, 2.0]])
    rows, cols = np.array([4.0, 0.0, 6.0]), np.array([3.0, 3.0, 4.0])
    x = rake(table, rows, cols)
    assert (x >= 0).all() and not np.isnan(x).any()
    np.testing.assert_allclose(x.sum(axis=1), rows, atol=1e-9)
    np.testing.assert_allclose(x.sum(axis=0), cols, atol=1e-9)
    assert x[1].sum() == 0.0


# ----------------------------------------------------------------------------------------- releases
def test_wide_release_end_to_end():
    """The 20-column mixed table of the benchmark (smaller n): auto picks the marginal tables, the fit is the
    tree, integer columns are whole, categories the declared ones, the ledger adds up, a certificate is
    published."""
    df, dom = wide_table(2000, seed=1)
    choice = auto_mechanism(dom, epsilon=1.0, delta=1e-5)
    assert choice.mechanism == "marginals" and "tree of 2-way tables" in choice.reason
    for delta in (None, 1e-5):
        rel = run("auto", df, dom, epsilon=1.0, delta=delta, rng=0)
        assert rel.mechanism == "marginals" and rel.params["model"]["kind"] == "tree"
        assert len(rel.params["model"]["edges"]) == dom.d - 1
        assert len(rel.params["pairs"]) == dom.d * (dom.d - 1) // 2  # every pair measured: the certificate's
        syn = rel.synthetic
        assert list(syn.columns) == list(dom.names)
        for c in dom.integers:
            v = syn[c].to_numpy(dtype=float)
            assert np.array_equal(v, np.rint(v)) and v.min() >= 0 and v.max() <= 20
        for c, cats in dom.categories.items():
            assert set(syn[c].unique()) <= set(cats)
        assert math.isclose(sum(e.epsilon for e in rel.ledger.entries), rel.epsilon, rel_tol=1e-12)
        assert math.isfinite(rel.bound) and rel.bound > 0
        assert "tree of 19 pairs" in rel.notes[1]  # notes[0] is auto's choice


def test_wide_certificate_holds_on_every_pair():
    """The certificate of a tree release bounds the exact largest 2-way W1 over ALL pairs (those off the tree
    too), with no slack, on three fixed seeds. A 9-column numeric table with an explicit 8 x 8 coarse grid (8^9
    cells, above the dense limit) keeps the exact W1 cheap."""
    rng = np.random.default_rng(0)
    z = rng.normal(size=(400, 3))
    X = np.clip(0.5 + 0.15 * (z[:, np.arange(9) % 3] + 0.5 * rng.normal(size=(400, 9))), 0, 1)
    dom = Domain.unit(9)
    for seed in (0, 1, 2):
        rel = run("marginals", X, dom, epsilon=2.0, fine=8, coarse=8, rng=seed)
        assert rel.params["model"]["kind"] == "tree"
        assert sparse_utility_loss(X, rel.synthetic, 2, domain=dom) <= rel.bound


def test_wide_plan_reads_no_bound_off_the_data():
    """Two tables with different supports and the same public inputs get the same bins, pairs and model."""
    df, dom = wide_table(1500, seed=2)
    other = df.copy()
    for c in ("x0", "x1", "x2"):
        other[c] = 90.0 + 10.0 * (other[c] / 100.0)  # all in [90, 100]
    other["c0"] = dom.categories["c0"][0]  # one category only
    a = run("marginals", df, dom, epsilon=1.0, n_public=1500, rng=0).params
    b = run("marginals", other, dom, epsilon=1.0, n_public=1500, rng=0).params
    for key in ("columns", "pairs", "fine", "coarse", "joint_cells", "noise_scales"):
        assert a[key] == b[key]
    assert a["model"]["kind"] == b["model"]["kind"] == "tree"
    assert a["model"]["edges"] != b["model"]["edges"]  # the tree is chosen from the (noisy) tables


def test_wide_limits_checked_before_the_rows_are_read(monkeypatch):
    """The 2-way tables' Monte Carlo draws (draws x cells) are checked against ``limits.max_cells`` before any
    count is taken: the counting function is replaced by one that fails, and the limit's error comes first."""
    from dpsynth_core.mechanisms.marginals import mechanism

    def no_read(*_):
        raise AssertionError("the rows were read before the limit was checked")

    monkeypatch.setattr(mechanism, "marginal_counts", no_read)
    df, dom = wide_table(300)
    with limits.override(max_cells=10_000), pytest.raises(ValueError, match="max_cells"):
        run("marginals", df, dom, epsilon=1.0, n_public=300, rng=0)


def test_dense_model_refused_above_its_limit_and_tree_asked_for_small_tables():
    df, dom = wide_table(300)
    with pytest.raises(ValueError, match=f"at most {DENSE_MAX_CELLS:,} cells"):
        run("marginals", df, dom, epsilon=1.0, model="dense", rng=0)
    X = np.random.default_rng(0).random((300, 4))
    rel = run("marginals", X, Domain.unit(4), epsilon=1.0, model="tree", rng=0)
    assert rel.params["model"] == {"kind": "tree", "edges": rel.params["model"]["edges"],
                                   "cells": rel.params["model"]["cells"], "rule": "given"}
    assert "model" not in run("marginals", X, Domain.unit(4), epsilon=1.0, rng=0).params  # dense: record unchanged


def test_wide_dask_equals_numpy():
    """The counts merge by addition: a Dask DataFrame in 5 partitions gives the NumPy release bit for bit."""
    import dask
    import dask.dataframe as dd

    df, dom = wide_table(1200, seed=4)
    ref = run("marginals", df, dom, epsilon=1.0, delta=1e-5, rng=3)
    with dask.config.set(scheduler="synchronous"):
        got = run("marginals", dd.from_pandas(df, npartitions=5), dom, epsilon=1.0, delta=1e-5, rng=3)
    assert json.dumps(got.public_json()) == json.dumps(ref.public_json())


def test_auto_rule_keeps_wide_tables_on_the_marginal_tables():
    d = int(np.log2(MARGINALS_MAX_JOINT)) + 1  # 2^d joint cells even at 2 bins per axis: above the dense cap
    wide = auto_mechanism(Domain.unit(d), epsilon=1.0)
    assert wide.mechanism == "marginals" and f"{2**d:,} cells" in wide.reason and "tree" in wide.reason
    assert "tree" not in auto_mechanism(Domain.unit(d - 1), epsilon=1.0).reason
    # and the release agrees with the reason, on both sides of the cap (the rule's coarse bins, n public)
    X = np.random.default_rng(0).random((200, d))
    assert run("marginals", X, Domain.unit(d), epsilon=1.0, n_public=200, rng=0).params["model"]["kind"] == "tree"
    assert "model" not in run("marginals", X[:, :-1], Domain.unit(d - 1), epsilon=1.0, n_public=200, rng=0).params


def test_cli_auto_on_a_20_column_mixed_csv(tmp_path):
    df, dom = wide_table(1500, seed=6)
    src = tmp_path / "wide.csv"
    df.to_csv(src, index=False)
    numeric = [c for c in dom.names if c not in dom.categories]
    bounds = ",".join("0:100" if c.startswith("x") else "0:20" for c in numeric)
    cats = ";".join(f"{c}={'|'.join(v)}" for c, v in dom.categories.items())
    out, report = tmp_path / "out.csv", tmp_path / "report.json"
    code = main(["synth", "-m", "auto", "-e", "1", "--delta", "1e-5", "-b", bounds, "--categories", cats,
                 "--integers", ",".join(dom.integers), str(src), "-o", str(out), "--report", str(report), "-q"])
    assert code == 0
    rep = json.loads(report.read_text())
    assert rep["mechanism"] == "marginals" and rep["params"]["model"]["kind"] == "tree"
    assert "tree of 2-way tables" in rep["params"]["auto"]["reason"]
    syn = pd.read_csv(out)
    assert set(syn.columns) == set(dom.names) and len(syn) > 0
    for c in dom.integers:
        assert np.array_equal(syn[c], np.rint(syn[c]))
    for c, v in dom.categories.items():
        assert set(syn[c].astype(str)) <= set(v)


def test_tree_model_interface_matches_the_dense_one():
    model = TreeJoint(margins=[np.array([0.25, 0.75]), np.array([0.5, 0.5])], edges=[(0, 1)],
                      tables=[np.array([[0.125, 0.125], [0.375, 0.375]])], order=np.array([0, 1]),
                      parent=np.array([-1, 0]), total=8.0)
    np.testing.assert_allclose(model.marginal((1,)), [4.0, 4.0])
    np.testing.assert_allclose(model.marginal((0, 1)), [[1.0, 1.0], [3.0, 3.0]])
    rows = model.sample(8, np.random.default_rng(0))
    assert np.bincount(rows[:, 0] * 2 + rows[:, 1], minlength=4).tolist() == [1, 1, 3, 3]
