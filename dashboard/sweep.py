"""A long computation behind a button: a progress bar while it runs, its result kept in session state.

The Rates, Compare and Audit pages and two views of the low-dimensional page run sweeps that take
seconds to minutes; nothing runs until the button is pressed, and the result stays on the page
across reruns (changing a slider does not throw it away), tagged with the settings it was computed
with.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any, Literal

import streamlit as st

from dpsynth_core.experiments import sweep

from .compute import safe
from .state import data, keep, kept, settings

__all__ = ["Progress", "kept_sweep", "epsilon_sweep"]

#: ``progress(fraction, text)``: how far the computation is (0..1) and what it does now.
Progress = Callable[[float, str], None]


def kept_sweep(label: str, compute: Callable[[Progress], Any], *, key: str, slot: str, fingerprint: Hashable = None,
               start: str = "starting …", primary: bool = True, when_stale: Literal["note", "hide"] = "note") -> Any:
    """A button ``label`` (widget key ``key``) that runs ``compute(progress)`` with a progress bar and keeps
    its result in the session (:func:`dashboard.state.keep`) as ``(fingerprint, result)``; returns the kept result (None
    before the first run).

    ``compute`` reports through ``progress(fraction, text)`` and returns None when it failed (it has shown
    why, e.g. through :func:`dashboard.compute.safe`): then the previous result is kept. ``fingerprint``
    identifies the settings of a run; a kept result whose fingerprint differs from the current one is
    returned with a note asking to press the button again (``when_stale="note"``) or not returned
    (``when_stale="hide"``).
    """
    if st.button(label, type="primary" if primary else "secondary", key=key):
        bar = st.progress(0.0, text=start)
        try:
            result = compute(lambda fraction, text: bar.progress(min(1.0, max(0.0, float(fraction))), text=text))
        finally:
            bar.empty()
        if result is not None:
            keep(slot, fingerprint, result)
    stored = kept(slot)
    if stored is None:
        return None
    kept_fingerprint, result = stored
    if kept_fingerprint != fingerprint:
        if when_stale == "hide":
            return None
        st.caption(f"These results are from earlier settings; press **{label}** to refresh them.")
    return result


def epsilon_sweep(mechanism: str, params: dict, measure: Callable, *, label: str, prefix: str,
                  choices: list[float], default: list[float], repeats_label: str, repeats: tuple[int, int, int],
                  when_stale: Literal["note", "hide"] = "note") -> Any:
    """Releases of ``mechanism`` (with ``params``, the dataset size public: replace neighbours) on the current
    data over the ε values the user picks among ``choices``, each measured by ``measure``
    (:func:`dpsynth_core.experiments.sweep`): the controls (keys ``<prefix>_eps`` and ``<prefix>_reps``; the
    repeats' slider ``(low, high, default)``), the button ``label`` (``<prefix>_run``) and the result kept in
    ``<prefix>_result``. Returns the sweep's DataFrame, or None before the first run."""
    d, s = data(), settings()
    c1, c2 = st.columns(2)
    eps_list = sorted(c1.multiselect("ε values", choices, default=default, key=f"{prefix}_eps", persist_state="session"))
    reps = c2.slider(repeats_label, *repeats, key=f"{prefix}_reps", persist_state="session")

    def compute(progress: Progress) -> Any:
        return safe(sweep, mechanism, lambda n, rng: (d.X, d.domain), [d.n], eps_list, reps, rng=s.seed,
                    params={**params, "neighbours": "replace"}, measure=measure, progress=progress,
                    what=f"sweeping ε ({mechanism})")

    fingerprint = (d.name, d.n, tuple(eps_list), reps, tuple(sorted(params.items())), s.seed)
    return kept_sweep(label, compute, key=f"{prefix}_run", slot=f"{prefix}_result", fingerprint=fingerprint,
                      when_stale=when_stale)
