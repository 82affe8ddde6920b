"""The W1 entry point: validation, the choice of a method ("auto" and its budgets), the dispatch.

One policy chooses the method for every caller (the library, the command line, the dashboard's
sub-second budget, the sweeps): :func:`choose_method`. It looks at public sizes only (n, m, d and the
metric), never at the data.

On a domain with categorical columns W1 is taken under the mixed metric of docs/mixed-data.md
(:class:`.metrics.MixedMetric`): exactly by dense POT on the mixed cost matrix up to
:data:`AUTO_MIXED_POT_PAIRS` pairs, by the certified sparse transshipment beyond.
"""

from __future__ import annotations

import time
from typing import Any, Iterator

import numpy as np

from ..domain import Domain
from ..validation import check_bool, check_choice, check_int, check_points, param_error
from . import dense, exact1d, flows, sliced, sparse
from ._common import METRICS, W1Result, check_weights
from .dense import POT_MAX_PAIRS
from .metrics import MixedMetric
from .transshipment import w1_rounds

__all__ = ["wasserstein1", "wasserstein1_rounds", "choose_method", "W1_METHODS", "BUDGETS", "BUDGET_SPARSE",
           "AUTO_SPARSE_MAX_POINTS", "AUTO_POT_PAIRS", "AUTO_MIXED_POT_PAIRS", "MIXED_METHODS"]

W1_METHODS = ("auto", "exact_1d", "pot", "grid", "sparse", "sliced")
#: What ``method="auto"`` may spend: None (exact wherever an exact method fits the machine),
#: "interactive" (well under a second per solve: a page that recomputes on every click),
#: "preview" (about a tenth of that: many small pictures at once).
BUDGETS = (None, "interactive", "preview")
#: Largest n*m for which "auto" (no budget) runs dense POT in d = 2 to 8: above it the sparse method is
#: faster (measured crossover, benchmarks/results/exact_w1.json: with the warm solves even at n = m = 1000,
#: 0.93-0.99x, and 0.3-0.7x at 1500; it was 2000 before them; in d = 4 to 8, exact_w1_dims.json: 0.5-4x at
#: n = m = 1000, about 0.1 s either way, 0.10-1.07x at 2500).
AUTO_POT_PAIRS = 1_500_000
#: Largest n*m for which "auto" (no budget) runs dense POT under the mixed metric (categorical columns); above
#: it the sparse method (measured crossover, benchmarks/results/mixed_w1.json: 1.17x at n = m = 1000,
#: 0.38-0.58x at 2000).
AUTO_MIXED_POT_PAIRS = 1_500_000
#: The methods that take categorical columns (the mixed metric).
MIXED_METHODS = ("auto", "pot", "sparse")
#: Largest n + m for which "auto" runs the exact sparse method (d = 2 to 8: about a minute at the top on a
#: hard instance, seconds on synthetic-like data; benchmarks/results/exact_w1.json, exact_w1_dims.json).
AUTO_SPARSE_MAX_POINTS = 40_000
#: Dimensions in which the sparse method was measured against dense POT: d = 2, 3
#: (benchmarks/results/exact_w1.json) and d = 4 to 8 (exact_w1_dims.json: 0.10-1.07x dense POT's time from
#: n = m = 2500, exact within 40 s up to 20 000 + 20 000 points, where the grid's interval was 1-20 times as
#: wide as W1 and its point value 0.07-1.5 times W1). Above 8 "auto" is unchanged: dense POT up to its
#: own limit, then the grid.
_SPARSE_DIMS = tuple(range(2, 9))
#: Cells per axis of the grid "auto" uses above the exact methods' limits (l_inf, l1; about a second each).
_AUTO_GRID = {2: 128, 3: 20}
#: The budgets' largest n*m for dense POT and their grids (interval half-width = one cell).
_BUDGET_POT_PAIRS = {"interactive": 1_500_000, "preview": 375_000}
_BUDGET_GRID = {"interactive": {2: 128, 3: 24}, "preview": {2: 64, 3: 12}}
#: The budgets' sparse runs: up to n + m points, stopped at a bracket of relative width ``target`` or
#: when another round would end after ``max_seconds`` (a certified bracket, exact when it closed).
BUDGET_SPARSE = {"interactive": {"max_points": 12_000, "max_seconds": 0.6, "target": 0.01},
                 "preview": {"max_points": 3_000, "max_seconds": 0.08, "target": 0.05}}
_OWNER = "wasserstein1"

_SOLVERS = {"exact_1d": exact1d.solve, "pot": dense.solve, "grid": flows.solve, "sparse": sparse.solve,
            "sliced": sliced.solve}


def choose_method(n: int, m: int, d: int, metric: str = "linf", *, budget: str | None = None,
                  grid: int | None = None) -> tuple[str, int | None]:
    """The method ``wasserstein1(method="auto")`` uses for these public sizes, and its grid.

    Without a budget: exact 1-D on the line; in d = 2 to 8 dense POT up to :data:`AUTO_POT_PAIRS` pairs
    (the measured crossover), the exact sparse method up to :data:`AUTO_SPARSE_MAX_POINTS` points, then
    the certified grid interval (l_inf, l1); in higher dimensions dense POT up to :data:`POT_MAX_PAIRS`,
    then the grid. l2 has no grid: the sparse method up to 20 000 points in any dimension, refused
    beyond. With ``budget="interactive"`` or ``"preview"``: dense POT only up to a smaller size, then (d
    = 2 to 8) the sparse method stopped at a certified bracket (:data:`BUDGET_SPARSE`: relative width 1%
    or 5%, or when the next round would end after 0.6 s or 0.08 s), then a coarser grid, so that one
    call stays well under a second (interactive) or about a tenth of that (preview) on two cores.

    ``metric="mixed"`` (categorical columns): dense POT up to :data:`AUTO_MIXED_POT_PAIRS` pairs, then the
    exact sparse method up to :data:`AUTO_SPARSE_MAX_POINTS` points; with a budget the same limits as
    numeric data (the budget's dense size, then the sparse method stopped as above up to the budget's
    ``max_points``); refused beyond (there is no grid for categories).

    Returns
    -------
    (method, grid)
        ``grid`` is the cells per axis when the method is "grid", else None.
    """
    if metric == "mixed":
        return _choose_mixed(n, m, budget), None
    if d == 1:
        return "exact_1d", None
    sparse_ok = d in _SPARSE_DIMS
    if budget is None:
        pot_pairs = AUTO_POT_PAIRS if sparse_ok else POT_MAX_PAIRS
        sparse_max = AUTO_SPARSE_MAX_POINTS if sparse_ok else 0
    else:
        pot_pairs = _BUDGET_POT_PAIRS[budget]
        sparse_max = BUDGET_SPARSE[budget]["max_points"] if sparse_ok else 0
    if n * m <= pot_pairs:
        return "pot", None
    if n + m <= sparse_max:
        return "sparse", None
    if metric == "l2":
        if budget is None and n + m <= 20_000:
            return "sparse", None
        raise ValueError(
            f"The 'method' parameter of {_OWNER} must name an approximation for l2 at this size: "
            f"exact l2 W1 is available up to n*m = {pot_pairs:.3g} (pot) or n+m = "
            f"{max(sparse_max, 20_000 if budget is None else 0)} (sparse). Got 'auto' with n={n}, m={m}"
            f"{'' if budget is None else f' and budget={budget!r}'}; use metric='linf' or 'l1' (grid "
            f"interval) or method='sliced'."
        )
    if grid is None:
        table = _AUTO_GRID if budget is None else _BUDGET_GRID[budget]
        grid = table.get(d, flows.default_grid(d))
    return "grid", grid


def _choose_mixed(n: int, m: int, budget: str | None) -> str:
    pot_pairs = AUTO_MIXED_POT_PAIRS if budget is None else _BUDGET_POT_PAIRS[budget]
    sparse_max = AUTO_SPARSE_MAX_POINTS if budget is None else BUDGET_SPARSE[budget]["max_points"]
    if n * m <= pot_pairs:
        return "pot"
    if n + m <= sparse_max:
        return "sparse"
    if budget is not None:
        raise ValueError(
            f"The 'budget' parameter of {_OWNER} must be None for {n} + {m} rows on a domain with categorical "
            f"columns: within budget={budget!r} the mixed metric has dense transport up to n*m = {pot_pairs:.3g} and "
            f"the sparse method up to n+m = {sparse_max} (as for numeric data) and no grid for categories. Got "
            f"{budget!r}; pass budget=None (exact up to n+m = {AUTO_SPARSE_MAX_POINTS}, it may take seconds), or "
            f"method='sparse' with max_seconds for a certified bracket.")
    raise ValueError(
        f"The 'X' parameter of {_OWNER} must have at most {AUTO_SPARSE_MAX_POINTS} rows together with 'Y' on a "
        f"domain with categorical columns: W1 under the mixed metric is computed exactly (dense transport up to "
        f"n*m = {pot_pairs:.3g}, the certified sparse method up to n+m = {AUTO_SPARSE_MAX_POINTS}). Got n={n}, "
        f"m={m}; pass a random subsample of the rows, or method='sparse' with max_seconds for a certified bracket.")


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
    method : {"auto", "exact_1d", "pot", "grid", "sparse", "sliced"}, default "auto"
        "exact_1d" needs d = 1; "pot" needs n*m <= 2.5e7; "grid" needs points in [0,1]^d (pass
        ``domain`` otherwise) and metric l_inf or l1; "sparse" (a min-cost transshipment on a kNN
        graph, certified over all pairs) is exact when its bracket closes; "sliced" is an
        approximation (``exact=False``). "auto" follows :func:`choose_method`. See docs/transport.md.
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
        An uncertified number is never reported as exact (``W1Result.exact``, ``lower``, ``upper``).
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

    chosen = method
    sparse_opts = {"max_seconds": max_seconds, "target": target_width}
    if method == "auto":
        chosen, grid = choose_method(n, m, d, metric_name, budget=budget, grid=grid)
        if chosen == "sparse" and budget is not None:
            spec = BUDGET_SPARSE[budget]
            sparse_opts = {"max_seconds": spec["max_seconds"] if max_seconds is None else max_seconds,
                           "target": spec["target"] if target_width is None else target_width}
    options = {"grid": {"grid": grid}, "sliced": {"n_projections": n_projections, "rng": rng},
               "sparse": sparse_opts}.get(chosen, {})
    res = _SOLVERS[chosen](X, Y, a, b, metric, _OWNER, **options)
    res = W1Result(res.value, res.lower, res.upper, res.method, res.exact, res.certified, res.iterations,
                   time.perf_counter() - t0, {**res.details, "requested_method": method, "metric": metric_name})
    return res if return_result else float(res.value)


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
