"""Audit the privacy claim: run a mechanism many times on two neighbouring datasets and bound ε from below."""

import streamlit as st

from dashboard import ui as _ui
from dpsynth_core import audit, viz

#: The most releases per dataset the page runs, also when the audit raises them to see above the declared ε
#: (the top of the releases slider: about 20 s on a quiet machine for PMM on 100 rows).
MAX_TRIALS = 5000


def _limit_note(declared: float, delta: float, limit: float) -> str:
    """What the audit will do about its detection limit, said before it runs (the library's rule, ``max_trials``)."""
    if limit > declared + audit.HEADROOM:
        return ""
    need = audit.trials_for_limit(declared + audit.HEADROOM, delta=delta)
    if need is not None and need <= MAX_TRIALS:
        return f"; to see above the declared ε = {declared:.3g} the audit raises them to {need:,}"
    if limit <= declared:
        return (f", below the declared ε = {declared:.3g}; seeing above it would take more than {MAX_TRIALS:,} releases, "
                "so the audit will say it cannot decide")
    return ""


_ui.page_intro("audit")
st.markdown(
    "Differential privacy is a promise about **every pair of neighbouring datasets** $D, D'$ and every event $E$: "
    "$P(M(D)\\in E) \\le e^{\\varepsilon} P(M(D')\\in E) + \\delta$. The audit runs a mechanism many times on one "
    "such pair, reduces each release to a number, and computes a statistically valid **lower bound ε̂** on the "
    "privacy loss (Clopper–Pearson intervals over threshold events). If ε̂ exceeds the declared ε, the "
    "mechanism is caught: its claim is false. A finite number of releases can only show so much: the audit's "
    "**detection limit** is the largest ε̂ it could report, and above it the audit says it cannot decide.")
_ui.lesson_box("audit")

if _ui.numeric_page_gate(key="audit", what="The audit moves, adds or removes one record at a point of the box you choose, on numeric columns."):
    specs = _ui.mechanisms()
    d = _ui.data()
    s = _ui.settings()
    names = list(specs) + [audit.BROKEN_PMM]
    titles = {**{m: specs[m].title for m in specs}, audit.BROKEN_PMM: audit.BROKEN_PMM_TITLE}
    c1, c2, c3 = st.columns(3)
    name = c1.selectbox("Mechanism", names, index=names.index("pmm"), key="audit_mech", format_func=titles.get,
                        persist_state="session")
    kinds = ["move"] if s.neighbours == "replace" else list(audit.NEIGHBOUR_KINDS)
    kind = c2.radio("The two datasets differ by", kinds, horizontal=True, key=f"audit_kind_{s.neighbours}",
                    persist_state="session",
                    format_func={"add": "adding a record", "remove": "removing a record", "move": "moving a record"}.get,
                    help="D' is D plus the point (add), D without the row nearest to it (remove), or D with that row "
                         "moved onto it (move). Under replace neighbours only a move gives a neighbouring pair.")
    stat = c3.selectbox("Reduce each release to", audit.teaching_statistics(name),
                        key=f"audit_stat_{name in ('pmm', audit.BROKEN_PMM)}", persist_state="session",
                        help="A statistic the pair moves a lot has the most power; any statistic of the release is "
                             "as private as the release.")
    c4, c5, c6 = st.columns(3)
    centre = d.domain.center
    px = c4.number_input(f"the record: {d.domain.names[0]}", value=float(centre[0]), key="audit_px", format="%.4g",
                         help="The record that is added, removed or moved to (data units).", persist_state="session")
    py = (c5.number_input(f"the record: {d.domain.names[1]}", value=float(centre[1]), key="audit_py", format="%.4g",
                          persist_state="session") if d.d > 1 else None)
    trials = c6.select_slider("Releases per dataset", options=[200, 500, 1000, 2500, MAX_TRIALS], value=1000,
                              key="audit_trials", persist_state="session",
                              help="More releases give a tighter (larger) lower bound and a higher detection limit, and "
                                   f"take longer. Where the declared ε is above the limit, the audit raises them (at "
                                   f"most {MAX_TRIALS:,}).")
    with st.expander("More settings"):
        n_rows = st.select_slider("Rows of D", options=[50, 100, 200, 300, 500, 1000], value=100, key="audit_n",
                                  persist_state="session", help="D is a fixed random subset of the current data.")
        half = st.select_slider("Box half-width (unit cube)", options=[1 / 64, 1 / 32, 1 / 16, 1 / 8, 1 / 4], value=1 / 16,
                                format_func=lambda v: f"1/{round(1 / v)}", key="audit_half", persist_state="session",
                                help="For the statistic 'count in the box around the point'.")
    point = [float(px)] + ([float(py)] if py is not None else []) + [float(c) for c in centre[2:]]

    try:
        declared, why = audit.pair_epsilon(kind, s.neighbours, s.epsilon)
    except ValueError as exc:
        st.error(str(exc))
        st.stop()
    spec = specs["pmm" if name == audit.BROKEN_PMM else name]
    if s.neighbours not in spec.neighbours:
        _ui.relation_supported(spec)
    dlt = s.delta if spec.needs_delta else 0.0
    limit = audit.planned_limit(trials, delta=dlt)
    st.caption(f"Declared guarantee for this pair: ε = {declared:.3g}, δ = {dlt:.3g} ({why})."
               + (f" The broken mechanism runs with ε = {2 * s.epsilon:g} but claims ε = {s.epsilon:g}."
                  if name == audit.BROKEN_PMM else "")
               + f" Detection limit with {trials:,} releases per dataset: ε ≈ {limit:.3g}{_limit_note(declared, dlt, limit)}."
               + (" With the path statistic the tree has one level and a public size: the test then has the most power."
                  if stat == audit.PATH_STATISTIC else ""))

    key = (name, kind, stat, float(px), None if py is None else float(py), half, n_rows, trials, d.name, d.n,
           s.epsilon, s.delta, s.neighbours, s.seed)

    def _audit(progress):
        return _ui.safe(audit.teaching_audit, d.X, d.domain, name, kind=kind, point=point, epsilon=s.epsilon,
                        delta=dlt, neighbours=s.neighbours, statistic=stat, rows=n_rows, trials=trials,
                        max_trials=MAX_TRIALS, half_width=half, rng=s.seed, progress=progress, what="auditing")

    res = _ui.kept_sweep("Run the audit", _audit, key="audit_run", slot="audit_result", fingerprint=key,
                         start="running …")
    if res is None:
        st.info("Choose a mechanism, a pair and a statistic, then press **Run the audit** (it shows its progress).")
    else:
        m1, m2, m3, m4 = st.columns(4)
        m1.metric("ε̂ (lower bound)", f"{res.epsilon_lower:.3g}", help=f"Valid with probability ≥ {res.confidence:.0%}.")
        m2.metric("declared ε", f"{res.epsilon_declared:.3g}")
        m3.metric("detection limit", f"{res.detection_limit:.3g}",
                  help=f"The largest ε̂ {res.trials:,} releases per dataset can show at {res.confidence:.0%} confidence.")
        m4.metric("verdict", {"violation": "VIOLATION: the claim is false"}.get(res.verdict, res.verdict))
        {"violation": st.error, "no violation found": st.success}.get(res.verdict, st.warning)(res.sentence())
        lo, hi = res.band()
        _ui.plot(viz.audit_band(res.hist_D, res.hist_D_prime, res.bin_edges, lo, hi, epsilon=res.epsilon_declared,
                                title=f"{res.trials} releases on each dataset"),
                 "Blue: how often each value of the statistic occurs on D; orange: on D'. Black: the range that (ε, δ)-DP "
                 "allows each orange bar given the blue one. A bar slightly outside can be sampling noise; the lower bound "
                 "ε̂ accounts for it.",
                 r"e^{-\varepsilon}\big(P_D(E)-\delta\big)\ \le\ P_{D'}(E)\ \le\ e^{\varepsilon}P_D(E)+\delta",
                 key="audit_plot")
        st.caption("A passing audit does not prove privacy: it only fails to find a violation with this pair and this "
                   "statistic. The proof is the mechanism's analysis; the audit checks the implementation against it.")
_ui.lesson_nav("audit")
