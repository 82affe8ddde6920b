"""A page's frame: it runs inside app.py's navigation, opens with its lesson (title, what it teaches,
papers, "try this") and ends with the lesson path's previous / next links."""

from __future__ import annotations

import streamlit as st

from .answers import ANSWERS
from .compute import mechanism_spec
from .lessons import LESSONS, ORDER, PAPERS, neighbours_of, step_of
from .registry import CONTROLS, Controls, by_url
from .state import data, show_flash
from .widgets import param_controls

__all__ = ["PAGE_OBJECTS", "page_intro", "lesson_box", "lesson_nav", "mechanism_header"]

#: The navigation's page objects by URL path, set by app.py on every run (for the lesson path's links).
PAGE_OBJECTS: dict = {}


def page_intro(url: str) -> None:
    """The page's title, what it teaches, its papers and its place on the lesson path; then the messages of
    the last action (:func:`~dashboard.state.show_flash`)."""
    lesson = LESSONS[url]
    st.caption(f"Lesson {step_of(url)} of {len(ORDER)}")
    st.title(lesson.title)
    st.markdown(lesson.teaches)
    if lesson.papers:
        st.caption("From " + "; ".join(PAPERS[k].cite() for k in lesson.papers) + ".")
    show_flash()  # what the last action did (e.g. "Using the numeric columns of ..."), on the page it was done on


def lesson_box(url: str) -> None:
    """Try this / what you should see / questions for the class, with the teacher's answers folded under them.

    The box is open on every visit and stays as the reader leaves it while the page reruns (a slider moved, a
    release finished): its key is fixed and so are its arguments. (An expander without a key is identified by its
    arguments: one whose ``expanded`` changed between runs was a new element, drawn closed.)"""
    lesson = LESSONS[url]
    try_this = lesson.try_on(data().domain.is_mixed)
    if not (try_this or lesson.expect or lesson.ask):
        return
    with st.expander("Lesson: try this", expanded=True, icon=":material/school:", key=f"lesson_box_{url}"):
        if try_this:
            st.markdown("**Try this**\n" + "\n".join(f"{i}. {t}" for i, t in enumerate(try_this, 1)))
        if lesson.expect:
            st.markdown("**What you should see**\n" + "\n".join(f"- {t}" for t in lesson.expect))
        if lesson.ask:
            st.markdown("**Ask your students**\n" + "\n".join(f"- {t}" for t in lesson.ask))
            with st.expander("Answers (for the teacher)", icon=":material/key:", key=f"lesson_answers_{url}"):
                st.markdown("\n".join(f"{i}. {a}" for i, a in enumerate(ANSWERS[url], 1)))


def lesson_nav(url: str) -> None:
    """Previous / next links of the lesson path."""
    prev, nxt = neighbours_of(url)
    st.divider()
    c1, _, c2 = st.columns([2, 1, 2])
    if prev is not None and prev in PAGE_OBJECTS:
        c1.page_link(PAGE_OBJECTS[prev], label=f"Previous: {LESSONS[prev].title}", icon=":material/arrow_back:")
    if nxt is not None and nxt in PAGE_OBJECTS:
        c2.page_link(PAGE_OBJECTS[nxt], label=f"Next: {LESSONS[nxt].title}", icon=":material/arrow_forward:")


def mechanism_header(url: str, *, labels: dict | None = None):
    """The page's intro and lesson, then its mechanism's parameter controls, as :data:`dashboard.registry.CONTROLS`
    declares them for the page. Returns (spec, params): the values shown, with the page's fixed ones."""
    page_intro(url)
    lesson_box(url)
    spec = mechanism_spec(by_url(url).mechanism)
    c = CONTROLS.get(url, Controls())
    params = param_controls(spec, defaults=c.defaults(data().d) if c.defaults else None, skip=c.skip, labels=labels)
    return spec, {**params, **c.fixed}
