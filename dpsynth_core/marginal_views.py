"""What a release of the marginal tables (``marginals``) shows, table by table, and what its low-order marginals
keep and lose against a full-dimensional mechanism: the mathematics behind the dashboard's lesson page.

* :func:`one_way_view` -- one column's fine 1-way table: its bins in the column's units, the noisy counts (DP),
  the fine masses the release drew its rows from (DP), the counts of the released rows (DP) and the true
  counts (OWNER VIEW);
* :func:`two_way_view` -- one pair's coarse 2-way table: the noisy counts (DP), the fitted model's table of
  the pair (DP), the released rows' table (DP) and the true table (OWNER VIEW);
* :func:`keep_and_lose` -- several releases of the same data compared where marginal tables and a full-dimensional
  tree differ: W1, the mean 1-way, 2-way and 3-way marginal errors and one pair's association (OWNER VIEW: real
  rows without noise; never exported).

Every DP array is the release's trace (:class:`~dpsynth_core.mechanisms.marginals.MarginalsTrace`) or a function
of its synthetic rows; the released rows are counted with the mechanism's own statistic
(:func:`~dpsynth_core.mechanisms.marginals.marginal_counts`) on the release's layout, so the tables line up cell
for cell. docs/marginals.md has the mechanism.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from . import evaluate
from .domain import Domain
from .mechanisms.marginals import Column, Layout, MarginalsOwner, MarginalsTrace, marginal_counts
from .mechanisms.release import Release
from .validation import check_int, param_error

__all__ = ["OneWay", "TwoWay", "KeepLose", "one_way_view", "two_way_view", "pair_names", "keep_and_lose",
           "three_way_errors", "MAX_TRIPLES"]

_OWNER = "marginal_views"
#: Most triples of columns :func:`three_way_errors` compares (the first in column order): C(12, 3) = 220.
MAX_TRIPLES = 220


@dataclass(frozen=True)
class OneWay:
    """One column's fine 1-way table (counts per bin). ``noisy``, ``fitted`` (the fine masses the rows were drawn
    from) and ``synthetic`` (the released rows' counts) are DP; ``true`` is the OWNER VIEW."""

    column: str
    kind: str
    labels: tuple[str, ...]
    noisy: np.ndarray
    fitted: np.ndarray
    synthetic: np.ndarray
    true: np.ndarray


@dataclass(frozen=True)
class TwoWay:
    """One pair's coarse 2-way table (counts, rows: the first column's bins). ``noisy``, ``fitted`` (the fitted
    model's table of the pair -- the dense joint summed onto it, or the tree's --, in records of the fitted size) and ``synthetic`` are DP; ``true`` is the OWNER VIEW."""

    columns: tuple[str, str]
    row_labels: tuple[str, ...]
    col_labels: tuple[str, ...]
    noisy: np.ndarray
    fitted: np.ndarray
    synthetic: np.ndarray
    true: np.ndarray


@dataclass(frozen=True)
class KeepLose:
    """Releases of the same data side by side (:func:`keep_and_lose`; OWNER VIEW). ``table`` has one row per
    release: ``release``, ``w1``, ``one_way``, ``two_way``, ``three_way`` (mean total-variation errors; NaN where
    the table has too few columns) and ``association`` (of ``pair`` in the release; the real value is
    ``real_association``, of kind ``association_kind``: "pearson", "cramers_v" or "correlation_ratio")."""

    table: pd.DataFrame
    pair: tuple[str, str]
    association_kind: str
    real_association: float | None
    triples: int
    label: str = evaluate.OWNER_LABEL


def _trace(rel: Release) -> tuple[MarginalsTrace, MarginalsOwner]:
    if rel.mechanism != "marginals":
        raise param_error(_OWNER, "rel", "a release of the marginal tables ('marginals')", rel.mechanism)
    return MarginalsTrace.of(rel), MarginalsOwner.of(rel)


def _number(v: float) -> str:
    return f"{v:.3g}"


def _labels(col: Column, domain: Domain, *, coarse: bool) -> tuple[str, ...]:
    """The bins of a column in its own units: "[lo, hi)" for a numeric column (the last closed), a whole value
    or "a–b" for an integer one, the declared category for a categorical one."""
    if col.kind == "categorical":
        return tuple(str(c) for c in domain.categories[col.name])
    lo, hi = col.coarse_extent() if coarse else col.fine_extent()
    width = col.upper - col.lower
    if col.kind == "integer":
        a = np.rint(col.lower + lo * width).astype(int)
        b = np.rint(col.lower + hi * width).astype(int)
        return tuple(str(x) if x == y else f"{x}–{y}" for x, y in zip(a, b, strict=True))
    a, b = col.lower + lo * width, col.lower + hi * width
    last = len(a) - 1
    return tuple(f"[{_number(x)}, {_number(y)}{']' if i == last else ')'}"
                 for i, (x, y) in enumerate(zip(a, b, strict=True)))


def _released_counts(rel: Release, layout: Layout) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """The released rows counted by the mechanism's own statistic on its layout (post-processing)."""
    dom = rel.domain
    U = dom.to_unit(dom.read(rel.synthetic, name="synthetic", owner=_OWNER, min_rows=0))
    return marginal_counts(U, layout)


def pair_names(rel: Release) -> list[tuple[str, str]]:
    """The pairs of columns whose 2-way tables the release measured, in its order (``two_way_view``'s index)."""
    tr, _ = _trace(rel)
    return [(tr.layout.columns[i].name, tr.layout.columns[j].name) for i, j in tr.layout.pairs]


def one_way_view(rel: Release, j: int) -> OneWay:
    """Column ``j``'s fine 1-way table of a ``marginals`` release (module docstring)."""
    tr, own = _trace(rel)
    j = check_int(j, "j", _OWNER, low=0, high=tr.layout.d - 1)
    col = tr.layout.columns[j]
    one, _ = _released_counts(rel, tr.layout)
    return OneWay(col.name, col.kind, _labels(col, rel.domain, coarse=False), np.asarray(tr.noisy_one[j], float),
                  np.asarray(tr.fine_masses[j], float), one[j].astype(float), np.asarray(own.true_one[j], float))


def two_way_view(rel: Release, p: int) -> TwoWay:
    """The ``p``-th pair's coarse 2-way table of a ``marginals`` release (module docstring; the pairs in the order
    of :func:`pair_names`)."""
    tr, own = _trace(rel)
    layout = tr.layout
    if not layout.pairs:
        raise param_error(_OWNER, "rel", "a release of at least two columns (one column has no 2-way table)",
                          f"{layout.d} column")
    p = check_int(p, "p", _OWNER, low=0, high=len(layout.pairs) - 1)
    i, j = layout.pairs[p]
    shape = (layout.columns[i].coarse, layout.columns[j].coarse)
    if tr.model is not None:  # the dense joint or the tree of a wide table: its table of the pair, in records
        fitted = np.asarray(tr.model.marginal((i, j)), float)
    else:
        others = tuple(a for a in range(layout.d) if a not in (i, j))
        fitted = np.asarray(tr.joint, float).sum(axis=others) * float(rel.params["n_hat"])
    _, two = _released_counts(rel, layout)
    return TwoWay((layout.columns[i].name, layout.columns[j].name),
                  _labels(layout.columns[i], rel.domain, coarse=True), _labels(layout.columns[j], rel.domain, coarse=True),
                  np.asarray(tr.noisy_two[p], float).reshape(shape), fitted.reshape(shape),
                  two[p].reshape(shape).astype(float), np.asarray(own.true_two[p], float).reshape(shape))


def three_way_errors(real: Any, synthetic: Any, domain: Domain, *, bins: int = 4,
                     max_triples: int = MAX_TRIPLES) -> np.ndarray:
    """The 3-way marginal errors (OWNER VIEW): for each triple of columns (the first ``max_triples`` in column
    order), the total variation distance between the real and the synthetic shares of its cells -- ``bins``
    equal bins of a numeric column's declared range, a categorical column's declared categories. Marginal tables
    of one and two columns do not measure these cells. An empty array below three columns."""
    bins = check_int(bins, "bins", _OWNER, low=1, high=evaluate.MAX_PAIR_BINS)
    max_triples = check_int(max_triples, "max_triples", _OWNER, low=1, high=10_000)
    codes = [_codes(domain.to_unit(domain.read(t, name=nm, owner=_OWNER)), domain, bins)
             for t, nm in ((real, "real"), (synthetic, "synthetic"))]
    sizes = [len(domain.categories[c]) if c in domain.categories else bins for c in domain.names]
    out = []
    for t in itertools.islice(itertools.combinations(range(domain.d), 3), max_triples):
        shape = tuple(sizes[a] for a in t)
        if math.prod(shape) > evaluate.MAX_TABLE_CELLS:
            continue
        shares = [np.bincount(np.ravel_multi_index(tuple(c[:, a] for a in t), shape), minlength=math.prod(shape))
                  / max(len(c), 1) for c in codes]
        out.append(0.5 * float(np.abs(shares[0] - shares[1]).sum()))
    return np.asarray(out)


def _codes(U: np.ndarray, domain: Domain, bins: int) -> np.ndarray:
    """Cell of every unit coordinate: one of ``bins`` equal bins (numeric), the category code (categorical)."""
    out = np.empty(U.shape, dtype=np.int64)
    for a, name in enumerate(domain.names):
        out[:, a] = (U[:, a] if name in domain.categories else np.clip(U[:, a] * bins, 0, bins - 1)).astype(np.int64)
    return out


def keep_and_lose(real: Any, synthetic: Mapping[str, Any], domain: Domain, *, w1: Mapping[str, float | None],
                  pair: tuple[str, str] | None = None, bins: int = 20, pair_bins: int = 10,
                  triple_bins: int = 4) -> KeepLose:
    """What each release keeps of the real table where marginal tables and a full-dimensional mechanism differ
    (OWNER VIEW: computed from the real rows without noise; never exported).

    For each release (``synthetic``: name -> rows in the domain's units, a DataFrame on a mixed domain): its W1
    to the data as given in ``w1`` (unit-cube units; None: not known), the mean 1-way and 2-way marginal errors
    of :func:`dpsynth_core.evaluate.report` (``bins`` and ``pair_bins`` per numeric axis), the mean 3-way error
    of :func:`three_way_errors` (``triple_bins`` per numeric axis; NaN below three columns) and the association
    of ``pair`` (default: the first two columns) in the report's kind (Pearson, Cramér's V, correlation ratio).
    The marginal tables measure the 1-way and 2-way cells and fit the rest; a tree (PMM) measures the whole
    space at once, coarsely: the 3-way errors show what tables of one and two columns cannot see.
    """
    if not synthetic:
        raise param_error(_OWNER, "synthetic", "at least one release (name -> synthetic rows)", "none")
    if domain.d < 2:
        raise param_error(_OWNER, "domain", "a table of at least two columns (a pair is compared)", domain.d)
    pair = tuple(pair) if pair is not None else tuple(domain.names[:2])
    if len(pair) != 2 or any(c not in domain.names for c in pair) or pair[0] == pair[1]:
        raise param_error(_OWNER, "pair", f"two different columns of the table ({', '.join(domain.names)})", pair)
    pair = tuple(sorted(pair, key=domain.names.index))
    rows, real_assoc, kind = [], None, ""
    for name, Y in synthetic.items():
        rep = evaluate.report(real, Y, domain, w1=None, bins=bins, pair_bins=pair_bins)
        pr = rep.pair(*pair)
        real_assoc, kind = pr.real_association, pr.association
        tri = three_way_errors(real, Y, domain, bins=triple_bins)
        rows.append({"release": name, "w1": np.nan if w1.get(name) is None else float(w1[name]),
                     "one_way": rep.marginal_errors.one_way_mean,
                     "two_way": rep.marginal_errors.two_way_mean,
                     "three_way": float(tri.mean()) if tri.size else np.nan,
                     "association": np.nan if pr.synthetic_association is None else pr.synthetic_association})
    triples = min(math.comb(domain.d, 3), MAX_TRIPLES)
    return KeepLose(pd.DataFrame(rows), pair, kind, real_assoc, triples)
