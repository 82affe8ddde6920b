"""W1 for the headline of a release: a certified bracket at once, the exact value as soon as it is known.

The exact W1 at the dashboard's default size (n = 5000, d = 2) takes one to three seconds, longer than a
page should wait, but the library's progressive policy (:func:`dpsynth_core.transport.progressive_w1`)
gives certified brackets well before. This module only SCHEDULES that policy: a :class:`Job` runs the
library's successive certified results in the background and keeps the latest: its first result in one
worker thread, the better ones in a second, so that a long exact solve (seconds at the slider's ends, where
a release can have many times the data's rows) never holds back the next page's first result; the page
waits (:meth:`Job.wait`) until the bracket is at most :data:`TARGET` of its upper end wide, or the result
is exact, or :data:`WAIT_SECONDS` have passed, and shows what it has (always certified: "exact", or
"certified to lie in [a, b]"). The headline's fragment then polls the job until it is exact
(:mod:`dashboard.headline`). Which results come, for which public sizes, is the library's
(:func:`~dpsynth_core.transport.progressive_plan`; docs/transport.md), never decided here.

Jobs are kept per (data, release, domain) in a process-wide store shared by all sessions (bounded:
:data:`MAX_JOBS`, finished ones evicted first). At most :data:`MAX_QUEUED` jobs wait for the worker;
older waiting ones are put aside (``state == "cancelled"``) and restarted by :func:`resume` when a page
asks for them again. A job's better results are computed only for a page that asks for them: the rest of a
job is parked when no page is waiting for it and goes on when a page asks (:func:`get`, :func:`start`). Plain Python: no Streamlit here.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from dpsynth_core.transport import W1Result, plan_metric, progressive_plan, progressive_w1

from .w1_job import TARGET, WAIT_SECONDS, Job, advance, begin, run

__all__ = ["TARGET", "WAIT_SECONDS", "MAX_JOBS", "MAX_QUEUED", "ABANDON_SECONDS", "Job", "submit", "job_key",
           "start", "get", "resume", "set_runner", "run", "clear"]

#: Jobs kept in the store (finished ones are evicted first, oldest first).
MAX_JOBS = 64
#: Jobs waiting for the worker beyond this many are put aside, oldest first.
MAX_QUEUED = 2
#: A job's better results are computed only while a page asks for it: when the second worker gets to a job no
#: page has asked for in this many seconds, the rest of it is parked again (a page showing a bracket asks
#: twice a second).
ABANDON_SECONDS = 5.0


def job_key(X: np.ndarray, Y: np.ndarray, dom: str, metric: str = "linf") -> str:
    """A digest of the inputs (the points' bytes and shapes, the domain's JSON key, the metric)."""
    h = hashlib.blake2b(digest_size=16)
    for A in (X, Y):
        A = np.ascontiguousarray(A, dtype=float)
        h.update(repr(A.shape).encode())
        h.update(A.tobytes())
    h.update(dom.encode())
    h.update(metric.encode())
    return h.hexdigest()


_lock = threading.Lock()
_jobs: OrderedDict[str, Job] = OrderedDict()
_pools: dict[str, ThreadPoolExecutor] = {}


def _first_then_refine(job: Job) -> None:
    """The first worker's part of a job: its first result; the rest goes to the second worker, so that a long
    exact solve never holds back the next page's first result -- at once when a page is waiting for a better
    result, otherwise when a page asks for it (:func:`_park`)."""
    it = begin(job)
    if it is not None and advance(job, it, first_only=True):
        with job._cond:
            waited = job.waiting > 0
        if waited:
            _pool("refine").submit(_refine, job, it)
        else:
            _park(job, it)


def _park(job: Job, it: Iterator[W1Result]) -> None:
    """Keep the rest of a job for when a page asks for it (:func:`_unpark`): a page that shows a bracket asks
    twice a second; a page that was left, or a test that never polls, does not, and the better results are
    not computed for nobody."""
    with job._cond:
        job.rest = it
        job.state = "parked"
        job._cond.notify_all()


def _unpark(job: Job) -> None:
    """A page asks for a parked job: the rest of it goes to the second worker."""
    with job._cond:
        if job.state != "parked":
            return
        it, job.rest, job.state = job.rest, None, "running"
    _pool("refine").submit(_refine, job, it)


def _refine(job: Job, it: Iterator[W1Result]) -> None:
    """The second worker's part: the better results, unless no page has asked for the job for
    :data:`ABANDON_SECONDS` while it waited for this worker (the student moved on): then it is parked again."""
    if time.perf_counter() - job.asked > ABANDON_SECONDS:
        _park(job, it)
        return
    advance(job, it)


def _pool(name: str) -> ThreadPoolExecutor:
    with _lock:
        if name not in _pools:
            _pools[name] = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"dpsynth-w1-{name}")
        return _pools[name]


def _default_runner(job: Job) -> None:
    _pool("first").submit(_first_then_refine, job)


_runner: Callable[[Job], None] = _default_runner


def set_runner(runner: Callable[[Job], None] | None) -> Callable[[Job], None]:
    """Replace how jobs are handed to the worker (tests hold a job back to see the page before the
    exact value is known); None restores the background thread. Returns the previous runner."""
    global _runner
    previous = _runner
    _runner = runner or _default_runner
    return previous


def submit(job: Job) -> None:
    """Queue a job (:func:`start` does this for new inputs; a test queues jobs of its own making)."""
    _submit(job)


def _submit(job: Job) -> None:
    with _lock:
        queued = [j for j in _jobs.values() if j.state == "queued" and j is not job]
        for old in queued[: max(len(queued) - MAX_QUEUED + 1, 0)]:
            with old._cond:
                if old.state == "queued":
                    old.state = "cancelled"
                    old._cond.notify_all()
    _runner(job)


def start(X: np.ndarray, Y: np.ndarray, domain, dom: str, metric: str = "linf") -> Job:
    """The job for these inputs: the stored one (restarted if it was put aside), or a new one."""
    key = job_key(X, Y, dom, metric)
    with _lock:
        job = _jobs.get(key)
        if job is not None:
            _jobs.move_to_end(key)
            job.asked = time.perf_counter()
    if job is not None:
        if job.state == "cancelled":
            resume(job)
        _unpark(job)
        return job
    X = np.array(X, dtype=float, copy=True)
    Y = np.array(Y, dtype=float, copy=True)
    policy_metric = plan_metric(domain, metric)
    job = Job(key, progressive_plan(X.shape[0], Y.shape[0], X.shape[1], policy_metric),
              lambda: progressive_w1(X, Y, domain, metric), inputs=(X, Y), metric=policy_metric)
    with _lock:
        _jobs[key] = job
        _evict()
    _submit(job)
    return job


def resume(job: Job) -> None:
    """Queue a job that was put aside again (from its first round: its inputs are kept)."""
    with job._cond:
        if job.state != "cancelled":
            return
        job.state = "queued"
        job.started = time.perf_counter()
    _submit(job)


def get(key: str) -> Job | None:
    """The stored job of this key, or None (evicted or never started)."""
    with _lock:
        job = _jobs.get(key)
        if job is not None:
            job.asked = time.perf_counter()
    if job is not None:
        _unpark(job)
    return job


def _evict() -> None:
    """Keep at most MAX_JOBS: finished or put-aside jobs go first, oldest first (under _lock)."""
    excess = len(_jobs) - MAX_JOBS
    if excess <= 0:
        return
    for key in [k for k, j in _jobs.items() if j.finished or j.state in ("cancelled", "parked")][:excess]:
        job = _jobs.pop(key)
        if job.rest is not None:
            job.rest.close()


def clear() -> None:
    """Forget every job that is not running or queued (a test starts from an empty store)."""
    with _lock:
        for key in [k for k, j in _jobs.items() if j.state not in ("running", "queued")]:
            del _jobs[key]
