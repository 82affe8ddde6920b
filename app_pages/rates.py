"""Rates: W1 against εn over sweeps, each paper's bound, fitted slope against the theory."""

import pandas as pd
import streamlit as st

from dashboard import ui as _ui
from dpsynth_core import viz
from dpsynth_core.datasets import resampler
from dpsynth_core.experiments import certified_w1_measure, rates_summary, sizes_per_decade, sweep

INTRO = ("Each point is one release on n rows drawn from the current data, and its W1 to those rows, exact or "
         "certified to within 1%; the dashed lines are the papers' bounds for those runs where one is proven, the "
         "dotted lines the fitted power law $W_1 \\approx C\\,(\\varepsilon n)^{a}$ with its 95% confidence band, "
         "whose slope $a$ you can compare with the theory. Three decades of n (20 to 20 000) are enough to read a "
         "slope.")
#: The smallest n of a sweep over n (the largest is 200, 2000 or 20 000: one to three decades).
RATES_MIN_N = 20

_ui.page_intro("rates")
st.markdown(INTRO)
_ui.lesson_box("rates")
if _ui.numeric_page_gate(key="rates", what="This page measures W1 over sweeps of n and ε, on numeric columns."):
    specs = _ui.mechanisms()
    default = [m for m in ("pmm", "psmm", "flat_histogram") if m in specs][:2] or list(specs)[:1]
    names = st.multiselect("Mechanisms", list(specs), default=default, key="rates_mechs", persist_state="session",
                           format_func=lambda m: specs[m].title, help="Switch or add mechanisms; each runs with its "
                           "paper defaults.")
    c1, c2, c3, c4 = st.columns(4)
    axis = c1.radio("Sweep over", ["n", "ε"], horizontal=True, key="rates_axis", persist_state="session",
                    help="Vary the number of rows at the sidebar's ε, or ε at a fixed n.")
    reps = c2.slider("Repeats per point", 1, 10, 2, key="rates_reps", persist_state="session",
                     help="Independent data draws and releases per point: the band shows their spread, and the "
                          "fit's confidence band narrows with more.")
    s = _ui.settings()
    d = _ui.data()
    if axis == "n":
        top = c3.select_slider("n from 20 to", options=[200, 2000, 20_000], value=20_000, key="rates_n",
                               persist_state="session", format_func=lambda v: f"{v:,}",
                               help="The largest n of the sweep (one, two or three decades above 20 rows). Rows "
                                    "are drawn with replacement from the current data. W1 at 20 000 rows takes "
                                    "seconds per release.")
        per_decade = c4.select_slider("Points per decade", options=[2, 3, 4], value=2, key="rates_density",
                                      persist_state="session",
                                      help="Values of n per factor 10, evenly spaced on the log scale.")
        ns = sizes_per_decade(RATES_MIN_N, top, per_decade)
        eps_list = [s.epsilon]
    else:
        size = c3.select_slider("n", options=[500, 1000, 2000, 5000, 20_000], value=2000, key="rates_n_eps",
                                persist_state="session", format_func=lambda v: f"{v:,}")
        ns = [int(size)]
        eps_list = [e for e in (0.05, 0.1, 0.3, 1.0, 3.0, 10.0)]
    eps_text = f"ε = {eps_list[0]:g}" if len(eps_list) == 1 else f"ε ∈ {{{', '.join(f'{e:g}' for e in eps_list)}}}"
    st.caption(f"Points: n ∈ {{{', '.join(f'{v:,}' for v in ns)}}}, {eps_text}, {reps} repeat(s) each, "
               f"{len(names)} mechanism(s): {len(ns) * len(eps_list) * reps * len(names)} releases, each with its W1 "
               "exact (dense POT, up to about a thousand rows) or certified within 1% (the sparse transshipment "
               "method).")

    key = _ui.inputs(data=d, epsilon=eps_list, delta=s.delta, neighbours=s.neighbours, seed=s.seed,
                     mechanisms=[_ui.mechanism_label(m) for m in names], n=ns, repeats=reps)


    def _sweep(progress):
        frames = []
        for i, name in enumerate(names):
            df = _ui.safe(sweep, name, resampler(d.X, d.domain), ns, eps_list, reps, rng=s.seed,
                          progress=lambda frac, text, i=i: progress((i + frac) / max(len(names), 1), text),
                          params=s.bind_keywords(specs[name]), measure=certified_w1_measure(), what=f"sweeping {name}")
            if df is not None:
                frames.append(df)
        return pd.concat(frames, ignore_index=True) if frames else None


    df = _ui.kept_sweep("Run sweep", _sweep, key="rates_run", slot="rates_result", fingerprint=key)
    if df is None:
        st.info("Press **Run sweep** to measure W1 over the grid above (it shows its progress).")
    else:
        fit = rates_summary(df, d.d, level=0.95)
        _ui.plot(viz.rates_loglog(fit.runs, bounds=fit.bounds, fits=fit.fits, fit_bands=fit.bands,
                                  title="W1 against εn (log-log)"),
                 "Solid: mean W1 over the repeats, band: min to max, dots: single runs; dashed: a paper's bound for "
                 "those runs where one is proven and below 1 (PSMM's and Private Evolution's are rates without "
                 "constants, not drawn); dotted: least-squares power law, hatched: its 95% confidence band. W1 is "
                 "computed against the n rows each release used (:material/lock: owner view): exact, or the upper end "
                 "of a bracket certified to contain it and at most 1% wide.",
                 r"W_1(\mu_n, \hat\mu) \lesssim (\varepsilon n)^{-1/d}\ \text{(up to logs, } d\ge 2)", key="rates_plot")
        st.dataframe(fit.table, hide_index=True,
                     column_config={"widest bracket": st.column_config.NumberColumn(format="percent")})
        st.caption("Fitted slope a of log W1 against log εn versus the theoretical exponent. The interval and the "
                   "band are the regression's: ordinary least squares over every run (the repeats are separate "
                   "points), the slope's standard error and Student's t with runs − 2 degrees of freedom. They say "
                   "how well these runs pin the slope of a straight line on log-log axes, not whether a power law is "
                   "the right model: at small εn the resolution term and logarithmic factors bend the curve, so the "
                   "fitted slope can differ from the theory in either direction. More repeats narrow the band; a "
                   "range that starts at larger n shows the asymptotic slope better.")
        st.download_button("Sweep results (CSV)", fit.runs.to_csv(index=False).encode(), file_name="rates_sweep.csv",
                           mime="text/csv", icon=":material/download:", key="rates_dl",
                           help="The measured W1 of every run: computed from the real data (owner view), for you, not "
                                "for publication.")
_ui.lesson_nav("rates")
