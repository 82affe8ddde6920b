"""The "interval" W1 method (dpsynth_core.transport.interval): a proven interval from every row at any size,
which ``method="auto"`` uses beyond the exact sizes for the mixed metric and l2 (no grid there).

Each bound is checked against dense POT on instances small enough to solve exactly, with cells far smaller
than the default so that every part of the plan (exact cells, the excess moved between cells) is exercised.
The tolerance, 1e-9 relative plus 1e-12, is POT's own rounding of the reference (a bound that is wrong is
off by far more: the interval's looseness is a factor, measured in benchmarks/bench_transport.py --interval)."""

from __future__ import annotations

import numpy as np
import ot
import pandas as pd
import pytest

from dpsynth_core import Domain
from dpsynth_core import transport as tr
from dpsynth_core.transport import interval, wasserstein1
from dpsynth_core.transport.metrics import LpMetric, MixedMetric

TOL = (1e-9, 1e-12)


def _within(lower: float, ref: float, upper: float) -> bool:
    rel, abs_ = TOL
    return lower <= ref * (1 + rel) + abs_ and ref <= upper * (1 + rel) + abs_


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("metric", ["linf", "l1", "l2"])
def test_the_interval_contains_w1_for_every_lp_metric(seed, metric):
    rng = np.random.default_rng(seed)
    n, m, d = int(rng.integers(3, 250)), int(rng.integers(3, 250)), int(rng.integers(1, 4))
    X, Y = rng.random((n, d)) ** rng.uniform(0.5, 3.0), rng.random((m, d))
    a, b = rng.random(n), rng.random(m)
    a, b = a / a.sum(), b / b.sum()
    ref = ot.emd2(a, b, LpMetric(metric).pairwise(X, Y), numItermax=10**8)
    upper, details = interval.plan_upper_bound(X, Y, a, b, LpMetric(metric), cell_rows=int(rng.integers(2, 40)))
    lower = interval.marginal_lower_bound(X, Y, a, b, LpMetric(metric))
    assert _within(lower, ref, upper), (lower, ref, upper, details)
    assert details["cells"] >= 1 and upper <= LpMetric(metric).bound(X, Y) * (1 + 1e-9)


@pytest.mark.parametrize("seed", range(12))
def test_the_interval_contains_w1_under_the_mixed_metric_with_any_weights(seed):
    """Light weights (below the numeric diameter) included: the bounds never use the weights' size."""
    rng = np.random.default_rng(100 + seed)
    n, m = int(rng.integers(3, 250)), int(rng.integers(3, 250))

    def rows(k):
        return np.column_stack([rng.random((k, 2)), rng.integers(0, 3, k), rng.integers(0, 2, k)]).astype(float)

    X, Y = rows(n), rows(m)
    gm = MixedMetric([0.0, 0.0, rng.uniform(0.1, 2.0), rng.uniform(0.1, 2.0)], [0, 0, 3, 2])
    a, b = np.full(n, 1 / n), np.full(m, 1 / m)
    ref = ot.emd2(a, b, gm.pairwise(X, Y), numItermax=10**8)
    upper, _ = interval.plan_upper_bound(X, Y, a, b, gm, cell_rows=int(rng.integers(2, 40)))
    lower = interval.marginal_lower_bound(X, Y, a, b, gm)
    assert _within(lower, ref, upper), (lower, ref, upper)


def _mixed(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"age": rng.uniform(18, 90, n).round(), "bmi": rng.normal(27, 4, n).clip(15, 45),
                         "sex": rng.choice(["F", "M"], n), "region": rng.choice(["n", "e", "s"], n)})


DOM = Domain([0, 10], [120, 60], names=["age", "bmi", "sex", "region"],
             categories={"sex": ["F", "M"], "region": ["n", "e", "s"]})


def test_auto_beyond_the_exact_sizes_answers_with_a_proven_interval_and_says_what_gives_the_exact_value(
        monkeypatch):
    """The exact limits are lowered here so that the reference stays computable: the same path a table of
    200,000 rows takes (benchmarks/bench_limits.py times that one)."""
    real, syn = _mixed(700, 1), _mixed(650, 2)
    ref = wasserstein1(real, syn, domain=DOM, method="pot")
    monkeypatch.setattr(tr.policy, "AUTO_MIXED_POT_PAIRS", 1000)
    monkeypatch.setattr(tr.policy, "AUTO_MIXED_UNBALANCED_PAIRS", 1000)
    monkeypatch.setattr(tr.policy, "AUTO_SPARSE_MAX_POINTS", 1000)
    res = wasserstein1(real, syn, domain=DOM, return_result=True)
    assert res.method == "interval" and res.certified and not res.exact
    assert _within(res.lower, ref, res.upper) and res.value == res.upper
    assert "categorical columns have no grid" in res.details["plan"]
    assert [a.param for a in res.advice] == ["method", "max_seconds"] and res.advice[0].value == "sparse"
    assert res.advice[0].python() == "method='sparse'"


def test_a_table_against_itself_is_exactly_zero_by_the_interval():
    df = _mixed(300, 3)
    res = wasserstein1(df, df, domain=DOM, method="interval", return_result=True)
    assert res.exact and res.value == res.lower == res.upper and res.upper < 1e-15 and res.advice == ()


@pytest.mark.parametrize("seed", range(6))
def test_the_bounds_given_while_the_cells_are_solved_contain_w1_and_only_narrow(seed):
    """Every bound before the last one counts a cell not yet solved at its largest distance: still the cost
    of a feasible plan, so each contains W1; they never widen, and the last is plan_upper_bound's."""
    rng = np.random.default_rng(200 + seed)
    n, m = int(rng.integers(50, 250)), int(rng.integers(50, 250))
    X, Y = rng.random((n, 3)) ** rng.uniform(0.5, 3.0), rng.random((m, 3))
    a, b = np.full(n, 1 / n), np.full(m, 1 / m)
    gm = LpMetric("linf")
    ref = ot.emd2(a, b, gm.pairwise(X, Y), numItermax=10**8)
    cell_rows = int(rng.integers(4, 30))
    bounds = list(interval.plan_upper_bounds(X, Y, a, b, gm, cell_rows=cell_rows, steps=5))
    uppers = [u for u, _ in bounds]
    assert all(_within(0.0, ref, u) for u in uppers), (ref, uppers)
    assert all(later <= earlier for earlier, later in zip(uppers, uppers[1:], strict=False))
    cells = bounds[-1][1]["cells"]
    assert [d["cells_solved"] for _, d in bounds] == sorted({round(k * cells / 5) for k in range(6)})
    assert uppers[-1] == interval.plan_upper_bound(X, Y, a, b, gm, cell_rows=cell_rows)[0]
    assert uppers[0] > uppers[-1]  # the cells' own transports are what narrows it


def test_the_interval_rounds_end_with_the_interval_method_and_say_how_far_they_are(monkeypatch):
    real, syn = _mixed(700, 1), _mixed(650, 2)
    ref = wasserstein1(real, syn, domain=DOM, method="pot")
    monkeypatch.setattr(interval, "CELL_ROWS", (64, 64))  # cells as small as at 200,000 rows: many of them
    rounds = list(tr.wasserstein1_interval_rounds(real, syn, domain=DOM))
    last = wasserstein1(real, syn, domain=DOM, method="interval", return_result=True)
    assert len(rounds) > 2 and rounds[-1].value == last.value and rounds[-1].lower == last.lower
    for r in rounds:
        assert r.certified and r.method == "interval" and _within(r.lower, ref, r.upper)
        assert [a.param for a in r.advice] == ["method", "max_seconds"]
    progress = [r.details["cells_solved"] / r.details["cells"] for r in rounds]
    assert progress[0] == 0.0 and progress[-1] == 1.0 and progress == sorted(progress)
    # the live headline's policy streams them where the interactive budget chooses the interval method
    monkeypatch.setattr(tr.policy, "BUDGET_POT_PAIRS", {"interactive": 1000, "preview": 1000})
    monkeypatch.setattr(tr.policy, "BUDGET_SPARSE", {k: {**v, "max_points": 100}
                                                     for k, v in tr.policy.BUDGET_SPARSE.items()})
    live = list(tr.progressive_w1(DOM.read(real, name="X", owner="t"), DOM.read(syn, name="Y", owner="t"), DOM))
    assert [r.method for r in live[:len(rounds)]] == ["interval"] * len(rounds) and live[-1].exact
    assert all(_within(r.lower, ref, r.upper) for r in live)


def test_policy_never_plans_a_grid_whose_arcs_do_not_fit():
    """In 10 or more dimensions even 2 cells per axis make more than MAX_GRID_ARCS king's-move arcs: "auto" with
    a budget then plans the proven interval, and an explicit grid is refused before anything is allocated."""
    from dpsynth_core.transport import flows
    from dpsynth_core.transport.policy import plan_w1

    assert flows.grid_arc_count(2, 9, "linf") <= flows.MAX_GRID_ARCS < flows.grid_arc_count(2, 10, "linf")
    for d in (10, 18, 40):
        for budget in ("interactive", "preview"):
            assert plan_w1(5000, 5000, d, budget=budget).method == "interval", (d, budget)
    assert plan_w1(5000, 5000, 9, budget="interactive").method == "grid"
    X = np.random.default_rng(0).random((300, 18))
    with pytest.raises(ValueError, match="arcs .*use 'interval'"):
        wasserstein1(X, X[:200], method="grid")
