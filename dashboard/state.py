"""The session's state: the dataset, the privacy settings, queued messages and the shareable URL.

Everything a page shares with the others lives in ``st.session_state``; this module is the one that
reads and writes those keys. The shareable part (ε, seed, δ, relation, dataset name, page) is
mirrored in the URL's query parameters (:func:`write_query_params`; read back by :func:`init_state`).
"""

from __future__ import annotations

import streamlit as st

from dpsynth_core.datasets import Dataset

from . import data as data_sources
from .registry import DELTA_PAGES
from .settings import TEACHING_SEED, PrivacySettings, parse_query

__all__ = ["init_state", "set_data", "data", "settings", "flash", "show_flash", "write_query_params",
           "bounds_from_data", "record_release"]


def init_state() -> None:
    """First run of a session: defaults, then the shareable state from the URL."""
    ss = st.session_state
    if ss.get("_initialised"):
        return
    # a cold start on a page URL comes back through require_app with the link's parameters stashed
    q = parse_query({**ss.pop("_start_query", {}), **st.query_params.to_dict()})
    ss["epsilon"] = q.get("epsilon", 1.0)
    ss["delta"] = q.get("delta", 1e-6)
    ss["seed"] = q.get("seed", TEACHING_SEED)
    ss["neighbours"] = q.get("neighbours", "add_remove")
    ss["_start_page"] = ss.get("_start_page") or q.get("page")
    messages = [f"Ignored invalid URL parameter {x}." for x in q["ignored"]] + q["adjusted"]
    chosen = None
    if "dataset" in q:
        try:
            chosen = data_sources.by_name(q["dataset"])
        except (ValueError, TypeError) as exc:
            messages.append(str(exc))
    set_data(*(chosen or data_sources.default()))
    ss["_url_messages"] = messages
    ss["_initialised"] = True


def set_data(ds: Dataset, source: data_sources.Source | None = None) -> None:
    """Make ``ds`` the dataset every page uses (``source`` says how a URL can rebuild it)."""
    ss = st.session_state
    ss["dataset"] = ds
    ss["dataset_source"] = source or data_sources.Source("upload", ds.name)
    ss.pop("release_info", None)


def data() -> Dataset:
    """The dataset every page uses."""
    return st.session_state["dataset"]


def settings() -> PrivacySettings:
    """The sidebar's privacy settings (ε, δ, the neighbouring relation, the teaching seed), as they are now."""
    ss = st.session_state
    return PrivacySettings(epsilon=float(ss["epsilon"]), delta=float(ss["delta"]), neighbours=ss["neighbours"],
                           seed=int(ss["seed"]))


def bounds_from_data() -> bool:
    """True when the current dataset's bounds or categories were read off the data (then nothing is
    private): the domain says so (``provenance="data"``), or the data source does."""
    source = st.session_state.get("dataset_source")
    return bool(getattr(source, "bounds_from_data", False)) or not data().domain.declared


def flash(kind: str, message: str) -> None:
    """Queue a message shown at the top of the next run (survives ``st.rerun``)."""
    st.session_state.setdefault("_flash", []).append((kind, message))


def show_flash() -> None:
    """Show (and forget) the queued messages; a success or an error also as a toast, which is seen wherever the page is
    scrolled (the button that caused it is often far below the top, where the message is drawn)."""
    for kind, message in st.session_state.pop("_flash", []):
        getattr(st, kind)(message)
        if kind in ("success", "error"):
            st.toast(message, icon=":material/check_circle:" if kind == "success" else ":material/error:")


def record_release(rel, title: str) -> None:
    """Remember the page's release for the sidebar's ledger (:func:`dashboard.sidebar.show_ledger`)."""
    st.session_state["release_info"] = {"title": title, "privacy": rel.privacy, "ledger": rel.ledger.to_frame(),
                                        "note": getattr(rel.ledger, "note", "")}


def write_query_params(page: str) -> None:
    """Mirror the shareable state in the URL (δ only on the pages that use it)."""
    s = settings()
    source = st.session_state.get("dataset_source")
    qp = {"page": page, "eps": f"{s.epsilon:g}", "seed": str(s.seed), "rel": s.neighbours}
    if page in DELTA_PAGES:
        qp["delta"] = f"{s.delta:g}"
    if source is not None and source.shareable:
        qp["dataset"] = source.name
    current = st.query_params.to_dict()
    if current != qp:
        st.query_params.from_dict(qp)
