"""Start here: a clinic's table and a private copy of it, the attack the copy stops, what ε means; then, for the
class, W1 in one picture, the privacy model and a first release on the current data."""

import streamlit as st

from dashboard import ui as _ui
from dpsynth_core import viz
from dpsynth_core.datasets import two_bumps
from dpsynth_core.wording import epsilon_meaning, kept_sentence, membership_words


@st.cache_data(show_spinner=False, max_entries=64)
def _kr_figure(shift: float):
    return viz.kr_duality(*two_bumps(shift, rng=0))


_ui.page_intro("home")
cols = st.columns(4)
for col, (v, label) in zip(cols, ((0.01, "ε = 0.01 (strong privacy)"), (0.1, "ε = 0.1"), (1.0, "ε = 1"),
                                  (10.0, "ε = 10 (weak privacy)")), strict=True):
    col.button(label, key=f"home_eps_{v:g}", on_click=_ui.set_epsilon, args=(v,), width="stretch")

# ---------------------------------------------------------------- the first screen: for anyone
st.subheader("A clinic's table, and a private copy of it")
fs = _ui.clinic_first_screen()
if fs is not None:
    rel, demo = fs.release, fs.demo
    st.markdown(f"The bundled clinic table: {fs.n:,} patients (generated, not real people). Left, "
                f"{len(fs.real_rows)} of its rows; right, {len(fs.synthetic_rows)} rows of a synthetic table the partition-tree "
                f"mechanism (PMM) released from it at **ε = {rel.epsilon:g}**, the privacy budget above or in the "
                "sidebar.")
    left, right = st.columns(2)
    # static tables (eight rows each): drawn at once, without the interactive grid's code (docs/architecture.md)
    one_decimal = {c: "{:.1f}" for c in fs.real_rows.select_dtypes("number")}
    left.caption("The real table (" + _ui.OWNER + ")")
    left.table(fs.real_rows.style.format(one_decimal).hide(axis="index"))
    right.caption(f"The synthetic table: a real release, {rel.privacy} (teaching seed: reproducible; the "
                  "downloads on the mechanism pages are fresh releases).")
    right.table(fs.synthetic_rows.style.format(one_decimal).hide(axis="index"))
    st.markdown("**What is protected:** whether any one patient is in the table. Whatever anyone computes from the "
                "synthetic table comes out nearly as likely without that patient as with them (the question below)."
                "\n\n**What is kept:** what the table says about the patients as a group. " + kept_sentence(fs.kept))

    st.subheader("The attack it stops: is this patient in the table?")
    question, table, released = membership_words(demo, who="patient")
    st.markdown(question)
    _ui.plot(viz.membership_answers(demo.released_with, demo.released_without, demo.table_with, demo.table_without,
                                    who="the patient"),
             f"{table} {released} Each bar counts releases (PMM at ε = {demo.epsilon:g}, add or remove one record, "
             "each with its own seed) that gave that answer; the dashed lines are the real table's answers ("
             + _ui.OWNER + ")", key="home_membership")
    st.markdown(f"**What ε = {rel.epsilon:g} means in practice.** "
                + epsilon_meaning(rel.epsilon, who="patient"))

# ---------------------------------------------------------------- the mathematics: for the class
st.divider()
st.header("For the class: the mathematics")
st.markdown(
    "A synthetic dataset is **differentially private (DP)** when adding or removing any one person's record changes "
    "the probability of every possible output by at most a factor $e^{\\varepsilon}$. Its quality is the "
    "**Wasserstein-1 distance** $W_1$ to the real data: if $W_1 \\le t$, every 1-Lipschitz statistic (means, "
    "distribution functions, distances, smooth scores) differs by at most $t$.")
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

st.subheader("A first release on the current data")
d = _ui.data()
st.markdown(f"The data: `{d.name}` ({d.description}). Change them on the **Data and bounds** page; the budget is the "
            "ε above (or the sidebar's). Below, the partition-tree mechanism (PMM, next lessons) runs on them.")
_ui.release_section("pmm", {}, title="home_pmm")
_ui.lesson_nav("home")
