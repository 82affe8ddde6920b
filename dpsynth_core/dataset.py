"""A dataset with its public domain: the points (in the domain's encoding), the PUBLIC domain, a name and a
description for people, and optional labels.

:class:`Dataset` is what the generators and bundled tables of :mod:`dpsynth_core.datasets` return, what a
table read from a file becomes (:meth:`Dataset.from_frame`), and what the dashboard holds. Its numeric part
(:meth:`Dataset.numeric_part`, :meth:`Dataset.numeric_only`) is what pictures of numeric rows draw.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .domain import Domain
from .validation import check_points, param_error

__all__ = ["Dataset"]


@dataclass(frozen=True)
class Dataset:
    """A dataset with its public domain.

    Parameters
    ----------
    X : ndarray of shape (n, d)
        The points, in the domain's units. Stored read-only (the object is a frozen value). For a domain
        with categorical columns, the domain's encoding: a categorical column holds the index of each
        row's category in the declared list (:meth:`~dpsynth_core.domain.Domain.read`).
    domain : Domain
        The PUBLIC bounds of the data, known without looking at ``X``.
    name : str
        Short identifier (a generator name, ``"digits"``, ...).
    description : str
        One or two sentences for people: what the data is, its parameters, where the bounds come from.
    labels : ndarray of shape (n,), optional
        Class or component labels (for colouring and per-class experiments), or None.
    """

    X: np.ndarray
    domain: Domain
    name: str
    description: str = ""
    labels: np.ndarray | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.domain, Domain):
            raise param_error("Dataset", "domain", "a Domain", self.domain, kind=TypeError)
        X = np.array(check_points(self.X, "X", "Dataset", d=self.domain.d, min_rows=0), dtype=np.float64)
        X.flags.writeable = False
        object.__setattr__(self, "X", X)
        if self.labels is not None:
            labels = np.array(self.labels)
            if labels.shape != (X.shape[0],):
                raise param_error("Dataset", "labels", f"an array of shape ({X.shape[0]},)", labels)
            labels.flags.writeable = False
            object.__setattr__(self, "labels", labels)

    @property
    def n(self) -> int:
        """Number of points."""
        return int(self.X.shape[0])

    @property
    def d(self) -> int:
        """Dimension."""
        return int(self.X.shape[1])

    def to_frame(self):
        """The points as a :class:`pandas.DataFrame` with the domain's column names (a copy); categorical
        columns as pandas categoricals of their declared labels."""
        return self.domain.table(self.X)

    @classmethod
    def from_frame(cls, frame: pd.DataFrame, domain: Domain, name: str, description: str = "",
                   labels: Any = None) -> Dataset:
        """The dataset of a table (a DataFrame with the domain's columns: numbers, and the declared labels of
        its categorical columns, as :func:`~dpsynth_core.tabular.read_table` gives it), encoded by
        :meth:`Domain.read <dpsynth_core.domain.Domain.read>` (a value outside a declared list goes to the
        column's ``other`` category, or is refused with its row)."""
        return cls(domain.read(frame, name="rows", owner="Dataset.from_frame", min_rows=0), domain, name,
                   description, labels)

    def numeric_part(self) -> tuple[np.ndarray, tuple[str, ...]]:
        """The numeric columns (all of them on a numeric domain) and their names."""
        if not self.domain.is_mixed:
            return self.X, tuple(self.domain.names)
        return self.X[:, self.domain.numeric_index], self.domain.numeric_names

    def numeric_only(self) -> Dataset:
        """The dataset of the numeric columns, with their declared bounds (and the same provenance): for a page or
        a mechanism that does not take categorical columns. The name says so (``<name>_numeric``)."""
        dom = self.domain
        X, names = self.numeric_part()
        sub = Domain(dom.lower, dom.upper, names=names, provenance=dom.provenance,
                     integers=[c for c in dom.integers if c in names])
        return Dataset(X, sub, f"{self.name}_numeric", f"The numeric columns of {self.name!r}: {', '.join(names)}. "
                       + self.description, self.labels)
