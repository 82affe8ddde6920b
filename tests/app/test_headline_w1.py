"""The W1 headline of a release: a certified bracket at once, the exact value as soon as it is known.

At the default data (n = 5000, d = 2) the headline's W1 comes from a background job
(:mod:`dashboard.w1_live`). The tests hold the job's exact result back (``w1_live.set_runner``) to see
the first state deterministically, then let it through and rerun the page for the second.
"""

from __future__ import annotations

import re
import threading
import time

import numpy as np
import pytest
from apptest import errors, exceptions, goto, new_app, small_data

from dashboard import w1_live
from dpsynth_core.transport import W1Result
from dpsynth_core.wording import w1_interval_text, w1_metric_text

W1_LABEL = "Distance to the real data (W1)"


@pytest.fixture
def held():
    """A runner that publishes every certified bracket but holds the exact result until released."""
    gate = threading.Event()
    jobs: list = []

    def runner(job):
        jobs.append(job)
        threading.Thread(target=w1_live.run, args=(job,), kwargs={"before_exact": gate.wait}, daemon=True).start()

    w1_live.clear()
    previous = w1_live.set_runner(runner)
    yield gate, jobs
    gate.set()
    w1_live.set_runner(previous)
    for job in jobs:  # let the threads finish before the next test
        deadline = time.monotonic() + 120
        while not job.finished and time.monotonic() < deadline:
            job.wait(target=0.0, seconds=0.5)


def _w1_metric(at) -> str:
    return next(m.value for m in at.metric if m.label == W1_LABEL)


def _w1_caption(at) -> str:
    return next(c.value for c in at.caption if c.value.startswith("W1 "))


def test_default_pmm_headline_shows_a_bracket_then_the_exact_value(held):
    gate, jobs = held
    at = new_app()  # the default dataset: n = 5000, d = 2
    goto(at, "pmm")
    assert not exceptions(at) and not errors(at), (exceptions(at), errors(at))
    assert jobs, "the headline's W1 did not start a background job"
    job = jobs[-1]
    assert job.plan == "rounds" and not job.exact
    shown = _w1_metric(at)
    # the headline is a bracket the job published (it may have published better ones since; only the exact
    # result is held back), printed rounded outwards
    # several brackets may print as the same "≈ v": the caption says which one the page drew
    candidates = [(lo_, hi_) for _, lo_, hi_, _ in job.history if w1_metric_text(lo_, hi_) == shown]
    assert candidates, (shown, job.history)
    caption = _w1_caption(at)
    assert "certified to lie in" in caption and "being computed" in caption, caption
    drawn = [(lo_, hi_) for lo_, hi_ in candidates
             if f"[{w1_interval_text(lo_, hi_, brackets=False)}] (a bracket {100 * (hi_ - lo_) / hi_:.2g}% of its upper end wide"
             in caption]
    assert drawn, (caption, candidates)
    lower, upper = drawn[-1]
    assert lower < upper
    lo, hi = (float(x) for x in w1_interval_text(lower, upper)[1:-1].split(","))
    gate.set()
    final = job.wait(target=0.0, seconds=120)
    deadline = time.monotonic() + 120
    while not job.finished and time.monotonic() < deadline:
        final = job.wait(target=0.0, seconds=0.5)
    assert job.state == "done" and final.exact, (job.state, job.error)
    # every bracket the page could have shown contains the exact value (rounded outwards on screen)
    assert lo <= final.value <= hi
    assert all(lo_ - 1e-15 <= final.value <= hi_ + 1e-15 for _, lo_, hi_, _ in job.history)
    at.run()
    assert not exceptions(at) and not errors(at)
    assert _w1_metric(at) == f"{final.value:.4g}"
    caption = _w1_caption(at)
    assert caption.startswith(f"W1 = {final.value:.6g}, exact") and "certified to lie" not in caption, caption


def test_small_data_headline_is_exact_at_once():
    w1_live.clear()
    at = new_app(small_data())  # n = 400: dense POT within the interactive budget
    goto(at, "pmm")
    assert not exceptions(at)
    caption = _w1_caption(at)
    assert ", exact:" in caption and "being computed" not in caption
    assert re.fullmatch(r"[0-9.e-]+", _w1_metric(at))


def test_bracket_sentence_says_why_it_stays():
    from dashboard.headline import w1_sentence

    w = W1Result(0.0101, 0.01, 0.0102, "grid", False, True)
    assert "certified to lie in [0.01000, 0.01020] (a bracket 2% of its upper end wide: the exact W1 between" in w1_sentence(w, None, pending=False)
    assert "longer than a page should" in w1_sentence(w, None, pending=False)
    assert "being computed" in w1_sentence(w, None, pending=True)
    short = w1_live.Job("k", "then_exact", lambda: iter(()), stops_short=True, state="done")
    assert "computed when you ask" in w1_sentence(w, short, pending=False)


@pytest.mark.parametrize("lower, upper", [(0.008466, 0.008508), (0.0, 0.0147), (0.00849531, 0.00849532),
                                          (0.5, 0.51), (0.2, 0.2 + 1e-9)])
def test_interval_text_contains_the_certified_interval(lower, upper):
    lo, hi = (float(x) for x in w1_interval_text(lower, upper)[1:-1].split(","))
    assert lo <= lower and hi >= upper and lo < hi
    # printed with enough digits to show the width: rounding adds at most half the width, or two units of the
    # sixth significant digit when the width is smaller than that
    assert hi - lo <= 1.5 * (upper - lower) + 2 * 10 ** (np.floor(np.log10(upper)) - 5) + 1e-15


@pytest.mark.parametrize("lower, upper", [(0.0083853, 0.0083863), (0.0099, 0.01), (0.5, 0.505)])
def test_metric_text_of_a_narrow_bracket_is_its_midpoint_to_three_digits(lower, upper):
    """A bracket at most 1% wide shows as "≈ v": v is the midpoint to 3 significant digits, so it is within
    half the width plus half a unit of the third digit (<= 0.5% + 0.5%) of every value in the bracket."""
    text = w1_metric_text(lower, upper)
    assert text.startswith("≈ ")
    v = float(text[2:])
    assert abs(v - 0.5 * (lower + upper)) <= 0.5 * 10 ** (np.floor(np.log10(upper)) - 2) + 1e-15
    assert all(abs(v - w) <= 0.01 * upper for w in (lower, upper))


def test_metric_text_of_a_wide_bracket_is_the_bracket():
    assert w1_metric_text(0.0, 0.0147) == w1_interval_text(0.0, 0.0147)
    assert w1_metric_text(0.0098, 0.0100) == w1_interval_text(0.0098, 0.0100)


def test_a_failed_w1_is_an_error_in_the_libraries_words(monkeypatch):
    def broken_first(X, Y, domain, metric="linf"):
        raise ValueError("The 'X' parameter of wasserstein1 must have at least one row. Got 0 rows.")

    def broken(X, Y, domain, metric="linf", *, then_exact=True):
        broken_first(X, Y, domain, metric)
        yield  # pragma: no cover - a generator that raises at its first step

    w1_live.clear()
    monkeypatch.setattr(w1_live, "progressive_w1", broken)
    # the head start too: while the worker still runs an earlier test's job, the page computes the first result itself
    monkeypatch.setattr(w1_live, "first_w1", broken_first)
    at = new_app(small_data(350, seed=5))
    goto(at, "pmm")
    assert not exceptions(at)
    assert any("must have at least one row" in e for e in errors(at)), errors(at)
    assert next(m.value for m in at.metric if m.label == W1_LABEL) == "—"


# ----------------------------------------------------------------------------- tables with categorical columns
def test_clinic_pmm_headline_shows_a_bracket_then_the_exact_mixed_w1(held):
    """The bundled clinic table (2000 rows, categorical columns): the same live job as numeric data, under
    the mixed metric; the exact value is checked against dense POT on the mixed cost matrix."""
    from dashboard import data as sources
    from dpsynth_core.transport import wasserstein1

    gate, jobs = held
    ds = sources.mixed("clinic")
    at = new_app(ds)
    at.session_state["dataset_source"] = sources.Source("mixed", "clinic")
    goto(at, "pmm")
    assert not exceptions(at) and not errors(at), (exceptions(at), errors(at))
    assert jobs, "the mixed headline's W1 did not start a background job"
    job = jobs[-1]
    assert job.plan == "rounds" and not job.exact and job.history
    shown = _w1_metric(at)
    brackets = {w1_metric_text(lo_, hi_): (lo_, hi_) for _, lo_, hi_, _ in job.history}
    assert shown in brackets, (shown, job.history)
    caption = _w1_caption(at)
    assert "certified to lie in" in caption and "being computed" in caption, caption
    help_text = next(m.help for m in at.metric if m.label == W1_LABEL)
    assert "the mixed metric" in help_text and "fills in when it is known" in help_text
    gate.set()
    deadline = time.monotonic() + 120
    final = job.wait(target=0.0, seconds=120)
    while not job.finished and time.monotonic() < deadline:
        final = job.wait(target=0.0, seconds=0.5)
    assert job.state == "done" and final.exact, (job.state, job.error)
    # the reference: dense POT on the n x m mixed cost matrix (an LP solution; the sparse method's certificate
    # closes the bracket to its relative tolerance, 1e-10 by default, and both are float sums)
    X, Y = job.inputs
    assert np.array_equal(X, ds.X) and Y.shape[1] == ds.domain.d
    ref = wasserstein1(X, Y, domain=ds.domain, method="pot")
    assert final.value == pytest.approx(ref, rel=1e-6)
    assert all(lo_ - 1e-12 <= final.value <= hi_ + 1e-12 for _, lo_, hi_, _ in job.history)
    at.run()
    assert not exceptions(at) and not errors(at)
    assert _w1_metric(at) == f"{final.value:.4g}"
    assert _w1_caption(at).startswith(f"W1 = {final.value:.6g}, exact")
