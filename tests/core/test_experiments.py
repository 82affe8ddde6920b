"""Tests of dpsynth_core.experiments: the W1 sweep and the digits SVM experiment of [HSVZ23, Section 5] (tiny sizes)."""

from __future__ import annotations

import math

import numpy as np
import ot
import pytest

from dpsynth_core import Domain
from dpsynth_core.datasets import uniform_cube
from dpsynth_core.experiments import DIGITS_COLUMNS, SWEEP_COLUMNS, digits_svm, sweep
from dpsynth_core.mechanisms.pmm import pmm


def _cube(n, rng):
    return uniform_cube(n, 2, rng=rng)


def _pair(n, rng):
    return rng.random((n, 2)), Domain.unit(2)


def test_sweep_columns_progress_and_w1():
    seen = []
    df = sweep("pmm", _cube, [40, 80], [1.0, 4.0], 2, rng=0, progress=lambda f, msg: seen.append(f))
    assert list(df.columns) == list(SWEEP_COLUMNS)
    assert len(df) == 2 * 2 * 2
    assert set(df.mechanism) == {"pmm"} and sorted(set(df.n)) == [40, 80] and set(df.rep) == {0, 1}
    assert np.all((df.w1 >= 0) & (df.w1 <= 1)) and np.all(df.w1_lower <= df.w1) and np.all(df.w1 <= df.w1_upper)
    assert np.all(df.seconds > 0) and np.all(np.isfinite(df.bound))
    assert len(seen) == 8 and seen[-1] == pytest.approx(1.0) and np.all(np.diff(seen) > 0)


def test_sweep_w1_is_the_exact_w1_of_the_run():
    """The W1 column equals POT's exact l_inf W1 of the same data and release (same seeds)."""
    captured = []

    def mech(X, domain, *, epsilon, rng, **kw):
        rel = pmm(X, domain, epsilon=epsilon, rng=rng, neighbours="replace")
        captured.append((X, rel.synthetic))
        return rel

    df = sweep(mech, _pair, [60], [2.0], 1, rng=3)
    X, S = captured[0]
    M = ot.dist(X, S, metric="chebyshev")
    exact = ot.emd2(np.full(len(X), 1 / len(X)), np.full(len(S), 1 / len(S)), M)
    assert df.w1.iloc[0] == pytest.approx(exact, rel=1e-9, abs=1e-12)
    assert df.mechanism.iloc[0] == "mech"


def test_sweep_shares_the_data_across_epsilons_and_is_deterministic():
    datasets = []

    def data_fn(n, rng):
        X = rng.random((n, 2))
        datasets.append(X)
        return X, Domain.unit(2)

    a = sweep("flat_histogram", data_fn, [30], [0.5, 1.0, 2.0], 2, rng=7)
    assert len(datasets) == 2  # one dataset per (n, rep), shared by the three ε
    b = sweep("flat_histogram", _pair, [30], [0.5, 1.0, 2.0], 2, rng=7)
    assert np.array_equal(a.w1.to_numpy(), b.w1.to_numpy())
    c = sweep("flat_histogram", _pair, [30], [0.5, 1.0, 2.0], 2, rng=8)
    assert not np.array_equal(a.w1.to_numpy(), c.w1.to_numpy())


def test_sweep_low_dim_and_params():
    df = sweep("low_dim", lambda n, rng: uniform_cube(n, 3, rng=rng), [50], [2.0], 1, rng=0,
               params={"target_dim": 2})
    assert df.mechanism.iloc[0] == "low_dim" and np.isfinite(df.bound.iloc[0])


def test_sweep_validation():
    with pytest.raises(ValueError, match="The 'mechanism' parameter of sweep must be a registered mechanism name"):
        sweep("nope", _cube, [10], [1.0], 1)
    with pytest.raises(TypeError, match="The 'mechanism' parameter of sweep must be"):
        sweep(3, _cube, [10], [1.0], 1)
    with pytest.raises(TypeError, match="The 'data_fn' parameter of sweep must be a callable"):
        sweep("pmm", None, [10], [1.0], 1)
    with pytest.raises(ValueError, match="The 'ns' parameter of sweep must be a non-empty sequence of ints"):
        sweep("pmm", _cube, [], [1.0], 1)
    with pytest.raises(ValueError, match=r"The 'ns' parameter of sweep must be an int in \[1, 10000000\]"):
        sweep("pmm", _cube, [0], [1.0], 1)
    with pytest.raises(TypeError, match="The 'ns' parameter of sweep must be a non-empty sequence"):
        sweep("pmm", _cube, 10, [1.0], 1)
    with pytest.raises(ValueError, match=r"The 'epsilons' parameter of sweep must be a float in \(0, inf\)"):
        sweep("pmm", _cube, [10], [0.0], 1)
    with pytest.raises(ValueError, match=r"The 'reps' parameter of sweep must be an int in \[1, 1000\]"):
        sweep("pmm", _cube, [10], [1.0], 0)
    with pytest.raises(ValueError, match="The 'w1_method' parameter of sweep must be one of"):
        sweep("pmm", _cube, [10], [1.0], 1, w1_method="fast")
    with pytest.raises(TypeError, match="The 'progress' parameter of sweep must be a callable"):
        sweep("pmm", _cube, [10], [1.0], 1, progress=3)
    with pytest.raises(TypeError, match="The 'params' parameter of sweep must be a dict"):
        sweep("pmm", _cube, [10], [1.0], 1, params=[1])
    with pytest.raises(TypeError, match="The 'data_fn' parameter of sweep must be a callable"):
        sweep("pmm", lambda n, rng: 5, [10], [1.0], 1)


def test_digits_svm_tiny():
    seen = []
    df = digits_svm([8.0], [2], 1, rng=0, progress=lambda f, msg: seen.append(f))
    assert list(df.columns) == list(DIGITS_COLUMNS)
    assert list(df.method) == ["real", "low_dim", "pmm_full"]
    assert list(df.target_dim) == [64, 2, 64]
    real = df[df.method == "real"].iloc[0]
    assert math.isinf(real.epsilon) and real.accuracy > 0.9  # the non-private SVM on real digits
    assert np.all((df.accuracy >= 0) & (df.accuracy <= 1))
    assert set(df.n_train) == {1257} and set(df.n_test) == {540}
    # replace: PMM releases exactly the class size, so the union has the training size
    assert set(df[df.method != "real"].n_synthetic) == {1257}
    assert seen[-1] == pytest.approx(1.0) and len(seen) == 3
    again = digits_svm([8.0], [2], 1, rng=0)
    assert np.array_equal(df.accuracy.to_numpy(), again.accuracy.to_numpy())


def test_digits_svm_huge_epsilon_learns():
    """At ε = 10^6 low_dim with d' = 8 keeps the classes' mean and main directions: the SVM trained on the
    synthetic digits must be far above chance (10%); 0.5 is a loose floor (measured ~0.9)."""
    df = digits_svm([1e6], [8], 1, rng=1, include_full_pmm=False, include_real=False)
    assert list(df.method) == ["low_dim"] and df.accuracy.iloc[0] > 0.5


def test_digits_svm_validation():
    with pytest.raises(ValueError, match=r"The 'epsilons' parameter of digits_svm must be a float in \(0, inf\)"):
        digits_svm([-1.0], [2], 1)
    with pytest.raises(ValueError, match=r"The 'target_dims' parameter of digits_svm must be an int in \[1, 64\]"):
        digits_svm([1.0], [65], 1)
    with pytest.raises(TypeError, match="The 'target_dims' parameter of digits_svm must be a sequence"):
        digits_svm([1.0], 2, 1)
    with pytest.raises(ValueError, match=r"The 'reps' parameter of digits_svm must be an int in \[1, 100\]"):
        digits_svm([1.0], [2], 0)
    with pytest.raises(ValueError, match=r"The 'test_size' parameter of digits_svm must be a float in \(0, 1\)"):
        digits_svm([1.0], [2], 1, test_size=1.0)
    with pytest.raises(ValueError, match="The 'subroutine' parameter of digits_svm must be one of 'pmm', 'psmm'"):
        digits_svm([1.0], [2], 1, subroutine="x")
    with pytest.raises(ValueError, match="The 'target_dims' parameter of digits_svm must be non-empty"):
        digits_svm([1.0], [], 1, include_full_pmm=False)


# ------------------------------------------------------------------ the sweep's other measures
def test_certificate_measure_reports_the_released_bound_and_its_terms():
    """The sparse-marginal sweep records the released certificate (rel.bound), whose three terms add
    up to it, next to the realised loss; the same seeds give the same releases as a direct run."""
    from dpsynth_core.experiments import certificate_measure
    from dpsynth_core.mechanisms import bind

    X = np.clip(np.random.default_rng(1).normal([0.3, 0.6], 0.1, size=(300, 2)), 0, 1)
    dom = Domain.unit(2)
    df = sweep("sparse_marginals", lambda n, rng: (X, dom), [300], [1.0], 2, rng=3,
               params={"neighbours": "replace", "mc_draws": 40, "public_size": 300}, measure=certificate_measure)
    assert len(df) == 2 and {"certificate", "loss", "discretisation", "privatisation", "projection"} <= set(df)
    for _, row in df.iterrows():
        assert row["discretisation"] + row["privatisation"] + row["projection"] == pytest.approx(
            row["certificate"], rel=1e-12)
        assert 0 < row["loss"] <= 1
    # rerun with the sweep's own seeds: identical certificates
    gen = np.random.default_rng(3)
    gen.integers(2**63)  # the data draw
    seed = int(gen.integers(2**63))
    rel = bind("sparse_marginals", epsilon=1.0, neighbours="replace", params={"mc_draws": 40, "public_size": 300})(
        X, dom, rng=seed)
    assert df["certificate"].iloc[0] == rel.bound


def test_angle_measure_and_compare():
    from dpsynth_core.experiments import angle_measure, compare

    rng = np.random.default_rng(2)
    X = np.clip(0.5 + rng.normal(0, 0.15, (400, 1)) * [1.0, 1.0, 0.0] + rng.normal(0, 0.01, (400, 3)), 0, 1)
    dom = Domain.unit(3)
    df = sweep("low_dim", lambda n, rng: (X, dom), [400], [1.0, 100.0], 1, rng=0,
               params={"neighbours": "replace", "target_dim": 1}, measure=angle_measure)
    assert list(df.epsilon) == [1.0, 100.0] and np.all((df.angle >= 0) & (df.angle <= 90))
    table, synth = compare(["pmm", "per_point_laplace", "private_evolution"], X, dom, epsilon=1.0,
                           neighbours="add_remove", rng=0)
    ok = table.set_index("mechanism")
    assert ok.loc["pmm", "status"] == "ok" and ok.loc["pmm", "w1"] >= 0 and "pmm" in synth
    # per_point_laplace supports replace only: refused with its reason, not an exception
    assert ok.loc["per_point_laplace", "status"] == "not run"
    assert "one of 'replace' (this mechanism does not support 'add_remove')" in ok.loc["per_point_laplace", "reason"]


def test_digits_per_class_returns_labelled_images():
    from dpsynth_core.experiments import digits_per_class

    imgs, labels = digits_per_class(64.0, 2, per_class=3, rng=0)
    assert imgs.shape == (30, 64) and np.all((imgs >= 0) & (imgs <= 1))
    assert sorted(set(labels.tolist())) == list(range(10)) and np.all(np.bincount(labels) == 3)
