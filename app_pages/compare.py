"""Compare: every mechanism on the same data, ε, δ and neighbouring relation."""

import math

import pandas as pd
import streamlit as st

from dashboard import ui as _ui
from dpsynth_core import viz
from dpsynth_core.experiments import DRAWN_BOUNDS, compare, histogram_grid_in_hindsight
from dpsynth_core.wording import bound_cell, w1_bracket_text

_ui.page_intro("compare")
_ui.lesson_box("compare")
if _ui.numeric_page_gate(key="compare", what="Compare measures W1 between the data and the release of every mechanism, on numeric columns."):
    specs = _ui.mechanisms()
    d = _ui.data()
    s = _ui.settings()
    chosen = st.multiselect("Mechanisms", list(specs), default=list(specs), key="compare_mechs",
                            format_func=lambda m: specs[m].title, persist_state="session")
    left_out = _ui.left_out(chosen, key="compare")  # the relation's or the table's: said before running, not run
    chosen = [m for m in chosen if m not in left_out]
    key = _ui.inputs(data=d, epsilon=s.epsilon, delta=s.delta, neighbours=s.neighbours, seed=s.seed,
                     mechanisms=[_ui.mechanism_label(m) for m in chosen])


    def _compare(progress):
        if not chosen:
            st.info("No mechanism is left to run with these settings: see above what to change.")
            return None
        out = _ui.safe(compare, chosen, d.X, d.domain, epsilon=s.epsilon, delta=s.delta, neighbours=s.neighbours,
                       rng=s.seed, progress=progress, what="comparing mechanisms")
        if out is None:
            return None
        df, synth = out
        flat = df[(df["mechanism"] == "flat_histogram") & (df["status"] == "ok")]
        best = None
        if len(flat):  # the owner-view yardstick for the baseline: its best grid, chosen by looking at the data
            best = _ui.safe(histogram_grid_in_hindsight, d.X, d.domain, epsilon=s.epsilon, neighbours=s.neighbours,
                            rng=s.seed, rule_bins=flat.iloc[0]["resolved"]["bins"],
                            what="finding the histogram's best grid in hindsight")
        return df, synth, best


    res = _ui.kept_sweep("Run the comparison", _compare, key="compare_run", slot="compare_result", fingerprint=key)
    if res is None:
        st.info("Press **Run the comparison** to run the mechanisms above on the current data (it shows its progress).")
    else:
        df, synth, best = res

        def fmt(v, spec="{:.3g}"):
            return "—" if v is None or (isinstance(v, float) and not math.isfinite(v)) else spec.format(v)

        ok = df[df["status"] == "ok"]
        table = pd.DataFrame({
            "mechanism": [specs[m].title for m in ok["mechanism"]],
            "W1 to the data": [fmt(v) for v in ok["w1"]],
            "proven interval": [w1_bracket_text(lo, hi) for lo, hi in zip(ok["w1_lower"], ok["w1_upper"], strict=True)],
            "Bound on W1": [bound_cell(b, t, v) for b, t, v in zip(ok["bound"], ok["bound_type"], ok["bound_vacuous"],
                                                                strict=True)],
            "synthetic points": [f"{int(v):,}" for v in ok["n_synthetic"]],
            "time": [fmt(v, "{:.2f} s") for v in ok["seconds"]],
            "guarantee": list(ok["privacy"]),
        })
        st.dataframe(table, hide_index=True, width="stretch")
        st.caption("W1 in the unit cube with the largest-coordinate distance (:material/lock: computed against the real "
                   "data, owner view); the interval is what is proven when an exact solve would be too slow for a page.")
        flat = ok[ok["mechanism"] == "flat_histogram"]
        reference = None
        if len(flat):
            k = flat.iloc[0]["resolved"]["bins"]
            text = (f"**How the flat histogram's grid was chosen.** {k} cells per axis, by the rule of the defaults study "
                    f"(`dpsynth_core.defaults.flat_histogram_bins`, {_ui.doc_link('defaults')}): "
                    "k = round(c_d (n̂ sinh ε′)^{1/(d+1)}) from the noisy size n̂ and the budget ε′ of the counts — public quantities only, never the data. "
                    "In the study the rule's grid came close to the best grid in hindsight in most settings ("
                    f"{_ui.doc_link('defaults')} "
                    "gives the figures), so the histogram here is a fair baseline, not a straw man.")
            if best is not None:
                reference = (best["w1"], f"flat histogram at its best grid in hindsight ({best['bins']} per axis; "
                                         "owner view, not DP)")
                cands = best["candidates"]
                at_rule = float(cands.loc[cands["bins"] == k, "w1"].iloc[0])
                text += (f" :material/lock: Owner view, not DP: with one and the same noise draw for "
                         f"{len(cands)} grids around the rule's, the best grid in hindsight is {best['bins']} per axis "
                         f"with W1 {best['w1']:.3g}, against {at_rule:.3g} at the rule's {k} (the dashed line in the chart "
                         "below). Choosing a grid that way reads the data, so it is a yardstick, never a release.")
            st.markdown(text)
        skipped = df[df["status"] != "ok"]
        for _, row in skipped.iterrows():  # not foreseen by the contract's limits (those are said above)
            st.warning(f"**{_ui.mechanism_label(row['mechanism'])}** did not run: {row['reason']}",
                       icon=":material/block:")
        if len(ok):
            # ticks only for bounds on W1 itself, proven or shown for reference (a rate is no bound; a certificate
            # bounds the marginals): their kinds are in the table above
            labelled = df.assign(mechanism=[_ui.mechanism_label(m) for m in df["mechanism"]],
                                 bound=df["bound"].where(df["bound_type"].isin(DRAWN_BOUNDS)))
            diameter = d.domain.diameter
            vacuous = [_ui.mechanism_label(m) for m, v, t in zip(ok["mechanism"], ok["bound_vacuous"], ok["bound_type"],
                                                               strict=True) if v and t in DRAWN_BOUNDS]
            _ui.plot(viz.compare_bars(labelled, title="W1 and time per mechanism", reference=reference,
                                      diameter=diameter, bound_label="Bound on W1: proven or reference"),
                     "Left: W1 per mechanism (log scale); black ticks: the bounds on W1 that are proven or shown for "
                     "reference (the table's 'Bound on W1' column gives every release's kind)" +
                     ("; dashed: the flat histogram at its best grid in hindsight (owner view, not DP)" if reference
                      else "") + ". Right: the time of one release." +
                     (f" Not drawn: the bounds of {', '.join(vacuous)}, at or above the largest possible W1 "
                      f"({diameter:g}): they say nothing at this n and ε." if vacuous else ""), key="compare_bars")
            names = list(ok["mechanism"])
            _ui.plot(viz.draws_grid(d.X, [synth[m] for m in names], list(ok["w1"]), d.domain.names, lower=d.domain.lower,
                                    upper=d.domain.upper, titles=[_ui.mechanism_label(m) for m in names]),
                     "The synthetic data of every mechanism, on the same axes (first two coordinates).", key="compare_grid")
_ui.lesson_nav("compare")
