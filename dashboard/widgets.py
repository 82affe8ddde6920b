"""Widgets: parameter controls built from a schema, a chart with its one-line explanation, the
"Look closer" choice of detail views, and the owner-view label."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import Any

import streamlit as st

from dpsynth_core.wording import w1_text

from .controls import CONTROLS
from .docs import link_docs

__all__ = ["OWNER", "explain", "plot", "look_closer", "w1_text", "param_controls", "schema_controls",
           "default_values", "initial_value"]

#: Said of every number or picture computed from the real data without noise.
OWNER = ":material/lock: owner view — not private: computed from the real data without noise, for teaching only."


def explain(what: str, formula: str | None = None) -> None:
    """One line under a chart: what it shows, and the formula behind it."""
    st.caption(what)
    if formula:
        st.latex(formula)


def plot(fig, what: str, formula: str | None = None, *, key: str | None = None) -> None:
    """A figure across the page, with its explanation (and formula) below it: a Vega-Lite specification (a
    dict: the figures of a page's first view, whose code a new browser tab loads in a fraction of Plotly's
    time; docs/architecture.md) or a Plotly figure (the detail views)."""
    if isinstance(fig, dict):
        st.vega_lite_chart(fig, width="stretch", key=key)
    else:
        st.plotly_chart(fig, width="stretch", key=key, config={"displaylogo": False})
    explain(what, formula)


def look_closer(views: dict[str, Callable[[], None]], *, key: str, default: str | None = None) -> None:
    """One detail view at a time: a choice of views, and only the chosen one is computed and drawn
    (the page stays fast whatever it can show). None is chosen on arrival unless ``default`` names one: a
    page's first view is its headline and real against synthetic, drawn at once; a detail view is one
    click away (and stays chosen for the session)."""
    names = list(views)
    choice = st.segmented_control("Look closer", names, default=default, key=key, persist_state="session")
    if choice is None:
        st.caption("Pick a view above to see how the mechanism got there.")
        return
    views[choice]()


def param_controls(spec, prefix: str | None = None, *, skip: tuple = (), labels: dict | None = None,
                   defaults: dict | None = None) -> dict:
    """Widgets for a mechanism's parameters, built from its registry schema, labelled for students
    (:data:`dashboard.controls.CONTROLS`; the code name and the mathematics are in the help tooltip).

    ``labels`` maps a choice parameter's name to {choice: label} (overrides the defaults);
    ``defaults`` overrides schema defaults that do not fit the data (e.g. s <= d)."""
    choice_labels = {name: dict(c.choices) for name, c in CONTROLS.get(spec.name, {}).items() if c.choices}
    choice_labels.update(labels or {})
    return schema_controls(_offered(spec, skip=skip, defaults=defaults), prefix or spec.name, labels=choice_labels)


def _offered(spec, *, skip: tuple = (), defaults: dict | None = None) -> tuple:
    """The parameters a page offers for ``spec``, as its widgets show them: without ``skip``, the students'
    labels, ``defaults`` over the schema's."""
    controls = CONTROLS.get(spec.name, {})
    params = []
    for p in spec.params:
        if p.name in skip:
            continue
        c = controls.get(p.name)
        changes = {"help": link_docs(f"`{p.name}`: {p.help}")}  # a document the help names opens in the app
        if c is not None:
            changes.update(label=c.label, advanced=c.advanced or p.advanced)
        if defaults and p.name in defaults:
            changes["default"] = defaults[p.name]
        params.append(dataclasses.replace(p, **changes))
    return tuple(params)


def default_values(spec, *, defaults: dict | None = None, skip: tuple = ()) -> dict:
    """What :func:`param_controls` returns for ``spec`` before anyone touches a widget (:func:`initial_value`)."""
    return {p.name: initial_value(p) for p in _offered(spec, skip=skip, defaults=defaults)}


def initial_value(p) -> Any:
    """The value parameter ``p``'s widget starts with (:func:`_control`): its default, in the widget's type."""
    if p.kind == "choice":
        return p.default if p.default in p.choices else list(p.choices)[0]
    if p.kind == "bool":
        return bool(p.default)
    if p.default is None:
        return None
    return int(p.default) if p.kind == "int" else float(p.default)


def schema_controls(params, prefix: str, *, labels: dict | None = None) -> dict:
    """One widget per :class:`~dpsynth_core.schema.ParamSpec` (mechanisms and data generators alike):
    the basic ones in three columns, the advanced ones in an expander. Returns {name: value}."""
    labels = labels or {}
    values: dict[str, Any] = {}
    basic = [p for p in params if not p.advanced]
    adv = [p for p in params if p.advanced]
    if basic:
        cols = st.columns(min(3, len(basic)))
        for i, p in enumerate(basic):
            with cols[i % len(cols)]:
                values[p.name] = _control(p, prefix, labels.get(p.name))
    if adv:
        with st.expander("More settings"):
            for p in adv:
                values[p.name] = _control(p, prefix, labels.get(p.name))
    return values


def _control(p, prefix: str, labels: dict | None = None) -> Any:
    key = f"{prefix}__{p.name}"
    label = p.title
    value = initial_value(p)
    if p.kind == "choice":
        choices = list(p.choices)
        return st.selectbox(label, choices, index=choices.index(value), key=key, help=p.help, persist_state="session",
                            format_func=(lambda c: labels.get(c, c)) if labels else str)
    if p.kind == "bool":
        return st.checkbox(label, value=value, key=key, help=p.help, persist_state="session")
    lo = None if p.low is None or not math.isfinite(p.low) else p.low
    hi = None if p.high is None or not math.isfinite(p.high) else p.high
    if p.kind == "int":
        lo = None if lo is None else int(math.ceil(lo))
        hi = None if hi is None else int(math.floor(hi))
        return st.number_input(label, min_value=lo, max_value=hi, value=value, step=1, key=key,
                               help=p.help, placeholder="auto (paper's rule)", persist_state="session")
    lo = None if lo is None else float(lo)
    hi = None if hi is None else float(hi)
    return st.number_input(label, min_value=lo, max_value=hi, value=value, key=key, help=p.help,
                           format="%.6g", placeholder="auto (paper's rule)", persist_state="session")
