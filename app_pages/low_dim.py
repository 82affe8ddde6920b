"""Low-dimensional data: a private plane (private PCA), synthetic data inside it, digits and a classifier."""

import math

import streamlit as st

from dashboard import data as sources
from dashboard import ui as _ui
from dpsynth_core import viz
from dpsynth_core.experiments import angle_measure, digits_per_class, digits_svm
from dpsynth_core.mechanisms.low_dim import LowDimHandoverTrace, LowDimOwner, LowDimTrace


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


# the page teaches the paper's projection: plan "paper" (dashboard.registry.CONTROLS)
spec, params = _ui.mechanism_header("low_dim")
d = _ui.data()
if d.d < 3:
    st.info(f"The current data have d = {d.d} coordinates: projecting them on a plane shows little. Load data with "
            "more coordinates:")
    c1, c2 = st.columns(2)
    c1.button("Use a 3-D demo: points near a plane (n = 5000)", key="ld_use_plane", on_click=_use, args=("plane",),
              type="primary")
    c2.button("Use the handwritten digits (d = 64)", key="ld_use_digits", on_click=_use, args=("digits",))
st.caption(f"The library's default plan (chosen by the defaults study, {_ui.doc_link('defaults')}) does not project tables "
           "with d ≤ 6: there it releases PSMM in full dimension, which was ahead of every projection the study "
           "tried on average. This page uses the paper's plan, which always projects, to show how the projection "
           "works; pick the plan 'study' to see the default.")
res = _ui.release_section("low_dim", params, title="low_dim")
if res is not None and isinstance(res[0].trace, LowDimHandoverTrace):
    st.info(f"The plan handed over: {res[0].params['reason']}. The release is "
            f"{res[0].params['handover'].upper()} in full dimension with the whole ε, so there is no private plane "
            "to show. Give a target dimension or pick the paper's plan to project.")
    res = None
if res is not None:
    rel, w = res
    tr, owner = LowDimTrace.of(rel), LowDimOwner.of(rel)
    dp_ = tr.target_dim
    angle = angle_measure(rel, d.X, d.domain)["angle"]  # the largest principal angle, in degrees (owner view)
    shares = [rel.params[k] / rel.epsilon for k in ("epsilon_covariance", "epsilon_mean", "epsilon_subroutine")]
    split = ("a third of ε each" if all(math.isclose(x, 1 / 3) for x in shares) else
             "{:.0%}, {:.0%} and {:.0%} of ε".format(*shares))
    st.caption(f"From d = {d.d} to a private plane of dimension d′ = {dp_}; {split} for the covariance, the "
               f"mean and the synthetic data inside the plane ({tr.subroutine_name.upper()}). Angle between the "
               f"private and the true plane: {angle:.1f}° (owner view).")
    with st.expander("The mathematics", icon=":material/functions:"):
        st.latex(r"\widehat M = M + A,\ A_{ij}=A_{ji}\sim\mathrm{Lap}(\sigma),\ \sigma=\frac{\Delta_1}{\varepsilon/3},\ "
                 r"\Delta_1=\frac{d^2(n+1)}{n(n-1)};\qquad \widehat V_{d'} = \mathrm{top}_{d'}(\widehat M)")
        st.markdown("The covariance gets symmetric Laplace noise calibrated to its exact sensitivity (the paper's "
                    f"value is about six times larger; {_ui.doc_link('deviations')}), the plane is its top-d′ eigenvectors, and "
                    "PMM or PSMM runs inside the plane with the last third of ε ([HSVZ23], Algorithm 1).")

    def _planes():
        if d.d < 3:
            st.caption("The 3-D view needs data with at least 3 coordinates.")
            return
        U = d.domain.to_unit(d.X)
        S = d.domain.to_unit(rel.synthetic)
        _ui.plot(viz.pca_3d(U[:, :3], basis_true=owner.true_basis[:3],
                            centre_priv=tr.private_mean[:3], basis_priv=tr.private_basis[:3],
                            synthetic=S[:, :3], names=[f"u{i}" for i in range(3)],
                            title="first three coordinates (unit cube)" if d.d > 3 else "unit cube"),
                 "Grey points: the data (" + _ui.OWNER + ") Vermillion: synthetic. Grey plane: the true principal plane "
                 "(owner view); orange plane: the private one. Drag to rotate." + (" Only the first three of the d "
                 "coordinates are drawn." if d.d > 3 else ""), key="ld_3d")

    def _against_pmm():
        full = _ui.teaching_release("pmm", {})
        if full is None:
            return
        wf = _ui.w1_of(full.synthetic)
        c1, c2 = st.columns(2)
        c1.metric("W1, private plane + PMM inside", "—" if w is None else _ui.w1_text(w))
        c2.metric("W1, PMM on the full cube", "—" if wf is None else _ui.w1_text(wf))
        if w is not None and wf is not None:
            better = w.upper < wf.lower
            worse = w.lower > wf.upper
            st.caption(("The private plane wins: " if better else "PMM on the full cube wins here: " if worse else
                        "Too close to call: ") +
                       ("working in d′ dimensions beats the full cube once the private plane is accurate." if better
                        else "the plane costs two thirds of ε and is not accurate enough yet at this ε and n; raise ε "
                             "(or use more data) and the plane pays off." if worse else
                        "the two are within each other's proven intervals."))

    def _spectrum():
        _ui.plot(viz.spectrum(tr.noisy_spectrum, owner.true_spectrum, chosen=dp_,
                              title="eigenvalues of the covariance"),
                 "Bars: eigenvalues of the noisy covariance (private). Line: the true ones (" + _ui.OWNER + ") The "
                 "plane is spanned by the top-d′ eigenvectors of the noisy matrix; a gap after d′ makes it stable.",
                 key="ld_spec")

    def _angles():
        df = _ui.epsilon_sweep("low_dim", params, angle_measure, label="Run the angle sweep", prefix="ld",
                               choices=[0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0], default=[0.3, 1.0, 3.0, 10.0, 100.0],
                               repeats_label="Repeats", repeats=(1, 10, 3))
        if df is not None:
            _ui.plot(viz.angles_plot(df, title="largest angle between the private and the true plane"),
                     "Mean ± sd over the repeats. As ε grows the private plane converges to the true one (the angle "
                     "goes to 0). " + _ui.OWNER, key="ld_angles")

    def _digits_view():
        st.markdown("Each digit class (8×8 images, 64 coordinates) is synthesised separately in its own private "
                    "plane. The classes are disjoint, so the whole set is ε-DP ([HSVZ23], Section 5).")
        c1, c2 = st.columns(2)
        eps_dig = c1.select_slider("ε for the digits", options=[16.0, 64.0, 256.0, 1000.0, 4000.0], value=1000.0,
                                   key="ld_dig_eps", persist_state="session",
                                   help="Each class has only about 180 images in 64 dimensions, so the noise on its "
                                        "covariance is large: the digits emerge only at large ε.")
        dim_dig = c2.select_slider("d′ for the digits", options=[2, 4, 8], value=4, key="ld_dig_dim",
                                   persist_state="session")
        _ui.weak_epsilon_caption(float(eps_dig))
        out = _ui.safe(_digits, float(eps_dig), int(dim_dig), int(_ui.settings().seed), what="synthesising digits")
        if out is not None:
            imgs, labels = out
            _ui.plot(viz.digit_images(imgs, labels, title=f"synthetic digits, ε = {eps_dig:g}, d′ = {dim_dig}"),
                     "Six synthetic images per class (one row per digit). Every pixel comes from the private plane "
                     "and PMM inside it; none is copied from a real image. With only about 180 images per class the "
                     "covariance noise hides the digits below ε ≈ 256: lower ε and watch them dissolve.",
                     key="ld_digit_imgs")

    def _classifier():
        st.markdown("Train a classifier (an SVM) on the synthetic digits of all classes and score it on held-out "
                    "**real** images; compare with PMM on the full 64-dimensional cube and with a classifier trained "
                    "on the real images ([HSVZ23], Figure 2).")
        c1, c2, c3 = st.columns(3)
        svm_eps = c1.multiselect("ε values", [0.5, 1.0, 2.0, 4.0, 8.0, 64.0], default=[4.0, 8.0], key="ld_svm_eps",
                                 persist_state="session")
        svm_dims = c2.multiselect("d′ values", [2, 4, 8], default=[2], key="ld_svm_dims", persist_state="session")
        svm_reps = c3.slider("Repeats", 1, 5, 1, key="ld_svm_reps", persist_state="session")
        _ui.weak_epsilon_caption(max(svm_eps, default=0.0))
        seed = int(_ui.settings().seed)
        df = _ui.kept_sweep(
            "Run the digits experiment", lambda progress: _ui.safe(
                digits_svm, sorted(svm_eps), sorted(svm_dims), svm_reps, seed, progress=progress,
                what="running the digits experiment"),
            key="ld_svm_run", slot="ld_svm", start="training …", primary=False,
            fingerprint=_ui.inputs(data_words="the handwritten digits (bundled)", epsilon=sorted(svm_eps),
                                   seed=seed, dimensions=sorted(svm_dims), repeats=svm_reps))
        if df is not None:
            table = (df.groupby(["method", "target_dim", "epsilon"])["accuracy"].agg(["mean", "std", "count"])
                     .reset_index().replace({"method": {"low_dim": "private plane + PMM", "pmm_full":
                                                        "PMM on the full cube", "real": "real images (not private)"}}))
            st.dataframe(table, hide_index=True,
                         column_config={"method": "trained on", "target_dim": "dimension",
                                        "mean": st.column_config.NumberColumn("accuracy (mean)", format="%.3f"),
                                        "std": st.column_config.NumberColumn("sd", format="%.3f"), "count": "runs"})
            st.caption("Accuracy on real held-out digits. At ε ≥ 4 the private plane clearly beats PMM on the full "
                       "cube; at ε ≤ 1 the plane is too noisy and PMM wins — the same picture as the paper's Figure 2.")

    _ui.look_closer({"The two planes": _planes, "Against PMM on the full cube": _against_pmm,
                     "Spectrum": _spectrum, "Angle against ε": _angles, "Synthetic digits": _digits_view,
                     "Does it help a classifier?": _classifier}, key="ld_view")
_ui.lesson_nav("low_dim")
