"""Results over runs: lines per step or iteration, W1 against εn (log-log), mechanisms side by side, and
the privacy audit's band.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go

from ._common import (
    COLORS,
    GROUP_COLORS,
    GROUP_SYMBOLS,
    REFERENCE_STYLES,
    axis_spec,
    empty_figure,
    figure_layout,
    is_owner,
    log_axis,
    panel_title,
    rgba,
    styles_of,
)

__all__ = ["series_plot", "rates_loglog", "compare_bars", "audit_band"]


def series_plot(x: Sequence, series: Mapping[str, Sequence], *, xtitle: str, ytitle: str, title: str = "",
                log_y: bool = False, log_x: bool = False, marker_x: float | None = None,
                marker_label: str | None = None, note: str | None = None) -> go.Figure:
    """Generic lines (W1 per iteration, ...). Colours and dashes follow the series names
    (owner-view series grey and dotted); log axes get at least three labelled ticks."""
    xs = np.asarray(list(x), dtype=float)
    traces = []
    for i, ((name, y), (color, dash, _owner)) in enumerate(zip(series.items(), styles_of(list(series)), strict=True)):
        traces.append(go.Scatter(x=xs, y=np.asarray(list(y), dtype=float), mode="lines+markers", name=name,
                                 line=dict(color=color, dash=dash, width=2),
                                 marker=dict(size=6, symbol=GROUP_SYMBOLS[i % 8]),
                                 hovertemplate=f"<b>{name}</b><br>{xtitle} %{{x:.4g}}<br>{ytitle} %{{y:.4g}}"
                                               "<extra></extra>"))
    lay = figure_layout(title=title, note=note, legend=len(traces) > 1 or any(is_owner(n) for n in series))
    lay["xaxis"] = axis_spec(title=xtitle, **(log_axis(xs) if log_x else {}))
    lay["yaxis"] = axis_spec(title=ytitle, **(log_axis(*[np.asarray(list(v), dtype=float) for v in series.values()])
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


def rates_loglog(df, *, x: str = "eps_n", group: str = "mechanism", bounds: Mapping[str, tuple] | None = None,
                 fits: Mapping[str, tuple[float, float]] | None = None, title: str = "",
                 bound_label: str = "bound", xtitle: str | None = None, ytitle: str = "W1 (unit cube, l∞ metric)",
                 note: str | None = None, fit_bands: Mapping[str, tuple] | None = None) -> go.Figure:
    """Measured W1 against εn (log-log): per group the mean (line) with the min–max band and the
    single runs (dots), the fitted power law in ``fits`` (dotted) with its confidence band from
    ``fit_bands`` (``{group: (x, low, high, name)}``, hatched), and the curves in ``bounds``
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
                                 line=dict(width=0), fillcolor=rgba(color, 0.15), showlegend=False,
                                 legendgroup=str(g), hoverinfo="skip"))
        traces.append(go.Scatter(x=part[x], y=part["w1"], mode="markers", legendgroup=str(g), showlegend=False,
                                 marker=dict(size=5, color=color, opacity=0.45, symbol=sym_of[g]),
                                 hovertemplate=f"<b>{g}: one run</b><br>{x} %{{x:.4g}}<br>W1 %{{y:.4g}}<extra></extra>"))
        traces.append(go.Scatter(x=sx, y=st["mean"], mode="lines+markers", name=f"{g}: W1 (mean; band = min to max)",
                                 legendgroup=str(g), line=dict(color=color, width=2.2),
                                 marker=dict(size=7, symbol=sym_of[g], color=color),
                                 hovertemplate=f"<b>{g}: mean W1</b><br>{x} %{{x:.4g}}<br>W1 %{{y:.4g}}<extra></extra>"))
        if fit_bands and g in fit_bands:
            bx, lo, hi, bname = fit_bands[g]
            bx, lo, hi = (np.asarray(v, dtype=float) for v in (bx, lo, hi))
            ok = np.isfinite(lo) & np.isfinite(hi) & (lo > 0)
            if ok.any():
                traces.append(go.Scatter(x=np.r_[bx[ok], bx[ok][::-1]], y=np.r_[hi[ok], lo[ok][::-1]], fill="toself",
                                         line=dict(color=rgba(color, 0.5), width=0.8, dash="dot"),
                                         fillpattern=dict(shape="/", fgcolor=rgba(color, 0.35), solidity=0.15),
                                         fillcolor="rgba(0,0,0,0)", legendgroup=str(g), name=f"{g}: {bname}",
                                         hoverinfo="skip"))
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
    lay = figure_layout(title=title, note=note, height=500)
    lay["xaxis"] = axis_spec(title=xtitle or ("ε·n (privacy budget × number of rows)" if x == "eps_n" else x),
                             **log_axis(*xs_all))
    lay["yaxis"] = axis_spec(title=ytitle, **log_axis(*ys_all))
    return go.Figure(data=traces, layout=lay)


def compare_bars(df, *, title: str = "", bound_label: str = "bound", note: str | None = None,
                 reference: tuple[float, str] | None = None, diameter: float | None = None) -> go.Figure:
    """W1 (left, log scale; the ``bound`` column as a black tick where one is given, named
    ``bound_label``) and run time (right, log scale) per mechanism, as horizontal bars so the
    mechanism names stay readable at any width. ``reference`` = (W1, label): a dashed vertical line
    on the W1 panel (e.g. the flat histogram at its best grid in hindsight, an owner view). ``diameter``:
    the largest possible W1; a bound at or above it says nothing and is not drawn (the caller says so)."""
    ok = df[df["status"] == "ok"]
    if len(ok) == 0:
        return empty_figure("no mechanism ran")
    mech = [str(m) for m in ok["mechanism"]]
    w1 = ok["w1"].to_numpy(dtype=float)
    secs = ok["seconds"].to_numpy(dtype=float)
    traces = [go.Bar(y=mech, x=w1, name="W1", orientation="h", marker=dict(color=COLORS["synthetic"], opacity=0.85),
                     hovertemplate="<b>%{y}</b><br>W1 %{x:.4g}<extra></extra>")]
    bvals = None
    informative = ok["bound"].notna() & (ok["bound"] < diameter if diameter is not None else True) \
        if "bound" in ok else None
    if informative is not None and informative.any():
        b = ok[informative]
        bvals = b["bound"].to_numpy(dtype=float)
        traces.append(go.Scatter(y=[str(m) for m in b["mechanism"]], x=bvals, mode="markers", name=bound_label,
                                 marker=dict(symbol="line-ns-open", size=22, color="black",
                                             line=dict(width=3, color="black")),
                                 hovertemplate=f"<b>%{{y}}</b><br>{bound_label} %{{x:.4g}}<extra></extra>"))
    if reference is not None and np.isfinite(reference[0]) and reference[0] > 0:
        traces.append(go.Scatter(y=[mech[0], mech[-1]], x=[reference[0]] * 2, mode="lines", name=reference[1],
                                 line=dict(color="black", dash="dash", width=2),
                                 hovertemplate=f"{reference[1]}: W1 %{{x:.4g}}<extra></extra>"))
        bvals = np.r_[bvals if bvals is not None else [], reference[0]]
    traces.append(go.Bar(y=mech, x=secs, name="run time", orientation="h", xaxis="x2", yaxis="y2",
                         marker=dict(color="#56B4E9", opacity=0.9),
                         hovertemplate="<b>%{y}</b><br>%{x:.3g} s<extra></extra>"))
    height = max(300, 110 + 32 * len(mech))
    lay = figure_layout(title=title, note=note, height=height, panel_titles=1, bargap=0.3, margin=dict(l=20))
    lay["xaxis"] = axis_spec(domain=[0, 0.47], anchor="y", title="W1 (unit cube, l∞ metric), log scale",
                             **log_axis(w1, bvals))
    lay["yaxis"] = axis_spec(domain=[0, 1], anchor="x", autorange="reversed", ticks="")
    lay["xaxis2"] = axis_spec(domain=[0.55, 1.0], anchor="y2", title="seconds, log scale", **log_axis(secs))
    lay["yaxis2"] = axis_spec(domain=[0, 1], anchor="x2", autorange="reversed", matches="y", showticklabels=False,
                              ticks="")
    lay["annotations"] = [panel_title("W1 to the real data", 0, 0.47, 1), panel_title("run time", 0.55, 1, 1)]
    return go.Figure(data=traces, layout=lay)


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
    lay = figure_layout(title=title, note=note, height=440, bargap=0.1)
    lay["xaxis"] = axis_spec(title="value of the released statistic")
    lay["yaxis"] = axis_spec(title="share of runs (empirical probability)", rangemode="tozero")
    return go.Figure(data=traces, layout=lay)
