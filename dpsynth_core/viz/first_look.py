"""The first screen's picture: a membership question, answered by the table and by its releases.

Input is the answers (integers), as :class:`dpsynth_core.first_look.MembershipDemo` holds them: the
table's two answers (owner view, grey arrows) and the releases' answers from the table with and without
the person (bars: how many releases gave each answer).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from ._common import COLORS, GROUP_COLORS, axis_spec, figure_layout

__all__ = ["membership_answers"]


def membership_answers(released_with: Sequence[int], released_without: Sequence[int], table_with: int,
                       table_without: int, *, who: str = "the person", title: str = "",
                       note: str | None = None) -> go.Figure:
    """How many releases answered each count, from the table with ``who`` (vermillion) and without
    (blue), side by side; above them, grey arrows at the table's own two answers (owner view). Where
    the bars of both colours share an answer, that answer does not say which table it came from."""
    w, wo = np.asarray(released_with, dtype=int), np.asarray(released_without, dtype=int)
    lo = int(min(w.min(initial=table_without), wo.min(initial=table_without), table_without))
    hi = int(max(w.max(initial=table_with), wo.max(initial=table_with), table_with))
    xs = np.arange(lo, hi + 1)
    traces = []
    for name, answers, color in ((f"releases from the table with {who}", w, COLORS["synthetic"]),
                                 (f"releases from the table without {who}", wo, GROUP_COLORS[0])):
        counts = np.array([(answers == x).sum() for x in xs])
        traces.append(go.Bar(x=xs, y=counts, name=name, marker=dict(color=color, opacity=0.85, line=dict(width=0)),
                             hovertemplate=f"<b>{name}</b><br>answer %{{x}}: %{{y}} release(s)<extra></extra>"))
    # one label above the other: the two answers are often neighbours (1 and 0)
    ann = [dict(x=x, y=1.0, xref="x", yref="paper", ax=0, ay=ay, showarrow=True, arrowhead=2, arrowwidth=1.5,
                arrowcolor=COLORS["real"], yanchor="bottom", font=dict(size=12, color=COLORS["real"]),
                text=f"the table {label}: {x}")
           for x, ay, label in ((table_with, -52, f"with {who}"), (table_without, -28, f"without {who}"))]
    if table_with == table_without:  # the arrows would overlap: one label
        ann = [{**ann[0], "text": f"the table, with or without {who}: {table_with}"}]
    lay = figure_layout(title=title, note=note, height=360, barmode="group", bargap=0.3, bargroupgap=0.05,
                        panel_titles=4, margin=dict(b=80))
    lay["xaxis"] = axis_spec(title="the answer to the question (a count of rows)", dtick=1 if hi - lo <= 20 else None,
                             range=[lo - 0.6, hi + 0.6])  # the answers only (a label must not widen the axis)
    lay["yaxis"] = axis_spec(title="releases", rangemode="tozero", dtick=1 if max(len(w), len(wo)) <= 12 else None)
    lay["annotations"] = ann
    return go.Figure(traces, layout=lay)
