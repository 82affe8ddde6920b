"""W1 as a sequence of certified results: a bracket soon, the exact value when it is within reach.

One policy for every caller that shows W1 while it improves (the dashboard's live headline runs
:func:`progressive_w1` in a background worker and only schedules it) or that wants a certified bracket
of a given width without waiting for the exact value (:func:`certified_w1`, the Rates sweep's measure).
Which results come is decided from public sizes only (the library's method policy,
:func:`~dpsynth_core.transport.plan_w1` through :func:`~dpsynth_core.transport.choose_method`, never the data):

* the interactive budget is exact (dense POT or exact 1-D): that one exact result ("exact");
* the interactive budget runs the sparse method (d = 2 to 8, up to its point limit): every round of
  :func:`~dpsynth_core.transport.wasserstein1_rounds`, the last one exact ("rounds");
* otherwise the interactive budget's proven interval (the grid's, or for the mixed metric and l2 the
  "interval" method's from every row, given while it narrows: :func:`wasserstein1_interval_rounds`), then the exact value when the unbudgeted policy has an exact method for this
  size ("then_exact": dense POT or the exact sparse method), else nothing more ("bracket_only").

On a domain with categorical columns the policy reads the mixed metric (:func:`plan_metric`). No size is
refused: beyond the exact methods the answer is a proven interval.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from ._common import W1Result
from .w1 import choose_method, wasserstein1, wasserstein1_interval_rounds, wasserstein1_rounds

__all__ = ["PLANS", "plan_metric", "progressive_plan", "progressive_w1", "first_w1", "certified_w1"]

#: What :func:`progressive_w1` yields, by :func:`progressive_plan` (module docstring).
PLANS = ("exact", "rounds", "then_exact", "bracket_only")


def plan_metric(domain: Any, metric: str = "linf") -> str:
    """The metric :func:`~dpsynth_core.transport.choose_method` reads for these inputs: "mixed" on a domain
    with categorical columns (W1 is then taken under the mixed metric), else ``metric``."""
    return "mixed" if getattr(domain, "is_mixed", False) else metric


def progressive_plan(n: int, m: int, d: int, metric: str = "linf") -> str:
    """Which of :data:`PLANS` :func:`progressive_w1` follows for these public sizes; ``metric`` as
    :func:`plan_metric` gives it."""
    fast, _ = choose_method(n, m, d, metric, budget="interactive")
    if fast in ("pot", "exact_1d"):
        return "exact"
    if fast == "sparse":
        return "rounds"
    exact, _ = choose_method(n, m, d, metric)
    return "then_exact" if exact in ("pot", "sparse") else "bracket_only"


def progressive_w1(X: np.ndarray, Y: np.ndarray, domain: Any, metric: str = "linf", *,
                   then_exact: bool = True) -> Iterator[W1Result]:
    """The certified results of :func:`progressive_plan`'s plan for these inputs, in turn, each one at least
    as narrow as the one before; ``metric`` is the one :func:`~dpsynth_core.transport.wasserstein1` takes
    ("linf" on a domain with categorical columns: the mixed metric follows from the domain). With
    ``then_exact=False`` the "then_exact" plan stops at the interactive budget's results (an interactive caller
    that computes the exact value only when asked: it may take many seconds)."""
    plan = progressive_plan(X.shape[0], Y.shape[0], X.shape[1], plan_metric(domain, metric))
    if plan == "rounds":
        yield from wasserstein1_rounds(X, Y, domain=domain, metric=metric)
        return
    fast, _ = choose_method(X.shape[0], Y.shape[0], X.shape[1], plan_metric(domain, metric), budget="interactive")
    if fast == "interval":  # seconds at large sizes: its intervals while they narrow
        yield from wasserstein1_interval_rounds(X, Y, domain=domain, metric=metric)
    else:
        yield wasserstein1(X, Y, domain=domain, metric=metric, budget="interactive", return_result=True)
    if plan == "then_exact" and then_exact:
        yield wasserstein1(X, Y, domain=domain, metric=metric, return_result=True)


def first_w1(X: np.ndarray, Y: np.ndarray, domain: Any, metric: str = "linf") -> W1Result | None:
    """The interactive budget's one certified result for these inputs (exact where the budget is exact, else a
    bracket: the sparse method stopped at a 1% bracket or its time budget, or the grid's interval), within
    about a second on two cores -- what a page shows while :func:`progressive_w1` works on the rest elsewhere.
    None where that first result is the "interval" method's, whose cost grows with the rows."""
    fast, _ = choose_method(X.shape[0], Y.shape[0], X.shape[1], plan_metric(domain, metric), budget="interactive")
    if fast == "interval":
        return None
    return wasserstein1(X, Y, domain=domain, metric=metric, budget="interactive", return_result=True)


def certified_w1(X: np.ndarray, Y: Any, domain: Any, *, target: float = 0.01) -> W1Result | None:
    """W1 exact where the interactive budget is exact (dense POT, exact 1-D), otherwise by the sparse
    transshipment method stopped at a certified bracket at most ``target`` of its upper end wide (or exact,
    when the bracket closed first). None for an empty ``Y`` (no W1)."""
    Y = np.asarray(Y, dtype=float)
    if Y.shape[0] == 0:
        return None
    fast, _ = choose_method(X.shape[0], Y.shape[0], X.shape[1], budget="interactive")
    if fast in ("pot", "exact_1d"):
        return wasserstein1(X, Y, domain=domain, budget="interactive", return_result=True)
    return wasserstein1(X, Y, domain=domain, method="sparse", target_width=target, return_result=True)
