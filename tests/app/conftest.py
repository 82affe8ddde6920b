"""AppTest set-up for the dashboard.

Streamlit treats a ``pages/`` folder next to the main script as a v1 multipage app until the first
``st.navigation`` call of a server process; a real server switches to ``st.navigation`` mode on its
first run (and ``pages/_ui.require_app`` covers a cold start on a page URL). AppTest, however,
resets that process-wide flag before EVERY run, so each run would execute app.py nested inside the
v1 wrapper, which drops button clicks. The fixture below runs the main script directly, as the
server does from its second run on.
"""

from __future__ import annotations

import sys
import types
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def run_main_script(path) -> None:
    code = compile(Path(path).read_text(encoding="utf-8"), str(path), "exec")
    module = types.ModuleType("__main__")
    module.__file__ = str(path)
    exec(code, module.__dict__)  # noqa: S102 - what streamlit's script runner does in v2 mode


def patch_streamlit_navigation_mode() -> None:
    import streamlit.runtime.scriptrunner.script_runner as script_runner

    script_runner._mpa_v1 = run_main_script


@pytest.fixture(autouse=True, scope="session")
def _navigation_mode():
    patch_streamlit_navigation_mode()
    yield
