"""PSMM (seed 000, Algorithms 1-2): the noisy signed measure, its projection, clip vs exact projection."""

import numpy as np
import streamlit as st

from dashboard import ui as _ui
from dpsynth_core import viz

_ui.require_app(__file__)

head = _ui.mechanism_header(
    "psmm", "PSMM — private signed measure mechanism",
    "PSMM cuts the cube into $k^d \\approx \\varepsilon n$ cells and adds integer Laplace noise to every count. "
    "Divided by $n$, the noisy counts form a **signed measure**: some cells get negative mass. Instead of simply "
    "clipping the negatives, PSMM finds the **probability measure closest to it** in the bounded-Lipschitz "
    "distance (a linear program, here a sparse min-cost flow on the grid), then rounds it to points.")
if head is not None:
    spec, params = head
    res = _ui.release_section("psmm", params, title="psmm")
    if res is not None:
        rel, w = res
        d = _ui.data()
        tr, pr = rel.trace, rel.params
        k, dim = int(tr["k"]), int(tr["d"])
        tsum = tr.get("transport", {})
        st.caption(f"k = {k} cells per axis ({pr['grid_cells']} cells of diameter {pr['cell_diameter']:.3g}), "
                   f"noise scale {pr['noise_scale']:.3g} (sensitivity {pr['sensitivity']}), n̂ = {pr['n_hat']} "
                   f"({pr['n_source']}). Negative cells: {tsum.get('negative_cells')} holding "
                   f"{tsum.get('negative_mass', 0):.3g} of negative mass; mass moved by the projection: "
                   f"{tsum.get('mass_removed', 0):.3g}.")

        st.subheader("The noisy signed measure")
        nu = np.asarray(tr["noisy_signed_measure"], dtype=float)
        tau = np.asarray(tr["projected_measure"], dtype=float)
        _ui.plot(viz.signed_grid(nu, k, title=f"ν on the {k}^{dim} grid (negative cells marked ×)"),
                 "Each cell's noisy count divided by n̂: red cells are negative — a signed measure, not a "
                 "probability distribution. DP (noisy counts only).",
                 r"\nu(\{y_i\}) = \frac{n_i + \lambda_i}{\hat n},\quad \lambda_i\sim\mathrm{Lap}_{\mathbb Z}(\Delta/\varepsilon')",
                 key="psmm_nu")

        st.subheader("The projected measure")
        _ui.plot(viz.grid_measures({"true (owner view)": tr["owner"]["true_measure"], "noisy ν (DP)": nu,
                                    "projected τ (DP)": tau}, k, title="true, noisy and projected measures"),
                 "Left: the true cell frequencies (" + _ui.OWNER + ") Middle: the noisy signed measure. Right: "
                 "the closest probability measure in bounded-Lipschitz distance — negative mass is cancelled "
                 "against nearby positive mass, not just clipped.",
                 r"\hat\tau = \arg\min_{\tau\in\mathcal P} d_{BL}(\nu,\tau),\quad d_{BL}(\nu,\tau)="
                 r"\sup_{\|f\|_{Lip}\le 1}\Big|\sum_i f(y_i)(\nu_i-\tau_i)\Big|", key="psmm_tau")

        st.subheader("Clip-and-normalise against the exact projection")
        other = "clip" if pr["projection"] == "bl" else "bl"
        rel2 = _ui.run("psmm", {**params, "projection": other})
        if rel2 is not None:
            w2 = _ui.w1_of(rel2.synthetic)
            pair = {pr["projection"]: (rel, w), other: (rel2, w2)}
            order = ["bl", "clip"]
            titles = {"bl": "exact BL projection", "clip": "clip and normalise"}
            _ui.plot(viz.draws_grid(d.X, [pair[p][0].synthetic for p in order],
                                    [np.nan if pair[p][1] is None else pair[p][1].value for p in order],
                                    d.domain.names, lower=d.domain.lower, upper=d.domain.upper,
                                    titles=[titles[p] for p in order]),
                     "Same noisy counts (same seed), two ways to turn them into a probability measure. Clipping "
                     "throws the negative mass away and inflates every positive cell, spreading mass into empty "
                     "regions; the projection moves as little mass as possible.", key="psmm_cmp")
            st.caption(" · ".join(f"{titles[p]}: W1 = {_ui.w1_text(pair[p][1]) if pair[p][1] else '—'}" for p in order))
