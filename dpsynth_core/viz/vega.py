"""Vega-Lite specifications: the figures of a page's first view.

A new browser tab loads and starts Plotly's code (about 3 MB) once, when its first Plotly figure arrives:
1.0–1.4 s of the browser's main thread on two cores, during which the page's other elements (its headline
too) wait. Vega-Lite's code starts in a fraction of that (benchmarks/bench_chart_engines.py;
docs/architecture.md, "Page speed in a browser"). So the figures every first visit draws (real against
synthetic, the first screen's membership question, W1 in one picture) are Vega-Lite specifications: plain
dicts, with their data inline, that ``st.vega_lite_chart`` draws; the detail views stay Plotly.

The helpers here only build dicts (no Streamlit, no Altair): a test can read a figure's numbers from them.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ._common import COLORS

__all__ = ["FONT", "config", "points", "panel_heading", "chart"]

FONT = "sans-serif"


def config() -> dict:
    """The shared look: quiet axes, the dashboard's font, no frame around a panel unless it says so."""
    return {"font": FONT, "view": {"stroke": None},
            "axis": {"labelFontSize": 11, "titleFontSize": 12, "titleFontWeight": "normal", "gridColor": "#ececec",
                     "domainColor": "#bfbfbf", "tickColor": "#bfbfbf", "labelColor": "#404040",
                     "titleColor": "#262730"},
            "legend": {"orient": "bottom", "labelFontSize": 12, "titleFontSize": 12, "labelLimit": 400},
            "title": {"fontSize": 13, "fontWeight": "normal", "anchor": "start", "color": "#262730",
                      "subtitleFontSize": 11, "subtitleColor": "#595959"}}


def _r(v: np.ndarray, digits: int = 5) -> list:
    """Numbers for the JSON: float32-like precision is plenty for a picture and halves the bytes."""
    return [float(x) for x in np.round(np.asarray(v, dtype=float), digits)]


def points(columns: dict[str, np.ndarray | Sequence], **constant) -> list[dict]:
    """Inline data values: one dict per row from equal-length columns (numbers rounded), plus constant fields."""
    names = list(columns)
    cols = [(_r(v) if np.asarray(v).dtype.kind in "fiu" else [str(x) for x in v]) for v in columns.values()]
    return [{**dict(zip(names, row, strict=True)), **constant} for row in zip(*cols, strict=True)]


def panel_heading(head: str, sub: str = "", *, color: str | None = None, owner: bool = False) -> dict:
    """A panel's two-line title: its name (in the layer's colour) and a grey line below."""
    out = {"text": head, "color": color or (COLORS["real"] if owner else "#262730"), "fontWeight": "bold"}
    if sub:
        out["subtitle"] = sub
    return out


def chart(body: dict, *, title: str = "", note: str | None = None) -> dict:
    """A complete top-level specification: the schema, the shared config, and a title (with a note) if any."""
    spec = {"$schema": "https://vega.github.io/schema/vega-lite/v5.json", "config": config(), **body}
    if title:
        spec["title"] = {"text": title, **({"subtitle": note} if note else {})}
    elif note:
        spec["title"] = {"text": "", "subtitle": note}
    return spec
