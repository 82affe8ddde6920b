"""The low-dimensional mechanism: the principal plane in 3-D, the spectrum, principal angles over ε, and
synthetic digit images.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from ._common import (
    COLORS,
    MAX_POINTS,
    axis_spec,
    empty_figure,
    f32,
    figure_layout,
    log_axis,
    style_of,
    thin,
    top_margin,
)

__all__ = ["pca_3d", "spectrum", "angles_plot", "digit_images"]


def _plane_scale(color: str) -> list:
    return [[0, color], [1, color]]


def pca_3d(X: np.ndarray, *, basis_true: np.ndarray, centre_priv: np.ndarray, basis_priv: np.ndarray,
           centre_true: np.ndarray | None = None, synthetic: np.ndarray | None = None,
           names: Sequence[str] = ("x0", "x1", "x2"), title: str = "", note: str | None = None) -> go.Figure:
    """Data in 3-D with the true principal plane (owner view, grey) and the private one (DP,
    orange), each through its own centre (the true one: the mean of ``X`` unless given), and the synthetic
    points (vermillion); at most :data:`MAX_POINTS` of each set."""
    if centre_true is None:
        centre_true = np.asarray(X, dtype=float).mean(axis=0)
    P = thin(np.asarray(X, dtype=float), MAX_POINTS)
    hov = f"<b>%{{meta}}</b><br>{names[0]} %{{x:.3g}}<br>{names[1]} %{{y:.3g}}<br>{names[2]} %{{z:.3g}}<extra></extra>"
    traces = [go.Scatter3d(x=f32(P[:, 0]), y=f32(P[:, 1]), z=f32(P[:, 2]), mode="markers",
                           name="real data (owner view)", meta="real point (owner view)",
                           marker=dict(size=2, color=COLORS["real"], opacity=0.35), hovertemplate=hov)]
    if synthetic is not None and len(synthetic):
        S = thin(np.asarray(synthetic, dtype=float), MAX_POINTS, seed=3)
        traces.append(go.Scatter3d(x=f32(S[:, 0]), y=f32(S[:, 1]), z=f32(S[:, 2]), mode="markers",
                                   name="synthetic data (DP)", meta="synthetic point",
                                   marker=dict(size=2, color=COLORS["synthetic"], opacity=0.5), hovertemplate=hov))
    s = np.linspace(-0.6, 0.6, 8)
    A, B = np.meshgrid(s, s)
    for name, c, V, color in (("true plane (owner view)", centre_true, basis_true, "#7F7F7F"),
                              ("private plane (DP)", centre_priv, basis_priv, COLORS["noisy"])):
        V = np.asarray(V, dtype=float)
        c = np.asarray(c, dtype=float)
        if V.ndim < 2 or V.shape[1] < 2:
            continue
        pts = c[None, None, :3] + A[..., None] * V[None, None, :3, 0] + B[..., None] * V[None, None, :3, 1]
        traces.append(go.Surface(x=f32(pts[..., 0]), y=f32(pts[..., 1]), z=f32(pts[..., 2]), opacity=0.35,
                                 showscale=False, colorscale=_plane_scale(color), name=name, showlegend=True,
                                 hovertemplate=f"<b>{name}</b><extra></extra>"))
    lay = figure_layout(title=title, note=note, height=560, margin=dict(l=0, r=0, b=10))
    lay["scene"] = dict(xaxis_title=names[0], yaxis_title=names[1], zaxis_title=names[2], aspectmode="cube")
    return go.Figure(data=traces, layout=lay)


def spectrum(noisy: np.ndarray, true: np.ndarray | None = None, *, chosen: int | None = None,
             title: str = "", labels: tuple[str, str] = ("noisy covariance (DP)", "true covariance (owner view)"),
             note: str | None = None) -> go.Figure:
    """Eigenvalues of the noisy covariance (DP, orange bars) against the true ones (owner view,
    grey dotted); ``chosen``: how many directions are kept (a dotted line after them)."""
    noisy = np.asarray(noisy, dtype=float)
    x = np.arange(1, noisy.size + 1)
    traces = [go.Bar(x=x, y=f32(noisy), name=labels[0], marker=dict(color=COLORS["noisy"], opacity=0.85),
                     hovertemplate=f"<b>{labels[0]}</b><br>eigenvalue %{{x}}<br>%{{y:.4g}}<extra></extra>")]
    if true is not None:
        traces.append(go.Scatter(x=x, y=f32(np.asarray(true, dtype=float)), mode="lines+markers", name=labels[1],
                                 line=dict(color=COLORS["true"], dash="dot", width=2),
                                 marker=dict(size=6, color=COLORS["true"], symbol="circle-open"),
                                 hovertemplate=f"<b>{labels[1]}</b><br>eigenvalue %{{x}}<br>%{{y:.4g}}<extra></extra>"))
    lay = figure_layout(title=title, note=note, bargap=0.2)
    lay["xaxis"] = axis_spec(title="eigenvalue number (largest first)", dtick=1 if noisy.size <= 20 else None)
    lay["yaxis"] = axis_spec(title="eigenvalue (variance along the direction)")
    if chosen is not None:
        lay["shapes"] = [dict(type="line", x0=chosen + 0.5, x1=chosen + 0.5, y0=0, y1=1, xref="x", yref="y domain",
                              line=dict(color="#404040", dash="dot", width=1.5))]
        lay["annotations"] = [dict(text=f"kept: the first {chosen}", x=chosen + 0.5, y=1, xref="x", yref="y domain",
                                   xanchor="left", yanchor="top", xshift=4, showarrow=False,
                                   font=dict(size=12, color="#404040"))]
    return go.Figure(data=traces, layout=lay)


def angles_plot(df, *, title: str = "", name: str = "largest principal angle (owner view)",
                note: str | None = None) -> go.Figure:
    """Largest principal angle between the private and true subspaces against ε (mean ± sd over
    repeats). Owner view (it needs the true subspace): grey, dotted."""
    if len(df) == 0:
        return empty_figure("no runs to show")
    g = df.groupby("epsilon")["angle"]
    m, s = g.mean(), g.std().fillna(0.0)
    color, dash, _ = style_of(name, 0)
    traces = [go.Scatter(x=m.index.to_numpy(dtype=float), y=m.to_numpy(), mode="lines+markers", name=name,
                         error_y=dict(type="data", array=s.to_numpy(), color=color, thickness=1.5),
                         line=dict(color=color, dash=dash, width=2), marker=dict(size=7, color=color),
                         hovertemplate="<b>ε = %{x:g}</b><br>mean angle %{y:.3g}°<extra></extra>")]
    lay = figure_layout(title=title, note=note, legend=False)
    lay["xaxis"] = axis_spec(title="privacy budget ε (log scale)", **log_axis(m.index.to_numpy(dtype=float)))
    top = float(np.nanmax(m.to_numpy() + s.to_numpy())) if len(m) else 90.0
    lay["yaxis"] = axis_spec(title="largest angle (degrees)", range=[0, min(90.0, 1.1 * top) if top > 0 else 1])
    return go.Figure(data=traces, layout=lay)


def digit_images(images: np.ndarray, labels: Sequence, *, side: int = 8, per_class: int = 6,
                 title: str = "", note: str | None = None) -> go.Figure:
    """Synthetic digit images (rows = classes, columns = samples), grey scale."""
    images = np.asarray(images, dtype=float)
    labels = np.asarray(labels)
    classes = list(np.unique(labels))
    rows = max(1, len(classes))
    canvas = np.full((rows * (side + 1), per_class * (side + 1)), np.nan)
    for r, c in enumerate(classes):  # ≤ 10 classes × per_class images
        imgs = images[labels == c][:per_class]
        for j, im in enumerate(imgs):
            canvas[r * (side + 1):r * (side + 1) + side, j * (side + 1):j * (side + 1) + side] = im.reshape(side, side)
    lay = figure_layout(title=title, note=note, height=60 + top_margin(title, note) + 52 * rows, legend=False,
                        margin=dict(l=70, r=10, b=10))
    lay["yaxis"] = axis_spec(autorange="reversed", tickvals=[r * (side + 1) + side / 2 for r in range(rows)],
                             ticktext=[str(c) for c in classes], title="digit class", showgrid=False, ticks="")
    lay["xaxis"] = axis_spec(visible=False, scaleanchor="y", constrain="domain")
    return go.Figure(data=[go.Heatmap(z=f32(canvas), colorscale="gray_r", showscale=False, hoverinfo="skip")],
                     layout=lay)
