"""A long computation behind a button: a progress bar while it runs, its result kept in session state.

The Rates, Compare and Audit pages, the certificate sweep and the low-dimensional page's views run sweeps that
take seconds to minutes; nothing runs until the button is pressed, and the result stays on the page across
reruns (changing a slider does not throw it away), kept with everything it was computed from
(:mod:`dashboard.fingerprint`): when that differs from the current inputs, it is labelled as earlier work.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any, Literal

import streamlit as st

from dpsynth_core.experiments import sweep
from dpsynth_core.privacy import weak_epsilon_note

from .compute import safe
from .fingerprint import Inputs, inputs
from .state import data, keep, kept, settings

__all__ = ["Progress", "kept_sweep", "earlier_work", "weak_epsilon_caption", "epsilon_sweep"]

#: ``progress(fraction, text)``: how far the computation is (0..1) and what it does now.
Progress = Callable[[float, str], None]


def kept_sweep(label: str, compute: Callable[[Progress], Any], *, key: str, slot: str, fingerprint: Hashable = None,
               start: str = "starting …", primary: bool = True, when_stale: Literal["note", "hide"] = "note") -> Any:
    """A button ``label`` (widget key ``key``) that runs ``compute(progress)`` with a progress bar and keeps
    its result in the session (:func:`dashboard.state.keep`) as ``(fingerprint, result)``; returns the kept result (None
    before the first run).

    ``compute`` reports through ``progress(fraction, text)`` and returns None when it failed (it has shown
    why, e.g. through :func:`dashboard.compute.safe`): then the previous result is kept. ``fingerprint``
    identifies ALL the inputs of a run (:func:`dashboard.fingerprint.inputs`: the data by content, ε, δ, the
    relation, the parameters); a kept result whose fingerprint differs from the current one is returned
    labelled as earlier work (:func:`earlier_work`: what it was computed for, what changed) or not returned
    (``when_stale="hide"``).
    """
    if st.button(label, type="primary" if primary else "secondary", key=key):
        bar = st.progress(0.0, text=start)
        try:
            result = compute(_by_percent(bar))
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
        st.info(earlier_work(label, kept_fingerprint, fingerprint), icon=":material/history:")
    return result


def _by_percent(bar: Any) -> Progress:
    """The bar's ``progress``, fraction clamped to [0, 1], passed on once per percent of the way: the audit
    reports after each of up to 10,000 releases, and every update is a message to the browser."""
    shown = -1

    def update(fraction: float, text: str) -> None:
        nonlocal shown
        f = min(1.0, max(0.0, float(fraction)))
        if int(f * 100) != shown:
            shown = int(f * 100)
            bar.progress(f, text=text)

    return update


def earlier_work(label: str, kept: Any, current: Any, *, what: str = "Earlier result") -> str:
    """The label of a kept result (``what`` it is) whose inputs differ from the current ones: what it was
    computed for, what changed since (:class:`~dashboard.fingerprint.Inputs`), and the button ``label`` that
    computes it anew."""
    if isinstance(kept, Inputs) and isinstance(current, Inputs):
        changed = current.changed(kept)
        return (f"**{what}**, for {kept.words()}: not for the current inputs ({', '.join(changed)} changed "
                f"since). Press **{label}** to compute it for them.")
    return f"**{what}**, for other inputs than the current ones. Press **{label}** to compute it for them."


def weak_epsilon_caption(epsilon: float) -> None:
    """The library's note when ``epsilon`` (the largest of a sweep or an experiment) gives no meaningful
    protection (:func:`dpsynth_core.privacy.weak_epsilon_note`), as a caption: these are teaching runs."""
    note = weak_epsilon_note(epsilon)
    if note is not None:
        st.caption(f":material/lock_open: {note}")


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
    weak_epsilon_caption(max(eps_list, default=0.0))

    def compute(progress: Progress) -> Any:
        return safe(sweep, mechanism, lambda n, rng: (d.X, d.domain), [d.n], eps_list, reps, rng=s.seed,
                    params={**params, "neighbours": "replace"}, measure=measure, progress=progress,
                    what=f"sweeping ε ({mechanism})")

    fingerprint = inputs(data=d, epsilon=eps_list, neighbours="replace", seed=s.seed, params=params, repeats=reps)
    return kept_sweep(label, compute, key=f"{prefix}_run", slot=f"{prefix}_result", fingerprint=fingerprint,
                      when_stale=when_stale)
