"""The default views, computed when the server starts: a page's first visit then draws what is already known.

Every session starts on the same view of every mechanism page: the embedded dataset, the default privacy
settings (:data:`dashboard.settings.DEFAULT_SETTINGS`, the teaching seed among them), each parameter at its
default (:data:`dashboard.registry.CONTROLS`). Its release and its W1 are the same for every visitor, so the
server computes them once, in a background thread it starts when it starts (``serve.py``), Home's first;
the pages find them in the shared caches (``st.cache_data``, and the W1 jobs of :mod:`dashboard.w1_live`). A
visit that comes first waits for the same computation, never repeats it (Streamlit's cache computes a value
once, under a lock per value).

Only what every session would compute is computed: teaching releases of the embedded data, with the
teaching seed, exactly as a page computes them on screen (:func:`dashboard.compute.release_args`). Nothing
is written anywhere: the caches live in the server's memory, as a visit's would.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from dpsynth_core.mechanisms import MECHANISMS, load_all

from . import compute, registry
from . import data as sources
from .eligibility import relation_for
from .settings import DEFAULT_SETTINGS, PrivacySettings
from .widgets import default_values

__all__ = ["View", "default_views", "warm", "READY"]

_LOG = logging.getLogger("dpsynth.dashboard")

#: The line the server prints when the default views are computed (the browser benchmark waits for it).
READY = "dpsynth: default views computed"
#: The longest the warm-up waits for one release's exact W1 (then it goes on; the job goes on too).
W1_SECONDS = 30.0


@dataclass(frozen=True)
class View:
    """One page's default view: mechanism ``name`` with ``params`` under ``settings`` (the relation the page
    switches to when the mechanism needs the other one)."""

    url: str
    name: str
    params: dict
    settings: PrivacySettings


def default_views(d=None) -> list[View]:
    """Every mechanism page's default view on dataset ``d`` (the embedded one by default), Home's first: Home
    runs PMM with the library's defaults (no controls), the PMM page with its controls' defaults."""
    d = d if d is not None else sources.default()[0]
    load_all()
    views = [View("home", "pmm", {}, DEFAULT_SETTINGS)]
    for page in registry.PAGES:
        if page.mechanism is None:
            continue
        spec = MECHANISMS[page.mechanism]
        c = registry.CONTROLS.get(page.url, registry.Controls())
        params = {**default_values(spec, defaults=c.defaults(d.d) if c.defaults else None, skip=c.skip),
                  **c.fixed}
        s = dataclasses.replace(DEFAULT_SETTINGS, neighbours=relation_for(spec, DEFAULT_SETTINGS.neighbours))
        views.append(View(page.url, page.mechanism, params, s))
    return views


def _steps(d) -> Iterator[tuple[str, Callable[[], object]]]:
    """(what, how) for each computation of the warm-up, in order: Home's first screen, then each view's release
    and its exact W1."""
    s = DEFAULT_SETTINGS
    yield "home: the clinic table", lambda: compute.clinic_release(s)
    for v in default_views(d):
        yield f"{v.url}: {v.name}", lambda v=v: _release_and_w1(d, v)


def _release_and_w1(d, v: View) -> None:
    rel = compute.cached_release(*compute.release_args(v.name, d, v.settings, v.params))
    if len(rel.synthetic):
        compute.w1_job(d, rel.synthetic, exact=False).wait(seconds=W1_SECONDS)


def warm(log: Callable[[str], None] = print) -> float:
    """Compute every default view (:func:`_steps`); a step that fails is logged and skipped (the page will show
    its error in the user's words). Returns the seconds taken; ``log`` gets :data:`READY` with them."""
    t0 = time.perf_counter()
    d = sources.default()[0]
    for what, step in _steps(d):
        try:
            step()
        except Exception:  # noqa: BLE001 - a page shows its own error; the warm-up only prepares
            _LOG.exception("warming %s", what)
    seconds = time.perf_counter() - t0
    log(f"{READY} in {seconds:.1f} s")
    return seconds
