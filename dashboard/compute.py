"""Calls into the library: cached on their inputs, with errors shown on the page instead of raised.

A page makes ONE cached call per picture: :func:`teaching_release` (a mechanism on the current data
with the sidebar's settings and the teaching seed) and :func:`w1_of` (its W1 to the data, owner view).
:func:`safe` turns a failure into a message in the user's words (the inputs are kept).
"""

from __future__ import annotations

import logging
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import streamlit as st

from dpsynth_core.domain import Domain
from dpsynth_core.mechanisms import MECHANISMS, bind, load_all
from dpsynth_core.transport import wasserstein1

from .state import data, settings

__all__ = ["safe", "domain_of", "dom_key", "cached_release", "cached_w1", "teaching_release", "w1_of",
           "mechanisms", "mechanism_spec"]

_LOG = logging.getLogger("dpsynth.dashboard")


def safe(fn: Callable, *args: Any, what: str = "running this", **kwargs: Any) -> Any:
    """Call ``fn``; turn ValueError/TypeError into ``st.error(message)`` and anything else into a
    friendly error with the details in an expander. Returns None on failure (inputs are kept)."""
    try:
        return fn(*args, **kwargs)
    except (ValueError, TypeError, NotImplementedError) as exc:
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


def domain_of(lower, upper, names) -> Domain:
    """The domain back from its hashable key (:func:`dom_key`), inside a cached function."""
    return Domain(list(lower), list(upper), names=tuple(names))


def dom_key(dom: Domain) -> tuple:
    """(lower, upper, names) of a domain as tuples: a key ``st.cache_data`` can hash."""
    return tuple(dom.lower), tuple(dom.upper), tuple(dom.names)


@st.cache_data(show_spinner=False, max_entries=128)
def cached_release(name: str, X: np.ndarray, lower: tuple, upper: tuple, names: tuple, epsilon: float, delta: float,
                   neighbours: str, seed: int | None, params: tuple):
    """One release of mechanism ``name``, cached on (mechanism, data, domain, ε, δ, relation, seed, parameters)."""
    spec = MECHANISMS[name]
    mechanism = bind(name, epsilon=epsilon, delta=delta if spec.needs_delta else None, neighbours=neighbours,
                     params=dict(params))
    return mechanism(X, domain_of(lower, upper, names), rng=seed)


@st.cache_data(show_spinner=False, max_entries=128)
def cached_w1(X: np.ndarray, Y: np.ndarray, lower: tuple, upper: tuple, names: tuple, fast: bool = False):
    """W1 of a release to the data (owner view) within the interactive budget of the library's policy."""
    return wasserstein1(X, Y, domain=domain_of(lower, upper, names), budget="preview" if fast else "interactive",
                        return_result=True)


def teaching_release(name: str, params: dict | None = None, *, seed: int | None = None,
                     epsilon: float | None = None):
    """The release of ``name`` on the current dataset with the sidebar's settings and the teaching seed
    (or ``seed``), cached. Returns the release or None (the error is shown)."""
    d = data()
    s = settings()
    items = tuple(sorted((params or {}).items()))
    with st.spinner(f"Running {name} …"):
        return safe(cached_release, name, d.X, *dom_key(d.domain),
                    float(epsilon if epsilon is not None else s["epsilon"]), s["delta"], s["neighbours"],
                    int(s["seed"] if seed is None else seed), items, what=f"running {name}")


def w1_of(Y: np.ndarray, *, fast: bool = False):
    """W1 of ``Y`` to the current data (owner view), cached; None (with a warning) for an empty release."""
    d = data()
    if np.asarray(Y).shape[0] == 0:
        st.warning("This release has no synthetic points (at this ε·n the noisy size came out ≤ 0), so W1 is "
                   "undefined. Increase ε or use more data.")
        return None
    with st.spinner("Computing W1 …"):
        return safe(cached_w1, d.X, np.asarray(Y, dtype=float), *dom_key(d.domain), fast, what="computing W1")


def mechanisms() -> dict:
    """The registry (every mechanism module imported once)."""
    return load_all()


def mechanism_spec(name: str):
    """The registry entry of a mechanism."""
    return mechanisms()[name]
