"""Low-dimensional synthetic data (seed 004): private PCA subspace, spectra, angles against ε, digits."""

import numpy as np
import streamlit as st

from dashboard import data as sources
from dashboard import ui as _ui
from dpsynth_core import viz
from dpsynth_core.experiments import angle_measure, digits_per_class, digits_svm, sweep

_ui.require_app(__file__)


@st.cache_data(show_spinner=False, max_entries=8)
def _demo(kind: str):
    if kind == "plane":
        return sources.generate("affine_plane", {"n": 5000, "D": 3, "d_prime": 2, "noise": 0.02, "rng": 0})
    return sources.real("digits")


@st.cache_data(show_spinner=False, max_entries=16)
def _digits(epsilon: float, target_dim: int, seed: int):
    return digits_per_class(epsilon, target_dim, rng=seed)


def _use(kind: str) -> None:
    _ui.set_data(_demo(kind), sources.Source("real", "digits") if kind == "digits" else None)


st.title("Low-dimensional synthetic data")
st.markdown(
    "In high dimension every W1 rate collapses: $(\\varepsilon n)^{-1/d}$. Many datasets live near a "
    "low-dimensional subspace, though. This mechanism finds that subspace **privately** (noisy covariance, "
    "top-$d'$ eigenvectors, noisy mean; ε/3 each), runs PMM or PSMM **inside** it with the last ε/3, and maps "
    "the points back — the rate becomes $(\\varepsilon n)^{-1/d'}$.")
spec = _ui.mechanism_spec("low_dim")
if spec is not None:
    d = _ui.data()
    if d.d < 3:
        st.info(f"The current dataset has d = {d.d}: projecting it on a private subspace shows little. Load a "
                "higher-dimensional one:")
        c1, c2 = st.columns(2)
        c1.button("Use a 3-D demo: points near a plane (n = 5000)", key="ld_use_plane", on_click=_use, args=("plane",),
                  type="primary")
        c2.button("Use the handwritten digits (d = 64)", key="ld_use_digits", on_click=_use, args=("digits",))
    st.caption(f"{spec.title} — {spec.paper}, {spec.algorithm}. {spec.summary}")
    params = _ui.param_controls(spec, defaults={"target_dim": min(2, d.d)})
    res = _ui.release_section("low_dim", params, title="low_dim")
    if res is not None:
        rel, w = res
        d = _ui.data()
        tr, pr = rel.trace, rel.params
        owner = tr["owner"]
        dp_ = int(pr["target_dim"])
        angles = np.degrees(np.asarray(owner["principal_angles"], dtype=float))
        st.caption(f"d = {d.d} → d' = {dp_} ({pr['subroutine']} in the subspace, box R = {tr['R']:.3g}); budget "
                   f"ε/3 = {pr['epsilon_covariance']:.3g} per step; covariance noise σ = {pr['covariance_sigma']:.3g}. "
                   f"Principal angles to the true subspace: {', '.join(f'{a:.1f}°' for a in angles)} (owner view).")

        st.subheader("The data and the two principal subspaces")
        if d.d >= 3:
            U = d.domain.to_unit(d.X)
            S = d.domain.to_unit(rel.synthetic)
            names = [f"u{i}" for i in range(3)]
            _ui.plot(viz.pca_3d(U[:, :3], centre_true=U.mean(axis=0)[:3], basis_true=np.asarray(owner["true_basis"])[:3],
                                centre_priv=np.asarray(tr["private_mean"])[:3],
                                basis_priv=np.asarray(tr["private_basis"])[:3], synthetic=S[:, :3], names=names,
                                title="first three coordinates (unit cube)" if d.d > 3 else "unit cube"),
                     "Blue points: the data (" + _ui.OWNER + ") Red: synthetic. Blue plane: the true top-2 "
                     "principal plane through the true mean (owner view); red plane: the private one through the "
                     "private mean (DP). Drag to rotate." + (" Only the first three of the d coordinates are drawn."
                                                              if d.d > 3 else ""),
                     r"\widehat M = M + A,\ A_{ij}=A_{ji}\sim\mathrm{Lap}(\sigma),\ \sigma=\frac{\Delta_1}{2\varepsilon/3},\ "
                     r"\Delta_1=\frac{d^2(n+1)}{n(n-1)}\ (\text{paper: } 6d^2/n);"
                     r"\quad \widehat V_{d'} = \mathrm{top}_{d'}(\widehat M)", key="ld_3d")
        else:
            st.caption("The 3-D view needs d ≥ 3.")

        st.subheader("Spectrum: noisy against true")
        _ui.plot(viz.spectrum(tr["noisy_spectrum"], owner["true_spectrum"], chosen=dp_,
                              title="eigenvalues of the covariance"),
                 "Bars: eigenvalues of the noisy covariance (DP). Line: the true ones (" + _ui.OWNER + ") The "
                 "subspace is the top-d' eigenvectors of the noisy matrix; a gap after d' makes it stable.",
                 key="ld_spec")
        bt = tr.get("bound_terms", {})
        if bt:
            st.caption("Theorem 4.2 terms: " + ", ".join(f"{k.replace('_', ' ')} {v:.3g}" for k, v in bt.items()
                                                        if isinstance(v, (int, float))))

        st.subheader("Principal angles against ε")
        c1, c2 = st.columns(2)
        eps_list = c1.multiselect("ε values", [0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0], default=[0.3, 1.0, 3.0, 10.0, 100.0],
                                  key="ld_eps", persist_state="session")
        reps = c2.slider("Repeats", 1, 10, 3, key="ld_reps", persist_state="session")
        if st.button("Run angle sweep", key="ld_run", type="primary"):
            bar = st.progress(0.0, text="starting …")
            df = _ui.safe(sweep, "low_dim", lambda n, rng: (d.X, d.domain), [d.n], sorted(eps_list), reps,
                          rng=_ui.settings()["seed"], params={**params, "neighbours": "replace"},
                          measure=angle_measure, progress=lambda f, t: bar.progress(min(1.0, f), text=t),
                          what="sweeping ε")
            bar.empty()
            if df is not None:
                st.session_state["ld_result"] = (d.name, df)
        out = st.session_state.get("ld_result")
        if out is not None and out[0] == d.name:
            _ui.plot(viz.angles_plot(out[1], title="largest principal angle, private vs true subspace"),
                     "Mean ± sd over the repeats. As ε grows the private subspace converges to the true one (the "
                     "angle goes to 0). " + _ui.OWNER, key="ld_angles")

    st.subheader("Synthetic handwritten digits")
    st.markdown("Seed 004's Section 5: each digit class (8×8 images, d = 64) is synthesised separately in a "
                "private d'-dimensional subspace. Classes are disjoint, so the whole set is ε-DP.")
    c1, c2 = st.columns(2)
    eps_dig = c1.select_slider("ε (digits)", options=[1.0, 4.0, 16.0, 64.0, 256.0, 1000.0], value=64.0,
                               key="ld_dig_eps", persist_state="session",
                               help="Per class, about 180 images in d = 64: the covariance noise σ = 27d²/(εn) "
                                    "swamps the digit structure at small ε.")
    dim_dig = c2.select_slider("d' (digits)", options=[2, 4, 8], value=4, key="ld_dig_dim", persist_state="session")
    if st.button("Synthesise digits", key="ld_digits"):
        st.session_state["ld_digits_on"] = True
    if st.session_state.get("ld_digits_on"):
        out = _ui.safe(_digits, float(eps_dig), int(dim_dig), int(_ui.settings()["seed"]), what="synthesising digits")
        if out is not None:
            imgs, labels = out
            _ui.plot(viz.digit_images(imgs, labels, title=f"synthetic digits, ε = {eps_dig:g}, d' = {dim_dig}"),
                     "Six synthetic images per class (rows = digits 0–9). They are DP: every pixel comes from the "
                     "private subspace and PMM inside it, none from a real image. With only ~180 images per class, "
                     "the covariance noise σ = 27d²/(εn) hides the digits at ε ≲ 16; try 64 and 1000 to see them "
                     "emerge.", key="ld_digit_imgs")

    st.subheader("Does it help a classifier? The digits SVM experiment")
    st.markdown("Seed 004's Figure 2: train an SVM on the synthetic digits (all classes pooled) and score it on "
                "held-out **real** test images; compare with PMM on the full 64-d cube and with the non-private "
                "ceiling (an SVM on the real training images).")
    c1, c2, c3 = st.columns(3)
    svm_eps = c1.multiselect("ε values", [0.5, 1.0, 2.0, 4.0, 8.0, 64.0], default=[1.0, 4.0], key="ld_svm_eps",
                             persist_state="session")
    svm_dims = c2.multiselect("d' values", [2, 4, 8], default=[4], key="ld_svm_dims", persist_state="session")
    svm_reps = c3.slider("Repeats", 1, 5, 1, key="ld_svm_reps", persist_state="session")
    if st.button("Run the digits experiment", key="ld_svm_run"):
        bar = st.progress(0.0, text="training …")
        df = _ui.safe(digits_svm, sorted(svm_eps), sorted(svm_dims), svm_reps,
                      int(_ui.settings()["seed"]), progress=lambda f, t: bar.progress(min(1.0, float(f)), text=t),
                      what="running the digits experiment")
        bar.empty()
        if df is not None:
            st.session_state["ld_svm"] = df
    df = st.session_state.get("ld_svm")
    if df is not None:
        table = (df.groupby(["method", "target_dim", "epsilon"])["accuracy"].agg(["mean", "std", "count"])
                 .reset_index())
        st.dataframe(table, hide_index=True,
                     column_config={"mean": st.column_config.NumberColumn("accuracy (mean)", format="%.3f"),
                                    "std": st.column_config.NumberColumn("sd", format="%.3f")})
        st.caption("Accuracy on real held-out digits of an SVM trained on synthetic data (low_dim with d', PMM "
                   "on the full cube), and on the real training images (epsilon = inf, not private).")
