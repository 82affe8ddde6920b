"""Categorical columns: the counts per category (real against synthetic), and a numeric column within each
category.

Inputs are tables (:class:`pandas.DataFrame`) whose categorical columns hold the category labels (text
or pandas categoricals), with the declared categories given by the caller: every declared category has
its bar, also one nobody is in (a missing bar is information too). Real data is the owner view (grey,
hatched bars; a dotted outline for a histogram), synthetic data vermillion.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ._common import (
    COLORS,
    axis_keys,
    axis_spec,
    empty_figure,
    empty_panel_note,
    f32,
    figure_layout,
    histogram,
    panel_grid,
    panel_title,
    top_margin,
    two_lines,
)

__all__ = ["category_counts", "numeric_by_category", "MAX_CATEGORY_BARS", "MAX_CATEGORY_PANELS"]

#: At most this many categories of one column are drawn (the first ones in the declared order).
MAX_CATEGORY_BARS = 40
#: At most this many panels (columns, or categories) in one figure.
MAX_CATEGORY_PANELS = 8

_REAL = "real data (owner view)"
_SYNTH = "synthetic data (DP)"


def _labels(values) -> pd.Series:
    """Labels as text (a categorical column's labels, or text stripped as the domain matches it)."""
    s = pd.Series(values)
    if isinstance(s.dtype, pd.CategoricalDtype):
        return s.astype(str)
    return s.astype("string").str.strip().astype(object)


def _counts(values, declared: Sequence[str]) -> np.ndarray:
    """Number of rows of each declared category (in the declared order)."""
    if values is None or len(values) == 0:
        return np.zeros(len(declared))
    vc = _labels(values).value_counts()
    return vc.reindex(list(declared), fill_value=0).to_numpy(dtype=float)


def _frame_columns(frame, name: str) -> pd.DataFrame | None:
    if frame is None:
        return None
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"The '{name}' argument must be a pandas DataFrame of the table. Got {type(frame).__name__}.")
    return frame


def _grid(n_panels: int, cols: int, row_px: int, title: str, note: str | None):
    rows = math.ceil(n_panels / cols)
    height = row_px * rows + 90 + top_margin(title, note, 2)
    vgap = 110 / max(height - 120, 1) if rows > 1 else 0.0
    return rows, height, panel_grid(n_panels, cols, hgap=0.07 if cols > 1 else 0.0, vgap=vgap)


#: About this many category labels fit across a full-width panel; a narrower panel gets proportionally fewer.
_LABELS_FULL_WIDTH = 30
_PANEL_PX = 650  # a full-width panel's plotting width, roughly, and a label character's width below
_CHAR_PX = 7


def _nice_step(span: float) -> float:
    """1, 2 or 5 times a power of ten, at least ``span``."""
    power = 10.0 ** math.floor(math.log10(span))
    return next(m * power for m in (1, 2, 5, 10) if m * power >= span * (1 - 1e-9))


def _share_ticks(top: float, ticks: int = 4) -> dict:
    """A share axis up to ``top``: a step of 1, 2 or 5 times a power of ten (about ``ticks`` steps) and as many
    decimals as the step needs, so that no two ticks read the same ("0%, 1%, 1%" at small shares)."""
    if not top > 0:
        return dict(tickformat=".0%")
    step = _nice_step(top / ticks)
    decimals = max(0, -math.floor(math.log10(100 * step) + 1e-9))
    return dict(tickmode="linear", tick0=0, dtick=step, tickformat=f".{decimals}%")


def _category_ticks(shown: Sequence[str], width: float) -> dict:
    """A category axis of a panel ``width`` (share of the figure) wide: every k-th label when more labels than
    fit, turned when they would run together."""
    fits = max(4, int(_LABELS_FULL_WIDTH * width))
    out: dict = {}
    if len(shown) > fits:
        shown = list(shown)[::math.ceil(len(shown) / fits)]
        out.update(tickmode="array", tickvals=shown, ticktext=shown)
    turned = len(shown) * (max(map(len, shown)) * _CHAR_PX + 8) > _PANEL_PX * width
    out["tickangle"] = -45 if turned else 0
    return out


def category_counts(real: pd.DataFrame, synthetic: pd.DataFrame | None, categories: Mapping[str, Sequence[str]],
                    *, columns: Sequence[str] | None = None, title: str = "", note: str | None = None,
                    cols: int | None = None, max_bars: int = MAX_CATEGORY_BARS) -> go.Figure:
    """Rows per category of each categorical column: one panel per column, the declared categories on
    the x axis in their declared order.

    With ``synthetic`` the bars are grouped, real (grey, hatched: owner view) beside synthetic
    (vermillion), as **shares of the rows** (the two tables need not have the same size) and the panel
    heading gives the largest gap between the two shares; without it the bars are the real counts.
    ``columns`` picks and orders the columns (default: every one in ``categories``, at most
    :data:`MAX_CATEGORY_PANELS`); a column with more than ``max_bars`` categories shows the first ones
    and says so.
    """
    real = _frame_columns(real, "real")
    synthetic = _frame_columns(synthetic, "synthetic")
    names = [c for c in (columns if columns is not None else list(categories)) if c in categories]
    names = names[:MAX_CATEGORY_PANELS]
    if not names:
        return empty_figure("no categorical column to show")
    share = synthetic is not None
    k = len(names)
    cols = int(cols) if cols else min(k, 3)
    rows, height, dom = _grid(k, cols, 260, title, note)
    lay = figure_layout(title=title, note=note, height=height, panel_titles=2, barmode="group", bargap=0.25,
                        bargroupgap=0.05, legend=share, margin=dict(l=60, r=20, b=70 if share else 40))
    traces, ann = [], []
    for i, col in enumerate(names):
        declared = [str(c) for c in categories[col]]
        shown = declared[:max_bars]
        xk, yk, xr, yr = axis_keys(i)
        r_counts = _counts(real[col] if real is not None and col in real else None, declared)
        n_real = float(r_counts.sum())
        layers = [(_REAL, r_counts, n_real)]
        if share:
            s_counts = _counts(synthetic[col] if col in synthetic else None, declared)
            layers.append((_SYNTH, s_counts, float(s_counts.sum())))
        sub = []
        for name, counts, total in layers:
            owner = name == _REAL
            if share:
                y = counts / total if total > 0 else np.zeros_like(counts)
            else:
                y = counts
            what = "share of the rows" if share else "rows"
            hover = [f"<b>{name}</b><br>{col} = {lab}<br>{int(c):,} rows" + (f" ({v:.1%})" if share else "")
                     + "<extra></extra>" for lab, c, v in zip(shown, counts[:len(shown)], y[:len(shown)], strict=True)]
            traces.append(go.Bar(
                x=shown, y=f32(y[:len(shown)]), name=name, xaxis=xr, yaxis=yr, legendgroup=name, showlegend=i == 0,
                marker=dict(color=COLORS["real"] if owner else COLORS["synthetic"], opacity=0.55 if owner else 0.85,
                            line=dict(width=0), pattern=dict(shape="/" if owner else "", fgcolor="white", size=7,
                                         fillmode="overlay")),
                hovertemplate=hover))
            lay[yk] = axis_spec(title=what if i % cols == 0 else None, rangemode="tozero", nticks=5)
        if share:
            r, s = layers[0], layers[1]
            if r[2] > 0 and s[2] > 0:
                gap = float(np.max(np.abs(r[1] / r[2] - s[1] / s[2])))
                sub.append(f"largest gap {gap:.3f}")
            sub.append(f"{int(r[2]):,} real / {int(s[2]):,} synthetic")
        else:
            sub.append(f"{int(n_real):,} rows")
        if len(declared) > len(shown):
            sub.append(f"first {len(shown)} of {len(declared)} categories")
        if share:  # readable shares whatever their size
            top = max(float(np.max(c[:len(shown)] / t)) if t > 0 else 0.0 for _, c, t in layers)
            lay[yk].update(_share_ticks(top))
        lay[xk] = axis_spec(type="category", categoryorder="array", categoryarray=shown, automargin=True,
                            **_category_ticks(shown, dom[i][0][1] - dom[i][0][0]))
        lay[xk]["domain"], lay[yk]["domain"] = dom[i]
        lay[xk]["anchor"], lay[yk]["anchor"] = yr, xr
        ann.append(panel_title(two_lines(f"<b>{col}</b>", " · ".join(sub)), *dom[i][0], dom[i][1][1]))
        if n_real == 0 and not share:
            ann.append(empty_panel_note(i, "no rows"))
    lay.update(annotations=ann)
    return go.Figure(data=traces, layout=lay)


def numeric_by_category(real: pd.DataFrame, synthetic: pd.DataFrame | None, column: str, by: str,
                        categories: Sequence[str], *, lower: float | None = None, upper: float | None = None,
                        bins: int = 30, title: str = "", note: str | None = None, cols: int | None = None,
                        max_panels: int = MAX_CATEGORY_PANELS) -> go.Figure:
    """A numeric ``column`` within each category of ``by``: one panel per declared category (the first
    ``max_panels``), the real rows of that category as a grey dotted outline (owner view), the synthetic
    ones as vermillion bars, both as densities within the category (so a small category is as readable
    as a large one) on the same x axis (the column's public bounds when given).

    The panel heading gives the category and its number of real and synthetic rows: a category the
    synthetic data left empty, or filled, shows at once.
    """
    real = _frame_columns(real, "real")
    synthetic = _frame_columns(synthetic, "synthetic")
    declared = [str(c) for c in categories][:max(1, int(max_panels))]
    if not declared:
        return empty_figure("no category to show")
    for frame, what in ((real, "real"), (synthetic, "synthetic")):
        if frame is not None and (column not in frame or by not in frame):
            raise ValueError(f"The '{what}' table must have the columns {column!r} and {by!r}.")
    if lower is not None and upper is not None and float(upper) > float(lower):
        lo, hi = float(lower), float(upper)
    else:
        vals = [np.asarray(f[column], dtype=float) for f in (real, synthetic) if f is not None and len(f)]
        allv = np.concatenate(vals) if vals else np.zeros(1)
        lo, hi = float(allv.min()), float(allv.max())
        if hi <= lo:
            lo, hi = lo - 0.5, hi + 0.5
    edges = np.linspace(lo, hi, int(bins) + 1)
    mid = (edges[:-1] + edges[1:]) / 2
    k = len(declared)
    cols = int(cols) if cols else min(k, 4)
    rows, height, dom = _grid(k, cols, 210, title, note)
    lay = figure_layout(title=title, note=note, height=height, panel_titles=2, barmode="overlay", bargap=0.02,
                        legend=True, margin=dict(l=60, r=20, b=70))
    groups = {}
    for frame, name in ((real, _REAL), (synthetic, _SYNTH)):
        if frame is not None:
            lab = _labels(frame[by]).to_numpy()
            groups[name] = (lab, np.asarray(frame[column], dtype=float))
    traces, ann = [], []
    ymax = 0.0
    for i, cat in enumerate(declared):
        xk, yk, xr, yr = axis_keys(i)
        r_, c_ = divmod(i, cols)
        last_row = r_ == rows - 1 or i + cols >= k
        sizes = {}
        for name in (_SYNTH, _REAL):  # the outline on top of the bars
            if name not in groups:
                continue
            lab, vals = groups[name]
            z = vals[lab == cat]
            sizes[name] = z.size
            h = histogram(z, edges, density=True)
            ymax = max(ymax, float(h.max()) if h.size else 0.0)
            hov = f"<b>{name}</b><br>{by} = {cat}<br>{column} ≈ %{{x:.4g}}<br>density %{{y:.4g}}<extra></extra>"
            if name == _REAL:
                traces.append(go.Scatter(x=f32(np.r_[edges[0], edges]), y=f32(np.r_[0, h, 0]), mode="lines", name=name,
                                         xaxis=xr, yaxis=yr, legendgroup=name, showlegend=i == 0, hovertemplate=hov,
                                         line=dict(color="#262626", dash="dot", width=1.6, shape="hv")))
            else:
                traces.append(go.Bar(x=f32(mid), y=f32(h), width=float(edges[1] - edges[0]), name=name, xaxis=xr,
                                     yaxis=yr, legendgroup=name, showlegend=i == 0, hovertemplate=hov,
                                     marker=dict(color=COLORS["synthetic"], opacity=0.6, line=dict(width=0))))
        lay[xk] = axis_spec(title=column if last_row and c_ == 0 else None, range=[lo, hi], nticks=5,
                            showticklabels=last_row)
        lay[yk] = axis_spec(title="density" if c_ == 0 else None, nticks=4, showticklabels=c_ == 0)
        lay[xk]["domain"], lay[yk]["domain"] = dom[i]
        lay[xk]["anchor"], lay[yk]["anchor"] = yr, xr
        if i > 0:
            lay[xk]["matches"] = "x"
        sub = ", ".join(f"{sizes[n]:,} {'real' if n == _REAL else 'synthetic'}" for n in (_REAL, _SYNTH) if n in sizes)
        ann.append(panel_title(two_lines(f"<b>{by} = {cat}</b>", sub + " rows"), *dom[i][0], dom[i][1][1]))
        if sizes and max(sizes.values()) == 0:
            ann.append(empty_panel_note(i, "no rows"))
    for i in range(k):
        lay[axis_keys(i)[1]]["range"] = [0, ymax * 1.05 if ymax > 0 else 1]
    lay.update(annotations=ann)
    return go.Figure(data=traces, layout=lay)
