"""The server's warm-up of the default views (dashboard.warm): it computes what each page computes first, so that
a first visit finds it in the shared cache."""

from __future__ import annotations

from unittest import mock

import numpy as np
from apptest import errors, goto, new_app, small_data

from dashboard import compute, registry, w1_live, warm
from dashboard.settings import DEFAULT_SETTINGS


def _key(args: tuple) -> tuple:
    """A release's cache key, comparable: the data by their bytes, the domain by its JSON text."""
    name, X, dom, *rest = args
    return (name, np.ascontiguousarray(X).tobytes(), compute.dom_key(dom), *rest)


def test_the_warm_up_computes_what_each_page_computes_first():
    """Every mechanism page and Home, visited as a new session sees them (default settings, no widget touched):
    the release each one asks the cache for is the one the warm-up computes (same mechanism, data, settings,
    relation, seed and parameters); the warm-up has one view per such page."""
    d = small_data()
    views = warm.default_views(d)
    assert [v.url for v in views] == ["home"] + [p.url for p in registry.PAGES if p.mechanism is not None]
    assert all(v.settings.epsilon == DEFAULT_SETTINGS.epsilon and v.settings.seed == DEFAULT_SETTINGS.seed
               for v in views)
    asked: list[tuple] = []
    original = compute.cached_release

    def recording(*args):
        asked.append(_key(args))
        return original(*args)

    at = new_app(d)
    with mock.patch.object(compute, "cached_release", recording):
        for v in views:
            asked.clear()
            goto(at, v.url)
            assert not at.exception and not errors(at), (v.url, errors(at))
            assert _key(compute.release_args(v.name, d, v.settings, v.params)) in asked, v.url


def test_warm_computes_every_view_and_says_when_it_is_done():
    """On small data: every step runs (none logs an error), the W1 of each release is exact in the job store,
    and the last line is the one the browser benchmark waits for."""
    d = small_data(300)
    lines: list[str] = []
    with mock.patch.object(warm.sources, "default", return_value=(d, None)), \
            mock.patch.object(warm._LOG, "exception") as failed:
        seconds = warm.warm(lines.append)
    assert not failed.called, failed.call_args_list
    assert seconds > 0 and lines == [f"{warm.READY} in {seconds:.1f} s"]
    for v in warm.default_views(d):
        rel = compute.cached_release(*compute.release_args(v.name, d, v.settings, v.params))
        job = w1_live.get(w1_live.job_key(d.X, np.asarray(d.domain.numeric_rows(rel.synthetic), dtype=float),
                                          compute.dom_key(d.domain)))
        assert job is not None and job.exact, v.url
