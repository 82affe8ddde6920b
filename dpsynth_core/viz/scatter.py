"""Data and releases as point clouds: the dataset, real against synthetic, several releases side by side.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from . import vega
from ._common import (
    COLORS,
    FIGURE_POINTS,
    GROUP_SYMBOLS,
    LABEL_COLORS,
    MAX_POINTS,
    as_points,
    axis_keys,
    axis_spec,
    bounds_2d,
    box_shape,
    empty_figure,
    empty_panel_note,
    f32,
    figure_layout,
    histogram,
    hover_text,
    is_owner,
    padded_range,
    panel_grid,
    panel_title,
    scatter_axes,
    styles_of,
    thin_index,
    top_margin,
    two_lines,
    xy_of,
)

__all__ = ["scatter_data", "scatter_compare", "draws_grid"]


def _hist_traces(panels: Sequence[tuple[str, np.ndarray]], edges: np.ndarray, xname: str, *,
                 density: bool = True) -> list[go.Bar | go.Scatter]:
    """1-D data as histograms on shared bins: owner layers as a grey dotted outline, DP layers as bars."""
    mid = (edges[:-1] + edges[1:]) / 2
    out = []
    what = "density" if density else "count"
    for (name, z), (color, _, owner) in zip(panels, styles_of([p[0] for p in panels]), strict=True):
        h = histogram(z, edges, density)
        hov = f"<b>{name}</b><br>{xname} ≈ %{{x:.4g}}<br>{what} %{{y:.4g}}<extra></extra>"
        if owner:
            out.append(go.Scatter(x=f32(np.r_[edges[0], edges]), y=f32(np.r_[0, h, 0]), mode="lines", name=name,
                                  line=dict(color="#262626", dash="dot", width=2, shape="hv"), hovertemplate=hov,
                                  legendrank=1))
        else:
            out.append(go.Bar(x=f32(mid), y=f32(h), width=float(edges[1] - edges[0]), name=name,
                              marker=dict(color=color, opacity=0.6, line=dict(width=0)), hovertemplate=hov))
    return out


def _edges_1d(lower, upper, *arrays, bins: int = 60) -> np.ndarray:
    if lower is not None and upper is not None:
        lo, hi = float(np.ravel(lower)[0]), float(np.ravel(upper)[0])
    else:
        vals = np.concatenate([np.ravel(a) for a in arrays if np.size(a)] or [np.zeros(1)])
        lo, hi = float(vals.min()), float(vals.max())
    if hi <= lo:
        lo, hi = lo - 0.5, hi + 0.5
    return np.linspace(lo, hi, bins + 1)


def scatter_data(X: np.ndarray, names: Sequence[str], *, labels: np.ndarray | None = None,
                 lower=None, upper=None, axes: tuple[int, int] = (0, 1), title: str = "",
                 max_points: int = MAX_POINTS, label_name: str = "data", note: str | None = None,
                 label_title: str = "label") -> go.Figure:
    """The dataset: a scatter of two coordinates (a histogram when d = 1), the public box dotted.

    Each axis spans its own public bounds unless both axes have the same bounds (then one scale);
    the x-axis title says which. With ``labels`` the points are coloured by label (at most 12; the
    legend is titled ``label_title``, e.g. the categorical column the labels come from)."""
    X = as_points(X)
    if X.shape[1] == 1:
        edges = _edges_1d(lower, upper, X[:, 0])
        h = histogram(X[:, 0], edges, density=False)
        traces = [go.Bar(x=f32((edges[:-1] + edges[1:]) / 2), y=h, width=float(edges[1] - edges[0]), name=label_name,
                         marker=dict(color=COLORS["real"], opacity=0.7, line=dict(width=0)),
                         hovertemplate=f"{names[0]} ≈ %{{x:.4g}}<br>%{{y}} rows<extra></extra>")]
        lay = figure_layout(title=title, note=note, legend=False, bargap=0.02,
                            xaxis=axis_spec(title=names[0], range=[edges[0], edges[-1]]), yaxis=axis_spec(title="number of rows"))
        return go.Figure(data=traces, layout=lay)
    idx = thin_index(X.shape[0], max_points)
    x, y = X[idx, axes[0]], X[idx, axes[1]]
    xn, yn = names[axes[0]], names[axes[1]]
    traces = []
    if labels is not None and len(labels) == X.shape[0]:
        lab = np.asarray(labels)[idx]
        for i, v in enumerate(np.unique(lab)[:12]):
            m = lab == v
            traces.append(go.Scatter(x=f32(x[m]), y=f32(y[m]), mode="markers", name=str(v),
                                     marker=dict(size=4, opacity=0.65, color=LABEL_COLORS[i % len(LABEL_COLORS)],
                                                 symbol=GROUP_SYMBOLS[(i // len(LABEL_COLORS)) % 8]),
                                     hovertemplate=hover_text(f"row with {label_title} {v}", xn, yn)))
    else:
        traces.append(go.Scatter(x=f32(x), y=f32(y), mode="markers", name=label_name,
                                 marker=dict(size=4, opacity=0.5, color=COLORS["real"]),
                                 hovertemplate=hover_text("a row of the data", xn, yn)))
    b = bounds_2d(lower, upper, axes)
    lay = figure_layout(title=title, note=note, legend=len(traces) > 1)
    lay["legend"]["title"] = dict(text=f"{label_title} ")
    scatter_axes(lay, 0, b, xn, yn)
    if b is not None:
        lay["shapes"] = [box_shape(b)]
    return go.Figure(data=traces, layout=lay)


def scatter_compare(X: np.ndarray, Y: np.ndarray, names: Sequence[str], *, lower=None, upper=None,
                    axes: tuple[int, int] = (0, 1), max_points: int = FIGURE_POINTS // 2,
                    titles: tuple[str, str] = ("real data (owner view)", "synthetic data (DP)"),
                    title: str = "", note: str | None = None) -> dict:
    """Real and synthetic data side by side on the same axes (overlaid histograms when d = 1), as a Vega-Lite
    specification (every mechanism page's first view: :mod:`.vega`). The real panel is the owner view: grey
    points in a dotted frame; the public box is drawn dotted in both panels."""
    X, Y = as_points(X), as_points(Y)
    if X.shape[1] == 1:
        return _compare_1d(X[:, 0], Y[:, 0] if Y.shape[1] else np.zeros(0), names[0], lower, upper, titles,
                           title=title, note=note)
    b = bounds_2d(lower, upper, axes)
    public = b is not None
    if b is None:  # shared ranges from both sets
        Z = np.concatenate([X[:, list(axes)], Y[:, list(axes)]]) if Y.shape[1] > 1 else X[:, list(axes)]
        if Z.size:
            b = ((Z[:, 0].min(), Z[:, 1].min()), (Z[:, 0].max(), Z[:, 1].max()))
    panels = [_compare_panel(Z, i, name, key, b, names, axes, public=public, max_points=max_points)
              for i, (Z, name, key) in enumerate(((X, titles[0], "real"), (Y, titles[1], "synthetic")))]
    return vega.chart({"hconcat": panels, "spacing": 24, "resolve": {"scale": {"x": "shared", "y": "shared"}}},
                      title=title, note=note)


def _compare_panel(Z: np.ndarray, i: int, name: str, key: str, b, names: Sequence[str], axes: tuple[int, int], *,
                   public: bool, max_points: int) -> dict:
    """One panel of :func:`scatter_compare`: its thinned points, the public box, its heading and frame."""
    owner = is_owner(name) or key == "real"
    Zt = Z[thin_index(Z.shape[0], max_points, seed=i + 1)]
    x, y = xy_of(Zt, axes)
    xn, yn = names[axes[0]], names[axes[1]]
    color = COLORS["real"] if owner else COLORS[key]
    sub = f"{Z.shape[0]:,} rows" + (f", {Zt.shape[0]:,} drawn" if Zt.shape[0] < Z.shape[0] else "")
    if b is None:
        b = ((0.0, 0.0), (1.0, 1.0))
    xs, ys = padded_range(b[0][0], b[1][0]), padded_range(b[0][1], b[1][1])
    same = public and b[0][0] == b[0][1] and b[1][0] == b[1][1]
    xtitle = [xn, "both axes on the same scale" if same else "each axis spans its own public bounds (own scale)"] \
        if public and i == 0 else xn
    enc = {"x": {"field": "x", "type": "quantitative", "title": xtitle, "scale": {"domain": xs, "nice": False, "zero": False}},
           "y": {"field": "y", "type": "quantitative", "title": yn if i == 0 else None,
                 "scale": {"domain": ys, "nice": False, "zero": False}}}
    layers = []
    if public:
        layers.append({"data": {"values": [{"x": float(b[0][0]), "x2": float(b[1][0]), "y": float(b[0][1]),
                                            "y2": float(b[1][1])}]},
                       "mark": {"type": "rect", "fill": None, "stroke": "#8c8c8c", "strokeDash": [3, 3],
                                "strokeWidth": 1},
                       "encoding": {**enc, "x2": {"field": "x2"}, "y2": {"field": "y2"}}})
    what = f"{'real' if owner else 'synthetic'} point"
    layers.append({"data": {"values": vega.points({"x": x, "y": y})},
                   "mark": {"type": "circle", "size": 10, "opacity": 0.45 if owner else 0.55, "color": color},
                   "encoding": {**enc, "tooltip": [{"field": "x", "type": "quantitative", "title": f"{what}: {xn}",
                                                    "format": ".4g"},
                                                   {"field": "y", "type": "quantitative", "title": yn,
                                                    "format": ".4g"}]}})
    if Z.shape[0] == 0:
        layers.append({"data": {"values": [{"x": float(np.mean(xs)), "y": float(np.mean(ys))}]},
                       "mark": {"type": "text", "text": "no points", "fontSize": 13, "color": "#595959"},
                       "encoding": {"x": enc["x"], "y": enc["y"]}})
    view = {"stroke": "#595959", "strokeDash": [2, 3], "strokeWidth": 1.5} if owner else {"stroke": None}
    return {"width": 300, "height": 300, "title": vega.panel_heading(name, sub, color=None if owner else color,
                                                                     owner=owner),
            "layer": layers, "view": view}


def _compare_1d(x: np.ndarray, y: np.ndarray, name: str, lower, upper, titles: tuple[str, str], *, title: str,
                note: str | None) -> dict:
    """:func:`scatter_compare` on one column: the synthetic histogram as bars, the real one as a dotted outline."""
    edges = _edges_1d(lower, upper, x, y)
    xs = {"field": "x", "type": "quantitative", "title": name,
          "scale": {"domain": [float(edges[0]), float(edges[-1])], "nice": False, "zero": False}}
    ytitle = "density (share of rows per unit)"
    syn = {"data": {"values": vega.points({"x": edges[:-1], "x2": edges[1:], "density": histogram(y, edges)})},
           "mark": {"type": "rect", "color": COLORS["synthetic"], "opacity": 0.6},
           "encoding": {"x": xs, "x2": {"field": "x2"},
                        "y": {"field": "density", "type": "quantitative", "title": ytitle},
                        "tooltip": [{"field": "x", "title": f"{titles[1]}: {name} from", "format": ".4g"},
                                    {"field": "density", "format": ".4g"}]}}
    real_h = histogram(x, edges)
    real = {"data": {"values": vega.points({"x": np.r_[edges[0], edges], "density": np.r_[0, real_h, 0]})},
            "mark": {"type": "line", "interpolate": "step-after", "color": "#262626", "strokeDash": [2, 2],
                     "strokeWidth": 2},
            "encoding": {"x": xs, "y": {"field": "density", "type": "quantitative", "title": ytitle},
                         "tooltip": [{"field": "x", "title": f"{titles[0]}: {name} ≈", "format": ".4g"},
                                     {"field": "density", "format": ".4g"}]}}
    heading = title or "real and synthetic data"
    return vega.chart({"width": "container", "height": 360, "layer": [syn, real]}, title=heading,
                      note=note or f"bars: {titles[1]}; dotted outline: {titles[0]}")


def draws_grid(X: np.ndarray, draws: Sequence[np.ndarray], w1s: Sequence[float], names: Sequence[str], *,
               lower=None, upper=None, max_points: int = 1200, titles: Sequence[str] | None = None,
               cols: int | None = None, note: str | None = None, title: str = "") -> go.Figure:
    """Several releases, one panel each, W1 in the panel title: independent draws of one mechanism
    (the randomness of a DP release made visible) or several mechanisms (``titles``).

    All panels have the same size and the same axes (the public bounds, or the range of the real
    data ``X`` and the draws), so the draws line up; tick labels on the outer panels only. Each panel
    draws at most ``max_points`` points and the figure about :data:`FIGURE_POINTS` (at least 300 per
    panel)."""
    k = len(draws)
    if k == 0:
        return empty_figure("no releases to show")
    cols = int(cols) if cols else (k if k <= 4 else 3 if k in (5, 6, 9) else 4)
    rows = math.ceil(k / cols)
    Ds = [as_points(D) for D in draws]
    d = max([D.shape[1] for D in Ds] + [as_points(X).shape[1]])
    b = bounds_2d(lower, upper, (0, 1)) if d > 1 else None
    public = b is not None
    if b is None and d > 1:
        pool = [D[:, :2] for D in Ds if D.shape[0] and D.shape[1] > 1] + [as_points(X)[:, :2]]
        Z = np.concatenate([p for p in pool if p.shape[0] and p.shape[1] == 2] or [np.zeros((1, 2))])
        b = ((Z[:, 0].min(), Z[:, 1].min()), (Z[:, 0].max(), Z[:, 1].max()))
    row_px = 250
    height = row_px * rows + 70 + top_margin(title, note, 2)
    vgap = 90 / max(height - 120, 1) if rows > 1 else 0.0
    dom = panel_grid(k, cols, hgap=0.035 if cols > 1 else 0.0, vgap=vgap)
    lay = figure_layout(title=title, note=note, height=height, panel_titles=2, legend=False,
                        margin=dict(l=60, r=20, b=60))
    traces, shapes, ann = [], [], []
    edges = _edges_1d(lower, upper, *[D[:, 0] for D in Ds]) if d == 1 else None
    hmax = 0.0
    for i, D in enumerate(Ds):
        xk, yk, xr, yr = axis_keys(i)
        r, c = divmod(i, cols)
        last_row = r == rows - 1 or i + cols >= k
        name = titles[i] if titles is not None and i < len(titles) else f"release {i + 1}"
        w = w1s[i] if i < len(w1s) else None
        head = two_lines(name, f"W1 = {w:.3g}" if w is not None and np.isfinite(w) else "")
        if d == 1:
            h = histogram(D[:, 0], edges)
            hmax = max(hmax, float(h.max()) if h.size else 0.0)
            traces.append(go.Bar(x=f32((edges[:-1] + edges[1:]) / 2), y=f32(h), width=float(edges[1] - edges[0]),
                                 xaxis=xr, yaxis=yr, name=name, marker=dict(color=COLORS["synthetic"], opacity=0.7),
                                 hovertemplate=f"<b>{name}</b><br>{names[0]} ≈ %{{x:.4g}}<br>density %{{y:.4g}}"
                                               "<extra></extra>"))
            lay[xk] = axis_spec(title=names[0] if last_row and c == 0 else None, showticklabels=last_row,
                                range=[edges[0], edges[-1]], nticks=5)
            lay[yk] = axis_spec(title="density" if c == 0 else None, showticklabels=c == 0, nticks=5)
        else:
            Dt = D[thin_index(D.shape[0], min(max_points, max(300, FIGURE_POINTS // k)), seed=i)]
            x, y = xy_of(Dt, (0, 1))
            traces.append(go.Scatter(x=f32(x), y=f32(y), mode="markers", xaxis=xr, yaxis=yr, name=name,
                                     marker=dict(size=2.5, opacity=0.55, color=COLORS["synthetic"]),
                                     hovertemplate=hover_text(f"synthetic point ({name})", names[0], names[1])))
            scatter_axes(lay, i, b, names[0], names[1], xtitle=last_row and c == 0, ytitle=c == 0,
                         tick_x=last_row, tick_y=c == 0, public=public)
            lay[xk]["nticks"] = lay[yk]["nticks"] = 5
            if public:
                shapes.append(box_shape(b, i))
        lay[xk]["domain"], lay[yk]["domain"] = dom[i]
        lay[xk]["anchor"], lay[yk]["anchor"] = yr, xr
        if i > 0:
            lay[xk]["matches"], lay[yk]["matches"] = "x", "y"
        ann.append(panel_title(head, *dom[i][0], dom[i][1][1], color="#262730", align="center"))
        if D.shape[0] == 0:
            ann.append(empty_panel_note(i, "no points"))
    if d == 1:
        for i in range(k):
            lay[axis_keys(i)[1]]["range"] = [0, hmax * 1.05 if hmax > 0 else 1]
    lay.update(shapes=shapes, annotations=ann)
    return go.Figure(data=traces, layout=lay)
