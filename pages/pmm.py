"""PMM (seed 000, Algorithms 3-4): partition tree, cell maps, counts per level, σ_j, draws."""

import numpy as np
import streamlit as st

from dashboard import ui as _ui
from dpsynth_core import partition, viz

_ui.require_app(__file__)

head = _ui.mechanism_header(
    "pmm", "PMM — private measure mechanism",
    "PMM splits the cube in half again and again (axis $j \\bmod d$ at level $j$), adds integer "
    "Laplace noise to **every count of every level**, clips negative counts, makes the tree **consistent** "
    "(children add up to their parent, top-down) and puts $m_\\theta$ points in each leaf. Coarse levels "
    "get little noise relative to their counts, so the big picture is accurate and the noise only "
    "blurs fine detail.")
if head is not None:
    spec, params = head
    res = _ui.release_section("pmm", params, title="pmm")
    if res is not None:
        rel, w = res
        d = _ui.data()
        tr = rel.trace
        depth = int(tr["depth"])
        dim = int(tr["d"])
        noisy, clipped, cons = tr["noisy_counts"], tr["clipped_counts"], tr["consistent_counts"]
        true = tr["owner"]["true_counts"]
        st.caption(f"Depth r = {depth} ({2 ** depth} leaves, rule: {rel.params.get('depth_rule')}), resolution "
                   f"δ = {rel.params.get('resolution'):.4g}, noise split '{rel.params.get('noise')}', consistency "
                   f"'{rel.params.get('consistency')}', n for parameters: {rel.params.get('n_for_parameters')} "
                   f"({rel.params.get('n_source')}).")
        st.latex(r"\mathbb E\,W_1 \le \frac{\sqrt2}{\varepsilon n}\Big(\sum_{j=0}^{r}\sqrt{\Delta_{j-1}}\Big)^2"
                 r" + \delta \quad(\text{Theorem 11}),\qquad \Delta_j = 2^j\,\mathrm{diam}_j")

        st.subheader("The partition tree")
        c1, c2, c3 = st.columns(3)
        top = max(1, min(depth, 8))
        tree_level = c1.slider("Show levels 0 … L", 0 if depth == 0 else 1, top, min(top, 5), key="pmm_tree_level",
                               help="Deeper levels have 2^L cells; the tree view shows at most 8 levels.",
                               persist_state="session")
        stage = c2.radio("Counts", ["noisy", "consistent", "true (owner view)"], horizontal=True, key="pmm_stage",
                         persist_state="session", help="Which counts label and colour the cells.")
        kind = c3.radio("View", ["icicle", "sunburst"], horizontal=True, key="pmm_kind", persist_state="session")
        levels = {"noisy": noisy, "consistent": cons, "true (owner view)": true}[stage]
        _ui.plot(viz.icicle_tree(levels, max_level=tree_level, kind=kind, title=f"{stage} counts, levels 0–{tree_level}"),
                 "Each box is a cell Ω_θ; its children are its two halves. Colour = count (red = negative noisy "
                 "count). " + (_ui.OWNER if stage.startswith("true") else "Noisy and consistent counts are DP."),
                 r"\tilde n_\theta = n_\theta + \lambda_\theta,\ \lambda_\theta\sim\mathrm{Lap}_{\mathbb Z}(\sigma_j)"
                 r"\ \text{for } |\theta| = j", key="pmm_tree")

        st.subheader("Cells of one level")
        level = st.slider("Level j", 0, depth, min(depth, 6), key="pmm_level", persist_state="session",
                          help="Level j has 2^j cells; level r is the leaves.") if depth > 0 else 0
        lo, hi = partition.cell_bounds(level, dim)
        cols = st.columns(3)
        names = ("u0", "u1") if dim > 1 else ("u0",)
        for col, (label, arr) in zip(cols, (("true (owner view)", true), ("noisy (DP)", noisy),
                                            ("consistent (DP)", cons)), strict=True):
            with col:
                st.plotly_chart(viz.cell_map(np.asarray(arr[level]), lo, hi, title=label, names=names),
                                width="stretch", key=f"pmm_map_{label}")
        st.caption(f"Level {level}: {2 ** level} cells of l∞ diameter {partition.diameters(level, dim)[-1]:.4g} "
                   "in the unit cube (first two axes; other axes summed). Blue = positive, red = negative. The left "
                   "map is " + _ui.OWNER)

        st.subheader("Noisy, clipped and consistent counts")
        series = {"true (owner view)": true[level], "noisy": noisy[level], "clipped": clipped[level],
                  "consistent": cons[level]}
        _ui.plot(viz.level_counts(series, title=f"level {level}, cells in code order"),
                 "Noise makes some counts negative; clipping sets them to 0 (which biases the total up); "
                 "consistency redistributes each parent's count over its children, keeping their order. "
                 "True counts: " + _ui.OWNER,
                 r"n'_\theta = (\tilde n_\theta)_+,\quad (m_{\theta0}, m_{\theta1}) \text{ on } x + y = m_\theta "
                 r"\text{, comparable with } (n'_{\theta0}, n'_{\theta1})", key="pmm_counts")

        st.subheader("Noise per level")
        sig = np.asarray(tr["sigmas"], dtype=float)
        _ui.plot(viz.sigma_levels(np.where(sig > 0, sig, np.nan), title="σ_j per level (0 = exact root)",
                                  extra={"ε_j spent": tr.get("level_epsilons", [])}),
                 "Orange bars: the discrete-Laplace scale σ_j of level j; the line: the budget ε_j it spends (sensitivity/σ_j; they add up to the tree's ε). "
                 "The A.4 split gives the deep levels — many small cells whose errors add up in W1 — the larger "
                 "share of ε, hence less noise per count.",
                 r"\sigma_j = \frac{S}{\varepsilon\sqrt{\Delta_{j-1}}},\quad S=\sum_{j=0}^{r}\sqrt{\Delta_{j-1}},"
                 r"\quad \varepsilon=\sum_j 1/\sigma_j", key="pmm_sigma")

        st.subheader("Draw again")
        st.markdown("A DP release is random: the same data and ε give a different synthetic dataset each time. "
                    "Here are several independent releases (different seeds).")
        k = st.slider("Releases", 2, 8, 4, key="pmm_k", persist_state="session")
        if st.button("Draw again", key="pmm_draw", help="New seeds for all the releases below."):
            st.session_state["pmm_offset"] = st.session_state.get("pmm_offset", 0) + k
        offset = st.session_state.get("pmm_offset", 0)
        seed = _ui.settings()["seed"]
        draws, w1s = [], []
        for i in range(k):
            r = _ui.run("pmm", params, seed=seed + 1 + offset + i)
            if r is None:
                break
            wi = _ui.w1_of(r.synthetic, fast=True)
            draws.append(r.synthetic)
            w1s.append(np.nan if wi is None else wi.value)
        if draws:
            _ui.plot(viz.draws_grid(d.X, draws, w1s, d.domain.names, lower=d.domain.lower, upper=d.domain.upper),
                     f"{len(draws)} independent releases (seeds {seed + 1 + offset}…{seed + offset + len(draws)}). "
                     f"W1 over the draws (quick grid solve, ±1/64 in 2-D): mean {np.nanmean(w1s):.4g}, sd {np.nanstd(w1s):.2g}; the bound on E W1 "
                     f"is {rel.bound:.4g}.", key="pmm_draws")
