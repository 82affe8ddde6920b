"""The sidebar: the dataset's summary, the privacy controls, and the ledger of the page's release."""

from __future__ import annotations

from typing import Any

import streamlit as st

from dpsynth_core.privacy import weak_epsilon_note
from dpsynth_core.validation import plural
from dpsynth_core.wording import RELATION_WORDS, column_domain

from .registry import DELTA_PAGES, PAGES
from .settings import DELTA_GRID, EPSILON_GRID
from .state import (
    data,
    pending_relation,
    relation_switch,
    release_info,
    set_relation,
    set_relation_switch,
    settings,
    url_messages,
)

__all__ = ["sidebar", "show_ledger"]


def sidebar(page: str) -> Any:
    """Dataset summary and the privacy controls; returns a container for the ledger (filled after
    the page ran, so it shows the current page's release)."""
    d = data()
    pending = pending_relation()
    if pending is not None:  # set before the widget exists (see eligibility.relation_supported)
        set_relation(pending)
    _restore_relation(page)
    sb = st.sidebar
    with sb:
        st.markdown(f"**Dataset:** `{d.name}` — d = {d.d}")
        st.caption(("Public domain: " if d.domain.is_mixed else "Public bounds: ") + _domain_text(d.domain))
        if not d.domain.declared:
            st.caption(":material/warning: read off the data: NOT private")
        st.caption(f"n = {plural(d.n, 'row')} (:material/lock: owner view: under add/remove n itself is private; mechanisms use a "
                   "noisy or declared size)")
        st.select_slider("ε (privacy budget, log scale)", options=EPSILON_GRID, key="epsilon", persist_state="session",
                         format_func=lambda v: f"{v:g}",
                         help="Smaller ε = stronger privacy = more noise. Every mechanism spends exactly this ε "
                              "(see the ledger below).")
        weak = weak_epsilon_note(settings().epsilon)  # the library's words, as in every release's notes
        if weak is not None:
            st.warning(weak, icon=":material/lock_open:")
        if page in DELTA_PAGES:
            st.select_slider("δ (approximate DP)", options=DELTA_GRID, key="delta", persist_state="session",
                             format_func=lambda v: f"{v:.0e}",
                             help="Only approximate-DP mechanisms (Private Evolution, Gaussian noise) use δ: the "
                                  "probability mass allowed outside the e^ε bound. Pure-DP mechanisms report δ = 0.")
        st.radio("Neighbouring datasets", options=("add_remove", "replace"), key="neighbours", persist_state="session",
                 format_func=lambda v: {"add_remove": "add / remove one record",
                                        "replace": "replace one record (n public)"}[v],
                 help="What one person's data changes. Add/remove: n is private; replace: n is public and "
                      "counts move in two cells (sensitivity 2).")
        st.number_input("Teaching seed (reproducible pictures)", min_value=0, max_value=2**32 - 1, step=1, key="seed",
                        persist_state="session",
                        help="The random seed of the releases shown on screen: the same seed gives the same "
                             "pictures, so a class sees what you see. Downloads never use it: they are fresh "
                             "releases, because whoever knows a seed can undo the noise.")
        for msg in url_messages():
            st.warning(msg)
        ledger = st.container()
    return ledger


def _restore_relation(page: str) -> None:
    """Give back the relation a mechanism page switched for itself (``eligibility.relation_supported``)
    once the user is on another page, unless they changed it themselves meanwhile; say so in a toast."""
    switch = relation_switch()
    if switch is None or page == switch.page:
        return
    set_relation_switch(None)
    if settings().neighbours != switch.switched_to:
        return  # the user chose a relation since: theirs stands
    set_relation(switch.value)
    where = next((p.title for p in PAGES if p.url == switch.page), "the last page")
    st.toast(f"Back to *{RELATION_WORDS[switch.value]}* neighbours ({where} had switched them).",
             icon=":material/swap_horiz:")


def _domain_text(dom, most: int = 4) -> str:
    """The first columns of the public domain: bounds of numeric columns, categories of the others."""
    return ", ".join(column_domain(dom, n, most=4) for n in dom.names[:most]) + (" …" if dom.d > most else "")


def show_ledger(box: Any) -> None:
    """The privacy ledger of the page's release (recorded by :func:`dashboard.state.record_release`)."""
    info = release_info()
    with box:
        st.markdown("**Privacy ledger of the current release**")
        if not info:
            st.caption("No release on this page yet.")
            return
        st.caption(f"{info.title}: {info.privacy}")
        frame = info.ledger
        lines = [f"- {row.step}: ε = {row.epsilon:.3g}" + (f", δ = {row.delta:.2g}" if row.delta else "")
                 for row in frame.itertuples()]
        if len(lines) <= 4:
            st.markdown("\n".join(lines))
        else:
            st.markdown("\n".join(lines[:3]))
            with st.expander(f"all {len(lines)} steps"):
                st.markdown("\n".join(lines))
        st.caption(f"Total: ε = {frame['epsilon'].sum():.4g}, δ = {frame['delta'].sum():.3g} "
                   f"({len(frame)} step{'s' if len(frame) != 1 else ''}).")
        if info.note:
            st.caption(info.note)
