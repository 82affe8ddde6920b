"""Shared test configuration.

Order: the browser tests first, then the tests marked slow, then the rest, each group in collection
order. ``make test`` runs the suite on every core with ``--dist worksteal``: each worker starts on its
half of this list and an idle worker takes tests from the end of a busy one's queue, so the long tests
start early (the browser tests on one worker, with one server and one Chromium, while the other worker
computes) and the run ends on short ones, both workers finishing together.
"""

import functools
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci", max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


@pytest.fixture
def dask_synchronous():
    """Dask's synchronous scheduler (no threads, no cluster) for the Dask identity tests."""
    import dask

    with dask.config.set(scheduler="synchronous"):
        yield


def _rank(item) -> int:
    if item.get_closest_marker("e2e"):
        return 0
    return 1 if item.get_closest_marker("slow") else 2


def pytest_collection_modifyitems(config, items):
    """Long tests first (module docstring); a stable sort keeps the collection order within each group."""
    items.sort(key=_rank)


def _apptest_without_polling() -> None:
    """Two costs of Streamlit's AppTest (1.67) that are not the app's, removed for the suite: together about a fifth
    of the AppTest files' time (tests/app/test_app.py with test_mixed_tables.py: 82 s and 79 s before, 63 s and
    62 s after, on two cores).

    * After starting a run, AppTest polls every millisecond whether the script thread has sent its SHUTDOWN
      event, each poll scanning every event of the run (one per element drawn) while holding the interpreter's
      lock, which the script thread then waits for. The same wait is a ``join`` of that thread, which sends
      SHUTDOWN as its last act: the same result and the same timeout, without the polling.
    * Every new AppTest scans the metadata of every installed package for custom components
      (``scan_component_manifests``); the installed packages do not change during a test session, so the first
      scan's result is kept.
    """
    from streamlit.components.v2 import manifest_scanner
    from streamlit.testing.v1 import local_script_runner

    def require_widgets_deltas(runner, timeout: float = 3) -> None:
        thread = runner._script_thread
        if thread is not None:
            thread.join(timeout)
        if runner.script_stopped():
            return
        runner.request_stop()  # what Streamlit's own wait does at its timeout
        runner.join()
        raise RuntimeError(f"AppTest script run timed out after {timeout}(s)")

    local_script_runner.require_widgets_deltas = require_widgets_deltas
    manifest_scanner.scan_component_manifests = functools.cache(manifest_scanner.scan_component_manifests)


def pytest_configure(config):
    _apptest_without_polling()
