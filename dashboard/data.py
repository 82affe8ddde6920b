"""Datasets as the dashboard holds them (no Streamlit here): the library's
:class:`~dpsynth_core.dataset.Dataset` (points, PUBLIC domain, name, description, labels) plus a
:class:`Source` saying how to rebuild it from a shareable URL, and the built-in sources (the default data,
the generators, the bundled real and mixed tables). Uploads are :mod:`dashboard.upload`'s.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from dpsynth_core import datasets as lib
from dpsynth_core.dataset import Dataset

__all__ = ["Source", "default", "generate", "real", "real_names", "mixed", "mixed_names", "by_name"]


@dataclass(frozen=True)
class Source:
    """Where a dataset came from: ``kind`` in {"default", "generator", "real", "mixed", "upload"}."""

    kind: str
    name: str
    params: Mapping[str, Any] = field(default_factory=dict)
    #: True when the bounds or categories were read off the data ("use the data's range", "use the values
    #: in this file"): then no release of this dataset is differentially private (the bounds leak the
    #: extremes, the categories the rare values). The dataset's domain says so too (``provenance="data"``).
    bounds_from_data: bool = False

    @property
    def shareable(self) -> bool:
        """Whether a URL can name it (an upload cannot: the file stays with its owner)."""
        return self.kind in ("default", "real", "mixed") or (self.kind == "generator" and not self.params)


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
    return _bundled(lib.REAL_DATASETS, name, "bundled dataset")


def mixed_names() -> list[str]:
    """The bundled tables with categorical columns."""
    return list(lib.MIXED_DATASETS)


def mixed(name: str) -> Dataset:
    """A bundled table with categorical columns, with its declared public domain."""
    return _bundled(lib.MIXED_DATASETS, name, "bundled mixed table")


def _bundled(tables: Mapping[str, Any], name: str, what: str) -> Dataset:
    if name not in tables:
        raise ValueError(f"There is no {what} called {name!r}; choose one of {', '.join(tables)}.")
    return tables[name]()


def by_name(name: str) -> tuple[Dataset, Source]:
    """The dataset a URL names: a bundled dataset (real or mixed), a generator with its defaults, or the default."""
    if name in lib.REAL_DATASETS:
        return real(name), Source("real", name)
    if name in lib.MIXED_DATASETS:
        return mixed(name), Source("mixed", name)
    if name in lib.GENERATORS:
        return generate(name, {p.name: p.default for p in lib.GENERATORS[name][1]}), Source("generator", name)
    ds, src = default()
    if name == ds.name:
        return ds, src
    raise ValueError(f"The link names a dataset {name!r} that does not exist: use a generator "
                     f"({', '.join(lib.GENERATORS)}), a bundled dataset ({', '.join(real_names() + mixed_names())}) or "
                     f"{ds.name!r}.")
