"""Data beyond memory (issue #20): Private Evolution on Dask input.

PE reads the private rows only through the nearest-neighbour votes of each iteration, an int64 sum
over records (``dpsynth_core.evolution.nn_votes`` summed by ``Rows.sum``). Each row's vote depends only on the
row and on the candidates, so with the same rng the release from a Dask array or DataFrame, in any
number of partitions, must equal the NumPy release bit for bit: these tests compare the whole public
report (JSON text), not a tolerance.
"""

from __future__ import annotations

import numpy as np
import pytest
from dask_support import PARTITIONS, dask_array, dask_frame, public_json

from dpsynth_core import Domain
from dpsynth_core.evolution import nn_assign, nn_votes
from dpsynth_core.mechanisms import run
from dpsynth_core.rows import merge

pytestmark = pytest.mark.usefixtures("dask_synchronous")

NAMES = ("age", "income")
DOM = Domain(lower=[0.0, 0.0], upper=[100.0, 5.0], names=NAMES)
PE = "private_evolution"


def _data(n=800, seed=0):
    rng = np.random.default_rng(seed)
    return np.column_stack([rng.normal(45, 20, n), rng.gamma(2.0, 1.0, n)])  # some rows outside the box


def _run(X, **kw):
    kw = {"epsilon": 1.0, "delta": 1e-5, **kw}
    return run(PE, X, DOM, rng=11, **kw)


def _public(X, **kw):
    return public_json(_run(X, **kw))


def _frame(X, parts=7):
    return dask_frame(X, NAMES, parts)


CASES = [
    dict(),  # default: add/remove (a noisy size), Gaussian votes, BL projection, refine schedule, histogram release
    dict(schedule="paper", histogram="threshold", release="samples", neighbours="replace"),  # the paper's algorithm
    # laplace_threshold: a budget and a support at which some votes pass the threshold (with the
    # defaults at n = 800 every iteration loses all its votes and the release is S_0)
    dict(histogram="laplace_threshold", epsilon=4.0, iterations=3, n_synthetic=10),
    dict(neighbours="replace"),  # n public: no noisy size
    dict(neighbours="add_remove", histogram="laplace_threshold", n_public=800, epsilon=4.0, iterations=3,
         n_synthetic=10),
    dict(region="ball", metric="l1", iterations=4),
    dict(metric="linf", init="origin", n_synthetic=60),
]


@pytest.mark.parametrize("kw", CASES, ids=[",".join(f"{k}={v}" for k, v in c.items()) or "default" for c in CASES])
def test_dask_release_is_bit_identical(kw):
    X = _data()
    rel = _run(X, track_w1=False, **kw)
    assert all(rel.trace.votes_kept)  # the votes, hence the private data, shape the release
    ref = public_json(rel)
    assert _public(X, **kw) == ref  # the owner-side W1 is not part of the release
    for parts in PARTITIONS:
        assert _public(dask_array(X, parts), **kw) == ref, f"{kw}: {parts} partitions"
    assert _public(_frame(X), **kw) == ref, f"{kw}: Dask DataFrame"


def test_duplicate_rows_and_clamped_rows_give_the_same_release():
    # Integer-valued rows (many exact duplicates) and a third of them clamped onto the boundary.
    rng = np.random.default_rng(4)
    X = np.column_stack([rng.integers(-30, 130, 600), rng.integers(0, 8, 600)]).astype(float)
    rel = _run(X, iterations=5, init="origin")
    assert all(rel.trace.votes_kept)
    ref = public_json(rel)
    for parts in (7, 64):
        assert _public(dask_array(X, parts), iterations=5, init="origin") == ref


def test_votes_are_additive_with_exact_ties():
    # Private points halfway between candidates (exact binary fractions): every vote is a tie, which
    # must go to the smallest index of V in every block, as for all the rows at once.
    g = np.linspace(0.0, 1.0, 5)
    V = np.array([(a, b) for a in g for b in g])
    V = np.concatenate([V[::-1], V[:7]])  # reversed order and exact duplicates
    mid = (g[:-1] + g[1:]) / 2
    U = np.array([(a, b) for a in mid for b in g] + [(a, b) for a in g for b in mid] + [(a, b) for a in mid for b in mid])
    U = np.concatenate([U, U[::3]])
    for metric in ("l2", "l1", "linf"):
        whole = nn_votes(U, V, "box", metric)
        for parts in (2, 7, U.shape[0]):
            blocks = [nn_votes(b, V, "box", metric) for b in np.array_split(U, parts)]
            total = blocks[0]
            for b in blocks[1:]:
                total = merge(total, b)
            assert np.array_equal(total, whole) and total.dtype == np.int64
        # brute force: the smallest index among the minimisers of the float64 distance
        diff = np.abs(U[:, None, :] - V[None, :, :])
        dist = {"l2": np.sqrt((diff**2).sum(-1)), "l1": diff.sum(-1), "linf": diff.max(-1)}[metric]
        brute = np.argmax(dist == dist.min(axis=1, keepdims=True), axis=1)
        assert np.array_equal(nn_assign(U, V, metric), brute)
        assert np.array_equal(whole, np.bincount(brute, minlength=V.shape[0]))


def test_votes_do_not_modify_the_block():
    U = np.random.default_rng(0).random((50, 2))
    before = U.copy()
    nn_votes(U, U[:5] * 0.3, "ball", "l2")
    assert np.array_equal(U, before)


def test_owner_trace_with_dask():
    X = _data()
    mem = _run(X, iterations=3, track_w1=True)
    dsk = _run(dask_array(X, 7), iterations=3, track_w1=True)
    om, od = mem.owner, dsk.owner
    assert om.n == od.n == X.shape[0]
    assert om.n_clamped == od.n_clamped > 0
    for a, b in zip(om.clean_histograms, od.clean_histograms, strict=True):
        assert np.array_equal(a, b) and a.sum() == X.shape[0]
    # the exact W1 needs all the rows at once: computed in memory only, and the trace says why
    assert len(om.w1) == 4 and om.w1_note is None and "exact" in om.w1_method
    assert od.w1 is None and od.w1_method is None and "Dask" in od.w1_note


def test_one_pass_over_the_data_per_iteration():
    calls = []

    def spy(block):
        if block.size:  # Dask may call it on an empty array to learn the output type
            calls.append(block.shape[0])
        return block

    X = _data(700)
    Xd = dask_array(X, 5).map_blocks(spy, dtype=float)
    rel = _run(Xd, iterations=3)
    assert len(calls) == 3 * 5 and sum(calls) == 3 * 700
    assert public_json(rel) == _public(X, iterations=3)


def test_nan_in_a_partition_is_refused_like_in_memory():
    X = _data(700)
    X[650, 1] = np.nan
    with pytest.raises(ValueError, match="finite") as mem:
        _run(X)
    with pytest.raises(ValueError, match="finite") as dsk:
        _run(dask_array(X, 7))
    with pytest.raises(ValueError, match="finite") as frame:
        _run(_frame(X))
    for exc in (mem, dsk, frame):
        assert f"'X' parameter of {PE}" in str(exc.value)


@pytest.mark.parametrize("init", ["private", "interpolate"])
def test_nonprivate_inits_are_refused_for_dask_before_reading(init):
    calls = []

    def spy(block):
        if block.size:
            calls.append(1)
        return block

    X = dask_array(_data(300), 3).map_blocks(spy, dtype=float)
    with pytest.raises(ValueError, match=r"'init' parameter of private_evolution.*Dask"):
        _run(X, init=init, allow_nonprivate_init=True)
    assert calls == []
    # without allow_nonprivate_init the usual refusal comes first
    with pytest.raises(ValueError, match="allow_nonprivate_init=True"):
        _run(X, init=init)
    # in memory the teaching starts still run
    assert not _run(_data(300), init=init, allow_nonprivate_init=True, iterations=2).is_dp
