"""Wasserstein-1 distances and the bounded-Lipschitz projection.

* :func:`wasserstein1` -- W1 between two weighted point sets,

  .. math:: W_1(\\mu, \\nu) = \\min_{\\gamma \\in \\Gamma(a, b)} \\sum_{i,j} \\gamma_{ij} \\, \\rho(x_i, y_j),

  with :math:`\\rho` the l_inf (default), l1 or l2 metric -- or, on a domain with categorical columns, the
  mixed metric of docs/mixed-data.md (:class:`MixedMetric`; methods ``pot``, ``sparse`` and ``auto``) --
  by one of the methods (one module each):

  ==============  =========================================================================================
  ``exact_1d``    :mod:`.exact1d` -- d = 1: :math:`\\int |F - G|`, exact, O((n+m) log(n+m)).
  ``pot``         :mod:`.dense` -- POT's network simplex on the dense cost matrix (n*m <= 2.5e7), its
                  result code and duals checked over all pairs.
  ``grid``        :mod:`.flows` -- both sets binned on a k^d grid, the transport between the histograms
                  solved exactly as a min-cost flow on the grid graph: a certified interval of half-width
                  one cell.
  ``sparse``      :mod:`.sparse` / :mod:`.transshipment` -- exact W1 between point clouds without the
                  n x m pairs: a min-cost transshipment on a kNN graph (LEMON's network simplex),
                  certified by c-transforms over all pairs, column generation until the bracket closes.
  ``sliced``      :mod:`.sliced` -- sliced W1, a preview and a lower bound, never reported as exact.
  ``interval``    :mod:`.interval` -- beyond the exact sizes (mixed metric, l2): an interval proven from
                  every row, in seconds (a feasible plan's cost above, exact inside small cells; the
                  one-column marginals' W1 below).
  ``auto``        :func:`plan_w1` (:mod:`.policy`) -- one policy for every caller, with optional budgets;
                  it answers at every size (:func:`choose_method` is its short form).
  ==============  =========================================================================================

* :func:`wasserstein1_rounds` -- the "sparse" method's successive certified brackets, ending exact;
  :func:`wasserstein1_interval_rounds` -- the "interval" method's proven intervals while they narrow.
* :func:`progressive_w1` (:mod:`.progressive`) -- the one policy for showing W1 while it improves: a
  certified bracket soon, the exact value when it is within reach (:func:`progressive_plan` says which, from
  public sizes); :func:`certified_w1` stops at a bracket of a given width.
* :func:`bl_projection` (:mod:`.bl`) -- [HVZ23, Algorithm 2]: the probability vector closest to a
  signed measure in the bounded-Lipschitz distance, as a dense LP or a sparse grid min-cost flow.
* :func:`sparse_utility_loss` (:mod:`.marginals`) -- the largest W1 over s-dimensional marginals.

Conventions: points are used as given, or mapped to the unit cube with ``domain.to_unit`` when a
domain is passed (W1 then in unit-cube units). Dual potentials follow POT's convention: the dual of
the transport LP is :math:`\\max a^\\top u + b^\\top v` subject to :math:`u_i + v_j \\le c(x_i, y_j)`.
The mathematics and the certificates are in docs/transport.md.
"""

from __future__ import annotations

from ._common import METRICS, W1Result
from .bl import BL_DENSE_MAX_M, BLProjectionResult, bl_projection
from .dense import POT_MAX_PAIRS
from .exact1d import w1_1d
from .interval import marginal_lower_bound, plan_upper_bound
from .marginals import marginal_subsets, sparse_utility_loss
from .metrics import GroundMetric, LpMetric, MixedMetric, mixed_cost
from .policy import W1Plan, plan_w1
from .progressive import PLANS, certified_w1, first_w1, plan_metric, progressive_plan, progressive_w1
from .sliced import sliced_w1
from .sparse import check_dual_certificate
from .w1 import (
    AUTO_MIXED_POT_PAIRS,
    AUTO_POT_PAIRS,
    AUTO_SPARSE_MAX_POINTS,
    BUDGET_SPARSE,
    BUDGETS,
    W1_METHODS,
    advice_for,
    choose_method,
    wasserstein1,
    wasserstein1_interval_rounds,
    wasserstein1_rounds,
)

__all__ = [
    "W1Result",
    "BLProjectionResult",
    "wasserstein1",
    "wasserstein1_rounds",
    "wasserstein1_interval_rounds",
    "choose_method",
    "plan_w1",
    "W1Plan",
    "advice_for",
    "plan_upper_bound",
    "marginal_lower_bound",
    "progressive_w1",
    "progressive_plan",
    "plan_metric",
    "certified_w1",
    "first_w1",
    "PLANS",
    "GroundMetric",
    "LpMetric",
    "MixedMetric",
    "mixed_cost",
    "bl_projection",
    "check_dual_certificate",
    "sparse_utility_loss",
    "marginal_subsets",
    "w1_1d",
    "sliced_w1",
    "POT_MAX_PAIRS",
    "AUTO_SPARSE_MAX_POINTS",
    "AUTO_POT_PAIRS",
    "AUTO_MIXED_POT_PAIRS",
    "BUDGET_SPARSE",
    "BL_DENSE_MAX_M",
    "METRICS",
    "W1_METHODS",
    "BUDGETS",
]
