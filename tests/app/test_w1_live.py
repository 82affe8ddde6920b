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
