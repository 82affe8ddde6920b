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

__all__ = ["Progress", "kept_sweep"]

#: ``progress(fraction, text)``: how far the computation is (0..1) and what it does now.
Progress = Callable[[float, str], None]


def kept_sweep(label: str, compute: Callable[[Progress], Any], *, key: str, slot: str, fingerprint: Hashable = None,
               start: str = "starting …", primary: bool = True, when_stale: Literal["note", "hide"] = "note") -> Any:
    """A button ``label`` (widget key ``key``) that runs ``compute(progress)`` with a progress bar and keeps
    its result in ``st.session_state[slot]`` as ``(fingerprint, result)``; returns the kept result (None
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
            st.session_state[slot] = (fingerprint, result)
    kept = st.session_state.get(slot)
    if kept is None:
        return None
    kept_fingerprint, result = kept
    if kept_fingerprint != fingerprint:
        if when_stale == "hide":
            return None
        st.caption(f"These results are from earlier settings; press **{label}** to refresh them.")
    return result
