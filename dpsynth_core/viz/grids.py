"""Measures on the k^d grid (PSMM, the sparse-marginal tables): a signed measure, several measures side by side.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go

from ._common import (
    COLORS,
    SIGNED_SCALE,
    axis_keys,
    axis_spec,
    empty_figure,
    f32,
    figure_layout,
    owner_frame,
    panel_grid,
    panel_title,
    styles_of,
)

__all__ = ["signed_grid", "grid_measures"]


def _grid_matrix(v: np.ndarray, k: int) -> tuple[np.ndarray, int]:
    """A measure on the k^d grid (row-major, axis 0 = x) as a 2-D matrix (rows = axis 1), the other
    axes summed; d = 1 gives one row."""
    v = np.asarray(v, dtype=float).ravel()
    d = max(1, int(round(math.log(v.size, k)))) if k > 1 and v.size > 1 else 1
    if d == 1:
        return v.reshape(1, -1), 1
    Z = v.reshape((k,) * d)
    while Z.ndim > 2:
        Z = Z.sum(axis=-1)
    return Z.T, d


def signed_grid(values: np.ndarray, k: int, *, title: str = "", mark_negative: bool | None = None,
                names: Sequence[str] = ("first coordinate", "second coordinate"), note: str | None = None) -> go.Figure:
    """A signed measure on the k×k grid (unit square, row-major, axis 0 = x) as a heatmap (blue
    positive, red negative; d = 1: bars). ``mark_negative``: negative cells also get a black ×;
    by default only up to k = 32 (on finer grids the crosses would hide the colours); the colour
    bar's title counts the negative cells either way."""
    v = np.asarray(values, dtype=float).ravel()
    ticks = (np.arange(k) + 0.5) / k
    Z, d = _grid_matrix(v, k)
    if d == 1:
        lay = figure_layout(title=title, note=note, legend=False, bargap=0,
                            xaxis=axis_spec(title=f"{names[0]} (unit cube)", range=[0, 1]), yaxis=axis_spec(title="signed mass"))
        return go.Figure(data=[go.Bar(x=f32(ticks[:v.size]), y=f32(v), width=1 / k, name="signed mass",
                                      marker=dict(color=np.where(v < 0, COLORS["negative"], COLORS["positive"]),
                                                  line=dict(width=0)),
                                      hovertemplate="cell centre %{x:.3f}<br>mass %{y:.4g}<extra></extra>")],
                         layout=lay)
    cmax = max(float(np.max(np.abs(Z))), 1e-12)
    n_neg = int(np.count_nonzero(Z < 0))
    traces = [go.Heatmap(x=f32(ticks), y=f32(ticks), z=f32(Z), colorscale=SIGNED_SCALE, zmid=0, zmin=-cmax, zmax=cmax,
                         colorbar=dict(title=dict(text=f"signed mass<br><span style='font-size:11px'>{n_neg:,} "
                                                       "negative cells</span>"), thickness=12, len=0.85),
                         hovertemplate=f"{names[0]} = %{{x:.3f}}<br>{names[1]} = %{{y:.3f}}<br>mass %{{z:.3g}}"
                                       "<extra></extra>")]
    if mark_negative or (mark_negative is None and k <= 32):
        iy, ix = np.nonzero(Z < 0)
        if ix.size:
            traces.append(go.Scatter(x=f32(ticks[ix]), y=f32(ticks[iy]), mode="markers",
                                     name=f"negative cells ({ix.size:,})",
                                     marker=dict(symbol="x-thin-open", size=max(4, min(10, 300 // k)), color="black",
                                                 line=dict(width=1)), opacity=0.6, hoverinfo="skip"))
    lay = figure_layout(title=title, note=note, height=440, legend=len(traces) > 1)
    lay.update(xaxis=axis_spec(title=f"{names[0]} (unit cube)", range=[0, 1], constrain="domain", showgrid=False),
               yaxis=axis_spec(title=f"{names[1]} (unit cube)", range=[0, 1], scaleanchor="x", scaleratio=1,
                               constrain="domain", showgrid=False))
    return go.Figure(data=traces, layout=lay)


def grid_measures(panels: Mapping[str, np.ndarray], k: int, *, title: str = "",
                  names: Sequence[str] = ("first coordinate", "second coordinate"),
                  note: str | None = None) -> go.Figure:
    """Several measures on the same k^d grid side by side (first two axes, others summed), one
    red–blue colour scale centred at 0. Owner-view panels (by name) get a grey dotted frame and a
    grey title. For d = 1 the measures are drawn as step lines in one panel."""
    labels = list(panels)
    mats = [_grid_matrix(v, k) for v in panels.values()]
    if not labels:
        return empty_figure("no measures to show")
    if all(d == 1 for _, d in mats):
        traces = []
        for name, (Z, _), (color, dash, _owner) in zip(labels, mats, styles_of(labels), strict=True):
            z = Z.ravel()
            x = np.arange(z.size + 1) / max(z.size, 1)
            traces.append(go.Scatter(x=f32(x), y=f32(np.r_[z, z[-1:]]), mode="lines", name=name,
                                     line=dict(color=color, dash=dash, width=2, shape="hv"),
                                     hovertemplate=f"<b>{name}</b><br>cell from %{{x:.3f}}<br>mass %{{y:.4g}}"
                                                   "<extra></extra>"))
        lay = figure_layout(title=title, note=note, xaxis=axis_spec(title=f"{names[0]} (unit cube)", range=[0, 1]),
                            yaxis=axis_spec(title="mass per cell", zeroline=True, zerolinecolor="#404040"))
        return go.Figure(data=traces, layout=lay)
    # one colour scale; its end is the 99.5th percentile of |mass| so a few extreme noisy cells do not wash
    # out every other cell (the colour bar saturates beyond it)
    cmax = max(max(float(np.quantile(np.abs(Z), 0.995)) for Z, _ in mats), 1e-12)
    n = len(labels)
    ticks = (np.arange(k) + 0.5) / k
    dom = panel_grid(n, n, hgap=0.06)
    lay = figure_layout(title=title, note=note, height=400, panel_titles=1, legend=False, margin=dict(r=10))
    traces, shapes, ann = [], [], []
    for i, (name, (Z, _), (color, _, owner)) in enumerate(zip(labels, mats, styles_of(labels), strict=True)):
        xk, yk, xr, yr = axis_keys(i)
        traces.append(go.Heatmap(x=f32(ticks), y=f32(ticks if Z.shape[0] == k else [0.5]), z=f32(Z), xaxis=xr,
                                 yaxis=yr, colorscale=SIGNED_SCALE, zmid=0, zmin=-cmax, zmax=cmax, showscale=i == n - 1,
                                 colorbar=dict(title=dict(text="mass"), thickness=12, len=0.85),
                                 hovertemplate=f"<b>{name}</b><br>{names[0]} = %{{x:.3f}}<br>{names[1]} = %{{y:.3f}}"
                                               "<br>mass %{z:.3g}<extra></extra>"))
        lay[xk] = axis_spec(domain=dom[i][0], anchor=yr, range=[0, 1], constrain="domain", showgrid=False, nticks=5,
                            title=f"{names[0]} (unit cube)" if i == 0 else None)
        lay[yk] = axis_spec(domain=dom[i][1], anchor=xr, range=[0, 1], scaleanchor=xr, scaleratio=1, constrain="domain",
                            showgrid=False, nticks=5, showticklabels=i == 0,
                            title=f"{names[1]} (unit cube)" if i == 0 else None)
        if owner:
            shapes.append(owner_frame(i))
        ann.append(panel_title(name, *dom[i][0], dom[i][1][1], owner=owner, align="center",
                               color=None if owner else color, panel=i))
    lay.update(shapes=shapes, annotations=ann)
    return go.Figure(data=traces, layout=lay)
