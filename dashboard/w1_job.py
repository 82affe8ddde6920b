"""One background W1 computation behind a release's headline (:class:`Job`) and how a worker drives it
(:func:`run`, or :func:`begin` and :func:`advance` in two steps). Where and when jobs run is
:mod:`dashboard.w1_live`'s. Plain Python: no Streamlit here."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from dpsynth_core.transport import W1Result

__all__ = ["TARGET", "WAIT_SECONDS", "Job", "run", "begin", "advance"]

_LOG = logging.getLogger("dpsynth.dashboard")

#: The headline's bracket is good enough to show when its width is at most this fraction of its upper end.
TARGET = 0.01
#: The longest the page waits for such a bracket (then it shows the latest certified result it has; it
#: always waits for the first one).
WAIT_SECONDS = 1.0


@dataclass
class Job:
    """One W1 computation and its latest certified result.

    ``state``: "queued", "running", "parked" (it has a result and its better ones wait for a page to ask:
    ``rest``), "done" (the generator ended), "failed" (it raised: ``exception``, ``error`` says what;
    ``latest`` keeps the last certified result) or "cancelled" (put aside before it started).
    """

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
    #: The metric the library's policy reads (:func:`~dpsynth_core.transport.plan_metric`: "mixed" on
    #: categorical columns).
    metric: str = "linf"
    #: When a page last asked for the job (:func:`start`, :func:`get`).
    asked: float = field(default_factory=time.perf_counter)
    #: The rest of a parked job's results (its generator, where it stopped).
    rest: Iterator[W1Result] | None = field(default=None, repr=False)
    #: How many pages are waiting in :meth:`wait` now.
    waiting: int = 0
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
            self.waiting += 1
            try:
                while not self.finished and self.state not in ("cancelled", "parked"):
                    late = time.perf_counter() >= deadline
                    if (self.latest is not None and (self.good_enough(target) or late)) or (late and not first):
                        break
                    timeout = None if self.latest is None and first else max(deadline - time.perf_counter(), 0.0)
                    self._cond.wait(timeout=timeout if timeout is None else min(timeout, 0.5))
            finally:
                self.waiting -= 1
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
        with self._cond:
            if res is not None and (self.latest is None or res.exact or not self.latest.exact and
                                    res.upper - res.lower <= self.latest.upper - self.latest.lower):
                self.latest = res  # a restarted job's first bracket never replaces a narrower one
                self.history.append((time.perf_counter() - self.started, float(res.lower), float(res.upper),
                                     bool(res.exact)))
            if state is not None:
                self.state = state
            if error is not None:
                self.error = error
            self._cond.notify_all()


def run(job: Job, *, before_exact: Callable[[], None] | None = None) -> None:
    """What the worker does with a job, in the calling thread: drive its generator, publishing every result
    (nothing when the job was put aside meanwhile). ``before_exact`` is called before an exact result is
    published (a test holds the exact value back with it)."""
    it = begin(job)
    if it is not None:
        advance(job, it, before_exact)


def begin(job: Job) -> Iterator[W1Result] | None:
    """Mark a queued job running and return its results' generator (None when it was put aside)."""
    with job._cond:
        if job.state != "queued":  # put aside meanwhile
            return None
        job.state = "running"
    return job.make()


def advance(job: Job, it: Iterator[W1Result], before_exact: Callable[[], None] | None = None, *,
             first_only: bool = False) -> bool:
    """Publish the results of ``it``: all of them, or (``first_only``) up to the first one that is not exact.
    True when the job stopped there and better results may follow."""
    try:
        for res in it:
            if res.exact and before_exact is not None:
                before_exact()
            job._publish(res)
            if first_only and not res.exact:
                return True
        job._publish(state="done")
    except Exception as exc:  # noqa: BLE001 - the headline keeps its last certified result and says so
        _LOG.error("background W1 failed", exc_info=exc)
        job.exception = exc
        job._publish(state="failed", error=f"{type(exc).__name__}: {exc}")
    return False
