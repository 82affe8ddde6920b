"""The W1 entry point: validation, the choice of a method ("auto" and its budgets), the dispatch.

One policy chooses the method for every caller (the library, the command line, the dashboard's
sub-second budget, the sweeps): :func:`~dpsynth_core.transport.policy.plan_w1` (:func:`choose_method` is
its short form). It looks at public sizes only (n, m, d and the metric), never at the data, and answers
at every size: exact where an exact method fits, else a certified interval.

On a domain with categorical columns W1 is taken under the mixed metric of docs/mixed-data.md
(:class:`.metrics.MixedMetric`): exactly by dense POT on the mixed cost matrix up to
:data:`AUTO_MIXED_POT_PAIRS` pairs, by the certified sparse transshipment up to
:data:`AUTO_SPARSE_MAX_POINTS` points, by the "interval" method's proven interval beyond.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any, Iterator

import numpy as np

from ..domain import Domain
from ..validation import Advice, check_bool, check_choice, check_int, check_points, param_error
from . import dense, exact1d, flows, interval, sliced, sparse
from ._common import METRICS, W1Result, check_weights
from .metrics import MixedMetric
from .policy import (
    AUTO_MIXED_POT_PAIRS,
    AUTO_POT_PAIRS,
    AUTO_SPARSE_MAX_POINTS,
    BUDGET_SPARSE,
    BUDGETS,
    W1Plan,
    plan_w1,
)
from .transshipment import w1_rounds

__all__ = ["wasserstein1", "wasserstein1_rounds", "wasserstein1_interval_rounds", "choose_method", "plan_w1", "W1Plan", "W1_METHODS", "BUDGETS",
           "BUDGET_SPARSE", "AUTO_SPARSE_MAX_POINTS", "AUTO_POT_PAIRS", "AUTO_MIXED_POT_PAIRS", "MIXED_METHODS",
           "advice_for"]

W1_METHODS = ("auto", "exact_1d", "pot", "grid", "sparse", "sliced", "interval")
#: The methods that take categorical columns (the mixed metric).
MIXED_METHODS = ("auto", "pot", "sparse", "interval")
_OWNER = "wasserstein1"

_SOLVERS = {"exact_1d": exact1d.solve, "pot": dense.solve, "grid": flows.solve, "sparse": sparse.solve,
            "sliced": sliced.solve, "interval": interval.solve}


def choose_method(n: int, m: int, d: int, metric: str = "linf", *, budget: str | None = None,
                  grid: int | None = None) -> tuple[str, int | None]:
    """The method ``wasserstein1(method="auto")`` uses for these public sizes, and its grid: the method
    and grid of :func:`~dpsynth_core.transport.policy.plan_w1` (the one policy; its docstring has the rules).

    Returns
    -------
    (method, grid)
        ``grid`` is the cells per axis when the method is "grid", else None.
    """
    plan = plan_w1(n, m, d, metric, budget=budget, grid=grid)
    return plan.method, plan.grid


def advice_for(res: W1Result) -> tuple[Advice, ...]:
    """What a caller may change to get the exact W1 when ``res`` is not exact (empty when it is): words
    for no interface in particular (each front end says them in its own terms)."""
    if res.exact or res.method == "exact_1d":
        return ()
    if res.method in ("interval", "grid", "sliced"):
        return (Advice("method", "sparse", "the exact W1 over every row, certified; it may take many minutes and "
                                           "much memory at this size"),
                Advice("max_seconds", None, "with the sparse method, stop after that many seconds at a certified "
                                            "interval over every row"))
    if res.method == "sparse":
        return (Advice("max_seconds", None, "a longer time budget (or none) narrows the interval to the exact "
                                            "value"),)
    return ()


def wasserstein1(X: Any, Y: Any, *, domain: Any = None, metric: str = "linf", method: str = "auto",
                 weights_x: Any = None, weights_y: Any = None, grid: int | None = None,
                 budget: str | None = None, return_result: bool = False, n_projections: int = 256,
                 rng: Any = None, max_seconds: float | None = None, target_width: float | None = None):
    """Wasserstein-1 distance between two weighted point sets.

    .. math:: W_1(\\mu, \\nu) = \\min_{\\gamma \\ge 0,\\ \\gamma 1 = a,\\ \\gamma^\\top 1 = b}
              \\sum_{i,j} \\gamma_{ij} \\, \\|x_i - y_j\\|

    Parameters
    ----------
    X : array or DataFrame, shape (n, d), n >= 1
    Y : array or DataFrame, shape (m, d), m >= 1, same d
    domain : Domain, optional
        When given both sets are read with ``domain.read`` and mapped with ``domain.to_unit`` (clamped
        into the box), and W1 is in unit-cube units; otherwise coordinates are used as they are. With
        categorical columns (``domain.is_mixed``) X and Y may be DataFrames with the declared categories as
        text or encoded arrays, and W1 is taken under the mixed metric of docs/mixed-data.md,
        :math:`\\max(\\|u_x - u_y\\|_\\infty, \\max_j w_j [c_{x,j} \\ne c_{y,j}])` (the domain's weights
        w_j): methods "auto", "pot" and "sparse" only, metric "linf".
    metric : {"linf", "l1", "l2"}, default "linf"
    method : {"auto", "exact_1d", "pot", "grid", "sparse", "sliced", "interval"}, default "auto"
        "exact_1d" needs d = 1; "pot" needs n*m <= 2.5e7; "grid" needs points in [0,1]^d (pass
        ``domain`` otherwise) and metric l_inf or l1; "sparse" (a min-cost transshipment on a kNN
        graph, certified over all pairs) is exact when its bracket closes; "sliced" is an
        approximation (``exact=False``); "interval" proves an interval from every row at any size (its
        value is the upper end: :mod:`.interval`). "auto" follows
        :func:`~dpsynth_core.transport.policy.plan_w1`: it answers at every size. See docs/transport.md.
    weights_x : array, shape (n,), optional;  weights_y : array, shape (m,), optional
        Non-negative, finite, positive sum; normalised to probability vectors. Default uniform.
    grid : int in [2, 4096], optional
        Cells per axis of the "grid" method (default: :func:`dpsynth_core.transport.flows.default_grid`).
    budget : {None, "interactive", "preview"}, default None
        What ``method="auto"`` may spend (:func:`choose_method`); ignored by the other methods.
    max_seconds : float > 0, optional
        "sparse" only: stop when another round would probably end after this many seconds and return
        the certified bracket of the last round (``exact=False`` unless it closed). Default: no limit.
    target_width : float in (0, 1), optional
        "sparse" only: stop as soon as the certified bracket's width is at most this fraction of its
        upper end. Default: run until exact (width 1e-10).
    return_result : bool, default False
        Return a :class:`W1Result` instead of a float.
    n_projections : int in [1, 10^5], default 256
        Directions of the "sliced" method.
    rng : Generator, int or None
        Randomness of the "sliced" directions only.

    Returns
    -------
    float or W1Result
        An uncertified number is never reported as exact (``W1Result.exact``, ``lower``, ``upper``). A result
        that is not exact carries ``advice``: what to change for the exact value (:func:`advice_for`).
    """
    t0 = time.perf_counter()
    check_choice(metric, "metric", _OWNER, METRICS)
    method = check_choice(method, "method", _OWNER, W1_METHODS)
    if budget not in BUDGETS:
        raise param_error(_OWNER, "budget", "None, 'interactive' or 'preview'", budget)
    return_result = check_bool(return_result, "return_result", _OWNER)
    X, Y, metric, a, b = _prepare(X, Y, domain, metric, weights_x, weights_y, _OWNER)
    n, d = X.shape
    m = Y.shape[0]
    metric_name = metric.name if isinstance(metric, MixedMetric) else metric
    if metric_name == "mixed" and method not in MIXED_METHODS:
        raise param_error(_OWNER, "method", f"one of {MIXED_METHODS} on a domain with categorical columns (the "
                                            "mixed metric has no grid, slices or 1-D formula)", method)
    if grid is not None:
        grid = check_int(grid, "grid", _OWNER, low=2, high=4096)
    n_projections = check_int(n_projections, "n_projections", _OWNER, low=1, high=100_000)
    max_seconds = _check_positive(max_seconds, "max_seconds", "a number of seconds > 0 or None")
    target_width = _check_positive(target_width, "target_width", "a relative width in (0, 1) or None", high=1.0)

    plan = _plan(method, n, m, d, metric_name, budget, grid, max_seconds, target_width)
    options = {"sliced": {"n_projections": n_projections, "rng": rng}}.get(plan.method, plan.solver_options())
    res = _SOLVERS[plan.method](X, Y, a, b, metric, _OWNER, **options)
    details = {**res.details, "requested_method": method, "metric": metric_name,
               **({"plan": plan.reason} if method == "auto" else {})}
    res = dataclasses.replace(res, seconds=time.perf_counter() - t0, details=details)
    res = dataclasses.replace(res, advice=advice_for(res))
    return res if return_result else float(res.value)


def _plan(method: str, n: int, m: int, d: int, metric: str, budget: str | None, grid: int | None,
          max_seconds: float | None, target: float | None) -> W1Plan:
    """The plan of this call: "auto" asks :func:`plan_w1`; an explicit method runs as asked. The caller's
    ``max_seconds`` and ``target_width`` override the plan's."""
    if method == "auto":
        plan = plan_w1(n, m, d, metric, budget=budget, grid=grid)
    else:
        plan = W1Plan(method, method in ("exact_1d", "pot"), grid=grid)
    return dataclasses.replace(plan, max_seconds=max_seconds if max_seconds is not None else plan.max_seconds,
                               target=target if target is not None else plan.target)


def _check_positive(x: Any, name: str, what: str, high: float | None = None) -> float | None:
    if x is None:
        return None
    if isinstance(x, bool) or not isinstance(x, (int, float, np.integer, np.floating)):
        raise param_error(_OWNER, name, what, x, kind=TypeError)
    x = float(x)
    if not (np.isfinite(x) and x > 0 and (high is None or x < high)):
        raise param_error(_OWNER, name, what, x)
    return x


def _prepare(X, Y, domain, metric, weights_x, weights_y, owner):
    """Validated points (mapped to the unit cube with a domain), the metric (its name, or the
    :class:`.metrics.MixedMetric` of a domain with categorical columns) and probability vectors."""
    metric = check_choice(metric, "metric", owner, METRICS)
    if domain is not None:
        if not isinstance(domain, Domain):
            raise param_error(owner, "domain", "a Domain or None", domain, kind=TypeError)
        X = domain.to_unit(domain.read(X, name="X", owner=owner), owner=owner)
        Y = domain.to_unit(domain.read(Y, name="Y", owner=owner), owner=owner)
        if domain.is_mixed:
            if metric != "linf":
                raise param_error(owner, "metric", "'linf' on a domain with categorical columns (the mixed metric: "
                                                   "l_inf on the numeric unit coordinates, w_j between two different "
                                                   "categories of column j)", metric)
            metric = MixedMetric.from_domain(domain)
    else:
        X = check_points(X, "X", owner)
        Y = check_points(Y, "Y", owner, d=X.shape[1])
    a = check_weights(weights_x, X.shape[0], "weights_x", owner)
    b = check_weights(weights_y, Y.shape[0], "weights_y", owner)
    return X, Y, metric, a, b


def wasserstein1_rounds(X: Any, Y: Any, *, domain: Any = None, metric: str = "linf", weights_x: Any = None,
                        weights_y: Any = None) -> Iterator[W1Result]:
    """Successive certified brackets of W1 by the "sparse" method, ending with the exact value.

    A generator: every round of the transshipment solver (docs/transport.md, "Exact W1 by sparse
    transshipment") yields a :class:`W1Result` whose ``[lower, upper]`` is proven; the last one is
    exact and certified (``exact=True``, ``lower == value == upper``) unless the solver stopped without
    closing the bracket (then ``exact=False`` and ``details["stopped"]`` says why). A caller with a time
    budget shows the first bracket narrow enough and keeps iterating (or stops) for the exact value.
    Parameters as in :func:`wasserstein1`.
    """
    owner = "wasserstein1_rounds"
    X, Y, metric, a, b = _prepare(X, Y, domain, metric, weights_x, weights_y, owner)
    t0 = time.perf_counter()
    hist: list[dict] = []
    for r in w1_rounds(X, Y, a, b, metric, double_transform=True, start="coarse"):
        hist.append({"round": r.round, "lower": r.lower, "upper": r.upper, "arcs": r.arcs, "added": r.added,
                     "solve_s": r.solve_s, "check_s": r.check_s, "seconds": r.seconds})
        yield sparse.round_result(r, list(hist), time.perf_counter() - t0)


def wasserstein1_interval_rounds(X: Any, Y: Any, *, domain: Any = None, metric: str = "linf",
                                 weights_x: Any = None, weights_y: Any = None) -> Iterator[W1Result]:
    """Successive proven intervals of the "interval" method, each at least as narrow as the one before, the
    last one ``wasserstein1(method="interval")``'s.

    A generator: the first interval comes once the rows are in their cells (the columns' own W1 below, the
    plan with every cell's share moved at the cell's largest distance above), then narrower ones as the
    cells' exact transports are solved (:func:`.interval.plan_upper_bounds`); ``details["cells_solved"]`` of
    ``details["cells"]`` say how far it is, for a front end's progress. Every result carries ``advice``
    (:func:`advice_for`). Parameters as in :func:`wasserstein1`."""
    owner = "wasserstein1_interval_rounds"
    X, Y, metric, a, b = _prepare(X, Y, domain, metric, weights_x, weights_y, owner)
    metric_name = metric.name if isinstance(metric, MixedMetric) else metric
    t0 = time.perf_counter()
    for res in interval.solve_rounds(X, Y, a, b, metric, owner):
        res = dataclasses.replace(res, seconds=time.perf_counter() - t0,
                                  details={**res.details, "requested_method": "interval", "metric": metric_name})
        yield dataclasses.replace(res, advice=advice_for(res))
