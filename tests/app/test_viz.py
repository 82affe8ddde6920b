"""The figure builders of dpsynth_core.viz: pure functions, data in, Figure out."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

from dpsynth_core import viz
from dpsynth_core.partition import cell_bounds

RNG = np.random.default_rng(0)
X = RNG.random((300, 2))
Y = RNG.random((250, 2))


def test_thin_is_deterministic_and_bounded():
    big = RNG.random((10_000, 2))
    a, b = viz.thin(big, 500), viz.thin(big, 500)
    assert a.shape == (500, 2) and np.array_equal(a, b)
    assert viz.thin(X, 500) is X or np.array_equal(viz.thin(X, 500), X)


@pytest.mark.parametrize("d", [1, 2])
def test_scatter_builders(d):
    fig = viz.scatter_compare(X[:, :d], Y[:, :d], ["a", "b"][:d], lower=[0] * d, upper=[1] * d)
    assert isinstance(fig, go.Figure) and len(fig.data) == 2
    fig = viz.scatter_data(X[:, :d], ["a", "b"][:d], labels=(X[:, 0] > 0.5).astype(int), lower=[0] * d,
                           upper=[1] * d)
    assert len(fig.data) >= 1


def test_kr_duality_numbers_agree():
    """The witness gain and the CDF area are the same number (up to the grid's discretisation)."""
    a = RNG.normal(0.3, 0.05, 2000)
    b = RNG.normal(0.5, 0.05, 2000)
    fig = viz.kr_duality(a, b)
    t1, t2 = fig.layout.annotations[0].text, fig.layout.annotations[1].text
    gain = float(t1.rsplit("=", 1)[1])
    area = float(t2.rsplit("=", 1)[1])
    # both ≈ the true W1 = 0.2 (a shift of 0.2); the grid step is 1/400, so agreement to 0.01 is loose
    assert abs(gain - area) < 0.01 and abs(area - 0.2) < 0.02


def test_icicle_has_every_node_with_labels():
    levels = [np.array([10]), np.array([6, 4]), np.array([3, 3, -1, 5])]
    fig = viz.icicle_tree(levels, max_level=2)
    tr = fig.data[0]
    assert len(tr.ids) == 7 and list(tr.labels[:3]) == ["10", "6", "4"]
    assert tr.labels is not None  # plotly draws nothing without labels
    assert tr.marker.colors[5] < 0  # the negative count is coloured on the negative side


def test_cell_map_sums_cells_into_the_square():
    lo, hi = cell_bounds(3, 3)  # 8 cells in 3-D: the map shows the (x0, x1) projection
    counts = np.arange(8, dtype=float)
    fig = viz.cell_map(counts, lo, hi)
    assert np.asarray(fig.data[0].z).sum() == counts.sum()


def test_grid_and_path_builders():
    k = 4
    v = RNG.normal(size=k * k)
    assert len(viz.signed_grid(v, k).data) == 2  # heatmap + negative markers
    assert len(viz.grid_measures({"a": v, "b": np.abs(v)}, k).data) == 2
    order = np.arange(k * k)
    assert len(viz.grid_path(order, k).data) == 2
    P = np.cumsum(RNG.normal(size=(3, 5000)), axis=1)
    fig = viz.partial_sum_paths(P, P, envelope={"e": np.ones(5000)}, max_steps=100)
    assert all(len(t.x) <= 100 for t in fig.data)
    fig = viz.line_cdfs(np.arange(5), {"a": np.linspace(0, 1, 5), "b": np.linspace(0, 1, 5) ** 2}, reference="a")
    assert len(fig.data) == 3


def test_audit_band_and_rates():
    edges = np.arange(6) - 0.5
    h = np.array([0.1, 0.2, 0.4, 0.2, 0.1])
    fig = viz.audit_band(h, h[::-1], edges, h / np.e, np.minimum(h * np.e, 1), epsilon=1.0)
    assert len(fig.data) == 4
    df = pd.DataFrame({"mechanism": ["m"] * 6, "eps_n": [10, 10, 100, 100, 1000, 1000],
                       "w1": [0.3, 0.32, 0.1, 0.11, 0.03, 0.031]})
    fig = viz.rates_loglog(df, bounds={"m": ([10, 100, 1000], [1, 0.3, 0.1])}, fits={"m": (-0.5, 0.0)})
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.type == "log"


def test_other_builders_smoke():
    assert len(viz.certificate_bar({"a": 0.1, "b": 0.2}, loss=0.15).data) == 3
    df = pd.DataFrame({"certificate": [0.1, 0.2], "loss": [0.05, 0.1], "epsilon": ["1", "2"]})
    assert len(viz.loss_vs_certificate(df, color="epsilon").data) == 3
    assert len(viz.pe_animation(X, [Y, Y * 0.9, None, Y * 0.8], lower=[0, 0], upper=[1, 1]).frames) == 3
    assert len(viz.pe_iteration(X, Y, X, lower=[0, 0], upper=[1, 1]).data) == 3
    assert len(viz.spectrum(np.array([3.0, 1.0, 0.1]), np.array([2.9, 1.1, 0.0]), chosen=2).data) == 2
    imgs = RNG.random((20, 64))
    assert isinstance(viz.digit_images(imgs, np.repeat(np.arange(4), 5)), go.Figure)
    assert len(viz.haar_basis(np.eye(8)).data) == 8
    cmp = pd.DataFrame({"mechanism": ["a", "b"], "status": ["ok", "ok"], "w1": [0.1, 0.2], "bound": [0.3, None],
                        "seconds": [0.1, 1.0]})
    assert len(viz.compare_bars(cmp).data) == 3
