"""Private Evolution: a synthetic cloud moves towards the data through noisy nearest-neighbour votes."""

import numpy as np
import streamlit as st

from dashboard import ui as _ui
from dpsynth_core import viz
from dpsynth_core.mechanisms.private_evolution import PEOwner, PETrace

_ui.require_app(__file__)

NONPRIVATE = ("private", "interpolate")
spec, params = _ui.mechanism_header("private_evolution", "private_evolution",
                                    skip=("allow_nonprivate_init", "track_w1", "variation_scales", "public"))
if params.get("init") in NONPRIVATE:
    st.warning("This start reads the private data: the run is **NOT differentially private**. It shows how "
               "Private Evolution behaves from a good start; never publish its output.")
    params["allow_nonprivate_init"] = True
params["track_w1"] = False  # the per-iteration W1 (owner view) is computed only when its view is open
res = _ui.release_section("private_evolution", params, title="private_evolution")
res = _ui.numeric_details(res)  # the detail views are made for numeric rows
if res is not None:
    rel, w = res
    d = _ui.data()
    trace = PETrace.of(rel)
    synth, variations, weights = list(trace.synthetic), trace.variations, trace.weights
    T = trace.iterations
    if synth and synth[0] is None and rel.owner.initial_synthetic is not None:
        synth = [rel.owner.initial_synthetic] + synth[1:]  # a non-private start: owner view only
    st.caption(f"{T} iterations, {trace.n_synthetic} candidate points; the noisy votes of all "
               "iterations together spend ε and δ exactly (Gaussian privacy composes in μ-GDP).")
    with st.expander("The mathematics", icon=":material/functions:"):
        st.latex(r"S_t \sim \mathrm{Hist}\big(\mathrm{NN}(S, V_t) + \mathcal N(0,\sigma^2 I)\big)^{n_s},\qquad "
                 r"\sigma = \sqrt{T}\,\Delta_2/\mu(\varepsilon,\delta)")
        st.markdown("$V_t$ are random variations of the current points $S_{t-1}$ at several scales; every private "
                    "point votes for its nearest variation; Gaussian noise on the vote counts makes each step "
                    "$(\\mu/\\sqrt T)$-GDP, and the T steps compose exactly to μ-GDP, converted to (ε, δ) "
                    "([GFR25], Algorithms 2–4, Theorem 4.1).")

    def _animation():
        _ui.plot(viz.pe_animation(d.X, synth, lower=d.domain.lower, upper=d.domain.upper, names=d.domain.names,
                                  title="the synthetic cloud, iteration by iteration"),
                 "Press Play: the synthetic cloud (vermillion) moves towards the data (grey, " + _ui.OWNER + ") as the "
                 "noisy votes accumulate.", key="pe_anim")

    def _one_iteration():
        if T < 1:
            st.caption("This run has no iteration.")
            return
        t = st.slider("Iteration t", 1, T, T, key="pe_t")
        V = variations[t - 1]
        if V is None:
            st.caption("The variations of this iteration were not kept (memory bound); the last one always is.")
            return
        _ui.plot(viz.pe_iteration(d.X, synth[t], V, weights=None, lower=d.domain.lower, upper=d.domain.upper,
                                  names=d.domain.names,
                                  title=f"iteration {t}: the variations and the new cloud"),
                 "Sky-blue crosses: the variations of the previous cloud the private points vote for; vermillion: the new "
                 "cloud, drawn from the noisy votes. Grey: the private data (" + _ui.OWNER + ")", key="pe_iter")
        noisy = weights[t - 1]
        if noisy is not None:
            kept = int(np.count_nonzero(np.asarray(noisy) > 0))
            st.caption(f"{kept} of {len(noisy)} variations keep a positive weight after the noise and the threshold.")

    def _w1_curve():
        tracked = _ui.teaching_release("private_evolution", {**params, "track_w1": True})
        w1s = None if tracked is None else PEOwner.of(tracked).w1
        if not w1s:
            return
        best = int(np.argmin(w1s))
        _ui.plot(viz.series_plot(list(range(len(w1s))), {"W1 to the private data (owner view)": w1s},
                                 xtitle="iteration t", ytitle="W1", title="W1 after each iteration"),
                 f"{_ui.OWNER} The lowest W1 is at iteration {best} of {len(w1s) - 1}. Every iteration spends part "
                 "of the budget, so the votes of a long run are noisier: after the best iteration W1 can creep up. "
                 "The number of iterations is fixed in advance from n and ε (choosing the best one would need the "
                 "data).", key="pe_w1")

    _ui.look_closer({"Iterations": _animation, "W1 per iteration": _w1_curve, "One iteration": _one_iteration},
                    key="pe_view")
_ui.lesson_nav("private_evolution")
