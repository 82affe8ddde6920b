"""The dashboard's pages, declared once (plain Python: no Streamlit, so benchmarks and tests can read it).

``app.py`` builds ``st.navigation`` from :data:`PAGES` (the groups in their order of first
appearance), the lesson path walks them in this order, the sidebar shows δ on :data:`DELTA_PAGES`,
and the tests and the browser benchmark visit every ``url``. A page's ``url`` is public: shared
links (``/pmm?eps=0.1``) use it, so it never changes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["Page", "PAGES", "DELTA_PAGES", "PAGE_PARAMS", "Controls", "CONTROLS", "by_url", "by_file", "groups"]


@dataclass(frozen=True)
class Page:
    """One page of the dashboard.

    ``file`` is relative to the repository root; ``title`` and ``icon`` are what the navigation shows;
    ``url`` is the page's URL path (and its key in :data:`dashboard.lessons.LESSONS`); ``mechanism``
    names the registry entry a mechanism page runs (None for the other pages); ``uses_delta`` says
    whether the sidebar offers δ there; ``group`` is the navigation's section; ``params`` are the page's own
    query parameters, kept in its URL with the shareable state (the Documentation page's ``doc``).
    """

    file: str
    title: str
    icon: str
    url: str
    mechanism: str | None
    uses_delta: bool
    group: str
    params: tuple[str, ...] = ()


PAGES: tuple[Page, ...] = (
    Page("app_pages/home.py", "Start here", ":material/home:", "home", None, False, "Start"),
    Page("app_pages/data.py", "Data and bounds", ":material/table_view:", "data", None, False, "Start"),
    Page("app_pages/pmm.py", "Partition tree (PMM)", ":material/account_tree:", "pmm", "pmm", False, "Mechanisms"),
    Page("app_pages/psmm.py", "Projected grid (PSMM)", ":material/grid_on:", "psmm", "psmm", False, "Mechanisms"),
    Page("app_pages/random_walk.py", "Random walk", ":material/timeline:", "random_walk", "haar_walk", False,
         "Mechanisms"),
    Page("app_pages/sparse_marginals.py", "Certified marginals", ":material/view_module:", "sparse_marginals",
         "sparse_marginals", False, "Mechanisms"),
    Page("app_pages/marginals.py", "Marginal tables", ":material/table_chart:", "marginals", "marginals", False,
         "Mechanisms"),
    Page("app_pages/private_evolution.py", "Private Evolution", ":material/auto_awesome:", "private_evolution",
         "private_evolution", True, "Mechanisms"),
    Page("app_pages/low_dim.py", "Low-dimensional data", ":material/3d_rotation:", "low_dim", "low_dim", False,
         "Mechanisms"),
    Page("app_pages/rates.py", "How fast W1 shrinks", ":material/trending_down:", "rates", None, True, "Evaluate"),
    Page("app_pages/compare.py", "Compare", ":material/balance:", "compare", None, True, "Evaluate"),
    Page("app_pages/audit.py", "Audit the privacy claim", ":material/search:", "audit", None, True, "Evaluate"),
    Page("app_pages/glossary.py", "Glossary and papers", ":material/menu_book:", "glossary", None, False, "Reference"),
    Page("app_pages/docs.py", "Documentation", ":material/description:", "docs", None, False, "Reference", ("doc",)),
)

#: URL paths of the pages whose sidebar offers δ (and whose shared link carries it).
DELTA_PAGES: frozenset[str] = frozenset(p.url for p in PAGES if p.uses_delta)
#: The query parameters of each page's own, by URL path.
PAGE_PARAMS: dict[str, tuple[str, ...]] = {p.url: p.params for p in PAGES if p.params}


@dataclass(frozen=True)
class Controls:
    """How a mechanism page offers its mechanism's parameters: the schema's defaults, except ``defaults`` (a
    function of the data's number of columns d, for defaults that do not fit every table), without the
    parameters in ``skip``, and with the values in ``fixed`` (set by the page, never offered)."""

    defaults: Callable[[int], dict] | None = None
    skip: tuple[str, ...] = ()
    fixed: Mapping[str, object] = field(default_factory=dict)


#: Per mechanism page (url), its :class:`Controls`; a page not listed offers every parameter with the schema's
#: defaults. Read by the page's header and by the server's warm-up of the default views (:mod:`dashboard.warm`),
#: so that both compute the same release.
CONTROLS: dict[str, Controls] = {
    "sparse_marginals": Controls(defaults=lambda d: {"s": min(2, d)}),
    "marginals": Controls(skip=("noise",)),
    # the page's cost does not grow with ε: public caps on T, n_s and the scales ("interactive")
    "private_evolution": Controls(skip=("allow_nonprivate_init", "track_w1", "variation_scales", "public", "cost"),
                                  fixed={"cost": "interactive"}),
    # the page teaches the paper's projection: plan "paper" (the library's default plan skips the projection when
    # d <= 6 and releases PSMM in full dimension: docs/defaults.md)
    "low_dim": Controls(defaults=lambda d: {"plan": "paper", "target_dim": min(2, d)}),
}


def by_url(url: str) -> Page:
    """The page at ``url`` (KeyError for an unknown one)."""
    for p in PAGES:
        if p.url == url:
            return p
    raise KeyError(url)


def by_file(path: str | Path) -> Page | None:
    """The page whose script is ``path`` (compared by file name, e.g. a page's ``__file__``)."""
    name = Path(path).name
    return next((p for p in PAGES if Path(p.file).name == name), None)


def groups() -> dict[str, list[Page]]:
    """The navigation's sections in order, each with its pages in order."""
    out: dict[str, list[Page]] = {}
    for p in PAGES:
        out.setdefault(p.group, []).append(p)
    return out
