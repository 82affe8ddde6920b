"""The conventions every figure shares (see the package's docstring): the palette by meaning, the layout
and axis helpers, thinning of large point sets, the empty figure. Pure functions, no figure builder.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

__all__ = [
    # the palette and the limits
    "COLORS", "GROUP_COLORS", "TERM_COLORS", "LABEL_COLORS", "GROUP_SYMBOLS", "REFERENCE_STYLES",
    "MAX_POINTS", "FIGURE_POINTS", "SIGNED_SCALE",
    # conventions and layout
    "is_owner", "style_of", "styles_of", "f32", "fmt_number", "log_axis", "axis_spec", "top_margin",
    "figure_layout", "panel_title", "two_lines", "panel_grid", "axis_keys", "hover_text", "empty_panel_note",
    "empty_figure", "rgba",
    # points, lines and histograms
    "xy_of", "as_points", "bounds_2d", "padded_range", "scatter_axes", "box_shape", "owner_frame",
    "histogram", "decimate", "join_lines", "thin", "thin_index",
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
#: At most this many points per panel are drawn (a fixed-seed subset; the panel says how many of how many) ...
MAX_POINTS = 1000
#: ... and about this many per figure. Drawing is most of what a browser does on an ε notch: with 2,400 points
#: per figure a notch on a mechanism page kept Chromium's main thread busy for 0.9-1.1 s (two figures), with
#: 1,200 for 0.5-0.8 s, and the notch took 0.7-1.0 s instead of 1.1-1.45 s until the page was idle
#: (benchmarks/bench_browser.py on a quiet machine). WebGL (software) only pays off above ~3000 points.
FIGURE_POINTS = 1200

SIGNED_SCALE = "RdBu"  # plotly's RdBu: red = low (negative), blue = high (positive)
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


def style_of(name: str, i: int = 0) -> tuple[str, str, bool]:
    """(colour, dash, owner) for a series named by the caller; i picks a group colour otherwise."""
    key = _meaning(name)
    owner = is_owner(name)
    color = COLORS[key] if key else GROUP_COLORS[i % len(GROUP_COLORS)]
    return color, "dot" if owner else "solid", owner


def styles_of(names: Sequence[str]) -> list[tuple[str, str, bool]]:
    """Styles for the series of one figure: meaning colours from the names; series without a
    meaning get group colours not already used by a meaning in this figure."""
    used = {COLORS[k] for k in (_meaning(n) for n in names) if k}
    free = [c for c in GROUP_COLORS if c not in used] or list(GROUP_COLORS)
    out, j = [], 0
    for n in names:
        c, dash, owner = style_of(n)
        if _meaning(n) is None:
            c = free[j % len(free)]
            j += 1
        out.append((c, dash, owner))
    return out


def f32(a) -> np.ndarray:
    """Drawing precision: float32 halves the figure's JSON (7 significant digits are plenty)."""
    return np.asarray(a, dtype=np.float32)


def fmt_number(v: float) -> str:
    if v == 0 or not np.isfinite(v):
        return f"{v:g}"
    a = abs(v)
    if a >= 1e6 or a < 1e-3:
        m, e = f"{v:.0e}".split("e")
        return f"{m}e{int(e)}"
    if a >= 1000:
        return f"{v:,.0f}"
    return f"{v:g}"


def log_axis(*values, min_ticks: int = 3) -> dict:
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
    return dict(type="log", range=[llo, lhi], tickvals=ticks, ticktext=[fmt_number(t) for t in ticks])


def axis_spec(**kw) -> dict:
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


def top_margin(title: str, note: str | None, panel_titles: int = 0) -> int:
    """Top margin in px: the title, the note under it and ``panel_titles`` lines of panel headings."""
    return 14 + (26 if title else 0) + (20 if note else 0) + 18 * int(panel_titles) + (6 if panel_titles else 0) \
        + (0 if title or note or panel_titles else 6)


def figure_layout(*, title: str = "", note: str | None = None, height: int = 420, panel_titles: int = 0,
                  legend: bool = True, margin: dict | None = None, **kw) -> dict:
    m = dict(l=60, r=20, t=top_margin(title, note, panel_titles), b=50)
    m.update(margin or {})
    out = dict(template=_TEMPLATE, font=_FONT, height=height, margin=m, title=_title(title, note),
               hoverlabel=dict(namelength=-1), showlegend=legend,
               legend=dict(orientation="h", x=0, xanchor="left", y=0, yanchor="bottom", yref="container",
                           bgcolor="rgba(255,255,255,0)", font=dict(size=12), itemsizing="constant"))
    out.update(kw)
    return out


def panel_title(text: str, x0: float, x1: float, y1: float, *, owner: bool = False, color: str | None = None,
                align: str = "left", panel: int | None = None) -> dict:
    """A panel heading just above the panel. With ``panel`` it is placed on that panel's axes
    domain (which follows a square panel shrunk by ``constrain``), else on the paper coordinates."""
    out = dict(text=text, x=x0 if align == "left" else (x0 + x1) / 2, xanchor=align if align == "left" else "center",
               y=y1, yanchor="bottom", xref="paper", yref="paper", yshift=3, showarrow=False, align=align,
               font=dict(size=13, color=color or ("#595959" if owner else "#262730")))
    if panel is not None:
        _, _, xr, yr = axis_keys(panel)
        out.update(xref=f"{xr} domain", yref=f"{yr} domain", x=0 if align == "left" else 0.5, y=1)
    return out


def two_lines(head: str, sub: str) -> str:
    return f"{head}<br><span style='font-size:11px;color:#595959'>{sub}</span>" if sub else head


def panel_grid(n: int, cols: int, *, hgap: float = 0.05, vgap: float = 0.14) -> list[tuple[list[float], list[float]]]:
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


def axis_keys(i: int) -> tuple[str, str, str, str]:
    """Layout keys and trace references of the i-th panel's axes: ('xaxis2', 'yaxis2', 'x2', 'y2')."""
    s = "" if i == 0 else str(i + 1)
    return f"xaxis{s}", f"yaxis{s}", f"x{s}", f"y{s}"


def hover_text(label: str, xname: str, yname: str) -> str:
    return f"<b>{label}</b><br>{xname} = %{{x:.4g}}<br>{yname} = %{{y:.4g}}<extra></extra>"


def xy_of(X: np.ndarray, axes: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    if X.ndim == 1:
        X = X[:, None]
    if X.shape[1] == 1:
        return X[:, 0], np.zeros(X.shape[0])
    return X[:, axes[0]], X[:, axes[1]]


def as_points(X) -> np.ndarray:
    """(rows, d) float array; empty input → shape (0, 1)."""
    X = np.asarray(X if X is not None else [], dtype=float)
    if X.size == 0:
        return X.reshape(0, max(1, X.shape[1] if X.ndim == 2 else 1))
    return X.reshape(-1, 1) if X.ndim == 1 else X


def bounds_2d(lower, upper, axes: tuple[int, int]):
    """((x_lo, y_lo), (x_hi, y_hi)) of the drawn axes, or None without public bounds."""
    if lower is None or upper is None:
        return None
    lo, hi = np.asarray(lower, dtype=float).ravel(), np.asarray(upper, dtype=float).ravel()
    if lo.size < 2:
        return None
    return (lo[axes[0]], lo[axes[1]]), (hi[axes[0]], hi[axes[1]])


def _same_scale(b) -> bool:
    return b is not None and math.isclose(b[0][0], b[0][1]) and math.isclose(b[1][0], b[1][1])


def padded_range(lo: float, hi: float, pad: float = 0.03) -> list[float]:
    w = hi - lo if hi > lo else max(abs(lo), 1.0)
    return [lo - pad * w, hi + pad * w]


def _scale_note(same: bool) -> str:
    return ("<br><span style='font-size:11px;color:#595959'>" +
            ("both axes on the same scale" if same else "each axis spans its own public bounds (own scale)") +
            "</span>")


def scatter_axes(layout: dict, i: int, b, xname: str, yname: str, *, titles: bool = True,
                 xtitle: bool = True, ytitle: bool = True, tick_x: bool = True, tick_y: bool = True,
                 note: bool = True, public: bool = True) -> None:
    """Axes of scatter panel i: each axis spans its public bounds; one scale only for equal bounds.
    ``public=False``: ``b`` is only the data's range (no scale note, no common scale)."""
    xk, yk, xr, _ = axis_keys(i)
    same = public and _same_scale(b)
    xa = layout.setdefault(xk, {})
    ya = layout.setdefault(yk, {})
    xa.update(axis_spec(showticklabels=tick_x, nticks=6))
    ya.update(axis_spec(showticklabels=tick_y, nticks=6))
    if titles and xtitle:
        xa["title"] = dict(text=xname + (_scale_note(same) if note and public and b is not None else ""),
                           font=dict(size=13))
    if titles and ytitle:
        ya["title"] = dict(text=yname, font=dict(size=13))
    if b is not None:
        xa["range"] = padded_range(b[0][0], b[1][0])
        ya["range"] = padded_range(b[0][1], b[1][1])
        if same:
            ya.update(scaleanchor=xr, scaleratio=1, constrain="domain")
            xa["constrain"] = "domain"


def box_shape(b, i: int = 0, *, owner: bool = False) -> dict:
    _, _, xr, yr = axis_keys(i)
    return dict(type="rect", xref=xr, yref=yr, x0=b[0][0], x1=b[1][0], y0=b[0][1], y1=b[1][1], layer="below",
                line=dict(color="#9E9E9E" if not owner else "#595959", dash="dot", width=1))


def owner_frame(i: int, x=(0, 1), y=(0, 1)) -> dict:
    """A grey dotted frame around panel i (data coordinates): marks an owner-view panel."""
    _, _, xr, yr = axis_keys(i)
    return dict(type="rect", xref=f"{xr} domain", yref=f"{yr} domain", x0=0, x1=1, y0=0, y1=1,
                line=dict(color="#595959", dash="dot", width=1.5), layer="above")


def histogram(z: np.ndarray, edges: np.ndarray, density: bool = True) -> np.ndarray:
    h, _ = np.histogram(z, edges)
    if density and z.size:
        h = h / (z.size * np.diff(edges))
    return h


def decimate(x: np.ndarray, y: np.ndarray, max_points: int) -> tuple[np.ndarray, np.ndarray]:
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


def join_lines(rows_x: Sequence[np.ndarray], rows_y: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Several lines as one trace: NaN between them (one trace draws far faster than many)."""
    xs, ys = [], []
    for x, y in zip(rows_x, rows_y, strict=True):
        xs += [x, [np.nan]]
        ys += [y, [np.nan]]
    if not xs:
        return np.empty(0), np.empty(0)
    return np.concatenate(xs[:-1]), np.concatenate(ys[:-1])


def empty_panel_note(i: int, text: str) -> dict:
    _, _, xr, yr = axis_keys(i)
    return dict(text=text, x=0.5, y=0.5, xref=f"{xr} domain", yref=f"{yr} domain", showarrow=False,
                font=dict(size=13, color="#595959"))


def empty_figure(message: str) -> go.Figure:
    """A small figure that only says ``message`` (nothing to draw)."""
    lay = figure_layout(height=200, legend=False, margin=dict(l=10, r=10, t=10, b=10))
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


def thin_index(n: int, max_points: int, seed: int = 0) -> np.ndarray:
    if n <= max_points:
        return np.arange(n)
    return np.sort(np.random.default_rng(seed).choice(n, max_points, replace=False))


def rgba(hex_color: str, alpha: float) -> str:
    h = hex_color.lstrip("#")
    return f"rgba({int(h[0:2], 16)},{int(h[2:4], 16)},{int(h[4:6], 16)},{alpha})"
