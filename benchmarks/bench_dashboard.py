"""Dashboard timings in Streamlit's AppTest with the default data (n = 5000, d = 2).

For every page: the first render (caches cleared), a rerun after changing ε (1 -> 2: a new core
call), and a rerun back at ε = 1 (served from st.cache_data). Pages with an explicit action
(Rates' sweep, Compare, Audit) also time that action, which shows a progress bar.
Targets: first render <= 3 s, rerun <= 1 s for the cached pages.

Usage: python benchmarks/bench_dashboard.py [--quick]   (writes benchmarks/results/dashboard.json)
"""

from __future__ import annotations

import sys
import time
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from common import write  # noqa: E402

from dashboard.registry import PAGES as REGISTRY  # noqa: E402
from dashboard.registry import by_url  # noqa: E402

PAGES = [p.url for p in REGISTRY]
PAGE_MECH = {p.url: p.mechanism for p in REGISTRY if p.mechanism is not None}
ACTIONS = {"sparse_marginals": "sm_run", "rates": "rates_run", "compare": "compare_run", "audit": "audit_run"}
TARGET_FIRST, TARGET_RERUN = 3.0, 1.0


def _patch_navigation() -> None:
    """Run app.py as the server does after its first run (see tests/app/conftest.py)."""
    import streamlit.runtime.scriptrunner.script_runner as script_runner

    def run_main_script(path) -> None:
        code = compile(Path(path).read_text(encoding="utf-8"), str(path), "exec")
        module = types.ModuleType("__main__")
        module.__file__ = str(path)
        exec(code, module.__dict__)  # noqa: S102

    script_runner._mpa_v1 = run_main_script


def _timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def bench_page(page: str, quick: bool) -> dict:
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    from dpsynth_core import MECHANISMS

    mech = MECHANISMS.get(PAGE_MECH.get(page, ""))
    relation = "add_remove" if mech is None or "add_remove" in mech.neighbours else mech.neighbours[0]
    st.cache_data.clear()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=600)
    at.query_params["rel"] = relation  # e.g. sparse marginals needs replace neighbours
    at.run()  # the session starts on Home; its cost is not part of this page's first render
    st.cache_data.clear()
    row: dict = {"neighbours": relation}
    if page == "home":
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=600)
        at.query_params["rel"] = relation
        row["first_render_s"], _ = _timed(at.run)
    else:
        at.switch_page(by_url(page).file)
        row["first_render_s"], _ = _timed(at.run)
    row["exceptions"] = [e.value for e in at.exception]
    row["errors"] = [e.value for e in at.error]
    row["infos"] = [i.value[:120] for i in at.info]
    slider = at.sidebar.select_slider(key="epsilon")
    slider.set_value(2.0)
    row["rerun_new_epsilon_s"], _ = _timed(at.run)
    at.sidebar.select_slider(key="epsilon").set_value(1.0)
    row["rerun_cached_epsilon_s"], _ = _timed(at.run)
    if page in ACTIONS and not quick:
        buttons = [b for b in at.button if b.key == ACTIONS[page]]
        if buttons:
            buttons[0].click()
            row["action_s"], _ = _timed(at.run)
            row["action_exceptions"] = [e.value for e in at.exception]
    row["first_render_ok"] = row["first_render_s"] <= TARGET_FIRST
    row["rerun_ok"] = row["rerun_cached_epsilon_s"] <= TARGET_RERUN
    return row


def main(argv: list[str] | None = None) -> dict:
    argv = sys.argv[1:] if argv is None else argv
    quick = "--quick" in argv
    _patch_navigation()
    from dpsynth_core import MECHANISMS

    results = {}
    for page in PAGES:
        results[page] = bench_page(page, quick)
        r = results[page]
        print(f"{page:18s} first {r['first_render_s']:6.2f} s   rerun(new ε) {r['rerun_new_epsilon_s']:6.2f} s   "
              f"rerun(cached) {r['rerun_cached_epsilon_s']:5.2f} s" +
              (f"   action {r['action_s']:6.2f} s" if "action_s" in r else ""), flush=True)
    payload = {
        "description": "Dashboard page timings in Streamlit AppTest, default data (n=5000, d=2), seconds. "
                       "first_render: caches cleared; rerun_new_epsilon: ε 1 -> 2 (new core call); "
                       "rerun_cached_epsilon: back to ε = 1 (st.cache_data hit); action: the page's explicit "
                       "sweep/comparison/audit button (shows progress).",
        "targets": {"first_render_s": TARGET_FIRST, "rerun_s": TARGET_RERUN},
        "mechanisms": sorted(MECHANISMS),
        "quick": quick,
        "pages": results,
    }
    write("dashboard", payload)
    return payload


if __name__ == "__main__":
    main()
