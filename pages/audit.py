"""Audit the privacy claim: run a mechanism many times on two neighbouring datasets and bound ε from below."""

import numpy as np
import streamlit as st

from dashboard import ui as _ui
from dpsynth_core import audit, viz
from dpsynth_core.mechanisms import bind

_ui.require_app(__file__)

#: The deliberately broken mechanism students can catch: PMM that spends 2ε while it claims ε.
BROKEN = "broken_pmm"
PATH_STAT = "noisy counts along the record's path (most power)"

_ui.page_intro("audit")
st.markdown(
    "Differential privacy is a promise about **every pair of neighbouring datasets** $D, D'$ and every event $E$: "
    "$P(M(D)\\in E) \\le e^{\\varepsilon} P(M(D')\\in E) + \\delta$. The audit runs a mechanism many times on one "
    "such pair, reduces each release to a number, and computes a statistically valid **lower bound ε̂** on the "
    "privacy loss (Clopper–Pearson intervals over threshold events). If ε̂ exceeds the declared ε, the "
    "mechanism is caught: its claim is false.")
_ui.lesson_box("audit")

if _ui.numeric_page_gate(key="audit", what="The audit moves, adds or removes one record at a point of the box you choose, on numeric columns."):
    specs = _ui.mechanisms()
    d = _ui.data()
    s = _ui.settings()
    names = list(specs) + [BROKEN]
    titles = {**{m: specs[m].title for m in specs}, BROKEN: "A broken PMM: half the noise (spends 2ε, claims ε)"}
    c1, c2, c3 = st.columns(3)
    name = c1.selectbox("Mechanism", names, index=names.index("pmm"), key="audit_mech", format_func=titles.get,
                        persist_state="session")
    tree = name in ("pmm", BROKEN)
    kinds = ["move"] if s.neighbours == "replace" else list(audit.NEIGHBOUR_KINDS)
    kind = c2.radio("The two datasets differ by", kinds, horizontal=True, key=f"audit_kind_{s.neighbours}",
                    persist_state="session",
                    format_func={"add": "adding a record", "remove": "removing a record", "move": "moving a record"}.get,
                    help="D' is D plus the point (add), D without the row nearest to it (remove), or D with that row "
                         "moved onto it (move). Under replace neighbours only a move gives a neighbouring pair.")
    stats = ([PATH_STAT] if tree else []) + list(audit.STATISTICS)
    stat = c3.selectbox("Reduce each release to", stats, key=f"audit_stat_{tree}", persist_state="session",
                        help="A statistic the pair moves a lot has the most power; any statistic of the release is "
                             "as private as the release.")
    c4, c5, c6 = st.columns(3)
    centre = d.domain.center
    px = c4.number_input(f"the record: {d.domain.names[0]}", value=float(centre[0]), key="audit_px", format="%.4g",
                         help="The record that is added, removed or moved to (data units).", persist_state="session")
    py = (c5.number_input(f"the record: {d.domain.names[1]}", value=float(centre[1]), key="audit_py", format="%.4g",
                          persist_state="session") if d.d > 1 else None)
    trials = c6.select_slider("Releases per dataset", options=[200, 500, 1000, 2500, 5000], value=1000,
                              key="audit_trials", persist_state="session",
                              help="More releases give a tighter (larger) lower bound, and take longer.")
    with st.expander("More settings"):
        n_rows = st.select_slider("Rows of D", options=[50, 100, 200, 300, 500, 1000], value=100, key="audit_n",
                                  persist_state="session", help="D is a fixed random subset of the current data.")
        half = st.select_slider("Box half-width (unit cube)", options=[1 / 64, 1 / 32, 1 / 16, 1 / 8, 1 / 4], value=1 / 16,
                                format_func=lambda v: f"1/{round(1 / v)}", key="audit_half", persist_state="session",
                                help="For the statistic 'count in the box around the point'.")
    point = np.array([px] + ([py] if py is not None else []) + list(centre[2:]), dtype=float)

    try:
        declared, why = audit.pair_epsilon(kind, s.neighbours, s.epsilon)
    except ValueError as exc:
        st.error(str(exc))
        st.stop()
    base = "pmm" if name == BROKEN else name
    spec = specs[base]
    if s.neighbours not in spec.neighbours:
        _ui.relation_supported(spec)
    dlt = s.delta if spec.needs_delta else 0.0
    run_eps = 2.0 * s.epsilon if name == BROKEN else s.epsilon
    st.caption(f"Declared guarantee for this pair: ε = {declared:.3g}, δ = {dlt:.3g} ({why})."
               + (f" The broken mechanism runs with ε = {run_eps:g} but claims ε = {s.epsilon:g}." if name == BROKEN
                  else "")
               + (" With the path statistic the tree has one level and a public size: the test then has the most power."
                  if stat == PATH_STAT else ""))

    key = (name, kind, stat, float(px), None if py is None else float(py), half, n_rows, trials, d.name, d.n,
           s.epsilon, s.delta, s.neighbours, s.seed)


    def _audit(progress):
        pair = _ui.safe(audit.pair_near, d.X, d.domain, kind, point, n=n_rows, rng=s.seed, what="building the pair")
        if pair is None:
            return None
        D, D2 = pair
        params = {"depth": 1, "n_public": len(D)} if stat == PATH_STAT else {}
        mechanism = _ui.safe(bind, base, epsilon=run_eps, delta=dlt if spec.needs_delta else None,
                             neighbours=s.neighbours, params=params, what="preparing the mechanism")
        if mechanism is None:
            return None
        if stat == PATH_STAT:
            probe = bind("pmm", epsilon=s.epsilon, neighbours=s.neighbours, params=params)(D, d.domain, rng=0)
            statistic = _ui.safe(audit.tree_path_statistic, D, D2, d.domain, probe, what="building the statistic")
        else:
            statistic = _ui.safe(audit.statistic_named, stat, point, d.domain, half, what="building the statistic")
        if statistic is None:
            return None
        return _ui.safe(audit.audit, lambda X, rng: mechanism(X, d.domain, rng=rng), D, D2, statistic=statistic,
                        trials=trials, epsilon=declared, delta=dlt, rng=s.seed, progress=progress, what="auditing")


    res = _ui.kept_sweep("Run the audit", _audit, key="audit_run", slot="audit_result", fingerprint=key,
                         start="running …")
    if res is None:
        st.info("Choose a mechanism, a pair and a statistic, then press **Run the audit** (it shows its progress).")
    else:
        m1, m2, m3 = st.columns(3)
        m1.metric("ε̂ (lower bound)", f"{res.epsilon_lower:.3g}", help=f"Valid with probability ≥ {res.confidence:.0%}.")
        m2.metric("declared ε", f"{res.epsilon_declared:.3g}")
        m3.metric("verdict", "no violation found" if res.passed else "VIOLATION: the claim is false")
        (st.success if res.passed else st.error)(res.summary())
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
