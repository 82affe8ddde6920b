"""Compare: all mechanisms on the same data and ε — W1, time, (ε, δ, relation), bound, synthetic data."""

import streamlit as st

from dashboard import ui as _ui
from dpsynth_core import viz
from dpsynth_core.experiments import compare

_ui.require_app(__file__)

st.title("Compare")
st.markdown("Every registered mechanism on **the same data, ε, δ, relation and seed**, each with its paper's "
            "default parameters. Mechanisms that cannot run in this setting (relation, dimension) say why.")
specs = _ui.mechanisms()
d = _ui.data()
s = _ui.settings()
chosen = st.multiselect("Mechanisms", list(specs), default=list(specs), key="compare_mechs",
                        format_func=lambda m: specs[m].title, persist_state="session")
key = (tuple(chosen), d.name, d.n, s["epsilon"], s["delta"], s["neighbours"], s["seed"])
if st.button("Run comparison", type="primary", key="compare_run"):
    bar = st.progress(0.0, text="starting …")
    res = _ui.safe(compare, chosen, d.X, d.domain, epsilon=s["epsilon"], delta=s["delta"],
                   neighbours=s["neighbours"], rng=s["seed"],
                   progress=lambda f, t: bar.progress(min(1.0, f), text=t), what="comparing mechanisms")
    bar.empty()
    if res is not None:
        st.session_state["compare_result"] = (key, res)

res = st.session_state.get("compare_result")
if res is None:
    st.info("Press **Run comparison** to run the mechanisms above on the current data (progress is shown).")
else:
    rkey, (df, synth) = res
    if rkey != key:
        st.caption("These results are from earlier settings; press **Run comparison** to refresh them.")
    cols = [c for c in ("mechanism", "status", "w1", "bound", "seconds", "privacy", "n_synthetic", "w1_interval",
                        "bound_kind", "reason") if c in df.columns]
    st.dataframe(df[cols], hide_index=True,
                 column_config={"w1": st.column_config.NumberColumn("W1", format="%.4f"),
                                "bound": st.column_config.NumberColumn("bound", format="%.4f"),
                                "seconds": st.column_config.NumberColumn("time (s)", format="%.3f")})
    st.caption("W1 in the unit cube with the l∞ metric (:material/lock: computed against the real data, owner "
               "view). Bound: the paper's bound on E W1 for that run, where one exists. Reason: why a mechanism "
               "did not run (scroll right).")
    ok = df[df["status"] == "ok"]
    if len(ok):
        _ui.plot(viz.compare_bars(df, title="W1 and time per mechanism"),
                 "Left: W1 (bars, log scale) and the paper bound (black tick) per mechanism. Right: run time.",
                 key="compare_bars")
        names = list(ok["mechanism"])
        _ui.plot(viz.draws_grid(d.X, [synth[m] for m in names], list(ok["w1"]), d.domain.names,
                                lower=d.domain.lower, upper=d.domain.upper, titles=names),
                 "The synthetic data of every mechanism, same axes (first two coordinates).", key="compare_grid")
