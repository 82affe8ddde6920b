"""What a release preserves: real and synthetic data compared column by column and pair by pair.

:func:`report` computes the comparison users of every synthetic-data tool end up writing by hand,
for numeric and mixed domains alike, and puts next to each statistic the ceiling Wasserstein-1
guarantees for it (docs/evaluate.md):

* **columns** -- a numeric column's histogram on the public grid (the domain's bounds cut into
  ``bins`` equal bins, never the data's min/max), its mean, standard deviation and quantiles; a
  categorical column's shares of its DECLARED categories (zeros included); real, synthetic and their
  differences;
* **pairs** -- Pearson's correlation (numeric x numeric), Cramér's V and the contingency table
  (categorical x categorical), the correlation ratio and the grouped means (numeric x categorical),
  and the 2-way table of every pair;
* **marginal errors** -- the total variation distance between the real and synthetic 1-way and
  2-way histograms on the public cells (defined in :func:`report`);
* **downstream** -- train on synthetic, test on real (TSTR) for a ``target`` column, next to train on
  real and a constant baseline (scikit-learn, an optional dependency imported only then);
* **guarantees** -- for every statistic W1 controls, the measured difference and its ceiling: by the
  Kantorovich–Rubinstein duality [Vil09] every statistic that is L-Lipschitz for the domain's metric
  differs by at most L·W1 between the real and the synthetic data. A measured difference above its
  ceiling is a contradiction: the W1 given is not the W1 of these two tables, or there is a bug.

OWNER VIEW. The report is computed from the private data without noise: it is NOT differentially
private. It is for the data owner's eyes. The type says so (:attr:`Report.label`), it has no
``public()`` view, and :mod:`dpsynth_core.export` refuses it.

Every size the report allocates (columns, pairs, bins, table cells, rows of a model fit) is checked
against the caps below before anything is built.

Definitions
-----------
**Marginal errors.** For a column, let :math:`p` and :math:`q` be the real and synthetic shares of
its cells -- a numeric column's ``bins`` equal bins of ``[lower, upper]`` (the last one closed),
a categorical column's declared categories. Its **1-way marginal error** is the total variation
distance :math:`\\mathrm{TV}(p, q) = \\tfrac12 \\sum_c |p_c - q_c| \\in [0, 1]`. For a pair of
columns the cells are the products of their cells (``pair_bins`` bins per numeric axis) and its
**2-way marginal error** is the TV between the two 2-way tables. A numeric TV grows with the
number of bins (at one point per bin it measures the sampling noise): compare TVs at the same
``bins``.

**Associations.** Pearson's correlation of two numeric columns; Cramér's V of two categorical
columns, :math:`V = \\sqrt{\\phi^2 / (k - 1)}` with
:math:`\\phi^2 = \\sum_{a,b} (p_{ab} - p_a p_b)^2 / (p_a p_b)` over the categories present in that
table and :math:`k` the smaller number of them [Cra46]; the correlation ratio of a numeric column
:math:`y` given a categorical one, :math:`\\eta = \\sqrt{\\sum_a p_a (\\bar y_a - \\bar y)^2 /
\\mathrm{Var}(y)}`, with the grouped means :math:`\\bar y_a`.

**Guarantees.** By the Kantorovich–Rubinstein duality [Vil09],
:math:`|\\mathbb E_\\mu f - \\mathbb E_\\nu f| \\le \\mathrm{Lip}(f)\\, W_1(\\mu, \\nu)` for every
Lipschitz ``f``. With :math:`w = \\min(W_1, 1)`: a numeric column's mean and its own W1 differ by
at most :math:`w\\,(\\mathrm{upper} - \\mathrm{lower})`; its standard deviation by at most
:math:`(\\mathrm{upper} - \\mathrm{lower}) \\min(\\sqrt w, 1/2)` (through
:math:`W_2^2 \\le \\mathrm{diam} \\cdot W_1` on the column, not a linear statistic); a categorical
column's shares and its 1-way TV by at most :math:`\\min(1, W_1 / w_j)`; the 2-way TV of two
categorical columns by at most :math:`\\min(1, W_1 / \\min(w_j, w_l))`. Quantiles, numeric
histograms and correlations are not Lipschitz functions of the distribution: W1 bounds none of
them (docs/evaluate.md).

References
----------
.. [Vil09] C. Villani. Optimal Transport: Old and New. Springer, 2009.
.. [Cra46] H. Cramér. Mathematical Methods of Statistics. Princeton University Press, 1946.
.. [EHR17] C. Esteban, S. L. Hyland, G. Rätsch. Real-valued (Medical) Time Series Generation with
   Recurrent Conditional GANs. arXiv:1706.02633, 2017. See docs/references.md.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from . import limits
from .domain import Domain
from .downstream import Downstream, Scores, train_synthetic_test_real
from .transport import W1Result, w1_1d, wasserstein1
from .validation import check_float, check_int, param_error

__all__ = [
    "report", "Report", "NumericColumn", "CategoricalColumn", "Pair", "Guarantee", "MarginalErrors",
    "Downstream", "Scores", "OWNER_LABEL", "DEFAULT_QUANTILES", "MAX_COLUMNS", "MAX_PAIRS", "MAX_BINS",
    "MAX_PAIR_BINS", "MAX_TABLE_CELLS", "MAX_REPORT_CELLS", "MAX_QUANTILES", "TOLERANCE", "MAX_INTEGER_VALUES",
]

_OWNER = "evaluate.report"

#: What every report is: the label it carries in every view (``Report.label``, ``to_dict``, the CLI).
OWNER_LABEL = ("OWNER VIEW: computed from the private data without noise. NOT differentially private; "
               "for the data owner's eyes only, never part of an export.")
#: Quantile levels reported for a numeric column by default.
DEFAULT_QUANTILES = (0.05, 0.25, 0.5, 0.75, 0.95)
#: Most columns a report covers.
MAX_COLUMNS = 100
#: Most pairs a report covers (every pair of 100 columns is 4,950).
MAX_PAIRS = 5_000
#: Most bins of a numeric column's 1-way histogram, and per numeric axis of a 2-way table.
MAX_BINS = 1_000
MAX_PAIR_BINS = 100
#: Most cells of one 2-way table (e.g. 316 x 316 categories).
MAX_TABLE_CELLS = 100_000
#: Most cells of all 1-way and 2-way tables of a report together (real and synthetic shares are kept
#: for each: 2^22 cells are 64 MiB of float64).
MAX_REPORT_CELLS = 2**22
#: Most quantile levels.
MAX_QUANTILES = 99
#: Most whole values an integer column may take (between its bounds) for the report to compare the share of
#: each value; beyond, the column is compared on its histogram's bins only.
MAX_INTEGER_VALUES = 50
#: Slack of the check "measured <= ceiling": relative 1e-9 plus absolute 1e-12 (floating-point
#: rounding of two means of up to 10^7 numbers; a real contradiction is orders of magnitude larger).
TOLERANCE = (1e-9, 1e-12)


def _ro(a: Any) -> np.ndarray:
    """A read-only float64 copy (the records are frozen; so are their arrays)."""
    out = np.array(a, dtype=np.float64)
    out.setflags(write=False)
    return out


def _num(x: Any) -> float | None:
    """A finite float, or None for an undefined value (never NaN in a record)."""
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None


def _diff(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else b - a


# ============================================================================== the records
@dataclass(frozen=True)
class Guarantee:
    """One statistic W1 controls: its measured difference and the ceiling W1 puts on it.

    Attributes
    ----------
    statistic : str
        What is compared, e.g. ``"mean"``, ``"standard deviation"``, ``"W1 of the column"``,
        ``"largest category share difference"``, ``"1-way TV"``, ``"2-way TV"``.
    columns : tuple of str
        The column(s) it is about.
    measured : float
        |synthetic − real| (in the column's units for a numeric statistic, a share in [0, 1] otherwise).
    ceiling : float or None
        What W1 guarantees: ``measured <= ceiling`` must hold. None when no W1 was given.
    argument : str
        Why the ceiling holds (the Lipschitz constant and its reason).
    """

    statistic: str
    columns: tuple[str, ...]
    measured: float
    ceiling: float | None
    argument: str

    @property
    def holds(self) -> bool | None:
        """True when the measured difference is within its ceiling (up to :data:`TOLERANCE`), False
        for a contradiction, None without a ceiling."""
        if self.ceiling is None:
            return None
        rel, abs_ = TOLERANCE
        return bool(self.measured <= self.ceiling * (1 + rel) + abs_)

    def to_dict(self) -> dict:
        return {"statistic": self.statistic, "columns": list(self.columns), "measured": self.measured,
                "ceiling": self.ceiling, "holds": self.holds, "argument": self.argument}


@dataclass(frozen=True, eq=False)
class NumericColumn:
    """A numeric column, real against synthetic, on the clamped data (what a mechanism sees).

    ``edges`` are the public grid: ``bins + 1`` equal steps from the domain's lower to its upper bound.
    ``real_hist`` and ``synthetic_hist`` are shares (summing to 1); the last bin is closed. Means,
    standard deviations (population, ddof = 0: the statistic of the empirical distribution, the one
    W1 bounds) and quantiles (numpy's "linear" rule) are in the column's units; ``w1`` is the exact
    W1 of the column alone (in its units); ``tv`` is its 1-way marginal error.

    A column the domain declares whole (``Domain(integers=[...])``) is compared as integers too:
    ``integer`` is True, ``real_whole`` and ``synthetic_whole`` are the shares of values that are whole
    numbers (every release's are: it rounds them), and when it can take at most
    :data:`MAX_INTEGER_VALUES` whole values between its bounds, ``values`` lists them and
    ``real_value_shares`` / ``synthetic_value_shares`` give the share of each (values rounded to the nearest
    whole number); ``tv`` is then the total variation between those shares.
    """

    kind: ClassVar[str] = "numeric"
    name: str
    lower: float
    upper: float
    edges: np.ndarray
    real_hist: np.ndarray
    synthetic_hist: np.ndarray
    real_mean: float
    synthetic_mean: float
    real_std: float
    synthetic_std: float
    levels: tuple[float, ...]
    real_quantiles: np.ndarray
    synthetic_quantiles: np.ndarray
    w1: float
    tv: float
    integer: bool = False
    real_whole: float | None = None
    synthetic_whole: float | None = None
    values: tuple[int, ...] = ()
    real_value_shares: np.ndarray | None = None
    synthetic_value_shares: np.ndarray | None = None

    @property
    def value_share_diffs(self) -> np.ndarray | None:
        """Synthetic minus real share of each whole value (None unless :attr:`values`)."""
        if self.real_value_shares is None or self.synthetic_value_shares is None:
            return None
        return self.synthetic_value_shares - self.real_value_shares

    @property
    def mean_diff(self) -> float:
        return self.synthetic_mean - self.real_mean

    @property
    def std_diff(self) -> float:
        return self.synthetic_std - self.real_std

    @property
    def quantile_diffs(self) -> np.ndarray:
        return self.synthetic_quantiles - self.real_quantiles

    def to_dict(self) -> dict:
        return {"name": self.name, "kind": self.kind, "lower": self.lower, "upper": self.upper,
                "edges": self.edges.tolist(), "real_hist": self.real_hist.tolist(),
                "synthetic_hist": self.synthetic_hist.tolist(),
                "real_mean": self.real_mean, "synthetic_mean": self.synthetic_mean, "mean_diff": self.mean_diff,
                "real_std": self.real_std, "synthetic_std": self.synthetic_std, "std_diff": self.std_diff,
                "quantile_levels": list(self.levels), "real_quantiles": self.real_quantiles.tolist(),
                "synthetic_quantiles": self.synthetic_quantiles.tolist(),
                "quantile_diffs": self.quantile_diffs.tolist(), "w1": self.w1, "tv": self.tv,
                **self._integer_dict()}

    def _integer_dict(self) -> dict:
        if not self.integer:
            return {}
        out = {"integer": True, "real_whole": self.real_whole, "synthetic_whole": self.synthetic_whole}
        if self.values:
            out.update(values=list(self.values), real_value_shares=self.real_value_shares.tolist(),
                       synthetic_value_shares=self.synthetic_value_shares.tolist(),
                       value_share_diffs=self.value_share_diffs.tolist())
        return out


@dataclass(frozen=True, eq=False)
class CategoricalColumn:
    """A categorical column: the shares of its declared categories (zeros included, in the declared
    order), real and synthetic; ``tv`` is its 1-way marginal error."""

    kind: ClassVar[str] = "categorical"
    name: str
    categories: tuple[str, ...]
    real_shares: np.ndarray
    synthetic_shares: np.ndarray
    tv: float

    @property
    def share_diffs(self) -> np.ndarray:
        return self.synthetic_shares - self.real_shares

    def to_dict(self) -> dict:
        return {"name": self.name, "kind": self.kind, "categories": list(self.categories),
                "real_shares": self.real_shares.tolist(), "synthetic_shares": self.synthetic_shares.tolist(),
                "share_diffs": self.share_diffs.tolist(), "tv": self.tv}


@dataclass(frozen=True, eq=False)
class Pair:
    """Two columns (in the domain's order), real against synthetic.

    Attributes
    ----------
    columns : (str, str)
    kind : str
        ``"numeric-numeric"``, ``"categorical-categorical"``, ``"numeric-categorical"`` or
        ``"categorical-numeric"`` (the kinds of ``columns[0]`` and ``columns[1]``).
    association : str
        ``"pearson"`` (numeric x numeric), ``"cramers_v"`` (categorical x categorical) or
        ``"correlation_ratio"`` (η of the numeric column given the categorical one).
    real_association, synthetic_association : float or None
        None where undefined (a constant column; fewer than two categories present), said in the
        report's notes.
    row_labels, col_labels : tuple of str
        The cells of the 2-way tables: a numeric axis's bins as ``"[lo, hi)"`` on the public grid of
        ``pair_bins`` bins, a categorical axis's declared categories.
    real_table, synthetic_table : ndarray (rows, cols)
        Shares of the rows in each cell (each table sums to 1).
    tv : float
        The 2-way marginal error: the total variation distance between the two tables.
    group_means : dict or None
        Numeric x categorical: per declared category, the numeric column's mean in the real and the
        synthetic data (None for a category with no row there).
    """

    columns: tuple[str, str]
    kind: str
    association: str
    real_association: float | None
    synthetic_association: float | None
    row_labels: tuple[str, ...]
    col_labels: tuple[str, ...]
    real_table: np.ndarray
    synthetic_table: np.ndarray
    tv: float
    group_means: Mapping[str, tuple[float | None, float | None]] | None = None

    @property
    def association_diff(self) -> float | None:
        return _diff(self.real_association, self.synthetic_association)

    def to_dict(self, *, tables: bool = True) -> dict:
        out = {"columns": list(self.columns), "kind": self.kind, "association": self.association,
               "real": self.real_association, "synthetic": self.synthetic_association,
               "diff": self.association_diff, "tv": self.tv}
        if self.group_means is not None:
            out["group_means"] = {k: {"real": r, "synthetic": s, "diff": _diff(r, s)}
                                  for k, (r, s) in self.group_means.items()}
        if tables:
            out.update(row_labels=list(self.row_labels), col_labels=list(self.col_labels),
                       real_table=self.real_table.tolist(), synthetic_table=self.synthetic_table.tolist())
        return out


@dataclass(frozen=True)
class MarginalErrors:
    """The 1- and 2-way marginal errors summarised: mean and largest total variation distance over
    the columns (1-way) and the pairs (2-way), and where the largest is. None without pairs."""

    one_way_mean: float
    one_way_max: float
    one_way_worst: str
    two_way_mean: float | None
    two_way_max: float | None
    two_way_worst: tuple[str, str] | None

    def to_dict(self) -> dict:
        return {"one_way": {"mean": self.one_way_mean, "max": self.one_way_max, "worst": self.one_way_worst},
                "two_way": {"mean": self.two_way_mean, "max": self.two_way_max,
                            "worst": list(self.two_way_worst) if self.two_way_worst else None}}


@dataclass(frozen=True, eq=False)
class Report:
    """Real against synthetic data: the owner's view of what a release preserves (:func:`report`).

    OWNER VIEW: computed from the private data without noise, NOT differentially private
    (:attr:`label`). There is no ``public()`` view and :mod:`dpsynth_core.export` refuses a Report.

    Attributes
    ----------
    domain : Domain
    n_real, n_synthetic : int
        Rows compared.
    n_real_clamped, n_synthetic_clamped : int
        Rows with a numeric value outside the bounds, clamped into them before every statistic (as a
        mechanism clamps them).
    w1 : float or None
        The W1 the ceilings use (unit-cube units, the domain's metric): an upper end of the true W1.
    w1_source : str
        Where it came from ("given", "computed by pot (exact)", "not given", ...).
    columns : tuple of NumericColumn | CategoricalColumn
        In the domain's order.
    pairs : tuple of Pair
    marginal_errors : MarginalErrors
    guarantees : tuple of Guarantee
        Every statistic W1 controls: measured difference and ceiling.
    downstream : Downstream or None
        Without a ``target``: None.
    settings : dict
        ``bins``, ``pair_bins``, ``quantiles``, ``seed``, ``test_size``.
    notes : tuple of str
        Plain-language caveats: undefined statistics, subsampling, contradictions.
    """

    label: ClassVar[str] = OWNER_LABEL
    domain: Domain
    n_real: int
    n_synthetic: int
    n_real_clamped: int
    n_synthetic_clamped: int
    w1: float | None
    w1_source: str
    columns: tuple[NumericColumn | CategoricalColumn, ...]
    pairs: tuple[Pair, ...]
    marginal_errors: MarginalErrors
    guarantees: tuple[Guarantee, ...]
    downstream: Downstream | None
    settings: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    notes: tuple[str, ...] = ()

    @property
    def is_dp(self) -> bool:
        """Always False: a report reads the private data without noise."""
        return False

    @property
    def contradictions(self) -> tuple[Guarantee, ...]:
        """The statistics whose measured difference exceeds the ceiling W1 puts on it (a wrong W1 or a bug)."""
        return tuple(g for g in self.guarantees if g.holds is False)

    def column(self, name: str) -> NumericColumn | CategoricalColumn:
        for c in self.columns:
            if c.name == name:
                return c
        raise KeyError(f"no column {name!r} in this report (columns: {[c.name for c in self.columns]})")

    def pair(self, a: str, b: str) -> Pair:
        for p in self.pairs:
            if p.columns in ((a, b), (b, a)):
                return p
        raise KeyError(f"no pair ({a!r}, {b!r}) in this report")

    # ---------------------------------------------------------------- views
    def to_dict(self, *, tables: bool = True) -> dict:
        """Everything as JSON-ready values; ``tables=False`` leaves out the 2-way tables."""
        return {"label": self.label, "is_dp": False, "domain": self.domain.to_dict(),
                "n_real": self.n_real, "n_synthetic": self.n_synthetic, "n_real_clamped": self.n_real_clamped,
                "n_synthetic_clamped": self.n_synthetic_clamped,
                "w1": {"value": self.w1, "source": self.w1_source, "units": "unit cube, the domain's metric"},
                "settings": {k: list(v) if isinstance(v, tuple) else v for k, v in self.settings.items()},
                "columns": [c.to_dict() for c in self.columns],
                "pairs": [p.to_dict(tables=tables) for p in self.pairs],
                "marginal_errors": self.marginal_errors.to_dict(),
                "guarantees": [g.to_dict() for g in self.guarantees],
                "contradictions": len(self.contradictions),
                "downstream": None if self.downstream is None else self.downstream.to_dict(),
                "notes": list(self.notes)}

    def to_json(self, *, tables: bool = True, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(tables=tables), indent=indent, allow_nan=False) + "\n"

    def to_frame(self, table: str = "columns") -> pd.DataFrame:
        """One table of the report as a DataFrame.

        ``"columns"``: one row per column (kind, means, standard deviations, quantiles, column W1,
        1-way TV; for a whole-number column ``integer`` and the synthetic share of whole values).
        ``"distributions"``: one row per histogram bin, whole value (a declared integer column with few
        values) or declared category (real and synthetic shares). ``"pairs"``: one row per pair (association, real, synthetic, difference,
        2-way TV). ``"guarantees"``: one row per statistic W1 controls (measured, ceiling, holds).
        ``"downstream"``: one row per training set (synthetic, real, baseline) and metric.
        """
        tables = ("columns", "distributions", "pairs", "guarantees", "downstream")
        if table not in tables:
            raise param_error("Report.to_frame", "table", "one of " + ", ".join(map(repr, tables)), table)
        return getattr(self, f"_frame_{table}")()

    def _frame_columns(self) -> pd.DataFrame:
        rows = []
        for c in self.columns:
            row: dict[str, Any] = {"column": c.name, "kind": c.kind, "tv": c.tv}
            if isinstance(c, NumericColumn):
                row.update(real_mean=c.real_mean, synthetic_mean=c.synthetic_mean, mean_diff=c.mean_diff,
                           real_std=c.real_std, synthetic_std=c.synthetic_std, std_diff=c.std_diff, w1=c.w1,
                           integer=c.integer, synthetic_whole=c.synthetic_whole)
                for lv, r, s in zip(c.levels, c.real_quantiles, c.synthetic_quantiles, strict=True):
                    row[f"real_q{lv:g}"], row[f"synthetic_q{lv:g}"] = r, s
            else:
                i = int(np.argmax(np.abs(c.share_diffs)))
                row.update(categories=len(c.categories), largest_share_diff=float(c.share_diffs[i]),
                           at_category=c.categories[i])
            rows.append(row)
        return pd.DataFrame(rows)

    def _frame_distributions(self) -> pd.DataFrame:
        rows = []
        for c in self.columns:
            if isinstance(c, NumericColumn) and c.values:  # a whole-number column: the share of each value
                cells, real, syn = [str(v) for v in c.values], c.real_value_shares, c.synthetic_value_shares
            elif isinstance(c, NumericColumn):
                cells = [f"[{lo:g}, {hi:g}{']' if i == len(c.real_hist) - 1 else ')'}"
                         for i, (lo, hi) in enumerate(zip(c.edges[:-1], c.edges[1:], strict=True))]
                real, syn = c.real_hist, c.synthetic_hist
            else:
                cells, real, syn = list(c.categories), c.real_shares, c.synthetic_shares
            rows += [{"column": c.name, "kind": c.kind, "cell": cell, "real": float(r), "synthetic": float(s),
                      "diff": float(s - r)} for cell, r, s in zip(cells, real, syn, strict=True)]
        return pd.DataFrame(rows, columns=["column", "kind", "cell", "real", "synthetic", "diff"])

    def _frame_pairs(self) -> pd.DataFrame:
        return pd.DataFrame([{"a": p.columns[0], "b": p.columns[1], "kind": p.kind, "association": p.association,
                              "real": p.real_association, "synthetic": p.synthetic_association,
                              "diff": p.association_diff, "tv": p.tv} for p in self.pairs],
                            columns=["a", "b", "kind", "association", "real", "synthetic", "diff", "tv"])

    def _frame_guarantees(self) -> pd.DataFrame:
        return pd.DataFrame([{"statistic": g.statistic, "columns": ", ".join(g.columns), "measured": g.measured,
                              "ceiling": g.ceiling, "holds": g.holds, "argument": g.argument}
                             for g in self.guarantees],
                            columns=["statistic", "columns", "measured", "ceiling", "holds", "argument"])

    def _frame_downstream(self) -> pd.DataFrame:
        cols = ["trained_on", "metric", "score"]
        if self.downstream is None:
            return pd.DataFrame(columns=cols)
        ds = self.downstream
        return pd.DataFrame([{"trained_on": who, "metric": m, "score": getattr(getattr(ds, who), m)}
                             for who in ("synthetic", "real", "baseline") for m in ds.metrics], columns=cols)


# ============================================================================== the computation
def report(real: Any, synthetic: Any, domain: Domain, *, target: str | None = None, w1: Any = "auto",
           holdout: Any = None, bins: int = 20, pair_bins: int = 10,
           quantiles: Sequence[float] = DEFAULT_QUANTILES, pairs: Sequence[tuple[str, str]] | None = None,
           test_size: float = 0.3, seed: int = 0) -> Report:
    """Compare real and synthetic data column by column and pair by pair (an OWNER VIEW).

    Parameters
    ----------
    real, synthetic : DataFrame or array (n, d)
        Read by ``domain.read``: a DataFrame by column name (categorical columns as their declared
        text), or an array in the domain's column order (category indices for a mixed domain).
        Numeric values outside the bounds are clamped into them (as a mechanism does) before every
        statistic; the counts are in ``n_real_clamped`` / ``n_synthetic_clamped``.
    domain : Domain
        The public domain of the release: its bounds give the histograms' grid, its declared
        categories the categorical cells (a category absent from a table has share 0).
    target : str, optional
        A column of the domain to predict from the others (:class:`Downstream`): classification for a
        categorical column, regression for a numeric one. Needs scikit-learn.
    w1 : "auto", float, W1Result or None, default "auto"
        The W1 between ``real`` and ``synthetic`` in unit-cube units under the domain's metric (l_inf
        on the unit coordinates, combined by max with the category weights: docs/mixed-data.md), e.g.
        ``dpsynth_core.transport.wasserstein1(real, synthetic, domain=domain)``. A W1Result gives its
        proven upper end. Any larger number (W1 under l1 or l2) gives valid, looser ceilings.
        "auto": computed with ``wasserstein1(method="auto")`` (its upper end), under the mixed metric for a
        mixed domain: exact where an exact method fits, beyond that the upper end of a proven interval
        (:func:`dpsynth_core.transport.plan_w1`), so the ceilings hold at every size. None: no ceilings.
    holdout : DataFrame or array, optional
        Real rows to test the downstream models on (rows the mechanism never saw). Without it a share
        ``test_size`` of ``real`` is held out with ``seed``.
    bins : int in [1, 1000], default 20
        Equal bins of a numeric column's 1-way histogram on [lower, upper].
    pair_bins : int in [1, 100], default 10
        Equal bins of a numeric axis of a 2-way table.
    quantiles : sequence of float in (0, 1), default (0.05, 0.25, 0.5, 0.75, 0.95)
    pairs : sequence of (str, str), optional
        The pairs to compare; default every pair of columns (at most :data:`MAX_PAIRS`).
    test_size : float in (0, 1), default 0.3
    seed : int >= 0, default 0
        The held-out split, the subsampling above ``downstream.MAX_MODEL_ROWS`` rows and the models' seed.

    Returns
    -------
    Report

    Notes
    -----
    The definitions of the marginal errors, the associations and the guarantees, and the references,
    are in the module docstring ("Definitions").
    """
    settings, pair_list = _settings(domain, target, bins, pair_bins, quantiles, pairs, test_size, seed)
    if holdout is not None and target is None:
        raise param_error(_OWNER, "holdout", "given with a target (it holds the real rows the downstream models "
                          "are tested on)", "holdout rows without a target")
    R, S, Ru, Su, n_real_clamped, n_syn_clamped, notes = _read_both(real, synthetic, domain)
    w1_value, w1_source = _resolve_w1(w1, domain, R, S)
    if w1_value is None:
        notes.append(f"No W1 ceilings: {w1_source}.")

    axes = _Axes(domain, Ru, Su, settings["bins"], settings["pair_bins"])
    columns = tuple(axes.column(j, settings["quantiles"]) for j in range(domain.d))
    pair_records = tuple(axes.pair(i, j, notes) for i, j in pair_list)
    guarantees = _guarantees(domain, columns, pair_records, w1_value)
    bad = [g for g in guarantees if g.holds is False]
    if bad:
        notes.append(f"CONTRADICTION: {len(bad)} measured difference(s) exceed the ceiling W1 = {w1_value:.6g} puts "
                     f"on them (first: {bad[0].statistic} of {', '.join(bad[0].columns)}: {bad[0].measured:.6g} > "
                     f"{bad[0].ceiling:.6g}). The W1 given is not the W1 between these two tables, or there is a "
                     f"bug: please report it.")
    downstream = None
    if target is not None:
        downstream = train_synthetic_test_real(R, S, domain, target, holdout=holdout, test_size=test_size, seed=seed)
        notes += [f"Downstream: {note}" for note in downstream.notes]
    return Report(
        domain=domain, n_real=int(R.shape[0]), n_synthetic=int(S.shape[0]), n_real_clamped=int(n_real_clamped),
        n_synthetic_clamped=int(n_syn_clamped), w1=w1_value, w1_source=w1_source, columns=columns,
        pairs=pair_records, marginal_errors=_marginal_errors(columns, pair_records), guarantees=guarantees,
        downstream=downstream, settings=MappingProxyType(settings), notes=tuple(notes))


def _read_both(real: Any, synthetic: Any, domain: Domain):
    """Both tables read by the domain, checked against the size limit and mapped to the unit cube (clamped,
    as a mechanism clamps them), with the counts and the note on clamped rows."""
    R = domain.read(real, name="real", owner=_OWNER)
    S = domain.read(synthetic, name="synthetic", owner=_OWNER)
    for name, arr in (("real", R), ("synthetic", S)):
        limits.check_planned(arr.shape[0], "max_size", owner=_OWNER, param=name, what="rows",
                             fix=f"compare a sample of the {name} rows")
    Ru, n_real_clamped = domain.to_unit(R, return_clamped=True, owner=_OWNER)
    Su, n_syn_clamped = domain.to_unit(S, return_clamped=True, owner=_OWNER)
    notes: list[str] = []
    if n_real_clamped or n_syn_clamped:
        notes.append(f"{n_real_clamped} real and {n_syn_clamped} synthetic rows had a numeric value outside the "
                     f"bounds; every statistic uses them clamped into the bounds, as a mechanism does.")
    return R, S, Ru, Su, n_real_clamped, n_syn_clamped, notes


# ------------------------------------------------------------------------------ validation
def _settings(domain: Any, target: Any, bins: Any, pair_bins: Any, quantiles: Any, pairs: Any, test_size: Any,
              seed: Any) -> tuple[dict, list[tuple[int, int]]]:
    """The checked settings and pairs; every table's size checked before anything is built."""
    if not isinstance(domain, Domain):
        raise param_error(_OWNER, "domain", "a Domain (the public domain of the release)", domain, kind=TypeError)
    if domain.d > MAX_COLUMNS:
        raise param_error(_OWNER, "domain", f"a domain of at most {MAX_COLUMNS} columns (evaluate.MAX_COLUMNS); "
                          "compare a few columns at a time", f"{domain.d} columns")
    if target is not None and (not isinstance(target, str) or target not in domain.names):
        raise param_error(_OWNER, "target", f"a column of the domain ({', '.join(map(repr, domain.names))})",
                          target, kind=ValueError if isinstance(target, str) else TypeError)
    settings = {"bins": check_int(bins, "bins", _OWNER, low=1, high=MAX_BINS),
                "pair_bins": check_int(pair_bins, "pair_bins", _OWNER, low=1, high=MAX_PAIR_BINS),
                "quantiles": _levels(quantiles),
                "test_size": check_float(test_size, "test_size", _OWNER, low=0.0, high=1.0, low_open=True,
                                         high_open=True),
                "seed": check_int(seed, "seed", _OWNER, low=0)}
    pair_list = _pairs(pairs, domain)
    _check_sizes(domain, settings["bins"], settings["pair_bins"], pair_list)
    return settings, pair_list


def _levels(quantiles: Any) -> tuple[float, ...]:
    what = f"a sequence of at most {MAX_QUANTILES} floats in (0, 1)"
    if isinstance(quantiles, (str, bytes)) or not isinstance(quantiles, (Sequence, np.ndarray)):
        raise param_error(_OWNER, "quantiles", what, quantiles, kind=TypeError)
    if len(quantiles) > MAX_QUANTILES:
        raise param_error(_OWNER, "quantiles", what, f"{len(quantiles)} levels")
    return tuple(check_float(q, "quantiles", _OWNER, low=0.0, high=1.0, low_open=True, high_open=True)
                 for q in quantiles)


def _pairs(pairs: Any, domain: Domain) -> list[tuple[int, int]]:
    """Pairs as column positions (i < j, in the domain's order), checked."""
    d = domain.d
    if pairs is None:
        count = d * (d - 1) // 2
        if count > MAX_PAIRS:
            raise param_error(_OWNER, "pairs", f"given explicitly when the domain has more than {MAX_PAIRS} pairs "
                              "(evaluate.MAX_PAIRS)", f"{count} pairs of {d} columns")
        return [(i, j) for i in range(d) for j in range(i + 1, d)]
    what = "a sequence of (column, column) pairs of distinct columns of the domain"
    if isinstance(pairs, (str, bytes)) or not isinstance(pairs, (Sequence, np.ndarray)):
        raise param_error(_OWNER, "pairs", what, pairs, kind=TypeError)
    if len(pairs) > MAX_PAIRS:
        raise param_error(_OWNER, "pairs", f"at most {MAX_PAIRS} pairs (evaluate.MAX_PAIRS)", f"{len(pairs)} pairs")
    pos = {n: i for i, n in enumerate(domain.names)}
    out: list[tuple[int, int]] = []
    for p in pairs:
        if isinstance(p, (str, bytes)) or not isinstance(p, (Sequence, np.ndarray)) or len(p) != 2:
            raise param_error(_OWNER, "pairs", what, p, kind=TypeError)
        a, b = p
        for c in (a, b):
            if c not in pos:
                raise param_error(_OWNER, "pairs", f"{what} ({', '.join(map(repr, domain.names))})", c)
        if a == b:
            raise param_error(_OWNER, "pairs", what, tuple(p))
        key = tuple(sorted((pos[a], pos[b])))
        if key in out:
            raise param_error(_OWNER, "pairs", what + ", each once", tuple(p))
        out.append(key)  # type: ignore[arg-type]
    return out


def _cells(domain: Domain, j: int, bins: int) -> int:
    name = domain.names[j]
    return len(domain.categories[name]) if name in domain.categories else bins


def _check_sizes(domain: Domain, bins: int, pair_bins: int, pairs: list[tuple[int, int]]) -> None:
    """Every table's cells and their total, before any is built."""
    total = sum(_cells(domain, j, bins) for j in range(domain.d))
    for i, j in pairs:
        cells = _cells(domain, i, pair_bins) * _cells(domain, j, pair_bins)
        if cells > MAX_TABLE_CELLS:
            a, b = domain.names[i], domain.names[j]
            raise param_error(_OWNER, "pairs", f"pairs whose 2-way table has at most {MAX_TABLE_CELLS} cells "
                              f"(evaluate.MAX_TABLE_CELLS); leave ({a!r}, {b!r}) out with pairs=[...] or lower "
                              "pair_bins", f"{_cells(domain, i, pair_bins)} x {_cells(domain, j, pair_bins)} = "
                              f"{cells} cells for ({a!r}, {b!r})")
        total += cells
    if total > MAX_REPORT_CELLS:
        raise param_error(_OWNER, "pairs", f"at most {MAX_REPORT_CELLS} cells in all tables together "
                          "(evaluate.MAX_REPORT_CELLS); compare fewer columns or pairs, or lower bins / pair_bins",
                          f"{total} cells")


def _resolve_w1(w1: Any, domain: Domain, R: np.ndarray, S: np.ndarray) -> tuple[float | None, str]:
    """The number the ceilings use (an upper end of the true W1) and where it came from."""
    if w1 is None:
        return None, "no W1 was given"
    if isinstance(w1, str):
        if w1 != "auto":
            raise param_error(_OWNER, "w1", "'auto', a float in [0, inf), a W1Result or None", w1)
        res = wasserstein1(R, S, domain=domain, return_result=True)
        kind = "exact" if res.exact else f"certified interval [{res.lower:.6g}, {res.upper:.6g}], its upper end"
        metric = " under the mixed metric" if domain.is_mixed else ""
        return float(res.upper), f"computed by {res.method}{metric} ({kind})"
    if isinstance(w1, W1Result):
        if not math.isfinite(w1.upper):
            raise param_error(_OWNER, "w1", f"a W1Result with a finite upper bound (method {w1.method!r} gives only "
                              "a lower bound, which cannot give a ceiling)", w1.upper)
        return float(w1.upper), f"given ({w1.method}, {'exact' if w1.exact else 'upper end of its interval'})"
    return check_float(w1, "w1", _OWNER, low=0.0), "given"


# ------------------------------------------------------------------------------ statistics
def _tv(p: np.ndarray, q: np.ndarray) -> float:
    return float(0.5 * np.abs(p - q).sum())


def _shares(codes: np.ndarray, size: int) -> np.ndarray:
    return np.bincount(codes, minlength=size).astype(np.float64) / max(1, codes.size)


class _Axes:
    """Per column: the cell index of every real and synthetic row (1-way and 2-way grids)."""

    def __init__(self, domain: Domain, Ru: np.ndarray, Su: np.ndarray, bins: int, pair_bins: int) -> None:
        self.domain, self.Ru, self.Su, self.bins, self.pair_bins = domain, Ru, Su, bins, pair_bins

    def is_cat(self, j: int) -> bool:
        return self.domain.names[j] in self.domain.categories

    def bounds(self, j: int) -> tuple[float, float]:
        k = self.domain.numeric_names.index(self.domain.names[j])
        return self.domain.lower[k], self.domain.upper[k]

    def values(self, U: np.ndarray, j: int) -> np.ndarray:
        """A numeric column in its units (clamped)."""
        lo, hi = self.bounds(j)
        return lo + U[:, j] * (hi - lo)

    def codes(self, U: np.ndarray, j: int, bins: int) -> np.ndarray:
        if self.is_cat(j):
            return U[:, j].astype(np.int64)
        return np.minimum((U[:, j] * bins).astype(np.int64), bins - 1)

    def labels(self, j: int, bins: int) -> tuple[str, ...]:
        name = self.domain.names[j]
        if self.is_cat(j):
            return self.domain.categories[name]
        lo, hi = self.bounds(j)
        e = np.linspace(lo, hi, bins + 1)
        return tuple(f"[{e[i]:.4g}, {e[i + 1]:.4g}{']' if i == bins - 1 else ')'}" for i in range(bins))

    def column(self, j: int, levels: tuple[float, ...]) -> NumericColumn | CategoricalColumn:
        name = self.domain.names[j]
        if self.is_cat(j):
            size = len(self.domain.categories[name])
            p, q = (_shares(self.codes(U, j, 0), size) for U in (self.Ru, self.Su))
            return CategoricalColumn(name, self.domain.categories[name], _ro(p), _ro(q), _tv(p, q))
        lo, hi = self.bounds(j)
        x, y = self.values(self.Ru, j), self.values(self.Su, j)
        p, q = (_shares(self.codes(U, j, self.bins), self.bins) for U in (self.Ru, self.Su))
        col_w1 = w1_1d(self.Ru[:, j], self.Su[:, j], np.full(x.size, 1.0 / x.size),
                       np.full(y.size, 1.0 / y.size)) * (hi - lo)
        lv = list(levels)
        integer = _integer_parts(x, y, lo, hi) if name in self.domain.integers else {}
        tv = _tv(integer["real_value_shares"], integer["synthetic_value_shares"]) if integer.get("values") \
            else _tv(p, q)
        return NumericColumn(
            name, lo, hi, _ro(np.linspace(lo, hi, self.bins + 1)), _ro(p), _ro(q), float(x.mean()),
            float(y.mean()), float(x.std()), float(y.std()), levels,
            _ro(np.quantile(x, lv) if lv else []), _ro(np.quantile(y, lv) if lv else []), float(col_w1), tv,
            **integer)

    def pair(self, i: int, j: int, notes: list[str]) -> Pair:
        dom, nb = self.domain, self.pair_bins
        a, b = dom.names[i], dom.names[j]
        ca, cb = self.is_cat(i), self.is_cat(j)
        rows, cols = _cells(dom, i, nb), _cells(dom, j, nb)
        tables = []
        for U in (self.Ru, self.Su):
            flat = self.codes(U, i, nb) * cols + self.codes(U, j, nb)
            tables.append(_shares(flat, rows * cols).reshape(rows, cols))
        P, Q = tables
        kind = f"{'categorical' if ca else 'numeric'}-{'categorical' if cb else 'numeric'}"
        group_means = None
        if not ca and not cb:
            assoc = "pearson"
            vals = [_pearson(self.values(U, i), self.values(U, j)) for U in (self.Ru, self.Su)]
        elif ca and cb:
            assoc = "cramers_v"
            vals = [_cramers_v(T) for T in (P, Q)]
        else:
            assoc = "correlation_ratio"
            num, cat = (j, i) if ca else (i, j)
            labels = dom.categories[dom.names[cat]]
            res = [_correlation_ratio(self.values(U, num), self.codes(U, cat, 0), len(labels))
                   for U in (self.Ru, self.Su)]
            vals = [r[0] for r in res]
            group_means = MappingProxyType({lab: (res[0][1][k], res[1][1][k]) for k, lab in enumerate(labels)})
        for who, v in zip(("real", "synthetic"), vals, strict=True):
            if v is None:
                notes.append(f"{assoc} of ({a!r}, {b!r}) is undefined in the {who} data ("
                             + ("a constant column" if assoc != "cramers_v" else "fewer than two categories present"
                                " in a column") + ").")
        return Pair((a, b), kind, assoc, vals[0], vals[1], self.labels(i, nb), self.labels(j, nb), _ro(P), _ro(Q),
                    _tv(P, Q), group_means)


def _whole_share(x: np.ndarray) -> float:
    """The share of values that are whole numbers (up to 1e-9 of their size: a CSV's round trip)."""
    return float(np.mean(np.abs(x - np.rint(x)) <= 1e-9 * np.maximum(1.0, np.abs(x)))) if x.size else 1.0


def _integer_parts(x: np.ndarray, y: np.ndarray, lo: float, hi: float) -> dict:
    """The integer comparison of :class:`NumericColumn` for a declared whole-number column: the shares of
    whole values, and, with at most :data:`MAX_INTEGER_VALUES` whole values between the bounds, the share of
    each (values rounded to the nearest whole number inside the bounds)."""
    out: dict[str, Any] = {"integer": True, "real_whole": _whole_share(x), "synthetic_whole": _whole_share(y)}
    first, last = math.ceil(lo), math.floor(hi)
    if last - first + 1 <= MAX_INTEGER_VALUES:
        size = last - first + 1
        shares = [_shares((np.clip(np.rint(v), first, last) - first).astype(np.int64), size) for v in (x, y)]
        out.update(values=tuple(range(first, last + 1)), real_value_shares=_ro(shares[0]),
                   synthetic_value_shares=_ro(shares[1]))
    return out


def _pearson(x: np.ndarray, y: np.ndarray) -> float | None:
    xc, yc = x - x.mean(), y - y.mean()
    sx, sy = math.sqrt(float(xc @ xc)), math.sqrt(float(yc @ yc))
    if sx == 0.0 or sy == 0.0 or x.size < 2:
        return None
    return _num(np.clip(float(xc @ yc) / (sx * sy), -1.0, 1.0))


def _cramers_v(P: np.ndarray) -> float | None:
    """Cramér's V of a table of shares, over the rows and columns present (non-zero margins)."""
    pa, pb = P.sum(axis=1), P.sum(axis=0)
    P = P[pa > 0][:, pb > 0]
    pa, pb = pa[pa > 0], pb[pb > 0]
    k = min(pa.size, pb.size)
    if k < 2:
        return None
    expected = np.outer(pa, pb)
    phi2 = float((((P - expected) ** 2) / expected).sum())
    return _num(min(1.0, math.sqrt(max(0.0, phi2) / (k - 1))))


def _correlation_ratio(y: np.ndarray, c: np.ndarray, size: int) -> tuple[float | None, list[float | None]]:
    """η of ``y`` given the category ``c``, and the mean of ``y`` in each category (None if empty)."""
    counts = np.bincount(c, minlength=size).astype(np.float64)
    sums = np.bincount(c, weights=y, minlength=size)
    with np.errstate(invalid="ignore", divide="ignore"):
        means = sums / counts
    group = [None if counts[k] == 0 else _num(means[k]) for k in range(size)]
    var = float(y.var())
    if var == 0.0:
        return None, group
    present = counts > 0
    between = float((counts[present] / y.size * (means[present] - y.mean()) ** 2).sum())
    return _num(min(1.0, math.sqrt(max(0.0, between / var)))), group


def _marginal_errors(columns: tuple, pairs: tuple[Pair, ...]) -> MarginalErrors:
    one = np.array([c.tv for c in columns])
    k = int(np.argmax(one))
    if not pairs:
        return MarginalErrors(float(one.mean()), float(one[k]), columns[k].name, None, None, None)
    two = np.array([p.tv for p in pairs])
    m = int(np.argmax(two))
    return MarginalErrors(float(one.mean()), float(one[k]), columns[k].name, float(two.mean()), float(two[m]),
                          pairs[m].columns)


# ------------------------------------------------------------------------------ W1 ceilings
def _guarantees(domain: Domain, columns: tuple, pairs: tuple[Pair, ...], w1: float | None) -> tuple[Guarantee, ...]:
    """Every statistic W1 controls, with its ceiling (docs/evaluate.md, "What W1 guarantees")."""
    w = None if w1 is None else min(w1, 1.0)
    out: list[Guarantee] = []

    def add(stat: str, cols: tuple[str, ...], measured: float, ceiling: float | None, why: str) -> None:
        out.append(Guarantee(stat, cols, float(measured), None if w is None else float(ceiling), why))

    for c in columns:
        if isinstance(c, NumericColumn):
            width = c.upper - c.lower
            lip = f"(upper - lower) = {width:g} times the unit coordinate, which is 1-Lipschitz for the metric"
            add("mean", (c.name,), abs(c.mean_diff), None if w is None else w * width,
                f"the value is {lip}: KR duality gives |mean difference| <= W1 x {width:g}")
            add("W1 of the column", (c.name,), c.w1, None if w is None else w * width,
                f"projecting onto the column is {width:g}-Lipschitz, so its W1 is at most W1 x {width:g}")
            add("standard deviation", (c.name,), abs(c.std_diff),
                None if w is None else width * min(math.sqrt(w), 0.5),
                f"|sd difference| <= W2 of the column <= {width:g} x sqrt(W1) (W2^2 <= diameter x W1), and "
                f"<= {width:g}/2")
        else:
            wj = domain.weight(c.name)
            cap = None if w1 is None else min(1.0, w1 / wj)
            i = int(np.argmax(np.abs(c.share_diffs)))
            why = (f"a category's indicator (or a set of categories') is 1/{wj:g}-Lipschitz (different categories "
                   f"are {wj:g} apart): ceiling min(1, W1/{wj:g})")
            add(f"largest category share difference ({c.categories[i]!r})", (c.name,), abs(c.share_diffs[i]), cap,
                why)
            add("1-way TV", (c.name,), c.tv, cap, why)
    for p in pairs:
        if p.kind == "categorical-categorical":
            wmin = min(domain.weight(p.columns[0]), domain.weight(p.columns[1]))
            add("2-way TV", p.columns, p.tv, None if w1 is None else min(1.0, w1 / wmin),
                f"the indicator of a set of category pairs is 1/{wmin:g}-Lipschitz: ceiling min(1, W1/{wmin:g})")
    return tuple(out)
