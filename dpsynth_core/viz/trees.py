"""The binary partition tree of PMM: the tree, one level's cells, the counts of every stage, the noise per level.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go

from ._common import (
    COLORS,
    GROUP_COLORS,
    GROUP_SYMBOLS,
    MAX_POINTS,
    SIGNED_SCALE,
    axis_keys,
    axis_spec,
    empty_figure,
    f32,
    figure_layout,
    fmt_number,
    hover_text,
    is_owner,
    log_axis,
    panel_grid,
    panel_title,
    rgba,
    style_of,
    thin,
    top_margin,
    two_lines,
)

__all__ = ["MAX_TREE_LEVEL", "icicle_tree", "cell_map", "level_counts", "sigma_levels"]


#: The tree view draws at most this many levels (2^11 − 1 boxes).
MAX_TREE_LEVEL = 10


def icicle_tree(levels: Sequence[np.ndarray], *, max_level: int, title: str = "",
                kind: str = "icicle", note: str | None = None) -> go.Figure:
    """The binary partition tree down to ``max_level`` (at most :data:`MAX_TREE_LEVEL`) as an icicle
    (or sunburst): every box is a cell, its two children are its halves, its label and colour its
    count (red–blue, log scale; negative noisy counts red). Boxes of one level have equal width so
    the tree's shape stays readable whatever the counts."""
    L = max(0, min(int(max_level), len(levels) - 1, MAX_TREE_LEVEL))
    ids, parents, values, labels, hover, cols = [], [], [], [], [], []
    for j in range(L + 1):
        c = np.asarray(levels[j], dtype=float).ravel()
        t = np.arange(c.size)
        ids += [f"{j}/{i}" for i in t]
        parents += [""] if j == 0 else [f"{j - 1}/{i}" for i in t >> 1]
        values.append(np.full(c.size, 2.0 ** (L - j)))
        isint = np.abs(c - np.round(c)) < 1e-9
        labels += [str(int(v)) if ok else f"{v:.3g}" for v, ok in zip(c, isint, strict=True)]
        cells = [format(i, f"0{j}b") for i in t] if j else ["the whole cube"]
        hover += [f"level {j} · cell {s}<br>count {v:.6g}" for s, v in zip(cells, c, strict=True)]
        cols.append(c)
    col = np.concatenate(cols)
    z = np.sign(col) * np.log10(1.0 + np.abs(col))
    zmax = max(1.0, float(np.max(np.abs(z))))
    top = int(math.ceil(zmax))
    step = 1 if top <= 4 else 2
    pos = list(range(step, top + 1, step))
    tickvals = [-math.log10(1 + 10**k) for k in pos[::-1]] + [0.0] + [math.log10(1 + 10**k) for k in pos]
    ticktext = [f"−{fmt_number(10**k)}" for k in pos[::-1]] + ["0"] + [fmt_number(10**k) for k in pos]
    marker = dict(colors=f32(z), colorscale=SIGNED_SCALE, cmid=0.0, cmin=-zmax, cmax=zmax,
                  colorbar=dict(title=dict(text="count"), tickvals=tickvals, ticktext=ticktext, thickness=12))
    common = dict(ids=ids, labels=labels, parents=parents, values=np.concatenate(values), hovertext=hover,
                  hoverinfo="text", branchvalues="total", marker=marker, textinfo="label",
                  insidetextfont=dict(size=11))
    trace = go.Sunburst(**common) if kind == "sunburst" else go.Icicle(**common, tiling=dict(orientation="v"))
    lay = figure_layout(title=title, note=note, height=460, legend=False, margin=dict(l=10, r=10, b=10))
    return go.Figure(data=[trace], layout=lay)


def cell_map(counts: np.ndarray, lower: np.ndarray, upper: np.ndarray, *, title: str = "",
             names: Sequence[str] = ("u0", "u1"), points: np.ndarray | None = None,
             zmid: float | None = 0.0, zmax: float | None = None, max_cells: int = 128,
             note: str | None = None, scale: np.ndarray | None = None) -> go.Figure:
    """The cells of one partition level in the unit square (first two axes), coloured by count.

    ``lower``/``upper`` are the cells' corners (cells × d); for d > 2 counts are summed over the
    other axes. Pass the same ``zmax`` to several maps to share one colour scale, or the same ``scale``
    (counts whose largest absolute value is ``zmax``; 1 when they are all 0). Grids finer than
    ``max_cells`` per axis are drawn with neighbouring cells merged (summed); the title says so."""
    if scale is not None:
        zmax = float(np.max(np.abs(np.asarray(scale, dtype=float)), initial=0.0)) or 1.0
    counts = np.asarray(counts, dtype=float)
    lo = np.asarray(lower)[:, :2]
    hi = np.asarray(upper)[:, :2]
    if lo.shape[1] == 1:  # d = 1: a bar per cell
        colors = np.where(counts < 0, COLORS["negative"], COLORS["positive"])
        lay = figure_layout(title=title, note=note, legend=False, bargap=0,
                            xaxis=axis_spec(title=f"{names[0]} (unit cube)", range=[0, 1]),
                            yaxis=axis_spec(title="count", range=None if zmax is None else [-zmax if zmid is not None else 0,
                                                                                 zmax]))
        return go.Figure(data=[go.Bar(x=f32((lo[:, 0] + hi[:, 0]) / 2), y=counts, width=f32(hi[:, 0] - lo[:, 0]),
                                      marker=dict(color=colors, line=dict(width=0)), name="count",
                                      hovertemplate="cell centre %{x:.4g}<br>count %{y:.4g}<extra></extra>")],
                         layout=lay)
    xs = np.unique(np.concatenate([lo[:, 0], hi[:, 0]]))
    ys = np.unique(np.concatenate([lo[:, 1], hi[:, 1]]))
    Z = np.zeros((ys.size - 1, xs.size - 1))
    np.add.at(Z, (np.searchsorted(ys, lo[:, 1]), np.searchsorted(xs, lo[:, 0])), counts)
    merged = ""
    fy, fx = max(1, math.ceil(Z.shape[0] / max_cells)), max(1, math.ceil(Z.shape[1] / max_cells))
    if fx > 1 or fy > 1:  # merge neighbouring cells for drawing
        Z = np.pad(Z, ((0, (-Z.shape[0]) % fy), (0, (-Z.shape[1]) % fx)))
        Z = Z.reshape(Z.shape[0] // fy, fy, Z.shape[1] // fx, fx).sum(axis=(1, 3))
        ys = np.linspace(ys[0], ys[0] + (ys[1] - ys[0]) * fy * Z.shape[0], Z.shape[0] + 1)
        xs = np.linspace(xs[0], xs[0] + (xs[1] - xs[0]) * fx * Z.shape[1], Z.shape[1] + 1)
        merged = f"{fx}×{fy} neighbouring cells merged for drawing"
    cmax = float(zmax) if zmax is not None else max(1.0, float(np.max(np.abs(Z))) if Z.size else 1.0)
    signed = zmid is not None
    trace = go.Heatmap(x=f32((xs[:-1] + xs[1:]) / 2), y=f32((ys[:-1] + ys[1:]) / 2), z=f32(Z),
                       colorscale=SIGNED_SCALE if signed else "Blues", zmid=zmid if signed else None,
                       zmin=-cmax if signed else 0, zmax=cmax,
                       colorbar=dict(title=dict(text="count"), thickness=12, len=0.85),
                       hovertemplate=f"{names[0]} = %{{x:.3f}}<br>{names[1]} = %{{y:.3f}}<br>"
                                     f"count %{{z:.4g}}{' (merged cells)' if merged else ''}<extra></extra>")
    traces = [trace]
    if points is not None and len(points):
        P = thin(np.asarray(points), MAX_POINTS)
        traces.append(go.Scatter(x=f32(P[:, 0]), y=f32(P[:, 1]), mode="markers", name="points",
                                 marker=dict(size=2, color="black", opacity=0.35),
                                 hovertemplate=hover_text("point", names[0], names[1])))
    lay = figure_layout(title=title, note=note if not merged else (f"{note} · {merged}" if note else merged), height=400,
                        legend=False, margin=dict(l=50, r=10, b=45))
    lay.update(xaxis=axis_spec(title=f"{names[0]} (unit cube)", range=[0, 1], constrain="domain", showgrid=False),
               yaxis=axis_spec(title=f"{names[1]} (unit cube)", range=[0, 1], scaleanchor="x", scaleratio=1,
                               constrain="domain", showgrid=False))
    return go.Figure(data=traces, layout=lay)


def level_counts(series: Mapping[str, np.ndarray], *, title: str = "", max_cells: int = 512,
                 reference: str | None = None, note: str | None = None) -> go.Figure:
    """Counts of every cell of one level in cell-code order, one panel per stage (noisy, clipped,
    consistent, ...), each with the reference counts drawn on top (grey dotted: the true counts,
    owner view) so every stage can be compared with the truth. The panel title gives the stage's
    total and its total absolute difference to the reference; all panels share one y-axis.

    ``reference`` names the series to compare with (default: the first owner-view name, e.g.
    "true (owner view)"). Levels with more than ``max_cells`` cells are drawn with neighbouring
    cells summed in groups (the axis title says how many)."""
    names = list(series)
    if not names:
        return empty_figure("no counts to show")
    ref = reference if reference in series else next((n for n in names if is_owner(n)), None)
    stages = [n for n in names if n != ref] or [ref]
    if stages == [ref]:
        ref = None
    raw = {n: np.asarray(series[n], dtype=float).ravel() for n in names}
    size = max(v.size for v in raw.values())
    f = max(1, math.ceil(size / max_cells))

    def agg(c):
        if f == 1:
            return c
        return np.concatenate([c, np.zeros((-c.size) % f)]).reshape(-1, f).sum(axis=1)

    drawn = {n: agg(v) for n, v in raw.items()}
    allv = np.concatenate(list(drawn.values()))
    lo_y, hi_y = min(0.0, float(np.nanmin(allv))), max(1.0, float(np.nanmax(allv)))
    yrange = [lo_y - 0.05 * (hi_y - lo_y), hi_y + 0.05 * (hi_y - lo_y)]  # one explicit range: comparable panels
    k = len(stages)
    lines = 2 if ref is not None else 1
    height = 110 + (125 + 14 * lines) * k
    top = top_margin(title, note, lines)
    gap = (30 + 18 * lines) / max(height - top - 60, 1)
    dom = panel_grid(k, 1, vgap=gap)
    lay = figure_layout(title=title, note=note, height=height, panel_titles=lines, margin=dict(l=70))
    traces, ann = [], []
    many = size > 64 * f
    unit = "count" if f == 1 else f"count per {f} cells"
    ref_short = (ref or "").split("(")[0].strip() or "reference"
    for i, name in enumerate(stages):
        xk, yk, xr, yr = axis_keys(i)
        c = drawn[name]
        x = np.arange(c.size + 1) * f
        color, dash, owner = style_of(name, i)
        traces.append(go.Scatter(x=x, y=f32(np.r_[c, c[-1:]]), mode="lines", name=name, xaxis=xr, yaxis=yr,
                                 line=dict(color=color, width=1.4, shape="hv", dash=dash), fill="tozeroy",
                                 fillcolor=rgba(color, 0.18),
                                 hovertemplate=f"<b>{name}</b><br>cell %{{x}}<br>{unit} %{{y:.4g}}<extra></extra>"))
        head = f"<b>{name}</b>"
        sub = f"total {raw[name].sum():,.0f}"
        if ref is not None:
            r = drawn[ref]
            traces.append(go.Scatter(x=x, y=f32(np.r_[r, r[-1:]]), mode="lines" if many else "lines+markers",
                                     name=ref, legendgroup=ref, showlegend=i == 0, xaxis=xr, yaxis=yr, legendrank=1,
                                     line=dict(color="#262626", width=1.6, dash="dot", shape="hv"),
                                     marker=dict(size=4, color="#262626"),
                                     hovertemplate=f"<b>{ref}</b><br>cell %{{x}}<br>{unit} %{{y:.4g}}<extra></extra>"))
            err = float(np.abs(raw[name] - raw[ref]).sum()) if raw[name].size == raw[ref].size else float("nan")
            sub += f" ({ref_short}: {raw[ref].sum():,.0f}) · error Σ|{name.split('(')[0].strip()} − {ref_short}| " \
                   f"= {err:,.0f}"
        ann.append(panel_title(two_lines(head, sub) if ref is not None else f"{head}: {sub}", 0, 1, dom[i][1][1],
                               color=color if not owner else None))
        lay[xk] = axis_spec(domain=[0, 1], anchor=yr, showticklabels=i == k - 1, range=[0, c.size * f],
                            title=(f"cell at this level, in tree order (neighbouring cells summed in groups of {f} "
                                   "for drawing)" if f > 1 else "cell at this level, in tree order")
                            if i == k - 1 else None, **({"matches": "x"} if i else {}))
        lay[yk] = axis_spec(domain=dom[i][1], anchor=xr, title=unit if i == k // 2 else None, nticks=4,
                            zeroline=True, zerolinecolor="#404040", zerolinewidth=1, range=yrange,
                            **({"matches": "y"} if i else {}))
    lay["annotations"] = ann
    return go.Figure(data=traces, layout=lay)


def sigma_levels(sigma: np.ndarray, *, title: str = "", extra: Mapping[str, np.ndarray] | None = None,
                 name: str = "noise scale per count", note: str | None = None) -> go.Figure:
    """Noise scale per tree level (bars, left log axis); ``extra`` series (e.g. the budget each
    level spends) as lines on a second log axis on the right. NaN levels (e.g. an exact root) are
    left empty."""
    sigma = np.asarray(sigma, dtype=float)
    lv = np.arange(sigma.size)
    traces = [go.Bar(x=lv, y=sigma, name=name, marker=dict(color=COLORS["noisy"], opacity=0.85),
                     hovertemplate=f"<b>{name}</b><br>level %{{x}}<br>%{{y:.4g}}<extra></extra>")]
    extra = {k: np.asarray(v, dtype=float) for k, v in (extra or {}).items() if len(v)}
    for i, (k, v) in enumerate(extra.items()):
        traces.append(go.Scatter(x=np.arange(v.size), y=v, name=k, mode="lines+markers", yaxis="y2",
                                 line=dict(color=GROUP_COLORS[i % len(GROUP_COLORS)], width=2),
                                 marker=dict(size=6, symbol=GROUP_SYMBOLS[i % 8]),
                                 hovertemplate=f"<b>{k}</b><br>level %{{x}}<br>%{{y:.4g}}<extra></extra>"))
    lay = figure_layout(title=title, note=note, margin=dict(r=70 if extra else 20), bargap=0.25)
    lay["xaxis"] = axis_spec(title="tree level (0 = the whole cube; deeper levels = smaller cells)", dtick=1 if
                             sigma.size <= 24 else None, range=[-0.6, max(sigma.size, 1) - 0.4])
    lay["yaxis"] = axis_spec(title=name, **log_axis(sigma))
    if extra:
        lay["yaxis2"] = axis_spec(title=", ".join(extra), overlaying="y", side="right", showgrid=False,
                                  **log_axis(*extra.values()))
    return go.Figure(data=traces, layout=lay)
