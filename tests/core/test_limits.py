"""dpsynth_core.limits: defaults, override (nesting, contextvar isolation), checks before allocation, caps."""

from __future__ import annotations

import dataclasses
import importlib
import re
import threading

import numpy as np
import pytest

from dpsynth_core import Domain, limits
from dpsynth_core.mechanisms import load_all, run

load_all()

MESSAGE = re.compile(r"^The '[^']+' parameter of [A-Za-z_][\w.]* must .+ Got .+$")


def test_defaults():
    lim = limits.current()
    assert lim == limits.DEFAULTS
    assert lim.max_synthetic_rows == 10**6
    assert lim.max_cells == 2**24
    assert lim.max_size == 10**7
    from dpsynth_core import privacy

    assert privacy.MAX_SIZE == lim.max_size  # one ceiling: the old constant is the shipped default
    assert set(lim.to_dict()) == set(limits.LIMIT_NAMES)
    with pytest.raises(dataclasses.FrozenInstanceError):
        lim.max_cells = 3  # frozen


def test_override_nests_and_restores():
    base = limits.current()
    with limits.override(max_synthetic_rows=10) as outer:
        assert outer.max_synthetic_rows == 10 and limits.current() is outer
        with limits.override(max_cells=7) as inner:
            assert inner.max_synthetic_rows == 10 and inner.max_cells == 7
        assert limits.current() is outer
    assert limits.current() == base
    with pytest.raises(RuntimeError), limits.override(max_cells=5):
        raise RuntimeError("restored on error too")
    assert limits.current() == base


def test_override_rejects_unknown_names_and_bad_values():
    with pytest.raises(TypeError, match="The 'bogus' parameter of dpsynth_core.limits must be one of"):
        with limits.override(bogus=1):
            pass
    for bad, exc in ((0, ValueError), (-5, ValueError), (2.5, TypeError), (True, TypeError), ("9", TypeError)):
        with pytest.raises(exc, match="The 'max_cells' parameter of dpsynth_core.limits must be an int >= 1"):
            limits.Limits(max_cells=bad)


def test_override_is_isolated_between_threads():
    seen = {}
    ready, release = threading.Event(), threading.Event()

    def worker():
        with limits.override(max_synthetic_rows=3):
            ready.set()
            release.wait(10)
            seen["inside"] = limits.current().max_synthetic_rows

    def plain():
        seen["other"] = limits.current().max_synthetic_rows

    t = threading.Thread(target=worker)
    t.start()
    ready.wait(10)
    assert limits.current().max_synthetic_rows == limits.DEFAULTS.max_synthetic_rows  # main thread untouched
    with limits.override(max_synthetic_rows=99):
        u = threading.Thread(target=plain)  # a new thread starts from the process defaults
        u.start()
        u.join()
        release.set()
        t.join()
        assert limits.current().max_synthetic_rows == 99
    assert seen == {"inside": 3, "other": limits.DEFAULTS.max_synthetic_rows}


def test_set_defaults_is_process_wide_and_restorable():
    try:
        limits.set_defaults(max_cells=1234)
        assert limits.current().max_cells == 1234
        with limits.override(max_cells=5):
            assert limits.current().max_cells == 5
    finally:
        limits.set_defaults(**limits.DEFAULTS.to_dict())
    assert limits.current() == limits.DEFAULTS


def test_check_planned_message():
    limits.check_planned(10, "max_cells", owner="x", param="k", what="cells", fix="pass fewer")
    with limits.override(max_cells=9), pytest.raises(ValueError) as info:
        limits.check_planned(10, "max_cells", owner="flat_histogram", param="bins", what="grid cells",
                             fix="pass fewer bins")
    msg = str(info.value)
    assert MESSAGE.match(msg) and "\n" not in msg
    assert msg.startswith("The 'bins' parameter of flat_histogram must give at most 9 grid cells")
    assert "dpsynth_core.limits.override(max_cells=...)" in msg and msg.endswith("Got 10 grid cells.")


# ------------------------------------------------------------------ refused before allocation
def _boom(*args, **kwargs):
    raise AssertionError("allocated before the limit was checked")


def test_flat_histogram_refuses_cells_before_counting(monkeypatch):
    B = importlib.import_module("dpsynth_core.mechanisms.baselines")
    monkeypatch.setattr(B, "grid_counts", _boom)
    with limits.override(max_cells=100), pytest.raises(ValueError) as info:
        run("flat_histogram", np.random.default_rng(0).random((20, 2)), Domain.unit(2), epsilon=1.0, rng=0, bins=20)
    assert str(info.value).startswith("The 'bins' parameter of flat_histogram must give at most 100 grid cells")
    assert "Got 20^2 = 400 grid cells." in str(info.value)


def test_explicit_rows_refused_before_any_work(monkeypatch):
    B, H, P = (importlib.import_module(f"dpsynth_core.mechanisms.{m}") for m in ("baselines", "haar_walk", "psmm"))

    monkeypatch.setattr(B, "grid_counts", _boom)
    monkeypatch.setattr(P, "grid_counts", _boom)
    monkeypatch.setattr(H, "grid_path", _boom)
    X = np.random.default_rng(0).random((20, 2))
    for name in ("flat_histogram", "psmm", "haar_walk"):
        with limits.override(max_synthetic_rows=50), pytest.raises(ValueError, match=f"The 'n_synthetic' parameter "
                                                                                       f"of {name} must give at most 50"):
            run(name, X, Domain.unit(2), epsilon=1.0, rng=0, n_synthetic=51)


def test_pmm_depth_refused_before_the_tree(monkeypatch):
    P = importlib.import_module("dpsynth_core.mechanisms.pmm")

    monkeypatch.setattr(P, "_coded_leaf_counts", _boom)
    with limits.override(max_cells=2**10), pytest.raises(ValueError) as info:
        run("pmm", np.random.default_rng(0).random((20, 2)), Domain.unit(2), epsilon=1.0, rng=0, depth=12)
    assert str(info.value).startswith("The 'depth' parameter of pmm must give at most 1024 leaves")


def test_private_evolution_refused_before_the_variations(monkeypatch):
    PE = importlib.import_module("dpsynth_core.mechanisms.private_evolution")

    monkeypatch.setattr(PE, "variation_api", _boom)
    monkeypatch.setattr(PE, "uniform_in_region", _boom)
    with limits.override(max_candidates=10**4), pytest.raises(ValueError, match="The 'n_synthetic' parameter of "
                                                                                 "private_evolution must give at most"):
        run("private_evolution", np.random.default_rng(0).random((20, 2)), Domain.unit(2), epsilon=1.0, delta=1e-5,
            rng=0, n_synthetic=1000, iterations=5, track_w1=False)


def test_sparse_marginals_monte_carlo_refused_before_noise(monkeypatch):
    mech = importlib.import_module("dpsynth_core.mechanisms.sparse_marginals.mechanism")
    query = importlib.import_module("dpsynth_core.mechanisms.sparse_marginals.query")

    monkeypatch.setattr(mech, "haar_block_noise", _boom)
    monkeypatch.setattr(query, "marginal_vector", _boom)
    monkeypatch.setattr(mech, "marginal_counts", _boom)  # the private rows are read through this statistic
    with limits.override(max_cells=500), pytest.raises(ValueError, match="The 'k' parameter of sparse_marginals "
                                                                           "must give at most 500 Monte Carlo"):
        run("sparse_marginals", np.random.default_rng(0).random((50, 3)), Domain.unit(3), epsilon=1.0, rng=0, k=4,
            mc_draws=20)


def test_flat_histogram_tiny_epsilon_peak_memory_is_bounded():
    """ε = 1e-6 plans millions of rows; with a 1000-row limit the traced peak stays far below them."""
    import tracemalloc

    X = np.random.default_rng(0).random((40, 10))
    tracemalloc.start()
    try:
        with limits.override(max_synthetic_rows=1000):
            rel = run("flat_histogram", X, Domain.unit(10), epsilon=1e-6, rng=1)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert rel.synthetic.shape[0] <= 1000
    assert peak < 20 * 2**20  # the uncapped plan would be hundreds of MB


# ------------------------------------------------------------------------------- caps recorded
@pytest.mark.parametrize("name", ["flat_histogram", "psmm", "haar_walk", "pmm"])
def test_cap_is_post_processing_recorded_in_notes_and_params(name):
    X = np.random.default_rng(0).random((40, 2))
    with limits.override(max_synthetic_rows=300):
        rel = run(name, X, Domain.unit(2), epsilon=1e-6, rng=2)
    assert rel.synthetic.shape[0] <= 300
    rec = rel.params.get("limits")
    if rec is None:  # the noisy size happened to be small: nothing to cap
        assert rel.synthetic.shape[0] == rel.params["n_synthetic"]
        return
    assert rec["max_synthetic_rows"] == 300 and rec["planned_rows"] > 300
    assert rel.synthetic.shape[0] == rel.params["n_synthetic"] == 300
    assert any("capped at 300 rows" in note and "post-processing" in note for note in rel.notes)
    assert rel.epsilon == pytest.approx(1e-6)  # no extra privacy cost on the ledger


def test_public_size_is_capped_too():
    """sparse_marginals' default output size is the public n (replace): capped, noted."""
    X = np.random.default_rng(0).random((300, 3))
    with limits.override(max_synthetic_rows=100):
        rel = run("sparse_marginals", X, Domain.unit(3), epsilon=1.0, rng=0, public_size=100, mc_draws=20)
    assert rel.synthetic.shape[0] == 100 and rel.params["limits"]["planned_rows"] == 300
    assert any("max_synthetic_rows" in note for note in rel.notes)


def test_release_within_limits_has_no_limits_entry():
    rel = run("flat_histogram", np.random.default_rng(0).random((40, 2)), Domain.unit(2), epsilon=1.0, rng=0)
    assert "limits" not in rel.params and not any("dpsynth_core.limits" in n for n in rel.notes)


@pytest.mark.parametrize("name", ["pmm", "psmm", "haar_walk"])
def test_a_bound_above_the_diameter_is_said_to_say_nothing(name):
    # at ε = 0.001 the noisy size of 2000 rows is often tiny and the theory's bound, evaluated there, runs
    # into the thousands: true but empty; the release says so (the dashboard shows "—" for such a bound)
    X = np.random.default_rng(0).random((2000, 2))
    rel = run(name, X, Domain([0, 0], [1, 1]), epsilon=0.001, rng=3)
    assert rel.bound is not None and rel.bound >= 1.0
    assert sum("it says nothing here" in n for n in rel.notes) == 1, rel.notes
    rel = run(name, X, Domain([0, 0], [1, 1]), epsilon=3.0, rng=3)
    assert rel.bound is not None and rel.bound < 1.0 and not any("says nothing" in n for n in rel.notes)
