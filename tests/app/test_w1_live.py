"""dashboard.w1_live: the background W1 job behind a release's headline (plain Python, no Streamlit).

Which certified results a job yields is the library's policy, tested in tests/core/test_progressive_w1.py."""

from __future__ import annotations

import numpy as np

from dashboard import w1_job, w1_live
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


def _bracket(lo: float, hi: float):
    from dpsynth_core.transport import W1Result

    return W1Result(hi, lo, hi, "interval", False, True)


def test_a_long_exact_solve_does_not_hold_back_the_next_pages_first_result():
    """Job A's exact stage blocks (a 28 s solve at ε = 0.001 on a mixed table, in the suite); job B, asked for
    meanwhile (the student moved ε back), still gets its first bracket at once from the first worker."""
    import threading

    solving, release = threading.Event(), threading.Event()

    def slow():
        yield _bracket(0.4, 0.9)
        solving.set()
        release.wait(60)  # the long exact solve
        yield wasserstein1(np.zeros((2, 2)), np.ones((2, 2)), return_result=True)

    def quick():
        yield _bracket(0.1, 0.2)

    previous = w1_live.set_runner(None)  # the default runner: the two worker threads
    try:
        a, b = w1_live.Job("slow", "then_exact", slow), w1_live.Job("quick", "then_exact", quick)
        w1_live.submit(a)
        assert solving.wait(30), "job A never reached its exact stage"
        w1_live.submit(b)
        with b._cond:  # before the fix: nothing until A's solve ended (the single worker was busy)
            assert b._cond.wait_for(lambda: b.latest is not None, timeout=30), "B's first result was held back"
        first = b.latest
        assert (first.lower, first.upper) == (0.1, 0.2) and not release.is_set()
        assert a.state == "running" and not a.exact  # A is still solving in the second worker
        release.set()
        with a._cond:
            assert a._cond.wait_for(lambda: a.finished, timeout=30)
        assert a.exact and a.latest.value == 1.0
    finally:
        release.set()
        w1_live.set_runner(previous)


def test_the_rest_of_a_job_no_page_asks_for_is_put_aside_and_resumed_when_asked(monkeypatch):
    """A job whose page was left: its better results are not computed (the first bracket stays); a page asking
    again restarts it, and a restart's first bracket does not replace the narrower one already shown."""
    calls: list = []

    def results():
        calls.append(1)
        yield _bracket(0.3, 0.6)
        yield wasserstein1(np.zeros((2, 2)), np.ones((2, 2)), return_result=True)

    job = w1_live.Job("left", "then_exact", results)
    job.asked -= w1_live.ABANDON_SECONDS + 1  # nobody asked for it since long before its first result
    it = w1_job.begin(job)
    assert w1_job.advance(job, it, first_only=True)  # its first bracket; more may come
    w1_live._refine(job, it)
    assert job.state == "cancelled" and not job.exact and (job.latest.lower, job.latest.upper) == (0.3, 0.6)
    job.latest = _bracket(0.5, 0.55)  # narrower than what a restart yields first
    shown_before_exact: list = []
    # run a resumed job here, whole; just before its exact value, see what the page would show
    previous = w1_live.set_runner(lambda j: w1_live.run(j, before_exact=lambda: shown_before_exact.append(
        (j.latest.lower, j.latest.upper))))
    try:
        w1_live.resume(job)
    finally:
        w1_live.set_runner(previous)
    assert len(calls) == 2 and job.state == "done" and job.exact and job.latest.value == 1.0
    assert shown_before_exact == [(0.5, 0.55)]  # the restart's wider first bracket (0.3, 0.6) did not replace it
