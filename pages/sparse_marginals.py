"""Certified sparse-marginal release (seed 002): marginal heatmaps, the certificate, loss vs certificate."""

import numpy as np
import streamlit as st

from dashboard import ui as _ui
from dpsynth_core import viz
from dpsynth_core.experiments import certificate_measure, sweep
from dpsynth_core.transport import sparse_utility_loss

_ui.require_app(__file__)


@st.cache_data(show_spinner=False, max_entries=32)
def _loss(X, Y, lower, upper, names, s):
    return float(sparse_utility_loss(X, Y, int(s), _ui._dom(lower, upper, names)))


def _block(v, k, s):
    v = np.asarray(v, dtype=float)
    return v.reshape(k, k) if s == 2 else v.reshape(1, -1)


head = _ui.mechanism_header(
    "sparse_marginals", "Certified sparse marginals",
    "Release every **s-dimensional marginal** (all pairs of columns for s = 2) as a histogram on a k×k grid, "
    "with superregular (Haar) noise along a snake path through each grid, then find synthetic points on "
    "public candidates whose marginals fit the noisy ones (a linear program). The release comes with a "
    "**certificate**: a private, high-probability upper bound on the utility loss — the largest W1 over "
    "all s-marginals — that you can publish with the data.", defaults={"s": min(2, _ui.data().d)})
if head is not None:
    spec, params = head
    res = _ui.release_section("sparse_marginals", params, title="sparse_marginals")
    if res is not None:
        rel, w = res
        d = _ui.data()
        tr, pr = rel.trace, rel.params
        k, s_ord = int(pr["k"]), int(pr["s"])
        subsets = tr["subsets"]
        names = d.domain.names
        st.caption(f"s = {s_ord}, k = {k} cells per axis ({pr['cells_per_block']} per block), K = {pr['K']} "
                   f"block(s), Laplace scale {pr['noise_scale']:.3g} on the Haar coefficients, support of "
                   f"{pr['support_size']} public points ({pr['public']}).")

        st.subheader("Marginals: true, noisy, projected")
        labels = [" × ".join(names[i] for i in S) for S in subsets]
        which = st.selectbox("Marginal", list(range(len(subsets))), format_func=lambda i: labels[i], key="sm_block",
                             persist_state="session") if len(subsets) > 1 else 0
        panels = {"true (owner view)": _block(tr["owner"]["true_marginals"][which], k, s_ord),
                  "noisy (DP)": _block(tr["noisy_marginals"][which], k, s_ord),
                  "projected synthetic (DP)": _block(tr["projected_marginals"][which], k, s_ord)}
        _ui.plot(viz.grid_measures({n: v.T.ravel() if s_ord == 2 else v.ravel() for n, v in panels.items()}, k,
                                   title=f"marginal {labels[which]} on the {k}×{k} grid" if s_ord == 2 else
                                   f"marginal {labels[which]}"),
                 "Left: the true marginal histogram (" + _ui.OWNER + ") Middle: with superregular noise (cells "
                 "can be negative, red). Right: the marginal of the released points.",
                 r"v^S_{DP} = v^S + [\Phi\tilde\eta^S]_{1:k^s},\quad \tilde\eta\sim\mathrm{Lap}\big(2K/(n\varepsilon)\big)",
                 key="sm_maps")

        st.subheader("The certificate")
        cert = pr["certificate_key"]
        terms = tr["certificate"][cert]
        label = cert.replace("_consistent", "∘Π")
        pi = r"\Pi " if cert.endswith("_consistent") else ""  # the consistency projection, when applied
        loss = _ui.safe(_loss, d.X, rel.synthetic, *_ui.dom_key(d.domain), s_ord, what="computing the loss")
        _ui.plot(viz.certificate_bar({"discretisation 1/2k": terms["discretisation"],
                                      "privatisation (1−δ)-quantile": terms["privatisation_quantile"],
                                      "projection": terms["projection"]},
                                     loss=loss, title=f"certificate ({label}) = {terms['total']:.4g}"),
                 f"The certificate is the sum of three private terms; with probability ≥ {1 - pr['delta_cert']:g} "
                 "over the noise, the true utility loss is below it. Grey: the realised loss (" + _ui.OWNER + ")"
                 + (" Π projects the noisy marginals onto consistent ones before the proxy is applied (it removes "
                    "noise that no dataset can produce; the paper's Eq. (4) as printed gives "
                    f"{tr['certificate'][pr['certificate']]['total']:.4g})." if cert.endswith("_consistent") else ""),
                 r"\mathcal U(\mu_D,\mu)\le \tfrac1{2k} + q_{1-\delta}\big(\mathcal G(0," + pi + r"\eta)\big) + "
                 r"\mathcal G(" + pi + r"v_{DP}, T\mu),\qquad \mathcal U = \max_{|S|=s} W_1(P^S_\#\mu_D, P^S_\#\mu)",
                 key="sm_cert")

        st.subheader("Utility loss against the certificate")
        st.markdown("Several releases over ε and seeds: the certificate (private) against the realised loss "
                    "(owner view). Points below the diagonal are certified.")
        c1, c2 = st.columns(2)
        eps_list = c1.multiselect("ε values", [0.1, 0.3, 1.0, 3.0, 10.0], default=[0.3, 1.0, 3.0], key="sm_eps",
                                  persist_state="session")
        nseeds = c2.slider("Seeds per ε", 1, 5, 2, key="sm_seeds", persist_state="session")
        if st.button("Run certificate sweep", key="sm_run", type="primary"):
            bar = st.progress(0.0, text="starting …")
            df = _ui.safe(sweep, "sparse_marginals", lambda n, rng: (d.X, d.domain), [d.n], sorted(eps_list), nseeds,
                          rng=_ui.settings()["seed"], params={**params, "neighbours": "replace"},
                          measure=certificate_measure, progress=lambda f, t: bar.progress(min(1.0, f), text=t),
                          what="sweeping")
            bar.empty()
            if df is not None:
                st.session_state["sm_result"] = df
        df = st.session_state.get("sm_result")
        if df is not None:
            _ui.plot(viz.loss_vs_certificate(df.assign(epsilon=df["epsilon"].map(lambda e: f"ε = {e:g}")),
                                             color="epsilon", title="realised loss vs certificate"),
                     "Each point is one release. The certificate is an upper bound that holds with high probability "
                     "and is itself private; the realised loss needs the data (" + _ui.OWNER + ")", key="sm_sweep")
