"""dashboard.w1_live: the background W1 job behind a release's headline (plain Python, no Streamlit).

Which certified results a job yields is the library's policy, tested in tests/core/test_progressive_w1.py."""

from __future__ import annotations

import numpy as np

from dashboard import w1_live
from dpsynth_core import Domain
from dpsynth_core.transport import wasserstein1

DOM = Domain([0, 0], [1, 1])


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


def test_a_page_does_not_wait_behind_another_pages_job():
    """While the worker runs another job, a new job's first result is computed at once in the caller's thread
    (the interactive budget's: exact at this size), the job is finished, and the worker skips it."""
    taken: list = []
    previous = w1_live.set_runner(taken.append)  # nothing runs by itself
    rng = np.random.default_rng(5)
    try:
        for j in list(w1_live._jobs.values()):  # another test's page may have left its job with the worker
            if j.state == "running":
                j.wait(seconds=120)
        w1_live.clear()
        busy = w1_live.start(rng.random((60, 2)), rng.random((60, 2)), DOM, "dom")
        assert busy.state == "queued" and busy.latest is None
        busy.state = "running"  # the worker is inside this job
        X, Y = rng.random((80, 2)), rng.random((90, 2))
        job = w1_live.start(X, Y, DOM, "dom")
        assert taken[-1] is job  # handed to the worker as always
        assert job.state == "done" and job.exact, (job.state, job.latest)
        assert np.isclose(job.latest.value, wasserstein1(X, Y, domain=DOM))
        w1_live.run(job)  # the worker's turn: it skips a finished job
        assert job.state == "done" and len(job.history) == 1
        busy.state = "queued"
        w1_live.run(busy)
        assert busy.state == "done" and busy.exact
    finally:
        w1_live.set_runner(previous)


def test_a_wider_result_never_replaces_a_narrower_one():
    """A head start's result and the worker's may interleave: the latest is the narrowest (an exact one stays)."""
    X, Y = np.zeros((3, 2)), np.ones((3, 2))
    exact = wasserstein1(X, Y, return_result=True)
    job = w1_live.Job("k", "rounds", lambda: iter(()))
    job._publish(exact)
    wide = type(exact)(value=1.5, lower=0.5, upper=1.5, method="grid", exact=False, certified=True)
    job._publish(wide)
    assert job.latest is exact and len(job.history) == 2


def test_beyond_the_interactive_budget_a_job_stops_at_its_interval_and_the_exact_value_comes_on_request():
    """400 data points against 12,000 synthetic ones: beyond the interactive budget's sparse sizes the library's
    plan is "then_exact" (a grid interval, then the exact method). The page's job stops at the interval; asked for
    the exact value, another job (keyed apart) computes it, inside the interval."""
    rng = np.random.default_rng(5)
    X, Y = rng.random((400, 2)), rng.random((12_000, 2))
    short = w1_live.start(X, Y, DOM, "dom")
    assert short.plan == "then_exact" and short.stops_short
    res = short.wait(seconds=60)
    assert short.state == "done" and not res.exact and res.lower < res.upper
    full = w1_live.start(X, Y, DOM, "dom", exact=True)
    assert full is not short and full.key == short.key + ":exact" and not full.stops_short
    exact = full.wait(seconds=120)
    assert full.state == "done" and exact.exact
    assert res.lower - 1e-12 <= exact.value <= res.upper + 1e-12
    assert w1_live.start(X, Y, DOM, "dom") is short  # the page's own job is kept: asking again costs nothing
