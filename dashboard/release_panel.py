"""A mechanism page's release: run it once the table fits and the relation is the one it needs
(:mod:`dashboard.eligibility`), its headline (:mod:`dashboard.headline`), the warnings and notes, real against
synthetic, what it preserves (:mod:`dashboard.preserves`) and the private downloads (:mod:`dashboard.downloads`).

Randomness: the release on screen uses the sidebar's teaching seed, so that a class sees the same
pictures; anything downloaded is a NEW release drawn with fresh operating-system entropy, because whoever
knows a seed can re-draw the noise.
"""

from __future__ import annotations

import streamlit as st

from dpsynth_core.clamping import BOUNDS_ADVICE, clamping, clamping_of_release
from dpsynth_core.privacy import weak_epsilon_note

from .compute import headline_w1, mechanisms, teaching_release
from .controls import advice_words
from .docs import link_docs
from .downloads import private_downloads
from .eligibility import fits_limits, relation_supported
from .headline import headline
from .preserves import category_views, preserves_view
from .state import bounds_from_data, data, record_release
from .widgets import plot

__all__ = ["release_section", "release_panel", "clamped_rows"]


def release_section(name: str, params: dict, *, title: str):
    """Run the mechanism (cached), show the headline and real against synthetic. Returns (rel, w1) or None."""
    spec = mechanisms()[name]
    if not fits_limits(spec, key=title) or not relation_supported(spec):  # the limits first: said before running
        return None
    rel = teaching_release(name, params)
    if rel is None:
        return None
    w, w1_key = headline_w1(rel.synthetic)
    release_panel(rel, w, params, title=title, w1_key=w1_key)
    d = data()
    mixed = d.domain.is_mixed
    plot(_scatter(d, rel.synthetic), _scatter_caption(d.domain), key=f"{title}_scatter")
    if mixed:
        category_views(d, rel, key=title)
    preserves_view(d, rel, w, key=title, w1_pending=w is None and w1_key is not None)
    return rel, w


def _scatter(d, Y):
    from dpsynth_core import viz

    X, names = d.numeric_part()
    return viz.scatter_compare(X, d.domain.numeric_rows(Y), names, lower=d.domain.lower,
                               upper=d.domain.upper)


def _scatter_caption(dom) -> str:
    """What :func:`_scatter` draws: two panels side by side, or one overlaid histogram for one numeric column."""
    if len(dom.numeric_names) == 1:
        text = ("The real data (dotted outline, :material/lock: owner view) and the synthetic data (bars) as "
                "histograms overlaid on the same axis; the axis spans the public domain.")
    else:
        text = ("Left: the real data (:material/lock: owner view). Right: the synthetic data, on the same axes; the "
                "dotted box is the public domain.")
    if dom.is_mixed:
        text += (f" The numeric column {dom.numeric_names[0]}" if len(dom.numeric_names) == 1 else
                 " The numeric columns") + "; the categories are counted below."
    return text


def clamped_rows(rel) -> str | None:
    """The library's clamping warning for the rows of the current data the release moved onto the bounds
    (:mod:`dpsynth_core.clamping`: the one count and decision of the library, the command line and the
    dashboard; the release goes ahead), with the columns, or None below the library's threshold. An owner view
    (the message says so)."""
    c = clamping_of_release(rel)
    if c is None or not c.warns:
        return None
    d = data()
    return clamping(d.X, d.domain).message(advice_words(BOUNDS_ADVICE[0]))


def release_panel(rel, w1v, params: dict, *, title: str, w1_key: str | None = None) -> None:
    """The headline of a release (:func:`dashboard.headline.headline`: W1 to the data, the theory's bound, the
    synthetic size and the guarantee; ``w1_key`` names its background W1 job), the warnings, the release's
    notes and the private downloads (in an expander)."""
    spec = mechanisms().get(rel.mechanism)
    record_release(rel, spec.title if spec is not None else rel.mechanism)
    headline(rel, w1v, w1_key)
    weak = weak_epsilon_note(rel.epsilon)  # the library's note, in the release's public notes too
    if weak is not None:
        st.warning(weak, icon=":material/lock_open:")
    clamped = clamped_rows(rel)
    if clamped is not None:
        st.warning(clamped, icon=":material/crop:")
    if bounds_from_data():
        st.warning("NOT private: the bounds or categories of this dataset were read off the data (Data page), so no "
                   "release of it is differentially private. Type public bounds and declare the categories to make "
                   "it private.")
    elif not rel.is_dp:
        st.warning("This run is NOT differentially private (a teaching start that reads the private data). "
                   "Never publish its output.")
    notes = [n for n in rel.notes if n != weak]  # the weak-ε note is said above, as a warning
    if notes:
        with st.expander("Technical notes on this release", icon=":material/info:"):
            for note in notes:
                st.caption(link_docs(str(note)))  # a document the note names opens in the app
    with st.expander("Download a private release", icon=":material/download:"):
        if bounds_from_data():
            st.caption("Downloads are disabled: the bounds or categories were read off the data.")
        else:
            private_downloads(rel.mechanism, params, key=title)


