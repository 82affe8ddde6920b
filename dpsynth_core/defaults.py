"""Default rules for the mechanisms' free parameters, chosen by a study (the mechanisms' defaults).

Every function here is pure: it maps PUBLIC quantities only -- the public or noisy dataset size n,
the budget ε the step spends and the dimension d -- to a parameter value. None of them looks at the
data. Each docstring states the rule, the study behind it (``benchmarks/defaults_study.py``, results
in ``benchmarks/results/defaults_study.json`` under the key named there) and where the paper's own
choice differs and why. ``docs/defaults.md`` shows the evidence.

The mechanisms call these functions for every parameter left to its default (issue 27): the flat
histogram's ``bins``, PSMM's ``cells``, the Haar walk's ``grid`` (``grid_rule="study"``), PMM's ``depth``
and low_dim's plan (``plan="study"``), each at the public or noisy n the mechanism already obtains. The
study itself passes each rule's value explicitly (``run("flat_histogram", X, dom, epsilon=...,
bins=flat_histogram_bins(n, eps, d))``) so that it measures the rule against the best value in
hindsight and against the previous default.

Mixed tables (declared categories): the rules take d = the number of numeric columns and n = the mean
size of a combination of categories, n / C (:func:`per_combination_cells`), as the previous defaults did.

Notation: n the public or noisy size, ε the budget of the step (for a histogram: the budget of the
cell counts divided by the counts' sensitivity, i.e. ε under add/remove and ε/2 under replace).

The size that drives the grids of the histograms with integer noise is :func:`effective_size`,
:math:`n\\sinh\\varepsilon`, not εn: the discrete Laplace noise of scale 1/ε on a count has mean
absolute value :math:`E|Z| = 2e^{-\\varepsilon}/(1-e^{-2\\varepsilon}) = 1/\\sinh\\varepsilon`, about 1/ε for
small ε but :math:`2e^{-\\varepsilon}` for large ε, where most cells receive no noise at all and a fine
grid costs nothing. :math:`n/E|Z|` is the number of records per unit of expected noise.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from .domain import Domain
from .theory import AUTO_SHIFT, default_depth
from .validation import check_float, check_int

__all__ = [
    "effective_size",
    "flat_histogram_bins",
    "psmm_cells",
    "haar_walk_grid",
    "pmm_depth",
    "low_dim_plan",
    "low_dim_box",
    "LowDimPlan",
    "FLAT_BINS_SCALE",
    "PSMM_CELLS_SCALE",
    "HAAR_GRID_SCALE",
    "PMM_DEPTH_SHIFT",
    "LOW_DIM_SPLIT",
    "LOW_DIM_FULL_MAX_D",
    "LOW_DIM_TARGET_DIM",
    "LOW_DIM_PROJECT_MIN_EPS_N",
    "MAX_GRID_CELLS",
    "MAX_PSMM_CELLS",
    "per_combination_cells",
    "marginals_fine",
    "marginals_coarse",
    "marginals_align",
    "marginals_split",
    "marginals_noise",
    "MARGINALS_FINE",
    "MARGINALS_COARSE",
    "MARGINALS_SPLIT",
    "MARGINALS_ITERATIONS",
    "MARGINALS_MAX_JOINT",
    "MARGINALS_DENSE_CELLS",
    "MARGINALS_MAX_COARSE",
    "AUTO",
    "AutoChoice",
    "auto_mechanism",
]

#: Most cells a rule of this module proposes for a flat grid (flat histogram, Haar walk): 2^22, the
#: mechanisms' own limit.
MAX_GRID_CELLS = 2**22
#: Most cells the PSMM rule proposes: 2^15, the cap of PSMM's default grid (the exact bounded-
#: Lipschitz projection stays interactive).
MAX_PSMM_CELLS = 2**15

# The constants below are fitted by benchmarks/defaults_study.py ("fit" in
# benchmarks/results/defaults_study.json: the per-d minimiser of the geometric-mean regret, rounded and
# smoothed across d); a d above a table's largest key uses that key's value.
#: c_d of :func:`flat_histogram_bins`: k = round(c_d (n sinh ε)^{1/(d+1)}).
FLAT_BINS_SCALE: dict[int, float] = {1: 1.75, 2: 1.15, 3: 1.05}
#: c_d of :func:`psmm_cells`: k = round(c_d (n sinh ε)^{1/(d+1)}).
PSMM_CELLS_SCALE: dict[int, float] = {1: 2.0, 2: 1.55, 3: 1.45, 4: 1.2, 5: 1.1}
#: c_d of :func:`haar_walk_grid`: k = c_d (εn)^{1/(d+1)} (a power of two on the line).
HAAR_GRID_SCALE: dict[int, float] = {1: 1.65, 2: 1.2, 3: 1.3}
#: s_d of :func:`pmm_depth`: r = round(log2(εn)) - s_d for d >= 2 (negative: deeper than Corollary 12).
PMM_DEPTH_SHIFT: dict[int, int] = AUTO_SHIFT["least_squares"]  # declared once, in dpsynth_core.theory
#: Budget split (covariance, mean, subroutine) of low_dim under :func:`low_dim_plan`.
LOW_DIM_SPLIT: tuple[float, float, float] = (1 / 3, 1 / 3, 1 / 3)
#: Up to this dimension :func:`low_dim_plan` hands over to PSMM in full dimension (PSMM's own limit).
LOW_DIM_FULL_MAX_D = 6
#: d' of :func:`low_dim_plan` when it projects.
LOW_DIM_TARGET_DIM = 2
#: Below this εn (and above LOW_DIM_FULL_MAX_D) :func:`low_dim_plan` hands over to PMM in full dimension.
LOW_DIM_PROJECT_MIN_EPS_N = 250.0
#: From this εn per dimension on, the projection's subroutine works in the projected cube (``box="projected_cube"``)
#: instead of the paper's box [-R, R]^{d'} (issue 37; docs/defaults.md, "low_dim").
LOW_DIM_PROJECTED_BOX_MIN_EPS_N_PER_D = 100.0


def effective_size(n: float, epsilon: float) -> float:
    """:math:`n\\sinh\\varepsilon = n / E|Z|`, Z the discrete Laplace noise of scale 1/ε on a count
    (:math:`E|Z| = 2e^{-\\varepsilon}/(1-e^{-2\\varepsilon})`); ε is capped at 50 (beyond, no cell of
    any grid this module proposes receives noise with appreciable probability)."""
    return float(n) * math.sinh(min(float(epsilon), 50.0))


def _check(n: Any, epsilon: Any, d: Any, owner: str) -> tuple[int, float, int]:
    n = check_int(n, "n", owner, low=1)
    eps = check_float(epsilon, "epsilon", owner, low=0.0, low_open=True)
    d = check_int(d, "d", owner, low=1)
    return n, eps, d


def _table(table: dict, d: int):
    return table[min(max(d, min(table)), max(table))]


def _per_axis(k_real: float, d: int, cap: int) -> int:
    """k = round(k_real), at least 1, lowered until k^d <= cap."""
    if not math.isfinite(k_real):
        raise ValueError(f"_per_axis: k_real must be finite, got {k_real!r}")
    k = max(1, int(round(k_real)))
    k_max = max(1, int(math.floor(cap ** (1.0 / d))))  # the largest k with k^d <= cap, up to rounding
    while (k_max + 1) ** d <= cap:
        k_max += 1
    while k_max > 1 and k_max**d > cap:
        k_max -= 1
    return min(k, k_max)


def flat_histogram_bins(n: int, epsilon: float, d: int) -> int:
    """Cells per axis of the flat Laplace histogram: :math:`k = \\mathrm{round}(c_d\\,(n\\sinh\\varepsilon)^{1/(d+1)})`.

    Why this shape: the histogram's W1 error is the cell size (about 1/k) plus the transported noise,
    about :math:`k^d E|Z|/n` times a distance of order one (each of the k^d cells carries discrete
    Laplace noise of mean absolute value :math:`E|Z| = 1/\\sinh\\varepsilon` on its count of n, and
    clipping at zero turns the noise of the empty cells into mass); balancing the two gives
    :math:`k \\propto (n/E|Z|)^{1/(d+1)} =` (:func:`effective_size`)^{1/(d+1)}. The constants
    :data:`FLAT_BINS_SCALE` are fitted by the defaults study (``benchmarks/defaults_study.py``;
    ``benchmarks/results/defaults_study.json``, key ``"fit" -> "flat_histogram"``, family
    ``"n*sinh(eps)^(1/(d+1))"``; the measured rule against the best grid in hindsight: key
    ``"rules" -> "flat_histogram"``). The previous default, :math:`k^d \\approx \\varepsilon n`, is the grid of
    [HVZ23, Corollary 8] for PSMM; the Laplace histogram of [DR14] fixes no grid. For a histogram that
    only clips and renormalises, k^d ≈ εn is far too fine at moderate ε.

    Parameters
    ----------
    n : int >= 1
        The public or noisy dataset size.
    epsilon : float > 0
        The budget of the cell counts divided by their sensitivity (ε under add/remove, ε/2 under replace).
    d : int >= 1

    Returns
    -------
    int >= 1, with k^d <= :data:`MAX_GRID_CELLS` and k <= 4096 (the parameter's limit).
    """
    n, eps, d = _check(n, epsilon, d, "flat_histogram_bins")
    x = max(effective_size(n, eps), 1.0)
    return min(4096, _per_axis(_table(FLAT_BINS_SCALE, d) * x ** (1.0 / (d + 1)), d, MAX_GRID_CELLS))


def psmm_cells(n: int, epsilon: float, d: int) -> int:
    """Cells per axis of PSMM's grid: :math:`k = \\mathrm{round}(c_d\\,(n\\sinh\\varepsilon)^{1/(d+1)})`, at
    most :data:`MAX_PSMM_CELLS` cells.

    The same shape as :func:`flat_histogram_bins` (PSMM's noisy counts carry the same discrete Laplace
    noise); the constants :data:`PSMM_CELLS_SCALE` are fitted by the defaults study (key
    ``"fit" -> "psmm"``; measured: ``"rules" -> "psmm"``). [HVZ23, Corollary 8] takes
    :math:`k^d \\approx \\varepsilon n` (the previous default), which balances its bound's two terms up to
    logarithms; the measured optimum is coarser at small ε and finer at large ε, where the integer
    noise vanishes.

    Parameters and returns as :func:`flat_histogram_bins`.
    """
    n, eps, d = _check(n, epsilon, d, "psmm_cells")
    x = max(effective_size(n, eps), 1.0)
    return min(4096, _per_axis(_table(PSMM_CELLS_SCALE, d) * x ** (1.0 / (d + 1)), d, MAX_PSMM_CELLS))


def haar_walk_grid(n: int, epsilon: float, d: int) -> int:
    """The Haar walk's resolution: :math:`k = c_d\\,(\\varepsilon n)^{1/(d+1)}`, cells on the line
    (d = 1, rounded to a power of two) or cells per axis (d >= 2, rounded, at least 2).

    Non-decreasing in εn and growing without bound in every d. The walk's noise is Laplace noise on the
    Haar coefficients of the path counts, with scales growing with the level, so it does not vanish at
    large ε as a histogram's integer noise does: the size is εn, not :func:`effective_size`. The
    constants :data:`HAAR_GRID_SCALE` are fitted by the defaults study (key ``"fit" -> "haar_walk"``,
    family ``"eps*n^(1/(d+1))"``; measured: ``"rules" -> "haar_walk"``). [BSV22] takes about εn cells
    (``grid_rule="paper"``), the order that its bound needs; the previous default (``grid_rule="log"``), about
    :math:`\\varepsilon n/\\log_2(\\varepsilon n)^{2}` cells on the line and
    :math:`\\varepsilon n/\\log_2(\\varepsilon n)^{3/2}` in d >= 2, is 4-8 times too coarse on the line
    at the study's sizes and stays at 2 cells per axis in d = 4 for tables of a few hundred rows.

    Parameters and returns as :func:`flat_histogram_bins` (ε: the walk's budget divided by the counts'
    sensitivity, as for the histograms: ε under add/remove, ε/2 under replace, where the coefficients'
    Laplace scale doubles; the study ran under add/remove).
    """
    n, eps, d = _check(n, epsilon, d, "haar_walk_grid")
    x = max(eps * n, 1.0)
    k = _table(HAAR_GRID_SCALE, d) * x ** (1.0 / (d + 1))
    if d == 1:
        return 1 << max(0, min(int(round(math.log2(max(k, 1.0)))), 22))
    return max(2, _per_axis(k, d, MAX_GRID_CELLS))


def pmm_depth(n: int, epsilon: float, d: int) -> int:
    """PMM's depth (least-squares consistency): :math:`r = \\mathrm{round}(\\log_2 \\varepsilon n) - s_d`
    for d >= 2, at most 16; the depth minimising [HVZ23, Theorem 11] for d = 1.

    The shifts :data:`PMM_DEPTH_SHIFT` come from the depth study (``benchmarks/depth_study.py``,
    ``benchmarks/results/pmm_depth_study.json``, d = 1..3, three data shapes) and, in d = 4..6, from the
    defaults study's tables with depths up to three levels deeper than Corollary 12's (key ``"fit" ->
    "pmm"``): s = 0 in d = 4, s = -1 (one level deeper than Corollary 12) in d = 5 and 6, where the
    previous s = 0 had a geometric-mean regret of 1.12 and 1.05 (max 1.43) against 1.08 and 1.02;
    beyond d = 6 nothing was measured and s = 0 stays. The rule against the best depth: ``"rules" -> "pmm"``.
    [HVZ23, Corollary 12] takes :math:`r = \\log_2(\\varepsilon n)` (the shift 0 everywhere):
    rate-optimal, but in d = 2 one level too deep at moderate n, where the leaves of that tree hold
    fewer records than their noise. In d = 1 the 1-D mixture of the defaults study would prefer
    :math:`\\mathrm{round}(\\log_2 \\varepsilon n) - 3` (regret 1.15 against 1.26); one table is too
    little to overturn the depth study's choice, so d = 1 is left as it is.

    Parameters and returns as :func:`flat_histogram_bins` (ε: the tree's budget; the depth, an int in
    [0, 16]).
    """
    n, eps, d = _check(n, epsilon, d, "pmm_depth")
    return int(default_depth(n, eps, d))


@dataclass(frozen=True)
class LowDimPlan:
    """What :func:`low_dim_plan` proposes.

    Attributes
    ----------
    project : bool
        False: do not project; release with ``mechanism`` in full dimension with the whole ε.
    mechanism : str
        "psmm" or "pmm" (no projection) or "low_dim".
    cells : int or None
        PSMM's cells per axis when the plan is PSMM in full dimension (:func:`psmm_cells`).
    target_dim : int or None
        d' when projecting.
    subroutine : str or None
        "pmm" or "psmm" when projecting.
    box : str or None
        low_dim's ``box`` when projecting.
    split : tuple of three floats or None
        Shares of ε for (covariance, mean, subroutine) when projecting, summing to 1 (low_dim's
        ``budget_split``); see docs/defaults.md, "low_dim".
    """

    project: bool
    mechanism: str
    cells: int | None = None
    target_dim: int | None = None
    subroutine: str | None = None
    box: str | None = None
    split: tuple[float, float, float] | None = None


def low_dim_plan(n: int, epsilon: float, d: int) -> LowDimPlan:
    """How to release synthetic data that the user asked low_dim for, for (n, ε, d).

    * d <= :data:`LOW_DIM_FULL_MAX_D` (6, PSMM's limit): no projection; PSMM in full dimension with the
      whole ε under the same replace relation as low_dim, with :func:`psmm_cells` at ε/2 (a count's
      sensitivity is 2 under replace). In the study the best projection (over d', subroutine, box and
      budget split) was behind PSMM in full dimension on the tables with d <= 4 (key ``"low_dim"``).
    * d > 6 and εn < :data:`LOW_DIM_PROJECT_MIN_EPS_N`: no projection; PMM in full dimension (its own
      depth rule). On the digits (about 126 images per class, d = 64) PMM in full dimension was ahead at
      ε = 1, as [HSVZ23, Section 5] also observes for ε <= 1.
    * otherwise project ([HSVZ23, Algorithm 1]) on d' = :data:`LOW_DIM_TARGET_DIM` dimensions with PSMM
      in the subspace, the split :data:`LOW_DIM_SPLIT` (thirds) and the box :func:`low_dim_box`: on the
      digits at ε = 4 and 10 this is ahead of PMM in full dimension, and a smaller share for the covariance
      and the mean is far worse (key ``"digits"``).

    Returns
    -------
    LowDimPlan
    """
    n, eps, d = _check(n, epsilon, d, "low_dim_plan")
    if d <= LOW_DIM_FULL_MAX_D:
        # low_dim's relation is replace: a count moves by up to 2, so the counts' budget per unit of
        # sensitivity is ε/2
        return LowDimPlan(project=False, mechanism="psmm", cells=psmm_cells(n, eps / 2.0, d))
    if eps * n < LOW_DIM_PROJECT_MIN_EPS_N:
        return LowDimPlan(project=False, mechanism="pmm")
    return LowDimPlan(project=True, mechanism="low_dim", target_dim=min(LOW_DIM_TARGET_DIM, d - 1),
                      subroutine="psmm", box=low_dim_box(n, eps, d), split=LOW_DIM_SPLIT)


def low_dim_box(n: int, epsilon: float, d: int) -> str:
    """The public box of low_dim's subroutine when it projects (PSMM in the subspace): ``"projected_cube"``
    (the exact range of the projected unit cube) once εn/d >= :data:`LOW_DIM_PROJECTED_BOX_MIN_EPS_N_PER_D`,
    else the paper's ``"paper"`` box [-R, R]^{d'}, R = √d + ||mean||.

    PSMM spreads its grid evenly over the box, so a box several times wider than the projected data wastes
    most cells (PMM's tree, the paper's subroutine, adapts to where the data are and minded the wide box less).
    On near-planar data in R^8 (n = 8,000, ε = 2, d' = 2; benchmarks/bench_low_dim_plane8.py) the paper's box
    put low_dim at 0.44 of PMM's W1 in full dimension where the projected cube puts it at 0.32 (the paper's
    plan, PMM in the paper's box: 0.36). The study's digits (about 126 images per class, d = 64: εn/d = 8 at
    ε = 4 and 20 at ε = 10) keep the paper's box, with which they were measured (docs/defaults.md). The
    threshold 100 lies between those settings and is not fitted more finely than that."""
    n, eps, d = _check(n, epsilon, d, "low_dim_box")
    return "projected_cube" if eps * n / d >= LOW_DIM_PROJECTED_BOX_MIN_EPS_N_PER_D else "paper"


def per_combination_cells(rule: Any, n: float, epsilon: float, d: int, combinations: int, cap: int) -> int:
    """A grid rule on a mixed domain: ``rule(n / C, ε, d)`` at the mean size of a combination of the
    declared categories (C = ``combinations``; n public or noisy), lowered until C k^d <= ``cap``.
    With C = 1 this is ``rule(n, ε, d)`` lowered to ``cap`` cells. Public quantities only."""
    combos = check_int(combinations, "combinations", "per_combination_cells", low=1)
    k = int(rule(max(int(round(float(n) / combos)), 1), epsilon, d))
    while k > 1 and combos * k**d > cap:
        k -= 1
    return k


# ------------------------------------------------------------------------------------- marginals
# The marginal tables' rules (dpsynth_core.mechanisms.marginals; docs/marginals.md, "Defaults"), fitted by
# benchmarks/marginals_study.py on tables that are not the acceptance tables of issue 34 ("fit" in
# benchmarks/results/marginals_study.json: the (c, a) minimising the geometric-mean interpolated regret).
#: (c, a) of :func:`marginals_fine`: F = round(c (n / s_1)^a), s_1 the noise s.d. of one 1-way count.
MARGINALS_FINE: tuple[float, float] = (4.35, 0.25)
#: (c, a) of :func:`marginals_coarse`: C = round(c (n / s_2)^a), s_2 the noise s.d. of one 2-way count.
MARGINALS_COARSE: tuple[float, float] = (2.42, 0.25)
#: Share of the budget of the 1-way tables, by the number of columns (:func:`marginals_split`; the nearest
#: smaller key): the value with the lowest geometric-mean regret per d in the study.
MARGINALS_SPLIT: dict[int, float] = {2: 0.7, 3: 0.7, 4: 0.3, 6: 0.2}
#: Mirror-descent steps of the fit (a regulariser: 10 steps had a geometric-mean regret of 1.12, 25 of 1.05,
#: 50 of 1.038 and 100 of 1.036 in the study; 50 keeps a release fast).
MARGINALS_ITERATIONS = 50
#: The 1-way share at which the bin rules were fitted: the mechanism gives them the noise s.d. of a count at
#: this share, whatever share it then uses (the study's runs with all the rules: geometric-mean regret 1.049
#: this way, 1.059 with the s.d. at the share in use).
MARGINALS_RULE_SPLIT = 0.5
#: Most cells the coarse rule lets the dense joint grid have (fewer coarse bins above, down to 2): at 2^16 a
#: release of 8 columns stays under a second.
MARGINALS_MAX_JOINT = 2**16
#: Most coarse bins the rule gives a numeric axis: the certificate solves transport problems on the C² cells of
#: each 2-way table (time about C⁴); an uncapped C of 22 at n = 10^5 in d = 3 took two seconds a release.
MARGINALS_MAX_COARSE = 16
#: Largest coarse joint grid the dense fit builds at all (cells; ``model="dense"``): above it that model is refused,
#: naming this limit. ``model="auto"`` fits a tree of 2-way tables beyond MARGINALS_MAX_JOINT (docs/marginals.md).
MARGINALS_DENSE_CELLS = 2**20
def marginals_fine(n: float, noise_sd: float) -> int:
    """Fine bins of a numeric column's 1-way table: :math:`F = \\mathrm{round}(c\\,(n/s_1)^a)` in [4, 256].

    n/s_1 is the number of records per unit of noise on one count (s_1 the noise standard deviation of a
    1-way count: it carries ε, δ, the noise family, the budget split, d and the relation). (c, a) =
    :data:`MARGINALS_FINE`, fitted by the marginals study (``"fit" -> "fine"``): geometric-mean regret 1.035
    against the best F in hindsight over 90 settings, against 1.053 for a fixed F = 16 and 1.043 for the
    best fixed F (12)."""
    n = check_float(n, "n", "marginals_fine", low=1.0)
    sd = check_float(noise_sd, "noise_sd", "marginals_fine", low=0.0, low_open=True)
    c, a = MARGINALS_FINE
    return int(min(256, max(4, round(c * (n / sd) ** a))))


def marginals_coarse(n: float, noise_sd: float, fine: int, numeric_axes: int, other_cells: int = 1,
                     cap: int = MARGINALS_MAX_JOINT) -> int:
    """Coarse bins of a numeric axis of the 2-way tables: :math:`C = \\mathrm{round}(c\\,(n/s_2)^a)`, at least 2,
    at most ``fine`` and :data:`MARGINALS_MAX_COARSE`, lowered until C^k times ``other_cells`` (the categorical
    columns' categories) is at most ``cap`` (the dense joint grid; k the number of numeric axes). (c, a) =
    :data:`MARGINALS_COARSE`, fitted by the marginals study (``"fit" -> "coarse"``): geometric-mean regret 1.063
    against the best C in hindsight over 90 settings, against 1.20 for a fixed C = 4."""
    n = check_float(n, "n", "marginals_coarse", low=1.0)
    sd = check_float(noise_sd, "noise_sd", "marginals_coarse", low=0.0, low_open=True)
    k = check_int(numeric_axes, "numeric_axes", "marginals_coarse", low=0)
    c, a = MARGINALS_COARSE
    out = int(min(int(fine), MARGINALS_MAX_COARSE, max(2, round(c * (n / sd) ** a))))
    while out > 2 and k > 0 and out**k * other_cells > cap:
        out -= 1
    return out


def marginals_align(fine: int, coarse: int) -> int:
    """The fine bins of a default rule made a multiple of the coarse bins: :math:`C\\,\\max(2, \\lfloor F/C +
    1/2\\rfloor)` for F > C (C when F <= C), so that every coarse bin is the union of the same number of fine bins
    and, where the rules gave a fine level, of at least two.

    The floor of two matters where the coarse rule reaches its cap (16) below F: F = 23 rounded to 16 would drop
    the fine level altogether. On the dashboard's default table (two columns, 5,000 rows, ε = 1) 23/16 bins gave
    W1 0.0279 and 32/16 0.0235 (eight seeds), 16/16 0.0367 (five). At most 256, the fine rule's cap.

    With F = 9 and C = 4 the coarse bins held 3, 2, 2 and 2 fine bins (unequal widths, 1/3 and 2/9 of the
    range). On the study's tables (never the acceptance tables), paired against the unaligned pair where the
    rules left unequal coarse bins, the aligned W1 was 0.984x in geometric mean over 28 settings (15 better, 13
    worse): about neutral there (docs/marginals.md, "Defaults"; ``benchmarks/marginals_study.py align``). On
    breast cancer in d = 5 at ε = 0.3 (an acceptance table, not used to fit) 9/4 bins gave 1.23x the W1 of 8/4.
    Public inputs only: the two numbers of bins."""
    f = check_int(fine, "fine", "marginals_align", low=1)
    c = check_int(coarse, "coarse", "marginals_align", low=1)
    return c if f <= c else min(c * max(2, (2 * f + c) // (2 * c)), c * max(2, 256 // c))


def marginals_split(d: int) -> float:
    """Share of the budget (of ε, or of ρ) spent on the d 1-way tables, by d (:data:`MARGINALS_SPLIT`,
    the nearest smaller key; fitted by the marginals study)."""
    d = check_int(d, "d", "marginals_split", low=1)
    keys = [k for k in sorted(MARGINALS_SPLIT) if k <= d]
    return MARGINALS_SPLIT[keys[-1] if keys else min(MARGINALS_SPLIT)]


def marginals_noise(delta: float, laplace_variances: tuple[float, float], gaussian_variances: tuple[float, float],
                    cells: tuple[int, int]) -> str:
    """The noise family: ``"laplace"`` without δ (pure ε-DP); with δ the family whose noise has the smaller total
    variance over all the counts (``cells``: the 1-way and 2-way tables' cells), at the same budget split.

    Public inputs only: δ given or not, and the variances that (ε, δ, the split, d and the relation) give."""
    if not delta:
        return "laplace"
    lap = sum(v * c for v, c in zip(laplace_variances, cells, strict=True) if c)
    gau = sum(v * c for v, c in zip(gaussian_variances, cells, strict=True) if c)
    return "gaussian" if gau < lap else "laplace"


# ------------------------------------------------------------------------------------------- auto
#: The name that asks for the mechanism of :func:`auto_mechanism` (``run("auto", ...)``, ``dpsynth synth -m auto``).
AUTO = "auto"


@dataclass(frozen=True)
class AutoChoice:
    """What :func:`auto_mechanism` picked: the mechanism's name, why (one sentence), and the δ it gets (None
    for a pure ε-DP mechanism: the release is then pure, a stronger guarantee than asked for)."""

    mechanism: str
    reason: str
    delta: float | None
    asked_delta: float | None = None

    def to_dict(self) -> dict:
        return {"chosen": self.mechanism, "reason": self.reason, "rule": "dpsynth_core.defaults.auto_mechanism"}


def auto_mechanism(domain: Domain, *, epsilon: float, delta: float | None = None) -> AutoChoice:
    """The mechanism the studies found best for a table's public shape (docs/marginals.md, "auto").

    * numeric columns only, d <= 2: ``psmm`` (the lowest W1 of the defaults study in d <= 2 at n of a few hundred
      to 20,000 and ε = 0.1-10, and of the peers benchmark on diabetes:2; the marginal tables measure the same
      cells twice there);
    * otherwise (d >= 3, or any categorical column): ``marginals`` (ahead of AIM and MST on every table of the
      peers and mixed benchmarks), with δ when one is given;
    * wide tables too: where the coarse joint grid would exceed :data:`MARGINALS_MAX_JOINT` even at 2 bins per
      numeric axis, the marginal tables fit a tree of 2-way tables instead of the grid (``model="auto"``); the
      reason says so. (Before the tree existed such tables went to PMM, whose full-dimensional cells hold about
      one record each at these widths.)

    Public inputs only: the domain's column types and category counts, ε, δ given or not. ``epsilon`` is checked
    here (the chosen mechanism checks it again)."""
    check_float(epsilon, "epsilon", "auto_mechanism", low=0.0, low_open=True)
    if not domain.is_mixed and domain.k <= 2:
        return AutoChoice("psmm", f"{domain.k} numeric column{'s' if domain.k > 1 else ''}: PSMM's full-dimensional "
                          "grid had the lowest W1 in d <= 2 in the defaults study", None, delta)
    joint = 2**domain.k * math.prod(domain.category_sizes)
    fit = (f"; the joint grid would have {joint:,} cells even at 2 bins per numeric axis (above "
           f"{MARGINALS_MAX_JOINT:,}), so the fit is a tree of 2-way tables" if joint > MARGINALS_MAX_JOINT else "")
    kinds = "numeric" if not domain.is_mixed else "numeric and categorical"
    return AutoChoice("marginals", f"{domain.d} {kinds} columns: the marginal tables were ahead of AIM and MST on every "
                      f"such table of the peers benchmarks (W1 and 1-/2-way errors){fit}", delta, delta)
