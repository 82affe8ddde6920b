"""Certified marginals: noisy two-column tables, synthetic points fitted to them, and a private certificate."""

import streamlit as st

from dashboard import ui as _ui
from dpsynth_core import viz
from dpsynth_core.experiments import certificate_measure
from dpsynth_core.mechanisms.sparse_marginals import SparseMarginalsTrace
from dpsynth_core.transport import sparse_utility_loss
from dpsynth_core.validation import plural
from dpsynth_core.wording import bound_words


@st.cache_data(show_spinner=False, max_entries=32, hash_funcs=_ui.BY_DOMAIN)
def _loss(X, Y, dom, s):
    """The realised utility loss (owner view), within the dashboard's W1 budget: (value, lower, upper); on a
    table with categorical columns under the mixed metric (the domain is hashed by its JSON text)."""
    value, det = sparse_utility_loss(X, Y, int(s), dom, budget="interactive", return_details=True)
    return value, det["lower"], det["upper"]


spec, params = _ui.mechanism_header("sparse_marginals")
res = _ui.release_section("sparse_marginals", params, title="sparse_marginals")
if res is not None:
    rel, w = res
    d = _ui.data()
    tr = SparseMarginalsTrace.of(rel)
    k, s_ord = tr.k, tr.s
    subsets = tr.subsets
    names = d.domain.names
    consistent = tr.certificate_key.endswith("_consistent")
    grid = f"{k} × {k}" if d.d == 2 else f"{k}^{d.d}"
    every = f" (every centre of the {grid} grid)" if tr.support_size == k ** d.d and not d.domain.is_mixed else ""
    st.caption(f"Every {s_ord}-column table on a grid of {plural(k, 'cell')} per axis ({plural(tr.K, 'table')}) got "
               "noise whose running sums along a snake path stay small. "
               f"{tr.candidates:,} candidate point{'s' * (tr.candidates != 1)} were drawn without looking at the data"
               + (f"; moved to the centres of their cells they fall on {plural(tr.support_size, 'distinct point')}"
                  f"{every}" if rel.params.get("snap_public") else "")
               + f". A linear program fitted weights on these {tr.support_size:,} points to the noisy tables; "
               f"{tr.support_used:,} of them got weight, and the {len(rel.synthetic):,} released points sit on them"
               + (" (several on each)." if len(rel.synthetic) > tr.support_used else ".")
               + (" With one cell per axis every synthetic point is the centre of the box (one dot in the pictures "
                  "below): at this n and ε the noise leaves nothing finer to say; more rows or a larger ε give more "
                  "cells." if k == 1 else ""))
    with st.expander("The mathematics", icon=":material/functions:"):
        st.latex(r"\mathcal U(\mu_D,\mu)=\max_{|S|=s} W_1(P^S_\#\mu_D, P^S_\#\mu)\ \le\ \tfrac1{2k} + "
                 r"q_{1-\beta}\big(\mathcal G(0," + (r"\Pi" if consistent else "") + r"\eta)\big) + "
                 r"\mathcal G(" + (r"\Pi" if consistent else "") + r"v_{DP}, T\mu)")
        st.markdown(f"with probability at least 1 − β = {1 - tr.delta_cert:g} over the noise ([DLS+24], Eq. (4), "
                    "where β is called δ); β is the certificate's own failure probability, the control above: the "
                    "release itself is ε-DP with δ = 0. $\\mathcal G$ is a proxy of W1 on the grid. "
                    + ("Π makes the noisy tables agree with each other before the proxy is applied (it removes noise "
                       "no dataset can produce); the bound stays valid and gets tighter ("
                       + _ui.doc_link("deviations") + ")." if consistent else ""))

    def _certificate():
        terms = tr.released
        with st.spinner(f"Computing the realised loss over the {plural(len(subsets), f'{s_ord}-column view')} "
                        "(owner view; seconds on a large table) …"):
            loss = _ui.safe(_loss, d.X, rel.synthetic, d.domain, s_ord, what="computing the loss")
        _ui.plot(viz.certificate_bar({"grid resolution 1/2k": terms.discretisation,
                                      "noise (high-probability level)": terms.privatisation_quantile,
                                      "fit of the synthetic points": terms.projection},
                                     loss=None if loss is None else loss[0],
                                     title=f"certificate = {terms.total:.3g}"),
                 f"The certificate is the sum of three private parts; with probability at least 1 − β = "
                 f"{1 - tr.delta_cert:g} over the noise the true loss is below it. Grey: the realised loss, the "
                 f"largest W1 over the {s_ord}-column views (" + _ui.OWNER + ")", key="sm_cert")
        if rel.bound_is_vacuous:  # the headline shows "—" for it, and says why here
            st.caption(bound_words(rel).help)
        if loss is not None and loss[2] - loss[1] > 1e-12:
            st.caption(f"Realised loss {loss[0]:.3g}, proven to lie in [{loss[1]:.3g}, {loss[2]:.3g}].")

    def _marginals():
        labels = [" × ".join(names[i] for i in S) for S in subsets]
        # tables over a categorical column have one cell per category (not k): only the numeric ones are drawn
        shown = [i for i, S in enumerate(subsets) if not any(names[j] in rel.domain.categories for j in S)]
        if len(shown) < len(subsets):
            st.caption("Tables over a categorical column (one cell per category) are part of the release but not "
                       "drawn here.")
        if not shown:
            return
        which = st.selectbox("Table", shown, format_func=lambda i: labels[i], key="sm_block",
                             persist_state="session") if len(shown) > 1 else shown[0]
        panels = {"true (owner view)": tr.grid_view(rel.owner.true_marginals[which]),
                  "noisy (private)": tr.grid_view(tr.noisy_marginals[which]),
                  "synthetic points (private)": tr.grid_view(tr.projected_marginals[which])}
        _ui.plot(viz.grid_measures(panels, k, title=f"the table {labels[which]}"),
                 "Left: the true table (" + _ui.OWNER + ") Middle: with noise (cells can be negative, red). Right: "
                 "the table of the released points.", key="sm_maps")

    def _sweep():
        st.markdown("Several releases over ε: the certificate (private) against the realised loss (owner view). "
                    "Points below the diagonal are certified.")
        df = _ui.epsilon_sweep("sparse_marginals", params, certificate_measure, label="Run the certificate sweep",
                               prefix="sm", choices=[0.1, 0.3, 1.0, 3.0, 10.0], default=[0.3, 1.0, 3.0],
                               repeats_label="Releases per ε", repeats=(1, 5, 2))
        if df is not None:
            _ui.plot(viz.loss_vs_certificate(df.assign(epsilon=df["epsilon"].map(lambda e: f"ε = {e:g}")),
                                             color="epsilon", title="realised loss against the certificate"),
                     "Each point is one release. The certificate holds with high probability and is itself private; "
                     "the realised loss needs the data (" + _ui.OWNER + ")", key="sm_sweep")

    _ui.look_closer({"The certificate": _certificate, "The tables": _marginals, "Certificate sweep": _sweep},
                    key="sm_view")
_ui.lesson_nav("sparse_marginals")
