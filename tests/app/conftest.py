"""AppTest set-up for the dashboard.

Streamlit treats a ``pages/`` folder next to the main script as an old-style multipage app until
the main script calls ``st.navigation``; AppTest resets that process-wide mode before every run, so
``AppTest.from_file("app.py")`` would run app.py inside the old-style wrapper. The tests therefore
start the app from ``tests/app/entry.py``, a two-line script that runs app.py and has no ``pages/``
folder beside it: Streamlit then runs it exactly as a live server does after its first run
(``st.navigation`` mode), with public API only.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

ENTRY = str(Path(__file__).resolve().parent / "entry.py")
