"""What a release preserves (an OWNER VIEW: computed from the real data without noise, never part of a
download): real against synthetic per category, and the library's report
(:func:`dpsynth_core.evaluate.report`) -- the differences W1 controls next to their ceilings, the columns, the
pairs, train-on-synthetic / test-on-real for a column the user picks, and on a table with categorical
columns a numeric column within each category."""

from __future__ import annotations

import streamlit as st

from .compute import cached_report, safe
from .widgets import OWNER, plot

__all__ = ["category_views", "preserves_view"]


def category_views(d, rel, *, key: str) -> None:
    """Real against synthetic, per category: the share of the rows in every declared category."""
    from dpsynth_core import viz

    dom = d.domain
    plot(viz.category_counts(d.to_frame(), dom.table(rel.synthetic), dom.categories,
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


def preserves_view(d, rel, w=None, *, key: str, w1_pending: bool = False) -> None:
    """What the release preserves: the library's report (:func:`dpsynth_core.evaluate.report`, a typed
    :class:`~dpsynth_core.evaluate.Report`), an OWNER VIEW computed from the real data without noise, never
    part of a download.

    The differences W1 controls (means, a column's W1, standard deviations, category shares) next to the
    ceiling the release's W1 puts on them (``w``, the proven upper end; none without it), the columns, the
    pairs, the 1- and 2-way marginal errors, and train on synthetic / test on real for a column the user
    picks (computed only then). On a table with categorical columns, also a numeric column within each
    category, real against synthetic. ``w1_pending``: the headline's W1 is still being computed (the interval
    method on a large table): the ceilings come when the page is drawn again with it.
    """
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
        synth = rel.synthetic if dom.is_mixed else d.domain.numeric_rows(rel.synthetic)
        rep = safe(cached_report, d.X, synth, dom, target, w1, what="comparing the release with the data")
        if rep is None:
            return
        if w1_pending:
            st.caption("The ceilings W1 puts on these differences come when the headline's W1 is known: it is being "
                       "computed, and the page draws them then.")
        _marginal_errors(rep.marginal_errors)
        tabs = ["What W1 guarantees", "Columns", "Pairs"] + (["Train on synthetic"] if target else []) \
            + (["Within categories"] if dom.is_mixed else [])
        views = dict(zip(tabs, st.tabs(tabs), strict=True))
        with views["What W1 guarantees"]:
            _guarantees(rep)
        with views["Columns"]:
            table = rep.to_frame("columns")
            cols = [c for c in _COLUMN_COLUMNS if c in table.columns]
            st.dataframe(table.loc[:, cols].rename(columns=_COLUMN_COLUMNS), hide_index=True, width="stretch")
        with views["Pairs"]:
            st.dataframe(rep.to_frame("pairs").loc[:, list(_PAIR_COLUMNS)].rename(columns=_PAIR_COLUMNS),
                         hide_index=True, width="stretch")
            st.caption("Pearson's correlation (two numeric columns), Cramér's V (two categorical columns), the "
                       "correlation ratio (a numeric column given a categorical one). W1 puts no ceiling on these.")
        if target:
            with views["Train on synthetic"]:
                st.dataframe(rep.to_frame("downstream"), hide_index=True, width="stretch")
                st.caption(f"Predicting {target!r}: trained on the synthetic rows, on real rows, or a constant guess "
                           "(baseline); every model is scored on real rows held out. Those rows were also in the data "
                           "the mechanism saw, so the synthetic score is optimistic.")
        for note in rep.notes:
            st.caption(note)
        if dom.is_mixed:
            with views["Within categories"]:
                _within_categories(d, rel, key=key)


def _marginal_errors(me) -> None:
    """The 1- and 2-way marginal errors (:class:`~dpsynth_core.evaluate.MarginalErrors`) as four metrics."""
    m1, m2, m3, m4 = st.columns(4)
    m1.metric("1-way error, mean", f"{me.one_way_mean:.3f}",
              help="Total variation between the real and synthetic histogram of a column (its public bins, or "
                   "its declared categories), averaged over the columns: the largest difference of the share "
                   "of any set of cells.")
    m2.metric("1-way error, worst", f"{me.one_way_max:.3f}", help=f"In column {me.one_way_worst!r}.")
    if me.two_way_mean is not None:
        m3.metric("2-way error, mean", f"{me.two_way_mean:.3f}",
                  help="The same on the 2-way table of every pair of columns.")
        m4.metric("2-way error, worst", f"{me.two_way_max:.3f}",
                  help=f"In the pair {' × '.join(me.two_way_worst or ())}.")


def _guarantees(rep) -> None:
    """The differences W1 controls next to their ceilings; without a W1 the report's notes say why."""
    table = rep.to_frame("guarantees").loc[:, list(_GUARANTEE_COLUMNS)].rename(columns=_GUARANTEE_COLUMNS)
    st.dataframe(table, hide_index=True, width="stretch")
    if rep.w1 is not None:
        broken = len(rep.contradictions)
        st.caption(f"Every statistic that is L-Lipschitz differs by at most L × W1 (W1 ≤ {rep.w1:.3g}): "
                   "a column's mean by at most W1 times the column's range, a category's share by at most "
                   "W1. The measured differences stay under their ceilings"
                   + ("." if not broken else f", except {broken}: the W1 does not belong to these two tables."))


def _within_categories(d, rel, *, key: str) -> None:
    """One numeric column within each category of a categorical one, real against synthetic."""
    from dpsynth_core import viz

    dom = d.domain
    c1, c2 = st.columns(2)
    column = c1.selectbox("Numeric column", list(dom.numeric_names), key=f"{key}_pres_num", persist_state="session")
    by = c2.selectbox("Within each category of", list(dom.categories), key=f"{key}_pres_by", persist_state="session")
    j = list(dom.numeric_names).index(column)
    plot(viz.numeric_by_category(d.to_frame(), dom.table(rel.synthetic), column, by, dom.categories[by],
                                 lower=dom.lower[j], upper=dom.upper[j], title=f"{column} within each {by}"),
         f"Does the synthetic data keep how {column} differs between the categories of {by}? Dotted: the real rows "
         f"of each category ({OWNER}) Bars: the synthetic rows. Densities within the category.",
         key=f"{key}_pres_plot")
