"""Shared test configuration."""

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
