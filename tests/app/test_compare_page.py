"""The Compare page's baseline (issue 27): the flat histogram at its rule-chosen grid, the sentence saying
how that grid was chosen, and the owner-view "best grid in hindsight" reference (labelled as not DP)."""

from __future__ import annotations

import math

from apptest import goto, new_app, small_data

from dpsynth_core import defaults


def _run(at, mechanisms):
    goto(at, "compare")
    at.multiselect(key="compare_mechs").set_value(mechanisms).run()
    at.button(key="compare_run").click().run()
    assert not at.exception, [e.value for e in at.exception]
    return at.session_state["compare_result"][1]


def test_compare_shows_the_rule_grid_and_the_owner_view_reference():
    at = new_app(small_data(300))
    df, synth, best = _run(at, ["flat_histogram", "pmm"])
    flat = df[df["mechanism"] == "flat_histogram"].iloc[0]
    k = flat["resolved"]["bins"]
    d = len(next(iter(synth.values()))[0])
    # the page's release is the default: the study's rule at the noisy n (add/remove: 5% of ε buys it, the rest
    # goes to the counts); the release's size is that noisy n
    eps = flat["epsilon"]
    assert k == defaults.flat_histogram_bins(int(flat["n_synthetic"]), eps - 0.05 * eps, d)
    text = " ".join(m.value for m in at.markdown)
    assert f"{k} cells per axis, by the rule of the defaults study" in text
    assert "flat_histogram_bins" in text and "public quantities only" in text
    # the reference: the best of the candidate grids around the rule's, by W1 against the data (owner view)
    cands = best["candidates"]
    assert k in set(cands["bins"]) and len(cands) >= 3
    assert best["w1"] == cands["w1"].min() and best["bins"] == int(cands.loc[cands["w1"].idxmin(), "bins"])
    assert best["w1"] <= float(cands.loc[cands["bins"] == k, "w1"].iloc[0])
    assert "Owner view, not DP" in text and f"best grid in hindsight is {best['bins']} per axis with W1 {best['w1']:.3g}" in text
    assert any("owner view, not DP" in c.value for c in at.caption)  # the chart's caption names the dashed line
    assert math.isfinite(best["w1"]) and best["w1"] > 0


def test_compare_without_the_histogram_has_no_reference():
    at = new_app(small_data(300))
    df, _, best = _run(at, ["pmm"])
    assert best is None and set(df["mechanism"]) == {"pmm"}
    assert not any("How the flat histogram's grid was chosen" in m.value for m in at.markdown)
