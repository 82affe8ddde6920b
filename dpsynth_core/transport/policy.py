"""The one W1 method policy: :func:`plan_w1` turns public sizes into a :class:`W1Plan`.

Every caller that lets the library choose how to compute W1 -- ``wasserstein1(method="auto")``, the
command line's ``dpsynth w1`` and ``dpsynth report``, the report's ceilings, the dashboard's headline
(which runs the plan in a background job), the sweeps -- asks this function. It reads public sizes only
(the rows n and m, the dimension d, the metric and a time budget), never the data, and it answers for
every size the readers accept: an exact method where one fits, otherwise an interval that is proven to
contain W1 (the grid's, or the "interval" method's from every row). It never refuses a size.

The measured crossovers behind the constants are in docs/transport.md, "Choosing a method".
"""

from __future__ import annotations

from dataclasses import dataclass

from . import flows
from .dense import POT_MAX_PAIRS

__all__ = ["W1Plan", "plan_w1", "BUDGETS", "BUDGET_SPARSE", "AUTO_POT_PAIRS", "AUTO_MIXED_POT_PAIRS",
           "AUTO_MIXED_SMALL_SIDE", "AUTO_MIXED_UNBALANCED_PAIRS", "AUTO_SPARSE_MAX_POINTS", "L2_SPARSE_MAX_POINTS"]

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
#: Under the mixed metric "auto" (no budget) also runs dense POT when one side has at most
#: AUTO_MIXED_SMALL_SIDE rows and n*m is at most AUTO_MIXED_UNBALANCED_PAIRS: a small table against a
#: much larger release (a noisy size at a small epsilon). There the sparse method was 1.2-3.8x slower than dense
#: POT on 9 of 10 measured instances (n = 400 or 1000 against m = 2000 to 18,000; 0.73x on the tenth, half
#: a second either way), while with 2000 rows on the small side it was faster on samples
#: (benchmarks/results/mixed_w1_unbalanced.json).
AUTO_MIXED_SMALL_SIDE = 1000
AUTO_MIXED_UNBALANCED_PAIRS = 12_000_000
#: Largest n + m for which "auto" runs the exact sparse method (d = 2 to 8 and the mixed metric: about a
#: minute at the top on a hard instance, seconds on synthetic-like data; benchmarks/results/exact_w1.json,
#: exact_w1_dims.json).
AUTO_SPARSE_MAX_POINTS = 40_000
#: l2 has no grid: the exact sparse method up to this many points in any dimension (no budget).
L2_SPARSE_MAX_POINTS = 20_000
#: Dimensions in which the sparse method was measured against dense POT: d = 2, 3
#: (benchmarks/results/exact_w1.json) and d = 4 to 8 (exact_w1_dims.json: 0.10-1.07x dense POT's time from
#: n = m = 2500, exact within 40 s up to 20 000 + 20 000 points, where the grid's interval was 1-20 times as
#: wide as W1 and its point value 0.07-1.5 times W1). Above 8 "auto" is unchanged: dense POT up to its
#: own limit, then the grid.
SPARSE_DIMS = tuple(range(2, 9))
#: Cells per axis of the grid "auto" uses above the exact methods' limits (l_inf, l1; about a second each).
AUTO_GRID = {2: 128, 3: 20}
#: The budgets' largest n*m for dense POT and their grids (interval half-width = one cell).
BUDGET_POT_PAIRS = {"interactive": 1_500_000, "preview": 375_000}
BUDGET_GRID = {"interactive": {2: 128, 3: 24}, "preview": {2: 64, 3: 12}}
#: The budgets' sparse runs: up to n + m points, stopped at a bracket of relative width ``target`` or
#: when another round would end after ``max_seconds`` (a certified bracket, exact when it closed).
BUDGET_SPARSE = {"interactive": {"max_points": 12_000, "max_seconds": 0.6, "target": 0.01},
                 "preview": {"max_points": 3_000, "max_seconds": 0.08, "target": 0.05}}


@dataclass(frozen=True)
class W1Plan:
    """How W1 will be computed at these sizes (decided before any data is read).

    Attributes
    ----------
    method : str
        "exact_1d", "pot", "sparse", "grid" or "interval".
    exact : bool
        True when the method's answer is W1 itself (a sparse run with a time budget may still stop at a
        certified bracket: then False).
    grid : int or None
        Cells per axis of the "grid" method.
    max_seconds, target : float or None
        The sparse run's time budget and target relative width.
    reason : str
        Why, in plain words (no parameter names: each front end words its own options).
    """

    method: str
    exact: bool
    grid: int | None = None
    max_seconds: float | None = None
    target: float | None = None
    reason: str = ""

    def solver_options(self) -> dict:
        """The keyword arguments of the chosen solver (transport.w1 hands them on)."""
        if self.method == "grid":
            return {"grid": self.grid}
        if self.method == "sparse":
            return {"max_seconds": self.max_seconds, "target": self.target}
        return {}


def plan_w1(n: int, m: int, d: int, metric: str = "linf", *, budget: str | None = None,
            grid: int | None = None) -> W1Plan:
    """The method ``wasserstein1(method="auto")`` uses for these public sizes: THE method policy.

    Without a budget: exact 1-D on the line; in d = 2 to 8 (and under the mixed metric) dense POT up to
    :data:`AUTO_POT_PAIRS` pairs (the measured crossover), then the exact sparse method up to
    :data:`AUTO_SPARSE_MAX_POINTS` points; in higher dimensions dense POT up to its own limit. Beyond:
    the certified grid interval for l_inf and l1 on numeric data; for the mixed metric and l2 (which have
    no grid) the "interval" method (:mod:`.interval`): a proven interval from every row, its upper end the
    cost of a feasible plan (docs/transport.md, "A proven interval at any size"). With
    ``budget="interactive"`` or ``"preview"``: dense POT only up to a smaller size, then (d = 2 to 8, mixed)
    the sparse method stopped at a certified bracket (:data:`BUDGET_SPARSE`), then a coarser grid or the
    interval method, so that one call stays well under a second (interactive) or about a tenth of that
    (preview) on two cores -- except the interval method, whose cost grows with the rows (19.5 s at
    200,000 + 200,000 rows on a loaded 2-core machine, benchmarks/results/interval_w1.json): a page runs it
    in the background.
    """
    if budget not in BUDGETS:
        raise ValueError(f"budget must be one of {BUDGETS}, not {budget!r}")
    mixed = metric == "mixed"
    if d == 1 and not mixed:
        return W1Plan("exact_1d", True, reason="exact on the line at any size")
    sparse_ok = mixed or d in SPARSE_DIMS
    if budget is None:
        pot_pairs = (AUTO_MIXED_POT_PAIRS if mixed else AUTO_POT_PAIRS) if sparse_ok else POT_MAX_PAIRS
        sparse_max = AUTO_SPARSE_MAX_POINTS if sparse_ok else 0
        if metric == "l2":
            sparse_max = max(sparse_max, L2_SPARSE_MAX_POINTS)
        spec = {"max_seconds": None, "target": None}
    else:
        pot_pairs = BUDGET_POT_PAIRS[budget]
        sparse_max = BUDGET_SPARSE[budget]["max_points"] if sparse_ok else 0
        spec = {k: BUDGET_SPARSE[budget][k] for k in ("max_seconds", "target")}
    if n * m <= pot_pairs or (mixed and budget is None and min(n, m) <= AUTO_MIXED_SMALL_SIDE
                              and n * m <= AUTO_MIXED_UNBALANCED_PAIRS):
        return W1Plan("pot", True, reason=f"exact: dense transport of {n} x {m} pairs")
    if n + m <= sparse_max:
        exact = budget is None
        return W1Plan("sparse", exact, **spec, reason="exact: the sparse method" if exact else
                      "the sparse method, stopped at a certified bracket within the time budget")
    if mixed or metric == "l2":
        what = "categorical columns have" if mixed else "the l2 metric has"
        return W1Plan("interval", False,
                      reason=f"{n} + {m} rows are beyond the exact methods' sizes and {what} no grid: an interval "
                             f"proven from every row (a feasible plan's cost above, the columns' own W1 below)")
    if grid is None:
        table = AUTO_GRID if budget is None else BUDGET_GRID[budget]
        grid = table.get(d, flows.default_grid(d))
    arcs = flows.grid_arc_count(grid, d, metric)
    if arcs > flows.MAX_GRID_ARCS:
        return W1Plan("interval", False,
                      reason=f"{n} + {m} rows are beyond the exact methods' sizes and a grid in {d} dimensions "
                             f"would have {arcs:.3g} arcs: an interval proven from every row")
    return W1Plan("grid", False, grid=grid,
                  reason=f"{n} + {m} rows are beyond the exact methods' sizes: the certified interval of a grid of "
                         f"{grid} cells per axis")
