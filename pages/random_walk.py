"""Superregular random walk (seed 001 Theorem 3.1; seed 002 Appendix B-C): Haar noise on a path."""

import numpy as np
import streamlit as st

from dashboard import ui as _ui
from dpsynth_core import haar, paths, viz

_ui.require_app(__file__)


@st.cache_data(show_spinner=False, max_entries=16)
def _walks(m: int, scale_superregular: float, scale_iid: float, draws: int, seed: int):
    """Partial sums of the two noises over many draws (data-independent: no privacy cost)."""
    sr = haar.superregular_noise(m, scale=scale_superregular, rng=seed, draws=draws)
    iid = haar.iid_laplace_noise(m, scale=scale_iid, rng=seed + 1, draws=draws)
    env_sr = np.full(m, haar.noise_partial_sum_bound(m, scale_superregular))
    env_iid = np.sqrt(2.0 * np.arange(1, m + 1)) * scale_iid
    return np.cumsum(sr, axis=1), np.cumsum(iid, axis=1), env_sr, env_iid


@st.cache_data(show_spinner=False, max_entries=8)
def _example_path(kind: str, k: int, d: int):
    return paths.grid_path(kind, k, d).order


head = _ui.mechanism_header(
    "haar_walk", "Superregular random walk",
    "Order the grid cells along a **path** (the line), count the points in each, and add noise whose "
    "**partial sums stay small**: Laplace noise on the Haar coefficients instead of on the counts. The CDF on "
    "the line is a partial sum, and W1 on the line is the area between CDFs, so small partial sums mean small W1. "
    "The signed measure is then projected to the closest probability measure (an isotonic regression of its CDF).")
if head is not None:
    spec, params = head
    res = _ui.release_section("haar_walk", params, title="random_walk")
    if res is not None:
        rel, w = res
        d = _ui.data()
        tr, pr = rel.trace, rel.params
        owner = tr["owner"]
        N = int(pr["cells"])
        st.caption(f"{N} cells ({pr.get('cells_per_axis')} per axis), path '{pr['path']['kind'] if isinstance(pr.get('path'), dict) else pr.get('path')}' "
                   f"of length {pr['bound_terms']['path_length']:.4g}, K = {pr['levels_K']} Haar levels, coefficient "
                   f"scale b = {pr['coefficient_scale']:.4g}; the i.i.d. walk of equal privacy has scale "
                   f"{pr['iid_equal_privacy_scale']:.4g}.")

        st.subheader("Haar basis")
        kk = st.slider("Levels k (m = 2^k positions)", 2, 5, 3, key="rw_k", persist_state="session")
        _ui.plot(viz.haar_basis(haar.haar_matrix(kk), title=f"columns of M_{kk}"),
                 "Each row is one basis function (a column of the transposed Haar matrix): constant, then ± on "
                 "halves, quarters, … Noise on a coefficient moves a whole block up and the next block down, so "
                 "it cancels in partial sums.",
                 r"\tilde c = c + \Phi\eta,\quad \Phi=(K+1)M_K,\quad \eta_i\sim\mathrm{Lap}(\Delta/\varepsilon),"
                 r"\quad \Big\|\sum_{j\le i}\Phi_j\Big\|_2\le (K+1)^{3/2}", key="rw_basis")

        st.subheader("Partial sums: superregular against i.i.d.")
        c1, c2 = st.columns(2)
        m_walk = c1.select_slider("Walk length m", options=[128, 1024, 4096, 16384, 65536], value=16384,
                                  key="rw_m", persist_state="session",
                                  help=f"This release's path has {N} cells; a longer walk shows the asymptotics "
                                       "(the noise scales are the release's, which do not depend on m).")
        draws = c2.slider("Draws", 5, 60, 20, key="rw_draws", persist_state="session")
        psr, piid, env_sr, env_iid = _walks(int(m_walk), float(pr["coefficient_scale"]),
                                            float(pr["iid_equal_privacy_scale"]), draws, int(_ui.settings()["seed"]))
        _ui.plot(viz.partial_sum_paths(psr, piid, title=f"{draws} draws of each noise over m = {m_walk} positions",
                                       envelope={"Lemma 3 bound (superregular sd)": env_sr,
                                                 "√(2i)·Δ/ε (i.i.d. sd)": env_iid}),
                 "Orange: partial sums of i.i.d. Laplace noise of the same privacy wander like √i. Green: the "
                 "superregular walk stays within a polylog band. For short walks (m of a few hundred) the "
                 "polylog constant makes the two comparable; the gap grows with m. Pure noise draws: no data.",
                 r"\mathrm{sd}\Big(\sum_{j\le i}(\Phi\eta)_j\Big) \le \sqrt2\,b\,(K+1)^{3/2}\quad\text{vs}\quad"
                 r"\sqrt{2i}\,\Delta/\varepsilon", key="rw_paths")

        st.subheader("The path through the grid")
        kind = pr["path"]["kind"] if isinstance(pr.get("path"), dict) else str(params.get("path") or "snake")
        k_axis = pr.get("cells_per_axis")
        if d.d == 2 and k_axis:
            if k_axis <= 32:
                order, kshow, note = np.asarray(tr["path_order"]), int(k_axis), "the release's own path"
            else:
                kshow = 8 if kind != "hilbert" else 8
                order, note = _example_path(kind, kshow, 2), f"the same kind of path on an {kshow}×{kshow} grid " \
                                                               f"(the release's {k_axis}×{k_axis} grid is too dense to draw)"
            _ui.plot(viz.grid_path(order, kshow, title=f"{kind} path, {kshow}×{kshow} cells"),
                     f"Consecutive cells are neighbours, so the map from the line to the square is 1-Lipschitz: W1 "
                     f"on the line bounds W1 in the square. Shown: {note}.", key="rw_grid")
        else:
            st.caption("The path picture is drawn for 2-D data; in 1-D the line is the data space itself.")

        st.subheader("Signed and projected CDFs on the line")
        pos = np.asarray(tr["positions"], dtype=float)
        series = {"signed (noisy) CDF": tr["signed_cdf"], "projected CDF (DP)": tr["projected_cdf"],
                  "true CDF (owner view)": owner["true_cdf"], "i.i.d.-noise CDF (owner view)": owner["iid_signed_cdf"]}
        _ui.plot(viz.line_cdfs(pos, series, title="CDFs along the path", reference="true CDF (owner view)"),
                 "Top: the CDFs; bottom: their gap to the true CDF (its area is W1 on the line). The noisy signed CDF can "
                 "leave [0, 1] and decrease; the projection is the closest nondecreasing "
                 "CDF in W1 (weighted L1 isotonic regression). True and i.i.d. curves: " + _ui.OWNER,
                 r"\tau=\arg\min_{F_\tau\uparrow}\sum_j (w_{j+1}-w_j)\,|F_\nu(w_j)-F_\tau(w_j)|", key="rw_cdf")
        bt = pr["bound_terms"]
        st.caption(f"Bound terms: discretisation {bt['discretisation']:.3g}, Lemma 3 partial-sum sd "
                   f"{bt['lemma3_partial_sum_sd']:.3g}, size error {bt['size_error']:.3g}, rounding "
                   f"{bt['rounding_w1']:.3g}.")
