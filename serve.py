"""Start the dashboard with ``streamlit run serve.py`` (what ``make run`` does).

``app.py`` is the dashboard; this file wraps it in Streamlit's ``st.App`` so that the libraries
every page needs (``dpsynth_core`` with NumPy/SciPy, Plotly, and POT, which imports scikit-learn
and ``scipy.stats``: about 1.2 s together on a 2-core machine) are imported once when the server
starts, in the lifespan hook, instead of inside the first visitor's first run. ``streamlit run
app.py`` still works; its first visit just pays those imports.

The hook also runs the W1 solvers once on a few hundred generated points (:func:`warm_solvers`): the
sparse method's compiled kernels (numba, cached on disk) are loaded on their first call, about 0.5 s on a
2-core machine, which the first visitor's headline would otherwise wait for.

Then, once the server listens, a background thread computes the default view of every page
(:mod:`dashboard.warm`: the embedded data, the default settings and the teaching seed, as every session
first sees them; Home's first) into the caches the pages share, and prints ``dpsynth: default views
computed in … s``. A first visit then draws what is known instead of computing it; one that comes earlier
waits for the same computation (a value is computed once). Nothing is written to disk.
"""

from __future__ import annotations

import sys
import threading
import time
from contextlib import asynccontextmanager
from pathlib import Path

import streamlit as st

ROOT = Path(__file__).resolve().parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def warm_solvers() -> None:
    """W1 between two sets of 300 generated points in the unit square, by the headline's sparse method and by
    its proven interval: loads the compiled kernels (k-d tree, network simplex) and the solvers' modules."""
    import numpy as np

    from dpsynth_core.transport import wasserstein1, wasserstein1_rounds

    rng = np.random.default_rng(0)
    X, Y = rng.random((300, 2)), rng.random((300, 2))
    for _ in wasserstein1_rounds(X, Y):
        pass
    wasserstein1(X, Y, budget="preview")


@asynccontextmanager
async def _warm(_app):
    t0 = time.perf_counter()
    import ot  # noqa: F401  (POT)

    import dashboard.ui  # noqa: F401  (dpsynth_core, NumPy, SciPy, Plotly)

    t1 = time.perf_counter()
    warm_solvers()
    print(f"dpsynth: libraries imported in {t1 - t0:.2f} s, W1 solvers loaded in {time.perf_counter() - t1:.2f} s",
          flush=True)
    threading.Thread(target=_warm_views, name="dpsynth-warm", daemon=True).start()
    yield


def _warm_views() -> None:
    from dashboard import warm

    warm.warm(lambda line: print(line, flush=True))


app = st.App("app.py", lifespan=_warm)
