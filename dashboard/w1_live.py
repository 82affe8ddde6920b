"""W1 for the headline of a release: a certified bracket at once, the exact value as soon as it is known.

The exact W1 at the dashboard's default size (n = 5000, d = 2) takes one to three seconds, longer than a
page should wait, but the library's progressive policy (:func:`dpsynth_core.transport.progressive_w1`)
gives certified brackets well before. This module only SCHEDULES that policy: a :class:`Job` runs the
library's successive certified results in ONE background worker thread and keeps the latest; the page
waits (:meth:`Job.wait`) until the result is exact (:data:`TARGET`) or :data:`WAIT_SECONDS` have passed,
and shows what it has (always certified); the headline's fragment then polls the job (:mod:`dashboard.headline`).
Which results come is the library's (:func:`~dpsynth_core.transport.progressive_plan`), never decided here.

Jobs are kept per (data, release, domain) in a process-wide store shared by all sessions (bounded:
:data:`MAX_JOBS`, finished ones evicted first). At most :data:`MAX_QUEUED` jobs wait for the worker;
older waiting ones are put aside (``state == "cancelled"``) and restarted by :func:`resume` when a page
asks for them again. A page never waits behind another page's job: when the worker is busy, :func:`start`
computes the new job's first result in the caller's thread (:func:`~dpsynth_core.transport.first_w1`, about a
second at most), and the worker does the rest when it is free. Plain Python: no Streamlit here.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from dpsynth_core.transport import W1Result, first_w1, plan_metric, progressive_plan, progressive_w1

__all__ = ["TARGET", "WAIT_SECONDS", "MAX_JOBS", "MAX_QUEUED", "Job", "job_key", "start", "head_start", "get", "resume",
           "set_runner", "run", "clear"]

_LOG = logging.getLogger("dpsynth.dashboard")

#: The headline's bracket is good enough to show when its width is at most this fraction of its upper end:
#: 0, i.e. the page waits for the exact value (within :data:`WAIT_SECONDS`). At the default size the exact
#: value follows a 1% bracket by a few tenths of a second, while a bracket shown first costs the page a poll
#: (up to :data:`dashboard.headline.POLL_SECONDS`) and a second run, in which the browser draws the page again.
TARGET = 0.0
#: The longest the page waits for such a bracket (then it shows the latest certified result it has; it
#: always waits for the first one).
WAIT_SECONDS = 1.0
#: Jobs kept in the store (finished ones are evicted first, oldest first).
MAX_JOBS = 64
#: Jobs waiting for the worker beyond this many are put aside, oldest first.
MAX_QUEUED = 2


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


@dataclass
class Job:
    """One W1 computation and its latest certified result. ``state``: "queued", "running", "done" (the generator
    ended), "failed" (it raised: ``exception``, ``error`` says what; ``latest`` keeps the last certified result)
    or "cancelled" (put aside before it started)."""

    key: str
    plan: str
    make: Callable[[], Iterator[W1Result]]
    latest: W1Result | None = None
    state: str = "queued"
    error: str | None = None
    exception: BaseException | None = None
    started: float = field(default_factory=time.perf_counter)
    history: list = field(default_factory=list)
    #: The points (X, Y) the job measures (kept for a restart; what a caller checks a result against).
    inputs: tuple | None = field(default=None, repr=False)
    #: The metric the library's policy reads (:func:`~dpsynth_core.transport.plan_metric`).
    metric: str = "linf"
    #: The interactive budget's one result for these inputs, for a page that would wait behind another job.
    first: Callable[[], W1Result | None] | None = field(default=None, repr=False)
    #: Plan "then_exact" stopped at the interactive budget's interval: the exact value comes on request (:func:`start`).
    stops_short: bool = False
    _cond: threading.Condition = field(default_factory=threading.Condition, repr=False)

    @property
    def finished(self) -> bool:
        """No better result will come (done or failed)."""
        return self.state in ("done", "failed")

    @property
    def exact(self) -> bool:
        return self.latest is not None and bool(self.latest.exact)

    def good_enough(self, target: float = TARGET) -> bool:
        """Exact, or a bracket at most ``target`` of its upper end wide."""
        r = self.latest
        return r is not None and (r.exact or r.upper - r.lower <= target * max(r.upper, 1e-300))

    def wait(self, target: float = TARGET, seconds: float = WAIT_SECONDS, *, first: bool = True) -> W1Result | None:
        """The latest result once it is good enough, or the job finished, or ``seconds`` passed since the
        job started; with ``first`` never before the first result (None only when the job failed without
        any), without it None when there is none yet after ``seconds`` (:meth:`waits_for_first`)."""
        deadline = self.started + seconds
        with self._cond:
            while not self.finished and self.state != "cancelled":
                late = time.perf_counter() >= deadline
                if (self.latest is not None and (self.good_enough(target) or late)) or (late and not first):
                    break
                timeout = None if self.latest is None and first else max(deadline - time.perf_counter(), 0.0)
                self._cond.wait(timeout=timeout if timeout is None else min(timeout, 0.5))
            return self.latest

    @property
    def waits_for_first(self) -> bool:
        """Whether a page waits for the first result: the library's interactive budget gives it within about a
        second (dense POT, the sparse method's first round, the grid), except the "interval" method's, whose
        cost grows with the rows (seconds at 200,000 rows; :func:`~dpsynth_core.transport.plan_w1`), which the
        page shows while it comes (:attr:`progress`)."""
        return self.interval_rows is None

    @property
    def interval_rows(self) -> tuple[int, int] | None:
        """(n, m) when the job's first results are the interval method's (a mixed or l2 table beyond the
        interactive budget's exact sizes), else None."""
        if self.inputs is None or self.plan in ("exact", "rounds"):
            return None
        n, m = self.inputs[0].shape[0], self.inputs[1].shape[0]
        return (n, m) if self.metric in ("mixed", "l2") else None

    @property
    def progress(self) -> float | None:
        """How far the interval method's computation is (its cells solved, 0 to 1; 0 before its first
        interval), None for the other methods (their results come within the page's wait)."""
        if self.interval_rows is None:
            return None
        details = {} if self.latest is None else self.latest.details
        cells = details.get("cells")
        return float(details.get("cells_solved", 0)) / cells if cells else 0.0

    def _publish(self, res: W1Result | None = None, state: str | None = None, error: str | None = None) -> None:
        """Record a result (kept as the latest only when it is at least as narrow: a head start's result and the
        worker's may interleave), a new state, an error; wake the waiting pages."""
        with self._cond:
            if res is not None:
                if _narrower_or_equal(res, self.latest):
                    self.latest = res
                self.history.append((time.perf_counter() - self.started, float(res.lower), float(res.upper),
                                     bool(res.exact)))
            if state is not None:
                self.state = state
            if error is not None:
                self.error = error
            self._cond.notify_all()


def _narrower_or_equal(res: W1Result, than: W1Result | None) -> bool:
    if than is None or res.exact:
        return True
    return not than.exact and res.upper - res.lower <= than.upper - than.lower


_lock = threading.Lock()
_jobs: OrderedDict[str, Job] = OrderedDict()
_executor: ThreadPoolExecutor | None = None


def run(job: Job, *, before_exact: Callable[[], None] | None = None) -> None:
    """What the worker does with a job: drive its generator, publishing every result (nothing when the
    job was put aside meanwhile). ``before_exact`` is called before an exact result is published (a test
    holds the exact value back with it)."""
    with job._cond:
        if job.state != "queued":  # put aside meanwhile
            return
        job.state = "running"
    try:
        for res in job.make():
            if res.exact and before_exact is not None:
                before_exact()
            job._publish(res)
        job._publish(state="done")
    except Exception as exc:  # noqa: BLE001 - the headline keeps its last certified result and says so
        _LOG.error("background W1 failed", exc_info=exc)
        job.exception = exc
        job._publish(state="failed", error=f"{type(exc).__name__}: {exc}")


def _default_runner(job: Job) -> None:
    global _executor
    if _executor is None:
        _executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="dpsynth-w1")
    _executor.submit(run, job)


_runner: Callable[[Job], None] = _default_runner


def set_runner(runner: Callable[[Job], None] | None) -> Callable[[Job], None]:
    """Replace how jobs are handed to the worker (tests hold a job back to see the page before the
    exact value is known); None restores the background thread. Returns the previous runner."""
    global _runner
    previous = _runner
    _runner = runner or _default_runner
    return previous


def _submit(job: Job) -> None:
    with _lock:
        queued = [j for j in _jobs.values() if j.state == "queued" and j is not job]
        for old in queued[: max(len(queued) - MAX_QUEUED + 1, 0)]:
            with old._cond:
                if old.state == "queued":
                    old.state = "cancelled"
                    old._cond.notify_all()
    _runner(job)


def start(X: np.ndarray, Y: np.ndarray, domain, dom: str, metric: str = "linf", *, exact: bool = False) -> Job:
    """The job for these inputs: the stored one (restarted if it was put aside), or a new one. On the library's plan
    "then_exact" it stops at the interactive budget's interval unless ``exact`` (another job, keyed apart)."""
    policy_metric = plan_metric(domain, metric)
    plan = progressive_plan(X.shape[0], Y.shape[0], X.shape[1], policy_metric)
    short = plan == "then_exact" and not exact
    key = job_key(X, Y, dom, metric) + (":exact" if plan == "then_exact" and exact else "")
    with _lock:
        job = _jobs.get(key)
        if job is not None:
            _jobs.move_to_end(key)
    if job is not None:
        if job.state == "cancelled":
            resume(job)
        return job
    X = np.array(X, dtype=float, copy=True)
    Y = np.array(Y, dtype=float, copy=True)
    job = Job(key, plan, lambda: progressive_w1(X, Y, domain, metric, then_exact=not short), inputs=(X, Y),
              metric=policy_metric, first=lambda: first_w1(X, Y, domain, metric), stops_short=short)
    with _lock:
        _jobs[key] = job
        _evict()
        busy = any(j.state == "running" for j in _jobs.values() if j is not job)
    _submit(job)
    if busy and job.waits_for_first:
        head_start(job)
    return job


def head_start(job: Job) -> None:
    """Compute ``job``'s first result in the caller's thread (the worker is busy with another job); an exact one
    finishes the job, which the worker then skips. An error is left to the worker, which reports it."""
    if job.first is None:
        return
    try:
        res = job.first()
        if res is None:
            return
    except Exception:  # noqa: BLE001 - the worker runs the same inputs and reports the error on the page
        _LOG.warning("W1 head start failed; the worker will retry", exc_info=True)
        return
    job._publish(res)
    if res.exact:
        with job._cond:
            if job.state == "queued":
                job.state = "done"
                job._cond.notify_all()


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
        return _jobs.get(key)


def _evict() -> None:
    """Keep at most MAX_JOBS: finished or put-aside jobs go first, oldest first (under _lock)."""
    excess = len(_jobs) - MAX_JOBS
    if excess <= 0:
        return
    for key in [k for k, j in _jobs.items() if j.finished or j.state == "cancelled"][:excess]:
        del _jobs[key]


def clear() -> None:
    """Forget every job that is not running or queued (a test starts from an empty store)."""
    with _lock:
        for key in [k for k, j in _jobs.items() if j.state not in ("running", "queued")]:
            del _jobs[key]
