"""What a chart costs a new browser tab, by chart engine: Plotly, Streamlit's Vega-Lite, a PNG image, none.

One small Streamlit page (a title, a metric, then real against synthetic as two panels of 1,000 points each) is
drawn four ways, chosen by the URL: ``plotly`` (``make_subplots``, two scatter traces: what the dashboard's
figures are), ``vega`` (``st.vega_lite_chart``, the same points faceted), ``png`` (Matplotlib rendered on the
server, ``st.image``) and ``none`` (the page without its chart). Each visit is a new browser context on a
warm server, so every visit pays what a student's first visit to a page pays in the browser; the server's
part is the same small script every time. Recorded per visit (seconds after navigation): when the metric
shows its value, and when the chart is drawn (Plotly's points, Vega's canvas, the image). Visits alternate
between the engines, ``--reps`` rounds.

Nothing is asserted: a measurement, with the load average at start and end (quote it from a quiet machine).
``python benchmarks/bench_chart_engines.py`` writes ``results/chart_engines.json``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import textwrap
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_browser import CHROMIUM_ARGS, ROOT, VIEWPORT, Server  # noqa: E402
from common import write  # noqa: E402

ENGINES = ("plotly", "vega", "png", "none")

PAGE = textwrap.dedent('''\
    """One chart, drawn by the engine the URL names (benchmarks/bench_chart_engines.py)."""
    import io

    import numpy as np
    import streamlit as st

    kind = st.query_params.get("kind", "none")
    rng = np.random.default_rng(0)
    X, Y = rng.random((1000, 2)), rng.random((1000, 2))
    st.title("One chart")
    st.metric("W1 (headline)", "0.0123")
    if kind == "plotly":
        import plotly.graph_objects as go
        from plotly.subplots import make_subplots

        fig = make_subplots(rows=1, cols=2, subplot_titles=("real", "synthetic"))
        fig.add_trace(go.Scatter(x=X[:, 0], y=X[:, 1], mode="markers", marker={"size": 3}), 1, 1)
        fig.add_trace(go.Scatter(x=Y[:, 0], y=Y[:, 1], mode="markers", marker={"size": 3}), 1, 2)
        st.plotly_chart(fig)
    elif kind == "vega":
        import pandas as pd

        df = pd.DataFrame({"x": np.r_[X[:, 0], Y[:, 0]], "y": np.r_[X[:, 1], Y[:, 1]],
                           "which": ["real"] * 1000 + ["synthetic"] * 1000})
        st.vega_lite_chart(df, {"mark": {"type": "circle", "size": 8},
                                "encoding": {"x": {"field": "x", "type": "quantitative"},
                                             "y": {"field": "y", "type": "quantitative"},
                                             "column": {"field": "which"}}})
    elif kind == "png":
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(1, 2, figsize=(8, 4), dpi=100)
        ax[0].scatter(X[:, 0], X[:, 1], s=2)
        ax[1].scatter(Y[:, 0], Y[:, 1], s=2)
        buf = io.BytesIO()
        fig.savefig(buf, format="png")
        plt.close(fig)
        st.image(buf.getvalue())
''')

#: What "the chart is drawn" means per engine.
DRAWN = {"plotly": ".js-plotly-plot .points path", "vega": ".vega-embed canvas, .vega-embed svg",
         "png": "[data-testid=stImage] img, [data-testid=stFullScreenFrame] img",
         "none": "[data-testid=stMetricValue]"}


def visit(browser, base: str, kind: str) -> dict:
    ctx = browser.new_context(viewport=VIEWPORT)
    try:
        page = ctx.new_page()
        t0 = time.perf_counter()
        page.goto(f"{base}/?kind={kind}")
        page.get_by_text("0.0123").wait_for(timeout=60_000)
        metric = time.perf_counter() - t0
        page.wait_for_selector(DRAWN[kind], timeout=60_000)
        return {"engine": kind, "metric_s": metric, "chart_s": time.perf_counter() - t0}
    finally:
        ctx.close()


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=3, help="rounds of one visit per engine")
    ap.add_argument("--chromium", default=os.environ.get("DPSYNTH_CHROMIUM", "/usr/bin/chromium"))
    ap.add_argument("--quick", action="store_true", help="one round (run_all.py --quick)")
    ap.add_argument("--out", default="chart_engines")
    args = ap.parse_args(argv)
    if args.quick:  # one round, written beside the full run's results rather than over them
        args.reps, args.out = 1, f"{args.out}_quick"
    from playwright.sync_api import sync_playwright

    load_start = os.getloadavg()
    visits = []
    with tempfile.TemporaryDirectory(prefix="bench_chart_engines_") as tmp, sync_playwright() as pw:
        script = Path(tmp) / "one_chart.py"
        script.write_text(PAGE)
        browser = pw.chromium.launch(executable_path=args.chromium, args=CHROMIUM_ARGS, headless=True)
        with Server(script, ROOT, trace=False) as server:
            for kind in ENGINES:  # once each, unrecorded: the server imports each engine's libraries
                visit(browser, server.base, kind)
            for rep in range(args.reps):
                for kind in ENGINES:
                    v = {"rep": rep, **visit(browser, server.base, kind)}
                    visits.append(v)
                    print(f"{rep} {kind:7s} metric {v['metric_s']:.2f} s, chart {v['chart_s']:.2f} s", flush=True)
        browser.close()
    summary = {kind: {f"{what}_median_s": statistics.median(v[f"{what}_s"] for v in visits if v["engine"] == kind)
                      for what in ("metric", "chart")} for kind in ENGINES}
    base = summary["none"]["chart_median_s"]
    for kind in ENGINES:
        summary[kind]["chart_minus_none_s"] = summary[kind]["chart_median_s"] - base
    payload = {"reps": args.reps, "load_average_start": load_start, "load_average_end": os.getloadavg(),
               "summary": summary, "visits": visits}
    write(args.out, payload)
    return payload


if __name__ == "__main__":
    main()
