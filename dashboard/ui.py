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

# (file, title, icon, url_path, mechanism or None, uses δ)
PAGES: list[tuple[str, str, str, str, str | None, bool]] = [
    ("pages/home.py", "Home", ":material/home:", "home", None, False),
    ("pages/data.py", "Data", ":material/table_view:", "data", None, False),
    ("pages/pmm.py", "PMM", ":material/account_tree:", "pmm", "pmm", False),
    ("pages/psmm.py", "PSMM", ":material/grid_on:", "psmm", "psmm", False),
    ("pages/random_walk.py", "Random walk", ":material/timeline:", "random_walk", "haar_walk", False),
    ("pages/sparse_marginals.py", "Sparse marginals", ":material/view_module:", "sparse_marginals", "sparse_marginals", False),
    ("pages/private_evolution.py", "Private Evolution", ":material/auto_awesome:", "private_evolution", "private_evolution", True),
    ("pages/low_dim.py", "Low-dim", ":material/3d_rotation:", "low_dim", "low_dim", False),
    ("pages/rates.py", "Rates", ":material/trending_down:", "rates", None, True),
    ("pages/compare.py", "Compare", ":material/balance:", "compare", None, True),
    ("pages/audit.py", "Audit", ":material/search:", "audit", None, True),
]
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
    """Widgets for a mechanism's parameters, built from its registry schema.

    ``labels`` maps a choice parameter's name to {choice: label} (e.g. to flag non-private options);
    ``defaults`` overrides schema defaults that do not fit the data (e.g. s <= d)."""
    import dataclasses

    params = tuple(dataclasses.replace(p, default=defaults[p.name]) if defaults and p.name in defaults else p
                   for p in spec.params if p.name not in skip)
    return schema_controls(params, prefix or spec.name, labels=labels)


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
        with st.expander("Advanced parameters"):
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
    """Metrics (W1, bound, privacy, size, time), notes and the two downloads."""
    spec = mechanisms().get(rel.mechanism)
    record_release(rel, spec.title if spec is not None else rel.mechanism)
    c1, c2, c3, c4 = st.columns(4)
    c1.metric("W1(real, synthetic)", "—" if w1v is None else f"{w1v.value:.4g}",
              help="Wasserstein-1 distance in the unit cube with the l∞ metric: the largest gap "
                   "|E f(real) − E f(synthetic)| over all 1-Lipschitz f. :material/lock: Computed from the real data (owner view).")
    c2.metric("Paper bound", "—" if rel.bound is None else f"{rel.bound:.4g}",
              help=rel.bound_kind or "The paper's bound on E W1 for this run")
    c3.metric("Synthetic points", f"{rel.synthetic.shape[0]}")
    secs = rel.seconds
    c4.metric("Time", "—" if not math.isfinite(secs) else (f"{secs * 1000:.0f} ms" if secs < 1 else f"{secs:.2f} s"),
              help="Time of the mechanism call (W1 and the pictures not included).")
    st.caption(f"**Guarantee:** {rel.privacy}. **Bound:** {rel.bound_kind or '—'}. **W1:** "
               f"{'—' if w1v is None else w1_text(w1v) + ' (' + w1v.method + ')'}.")
    if not rel.is_dp:
        st.warning("This run is NOT differentially private (a teaching run that reads the private data).")
    for note in rel.notes:
        st.caption(":material/info: " + str(note))
    private_downloads(rel.mechanism, params, key=title)


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


def mechanism_header(name: str, title: str, intro: str, *, defaults: dict | None = None):
    """Title, the registry's description, and the parameter controls. Returns (spec, params) or None
    when the mechanism has not landed (a plain st.info is shown)."""
    st.title(title)
    st.markdown(intro)
    spec = mechanism_spec(name)
    st.caption(f"{spec.title} — {spec.paper}, {spec.algorithm}. {spec.dp.capitalize()} DP; neighbours: "
               f"{', '.join(r.replace('_', '/') for r in spec.neighbours)}. {spec.summary}")
    params = param_controls(spec, defaults=defaults)
    return spec, params


def _set_relation(value: str) -> None:
    st.session_state["neighbours"] = value


def relation_supported(spec) -> bool:
    """True if the sidebar's relation is one the mechanism supports; otherwise explain and offer a switch."""
    rel = settings()["neighbours"]
    if rel in spec.neighbours:
        return True
    other = spec.neighbours[0]
    st.warning(f"{spec.title} supports only {' and '.join(r.replace('_', '/') for r in spec.neighbours)} "
               f"neighbours, and the sidebar says {rel.replace('_', '/')}. "
               + ("Under replace, n is public (the paper's setting)." if other == "replace" else ""))
    st.button(f"Use {other.replace('_', '/')} neighbours", key=f"use_{other}_{spec.name}", on_click=_set_relation,
              args=(other,), type="primary")
    return False


def release_section(name: str, params: dict, *, title: str):
    """Run the mechanism (cached), show metrics/downloads and real vs synthetic. Returns (rel, w1) or None."""
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
         "Left: real data (:material/lock: owner view). Right: the DP synthetic data, same axes; dotted: the public bounds.",
         key=f"{title}_scatter")
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
