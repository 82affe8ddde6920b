"""A mechanism page's release: run it (switching the relation it needs), the headline metrics with the
theory's bound shown honestly, the notes, real against synthetic, and the private downloads.

Under the pictures, "What the release preserves" (:func:`preserves_view`) is the library's owner report
(:func:`dpsynth_core.evaluate.report`): the differences W1 controls next to their ceilings, the columns,
the pairs, and train-on-synthetic / test-on-real for a column the user picks. On a table with
categorical columns the scatter shows the numeric columns, the counts per category (real against
synthetic) follow it, and the report adds a numeric column within each category; a mechanism that does
not take categorical columns shows the library's refusal and offers to continue on the numeric columns
(:func:`offer_numeric_part`).

Randomness: the release on screen uses the sidebar's teaching seed, so that a class sees the same
pictures; anything downloaded is a NEW release drawn with fresh operating-system entropy
(:func:`private_downloads`), because whoever knows a seed can re-draw the noise.
"""

from __future__ import annotations

import re

import streamlit as st

from dpsynth_core import export
from dpsynth_core.mechanisms import MisfitKind
from dpsynth_core.validation import plural
from dpsynth_core.wording import RELATION_WORDS, bound_words, delta_text, w1_interval_text, w1_metric_text

from . import data as sources
from .compute import (
    cached_release,
    cached_report,
    headline_job,
    headline_w1,
    mechanism_label,
    mechanism_pages,
    mechanisms,
    safe,
    teaching_release,
)
from .state import bounds_from_data, data, flash, record_release, set_data, settings
from .widgets import OWNER, plot

__all__ = ["release_section", "release_panel", "privacy_short", "privacy_label",
           "private_downloads", "fits_limits", "left_out", "relation_supported", "switch_relation", "offer_numeric_part", "numeric_page_gate",
           "category_views", "preserves_view", "numeric_details", "w1_sentence", "POLL_SECONDS", "release_stem"]

#: How often the headline's fragment looks for a better W1 while the exact value is being computed.
POLL_SECONDS = 0.5


def release_section(name: str, params: dict, *, title: str):
    """Run the mechanism (cached), show the headline and real against synthetic. Returns (rel, w1) or None."""
    spec = mechanisms()[name]
    if not fits_limits(spec, key=title) or not relation_supported(spec):  # the limits first: said before running
        return None
    rel = teaching_release(name, params)
    if rel is None:
        return None
    w, w1_key = headline_w1(rel.synthetic)
    release_panel(rel, w, params, title=title, w1_key=w1_key)
    d = data()
    mixed = d.domain.is_mixed
    plot(_scatter(d, rel.synthetic), _scatter_caption(d.domain), key=f"{title}_scatter")
    if mixed:
        category_views(d, rel, key=title)
    preserves_view(d, rel, w, key=title)
    return rel, w


def fits_limits(spec, *, key: str) -> bool:
    """True when the current table is within the limits ``spec`` (the mechanism contract) declares: categorical
    columns, the number of numeric columns, the number of rows. Otherwise False, after saying so BEFORE
    running, in the page's words and with what to change (the library says it as a parameter error)."""
    d = data()
    dom, label = d.domain, mechanism_label(spec.name)
    why = spec.misfit(dom, d.n)
    if why is None:
        return True
    if why.kind is MisfitKind.CATEGORIES:
        takers = mechanism_pages(n for n, s in mechanisms().items() if s.categorical)
        offer_numeric_part(key=key, why=f"{label} does not take categorical columns, and the table `{d.name}` has "
                                        f"{plural(len(dom.categories), 'categorical column')} "
                                        f"({', '.join(dom.categories)}). The pages of the mechanisms that take them: "
                                        f"{takers}. Or continue here with the numeric columns:")
    elif why.kind is MisfitKind.COLUMNS:
        others = mechanism_pages(n for n, s in mechanisms().items() if n != spec.name and s.misfit(dom, d.n) is None)
        st.warning(f"{label} takes at most {spec.max_dim} numeric columns"
                   + (f" ({spec.max_dim_reason})" if spec.max_dim_reason else "")
                   + f", and the table `{d.name}` has {dom.k}. Pick at most {spec.max_dim} columns under *Columns to "
                   f"use* on the Data and bounds page, or use a page without this limit: {others}.",
                   icon=":material/view_column:")
    else:
        st.warning(f"{spec.title} needs at least {spec.min_rows} rows and this table has {plural(d.n, 'row')}"
                   + (f": {spec.min_rows_reason}." if spec.min_rows_reason else ".")
                   + " Load a larger table on the Data page.", icon=":material/table_rows:")
    return False


def left_out(names, *, key: str) -> set[str]:
    """Before a run of several mechanisms (the Compare page): the ones the sidebar's relation or the table's
    limits (the mechanism contract) rule out, said in words BEFORE running, with the switch of the relation that
    brings them in. Returns their names."""
    d, relation = data(), settings().neighbours
    specs = mechanisms()
    by_relation: dict[str, list[str]] = {}
    limits = []
    for name in names:
        spec = specs[name]
        why = spec.misfit(d.domain, d.n)
        if relation not in spec.neighbours:
            by_relation.setdefault(spec.neighbours[0], []).append(name)
        elif why is not None:
            limits.append((name, why.reason))
    for other, out in by_relation.items():
        st.warning(f"Left out under *{RELATION_WORDS[relation]}* neighbours: {_and(map(mechanism_label, out))}. "
                   + ("It works" if len(out) == 1 else "They work")
                   + f" with *{RELATION_WORDS[other]}* neighbours only ("
                   + ("the dataset size n must be public" if other == "replace" else
                      "the analysis covers adding or removing a record")
                   + "). To include " + ("it" if len(out) == 1 else "them")
                   + f", switch the sidebar's neighbouring relation to *{RELATION_WORDS[other]}*.",
                   icon=":material/block:")
        st.button(f"Switch to {RELATION_WORDS[other]}", key=f"{key}_switch_{other}", on_click=switch_relation,
                  args=(other,), help="Changes the sidebar's neighbouring relation; then run again.")
    if limits:
        st.warning("Left out on this table: " + "; ".join(f"{mechanism_label(n)} ({why})" for n, why in limits)
                   + ". Change the table on the Data and bounds page to include them.", icon=":material/block:")
    return {n for out in by_relation.values() for n in out} | {n for n, _ in limits}


def _and(words) -> str:
    """"a", "a and b", "a, b and c"."""
    words = list(words)
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def _scatter(d, Y):
    from dpsynth_core import viz

    X, names = sources.numeric_part(d)
    return viz.scatter_compare(X, sources.numeric_rows(Y, d.domain), names, lower=d.domain.lower,
                               upper=d.domain.upper)


def _scatter_caption(dom) -> str:
    """What :func:`_scatter` draws: two panels side by side, or one overlaid histogram for one numeric column."""
    if len(dom.numeric_names) == 1:
        text = ("The real data (dotted outline, :material/lock: owner view) and the synthetic data (bars) as "
                "histograms overlaid on the same axis; the axis spans the public domain.")
    else:
        text = ("Left: the real data (:material/lock: owner view). Right: the synthetic data, on the same axes; the "
                "dotted box is the public domain.")
    if dom.is_mixed:
        text += (f" The numeric column {dom.numeric_names[0]}" if len(dom.numeric_names) == 1 else
                 " The numeric columns") + "; the categories are counted below."
    return text


def offer_numeric_part(*, key: str, why: str | None = None) -> None:
    """On a table with categorical columns: a button that continues with its numeric columns only (their
    declared bounds kept), for a mechanism or a page that does not take categorical columns."""
    d = data()
    if not d.domain.is_mixed:
        return
    if why:
        st.info(why, icon=":material/category:")
    if st.button(f"Use the numeric columns of {d.name} only ({', '.join(d.domain.numeric_names)})",
                 key=f"numeric_only_{key}", icon=":material/filter_alt:",
                 help="Makes a dataset of the numeric columns, with their declared bounds, for every page. The Data "
                      "page brings the whole table back (Load for a bundled table; \"Use the whole table again\" "
                      "for an upload)."):
        part = sources.numeric_only(d)
        set_data(part, sources.Source("upload", part.name, bounds_from_data=not part.domain.declared))
        flash("info", f"Using the numeric columns of `{d.name}`: {', '.join(part.domain.names)}.")
        st.rerun()


def numeric_page_gate(*, key: str, what: str) -> bool:
    """True when the page can run on the current data; on a table with categorical columns, False after
    saying why (``what`` is what the page does with numeric columns) and offering the numeric columns."""
    d = data()
    if not d.domain.is_mixed:
        return True
    takers = mechanism_pages(n for n, s in mechanisms().items() if s.categorical)
    offer_numeric_part(key=key, why=f"{what} The table `{d.name}` has categorical columns "
                                    f"({', '.join(d.domain.categories)}): the mechanisms that take them show their "
                                    f"releases on their own pages ({takers}). Continue here with the numeric columns:")
    return False


def numeric_details(res):
    """``res`` of :func:`release_section` for a page whose detail views are made for numeric data only
    (today Private Evolution's); on a table with categorical columns None, after saying so (the release,
    its comparison with the data and the report are above), so that a mechanism that starts taking
    categorical columns never meets a picture made for numeric rows."""
    if res is None or not data().domain.is_mixed:
        return res
    st.info("The detail views of this page draw the numeric grid of the mechanism; on a table with categorical "
            "columns they are not drawn. The release, its comparison with the data and the report of what it "
            "preserves are above.", icon=":material/category:")
    return None


def category_views(d, rel, *, key: str) -> None:
    """Real against synthetic, per category: the share of the rows in every declared category."""
    from dpsynth_core import viz

    dom = d.domain
    plot(viz.category_counts(d.to_frame(), sources.table_of(rel.synthetic, dom), dom.categories,
                             title="rows per category: real and synthetic"),
         "Shares of the rows in every declared category. Grey: the real data (" + OWNER + ") Vermillion: the "
         "synthetic data. A release within W1 = w of the data keeps every share within w (category weight 1).",
         key=f"{key}_categories")


_GUARANTEE_COLUMNS = {"statistic": "statistic", "columns": "column", "measured": "measured difference",
                      "ceiling": "ceiling from W1", "holds": "within"}
_COLUMN_COLUMNS = {"column": "column", "kind": "kind", "real_mean": "mean (real)", "synthetic_mean": "mean (synthetic)",
                   "real_std": "sd (real)", "synthetic_std": "sd (synthetic)", "largest_share_diff":
                   "largest share difference", "at_category": "at category", "tv": "1-way error (TV)"}
_PAIR_COLUMNS = {"a": "first column", "b": "second column", "association": "association", "real": "real", "synthetic": "synthetic",
                 "diff": "difference", "tv": "2-way error (TV)"}


def preserves_view(d, rel, w=None, *, key: str) -> None:
    """What the release preserves: the library's report (:func:`dpsynth_core.evaluate.report`), an OWNER
    VIEW computed from the real data without noise, never part of a download.

    The differences W1 controls (means, a column's W1, standard deviations, category shares) next to the
    ceiling the release's W1 puts on them (``w``, the proven upper end; none without it), the columns, the
    pairs, the 1- and 2-way marginal errors, and train on synthetic / test on real for a column the user
    picks (computed only then). On a table with categorical columns, also a numeric column within each
    category, real against synthetic.
    """
    from dpsynth_core import viz

    dom = d.domain
    with st.expander("What the release preserves (:material/lock: owner view)", icon=":material/fact_check:"):
        st.caption("Computed from the real data without noise: NOT differentially private, for your eyes only, "
                   "never part of a download.")
        target = st.selectbox("Train on synthetic, test on real: predict", ["—"] + list(dom.names),
                              key=f"{key}_pres_target", persist_state="session",
                              help="A model (gradient boosting) trained on the synthetic rows and one trained on "
                                   "real rows, both scored on real rows held out, next to a constant guess.")
        target = None if target == "—" else target
        if len(rel.synthetic) == 0:
            st.caption("This release has no synthetic rows: there is nothing to compare.")
            return
        w1 = None if w is None else float(w.upper)
        synth = rel.synthetic if dom.is_mixed else sources.numeric_rows(rel.synthetic, dom)
        rep = safe(cached_report, d.X, synth, dom, target, w1, what="comparing the release with the data")
        if rep is None:
            return
        me = rep["marginal_errors"]
        m1, m2, m3, m4 = st.columns(4)
        m1.metric("1-way error, mean", f"{me['one_way_mean']:.3f}",
                  help="Total variation between the real and synthetic histogram of a column (its public bins, or "
                       "its declared categories), averaged over the columns: the largest difference of the share "
                       "of any set of cells.")
        m2.metric("1-way error, worst", f"{me['one_way_max']:.3f}", help=f"In column {me['one_way_worst']!r}.")
        if me.get("two_way_mean") is not None:
            m3.metric("2-way error, mean", f"{me['two_way_mean']:.3f}",
                      help="The same on the 2-way table of every pair of columns.")
            m4.metric("2-way error, worst", f"{me['two_way_max']:.3f}",
                      help=f"In the pair {' × '.join(me['two_way_worst'] or ())}.")
        tabs = ["What W1 guarantees", "Columns", "Pairs"] + (["Train on synthetic"] if target else []) \
            + (["Within categories"] if dom.is_mixed else [])
        views = dict(zip(tabs, st.tabs(tabs), strict=True))
        with views["What W1 guarantees"]:
            table = rep["guarantees"].loc[:, list(_GUARANTEE_COLUMNS)].rename(columns=_GUARANTEE_COLUMNS)
            st.dataframe(table, hide_index=True, width="stretch")
            if rep["w1"] is not None:  # without one, the library's notes below say why there are no ceilings
                st.caption(f"Every statistic that is L-Lipschitz differs by at most L × W1 (W1 ≤ {rep['w1']:.3g}): "
                           "a column's mean by at most W1 times the column's range, a category's share by at most "
                           "W1. The measured differences stay under their ceilings"
                           + ("." if not rep["contradictions"] else
                              f", except {rep['contradictions']}: the W1 does not belong to these two tables."))
        with views["Columns"]:
            cols = [c for c in _COLUMN_COLUMNS if c in rep["columns"].columns]
            st.dataframe(rep["columns"].loc[:, cols].rename(columns=_COLUMN_COLUMNS), hide_index=True,
                         width="stretch")
        with views["Pairs"]:
            st.dataframe(rep["pairs"].loc[:, list(_PAIR_COLUMNS)].rename(columns=_PAIR_COLUMNS), hide_index=True,
                         width="stretch")
            st.caption("Pearson's correlation (two numeric columns), Cramér's V (two categorical columns), the "
                       "correlation ratio (a numeric column given a categorical one). W1 puts no ceiling on these.")
        if target:
            with views["Train on synthetic"]:
                st.dataframe(rep["downstream"], hide_index=True, width="stretch")
                st.caption(f"Predicting {target!r}: trained on the synthetic rows, on real rows, or a constant guess "
                           "(baseline); every model is scored on real rows held out. Those rows were also in the data "
                           "the mechanism saw, so the synthetic score is optimistic.")
        for note in rep["notes"]:
            st.caption(note)
        if dom.is_mixed:
            with views["Within categories"]:
                c1, c2 = st.columns(2)
                column = c1.selectbox("Numeric column", list(dom.numeric_names), key=f"{key}_pres_num",
                                      persist_state="session")
                by = c2.selectbox("Within each category of", list(dom.categories), key=f"{key}_pres_by",
                                  persist_state="session")
                j = list(dom.numeric_names).index(column)
                plot(viz.numeric_by_category(d.to_frame(), sources.table_of(rel.synthetic, dom), column, by,
                                             dom.categories[by], lower=dom.lower[j], upper=dom.upper[j],
                                             title=f"{column} within each {by}"),
                     f"Does the synthetic data keep how {column} differs between the categories of {by}? Dotted: "
                     f"the real rows of each category ({OWNER}) Bars: the synthetic rows. Densities within the "
                     "category.", key=f"{key}_pres_plot")


def release_panel(rel, w1v, params: dict, *, title: str, w1_key: str | None = None) -> None:
    """The headline of a release: W1 to the data, the theory's bound shown honestly, the synthetic size
    and the guarantee; the release's notes; the private downloads (in an expander).

    ``w1_key`` names the background W1 job of :func:`~dashboard.compute.headline_w1`: while it may still
    improve on ``w1v`` (a certified bracket), the headline is a fragment that polls it every
    :data:`POLL_SECONDS` and fills in the exact value as soon as it is known, without blocking the page."""
    spec = mechanisms().get(rel.mechanism)
    record_release(rel, spec.title if spec is not None else rel.mechanism)
    bound = bound_words(rel)
    others = [(bound.label, bound.value, bound.help),
              ("Synthetic rows" if rel.domain.is_mixed else "Synthetic points", f"{rel.synthetic.shape[0]:,}",
               size_help(rel)),
              (privacy_label(rel), "not private" if bounds_from_data() else privacy_short(rel), rel.privacy)]
    job = headline_job(w1_key)
    if job is not None and not job.finished and not (w1v is not None and w1v.exact):
        st.fragment(_headline, run_every=POLL_SECONDS)(w1v, w1_key, others, rel.domain.is_mixed, polling=True)
    else:
        _headline(w1v, w1_key, others, rel.domain.is_mixed)
    if bound.vacuous:
        st.caption(bound.help)  # why the bound shows "—", next to it rather than only in its help
    if bounds_from_data():
        st.warning("NOT private: the bounds or categories of this dataset were read off the data (Data page), so no "
                   "release of it is differentially private. Type public bounds and declare the categories to make "
                   "it private.")
    elif not rel.is_dp:
        st.warning("This run is NOT differentially private (a teaching start that reads the private data). "
                   "Never publish its output.")
    if rel.notes:
        with st.expander("Technical notes on this release", icon=":material/info:"):
            for note in rel.notes:
                st.caption(str(note))
    with st.expander("Download a private release", icon=":material/download:"):
        if bounds_from_data():
            st.caption("Downloads are disabled: the bounds or categories were read off the data.")
        else:
            private_downloads(rel.mechanism, params, key=title)


def _headline(w1v, w1_key, others, mixed: bool, *, polling: bool = False) -> None:
    """The row of headline metrics and the sentence on W1. As a polling fragment (``polling``): the
    latest result of the W1 job; once the job has finished, one rerun of the page, which draws the
    final headline without polling (and gives the exact value to the views below it)."""
    job = headline_job(w1_key, resume=polling)
    if polling:
        if job is None or job.finished:
            st.rerun()
        if job.latest is not None:
            w1v = job.latest
    pending = job is not None and not job.finished and not (w1v is not None and w1v.exact)
    c1, *cols = st.columns([1.7, 1, 1, 1])  # the W1 column is wider: it may show an interval
    c1.metric("Distance to the real data (W1)", "—" if w1v is None else
              (f"{w1v.value:.4g}" if w1v.exact else w1_metric_text(w1v.lower, w1v.upper)),
              help="Wasserstein-1 distance between the real and the synthetic data, in the unit cube with the "
                   "largest-coordinate distance"
                   + (" (two different categories of a column at distance 1, or the column's weight: the mixed "
                      "metric)" if mixed else "")
                   + ": every 1-Lipschitz statistic differs by at most this much. "
                   ":material/lock: Computed from the real data (owner view)."
                   + ("" if w1v is None else " Exact: certified optimal." if w1v.exact else
                      " An interval certified to contain W1" + (": the exact value fills in when it is known."
                                                                if pending else ".")))
    for c, (lab, val, hlp) in zip(cols, others, strict=True):
        c.metric(lab, val, help=hlp)
    if w1v is not None:
        st.caption(w1_sentence(w1v, job, pending))


def w1_sentence(w, job=None, pending: bool = False) -> str:
    """The headline's sentence on W1: "exact", or "certified to lie in [a, b]" and what happens next."""
    if w.exact:
        return (f"W1 = {w.value:.6g}, exact: the cost of an optimal transport plan between the data and the release, "
                "certified optimal by a dual solution checked over all pairs of points.")
    width = (w.upper - w.lower) / w.upper if w.upper > 0 else 0.0
    how = {"sparse": ": a feasible transport plan's cost above, a feasible dual below",
           "grid": ": the exact W1 between the two sets binned on a grid, plus or minus a cell's diameter"}.get(w.method, "")
    text = (f"W1 is certified to lie in [{w1_interval_text(w.lower, w.upper, brackets=False)}] (a bracket "
            f"{100 * width:.2g}% of its upper end wide{how}). ")
    if pending:
        return text + "The exact value is being computed and fills in here as soon as it is known."
    if job is not None and job.state == "failed":
        return text + f"The exact computation stopped ({job.error}), so the bracket stays."
    return text + "An exact solve at this size takes longer than a page should, so the bracket stays."


def size_help(rel) -> str | None:
    """The help of the size metric when the release's size comes from a noisy count of the rows: at a small
    ε that count can be far from n (the noise's scale is said), which is the price of keeping n private."""
    size = rel.params.get("size")
    if not isinstance(size, dict) or size.get("source") != "noisy" or not size.get("epsilon_spent"):
        return None
    scale = 1.0 / float(size["epsilon_spent"])
    return (f"Under add/remove neighbours the number of rows is itself private: ε = {size['epsilon_spent']:.3g} of "
            f"the budget buys a noisy count (discrete Laplace noise of scale {scale:,.0f}), and the release's size "
            "follows it. At a small ε it can be far from the true number of rows.")


def privacy_short(rel) -> str:
    """"ε = 1" for the headline's value (δ is in its label, :func:`privacy_label`, so that the value fits a
    quarter of the page; the relation is in the sidebar)."""
    if not rel.is_dp:
        return "not private"
    return f"ε = {rel.epsilon:.3g}"


def privacy_label(rel) -> str:
    """"Privacy" for a pure-DP release, "Privacy (δ = 10⁻⁶)" for an approximate one."""
    return f"Privacy (δ = {delta_text(rel.delta)})" if rel.is_dp and rel.delta else "Privacy"


def private_downloads(name: str, params: dict, *, key: str) -> None:
    """Downloads of a NEW release drawn with fresh randomness (never the teaching seed's release).

    A button makes the release (same mechanism, data, ε, δ, relation and parameters as on screen);
    then its synthetic CSV (rows in random order) and its public report (allow-listed fields only:
    no W1 to the data, no true counts) can be downloaded.
    """
    d = data()
    s = settings()
    slot = f"fresh_{key}"
    fingerprint = (name, d.name, d.n, s.epsilon, s.delta, s.neighbours, tuple(sorted(params.items())))
    if st.button("Make a private release to download", key=f"make_{key}", icon=":material/lock:",
                 help="The pictures use the teaching seed, which anyone could reuse to undo the noise. A download "
                      "is a new release drawn with fresh randomness: it differs from the one on screen."):
        rel = safe(cached_release, name, d.X, d.domain, s.epsilon, s.delta, s.neighbours, None,
                   tuple(sorted(params.items())), what=f"running {name}")
        if rel is not None:
            st.session_state[slot] = (fingerprint, rel)
    stored = st.session_state.get(slot)
    if stored is None or stored[0] != fingerprint:
        return
    fresh = stored[1]
    st.caption(f"A fresh release: {fresh.synthetic.shape[0]} synthetic {'rows' if fresh.domain.is_mixed else 'points'}, "
               f"{fresh.privacy}.")
    d1, d2 = st.columns(2)
    d1.download_button("Synthetic data (CSV)", data=export.synthetic_csv(fresh), icon=":material/download:",
                       file_name=f"{release_stem(fresh, data().name)}_synthetic.csv", mime="text/csv", key=f"dl_csv_{key}",
                       help="The synthetic data of the fresh release, rows in random order.")
    d2.download_button("Report (JSON)", data=export.report_json(fresh), icon=":material/download:",
                       file_name=f"{release_stem(fresh, data().name)}_report.json", mime="application/json", key=f"dl_json_{key}",
                       help="The fresh release's public report: ε, δ, relation, ledger, parameters, bound. Nothing "
                            "computed from the real data without noise.")


def release_stem(rel, dataset: str | None = None) -> str:
    """A download's file name before its suffix: the table's name, the mechanism, ε, δ and the neighbouring
    relation, compact and safe in any file system ("clinic_pmm_eps1_delta0_add-remove"; "1e-06" for δ = 10⁻⁶).
    The CSV itself stays plain (a comment line would break CSV readers); the report inside the JSON says the
    same in full."""
    parts = ((dataset,) if dataset else ()) + (rel.mechanism, f"eps{float(rel.epsilon):g}",
                                               f"delta{float(rel.delta or 0.0):g}", rel.neighbours)
    return "_".join(re.sub(r"[^A-Za-z0-9.-]+", "-", str(p)).strip("-.") or "x" for p in parts)


def switch_relation(value: str) -> None:
    """Set the sidebar's neighbouring relation (a button's ``on_click``: runs before the widget exists)."""
    st.session_state["neighbours"] = value


def relation_supported(spec) -> bool:
    """True if the sidebar's relation is one the mechanism supports.

    Otherwise the relation is switched to the one the mechanism needs (a mechanism page should show its
    mechanism, not an error) and the page reruns; the page then says what was switched and why.
    """
    rel = settings().neighbours
    if rel in spec.neighbours:
        # the note stays while this page shows the switched relation (a page can run several times: a fragment's
        # last poll, a widget); the sidebar drops it with the switch on the next page
        note, restore = st.session_state.get("_relation_note"), st.session_state.get("_relation_restore")
        if note and restore and restore["page"] == st.session_state.get("_page") and rel == restore["switched_to"]:
            st.info(note, icon=":material/swap_horiz:")
        return True
    other = spec.neighbours[0]
    why = ("it needs the dataset size n to be public" if other == "replace" else
           "its analysis covers adding or removing a record")
    st.session_state["_pending_neighbours"] = other
    # the switch is for this page only: the sidebar restores the user's relation on the next page
    page = st.session_state.get("_page")
    st.session_state["_relation_restore"] = {"value": rel, "switched_to": other, "page": page}
    st.session_state["_relation_note"] = (
        f"{spec.title} works with *{RELATION_WORDS[other]}* neighbours only ({why}), so the sidebar's "
        f"neighbouring relation was switched for this page; other pages go back to *{RELATION_WORDS[rel]}*.")
    st.rerun()
    return False  # pragma: no cover - st.rerun does not return
