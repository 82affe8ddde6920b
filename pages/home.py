"""Start here: what DP synthetic data is, W1 in one picture, the privacy model, a first release."""

import streamlit as st

from dashboard import ui as _ui
from dpsynth_core import viz
from dpsynth_core.datasets import two_bumps

_ui.require_app(__file__)


@st.cache_data(show_spinner=False, max_entries=64)
def _kr_figure(shift: float):
    return viz.kr_duality(*two_bumps(shift, rng=0))


_ui.page_intro("home")
_ui.lesson_box("home")

st.subheader("W1 in one picture")
shift = st.slider("Move the synthetic distribution ν to the right", 0.0, 0.3, 0.08, 0.01, key="home_shift",
                  persist_state="session", help="Watch the area between the two distribution functions grow.")
_ui.plot(_kr_figure(float(shift)),
         "Top: the two densities and the 1-Lipschitz test function f (slope ±1) that separates them most. Bottom: "
         "their cumulative distribution functions; the shaded area between them is W1. Both give the same number: "
         "that is the Kantorovich–Rubinstein duality.",
         r"W_1(\mu,\nu)=\sup_{\mathrm{Lip}(f)\le 1}\Big(\int f\,d\mu-\int f\,d\nu\Big)=\int_0^1|F_\mu(x)-F_\nu(x)|\,dx",
         key="home_kr")

st.subheader("The privacy model")
st.markdown(
    "- **Public bounds.** The box the data live in is declared *before* looking at the data; nothing is read off "
    "the data (no minimum, maximum or quantile). Values outside are moved onto the box's edge.\n"
    "- **Neighbouring datasets** (sidebar): *add or remove one record* (the size n is private too, so mechanisms "
    "spend a little ε on a noisy n) or *replace one record* (n is public).\n"
    "- **ε (and δ)** in the sidebar are what every release guarantees; the **ledger** below them lists each step "
    "that spends budget and adds up to the total.\n"
    "- Pictures marked **:material/lock: owner view** are computed from the real data without noise: they help "
    "you understand a mechanism and are *not* private. Downloads contain only a private release.\n"
    "- The **teaching seed** makes the pictures reproducible for a class. Whoever knows a seed can undo the noise, "
    "so downloads never use it: they are fresh releases.")

st.subheader("A first release")
d = _ui.data()
st.markdown(f"The data: `{d.name}` ({d.description}). Change them on the **Data and bounds** page. Choose a "
            "budget with the sidebar's ε, or here:")
cols = st.columns(4)
for col, (v, label) in zip(cols, ((0.01, "ε = 0.01 (strong privacy)"), (0.1, "ε = 0.1"), (1.0, "ε = 1"),
                                  (10.0, "ε = 10 (weak privacy)")), strict=True):
    col.button(label, key=f"home_eps_{v:g}", on_click=_ui.set_epsilon, args=(v,), width="stretch")
st.markdown("Below, the partition-tree mechanism (PMM, next lessons) runs on your data at that ε.")
_ui.release_section("pmm", {}, title="home_pmm")
_ui.lesson_nav("home")
