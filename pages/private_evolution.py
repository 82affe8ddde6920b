"""Private Evolution (seed 003): iterations over private points, synthetic points and variations."""

import numpy as np
import streamlit as st

from dashboard import ui as _ui
from dpsynth_core import viz

_ui.require_app(__file__)

NONPRIVATE = ("private", "interpolate")
st.title("Private Evolution")
st.markdown(
    "Private Evolution starts from a data-independent cloud $S_0$ and, at every step, proposes **variations** "
    "of each synthetic point, lets every private point **vote** for its nearest variation, adds Gaussian noise "
    "to the vote counts and resamples $S_t$ from the noisy histogram. Only the noisy votes touch the data; the "
    "$T$ Gaussian steps compose exactly ($\\mu$-GDP), which is why it needs **δ > 0** (sidebar)."
)
spec = _ui.mechanism_spec("private_evolution")
if spec is not None:
    st.caption(f"{spec.title} — {spec.paper}, {spec.algorithm}. {spec.summary}")
    inits = {c: c for c in spec.param("init").choices}
    inits.update({c: f"{c} — NON-PRIVATE teaching start (reads the data)" for c in NONPRIVATE if c in inits})
    params = _ui.param_controls(spec, skip=("allow_nonprivate_init", "track_w1"), labels={"init": inits})
    params["track_w1"] = st.checkbox("Track W1 to the private data after every iteration (owner view; adds an exact "
                                     "transport solve per iteration, several seconds at n = 5000)", value=False,
                                     key="pe_track", persist_state="session")
    if params.get("init") in NONPRIVATE:
        st.warning(f"The start '{params['init']}' reads the private data: this run is **NOT differentially "
                   "private**. It shows how PE behaves from a good start; never publish its output.")
        params["allow_nonprivate_init"] = True
    res = _ui.release_section("private_evolution", params, title="private_evolution")
    if res is not None:
        rel, w = res
        d = _ui.data()
        synth = rel.trace.get("synthetic", [])
        variations = rel.trace.get("variations", [])
        weights = rel.trace.get("weights", [])
        owner = rel.trace.get("owner", {})
        T = len(variations)
        w1s = owner.get("w1")
        if synth and synth[0] is None and owner.get("initial_synthetic") is not None:
            synth = [owner["initial_synthetic"]] + list(synth[1:])  # non-private start: owner view only
        st.subheader("Iterations")
        _ui.plot(viz.pe_animation(d.X, synth, lower=d.domain.lower, upper=d.domain.upper, w1=w1s,
                                  title="S_t over the private data"),
                 "Press Play: the synthetic cloud S_t (red) moves towards the data (blue, :material/lock: owner view) "
                 "as the noisy votes accumulate.",
                 r"S_t \sim \mathrm{Hist}\big(\mathrm{NN}(S, V_t) + \mathcal N(0,\sigma^2 I)\big)^{n_s},\quad "
                 r"\sigma = \sqrt{T}\,\Delta_2/\mu(\varepsilon,\delta)", key="pe_anim")
        if T >= 1:
            t = st.slider("Iteration t", 1, T, T, key="pe_t", help="Which iteration to show in detail.")
            V = variations[t - 1]
            if V is None:
                st.info("Variations of this iteration were not kept (memory bound); the last one always is.")
            else:
                _ui.plot(viz.pe_iteration(d.X, synth[t], V, weights=None, lower=d.domain.lower, upper=d.domain.upper,
                                          title=f"iteration {t}: variations V_t and the resampled S_t"),
                         "Yellow crosses: the variations of S_(t-1) that the private points vote for (Eq. 1, scales "
                         "α·2^(l-1)); red: S_t resampled from the noisy, thresholded vote histogram. Blue: private "
                         "data (:material/lock: owner view).", key="pe_iter")
                noisy = weights[t - 1]
                if noisy is not None:
                    kept = int(np.count_nonzero(np.asarray(noisy) > 0))
                    st.caption(f"{kept} of {len(noisy)} variations keep a positive weight after noise and threshold.")
        if not w1s:
            st.caption("Tick **Track W1** above to draw W1 per iteration (owner view).")
        else:
            _ui.plot(viz.series_plot(list(range(len(w1s))), {f"W1 ({owner.get('w1_metric', '')}, owner view)": w1s},
                                     xtitle="iteration t", ytitle="W1 to the private data",
                                     title="W1 per iteration (owner view, not private)"),
                     f"{_ui.OWNER} Method: {owner.get('w1_method', '')}.", key="pe_w1")
        rate = rel.params.get("theorem_4_1_rate")
        if rate is not None:
            st.caption(f"Theorem 4.1 rate (Õ, constants unspecified) for this n, ε, δ: {rate:.3g}.")
