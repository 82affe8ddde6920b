"""Plotly figure builders for the dashboard: pure functions, data in, ``go.Figure`` out.

No Streamlit here and no mechanism math: every function draws arrays it is given (a release's
``trace``, a sweep's DataFrame, ...). Coordinates are in the domain's units unless a function says
"unit cube". Large point sets are thinned for drawing only (at most :data:`MAX_POINTS` per panel,
a fixed-seed subset), so the same data give the same picture.

Conventions shared by every figure (a teaching tool: the same meaning looks the same everywhere):

* One colour-blind-safe palette (Okabe–Ito), :data:`COLORS`: real data / true values grey,
  synthetic data vermillion, noisy orange, clipped purple, consistent / projected green,
  superregular noise blue, i.i.d. noise reddish purple, PE variations sky blue. Signed quantities use the
  red–blue scale (blue positive, red negative) with 0 in the middle.
* **Owner view** (computed from the real data without noise, not private): grey, dotted lines,
  faint markers, and a dotted frame around owner-only panels. A series counts as owner view when
  its caller-given name contains "owner", "true", "real", "private data" or "not private";
  its colour comes from the other words of the name ("noisy", "clipped", "consistent",
  "projected", "synthetic", "i.i.d.", "superregular"). Figures take an optional ``note``: a short
  caption under the title (e.g. which layers are owner view).
* Reference curves (caller-given bounds, envelopes, fits) are black or dark brown, each with its
  own dash pattern, and named in the legend with the caller's names: nothing here calls a number
  a bound unless the caller does.
* Legends sit below the plot (they never cover panel titles or data); every log axis carries at
  least three labelled ticks; scatter axes span the public bounds, on one scale only when both
  axes have the same bounds (the axis title says which).

Modules (one topic each; every name below is re-exported here, so ``from dpsynth_core import viz;
viz.<builder>(...)`` is the one way to call them):

=========================  ==================================================================================
:mod:`._common`            the conventions above: palette, layout and axis helpers, thinning, ``empty_figure``
:mod:`.scatter`            data and releases as points: ``scatter_data``, ``scatter_compare``, ``draws_grid``
:mod:`.trees`              PMM's partition tree: ``icicle_tree``, ``cell_map``, ``level_counts``, ``sigma_levels``
:mod:`.grids`              measures on the k^d grid (PSMM, marginal tables): ``signed_grid``, ``grid_measures``
:mod:`.lines`              lines and paths: ``kr_duality``, ``haar_basis``, ``partial_sum_paths``, ``grid_path``,
                           ``line_cdfs``
:mod:`.sparse_marginals`   the certificate: ``certificate_bar``, ``loss_vs_certificate``
:mod:`.marginals`          the marginal tables: ``one_way_bars``, ``pair_tables``, ``keep_lose_bars``
:mod:`.private_evolution`  ``pe_iteration``, ``pe_animation``
:mod:`.low_dim`            ``pca_3d``, ``spectrum``, ``angles_plot``, ``digit_images``
:mod:`.sweeps`             results over runs: ``series_plot``, ``rates_loglog``, ``compare_bars``, ``audit_band``
:mod:`.categories`         categorical columns: ``category_counts`` (real against synthetic), ``numeric_by_category``
:mod:`.first_look`         the first screen's membership question: ``membership_answers``
=========================  ==================================================================================
"""

from __future__ import annotations

from ._common import (
    COLORS,
    FIGURE_POINTS,
    GROUP_COLORS,
    LABEL_COLORS,
    MAX_POINTS,
    REFERENCE_STYLES,
    TERM_COLORS,
    empty_figure,
    is_owner,
    thin,
)
from .categories import MAX_CATEGORY_BARS, MAX_CATEGORY_PANELS, category_counts, numeric_by_category
from .first_look import membership_answers
from .grids import grid_measures, signed_grid
from .lines import grid_path, haar_basis, kr_duality, line_cdfs, partial_sum_paths
from .low_dim import angles_plot, digit_images, pca_3d, spectrum
from .marginals import keep_lose_bars, one_way_bars, pair_tables
from .private_evolution import pe_animation, pe_iteration
from .scatter import draws_grid, scatter_compare, scatter_data
from .sparse_marginals import certificate_bar, loss_vs_certificate
from .sweeps import audit_band, compare_bars, rates_loglog, series_plot
from .trees import MAX_TREE_LEVEL, cell_map, icicle_tree, level_counts, sigma_levels

__all__ = [
    "COLORS",
    "GROUP_COLORS",
    "TERM_COLORS",
    "LABEL_COLORS",
    "REFERENCE_STYLES",
    "MAX_POINTS",
    "FIGURE_POINTS",
    "MAX_TREE_LEVEL",
    "MAX_CATEGORY_BARS",
    "MAX_CATEGORY_PANELS",
    "is_owner",
    "thin",
    "scatter_data",
    "scatter_compare",
    "draws_grid",
    "kr_duality",
    "icicle_tree",
    "cell_map",
    "level_counts",
    "sigma_levels",
    "signed_grid",
    "grid_measures",
    "haar_basis",
    "partial_sum_paths",
    "grid_path",
    "line_cdfs",
    "certificate_bar",
    "loss_vs_certificate",
    "one_way_bars",
    "pair_tables",
    "keep_lose_bars",
    "pe_iteration",
    "series_plot",
    "pca_3d",
    "spectrum",
    "angles_plot",
    "digit_images",
    "rates_loglog",
    "compare_bars",
    "audit_band",
    "pe_animation",
    "category_counts",
    "numeric_by_category",
    "membership_answers",
    "empty_figure",
]
