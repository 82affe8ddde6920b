"""dashboard.sweep.kept_sweep: a computation behind a button, its progress shown, its result kept."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

SCRIPT = """
import streamlit as st
from dashboard.sweep import kept_sweep

ss = st.session_state
ss.setdefault("calls", [])
ss.setdefault("answer", 42)

def compute(progress):
    progress(0.5, "half way")
    progress(1.7, "overshoot")  # clamped to 1, never an error
    ss["calls"].append(ss["answer"])
    return ss["answer"]

out = kept_sweep("Run it", compute, key="go", slot="kept", fingerprint=ss.get("fp", 1),
                 when_stale=ss.get("when_stale", "note"))
st.write(f"result={out}")
"""


def _result(at: AppTest) -> str:
    return [m.value for m in at.markdown if m.value.startswith("result=")][-1]


def test_kept_sweep_runs_on_the_button_keeps_the_result_and_marks_it_stale():
    at = AppTest.from_string(SCRIPT, default_timeout=60)
    at.run()
    assert not at.exception and _result(at) == "result=None"  # nothing runs before the button
    assert at.session_state["calls"] == []
    at.button(key="go").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert _result(at) == "result=42" and at.session_state["kept"] == (1, 42)
    at.run()  # a rerun (e.g. another widget) keeps the result without computing again
    assert _result(at) == "result=42" and at.session_state["calls"] == [42]
    assert not any("Earlier result" in i.value for i in at.info)
    # other settings: the old result is still shown, labelled as earlier work, with the button that refreshes it
    at.session_state["fp"] = 2
    at.run()
    assert _result(at) == "result=42"
    assert any("**Earlier result**" in i.value and "**Run it**" in i.value for i in at.info), [i.value for i in at.info]
    # ... or hidden, when the page asks for it
    at.session_state["when_stale"] = "hide"
    at.run()
    assert _result(at) == "result=None"
    # a failed run (None) keeps the previous result
    at.session_state["answer"] = None
    at.button(key="go").click().run()
    assert at.session_state["kept"] == (1, 42) and at.session_state["calls"] == [42, None]
    # a successful run under the new settings replaces it
    at.session_state["answer"] = 7
    at.button(key="go").click().run()
    assert at.session_state["kept"] == (2, 7) and _result(at) == "result=7"
    assert not at.exception


def test_progress_reaches_the_bar_once_per_percent():
    """The audit reports after each of up to 10,000 releases; the bar (a message to the browser per update) hears
    of it once per percent, always with the latest text, and the end is always shown."""
    from dashboard.sweep import _by_percent

    class Bar:
        def __init__(self):
            self.calls = []

        def progress(self, value, text):
            self.calls.append((value, text))

    bar = Bar()
    update = _by_percent(bar)
    for i in range(1, 10_001):
        update(i / 10_000, f"{i:,} / 10,000 releases")
    assert len(bar.calls) == 101 and bar.calls[0] == (0.0001, "1 / 10,000 releases")  # 0 %, 1 %, ..., 100 %
    assert bar.calls[-1] == (1.0, "10,000 / 10,000 releases")
    update(-3.0, "back to the start")  # clamped, and a step back is shown
    assert bar.calls[-1] == (0.0, "back to the start")
