"""Rates: W1 against εn over sweeps, each paper's bound, fitted slope against the theory."""

import pandas as pd
import streamlit as st

from dashboard import ui as _ui
from dpsynth_core import viz
from dpsynth_core.datasets import resampler
from dpsynth_core.experiments import sweep
from dpsynth_core.theory import fit_slope, theory_exponent

_ui.require_app(__file__)

_ui.page_intro("rates")
st.markdown("Each point is one release on n rows drawn from the current data; the dashed lines are the papers' "
            "bounds for those runs where one is proven, the dotted lines the fitted power law "
            "$W_1 \\approx C\\,(\\varepsilon n)^{a}$ whose slope $a$ you can compare with the theory.")
_ui.lesson_box("rates")
if _ui.numeric_page_gate(key="rates", what="This page measures W1 over sweeps of n and ε, on numeric columns."):
    specs = _ui.mechanisms()
    default = [m for m in ("pmm", "psmm", "flat_histogram") if m in specs][:2] or list(specs)[:1]
    names = st.multiselect("Mechanisms", list(specs), default=default, key="rates_mechs", persist_state="session",
                           format_func=lambda m: specs[m].title, help="Switch or add mechanisms; each runs with its "
                           "paper defaults.")
    c1, c2, c3 = st.columns(3)
    axis = c1.radio("Sweep over", ["n", "ε"], horizontal=True, key="rates_axis", persist_state="session",
                    help="Vary the number of rows at the sidebar's ε, or ε at a fixed n.")
    reps = c2.slider("Repeats per point", 1, 10, 3, key="rates_reps", persist_state="session",
                     help="Independent data draws and releases per point: the band shows their spread.")
    size = c3.select_slider("Largest n" if axis == "n" else "n", options=[500, 1000, 2000, 4000, 8000], value=2000,
                            key="rates_n", persist_state="session")
    s = _ui.settings()
    d = _ui.data()
    if axis == "n":
        ns = [int(size / 2**k) for k in range(4, -1, -1) if size / 2**k >= 50]
        eps_list = [s["epsilon"]]
    else:
        ns = [int(size)]
        eps_list = [e for e in (0.05, 0.1, 0.3, 1.0, 3.0, 10.0)]
    st.caption(f"Points: n ∈ {ns}, ε ∈ {eps_list}, {reps} repeat(s) each, {len(names)} mechanism(s): "
               f"{len(ns) * len(eps_list) * reps * len(names)} releases.")

    key = (tuple(names), tuple(ns), tuple(eps_list), reps, d.name, d.n, s["delta"], s["neighbours"], s["seed"])


    def _sweep(progress):
        frames = []
        for i, name in enumerate(names):
            settings = {"neighbours": s["neighbours"], **({"delta": s["delta"]} if specs[name].needs_delta else {})}
            df = _ui.safe(sweep, name, resampler(d.X, d.domain), ns, eps_list, reps, rng=s["seed"],
                          progress=lambda frac, text, i=i: progress((i + frac) / max(len(names), 1), text),
                          params=settings, w1_budget="interactive", what=f"sweeping {name}")
            if df is not None:
                df["eps_n"] = df["epsilon"] * df["n"]
                frames.append(df)
        return pd.concat(frames, ignore_index=True) if frames else None


    df = _ui.kept_sweep("Run sweep", _sweep, key="rates_run", slot="rates_result", fingerprint=key)
    if df is None:
        st.info("Press **Run sweep** to measure W1 over the grid above (it shows its progress).")
    else:
        bounds, fits, rows = {}, {}, []
        for name, part in df.groupby("mechanism"):
            b = part.groupby("eps_n")["bound"].mean().dropna()
            b = b[b < _ui.UNIT_DIAMETER]  # above the cube's diameter a bound says nothing
            theory = specs[name].theory
            if len(b) and theory is not None and theory.proven:  # a rate without constants is not drawn
                bounds[name] = (b.index.to_numpy(), b.to_numpy(), theory.bound_label)
            agg = part.groupby("eps_n")["w1"].mean()
            fits[name] = fit_slope(agg.index.to_numpy(), agg.to_numpy())
            expo, text = theory_exponent(specs[name], d.d)
            rows.append({"mechanism": specs[name].title, "fitted slope a": fits[name][0], "theory's exponent": expo,
                         "note": text, "mean W1": float(part["w1"].mean()), "runs": len(part)})
        _ui.plot(viz.rates_loglog(df, bounds=bounds, fits=fits, title="W1 against εn (log-log)"),
                 "Solid: mean W1 over the repeats, band: min to max, dots: single runs; dashed: a paper's bound for "
                 "those runs where one is proven and below 1 (PSMM's and Private Evolution's are rates without "
                 "constants, not drawn); dotted: least-squares power law. W1 is computed against the n rows each release "
                 "used (:material/lock: owner view).",
                 r"W_1(\mu_n, \hat\mu) \lesssim (\varepsilon n)^{-1/d}\ \text{(up to logs, } d\ge 2)", key="rates_plot")
        st.dataframe(pd.DataFrame(rows), hide_index=True)
        st.caption("Fitted slope a of log W1 against log εn versus the theoretical exponent. At moderate n the "
                   "resolution term and logarithmic factors can make the fitted slope differ from the theory in either "
                   "direction; use more repeats and a wider range of n for a steadier fit.")
        st.download_button("Sweep results (CSV)", df.to_csv(index=False).encode(), file_name="rates_sweep.csv",
                           mime="text/csv", icon=":material/download:", key="rates_dl",
                           help="The measured W1 of every run: computed from the real data (owner view), for you, not "
                                "for publication.")
_ui.lesson_nav("rates")
