"""Private Evolution: one iteration (private data, variations, synthetic points) and the iterations
as an animation.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from ._common import (
    COLORS,
    FIGURE_POINTS,
    as_points,
    axis_spec,
    bounds_2d,
    box_shape,
    empty_figure,
    f32,
    figure_layout,
    hover_text,
    padded_range,
    scatter_axes,
    thin,
    thin_index,
    xy_of,
)

__all__ = ["pe_iteration", "pe_animation"]


def _pe_axes(lay: dict, lower, upper, d: int, names: Sequence[str] | None) -> list[dict]:
    nm = list(names) if names is not None and len(names) >= min(d, 2) else ["first coordinate", "second coordinate"]
    if d == 1:
        lay["xaxis"] = axis_spec(title=nm[0], range=None if lower is None else padded_range(float(np.ravel(lower)[0]),
                                                                               float(np.ravel(upper)[0])))
        lay["yaxis"] = axis_spec(visible=False, range=[-1, 1])
        return []
    b = bounds_2d(lower, upper, (0, 1))
    scatter_axes(lay, 0, b, nm[0], nm[1])
    return [box_shape(b)] if b is not None else []


def _pe_xy(S: np.ndarray, seed: int) -> tuple[np.ndarray, np.ndarray]:
    x, y = xy_of(S, (0, 1))
    if S.shape[1] == 1:  # 1-D: spread the points vertically (jitter) so they can be seen
        y = np.random.default_rng(seed).uniform(-0.8, 0.8, x.size)
    return x, y


def _coordinate_names(names: Sequence[str] | None) -> list[str]:
    nm = list(names) if names is not None else ["first coordinate", "second coordinate"]
    return nm + ["second coordinate"] * (2 - len(nm))


def _private_layer(private: np.ndarray | None, max_points: int, nm: Sequence[str]) -> list[go.Scatter]:
    """The private data (owner view, faint grey), at most ``max_points`` of them; none without data."""
    if private is None or not len(private):
        return []
    x, y = _pe_xy(thin(as_points(private), max_points), 1)
    return [go.Scatter(x=f32(x), y=f32(y), mode="markers", name="private data (owner view)",
                       marker=dict(size=4, color=COLORS["private"], opacity=0.35),
                       hovertemplate=hover_text("private point (owner view)", nm[0], nm[1]))]


def pe_iteration(private: np.ndarray | None, synthetic: np.ndarray, variations: np.ndarray | None = None, *,
                 weights: np.ndarray | None = None, title: str = "", lower=None, upper=None,
                 names: Sequence[str] | None = None, note: str | None = None) -> go.Figure:
    """One Private Evolution iteration in the first two coordinates: private points (owner view,
    faint grey), the variations (sky-blue crosses) and the resampled synthetic points (vermillion,
    size ∝ histogram weight when ``weights`` is given). At most a third of :data:`FIGURE_POINTS` private, a
    quarter variation and the rest synthetic points are drawn."""
    S = as_points(synthetic)
    d = S.shape[1]
    nm = _coordinate_names(names)
    traces = _private_layer(private, FIGURE_POINTS // 3, nm)
    if variations is not None and len(variations):
        V = thin(as_points(variations), FIGURE_POINTS // 4, seed=2)
        x, y = _pe_xy(V, 2)
        traces.append(go.Scatter(x=f32(x), y=f32(y), mode="markers", name="variations (candidates)",
                                 marker=dict(size=5, symbol="x-thin-open", color=COLORS["variation"], opacity=0.8,
                                             line=dict(width=1.2, color=COLORS["variation"])),
                                 hovertemplate=hover_text("variation", nm[0], nm[1])))
    idx = thin_index(S.shape[0], FIGURE_POINTS - FIGURE_POINTS // 3 - FIGURE_POINTS // 4, seed=3)
    x, y = _pe_xy(S[idx], 3)
    size: float | np.ndarray = 6
    if weights is not None and len(weights) == S.shape[0]:
        w = np.asarray(weights, dtype=float)[idx]
        size = f32(4 + 14 * np.sqrt(np.clip(w, 0, None) / max(float(np.max(w)) if w.size else 0.0, 1e-12)))
    traces.append(go.Scatter(x=f32(x), y=f32(y), mode="markers", name="synthetic points (DP)",
                             marker=dict(size=size, color=COLORS["synthetic"], opacity=0.8,
                                         line=dict(width=0.5, color="white")),
                             hovertemplate=hover_text("synthetic point", nm[0], nm[1])))
    lay = figure_layout(title=title, note=note, height=480)
    lay["shapes"] = _pe_axes(lay, lower, upper, d, nm)
    return go.Figure(data=traces, layout=lay)


def pe_animation(private: np.ndarray | None, synthetic: Sequence[np.ndarray | None], *, lower=None, upper=None,
                 w1: Sequence[float] | None = None, title: str = "", names: Sequence[str] | None = None,
                 note: str | None = None) -> go.Figure:
    """Private Evolution as an animation: one frame per iteration t = 0..T (press Play), the synthetic
    cloud over the private data (owner view, faint grey). At most half of :data:`FIGURE_POINTS` per layer and frame."""
    frames_data = [(t, as_points(S)) for t, S in enumerate(synthetic) if S is not None]
    if not frames_data:
        return empty_figure("no iterations to show")
    nm = _coordinate_names(names)
    traces = _private_layer(private, FIGURE_POINTS // 2, nm)
    syn_hover = hover_text("synthetic point", nm[0], nm[1])

    def label(t):
        ok = w1 is not None and t < len(w1) and w1[t] is not None and np.isfinite(w1[t])
        return f"iteration {t}" + (f", W1 = {w1[t]:.3f}" if ok else "")

    def heading(t):
        return f"{title} — {label(t)}" if title else label(t)

    t0, S0 = frames_data[0]
    x, y = _pe_xy(thin(S0, FIGURE_POINTS // 2), 3)
    traces.append(go.Scatter(x=f32(x), y=f32(y), mode="markers", name="synthetic points (DP)",
                             marker=dict(size=6, color=COLORS["synthetic"], opacity=0.8,
                                         line=dict(width=0.5, color="white")), hovertemplate=syn_hover))
    idx = len(traces) - 1
    frames, steps = [], []
    for t, S in frames_data:
        x, y = _pe_xy(thin(S, FIGURE_POINTS // 2), 3)
        frames.append(go.Frame(data=[go.Scatter(x=f32(x), y=f32(y))], traces=[idx], name=str(t),
                               layout=go.Layout(title_text=heading(t))))
        steps.append(dict(method="animate", label=str(t), args=[[str(t)], dict(mode="immediate",
                                                                              frame=dict(duration=0, redraw=False),
                                                                              transition=dict(duration=0))]))
    lay = figure_layout(title=heading(t0), note=note, height=560, margin=dict(b=60))
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
