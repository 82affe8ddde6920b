"""The session's state: the one owner of ``st.session_state``, every key behind a typed accessor (a house
test checks that no other module of the dashboard touches ``st.session_state``). What lives here:

* the dataset every page uses and where it came from (:func:`data`, :func:`set_data`, :func:`data_source`);
* the sidebar's privacy settings (:func:`settings`, a frozen :class:`~dashboard.settings.PrivacySettings`),
  and a relation a mechanism page switched for itself (:class:`RelationSwitch`);
* the page being shown and the app's start (:func:`enter_page`, :func:`pop_start_page`), messages queued
  for the next run (:func:`flash`);
* the release of the page for the sidebar's ledger (:class:`ReleaseInfo`), results kept behind a button
  (:func:`kept`, :func:`keep`), counters of the pages;
* the Data page's upload: the file kept in memory, what was typed for it, the whole table last used.

The shareable part (ε, seed, δ, relation, dataset name, page) is mirrored in the URL's query parameters
(:func:`write_query_params`; read back by :func:`init_state`).
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any

import pandas as pd
import streamlit as st

from dpsynth_core.dataset import Dataset

from . import data as data_sources
from .registry import DELTA_PAGES, PAGE_PARAMS
from .settings import DEFAULT_SETTINGS, PrivacySettings, parse_query

__all__ = ["exact_w1_requested", "request_exact_w1", "init_state", "set_data", "data", "data_source", "settings", "set_epsilon", "set_relation", "flash",
           "show_flash", "write_query_params", "bounds_from_data", "RelationSwitch", "relation_switch",
           "set_relation_switch", "pending_relation", "set_pending_relation",
           "current_page", "enter_page", "pop_start_page", "url_messages",
           "ReleaseInfo", "record_release", "release_info", "kept", "keep", "count", "add_to_count",
           "widget_value", "set_widget_value", "kept_file", "keep_file", "forget_file", "upload_values",
           "used_upload", "set_used_upload", "excluded_columns", "set_excluded_columns"]


def init_state() -> None:
    """First run of a session: defaults, then the shareable state from the URL."""
    ss = st.session_state
    if ss.get("_initialised"):
        return
    q = parse_query(st.query_params.to_dict())
    first = DEFAULT_SETTINGS
    ss["epsilon"] = q.get("epsilon", first.epsilon)
    ss["delta"] = q.get("delta", first.delta)
    ss["seed"] = q.get("seed", first.seed)
    ss["neighbours"] = q.get("neighbours", first.neighbours)
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


# ----------------------------------------------------------------------------- the dataset
def set_data(ds: Dataset, source: data_sources.Source | None = None) -> None:
    """Make ``ds`` the dataset every page uses (``source`` says how a URL can rebuild it)."""
    ss = st.session_state
    ss["dataset"] = ds
    ss["dataset_source"] = source or data_sources.Source("upload", ds.name)
    ss.pop("release_info", None)


def data() -> Dataset:
    """The dataset every page uses."""
    return st.session_state["dataset"]


def data_source() -> data_sources.Source | None:
    """Where the dataset came from (None before the first run)."""
    return st.session_state.get("dataset_source")


def bounds_from_data() -> bool:
    """True when the current dataset's bounds or categories were read off the data (then nothing is
    private): the domain says so (``provenance="data"``), or the data source does."""
    return bool(getattr(data_source(), "bounds_from_data", False)) or not data().domain.declared


# ----------------------------------------------------------------------------- the privacy settings
def settings() -> PrivacySettings:
    """The sidebar's privacy settings (ε, δ, the neighbouring relation, the teaching seed), as they are now."""
    ss = st.session_state
    return PrivacySettings(epsilon=float(ss["epsilon"]), delta=float(ss["delta"]), neighbours=ss["neighbours"],
                           seed=int(ss["seed"]))


def set_epsilon(value: float) -> None:
    """Set the sidebar's ε (a button's ``on_click``: runs before the slider exists)."""
    st.session_state["epsilon"] = value


def set_relation(value: str) -> None:
    """Set the sidebar's neighbouring relation (a button's ``on_click``, or before the widget exists)."""
    st.session_state["neighbours"] = value


@dataclass(frozen=True)
class RelationSwitch:
    """A relation a mechanism page switched for itself: the user's ``value``, the relation ``switched_to``,
    the ``page`` that did it and the ``note`` it shows while the switch stands."""

    value: str
    switched_to: str
    page: str | None
    note: str


def relation_switch() -> RelationSwitch | None:
    return st.session_state.get("_relation_switch")


def set_relation_switch(switch: RelationSwitch | None) -> None:
    """Record a switch (:func:`dashboard.eligibility.relation_supported`), or forget it (None)."""
    st.session_state["_relation_switch"] = switch


def pending_relation() -> str | None:
    """The relation to set before the sidebar's widget is drawn (taken: it is set once)."""
    return st.session_state.pop("_pending_neighbours", None)


def set_pending_relation(value: str) -> None:
    st.session_state["_pending_neighbours"] = value


# ----------------------------------------------------------------------------- the page and the app
def current_page() -> str | None:  # the URL path of the page being drawn
    return st.session_state.get("_page")


def enter_page(url: str) -> None:
    """The app draws page ``url``: a new page forgets the last page's release (the ledger shows this one's)."""
    if st.session_state.get("_page") != url:
        st.session_state.pop("release_info", None)
        st.session_state["_page"] = url


def pop_start_page() -> str | None:
    """The page the URL's ``page`` parameter asked for (taken: app.py opens it once)."""
    return st.session_state.pop("_start_page", None)


def url_messages() -> list[str]:  # what the link's parameters could not set, in words
    return list(st.session_state.get("_url_messages", []))


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


# ----------------------------------------------------------------------------- releases and kept results
@dataclass(frozen=True)
class ReleaseInfo:
    """The page's release as the sidebar's ledger shows it: its ``title``, its guarantee (``privacy``), its
    ``ledger`` (a DataFrame of steps) and the ledger's ``note``."""

    title: str
    privacy: str
    ledger: pd.DataFrame
    note: str = ""


def record_release(rel, title: str) -> None:
    """Remember the page's release for the sidebar's ledger (:func:`dashboard.sidebar.show_ledger`)."""
    st.session_state["release_info"] = ReleaseInfo(title, rel.privacy, rel.ledger.to_frame(),
                                                   getattr(rel.ledger, "note", ""))


def release_info() -> ReleaseInfo | None:
    return st.session_state.get("release_info")


def kept(slot: str) -> tuple[Hashable, Any] | None:
    """A result kept behind a button: ``(fingerprint, result)`` (the settings it was computed with), or None."""
    return st.session_state.get(slot)


def keep(slot: str, fingerprint: Hashable, result: Any) -> None:
    st.session_state[slot] = (fingerprint, result)


def count(key: str) -> int:
    """A counter of a page (e.g. how many releases were drawn again), 0 at first."""
    return int(st.session_state.get(key, 0))


def add_to_count(key: str, k: int) -> None:
    st.session_state[key] = count(key) + k


def widget_value(key: str, default: Any = None) -> Any:
    """A widget's current value, read before the widget is drawn (``default`` before it exists)."""
    return st.session_state.get(key, default)


def set_widget_value(key: str, value: Any) -> None:  # from a callback: it runs before the widget is drawn
    st.session_state[key] = value


# ----------------------------------------------------------------------------- the Data page's upload
def kept_file() -> tuple[str, bytes] | None:
    """The uploaded file being worked on, ``(name, bytes)``, kept in memory across pages (never on disk)."""
    return st.session_state.get("data_kept_file")


def keep_file(name: str, content: bytes) -> None:
    st.session_state["data_kept_file"] = (name, content)


def forget_file() -> None:
    """Forget the kept file and what was typed for it (a table already in use stays in use)."""
    kept_one = st.session_state.pop("data_kept_file", None)
    if kept_one is not None:
        st.session_state.get("data_forms", {}).pop(kept_one[0], None)


def upload_values(filename: str, most: int = 4) -> dict[str, Any]:
    """What the user chose and typed for the upload ``filename`` ({widget key: value}), kept in the session's
    own state: Streamlit forgets a widget's state on a run that does not draw it (another page's run), and the
    work on an upload is never lost. The values of the last ``most`` files are kept (a file uploaded again gets
    its values back)."""
    forms = st.session_state.setdefault("data_forms", {})
    values = forms.pop(filename, {})
    forms[filename] = values
    while len(forms) > most:
        forms.pop(next(iter(forms)))
    return values


def used_upload() -> tuple[Dataset, data_sources.Source] | None:
    """The uploaded table last used, whole (the page brings it back after its numeric columns were used)."""
    return st.session_state.get("data_used_upload")


def set_used_upload(ds: Dataset, source: data_sources.Source) -> None:
    st.session_state["data_used_upload"] = (ds, source)


def excluded_columns(filename: str) -> tuple[str, ...]:
    """The columns of the upload ``filename`` the user left out of the reading, in the order they were left out."""
    return tuple(st.session_state.get(f"data_skipped_{filename}", ()))


def set_excluded_columns(filename: str, columns: tuple[str, ...]) -> None:
    st.session_state[f"data_skipped_{filename}"] = tuple(columns)


def write_query_params(page: str) -> None:
    """Mirror the shareable state in the URL (δ only on the pages that use it)."""
    s = settings()
    source = data_source()
    qp = {"page": page, "eps": f"{s.epsilon:g}", "seed": str(s.seed), "rel": s.neighbours}
    if page in DELTA_PAGES:
        qp["delta"] = f"{s.delta:g}"
    if source is not None and source.shareable:
        qp["dataset"] = source.name
    current = st.query_params.to_dict()
    qp.update({k: current[k] for k in PAGE_PARAMS.get(page, ()) if k in current})  # the page's own (docs: doc)
    if current != qp:
        st.query_params.from_dict(qp)


def exact_w1_requested(key: str) -> bool:
    """Whether this session asked for the exact W1 of the headline job ``key`` (one that stopped at the interactive
    budget's interval: :attr:`dashboard.w1_live.Job.stops_short`)."""
    return key in st.session_state.get("w1_exact_requests", ())


def request_exact_w1(key: str) -> None:
    """Ask for the exact W1 of the headline job ``key`` (a button's ``on_click``)."""
    st.session_state["w1_exact_requests"] = {*st.session_state.get("w1_exact_requests", ()), key}
