"""The certified sparse-marginal release: the certificate's terms and the realised loss over runs.
"""

from __future__ import annotations

from collections.abc import Mapping

import plotly.graph_objects as go

from ._common import (
    GROUP_COLORS,
    GROUP_SYMBOLS,
    TERM_COLORS,
    axis_spec,
    empty_figure,
    figure_layout,
)

__all__ = ["certificate_bar", "loss_vs_certificate"]


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
    lay = figure_layout(title=title, note=note, height=230 + 50 * len(rows), barmode="stack", bargap=0.35,
                        uniformtext=dict(minsize=10, mode="hide"), annotations=ann, margin=dict(l=20, r=30))
    lay["legend"]["traceorder"] = "normal"
    hi = max(total, float(loss) if loss is not None else 0.0)
    lay["xaxis"] = axis_spec(title="value (unit-cube units)", range=[0, hi * 1.18 if hi > 0 else 1])
    lay["yaxis"] = axis_spec(autorange="reversed", categoryorder="array", categoryarray=rows, ticks="")
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
    lay = figure_layout(title=title, note=note, height=440)
    lay["xaxis"] = axis_spec(title=xtitle or x, range=[0, hi], constrain="domain")
    lay["yaxis"] = axis_spec(title=ytitle or y, range=[0, hi], scaleanchor="x", scaleratio=1, constrain="domain")
    return go.Figure(data=traces, layout=lay)
