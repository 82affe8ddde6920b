"""The first screen's picture: a membership question, answered by the table and by its releases.

Input is the answers (integers), as :class:`dpsynth_core.first_look.MembershipDemo` holds them: the
table's two answers (owner view, grey arrows) and the releases' answers from the table with and without
the person (bars: how many releases gave each answer).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from . import vega
from ._common import COLORS, GROUP_COLORS

__all__ = ["membership_answers"]


def membership_answers(released_with: Sequence[int], released_without: Sequence[int], table_with: int,
                       table_without: int, *, who: str = "the person", title: str = "",
                       note: str | None = None) -> dict:
    """How many releases answered each count, from the table with ``who`` (vermillion) and without
    (blue), side by side; above them, grey rules at the table's own two answers (owner view). Where
    the bars of both colours share an answer, that answer does not say which table it came from.
    A Vega-Lite specification: Home's first screen (:mod:`.vega`)."""
    w, wo = np.asarray(released_with, dtype=int), np.asarray(released_without, dtype=int)
    lo = int(min(w.min(initial=table_without), wo.min(initial=table_without), table_without))
    hi = int(max(w.max(initial=table_with), wo.max(initial=table_with), table_with))
    xs = np.arange(lo, hi + 1)
    names = (f"releases from the table with {who}", f"releases from the table without {who}")
    rows = [{"answer": int(x), "releases": int((answers == x).sum()), "from": name}
            for name, answers in zip(names, (w, wo), strict=True) for x in xs]
    if table_with == table_without:  # one rule, one label
        marks = [{"answer": int(table_with), "label": f"the table, with or without {who}: {table_with}", "dy": -8}]
    else:  # one label above the other: the two answers are often neighbours (1 and 0)
        marks = [{"answer": int(table_with), "label": f"the table with {who}: {table_with}", "dy": -24},
                 {"answer": int(table_without), "label": f"the table without {who}: {table_without}", "dy": -8}]
    top = max(1, max((r["releases"] for r in rows), default=1))
    x = {"field": "answer", "type": "ordinal", "title": "the answer to the question (a count of rows)",
         "axis": {"labelAngle": 0}, "scale": {"domain": [int(v) for v in xs]}}
    bars = {"data": {"values": rows}, "mark": {"type": "bar", "opacity": 0.85},
            "encoding": {"x": x, "xOffset": {"field": "from", "sort": list(names)},
                         "y": {"field": "releases", "type": "quantitative", "title": "releases",
                               "scale": {"domain": [0, top * 1.35]}, "axis": {"tickMinStep": 1}},
                         "color": {"field": "from", "type": "nominal", "title": None, "sort": list(names),
                                   "scale": {"domain": list(names), "range": [COLORS["synthetic"], GROUP_COLORS[0]]}},
                         "tooltip": [{"field": "from", "title": "from"}, {"field": "answer"},
                                     {"field": "releases", "title": "releases with that answer"}]}}
    rules = {"data": {"values": marks}, "mark": {"type": "rule", "color": COLORS["real"], "strokeDash": [4, 3],
                                                 "strokeWidth": 1.5},
             "encoding": {"x": x}}
    labels = [{"data": {"values": [m]},
               "mark": {"type": "text", "color": COLORS["real"], "fontSize": 12, "align": "left", "dx": 4,
                        "dy": m["dy"], "baseline": "bottom"},
               "encoding": {"x": x, "y": {"datum": top * 1.35, "type": "quantitative"}, "text": {"field": "label"}}}
              for m in marks]
    return vega.chart({"width": "container", "height": 320, "layer": [bars, rules, *labels]}, title=title, note=note)
