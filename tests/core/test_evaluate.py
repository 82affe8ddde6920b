"""The owner's report of what a release preserves (dpsynth_core.evaluate, dpsynth_core.downstream, `dpsynth report`).

* Statistics against values computed by hand on tiny tables: histograms on the public grid, means,
  population standard deviations, quantiles, the column's W1, TV distances, Pearson's r, Cramér's V,
  the correlation ratio and grouped means.
* The W1 ceilings hold on real releases: PMM on a mixed table (W1 from a dense POT solve on a mixed
  cost matrix built here) and on a numeric one (W1 computed by the report); a W1 that is too small is
  flagged as a contradiction (the check can fail).
* Train on synthetic / test on real: with synthetic = real it equals train on real; the baselines by hand.
* Hostile inputs, resource caps, the export refusal, the views (frames, JSON) and the command line.
"""

from __future__ import annotations

import json
import math
import sys

import numpy as np
import ot
import pandas as pd
import pytest
from scipy.spatial.distance import cdist

from dpsynth_core import Domain, evaluate, export, run
from dpsynth_core.cli import main
from dpsynth_core.downstream import train_synthetic_test_real
from dpsynth_core.transport import W1Result, wasserstein1

CATS = {"sex": ["F", "M"], "region": ["north", "south", "east"]}


def _mixed_domain(**kw) -> Domain:
    return Domain(lower=[18, 15], upper=[90, 45], names=["age", "bmi"], categories=CATS, **kw)


def _mixed_table(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    sex = rng.choice(["F", "M"], n, p=[0.6, 0.4])
    age = np.where(sex == "F", rng.normal(40, 8, n), rng.normal(60, 8, n)).clip(18, 90)
    return pd.DataFrame({"age": age, "sex": sex, "bmi": rng.normal(27, 4, n).clip(15, 45),
                         "region": rng.choice(["north", "south", "east"], n, p=[0.5, 0.3, 0.2])})


# ------------------------------------------------------------------------------ by hand
def test_numeric_statistics_by_hand():
    dom = Domain([0, 0], [4, 4], names=["a", "b"])
    real = pd.DataFrame({"a": [1.0, 2, 3, 4], "b": [2.0, 1, 4, 3]})
    syn = pd.DataFrame({"a": [0.0, 0, 4, 4], "b": [0.0, 4, 0, 4]})
    rep = evaluate.report(real, syn, dom, bins=4, pair_bins=2, quantiles=(0.25, 0.5), w1=None)
    a = rep.column("a")
    assert a.edges.tolist() == [0, 1, 2, 3, 4]  # the public grid, not the data's range
    assert a.real_hist.tolist() == [0, 0.25, 0.25, 0.5]  # 4 falls in the last (closed) bin
    assert a.synthetic_hist.tolist() == [0.5, 0, 0, 0.5]
    assert a.tv == pytest.approx(0.5)  # (0.5 + 0.25 + 0.25 + 0) / 2
    assert (a.real_mean, a.synthetic_mean, a.mean_diff) == pytest.approx((2.5, 2.0, -0.5))
    assert (a.real_std, a.synthetic_std) == pytest.approx((math.sqrt(1.25), 2.0))  # population sd
    assert a.real_quantiles.tolist() == pytest.approx([1.75, 2.5])  # numpy's linear rule
    assert a.synthetic_quantiles.tolist() == pytest.approx([0.0, 2.0])
    assert a.w1 == pytest.approx(1.0)  # sorted couplings: |1-0| + |2-0| + |3-4| + |4-4| over 4
    ab = rep.pair("a", "b")
    assert ab.kind == "numeric-numeric" and ab.association == "pearson"
    assert ab.real_association == pytest.approx(0.6)  # centred dot 3 over sqrt(5 * 5)
    assert ab.synthetic_association == pytest.approx(0.0)
    assert ab.real_table.tolist() == [[0, 0.25], [0.25, 0.5]]
    assert ab.synthetic_table.tolist() == [[0.25, 0.25], [0.25, 0.25]]
    assert ab.tv == pytest.approx(0.25)
    assert ab.row_labels == ("[0, 2)", "[2, 4]")
    me = rep.marginal_errors
    assert me.two_way_max == pytest.approx(0.25) and me.two_way_worst == ("a", "b")
    assert me.one_way_mean == pytest.approx((a.tv + rep.column("b").tv) / 2)


def test_categorical_statistics_by_hand():
    dom = Domain([0], [100], names=["age"], categories={"sex": ["F", "M", "X"], "region": ["n", "s"]})
    real = pd.DataFrame({"age": [20.0, 40, 60, 80], "sex": ["F", "F", "M", "M"], "region": ["n", "n", "s", "n"]})
    syn = pd.DataFrame({"age": [10.0, 30, 50, 70], "sex": ["F", "F", "F", "F"], "region": ["n", "s", "s", "n"]})
    rep = evaluate.report(real, syn, dom, w1=None)
    sex = rep.column("sex")
    assert sex.categories == ("F", "M", "X")  # the declared list: X is in no table, M not in the synthetic one
    assert sex.real_shares.tolist() == [0.5, 0.5, 0.0] and sex.synthetic_shares.tolist() == [1.0, 0.0, 0.0]
    assert sex.tv == pytest.approx(0.5)
    sr = rep.pair("sex", "region")
    assert sr.association == "cramers_v" and sr.real_table.shape == (3, 2)
    # present categories: F: (0.5, 0), M: (0.25, 0.25); margins (0.5, 0.5) x (0.75, 0.25); phi^2 = 1/3, k = 2
    assert sr.real_association == pytest.approx(math.sqrt(1 / 3))
    assert sr.synthetic_association is None  # one sex present: undefined, and said so
    assert any("cramers_v of ('sex', 'region') is undefined in the synthetic data" in n for n in rep.notes)
    # TV of the 2-way tables: real F,n .5  M,n .25  M,s .25; synthetic F,n .5  F,s .5
    assert sr.tv == pytest.approx(0.5 * (0 + 0.5 + 0.25 + 0.25))
    age_sex = rep.pair("age", "sex")
    assert age_sex.kind == "numeric-categorical" and age_sex.association == "correlation_ratio"
    # real: F mean 30, M mean 70, overall 50: between 400, variance 500
    assert age_sex.real_association == pytest.approx(math.sqrt(0.8))
    assert age_sex.synthetic_association == pytest.approx(0.0)  # one group: no variance between groups
    assert age_sex.group_means["F"] == pytest.approx((30.0, 40.0))
    assert age_sex.group_means["M"] == (70.0, None) and age_sex.group_means["X"] == (None, None)


# ------------------------------------------------------------------------------ the W1 ceilings
def _mixed_w1(dom: Domain, A, B) -> float:
    """W1 under the mixed metric by a dense POT solve on a cost matrix built here (docs/mixed-data.md)."""
    UA, UB = dom.to_unit(A), dom.to_unit(B)
    num, cat = dom.numeric_index, dom.categorical_index
    cost = cdist(UA[:, num], UB[:, num], metric="chebyshev")
    for j, w in zip(cat, dom.weights, strict=True):
        cost = np.maximum(cost, w * (UA[:, j][:, None] != UB[:, j][None, :]))
    a, b = np.full(len(UA), 1 / len(UA)), np.full(len(UB), 1 / len(UB))
    return float(ot.emd2(a, b, cost, numItermax=10**8))


@pytest.mark.parametrize("epsilon, seed", [(0.3, 1), (3.0, 2)])
def test_w1_ceilings_hold_on_a_mixed_pmm_release(epsilon, seed):
    dom = _mixed_domain(weights={"region": 0.5})
    df = _mixed_table(500, seed)
    rel = run("pmm", df, dom, epsilon=epsilon, rng=seed)
    w1 = _mixed_w1(dom, df, rel.synthetic)
    rep = evaluate.report(df, rel.synthetic, dom, w1=w1)
    assert rep.w1 == w1 and rep.w1_source == "given"
    # 3 per numeric column (mean, its W1, sd), 2 per categorical one, 1 per categorical pair
    assert len(rep.guarantees) == 3 * 2 + 2 * 2 + 1
    assert all(g.holds is True for g in rep.guarantees), rep.to_frame("guarantees")
    assert not rep.contradictions
    region = [g for g in rep.guarantees if g.columns == ("region",)]
    assert all(g.ceiling == pytest.approx(min(1.0, w1 / 0.5)) for g in region)  # the weight enters the ceiling
    age_mean = next(g for g in rep.guarantees if g.statistic == "mean" and g.columns == ("age",))
    assert age_mean.ceiling == pytest.approx(min(w1, 1.0) * 72)  # W1 x (upper - lower), in years


def test_w1_ceilings_hold_on_a_numeric_release_with_w1_computed():
    rng = np.random.default_rng(3)
    X = rng.random((400, 2)) * [10, 2]
    dom = Domain([0, 0], [10, 2], names=["a", "b"])
    rel = run("pmm", X, dom, epsilon=1.0, rng=3)
    rep = evaluate.report(X, rel.synthetic, dom)
    assert rep.w1 == pytest.approx(wasserstein1(X, rel.synthetic, domain=dom, method="pot"), rel=1e-9)
    assert rep.w1_source == "computed by pot (exact)"
    assert len(rep.guarantees) == 6 and all(g.holds is True for g in rep.guarantees)


def test_the_column_w1_meets_its_ceiling_on_the_line():
    """In 1-D the column's W1 IS the W1: measured equals ceiling, and the check accepts it."""
    rng = np.random.default_rng(4)
    dom = Domain([0], [5], names=["x"])
    rep = evaluate.report(rng.random((300, 1)) * 5, rng.random((200, 1)) ** 2 * 5, dom)
    g = next(g for g in rep.guarantees if g.statistic == "W1 of the column")
    assert rep.w1_source == "computed by exact_1d (exact)"
    assert g.measured == pytest.approx(g.ceiling, rel=1e-12) and g.holds is True


def test_a_w1_too_small_is_flagged_as_a_contradiction():
    dom = Domain([0], [10], names=["x"])
    real, syn = np.zeros((5, 1)), np.full((5, 1), 10.0)  # W1 = 1 (the whole unit interval)
    good = evaluate.report(real, syn, dom, w1=1.0)
    assert all(g.holds for g in good.guarantees) and not good.contradictions
    bad = evaluate.report(real, syn, dom, w1=0.5)
    assert {g.statistic for g in bad.contradictions} == {"mean", "W1 of the column"}  # 10 > 0.5 x 10
    assert bad.notes[-1].startswith("CONTRADICTION: 2 measured difference(s)")


def test_w1_inputs():
    dom = Domain([0], [1], names=["x"])
    X = np.linspace(0, 1, 20)[:, None]
    res = W1Result(0.1, 0.05, 0.2, "grid", False, True)
    rep = evaluate.report(X, X, dom, w1=res)
    assert rep.w1 == 0.2 and "upper end" in rep.w1_source  # the proven upper end, never the estimate
    assert evaluate.report(X, X, dom, w1=None).guarantees[0].ceiling is None
    with pytest.raises(ValueError, match="finite upper bound"):
        evaluate.report(X, X, dom, w1=W1Result(0.1, 0.1, math.inf, "sliced", False, False))
    for bad in (-0.1, math.nan, "exact"):
        with pytest.raises(ValueError, match="The 'w1' parameter of evaluate.report"):
            evaluate.report(X, X, dom, w1=bad)
    mixed = _mixed_domain()
    df = _mixed_table(30, 0)
    rep = evaluate.report(df, df, mixed)  # "auto": the mixed metric's W1 of a table to itself
    assert rep.w1 == 0.0 and rep.w1_source == "computed by pot under the mixed metric (exact)"


@pytest.mark.parametrize("epsilon, seed", [(0.3, 3), (3.0, 4)])
def test_auto_w1_on_a_mixed_table_is_the_mixed_metrics_and_its_ceilings_hold(epsilon, seed):
    dom = _mixed_domain(weights={"region": 0.5})
    df = _mixed_table(400, seed)
    rel = run("pmm", df, dom, epsilon=epsilon, rng=seed)
    rep = evaluate.report(df, rel.synthetic, dom)
    ref = _mixed_w1(dom, df, rel.synthetic)  # dense POT on a cost built in this file
    assert rep.w1 == pytest.approx(ref, rel=1e-9, abs=1e-12) and "under the mixed metric (exact)" in rep.w1_source
    assert all(g.holds is True for g in rep.guarantees) and not rep.contradictions


def test_auto_w1_on_a_mixed_table_too_large_to_solve_exactly_gives_the_proven_upper_end(monkeypatch):
    """Beyond the exact sizes (lowered here) the ceilings use the upper end of the proven interval: looser,
    never wrong."""
    from dpsynth_core import transport

    monkeypatch.setattr(transport.policy, "AUTO_SPARSE_MAX_POINTS", 40)
    monkeypatch.setattr(transport.policy, "AUTO_MIXED_POT_PAIRS", 100)
    monkeypatch.setattr(transport.policy, "AUTO_MIXED_UNBALANCED_PAIRS", 100)
    dom = _mixed_domain()
    real, syn = _mixed_table(60, 0), _mixed_table(50, 1)
    rep = evaluate.report(real, syn, dom)
    exact = _mixed_w1(dom, real, syn)
    assert rep.w1 >= exact * (1 - 1e-12) and "computed by interval under the mixed metric (certified interval" in \
        rep.w1_source
    assert all(g.holds is True for g in rep.guarantees)


# ------------------------------------------------------------------------------ downstream
@pytest.mark.parametrize("target", ["sex", "age"])
def test_train_on_synthetic_equals_train_on_real_when_synthetic_is_real(target):
    dom = _mixed_domain()
    df, holdout = _mixed_table(400, 5), _mixed_table(200, 6)
    rep = evaluate.report(df, df, dom, target=target, holdout=holdout, w1=None, pairs=())
    ds = rep.downstream
    assert ds.test == "holdout" and ds.n_test == 200 and ds.n_train_real == ds.n_train_synthetic == 400
    assert ds.synthetic == ds.real  # the same model, seed and rows
    assert ds.features == tuple(c for c in dom.names if c != target)
    if target == "sex":
        assert ds.task == "classification" and ds.metrics == ("accuracy", "balanced_accuracy")
        # the majority class of the training rows ("F"), scored on the holdout by hand
        assert ds.baseline.accuracy == pytest.approx(float((holdout["sex"] == "F").mean()))
        assert ds.baseline.balanced_accuracy == pytest.approx(0.5)
        # age separates the sexes (means 40 and 60, sd 8): far above the baseline (observed about 0.9)
        assert ds.real.accuracy > ds.baseline.accuracy + 0.2
    else:
        y, mean = holdout["age"].to_numpy(), df["age"].mean()
        assert ds.task == "regression"
        assert ds.baseline.r2 == pytest.approx(1 - ((y - mean) ** 2).sum() / ((y - y.mean()) ** 2).sum())
        assert ds.real.r2 > 0.3  # age depends on sex (explained share of variance about 0.6)


def test_downstream_split_and_a_synthetic_target_with_one_class():
    dom = _mixed_domain()
    df = _mixed_table(100, 7)
    syn = df.assign(sex="F")  # a category absent from the synthetic data
    ds = train_synthetic_test_real(df, syn, dom, "sex", seed=3)
    assert ds.test == "split" and ds.n_test == 30 and ds.n_train_real == 70
    assert any("one class of 'sex' only ('F')" in n for n in ds.notes)
    assert ds.synthetic.balanced_accuracy == pytest.approx(0.5)  # the constant "F": recall 1 and 0
    again = train_synthetic_test_real(df, syn, dom, "sex", seed=3)
    assert again == ds  # the seed fixes the split and the models


def test_downstream_hostile_inputs(monkeypatch):
    dom = _mixed_domain()
    df = _mixed_table(50, 8)
    with pytest.raises(ValueError, match=r"The 'target' parameter of evaluate.report must be a column of the domain "
                                         r"\('age', 'bmi', 'sex', 'region'\). Got 'income'"):
        evaluate.report(df, df, dom, target="income")
    with pytest.raises(TypeError, match="'target' parameter"):
        evaluate.report(df, df, dom, target=3)
    with pytest.raises(ValueError, match="at least 10 rows"):
        evaluate.report(df.head(5), df, dom, target="sex")
    const = df.assign(bmi=27.0)
    ds = train_synthetic_test_real(const, const, dom, "bmi")  # a constant target: R² undefined, said so
    assert ds.real.r2 is None and any("constant in the real test rows" in n for n in ds.notes)
    json.dumps(ds.to_dict(), allow_nan=False)
    for name in ("sklearn", "sklearn.ensemble", "sklearn.metrics"):
        monkeypatch.setitem(sys.modules, name, None)
    with pytest.raises(ImportError, match=r"pip install 'dpsynth\[ml\]'"):
        evaluate.report(df, df, dom, target="sex")
    assert evaluate.report(df, df, dom).downstream is None  # without a target scikit-learn is not needed


# ------------------------------------------------------------------------------ hostile inputs and caps
def test_constant_columns_and_absent_categories():
    dom = _mixed_domain()
    real = _mixed_table(60, 9).assign(bmi=30.0)
    syn = _mixed_table(60, 10).assign(region="north")
    rep = evaluate.report(real, syn, dom, w1=None)
    bmi = rep.column("bmi")
    assert bmi.real_std == 0.0 and bmi.real_quantiles.tolist() == [30.0] * 5
    assert rep.pair("age", "bmi").real_association is None
    assert rep.pair("bmi", "sex").real_association is None  # η needs variance
    assert any("pearson of ('age', 'bmi') is undefined in the real data (a constant column)" in n for n in rep.notes)
    region = rep.column("region")
    assert region.synthetic_shares.tolist() == [1.0, 0.0, 0.0]
    assert rep.pair("age", "region").group_means["east"][1] is None
    json.loads(rep.to_json())  # None, never NaN, in the JSON


def test_undeclared_values_and_wrong_tables_are_refused():
    dom = _mixed_domain()
    df = _mixed_table(20, 11)
    bad = df.copy()
    bad.loc[4, "region"] = "west"
    with pytest.raises(ValueError, match=r"'synthetic' parameter .* column 'region' .* Got 'west' at row 4"):
        evaluate.report(df, bad, dom)
    with pytest.raises(ValueError, match="must have the columns"):
        evaluate.report(df.drop(columns="sex"), df, dom)
    with pytest.raises(TypeError, match="'domain' parameter of evaluate.report must be a Domain"):
        evaluate.report(df, df, {"age": (18, 90)})


@pytest.mark.parametrize("kwargs, match", [
    ({"bins": 0}, "'bins' parameter"),
    ({"bins": evaluate.MAX_BINS + 1}, "'bins' parameter"),
    ({"pair_bins": evaluate.MAX_PAIR_BINS + 1}, "'pair_bins' parameter"),
    ({"quantiles": (0.5, 1.0)}, "'quantiles' parameter"),
    ({"quantiles": [0.5] * (evaluate.MAX_QUANTILES + 1)}, "at most 99 floats"),
    ({"pairs": [("age", "age")]}, "'pairs' parameter"),
    ({"pairs": [("age", "sex"), ("sex", "age")]}, "each once"),
    ({"pairs": [("age", "height")]}, "Got 'height'"),
    ({"test_size": 1.0}, "'test_size' parameter"),
    ({"holdout": _mixed_table(5, 0)}, "'holdout' parameter of evaluate.report must be given with a target"),
])
def test_bad_settings_are_refused(kwargs, match):
    df = _mixed_table(20, 12)
    with pytest.raises((ValueError, TypeError), match=match) as info:
        evaluate.report(df, df, _mixed_domain(), w1=None, **kwargs)
    assert str(info.value).startswith("The '")


def test_resources_are_bounded_before_allocation():
    labels = [f"c{i}" for i in range(400)]
    dom = Domain([0], [1], names=["x"], categories={"p": labels, "q": labels})
    X = np.zeros((3, 3))  # encoded rows: x, p, q
    with pytest.raises(ValueError, match=r"at most 100000 cells .* leave \('p', 'q'\) out .*400 x 400 = 160000"):
        evaluate.report(X, X, dom, w1=None)
    rep = evaluate.report(X, X, dom, w1=None, pairs=[("x", "p")])  # the pair left out: fine
    assert [p.columns for p in rep.pairs] == [("x", "p")] and rep.pairs[0].real_table.shape == (10, 400)
    wide = Domain.unit(evaluate.MAX_COLUMNS + 1)
    with pytest.raises(ValueError, match="at most 100 columns"):
        evaluate.report(np.zeros((2, wide.d)), np.zeros((2, wide.d)), wide)


# ------------------------------------------------------------------------------ owner view, views
def test_a_report_is_an_owner_view_that_export_refuses():
    dom = _mixed_domain()
    df = _mixed_table(40, 13)
    rep = evaluate.report(df, df, dom, w1=0.0)
    assert rep.label == evaluate.OWNER_LABEL and "OWNER VIEW" in rep.label and "NOT differentially private" in rep.label
    assert rep.is_dp is False and not hasattr(rep, "public") and not hasattr(rep, "public_json")
    out = rep.to_dict()
    assert out["label"] == evaluate.OWNER_LABEL and out["is_dp"] is False
    for fn in (export.public_report, export.report_json, export.synthetic_csv):
        with pytest.raises(TypeError, match="must be a Release .* Got a Report: .* never part of an export"):
            fn(rep)
    # a release still goes through, and the shared fields say what each is
    rel = run("pmm", df, dom, epsilon=1.0, rng=0)
    assert export.public_report(rel)["is_dp"] is True


def test_frames_and_json():
    dom = _mixed_domain()
    df, syn = _mixed_table(80, 14), _mixed_table(70, 15)
    rep = evaluate.report(df, syn, dom, w1=0.3, target="sex", bins=8)
    cols = rep.to_frame("columns")
    assert cols["column"].tolist() == list(dom.names) and "real_q0.5" in cols
    dist = rep.to_frame("distributions")
    assert len(dist) == 8 * 2 + 2 + 3
    assert dist.groupby("column")["real"].sum().to_numpy() == pytest.approx(1.0)
    assert len(rep.to_frame("pairs")) == 6 and len(rep.to_frame("guarantees")) == len(rep.guarantees)
    assert rep.to_frame("downstream")["trained_on"].tolist() == ["synthetic"] * 2 + ["real"] * 2 + ["baseline"] * 2
    with pytest.raises(ValueError, match="'table' parameter of Report.to_frame"):
        rep.to_frame("everything")
    data = json.loads(rep.to_json())
    assert data["columns"][2]["categories"] == CATS["sex"] and data["downstream"]["task"] == "classification"
    assert "real_table" not in json.loads(rep.to_json(tables=False))["pairs"][0]
    with pytest.raises(ValueError):  # the records are read-only
        rep.column("age").real_hist[0] = 1.0


# ------------------------------------------------------------------------------ the command line
def _csv(path, frame: pd.DataFrame):
    frame.to_csv(path, index=False)
    return str(path)


def test_cli_report_summary_and_json(tmp_path, capsys):
    rng = np.random.default_rng(16)
    X = pd.DataFrame({"a": rng.random(300) * 10, "b": rng.random(300) * 2})
    X["c"] = (X["a"] / 10 + rng.normal(0, 0.05, 300)).clip(0, 1)
    dom = Domain([0, 0, 0], [10, 2, 1], names=["a", "b", "c"])
    rel = run("pmm", X, dom, epsilon=1.0, rng=16)
    real = _csv(tmp_path / "real.csv", X)
    syn = _csv(tmp_path / "syn.csv", rel.synthetic_frame())
    out = tmp_path / "report.json"
    code = main(["report", real, syn, "--bounds", "0:10,0:2,0:1", "--target", "c", "-o", str(out), "-q"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert captured.out.startswith(evaluate.OWNER_LABEL)
    assert "every measured difference is within its ceiling" in captured.out and "Downstream: predict 'c'" in captured.out
    data = json.loads(out.read_text())
    lib = evaluate.report(X, rel.synthetic, dom, target="c")  # the command is the library call
    assert data == json.loads(lib.to_json())
    assert main(["report", real, syn, "--bounds", "0:10,0:2,0:1", "--w1", "none", "-o", "-", "-q"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["w1"]["value"] is None and printed["label"] == evaluate.OWNER_LABEL


def test_cli_report_errors(tmp_path, capsys):
    X = pd.DataFrame({"a": np.linspace(0, 1, 20), "b": np.linspace(1, 0, 20)})
    real = _csv(tmp_path / "real.csv", X)
    before = (tmp_path / "real.csv").read_bytes()
    for argv, match in [
        (["report", "-q", real, real, "--bounds", "0:1", "-o", real], "must not be one of the input files"),
        (["report", "-q", real, real, "--bounds", "0:1", "--target", "z"], "--target 'z' of dpsynth report must be one of the columns read"),
        (["report", "-q", real, real, "--bounds", "0:1", "--w1", "big"], "'w1' parameter of dpsynth report"),
        (["report", "-q", real, real, "--bounds", "0:1,0:1,0:1"], "'bounds' parameter of dpsynth report"),
    ]:
        assert main(argv) == 1
        err = [ln for ln in capsys.readouterr().err.splitlines() if ln.strip()]
        assert len(err) == 1 and err[0].startswith("dpsynth: error: ") and match in err[0], err
    assert (tmp_path / "real.csv").read_bytes() == before


# ------------------------------------------------------------------------------ integer columns
def test_declared_integer_columns_are_compared_as_integers():
    """A declared whole-number column: the share of each value (computed here by counting), the shares of
    whole values, and the 1-way TV on the values; a column with more than MAX_INTEGER_VALUES values keeps its
    bins; an undeclared column of whole numbers is not compared as integers (never inferred)."""
    rng = np.random.default_rng(12)
    n = 500
    real = pd.DataFrame({"kids": rng.poisson(1.0, n).clip(0, 6).astype(float), "age": rng.integers(18, 90, n) * 1.0,
                         "x": rng.integers(0, 5, n) * 1.0})
    syn = pd.DataFrame({"kids": rng.poisson(1.3, n).clip(0, 6) + np.where(np.arange(n) < 50, 0.5, 0.0),
                        "age": rng.integers(18, 90, n) * 1.0, "x": rng.integers(0, 5, n) * 1.0})
    dom = Domain([0, 0, 0], [6, 120, 4], names=["kids", "age", "x"], integers=["kids", "age"])
    rep = evaluate.report(real, syn, dom)
    kids, age, x = (rep.column(c) for c in ("kids", "age", "x"))
    assert kids.integer and kids.values == tuple(range(7)) and kids.real_whole == 1.0 and kids.synthetic_whole == 0.9
    expected = [np.mean(np.clip(np.rint(syn["kids"]), 0, 6) == v) for v in range(7)]
    np.testing.assert_allclose(kids.synthetic_value_shares, expected, rtol=0, atol=1e-15)
    assert kids.tv == pytest.approx(0.5 * np.abs(kids.synthetic_value_shares - kids.real_value_shares).sum())
    assert age.integer and age.values == () and age.real_whole == 1.0  # 121 values: the bins only
    assert not x.integer and x.values == () and "integer" not in x.to_dict()
    dist = rep.to_frame("distributions")
    assert list(dist.loc[dist["column"] == "kids", "cell"]) == [str(v) for v in range(7)]
