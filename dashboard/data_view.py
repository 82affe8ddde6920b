"""The Data page's sources and its picture of the current dataset: a generator with its parameters, a bundled
real dataset, the bundled mixed table, the whole uploaded table used last, and the dataset every page uses
(its rows, public domain and categories: an owner view)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dpsynth_core import viz
from dpsynth_core.clamping import BOUNDS_ADVICE, clamping
from dpsynth_core.datasets import GENERATORS
from dpsynth_core.defaults import auto_mechanism
from dpsynth_core.validation import plural
from dpsynth_core.wording import column_domain

from . import data as sources
from . import registry, state
from .compute import mechanism_label, safe
from .controls import advice_words
from .downloads import domain_download
from .navigation import PAGE_OBJECTS
from .widgets import plot, schema_controls

__all__ = ["generator_section", "real_section", "mixed_section", "whole_upload_offer", "reset_button",
           "current_dataset", "auto_choice"]


@st.cache_data(show_spinner=False, max_entries=16)
def _generate(name: str, params: tuple):
    return sources.generate(name, dict(params))


@st.cache_data(show_spinner=False, max_entries=8)
def _real(name: str):
    return sources.real(name)


@st.cache_data(show_spinner=False, max_entries=4)
def _mixed(name: str):
    return sources.mixed(name)


def _use(ds, source: sources.Source, message: str) -> None:
    state.set_data(ds, source)
    state.flash("success", message)
    st.rerun()


def generator_section() -> None:
    gen = st.selectbox("Generator", list(GENERATORS), key="data_gen", persist_state="session")
    defaults = {p.name: p.default for p in GENERATORS[gen][1]}
    values = schema_controls(GENERATORS[gen][1], f"gen__{gen}")
    if st.button("Generate", type="primary", key="data_generate"):
        ds = safe(_generate, gen, tuple(sorted(values.items())), what="generating data")
        if ds is not None:
            _use(ds, sources.Source("generator", gen, {} if values == defaults else dict(values)),
                 f"Using `{ds.name}`: {ds.n} points in d = {ds.d}.")


def real_section() -> None:
    which = st.selectbox("Dataset", sources.real_names(), key="data_real", persist_state="session")
    if st.button("Load", type="primary", key="data_load"):
        ds = safe(_real, which, what="loading the dataset")
        if ds is not None:
            _use(ds, sources.Source("real", which), f"Using `{ds.name}`: {ds.n} points in d = {ds.d}.")


def mixed_section() -> None:
    names = sources.mixed_names()
    which = st.selectbox("Table", names, key="data_mixed", persist_state="session") if len(names) > 1 else names[0]
    ds = safe(_mixed, which, what="loading the table")
    if ds is None:
        return
    st.caption(ds.description)
    dom = ds.domain
    st.markdown("**Declared before looking at the data** (public): "
                + "; ".join(column_domain(dom, c) for c in dom.names) + ".")
    if st.button("Load", type="primary", key="data_load_mixed"):
        _use(ds, sources.Source("mixed", which), f"Using `{ds.name}`: {plural(ds.n, 'row')}, {dom.k} numeric and "
                                                 f"{dom.d - dom.k} categorical columns.")


def whole_upload_offer() -> None:
    """After "Use the numeric columns of ... only": the uploaded table as it was used, back in one click."""
    whole = state.used_upload()  # (dataset, source): the uploaded table last used, whole
    if whole is None or whole[0] is state.data():
        return
    if st.button(f"Use the whole table {whole[0].name} again", key="data_whole_upload", icon=":material/table:",
                 help="The table you uploaded and used, as you used it: every column chosen, with the bounds and "
                      "categories you declared (kept in this session's memory only)."):
        _use(*whole, f"Using `{whole[0].name}` again: {plural(whole[0].n, 'row')}, d = {whole[0].d}.")


def reset_button() -> None:
    if st.button("Reset to the default dataset", key="data_reset"):
        state.set_data(*sources.default())
        state.flash("info", "Back to the default dataset.")
        st.rerun()


def current_dataset() -> None:
    """The dataset every page uses: its rows two coordinates at a time, its public domain (and its download, a
    domain file), its size and, on a table with categorical columns, the rows per category (an owner view: the
    true rows and counts); the library's warning when its bounds clamp rows."""
    d = state.data()
    dom = d.domain
    st.subheader(f"Current dataset: `{d.name}`")
    st.caption(d.description)
    if not dom.declared:
        st.warning("The domain of this dataset was read off the data: NOT private. No release of it is differentially "
                   "private; declare the bounds and categories to make it private.")
    clamped = clamping(d.X, dom)  # the library's one count and decision: a warning, the release goes ahead
    if clamped.warns:
        st.warning(clamped.message(advice_words(BOUNDS_ADVICE[0])), icon=":material/crop:")
    table = d.to_frame()
    c1, c2 = st.columns([2, 1])
    with c1:
        _scatter(d, table, c2)
    with c2:
        st.dataframe(pd.DataFrame({"column": list(dom.names),
                                   "kind": ["categorical" if c in dom.categories else "numeric" for c in dom.names],
                                   "public domain": [column_domain(dom, c).split(" ∈ ", 1)[1] for c in dom.names]}),
                     hide_index=True)
        domain_download(dom, d.name, key="data")
        st.metric("rows (owner view)", d.n)
        st.metric("columns d" if dom.is_mixed else "dimension d", d.d)
        if dom.is_mixed:
            st.caption(f"{dom.k} numeric, {d.d - dom.k} categorical.")
    if dom.is_mixed:
        plot(viz.category_counts(table, None, dom.categories, title="rows per category"),
             "Every declared category has its bar, also one nobody is in (:material/lock: owner view: true counts).",
             key="data_categories")
    st.dataframe(table.head(20), hide_index=True)
    st.caption("First 20 rows (:material/lock: owner view).")


def auto_choice() -> None:
    """The mechanism ``auto`` picks for the current table (:func:`dpsynth_core.defaults.auto_mechanism`: its public
    shape only -- column types, category counts, ε), the library's reason as it gives it, and a link to its page."""
    choice = safe(auto_mechanism, state.data().domain, epsilon=state.settings().epsilon, what="choosing a mechanism")
    if choice is None:
        return
    label = mechanism_label(choice.mechanism)
    st.markdown(f"**Without choosing a mechanism** (`auto`, as `run(\"auto\", …)` and `dpsynth synth -m auto` do), "
                f"this table gets **{label}**: {choice.reason}.")
    page = next((p for p in registry.PAGES if p.mechanism == choice.mechanism), None)
    if page is not None and page.url in PAGE_OBJECTS:
        st.page_link(PAGE_OBJECTS[page.url], label=f"Open {label}", icon=":material/arrow_forward:")


def _scatter(d, table: pd.DataFrame, controls) -> None:
    """The numeric columns two at a time (chosen in ``controls`` beyond two), coloured by a categorical column."""
    dom = d.domain
    X_num, num_names = d.numeric_part()
    axes = (0, 1)
    if len(num_names) > 2:
        a0 = controls.selectbox("x axis", list(num_names), index=0, key="data_ax0", persist_state="session")
        a1 = controls.selectbox("y axis", list(num_names), index=1, key="data_ax1", persist_state="session")
        axes = (list(num_names).index(a0), list(num_names).index(a1))
    labels, label_title = d.labels, "label"
    if dom.is_mixed:
        by = controls.selectbox("Colour by", ["—"] + list(dom.categories), index=1, key="data_colour",
                                persist_state="session", help="Colour the rows by a categorical column.")
        if by in dom.categories:
            labels, label_title = list(table[by].astype(str)), by
    plot(viz.scatter_data(X_num, num_names, labels=labels, lower=dom.lower, upper=dom.upper, axes=axes,
                          label_title=label_title),
         "Your data (:material/lock: owner view), two coordinates at a time; the dotted box is the public domain."
         + (" Numeric columns only; the categories colour the rows and are counted below." if dom.is_mixed else ""),
         key="data_scatter")
