"""Plotly figure builders for the dashboard: pure functions, data in, ``go.Figure`` out.

No Streamlit here and no mechanism math: every function draws arrays it is given (a release's
``trace``, a sweep's DataFrame, ...). Coordinates are in the domain's units unless a function says
"unit cube". Large point sets are thinned for drawing only (``max_points``), with a fixed seed, so
the same data give the same picture.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

__all__ = [
    "COLORS",
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

COLORS = {"real": "#1f77b4", "synthetic": "#d62728", "noisy": "#ff7f0e", "clipped": "#9467bd",
          "consistent": "#2ca02c", "true": "#1f77b4", "bound": "#7f7f7f", "iid": "#ff7f0e",
          "superregular": "#2ca02c", "variation": "#bcbd22", "private": "#1f77b4"}
_LAYOUT = dict(template="plotly_white", margin=dict(l=40, r=20, t=50, b=40), height=420,
               legend=dict(orientation="h", yanchor="bottom", y=1.02, xanchor="right", x=1))


def _fig(**kw) -> go.Figure:
    fig = go.Figure()
    fig.update_layout(**{**_LAYOUT, **kw})
    return fig


def empty_figure(message: str) -> go.Figure:
    fig = _fig(height=200)
    fig.add_annotation(text=message, showarrow=False, x=0.5, y=0.5, xref="paper", yref="paper")
    fig.update_xaxes(visible=False)
    fig.update_yaxes(visible=False)
    return fig


def thin(X: np.ndarray, max_points: int = 2500, seed: int = 0) -> np.ndarray:
    """At most ``max_points`` rows of X (a fixed-seed random subset, for drawing only)."""
    X = np.asarray(X)
    if X.shape[0] <= max_points:
        return X
    idx = np.random.default_rng(seed).choice(X.shape[0], max_points, replace=False)
    return X[np.sort(idx)]


def _box(fig: go.Figure, lower, upper, row=None, col=None) -> None:
    kw = {} if row is None else dict(row=row, col=col)
    fig.add_shape(type="rect", x0=lower[0], x1=upper[0], y0=lower[1], y1=upper[1],
                  line=dict(color="#888", dash="dot", width=1), **kw)


def _pts(X: np.ndarray, axes: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    if X.shape[1] == 1:
        return X[:, 0], np.zeros(X.shape[0])
    return X[:, axes[0]], X[:, axes[1]]


def scatter_data(X: np.ndarray, names: Sequence[str], *, labels: np.ndarray | None = None,
                 lower=None, upper=None, axes: tuple[int, int] = (0, 1), title: str = "",
                 max_points: int = 3000) -> go.Figure:
    """The dataset: a scatter of two coordinates (a histogram when d = 1), the public box dotted."""
    X = np.asarray(X, dtype=float)
    if X.shape[1] == 1:
        fig = _fig(title=title)
        fig.add_trace(go.Histogram(x=X[:, 0], nbinsx=60, marker_color=COLORS["real"], name=names[0]))
        fig.update_xaxes(title=names[0], range=None if lower is None else [lower[0], upper[0]])
        fig.update_yaxes(title="count")
        return fig
    idx = np.arange(X.shape[0])
    sub = thin(idx, max_points)
    fig = _fig(title=title)
    x, y = X[sub, axes[0]], X[sub, axes[1]]
    if labels is not None and len(labels) == X.shape[0]:
        lab = np.asarray(labels)[sub]
        for v in np.unique(lab)[:12]:
            m = lab == v
            fig.add_trace(go.Scatter(x=x[m], y=y[m], mode="markers", name=str(v),
                                     marker=dict(size=4, opacity=0.6)))
    else:
        fig.add_trace(go.Scatter(x=x, y=y, mode="markers", name="data",
                                 marker=dict(size=4, opacity=0.5, color=COLORS["real"])))
    if lower is not None:
        _box(fig, [lower[axes[0]], lower[axes[1]]], [upper[axes[0]], upper[axes[1]]])
    fig.update_xaxes(title=names[axes[0]])
    fig.update_yaxes(title=names[axes[1]], scaleanchor="x", scaleratio=1 if lower is None else
                     (upper[axes[0]] - lower[axes[0]]) / (upper[axes[1]] - lower[axes[1]]))
    return fig


def scatter_compare(X: np.ndarray, Y: np.ndarray, names: Sequence[str], *, lower=None, upper=None,
                    axes: tuple[int, int] = (0, 1), max_points: int = 2500,
                    titles: tuple[str, str] = ("real (private)", "synthetic (DP)")) -> go.Figure:
    """Real and synthetic data side by side, same axes (histograms overlaid when d = 1)."""
    X = np.asarray(X, dtype=float)
    Y = np.asarray(Y, dtype=float)
    if X.shape[1] == 1:
        fig = _fig(title="real vs synthetic", barmode="overlay")
        fig.add_trace(go.Histogram(x=X[:, 0], nbinsx=60, histnorm="probability density", opacity=0.55,
                                   marker_color=COLORS["real"], name=titles[0]))
        fig.add_trace(go.Histogram(x=Y[:, 0], nbinsx=60, histnorm="probability density", opacity=0.55,
                                   marker_color=COLORS["synthetic"], name=titles[1]))
        fig.update_xaxes(title=names[0])
        return fig
    fig = make_subplots(rows=1, cols=2, subplot_titles=titles, shared_xaxes=True, shared_yaxes=True,
                        horizontal_spacing=0.04)
    for col, (Z, key) in enumerate(((X, "real"), (Y, "synthetic")), start=1):
        Zt = thin(Z, max_points, seed=col)
        x, y = _pts(Zt, axes)
        fig.add_trace(go.Scatter(x=x, y=y, mode="markers", name=titles[col - 1], showlegend=False,
                                 marker=dict(size=3.5, opacity=0.5, color=COLORS[key])), row=1, col=col)
        if lower is not None:
            _box(fig, [lower[axes[0]], lower[axes[1]]], [upper[axes[0]], upper[axes[1]]], row=1, col=col)
        fig.update_xaxes(title=names[axes[0]], row=1, col=col)
    fig.update_yaxes(title=names[axes[1]], row=1, col=1)
    fig.update_layout(**{**_LAYOUT, "height": 400})
    return fig


def draws_grid(X: np.ndarray, draws: Sequence[np.ndarray], w1s: Sequence[float], names: Sequence[str], *,
               lower=None, upper=None, max_points: int = 1200, titles: Sequence[str] | None = None) -> go.Figure:
    """Several releases, one panel each, W1 in the panel title: independent draws of one mechanism
    (the randomness of a DP release made visible) or several mechanisms (``titles``)."""
    k = len(draws)
    cols = 3 if k in (5, 6) else min(k, 4)
    rows = math.ceil(k / cols)
    heads = [f"{titles[i] if titles else f'draw {i + 1}'}: W1 = {w:.3g}" for i, w in enumerate(w1s)]
    fig = make_subplots(rows=rows, cols=cols, subplot_titles=heads,
                        horizontal_spacing=0.03, vertical_spacing=0.12)
    for i, Y in enumerate(draws):
        r, c = i // cols + 1, i % cols + 1
        Yt = thin(np.asarray(Y, dtype=float), max_points, seed=i)
        x, y = _pts(Yt, (0, 1))
        fig.add_trace(go.Scatter(x=x, y=y, mode="markers", showlegend=False,
                                 marker=dict(size=2.5, opacity=0.5, color=COLORS["synthetic"])), row=r, col=c)
        if lower is not None and len(lower) >= 2:
            _box(fig, lower[:2], upper[:2], row=r, col=c)
    fig.update_layout(**{**_LAYOUT, "height": (1200 // cols + 20) * rows, "margin": dict(l=20, r=10, t=40, b=20)})
    fig.update_annotations(font_size=11)
    return fig


# -------------------------------------------------------------------------------------- home
def kr_duality(a: np.ndarray, b: np.ndarray, *, bins: int = 80) -> go.Figure:
    """Kantorovich–Rubinstein duality in one picture (1-D, on [0, 1]).

    Top: the two densities and the optimal 1-Lipschitz witness f (slope ±1, f' = sign(F_b − F_a)).
    Bottom: the CDFs; the shaded area between them is W1 = ∫|F_a − F_b| = ∫f dμ_a − ∫f dμ_b.
    """
    a = np.clip(np.asarray(a, dtype=float), 0, 1)
    b = np.clip(np.asarray(b, dtype=float), 0, 1)
    grid = np.linspace(0.0, 1.0, 401)
    Fa = np.searchsorted(np.sort(a), grid, side="right") / a.size
    Fb = np.searchsorted(np.sort(b), grid, side="right") / b.size
    step = grid[1] - grid[0]
    slope = np.sign(Fb - Fa)
    f = np.concatenate([[0.0], np.cumsum(slope[:-1] * step)])
    w1 = float(np.sum(np.abs(Fa - Fb)[:-1]) * step)
    gain = float(np.mean(np.interp(a, grid, f)) - np.mean(np.interp(b, grid, f)))
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.1,
                        subplot_titles=(f"densities and the optimal 1-Lipschitz witness f: "
                                        f"∫f dμ − ∫f dν = {gain:.3f}",
                                        f"CDFs: shaded area ∫|F_μ − F_ν| = W1 = {w1:.3f}"),
                        specs=[[{"secondary_y": True}], [{}]])
    edges = np.linspace(0, 1, bins + 1)
    for z, name, color in ((a, "μ (real)", COLORS["real"]), (b, "ν (synthetic)", COLORS["synthetic"])):
        h, _ = np.histogram(z, edges, density=True)
        fig.add_trace(go.Bar(x=(edges[:-1] + edges[1:]) / 2, y=h, width=1 / bins, name=name, opacity=0.5,
                             marker_color=color), row=1, col=1)
    fig.add_trace(go.Scatter(x=grid, y=f - f.min(), name="witness f (Lip ≤ 1)", line=dict(color="black", width=2)),
                  row=1, col=1, secondary_y=True)
    fig.add_trace(go.Scatter(x=grid, y=Fa, name="F_μ", line=dict(color=COLORS["real"]), showlegend=False),
                  row=2, col=1)
    fig.add_trace(go.Scatter(x=grid, y=Fb, name="F_ν", line=dict(color=COLORS["synthetic"]), fill="tonexty",
                             fillcolor="rgba(127,127,127,0.3)", showlegend=False), row=2, col=1)
    fig.update_layout(**{**_LAYOUT, "height": 560, "barmode": "overlay"})
    fig.update_yaxes(title="density", row=1, col=1)
    fig.update_yaxes(title="f(x)", row=1, col=1, secondary_y=True, showgrid=False)
    fig.update_yaxes(title="CDF", row=2, col=1)
    fig.update_xaxes(title="x", row=2, col=1)
    return fig


# --------------------------------------------------------------------------------------- PMM
def icicle_tree(levels: Sequence[np.ndarray], *, max_level: int, title: str = "",
                kind: str = "icicle") -> go.Figure:
    """The binary partition tree down to ``max_level`` as an icicle (or sunburst): node θ at level j
    is cell Ω_θ, its width is its count (all cells shown with a floor so empty/negative cells stay
    visible), its colour the count itself (negative noisy counts in red)."""
    L = min(int(max_level), len(levels) - 1)
    ids, parents, values, colors, labels, hover = [], [], [], [], [], []
    # width: uniform per level so the tree shape is always readable; colour carries the count
    for j in range(L + 1):
        c = np.asarray(levels[j])
        for t in range(c.size):
            ids.append(f"{j}/{t}")
            parents.append("" if j == 0 else f"{j - 1}/{t >> 1}")
            values.append(2.0 ** (L - j))
            colors.append(float(c[t]))
            bits = format(t, f"0{j}b") if j else "root"
            labels.append(str(int(c[t])) if abs(c[t] - round(c[t])) < 1e-9 else f"{c[t]:.3g}")
            hover.append(f"level {j}, θ = {bits}<br>count {c[t]:.6g}")
    # signed log colour: a cell's count spans 1..n across levels; negative noisy counts show red
    col = np.asarray(colors)
    z = np.sign(col) * np.log10(1.0 + np.abs(col))
    zmax = max(1.0, float(np.max(np.abs(z))))
    ticks = [k for k in range(0, int(math.ceil(zmax)) + 1)]
    tickvals = [-math.log10(1 + 10**k) for k in ticks[::-1] if k > 0] + [0.0] + [math.log10(1 + 10**k) for k in ticks
                                                                               if k > 0]
    ticktext = [f"-{10**k:g}" for k in ticks[::-1] if k > 0] + ["0"] + [f"{10**k:g}" for k in ticks if k > 0]
    marker = dict(colors=z, colorscale="RdBu", cmid=0.0, cmin=-zmax, cmax=zmax,
                  colorbar=dict(title="count", tickvals=tickvals, ticktext=ticktext))
    common = dict(ids=ids, labels=labels, parents=parents, values=values, hovertext=hover,
                  hoverinfo="text", branchvalues="total", marker=marker, textinfo="label")
    trace = go.Sunburst(**common) if kind == "sunburst" else go.Icicle(**common, tiling=dict(orientation="v"))
    fig = _fig(title=title, height=460, margin=dict(l=10, r=10, t=50, b=10))
    fig.add_trace(trace)
    return fig


def cell_map(counts: np.ndarray, lower: np.ndarray, upper: np.ndarray, *, title: str = "",
             names: Sequence[str] = ("u0", "u1"), points: np.ndarray | None = None,
             zmid: float | None = 0.0) -> go.Figure:
    """The cells of one partition level in the unit square (first two axes), coloured by count.

    ``lower``/``upper`` are the cells' corners (cells × d); for d > 2 counts are summed over the
    other axes' positions that share the same square.
    """
    counts = np.asarray(counts, dtype=float)
    lo = np.asarray(lower)[:, :2]
    hi = np.asarray(upper)[:, :2]
    if lo.shape[1] == 1:  # d = 1: a bar per cell
        fig = _fig(title=title)
        fig.add_trace(go.Bar(x=(lo[:, 0] + hi[:, 0]) / 2, y=counts, width=hi[:, 0] - lo[:, 0],
                             marker_color=np.where(counts < 0, "#d62728", "#1f77b4"), name="count"))
        fig.update_xaxes(title=names[0], range=[0, 1])
        fig.update_yaxes(title="count")
        return fig
    xs = np.unique(np.concatenate([lo[:, 0], hi[:, 0]]))
    ys = np.unique(np.concatenate([lo[:, 1], hi[:, 1]]))
    Z = np.zeros((ys.size - 1, xs.size - 1))
    ix = np.searchsorted(xs, lo[:, 0])
    iy = np.searchsorted(ys, lo[:, 1])
    np.add.at(Z, (iy, ix), counts)
    cmax = max(1.0, float(np.max(np.abs(Z))))
    fig = _fig(title=title, height=460)
    fig.add_trace(go.Heatmap(x=(xs[:-1] + xs[1:]) / 2, y=(ys[:-1] + ys[1:]) / 2, z=Z,
                             colorscale="RdBu" if zmid is not None else "Blues", zmid=zmid,
                             zmin=-cmax if zmid is not None else 0, zmax=cmax, colorbar=dict(title="count"),
                             hovertemplate=f"{names[0]}=%{{x:.3f}}<br>{names[1]}=%{{y:.3f}}<br>count %{{z}}"
                                           "<extra></extra>"))
    if points is not None and len(points):
        P = thin(np.asarray(points), 1500)
        fig.add_trace(go.Scatter(x=P[:, 0], y=P[:, 1], mode="markers", name="points",
                                 marker=dict(size=2, color="black", opacity=0.35)))
    fig.update_xaxes(title=names[0], range=[0, 1], constrain="domain")
    fig.update_yaxes(title=names[1], range=[0, 1], scaleanchor="x", scaleratio=1, constrain="domain")
    fig.update_traces(colorbar=dict(thickness=12, len=0.8), selector=dict(type="heatmap"))
    fig.update_layout(height=380, margin=dict(l=40, r=10, t=40, b=40))
    return fig


def level_counts(series: Mapping[str, np.ndarray], *, title: str = "", max_cells: int = 512) -> go.Figure:
    """Counts of every cell of one level in cell-code order, one line per stage (true / noisy /
    clipped / consistent): noise, the negative counts clipping removes, and what consistency keeps."""
    fig = _fig(title=title)
    for name, c in series.items():
        c = np.asarray(c, dtype=float)
        x = np.arange(c.size)
        if c.size > max_cells:  # aggregate neighbours so the line stays readable
            f = int(math.ceil(c.size / max_cells))
            pad = (-c.size) % f
            c = np.concatenate([c, np.zeros(pad)]).reshape(-1, f).sum(axis=1)
            x = np.arange(c.size) * f
        key = name.split()[0].lower()
        fig.add_trace(go.Scatter(x=x, y=c, mode="lines+markers" if c.size <= 64 else "lines", name=name,
                                 line=dict(color=COLORS.get(key), width=1.5, shape="hv"),
                                 marker=dict(size=4)))
    fig.add_hline(y=0, line=dict(color="#444", width=1))
    fig.update_xaxes(title="cell code θ (binary tree order)")
    fig.update_yaxes(title="count")
    return fig


def sigma_levels(sigma: np.ndarray, *, title: str = "", extra: Mapping[str, np.ndarray] | None = None) -> go.Figure:
    """Noise scale σ_j per level j (log scale), optionally with other per-level series."""
    sigma = np.asarray(sigma, dtype=float)
    fig = _fig(title=title)
    fig.add_trace(go.Bar(x=np.arange(sigma.size), y=sigma, name="σ_j", marker_color=COLORS["noisy"]))
    for name, v in (extra or {}).items():
        fig.add_trace(go.Scatter(x=np.arange(len(v)), y=v, name=name, mode="lines+markers"))
    fig.update_xaxes(title="level j", dtick=1)
    fig.update_yaxes(title="noise scale σ_j / budget ε_j", type="log", dtick=1)
    return fig


# -------------------------------------------------------------------------------------- PSMM
def signed_grid(values: np.ndarray, k: int, *, title: str = "", mark_negative: bool = True) -> go.Figure:
    """A measure on the k×k grid (unit square, row-major, axis 0 = x) as a heatmap; negative cells
    of a signed measure outlined with a marker."""
    v = np.asarray(values, dtype=float)
    d = int(round(math.log(v.size, k))) if k > 1 else 1
    ticks = (np.arange(k) + 0.5) / k
    fig = _fig(title=title, height=440)
    if d == 1:
        fig.add_trace(go.Bar(x=ticks, y=v, width=1 / k, marker_color=np.where(v < 0, "#d62728", "#1f77b4")))
        fig.update_xaxes(title="u0", range=[0, 1])
        return fig
    Z = v.reshape((k,) * d)
    while Z.ndim > 2:
        Z = Z.sum(axis=-1)
    Z = Z.T  # rows = axis 1 (y), columns = axis 0 (x)
    cmax = max(float(np.max(np.abs(Z))), 1e-12)
    fig.add_trace(go.Heatmap(x=ticks, y=ticks, z=Z, colorscale="RdBu", zmid=0, zmin=-cmax, zmax=cmax,
                             colorbar=dict(title="mass")))
    if mark_negative:
        iy, ix = np.nonzero(Z < 0)
        if ix.size:
            fig.add_trace(go.Scatter(x=ticks[ix], y=ticks[iy], mode="markers", name=f"negative cells ({ix.size})",
                                     marker=dict(symbol="x-thin-open", size=max(3, 220 // k), color="#b2182b",
                                                 line=dict(width=1.0)), opacity=0.7))
    fig.update_xaxes(title="u0", range=[0, 1], constrain="domain")
    fig.update_yaxes(title="u1", range=[0, 1], scaleanchor="x", scaleratio=1, constrain="domain")
    return fig


def grid_measures(panels: Mapping[str, np.ndarray], k: int, *, title: str = "") -> go.Figure:
    """Several measures on the same k^d grid side by side (first two axes), one colour scale."""
    names = list(panels)
    mats = []
    for v in panels.values():
        v = np.asarray(v, dtype=float)
        d = max(1, int(round(math.log(v.size, k)))) if k > 1 else 1
        Z = v.reshape((k,) * d) if d > 1 else v.reshape(1, -1)
        while Z.ndim > 2:
            Z = Z.sum(axis=-1)
        mats.append(Z.T if d > 1 else Z)
    cmax = max(max(float(np.max(np.abs(Z))) for Z in mats), 1e-12)
    fig = make_subplots(rows=1, cols=len(names), subplot_titles=names, horizontal_spacing=0.05)
    ticks = (np.arange(k) + 0.5) / k
    for i, Z in enumerate(mats, start=1):
        fig.add_trace(go.Heatmap(x=ticks, y=ticks if Z.shape[0] == k else [0.5], z=Z, colorscale="RdBu", zmid=0,
                                 zmin=-cmax, zmax=cmax, showscale=i == len(mats)), row=1, col=i)
        fig.update_yaxes(scaleanchor=f"x{'' if i == 1 else i}", row=1, col=i)
    fig.update_layout(**{**_LAYOUT, "height": 380, "title": title})
    return fig


# ---------------------------------------------------------------------------------- Haar walk
def haar_basis(matrix: np.ndarray, *, title: str = "", max_columns: int = 16) -> go.Figure:
    """Columns of the (transposed) Haar matrix M_k as step functions, one row per column."""
    M = np.asarray(matrix, dtype=float)
    m, cols = M.shape
    show = min(cols, max_columns)
    fig = make_subplots(rows=show, cols=1, shared_xaxes=True, vertical_spacing=0.01)
    for c in range(show):
        fig.add_trace(go.Scatter(x=np.arange(m + 1), y=np.append(M[:, c], M[-1, c]), mode="lines",
                                 line=dict(shape="hv", width=1.5), showlegend=False, name=f"column {c}"),
                      row=c + 1, col=1)
        fig.update_yaxes(showticklabels=False, zeroline=True, row=c + 1, col=1)
    fig.update_layout(**{**_LAYOUT, "height": max(300, 34 * show + 80), "title": title})
    fig.update_xaxes(title="position i on the path", row=show, col=1)
    return fig


def partial_sum_paths(superregular: np.ndarray, iid: np.ndarray, *, title: str = "",
                      envelope: Mapping[str, np.ndarray] | None = None, max_paths: int = 40,
                      max_steps: int = 800) -> go.Figure:
    """Partial sums Σ_{j≤i} noise_j along the path, many draws (rows) of each noise: superregular
    (Haar, grows like log^{3/2} m) against i.i.d. Laplace (grows like √m). Long paths are drawn at
    ``max_steps`` evenly spaced positions."""
    fig = _fig(title=title, height=440)
    for name, P, color in (("superregular (Haar)", superregular, COLORS["superregular"]),
                           ("i.i.d. Laplace", iid, COLORS["iid"])):
        P = np.atleast_2d(np.asarray(P, dtype=float))[:max_paths]
        x = np.arange(1, P.shape[1] + 1)
        if P.shape[1] > max_steps:
            keep = np.unique(np.linspace(0, P.shape[1] - 1, max_steps).astype(int))
            P, x = P[:, keep], x[keep]
        for r in range(P.shape[0]):
            fig.add_trace(go.Scatter(x=x, y=P[r], mode="lines", line=dict(color=color, width=0.8), opacity=0.35,
                                     name=name, legendgroup=name, showlegend=r == 0))
    for name, v in (envelope or {}).items():
        v = np.asarray(v, dtype=float)
        x = np.arange(1, v.size + 1)
        if v.size > max_steps:
            keep = np.unique(np.linspace(0, v.size - 1, max_steps).astype(int))
            v, x = v[keep], x[keep]
        fig.add_trace(go.Scatter(x=x, y=v, mode="lines", line=dict(color="black", dash="dash"), name=name))
        fig.add_trace(go.Scatter(x=x, y=-v, mode="lines", line=dict(color="black", dash="dash"), showlegend=False))
    fig.update_xaxes(title="i (position on the path)")
    fig.update_yaxes(title="partial sum of noise")
    return fig


def grid_path(order: np.ndarray, k: int, *, title: str = "") -> go.Figure:
    """A path through the k×k grid (cell indices, row-major, axis 0 = x) drawn over the cells."""
    order = np.asarray(order, dtype=np.int64)
    x = (order // k + 0.5) / k
    y = (order % k + 0.5) / k
    fig = _fig(title=title, height=440)
    fig.add_trace(go.Scatter(x=x, y=y, mode="lines+markers" if k <= 32 else "lines",
                             line=dict(color="#444", width=1.5),
                             marker=dict(size=5, color=np.arange(order.size), colorscale="Viridis",
                                         colorbar=dict(title="step")), name="path"))
    fig.add_trace(go.Scatter(x=[x[0]], y=[y[0]], mode="markers", marker=dict(size=12, color="green"), name="start"))
    fig.update_xaxes(title="u0", range=[0, 1], constrain="domain")
    fig.update_yaxes(title="u1", range=[0, 1], scaleanchor="x", scaleratio=1, constrain="domain")
    return fig


def line_cdfs(positions: np.ndarray, series: Mapping[str, np.ndarray], *, title: str = "",
              reference: str | None = None) -> go.Figure:
    """CDFs on the line (a signed measure's can leave [0, 1] and go down; the projection's cannot).
    With ``reference`` (a key of ``series``), a second panel shows every CDF minus that one."""
    rows = 2 if reference else 1
    fig = make_subplots(rows=rows, cols=1, shared_xaxes=True, vertical_spacing=0.08,
                        subplot_titles=("CDF", f"difference to the {reference}") if reference else None)
    palette = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd"]
    for i, (name, F) in enumerate(series.items()):
        F = np.asarray(F, dtype=float)
        fig.add_trace(go.Scatter(x=positions, y=F, mode="lines", line=dict(shape="hv", color=palette[i % 5]),
                                 name=name, legendgroup=name), row=1, col=1)
        if reference and name != reference:
            fig.add_trace(go.Scatter(x=positions, y=F - np.asarray(series[reference], dtype=float), mode="lines",
                                     line=dict(shape="hv", color=palette[i % 5], width=1), name=name,
                                     legendgroup=name, showlegend=False), row=2, col=1)
    fig.add_hrect(y0=0, y1=1, line_width=0, fillcolor="rgba(0,128,0,0.05)", row=1, col=1)
    fig.update_layout(**{**_LAYOUT, "height": 620 if reference else 420, "title": title})
    fig.update_xaxes(title="position on the line (unit-cube units)", row=rows, col=1)
    fig.update_yaxes(title="CDF", row=1, col=1)
    return fig


# ---------------------------------------------------------------------------- sparse marginals
def marginal_heatmaps(panels: Mapping[str, np.ndarray], *, title: str = "", cols: int = 3) -> go.Figure:
    """2-D marginal histograms (k×k matrices, axis 0 = x), one panel each, shared colour scale."""
    names = list(panels)
    k = len(names)
    cols = min(cols, k)
    rows = math.ceil(k / cols)
    fig = make_subplots(rows=rows, cols=cols, subplot_titles=names, horizontal_spacing=0.06,
                        vertical_spacing=0.12)
    vmax = max(max(float(np.max(np.asarray(v))) for v in panels.values()), 1e-12)
    for i, name in enumerate(names):
        Z = np.asarray(panels[name], dtype=float)
        if Z.ndim == 1:
            Z = Z[None, :]
        fig.add_trace(go.Heatmap(z=Z.T if Z.shape[0] > 1 else Z, colorscale="Blues", zmin=0, zmax=vmax,
                                 showscale=i == 0), row=i // cols + 1, col=i % cols + 1)
    fig.update_layout(**{**_LAYOUT, "height": 300 * rows + 60, "title": title})
    return fig


def certificate_bar(terms: Mapping[str, float], *, title: str = "", loss: float | None = None) -> go.Figure:
    """The certificate as a stacked bar of its terms (each term a segment), with the realised loss."""
    fig = _fig(title=title, barmode="stack", height=300)
    for name, v in terms.items():
        fig.add_trace(go.Bar(y=["certificate"], x=[float(v)], name=name, orientation="h",
                             text=[f"{float(v):.3g}"], textposition="inside"))
    if loss is not None:
        fig.add_trace(go.Bar(y=["utility loss (owner)"], x=[float(loss)], name="realised loss (owner view)",
                             orientation="h", marker_color="#444", text=[f"{loss:.3g}"], textposition="inside"))
    fig.update_xaxes(title="value (unit cube)")
    return fig


def loss_vs_certificate(df, *, x: str = "certificate", y: str = "loss", color: str | None = None,
                        title: str = "") -> go.Figure:
    """Realised utility loss against the certificate over runs; below the diagonal = certified."""
    fig = _fig(title=title)
    groups = [(None, df)] if color is None else list(df.groupby(color))
    for g, part in groups:
        fig.add_trace(go.Scatter(x=part[x], y=part[y], mode="markers", name=str(g) if g is not None else "runs",
                                 marker=dict(size=8)))
    hi = float(max(df[x].max(), df[y].max())) * 1.05 if len(df) else 1.0
    fig.add_trace(go.Scatter(x=[0, hi], y=[0, hi], mode="lines", line=dict(dash="dash", color="#777"),
                             name="loss = certificate"))
    fig.update_xaxes(title=x)
    fig.update_yaxes(title=y)
    return fig


# ------------------------------------------------------------------------- Private Evolution
def pe_iteration(private: np.ndarray | None, synthetic: np.ndarray, variations: np.ndarray | None = None, *,
                 weights: np.ndarray | None = None, title: str = "", lower=None, upper=None) -> go.Figure:
    """One Private Evolution iteration in the first two coordinates: private points (owner view),
    the current synthetic points (size ∝ histogram weight) and the variations they spawn."""
    fig = _fig(title=title, height=480)
    if private is not None:
        P = thin(np.asarray(private, dtype=float), 2000)
        x, y = _pts(P, (0, 1))
        fig.add_trace(go.Scatter(x=x, y=y, mode="markers", name="private data (owner view)",
                                 marker=dict(size=3, color=COLORS["private"], opacity=0.25)))
    if variations is not None and len(variations):
        V = thin(np.asarray(variations, dtype=float), 2000, seed=2)
        x, y = _pts(V, (0, 1))
        fig.add_trace(go.Scatter(x=x, y=y, mode="markers", name="variations",
                                 marker=dict(size=4, symbol="x-thin-open", color=COLORS["variation"], opacity=0.7)))
    S = np.asarray(synthetic, dtype=float)
    x, y = _pts(S, (0, 1))
    size = 6
    if weights is not None and len(weights) == S.shape[0]:
        w = np.asarray(weights, dtype=float)
        size = 4 + 14 * np.sqrt(np.clip(w, 0, None) / max(float(w.max()), 1e-12))
    fig.add_trace(go.Scatter(x=x, y=y, mode="markers", name="synthetic",
                             marker=dict(size=size, color=COLORS["synthetic"], opacity=0.8,
                                         line=dict(width=0.5, color="white"))))
    if lower is not None and len(lower) >= 2:
        _box(fig, lower[:2], upper[:2])
        fig.update_xaxes(range=[lower[0], upper[0]], constrain="domain")
        fig.update_yaxes(range=[lower[1], upper[1]], scaleanchor="x", scaleratio=1, constrain="domain")
    return fig


def series_plot(x: Sequence, series: Mapping[str, Sequence], *, xtitle: str, ytitle: str, title: str = "",
                log_y: bool = False, log_x: bool = False, marker_x: float | None = None) -> go.Figure:
    """Generic lines (W1 per iteration, principal angles per ε, ...)."""
    fig = _fig(title=title)
    for name, y in series.items():
        fig.add_trace(go.Scatter(x=list(x), y=list(y), mode="lines+markers", name=name))
    if marker_x is not None:
        fig.add_vline(x=marker_x, line=dict(color="#444", dash="dot"))
    fig.update_xaxes(title=xtitle, type="log" if log_x else None)
    fig.update_yaxes(title=ytitle, type="log" if log_y else None)
    return fig


# ------------------------------------------------------------------------------------ low-dim
def pca_3d(X: np.ndarray, *, centre_true: np.ndarray, basis_true: np.ndarray, centre_priv: np.ndarray,
           basis_priv: np.ndarray, synthetic: np.ndarray | None = None, names: Sequence[str] = ("x0", "x1", "x2"),
           title: str = "") -> go.Figure:
    """Data in 3-D with the true (owner view) and private principal planes (span of two directions
    through the respective means), and the synthetic points."""
    fig = _fig(title=title, height=560, margin=dict(l=0, r=0, t=40, b=0))
    P = thin(np.asarray(X, dtype=float), 1500)
    fig.add_trace(go.Scatter3d(x=P[:, 0], y=P[:, 1], z=P[:, 2], mode="markers", name="real (owner view)",
                               marker=dict(size=2, color=COLORS["real"], opacity=0.4)))
    if synthetic is not None:
        S = thin(np.asarray(synthetic, dtype=float), 1500, seed=3)
        fig.add_trace(go.Scatter3d(x=S[:, 0], y=S[:, 1], z=S[:, 2], mode="markers", name="synthetic (DP)",
                                   marker=dict(size=2, color=COLORS["synthetic"], opacity=0.5)))
    s = np.linspace(-0.6, 0.6, 8)
    A, B = np.meshgrid(s, s)
    for name, c, V, color in (("true plane (owner view)", centre_true, basis_true, "Blues"),
                              ("private plane (DP)", centre_priv, basis_priv, "Reds")):
        V = np.asarray(V, dtype=float)
        c = np.asarray(c, dtype=float)
        if V.shape[1] < 2:
            continue
        pts = c[None, None, :3] + A[..., None] * V[None, None, :3, 0] + B[..., None] * V[None, None, :3, 1]
        fig.add_trace(go.Surface(x=pts[..., 0], y=pts[..., 1], z=pts[..., 2], opacity=0.35, showscale=False,
                                 colorscale=color, name=name, showlegend=True))
    fig.update_layout(scene=dict(xaxis_title=names[0], yaxis_title=names[1], zaxis_title=names[2],
                                 aspectmode="cube"))
    return fig


def spectrum(noisy: np.ndarray, true: np.ndarray | None = None, *, chosen: int | None = None,
             title: str = "") -> go.Figure:
    """Eigenvalues of the noisy covariance (DP) against the true ones (owner view)."""
    fig = _fig(title=title)
    noisy = np.asarray(noisy, dtype=float)
    x = np.arange(1, noisy.size + 1)
    fig.add_trace(go.Bar(x=x, y=noisy, name="noisy covariance (DP)", marker_color=COLORS["noisy"]))
    if true is not None:
        fig.add_trace(go.Scatter(x=x, y=np.asarray(true, dtype=float), mode="lines+markers",
                                 name="true covariance (owner view)", line=dict(color=COLORS["true"])))
    if chosen is not None:
        fig.add_vline(x=chosen + 0.5, line=dict(color="#444", dash="dot"), annotation_text=f"d' = {chosen}")
    fig.update_xaxes(title="eigenvalue index", dtick=1 if noisy.size <= 20 else None)
    fig.update_yaxes(title="eigenvalue")
    return fig


def angles_plot(df, *, title: str = "") -> go.Figure:
    """Largest principal angle between the private and true subspaces against ε (mean ± sd)."""
    fig = _fig(title=title)
    g = df.groupby("epsilon")["angle"]
    m, s = g.mean(), g.std().fillna(0.0)
    fig.add_trace(go.Scatter(x=m.index, y=m.values, error_y=dict(type="data", array=s.values), mode="lines+markers",
                             name="largest principal angle"))
    fig.update_xaxes(title="ε", type="log", dtick=1)
    fig.update_yaxes(title="largest angle (degrees)", rangemode="tozero")
    return fig


def digit_images(images: np.ndarray, labels: Sequence, *, side: int = 8, per_class: int = 6,
                 title: str = "") -> go.Figure:
    """Synthetic digit images (rows = classes, columns = samples), grey scale."""
    images = np.asarray(images, dtype=float)
    labels = np.asarray(labels)
    classes = list(np.unique(labels))
    rows = len(classes)
    canvas = np.full((rows * (side + 1), per_class * (side + 1)), np.nan)
    for r, c in enumerate(classes):
        imgs = images[labels == c][:per_class]
        for j, im in enumerate(imgs):
            canvas[r * (side + 1):r * (side + 1) + side, j * (side + 1):j * (side + 1) + side] = im.reshape(side, side)
    fig = _fig(title=title, height=80 + 56 * rows, margin=dict(l=40, r=10, t=40, b=10))
    fig.add_trace(go.Heatmap(z=canvas, colorscale="gray_r", showscale=False, hoverinfo="skip"))
    fig.update_yaxes(autorange="reversed", tickvals=[r * (side + 1) + side / 2 for r in range(rows)],
                     ticktext=[str(c) for c in classes], title="class")
    fig.update_xaxes(visible=False, scaleanchor="y")
    return fig


# -------------------------------------------------------------------------------------- rates
def rates_loglog(df, *, x: str = "eps_n", group: str = "mechanism", bounds: Mapping[str, tuple] | None = None,
                 fits: Mapping[str, tuple[float, float]] | None = None, title: str = "") -> go.Figure:
    """Measured W1 against εn (log-log): mean with a min–max band per group, each paper's bound curve
    (dashed) and the fitted power law (dotted)."""
    fig = _fig(title=title, height=480)
    palette = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2"]
    for i, (g, part) in enumerate(df.groupby(group)):
        color = palette[i % len(palette)]
        st = part.groupby(x)["w1"].agg(["mean", "min", "max"]).reset_index()
        fig.add_trace(go.Scatter(x=np.concatenate([st[x], st[x][::-1]]),
                                 y=np.concatenate([st["max"], st["min"][::-1]]), fill="toself", line=dict(width=0),
                                 fillcolor=color, opacity=0.15, showlegend=False, hoverinfo="skip"))
        fig.add_trace(go.Scatter(x=st[x], y=st["mean"], mode="lines+markers", name=f"{g}: W1 (mean, range)",
                                 line=dict(color=color)))
        fig.add_trace(go.Scatter(x=part[x], y=part["w1"], mode="markers", marker=dict(size=4, color=color,
                                 opacity=0.4), showlegend=False))
        if bounds and g in bounds:
            bx, by = bounds[g]
            fig.add_trace(go.Scatter(x=bx, y=by, mode="lines", line=dict(color=color, dash="dash"),
                                     name=f"{g}: paper bound"))
        if fits and g in fits and np.isfinite(fits[g][0]):
            slope, icpt = fits[g]
            xs = np.asarray(st[x], dtype=float)
            fig.add_trace(go.Scatter(x=xs, y=np.exp(icpt) * xs**slope, mode="lines",
                                     line=dict(color=color, dash="dot"), name=f"{g}: fit slope {slope:.2f}"))
    fig.update_xaxes(title="ε n" if x == "eps_n" else x, type="log", dtick=1)
    fig.update_yaxes(title="W1 (unit cube, l∞)", type="log", dtick=1)
    fig.update_layout(legend=dict(orientation="h", yanchor="top", y=-0.18, xanchor="left", x=0),
                      margin=dict(l=50, r=20, t=50, b=40), height=540)
    return fig


# ------------------------------------------------------------------------------------ compare
def compare_bars(df, *, title: str = "") -> go.Figure:
    """W1 (bars, with the paper bound as a marker where one exists) and run time per mechanism."""
    ok = df[df["status"] == "ok"]
    fig = make_subplots(rows=1, cols=2, subplot_titles=("W1 (unit cube, l∞) and bound", "time (s)"))
    fig.add_trace(go.Bar(x=ok["mechanism"], y=ok["w1"], name="W1", marker_color=COLORS["synthetic"]), row=1, col=1)
    if "bound" in ok and ok["bound"].notna().any():
        b = ok[ok["bound"].notna()]
        fig.add_trace(go.Scatter(x=b["mechanism"], y=b["bound"], mode="markers", name="paper bound",
                                 marker=dict(symbol="line-ew-open", size=30, color="black",
                                             line=dict(width=3, color="black"))),
                      row=1, col=1)
    fig.add_trace(go.Bar(x=ok["mechanism"], y=ok["seconds"], name="time", marker_color="#7f7f7f"), row=1, col=2)
    fig.update_yaxes(type="log", dtick=1, row=1, col=1)
    fig.update_yaxes(type="log", dtick=1, row=1, col=2)
    fig.update_layout(**{**_LAYOUT, "height": 420, "title": title,
                         "legend": dict(orientation="h", yanchor="top", y=-0.15, xanchor="left", x=0)})
    return fig


# -------------------------------------------------------------------------------------- audit
def audit_band(hist_D: np.ndarray, hist_D_prime: np.ndarray, edges: np.ndarray, band_lo: np.ndarray,
               band_hi: np.ndarray, *, epsilon: float, labels: tuple[str, str] = ("D", "D'"),
               title: str = "") -> go.Figure:
    """The output statistic's distribution on D and D' (bars) and the (ε, δ) band around D's
    histogram, bin by bin: [e^{-ε}(p - δ), e^{ε} p + δ]. A DP mechanism keeps D''s true bin
    probabilities inside it; bars outside are sampling noise or a privacy bug (the audit decides)."""
    edges = np.asarray(edges, dtype=float)
    mid = (edges[:-1] + edges[1:]) / 2
    width = np.diff(edges)
    fig = _fig(title=title, height=440, bargap=0.1)
    fig.add_trace(go.Bar(x=mid - width * 0.225, y=hist_D, width=width * 0.45, name=f"P(statistic | {labels[0]})",
                         marker_color=COLORS["real"]))
    fig.add_trace(go.Bar(x=mid + width * 0.225, y=hist_D_prime, width=width * 0.45,
                         name=f"P(statistic | {labels[1]})", marker_color=COLORS["synthetic"]))
    xs = mid + width * 0.225
    seg_x, seg_y = [], []
    for x, lo_, hi_ in zip(xs, band_lo, band_hi, strict=True):
        seg_x += [x, x, None]
        seg_y += [lo_, hi_, None]
    fig.add_trace(go.Scatter(x=seg_x, y=seg_y, mode="lines", line=dict(color="rgba(30,130,30,0.85)", width=6),
                             name=f"allowed range for {labels[1]} (e^±ε around {labels[0]}, ε = {epsilon:.3g})"))
    fig.add_trace(go.Scatter(x=np.concatenate([xs, xs]), y=np.concatenate([band_lo, band_hi]), mode="markers",
                             marker=dict(symbol="line-ew-open", size=22, color="rgb(30,130,30)",
                                         line=dict(width=2, color="rgb(30,130,30)")),
                             showlegend=False, hoverinfo="skip"))
    fig.update_xaxes(title="statistic of the release")
    fig.update_yaxes(title="empirical probability")
    return fig


def pe_animation(private: np.ndarray | None, synthetic: Sequence[np.ndarray | None], *, lower=None, upper=None,
                 w1: Sequence[float] | None = None, title: str = "") -> go.Figure:
    """Private Evolution as an animation: one frame per iteration t = 0..T (press Play), the synthetic
    cloud S_t over the private data (owner view, faint)."""
    frames_data = [(t, np.asarray(S, dtype=float)) for t, S in enumerate(synthetic) if S is not None]
    fig = _fig(title=title, height=520)
    if private is not None:
        P = thin(np.asarray(private, dtype=float), 1500)
        x, y = _pts(P, (0, 1))
        fig.add_trace(go.Scatter(x=x, y=y, mode="markers", name="private data (owner view)",
                                 marker=dict(size=3, color=COLORS["private"], opacity=0.2)))
    t0, S0 = frames_data[0]
    x, y = _pts(thin(S0, 1500), (0, 1))
    fig.add_trace(go.Scatter(x=x, y=y, mode="markers", name="synthetic S_t",
                             marker=dict(size=6, color=COLORS["synthetic"], opacity=0.8)))
    frames, steps = [], []
    for t, S in frames_data:
        x, y = _pts(thin(S, 1500), (0, 1))
        label = f"t = {t}" + ("" if not w1 or t >= len(w1) or w1[t] is None else f", W1 = {w1[t]:.3f}")
        frames.append(go.Frame(data=[go.Scatter(x=x, y=y)], traces=[1 if private is not None else 0], name=str(t),
                               layout=go.Layout(title_text=f"{title} — {label}")))
        steps.append(dict(method="animate", label=str(t), args=[[str(t)], dict(mode="immediate",
                                                                              frame=dict(duration=0, redraw=False),
                                                                              transition=dict(duration=0))]))
    fig.frames = frames
    fig.update_layout(
        updatemenus=[dict(type="buttons", showactive=False, x=0.0, y=-0.12, xanchor="left", yanchor="top",
                          buttons=[dict(label="Play", method="animate",
                                        args=[None, dict(frame=dict(duration=500, redraw=False), fromcurrent=True,
                                                         transition=dict(duration=200))]),
                                   dict(label="Pause", method="animate",
                                        args=[[None], dict(mode="immediate", frame=dict(duration=0, redraw=False))])])],
        sliders=[dict(active=0, x=0.15, len=0.85, y=-0.08, currentvalue=dict(prefix="iteration "), steps=steps)],
        margin=dict(l=40, r=20, t=50, b=110),
    )
    if lower is not None and len(lower) >= 2:
        _box(fig, lower[:2], upper[:2])
        fig.update_xaxes(range=[lower[0], upper[0]], constrain="domain")
        fig.update_yaxes(range=[lower[1], upper[1]], scaleanchor="x", scaleratio=1, constrain="domain")
    return fig
