"""The Audit and Private Evolution pages (AppTest): the audit flags the broken PMM or says it cannot decide,
and states its detection limit; PE runs under the page's cost caps, shows the per-iteration W1 only on
request, labels its metric against the headline's, and shows its documentation on the page; the lesson
box stays open while the student changes ε and has the teacher's answers in a collapsed box."""

from __future__ import annotations

import pytest
from apptest import errors, exceptions, goto, new_app, small_data

from dashboard.answers import ANSWERS
from dashboard.lessons import LESSONS
from dpsynth_core.evolution import (
    INTERACTIVE_MAX_ITERATIONS,
    INTERACTIVE_MAX_LEVELS,
    INTERACTIVE_MAX_SYNTHETIC,
)


def _expander(at, label):
    found = [e for e in at.expander if e.label == label]
    assert len(found) == 1, [e.label for e in at.expander]
    return found[0]


@pytest.mark.slow
def test_audit_page_flags_the_broken_pmm_or_says_it_cannot_decide():
    """ε = 1: caught with 1,000 releases; ε = 5: above the limit of 1,000 releases (4.99), the audit raises them
    to 2,735 and catches it; ε = 10: it would need about 150,000, so the page says it cannot decide (a warning,
    never the green pass). The seed is the page's teaching seed (0)."""
    at = new_app(small_data(300))
    goto(at, "audit")
    at.selectbox(key="audit_mech").set_value("broken_pmm").run()
    at.select_slider(key="audit_n").set_value(50).run()
    for eps, verdict, trials in ((1.0, "violation", 1000), (5.0, "violation", 2735), (10.0, "cannot decide", 1000)):
        at.sidebar.select_slider(key="epsilon").set_value(eps).run()
        caption = " ".join(c.value for c in at.caption)
        assert "Detection limit with 1,000 releases per dataset: ε ≈ 4.99" in caption
        if eps == 5.0:
            assert "the audit raises them to 2,735" in caption
        if eps == 10.0:
            assert "so the audit will say it cannot decide" in caption
        at.button(key="audit_run").click().run()
        assert not exceptions(at) and not errors(at)[:-1], errors(at)
        _, res = at.session_state["audit_result"]
        assert (res.epsilon_declared, res.verdict, res.trials) == (eps, verdict, trials)
        if verdict == "violation":
            assert any("VIOLATION" in e.value for e in at.error)
            assert not at.success
        else:
            assert any("Cannot decide" in w.value and "cannot see violations above ε ≈ 4.99 with 1,000 releases"
                       in w.value for w in at.warning)
            assert not at.success and not any("VIOLATION" in e.value for e in at.error)
        assert any(m.label == "detection limit" for m in at.metric)


def test_lesson_box_stays_open_and_has_the_answers():
    at = new_app(small_data(300))
    for page in ("audit", "private_evolution"):
        goto(at, page)
        assert not exceptions(at), exceptions(at)
        for eps in (None, 0.1, 10.0):
            if eps is not None:
                at.sidebar.select_slider(key="epsilon").set_value(eps).run()
                assert not exceptions(at), exceptions(at)
            assert _expander(at, "Lesson: try this").proto.expanded, (page, eps)
            answers = _expander(at, "Answers (for the teacher)")
            assert not answers.proto.expanded
            text = " ".join(m.value for m in answers.markdown)
            assert all(a in text for a in ANSWERS[page]) and len(ANSWERS[page]) == len(LESSONS[page].ask)


def test_private_evolution_page_caps_its_cost_and_computes_w1_only_on_request():
    at = new_app(small_data(2000))
    goto(at, "private_evolution")
    at.sidebar.select_slider(key="epsilon").set_value(100.0).run()
    assert not exceptions(at) and not errors(at), (exceptions(at), errors(at))
    ledger = at.session_state["release_info"].ledger
    steps = [s for s in ledger.iloc[:, 0].astype(str) if s.startswith("iteration")]
    assert 1 <= len(steps) <= INTERACTIVE_MAX_ITERATIONS  # at ε = 100 the full rule would run 6
    caption = " ".join(c.value for c in at.caption)
    assert (f"at most {INTERACTIVE_MAX_ITERATIONS} iterations of {INTERACTIVE_MAX_SYNTHETIC} points with "
            f"{INTERACTIVE_MAX_LEVELS} variation scales") in caption
    assert not any("W1 after each iteration" in c.proto.spec for c in at.get("plotly_chart"))
    assert not any("largest-coordinate distance (l∞), hence" in c.value for c in at.caption)
    at.toggle(key="pe_show_w1").set_value(True).run()
    assert not exceptions(at) and not errors(at), (exceptions(at), errors(at))
    assert any("W1 after each iteration" in c.proto.spec for c in at.get("plotly_chart"))
    # the chart's caption names its metric and the headline's, with both numbers
    assert any("straight-line distance (l2)" in c.value and "largest-coordinate distance (l∞), hence" in c.value
               for c in at.caption)
    # the documentation opens on the page (no file path a browser cannot follow)
    doc = _expander(at, "Private Evolution in detail (docs/private-evolution.md)")
    assert not doc.proto.expanded
