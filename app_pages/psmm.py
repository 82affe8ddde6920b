"""Projected grid (PSMM): noisy grid counts form a signed measure; its closest probability measure."""

import streamlit as st

from dashboard import ui as _ui
from dpsynth_core import viz
from dpsynth_core.mechanisms.psmm import PSMMOwner, PSMMTrace

spec, params = _ui.mechanism_header("psmm")
res = _ui.release_section("psmm", params, title="psmm")
if res is not None:
    rel, w = res
    d = _ui.data()
    tr, own = PSMMTrace.of(rel), PSMMOwner.of(rel)
    k, dim = tr.k, tr.d
    combos = tr.combinations

    tsum = tr.transport
    # the measures on the numeric grid: on a mixed table the cells of every combination of categories summed
    nu, tau, true = tr.numeric(tr.noisy_signed_measure), tr.numeric(tr.projected_measure), tr.numeric(own.true_measure)
    st.caption(f"A grid of {k} cells per axis ({k ** dim:,} cells" + (f" for each of the {combos} combinations of "
                                                                       "categories" if combos > 1 else "")
               + f"). {tsum.get('negative_cells', 0)} cells got "
               f"negative mass ({tsum.get('negative_mass', 0):.3g} in all); turning the signed measure into a "
               f"distribution moved {tsum.get('mass_removed', 0):.3g} of mass."
               + (" The grids below show the numeric columns only: the cells of all the combinations of categories "
                  "are summed." if combos > 1 else ""))
    with st.expander("The mathematics", icon=":material/functions:"):
        st.latex(r"\nu(\{y_i\}) = \frac{n_i + \lambda_i}{\hat n},\quad \lambda_i\sim\mathrm{Lap}_{\mathbb Z}"
                 r"(\Delta/\varepsilon'),\qquad \hat\tau = \arg\min_{\tau\in\mathcal P} d_{BL}(\nu,\tau)")
        st.markdown("$d_{BL}$ is the bounded-Lipschitz distance: the largest gap $|\\sum_i f(y_i)(\\nu_i-\\tau_i)|$ "
                    "over functions with slope and size at most 1 ([HVZ23], Algorithm 2). On a grid it is a "
                    "min-cost flow between neighbouring cells, solved exactly.")

    def _signed():
        _ui.plot(viz.signed_grid(nu, k, title=f"the noisy signed measure ν on the {k}×{k} grid" if dim == 2 else
                                 "the noisy signed measure ν"),
                 "Each cell's noisy count divided by n̂: red cells are negative, so ν is not a probability "
                 "distribution. Private (noisy counts only).", key="psmm_nu")

    def _measures():
        _ui.plot(viz.grid_measures({"true (owner view)": true, "noisy ν (private)": nu,
                                    "projected τ (private)": tau}, k, title="true, noisy and projected measures"),
                 "Left: the true cell frequencies (" + _ui.OWNER + ") Middle: the noisy signed measure. Right: the "
                 "closest distribution: negative mass cancels against nearby positive mass.", key="psmm_tau")

    def _against_clipping():
        projection = rel.params["projection"]
        other = "clip" if projection == "bl" else "bl"
        rel2 = _ui.teaching_release("psmm", {**params, "projection": other})
        if rel2 is None:
            return
        w2 = _ui.w1_of(rel2.synthetic)
        pair = {projection: (rel, w), other: (rel2, w2)}
        titles = {"bl": "closest distribution", "clip": "clipping and rescaling"}
        order = ["bl", "clip"]
        X_num, num_names = d.numeric_part()
        _ui.plot(viz.draws_grid(X_num, [d.domain.numeric_rows(pair[p][0].synthetic) for p in order],
                                [float("nan") if pair[p][1] is None else pair[p][1].value for p in order],
                                num_names, lower=d.domain.lower, upper=d.domain.upper,
                                titles=[titles[p] for p in order]),
                 "The same noisy counts (same seed), turned into a distribution in two ways. Clipping throws the "
                 "negative mass away and inflates every positive cell, spreading points into empty regions.",
                 key="psmm_cmp")
        st.caption(" · ".join(f"{titles[p]}: W1 = {_ui.w1_text(pair[p][1]) if pair[p][1] else '—'}" for p in order))

    # The signed measure first: it is the page's point (negative cells) and one light picture; the
    # comparison with clipping runs a second release, so it computes only when a student opens it.
    _ui.look_closer({"The signed measure": _signed, "True, noisy, projected": _measures,
                     "Projection against clipping": _against_clipping}, key="psmm_view")
_ui.lesson_nav("psmm")
