"""The browser benchmark's own arithmetic (benchmarks/bench_browser.py): what its acceptance block counts.

The benchmark itself needs Chromium and minutes; these checks need neither."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from benchmarks import bench_browser as bench  # noqa: E402

FLOOR = {"notch_settle_median_s": 0.1, "cold_settle_s": 1.5}
CHART_FLOOR = {"cold_settle_s": 2.0, "cold_headline_s": None}


def _row(name, *, cold, headline, notch=0.5, head=1.0, worst=None):
    return {"name": name, "notch_settle_median_s": notch, "notch_headline_median_s": head, "extreme_worst_s": worst,
            "cold_settle_s": cold, "cold_headline_s": headline}


def test_a_cold_visit_counts_until_its_headline_is_final_and_is_read_against_both_floors():
    acc = bench.acceptance(FLOOR, [_row("pmm", cold=2.5, headline=3.4)], CHART_FLOOR)["pages"]["pmm"]
    assert acc["figures_s"]["cold"] == 3.4  # the later of the script's end and the final headline
    assert not acc["checks"]["cold_le_3s"]
    assert acc["ratio_to_floor"]["cold"] == 3.4 / 1.5
    assert acc["ratio_to_floor"]["cold_to_chart_floor"] == 3.4 / 2.0


def test_without_a_chart_floor_the_ratio_is_absent_and_the_checks_unchanged():
    rows = [_row("pmm", cold=2.0, headline=None, notch=0.8), _row("home", cold=2.2, headline=2.9, notch=1.3)]
    acc = bench.acceptance(FLOOR, rows)
    assert acc["pages"]["pmm"]["ratio_to_floor"]["cold_to_chart_floor"] is None
    assert acc["pages"]["pmm"]["holds"]
    home = acc["pages"]["home"]["checks"]
    assert home["home_le_1_5x_pmm"] is False and home["notch_idle_le_1s"] is False  # 1.3 s > 1.5 × 0.8 and > 1 s
    assert acc["all_hold"] is False


def test_the_chart_floor_draws_the_pages_figure_and_is_served_like_the_dashboard():
    ast.parse(bench.CHART_APP)
    serve = bench.CHART_SERVE.format(root=str(ROOT), page="/tmp/chart.py")
    ast.parse(serve)
    assert "viz.scatter_compare(" in bench.CHART_APP and bench.HELLO_APP in bench.CHART_APP
    assert "lifespan=_warm" in serve and "st.App(" in serve
