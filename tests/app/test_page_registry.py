"""The page registry (dashboard/registry.py): one record per page, consistent with the files, the
lessons and the mechanisms (plain Python, no Streamlit run)."""

from __future__ import annotations

from pathlib import Path

from dashboard import registry
from dashboard.lessons import LESSONS, ORDER
from dpsynth_core.mechanisms import load_all

ROOT = Path(__file__).resolve().parents[2]


def test_every_page_has_a_file_a_unique_url_and_a_lesson():
    urls = [p.url for p in registry.PAGES]
    assert len(set(urls)) == len(urls)
    assert len({Path(p.file).name for p in registry.PAGES}) == len(urls)
    for p in registry.PAGES:
        assert (ROOT / p.file).is_file(), p.file
        assert p.file.startswith("app_pages/"), p.file  # Streamlit's st.Page paths; kept at the top level
        assert p.url in LESSONS, p.url
        assert registry.by_url(p.url) is p and registry.by_file(ROOT / p.file) is p
    assert ORDER == tuple(urls)  # the lesson path walks the navigation
    assert registry.by_file("app_pages/nowhere.py") is None


def test_mechanism_pages_name_registered_mechanisms_and_offer_delta_when_they_need_it():
    specs = load_all()
    mechanism_pages = [p for p in registry.PAGES if p.mechanism is not None]
    assert mechanism_pages
    for p in mechanism_pages:
        assert p.mechanism in specs, p
        # an approximate-DP mechanism's page must show the δ control, a pure-DP one must not
        assert p.uses_delta == specs[p.mechanism].needs_delta, p
    assert registry.DELTA_PAGES == {p.url for p in registry.PAGES if p.uses_delta}


def test_groups_keep_the_navigation_order():
    groups = registry.groups()
    assert list(groups) == ["Start", "Mechanisms", "Evaluate", "Reference"]
    assert [p for members in groups.values() for p in members] == list(registry.PAGES)
