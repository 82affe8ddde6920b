"""Plotly figure builders for the dashboard: pure functions, data in, ``go.Figure`` out.

No Streamlit here and no mechanism math: every function draws arrays it is given (a release's
``trace``, a sweep's DataFrame, ...). Coordinates are in the domain's units unless a function says
"unit cube". Large point sets are thinned for drawing only (at most :data:`MAX_POINTS` per panel,
a fixed-seed subset), so the same data give the same picture.

Conventions shared by every figure (a teaching tool: the same meaning looks the same everywhere):

* One colour-blind-safe palette (Okabe–Ito), :data:`COLORS`: real data / true values grey,
  synthetic data vermillion, noisy orange, clipped purple, consistent / projected green,
  superregular noise blue, i.i.d. noise reddish purple, PE variations sky blue. Signed quantities use the
  red–blue scale (blue positive, red negative) with 0 in the middle.
* **Owner view** (computed from the real data without noise, not private): grey, dotted lines,
  faint markers, and a dotted frame around owner-only panels. A series counts as owner view when
  its caller-given name contains "owner", "true", "real", "private data" or "not private";
  its colour comes from the other words of the name ("noisy", "clipped", "consistent",
  "projected", "synthetic", "i.i.d.", "superregular"). Figures take an optional ``note``: a short
  caption under the title (e.g. which layers are owner view).
* Reference curves (caller-given bounds, envelopes, fits) are black or dark brown, each with its
  own dash pattern, and named in the legend with the caller's names: nothing here calls a number
  a bound unless the caller does.
* Legends sit below the plot (they never cover panel titles or data); every log axis carries at
  least three labelled ticks; scatter axes span the public bounds, on one scale only when both
  axes have the same bounds (the axis title says which).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go

__all__ = [
    "COLORS",
    "GROUP_COLORS",
    "TERM_COLORS",
    "LABEL_COLORS",
    "REFERENCE_STYLES",
    "MAX_POINTS",
    "FIGURE_POINTS",
    "MAX_TREE_LEVEL",
    "is_owner",
    "thin",
    "scatter_data",
    "scatter_compare",
    "draws_grid",
    "kr_duality",
    "icicle_tree",
    "cell_map",
    "level_counts",
    "sigma_levels",
    "signed_grid",
    "grid_measures",
    "haar_basis",
    "partial_sum_paths",
    "grid_path",
    "line_cdfs",
    "marginal_heatmaps",
    "certificate_bar",
    "loss_vs_certificate",
    "pe_iteration",
    "series_plot",
    "pca_3d",
    "spectrum",
    "angles_plot",
    "digit_images",
    "rates_loglog",
    "compare_bars",
    "audit_band",
    "pe_animation",
    "empty_figure",
]

#: Okabe–Ito colours by meaning (colour-blind safe). "real", "true", "private" and "owner" are the
#: owner view (grey); "bound" / "reference" are caller-given reference curves.
COLORS = {"real": "#595959", "true": "#595959", "private": "#595959", "owner": "#595959",
          "synthetic": "#D55E00", "noisy": "#E69F00", "clipped": "#CC79A7", "consistent": "#009E73",
          "projected": "#009E73", "superregular": "#0072B2", "iid": "#CC79A7", "variation": "#56B4E9",
          "bound": "#000000", "reference": "#000000", "positive": "#2166AC", "negative": "#B2182B"}
#: Colours for groups without a meaning of their own (mechanisms, ε values, terms): Okabe–Ito.
GROUP_COLORS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442")
#: Segments of one total (certificate terms): shades of blue, none of them a meaning colour.
TERM_COLORS = ("#0072B2", "#56B4E9", "#A6CEE3", "#1F4E79", "#6BAED6")
#: Labels of the data (classes): Paul Tol's "muted" scheme, colour-blind safe and apart from the
#: meaning colours, so a class never looks like "synthetic" or "noisy".
LABEL_COLORS = ("#332288", "#88CCEE", "#44AA99", "#117733", "#999933", "#DDCC77", "#CC6677", "#882255",
                "#AA4499")
GROUP_SYMBOLS = ("circle", "square", "diamond", "triangle-up", "cross", "triangle-down", "star", "x")
#: Reference curves: (colour, dash), every one different.
REFERENCE_STYLES = (("#000000", "dash"), ("#8C510A", "dashdot"), ("#000000", "longdashdot"),
                    ("#8C510A", "longdash"), ("#000000", "dot"))
#: At most this many points per panel are drawn (a fixed-seed subset) ...
MAX_POINTS = 2000
#: ... and about this many per figure: SVG scatter costs ~0.1–0.3 ms per point in headless Chromium on
#: two busy cores, and WebGL (software) only pays off above ~3000 points, so figures stay below that.
FIGURE_POINTS = 2400

_SIGNED = "RdBu"  # plotly's RdBu: red = low (negative), blue = high (positive)
_SCENE_AXIS = dict(backgroundcolor="white", gridcolor="#DFE8F3", linecolor="#EBF0F8", showbackground=True,
                   zerolinecolor="#EBF0F8")
#: A small template (white background, light grid). Plotly's named templates are deep-copied and
#: validated on every figure (~50 ms each, ~70% of a small figure's build time); this one is not.
_TEMPLATE = dict(layout=dict(paper_bgcolor="white", plot_bgcolor="white", colorway=list(GROUP_COLORS),
                             hoverlabel=dict(align="left"),
                             xaxis=dict(gridcolor="#EBF0F8", linecolor="#EBF0F8", zerolinecolor="#EBF0F8",
                                        automargin=True, title=dict(standoff=12)),
                             yaxis=dict(gridcolor="#EBF0F8", linecolor="#EBF0F8", zerolinecolor="#EBF0F8",
                                        automargin=True, title=dict(standoff=12)),
                             scene=dict(xaxis=_SCENE_AXIS, yaxis=_SCENE_AXIS, zaxis=_SCENE_AXIS)))
_GRID = "#E5E5E5"
_FONT = dict(family="Source Sans Pro, Arial, sans-serif", size=13, color="#262730")
_OWNER_WORDS = ("owner", "true", "real", "private data", "not private", "non-private")
_MEANING_WORDS = (("iid", ("i.i.d", "iid", "independent")), ("superregular", ("superregular", "haar")),
                  ("noisy", ("noisy", "signed", "noise")), ("clipped", ("clipped", "clip")),
                  ("consistent", ("consistent", "projected", "projection")), ("synthetic", ("synthetic",)),
                  ("real", _OWNER_WORDS))


# ------------------------------------------------------------------------------------ helpers
def is_owner(name: str) -> bool:
    """True when a caller-given series name marks it as owner view (not private)."""
    low = str(name).lower()
    return any(w in low for w in _OWNER_WORDS)


def _meaning(name: str) -> str | None:
    low = str(name).lower()
    for key, words in _MEANING_WORDS:
        if any(w in low for w in words):
            return key
    return None


def _style(name: str, i: int = 0) -> tuple[str, str, bool]:
    """(colour, dash, owner) for a series named by the caller; i picks a group colour otherwise."""
    key = _meaning(name)
    owner = is_owner(name)
    color = COLORS[key] if key else GROUP_COLORS[i % len(GROUP_COLORS)]
    return color, "dot" if owner else "solid", owner


def _styles(names: Sequence[str]) -> list[tuple[str, str, bool]]:
    """Styles for the series of one figure: meaning colours from the names; series without a
    meaning get group colours not already used by a meaning in this figure."""
    used = {COLORS[k] for k in (_meaning(n) for n in names) if k}
    free = [c for c in GROUP_COLORS if c not in used] or list(GROUP_COLORS)
    out, j = [], 0
    for n in names:
        c, dash, owner = _style(n)
        if _meaning(n) is None:
            c = free[j % len(free)]
            j += 1
        out.append((c, dash, owner))
    return out


def _f32(a) -> np.ndarray:
    """Drawing precision: float32 halves the figure's JSON (7 significant digits are plenty)."""
    return np.asarray(a, dtype=np.float32)


def _fmt(v: float) -> str:
    if v == 0 or not np.isfinite(v):
        return f"{v:g}"
    a = abs(v)
    if a >= 1e6 or a < 1e-3:
        m, e = f"{v:.0e}".split("e")
        return f"{m}e{int(e)}"
    if a >= 1000:
        return f"{v:,.0f}"
    return f"{v:g}"


def _log_axis(*values, min_ticks: int = 3) -> dict:
    """A log axis over the positive finite values given: explicit range and at least ``min_ticks``
    labelled ticks (decades, then 1-3, 1-2-5, ... per decade; short ranges are widened to a
    factor 4 so that 1..9 per decade always gives three)."""
    parts = [np.asarray(v, dtype=float).ravel() for v in values if v is not None]
    v = np.concatenate(parts) if parts else np.empty(0)
    v = v[np.isfinite(v) & (v > 0)]
    if v.size == 0:
        return dict(type="log")
    llo, lhi = math.log10(float(v.min())), math.log10(float(v.max()))
    if lhi - llo < math.log10(4.0):
        mid = (llo + lhi) / 2
        llo, lhi = mid - math.log10(4.0) / 2, mid + math.log10(4.0) / 2
    pad = 0.06 * (lhi - llo)
    llo, lhi = llo - pad, lhi + pad
    ticks: list[float] = []
    for mant in ((1,), (1, 3), (1, 2, 5), (1, 2, 3, 5, 7), tuple(range(1, 10))):
        ticks = [m * 10.0 ** e for e in range(math.floor(llo) - 1, math.ceil(lhi) + 1) for m in mant
                 if llo <= math.log10(m * 10.0 ** e) <= lhi]
        if len(ticks) >= min_ticks:
            break
    if len(ticks) > 9:  # many decades: every k-th decade
        ticks = ticks[::math.ceil(len(ticks) / 8)]
    return dict(type="log", range=[llo, lhi], tickvals=ticks, ticktext=[_fmt(t) for t in ticks])


def _axis(**kw) -> dict:
    base = dict(gridcolor=_GRID, zeroline=False, zerolinecolor="#BDBDBD", automargin=True, ticks="outside", ticklen=3,
                tickcolor="#BDBDBD", title=dict(font=dict(size=13)))
    if "title" in kw and not isinstance(kw["title"], dict):
        kw["title"] = dict(text=kw["title"], font=dict(size=13))
    return {**base, **kw}


def _title(title: str, note: str | None) -> dict:
    out = dict(text=title or "", x=0, xref="paper", xanchor="left", y=1, yref="container", yanchor="top",
               pad=dict(t=10), font=dict(size=16))
    if note:
        out["subtitle"] = dict(text=note, font=dict(size=12, color="#595959"))
    return out


def _top(title: str, note: str | None, panel_titles: int = 0) -> int:
    """Top margin in px: the title, the note under it and ``panel_titles`` lines of panel headings."""
    return 14 + (26 if title else 0) + (20 if note else 0) + 18 * int(panel_titles) + (6 if panel_titles else 0) \
        + (0 if title or note or panel_titles else 6)


def _layout(*, title: str = "", note: str | None = None, height: int = 420, panel_titles: int = 0,
            legend: bool = True, margin: dict | None = None, **kw) -> dict:
    m = dict(l=60, r=20, t=_top(title, note, panel_titles), b=50)
    m.update(margin or {})
    out = dict(template=_TEMPLATE, font=_FONT, height=height, margin=m, title=_title(title, note),
               hoverlabel=dict(namelength=-1), showlegend=legend,
               legend=dict(orientation="h", x=0, xanchor="left", y=0, yanchor="bottom", yref="container",
                           bgcolor="rgba(255,255,255,0)", font=dict(size=12), itemsizing="constant"))
    out.update(kw)
    return out


def _panel_title(text: str, x0: float, x1: float, y1: float, *, owner: bool = False, color: str | None = None,
                 align: str = "left", panel: int | None = None) -> dict:
    """A panel heading just above the panel. With ``panel`` it is placed on that panel's axes
    domain (which follows a square panel shrunk by ``constrain``), else on the paper coordinates."""
    out = dict(text=text, x=x0 if align == "left" else (x0 + x1) / 2, xanchor=align if align == "left" else "center",
               y=y1, yanchor="bottom", xref="paper", yref="paper", yshift=3, showarrow=False, align=align,
               font=dict(size=13, color=color or ("#595959" if owner else "#262730")))
    if panel is not None:
        _, _, xr, yr = _ax(panel)
        out.update(xref=f"{xr} domain", yref=f"{yr} domain", x=0 if align == "left" else 0.5, y=1)
    return out


def _two_lines(head: str, sub: str) -> str:
    return f"{head}<br><span style='font-size:11px;color:#595959'>{sub}</span>" if sub else head


def _grid(n: int, cols: int, *, hgap: float = 0.05, vgap: float = 0.14) -> list[tuple[list[float], list[float]]]:
    """Equal panel domains (x, y) for n panels in rows of ``cols``, top to bottom, left to right."""
    rows = max(1, math.ceil(n / cols))
    w = math.floor((1.0 - (cols - 1) * hgap) / cols * 1e6) / 1e6  # whole millionths: equal widths exactly
    h = math.floor((1.0 - (rows - 1) * vgap) / rows * 1e6) / 1e6
    out = []
    for i in range(n):
        r, c = divmod(i, cols)
        x0 = round(c * (w + hgap), 6)
        y0 = round(1.0 - r * (h + vgap) - h, 6)
        out.append(([x0, round(x0 + w, 6)], [max(0.0, y0), round(max(0.0, y0) + h, 6)]))
    return out


def _ax(i: int) -> tuple[str, str, str, str]:
    """Layout keys and trace references of the i-th panel's axes: ('xaxis2', 'yaxis2', 'x2', 'y2')."""
    s = "" if i == 0 else str(i + 1)
    return f"xaxis{s}", f"yaxis{s}", f"x{s}", f"y{s}"


def _hover(label: str, xname: str, yname: str) -> str:
    return f"<b>{label}</b><br>{xname} = %{{x:.4g}}<br>{yname} = %{{y:.4g}}<extra></extra>"


def _pts(X: np.ndarray, axes: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    if X.ndim == 1:
        X = X[:, None]
    if X.shape[1] == 1:
        return X[:, 0], np.zeros(X.shape[0])
    return X[:, axes[0]], X[:, axes[1]]


def _as_points(X) -> np.ndarray:
    """(rows, d) float array; empty input → shape (0, 1)."""
    X = np.asarray(X if X is not None else [], dtype=float)
    if X.size == 0:
        return X.reshape(0, max(1, X.shape[1] if X.ndim == 2 else 1))
    return X.reshape(-1, 1) if X.ndim == 1 else X


def _bounds2(lower, upper, axes: tuple[int, int]):
    """((x_lo, y_lo), (x_hi, y_hi)) of the drawn axes, or None without public bounds."""
    if lower is None or upper is None:
        return None
    lo, hi = np.asarray(lower, dtype=float).ravel(), np.asarray(upper, dtype=float).ravel()
    if lo.size < 2:
        return None
    return (lo[axes[0]], lo[axes[1]]), (hi[axes[0]], hi[axes[1]])


def _same_scale(b) -> bool:
    return b is not None and math.isclose(b[0][0], b[0][1]) and math.isclose(b[1][0], b[1][1])


def _span(lo: float, hi: float, pad: float = 0.03) -> list[float]:
    w = hi - lo if hi > lo else max(abs(lo), 1.0)
    return [lo - pad * w, hi + pad * w]


def _scale_note(same: bool) -> str:
    return ("<br><span style='font-size:11px;color:#595959'>" +
            ("both axes on the same scale" if same else "each axis spans its own public bounds (own scale)") +
            "</span>")


def _scatter_axes(layout: dict, i: int, b, xname: str, yname: str, *, titles: bool = True,
                  xtitle: bool = True, ytitle: bool = True, tick_x: bool = True, tick_y: bool = True,
                  note: bool = True, public: bool = True) -> None:
    """Axes of scatter panel i: each axis spans its public bounds; one scale only for equal bounds.
    ``public=False``: ``b`` is only the data's range (no scale note, no common scale)."""
    xk, yk, xr, _ = _ax(i)
    same = public and _same_scale(b)
    xa = layout.setdefault(xk, {})
    ya = layout.setdefault(yk, {})
    xa.update(_axis(showticklabels=tick_x, nticks=6))
    ya.update(_axis(showticklabels=tick_y, nticks=6))
    if titles and xtitle:
        xa["title"] = dict(text=xname + (_scale_note(same) if note and public and b is not None else ""),
                           font=dict(size=13))
    if titles and ytitle:
        ya["title"] = dict(text=yname, font=dict(size=13))
    if b is not None:
        xa["range"] = _span(b[0][0], b[1][0])
        ya["range"] = _span(b[0][1], b[1][1])
        if same:
            ya.update(scaleanchor=xr, scaleratio=1, constrain="domain")
            xa["constrain"] = "domain"


def _box_shape(b, i: int = 0, *, owner: bool = False) -> dict:
    _, _, xr, yr = _ax(i)
    return dict(type="rect", xref=xr, yref=yr, x0=b[0][0], x1=b[1][0], y0=b[0][1], y1=b[1][1], layer="below",
                line=dict(color="#9E9E9E" if not owner else "#595959", dash="dot", width=1))


def _frame(i: int, x=(0, 1), y=(0, 1)) -> dict:
    """A grey dotted frame around panel i (data coordinates): marks an owner-view panel."""
    _, _, xr, yr = _ax(i)
    return dict(type="rect", xref=f"{xr} domain", yref=f"{yr} domain", x0=0, x1=1, y0=0, y1=1,
                line=dict(color="#595959", dash="dot", width=1.5), layer="above")


def _hist(z: np.ndarray, edges: np.ndarray, density: bool = True) -> np.ndarray:
    h, _ = np.histogram(z, edges)
    if density and z.size:
        h = h / (z.size * np.diff(edges))
    return h


def _decimate(x: np.ndarray, y: np.ndarray, max_points: int) -> tuple[np.ndarray, np.ndarray]:
    """At most ~``max_points`` points of a line, keeping each bucket's first, lowest, highest and
    last point (the line's envelope and steps survive at screen resolution)."""
    n = y.size
    if n <= max_points:
        return x, y
    buckets = max(1, max_points // 4)
    edges = np.linspace(0, n, buckets + 1).astype(int)
    starts = edges[:-1]
    lo = np.minimum.reduceat(y, starts)
    hi = np.maximum.reduceat(y, starts)
    # positions of each bucket's min and max: argmin per bucket via a sort-free trick
    seg = np.repeat(np.arange(buckets), np.diff(edges))
    is_min = y == lo[seg]
    is_max = y == hi[seg]
    keep = np.zeros(n, dtype=bool)
    keep[starts] = True
    keep[edges[1:] - 1] = True
    first_min = np.zeros(n, dtype=bool)
    first_max = np.zeros(n, dtype=bool)
    idx = np.flatnonzero(is_min)
    first_min[idx[np.r_[True, seg[idx][1:] != seg[idx][:-1]]]] = True
    idx = np.flatnonzero(is_max)
    first_max[idx[np.r_[True, seg[idx][1:] != seg[idx][:-1]]]] = True
    keep |= first_min | first_max
    return x[keep], y[keep]


def _join(rows_x: Sequence[np.ndarray], rows_y: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Several lines as one trace: NaN between them (one trace draws far faster than many)."""
    xs, ys = [], []
    for x, y in zip(rows_x, rows_y, strict=True):
        xs += [x, [np.nan]]
        ys += [y, [np.nan]]
    if not xs:
        return np.empty(0), np.empty(0)
    return np.concatenate(xs[:-1]), np.concatenate(ys[:-1])


def _empty_panel_note(i: int, text: str) -> dict:
    _, _, xr, yr = _ax(i)
    return dict(text=text, x=0.5, y=0.5, xref=f"{xr} domain", yref=f"{yr} domain", showarrow=False,
                font=dict(size=13, color="#595959"))


def empty_figure(message: str) -> go.Figure:
    """A small figure that only says ``message`` (nothing to draw)."""
    lay = _layout(height=200, legend=False, margin=dict(l=10, r=10, t=10, b=10))
    lay.update(xaxis=dict(visible=False), yaxis=dict(visible=False),
               annotations=[dict(text=message, showarrow=False, x=0.5, y=0.5, xref="paper", yref="paper",
                                 font=dict(size=14, color="#595959"))])
    return go.Figure(layout=lay)


def thin(X: np.ndarray, max_points: int = 2500, seed: int = 0) -> np.ndarray:
    """At most ``max_points`` rows of X (a fixed-seed random subset, for drawing only)."""
    X = np.asarray(X)
    if X.shape[0] <= max_points:
        return X
    idx = np.random.default_rng(seed).choice(X.shape[0], max_points, replace=False)
    return X[np.sort(idx)]


def _thin_idx(n: int, max_points: int, seed: int = 0) -> np.ndarray:
    if n <= max_points:
        return np.arange(n)
    return np.sort(np.random.default_rng(seed).choice(n, max_points, replace=False))


# ------------------------------------------------------------------------------ data scatters
def _hist_traces(panels: Sequence[tuple[str, np.ndarray]], edges: np.ndarray, xname: str, *,
                 density: bool = True) -> list[go.Bar | go.Scatter]:
    """1-D data as histograms on shared bins: owner layers as a grey dotted outline, DP layers as bars."""
    mid = (edges[:-1] + edges[1:]) / 2
    out = []
    what = "density" if density else "count"
    for (name, z), (color, _, owner) in zip(panels, _styles([p[0] for p in panels]), strict=True):
        h = _hist(z, edges, density)
        hov = f"<b>{name}</b><br>{xname} ≈ %{{x:.4g}}<br>{what} %{{y:.4g}}<extra></extra>"
        if owner:
            out.append(go.Scatter(x=_f32(np.r_[edges[0], edges]), y=_f32(np.r_[0, h, 0]), mode="lines", name=name,
                                  line=dict(color="#262626", dash="dot", width=2, shape="hv"), hovertemplate=hov,
                                  legendrank=1))
        else:
            out.append(go.Bar(x=_f32(mid), y=_f32(h), width=float(edges[1] - edges[0]), name=name,
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
                 max_points: int = MAX_POINTS, label_name: str = "data", note: str | None = None) -> go.Figure:
    """The dataset: a scatter of two coordinates (a histogram when d = 1), the public box dotted.

    Each axis spans its own public bounds unless both axes have the same bounds (then one scale);
    the x-axis title says which. With ``labels`` the points are coloured by label (at most 12)."""
    X = _as_points(X)
    if X.shape[1] == 1:
        edges = _edges_1d(lower, upper, X[:, 0])
        h = _hist(X[:, 0], edges, density=False)
        traces = [go.Bar(x=_f32((edges[:-1] + edges[1:]) / 2), y=h, width=float(edges[1] - edges[0]), name=label_name,
                         marker=dict(color=COLORS["real"], opacity=0.7, line=dict(width=0)),
                         hovertemplate=f"{names[0]} ≈ %{{x:.4g}}<br>%{{y}} rows<extra></extra>")]
        lay = _layout(title=title, note=note, legend=False, bargap=0.02,
                      xaxis=_axis(title=names[0], range=[edges[0], edges[-1]]), yaxis=_axis(title="number of rows"))
        return go.Figure(data=traces, layout=lay)
    idx = _thin_idx(X.shape[0], max_points)
    x, y = X[idx, axes[0]], X[idx, axes[1]]
    xn, yn = names[axes[0]], names[axes[1]]
    traces = []
    if labels is not None and len(labels) == X.shape[0]:
        lab = np.asarray(labels)[idx]
        for i, v in enumerate(np.unique(lab)[:12]):
            m = lab == v
            traces.append(go.Scatter(x=_f32(x[m]), y=_f32(y[m]), mode="markers", name=str(v),
                                     marker=dict(size=4, opacity=0.65, color=LABEL_COLORS[i % len(LABEL_COLORS)],
                                                 symbol=GROUP_SYMBOLS[(i // len(LABEL_COLORS)) % 8]),
                                     hovertemplate=_hover(f"row with label {v}", xn, yn)))
    else:
        traces.append(go.Scatter(x=_f32(x), y=_f32(y), mode="markers", name=label_name,
                                 marker=dict(size=4, opacity=0.5, color=COLORS["real"]),
                                 hovertemplate=_hover("a row of the data", xn, yn)))
    b = _bounds2(lower, upper, axes)
    lay = _layout(title=title, note=note, legend=len(traces) > 1)
    lay["legend"]["title"] = dict(text="label ")
    _scatter_axes(lay, 0, b, xn, yn)
    if b is not None:
        lay["shapes"] = [_box_shape(b)]
    return go.Figure(data=traces, layout=lay)


def scatter_compare(X: np.ndarray, Y: np.ndarray, names: Sequence[str], *, lower=None, upper=None,
                    axes: tuple[int, int] = (0, 1), max_points: int = FIGURE_POINTS // 2,
                    titles: tuple[str, str] = ("real data (owner view)", "synthetic data (DP)"),
                    title: str = "", note: str | None = None) -> go.Figure:
    """Real and synthetic data side by side on the same axes (overlaid histograms when d = 1).
    The real panel is the owner view: grey points in a dotted frame."""
    X, Y = _as_points(X), _as_points(Y)
    if X.shape[1] == 1:
        edges = _edges_1d(lower, upper, X[:, 0], Y[:, 0])
        traces = _hist_traces([(titles[1], Y[:, 0]), (titles[0], X[:, 0])], edges, names[0])  # outline on top
        lay = _layout(title=title or "real and synthetic data", note=note, barmode="overlay", bargap=0.02,
                      xaxis=_axis(title=names[0], range=[edges[0], edges[-1]]),
                      yaxis=_axis(title="density (share of rows per unit)"))
        return go.Figure(data=traces, layout=lay)
    b = _bounds2(lower, upper, axes)
    public = b is not None
    if b is None:  # shared ranges from both sets
        Z = np.concatenate([X[:, list(axes)], Y[:, list(axes)]]) if Y.shape[1] > 1 else X[:, list(axes)]
        if Z.size:
            b = ((Z[:, 0].min(), Z[:, 1].min()), (Z[:, 0].max(), Z[:, 1].max()))
    lay = _layout(title=title, note=note, panel_titles=2, legend=False)
    dom = _grid(2, 2, hgap=0.07)
    traces, shapes, ann = [], [], []
    for i, (Z, name, key) in enumerate(((X, titles[0], "real"), (Y, titles[1], "synthetic"))):
        xk, yk, xr, yr = _ax(i)
        owner = is_owner(name) or key == "real"
        Zt = Z[_thin_idx(Z.shape[0], max_points, seed=i + 1)]
        x, y = _pts(Zt, axes)
        traces.append(go.Scatter(x=_f32(x), y=_f32(y), mode="markers", name=name, xaxis=xr, yaxis=yr,
                                 marker=dict(size=3.5, opacity=0.45 if owner else 0.55,
                                             color=COLORS["real"] if owner else COLORS[key]),
                                 hovertemplate=_hover(f"{'real' if owner else 'synthetic'} point", names[axes[0]],
                                                      names[axes[1]])))
        _scatter_axes(lay, i, b, names[axes[0]], names[axes[1]], ytitle=i == 0, tick_y=True, note=i == 0,
                      public=public)
        lay[xk]["domain"], lay[yk]["domain"] = dom[i]
        lay[xk]["anchor"], lay[yk]["anchor"] = f"y{'' if i == 0 else i + 1}", xr
        if i == 1 and b is not None:
            lay[xk]["matches"], lay[yk]["matches"] = "x", "y"
        if public:
            shapes.append(_box_shape(b, i))
        if owner:
            shapes.append(_frame(i))
        sub = f"{Z.shape[0]:,} rows" + (f", {Zt.shape[0]:,} drawn" if Zt.shape[0] < Z.shape[0] else "")
        ann.append(_panel_title(_two_lines(f"<b>{name}</b>", sub), *dom[i][0], dom[i][1][1], owner=owner,
                                color=None if owner else COLORS[key]))
        if Z.shape[0] == 0:
            ann.append(_empty_panel_note(i, "no points"))
    lay.update(shapes=shapes, annotations=ann)
    return go.Figure(data=traces, layout=lay)


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
    Ds = [_as_points(D) for D in draws]
    d = max([D.shape[1] for D in Ds] + [_as_points(X).shape[1]])
    b = _bounds2(lower, upper, (0, 1)) if d > 1 else None
    public = b is not None
    if b is None and d > 1:
        pool = [D[:, :2] for D in Ds if D.shape[0] and D.shape[1] > 1] + [_as_points(X)[:, :2]]
        Z = np.concatenate([p for p in pool if p.shape[0] and p.shape[1] == 2] or [np.zeros((1, 2))])
        b = ((Z[:, 0].min(), Z[:, 1].min()), (Z[:, 0].max(), Z[:, 1].max()))
    row_px = 250
    height = row_px * rows + 70 + _top(title, note, 2)
    vgap = 90 / max(height - 120, 1) if rows > 1 else 0.0
    dom = _grid(k, cols, hgap=0.035 if cols > 1 else 0.0, vgap=vgap)
    lay = _layout(title=title, note=note, height=height, panel_titles=2, legend=False,
                  margin=dict(l=60, r=20, b=60))
    traces, shapes, ann = [], [], []
    edges = _edges_1d(lower, upper, *[D[:, 0] for D in Ds]) if d == 1 else None
    hmax = 0.0
    for i, D in enumerate(Ds):
        xk, yk, xr, yr = _ax(i)
        r, c = divmod(i, cols)
        last_row = r == rows - 1 or i + cols >= k
        name = titles[i] if titles is not None and i < len(titles) else f"release {i + 1}"
        w = w1s[i] if i < len(w1s) else None
        head = _two_lines(name, f"W1 = {w:.3g}" if w is not None and np.isfinite(w) else "")
        if d == 1:
            h = _hist(D[:, 0], edges)
            hmax = max(hmax, float(h.max()) if h.size else 0.0)
            traces.append(go.Bar(x=_f32((edges[:-1] + edges[1:]) / 2), y=_f32(h), width=float(edges[1] - edges[0]),
                                 xaxis=xr, yaxis=yr, name=name, marker=dict(color=COLORS["synthetic"], opacity=0.7),
                                 hovertemplate=f"<b>{name}</b><br>{names[0]} ≈ %{{x:.4g}}<br>density %{{y:.4g}}"
                                               "<extra></extra>"))
            lay[xk] = _axis(title=names[0] if last_row and c == 0 else None, showticklabels=last_row,
                            range=[edges[0], edges[-1]], nticks=5)
            lay[yk] = _axis(title="density" if c == 0 else None, showticklabels=c == 0, nticks=5)
        else:
            Dt = D[_thin_idx(D.shape[0], min(max_points, max(300, FIGURE_POINTS // k)), seed=i)]
            x, y = _pts(Dt, (0, 1))
            traces.append(go.Scatter(x=_f32(x), y=_f32(y), mode="markers", xaxis=xr, yaxis=yr, name=name,
                                     marker=dict(size=2.5, opacity=0.55, color=COLORS["synthetic"]),
                                     hovertemplate=_hover(f"synthetic point ({name})", names[0], names[1])))
            _scatter_axes(lay, i, b, names[0], names[1], xtitle=last_row and c == 0, ytitle=c == 0,
                          tick_x=last_row, tick_y=c == 0, public=public)
            lay[xk]["nticks"] = lay[yk]["nticks"] = 5
            if public:
                shapes.append(_box_shape(b, i))
        lay[xk]["domain"], lay[yk]["domain"] = dom[i]
        lay[xk]["anchor"], lay[yk]["anchor"] = yr, xr
        if i > 0:
            lay[xk]["matches"], lay[yk]["matches"] = "x", "y"
        ann.append(_panel_title(head, *dom[i][0], dom[i][1][1], color="#262730", align="center"))
        if D.shape[0] == 0:
            ann.append(_empty_panel_note(i, "no points"))
    if d == 1:
        for i in range(k):
            lay[_ax(i)[1]]["range"] = [0, hmax * 1.05 if hmax > 0 else 1]
    lay.update(shapes=shapes, annotations=ann)
    return go.Figure(data=traces, layout=lay)


# -------------------------------------------------------------------------------------- home
def kr_duality(a: np.ndarray, b: np.ndarray, *, bins: int = 80,
               labels: tuple[str, str] = ("μ (real)", "ν (synthetic)"), title: str = "",
               note: str | None = None) -> go.Figure:
    """Kantorovich–Rubinstein duality in one picture (1-D, on [0, 1]).

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
    mid = (edges[:-1] + edges[1:]) / 2
    (ca, _, oa), (cb, _, ob) = _style(labels[0], 0), _style(labels[1], 1)
    traces = []
    for z, name, color in ((a, labels[0], ca), (b, labels[1], cb)):
        traces.append(go.Bar(x=_f32(mid), y=_f32(_hist(z, edges)), width=1 / bins, name=name, opacity=0.55,
                             marker=dict(color=color, line=dict(width=0)), legendgroup=name,
                             hovertemplate=f"<b>{name}</b><br>x ≈ %{{x:.3f}}<br>density %{{y:.3g}}<extra></extra>"))
    traces.append(go.Scatter(x=_f32(grid), y=_f32(f - f.min()), name="test function f (slope ±1)", yaxis="y2",
                             line=dict(color="#0072B2", width=2.5),
                             hovertemplate="<b>test function f</b><br>x = %{x:.3f}<br>f(x) = %{y:.3f}<extra></extra>"))
    traces.append(go.Scatter(x=_f32(grid), y=_f32(Fa), name=labels[0], legendgroup=labels[0], showlegend=False,
                             xaxis="x", yaxis="y3", line=dict(color=ca, width=2, dash="dot" if oa else "solid"),
                             hovertemplate=f"<b>CDF of {labels[0]}</b><br>x = %{{x:.3f}}<br>%{{y:.3f}}<extra></extra>"))
    traces.append(go.Scatter(x=_f32(grid), y=_f32(Fb), name=labels[1], legendgroup=labels[1], showlegend=False,
                             xaxis="x", yaxis="y3", line=dict(color=cb, width=2, dash="dot" if ob else "solid"),
                             fill="tonexty", fillcolor="rgba(0,114,178,0.15)",
                             hovertemplate=f"<b>CDF of {labels[1]}</b><br>x = %{{x:.3f}}<br>%{{y:.3f}}<extra></extra>"))
    top, bottom = [0.58, 1.0], [0.0, 0.38]
    lay = _layout(title=title, note=note, height=600, panel_titles=2, barmode="overlay", bargap=0,
                  margin=dict(r=60))
    lay.update(xaxis=_axis(title="x (position on the line [0, 1])", anchor="y3", range=[0, 1]),
               yaxis=_axis(title="density", domain=top, anchor="x"),
               yaxis2=_axis(title="f(x)", overlaying="y", side="right", showgrid=False, anchor="x",
                            rangemode="tozero", nticks=5, tickformat=".2f"),
               yaxis3=_axis(title="CDF", domain=bottom, anchor="x", range=[-0.02, 1.05]),
               annotations=[
                   _panel_title(_two_lines("Densities and the best 1-Lipschitz test function f",
                                           f"mean of f under μ − mean of f under ν = {gain:.3f}"), 0, 1, top[1]),
                   _panel_title(_two_lines("Cumulative distribution functions",
                                           f"shaded area between them = W1 = {w1:.3f}"), 0, 1, bottom[1])])
    return go.Figure(data=traces, layout=lay)


# --------------------------------------------------------------------------------------- PMM
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
    ticktext = [f"−{_fmt(10**k)}" for k in pos[::-1]] + ["0"] + [_fmt(10**k) for k in pos]
    marker = dict(colors=_f32(z), colorscale=_SIGNED, cmid=0.0, cmin=-zmax, cmax=zmax,
                  colorbar=dict(title=dict(text="count"), tickvals=tickvals, ticktext=ticktext, thickness=12))
    common = dict(ids=ids, labels=labels, parents=parents, values=np.concatenate(values), hovertext=hover,
                  hoverinfo="text", branchvalues="total", marker=marker, textinfo="label",
                  insidetextfont=dict(size=11))
    trace = go.Sunburst(**common) if kind == "sunburst" else go.Icicle(**common, tiling=dict(orientation="v"))
    lay = _layout(title=title, note=note, height=460, legend=False, margin=dict(l=10, r=10, b=10))
    return go.Figure(data=[trace], layout=lay)


def cell_map(counts: np.ndarray, lower: np.ndarray, upper: np.ndarray, *, title: str = "",
             names: Sequence[str] = ("u0", "u1"), points: np.ndarray | None = None,
             zmid: float | None = 0.0, zmax: float | None = None, max_cells: int = 128,
             note: str | None = None) -> go.Figure:
    """The cells of one partition level in the unit square (first two axes), coloured by count.

    ``lower``/``upper`` are the cells' corners (cells × d); for d > 2 counts are summed over the
    other axes. Pass the same ``zmax`` to several maps to share one colour scale. Grids finer than
    ``max_cells`` per axis are drawn with neighbouring cells merged (summed); the title says so."""
    counts = np.asarray(counts, dtype=float)
    lo = np.asarray(lower)[:, :2]
    hi = np.asarray(upper)[:, :2]
    if lo.shape[1] == 1:  # d = 1: a bar per cell
        colors = np.where(counts < 0, COLORS["negative"], COLORS["positive"])
        lay = _layout(title=title, note=note, legend=False, bargap=0,
                      xaxis=_axis(title=f"{names[0]} (unit cube)", range=[0, 1]),
                      yaxis=_axis(title="count", range=None if zmax is None else [-zmax if zmid is not None else 0,
                                                                                 zmax]))
        return go.Figure(data=[go.Bar(x=_f32((lo[:, 0] + hi[:, 0]) / 2), y=counts, width=_f32(hi[:, 0] - lo[:, 0]),
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
    trace = go.Heatmap(x=_f32((xs[:-1] + xs[1:]) / 2), y=_f32((ys[:-1] + ys[1:]) / 2), z=_f32(Z),
                       colorscale=_SIGNED if signed else "Blues", zmid=zmid if signed else None,
                       zmin=-cmax if signed else 0, zmax=cmax,
                       colorbar=dict(title=dict(text="count"), thickness=12, len=0.85),
                       hovertemplate=f"{names[0]} = %{{x:.3f}}<br>{names[1]} = %{{y:.3f}}<br>"
                                     f"count %{{z:.4g}}{' (merged cells)' if merged else ''}<extra></extra>")
    traces = [trace]
    if points is not None and len(points):
        P = thin(np.asarray(points), 1000)
        traces.append(go.Scatter(x=_f32(P[:, 0]), y=_f32(P[:, 1]), mode="markers", name="points",
                                 marker=dict(size=2, color="black", opacity=0.35),
                                 hovertemplate=_hover("point", names[0], names[1])))
    lay = _layout(title=title, note=note if not merged else (f"{note} · {merged}" if note else merged), height=400,
                  legend=False, margin=dict(l=50, r=10, b=45))
    lay.update(xaxis=_axis(title=f"{names[0]} (unit cube)", range=[0, 1], constrain="domain", showgrid=False),
               yaxis=_axis(title=f"{names[1]} (unit cube)", range=[0, 1], scaleanchor="x", scaleratio=1,
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
    top = _top(title, note, lines)
    gap = (30 + 18 * lines) / max(height - top - 60, 1)
    dom = _grid(k, 1, vgap=gap)
    lay = _layout(title=title, note=note, height=height, panel_titles=lines, margin=dict(l=70))
    traces, ann = [], []
    many = size > 64 * f
    unit = "count" if f == 1 else f"count per {f} cells"
    ref_short = (ref or "").split("(")[0].strip() or "reference"
    for i, name in enumerate(stages):
        xk, yk, xr, yr = _ax(i)
        c = drawn[name]
        x = np.arange(c.size + 1) * f
        color, dash, owner = _style(name, i)
        traces.append(go.Scatter(x=x, y=_f32(np.r_[c, c[-1:]]), mode="lines", name=name, xaxis=xr, yaxis=yr,
                                 line=dict(color=color, width=1.4, shape="hv", dash=dash), fill="tozeroy",
                                 fillcolor=_rgba(color, 0.18),
                                 hovertemplate=f"<b>{name}</b><br>cell %{{x}}<br>{unit} %{{y:.4g}}<extra></extra>"))
        head = f"<b>{name}</b>"
        sub = f"total {raw[name].sum():,.0f}"
        if ref is not None:
            r = drawn[ref]
            traces.append(go.Scatter(x=x, y=_f32(np.r_[r, r[-1:]]), mode="lines" if many else "lines+markers",
                                     name=ref, legendgroup=ref, showlegend=i == 0, xaxis=xr, yaxis=yr, legendrank=1,
                                     line=dict(color="#262626", width=1.6, dash="dot", shape="hv"),
                                     marker=dict(size=4, color="#262626"),
                                     hovertemplate=f"<b>{ref}</b><br>cell %{{x}}<br>{unit} %{{y:.4g}}<extra></extra>"))
            err = float(np.abs(raw[name] - raw[ref]).sum()) if raw[name].size == raw[ref].size else float("nan")
            sub += f" ({ref_short}: {raw[ref].sum():,.0f}) · error Σ|{name.split('(')[0].strip()} − {ref_short}| " \
                   f"= {err:,.0f}"
        ann.append(_panel_title(_two_lines(head, sub) if ref is not None else f"{head}: {sub}", 0, 1, dom[i][1][1],
                                color=color if not owner else None))
        lay[xk] = _axis(domain=[0, 1], anchor=yr, showticklabels=i == k - 1, range=[0, c.size * f],
                        title=(f"cell at this level, in tree order (neighbouring cells summed in groups of {f} "
                               "for drawing)" if f > 1 else "cell at this level, in tree order")
                        if i == k - 1 else None, **({"matches": "x"} if i else {}))
        lay[yk] = _axis(domain=dom[i][1], anchor=xr, title=unit if i == k // 2 else None, nticks=4,
                        zeroline=True, zerolinecolor="#404040", zerolinewidth=1, range=yrange,
                        **({"matches": "y"} if i else {}))
    lay["annotations"] = ann
    return go.Figure(data=traces, layout=lay)


def _rgba(hex_color: str, alpha: float) -> str:
    h = hex_color.lstrip("#")
    return f"rgba({int(h[0:2], 16)},{int(h[2:4], 16)},{int(h[4:6], 16)},{alpha})"


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
    lay = _layout(title=title, note=note, margin=dict(r=70 if extra else 20), bargap=0.25)
    lay["xaxis"] = _axis(title="tree level (0 = the whole cube; deeper levels = smaller cells)", dtick=1 if
                         sigma.size <= 24 else None, range=[-0.6, max(sigma.size, 1) - 0.4])
    lay["yaxis"] = _axis(title=name, **_log_axis(sigma))
    if extra:
        lay["yaxis2"] = _axis(title=", ".join(extra), overlaying="y", side="right", showgrid=False,
                              **_log_axis(*extra.values()))
    return go.Figure(data=traces, layout=lay)


# -------------------------------------------------------------------------------------- PSMM
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
        lay = _layout(title=title, note=note, legend=False, bargap=0,
                      xaxis=_axis(title=f"{names[0]} (unit cube)", range=[0, 1]), yaxis=_axis(title="signed mass"))
        return go.Figure(data=[go.Bar(x=_f32(ticks[:v.size]), y=_f32(v), width=1 / k, name="signed mass",
                                      marker=dict(color=np.where(v < 0, COLORS["negative"], COLORS["positive"]),
                                                  line=dict(width=0)),
                                      hovertemplate="cell centre %{x:.3f}<br>mass %{y:.4g}<extra></extra>")],
                         layout=lay)
    cmax = max(float(np.max(np.abs(Z))), 1e-12)
    n_neg = int(np.count_nonzero(Z < 0))
    traces = [go.Heatmap(x=_f32(ticks), y=_f32(ticks), z=_f32(Z), colorscale=_SIGNED, zmid=0, zmin=-cmax, zmax=cmax,
                         colorbar=dict(title=dict(text=f"signed mass<br><span style='font-size:11px'>{n_neg:,} "
                                                       "negative cells</span>"), thickness=12, len=0.85),
                         hovertemplate=f"{names[0]} = %{{x:.3f}}<br>{names[1]} = %{{y:.3f}}<br>mass %{{z:.3g}}"
                                       "<extra></extra>")]
    if mark_negative or (mark_negative is None and k <= 32):
        iy, ix = np.nonzero(Z < 0)
        if ix.size:
            traces.append(go.Scatter(x=_f32(ticks[ix]), y=_f32(ticks[iy]), mode="markers",
                                     name=f"negative cells ({ix.size:,})",
                                     marker=dict(symbol="x-thin-open", size=max(4, min(10, 300 // k)), color="black",
                                                 line=dict(width=1)), opacity=0.6, hoverinfo="skip"))
    lay = _layout(title=title, note=note, height=440, legend=len(traces) > 1)
    lay.update(xaxis=_axis(title=f"{names[0]} (unit cube)", range=[0, 1], constrain="domain", showgrid=False),
               yaxis=_axis(title=f"{names[1]} (unit cube)", range=[0, 1], scaleanchor="x", scaleratio=1,
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
        for name, (Z, _), (color, dash, _owner) in zip(labels, mats, _styles(labels), strict=True):
            z = Z.ravel()
            x = np.arange(z.size + 1) / max(z.size, 1)
            traces.append(go.Scatter(x=_f32(x), y=_f32(np.r_[z, z[-1:]]), mode="lines", name=name,
                                     line=dict(color=color, dash=dash, width=2, shape="hv"),
                                     hovertemplate=f"<b>{name}</b><br>cell from %{{x:.3f}}<br>mass %{{y:.4g}}"
                                                   "<extra></extra>"))
        lay = _layout(title=title, note=note, xaxis=_axis(title=f"{names[0]} (unit cube)", range=[0, 1]),
                      yaxis=_axis(title="mass per cell", zeroline=True, zerolinecolor="#404040"))
        return go.Figure(data=traces, layout=lay)
    # one colour scale; its end is the 99.5th percentile of |mass| so a few extreme noisy cells do not wash
    # out every other cell (the colour bar saturates beyond it)
    cmax = max(max(float(np.quantile(np.abs(Z), 0.995)) for Z, _ in mats), 1e-12)
    n = len(labels)
    ticks = (np.arange(k) + 0.5) / k
    dom = _grid(n, n, hgap=0.06)
    lay = _layout(title=title, note=note, height=400, panel_titles=1, legend=False, margin=dict(r=10))
    traces, shapes, ann = [], [], []
    for i, (name, (Z, _), (color, _, owner)) in enumerate(zip(labels, mats, _styles(labels), strict=True)):
        xk, yk, xr, yr = _ax(i)
        traces.append(go.Heatmap(x=_f32(ticks), y=_f32(ticks if Z.shape[0] == k else [0.5]), z=_f32(Z), xaxis=xr,
                                 yaxis=yr, colorscale=_SIGNED, zmid=0, zmin=-cmax, zmax=cmax, showscale=i == n - 1,
                                 colorbar=dict(title=dict(text="mass"), thickness=12, len=0.85),
                                 hovertemplate=f"<b>{name}</b><br>{names[0]} = %{{x:.3f}}<br>{names[1]} = %{{y:.3f}}"
                                               "<br>mass %{z:.3g}<extra></extra>"))
        lay[xk] = _axis(domain=dom[i][0], anchor=yr, range=[0, 1], constrain="domain", showgrid=False, nticks=5,
                        title=f"{names[0]} (unit cube)" if i == 0 else None)
        lay[yk] = _axis(domain=dom[i][1], anchor=xr, range=[0, 1], scaleanchor=xr, scaleratio=1, constrain="domain",
                        showgrid=False, nticks=5, showticklabels=i == 0,
                        title=f"{names[1]} (unit cube)" if i == 0 else None)
        if owner:
            shapes.append(_frame(i))
        ann.append(_panel_title(name, *dom[i][0], dom[i][1][1], owner=owner, align="center",
                                color=None if owner else color, panel=i))
    lay.update(shapes=shapes, annotations=ann)
    return go.Figure(data=traces, layout=lay)


# ---------------------------------------------------------------------------------- Haar walk
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
    x, y = _join(xs, ys)
    custom = np.concatenate([np.vstack([r, [[np.nan, np.nan]]]) for r in cd])[:-1] if cd else np.empty((0, 2))
    bx, by = _join(base_x, base_y)
    traces = [go.Scatter(x=bx, y=by, mode="lines", line=dict(color="#BDBDBD", width=1), hoverinfo="skip",
                         showlegend=False),
              go.Scatter(x=x, y=y, mode="lines", line=dict(color=COLORS["superregular"], width=1.8, shape="hv"),
                         customdata=custom, showlegend=False, name="basis function",
                         hovertemplate="<b>basis function %{customdata[0]:.0f}</b><br>position %{x}<br>"
                                       "value %{customdata[1]:.4g}<extra></extra>")]
    lay = _layout(title=title, note=note, height=max(300, 30 * show + 110), legend=False)
    lay["xaxis"] = _axis(title="position i on the path", range=[0, m], showgrid=False,
                         dtick=1 if m <= 16 else 2 if m <= 32 else None)
    lay["yaxis"] = _axis(title="basis function", tickvals=[-c for c in range(show)],
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
        rows = [_decimate(x, r, max_steps) for r in P]
        jx, jy = _join([r[0] for r in rows], [r[1] for r in rows])
        traces.append(go.Scatter(x=_f32(jx), y=_f32(jy), mode="lines", line=dict(color=color, width=width),
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
        jx, jy = _join([x, x], [v, -v])
        traces.append(go.Scatter(x=_f32(jx), y=_f32(jy), mode="lines", line=dict(color=color, dash=dash, width=2.2),
                                 name=f"± {name}",
                                 hovertemplate=f"<b>{name}</b><br>position %{{x:.0f}}<br>±%{{y:.4g}}<extra></extra>"))
    lay = _layout(title=title, note=note, height=440)
    lay["xaxis"] = _axis(title="position i on the path")
    lay["yaxis"] = _axis(title="partial sum of the noise up to i", zeroline=True, zerolinecolor="#9E9E9E")
    return go.Figure(data=traces, layout=lay)


def grid_path(order: np.ndarray, k: int, *, title: str = "",
              names: Sequence[str] = ("first coordinate", "second coordinate"), note: str | None = None) -> go.Figure:
    """A path through the k×k grid (cell indices, row-major, axis 0 = x) drawn over the cells,
    coloured by step (start: black star, end: black square)."""
    order = np.asarray(order, dtype=np.int64)
    x = (order // k + 0.5) / k
    y = (order % k + 0.5) / k
    steps = np.arange(order.size)
    traces = [go.Scatter(x=_f32(x), y=_f32(y), mode="lines+markers" if k <= 32 else "lines",
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
    lay = _layout(title=title, note=note, height=440)
    lay.update(xaxis=_axis(title=f"{names[0]} (unit cube)", range=[0, 1], constrain="domain", dtick=1 / k if k <= 8
                           else None, showgrid=k <= 16),
               yaxis=_axis(title=f"{names[1]} (unit cube)", range=[0, 1], scaleanchor="x", scaleratio=1,
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
    for (name, F), (color, dash, owner) in zip(series.items(), _styles(list(series)), strict=True):
        F = np.asarray(F, dtype=float).ravel()
        xx, yy = _decimate(pos, F, max_points)
        traces.append(go.Scatter(x=_f32(xx), y=_f32(yy), mode="lines", name=name, legendgroup=name,
                                 line=dict(shape="hv", color=color, dash=dash, width=2.2 if owner else 1.8),
                                 hovertemplate=f"<b>{name}</b><br>position %{{x:.4g}}<br>CDF %{{y:.4g}}<extra></extra>"))
        if two and name != reference:
            xx, yy = _decimate(pos, F - ref, max_points)
            traces.append(go.Scatter(x=_f32(xx), y=_f32(yy), mode="lines", name=name, legendgroup=name,
                                     showlegend=False, xaxis="x", yaxis="y2",
                                     line=dict(shape="hv", color=color, dash=dash, width=1.4),
                                     hovertemplate=f"<b>{name} − {reference}</b><br>position %{{x:.4g}}<br>"
                                                   "difference %{y:.4g}<extra></extra>"))
    top = [0.45, 1.0] if two else [0.0, 1.0]
    lay = _layout(title=title, note=note, height=600 if two else 420, panel_titles=two)
    lay["xaxis"] = _axis(title="position on the line (unit-cube units)", anchor="y2" if two else "y")
    lay["yaxis"] = _axis(title="CDF", domain=top, anchor="x")
    lay["shapes"] = [dict(type="rect", xref="x domain", yref="y", x0=0, x1=1, y0=0, y1=1, layer="below",
                          fillcolor="rgba(0,158,115,0.07)", line=dict(width=0))]
    if two:
        lay["yaxis2"] = _axis(title="difference<br>(area = W1 on the line)", domain=[0.0, 0.33], anchor="x",
                              zeroline=True,
                              zerolinecolor="#262626", zerolinewidth=1.5)
        lay["xaxis"]["showticklabels"] = True
        lay["annotations"] = [
            _panel_title("CDFs along the line (a CDF stays in the green band, 0 to 1)", 0, 1, top[1]),
            _panel_title(f"each CDF minus the {reference}", 0, 1, 0.33)]
    return go.Figure(data=traces, layout=lay)


# ---------------------------------------------------------------------------- sparse marginals
def marginal_heatmaps(panels: Mapping[str, np.ndarray], *, title: str = "", cols: int = 3,
                      note: str | None = None) -> go.Figure:
    """2-D marginal histograms (k×k matrices, axis 0 = x), one equal-size panel each, one shared
    colour scale (white = 0)."""
    names = list(panels)
    if not names:
        return empty_figure("no marginals to show")
    n = len(names)
    cols = max(1, min(cols, n))
    rows = math.ceil(n / cols)
    vmax = max(max(float(np.max(np.asarray(v))) for v in panels.values()), 1e-12)
    height = 280 * rows + _top(title, note, 1) + 40
    dom = _grid(n, cols, hgap=0.06, vgap=60 / max(height - 100, 1) if rows > 1 else 0)
    lay = _layout(title=title, note=note, height=height, panel_titles=1, legend=False)
    traces, ann = [], []
    for i, name in enumerate(names):
        xk, yk, xr, yr = _ax(i)
        Z = np.asarray(panels[name], dtype=float)
        Z = Z[None, :] if Z.ndim == 1 else Z.T
        traces.append(go.Heatmap(z=_f32(Z), colorscale="Blues", zmin=0, zmax=vmax, showscale=i == 0, xaxis=xr,
                                 yaxis=yr, colorbar=dict(title=dict(text="share"), thickness=12, len=0.85),
                                 hovertemplate=f"<b>{name}</b><br>cell (%{{x}}, %{{y}})<br>%{{z:.3g}}<extra></extra>"))
        lay[xk] = _axis(domain=dom[i][0], anchor=yr, constrain="domain", showgrid=False, nticks=4)
        lay[yk] = _axis(domain=dom[i][1], anchor=xr, scaleanchor=xr, constrain="domain", showgrid=False, nticks=4)
        ann.append(_panel_title(name, *dom[i][0], dom[i][1][1], align="center", panel=i))
    lay["annotations"] = ann
    return go.Figure(data=traces, layout=lay)


def certificate_bar(terms: Mapping[str, float], *, title: str = "", loss: float | None = None,
                    label: str = "certificate (private)", loss_label: str = "realised loss (owner view)",
                    note: str | None = None) -> go.Figure:
    """The certificate as a stacked bar of its terms (each term a segment, the total at its end)
    and, below it, the realised loss (owner view: grey, hatched)."""
    rows = [label] + ([loss_label] if loss is not None else [])
    traces = []
    total = float(sum(float(v) for v in terms.values()))
    for i, (name, v) in enumerate(terms.items()):
        traces.append(go.Bar(y=[label], x=[float(v)], name=name, orientation="h", text=[f"{float(v):.3g}"],
                             textposition="inside", insidetextanchor="middle",
                             marker=dict(color=TERM_COLORS[i % len(TERM_COLORS)], line=dict(color="white", width=1)),
                             hovertemplate=f"<b>{name}</b><br>%{{x:.4g}}<extra></extra>"))
    if loss is not None:
        traces.append(go.Bar(y=[loss_label], x=[float(loss)], name=loss_label, orientation="h",
                             marker=dict(color="#E6E6E6", pattern=dict(shape="/", fgcolor="#8C8C8C", bgcolor="#E6E6E6"),
                                         line=dict(color="#595959", width=1)),
                             text=[f"{float(loss):.3g}"], textposition="inside",
                             hovertemplate=f"<b>{loss_label}</b><br>%{{x:.4g}}<extra></extra>"))
    ann = [dict(text=f"total {total:.3g}", x=total, y=label, xref="x", yref="y", xanchor="left", xshift=6,
                showarrow=False, font=dict(size=13))]
    lay = _layout(title=title, note=note, height=230 + 50 * len(rows), barmode="stack", bargap=0.35,
                  uniformtext=dict(minsize=10, mode="hide"), annotations=ann, margin=dict(l=20, r=30))
    lay["legend"]["traceorder"] = "normal"
    hi = max(total, float(loss) if loss is not None else 0.0)
    lay["xaxis"] = _axis(title="value (unit-cube units)", range=[0, hi * 1.18 if hi > 0 else 1])
    lay["yaxis"] = _axis(autorange="reversed", categoryorder="array", categoryarray=rows, ticks="")
    return go.Figure(data=traces, layout=lay)


def loss_vs_certificate(df, *, x: str = "certificate", y: str = "loss", color: str | None = None,
                        title: str = "", xtitle: str | None = None, ytitle: str | None = None,
                        note: str | None = None) -> go.Figure:
    """Realised utility loss against the certificate over runs (same units, same scale); the
    shaded region below the diagonal is where the certificate held. Axis titles default to the
    column names in unit-cube units."""
    if len(df) == 0:
        return empty_figure("no runs to show")
    xtitle = xtitle or f"{x} (unit-cube units)"
    ytitle = ytitle or f"{y} (unit-cube units)"
    groups = [(None, df)] if color is None else list(df.groupby(color, sort=False))
    traces = []
    hi = float(max(df[x].max(), df[y].max())) * 1.08 or 1.0
    traces.append(go.Scatter(x=[0, hi, hi, 0], y=[0, hi, 0, 0], fill="toself", mode="none",
                             fillcolor="rgba(0,158,115,0.10)", hoverinfo="skip",
                             name=f"below the line: {ytitle or y} ≤ {xtitle or x}"))
    for i, (g, part) in enumerate(groups):
        label = str(g) if g is not None else "runs"
        traces.append(go.Scatter(x=part[x], y=part[y], mode="markers", name=label,
                                 marker=dict(size=9, color=GROUP_COLORS[i % len(GROUP_COLORS)],
                                             symbol=GROUP_SYMBOLS[i % 8], line=dict(color="white", width=0.5)),
                                 hovertemplate=f"<b>{label}</b><br>{xtitle or x} %{{x:.4g}}<br>{ytitle or y} "
                                               "%{y:.4g}<extra></extra>"))
    traces.append(go.Scatter(x=[0, hi], y=[0, hi], mode="lines", line=dict(dash="dash", color="#000000", width=1.5),
                             name=f"{ytitle or y} = {xtitle or x}", hoverinfo="skip"))
    lay = _layout(title=title, note=note, height=440)
    lay["xaxis"] = _axis(title=xtitle or x, range=[0, hi], constrain="domain")
    lay["yaxis"] = _axis(title=ytitle or y, range=[0, hi], scaleanchor="x", scaleratio=1, constrain="domain")
    return go.Figure(data=traces, layout=lay)


# ------------------------------------------------------------------------- Private Evolution
def _pe_axes(lay: dict, lower, upper, d: int, names: Sequence[str] | None) -> list[dict]:
    nm = list(names) if names is not None and len(names) >= min(d, 2) else ["first coordinate", "second coordinate"]
    if d == 1:
        lay["xaxis"] = _axis(title=nm[0], range=None if lower is None else _span(float(np.ravel(lower)[0]),
                                                                               float(np.ravel(upper)[0])))
        lay["yaxis"] = _axis(visible=False, range=[-1, 1])
        return []
    b = _bounds2(lower, upper, (0, 1))
    _scatter_axes(lay, 0, b, nm[0], nm[1])
    return [_box_shape(b)] if b is not None else []


def _pe_xy(S: np.ndarray, seed: int) -> tuple[np.ndarray, np.ndarray]:
    x, y = _pts(S, (0, 1))
    if S.shape[1] == 1:  # 1-D: spread the points vertically (jitter) so they can be seen
        y = np.random.default_rng(seed).uniform(-0.8, 0.8, x.size)
    return x, y


def pe_iteration(private: np.ndarray | None, synthetic: np.ndarray, variations: np.ndarray | None = None, *,
                 weights: np.ndarray | None = None, title: str = "", lower=None, upper=None,
                 names: Sequence[str] | None = None, note: str | None = None) -> go.Figure:
    """One Private Evolution iteration in the first two coordinates: private points (owner view,
    faint grey), the variations (sky-blue crosses) and the resampled synthetic points (vermillion,
    size ∝ histogram weight when ``weights`` is given). At most 800 private, 600 variation and
    1000 synthetic points are drawn (:data:`FIGURE_POINTS` in all)."""
    S = _as_points(synthetic)
    d = S.shape[1]
    nm = list(names) if names is not None else ["first coordinate", "second coordinate"]
    nm += ["second coordinate"] * (2 - len(nm))
    traces = []
    if private is not None and len(private):
        P = thin(_as_points(private), 800)
        x, y = _pe_xy(P, 1)
        traces.append(go.Scatter(x=_f32(x), y=_f32(y), mode="markers", name="private data (owner view)",
                                 marker=dict(size=4, color=COLORS["private"], opacity=0.35),
                                 hovertemplate=_hover("private point (owner view)", nm[0], nm[1])))
    if variations is not None and len(variations):
        V = thin(_as_points(variations), 600, seed=2)
        x, y = _pe_xy(V, 2)
        traces.append(go.Scatter(x=_f32(x), y=_f32(y), mode="markers", name="variations (candidates)",
                                 marker=dict(size=5, symbol="x-thin-open", color=COLORS["variation"], opacity=0.8,
                                             line=dict(width=1.2, color=COLORS["variation"])),
                                 hovertemplate=_hover("variation", nm[0], nm[1])))
    idx = _thin_idx(S.shape[0], 1000, seed=3)
    x, y = _pe_xy(S[idx], 3)
    size: float | np.ndarray = 6
    if weights is not None and len(weights) == S.shape[0]:
        w = np.asarray(weights, dtype=float)[idx]
        size = _f32(4 + 14 * np.sqrt(np.clip(w, 0, None) / max(float(np.max(w)) if w.size else 0.0, 1e-12)))
    traces.append(go.Scatter(x=_f32(x), y=_f32(y), mode="markers", name="synthetic points (DP)",
                             marker=dict(size=size, color=COLORS["synthetic"], opacity=0.8,
                                         line=dict(width=0.5, color="white")),
                             hovertemplate=_hover("synthetic point", nm[0], nm[1])))
    lay = _layout(title=title, note=note, height=480)
    lay["shapes"] = _pe_axes(lay, lower, upper, d, nm)
    return go.Figure(data=traces, layout=lay)


def series_plot(x: Sequence, series: Mapping[str, Sequence], *, xtitle: str, ytitle: str, title: str = "",
                log_y: bool = False, log_x: bool = False, marker_x: float | None = None,
                marker_label: str | None = None, note: str | None = None) -> go.Figure:
    """Generic lines (W1 per iteration, ...). Colours and dashes follow the series names
    (owner-view series grey and dotted); log axes get at least three labelled ticks."""
    xs = np.asarray(list(x), dtype=float)
    traces = []
    for i, ((name, y), (color, dash, _owner)) in enumerate(zip(series.items(), _styles(list(series)), strict=True)):
        traces.append(go.Scatter(x=xs, y=np.asarray(list(y), dtype=float), mode="lines+markers", name=name,
                                 line=dict(color=color, dash=dash, width=2),
                                 marker=dict(size=6, symbol=GROUP_SYMBOLS[i % 8]),
                                 hovertemplate=f"<b>{name}</b><br>{xtitle} %{{x:.4g}}<br>{ytitle} %{{y:.4g}}"
                                               "<extra></extra>"))
    lay = _layout(title=title, note=note, legend=len(traces) > 1 or any(is_owner(n) for n in series))
    lay["xaxis"] = _axis(title=xtitle, **(_log_axis(xs) if log_x else {}))
    lay["yaxis"] = _axis(title=ytitle, **(_log_axis(*[np.asarray(list(v), dtype=float) for v in series.values()])
                                          if log_y else {}))
    if marker_x is not None:
        mx = math.log10(marker_x) if log_x and marker_x > 0 else marker_x  # shapes on log axes take log10
        lay["shapes"] = [dict(type="line", x0=mx, x1=mx, xref="x", y0=0, y1=1, yref="y domain",
                              line=dict(color="#404040", dash="dot", width=1.5))]
        if marker_label:
            lay["annotations"] = [dict(text=marker_label, x=mx, y=1, xref="x", yref="y domain",
                                       xanchor="left", yanchor="top", showarrow=False, xshift=4,
                                       font=dict(size=12, color="#404040"))]
    return go.Figure(data=traces, layout=lay)


# ------------------------------------------------------------------------------------ low-dim
def _plane_scale(color: str) -> list:
    return [[0, color], [1, color]]


def pca_3d(X: np.ndarray, *, centre_true: np.ndarray, basis_true: np.ndarray, centre_priv: np.ndarray,
           basis_priv: np.ndarray, synthetic: np.ndarray | None = None, names: Sequence[str] = ("x0", "x1", "x2"),
           title: str = "", note: str | None = None) -> go.Figure:
    """Data in 3-D with the true principal plane (owner view, grey) and the private one (DP,
    orange), each through its own centre, and the synthetic points (vermillion)."""
    P = thin(np.asarray(X, dtype=float), 1500)
    hov = f"<b>%{{meta}}</b><br>{names[0]} %{{x:.3g}}<br>{names[1]} %{{y:.3g}}<br>{names[2]} %{{z:.3g}}<extra></extra>"
    traces = [go.Scatter3d(x=_f32(P[:, 0]), y=_f32(P[:, 1]), z=_f32(P[:, 2]), mode="markers",
                           name="real data (owner view)", meta="real point (owner view)",
                           marker=dict(size=2, color=COLORS["real"], opacity=0.35), hovertemplate=hov)]
    if synthetic is not None and len(synthetic):
        S = thin(np.asarray(synthetic, dtype=float), 1500, seed=3)
        traces.append(go.Scatter3d(x=_f32(S[:, 0]), y=_f32(S[:, 1]), z=_f32(S[:, 2]), mode="markers",
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
        traces.append(go.Surface(x=_f32(pts[..., 0]), y=_f32(pts[..., 1]), z=_f32(pts[..., 2]), opacity=0.35,
                                 showscale=False, colorscale=_plane_scale(color), name=name, showlegend=True,
                                 hovertemplate=f"<b>{name}</b><extra></extra>"))
    lay = _layout(title=title, note=note, height=560, margin=dict(l=0, r=0, b=10))
    lay["scene"] = dict(xaxis_title=names[0], yaxis_title=names[1], zaxis_title=names[2], aspectmode="cube")
    return go.Figure(data=traces, layout=lay)


def spectrum(noisy: np.ndarray, true: np.ndarray | None = None, *, chosen: int | None = None,
             title: str = "", labels: tuple[str, str] = ("noisy covariance (DP)", "true covariance (owner view)"),
             note: str | None = None) -> go.Figure:
    """Eigenvalues of the noisy covariance (DP, orange bars) against the true ones (owner view,
    grey dotted); ``chosen``: how many directions are kept (a dotted line after them)."""
    noisy = np.asarray(noisy, dtype=float)
    x = np.arange(1, noisy.size + 1)
    traces = [go.Bar(x=x, y=_f32(noisy), name=labels[0], marker=dict(color=COLORS["noisy"], opacity=0.85),
                     hovertemplate=f"<b>{labels[0]}</b><br>eigenvalue %{{x}}<br>%{{y:.4g}}<extra></extra>")]
    if true is not None:
        traces.append(go.Scatter(x=x, y=_f32(np.asarray(true, dtype=float)), mode="lines+markers", name=labels[1],
                                 line=dict(color=COLORS["true"], dash="dot", width=2),
                                 marker=dict(size=6, color=COLORS["true"], symbol="circle-open"),
                                 hovertemplate=f"<b>{labels[1]}</b><br>eigenvalue %{{x}}<br>%{{y:.4g}}<extra></extra>"))
    lay = _layout(title=title, note=note, bargap=0.2)
    lay["xaxis"] = _axis(title="eigenvalue number (largest first)", dtick=1 if noisy.size <= 20 else None)
    lay["yaxis"] = _axis(title="eigenvalue (variance along the direction)")
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
    color, dash, _ = _style(name, 0)
    traces = [go.Scatter(x=m.index.to_numpy(dtype=float), y=m.to_numpy(), mode="lines+markers", name=name,
                         error_y=dict(type="data", array=s.to_numpy(), color=color, thickness=1.5),
                         line=dict(color=color, dash=dash, width=2), marker=dict(size=7, color=color),
                         hovertemplate="<b>ε = %{x:g}</b><br>mean angle %{y:.3g}°<extra></extra>")]
    lay = _layout(title=title, note=note, legend=False)
    lay["xaxis"] = _axis(title="privacy budget ε (log scale)", **_log_axis(m.index.to_numpy(dtype=float)))
    top = float(np.nanmax(m.to_numpy() + s.to_numpy())) if len(m) else 90.0
    lay["yaxis"] = _axis(title="largest angle (degrees)", range=[0, min(90.0, 1.1 * top) if top > 0 else 1])
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
    lay = _layout(title=title, note=note, height=60 + _top(title, note) + 52 * rows, legend=False,
                  margin=dict(l=70, r=10, b=10))
    lay["yaxis"] = _axis(autorange="reversed", tickvals=[r * (side + 1) + side / 2 for r in range(rows)],
                         ticktext=[str(c) for c in classes], title="digit class", showgrid=False, ticks="")
    lay["xaxis"] = _axis(visible=False, scaleanchor="y", constrain="domain")
    return go.Figure(data=[go.Heatmap(z=_f32(canvas), colorscale="gray_r", showscale=False, hoverinfo="skip")],
                     layout=lay)


# -------------------------------------------------------------------------------------- rates
def rates_loglog(df, *, x: str = "eps_n", group: str = "mechanism", bounds: Mapping[str, tuple] | None = None,
                 fits: Mapping[str, tuple[float, float]] | None = None, title: str = "",
                 bound_label: str = "bound", xtitle: str | None = None, ytitle: str = "W1 (unit cube, l∞ metric)",
                 note: str | None = None) -> go.Figure:
    """Measured W1 against εn (log-log): per group the mean (line) with the min–max band and the
    single runs (dots), the fitted power law in ``fits`` (dotted) and the curves in ``bounds``
    (dashed). Only what the caller passes is drawn, under the caller's names: a ``bounds`` key that
    is a group is drawn in the group's colour as "<group>: <bound_label>"; any other key is the
    curve's name (in the colour of the group it starts with, else a reference style); a third
    element of the (x, y, name) tuple overrides the name."""
    traces = []
    groups = list(df.groupby(group, sort=True)) if len(df) else []
    order = [g for g, _ in groups]
    color_of = {g: GROUP_COLORS[i % len(GROUP_COLORS)] for i, g in enumerate(order)}
    sym_of = {g: GROUP_SYMBOLS[i % 8] for i, g in enumerate(order)}
    xs_all = [np.asarray(df[x], dtype=float)] if len(df) else []
    ys_all = [np.asarray(df["w1"], dtype=float)] if len(df) else []
    for g, part in groups:
        color = color_of[g]
        st = part.groupby(x)["w1"].agg(["mean", "min", "max"]).reset_index()
        sx = st[x].to_numpy(dtype=float)
        traces.append(go.Scatter(x=np.r_[sx, sx[::-1]], y=np.r_[st["max"], st["min"][::-1]], fill="toself",
                                 line=dict(width=0), fillcolor=_rgba(color, 0.15), showlegend=False,
                                 legendgroup=str(g), hoverinfo="skip"))
        traces.append(go.Scatter(x=part[x], y=part["w1"], mode="markers", legendgroup=str(g), showlegend=False,
                                 marker=dict(size=5, color=color, opacity=0.45, symbol=sym_of[g]),
                                 hovertemplate=f"<b>{g}: one run</b><br>{x} %{{x:.4g}}<br>W1 %{{y:.4g}}<extra></extra>"))
        traces.append(go.Scatter(x=sx, y=st["mean"], mode="lines+markers", name=f"{g}: W1 (mean; band = min to max)",
                                 legendgroup=str(g), line=dict(color=color, width=2.2),
                                 marker=dict(size=7, symbol=sym_of[g], color=color),
                                 hovertemplate=f"<b>{g}: mean W1</b><br>{x} %{{x:.4g}}<br>W1 %{{y:.4g}}<extra></extra>"))
        if fits and g in fits and np.isfinite(fits[g][0]) and sx.size:
            slope, icpt = fits[g]
            fy = np.exp(icpt) * sx ** slope
            ys_all.append(fy)
            traces.append(go.Scatter(x=sx, y=fy, mode="lines", line=dict(color=color, dash="dot", width=2),
                                     legendgroup=str(g), name=f"{g}: power-law fit, slope {slope:.2f}",
                                     hovertemplate=f"<b>{g}: fit</b><br>{x} %{{x:.4g}}<br>%{{y:.4g}}<extra></extra>"))
    free = iter(REFERENCE_STYLES * 4)
    for g, spec in (bounds or {}).items():
        bx, by = np.asarray(spec[0], dtype=float), np.asarray(spec[1], dtype=float)
        owner_group = g if g in color_of else next(
            (h for h in order if re.match(rf"{re.escape(str(h).lower())}\b", str(g).lower())), None)
        name = str(spec[2]) if len(spec) > 2 else f"{g}: {bound_label}" if g in color_of else str(g)
        color, dash = (color_of[owner_group], "dash") if owner_group is not None else next(free)
        xs_all.append(bx)
        ys_all.append(by)
        traces.append(go.Scatter(x=bx, y=by, mode="lines", line=dict(color=color, dash=dash, width=2),
                                 legendgroup=str(owner_group if owner_group is not None else g), name=name,
                                 hovertemplate=f"<b>{name}</b><br>{x} %{{x:.4g}}<br>%{{y:.4g}}<extra></extra>"))
    lay = _layout(title=title, note=note, height=500)
    lay["xaxis"] = _axis(title=xtitle or ("ε·n (privacy budget × number of rows)" if x == "eps_n" else x),
                         **_log_axis(*xs_all))
    lay["yaxis"] = _axis(title=ytitle, **_log_axis(*ys_all))
    return go.Figure(data=traces, layout=lay)


# ------------------------------------------------------------------------------------ compare
def compare_bars(df, *, title: str = "", bound_label: str = "bound", note: str | None = None) -> go.Figure:
    """W1 (left, log scale; the ``bound`` column as a black tick where one is given, named
    ``bound_label``) and run time (right, log scale) per mechanism, as horizontal bars so the
    mechanism names stay readable at any width."""
    ok = df[df["status"] == "ok"]
    if len(ok) == 0:
        return empty_figure("no mechanism ran")
    mech = [str(m) for m in ok["mechanism"]]
    w1 = ok["w1"].to_numpy(dtype=float)
    secs = ok["seconds"].to_numpy(dtype=float)
    traces = [go.Bar(y=mech, x=w1, name="W1", orientation="h", marker=dict(color=COLORS["synthetic"], opacity=0.85),
                     hovertemplate="<b>%{y}</b><br>W1 %{x:.4g}<extra></extra>")]
    bvals = None
    if "bound" in ok and ok["bound"].notna().any():
        b = ok[ok["bound"].notna()]
        bvals = b["bound"].to_numpy(dtype=float)
        traces.append(go.Scatter(y=[str(m) for m in b["mechanism"]], x=bvals, mode="markers", name=bound_label,
                                 marker=dict(symbol="line-ns-open", size=22, color="black",
                                             line=dict(width=3, color="black")),
                                 hovertemplate=f"<b>%{{y}}</b><br>{bound_label} %{{x:.4g}}<extra></extra>"))
    traces.append(go.Bar(y=mech, x=secs, name="run time", orientation="h", xaxis="x2", yaxis="y2",
                         marker=dict(color="#56B4E9", opacity=0.9),
                         hovertemplate="<b>%{y}</b><br>%{x:.3g} s<extra></extra>"))
    height = max(300, 110 + 32 * len(mech))
    lay = _layout(title=title, note=note, height=height, panel_titles=1, bargap=0.3, margin=dict(l=20))
    lay["xaxis"] = _axis(domain=[0, 0.47], anchor="y", title="W1 (unit cube, l∞ metric), log scale",
                         **_log_axis(w1, bvals))
    lay["yaxis"] = _axis(domain=[0, 1], anchor="x", autorange="reversed", ticks="")
    lay["xaxis2"] = _axis(domain=[0.55, 1.0], anchor="y2", title="seconds, log scale", **_log_axis(secs))
    lay["yaxis2"] = _axis(domain=[0, 1], anchor="x2", autorange="reversed", matches="y", showticklabels=False,
                          ticks="")
    lay["annotations"] = [_panel_title("W1 to the real data", 0, 0.47, 1), _panel_title("run time", 0.55, 1, 1)]
    return go.Figure(data=traces, layout=lay)


# -------------------------------------------------------------------------------------- audit
def audit_band(hist_D: np.ndarray, hist_D_prime: np.ndarray, edges: np.ndarray, band_lo: np.ndarray,
               band_hi: np.ndarray, *, epsilon: float, labels: tuple[str, str] = ("D", "D'"),
               title: str = "", note: str | None = None) -> go.Figure:
    """The output statistic's distribution on D and D' (bars) and the (ε, δ) band around D's
    histogram, bin by bin: [e^{-ε}(p - δ), e^{ε} p + δ]. A DP mechanism keeps D''s true bin
    probabilities inside it; bars outside are sampling noise or a privacy bug (the audit decides)."""
    edges = np.asarray(edges, dtype=float)
    mid = (edges[:-1] + edges[1:]) / 2
    width = np.diff(edges)
    xs = mid + width * 0.225
    lo_, hi_ = np.asarray(band_lo, dtype=float), np.asarray(band_hi, dtype=float)
    nan = np.full(xs.size, np.nan)
    seg_x = np.column_stack([xs, xs, nan]).ravel()
    seg_y = np.column_stack([lo_, hi_, nan]).ravel()
    traces = [
        go.Bar(x=mid - width * 0.225, y=hist_D, width=width * 0.45, name=f"share of runs on {labels[0]}",
               marker=dict(color="#0072B2"),
               hovertemplate=f"<b>{labels[0]}</b><br>statistic ≈ %{{x:.3g}}<br>share %{{y:.3g}}<extra></extra>"),
        go.Bar(x=xs, y=hist_D_prime, width=width * 0.45, name=f"share of runs on {labels[1]}",
               marker=dict(color="#E69F00"),
               hovertemplate=f"<b>{labels[1]}</b><br>statistic ≈ %{{x:.3g}}<br>share %{{y:.3g}}<extra></extra>"),
        go.Scatter(x=seg_x, y=seg_y, mode="lines", line=dict(color="rgba(0,0,0,0.8)", width=1.5),
                   name=f"allowed range for {labels[1]} (within e^±ε of {labels[0]}, ε = {epsilon:.3g})",
                   hoverinfo="skip"),
        go.Scatter(x=np.r_[xs, xs], y=np.r_[lo_, hi_], mode="markers", showlegend=False,
                   marker=dict(symbol="line-ew-open", size=10, color="#000000", line=dict(width=1.5, color="#000000")),
                   customdata=np.r_[lo_, hi_],
                   hovertemplate=f"allowed range for {labels[1]}<br>edge %{{y:.3g}}<extra></extra>"),
    ]
    lay = _layout(title=title, note=note, height=440, bargap=0.1)
    lay["xaxis"] = _axis(title="value of the released statistic")
    lay["yaxis"] = _axis(title="share of runs (empirical probability)", rangemode="tozero")
    return go.Figure(data=traces, layout=lay)


def pe_animation(private: np.ndarray | None, synthetic: Sequence[np.ndarray | None], *, lower=None, upper=None,
                 w1: Sequence[float] | None = None, title: str = "", names: Sequence[str] | None = None,
                 note: str | None = None) -> go.Figure:
    """Private Evolution as an animation: one frame per iteration t = 0..T (press Play), the synthetic
    cloud over the private data (owner view, faint grey). At most 1000 points per layer and frame."""
    frames_data = [(t, _as_points(S)) for t, S in enumerate(synthetic) if S is not None]
    if not frames_data:
        return empty_figure("no iterations to show")
    nm = list(names) if names is not None else ["first coordinate", "second coordinate"]
    nm += ["second coordinate"] * (2 - len(nm))
    traces = []
    if private is not None and len(private):
        P = thin(_as_points(private), 1000)
        x, y = _pe_xy(P, 1)
        traces.append(go.Scatter(x=_f32(x), y=_f32(y), mode="markers", name="private data (owner view)",
                                 marker=dict(size=4, color=COLORS["private"], opacity=0.35),
                                 hovertemplate=_hover("private point (owner view)", nm[0], nm[1])))
    syn_hover = _hover("synthetic point", nm[0], nm[1])

    def label(t):
        ok = w1 is not None and t < len(w1) and w1[t] is not None and np.isfinite(w1[t])
        return f"iteration {t}" + (f", W1 = {w1[t]:.3f}" if ok else "")

    def heading(t):
        return f"{title} — {label(t)}" if title else label(t)

    t0, S0 = frames_data[0]
    x, y = _pe_xy(thin(S0, 1000), 3)
    traces.append(go.Scatter(x=_f32(x), y=_f32(y), mode="markers", name="synthetic points (DP)",
                             marker=dict(size=6, color=COLORS["synthetic"], opacity=0.8,
                                         line=dict(width=0.5, color="white")), hovertemplate=syn_hover))
    idx = len(traces) - 1
    frames, steps = [], []
    for t, S in frames_data:
        x, y = _pe_xy(thin(S, 1000), 3)
        frames.append(go.Frame(data=[go.Scatter(x=_f32(x), y=_f32(y))], traces=[idx], name=str(t),
                               layout=go.Layout(title_text=heading(t))))
        steps.append(dict(method="animate", label=str(t), args=[[str(t)], dict(mode="immediate",
                                                                              frame=dict(duration=0, redraw=False),
                                                                              transition=dict(duration=0))]))
    lay = _layout(title=heading(t0), note=note, height=560, margin=dict(b=60))
    lay["shapes"] = _pe_axes(lay, lower, upper, S0.shape[1], nm)
    lay["updatemenus"] = [dict(type="buttons", showactive=False, direction="left", x=0.0, y=0, xanchor="left",
                               yanchor="top", pad=dict(t=92, r=10),
                               buttons=[dict(label="▶ Play", method="animate",
                                             args=[None, dict(frame=dict(duration=500, redraw=False), fromcurrent=True,
                                                              transition=dict(duration=200))]),
                                        dict(label="❚❚ Pause", method="animate",
                                             args=[[None], dict(mode="immediate",
                                                                frame=dict(duration=0, redraw=False))])])]
    lay["sliders"] = [dict(active=0, x=0.22, len=0.78, y=0, yanchor="top", pad=dict(t=80),
                           currentvalue=dict(prefix="iteration ", font=dict(size=12), xanchor="right"),
                           steps=steps)]
    return go.Figure(data=traces, layout=lay, frames=frames)
