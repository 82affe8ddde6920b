"""The sidebar: the dataset's summary, the privacy controls, and the ledger of the page's release."""

from __future__ import annotations

from typing import Any

import streamlit as st

from dpsynth_core.validation import plural
from dpsynth_core.wording import RELATION_WORDS

from .registry import DELTA_PAGES, PAGES
from .settings import DELTA_GRID, EPSILON_GRID
from .state import data

__all__ = ["sidebar", "show_ledger"]


def sidebar(page: str) -> Any:
    """Dataset summary and the privacy controls; returns a container for the ledger (filled after
    the page ran, so it shows the current page's release)."""
    d = data()
    pending = st.session_state.pop("_pending_neighbours", None)
    if pending is not None:  # set before the widget exists (see eligibility.relation_supported)
        st.session_state["neighbours"] = pending
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
        for msg in st.session_state.get("_url_messages", []):
            st.warning(msg)
        ledger = st.container()
    return ledger


def _restore_relation(page: str) -> None:
    """Give back the relation a mechanism page switched for itself (``eligibility.relation_supported``)
    once the user is on another page, unless they changed it themselves meanwhile; say so in a toast."""
    restore = st.session_state.get("_relation_restore")
    if restore is None or page == restore["page"]:
        return
    del st.session_state["_relation_restore"]
    st.session_state.pop("_relation_note", None)
    if st.session_state.get("neighbours") != restore["switched_to"]:
        return  # the user chose a relation since: theirs stands
    st.session_state["neighbours"] = restore["value"]
    where = next((p.title for p in PAGES if p.url == restore["page"]), "the last page")
    st.toast(f"Back to *{RELATION_WORDS[restore['value']]}* neighbours ({where} had switched them).",
             icon=":material/swap_horiz:")


def _domain_text(dom, most: int = 4) -> str:
    """The first columns of the public domain: bounds of numeric columns, categories of the others."""
    bounds = dict(zip(dom.numeric_names, zip(dom.lower, dom.upper, strict=True), strict=True))
    parts = []
    for n in dom.names[:most]:
        if n in dom.categories:
            labels = dom.categories[n]
            parts.append(f"{n} ∈ {{{', '.join(labels[:4])}{', …' if len(labels) > 4 else ''}}}")
        else:
            parts.append(f"{n} ∈ [{bounds[n][0]:g}, {bounds[n][1]:g}]")
    return ", ".join(parts) + (" …" if dom.d > most else "")


def show_ledger(box: Any) -> None:
    """The privacy ledger of the page's release (recorded by :func:`dashboard.state.record_release`)."""
    info = st.session_state.get("release_info")
    with box:
        st.markdown("**Privacy ledger of the current release**")
        if not info:
            st.caption("No release on this page yet.")
            return
        st.caption(f"{info['title']}: {info['privacy']}")
        frame = info["ledger"]
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
        if info.get("note"):
            st.caption(info["note"])
