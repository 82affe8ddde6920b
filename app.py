"""dpsynth dashboard: differentially private synthetic data with W1 guarantees.

Run with ``make run`` (``streamlit run app.py``). The pages live in ``pages/``, their shared
helpers in the ``dashboard`` package; shared state (dataset, ε, δ, relation, teaching seed) in
``st.session_state``; the shareable part (ε, seed, δ, relation, dataset name, page) in the URL's
query parameters.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import streamlit as st  # noqa: E402

from dashboard import ui as _ui  # noqa: E402

st.set_page_config(page_title="dpsynth — DP synthetic data", page_icon=":material/lock:", layout="wide")
_ui.init_state()

pages = {url: st.Page(str(ROOT / file), title=title, icon=icon, url_path=url, default=(url == "home"))
         for file, title, icon, url, _mech, _delta in _ui.PAGES}
_ui.PAGE_OBJECTS.update(pages)
nav = st.navigation(
    {"Start": [pages["home"], pages["data"]],
     "Mechanisms": [pages[u] for u in ("pmm", "psmm", "random_walk", "sparse_marginals", "private_evolution",
                                       "low_dim")],
     "Evaluate": [pages[u] for u in ("rates", "compare", "audit")],
     "Reference": [pages["glossary"]]}
)

start = st.session_state.pop("_start_page", None)
if start and start in pages and start != nav.url_path and nav.url_path in ("", "home"):
    st.switch_page(pages[start])

current = nav.url_path or "home"
ledger_box = _ui.sidebar(current)
if st.session_state.get("_page") != current:
    st.session_state.pop("release_info", None)  # the ledger shows this page's release only
    st.session_state["_page"] = current
st.session_state["_in_app"] = True
try:
    nav.run()
finally:
    st.session_state["_in_app"] = False
_ui.show_ledger(ledger_box)
_ui.write_query_params(current)
