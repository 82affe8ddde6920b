"""A release's headline: its W1 to the data (a certified bracket at once, the exact value as soon as the
background job knows it: :mod:`dashboard.w1_live`), the theory's bound in the library's words
(:func:`dpsynth_core.wording.bound_words`), the synthetic size and the guarantee."""

from __future__ import annotations

import streamlit as st

from dpsynth_core.wording import bound_words, delta_text, w1_interval_text, w1_metric_text

from .compute import headline_job
from .state import bounds_from_data, request_exact_w1

__all__ = ["POLL_SECONDS", "headline", "w1_sentence", "progress_text", "size_help", "privacy_short", "privacy_label"]

#: How often the headline's fragment looks for a better W1 while the exact value is being computed.
POLL_SECONDS = 0.5


def headline(rel, w1v, w1_key: str | None = None) -> None:
    """The row of headline metrics of ``rel`` with its W1 ``w1v``; ``w1_key`` names the background W1 job of
    :func:`~dashboard.compute.headline_w1`: while it may still improve on ``w1v`` (a certified bracket), the
    row is a fragment that polls it every :data:`POLL_SECONDS` and fills in the exact value as soon as it is
    known, without blocking the page. A bound shown as "—" because it says nothing gets its reason below."""
    bound = bound_words(rel)
    others = [(bound.label, bound.value, bound.help),
              ("Synthetic rows" if rel.domain.is_mixed else "Synthetic points", f"{rel.synthetic.shape[0]:,}",
               size_help(rel)),
              (privacy_label(rel), "not private" if bounds_from_data() else privacy_short(rel), rel.privacy)]
    job = headline_job(w1_key)
    if job is not None and not job.finished and not (w1v is not None and w1v.exact):
        st.fragment(_metrics, run_every=POLL_SECONDS)(w1v, w1_key, others, rel.domain.is_mixed, polling=True)
    else:
        _metrics(w1v, w1_key, others, rel.domain.is_mixed)
        if job is not None and job.stops_short and job.finished and not job.exact:
            st.button("Compute the exact W1", key=f"w1_exact_{job.key[:16]}", icon=":material/calculate:",
                      on_click=request_exact_w1, args=(job.key,),
                      help="The exact value at this size takes several seconds of both cores; the bracket above is "
                           "already certified to contain it.")
    if bound.vacuous:
        st.caption(bound.help)  # why the bound shows "—", next to it rather than only in its help


def _metrics(w1v, w1_key, others, mixed: bool, *, polling: bool = False) -> None:
    """The row of headline metrics and the sentence on W1. As a polling fragment (``polling``): the
    latest result of the W1 job; once the job has finished, one rerun of the page, which draws the
    final headline without polling (and gives the exact value to the views below it)."""
    job = headline_job(w1_key, resume=polling)
    if polling:
        if job is None or job.finished:
            st.rerun()
        if job.latest is not None:
            w1v = job.latest
    pending = job is not None and not job.finished and not (w1v is not None and w1v.exact)
    narrowing = pending and job.progress is not None  # the interval method: the page shows how far it is
    c1, *cols = st.columns([1.7, 1, 1, 1])  # the W1 column is wider: it may show an interval
    c1.metric("Distance to the real data (W1)", ("computing …" if pending else "—") if w1v is None else
              (f"{w1v.value:.4g}" if w1v.exact else w1_metric_text(w1v.lower, w1v.upper)),
              help="Wasserstein-1 distance between the real and the synthetic data, in the unit cube with the "
                   "largest-coordinate distance"
                   + (" (two different categories of a column at distance 1, or the column's weight: the mixed "
                      "metric)" if mixed else "")
                   + ": every 1-Lipschitz statistic differs by at most this much. "
                   ":material/lock: Computed from the real data (owner view)."
                   + ("" if w1v is None else " Exact: certified optimal." if w1v.exact else
                      " An interval certified to contain W1" + (": it narrows while the page computes it."
                                                                if narrowing else
                                                                ": the exact value fills in when it is known."
                                                                if pending else ".")))
    for c, (lab, val, hlp) in zip(cols, others, strict=True):
        c.metric(lab, val, help=hlp)
    if w1v is not None:
        st.caption(w1_sentence(w1v, job, pending))
    if narrowing:
        st.progress(job.progress, text=progress_text(job))


def progress_text(job) -> str:
    """What the interval method is doing for the headline's progress bar (:attr:`dashboard.w1_live.Job.progress`)."""
    n, m = job.interval_rows
    details = {} if job.latest is None else job.latest.details
    if job.state == "queued":
        return (f"W1 from every row ({n:,} + {m:,} rows) is next in line: another W1 computation is finishing "
                "first …")
    if "cells" not in details:
        return (f"Proving an interval for W1 from every row ({n:,} + {m:,} rows): placing the rows in small cells "
                "of similar rows …")
    return (f"Proving an interval for W1 from every row ({n:,} + {m:,} rows): the transport inside "
            f"{details.get('cells_solved', 0):,} of {details['cells']:,} cells of similar rows solved; the interval "
            "narrows with each.")


def w1_sentence(w, job=None, pending: bool = False) -> str:
    """The headline's sentence on W1: "exact", or "certified to lie in [a, b]" and what happens next."""
    if w.exact:
        return (f"W1 = {w.value:.6g}, exact: the cost of an optimal transport plan between the data and the release, "
                "certified optimal by a dual solution checked over all pairs of points.")
    width = (w.upper - w.lower) / w.upper if w.upper > 0 else 0.0
    how = {"sparse": ": a feasible transport plan's cost above, a feasible dual below",
           "grid": ": the exact W1 between the two sets binned on a grid, plus or minus a cell's diameter",
           "interval": ": the cost of a transport plan from every row above, the columns' own W1 below"
           }.get(w.method, "")
    text = (f"W1 is certified to lie in [{w1_interval_text(w.lower, w.upper, brackets=False)}] (a bracket "
            f"{100 * width:.2g}% of its upper end wide{how}). ")
    if job is not None and job.state == "failed":
        return text + f"The exact computation stopped ({job.error}), so the bracket stays."
    if job is not None and job.stops_short:
        return text + ("At this size the exact value takes several seconds more than a page should wait: it is "
                       "computed when you ask (below).")
    if pending and job is not None and job.progress is not None:
        return text + "It narrows while the page computes it (below)."
    if pending:
        return text + "The exact value is being computed and fills in here as soon as it is known."
    return text + "An exact solve at this size takes longer than a page should, so the bracket stays."


def size_help(rel) -> str | None:
    """The help of the size metric when the release's size comes from a noisy count of the rows: at a small
    ε that count can be far from n (the noise's scale is said), which is the price of keeping n private."""
    size = rel.params.get("size")
    if not isinstance(size, dict) or size.get("source") != "noisy" or not size.get("epsilon_spent"):
        return None
    scale = 1.0 / float(size["epsilon_spent"])
    return (f"Under add/remove neighbours the number of rows is itself private: ε = {size['epsilon_spent']:.3g} of "
            f"the budget buys a noisy count (discrete Laplace noise of scale {scale:,.0f}), and the release's size "
            "follows it. At a small ε it can be far from the true number of rows.")


def privacy_short(rel) -> str:
    """"ε = 1" for the headline's value (δ is in its label, :func:`privacy_label`, so that the value fits a
    quarter of the page; the relation is in the sidebar)."""
    if not rel.is_dp:
        return "not private"
    return f"ε = {rel.epsilon:.3g}"


def privacy_label(rel) -> str:
    """"Privacy" for a pure-DP release, "Privacy (δ = 10⁻⁶)" for an approximate one."""
    return f"Privacy (δ = {delta_text(rel.delta)})" if rel.is_dp and rel.delta else "Privacy"


