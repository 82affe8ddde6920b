"""Streamlit helpers shared by the dashboard pages: state, the sidebar, cached library calls, widgets.

The pages stay thin: widgets -> ONE cached call into :mod:`dpsynth_core` -> figures from
:mod:`dpsynth_core.viz` -> one line of explanation. Mechanism math never lives here.

Randomness: on-screen releases use the sidebar's teaching seed, so that a class sees the same
pictures; anything downloaded is a NEW release drawn with fresh operating-system entropy
(:func:`private_downloads`), because whoever knows a seed can re-draw the noise.
"""

from __future__ import annotations

import logging
import math
import re
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import streamlit as st

from dpsynth_core import export
from dpsynth_core.datasets import Dataset
from dpsynth_core.domain import Domain
from dpsynth_core.mechanisms import MECHANISMS, bind, load_all
from dpsynth_core.transport import wasserstein1

from . import data as data_sources
from .settings import DELTA_GRID, EPSILON_GRID, TEACHING_SEED, parse_query

_LOG = logging.getLogger("dpsynth.dashboard")
ROOT = Path(__file__).resolve().parents[1]
OWNER = ":material/lock: owner view — not private: computed from the real data without noise, for teaching only."

# (file, title in the navigation, icon, url_path, mechanism or None, uses δ)
PAGES: list[tuple[str, str, str, str, str | None, bool]] = [
    ("pages/home.py", "Start here", ":material/home:", "home", None, False),
    ("pages/data.py", "Data and bounds", ":material/table_view:", "data", None, False),
    ("pages/pmm.py", "Partition tree (PMM)", ":material/account_tree:", "pmm", "pmm", False),
    ("pages/psmm.py", "Projected grid (PSMM)", ":material/grid_on:", "psmm", "psmm", False),
    ("pages/random_walk.py", "Random walk", ":material/timeline:", "random_walk", "haar_walk", False),
    ("pages/sparse_marginals.py", "Certified marginals", ":material/view_module:", "sparse_marginals",
     "sparse_marginals", False),
    ("pages/private_evolution.py", "Private Evolution", ":material/auto_awesome:", "private_evolution",
     "private_evolution", True),
    ("pages/low_dim.py", "Low-dimensional data", ":material/3d_rotation:", "low_dim", "low_dim", False),
    ("pages/rates.py", "How fast W1 shrinks", ":material/trending_down:", "rates", None, True),
    ("pages/compare.py", "Compare", ":material/balance:", "compare", None, True),
    ("pages/audit.py", "Audit the privacy claim", ":material/search:", "audit", None, True),
    ("pages/glossary.py", "Glossary and papers", ":material/menu_book:", "glossary", None, False),
]
#: The navigation's page objects, set by app.py on every run (for the lesson path's links).
PAGE_OBJECTS: dict = {}
DELTA_PAGES = {p[3] for p in PAGES if p[5]}


# ------------------------------------------------------------------------------------ state
def init_state() -> None:
    """First run of a session: defaults, then the shareable state from the URL."""
    ss = st.session_state
    if ss.get("_initialised"):
        return
    # a cold start on a page URL comes back through require_app with the link's parameters stashed
    q = parse_query({**ss.pop("_start_query", {}), **st.query_params.to_dict()})
    ss["epsilon"] = q.get("epsilon", 1.0)
    ss["delta"] = q.get("delta", 1e-6)
    ss["seed"] = q.get("seed", TEACHING_SEED)
    ss["neighbours"] = q.get("neighbours", "add_remove")
    ss["_start_page"] = ss.get("_start_page") or q.get("page")
    messages = [f"Ignored invalid URL parameter {x}." for x in q["ignored"]]
    chosen = None
    if "dataset" in q:
        try:
            chosen = data_sources.by_name(q["dataset"])
        except (ValueError, TypeError) as exc:
            messages.append(str(exc))
    set_data(*(chosen or data_sources.default()))
    ss["_url_messages"] = messages
    ss["_initialised"] = True


def set_data(ds: Dataset, source: data_sources.Source | None = None) -> None:
    """Make ``ds`` the dataset every page uses (``source`` says how a URL can rebuild it)."""
    ss = st.session_state
    ss["dataset"] = ds
    ss["dataset_source"] = source or data_sources.Source("upload", ds.name)
    ss.pop("release_info", None)


def flash(kind: str, message: str) -> None:
    """Queue a message shown at the top of the next run (survives ``st.rerun``)."""
    st.session_state.setdefault("_flash", []).append((kind, message))


def show_flash() -> None:
    for kind, message in st.session_state.pop("_flash", []):
        getattr(st, kind)(message)


def data() -> Dataset:
    return st.session_state["dataset"]


def settings() -> dict:
    ss = st.session_state
    return {"epsilon": float(ss["epsilon"]), "delta": float(ss["delta"]), "neighbours": ss["neighbours"],
            "seed": int(ss["seed"])}


def write_query_params(page: str) -> None:
    s = settings()
    source = st.session_state.get("dataset_source")
    qp = {"page": page, "eps": f"{s['epsilon']:g}", "seed": str(s["seed"]), "rel": s["neighbours"]}
    if page in DELTA_PAGES:
        qp["delta"] = f"{s['delta']:g}"
    if source is not None and source.shareable:
        qp["dataset"] = source.name
    current = st.query_params.to_dict()
    if current != qp:
        st.query_params.from_dict(qp)


# ---------------------------------------------------------------------------------- sidebar
def sidebar(page: str) -> Any:
    """Dataset summary and the privacy controls; returns a container for the ledger (filled after
    the page ran, so it shows the current page's release)."""
    d = data()
    pending = st.session_state.pop("_pending_neighbours", None)
    if pending is not None:  # set before the widget exists (see relation_supported)
        st.session_state["neighbours"] = pending
    sb = st.sidebar
    with sb:
        st.markdown(f"**Dataset:** `{d.name}` — d = {d.d}")
        st.caption("Public bounds: " + ", ".join(f"{n} ∈ [{lo:g}, {hi:g}]" for n, lo, hi in
                                                 zip(d.domain.names[:4], d.domain.lower, d.domain.upper,
                                                     strict=False)) + (" …" if d.d > 4 else ""))
        st.caption(f"n = {d.n} rows (:material/lock: owner view: under add/remove n itself is private; mechanisms use a "
                   "noisy or declared size)")
        st.select_slider("ε (privacy budget, log scale)", options=EPSILON_GRID, key="epsilon", persist_state="session",
                         format_func=lambda v: f"{v:g}",
                         help="Smaller ε = stronger privacy = more noise. Every mechanism spends exactly this ε "
                              "(see the ledger below).")
        if page in DELTA_PAGES:
            st.select_slider("δ (approximate DP)", options=DELTA_GRID, key="delta", persist_state="session",
                             format_func=lambda v: f"{v:.0e}",
                             help="Only approximate-DP mechanisms (Private Evolution, Gaussian noise) use δ: the "
                                  "probability mass allowed outside the e^ε bound. Pure-DP mechanisms report δ = 0.")
        st.radio("Neighbouring datasets", options=("add_remove", "replace"), key="neighbours", persist_state="session",
                 format_func=lambda v: {"add_remove": "add / remove one record",
                                        "replace": "replace one record (n public)"}[v],
                 help="What one person's data changes. Add/remove: n is private; replace: n is public and "
                      "counts move in two cells (sensitivity 2).")
        st.number_input("Teaching seed (reproducible pictures)", min_value=0, max_value=2**32 - 1, step=1, key="seed",
                        persist_state="session",
                        help="The random seed of the releases shown on screen: the same seed gives the same "
                             "pictures, so a class sees what you see. Downloads never use it: they are fresh "
                             "releases, because whoever knows a seed can undo the noise.")
        for msg in st.session_state.get("_url_messages", []):
            st.warning(msg)
        ledger = st.container()
    return ledger


def show_ledger(box: Any) -> None:
    info = st.session_state.get("release_info")
    with box:
        st.markdown("**Privacy ledger of the current release**")
        if not info:
            st.caption("No release on this page yet.")
            return
        st.caption(f"{info['title']}: {info['privacy']}")
        frame = info["ledger"]
        lines = [f"- {row.step}: ε = {row.epsilon:.3g}" + (f", δ = {row.delta:.2g}" if row.delta else "")
                 for row in frame.itertuples()]
        if len(lines) <= 4:
            st.markdown("\n".join(lines))
        else:
            st.markdown("\n".join(lines[:3]))
            with st.expander(f"all {len(lines)} steps"):
                st.markdown("\n".join(lines))
        st.caption(f"Total: ε = {frame['epsilon'].sum():.4g}, δ = {frame['delta'].sum():.3g} "
                   f"({len(frame)} step{'s' if len(frame) != 1 else ''}).")
        if info.get("note"):
            st.caption(info["note"])


def record_release(rel, title: str) -> None:
    st.session_state["release_info"] = {"title": title, "privacy": rel.privacy, "ledger": rel.ledger.to_frame(),
                                        "note": getattr(rel.ledger, "note", "")}


# --------------------------------------------------------------------------------- safe calls
def safe(fn: Callable, *args: Any, what: str = "running this", **kwargs: Any) -> Any:
    """Call ``fn``; turn ValueError/TypeError into ``st.error(message)`` and anything else into a
    friendly error with the details in an expander. Returns None on failure (inputs are kept)."""
    try:
        return fn(*args, **kwargs)
    except (ValueError, TypeError, NotImplementedError) as exc:
        st.error(str(exc) or type(exc).__name__)
    except Exception as exc:  # noqa: BLE001 - the page must never show a traceback
        # The message and the variables could echo private data: the browser gets the exception type and
        # where it happened (file, line, function); the full traceback goes to the server console only.
        _LOG.error("error while %s", what, exc_info=exc)
        st.error(f"Something went wrong while {what} ({type(exc).__name__}). Your settings are kept: "
                 "try other parameters, or report the details below.")
        with st.expander("Details"):
            frames = traceback.extract_tb(exc.__traceback__)[-4:]
            st.code(f"{type(exc).__module__}.{type(exc).__name__}\n" + "\n".join(
                f"  {Path(f.filename).name}:{f.lineno} in {f.name}" for f in frames), language="text")
    return None


# ------------------------------------------------------------------------------ cached calls
def _dom(lower, upper, names) -> Domain:
    return Domain(list(lower), list(upper), names=tuple(names))


@st.cache_data(show_spinner=False, max_entries=128)
def cached_run(name: str, X: np.ndarray, lower: tuple, upper: tuple, names: tuple, epsilon: float, delta: float,
               neighbours: str, seed: int | None, params: tuple):
    """One mechanism run, cached on (mechanism, data, domain, ε, δ, relation, seed, parameters)."""
    spec = MECHANISMS[name]
    mechanism = bind(name, epsilon=epsilon, delta=delta if spec.needs_delta else None, neighbours=neighbours,
                     params=dict(params))
    return mechanism(X, _dom(lower, upper, names), rng=seed)


@st.cache_data(show_spinner=False, max_entries=128)
def cached_w1(X: np.ndarray, Y: np.ndarray, lower: tuple, upper: tuple, names: tuple, fast: bool = False):
    """W1 of a release to the data (owner view) within the interactive budget of the library's policy."""
    return wasserstein1(X, Y, domain=_dom(lower, upper, names), budget="preview" if fast else "interactive",
                        return_result=True)


def dom_key(dom: Domain) -> tuple:
    return tuple(dom.lower), tuple(dom.upper), tuple(dom.names)


def run(name: str, params: dict | None = None, *, seed: int | None = None, epsilon: float | None = None):
    """Run ``name`` on the current dataset with the sidebar's settings (cached). Returns the release
    or None (the error is shown)."""
    d = data()
    s = settings()
    items = tuple(sorted((params or {}).items()))
    with st.spinner(f"Running {name} …"):
        return safe(cached_run, name, d.X, *dom_key(d.domain), float(epsilon if epsilon is not None else s["epsilon"]),
                    s["delta"], s["neighbours"], int(s["seed"] if seed is None else seed), items,
                    what=f"running {name}")


def w1_of(Y: np.ndarray, *, fast: bool = False):
    d = data()
    if np.asarray(Y).shape[0] == 0:
        st.warning("This release has no synthetic points (at this ε·n the noisy size came out ≤ 0), so W1 is "
                   "undefined. Increase ε or use more data.")
        return None
    with st.spinner("Computing W1 …"):
        return safe(cached_w1, d.X, np.asarray(Y, dtype=float), *dom_key(d.domain), fast, what="computing W1")


# --------------------------------------------------------------------------- mechanism pages
def mechanisms() -> dict:
    """The registry (every mechanism module imported once)."""
    return load_all()


def mechanism_spec(name: str):
    """The registry entry of a mechanism."""
    return mechanisms()[name]


def param_controls(spec, prefix: str | None = None, *, skip: tuple = (), labels: dict | None = None,
                   defaults: dict | None = None) -> dict:
    """Widgets for a mechanism's parameters, built from its registry schema, labelled for students
    (:data:`dashboard.lessons.CONTROLS`; the code name and the mathematics are in the help tooltip).

    ``labels`` maps a choice parameter's name to {choice: label} (overrides the defaults);
    ``defaults`` overrides schema defaults that do not fit the data (e.g. s <= d)."""
    import dataclasses

    from .lessons import CONTROLS

    controls = CONTROLS.get(spec.name, {})
    choice_labels = {name: dict(c.choices) for name, c in controls.items() if c.choices}
    choice_labels.update(labels or {})
    params = []
    for p in spec.params:
        if p.name in skip:
            continue
        c = controls.get(p.name)
        changes = {"help": f"`{p.name}`: {p.help}"}
        if c is not None:
            changes.update(label=c.label, advanced=c.advanced or p.advanced)
        if defaults and p.name in defaults:
            changes["default"] = defaults[p.name]
        params.append(dataclasses.replace(p, **changes))
    return schema_controls(tuple(params), prefix or spec.name, labels=choice_labels)


def schema_controls(params, prefix: str, *, labels: dict | None = None) -> dict:
    """One widget per :class:`~dpsynth_core.schema.ParamSpec` (mechanisms and data generators alike):
    the basic ones in three columns, the advanced ones in an expander. Returns {name: value}."""
    labels = labels or {}
    values: dict[str, Any] = {}
    basic = [p for p in params if not p.advanced]
    adv = [p for p in params if p.advanced]
    if basic:
        cols = st.columns(min(3, len(basic)))
        for i, p in enumerate(basic):
            with cols[i % len(cols)]:
                values[p.name] = _control(p, prefix, labels.get(p.name))
    if adv:
        with st.expander("More settings"):
            for p in adv:
                values[p.name] = _control(p, prefix, labels.get(p.name))
    return values


def _control(p, prefix: str, labels: dict | None = None) -> Any:
    key = f"{prefix}__{p.name}"
    label = p.title
    if p.kind == "choice":
        choices = list(p.choices)
        idx = choices.index(p.default) if p.default in choices else 0
        return st.selectbox(label, choices, index=idx, key=key, help=p.help, persist_state="session",
                            format_func=(lambda c: labels.get(c, c)) if labels else str)
    if p.kind == "bool":
        return st.checkbox(label, value=bool(p.default), key=key, help=p.help, persist_state="session")
    lo = None if p.low is None or not math.isfinite(p.low) else p.low
    hi = None if p.high is None or not math.isfinite(p.high) else p.high
    if p.kind == "int":
        lo = None if lo is None else int(math.ceil(lo))
        hi = None if hi is None else int(math.floor(hi))
        default = None if p.default is None else int(p.default)
        return st.number_input(label, min_value=lo, max_value=hi, value=default, step=1, key=key,
                               help=p.help, placeholder="auto (paper's rule)", persist_state="session")
    lo = None if lo is None else float(lo)
    hi = None if hi is None else float(hi)
    default = None if p.default is None else float(p.default)
    return st.number_input(label, min_value=lo, max_value=hi, value=default, key=key, help=p.help,
                           format="%.6g", placeholder="auto (paper's rule)", persist_state="session")


def release_panel(rel, w1v, params: dict, *, title: str) -> None:
    """The headline of a release: W1 to the data, the theory's bound shown honestly, the synthetic size
    and the guarantee; the release's notes; the private downloads (in an expander)."""
    spec = mechanisms().get(rel.mechanism)
    record_release(rel, spec.title if spec is not None else rel.mechanism)
    c1, c2, c3, c4 = st.columns(4)
    c1.metric("Distance to the real data (W1)", "—" if w1v is None else f"{w1v.value:.3g}",
              help="Wasserstein-1 distance between the real and the synthetic data, in the unit cube with the "
                   "largest-coordinate distance: every 1-Lipschitz statistic differs by at most this much. "
                   ":material/lock: Computed from the real data (owner view)."
                   + ("" if w1v is None or w1v.exact else " Shown with its proven interval (an exact solve "
                      "at this size would take longer than a page should)."))
    label, value, note = bound_view(rel)
    c2.metric(label, value, help=note)
    c3.metric("Synthetic points", f"{rel.synthetic.shape[0]:,}")
    c4.metric("Privacy", "not private" if bounds_from_data() else privacy_short(rel), help=rel.privacy)
    if w1v is not None and not w1v.exact:
        st.caption(f"W1 = {w1v.value:.4g} on a fine grid; the true W1 is proven to lie in [{w1v.lower:.3g}, "
                   f"{w1v.upper:.3g}] (an exact solve at this size takes longer than a page should).")
    if not rel.is_dp:
        st.warning("This run is NOT differentially private (a teaching start that reads the private data). "
                   "Never publish its output.")
    if bounds_from_data():
        st.warning("NOT private: the bounds of this dataset were read off the data (Data page), so no release of it "
                   "is differentially private. Type public bounds to make it private.")
    if rel.notes:
        with st.expander("Technical notes on this release", icon=":material/info:"):
            for note in rel.notes:
                st.caption(str(note))
    with st.expander("Download a private release", icon=":material/download:"):
        if bounds_from_data():
            st.caption("Downloads are disabled: the bounds were read off the data.")
        else:
            private_downloads(rel.mechanism, params, key=title)


def bounds_from_data() -> bool:
    """True when the current dataset's bounds were read off the data (then nothing is private)."""
    source = st.session_state.get("dataset_source")
    return bool(getattr(source, "bounds_from_data", False))


def privacy_short(rel) -> str:
    """"ε = 1, δ = 0" for the headline (the relation is in the sidebar)."""
    if not rel.is_dp:
        return "not private"
    return f"ε = {rel.epsilon:.3g}" + (f", δ = {rel.delta:.0e}" if rel.delta else "")


#: The largest W1 in the unit cube with the largest-coordinate distance: a "bound" above it says nothing.
UNIT_DIAMETER = 1.0


def bound_view(rel) -> tuple[str, str, str]:
    """(label, value, help) of the theory's bound for the headline, honestly.

    A number is shown as a bound only when it is proven for this run and below the cube's diameter.
    A rate without constants, a bound above the diameter, or one that does not cover the chosen
    setting is shown as "—" with the reason in the help text.
    """
    kind = (rel.bound_kind or "").lower()
    b = rel.bound
    if b is None or not math.isfinite(float(b)):
        why = "This mechanism has no bound from its paper." if "baseline" in kind or not kind else rel.bound_kind
        return "Theory's bound", "—", why
    b = float(b)
    if "certificate" in kind:
        return ("Certified bound", f"{b:.3g}",
                "A private, high-probability upper bound on the largest W1 over the released marginals, published "
                "with the data (see the certificate below).")
    if "constant-free" in kind or "unspecified" in kind or re.search(r"\brate\b", kind):
        return ("Theory's rate", "—",
                f"The paper gives a rate whose constants it does not specify; evaluated with constant 1 it is "
                f"{b:.3g} here, which is not a bound.")
    if b >= UNIT_DIAMETER:
        return ("Theory's bound", "—",
                f"The paper's bound at this n and ε is {b:.3g}, above the largest possible W1 (1): it says nothing "
                "yet. It becomes informative with more data or a larger ε.")
    if "estimated" in kind:
        return ("Theory's estimate", f"{b:.3g}",
                f"{rel.bound_kind}: part of it is estimated rather than proven, so read it as an estimate.")
    reference = "reference" in " ".join(map(str, rel.notes)).lower() and "not proved" in " ".join(map(str, rel.notes))
    label = "Theory's bound (reference)" if reference else "Theory's bound"
    return label, f"{b:.3g}", (rel.bound_kind or "") + (" For these settings the proof does not apply; the value "
                                                        "is shown for reference." if reference else "")


def w1_text(w) -> str:
    """W1 for people: the exact value, or the value with its certified interval."""
    if w.exact or w.upper - w.lower < 1e-12:
        return f"{w.value:.4g}"
    return f"{w.value:.4g} ∈ [{w.lower:.4g}, {w.upper:.4g}]"


def private_downloads(name: str, params: dict, *, key: str) -> None:
    """Downloads of a NEW release drawn with fresh randomness (never the teaching seed's release).

    A button makes the release (same mechanism, data, ε, δ, relation and parameters as on screen);
    then its synthetic CSV (rows in random order) and its public report (allow-listed fields only:
    no W1 to the data, no true counts) can be downloaded.
    """
    d = data()
    s = settings()
    slot = f"fresh_{key}"
    fingerprint = (name, d.name, d.n, s["epsilon"], s["delta"], s["neighbours"], tuple(sorted(params.items())))
    if st.button("Make a private release to download", key=f"make_{key}", icon=":material/lock:",
                 help="The pictures use the teaching seed, which anyone could reuse to undo the noise. A download "
                      "is a new release drawn with fresh randomness: it differs from the one on screen."):
        rel = safe(cached_run, name, d.X, *dom_key(d.domain), s["epsilon"], s["delta"], s["neighbours"], None,
                   tuple(sorted(params.items())), what=f"running {name}")
        if rel is not None:
            st.session_state[slot] = (fingerprint, rel)
    stored = st.session_state.get(slot)
    if stored is None or stored[0] != fingerprint:
        return
    fresh = stored[1]
    st.caption(f"A fresh release: {fresh.synthetic.shape[0]} synthetic points, {fresh.privacy}.")
    d1, d2 = st.columns(2)
    d1.download_button("Synthetic data (CSV)", data=export.synthetic_csv(fresh), icon=":material/download:",
                       file_name=f"{fresh.mechanism}_synthetic.csv", mime="text/csv", key=f"dl_csv_{key}",
                       help="The synthetic data of the fresh release, rows in random order.")
    d2.download_button("Report (JSON)", data=export.report_json(fresh), icon=":material/download:",
                       file_name=f"{fresh.mechanism}_report.json", mime="application/json", key=f"dl_json_{key}",
                       help="The fresh release's public report: ε, δ, relation, ledger, parameters, bound. Nothing "
                            "computed from the real data without noise.")


def owner_caption(text: str = "") -> None:
    st.caption(OWNER + (" " + text if text else ""))


def explain(what: str, formula: str | None = None) -> None:
    """One line under a chart: what it shows, and the formula behind it."""
    st.caption(what)
    if formula:
        st.latex(formula)


def plot(fig, what: str, formula: str | None = None, *, key: str | None = None) -> None:
    st.plotly_chart(fig, width="stretch", key=key, config={"displaylogo": False})
    explain(what, formula)


# ------------------------------------------------------------------------------- lesson path
def page_intro(url: str) -> None:
    """The page's title, what it teaches, its papers and its place on the lesson path."""
    from .lessons import LESSONS, ORDER, PAPERS, step_of

    lesson = LESSONS[url]
    st.caption(f"Lesson {step_of(url)} of {len(ORDER)}")
    st.title(lesson.title)
    st.markdown(lesson.teaches)
    if lesson.papers:
        st.caption("From " + "; ".join(PAPERS[k].cite() for k in lesson.papers) + ".")


def lesson_box(url: str) -> None:
    """Try this / what you should see / questions for the class (open on the first visit)."""
    from .lessons import LESSONS

    lesson = LESSONS[url]
    if not (lesson.try_this or lesson.expect or lesson.ask):
        return
    seen = st.session_state.setdefault("_lessons_seen", set())
    with st.expander("Lesson: try this", expanded=url not in seen, icon=":material/school:"):
        if lesson.try_this:
            st.markdown("**Try this**\n" + "\n".join(f"{i}. {t}" for i, t in enumerate(lesson.try_this, 1)))
        if lesson.expect:
            st.markdown("**What you should see**\n" + "\n".join(f"- {t}" for t in lesson.expect))
        if lesson.ask:
            st.markdown("**Ask your students**\n" + "\n".join(f"- {t}" for t in lesson.ask))
    seen.add(url)


def lesson_nav(url: str) -> None:
    """Previous / next links of the lesson path."""
    from .lessons import LESSONS, neighbours_of

    prev, nxt = neighbours_of(url)
    st.divider()
    c1, _, c2 = st.columns([2, 1, 2])
    if prev is not None and prev in PAGE_OBJECTS:
        c1.page_link(PAGE_OBJECTS[prev], label=f"Previous: {LESSONS[prev].title}", icon=":material/arrow_back:")
    if nxt is not None and nxt in PAGE_OBJECTS:
        c2.page_link(PAGE_OBJECTS[nxt], label=f"Next: {LESSONS[nxt].title}", icon=":material/arrow_forward:")


def look_closer(views: dict[str, Callable[[], None]], *, key: str, default: str | None = None) -> None:
    """One detail view at a time: a choice of views, and only the chosen one is computed and drawn
    (the page stays fast whatever it can show)."""
    names = list(views)
    choice = st.segmented_control("Look closer", names, default=default or names[0], key=key,
                                  persist_state="session") or names[0]
    views[choice]()


def mechanism_header(url: str, name: str, *, defaults: dict | None = None, skip: tuple = (),
                     labels: dict | None = None):
    """The page's intro and lesson, then the mechanism's parameter controls. Returns (spec, params)."""
    page_intro(url)
    lesson_box(url)
    spec = mechanism_spec(name)
    params = param_controls(spec, defaults=defaults, skip=skip, labels=labels)
    return spec, params


def _set_relation(value: str) -> None:
    st.session_state["neighbours"] = value


def relation_supported(spec) -> bool:
    """True if the sidebar's relation is one the mechanism supports.

    Otherwise the relation is switched to the one the mechanism needs (a mechanism page should show its
    mechanism, not an error) and the page reruns; the page then says what was switched and why.
    """
    rel = settings()["neighbours"]
    note = st.session_state.pop("_relation_note", None)
    if rel in spec.neighbours:
        if note:
            st.info(note, icon=":material/swap_horiz:")
        return True
    other = spec.neighbours[0]
    why = ("it needs the dataset size n to be public" if other == "replace" else
           "its analysis covers adding or removing a record")
    st.session_state["_pending_neighbours"] = other
    st.session_state["_relation_note"] = (
        f"{spec.title} works with *{_RELATION_WORDS[other]}* neighbours only ({why}), so the sidebar's "
        "neighbouring relation was switched for you.")
    st.rerun()
    return False  # pragma: no cover - st.rerun does not return


_RELATION_WORDS = {"add_remove": "add / remove one record", "replace": "replace one record"}


def release_section(name: str, params: dict, *, title: str):
    """Run the mechanism (cached), show the headline and real against synthetic. Returns (rel, w1) or None."""
    spec = mechanisms()[name]
    if not relation_supported(spec):
        return None
    rel = run(name, params)
    if rel is None:
        return None
    w = w1_of(rel.synthetic)
    release_panel(rel, w, params, title=title)
    d = data()
    plot(viz_scatter(d, rel.synthetic),
         "Left: the real data (:material/lock: owner view). Right: the synthetic data, on the same axes; the "
         "dotted box is the public domain.", key=f"{title}_scatter")
    return rel, w


def viz_scatter(d, Y):
    from dpsynth_core import viz

    return viz.scatter_compare(d.X, Y, d.domain.names, lower=d.domain.lower, upper=d.domain.upper)


def require_app(page_file: str) -> None:
    """Make sure the page runs inside app.py's ``st.navigation`` (call it first, with ``__file__``).

    Streamlit runs a ``pages/`` folder beside the main script as an old-style multipage app until
    the main script's first ``st.navigation`` call in the server process. On a cold server whose
    first request is a page URL (a shared link such as ``/pmm?eps=0.1``) the page file would run
    alone, without the sidebar or the state. Then we remember the page and switch to the main
    script with the public ``st.switch_page``: app.py sets up the state and the navigation, and
    opens the remembered page.
    """
    if st.session_state.get("_in_app"):
        return
    name = Path(page_file).name
    st.session_state["_start_query"] = st.query_params.to_dict()
    st.session_state["_start_page"] = next((url for file, *_rest, url, _m, _d in PAGES if Path(file).name == name),
                                           None)
    st.switch_page(str(ROOT / "app.py"))
