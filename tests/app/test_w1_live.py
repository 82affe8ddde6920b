"""dashboard.w1_live: the background W1 job behind a release's headline (plain Python, no Streamlit)."""

from __future__ import annotations

import numpy as np
import pytest

from dashboard import w1_live
from dpsynth_core import Domain
from dpsynth_core.transport import wasserstein1

DOM = Domain([0, 0], [1, 1])


@pytest.mark.parametrize("n, plan", [(400, "exact"), (5000, "rounds"), (10_000, "then_exact"),
                                     (100_000, "bracket_only")])
def test_plan_follows_the_library_policy_for_public_sizes(n, plan):
    # 400^2 pairs: dense POT within the interactive budget; 5000 + 5000 points: the budget's sparse method;
    # 2 * 10^4 points: the budget's grid interval, then the exact sparse method; 2 * 10^5: no exact method
    assert w1_live.plan_of(n, n, 2) == plan


@pytest.mark.parametrize("n", [300, 3000])
def test_every_result_is_certified_and_the_last_is_exact(n):
    rng = np.random.default_rng(7)
    X, Y = rng.random((n, 2)), np.clip(rng.random((n, 2)) + 0.02, 0, 1)
    exact = wasserstein1(X, Y, domain=DOM, method="pot")
    results = list(w1_live.results_of(X, Y, DOM))
    assert results[-1].exact and abs(results[-1].value - exact) <= 1e-9 * max(exact, 1.0)
    for r in results:  # 1e-12: float64 rounding of the two solvers' costs
        assert r.lower - 1e-12 <= exact <= r.upper + 1e-12


def test_older_waiting_jobs_are_put_aside_and_resumed():
    taken: list = []
    previous = w1_live.set_runner(taken.append)  # nothing runs: every job stays queued
    rng = np.random.default_rng(3)
    jobs = []
    try:
        w1_live.clear()
        jobs = [w1_live.start(rng.random((50, 2)), rng.random((50, 2)), DOM, "dom")
                for _ in range(w1_live.MAX_QUEUED + 2)]
        states = [j.state for j in jobs]
        assert states == ["cancelled", "cancelled"] + ["queued"] * w1_live.MAX_QUEUED, states
        w1_live.resume(jobs[0])
        assert jobs[0].state == "queued" and taken[-1] is jobs[0]
        assert jobs[1].state == "cancelled"  # the new submission put the next oldest aside
        assert w1_live.get(jobs[1].key) is jobs[1]
        # asking for the same inputs again gives the stored job, resumed
        assert w1_live.start(*_inputs_of(3, len(jobs), 1), DOM, "dom") is jobs[1] and jobs[1].state == "queued"
    finally:
        for job in jobs:  # run them here (the runner still holds them), so that no job stays queued
            w1_live.resume(job)
            w1_live.run(job)
        w1_live.set_runner(previous)
        assert all(j.state == "done" and j.exact for j in jobs), [(j.state, j.error) for j in jobs]


def _inputs_of(seed: int, count: int, k: int):
    """The k-th (X, Y) pair the generator of ``seed`` draws in the order of the test above."""
    rng = np.random.default_rng(seed)
    pairs = [(rng.random((50, 2)), rng.random((50, 2))) for _ in range(count)]
    return pairs[k]


def test_a_failing_job_keeps_its_error_and_its_last_result():
    def results():
        yield wasserstein1(np.zeros((3, 2)), np.ones((3, 2)), return_result=True)
        raise ValueError("The 'Y' parameter of wasserstein1 must be finite. Got nan.")

    job = w1_live.Job("k", "rounds", results)
    w1_live.run(job)
    assert job.state == "failed" and job.finished and isinstance(job.exception, ValueError)
    assert job.latest is not None and job.latest.value == 1.0  # the last certified result stays
    assert job.wait() is job.latest and "must be finite" in job.error
