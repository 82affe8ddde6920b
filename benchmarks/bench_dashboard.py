"""Dashboard timings in Streamlit's AppTest with the default data (n = 5000, d = 2), or an uploaded table.

For every page: the first render (caches cleared), a rerun after changing ε (1 -> 2: a new core
call), and a rerun back at ε = 1 (served from st.cache_data). Pages with an explicit action
(Rates' sweep, Compare, Audit) also time that action, which shows a progress bar.
Targets: first render <= 3 s, rerun <= 1 s for the cached pages.

``--dataset mixed200k``: a 200,000-row mixed table (3 numeric, 2 categorical columns: the readers' limit) is
uploaded as a CSV and declared in the upload form, then every mechanism page is drawn with it: the first render
(the headline shows its progress while the proven interval from every row is computed in the background), the
time until that interval is final, the page drawn again with it, and a fresh release to download. The load
average is recorded at the start and after each page (two shared cores: re-run on a quiet machine for
figures to quote).

Usage: python benchmarks/bench_dashboard.py [--quick] [--dataset mixed200k]
       (writes benchmarks/results/dashboard.json, or dashboard_mixed200k.json)
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


def _mixed_csv(n: int, seed: int = 0) -> bytes:
    """A mixed table like an analyst's: age, bmi, visits (numeric), sex, region (categorical)."""
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"age": rng.uniform(18, 90, n).round(), "bmi": rng.normal(27, 4, n).clip(15, 45).round(1),
                       "visits": rng.poisson(2.5, n).clip(0, 30).astype(float), "sex": rng.choice(["F", "M"], n),
                       "region": rng.choice(["north", "east", "south", "west"], n)})
    return df.to_csv(index=False).encode()


def _upload_declared(n: int) -> tuple[dict, object]:
    """Upload the mixed table in the Data page and declare it; returns (timings, the dataset)."""
    from streamlit.testing.v1 import AppTest

    name, raw = "mixed.csv", _mixed_csv(n)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=900)
    at.run()
    at.switch_page(by_url("data").file)
    at.run()
    at.radio(key="data_source").set_value("Upload CSV").run()
    row: dict = {"rows": n, "csv_bytes": len(raw)}
    row["upload_preview_s"], _ = _timed(at.file_uploader(key="data_upload").set_value((name, raw, "text/csv")).run)
    at.multiselect(key=f"data_cols_{name}").set_value(["age", "bmi", "visits", "sex", "region"]).run()
    for col, lo, hi in (("age", 0.0, 120.0), ("bmi", 10.0, 60.0), ("visits", 0.0, 30.0)):
        at.number_input(key=f"data_lo_{col}").set_value(lo)
        at.number_input(key=f"data_hi_{col}").set_value(hi)
    at.text_area(key="data_cat_sex").input("F|M")
    at.text_area(key="data_cat_region").input("north|east|south|west")
    at.button(key="data_use_upload").click()
    row["use_this_data_s"], _ = _timed(at.run)
    row["errors"] = [e.value for e in at.error] + [e.value for e in at.exception]
    return row, at.session_state["dataset"]


def bench_mixed_page(page: str, ds) -> dict:
    """One mechanism page on the uploaded table: first render, the interval's end, the page again, a download."""
    import os

    import streamlit as st
    from streamlit.testing.v1 import AppTest

    from dashboard import data as sources
    from dashboard import w1_live

    st.cache_data.clear()
    w1_live.clear()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=900)
    at.run()
    at.session_state["dataset"] = ds
    at.session_state["dataset_source"] = sources.Source("upload", ds.name)
    at.switch_page(by_url(page).file)
    jobs: list = []
    previous = w1_live.set_runner(None)  # the background worker, seen on its way (the page's jobs)
    w1_live.set_runner(lambda job: (jobs.append(job), previous(job)))
    row: dict = {"load_average_before": os.getloadavg()}
    try:
        row["first_render_s"], _ = _timed(at.run)
    finally:
        w1_live.set_runner(previous)
    row["headline_at_first_render"] = next((m.value for m in at.metric if m.label.startswith("Distance")), None)
    row["progress_bar_at_first_render"] = bool(at.get("progress"))
    if jobs:
        job = jobs[-1]
        t0 = time.perf_counter()
        while not job.finished:
            job.wait(target=0.0, seconds=1.0)
        row["interval_final_after_render_s"] = time.perf_counter() - t0
        row["w1_job"] = {"plan": job.plan, "state": job.state, "results": len(job.history),
                         "first_result_s": job.history[0][0] if job.history else None,
                         "last_result_s": job.history[-1][0] if job.history else None,
                         "lower": job.latest.lower if job.latest else None,
                         "upper": job.latest.upper if job.latest else None}
        row["rerun_with_interval_s"], _ = _timed(at.run)
    row["headline_final"] = next((m.value for m in at.metric if m.label.startswith("Distance")), None)
    row["ceilings_shown"] = any(c.value.startswith("Every statistic that is L-Lipschitz") for c in at.caption)
    make = [b for b in at.button if b.key and b.key.startswith("make_")]
    if make:
        make[0].click()
        row["fresh_release_download_s"], _ = _timed(at.run)
    row["errors"] = [e.value for e in at.error]
    row["exceptions"] = [e.value for e in at.exception]
    row["load_average_after"] = os.getloadavg()
    return row


def main_mixed(rows: int = 200_000) -> dict:
    import os

    _patch_navigation()
    load_start = os.getloadavg()
    upload, ds = _upload_declared(rows)
    print(f"upload: preview {upload['upload_preview_s']:.1f} s, use {upload['use_this_data_s']:.1f} s", flush=True)
    pages = {}
    for page in [p for p in PAGES if p in PAGE_MECH]:
        pages[page] = r = bench_mixed_page(page, ds)
        print(f"{page:18s} first {r['first_render_s']:6.1f} s ({r['headline_at_first_render']})   interval final "
              f"+{r.get('interval_final_after_render_s', float('nan')):5.1f} s   again "
              f"{r.get('rerun_with_interval_s', float('nan')):5.1f} s   download "
              f"{r.get('fresh_release_download_s', float('nan')):5.1f} s   ({r['headline_final']}; load "
              f"{r['load_average_after'][0]:.1f})", flush=True)
    payload = {"description": "Every mechanism page on a 200,000-row mixed table (3 numeric, 2 categorical columns) "
                              "uploaded and declared in the Data page, in Streamlit AppTest, seconds. first_render: "
                              "the page with the headline's progress (the proven interval from every row runs in the "
                              "background); interval_final_after_render: until the interval is final; "
                              "rerun_with_interval: the page drawn again with it (ceilings included); "
                              "fresh_release_download: 'Make a private release to download'.",
               "load_average_start": load_start, "load_average_end": os.getloadavg(), "upload": upload,
               "pages": pages}
    write(f"dashboard_mixed{rows // 1000}k", payload)
    return payload


def main(argv: list[str] | None = None) -> dict:
    argv = sys.argv[1:] if argv is None else argv
    if "--dataset" in argv:
        which = argv[argv.index("--dataset") + 1]
        if which != "mixed200k":
            raise SystemExit(f"--dataset: only 'mixed200k' is known (got {which!r})")
        return main_mixed()
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
