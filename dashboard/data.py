"""Datasets as the dashboard holds them (no Streamlit here).

A dataset is the library's :class:`~dpsynth_core.datasets.Dataset` (points, PUBLIC domain, name,
description, labels) plus a :class:`Source` saying how to rebuild it from a shareable URL. Uploads
are read with the library's CSV rules (:func:`dpsynth_core.tabular.read_table`: separator and
decimal comma detected, bad cells reported by row and column, text columns named, missing values
refused or dropped on request) under the dashboard's caps, and get the bounds the user TYPED.
Nothing here derives bounds, scales or grids from the private data; an uploaded file stays in
memory (never written to disk or logged).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpsynth_core import datasets as lib
from dpsynth_core.datasets import Dataset
from dpsynth_core.domain import Domain
from dpsynth_core.tabular import Table, read_table
from dpsynth_core.validation import check_float

__all__ = ["Source", "MAX_UPLOAD_ROWS", "MAX_UPLOAD_COLUMNS", "default", "generate", "real", "real_names",
           "by_name", "read_upload", "upload_dataset"]

#: Upload caps: a browser demo, not a data warehouse (the command line reads larger files).
MAX_UPLOAD_ROWS = 200_000
MAX_UPLOAD_COLUMNS = 64


@dataclass(frozen=True)
class Source:
    """Where a dataset came from: ``kind`` in {"default", "generator", "real", "upload"}."""

    kind: str
    name: str
    params: Mapping[str, Any] = field(default_factory=dict)

    @property
    def shareable(self) -> bool:
        """Whether a URL can name it (an upload cannot: the file stays with its owner)."""
        return self.kind in ("default", "real") or (self.kind == "generator" and not self.params)


def default() -> tuple[Dataset, Source]:
    """The embedded default: two Gaussian clusters in the unit square, n = 5000."""
    ds = lib.default_dataset()
    return ds, Source("default", ds.name)


def generate(name: str, params: Mapping[str, Any]) -> Dataset:
    """Generator ``name`` of :data:`dpsynth_core.datasets.GENERATORS` with ``params`` (validated by it)."""
    if name not in lib.GENERATORS:
        raise ValueError(f"There is no data generator called {name!r}; choose one of {', '.join(lib.GENERATORS)}.")
    return lib.GENERATORS[name][0](**dict(params))


def real_names() -> list[str]:
    return list(lib.REAL_DATASETS)


def real(name: str) -> Dataset:
    """A bundled real dataset with its documented public bounds."""
    if name not in lib.REAL_DATASETS:
        raise ValueError(f"There is no bundled dataset called {name!r}; choose one of {', '.join(real_names())}.")
    return lib.REAL_DATASETS[name]()


def by_name(name: str) -> tuple[Dataset, Source]:
    """The dataset a URL names: a bundled real dataset, a generator with its defaults, or the default."""
    if name in lib.REAL_DATASETS:
        return real(name), Source("real", name)
    if name in lib.GENERATORS:
        return generate(name, {p.name: p.default for p in lib.GENERATORS[name][1]}), Source("generator", name)
    ds, src = default()
    if name == ds.name:
        return ds, src
    raise ValueError(f"The link names a dataset {name!r} that does not exist: use a generator "
                     f"({', '.join(lib.GENERATORS)}), a bundled dataset ({', '.join(real_names())}) or {ds.name!r}.")


def read_upload(data: bytes, filename: str, *, missing: str = "error") -> Table:
    """Read an uploaded CSV (bytes) with the library's rules and the dashboard's caps."""
    if not isinstance(data, (bytes, bytearray)):
        raise TypeError(f"The uploaded file {filename!r} must arrive as bytes. Got {type(data).__name__}.")
    return read_table(bytes(data), missing=missing, max_rows=MAX_UPLOAD_ROWS, max_cols=MAX_UPLOAD_COLUMNS,
                      what=f"the uploaded file {filename!r}")


def upload_dataset(frame, columns: Sequence[str], lower: Sequence[Any], upper: Sequence[Any],
                   filename: str = "upload.csv") -> tuple[Dataset, int]:
    """The chosen columns of an uploaded frame with the public bounds the user typed.

    Returns the dataset and the number of rows outside the bounds (every mechanism clamps them; an
    owner-side count, shown to the owner, never exported).
    """
    if len(columns) == 0:
        raise ValueError("Choose at least one column.")
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(f"The uploaded file has no column {missing[0]!r}.")
    lo = [check_float(v, f"lower bound of {c!r}", "the Data page") for c, v in zip(columns, lower, strict=True)]
    hi = [check_float(v, f"upper bound of {c!r}", "the Data page") for c, v in zip(columns, upper, strict=True)]
    bad = [c for c, a, b in zip(columns, lo, hi, strict=True) if not a < b]
    if bad:
        raise ValueError(f"The lower bound of {bad[0]!r} must be below its upper bound: change one of them.")
    dom = Domain(lo, hi, names=tuple(str(c) for c in columns))
    X = frame.loc[:, list(columns)].to_numpy(dtype=float)
    outside = int((~dom.contains(X)).sum())
    name = filename.rsplit(".", 1)[0] or "upload"
    return Dataset(X, dom, name, f"Uploaded file {filename!r}: columns {', '.join(map(str, columns))}."), outside


def preview_rows(ds: Dataset, k: int = 20) -> np.ndarray:
    """The first ``k`` rows, for the owner's view of the data."""
    return np.asarray(ds.X[:k])
