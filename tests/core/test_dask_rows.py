"""Data beyond memory (issue #20): :mod:`dpsynth_core.rows` and the count-based mechanisms on Dask input.

The design claim is exact: a mechanism's private statistic is an integer sum over records, merged
by addition, and noise is added once on the client. So with the same rng a release from a Dask
array or DataFrame, in any number of partitions, equals the NumPy release bit for bit; these tests
compare the whole public report (JSON text), not a tolerance.
"""

from __future__ import annotations

import dask.array as da
import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest
from dask_support import PARTITIONS, dask_array, dask_frame, public_json

from dpsynth_core import Domain, limits
from dpsynth_core.mechanisms import run
from dpsynth_core.rows import Rows, merge

pytestmark = pytest.mark.usefixtures("dask_synchronous")

NAMES = ("age", "income")
DOM = Domain(lower=[0.0, 0.0], upper=[100.0, 5.0], names=NAMES)


def _data(n=2501, seed=0):
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.normal(45, 20, n), rng.gamma(2.0, 1.0, n)])  # some rows outside the box
    return X


def _public(name, X, **kw):
    return public_json(run(name, X, DOM, rng=11, **kw))


CASES = [
    ("pmm", dict(epsilon=1.0)),
    ("pmm", dict(epsilon=0.5, neighbours="replace", consistency="proportional")),
    ("pmm", dict(epsilon=2.0, depth=7, n_public=2501)),
    ("psmm", dict(epsilon=1.0)),
    ("psmm", dict(epsilon=1.0, neighbours="replace", cells=12, projection="clip")),
    ("flat_histogram", dict(epsilon=1.0)),
    ("haar_walk", dict(epsilon=1.0)),
    ("haar_walk", dict(epsilon=1.0, neighbours="replace", path="hilbert", grid=16)),
    ("per_point_laplace", dict(epsilon=3.0)),
]


@pytest.mark.parametrize("name,kw", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_dask_release_is_bit_identical(name, kw):
    X = _data()
    ref = _public(name, X, **kw)
    for parts in PARTITIONS:
        assert _public(name, dask_array(X, parts), **kw) == ref, f"{name}: {parts} partitions"
    frame = dask_frame(X, NAMES)
    assert _public(name, frame, **kw) == ref, f"{name}: Dask DataFrame"


def test_dataframe_with_extra_columns_in_another_order():
    X = _data(800)
    df = pd.DataFrame({"income": X[:, 1], "note": np.arange(800), "age": X[:, 0]})
    ref = _public("pmm", df, epsilon=1.0)
    assert _public("pmm", dd.from_pandas(df, npartitions=5), epsilon=1.0) == ref


def test_owner_diagnostics_match():
    X = _data()
    a = run("pmm", X, DOM, epsilon=1.0, rng=3)
    b = run("pmm", dask_array(X, 7), DOM, epsilon=1.0, rng=3)
    assert a.owner.n == b.owner.n == X.shape[0]
    assert a.owner.n_clamped == b.owner.n_clamped > 0  # the data do leave the box


def test_nan_in_a_partition_is_refused_like_in_memory():
    X = _data(700)
    X[650, 1] = np.nan
    with pytest.raises(ValueError, match="finite") as mem:
        run("psmm", X, DOM, epsilon=1.0, rng=1)
    with pytest.raises(ValueError, match="finite") as dsk:
        run("psmm", dask_array(X, 7), DOM, epsilon=1.0, rng=1)
    assert "'X' parameter of psmm" in str(mem.value) and "'X' parameter of psmm" in str(dsk.value)


def test_missing_column_and_wrong_shape_are_clear():
    df = dd.from_pandas(pd.DataFrame({"age": [1.0, 2.0]}), npartitions=1)
    with pytest.raises(ValueError, match=r"must have the columns \['age', 'income'\]"):
        run("pmm", df, DOM, epsilon=1.0, rng=1)
    with pytest.raises(ValueError, match=r"shape \(n, 2\)"):
        run("pmm", da.zeros((10, 3), chunks=5), DOM, epsilon=1.0, rng=1)


def test_text_column_is_refused():
    df = dd.from_pandas(pd.DataFrame({"age": ["a", "b"], "income": [1.0, 2.0]}), npartitions=1)
    with pytest.raises(TypeError, match="numeric"):
        run("pmm", df, DOM, epsilon=1.0, rng=1)


def test_per_point_laplace_refuses_before_reading_when_output_too_large():
    calls = []

    def spy(block):
        if block.size:  # Dask calls it once on an empty array to learn the output type
            calls.append(1)
        return block

    X = dask_array(_data(900), 3).map_blocks(spy, dtype=float)
    with limits.override(max_synthetic_rows=500):
        with pytest.raises(ValueError, match="at most 500 rows"):
            run("per_point_laplace", X, DOM, epsilon=1.0, rng=1)
    assert calls == []  # the size came from the chunks; no block was computed


def test_a_failing_worker_is_reported_and_nothing_is_released():
    from dpsynth_core.rows import WorkerError

    def boom(block):
        raise OSError("disk went away")

    X = dask_array(_data(900), 3).map_blocks(boom, dtype=float)
    with pytest.raises(WorkerError, match="Nothing was released.*disk went away|disk went away.*Nothing was released"):
        run("pmm", X, DOM, epsilon=1.0, rng=1)


def test_empty_table_is_refused():
    with pytest.raises(ValueError, match="at least 1 row"):
        run("pmm", da.zeros((0, 2), chunks=(1, 2)), DOM, epsilon=1.0, rng=1)


# ----------------------------------------------------------------------------- rows primitives
def test_merge_adds_nested_statistics():
    a = (np.array([1, 2]), 3, {"k": np.array([[1]])})
    b = (np.array([10, 20]), 4, {"k": np.array([[5]])})
    out = merge(a, b)
    assert out[0].tolist() == [11, 22] and out[1] == 7 and out[2]["k"].tolist() == [[6]]


def test_rows_in_memory_reads_u_lazily_and_counts_clamping():
    X = _data(50)
    r = Rows(X, DOM, owner="t")
    assert r._U is None and r.n == 50  # nothing converted until a statistic asks for unit rows
    assert r.n_clamped == Rows(dask_array(X, 4), DOM, owner="t").n_clamped
