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
           "by_name", "read_upload", "upload_dataset", "MAX_CLAMPED_SHARE"]

#: Upload caps: a browser demo, not a data warehouse (the command line reads larger files).
MAX_UPLOAD_ROWS = 200_000
MAX_UPLOAD_COLUMNS = 64


@dataclass(frozen=True)
class Source:
    """Where a dataset came from: ``kind`` in {"default", "generator", "real", "upload"}."""

    kind: str
    name: str
    params: Mapping[str, Any] = field(default_factory=dict)
    #: True when the bounds were read off the data ("use the data's range"): then no release of this
    #: dataset is differentially private (the bounds themselves leak the extremes).
    bounds_from_data: bool = False

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


#: Share of rows outside the typed bounds above which an upload is refused: such bounds are a typo or
#: the wrong unit, and clamping most of the data would silently replace it by the box's edges.
MAX_CLAMPED_SHARE = 0.5


def upload_dataset(frame, columns: Sequence[str], lower: Sequence[Any], upper: Sequence[Any],
                   filename: str = "upload.csv", *, from_data: bool = False) -> tuple[Dataset, int]:
    """The chosen columns of an uploaded frame with the public bounds the user typed.

    ``from_data=True`` takes the columns' own minimum and maximum instead (exploration only: the
    caller marks every release of the dataset as not private). Refused, with the column to fix, when
    a bound is missing or reversed, or when more than :data:`MAX_CLAMPED_SHARE` of the rows fall
    outside the bounds. Returns the dataset and the number of rows outside the bounds (every mechanism
    clamps them; an owner-side count, shown to the owner, never exported).
    """
    if len(columns) == 0:
        raise ValueError("Choose at least one column.")
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(f"The uploaded file has no column {missing[0]!r}.")
    X = frame.loc[:, list(columns)].to_numpy(dtype=float)
    if from_data:
        lo, hi = X.min(axis=0), X.max(axis=0)
        hi = np.where(hi > lo, hi, lo + 1.0)  # a constant column still gets a box
        lower, upper = lo.tolist(), hi.tolist()
    for c, a, b in zip(columns, lower, upper, strict=True):
        if a is None or b is None:
            raise ValueError(f"Type the lower and the upper bound of {c!r}: the range its values can take in "
                             "principle (for example an age in [0, 120]), not the range of this file.")
    lo = [check_float(v, f"lower bound of {c!r}", "the Data page") for c, v in zip(columns, lower, strict=True)]
    hi = [check_float(v, f"upper bound of {c!r}", "the Data page") for c, v in zip(columns, upper, strict=True)]
    bad = [c for c, a, b in zip(columns, lo, hi, strict=True) if not a < b]
    if bad:
        raise ValueError(f"The lower bound of {bad[0]!r} must be below its upper bound: change one of them.")
    dom = Domain(lo, hi, names=tuple(str(c) for c in columns))
    inside = dom.contains(X)
    outside = int((~inside).sum())
    if outside > MAX_CLAMPED_SHARE * X.shape[0]:
        per_col = (X < dom.lower_array) | (X > dom.upper_array)
        worst = str(columns[int(np.argmax(per_col.sum(axis=0)))])
        raise ValueError(f"{outside} of {X.shape[0]} rows are outside the bounds you typed (most of them in "
                         f"{worst!r}): every mechanism would move them onto the box's edge. Check the bounds and "
                         "the unit of that column.")
    name = filename.rsplit(".", 1)[0] or "upload"
    note = " Bounds taken from the data: NOT private (exploration only)." if from_data else ""
    return Dataset(X, dom, name, f"Uploaded file {filename!r}: columns {', '.join(map(str, columns))}.{note}"), outside
