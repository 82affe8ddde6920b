"""Private Evolution: a synthetic cloud moves towards the data through noisy nearest-neighbour votes."""

import re
from pathlib import Path

import streamlit as st

from dashboard import ui as _ui
from dpsynth_core import viz
from dpsynth_core.evolution import (
    INTERACTIVE_MAX_ITERATIONS,
    INTERACTIVE_MAX_LEVELS,
    INTERACTIVE_MAX_SYNTHETIC,
)
from dpsynth_core.mechanisms.private_evolution import PEOwner, PETrace

NONPRIVATE = ("private", "interpolate")
#: The page's documentation, shown on the page (the repository has no published address a browser could open).
DOC = Path(__file__).resolve().parents[1] / "docs" / "private-evolution.md"
METRIC_WORDS = {"l2": "straight-line distance (l2)", "l1": "city-block distance (l1)",
                "linf": "largest-coordinate distance (l∞)"}


def _doc_text() -> str:
    """docs/private-evolution.md with its links to other files said as text (they do not open here)."""
    text = DOC.read_text(encoding="utf-8")
    return re.sub(r"\[([^\]]+)\]\(([\w./-]+\.md)\)", r"\1 (docs/\2)", text)


spec, params = _ui.mechanism_header("private_evolution")  # with cost "interactive" (dashboard.registry.CONTROLS)
if params.get("init") in NONPRIVATE:
    st.warning("This start reads the private data: the run is **NOT differentially private**. It shows how "
               "Private Evolution behaves from a good start; never publish its output.")
    params["allow_nonprivate_init"] = True
res = _ui.release_section("private_evolution", params, title="private_evolution")
if res is not None:
    rel, w = res
    trace = PETrace.of(rel)
    T = trace.iterations
    st.caption(f"{T} iterations of {trace.n_synthetic} candidate points; the noisy votes of all iterations "
               "together spend ε and δ exactly (Gaussian privacy composes in μ-GDP), most of it on the last one. "
               f"This page runs at most {INTERACTIVE_MAX_ITERATIONS} iterations of {INTERACTIVE_MAX_SYNTHETIC} points "
               f"with {INTERACTIVE_MAX_LEVELS} variation scales, at every ε, so that it answers quickly; the library's "
               "defaults may use more where ε or n is large.")
    owner = None
    if st.toggle("Show W1 after each iteration (owner view: W1 to the data at every step, computed on request)",
                 key="pe_show_w1"):
        tracked = _ui.teaching_release("private_evolution", {**params, "track_w1": True})
        owner = None if tracked is None else PEOwner.of(tracked)
    if owner is not None and owner.w1:
        w1s, words = list(owner.w1), METRIC_WORDS.get(owner.w1_metric, owner.w1_metric)
        headline = getattr(w, "value", None)
        _ui.plot(viz.series_plot(list(range(T + 1)), {"W1 to the private data (owner view)": w1s},
                                 xtitle="iteration t (T = the release)", ytitle=f"W1, {words}",
                                 title="W1 after each iteration", marker_x=T, marker_label="the release"),
                 f"{_ui.OWNER} W1 between the private data and the cloud S_t in the {words}, the distance the votes "
                 f"use (unit cube): {w1s[0]:.3f} at the start, {w1s[-1]:.3f} for the release, "
                 f"{w1s[0] / max(w1s[-1], 1e-12):.0f}× closer."
                 + (f" The headline above measures the release with the largest-coordinate distance (l∞), hence "
                    f"{headline:.4g} there: for the same two clouds l∞ ≤ l2 ≤ √d·l∞." if headline is not None
                    and owner.w1_metric != "linf" else "")
                 + f" The first {T - 1} iteration(s) only bring a small cloud to the data on a third of the budget; "
                 "the last one, with most of the budget and small steps, makes the release. Sampling the small "
                 "cloud is why the middle iterations can wobble.", key="pe_w1")
    st.markdown("**What PE is good for.** It never builds a grid: it only needs a way to propose points near "
                "given points and a start. Where a grid fits (a few numeric columns) PMM and PSMM are more "
                "accurate for the same budget; PE pays off in higher dimension, from a public start close to "
                "the data at small ε, or with a variation made for the data (images, text). The measurements are "
                "in *Private Evolution in detail* below.")
    res = _ui.numeric_details(res)  # the iteration pictures below are drawn for numeric rows
if res is not None:
    d = _ui.data()
    synth, variations = list(trace.synthetic), trace.variations
    initial = PEOwner.of(rel).initial_synthetic
    if synth and synth[0] is None and initial is not None:
        synth = [initial] + synth[1:]  # a non-private start: owner view only
    with st.expander("The mathematics", icon=":material/functions:"):
        st.latex(r"S_t \sim \mathrm{Hist}\big(\mathrm{NN}(S, V_t) + \mathcal N(0,\sigma_t^2 I)\big)^{n_s},\qquad "
                 r"\textstyle\sum_t (\Delta_2/\sigma_t)^2 = \mu(\varepsilon,\delta)^2")
        st.markdown("$V_t$ are random variations of the current points $S_{t-1}$ at several scales; every private "
                    "point votes for its nearest variation; Gaussian noise on the vote counts makes step t "
                    "$(\\Delta_2/\\sigma_t)$-GDP, and the T steps compose exactly to μ-GDP, converted to (ε, δ) "
                    "([GFR25], Algorithms 2–4, Theorem 4.1).")

    def _animation():
        _ui.plot(viz.pe_animation(d.X, synth, lower=d.domain.lower, upper=d.domain.upper, names=d.domain.names,
                                  w1=None if owner is None else owner.w1,
                                  title="the synthetic cloud, iteration by iteration"),
                 "Press Play: the synthetic cloud (vermillion) moves towards the data (grey, " + _ui.OWNER + ") as the "
                 "noisy votes accumulate.", key="pe_anim")

    def _one_iteration():
        t = st.slider("Iteration t", 1, T, T, key="pe_t")
        V = variations[t - 1]
        if V is None:
            st.caption("The variations of this iteration were not kept (memory bound); the last one always is.")
            return
        _ui.plot(viz.pe_iteration(d.X, synth[t], V, weights=None, lower=d.domain.lower, upper=d.domain.upper,
                                  names=d.domain.names, title=f"iteration {t}: the variations and the new cloud"),
                 "Sky-blue crosses: the variations of the previous cloud the private points vote for; vermillion: the new "
                 "cloud, drawn from the noisy votes. Grey: the private data (" + _ui.OWNER + ")", key="pe_iter")
        weights = trace.weights[t - 1]
        if weights is not None:
            kept = sum(1 for w in weights if w > 0)
            st.caption(f"{kept} of {len(weights)} variations keep a positive weight after the noise.")

    _ui.look_closer({"Iterations": _animation, "One iteration": _one_iteration}, key="pe_view")
with st.expander("Private Evolution in detail (docs/private-evolution.md)", icon=":material/menu_book:",
                 key="pe_doc", on_change="rerun") as doc:
    if doc.open:
        st.markdown(_doc_text())
_ui.lesson_nav("private_evolution")
