"""Calls into the library: cached on their inputs, with errors shown on the page instead of raised.

A page makes ONE cached call per picture: :func:`teaching_release` (a mechanism on the current data
with the sidebar's settings and the teaching seed) and :func:`w1_of` (its W1 to the data, owner view).
:func:`safe` turns a failure into a message in the user's words (the inputs are kept).

Tables with categorical columns: the data are the domain's encoding (category indices), a release's
synthetic data a DataFrame; a mechanism that does not take categorical columns says so in the
library's words (:func:`teaching_release` shows its refusal as information, not as an error), and W1
is the library's W1 under the mixed metric (docs/mixed-data.md).
"""

from __future__ import annotations

import json
import logging
import re
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import streamlit as st

from dpsynth_core import evaluate
from dpsynth_core.datasets import CLINIC_UNITS, clinic
from dpsynth_core.domain import Domain
from dpsynth_core.first_look import FirstScreen, first_screen
from dpsynth_core.mechanisms import MECHANISMS, MisfitKind, bind, load_all
from dpsynth_core.transport import wasserstein1

from . import registry, w1_live
from .state import data, exact_w1_requested, settings

__all__ = ["safe", "dom_key", "BY_DOMAIN", "cached_release", "cached_w1", "release_args", "w1_job", "teaching_release", "w1_of",
           "mechanisms", "mechanism_spec", "mechanism_label", "mechanism_pages", "refuses_categories", "cached_report", "headline_w1", "headline_job",
           "clinic_first_screen", "clinic_release"]

_LOG = logging.getLogger("dpsynth.dashboard")


def safe(fn: Callable, *args: Any, what: str = "running this", **kwargs: Any) -> Any:
    """Call ``fn``; turn ValueError/TypeError into ``st.error(message)`` and anything else into a
    friendly error with the details in an expander. Returns None on failure (inputs are kept)."""
    try:
        return fn(*args, **kwargs)
    except (ValueError, TypeError, NotImplementedError, ImportError) as exc:
        st.error(str(exc) or type(exc).__name__)
    except Exception as exc:  # noqa: BLE001 - the page must never show a traceback
        # The message and the variables could echo private data: the browser gets the exception type and
        # where it happened (file, line, function); the full traceback goes to the server console only.
        _LOG.error("error while %s", what, exc_info=exc)
        st.error(f"Something went wrong while {what} ({type(exc).__name__}). Your settings are kept: "
                 "try other parameters, or report the details below.")
        with st.expander("Details"):
            frames = traceback.extract_tb(exc.__traceback__)[-4:]
            st.code(f"{type(exc).__module__}.{type(exc).__name__}\n" + "\n".join(
                f"  {Path(f.filename).name}:{f.lineno} in {f.name}" for f in frames), language="text")
    return None


def dom_key(dom: Domain) -> str:
    """The whole domain (bounds, names, categories, weights, "other" categories, provenance) as JSON text: how
    a cached call hashes a :class:`~dpsynth_core.domain.Domain` (:data:`BY_DOMAIN`), and a job's key."""
    return json.dumps(dom.to_dict(), sort_keys=True)


#: ``st.cache_data``'s hash of a domain argument: the domain travels as it is, hashed by its JSON text.
BY_DOMAIN = {Domain: dom_key}


@st.cache_data(show_spinner=False, max_entries=128, hash_funcs=BY_DOMAIN)
def cached_release(name: str, X: np.ndarray, dom: Domain, epsilon: float, delta: float, neighbours: str,
                   seed: int | None, params: tuple):
    """One release of mechanism ``name``, cached on (mechanism, data, domain, ε, δ, relation, seed, parameters)."""
    spec = MECHANISMS[name]
    mechanism = bind(name, epsilon=epsilon, delta=delta if spec.needs_delta else None, neighbours=neighbours,
                     params=dict(params))
    return mechanism(X, dom, rng=seed)


@st.cache_data(show_spinner=False, max_entries=128, hash_funcs=BY_DOMAIN)
def cached_w1(X: np.ndarray, Y: np.ndarray, dom: Domain, fast: bool = False):
    """W1 of a release to the data (owner view) within the interactive budget of the library's policy."""
    return wasserstein1(X, Y, domain=dom, budget="preview" if fast else "interactive",
                        return_result=True)


@st.cache_resource(show_spinner=False, max_entries=32, hash_funcs=BY_DOMAIN)
def cached_report(X: np.ndarray, Y, dom: Domain, target: str | None, w1: float | None) -> evaluate.Report:
    """The library's report of what a release preserves (:func:`dpsynth_core.evaluate.report`; OWNER VIEW,
    never exported), cached on its inputs. A shared resource, not a copy: the report is immutable (and holds a
    read-only mapping, which a copying cache could not pickle)."""
    return evaluate.report(X, Y, dom, target=target, w1=w1)


@st.cache_data(show_spinner=False, max_entries=32)
def _clinic_first_screen(epsilon: float, neighbours: str, seed: int) -> FirstScreen:
    return first_screen(clinic(), "pmm", epsilon=epsilon, neighbours=neighbours, rng=seed, units=CLINIC_UNITS)


def clinic_first_screen() -> FirstScreen | None:
    """Home's first screen (:func:`dpsynth_core.first_look.first_screen`): PMM on the bundled clinic table at the
    sidebar's ε and relation with the teaching seed, its rows beside the data's, what it keeps and the membership
    question (eight releases from each neighbouring table). Cached for every session: one computation per
    (ε, relation, seed). None when it failed (the error is shown)."""
    with st.spinner("Releasing the clinic table …"):
        return safe(clinic_release, settings(), what="releasing the clinic table")


def clinic_release(s) -> FirstScreen:
    """Home's first screen under the privacy settings ``s`` (cached; what the page and the server's warm-up of the
    default views, :mod:`dashboard.warm`, both call)."""
    return _clinic_first_screen(float(s.epsilon), s.neighbours, int(s.seed))


def refuses_categories(name: str) -> bool:
    """True when mechanism ``name`` does not take the current data's categorical columns (its contract's
    :meth:`~dpsynth_core.mechanisms.MechanismSpec.misfit`)."""
    spec = MECHANISMS.get(name)
    why = None if spec is None else spec.misfit(data().domain)
    return why is not None and why.kind is MisfitKind.CATEGORIES


def release_args(name: str, d, s, params: dict | None = None, *, seed: int | None = None,
                 epsilon: float | None = None) -> tuple:
    """The arguments of :func:`cached_release` for mechanism ``name`` on dataset ``d`` with the privacy settings
    ``s`` (:class:`~dashboard.settings.PrivacySettings`): what a page's release and the server's warm-up of the
    default views (:mod:`dashboard.warm`) both pass, so that they meet in the cache."""
    items = tuple(sorted((params or {}).items()))
    return (name, d.X, d.domain, float(epsilon if epsilon is not None else s.epsilon), float(s.delta),
            s.neighbours, int(s.seed if seed is None else seed), items)


def w1_job(d, Y, *, exact: bool | None = None):
    """The headline's background W1 job (:mod:`dashboard.w1_live`) between dataset ``d`` and a release's synthetic
    data ``Y`` (a DataFrame of labels on a table with categorical columns): started, or the one already kept.
    Beyond the interactive budget's exact sizes it stops at a certified interval unless ``exact`` (by default:
    whether this session asked for the exact value of that job, :func:`~dashboard.state.exact_w1_requested`)."""
    if d.domain.is_mixed:
        Y = d.domain.read(Y, name="synthetic", owner="the dashboard")
    Y = np.asarray(Y, dtype=float)
    dom = dom_key(d.domain)
    if exact is None:
        exact = exact_w1_requested(w1_live.job_key(d.X, Y, dom))
    return w1_live.start(d.X, Y, d.domain, dom, exact=exact)


def teaching_release(name: str, params: dict | None = None, *, seed: int | None = None,
                     epsilon: float | None = None):
    """The release of ``name`` on the current dataset with the sidebar's settings and the teaching seed
    (or ``seed``), cached. Returns the release or None (the error is shown)."""
    args = release_args(name, data(), settings(), params, seed=seed, epsilon=epsilon)
    if refuses_categories(name):  # the library refuses, in its own words: information, not an error
        try:
            return cached_release(*args)
        except ValueError as exc:
            st.info(str(exc), icon=":material/category:")
            return None
    with st.spinner(f"Running {name} …"):
        return safe(cached_release, *args, what=f"running {name}")


def w1_of(Y, *, fast: bool = False):
    """W1 of ``Y`` to the current data (owner view), cached; None (with a warning) for an empty release. On a
    table with categorical columns: the mixed metric's W1 (``Y`` a DataFrame of labels or encoded rows)."""
    d = data()
    if len(Y) == 0:
        st.warning("This release has no synthetic points (at this ε·n the noisy size came out ≤ 0), so W1 is "
                   "undefined. Increase ε or use more data.")
        return None
    if d.domain.is_mixed:
        Y = d.domain.read(Y, name="synthetic", owner="the dashboard")
    with st.spinner("Computing W1 …"):
        return safe(cached_w1, d.X, np.asarray(Y, dtype=float), d.domain, fast, what="computing W1")


def headline_w1(Y):
    """W1 of ``Y`` to the current data for a release's headline: ``(result, key)``.

    The result comes from a background job (:mod:`dashboard.w1_live`): the page waits for the exact value
    within about a second (else shows the latest certified bracket), and ``key`` names the job, whose later, exact result the headline's fragment picks up (:func:`headline_job`). Beyond the interactive
    budget's exact sizes on a table with categorical columns (the interval method: seconds at 200,000 rows)
    the result may be None after that second, with the job's key: the headline shows the job's progress and
    its intervals as they narrow. On a table with
    categorical columns the same, under the mixed metric (``Y`` a DataFrame of labels or encoded rows).
    ``(None, None)`` when there is no W1 (an empty release, or the error is shown)."""
    if len(Y) == 0:
        return w1_of(Y), None

    def _wait():
        job = w1_job(data(), Y)
        res = job.wait(first=job.waits_for_first)
        while res is None and job.state == "cancelled":  # put aside by another session meanwhile
            w1_live.resume(job)
            res = job.wait(first=job.waits_for_first)
        if res is None and job.state == "failed":  # failed before its first result: its error, in the library's words
            raise job.exception or RuntimeError(job.error or "no W1 result")
        return res, job.key  # no result yet (the interval method at a large size): the headline shows its progress

    with st.spinner("Computing W1 …"):
        out = safe(_wait, what="computing W1")
    return (None, None) if out is None else out


def headline_job(key: str | None, *, resume: bool = False):
    """The background W1 job of a headline (:func:`headline_w1`), None when there is none (any more);
    with ``resume``, a job that was put aside for newer ones is queued again (the page still wants it)."""
    job = None if key is None else w1_live.get(key)
    if resume and job is not None and job.state == "cancelled":
        w1_live.resume(job)
    return job


def mechanisms() -> dict:
    """The registry (every mechanism module imported once)."""
    return load_all()


def mechanism_spec(name: str):
    """The registry entry of a mechanism."""
    return mechanisms()[name]


def mechanism_label(name: str) -> str:
    """A mechanism as people read it: the title of its page in the navigation ("Random walk"), or for a
    mechanism without a page its registry title without the remark in brackets ("Flat Laplace histogram")."""
    page = next((p for p in registry.PAGES if p.mechanism == name), None)
    if page is not None:
        return page.title
    spec = mechanisms().get(name)
    return name if spec is None else re.sub(r"\s*\([^)]*\)\s*$", "", spec.title) or spec.title


def mechanism_pages(names) -> str:
    """The pages of the mechanisms ``names`` that have one, by their titles ("Partition tree (PMM), Random
    walk"); "none yet" when none has."""
    wanted = set(names)
    titles = [p.title for p in registry.PAGES if p.mechanism is not None and p.mechanism in wanted]
    return ", ".join(titles) or "none yet"
