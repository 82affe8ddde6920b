"""The figure builders of dpsynth_core.viz: pure functions, data in, Figure out.

Besides the tests, this file holds the realistic inputs the figures are measured with (n = 5000
points, a depth-16 PMM tree, 64×64 grids, 20 walks of 16384 steps). Run it as a script for the
build-time and JSON-size table (old keyword arguments only, so an older viz can be compared; it may
be a single viz.py, as before the package, or a viz/ folder):

    mkdir -p /tmp/viz_main && git archive main dpsynth_core/viz | tar -x -C /tmp/viz_main
    PYTHONPATH=. python tests/app/test_viz.py --before /tmp/viz_main/dpsynth_core/viz
"""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

from dpsynth_core import viz
from dpsynth_core.partition import cell_bounds

RNG = np.random.default_rng(0)
X = RNG.random((300, 2))
Y = RNG.random((250, 2))
LO, HI, NAMES = np.array([18.0, 0.0]), np.array([90.0, 200_000.0]), ["age", "income"]
#: Words no default text may contain (labels like these come from the caller).
#: The first-view figures, drawn with Vega-Lite (dicts; their tests: tests/app/test_viz_vega.py).
VEGA_LITE = ("scatter_compare", "kr_duality", "membership_answers")
INTERNAL = re.compile(r"U_T|L_T|step ?\d|seed \d|\bA\.4\b|Lemma|Theorem|Corollary|paper bound|S_t\b|σ_j")


# ------------------------------------------------------------------------------ realistic inputs
def people(n: int = 5000, seed: int = 0) -> np.ndarray:
    """Age (18–90) and income (0–200,000): two columns with different units."""
    rng = np.random.default_rng(seed)
    age = np.clip(rng.normal(45, 14, n), 18, 90)
    income = np.clip(np.exp(rng.normal(10.5, 0.6, n)) + 300 * (age - 18), 0, 200_000)
    return np.column_stack([age, income])


def realistic_cases() -> dict:
    """name → function(viz module) → Figure, at the sizes the dashboard draws (old keywords only)."""
    from dpsynth_core import datasets, haar, marginal_views, paths
    from dpsynth_core.domain import Domain
    from dpsynth_core.mechanisms import run

    rng = np.random.default_rng(1)
    Xr, Yr = people(), people(seed=2)
    rel = run("pmm", Xr, Domain(lower=tuple(LO), upper=tuple(HI), names=tuple(NAMES)), epsilon=1.0, rng=0,
              depth=16)
    tree, noisy, clipped, cons = (rel.owner.true_counts, rel.trace.noisy_counts, rel.trace.clipped_counts,
                                  rel.trace.consistent_counts)
    sig = np.asarray(rel.trace.sigmas, dtype=float)
    U = (Xr - LO) / (HI - LO)
    k = 64
    hist = np.histogram2d(U[:, 0], U[:, 1], bins=k, range=[[0, 1], [0, 1]])[0] / len(U)
    nu = (hist + rng.laplace(0, 2e-3, hist.shape)).ravel()
    tau = np.maximum(nu, 0) / np.maximum(nu, 0).sum()
    m, draws = 16384, 20
    sr = np.cumsum(haar.superregular_noise(m, scale=2.0, rng=0, draws=draws), axis=1)
    iid = np.cumsum(haar.iid_laplace_noise(m, scale=1.0, rng=1, draws=draws), axis=1)
    env = {"reference A": np.full(m, haar.noise_partial_sum_bound(m, 2.0)),
           "reference B": np.sqrt(2.0 * np.arange(1, m + 1))}
    F = np.cumsum(hist.ravel())
    cdfs = {"signed (noisy) CDF": F + np.cumsum(rng.laplace(0, 1e-3, F.size)), "projected CDF (DP)": F * 0.99,
            "true CDF (owner view)": F, "i.i.d.-noise CDF (owner view)": F + np.cumsum(rng.laplace(0, 3e-3, F.size))}
    eps_ns = [10, 30, 100, 300, 1000]
    rates = pd.DataFrame([{"mechanism": mech, "eps_n": e, "w1": 0.5 * e ** -0.5 * (1 + 0.1 * r) * (i + 1)}
                          for i, mech in enumerate(["pmm", "psmm", "flat_histogram"]) for e in eps_ns
                          for r in range(3)])
    bounds = {mech: (np.array(eps_ns, float), 2.0 * np.array(eps_ns, float) ** -0.5) for mech in ["pmm", "psmm"]}
    fits = {mech: (-0.5, np.log(0.5 * (i + 1))) for i, mech in enumerate(["pmm", "psmm", "flat_histogram"])}
    band_x = np.geomspace(10, 1000, 5)
    # an undefined end (NaN: fewer than three runs) is left out of the band, never written as NaN
    fit_bands = {"pmm": (band_x, 0.4 * band_x**-0.5, 0.6 * band_x**-0.5, "95% band"),
                 "psmm": (band_x, np.full(5, np.nan), np.full(5, np.nan), "95% band")}
    cmp = pd.DataFrame({"mechanism": [f"mech{i}" for i in range(8)], "status": ["ok"] * 7 + ["refused"],
                        "w1": np.geomspace(0.01, 0.3, 8), "bound": [0.1, None, 0.5, None, 0.2, 0.3, None, None],
                        "seconds": np.geomspace(0.05, 20, 8)})
    edges = np.linspace(-4, 4, 41)
    pD = np.histogram(rng.normal(0, 1, 5000), edges)[0] / 5000
    pD2 = np.histogram(rng.normal(0.2, 1, 5000), edges)[0] / 5000
    cert = pd.DataFrame({"certificate": rng.uniform(0.05, 0.3, 25), "loss": rng.uniform(0.01, 0.2, 25),
                         "epsilon": np.repeat([f"ε = {e:g}" for e in (0.1, 0.3, 1, 3, 10)], 5)})
    angles = pd.DataFrame({"epsilon": np.repeat([0.3, 1, 3, 10, 100], 3), "angle": rng.uniform(1, 60, 15)})
    X3, S3 = rng.normal(0.5, 0.1, (5000, 3)), rng.normal(0.5, 0.1, (5000, 3))
    B = np.linalg.qr(rng.normal(size=(3, 2)))[0]
    imgs, ilabels = rng.random((600, 64)), np.repeat(np.arange(10), 60)
    pe_synth = [rng.random((2000, 2)) * (HI - LO) + LO for _ in range(11)]
    variations = rng.random((8000, 2)) * (HI - LO) + LO
    order = paths.grid_path("hilbert", 32, 2).order
    lb, ub = cell_bounds(16, 2)
    a, b = rng.beta(2, 5, 5000), rng.beta(3, 4, 5000)
    labels = (Xr[:, 0] > 50).astype(int)
    clinic = datasets.clinic(5000)
    real_t, synth_t = clinic.to_frame(), datasets.clinic(5000, rng=7).to_frame()  # a stand-in synthetic table
    cats = clinic.domain.categories
    mrel = run("marginals", clinic.X, clinic.domain, epsilon=1.0, rng=0)  # a release of the marginal tables
    ow, tw = marginal_views.one_way_view(mrel, 0), marginal_views.two_way_view(mrel, 2)
    kept = {"marginal tables": {"W1": 0.1, "1-way error": 0.04, "2-way error": 0.08, "3-way error": float("nan")},
            "PMM's tree": {"W1": 0.17, "1-way error": 0.14, "2-way error": 0.24, "3-way error": float("nan")}}
    return {
        "scatter_data": lambda v: v.scatter_data(Xr, NAMES, labels=labels, lower=LO, upper=HI),
        "scatter_compare": lambda v: v.scatter_compare(Xr, Yr, NAMES, lower=LO, upper=HI),
        "draws_grid": lambda v: v.draws_grid(Xr, [Yr] * 4, [0.1, 0.12, 0.11, 0.13], NAMES, lower=LO, upper=HI),
        "kr_duality": lambda v: v.kr_duality(a, b),
        "icicle_tree": lambda v: v.icicle_tree(noisy, max_level=8),
        "cell_map": lambda v: v.cell_map(noisy[16], lb, ub, names=("u0", "u1")),
        "level_counts": lambda v: v.level_counts({"true (owner view)": tree[16], "noisy": noisy[16],
                                                  "clipped": clipped[16], "consistent": cons[16]}),
        "sigma_levels": lambda v: v.sigma_levels(np.where(sig > 0, sig, np.nan),
                                                 extra={"budget spent": rel.trace.level_epsilons}),
        "signed_grid": lambda v: v.signed_grid(nu, k),
        "grid_measures": lambda v: v.grid_measures({"true (owner view)": hist.ravel(), "noisy (DP)": nu,
                                                    "projected (DP)": tau}, k),
        "haar_basis": lambda v: v.haar_basis(haar.haar_matrix(5)),
        "partial_sum_paths": lambda v: v.partial_sum_paths(sr, iid, envelope=env),
        "grid_path": lambda v: v.grid_path(order, 32),
        "line_cdfs": lambda v: v.line_cdfs(np.arange(k * k) / (k * k), cdfs, reference="true CDF (owner view)"),
        "certificate_bar": lambda v: v.certificate_bar({"discretisation": 0.02, "privatisation": 0.05,
                                                        "projection": 0.01}, loss=0.04),
        "loss_vs_certificate": lambda v: v.loss_vs_certificate(cert, color="epsilon"),
        "pe_iteration": lambda v: v.pe_iteration(Xr, pe_synth[-1], variations, lower=LO, upper=HI),
        "series_plot": lambda v: v.series_plot(list(range(20)), {"W1 (owner view)": np.geomspace(0.3, 0.05, 20)},
                                               xtitle="iteration", ytitle="W1", log_y=True),
        "pca_3d": lambda v: v.pca_3d(X3, centre_true=X3.mean(0), basis_true=B, centre_priv=X3.mean(0) + 0.01,
                                     basis_priv=B, synthetic=S3),
        "spectrum": lambda v: v.spectrum(np.geomspace(3, 0.01, 64), np.geomspace(3, 0.01, 64) * 1.1, chosen=4),
        "angles_plot": lambda v: v.angles_plot(angles),
        "digit_images": lambda v: v.digit_images(imgs, ilabels),
        "rates_loglog": lambda v: v.rates_loglog(rates, bounds=bounds, fits=fits, fit_bands=fit_bands),
        "compare_bars": lambda v: v.compare_bars(cmp),
        "audit_band": lambda v: v.audit_band(pD, pD2, edges, pD / np.e, np.minimum(pD * np.e, 1), epsilon=1.0),
        "pe_animation": lambda v: v.pe_animation(Xr, pe_synth, lower=LO, upper=HI,
                                                 w1=list(np.geomspace(0.3, 0.05, 11))),
        "category_counts": lambda v: v.category_counts(real_t, synth_t, cats),
        "numeric_by_category": lambda v: v.numeric_by_category(real_t, synth_t, "systolic_bp", "region",
                                                               cats["region"], lower=60, upper=250),
        "one_way_bars": lambda v: v.one_way_bars({"true (owner view)": ow.true, "noisy (private)": ow.noisy,
                                                  "synthetic rows (private)": ow.synthetic}, ow.labels, column=ow.column),
        "pair_tables": lambda v: v.pair_tables({"true (owner view)": tw.true, "noisy (private)": tw.noisy,
                                                "fitted joint (private)": tw.fitted, "synthetic rows (private)": tw.synthetic},
                                               tw.row_labels, tw.col_labels, tw.columns),
        "keep_lose_bars": lambda v: v.keep_lose_bars(kept),  # NaN errors (no triple) are left out, never drawn
        "membership_answers": lambda v: v.membership_answers((1, 0, 3, 1, 2, 0, 1, 4), (0, 0, 2, 1, 0, 1, 0, 5), 1, 0,
                                                             who="the patient"),
    }


# ---------------------------------------------------------------------------------------- helpers
def strict_json(fig: go.Figure) -> dict:
    """The figure's JSON, parsed strictly: NaN or Infinity literals are an error."""
    def bad(token):
        raise ValueError(f"non-finite literal {token} in figure JSON")
    return json.loads(fig.to_json(), parse_constant=bad)


def default_texts(fig: go.Figure) -> list[str]:
    """Every text a figure shows: title, note, annotations, axis titles, trace names, hover templates."""
    out = [fig.layout.title.text or "", getattr(fig.layout.title.subtitle, "text", None) or ""]
    out += [a.text or "" for a in fig.layout.annotations or ()]
    lay = fig.layout.to_plotly_json()
    out += [str((v or {}).get("title", {}).get("text") or "") for k, v in lay.items()
            if re.fullmatch(r"[xy]axis\d*", k)]
    for t in fig.data:
        out += [str(getattr(t, "name", "") or ""), str(getattr(t, "hovertemplate", "") or "")]
    return out


def axes(fig: go.Figure, kind: str) -> dict:
    lay = fig.layout.to_plotly_json()
    return {k: v for k, v in lay.items() if re.fullmatch(kind + r"axis\d*", k)}


def log_axes(fig: go.Figure) -> list[dict]:
    return [v for k in ("x", "y") for v in axes(fig, k).values() if v.get("type") == "log"]


def assert_log_ticks(ax: dict) -> None:
    """At least three labelled ticks, all inside the axis range."""
    ticks = ax.get("tickvals")
    assert ticks is not None and len(ticks) >= 3, ax
    lo, hi = ax["range"]
    inside = [t for t in ticks if lo <= math.log10(t) <= hi]
    assert len(inside) >= 3 and len(ax["ticktext"]) == len(ticks)


def assert_legend_below(fig: go.Figure) -> None:
    leg = fig.layout.legend
    assert leg.orientation == "h" and leg.yref == "container" and leg.y == 0 and leg.yanchor == "bottom"


def marker_counts(fig: go.Figure) -> list[int]:
    out = []
    for t in fig.data:
        mode = getattr(t, "mode", None) or ""
        if t.type in ("scatter", "scattergl", "scatter3d") and "markers" in mode and t.x is not None:
            out.append(len(t.x))
    return out


# ------------------------------------------------------------------------------------------- tests
def test_thin_is_deterministic_and_bounded():
    big = RNG.random((10_000, 2))
    a, b = viz.thin(big, 500), viz.thin(big, 500)
    assert a.shape == (500, 2) and np.array_equal(a, b)
    assert viz.thin(X, 500) is X or np.array_equal(viz.thin(X, 500), X)


@pytest.fixture(scope="module")
def realistic():
    return {name: build(viz) for name, build in realistic_cases().items()}


def test_every_builder_is_covered_by_the_realistic_cases():
    builders = {n for n in viz.__all__ if callable(getattr(viz, n)) and n[0].islower()}
    assert builders - {"thin", "empty_figure", "is_owner"} <= set(realistic_cases())


def test_realistic_figures_are_light_and_finite(realistic):
    """At the dashboard's sizes: at most viz.MAX_POINTS points per panel and viz.FIGURE_POINTS per figure, strict JSON, no internal labels,
    legends below the plot, hover text on every point layer, ≥ 3 ticks on every log axis."""
    for name, fig in realistic.items():
        if name in VEGA_LITE:  # tests/app/test_viz_vega.py
            assert isinstance(fig, dict) and fig["$schema"].endswith("vega-lite/v5.json"), name
            continue
        assert isinstance(fig, go.Figure), name
        strict_json(fig)
        assert all(c <= viz.MAX_POINTS for c in marker_counts(fig)), (name, marker_counts(fig))
        flat = [len(t.x) for t in fig.data if t.type == "scatter" and "markers" in (t.mode or "")]
        assert sum(flat) <= viz.FIGURE_POINTS, (name, flat)  # SVG stays cheaper than WebGL below this
        texts = " ".join(default_texts(fig))
        assert not INTERNAL.search(texts), (name, INTERNAL.search(texts).group(0))
        if fig.layout.showlegend is not False:
            assert_legend_below(fig)
        for t in fig.data:
            if t.type in ("scatter", "scatter3d") and "markers" in (t.mode or ""):
                assert t.hovertemplate or t.hoverinfo == "skip", (name, t.name)
        for ax in log_axes(fig):
            assert_log_ticks(ax)


def test_realistic_partial_sums_and_cdfs_are_decimated(realistic):
    fig = realistic["partial_sum_paths"]
    assert len(fig.data) == 4  # one trace per noise (all draws, NaN-separated) + one per reference
    assert all(len(t.x) <= 20 * 801 for t in fig.data)
    assert all(len(t.x) <= 1500 for t in realistic["line_cdfs"].data)
    assert np.asarray(realistic["cell_map"].data[0].z).shape == (128, 128)  # 256² cells merged 2×2


@pytest.mark.parametrize("d", [1, 2, 5])
def test_scatter_builders(d):
    names = [f"c{i}" for i in range(d)]
    fig = viz.scatter_data(RNG.random((300, d)), names, labels=(RNG.random(300) > 0.5).astype(int),
                           lower=[0] * d, upper=[1] * d)
    assert len(fig.data) >= 1
    strict_json(fig)
    fig = viz.draws_grid(RNG.random((50, d)), [RNG.random((40, d))] * 3, [0.1, float("nan"), 0.2], names,
                         lower=[0] * d, upper=[1] * d)
    assert len(fig.data) == 3
    strict_json(fig)
    fig = viz.pe_iteration(RNG.random((50, d)), RNG.random((30, d)), RNG.random((60, d)), lower=[0] * d,
                           upper=[1] * d)
    assert len(fig.data) == 3
    fig = viz.pe_animation(RNG.random((50, d)), [RNG.random((30, d)), None, RNG.random((30, d))], lower=[0] * d,
                           upper=[1] * d)
    assert len(fig.frames) == 2


@pytest.mark.parametrize("Y", [np.empty((0, 2)), np.array([[0.5, 0.5]])], ids=["empty", "one point"])
def test_scatters_with_an_empty_or_single_point_synthetic_set(Y):
    for fig in (viz.draws_grid(X, [Y, X], [float("nan"), 0.1], ["a", "b"], lower=[0, 0], upper=[1, 1]),
                viz.pe_iteration(X, Y, None, lower=[0, 0], upper=[1, 1]),
                viz.scatter_data(Y, ["a", "b"], lower=[0, 0], upper=[1, 1])):
        assert isinstance(fig, go.Figure)
        strict_json(fig)


def test_scatter_axes_span_their_own_bounds_when_units_differ():
    Z = people(500)
    for fig in (viz.scatter_data(Z, NAMES, lower=LO, upper=HI),
                viz.draws_grid(Z, [Z] * 4, [0.1] * 4, NAMES, lower=LO, upper=HI),
                viz.pe_iteration(Z, Z, Z, lower=LO, upper=HI), viz.pe_animation(Z, [Z, Z], lower=LO, upper=HI)):
        for ax_name, ax in {**axes(fig, "x"), **axes(fig, "y")}.items():
            i = 0 if ax_name.startswith("x") else 1
            lo, hi = ax["range"]
            span = HI[i] - LO[i]
            assert lo <= LO[i] and hi >= HI[i] and (hi - lo) <= 1.1 * span, (ax_name, ax["range"])
            assert "scaleanchor" not in ax  # different units: no common scale
        assert "own scale" in fig.layout.xaxis.title.text


def test_scatter_without_bounds_claims_no_public_box():
    for fig in (viz.draws_grid(X, [Y, Y], [0.1, 0.2], ["a", "b"]), viz.scatter_data(X, ["a", "b"])):
        assert not fig.layout.shapes or all(s.line.dash == "dot" and s.xref.endswith("domain")
                                            for s in fig.layout.shapes)  # only owner frames, no bounds box
        assert "bounds" not in (fig.layout.xaxis.title.text or "") and fig.layout.yaxis.scaleanchor is None


def test_scatter_axes_share_one_scale_when_bounds_are_equal():
    U = RNG.random((200, 2))
    fig = viz.scatter_data(U, ["u0", "u1"], lower=[0, 0], upper=[1, 1])
    assert fig.layout.yaxis.scaleanchor == "x" and fig.layout.yaxis.scaleratio == 1
    assert "same scale" in fig.layout.xaxis.title.text


def test_draws_grid_panels_are_aligned():
    """Equal panel sizes, one row shares its vertical domain, all panels share the axes ranges."""
    for k in (4, 7):
        draws = [RNG.random((100, 2)) * [1, 0.5 + i / 4] for i in range(k)]  # different extents per draw
        fig = viz.draws_grid(X, draws, [0.1] * k, ["a", "b"], lower=[0, 0], upper=[1, 2])
        xs, ys = axes(fig, "x"), axes(fig, "y")
        widths = {round(v["domain"][1] - v["domain"][0], 6) for v in xs.values()}
        heights = {round(v["domain"][1] - v["domain"][0], 6) for v in ys.values()}
        assert len(xs) == k and len(widths) == 1 and len(heights) == 1
        cols = 4
        first_row = [ys["yaxis" if i == 0 else f"yaxis{i + 1}"]["domain"] for i in range(min(k, cols))]
        assert all(d == first_row[0] for d in first_row)
        assert len({tuple(v["range"]) for v in xs.values()}) == 1 and len({tuple(v["range"]) for v in ys.values()}) == 1
        heads = [a.text for a in fig.layout.annotations]
        assert heads[3].startswith("release 4") and all(a.yanchor == "bottom" for a in fig.layout.annotations)


def test_icicle_has_every_node_with_labels():
    levels = [np.array([10]), np.array([6, 4]), np.array([3, 3, -1, 5])]
    fig = viz.icicle_tree(levels, max_level=2)
    tr = fig.data[0]
    assert len(tr.ids) == 7 and list(tr.labels[:3]) == ["10", "6", "4"]
    assert tr.labels is not None  # plotly draws nothing without labels
    assert tr.marker.colors[5] < 0  # the negative count is coloured on the negative side
    deep = [np.zeros(2**j) for j in range(14)]
    assert len(viz.icicle_tree(deep, max_level=13).data[0].ids) == 2 ** (viz.MAX_TREE_LEVEL + 1) - 1
    assert isinstance(viz.icicle_tree(levels, max_level=2, kind="sunburst").data[0], go.Sunburst)


def test_cell_map_sums_cells_into_the_square():
    lo, hi = cell_bounds(3, 3)  # 8 cells in 3-D: the map shows the (x0, x1) projection
    counts = np.arange(8, dtype=float)
    fig = viz.cell_map(counts, lo, hi)
    assert np.asarray(fig.data[0].z).sum() == counts.sum()
    lo, hi = cell_bounds(16, 2)  # 256 × 256 cells: merged for drawing, same total
    counts = RNG.integers(-3, 5, 2**16).astype(float)
    fig = viz.cell_map(counts, lo, hi, zmax=10.0)
    z = np.asarray(fig.data[0].z)
    assert z.shape == (128, 128) and z.sum() == counts.sum() and fig.data[0].zmax == 10.0
    assert "merged" in fig.layout.title.subtitle.text
    lo, hi = cell_bounds(3, 1)
    assert isinstance(viz.cell_map(np.arange(8.0) - 3, lo, hi, names=("u0",)).data[0], go.Bar)


def test_level_counts_shows_the_true_counts_on_every_stage():
    true = np.array([5, 0, 3, 2, 0, 7, 1, 2], dtype=float)
    series = {"true (owner view)": true, "noisy": true + [2, -3, 1, 0, -1, 2, 3, -2],
              "clipped": np.maximum(true + [2, -3, 1, 0, -1, 2, 3, -2], 0), "consistent": true + 0.5}
    fig = viz.level_counts(series)
    stages = [t for t in fig.data if t.name != "true (owner view)"]
    refs = [t for t in fig.data if t.name == "true (owner view)"]
    assert [t.name for t in stages] == ["noisy", "clipped", "consistent"]
    # one panel per stage, the true counts drawn in each, after (on top of) the stage
    assert len(refs) == 3 and {(t.xaxis, t.yaxis) for t in refs} == {(t.xaxis, t.yaxis) for t in stages}
    for s in stages:
        later = [i for i, t in enumerate(fig.data) if t.name == "true (owner view)" and t.yaxis == s.yaxis]
        assert later[0] > list(fig.data).index(s)
    # distinct: dotted dark line with markers, every stage solid in its own colour
    styles = {(t.line.color, t.line.dash) for t in stages}
    assert len(styles) == 3 and all(d == "solid" for _, d in styles)
    assert refs[0].line.dash == "dot" and refs[0].line.color not in {c for c, _ in styles}
    assert [t.showlegend for t in refs].count(True) == 1
    # the panel headings give each stage's total error against the truth
    heads = [a.text for a in fig.layout.annotations]
    assert "= 14" in heads[0] and "= 4" in heads[2]
    # panels share one explicit y range (comparable) and have equal heights
    ys = axes(fig, "y")
    assert len({tuple(v["range"]) for v in ys.values()}) == 1
    assert len({round(v["domain"][1] - v["domain"][0], 6) for v in ys.values()}) == 1
    big = viz.level_counts({"true": np.ones(4096), "noisy": np.ones(4096)}, max_cells=512)
    assert len(big.data[0].x) == 513 and "groups of 8" in big.layout.xaxis.title.text
    assert len(viz.level_counts({"noisy": true}).data) == 1  # no reference: one panel
    assert isinstance(viz.level_counts({}), go.Figure)


def test_references_are_distinct_and_named_by_the_caller():
    P = np.cumsum(RNG.normal(size=(3, 5000)), axis=1)
    fig = viz.partial_sum_paths(P, P, envelope={"e1": np.ones(5000), "e2": np.sqrt(np.arange(1, 5001))},
                                max_steps=100)
    refs = [t for t in fig.data if t.name.startswith("±")]
    assert [t.name for t in refs] == ["± e1", "± e2"]
    assert len({(t.line.color, t.line.dash) for t in refs}) == 2
    data_colors = {t.line.color for t in fig.data if t not in refs}
    assert not data_colors & {t.line.color for t in refs}
    assert all(len(t.x) <= 3 * 101 + 2 for t in fig.data)
    df = pd.DataFrame({"mechanism": ["m"] * 6 + ["q"] * 6, "eps_n": [10, 10, 100, 100, 1000, 1000] * 2,
                       "w1": [0.3, 0.32, 0.1, 0.11, 0.03, 0.031] * 2})
    fig = viz.rates_loglog(df, bounds={"m": ([10, 100, 1000], [1, 0.3, 0.1]),
                                       "q": ([10, 1000], [2, 0.2], "q: my curve")},
                           fits={"m": (-0.5, 0.0), "q": (-0.5, 0.1)})
    refs = [t for t in fig.data if t.line is not None and t.line.dash in ("dash", "dot")]
    assert len(refs) == 4 and len({(t.line.color, t.line.dash) for t in refs}) == 4
    names = [t.name for t in fig.data if t.name]
    assert "m: bound" in names and "q: my curve" in names and not any("paper" in n for n in names)
    fig = viz.rates_loglog(df, bounds={"M: a proven bound": ([10, 1000], [1, 0.1]),
                                       "another curve": ([10, 1000], [2, 0.2]), "third": ([10, 100], [3, 1])})
    named = {t.name: t for t in fig.data if t.name in ("M: a proven bound", "another curve", "third")}
    assert len(named) == 3 and len({(t.line.color, t.line.dash) for t in named.values()}) == 3
    means = {t.name: t.line.color for t in fig.data if t.name and "mean" in t.name}
    # keyed by its label: drawn in the colour of the group the label names ("M: ..." → m), else a reference style
    assert named["M: a proven bound"].line.color == means["m: W1 (mean; band = min to max)"]
    assert (named["another curve"].line.color, named["another curve"].line.dash) == viz.REFERENCE_STYLES[0]
    xs = np.array([10.0, 100.0, 1000.0])
    fig = viz.rates_loglog(df, fits={"m": (-0.5, 0.0)}, fit_bands={"m": (xs, 0.5 * xs**-0.5, 2 * xs**-0.5, "95% band")})
    band = next(t for t in fig.data if t.name == "m: 95% band")
    assert list(band.x) == [10, 100, 1000, 1000, 100, 10]
    assert np.allclose(band.y, np.r_[2 * xs**-0.5, (0.5 * xs**-0.5)[::-1]])
    for fig in (viz.rates_loglog(df), viz.rates_loglog(df, bound_label="my bound")):  # no bounds given: none drawn
        assert not any("bound" in (t.name or "") for t in fig.data)
    series = {"signed (noisy) CDF": np.linspace(0, 1, 5), "projected CDF (DP)": np.linspace(0, 1, 5) ** 2,
              "true CDF (owner view)": np.linspace(0, 1, 5) ** 3}
    fig = viz.line_cdfs(np.arange(5), series, reference="true CDF (owner view)")
    assert len(fig.data) == 5
    top = [t for t in fig.data if t.yaxis in (None, "y")]
    assert len({(t.line.color, t.line.dash) for t in top}) == 3
    assert [t.line.dash for t in top if "owner" in t.name] == ["dot"]


def test_legends_sit_below_and_headings_have_room():
    """Legends are horizontal at the bottom of the figure (they never cover a title or a panel
    heading); the top margin holds the title, the note and one or two lines of panel headings."""
    figs = [viz.draws_grid(X, [Y] * 4, [0.1] * 4, ["a", "b"], title="t"),
            viz.grid_measures({"true (owner view)": np.ones(16), "noisy": -np.ones(16)}, 4, title="t"),
            viz.line_cdfs(np.arange(5), {"a": np.ones(5), "b": np.ones(5)}, reference="a", title="t"),
            viz.compare_bars(pd.DataFrame({"mechanism": ["a", "b"], "status": ["ok", "ok"], "w1": [0.1, 0.2],
                                           "bound": [0.3, None], "seconds": [0.1, 1.0]}), title="t"),
            viz.level_counts({"true": np.ones(8), "noisy": np.ones(8)}, title="t")]
    for fig in figs:
        assert_legend_below(fig)
        assert fig.layout.title.yref == "container" and fig.layout.title.yanchor == "top"
        heads = [a for a in fig.layout.annotations if a.yanchor == "bottom" and a.yshift == 3]
        assert heads, fig.layout.title.text
        lines = max(1 + (a.text or "").count("<br>") for a in heads)
        need = 14 + 26 + (20 if fig.layout.title.subtitle.text else 0) + 18 * lines
        assert fig.layout.margin.t >= need


def test_log_axes_carry_three_ticks():
    short = pd.DataFrame({"mechanism": ["m"] * 2, "eps_n": [100, 120], "w1": [0.1, 0.09]})
    figs = [viz.rates_loglog(short),
            viz.sigma_levels(np.array([np.nan, 5.0, 4.0, 3.5]), extra={"budget": [0.1, 0.11, 0.12, 0.13]}),
            viz.angles_plot(pd.DataFrame({"epsilon": [1.0, 1.0, 2.0], "angle": [3.0, 4.0, 2.0]})),
            viz.series_plot([1, 2], {"a": [0.5, 0.6]}, xtitle="x", ytitle="y", log_x=True, log_y=True),
            viz.compare_bars(pd.DataFrame({"mechanism": ["a", "b"], "status": ["ok", "ok"], "w1": [0.1, 0.11],
                                           "bound": [None, None], "seconds": [1.0, 1.2]}))]
    for fig in figs:
        axs = log_axes(fig)
        assert axs
        for ax in axs:
            assert_log_ticks(ax)
    assert len(log_axes(figs[1])) == 2  # σ and the extra series on their own axes


def test_owner_layers_are_marked():
    assert viz.is_owner("true (owner view)") and viz.is_owner("private data (owner view)")
    assert not viz.is_owner("noisy ν (DP)") and not viz.is_owner("synthetic (DP)")
    fig = viz.grid_measures({"true (owner view)": np.ones(16), "noisy ν (DP)": -np.ones(16),
                             "projected τ (DP)": np.ones(16)}, 4)
    frames = [s for s in fig.layout.shapes if s.line.dash == "dot"]
    assert len(frames) == 1 and frames[0].xref == "x domain"  # the dotted frame is on the true panel
    fig = viz.spectrum(np.array([3.0, 1.0, 0.1]), np.array([2.9, 1.1, 0.0]), chosen=2)
    assert fig.data[1].line.dash == "dot" and fig.data[1].line.color == viz.COLORS["true"]
    fig = viz.certificate_bar({"a": 0.1, "b": 0.2}, loss=0.15)
    assert fig.data[-1].marker.pattern.shape == "/"
    fig = viz.scatter_data(X, ["a", "b"], note="grey: owner view")
    assert fig.layout.title.subtitle.text == "grey: owner view"


def test_one_palette_for_one_meaning():
    """The same meaning has the same colour in every figure."""
    true = np.ones(8)
    lc = {t.name: t.line.color for t in viz.level_counts({"true (owner view)": true, "noisy": true,
                                                           "consistent": true}).data}
    lcdf = {t.name: t.line.color for t in viz.line_cdfs(np.arange(8), {"noisy CDF": true, "projected CDF": true})
            .data}
    assert lc["noisy"] == lcdf["noisy CDF"] == viz.COLORS["noisy"]
    assert lc["consistent"] == lcdf["projected CDF"] == viz.COLORS["consistent"]
    paths = viz.partial_sum_paths(np.ones((2, 10)), np.ones((2, 10)))
    assert [t.line.color for t in paths.data] == [viz.COLORS["superregular"], viz.COLORS["iid"]]
    assert viz.COLORS["iid"] != viz.COLORS["noisy"]  # an i.i.d. CDF and a noisy CDF can share a figure
    assert viz.pe_iteration(X, Y).data[-1].marker.color == viz.COLORS["synthetic"]


def test_grid_and_path_builders():
    k = 4
    v = RNG.normal(size=k * k)
    assert len(viz.signed_grid(v, k).data) == 2  # heatmap + negative markers
    big = RNG.normal(size=64 * 64)
    assert len(viz.signed_grid(big, 64).data) == 1 and len(viz.signed_grid(big, 64, mark_negative=True).data) == 2
    assert f"{int((big < 0).sum()):,} negative" in viz.signed_grid(big, 64).data[0].colorbar.title.text
    assert isinstance(viz.signed_grid(np.abs(v[:k]), k).data[0], go.Bar)  # d = 1
    assert len(viz.grid_measures({"a": v, "b": np.abs(v)}, k).data) == 2
    assert len(viz.grid_measures({"a": v[:k], "b": np.abs(v[:k])}, k).data) == 2  # d = 1: lines
    assert len(viz.grid_measures({"a": RNG.normal(size=k**5)}, k).data) == 1  # d = 5: first two axes
    order = np.arange(k * k)
    assert len(viz.grid_path(order, k).data) == 3  # path, start, end
    P = np.cumsum(RNG.normal(size=(3, 5000)), axis=1)
    fig = viz.partial_sum_paths(P, P, envelope={"e": np.ones(5000)}, max_steps=100)
    assert all(len(t.x) <= 3 * 101 + 2 for t in fig.data)
    fig = viz.line_cdfs(np.arange(5), {"a": np.linspace(0, 1, 5), "b": np.linspace(0, 1, 5) ** 2}, reference="a")
    assert len(fig.data) == 3
    fig = viz.haar_basis(np.eye(8))
    assert len(fig.data) == 2 and len(fig.layout.yaxis.tickvals) == 8  # one trace for all rows


def test_audit_band_and_rates():
    edges = np.arange(6) - 0.5
    h = np.array([0.1, 0.2, 0.4, 0.2, 0.1])
    fig = viz.audit_band(h, h[::-1], edges, h / np.e, np.minimum(h * np.e, 1), epsilon=1.0)
    assert len(fig.data) == 4
    assert np.isnan(np.asarray(fig.data[2].x, dtype=float)[2::3]).all()  # one segment per bin, NaN-separated
    strict_json(fig)
    df = pd.DataFrame({"mechanism": ["m"] * 6, "eps_n": [10, 10, 100, 100, 1000, 1000],
                       "w1": [0.3, 0.32, 0.1, 0.11, 0.03, 0.031]})
    fig = viz.rates_loglog(df, bounds={"m": ([10, 100, 1000], [1, 0.3, 0.1])}, fits={"m": (-0.5, 0.0)})
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.type == "log"


def test_other_builders_smoke():
    assert len(viz.certificate_bar({"a": 0.1, "b": 0.2}, loss=0.15).data) == 3
    df = pd.DataFrame({"certificate": [0.1, 0.2], "loss": [0.05, 0.1], "epsilon": ["1", "2"]})
    fig = viz.loss_vs_certificate(df, color="epsilon")
    assert len([t for t in fig.data if t.mode == "markers"]) == 2
    assert fig.layout.yaxis.scaleanchor == "x"  # same units: one scale
    assert isinstance(viz.loss_vs_certificate(df.iloc[:0]), go.Figure)
    assert len(viz.pe_animation(X, [Y, Y * 0.9, None, Y * 0.8], lower=[0, 0], upper=[1, 1]).frames) == 3
    assert len(viz.pe_iteration(X, Y, X, lower=[0, 0], upper=[1, 1]).data) == 3
    assert len(viz.spectrum(np.array([3.0, 1.0, 0.1]), np.array([2.9, 1.1, 0.0]), chosen=2).data) == 2
    imgs = RNG.random((20, 64))
    assert isinstance(viz.digit_images(imgs, np.repeat(np.arange(4), 5)), go.Figure)
    cmp = pd.DataFrame({"mechanism": ["a", "b"], "status": ["ok", "ok"], "w1": [0.1, 0.2], "bound": [0.3, None],
                        "seconds": [0.1, 1.0]})
    fig = viz.compare_bars(cmp, bound_label="bound on E W1")
    assert len(fig.data) == 3 and fig.data[1].name == "bound on E W1"
    assert isinstance(viz.compare_bars(cmp.assign(status="error")), go.Figure)
    fig = viz.pca_3d(RNG.random((50, 3)), centre_true=np.zeros(3), basis_true=np.eye(3)[:, :2],
                     centre_priv=np.zeros(3), basis_priv=np.eye(3)[:, :1], synthetic=RNG.random((0, 3)))
    assert len(fig.data) == 2  # points + the true plane (a 1-D private basis has no plane)
    fig = viz.series_plot([0, 1], {"W1 (owner view)": [0.2, 0.1]}, xtitle="t", ytitle="W1", marker_x=1,
                          marker_label="chosen")
    assert fig.data[0].line.dash == "dot" and fig.layout.annotations[0].text == "chosen"
    fig = viz.series_plot([1, 10, 100], {"a": [1, 2, 3]}, xtitle="t", ytitle="y", log_x=True, marker_x=10)
    assert fig.layout.shapes[0].x0 == 1.0  # shapes on a log axis are placed at log10(x)
    fig = viz.empty_figure("nothing")
    assert fig.layout.annotations[0].text == "nothing"


def test_category_counts_shows_every_declared_category_and_the_largest_gap():
    import pandas as pd

    cats = {"sex": ["F", "M"], "region": ["north", "east", "south", "west"]}
    real = pd.DataFrame({"sex": ["F", "F", "M", "F"], "region": ["north", "north", "south", "south"]})
    synth = pd.DataFrame({"sex": pd.Categorical(["M", "M"], categories=["F", "M"]), "region": ["east", "south"]})
    fig = viz.category_counts(real, synth, cats)
    strict_json(fig)
    bars = {(t.name, t.xaxis): t for t in fig.data}
    assert len(fig.data) == 4  # real and synthetic per column
    real_region = bars[("real data (owner view)", "x2")]
    assert list(real_region.x) == cats["region"]  # every declared category, in the declared order ...
    np.testing.assert_allclose(real_region.y, [0.5, 0, 0.5, 0])  # ... also those nobody is in (shares)
    np.testing.assert_allclose(bars[("synthetic data (DP)", "x")].y, [0, 1])
    heads = [a.text for a in fig.layout.annotations]
    assert "largest gap 0.750" in heads[0] and "largest gap 0.500" in heads[1]  # |0.75 - 0| ; |0.5 - 0|
    assert real_region.marker.color == viz.COLORS["real"] and real_region.marker.pattern.shape == "/"
    assert bars[("synthetic data (DP)", "x")].marker.color == viz.COLORS["synthetic"]
    assert_legend_below(fig)
    # the real data alone: counts, no legend; one column; many categories are capped and said so
    fig = viz.category_counts(real, None, cats, columns=["region"])
    assert len(fig.data) == 1 and list(fig.data[0].y) == [2, 0, 2, 0] and fig.layout.showlegend is False
    many = {"code": [f"c{i}" for i in range(100)]}
    fig = viz.category_counts(pd.DataFrame({"code": ["c1", "c99"]}), None, many)
    assert len(fig.data[0].x) == viz.MAX_CATEGORY_BARS and "first 40 of 100" in fig.layout.annotations[0].text
    assert "no categorical column" in viz.category_counts(real, None, {}).layout.annotations[0].text
    with pytest.raises(TypeError, match="DataFrame"):
        viz.category_counts(np.zeros((2, 2)), None, cats)


def test_numeric_by_category_panels_per_category_on_shared_bounds():
    import pandas as pd

    rng = np.random.default_rng(3)
    real = pd.DataFrame({"bp": rng.uniform(90, 150, 300), "region": rng.choice(["north", "south"], 300)})
    synth = pd.DataFrame({"bp": rng.uniform(90, 150, 200), "region": ["north"] * 200})
    fig = viz.numeric_by_category(real, synth, "bp", "region", ["north", "south", "east"], lower=60, upper=250)
    strict_json(fig)
    xs = axes(fig, "x")
    assert len(xs) == 3 and all(v["range"] == [60.0, 250.0] for v in xs.values())
    heads = [a.text for a in fig.layout.annotations if a.yanchor == "bottom"]
    n_south = int((real["region"] == "south").sum())
    assert f"{n_south:,} real, 0 synthetic" in heads[1]  # a category the synthetic data left empty shows
    assert any(a.text == "no rows" for a in fig.layout.annotations)  # "east": nobody, in either table
    outline = [t for t in fig.data if t.name == "real data (owner view)"]
    assert len(outline) == 3 and all(t.line.dash == "dot" for t in outline)
    # densities within the category: each real histogram integrates to 1 (over non-empty categories)
    width = 190 / 30
    for t in outline[:2]:
        assert abs(np.nansum(np.asarray(t.y, dtype=float)[1:-1]) * width - 1) < 1e-3
    assert len(viz.numeric_by_category(real, None, "bp", "region", ["north"]).data) == 1
    with pytest.raises(ValueError, match="columns 'bp' and 'sex'"):
        viz.numeric_by_category(real, None, "bp", "sex", ["F"])


# ------------------------------------------------------------------------------------ measurement
def _bench(argv: list[str] | None = None) -> None:
    """Build time (call + to_json, median of 5) and JSON size per figure; optionally against another
    viz (a viz.py file or a viz/ package folder; old keywords only)."""
    import argparse
    import importlib.util
    import statistics
    import sys
    import time
    from pathlib import Path

    ap = argparse.ArgumentParser(description=_bench.__doc__)
    ap.add_argument("--before", help="path of another viz.py, or viz/ folder, to measure in the same run")
    ap.add_argument("--repeats", type=int, default=5)
    a = ap.parse_args(argv)
    mods = {}
    if a.before:
        before = Path(a.before)
        if before.is_dir():  # a package: its relative imports need it in sys.modules under its own name
            spec = importlib.util.spec_from_file_location("viz_before", before / "__init__.py",
                                                          submodule_search_locations=[str(before)])
        else:
            spec = importlib.util.spec_from_file_location("viz_before", before)
        mods["before"] = importlib.util.module_from_spec(spec)
        sys.modules["viz_before"] = mods["before"]
        spec.loader.exec_module(mods["before"])
    mods["after"] = viz
    cases = realistic_cases()
    res: dict = {}
    for name, build in cases.items():
        for label, mod in mods.items():
            times = []
            for _ in range(a.repeats):
                t0 = time.perf_counter()
                fig = build(mod)
                size = len(json.dumps(fig) if isinstance(fig, dict) else fig.to_json())
                times.append(time.perf_counter() - t0)
            res.setdefault(name, {})[label] = (1000 * statistics.median(times), size / 1024)
    head = "| function | " + " | ".join(f"{m} ms | {m} KiB" for m in mods) + " |"
    print(head)
    print("|" + "---|" * (1 + 2 * len(mods)))
    for name, row in res.items():
        print(f"| {name} | " + " | ".join(f"{row[m][0]:.0f} | {row[m][1]:.0f}" for m in mods) + " |")


if __name__ == "__main__":
    _bench()
