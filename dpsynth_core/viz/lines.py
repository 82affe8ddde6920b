"""Lines and paths: the W1 duality on [0, 1], the Haar basis, noise partial sums along a path, a path through
the grid, CDFs along the line.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go

from . import vega
from ._common import (
    COLORS,
    MAX_POINTS,
    REFERENCE_STYLES,
    axis_spec,
    decimate,
    f32,
    figure_layout,
    histogram,
    join_lines,
    panel_title,
    style_of,
    styles_of,
)

__all__ = ["kr_duality", "haar_basis", "partial_sum_paths", "grid_path", "line_cdfs"]


def kr_duality(a: np.ndarray, b: np.ndarray, *, bins: int = 80,
               labels: tuple[str, str] = ("μ (real)", "ν (synthetic)"), title: str = "",
               note: str | None = None) -> dict:
    """Kantorovich–Rubinstein duality in one picture (1-D, on [0, 1]), as a Vega-Lite specification (Home's
    first view: :mod:`.vega`).

    Top: the two densities and the optimal 1-Lipschitz witness f (slope ±1, f' = sign(F_b − F_a)).
    Bottom: the CDFs; the shaded area between them is W1 = ∫|F_a − F_b| = ∫f dμ_a − ∫f dμ_b.
    """
    a = np.clip(np.asarray(a, dtype=float), 0, 1)
    b = np.clip(np.asarray(b, dtype=float), 0, 1)
    grid = np.linspace(0.0, 1.0, 401)
    Fa = np.searchsorted(np.sort(a), grid, side="right") / max(a.size, 1)
    Fb = np.searchsorted(np.sort(b), grid, side="right") / max(b.size, 1)
    step = grid[1] - grid[0]
    slope = np.sign(Fb - Fa)
    f = np.concatenate([[0.0], np.cumsum(slope[:-1] * step)])
    w1 = float(np.sum(np.abs(Fa - Fb)[:-1]) * step)
    gain = float(np.mean(np.interp(a, grid, f)) - np.mean(np.interp(b, grid, f))) if a.size and b.size else 0.0
    edges = np.linspace(0, 1, bins + 1)
    (ca, _, oa), (cb, _, ob) = style_of(labels[0], 0), style_of(labels[1], 1)
    x = {"field": "x", "type": "quantitative", "scale": {"domain": [0, 1], "nice": False}}
    dens = vega.points({"x": np.tile(edges[:-1], 2), "x2": np.tile(edges[1:], 2),
                        "density": np.r_[histogram(a, edges), histogram(b, edges)],
                        "measure": [labels[0]] * bins + [labels[1]] * bins})
    color = {"field": "measure", "type": "nominal", "title": None, "sort": list(labels),
             "scale": {"domain": list(labels), "range": [ca, cb]}}
    bars = {"data": {"values": dens}, "mark": {"type": "rect", "opacity": 0.55},
            "encoding": {"x": {**x, "title": None}, "x2": {"field": "x2"}, "color": color,
                         "y": {"field": "density", "type": "quantitative", "title": "density", "stack": None},
                         "tooltip": [{"field": "measure"}, {"field": "x", "title": "x from", "format": ".3f"},
                                     {"field": "density", "format": ".3g"}]}}
    test = {"data": {"values": vega.points({"x": grid, "f": f - f.min()})},
            "mark": {"type": "line", "color": "#0072B2", "strokeWidth": 2.5},
            "encoding": {"x": x, "y": {"field": "f", "type": "quantitative", "title": "f(x): the test function "
                                       "(slope ±1)", "axis": {"orient": "right", "grid": False, "format": ".2f"}},
                         "tooltip": [{"field": "x", "format": ".3f"}, {"field": "f", "title": "f(x)", "format": ".3f"}]}}
    cdf = vega.points({"x": grid, "Fa": Fa, "Fb": Fb})
    yc = {"type": "quantitative", "title": "CDF", "scale": {"domain": [0, 1.05], "nice": False}}
    area = {"mark": {"type": "area", "color": "rgba(0,114,178,0.15)"},
            "encoding": {"x": x, "y": {"field": "Fa", **yc}, "y2": {"field": "Fb"}}}
    curves = [{"mark": {"type": "line", "color": c, "strokeWidth": 2, **({"strokeDash": [2, 2]} if o else {})},
               "encoding": {"x": {**x, "title": "x (position on the line [0, 1])"}, "y": {"field": k, **yc},
                            "tooltip": [{"field": "x", "format": ".3f"},
                                        {"field": k, "title": f"CDF of {lab}", "format": ".3f"}]}}
              for k, c, o, lab in (("Fa", ca, oa, labels[0]), ("Fb", cb, ob, labels[1]))]
    top = {"width": 720, "height": 250, "layer": [bars, test], "resolve": {"scale": {"y": "independent"}},
           "title": vega.panel_heading("Densities and the best 1-Lipschitz test function f",
                                       f"mean of f under μ − mean of f under ν = {gain:.3f}")}
    bottom = {"width": 720, "height": 200, "data": {"values": cdf}, "layer": [area, *curves],
              "title": vega.panel_heading("Cumulative distribution functions",
                                          f"shaded area between them = W1 = {w1:.3f}")}
    return vega.chart({"vconcat": [top, bottom], "spacing": 28}, title=title, note=note)


def haar_basis(matrix: np.ndarray, *, title: str = "", max_columns: int = 16, note: str | None = None) -> go.Figure:
    """Columns of the (transposed) Haar matrix as step functions, one row per basis function
    (each scaled to its row; the hover gives the true value). One trace, no subplots."""
    M = np.asarray(matrix, dtype=float)
    m, cols = M.shape
    show = min(cols, max_columns)
    xs, ys, cd, base_x, base_y = [], [], [], [], []
    for c in range(show):  # ≤ max_columns rows: a loop over rows, not points
        col = np.append(M[:, c], M[-1, c])
        s = max(float(np.max(np.abs(col))), 1e-12)
        xs.append(np.arange(m + 1, dtype=float))
        ys.append(-c + 0.42 * col / s)
        cd.append(np.column_stack([np.full(m + 1, c + 1), col]))
        base_x.append(np.array([0.0, m]))
        base_y.append(np.array([-c, -c], dtype=float))
    x, y = join_lines(xs, ys)
    custom = np.concatenate([np.vstack([r, [[np.nan, np.nan]]]) for r in cd])[:-1] if cd else np.empty((0, 2))
    bx, by = join_lines(base_x, base_y)
    traces = [go.Scatter(x=bx, y=by, mode="lines", line=dict(color="#BDBDBD", width=1), hoverinfo="skip",
                         showlegend=False),
              go.Scatter(x=x, y=y, mode="lines", line=dict(color=COLORS["superregular"], width=1.8, shape="hv"),
                         customdata=custom, showlegend=False, name="basis function",
                         hovertemplate="<b>basis function %{customdata[0]:.0f}</b><br>position %{x}<br>"
                                       "value %{customdata[1]:.4g}<extra></extra>")]
    lay = figure_layout(title=title, note=note, height=max(300, 30 * show + 110), legend=False)
    lay["xaxis"] = axis_spec(title="position i on the path", range=[0, m], showgrid=False,
                             dtick=1 if m <= 16 else 2 if m <= 32 else None)
    lay["yaxis"] = axis_spec(title="basis function", tickvals=[-c for c in range(show)],
                             ticktext=[str(c + 1) for c in range(show)], range=[-show + 0.4, 0.6], showgrid=False,
                             zeroline=False)
    if cols > show:
        lay["annotations"] = [dict(text=f"first {show} of {cols} basis functions", x=1, y=1, xref="paper",
                                   yref="paper", xanchor="right", yanchor="bottom", showarrow=False,
                                   font=dict(size=12, color="#595959"))]
    return go.Figure(data=traces, layout=lay)


def partial_sum_paths(superregular: np.ndarray, iid: np.ndarray, *, title: str = "",
                      envelope: Mapping[str, np.ndarray] | None = None, max_paths: int = 40,
                      max_steps: int = 500, names: tuple[str, str] = ("superregular noise (Haar)",
                                                                     "i.i.d. Laplace noise"),
                      note: str | None = None) -> go.Figure:
    """Partial sums Σ_{j≤i} noise_j along the path, many draws (rows) of each noise: superregular
    (blue) against i.i.d. Laplace (orange). ``envelope``: caller-named reference curves, drawn as
    ±curve, each in its own colour and dash. Long paths are drawn at about ``max_steps`` positions
    (each stretch's lowest and highest value kept), all draws of one noise as one trace."""
    traces = []
    for name, P, color, width in ((names[0], superregular, COLORS["superregular"], 0.7),
                                  (names[1], iid, COLORS["iid"], 1.1)):
        P = np.atleast_2d(np.asarray(P, dtype=float))[:max_paths]
        x = np.arange(1, P.shape[1] + 1, dtype=float)
        rows = [decimate(x, r, max_steps) for r in P]
        jx, jy = join_lines([r[0] for r in rows], [r[1] for r in rows])
        traces.append(go.Scatter(x=f32(jx), y=f32(jy), mode="lines", line=dict(color=color, width=width),
                                 opacity=0.45 if color == COLORS["superregular"] else 0.65,
                                 name=f"{name} ({P.shape[0]} draws)",
                                 hovertemplate=f"<b>{name}</b><br>position %{{x:.0f}}<br>partial sum %{{y:.4g}}"
                                               "<extra></extra>"))
    for i, (name, v) in enumerate((envelope or {}).items()):
        v = np.asarray(v, dtype=float).ravel()
        x = np.arange(1, v.size + 1, dtype=float)
        if v.size > max_steps:
            keep = np.unique(np.linspace(0, v.size - 1, max_steps).astype(int))
            v, x = v[keep], x[keep]
        color, dash = REFERENCE_STYLES[i % len(REFERENCE_STYLES)]
        jx, jy = join_lines([x, x], [v, -v])
        traces.append(go.Scatter(x=f32(jx), y=f32(jy), mode="lines", line=dict(color=color, dash=dash, width=2.2),
                                 name=f"± {name}",
                                 hovertemplate=f"<b>{name}</b><br>position %{{x:.0f}}<br>±%{{y:.4g}}<extra></extra>"))
    lay = figure_layout(title=title, note=note, height=440)
    lay["xaxis"] = axis_spec(title="position i on the path")
    lay["yaxis"] = axis_spec(title="partial sum of the noise up to i", zeroline=True, zerolinecolor="#9E9E9E")
    return go.Figure(data=traces, layout=lay)


def grid_path(order: np.ndarray, k: int, *, title: str = "",
              names: Sequence[str] = ("first coordinate", "second coordinate"), note: str | None = None) -> go.Figure:
    """A path through the k×k grid (cell indices, row-major, axis 0 = x) drawn over the cells, its cells
    coloured by step while there are at most :data:`MAX_POINTS` of them, a plain line beyond (start: black
    star, end: black square)."""
    order = np.asarray(order, dtype=np.int64)
    x = (order // k + 0.5) / k
    y = (order % k + 0.5) / k
    steps = np.arange(order.size)
    traces = [go.Scatter(x=f32(x), y=f32(y), mode="lines+markers" if order.size <= MAX_POINTS else "lines",
                         line=dict(color="#9E9E9E", width=1.5), name="path",
                         marker=dict(size=6 if k <= 16 else 4, color=steps, colorscale="Viridis",
                                     colorbar=dict(title=dict(text="step"), thickness=12, len=0.85)),
                         customdata=steps,
                         hovertemplate="step %{customdata}<br>cell centre (%{x:.3f}, %{y:.3f})<extra></extra>")]
    if order.size:
        traces += [go.Scatter(x=[x[0]], y=[y[0]], mode="markers", name="start",
                              marker=dict(size=13, color="black", symbol="star"), hovertemplate="start<extra></extra>"),
                   go.Scatter(x=[x[-1]], y=[y[-1]], mode="markers", name="end",
                              marker=dict(size=10, color="black", symbol="square"), hovertemplate="end<extra></extra>")]
    lay = figure_layout(title=title, note=note, height=440)
    lay.update(xaxis=axis_spec(title=f"{names[0]} (unit cube)", range=[0, 1], constrain="domain", dtick=1 / k if k <= 8
                               else None, showgrid=k <= 16),
               yaxis=axis_spec(title=f"{names[1]} (unit cube)", range=[0, 1], scaleanchor="x", scaleratio=1,
                               constrain="domain", dtick=1 / k if k <= 8 else None, showgrid=k <= 16))
    return go.Figure(data=traces, layout=lay)


def line_cdfs(positions: np.ndarray, series: Mapping[str, np.ndarray], *, title: str = "",
              reference: str | None = None, max_points: int = 1500, note: str | None = None) -> go.Figure:
    """CDFs on the line (a signed measure's can leave [0, 1] and go down; the projection's cannot).
    With ``reference`` (a key of ``series``), a second panel shows every CDF minus that one.
    Colours and dashes follow the names (owner-view curves dotted)."""
    pos = np.asarray(positions, dtype=float).ravel()
    two = reference is not None and reference in series
    traces = []
    ref = np.asarray(series[reference], dtype=float).ravel() if two else None
    for (name, F), (color, dash, owner) in zip(series.items(), styles_of(list(series)), strict=True):
        F = np.asarray(F, dtype=float).ravel()
        xx, yy = decimate(pos, F, max_points)
        traces.append(go.Scatter(x=f32(xx), y=f32(yy), mode="lines", name=name, legendgroup=name,
                                 line=dict(shape="hv", color=color, dash=dash, width=2.2 if owner else 1.8),
                                 hovertemplate=f"<b>{name}</b><br>position %{{x:.4g}}<br>CDF %{{y:.4g}}<extra></extra>"))
        if two and name != reference:
            xx, yy = decimate(pos, F - ref, max_points)
            traces.append(go.Scatter(x=f32(xx), y=f32(yy), mode="lines", name=name, legendgroup=name,
                                     showlegend=False, xaxis="x", yaxis="y2",
                                     line=dict(shape="hv", color=color, dash=dash, width=1.4),
                                     hovertemplate=f"<b>{name} − {reference}</b><br>position %{{x:.4g}}<br>"
                                                   "difference %{y:.4g}<extra></extra>"))
    top = [0.45, 1.0] if two else [0.0, 1.0]
    lay = figure_layout(title=title, note=note, height=600 if two else 420, panel_titles=two)
    lay["xaxis"] = axis_spec(title="position on the line (unit-cube units)", anchor="y2" if two else "y")
    lay["yaxis"] = axis_spec(title="CDF", domain=top, anchor="x")
    lay["shapes"] = [dict(type="rect", xref="x domain", yref="y", x0=0, x1=1, y0=0, y1=1, layer="below",
                          fillcolor="rgba(0,158,115,0.07)", line=dict(width=0))]
    if two:
        lay["yaxis2"] = axis_spec(title="difference<br>(area = W1 on the line)", domain=[0.0, 0.33], anchor="x",
                                  zeroline=True,
                                  zerolinecolor="#262626", zerolinewidth=1.5)
        lay["xaxis"]["showticklabels"] = True
        lay["annotations"] = [
            panel_title("CDFs along the line (a CDF stays in the green band, 0 to 1)", 0, 1, top[1]),
            panel_title(f"each CDF minus the {reference}", 0, 1, 0.33)]
    return go.Figure(data=traces, layout=lay)
