"""Home: what DP synthetic data and W1 mean, the privacy model, a guided first run."""

import numpy as np
import streamlit as st

from dashboard import ui as _ui
from dpsynth_core import viz

_ui.require_app(__file__)

st.title("dpsynth — differentially private synthetic data")
st.markdown(
    "A **synthetic dataset** is a new set of points that you can publish instead of the real one. "
    "It is **differentially private (DP)** when adding or removing any one person's record changes the "
    "probability of every possible output by a factor at most $e^{\\varepsilon}$ — so nothing in it can be "
    "pinned on one person. We measure its **utility** by the Wasserstein-1 distance $W_1$ to the real data: "
    "if $W_1 \\le t$, every 1-Lipschitz statistic (means, CDFs, distances, smooth scores) is off by at most $t$."
)

st.subheader("W1 in one picture: Kantorovich–Rubinstein duality")
shift = st.slider("Move the synthetic distribution ν", 0.0, 0.3, 0.08, 0.01, key="home_shift",
                  help="Shifts ν to the right; watch the witness f and the shaded area grow.",
                  persist_state="session")
rng = np.random.default_rng(0)
mu = np.concatenate([rng.normal(0.3, 0.06, 3000), rng.normal(0.65, 0.08, 2000)])
nu = np.concatenate([rng.normal(0.3 + shift, 0.07, 2600), rng.normal(0.65 + shift / 2, 0.08, 2400)])
_ui.plot(viz.kr_duality(mu, nu),
         "Top: the two densities and the best 1-Lipschitz 'test' f (slope ±1). Bottom: their CDFs; the grey "
         "area is W1. Both numbers are the same: that is the duality.",
         r"W_1(\mu,\nu)=\sup_{\mathrm{Lip}(f)\le 1}\Big(\int f\,d\mu-\int f\,d\nu\Big)=\int_0^1|F_\mu(x)-F_\nu(x)|\,dx",
         key="home_kr")

st.subheader("The privacy model")
st.markdown(
    "- **Public bounds.** You declare the box the data live in *before* looking at the data; nothing is "
    "derived from the data (no min/max, quantiles or standard deviations). Points outside are clamped.\n"
    "- **Neighbouring datasets** (sidebar): *add/remove* one record (the size n is private, so mechanisms "
    "spend a little ε on a noisy n unless you declare it) or *replace* one record (n is public).\n"
    "- **ε (and δ)** in the sidebar are what every release guarantees; the **ledger** lists each step that "
    "spends budget and sums to the total.\n"
    "- Pictures marked **:material/lock: owner view** are computed from the real data without noise: they help you "
    "understand the mechanism and are *not* private. Downloads contain only the private release."
)

st.subheader("A guided first run")
d = _ui.data()
st.markdown(f"**1. Data.** The current dataset is `{d.name}` ({d.description}). Change it on the **Data** page.")
st.markdown("**2. Privacy.** Move **ε** in the sidebar, or try one of these:")


def _set_eps(v: float) -> None:
    st.session_state["epsilon"] = v


cols = st.columns(4)
for col, (v, label) in zip(cols, ((0.01, "ε = 0.01 (strong privacy)"), (0.1, "ε = 0.1"), (1.0, "ε = 1"),
                                  (10.0, "ε = 10 (weak privacy)")), strict=True):
    col.button(label, key=f"home_eps_{v:g}", on_click=_set_eps, args=(v,), width="stretch")
mech = "pmm"
title = "PMM"
st.markdown(f"**3. Release.** Below, {title} runs on your data at the sidebar's ε; W1 measures how far the "
            "synthetic data are from the real ones.")
rel = _ui.run(mech)
if rel is not None:
    w = _ui.w1_of(rel.synthetic)
    _ui.release_panel(rel, w, {}, title=f"home_{mech}")
    _ui.plot(viz.scatter_compare(d.X, rel.synthetic, d.domain.names, lower=d.domain.lower, upper=d.domain.upper),
             "Left: the real data (:material/lock: owner view). Right: the DP synthetic data. Dotted: the public bounds.",
             key="home_scatter")
    st.markdown("**4. Explore.** Each mechanism page shows *why* it works; **Rates** compares W1 with the "
                "papers' bounds as n and ε grow; **Audit** checks the privacy claim empirically.")
