"""The marginal tables (``marginals``): a column's 1-way table, a pair's 2-way tables side by side, and what
low-order marginals keep and lose against a full-dimensional release. Tables come labelled by their bins
(:mod:`dpsynth_core.marginal_views`); nothing is computed here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go

from ._common import (
    GROUP_COLORS,
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

__all__ = ["one_way_bars", "pair_tables", "keep_lose_bars"]


def one_way_bars(series: Mapping[str, np.ndarray], labels: Sequence[str], *, column: str, title: str = "",
                 note: str | None = None) -> go.Figure:
    """A column's 1-way table: one group of bars per bin (``labels``), one bar per series (counts), coloured by
    meaning (a name with "true" or "owner" is the owner view: grey, hatched). Noisy counts can be negative."""
    if not series or not len(labels):
        return empty_figure("no table to show")
    traces = []
    for name, (color, _, owner) in zip(series, styles_of(list(series)), strict=True):
        traces.append(go.Bar(x=list(labels), y=f32(series[name]), name=name,
                             marker=dict(color=color, opacity=0.55 if owner else 0.9,
                                         pattern=dict(shape="/" if owner else "")),
                             hovertemplate=f"<b>{name}</b><br>{column} %{{x}}<br>count %{{y:.4g}}<extra></extra>"))
    lay = figure_layout(title=title, note=note, height=380, bargap=0.2, bargroupgap=0.05, barmode="group",
                        xaxis=axis_spec(title=f"{column} (the table's bins)", type="category"),
                        yaxis=axis_spec(title="count", zeroline=True, zerolinecolor="#404040"))
    return go.Figure(data=traces, layout=lay)


def pair_tables(panels: Mapping[str, np.ndarray], row_labels: Sequence[str], col_labels: Sequence[str],
                columns: tuple[str, str], *, title: str = "", note: str | None = None) -> go.Figure:
    """A pair's 2-way tables side by side (counts, rows: the first column's bins on the x axis), one red–blue
    scale centred at 0 (negative noisy counts red). Owner-view panels (by name) get a grey dotted frame."""
    names = list(panels)
    if not names:
        return empty_figure("no tables to show")
    mats = [np.asarray(panels[n], dtype=float) for n in names]
    # the scale's end: the 99.5th percentile of |count| over the panels, so one extreme noisy cell does not wash
    # out the others (the colour bar saturates beyond it)
    cmax = max(max(float(np.quantile(np.abs(Z), 0.995)) for Z in mats), 1e-12)
    cols = min(len(names), 4)
    dom = panel_grid(len(names), cols, hgap=0.06, vgap=0.2)
    rows = -(-len(names) // cols)
    lay = figure_layout(title=title, note=note, height=120 + 300 * rows, panel_titles=1, legend=False,
                        margin=dict(r=10))
    traces, shapes, ann = [], [], []
    for i, (name, Z, (color, _, owner)) in enumerate(zip(names, mats, styles_of(names), strict=True)):
        xk, yk, xr, yr = axis_keys(i)
        traces.append(go.Heatmap(x=list(row_labels), y=list(col_labels), z=f32(Z.T), xaxis=xr, yaxis=yr,
                                 colorscale=SIGNED_SCALE, zmid=0, zmin=-cmax, zmax=cmax, showscale=i == len(names) - 1,
                                 colorbar=dict(title=dict(text="count"), thickness=12, len=0.85),
                                 hovertemplate=f"<b>{name}</b><br>{columns[0]} %{{x}}<br>{columns[1]} %{{y}}"
                                               "<br>count %{z:.4g}<extra></extra>"))
        lay[xk] = axis_spec(domain=dom[i][0], anchor=yr, type="category", showgrid=False,
                            title=columns[0] if i % cols == 0 else None)
        lay[yk] = axis_spec(domain=dom[i][1], anchor=xr, type="category", showgrid=False,
                            showticklabels=i % cols == 0, title=columns[1] if i % cols == 0 else None)
        if owner:
            shapes.append(owner_frame(i))
        ann.append(panel_title(name, *dom[i][0], dom[i][1][1], owner=owner, align="center",
                               color=None if owner else color, panel=i))
    lay.update(shapes=shapes, annotations=ann)
    return go.Figure(data=traces, layout=lay)


def keep_lose_bars(measures: Mapping[str, Mapping[str, float]], *, title: str = "", note: str | None = None) -> go.Figure:
    """Releases side by side on several errors (lower is better): ``measures`` maps a release's name to
    {error name: value}; one group of bars per error, one bar per release. NaN values are left out."""
    if not measures:
        return empty_figure("no release to compare")
    keys = list(dict.fromkeys(k for m in measures.values() for k in m))
    traces = []
    for i, (name, m) in enumerate(measures.items()):
        xs = [k for k in keys if k in m and np.isfinite(m[k])]
        traces.append(go.Bar(x=xs, y=f32([m[k] for k in xs]), name=name,
                             marker=dict(color=GROUP_COLORS[i % len(GROUP_COLORS)], opacity=0.9),
                             text=[f"{m[k]:.3g}" for k in xs], textposition="outside",
                             hovertemplate=f"<b>{name}</b><br>%{{x}}: %{{y:.4g}}<extra></extra>"))
    lay = figure_layout(title=title, note=note, height=400, barmode="group", bargap=0.25,
                        xaxis=axis_spec(type="category"), yaxis=axis_spec(title="error (lower is better)",
                                                                          rangemode="tozero"))
    return go.Figure(data=traces, layout=lay)
