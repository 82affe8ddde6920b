"""The W1 entry point: validation, the choice of a method ("auto" and its budgets), the dispatch.

One policy chooses the method for every caller (the library, the command line, the dashboard's
sub-second budget, the sweeps): :func:`choose_method`. It looks at public sizes only (n, m, d and the
metric), never at the data.
"""

from __future__ import annotations

import time
from typing import Any

from ..validation import check_bool, check_choice, check_int, check_points, param_error
from . import dense, exact1d, flows, sliced, sparse
from ._common import METRICS, W1Result, check_weights
from .dense import POT_MAX_PAIRS

__all__ = ["wasserstein1", "choose_method", "W1_METHODS", "BUDGETS", "AUTO_SPARSE_MAX_POINTS"]

W1_METHODS = ("auto", "exact_1d", "pot", "grid", "sparse", "sliced")
#: What ``method="auto"`` may spend: None (exact wherever an exact method fits the machine),
#: "interactive" (well under a second per solve: a page that recomputes on every click),
#: "preview" (about a tenth of that: many small pictures at once).
BUDGETS = (None, "interactive", "preview")
#: Largest n + m for which "auto" runs the certified sparse method (l2 above the POT limit).
AUTO_SPARSE_MAX_POINTS = 20_000
#: Cells per axis of the grid "auto" uses above the POT limit (l_inf, l1; about a second each).
_AUTO_GRID = {2: 128, 3: 20}
#: The budgets' largest n*m for dense POT and their grids (interval half-width = one cell).
_BUDGET_POT_PAIRS = {"interactive": 1_500_000, "preview": 375_000}
_BUDGET_GRID = {"interactive": {2: 128, 3: 24}, "preview": {2: 64, 3: 12}}
_OWNER = "wasserstein1"

_SOLVERS = {"exact_1d": exact1d.solve, "pot": dense.solve, "grid": flows.solve, "sparse": sparse.solve,
            "sliced": sliced.solve}


def choose_method(n: int, m: int, d: int, metric: str = "linf", *, budget: str | None = None,
                  grid: int | None = None) -> tuple[str, int | None]:
    """The method ``wasserstein1(method="auto")`` uses for these public sizes, and its grid.

    Without a budget: exact 1-D on the line, dense POT up to :data:`POT_MAX_PAIRS` pairs, then the
    certified grid interval (l_inf, l1) or the certified sparse method (l2, up to
    :data:`AUTO_SPARSE_MAX_POINTS` points; refused beyond). With ``budget="interactive"`` or
    ``"preview"``, dense POT only up to a smaller size and a coarser grid beyond, so that one solve
    stays well under a second (interactive) or about a tenth of that (preview) on two cores.

    Returns
    -------
    (method, grid)
        ``grid`` is the cells per axis when the method is "grid", else None.
    """
    if d == 1:
        return "exact_1d", None
    pot_pairs = POT_MAX_PAIRS if budget is None else _BUDGET_POT_PAIRS[budget]
    if n * m <= pot_pairs:
        return "pot", None
    if metric == "l2":
        if budget is None and n + m <= AUTO_SPARSE_MAX_POINTS:
            return "sparse", None
        raise ValueError(
            f"The 'method' parameter of {_OWNER} must name an approximation for l2 at this size: "
            f"exact l2 W1 is available up to n*m = {pot_pairs:.3g} (pot) or n+m = "
            f"{AUTO_SPARSE_MAX_POINTS} (sparse, about a minute). Got 'auto' with n={n}, m={m}; use "
            f"metric='linf' or 'l1' (grid interval) or method='sliced'."
        )
    if grid is None:
        table = _AUTO_GRID if budget is None else _BUDGET_GRID[budget]
        grid = table.get(d, flows.default_grid(d))
    return "grid", grid


def wasserstein1(X: Any, Y: Any, *, domain: Any = None, metric: str = "linf", method: str = "auto",
                 weights_x: Any = None, weights_y: Any = None, grid: int | None = None,
                 budget: str | None = None, return_result: bool = False, n_projections: int = 256,
                 rng: Any = None):
    """Wasserstein-1 distance between two weighted point sets.

    .. math:: W_1(\\mu, \\nu) = \\min_{\\gamma \\ge 0,\\ \\gamma 1 = a,\\ \\gamma^\\top 1 = b}
              \\sum_{i,j} \\gamma_{ij} \\, \\|x_i - y_j\\|

    Parameters
    ----------
    X : array or DataFrame, shape (n, d), n >= 1
    Y : array or DataFrame, shape (m, d), m >= 1, same d
    domain : Domain, optional
        When given both sets are mapped with ``domain.to_unit`` (clamped into the box) and W1 is in
        unit-cube units; otherwise coordinates are used as they are.
    metric : {"linf", "l1", "l2"}, default "linf"
    method : {"auto", "exact_1d", "pot", "grid", "sparse", "sliced"}, default "auto"
        "exact_1d" needs d = 1; "pot" needs n*m <= 2.5e7; "grid" needs points in [0,1]^d (pass
        ``domain`` otherwise) and metric l_inf or l1; "sliced" is an approximation
        (``exact=False``). "auto" follows :func:`choose_method`. See docs/transport.md.
    weights_x : array, shape (n,), optional;  weights_y : array, shape (m,), optional
        Non-negative, finite, positive sum; normalised to probability vectors. Default uniform.
    grid : int in [2, 4096], optional
        Cells per axis of the "grid" method (default: :func:`dpsynth_core.transport.flows.default_grid`).
    budget : {None, "interactive", "preview"}, default None
        What ``method="auto"`` may spend (:func:`choose_method`); ignored by the other methods.
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
    metric = check_choice(metric, "metric", _OWNER, METRICS)
    method = check_choice(method, "method", _OWNER, W1_METHODS)
    if budget not in BUDGETS:
        raise param_error(_OWNER, "budget", "None, 'interactive' or 'preview'", budget)
    return_result = check_bool(return_result, "return_result", _OWNER)
    if domain is not None:
        from ..domain import Domain

        if not isinstance(domain, Domain):
            raise param_error(_OWNER, "domain", "a Domain or None", domain, kind=TypeError)
        X = domain.to_unit(check_points(X, "X", _OWNER, d=domain.d, columns=domain._cols(X)), owner=_OWNER)
        Y = domain.to_unit(check_points(Y, "Y", _OWNER, d=domain.d, columns=domain._cols(Y)), owner=_OWNER)
    else:
        X = check_points(X, "X", _OWNER)
        Y = check_points(Y, "Y", _OWNER, d=X.shape[1])
    n, d = X.shape
    m = Y.shape[0]
    a = check_weights(weights_x, n, "weights_x", _OWNER)
    b = check_weights(weights_y, m, "weights_y", _OWNER)
    if grid is not None:
        grid = check_int(grid, "grid", _OWNER, low=2, high=4096)
    n_projections = check_int(n_projections, "n_projections", _OWNER, low=1, high=100_000)

    chosen = method
    if method == "auto":
        chosen, grid = choose_method(n, m, d, metric, budget=budget, grid=grid)
    options = {"grid": {"grid": grid}, "sliced": {"n_projections": n_projections, "rng": rng}}.get(chosen, {})
    res = _SOLVERS[chosen](X, Y, a, b, metric, _OWNER, **options)
    res = W1Result(res.value, res.lower, res.upper, res.method, res.exact, res.certified, res.iterations,
                   time.perf_counter() - t0, {**res.details, "requested_method": method})
    return res if return_result else float(res.value)
