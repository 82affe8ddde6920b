"""Start the dashboard with ``streamlit run serve.py`` (what ``make run`` does).

``app.py`` is the dashboard; this file wraps it in Streamlit's ``st.App`` so that the libraries
every page needs (``dpsynth_core`` with NumPy/SciPy, Plotly, and POT, which imports scikit-learn
and ``scipy.stats``: about 1.2 s together on a 2-core machine) are imported once when the server
starts, in the lifespan hook, instead of inside the first visitor's first run. ``streamlit run
app.py`` still works; its first visit just pays those imports.
"""

from __future__ import annotations

import sys
import time
from contextlib import asynccontextmanager
from pathlib import Path

import streamlit as st

ROOT = Path(__file__).resolve().parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


@asynccontextmanager
async def _warm(_app):
    t0 = time.perf_counter()
    import ot  # noqa: F401  (POT)

    import dashboard.ui  # noqa: F401  (dpsynth_core, NumPy, SciPy, Plotly)

    print(f"dpsynth: libraries imported in {time.perf_counter() - t0:.2f} s", flush=True)
    yield


app = st.App("app.py", lifespan=_warm)
