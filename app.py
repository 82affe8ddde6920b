"""dpsynth dashboard: differentially private synthetic data with W1 guarantees.

Run with ``make run`` (``streamlit run serve.py``, which wraps this file). The pages live in ``app_pages/``
(not ``pages/``: Streamlit would run a ``pages/`` folder beside this file as an old-style multipage app until
this file's first ``st.navigation`` call, and a cold server's first visit to a page URL ran three times
instead of once) and are declared once in
``dashboard/registry.py`` (this file builds the navigation from it), their shared helpers in the
``dashboard`` package; shared state (dataset, ε, δ, relation, teaching seed) in
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

from dashboard import navigation, registry, sidebar, state  # noqa: E402

st.set_page_config(page_title="dpsynth — DP synthetic data", page_icon=":material/lock:", layout="wide")
state.init_state()

pages = {p.url: st.Page(str(ROOT / p.file), title=p.title, icon=p.icon, url_path=p.url, default=(p.url == "home"))
         for p in registry.PAGES}
navigation.PAGE_OBJECTS.update(pages)
nav = st.navigation({group: [pages[p.url] for p in members] for group, members in registry.groups().items()})

start = state.pop_start_page()
if start and start in pages and start != nav.url_path and nav.url_path in ("", "home"):
    st.switch_page(pages[start])

current = nav.url_path or "home"
ledger_box = sidebar.sidebar(current)
state.enter_page(current)  # the ledger shows this page's release only
nav.run()
sidebar.show_ledger(ledger_box)
state.write_query_params(current)
