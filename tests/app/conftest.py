"""AppTest set-up for the dashboard: the tests start ``app.py`` itself (``tests/app/apptest.py``), as a live
server does; its pages are in ``app_pages/``, a folder Streamlit does not treat as an old-style multipage app.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

