"""Which mechanism runs on the current table, said BEFORE running: the limits a mechanism declares
(:meth:`~dpsynth_core.mechanisms.MechanismSpec.misfit`), the neighbouring relation it needs (switched for
its own page, given back on the next: :mod:`dashboard.sidebar`), and, on a table with categorical columns,
the offer to continue on its numeric columns."""

from __future__ import annotations

import streamlit as st

from dpsynth_core.mechanisms import MisfitKind
from dpsynth_core.validation import plural
from dpsynth_core.wording import RELATION_REASONS, RELATION_WORDS

from . import data as sources
from .compute import mechanism_label, mechanism_pages, mechanisms
from .state import (
    RelationSwitch,
    current_page,
    data,
    flash,
    relation_switch,
    set_data,
    set_pending_relation,
    set_relation,
    set_relation_switch,
    settings,
)

__all__ = ["fits_limits", "relation_for", "left_out", "offer_numeric_part", "numeric_page_gate", "numeric_details",
           "relation_supported", "switch_relation"]


def fits_limits(spec, *, key: str) -> bool:
    """True when the current table is within the limits ``spec`` (the mechanism contract) declares: categorical
    columns, the number of numeric columns, the number of rows. Otherwise False, after saying so BEFORE
    running, in the page's words and with what to change (the library says it as a parameter error)."""
    d = data()
    dom, label = d.domain, mechanism_label(spec.name)
    why = spec.misfit(dom, d.n)
    if why is None:
        return True
    if why.kind is MisfitKind.CATEGORIES:
        takers = mechanism_pages(n for n, s in mechanisms().items() if s.categorical)
        offer_numeric_part(key=key, why=f"{label} does not take categorical columns, and the table `{d.name}` has "
                                        f"{plural(len(dom.categories), 'categorical column')} "
                                        f"({', '.join(dom.categories)}). The pages of the mechanisms that take them: "
                                        f"{takers}. Or continue here with the numeric columns:")
    elif why.kind is MisfitKind.COLUMNS:
        others = mechanism_pages(n for n, s in mechanisms().items() if n != spec.name and s.misfit(dom, d.n) is None)
        st.warning(f"{label} takes at most {spec.max_dim} numeric columns"
                   + (f" ({spec.max_dim_reason})" if spec.max_dim_reason else "")
                   + f", and the table `{d.name}` has {dom.k}. Pick at most {spec.max_dim} columns under *Columns to "
                   f"use* on the Data and bounds page, or use a page without this limit: {others}.",
                   icon=":material/view_column:")
    else:
        st.warning(f"{spec.title} needs at least {spec.min_rows} rows and this table has {plural(d.n, 'row')}"
                   + (f": {spec.min_rows_reason}." if spec.min_rows_reason else ".")
                   + " Load a larger table on the Data page.", icon=":material/table_rows:")
    return False


def left_out(names, *, key: str) -> set[str]:
    """Before a run of several mechanisms (the Compare page): the ones the sidebar's relation or the table's
    limits (the mechanism contract) rule out, said in words BEFORE running, with the switch of the relation that
    brings them in. Returns their names."""
    d, relation = data(), settings().neighbours
    specs = mechanisms()
    by_relation: dict[str, list[str]] = {}
    limits = []
    for name in names:
        spec = specs[name]
        why = spec.misfit(d.domain, d.n)
        if relation not in spec.neighbours:
            by_relation.setdefault(spec.neighbours[0], []).append(name)
        elif why is not None:
            limits.append((name, why.reason))
    for other, out in by_relation.items():
        st.warning(f"Left out under *{RELATION_WORDS[relation]}* neighbours: {_and(map(mechanism_label, out))}. "
                   + ("It works" if len(out) == 1 else "They work")
                   + f" with *{RELATION_WORDS[other]}* neighbours only ("
                   + RELATION_REASONS[other]
                   + "). To include " + ("it" if len(out) == 1 else "them")
                   + f", switch the sidebar's neighbouring relation to *{RELATION_WORDS[other]}*.",
                   icon=":material/block:")
        st.button(f"Switch to {RELATION_WORDS[other]}", key=f"{key}_switch_{other}", on_click=switch_relation,
                  args=(other,), help="Changes the sidebar's neighbouring relation; then run again.")
    if limits:
        st.warning("Left out on this table: " + "; ".join(f"{mechanism_label(n)} ({why})" for n, why in limits)
                   + ". Change the table on the Data and bounds page to include them.", icon=":material/block:")
    return {n for out in by_relation.values() for n in out} | {n for n, _ in limits}


def _and(words) -> str:
    """"a", "a and b", "a, b and c"."""
    words = list(words)
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def offer_numeric_part(*, key: str, why: str | None = None) -> None:
    """On a table with categorical columns: a button that continues with its numeric columns only (their
    declared bounds kept), for a mechanism or a page that does not take categorical columns."""
    d = data()
    if not d.domain.is_mixed:
        return
    if why:
        st.info(why, icon=":material/category:")
    if st.button(f"Use the numeric columns of {d.name} only ({', '.join(d.domain.numeric_names)})",
                 key=f"numeric_only_{key}", icon=":material/filter_alt:",
                 help="Makes a dataset of the numeric columns, with their declared bounds, for every page. The Data "
                      "page brings the whole table back (Load for a bundled table; \"Use the whole table again\" "
                      "for an upload)."):
        part = d.numeric_only()
        set_data(part, sources.Source("upload", part.name, bounds_from_data=not part.domain.declared))
        flash("info", f"Using the numeric columns of `{d.name}`: {', '.join(part.domain.names)}.")
        st.rerun()


def numeric_page_gate(*, key: str, what: str) -> bool:
    """True when the page can run on the current data; on a table with categorical columns, False after
    saying why (``what`` is what the page does with numeric columns) and offering the numeric columns."""
    d = data()
    if not d.domain.is_mixed:
        return True
    takers = mechanism_pages(n for n, s in mechanisms().items() if s.categorical)
    offer_numeric_part(key=key, why=f"{what} The table `{d.name}` has categorical columns "
                                    f"({', '.join(d.domain.categories)}): the mechanisms that take them show their "
                                    f"releases on their own pages ({takers}). Continue here with the numeric columns:")
    return False


def numeric_details(res):
    """``res`` of :func:`release_section` for a page whose detail views are made for numeric data only
    (today Private Evolution's); on a table with categorical columns None, after saying so (the release,
    its comparison with the data and the report are above), so that a mechanism that starts taking
    categorical columns never meets a picture made for numeric rows."""
    if res is None or not data().domain.is_mixed:
        return res
    st.info("The detail views of this page draw the numeric grid of the mechanism; on a table with categorical "
            "columns they are not drawn. The release, its comparison with the data and the report of what it "
            "preserves are above.", icon=":material/category:")
    return None


def switch_relation(value: str) -> None:
    """Set the sidebar's neighbouring relation (a button's ``on_click``: runs before the widget exists)."""
    set_relation(value)


def relation_for(spec, rel: str) -> str:
    """The relation a mechanism page shows ``spec`` under: ``rel`` if the mechanism supports it, else the one it
    needs (:func:`relation_supported` switches the sidebar to it)."""
    return rel if rel in spec.neighbours else spec.neighbours[0]


def relation_supported(spec) -> bool:
    """True if the sidebar's relation is one the mechanism supports.

    Otherwise the relation is switched to the one the mechanism needs (a mechanism page should show its
    mechanism, not an error) and the page reruns; the page then says what was switched and why.
    """
    rel = settings().neighbours
    if rel in spec.neighbours:
        # the note stays while this page shows the switched relation (a page can run several times: a fragment's
        # last poll, a widget); the sidebar drops it with the switch on the next page
        switch = relation_switch()
        if switch is not None and switch.page == current_page() and rel == switch.switched_to:
            st.info(switch.note, icon=":material/swap_horiz:")
        return True
    other = relation_for(spec, rel)
    why = RELATION_REASONS[other]
    set_pending_relation(other)
    # the switch is for this page only: the sidebar restores the user's relation on the next page
    set_relation_switch(RelationSwitch(
        value=rel, switched_to=other, page=current_page(),
        note=f"{spec.title} works with *{RELATION_WORDS[other]}* neighbours only ({why}), so the sidebar's "
             f"neighbouring relation was switched for this page; other pages go back to *{RELATION_WORDS[rel]}*."))
    st.rerun()
    return False  # pragma: no cover - st.rerun does not return
