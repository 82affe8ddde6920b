"""Data beyond memory (issue #20): the certified sparse-marginal release on Dask input.

sparse_marginals reads the private rows only once, through the integer counts of all discretised
s-marginals (``sparse_marginals.marginal_counts`` summed by ``Rows.sum``); the client divides them by
the public n (correctly rounded per cell) and everything after that (noise, Step 3, certificate) is
post-processing of those counts and fresh noise. So with the same rng the release from a Dask array or
DataFrame, in any number of partitions, must equal the NumPy release bit for bit: these tests compare
the whole public report (JSON text), not a tolerance.
"""

from __future__ import annotations

import importlib

import numpy as np
import pytest
from dask_support import PARTITIONS, dask_array, dask_frame, public_json

from dpsynth_core import Domain
from dpsynth_core.mechanisms import run
from dpsynth_core.rows import merge

pytestmark = pytest.mark.usefixtures("dask_synchronous")

SM = importlib.import_module("dpsynth_core.mechanisms.sparse_marginals")
NAME = "sparse_marginals"
NAMES = ("age", "income", "hours", "score")


def _domain(d):
    return Domain(lower=[0.0, 0.0, 0.0, -1.0][:d], upper=[100.0, 5.0, 60.0, 1.0][:d], names=NAMES[:d])


def _data(n, d, seed=0):
    """Two clusters, some rows outside the domain (clamped) and some exactly on cell boundaries."""
    rng = np.random.default_rng(seed)
    lab = rng.random(n) < 0.4
    X = np.column_stack([rng.normal(np.where(lab, 30, 60), 18), rng.gamma(np.where(lab, 1.5, 3.0), 0.8),
                         rng.normal(np.where(lab, 20, 45), 12), rng.normal(np.where(lab, -0.3, 0.4), 0.4)])[:, :d]
    X[::17, 0] = 50.0  # the middle of the age axis: a cell boundary for every even k
    return X


def _run(X, d, **kw):
    kw = {"epsilon": 1.0, "public_size": 300, "mc_draws": 50, **kw}
    return run(NAME, X, _domain(d), rng=5, **kw)


def _public(X, d, **kw):
    return public_json(_run(X, d, **kw))


def _frame(X, parts=7):
    return dask_frame(X, NAMES[:X.shape[1]], parts)


CASES = [
    (1, 3, 1000, dict()),  # s = 1, default k
    (2, 4, 2000, dict(epsilon=4.0)),  # s = 2, default k (4 here), U_T consistent certificate
    (2, 3, 1500, dict(k=5, noise="paper", consistency="both", certificate="L_T")),
    (2, 3, 400, dict(k=4, public="grid", snap_public=False, step3="U_T", n_synthetic=250)),
]


@pytest.mark.parametrize("s,d,n,kw", CASES, ids=[f"s={c[0]},d={c[1]},n={c[2]}," + ",".join(f"{k}={v}" for k, v in
                                                                                         c[3].items()) for c in CASES])
def test_dask_release_is_bit_identical(s, d, n, kw):
    X = _data(n, d)
    rel = _run(X, d, s=s, **kw)
    assert rel.owner.n_clamped > 0
    ref = public_json(rel)
    for parts in PARTITIONS:
        assert _public(dask_array(X, parts), d, s=s, **kw) == ref, f"{parts} partitions"
    assert _public(_frame(X), d, s=s, **kw) == ref, "Dask DataFrame"


def test_the_release_depends_on_the_data():
    """Guards the comparison above against a release that ignores X (then any input would agree)."""
    X = _data(600, 3)
    a = _public(dask_array(X, 7), 3, k=4)
    b = _public(dask_array(_data(600, 3, seed=1), 7), 3, k=4)
    assert a != b


def test_owner_trace_with_dask():
    X = _data(700, 4)
    mem, dsk = _run(X, 4, k=4), _run(_frame(X, 5), 4, k=4)
    om, od = mem.owner, dsk.owner
    assert om.n == od.n == 700
    assert om.n_clamped == od.n_clamped > 0
    assert np.array_equal(om.true_marginals, od.true_marginals)
    assert om.true_marginals.sum(axis=1) == pytest.approx(1.0)
    for key in ("noise_lt", "noise_ut", "noise_lt_consistent", "noise_ut_consistent"):  # noise only, no data
        assert getattr(om, key) is not None and getattr(om, key) == getattr(od, key)


def test_one_pass_over_the_data():
    calls = []

    def spy(block):
        if block.size:  # Dask may call it on an empty array to learn the output type
            calls.append(block.shape[0])
        return block

    X = _data(700, 3)
    Xd = dask_array(X, 5).map_blocks(spy, dtype=float)
    out = public_json(_run(Xd, 3, k=4))
    assert len(calls) == 5 and sum(calls) == 700  # n from the chunks, the counts in one pass
    assert out == _public(X, 3, k=4)


def test_nan_in_a_partition_is_refused_like_in_memory():
    X = _data(500, 3)
    X[460, 2] = np.nan
    for Xin in (X, dask_array(X, 7), _frame(X)):
        with pytest.raises(ValueError, match="finite") as info:
            _run(Xin, 3, k=4)
        assert f"'X' parameter of {NAME}" in str(info.value)


@pytest.mark.parametrize("s,k", [(1, 7), (2, 4), (3, 3)])
@pytest.mark.parametrize("order", ["path", "row"])
def test_marginal_counts_are_additive_over_row_splits(s, k, order):
    rng = np.random.default_rng(s * 10 + k)
    U = rng.random((503, 4))
    U[::7, 1] = rng.integers(0, k + 1, U[::7].shape[0]) / k  # exact cell boundaries, including 0 and 1
    U[::11] = U[3]  # duplicates
    whole = SM.marginal_counts(U, s, k, order)
    assert whole.dtype == np.int64 and whole.shape == (len(SM.marginal_subsets(4, s)), k**s)
    assert np.all(whole.sum(axis=1) == U.shape[0])
    for parts in (2, 7, 64, U.shape[0]):
        blocks = [SM.marginal_counts(b, s, k, order) for b in np.array_split(U, parts)]
        total = blocks[0]
        for b in blocks[1:]:
            total = merge(total, b)
        assert np.array_equal(total, whole) and total.dtype == np.int64
    # an empty block (a Dask partition may be empty) contributes zeros
    assert np.array_equal(SM.marginal_counts(U[:0], s, k, order), np.zeros_like(whole))
    # marginal_vector is the same statistic divided by n (uniform weights) or weighted
    assert np.array_equal(SM.marginal_vector(U, s, k, order=order), whole / U.shape[0])
    w = np.full(U.shape[0], 1.0 / U.shape[0])
    assert SM.marginal_vector(U, s, k, w, order=order) == pytest.approx(whole / U.shape[0], abs=1e-15)
