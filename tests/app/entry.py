"""Run the dashboard's app.py as the main script (see conftest.py: no ``pages/`` folder beside this file)."""

import runpy
from pathlib import Path

runpy.run_path(str(Path(__file__).resolve().parents[2] / "app.py"), run_name="__main__")
