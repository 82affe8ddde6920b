"""Partition tree (PMM): noisy counts on a binary partition, made consistent; the tree, one level, the noise."""

import statistics

import streamlit as st

from dashboard import data as sources
from dashboard import ui as _ui
from dpsynth_core import viz
from dpsynth_core.mechanisms.pmm import PMMOwner, PMMTrace


def _split_story(axes, dom) -> str:
    """Which column each level splits, in runs: "level 1 splits sex; levels 2–3 region; ..."."""
    names = list(dom.numeric_names) + list(dom.categories)
    runs = []
    for j, a in enumerate(axes, start=1):
        col = names[int(a)]
        if runs and runs[-1][2] == col:
            runs[-1][1] = j
        else:
            runs.append([j, j, col])
    cat_levels = [r for r in runs if r[2] in dom.categories]
    first_numeric = next((r[0] for r in runs if r[2] not in dom.categories), None)
    parts = [f"level {a} splits {c}" if a == b else f"levels {a}–{b} split {c}" for a, b, c in cat_levels]
    text = "; ".join(parts)
    if first_numeric is not None:
        text += (f"; from level {first_numeric} on, the numeric columns ({', '.join(dom.numeric_names)}) are halved "
                 "in turn")
    return text[:1].upper() + text[1:] + "."

def _use_clinic() -> None:
    _ui.set_data(sources.mixed("clinic"), sources.Source("mixed", "clinic"))


spec, params = _ui.mechanism_header("pmm")
if not _ui.data().domain.is_mixed:
    st.button("Use the clinic table (numbers and categories)", key="pmm_use_clinic", on_click=_use_clinic,
              icon=":material/table_view:",
              help="Our own data, made private: a patients' table whose categories (sex, region, diabetes) are "
                   "declared with it, as its bounds are.")
res = _ui.release_section("pmm", params, title="pmm")
if res is not None:
    rel, w = res
    tr, true = PMMTrace.of(rel), PMMOwner.of(rel).true_counts
    noisy, clipped, cons = tr.noisy_counts, tr.clipped_counts, tr.consistent_counts
    depth = tr.depth
    d = _ui.data()
    dom = d.domain
    mixed = dom.is_mixed
    split_story = _split_story(tr.split_axes, dom) if mixed else ""
    st.caption(f"The tree has {depth + 1} levels and {2 ** depth:,} leaves ("
               + (f"largest cell diameter {tr.diameters[-1]:.3g}" if mixed else
                  f"cells of side {tr.diameters[-1]:.3g}")
               + f"); every level's counts got integer Laplace noise, then the tree was made consistent by "
               f"{tr.consistency.replace('_', ' ')}." + (f" {split_story}" if mixed else ""))
    with st.expander("The mathematics", icon=":material/functions:"):
        st.markdown("Level $j$ splits every cell in two along axis $j \\bmod d$. Each count gets discrete Laplace "
                    "noise of scale $\\sigma_j$; the scales spend the whole ε and give the deep levels, whose errors "
                    "add up in W1, the larger share. The expected W1 is then at most")
        st.latex(r"\mathbb E\,W_1 \le \frac{\sqrt2}{\varepsilon n}\Big(\sum_{j=0}^{r}\sqrt{\Delta_{j-1}}\Big)^2"
                 r" + \mathrm{diam}_r,\qquad \Delta_j = 2^j\,\mathrm{diam}_j\qquad \text{([HVZ23], Theorem 11)}")
        if mixed:
            st.markdown("On a table with categorical columns a level may also split a column's list of categories in "
                        "two. The theorem holds for any binary partition of a bounded metric space; two different "
                        "categories are at distance 1 (the cube's diameter), so a cell that still mixes categories "
                        "has diameter 1 and the categories are split first, where they shrink the diameters most. "
                        "Privacy is unchanged: each record is in one cell per level.")

    def _tree():
        top = max(1, min(depth, 8))
        c1, c2 = st.columns(2)
        # one key per range: a value kept from a deeper tree (another ε) would be out of this one's range
        level = c1.slider("Show levels 0 … L", 0 if depth == 0 else 1, top, min(top, 5),
                          key=f"pmm_tree_level_{top}", persist_state="session", help="Level L has 2^L cells; the picture shows at most 8 levels.")
        stage = c2.radio("Counts", ["noisy", "consistent", "true (owner view)"], horizontal=True, key="pmm_stage",
                         persist_state="session")
        levels = {"noisy": noisy, "consistent": cons, "true (owner view)": true}[stage]
        _ui.plot(viz.icicle_tree(levels, max_level=level, title=f"{stage} counts, levels 0–{level}"),
                 "Each box is a cell; below it, its two halves. Colour = count (red = a negative noisy count). "
                 + (_ui.OWNER if stage.startswith("true") else "Noisy and consistent counts are private.")
                 + (f" {split_story} The first levels split the categories: their boxes are groups of categories."
                    if mixed else ""), key="pmm_tree")

    def _level_maps():
        level = st.slider("Level j", 0, depth, min(depth, 6), key=f"pmm_level_{depth}",
                          persist_state="session",
                          help="Level j has 2^j cells; the last level is the leaves.") if depth > 0 else 0
        # the numeric part of each cell; on a mixed table cells that differ only in their categories are summed
        lo, hi = tr.level_cells(level, dom)
        names = tuple(dom.numeric_names[:2])
        cols = st.columns(3)
        for col, (label, arr) in zip(cols, (("true (owner view)", true), ("noisy (private)", noisy),
                                            ("consistent (private)", cons)), strict=True):
            with col:  # one colour scale for the three maps: the true counts'
                st.plotly_chart(viz.cell_map(arr[level], lo, hi, title=label, names=names, scale=true[level]),
                                width="stretch", key=f"pmm_map_{label}")
        st.caption(f"Level {level}: {2 ** level} cells (first two axes; other axes summed). Blue = positive, red = "
                   "negative. The left map is " + _ui.OWNER
                   + (" The maps show the numeric columns only: cells that differ only in their categories are "
                      "summed, and the first levels (which split the categories) are one numeric cell." if mixed
                      else ""))

    def _level_counts():
        level = st.slider("Level j", 0, depth, min(depth, 6), key=f"pmm_level_c_{depth}",
                          persist_state="session") \
            if depth > 0 else 0
        series = {"true (owner view)": true[level], "noisy": noisy[level], "clipped at 0": clipped[level],
                  "consistent": cons[level]}
        _ui.plot(viz.level_counts(series, title=f"level {level}: the counts of its cells"),
                 "Noise makes some counts negative; clipping sets them to 0, which inflates the total; consistency "
                 "splits each parent's count between its children so that they add up. True counts: " + _ui.OWNER,
                 key="pmm_counts")

    def _noise():
        _ui.plot(viz.sigma_levels(tr.noise_scales, title="noise scale σ_j per level",
                                  extra={"ε_j spent": tr.level_epsilons}),
                 "Bars: the noise scale of each level; line: the part of ε it spends (they add up to ε). The deep "
                 "levels get the larger share of ε, hence less noise per count.", key="pmm_sigma")

    def _draws():
        k = st.slider("Releases", 2, 6, 4, key="pmm_k", persist_state="session")
        if st.button("Draw again", key="pmm_draw", help="New random seeds for all the releases below."):
            _ui.add_to_count("pmm_offset", k)
        offset = _ui.count("pmm_offset")
        seed = _ui.settings().seed
        draws, w1s = [], []
        for i in range(k):
            r = _ui.teaching_release("pmm", params, seed=seed + 1 + offset + i)
            if r is None:
                break
            # numeric data: the quick (preview) grid; categories have no grid, and the preview's sparse limit
            # (3000 rows in all) is below the clinic table's: the interactive budget's certified bracket
            wi = _ui.w1_of(r.synthetic, fast=not dom.is_mixed)
            draws.append(r.synthetic)
            w1s.append(float("nan") if wi is None else wi.value)
        if draws:
            X_num, num_names = d.numeric_part()
            known = [v for v in w1s if v == v]  # NaN: no W1 (an empty release)
            how = ("the upper ends of certified brackets, at most 1% wide unless the solve ran out of time" if dom.is_mixed else
                   "quick solve, within 1/64")
            spread = (f"W1 over them: mean {statistics.fmean(known):.3g}, spread {statistics.pstdev(known):.2g} "
                      f"({how})." if known else "The numeric columns are drawn.")
            _ui.plot(viz.draws_grid(X_num, [dom.numeric_rows(Y) for Y in draws], w1s, num_names,
                                    lower=dom.lower, upper=dom.upper),
                     f"{len(draws)} independent releases of the same data at the same ε. {spread}", key="pmm_draws")

    _ui.look_closer({"Partition tree": _tree, "Cells of one level": _level_maps, "Counts of one level": _level_counts,
                     "Noise per level": _noise, "Several releases": _draws}, key="pmm_view")
_ui.lesson_nav("pmm")
