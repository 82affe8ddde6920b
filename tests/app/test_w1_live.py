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
        # a page waits for A's better result (otherwise its rest would be parked: the next test)
        threading.Thread(target=a.wait, kwargs={"seconds": 60}, daemon=True).start()
        with a._cond:  # until the waiter is in: nothing notifies that, so look every 10 ms (a 30 s hang guard)
            for _ in range(3000):
                if a.waiting:
                    break
                a._cond.wait(0.01)
            assert a.waiting == 1
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


def test_the_rest_of_a_job_goes_on_only_when_a_page_asks_for_it():
    """A job nobody waits for after its first result (a page that was left, a test that never polls) is parked:
    its better results are not computed until a page asks (``get``); one whose page left while it waited for
    the second worker is parked again; a restart's first bracket never replaces a narrower one."""
    import threading

    calls: list = []
    solved = threading.Event()

    def results():
        calls.append(1)
        yield _bracket(0.3, 0.6)
        yield wasserstein1(np.zeros((2, 2)), np.ones((2, 2)), return_result=True)
        solved.set()

    previous = w1_live.set_runner(None)  # the default runner: the two worker threads
    try:
        w1_live.clear()
        job = w1_live.Job("parked", "then_exact", results)
        w1_live.submit(job)  # nobody waits for it
        with job._cond:
            assert job._cond.wait_for(lambda: job.state == "parked", timeout=30), job.state
        assert not solved.is_set() and (job.latest.lower, job.latest.upper) == (0.3, 0.6)
        with w1_live._lock:
            w1_live._jobs[job.key] = job
        assert w1_live.get(job.key) is job  # a page asks: the rest goes on
        assert solved.wait(30) and len(calls) == 1
        with job._cond:
            assert job._cond.wait_for(lambda: job.finished, timeout=30)
        assert job.exact and job.latest.value == 1.0
    finally:
        w1_live.set_runner(previous)
        w1_live.clear()

    left = w1_live.Job("left", "then_exact", results)
    left.asked -= w1_live.ABANDON_SECONDS + 1  # its page was left before the second worker got to it
    it = w1_job.begin(left)
    assert w1_job.advance(left, it, first_only=True)
    w1_live._refine(left, it)
    assert left.state == "parked" and not left.exact
    left.latest = _bracket(0.5, 0.55)  # narrower than the (0.3, 0.6) a restart yields first
    left._publish(_bracket(0.3, 0.6))
    assert (left.latest.lower, left.latest.upper) == (0.5, 0.55)
