"""What the Dask identity tests share: partitionings of the same rows, and a release's public report
as text (compared exactly: the design says a Dask release equals the NumPy one bit for bit).

Dask is a dev dependency (the ``[dask]`` extra), imported directly: a missing Dask fails the tests
instead of skipping them. The tests run on Dask's synchronous scheduler (fixture
``dask_synchronous`` in ``tests/conftest.py``); ``benchmarks/bench_scale.py`` uses a real cluster.
"""

from __future__ import annotations

import json

import dask.array as da
import dask.dataframe as dd
import pandas as pd

from dpsynth_core.mechanisms.base import to_jsonable

#: the partitionings every identity test compares with the NumPy release
PARTITIONS = (1, 7, 64)


def public_json(rel) -> str:
    """The release's whole public report, as canonical JSON text."""
    return json.dumps(to_jsonable(rel.public()), sort_keys=True)


def dask_array(X, parts: int):
    """X as a Dask array of ``parts`` row blocks (one block across the columns)."""
    return da.from_array(X, chunks=(-(-X.shape[0] // parts), X.shape[1]))


def dask_frame(X, names, parts: int = 7):
    """X as a Dask DataFrame with the given column names, in ``parts`` partitions."""
    return dd.from_pandas(pd.DataFrame(X, columns=list(names)), npartitions=parts)
