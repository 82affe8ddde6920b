"""W1 on mixed tables: ``wasserstein1(X, Y, domain=dom)`` under the mixed metric (issue 26, item 3).

The reference is built here, independently of the library: the unit coordinates by hand from the
declared bounds, the cost pair by pair from the definition in docs/mixed-data.md
(max(|u_x - u_y|_inf, max_j w_j [c_xj != c_yj])), and POT's ``ot.emd2``. Both exact methods must agree
with it to 1e-9 (relative, plus 1e-12 absolute): "pot" solves the same linear program in float64, and
"sparse" is exact only when its certified bracket closes below 1e-10 relative, so 1e-9 leaves room only
for POT's own rounding.
"""

from __future__ import annotations

import numpy as np
import ot
import pandas as pd
import pytest

from dpsynth_core import Domain, run
from dpsynth_core.datasets import clinic
from dpsynth_core.transport import MixedMetric, mixed_cost, wasserstein1, wasserstein1_rounds
from dpsynth_core.transport.metrics import LpMetric

TOL = 1e-9


def _unit(dom: Domain, E: np.ndarray) -> np.ndarray:
    """Encoded rows -> unit coordinates, by hand: (x - lower) / (upper - lower) on the numeric columns."""
    U = np.array(E, dtype=float)
    for t, j in enumerate(dom.numeric_index):
        U[:, j] = np.clip((U[:, j] - dom.lower[t]) / (dom.upper[t] - dom.lower[t]), 0.0, 1.0)
    return U


def _reference(dom: Domain, EX, EY, a=None, b=None) -> float:
    """Dense W1 with a cost matrix written out pair by pair from the definition, then ot.emd2."""
    UX, UY = _unit(dom, EX), _unit(dom, EY)
    num = [j for j, c in enumerate(dom.names) if c not in dom.categories]
    cat = [(j, dom.weight(c)) for j, c in enumerate(dom.names) if c in dom.categories]
    M = np.zeros((len(UX), len(UY)))
    for i in range(len(UX)):
        for k in range(len(UY)):
            d = max([abs(UX[i, j] - UY[k, j]) for j in num], default=0.0)
            for j, w in cat:
                if UX[i, j] != UY[k, j]:
                    d = max(d, w)
            M[i, k] = d
    a = np.full(len(UX), 1 / len(UX)) if a is None else np.asarray(a, float) / np.sum(a)
    b = np.full(len(UY), 1 / len(UY)) if b is None else np.asarray(b, float) / np.sum(b)
    return float(ot.emd2(a, b, M, numItermax=10**9))


def _close(x: float, ref: float) -> bool:
    return abs(x - ref) <= TOL * ref + 1e-12


ONE = Domain(lower=[0.0, -5.0], upper=[1.0, 5.0], names=["x", "sex", "y"], categories={"sex": ["F", "M"]},
             weights={"sex": 0.3})
TWO = Domain(lower=[18.0], upper=[90.0], names=["region", "age", "smoker"],
             categories={"region": ["north", "south", "east", "west", "centre"], "smoker": ["no", "yes"]},
             weights={"region": 0.25, "smoker": 1.7})


def _rows(dom: Domain, n: int, rng) -> np.ndarray:
    """Encoded rows: numbers on a coarse grid inside the bounds (ties and equal distances are frequent),
    random category indices."""
    E = np.empty((n, dom.d))
    for t, j in enumerate(dom.numeric_index):
        E[:, j] = dom.lower[t] + (dom.upper[t] - dom.lower[t]) * rng.integers(0, 9, n) / 8
    for j, size in zip(dom.categorical_index, dom.category_sizes, strict=True):
        E[:, j] = rng.integers(0, size, n)
    return E


@pytest.mark.parametrize("dom", [ONE, TWO], ids=["one_categorical", "two_categorical"])
@pytest.mark.parametrize("case", ["equal", "unequal_sizes", "weighted", "duplicates"])
@pytest.mark.parametrize("method", ["pot", "sparse", "auto"])
def test_exact_methods_equal_a_dense_reference(dom, case, method):
    rng = np.random.default_rng([len(dom.names), ["equal", "unequal_sizes", "weighted", "duplicates"].index(case)])
    n, m = {"equal": (40, 40), "unequal_sizes": (37, 61), "weighted": (45, 30), "duplicates": (50, 50)}[case]
    EX, EY = _rows(dom, n, rng), _rows(dom, m, rng)
    a = b = None
    if case == "weighted":
        a, b = rng.random(n) + 0.05, rng.integers(1, 6, m).astype(float)
    if case == "duplicates":
        EX[n // 2:] = EX[: n - n // 2]  # half of X repeated, and a copy of Y's first rows inside X
        EX[:5] = EY[:5]
    ref = _reference(dom, EX, EY, a, b)
    res = wasserstein1(EX, EY, domain=dom, method=method, weights_x=a, weights_y=b, return_result=True)
    assert res.exact and res.lower == res.upper == res.value
    assert res.details["metric"] == "mixed"
    assert _close(res.value, ref), (res.value, ref)
    assert ref > 0.01  # a non-trivial instance


def test_dataframes_with_labels_give_the_encoded_arrays_value():
    rng = np.random.default_rng(3)
    EX, EY = _rows(TWO, 30, rng), _rows(TWO, 25, rng)
    FX, FY = TWO.from_unit(TWO.to_unit(EX)), TWO.from_unit(TWO.to_unit(EY))
    FX = FX.assign(region=FX["region"].astype(str))  # text labels, as read from a CSV
    assert isinstance(FX, pd.DataFrame) and set(FX["region"]) <= set(TWO.categories["region"])
    assert wasserstein1(FX, FY, domain=TWO) == pytest.approx(wasserstein1(EX, EY, domain=TWO), abs=1e-15)
    assert _close(wasserstein1(FX, FY, domain=TWO), _reference(TWO, EX, EY))


def test_two_categories_apart_are_at_distance_the_weight():
    """Category indices are labels, not numbers: index 0 against 2 costs w, as 0 against 1 does."""
    dom = Domain([0.0], [1.0], names=("x", "c"), categories={"c": ["a", "b", "c"]}, weights={"c": 0.4})
    assert wasserstein1(np.array([[0.5, 0.0]]), np.array([[0.5, 2.0]]), domain=dom) == pytest.approx(0.4)
    assert wasserstein1(np.array([[0.5, 0.0]]), np.array([[0.5, 1.0]]), domain=dom) == pytest.approx(0.4)
    # a numeric gap larger than the weight wins the max
    assert wasserstein1(np.array([[0.0, 0.0]]), np.array([[0.9, 2.0]]), domain=dom) == pytest.approx(0.9)


def _clinic_pair(n: int, seed: int):
    ds = clinic(n=n)
    rel = run("pmm", ds.X, ds.domain, epsilon=1.0, rng=seed)
    return ds.X, ds.domain.read(rel.synthetic), ds.domain


def test_sparse_agrees_with_dense_on_a_few_thousand_rows():
    X, Y, dom = _clinic_pair(1500, 1)
    assert len(X) + len(Y) > 2500
    dense = wasserstein1(X, Y, domain=dom, method="pot", return_result=True)
    sparse = wasserstein1(X, Y, domain=dom, method="sparse", return_result=True)
    assert dense.exact and sparse.exact and sparse.certified
    assert _close(sparse.value, dense.value), (sparse.value, dense.value)


def test_every_bracket_contains_the_dense_value_and_an_early_stop_is_not_exact():
    X, Y, dom = _clinic_pair(600, 2)
    ref = _reference(dom, X, Y)
    rounds = list(wasserstein1_rounds(X, Y, domain=dom))
    assert len(rounds) >= 2  # the first solve is not already optimal: the brackets are exercised
    for r in rounds:
        assert r.lower <= ref * (1 + 1e-12) and r.upper >= ref * (1 - 1e-12), (r.lower, ref, r.upper)
    assert rounds[-1].exact and _close(rounds[-1].value, ref)
    assert not rounds[0].exact and rounds[0].lower < rounds[0].upper
    early = wasserstein1(X, Y, domain=dom, method="sparse", target_width=0.5, return_result=True)
    assert early.lower <= ref * (1 + 1e-12) and early.upper >= ref * (1 - 1e-12)
    assert early.exact == (early.lower == early.upper)


def test_the_embedding_is_an_isometry_including_many_categories():
    rng = np.random.default_rng(5)
    w = np.array([0.0, 0.7, 0.0, 2.5, 1.0])
    sizes = np.array([0, 1000, 0, 3, 1])
    P = np.column_stack([rng.random(200), rng.integers(0, 1000, 200), rng.random(200), rng.integers(0, 3, 200),
                         np.zeros(200)])
    Q = P[rng.permutation(200)]
    Q[:50, 1] = rng.integers(0, 1000, 50)
    metric = MixedMetric(w, sizes)
    emb = LpMetric("linf").pairwise(metric.embed(P), metric.embed(Q))
    assert metric.embed(P).shape[1] == 2 + 10 + 2 + 1  # ceil(log2 c) digits per categorical column
    np.testing.assert_array_equal(emb, mixed_cost(P, Q, w))
    np.testing.assert_array_equal(metric.cost(P, Q), np.diag(mixed_cost(P, Q, w)))


def test_a_numeric_domain_is_unchanged():
    """No categorical column: the same number, bit for bit, as W1 on the unit coordinates without a domain."""
    rng = np.random.default_rng(7)
    dom = Domain(lower=[0.0, 10.0], upper=[2.0, 30.0])
    X, Y = dom.lower_array + rng.random((300, 2)) * dom.widths, dom.lower_array + rng.random((250, 2)) * dom.widths
    # the domain only maps the points (wasserstein1's _prepare), before the method runs; the grid method at 64
    # cells per axis (its default, 256, is a flow on 65,536 cells: about 3 s per call, whatever the points)
    for method, kw in (("pot", {}), ("sparse", {}), ("grid", {"grid": 64})):
        with_dom = wasserstein1(X, Y, domain=dom, method=method, return_result=True, **kw)
        plain = wasserstein1(dom.to_unit(X), dom.to_unit(Y), method=method, return_result=True, **kw)
        assert with_dom.value == plain.value and with_dom.details["metric"] == "linf"


@pytest.mark.parametrize("kwargs, word", [({"metric": "l1"}, "metric"), ({"method": "grid"}, "method"),
                                          ({"method": "sliced"}, "method"), ({"method": "exact_1d"}, "method")])
def test_refusals_name_the_parameter(kwargs, word):
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match=f"'{word}' parameter of wasserstein1"):
        wasserstein1(_rows(ONE, 10, rng), _rows(ONE, 10, rng), domain=ONE, **kwargs)


def test_an_undeclared_category_is_refused_with_row_column_and_value():
    rng = np.random.default_rng(0)
    FX = ONE.from_unit(ONE.to_unit(_rows(ONE, 10, rng))).assign(sex=lambda f: f["sex"].astype(str))
    FX.loc[4, "sex"] = "X"
    with pytest.raises(ValueError, match=r"'X' parameter of wasserstein1.*'sex'.*row 4"):
        wasserstein1(FX, _rows(ONE, 10, rng), domain=ONE)
    with pytest.raises(ValueError, match=r"'Y' parameter of wasserstein1.*category indices"):
        wasserstein1(_rows(ONE, 10, rng), np.array([[0.5, 2.0, 0.0]]), domain=ONE)


def test_beyond_the_exact_sizes_auto_gives_the_proven_interval_never_a_refusal():
    from dpsynth_core.transport import AUTO_SPARSE_MAX_POINTS, choose_method, plan_w1

    assert choose_method(10, 10, 3, "mixed") == ("pot", None)
    assert choose_method(3000, 3000, 3, "mixed") == ("sparse", None)
    plan = plan_w1(AUTO_SPARSE_MAX_POINTS // 2, AUTO_SPARSE_MAX_POINTS // 2 + 1, 3, "mixed")
    assert plan.method == "interval" and not plan.exact and "categorical columns have no grid" in plan.reason
    assert plan_w1(200_000, 200_000, 5, "mixed").method == "interval"  # the readers' largest tables


def test_a_small_table_against_a_large_release_goes_to_dense_pot_without_a_budget():
    """Measured (benchmarks/results/mixed_w1_unbalanced.json): with at most 1000 rows on one side dense POT was
    faster than the sparse method up to 1.2e7 pairs; with 2000 it was not, and the budgets are unchanged."""
    from dpsynth_core.transport import plan_w1

    assert plan_w1(400, 18_097, 6, "mixed").method == "pot"  # the clinic table against its release at ε = 0.001
    assert plan_w1(18_097, 400, 6, "mixed").method == "pot"
    assert plan_w1(1000, 12_000, 6, "mixed").method == "pot"
    assert plan_w1(1000, 12_001, 6, "mixed").method == "sparse"  # past the measured pairs
    assert plan_w1(2000, 8000, 6, "mixed").method == "sparse"  # both sides above the small side
    assert plan_w1(400, 18_097, 2, "linf").method == "sparse"  # numeric data: the sparse method was faster there
    assert plan_w1(400, 18_097, 6, "mixed", budget="interactive").method == "interval"


@pytest.mark.parametrize("budget", ["interactive", "preview"])
def test_budgets_send_mixed_data_to_the_sparse_method_up_to_the_numeric_limit(budget):
    """Within a budget the mixed metric has the numeric limits: the budget's dense size, then the sparse method
    up to the budget's ``max_points`` (never more points than numeric data in d = 2, 3), the proven interval
    beyond (there is no grid for categories)."""
    from dpsynth_core.transport import BUDGET_SPARSE, choose_method

    top = BUDGET_SPARSE[budget]["max_points"]
    at, above = (top // 2, top - top // 2), (top // 2 + 1, top - top // 2)
    assert choose_method(*at, 2, budget=budget)[0] == "sparse" == choose_method(*at, 3, "mixed", budget=budget)[0]
    assert choose_method(*above, 2, budget=budget)[0] == "grid"
    assert choose_method(*above, 3, "mixed", budget=budget) == ("interval", None)
    assert choose_method(*above, 3, "mixed")[0] in ("pot", "sparse")  # unbudgeted: exact
