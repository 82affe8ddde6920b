"""Marginal tables: every column's 1-way table and every pair's 2-way table with noise, one joint distribution
fitted to them all, rows drawn from it; and what tables of one and two columns keep and lose against PMM's tree."""

import streamlit as st

from dashboard import ui as _ui
from dpsynth_core import viz
from dpsynth_core.marginal_views import keep_and_lose, one_way_view, pair_names, two_way_view
from dpsynth_core.mechanisms.marginals import MarginalsTrace
from dpsynth_core.validation import plural

NAMES = {"laplace": "discrete Laplace noise (pure ε-DP)", "gaussian": "Gaussian noise (zCDP)"}


@st.cache_data(show_spinner=False, max_entries=16, hash_funcs=_ui.BY_DOMAIN)
def _keep_lose(X, synthetic: dict, dom, w1: dict, pair: tuple):
    """The marginal tables against PMM's tree on the same data (owner view: the real rows without noise)."""
    return keep_and_lose(X, synthetic, dom, w1=w1, pair=pair)


def _story(rel, tr) -> str:
    """One sentence on what this release measured, fitted and drew (its public record and trace)."""
    lay, noise = tr.layout, tr.noise
    numeric = [c for c in lay.columns if c.kind == "numeric"]
    bins = (f"{numeric[0].fine} fine bins per numeric column in its 1-way table and {numeric[0].coarse} coarse bins "
            "per numeric axis in the 2-way tables" if numeric else "one bin per category or whole value")
    return (f"{plural(lay.d, 'column')}: {plural(lay.d, '1-way table')} and {plural(len(lay.pairs), '2-way table')} "
            f"({bins}), measured with {NAMES.get(noise.family, noise.family)}, {rel.params['split']:.0%} of the budget "
            f"on the 1-way tables. " + (
                f"One distribution on the coarse joint grid ({lay.joint_cells:,} cells) was fitted to all of them in "
                f"{tr.fit_iterations} steps" if rel.params.get("model") is None else
                f"The joint grid would have {lay.joint_cells:,} cells: a tree of pairs (the strongest dependences of "
                "the noisy tables) was fitted to all of them instead")
            + f" and the {len(rel.synthetic):,} released rows drawn from it; inside a coarse cell, a row's fine bin "
            "follows the noisy 1-way counts.")


def _one_way(rel):
    names = rel.domain.names
    j = st.selectbox("Column", range(len(names)), format_func=lambda i: names[i], key="mg_column",
                     persist_state="session") if len(names) > 1 else 0
    v = one_way_view(rel, min(j, len(names) - 1))
    _ui.plot(viz.one_way_bars({"true (owner view)": v.true, "noisy (private)": v.noisy,
                               "synthetic rows (private)": v.synthetic}, v.labels, column=v.column,
                              title=f"the 1-way table of {v.column}"),
             "Grey, hatched: the true counts (" + _ui.OWNER + ") Orange: the released noisy counts (a count can be "
             "negative). Red: the released rows counted in the same bins. The fit spreads each coarse cell's rows "
             "over its fine bins by the noisy counts, so a spike (a value most rows share) keeps its bin.",
             key="mg_one")


def _two_way(rel):
    pairs = pair_names(rel)
    if not pairs:
        st.info("One column: there is no 2-way table; the release is the column's 1-way table.")
        return
    p = st.selectbox("Pair of columns", range(len(pairs)), format_func=lambda i: " × ".join(pairs[i]), key="mg_pair",
                     persist_state="session") if len(pairs) > 1 else 0
    v = two_way_view(rel, min(p, len(pairs) - 1))
    _ui.plot(viz.pair_tables({"true (owner view)": v.true, "noisy (private)": v.noisy,
                              "fitted joint (private)": v.fitted, "synthetic rows (private)": v.synthetic},
                             v.row_labels, v.col_labels, v.columns, title=f"the 2-way table {' × '.join(v.columns)}"),
             "From left: the true table of the pair (" + _ui.OWNER + ") Then the released noisy table (red cells "
             "are negative), the fitted joint's table of this pair (fitted to every noisy table at once, so it is "
             "smoother than any one of them), and the released rows counted in the same cells.", key="mg_two")


def _against_tree(rel):
    d = _ui.data()
    if d.d < 2:
        st.info("One column: the marginal tables are the column's histogram; load a table of two columns or more.")
        return
    tree = _ui.teaching_release("pmm")
    if tree is None:
        return
    w_tree, w_own = _ui.w1_of(tree.synthetic), _ui.w1_of(rel.synthetic)  # one method for both (the headline's may differ)
    names = list(d.domain.names)
    numeric = [n for n in names if n not in d.domain.categories]
    c1, c2 = st.columns(2)
    first = c1.selectbox("Pair: first column", names, index=names.index(numeric[0]) if numeric else 0,
                         key="mg_kl_a", persist_state="session")
    rest = [n for n in names if n != first]
    other = [n for n in rest if n in numeric]  # a second numeric column by default: its correlation tells most
    second = c2.selectbox("second column", rest, index=rest.index(other[0]) if other else 0, key="mg_kl_b",
                          persist_state="session")
    labels = {"marginals": "marginal tables", "pmm": "PMM's tree"}
    kl = _ui.safe(_keep_lose, d.X, {"marginals": rel.synthetic, "pmm": tree.synthetic}, d.domain,
                  {"marginals": None if w_own is None else w_own.value,
                   "pmm": None if w_tree is None else w_tree.value}, (first, second), what="comparing with PMM")
    if kl is None:
        return
    rows = kl.table.set_index("release")
    measures = {labels[r]: {"W1": rows.at[r, "w1"], "1-way error": rows.at[r, "one_way"],
                            "2-way error": rows.at[r, "two_way"], "3-way error": rows.at[r, "three_way"]}
                for r in rows.index}
    _ui.plot(viz.keep_lose_bars(measures, title=f"the same data, ε = {rel.epsilon:g}: marginal tables against PMM"),
             "W1 to the data (within the page's time budget: exact, or the upper end of an interval proven to hold it, "
             "so it can sit a little above the headline's exact value), and the mean total-variation error of the 1-way, 2-way and 3-way tables (20 bins per "
             "numeric column, 10 per numeric axis of a pair, 4 of a triple; categories as declared). "
             + _ui.OWNER, key="mg_kl")
    _association_sentence(kl, rows, labels)
    st.markdown("**What the tables keep and lose.** Every record is counted in every table, in cells of many "
                "records, so the 1-way and 2-way errors are low where PMM's full-dimensional cells hold about one "
                "record each. What no table of one or two columns sees is how three or more columns go together "
                "beyond what the pairs imply: the fit fills that in with the smoothest joint that agrees with the "
                "tables (the 3-way error), and inside a coarse cell of a pair the fine detail comes from the 1-way "
                "tables alone. PMM's tree measures the whole space, coarsely, at every depth.")


def _association_sentence(kl, rows, labels) -> None:
    kind = {"pearson": "correlation", "cramers_v": "Cramér's V",
            "correlation_ratio": "correlation ratio η"}.get(kl.association_kind, kl.association_kind)
    real = "—" if kl.real_association is None else f"{kl.real_association:.3f}"
    st.caption(f"The {kind} of {kl.pair[0]} and {kl.pair[1]}: {real} in the real data (" + _ui.OWNER + ") "
               + ", ".join(f"{rows.at[r, 'association']:.3f} in the release of the {labels[r]}" for r in rows.index)
               + f". The 3-way error is the mean over {plural(kl.triples, 'triple')} of columns"
               + (" (none: fewer than three columns, where the 2-way table is the whole joint)." if not kl.triples
                  else "."))


spec, params = _ui.mechanism_header("marginals")
res = _ui.release_section("marginals", params, title="marginals")
if res is not None:
    rel, _ = res
    tr = MarginalsTrace.of(rel)
    st.caption(_story(rel, tr))
    with st.expander("The mathematics", icon=":material/functions:"):
        st.latex(r"\tilde y_t = y_t(D) + \eta_t,\qquad \hat p = \arg\min_{p\in\Delta}\ \sum_t\sum_c "
                 r"\frac{\big(N\,(M_t p)_c - \tilde y_{t,c}\big)^2}{v_{t,c}}")
        st.markdown("Every table t is counted once over the rows and gets noise η_t (one record moves one cell of "
                    "every table, so a group of T tables has sensitivity T). The fit is the distribution p on the "
                    "coarse joint grid whose tables M_t p are closest to all the noisy ones, each cell weighted by its "
                    "noise variance v; it is found by mirror descent from the uniform distribution. Here the release "
                    "is pure ε-DP (discrete Laplace noise): with a δ, in the library or on the command line, Gaussian "
                    "noise composed exactly in zCDP is used where it is smaller (" + _ui.doc_link("marginals") + ").")
    st.markdown("**One family with Certified marginals.** Both release noisy low-order marginals, fit a distribution "
                "to them and publish a certificate of [DLS+24]'s shape. *Certified marginals* is the paper's "
                "algorithm as printed (one order, one grid, Haar noise, n public) and keeps teaching its certificate; "
                "the marginal tables are built for the release (fine 1-way and coarse 2-way tables, one fitted joint, "
                "both relations) and are what `auto` picks for a table of three columns or more, or with categories "
                "(" + _ui.doc_link("marginals") + ", \"One family with sparse_marginals\").")
    _ui.look_closer({"The 1-way tables": lambda: _one_way(rel), "The 2-way tables and the fit": lambda: _two_way(rel),
                     "Against PMM's tree": lambda: _against_tree(rel)}, key="mg_view")
_ui.lesson_nav("marginals")
