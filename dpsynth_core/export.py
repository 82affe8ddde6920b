"""What may leave the machine: the public report and the synthetic CSV of a release.

Every export of the command line and the dashboard goes through this module. A report is
:meth:`Release.public` and nothing else: its keys are checked against :data:`PUBLIC_FIELDS`, so a
value computed from the private data without noise (a true count, an exact W1 to the data) cannot
slip into a download, and anything but a :class:`Release` (an owner view such as the comparison of
:func:`dpsynth_core.evaluate.report`) is refused. The synthetic CSV lists the rows in a uniformly
random order (post-processing: a permutation of a DP output is DP) so that no one reads structure
into the order in which a mechanism happens to emit them (cells, leaves, iterations).

Randomness: a release made with a pinned seed is reproducible and *not* private (whoever knows the
seed re-draws the noise); its report says so in ``label`` and ``randomness``. See
docs/privacy-model.md, §8 "Randomness and exports".
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pandas as pd

from .mechanisms.base import Release, to_jsonable
from .tabular import csv_bytes
from .validation import check_rng

__all__ = ["PUBLIC_FIELDS", "DATA_INDEPENDENT_FIELDS", "public_report", "report_json", "synthetic_csv"]

#: The allow-list: the only top-level keys an exported report may contain.
PUBLIC_FIELDS = frozenset({
    "mechanism", "is_dp", "epsilon", "delta", "neighbours", "privacy", "ledger", "params", "bound", "bound_kind",
    "bound_type", "domain", "n_synthetic", "notes", "randomness", "label", "synthetic",
})
#: Of those, the keys fixed by public inputs alone (the mechanism, the budget, the relation, the public
#: domain): with the randomness held fixed they are identical on neighbouring datasets. The others
#: (synthetic data, sizes, resolved parameters, ledger wording, bound) are functions of DP outputs.
DATA_INDEPENDENT_FIELDS = frozenset({"mechanism", "is_dp", "epsilon", "delta", "neighbours", "privacy", "domain",
                                     "bound_kind", "bound_type", "label"})


def _require_release(rel: Any, owner: str) -> None:
    """Only a release leaves the machine: an owner view (a release's ``owner``, the comparison of
    :func:`dpsynth_core.evaluate.report`) is computed from the private data without noise."""
    if not isinstance(rel, Release):
        raise TypeError(f"The 'rel' parameter of {owner} must be a Release (what a mechanism returns). Got a "
                        f"{type(rel).__name__}: only a release's public view is exported; owner views (Release.owner, "
                        f"dpsynth_core.evaluate.Report) are computed from the private data without noise and are "
                        f"never part of an export.")


def public_report(rel: Release, *, include_synthetic: bool = False) -> dict:
    """The JSON-ready report of a release: :meth:`Release.public`, checked against the allow-list."""
    _require_release(rel, "public_report")
    out = to_jsonable(rel.public(include_synthetic=include_synthetic))
    extra = set(out) - PUBLIC_FIELDS
    if extra:  # a programming error: a field was added to Release.public without review
        raise AssertionError(f"Release.public() has keys outside the export allow-list: {sorted(extra)}")
    return out


def report_json(rel: Release, *, include_synthetic: bool = False) -> str:
    """:func:`public_report` as indented JSON text."""
    _require_release(rel, "report_json")
    return json.dumps(public_report(rel, include_synthetic=include_synthetic), indent=2) + "\n"


def synthetic_csv(rel: Release, *, rng: Any = None) -> bytes:
    """The synthetic rows as UTF-8 CSV (header = the domain's column names), in random order;
    categorical columns as their declared labels (:func:`~dpsynth_core.tabular.csv_bytes`, which the
    project's readers read back exactly).

    ``rng=None`` draws the permutation from fresh entropy; the command line passes the pinned seed
    when the user gave one, so that a reproducible run writes the same file.
    """
    _require_release(rel, "synthetic_csv")
    gen = check_rng(rng, "synthetic_csv")
    if isinstance(rel.synthetic, pd.DataFrame):  # categorical columns: written as their declared text
        return csv_bytes(rel.synthetic.iloc[gen.permutation(len(rel.synthetic))], list(rel.domain.names))
    Y = np.asarray(rel.synthetic, dtype=np.float64)
    return csv_bytes(Y[gen.permutation(Y.shape[0])], list(rel.domain.names))
