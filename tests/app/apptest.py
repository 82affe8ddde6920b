"""Helpers shared by the AppTest files (tests/app): start the app, go to a page, read its errors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from streamlit.testing.v1 import AppTest

from dashboard import data as sources
from dashboard import registry
from dpsynth_core import Domain
from dpsynth_core.datasets import Dataset

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
PAGES = [p.url for p in registry.PAGES]
PAGE_MECH = {p.url: p.mechanism for p in registry.PAGES if p.mechanism is not None}
TIMEOUT = 120


def small_data(n: int = 400, seed: int = 1) -> Dataset:
    rng = np.random.default_rng(seed)
    X = np.clip(rng.normal([0.3, 0.6], 0.1, size=(n, 2)), 0, 1)
    return Dataset(X, Domain([0, 0], [1, 1], names=("a", "b")), "small", "test data")


def new_app(data: Dataset | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    if data is not None:
        at.session_state["dataset"] = data
        at.session_state["dataset_source"] = sources.Source("upload", data.name)
    return at


def goto(at: AppTest, page: str) -> AppTest:
    at.switch_page(str(ROOT / registry.by_url(page).file)).run()
    return at


def errors(at: AppTest) -> list[str]:
    return [e.value for e in at.error]


def exceptions(at: AppTest) -> list[str]:
    return [e.value for e in at.exception]


def charts(at: AppTest) -> list:
    """Every chart on the page, in order: the Plotly figures (detail views) and the Vega-Lite ones (a page's first
    view: real against synthetic, Home's first screen). Each has ``proto.spec``, its JSON text (a Vega-Lite
    chart's inline data travel apart from it, in ``proto.datasets``)."""
    return [el for el in _walk(at) if getattr(el, "type", None) in ("plotly_chart", "vega_lite_chart")]


def _walk(at: AppTest):
    """The page's elements (main area and sidebar), depth first, in order."""
    stack = [at._tree]
    while stack:
        node = stack.pop()
        yield node
        children = getattr(node, "children", None)
        if children:
            stack.extend(reversed(list(children.values())))
