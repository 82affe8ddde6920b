"""The first-view figures, drawn with Vega-Lite (:mod:`dpsynth_core.viz.vega`): real against synthetic, the
first screen's membership question, W1 in one picture. Their numbers are read from the specification itself."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from dpsynth_core import viz

RNG = np.random.default_rng(3)
X, Y = RNG.random((400, 2)), RNG.random((300, 2))


def strict(spec: dict) -> dict:
    """The specification's JSON, parsed strictly: NaN or Infinity literals are an error."""
    def bad(token):
        raise ValueError(f"non-finite literal {token} in the specification")
    return json.loads(json.dumps(spec), parse_constant=bad)


def layers(panel: dict) -> list[dict]:
    return panel.get("layer", [panel])


def point_layer(panel: dict) -> dict:
    return next(la for la in layers(panel) if la["mark"]["type"] == "circle")


def test_scatter_compare_draws_both_sets_on_shared_axes_with_the_public_box():
    fig = strict(viz.scatter_compare(X, Y, ["a", "b"], lower=[0, 0], upper=[1, 1]))
    assert fig["$schema"].endswith("vega-lite/v5.json")
    real, synthetic = fig["hconcat"]
    # at most FIGURE_POINTS // 2 per panel (thinned), the real one grey (owner view) in a dotted frame
    for panel, n, color in ((real, 400, viz.COLORS["real"]), (synthetic, 300, viz.COLORS["synthetic"])):
        pts = point_layer(panel)
        assert len(pts["data"]["values"]) == min(n, viz.FIGURE_POINTS // 2)
        assert pts["mark"]["color"] == color and pts["encoding"]["tooltip"]
        assert panel["title"]["subtitle"].startswith(f"{n:,} rows")
        box = next(la for la in layers(panel) if la["mark"]["type"] == "rect")["data"]["values"][0]
        assert (box["x"], box["x2"], box["y"], box["y2"]) == (0.0, 1.0, 0.0, 1.0)  # the public box
    assert real["view"]["strokeDash"] and real["title"]["text"] == "real data (owner view)"
    assert synthetic["view"]["stroke"] is None
    # both panels span the public box (3% padding), and say the axes share one scale
    for panel in (real, synthetic):
        enc = point_layer(panel)["encoding"]
        assert enc["x"]["scale"]["domain"] == enc["y"]["scale"]["domain"] == pytest.approx([-0.03, 1.03])
    assert "same scale" in point_layer(real)["encoding"]["x"]["title"][1]


def test_scatter_compare_keeps_the_coordinates_it_draws():
    Z = np.array([[0.25, 0.75], [0.5, 0.125]])
    fig = viz.scatter_compare(Z, Z[::-1], ["a", "b"], lower=[0, 0], upper=[1, 1])
    got = sorted((p["x"], p["y"]) for p in point_layer(fig["hconcat"][0])["data"]["values"])
    assert got == [(0.25, 0.75), (0.5, 0.125)]


def test_scatter_compare_axes_span_their_own_bounds_when_units_differ():
    lo, hi = [18.0, 40.0], [90.0, 200.0]
    Z = RNG.random((200, 2)) * (np.array(hi) - lo) + lo
    fig = viz.scatter_compare(Z, Z, ["age", "weight"], lower=lo, upper=hi)
    for panel in fig["hconcat"]:
        enc = point_layer(panel)["encoding"]
        for ax, i in (("x", 0), ("y", 1)):
            a, b = enc[ax]["scale"]["domain"]
            assert a <= lo[i] and b >= hi[i] and b - a <= 1.1 * (hi[i] - lo[i])
    assert "own scale" in point_layer(fig["hconcat"][0])["encoding"]["x"]["title"][1]


def test_scatter_compare_without_bounds_claims_no_public_box():
    fig = viz.scatter_compare(X, Y, ["a", "b"])
    for panel in fig["hconcat"]:
        assert [la["mark"]["type"] for la in layers(panel)] == ["circle"]  # no box, no scale note
        assert point_layer(panel)["encoding"]["x"]["title"] == "a"


@pytest.mark.parametrize("Yc", [np.empty((0, 2)), np.array([[0.5, 0.5]])], ids=["empty", "one point"])
def test_scatter_compare_with_an_empty_or_single_point_synthetic_set(Yc):
    fig = strict(viz.scatter_compare(X, Yc, ["a", "b"], lower=[0, 0], upper=[1, 1]))
    marks = [la["mark"] for la in layers(fig["hconcat"][1])]
    assert any(m.get("text") == "no points" for m in marks) == (len(Yc) == 0)
    strict(viz.scatter_compare(X, Yc, ["a", "b"]))  # no bounds: ranges from the data


def test_scatter_compare_on_one_column_overlays_two_histograms():
    x, y = RNG.random(500), RNG.random(400)
    fig = strict(viz.scatter_compare(x[:, None], y[:, None], ["c0"], lower=[0], upper=[1]))
    bars, outline = fig["layer"]
    assert bars["mark"]["color"] == viz.COLORS["synthetic"] and outline["mark"]["strokeDash"]
    width = bars["data"]["values"][0]["x2"] - bars["data"]["values"][0]["x"]
    # densities: each histogram integrates to 1 over the public interval
    assert sum(v["density"] for v in bars["data"]["values"]) * width == pytest.approx(1.0, abs=1e-3)
    assert sum(v["density"] for v in outline["data"]["values"]) * width == pytest.approx(1.0, abs=1e-3)


def test_membership_answers_counts_releases_per_answer_and_marks_the_table():
    """Bars: how many releases gave each answer, for each table (every answer from the lowest to the highest has
    its bar, zeros included); grey dashed rules at the table's own answers."""
    fig = strict(viz.membership_answers((1, 0, 3, 1), (0, 0, 2), 1, 0, who="her"))
    bars, rules, *labels = fig["layer"]
    by = {}
    for v in bars["data"]["values"]:
        by.setdefault(v["from"], {})[v["answer"]] = v["releases"]
    assert by == {"releases from the table with her": {0: 1, 1: 2, 2: 0, 3: 1},
                  "releases from the table without her": {0: 2, 1: 0, 2: 1, 3: 0}}
    assert {v["label"]: v["answer"] for v in rules["data"]["values"]} == {"the table with her: 1": 1,
                                                                          "the table without her: 0": 0}
    assert rules["mark"]["color"] == viz.COLORS["real"] and len(labels) == 2  # the table: owner view, grey
    same = viz.membership_answers((2,), (2,), 2, 2)
    assert [v["label"] for v in same["layer"][1]["data"]["values"]] == ["the table, with or without the person: 2"]


def test_kr_duality_numbers_agree():
    """The witness gain and the CDF area are the same number (up to the grid's discretisation)."""
    a = RNG.normal(0.3, 0.05, 2000)
    b = RNG.normal(0.5, 0.05, 2000)
    fig = strict(viz.kr_duality(a, b))
    top, bottom = fig["vconcat"]
    gain = float(re.findall(r"= (-?[\d.]+)", top["title"]["subtitle"])[-1])
    area = float(re.findall(r"= (-?[\d.]+)", bottom["title"]["subtitle"])[-1])
    # both ≈ the true W1 = 0.2 (a shift of 0.2); the grid step is 1/400, so agreement to 0.01 is loose
    assert abs(gain - area) < 0.01 and abs(area - 0.2) < 0.02
    # the shaded band is between the two CDFs the curves draw
    cdf = bottom["data"]["values"]
    assert all(0 <= v["Fa"] <= 1 and 0 <= v["Fb"] <= 1 for v in cdf) and len(cdf) == 401
    assert sum(abs(v["Fa"] - v["Fb"]) for v in cdf[:-1]) / 400 == pytest.approx(area, abs=1e-3)


def test_first_view_figures_carry_titles_and_notes():
    for fig in (viz.scatter_compare(X, Y, ["a", "b"], title="t", note="n"),
                viz.kr_duality(RNG.random(100), RNG.random(100), title="t", note="n"),
                viz.membership_answers((1,), (0,), 1, 0, title="t", note="n")):
        assert fig["title"] == {"text": "t", "subtitle": "n"}
        assert fig["config"]["legend"]["orient"] == "bottom"  # legends never cover a title or a panel
