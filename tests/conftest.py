"""Shared test configuration.

Order: the browser tests first, then the tests marked slow, then the rest, each group in collection
order. ``make test`` runs the suite on every core with ``--dist worksteal``: each worker starts on its
half of this list and an idle worker takes tests from the end of a busy one's queue, so the long tests
start early (the browser tests on one worker, with one server and one Chromium, while the other worker
computes) and the run ends on short ones, both workers finishing together.
"""

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
