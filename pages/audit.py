"""Audit: the two output distributions on a neighbouring pair with the e^ε band, and ε̂."""

import numpy as np
import streamlit as st

from dashboard import ui as _ui
from dpsynth_core import audit, viz

_ui.require_app(__file__)

st.title("Privacy audit")
st.markdown(
    "Differential privacy is a promise about **every pair of neighbouring datasets** $D, D'$ and every event "
    "$E$: $P(M(D)\\in E) \\le e^{\\varepsilon} P(M(D')\\in E) + \\delta$. Here we run a mechanism many times on "
    "one such pair, reduce each release to a number (a statistic of the synthetic data), and compute a "
    "statistically valid **lower bound ε̂** on the privacy loss (Clopper–Pearson intervals over threshold "
    "events, Bonferroni-corrected). If ε̂ exceeded the declared ε, the mechanism would be caught lying."
)
specs = _ui.mechanisms()
d = _ui.data()
s = _ui.settings()
names = list(specs)
c1, c2, c3 = st.columns(3)
name = c1.selectbox("Mechanism", names, index=names.index("pmm") if "pmm" in names else 0, key="audit_mech",
                    format_func=lambda m: specs[m].title, persist_state="session")
kinds = ["move"] if s["neighbours"] == "replace" else list(audit.NEIGHBOUR_KINDS)
kind = c2.radio("Neighbouring pair", kinds, horizontal=True, key=f"audit_kind_{s['neighbours']}",
                persist_state="session", help="D' = D plus the point (add), D without the row nearest to it "
                                              "(remove), or D with that row moved onto it (move). Under replace "
                                              "neighbours only 'move' is a neighbouring pair.")
stat = c3.selectbox("Statistic", list(audit.STATISTICS), key="audit_stat", persist_state="session",
                    help="What each release is reduced to. A small box around the point has the most power.")
c4, c5, c6 = st.columns(3)
centre = d.domain.center
px = c4.number_input(f"point: {d.domain.names[0]}", value=float(centre[0]), key="audit_px", format="%.4g",
                     help="The record that is added, removed or moved to (domain units).", persist_state="session")
py = (c5.number_input(f"point: {d.domain.names[1]}", value=float(centre[1]), key="audit_py", format="%.4g",
                      persist_state="session") if d.d > 1 else None)
half = c6.select_slider("Box half-width (unit cube)", options=[1 / 64, 1 / 32, 1 / 16, 1 / 8, 1 / 4], value=1 / 16,
                        format_func=lambda v: f"1/{round(1 / v)}", key="audit_half", persist_state="session")
c7, c8 = st.columns(2)
n_rows = c7.select_slider("Rows of D", options=[50, 100, 200, 300, 500, 1000], value=200, key="audit_n",
                          persist_state="session", help="D is a fixed random subset of the current data.")
trials = c8.select_slider("Trials per dataset", options=[40, 100, 200, 400, 1000, 2000], value=200, key="audit_trials",
                          persist_state="session", help="More trials give a tighter (larger) lower bound.")
point = np.array([px] + ([py] if py is not None else []) + list(centre[2:]), dtype=float)

try:
    declared, why = audit.pair_epsilon(kind, s["neighbours"], s["epsilon"])
except ValueError as exc:
    st.error(str(exc))
    st.stop()
spec = specs[name]
dlt = s["delta"] if spec.needs_delta else 0.0
st.caption(f"Declared guarantee for this pair: ε = {declared:.4g}, δ = {dlt:.3g} ({why}). Mechanism run at the "
           f"sidebar's ε = {s['epsilon']:g} with its default parameters, {s['neighbours'].replace('_', '/')} "
           "neighbours.")
if name == "private_evolution":
    st.caption("Private Evolution takes a fraction of a second per run: keep the trials low.")

key = (name, kind, stat, float(px), None if py is None else float(py), half, n_rows, trials, d.name, d.n,
       s["epsilon"], s["delta"], s["neighbours"], s["seed"])
if st.button("Run audit", type="primary", key="audit_run"):
    bar = st.progress(0.0, text="running …")

    def progress(fraction, message):
        bar.progress(min(1.0, fraction), text=message)

    pair = _ui.safe(audit.pair_near, d.X, d.domain, kind, point, n=n_rows, rng=s["seed"], what="building the pair")
    statistic = _ui.safe(audit.statistic_named, stat, point, d.domain, half, what="building the statistic")
    mechanism = _ui.safe(audit.from_registry, name, d.domain, epsilon=s["epsilon"],
                         delta=s["delta"] if spec.needs_delta else None, neighbours=s["neighbours"],
                         what="preparing the mechanism")
    if pair is not None and statistic is not None and mechanism is not None:
        res = _ui.safe(audit.audit, mechanism, pair[0], pair[1], statistic=statistic, trials=trials,
                       epsilon=declared, delta=dlt, rng=s["seed"], progress=progress, what="auditing")
        if res is not None:
            st.session_state["audit_result"] = (key, res)
    bar.empty()

out = st.session_state.get("audit_result")
if out is None:
    st.info("Choose a mechanism, a pair and a statistic, then press **Run audit** (progress is shown).")
else:
    rkey, res = out
    if rkey != key:
        st.caption("These results are from earlier settings; press **Run audit** to refresh them.")
    m1, m2, m3 = st.columns(3)
    m1.metric("ε̂ (lower bound)", f"{res.epsilon_lower:.3g}", help=f"Valid with probability ≥ {res.confidence:.0%}.")
    m2.metric("declared ε", f"{res.epsilon_declared:.3g}")
    m3.metric("verdict", "no violation" if res.passed else "VIOLATION")
    (st.success if res.passed else st.error)(res.summary())
    lo, hi = res.band()
    _ui.plot(viz.audit_band(res.hist_D, res.hist_D_prime, res.bin_edges, lo, hi, epsilon=res.epsilon_declared,
                            title=f"{stat}: {res.trials} releases on each dataset"),
             "Blue: how often each value of the statistic occurs on D; red: on D'. Green: the range that "
             "(ε, δ)-DP allows for each red bar given the blue one. A red bar slightly outside its range can be "
             "sampling noise; the lower bound ε̂ accounts for it.",
             r"e^{-\varepsilon}\big(P_D(E)-\delta\big)\ \le\ P_{D'}(E)\ \le\ e^{\varepsilon}P_D(E)+\delta",
             key="audit_plot")
    if res.best_event is not None:
        st.caption(f"Best event: {res.best_event.describe()} — {res.events_tested} (event, direction) pairs "
                   f"tested on {res.trials - res.selection_trials} runs after {res.selection_trials} selection runs.")
