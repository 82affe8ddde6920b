"""Superregular random walk: counts along a path with Haar noise whose running sums stay small."""

import streamlit as st

from dashboard import ui as _ui
from dpsynth_core import haar, paths, viz
from dpsynth_core.mechanisms.haar_walk import HaarWalkOwner, HaarWalkTrace


@st.cache_data(show_spinner=False, max_entries=16)
def _walks(m: int, scale_superregular: float, scale_iid: float, draws: int, seed: int):
    """Running sums of the two noises over many draws (noise only: no data, no privacy cost)."""
    return haar.noise_walks(m, scale_superregular, scale_iid, draws, rng=seed)


@st.cache_data(show_spinner=False, max_entries=8)
def _example_path(kind: str, k: int, d: int):
    return paths.grid_path(kind, k, d).order


spec, params = _ui.mechanism_header("random_walk")
res = _ui.release_section("haar_walk", params, title="random_walk")
if res is not None:
    rel, w = res
    tr, owner = HaarWalkTrace.of(rel), HaarWalkOwner.of(rel)
    N, kind = tr.cells, tr.path_kind
    st.caption(f"{N:,} cells ordered along a {kind} path; the noise is Laplace noise on {tr.levels_K} levels of "
               f"Haar coefficients instead of on the counts.")
    with st.expander("The mathematics", icon=":material/functions:"):
        st.latex(r"\tilde c = c + \Phi\eta,\quad \Phi=(K+1)M_K,\quad \eta_i\sim\mathrm{Lap}(\Delta/\varepsilon),"
                 r"\qquad \mathrm{sd}\Big(\sum_{j\le i}(\Phi\eta)_j\Big) \le \sqrt2\,b\,(K+1)^{3/2}")
        st.markdown("$M_K$ is the (transposed) Haar matrix: its columns are ± blocks, so noise on one coefficient "
                    "raises one block and lowers the next, and cancels in running sums ([BSV22], Theorem 3.1; "
                    "[DLS+24], Lemma 3). Independent Laplace noise of the same privacy has running sums of size "
                    "$\\sqrt{2i}\\,\\Delta/\\varepsilon$.")

    def _running_sums():
        c1, c2 = st.columns(2)
        m_walk = c1.select_slider("Walk length", options=[128, 1024, 4096, 16384, 65536], value=16384, key="rw_m",
                                  persist_state="session",
                                  help=f"This release's path has {N} cells; a longer walk shows the trend (the noise "
                                       "scales are the release's; they do not depend on the length).")
        draws = c2.slider("Draws", 5, 60, 20, key="rw_draws", persist_state="session")
        walks = _walks(int(m_walk), tr.coefficient_scale, tr.iid_equal_privacy_scale, draws, int(_ui.settings().seed))
        _ui.plot(viz.partial_sum_paths(walks.superregular, walks.iid, title=f"{draws} draws of each noise, {m_walk:,} steps",
                                       envelope={"bound on the superregular walk's spread": walks.superregular_bound,
                                                 "spread of independent noise, √(2i)·Δ/ε": walks.iid_spread}),
                 "Running sums of independent Laplace noise of the same privacy wander like √i; the superregular "
                 "walk stays in a band growing like a power of log i. On short walks the two are comparable; the gap "
                 "grows with the length. Noise only: no data.", key="rw_paths")

    def _cdfs():
        series = {"signed (superregular noise, private)": tr.signed_cdf, "projected (private)": tr.projected_cdf,
                  "true (owner view)": owner.true_cdf, "with i.i.d. noise (owner view)": owner.iid_signed_cdf}
        _ui.plot(viz.line_cdfs(tr.positions, series, title="cumulative distributions along the path",
                               reference="true (owner view)"),
                 "Top: the cumulative distributions; bottom: their gap to the true one (its area is W1 on the line). "
                 "The noisy one can leave [0, 1] and go down; the projection is the closest non-decreasing one. "
                 "True and independent-noise curves: " + _ui.OWNER, key="rw_cdf")

    def _path():
        k_axis = tr.cells_per_axis
        if tr.combinations > 1:
            st.caption(f"On this table the path runs through the {tr.combinations} combinations of categories, one "
                       "after the other (neighbouring combinations differ in one category), and through the numeric "
                       "grid within each: it is drawn for a 2-D numeric grid only.")
            return
        if tr.d != 2:
            st.caption("The path is drawn for 2-D data; in 1-D the line is the data space itself.")
            return
        if k_axis <= 32:
            order, kshow, note = tr.path_order, k_axis, "this release's path"
        else:
            kshow = 8
            order = _example_path(kind, kshow, 2)
            note = f"the same kind of path on an {kshow}×{kshow} grid (this release's {k_axis}×{k_axis} grid is too dense)"
        _ui.plot(viz.grid_path(order, kshow, title=f"{kind} path, {kshow}×{kshow} cells"),
                 f"Consecutive cells are neighbours, so going back from the line to the square never stretches "
                 f"distances: W1 on the line bounds W1 in the square. Shown: {note}.", key="rw_grid")

    def _basis():
        kk = st.slider("Levels (2^k positions)", 2, 5, 3, key="rw_k", persist_state="session")
        _ui.plot(viz.haar_basis(haar.haar_matrix(kk), title=f"the Haar basis on {2 ** kk} positions"),
                 "Each row is one basis function: constant, then ± on halves, quarters, … Noise on one coefficient "
                 "moves a whole block up and the next block down.", key="rw_basis")

    _ui.look_closer({"Running sums of the noise": _running_sums, "Distributions on the line": _cdfs,
                     "The path through the grid": _path, "The Haar basis": _basis}, key="rw_view")
_ui.lesson_nav("random_walk")
