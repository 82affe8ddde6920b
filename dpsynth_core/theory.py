"""The theory in one place: the papers' W1 bounds and rates, PMM's depth rules, and the
:class:`Theory` record every mechanism declares (whether its bound is proven, its rate's exponent).

The bounds of He, Vershynin, Zhu [HVZ23] are plain functions.

All values are in unit-cube coordinates with the l_inf metric, for :math:`\\Omega = [0,1]^d` with the
cyclic binary partition of :mod:`dpsynth_core.partition` (PMM) or the regular :math:`k^d` grid (PSMM).

PMM (Section 4)
    * :func:`pmm_theorem10` — any noise scales :math:`\\sigma_0..\\sigma_r`:
      :math:`\\mathbb{E} W_1 \\le \\frac{2\\sqrt2}{n}\\sum_{j=0}^r \\sigma_j\\Delta_{j-1} + \\delta`.
    * :func:`pmm_theorem11` — the A.4 split: :math:`\\frac{\\sqrt2}{\\varepsilon n} S^2 + \\delta`,
      :math:`S = \\sum_{j=0}^r \\sqrt{\\Delta_{j-1}}`.
    * :func:`pmm_corollary12` — the rate at Corollary 12's depth.

    Note on constants ([HVZ23] as printed; docs/deviations.md §5): substituting A.4's :math:`\\sigma_j` into Theorem 10
    gives :math:`2\\sqrt2 S^2/(\\varepsilon n)`, twice Theorem 11's printed :math:`\\sqrt2 S^2/(\\varepsilon n)`.
    :func:`pmm_theorem11` follows the paper as printed (``proven=False``, the default) and returns
    the Theorem-10 substitution with ``proven=True``; the tests check measured W1 against the
    smaller, printed value.

PSMM (Section 3)
    * :func:`psmm_theorem7` — :math:`\\max_i \\mathrm{diam}\\,\\Omega_i + \\frac{2m}{\\varepsilon n}\\tilde L_m(\\mathcal F)`
      with Corollary 4's Laplacian complexity, whose absolute constant C the paper leaves unspecified
      (``complexity_constant``, default 1: a constant-free evaluation, not a proven number).
    * :func:`psmm_corollary8` — the constant-free rate at :math:`m = \\lceil\\varepsilon n\\rceil`.

Replace neighbours (docs/privacy-model.md §2; docs/deviations.md §9): the root count is exact and each level j >= 1 has sensitivity 2;
the same proofs give the formulas with the root term dropped and :math:`\\varepsilon` replaced by
:math:`\\varepsilon/2` on the noised levels.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

import numpy as np

from . import partition
from .validation import check_choice, check_float, check_int, param_error

__all__ = [
    "BoundKind",
    "Theory",
    "dimension_rate",
    "marginal_rate",
    "subspace_rate",
    "fit_slope",
    "SlopeFit",
    "fit_slope_ci",
    "theory_exponent",
    "DEPTH_RULES",
    "MAX_PMM_DEPTH",
    "AUTO_SHIFT",
    "auto_shift",
    "AUTO_MAX_DEPTH",
    "paper_depth",
    "default_depth",
    "bound_depth",
    "resolve_depth",
    "mixed_depth",
    "mixed_theorem11",
    "pmm_deltas",
    "pmm_resolution",
    "pmm_S",
    "pmm_theorem10",
    "pmm_theorem11",
    "corollary12_depth",
    "pmm_corollary12",
    "laplacian_complexity_rate",
    "psmm_theorem7",
    "psmm_corollary8",
]


def _n_eps_d(n, epsilon, d, owner):
    nn = check_float(n, "n", owner, low=0.0, low_open=True)
    eps = check_float(epsilon, "epsilon", owner, low=0.0, low_open=True)
    dd = check_int(d, "d", owner, low=1)
    return nn, eps, dd


def pmm_deltas(depth: int, d: int) -> np.ndarray:
    """:math:`\\Delta_{j-1}` for j = 0..r, :math:`\\Delta_j = 2^j 2^{-\\lfloor j/d \\rfloor}` (Eq. 4.1 on the
    cube), :math:`\\Delta_{-1} = \\Delta_0 = 1`."""
    r = check_int(depth, "depth", "pmm_deltas", low=0, high=60)
    return partition.deltas(r, check_int(d, "d", "pmm_deltas", low=1))


def pmm_resolution(depth: int, d: int) -> float:
    """:math:`\\delta = 2^{-\\lfloor r/d \\rfloor}`, the l_inf diameter of the leaves."""
    r = check_int(depth, "depth", "pmm_resolution", low=0, high=60)
    return math.ldexp(1.0, -(r // check_int(d, "d", "pmm_resolution", low=1)))


def pmm_S(depth: int, d: int, *, neighbours: str = "add_remove") -> float:
    """:math:`S = \\sum_{j\\in J}\\sqrt{\\Delta_{j-1}}` over the noised levels J (0..r, or 1..r under replace)."""
    check_choice(neighbours, "neighbours", "pmm_S", ("add_remove", "replace"))
    w = pmm_deltas(depth, d)
    first = 0 if neighbours == "add_remove" else 1
    return float(np.sqrt(w[first:]).sum())


def pmm_theorem10(n: float, sigmas, d: int) -> float:
    """Theorem 10 for any noise scales.

    .. math:: \\mathbb{E} W_1(\\mu_\\mathcal{X}, \\mu_\\mathcal{Y}) \\le \\frac{2\\sqrt2}{n}\\sum_{j=0}^r \\sigma_j \\Delta_{j-1} + \\delta

    Parameters
    ----------
    n : float > 0, true dataset size
    sigmas : sequence of r+1 floats >= 0 (σ_0 = 0: exact root, as under replace)
    d : int >= 1
    """
    owner = "pmm_theorem10"
    nn = check_float(n, "n", owner, low=0.0, low_open=True)
    dd = check_int(d, "d", owner, low=1)
    s = np.asarray(sigmas, dtype=float)
    if s.ndim != 1 or s.size < 1 or not np.all(np.isfinite(s)) or np.any(s < 0):
        raise param_error(owner, "sigmas", "a non-empty sequence of finite floats >= 0", sigmas)
    r = s.size - 1
    return float(2.0 * math.sqrt(2.0) / nn * np.dot(s, partition.deltas(r, dd)) + pmm_resolution(r, dd))


def pmm_theorem11(n: float, epsilon: float, d: int, depth: int, *, neighbours: str = "add_remove",
                  proven: bool = False) -> float:
    """Theorem 11: the bound with the A.4 noise split.

    .. math:: \\mathbb{E} W_1 \\le \\frac{\\sqrt2\\, s}{\\varepsilon n} S^2 + \\delta, \\qquad S = \\sum_{j\\in J}\\sqrt{\\Delta_{j-1}}

    s = 1 and J = {0..r} under add/remove (the paper's statement); s = 2 and J = {1..r} under
    replace. ``proven=True`` doubles the first term: the value obtained by substituting A.4 into
    Theorem 10 as printed (see the module docstring).
    """
    owner = "pmm_theorem11"
    nn, eps, dd = _n_eps_d(n, epsilon, d, owner)
    r = check_int(depth, "depth", owner, low=0, high=60)
    rel = check_choice(neighbours, "neighbours", owner, ("add_remove", "replace"))
    s = 1.0 if rel == "add_remove" else 2.0
    S = pmm_S(r, dd, neighbours=rel)
    factor = 2.0 if proven else 1.0
    return float(factor * math.sqrt(2.0) * s * S * S / (eps * nn) + pmm_resolution(r, dd))


def mixed_theorem11(n: float, epsilon: float, schedule: Any, *, neighbours: str = "add_remove") -> float:
    """Theorem 11 on a mixed partition (:class:`~dpsynth_core.partition.MixedSchedule`).

    .. math:: \\mathbb{E} W_1 \\le \\frac{\\sqrt2\\, s}{\\varepsilon n} S^2 + \\mathrm{diam}_r, \\qquad
              S = \\sum_{j\\in J}\\sqrt{\\Delta_{j-1}}

    Theorem 11 of [HVZ23] holds on any bounded metric space with a binary hierarchical partition,
    with :math:`\\Delta_j = 2^j \\mathrm{diam}_j` the level's diameters; here the diameters are those of
    the mixed metric (docs/mixed-data.md). Same constant convention as :func:`pmm_theorem11`.
    """
    owner = "mixed_theorem11"
    nn = check_float(n, "n", owner, low=0.0, low_open=True)
    eps = check_float(epsilon, "epsilon", owner, low=0.0, low_open=True)
    rel = check_choice(neighbours, "neighbours", owner, ("add_remove", "replace"))
    s = 1.0 if rel == "add_remove" else 2.0
    first = 0 if rel == "add_remove" else 1
    S = float(np.sqrt(schedule.deltas()[first:]).sum())
    return float(math.sqrt(2.0) * s * S * S / (eps * nn) + schedule.diameters()[-1])


def mixed_depth(rule: str, n: float, epsilon: float, k: int, sizes: tuple[int, ...], weights: tuple[float, ...],
                neighbours: str = "add_remove", consistency: str = "least_squares") -> int:
    """PMM's depth on a mixed domain (k numeric columns, categorical columns of ``sizes``).

    The partition resolves the categories (their :math:`B = \\sum_j \\lceil\\log_2 c_j\\rceil` bits) and
    splits the numeric axes (:class:`~dpsynth_core.partition.MixedSchedule`). ``"auto"``: B plus the
    numeric rule :func:`default_depth` at the mean size of a category combination,
    :math:`n / \\prod_j c_j` (public quantities: the declared categories and the public or noisy n);
    ``"paper"``: B plus Corollary 12's depth at that size; ``"bound"``: the depth minimising
    :func:`mixed_theorem11`. Without numeric columns the depth is B (a leaf is a combination).
    """
    B = sum(int(c - 1).bit_length() for c in sizes)
    if k == 0:
        return B
    if rule == "bound":
        best, best_r = math.inf, B
        for r in range(0, min(MAX_PMM_DEPTH, B + MAX_PMM_DEPTH) + 1):
            sched = partition.MixedSchedule(k, tuple(sizes), tuple(weights), r)
            b = mixed_theorem11(n, epsilon, sched, neighbours=neighbours)
            if b < best - 1e-15:
                best, best_r = b, r
        return best_r
    per_combo = max(float(n) / float(np.prod(np.asarray(sizes, dtype=float))), 1.0)
    inner = paper_depth(per_combo, epsilon, k) if rule == "paper" else default_depth(per_combo, epsilon, k,
                                                                                      consistency, neighbours)
    return int(min(B + inner, MAX_PMM_DEPTH))


def corollary12_depth(n: float, epsilon: float, d: int) -> float:
    """Corollary 12's (real-valued) depth: :math:`\\log_2(\\varepsilon n) - 1` for d = 1,
    :math:`\\log_2(\\varepsilon n)` for d >= 2 (:func:`paper_depth` is its rounded, clamped value)."""
    nn, eps, dd = _n_eps_d(n, epsilon, d, "corollary12_depth")
    return math.log2(eps * nn) - (1.0 if dd == 1 else 0.0)


def pmm_corollary12(n: float, epsilon: float, d: int) -> tuple[float, bool]:
    """Corollary 12's rate, returned as (value, constant_free).

    d = 1: :math:`(2+\\sqrt2)\\log_2^2(\\varepsilon n)/(\\varepsilon n)` (explicit constant, A.9),
    ``constant_free=False``. d >= 2: :math:`(\\varepsilon n)^{-1/d}` with the unspecified constant
    set to 1, ``constant_free=True``.
    """
    nn, eps, dd = _n_eps_d(n, epsilon, d, "pmm_corollary12")
    en = eps * nn
    if dd == 1:
        return float((2.0 + math.sqrt(2.0)) * math.log2(max(en, 1.0)) ** 2 / en), False
    return float(en ** (-1.0 / dd)), True


def laplacian_complexity_rate(m: float, d: int, complexity_constant: float = 1.0) -> float:
    """Corollary 4: :math:`\\tilde L_m(\\mathcal F) \\le C m^{-1/2}` (d=1), :math:`C\\log m\\; m^{-1/2}` (d=2),
    :math:`C d^{-1} m^{-1/d}` (d>=3); C = ``complexity_constant`` (unspecified in the paper)."""
    owner = "laplacian_complexity_rate"
    mm = check_float(m, "m", owner, low=1.0)
    dd = check_int(d, "d", owner, low=1)
    c = check_float(complexity_constant, "complexity_constant", owner, low=0.0, low_open=True)
    if dd == 1:
        return c * mm ** -0.5
    if dd == 2:
        return c * max(math.log(mm), 1.0) * mm ** -0.5
    return c / dd * mm ** (-1.0 / dd)


def psmm_theorem7(n: float, epsilon: float, d: int, cells_per_axis: int, *, complexity_constant: float = 1.0,
                  neighbours: str = "add_remove") -> float:
    """Theorem 7 on the regular :math:`k^d` grid with Corollary 4's complexity.

    .. math:: \\mathbb{E} W_1 \\le \\frac1k + \\frac{2m}{\\varepsilon' n}\\, C\\, \\ell_d(m), \\qquad m = k^d

    where :math:`1/k` is the l_inf diameter of a cell, :math:`\\ell_d` the rate of
    :func:`laplacian_complexity_rate`, and :math:`\\varepsilon' = \\varepsilon` (add/remove) or
    :math:`\\varepsilon/2` (replace, noise :math:`\\mathrm{Lap}_\\mathbb{Z}(2/\\varepsilon)`). With
    ``complexity_constant=1`` this is a constant-free evaluation, not a proven number.
    """
    owner = "psmm_theorem7"
    nn, eps, dd = _n_eps_d(n, epsilon, d, owner)
    k = check_int(cells_per_axis, "cells_per_axis", owner, low=1)
    rel = check_choice(neighbours, "neighbours", owner, ("add_remove", "replace"))
    eps_eff = eps if rel == "add_remove" else eps / 2.0
    m = float(k) ** dd
    return float(1.0 / k + 2.0 * m / (eps_eff * nn) * laplacian_complexity_rate(m, dd, complexity_constant))


def psmm_corollary8(n: float, epsilon: float, d: int) -> tuple[float, bool]:
    """Corollary 8's rate with C = 1, returned as (value, constant_free=True).

    :math:`(\\varepsilon n)^{-1/2}` (d=1), :math:`\\log(\\varepsilon n)(\\varepsilon n)^{-1/2}` (d=2),
    :math:`(\\varepsilon n)^{-1/d}` (d>=3).
    """
    nn, eps, dd = _n_eps_d(n, epsilon, d, "psmm_corollary8")
    en = max(eps * nn, 1.0)
    if dd == 1:
        return float(en ** -0.5), True
    if dd == 2:
        return float(max(math.log(en), 1.0) * en ** -0.5), True
    return float(en ** (-1.0 / dd)), True


#: Depth rules of PMM (``depth_rule``).
DEPTH_RULES = ("auto", "paper", "bound")
#: Deepest tree pmm builds (2^24 leaves; the trace holds four count trees of 2^25 int32 each).
MAX_PMM_DEPTH = 24
#: Levels the "auto" rule stays below Corollary 12's depth, per consistency map and dimension d >= 2
#: (a dimension not listed uses the d = 3 value; negative: deeper); d = 1 uses the bound-minimising
#: depth. Chosen by benchmarks/depth_study.py (d = 2, 3: smallest geometric-mean regret of exact W1 over
#: n, ε and three data shapes, against Corollary 12's depth itself; benchmarks/results/pmm_depth_study.json,
#: "summary_phase_a") and, for least squares in d = 4, 5, 6, by the defaults study
#: (benchmarks/defaults_study.py, depths up to three levels below Corollary 12's: shift 0 in d = 4, one
#: level deeper in d = 5 and 6; "fit" -> "pmm" in benchmarks/results/defaults_study.json). Beyond d = 6
#: nothing was measured, and the d = 3 value stays.
AUTO_SHIFT = {
    "least_squares": {2: 1, 3: 0, 4: 0, 5: -1, 6: -1},
    "proportional": {2: 3, 3: 1},
    "uniform": {2: 3, 3: 1},
}
#: The "auto" rule builds at most 2^16 leaves: the tree costs O(2^r) noise draws, and beyond 2^16
#: leaves it dominates the O(n d) coding (the performance target: end-to-end within 5x a grid index +
#: bincount at n = 10^6; benchmarks/results/foundations.json). Pass ``depth`` explicitly for deeper trees.
AUTO_MAX_DEPTH = 16


# --------------------------------------------------------------------------------- PMM depth rules
def _log2_eps_n(n: int, epsilon: float) -> float:
    return math.log2(max(epsilon * n, 1.0))


def paper_depth(n: int, epsilon: float, d: int) -> int:
    """Corollary 12: :math:`r = \\log_2(\\varepsilon n) - 1` (d = 1) or :math:`\\log_2(\\varepsilon n)`
    (d >= 2), rounded to the nearest integer and clamped to [0, MAX_PMM_DEPTH]."""
    r = round(_log2_eps_n(n, epsilon)) - (1 if d == 1 else 0)
    return int(min(max(r, 0), MAX_PMM_DEPTH))


def default_depth(n: int, epsilon: float, d: int, consistency: str = "least_squares",
                  neighbours: str = "add_remove") -> int:
    """The default depth rule ``"auto"`` (depth study, ``benchmarks/depth_study.py``).

    .. math:: r = \\min\\big(\\mathrm{round}(\\log_2(\\varepsilon n)) - c_{d}, \\; 16\\big)^+ \\quad (d \\ge 2),
              \\qquad r = \\arg\\min_r \\text{Theorem 11} \\quad (d = 1)

    with :math:`c_d` from :data:`AUTO_SHIFT` (least squares: 1 for d = 2, 0 for d = 3, 4 and d > 6,
    -1 (one level deeper) for d = 5, 6; the paper's maps: 3 and 1) and the cap :data:`AUTO_MAX_DEPTH`. In d = 1 the best depth drifts
    below Corollary 12's by a growing number of levels (the (r+1)^2 of Theorem 11), which the
    bound-minimising depth tracks. Depends only on the public (n, ε, d) and the consistency map.
    """
    if d == 1:
        r = bound_depth(n, epsilon, d, neighbours)
    else:
        r = paper_depth(n, epsilon, d) - auto_shift(consistency, d)
    return int(min(max(r, 0), AUTO_MAX_DEPTH))


def auto_shift(consistency: str, d: int) -> int:
    """:data:`AUTO_SHIFT` of ``consistency`` (the proportional map's for an unknown one) in dimension
    d >= 2: levels below Corollary 12's depth (negative: deeper); a dimension not listed takes d = 3's."""
    table = AUTO_SHIFT.get(consistency, AUTO_SHIFT["proportional"])
    return int(table.get(d, table[3]))


def bound_depth(n: int, epsilon: float, d: int, neighbours: str = "add_remove") -> int:
    """The depth minimising Theorem 11's bound (optimal noise split) for this (n, ε, d)."""
    best, best_r = math.inf, 0
    for r in range(0, MAX_PMM_DEPTH + 1):
        b = pmm_theorem11(n, epsilon, d, r, neighbours=neighbours)
        if b < best - 1e-15:
            best, best_r = b, r
    return best_r


def resolve_depth(rule: str, n: int, epsilon: float, d: int, neighbours: str = "add_remove",
                   consistency: str = "least_squares") -> int:
    """Depth from a rule name in :data:`DEPTH_RULES`."""
    if rule == "paper":
        return paper_depth(n, epsilon, d)
    if rule == "bound":
        return bound_depth(n, epsilon, d, neighbours)
    return default_depth(n, epsilon, d, consistency, neighbours)



# ------------------------------------------------------------------------------- empirical rates
def fit_slope(x, y) -> tuple[float, float]:
    """Least-squares slope and intercept of log y against log x (positive, finite pairs only).

    Returns (nan, nan) when fewer than two distinct x remain.
    """
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    keep = (x > 0) & (y > 0) & np.isfinite(x) & np.isfinite(y)
    if keep.sum() < 2 or np.unique(x[keep]).size < 2:
        return float("nan"), float("nan")
    slope, icpt = np.polyfit(np.log(x[keep]), np.log(y[keep]), 1)
    return float(slope), float(icpt)


@dataclass(frozen=True)
class SlopeFit:
    """A least-squares power law :math:`y \\approx e^{b} x^{a}` fitted on log-log axes, with the
    regression's standard error (:func:`fit_slope_ci`).

    Attributes
    ----------
    slope, intercept : float
        a and b of :math:`\\log y = a \\log x + b`.
    se : float
        Standard error of the slope (NaN with fewer than three points or a single x).
    low, high : float
        The slope's confidence interval at ``level`` (Student's t with ``points - 2`` degrees of freedom).
    level : float
    points : int
        The (x, y) pairs used (positive and finite).
    """

    slope: float
    intercept: float
    se: float
    low: float
    high: float
    level: float
    points: int
    _x_mean: float = field(default=math.nan, repr=False)
    _sxx: float = field(default=math.nan, repr=False)
    _s: float = field(default=math.nan, repr=False)
    _t: float = field(default=math.nan, repr=False)

    def line(self, x) -> np.ndarray:
        """The fitted power law at ``x``."""
        return np.exp(self.intercept) * np.asarray(x, dtype=float) ** self.slope

    def band(self, x) -> tuple[np.ndarray, np.ndarray]:
        """The confidence band of the fitted line (the mean of log y given log x) at ``x``, at ``level``:
        :math:`\\exp(\\hat y \\pm t\\,s\\sqrt{1/N + (\\log x - \\overline{\\log x})^2 / S_{xx}})`.
        NaN where the standard error is undefined."""
        lx = np.log(np.asarray(x, dtype=float))
        half = self._t * self._s * np.sqrt(1.0 / max(self.points, 1) + (lx - self._x_mean) ** 2 / self._sxx)
        mid = self.intercept + self.slope * lx
        return np.exp(mid - half), np.exp(mid + half)


def fit_slope_ci(x, y, level: float = 0.95) -> SlopeFit:
    """:func:`fit_slope` with the regression's standard error and a confidence interval for the slope.

    Ordinary least squares of log y on log x over every positive, finite pair (one pair per run: the
    repeats at one x are separate points, so the spread between them enters the error). The interval
    is :math:`\\hat a \\pm t_{N-2,(1+\\text{level})/2}\\,\\mathrm{se}(\\hat a)`; it assumes independent,
    equally noisy log-errors around a straight line, so it says how well the runs pin the slope of
    the fitted line, not whether a power law is the right model over the range. NaN (but the slope)
    with fewer than three points.
    """
    from scipy import stats

    level = check_float(level, "level", "fit_slope_ci", low=0.0, high=1.0, low_open=True, high_open=True)
    x = np.asarray(x, dtype=float).ravel()
    y = np.asarray(y, dtype=float).ravel()
    if x.shape != y.shape:
        raise param_error("fit_slope_ci", "y", f"an array of the same length as x ({x.size})", y)
    keep = (x > 0) & (y > 0) & np.isfinite(x) & np.isfinite(y)
    lx, ly = np.log(x[keep]), np.log(y[keep])
    n = int(lx.size)
    nan = math.nan
    if n < 2 or np.unique(lx).size < 2:
        return SlopeFit(nan, nan, nan, nan, nan, level, n)
    xm = float(lx.mean())
    sxx = float(((lx - xm) ** 2).sum())
    slope = float(((lx - xm) * (ly - ly.mean())).sum() / sxx)
    icpt = float(ly.mean() - slope * xm)
    if n < 3:
        return SlopeFit(slope, icpt, nan, nan, nan, level, n, xm, sxx)
    resid = ly - (icpt + slope * lx)
    s = float(np.sqrt((resid**2).sum() / (n - 2)))
    se = s / math.sqrt(sxx)
    t = float(stats.t.ppf(0.5 + level / 2, n - 2))
    return SlopeFit(slope, icpt, se, slope - t * se, slope + t * se, level, n, xm, sxx, s, t)


def dimension_rate(d: int, params: Mapping[str, Any] | None = None) -> tuple[float, str]:
    """The exponent a of W1 ≍ (εn)^a of a full-dimensional mechanism: -1 for d = 1, -1/d for d >= 2, up
    to logarithmic factors (PMM/PSMM [HVZ23, Corollaries 8 and 12], the walk with folding [BSV22], flat
    histograms, Private Evolution [GFR25, Theorem 4.1])."""
    if d == 1:
        return -1.0, "-1 for d = 1, up to log factors"
    return -1.0 / d, f"-1/d = {-1.0 / d:.3g}, up to log factors"


def marginal_rate(d: int, params: Mapping[str, Any] | None = None) -> tuple[float, str]:
    """Sparse marginals [DLS+24, Theorem 1]: -1/s for s-sparse queries (s from ``params``, default min(2, d))."""
    s = int((params or {}).get("s") or min(2, d))
    return (-1.0 if s == 1 else -1.0 / s), f"-1/s with s = {s}, up to logs"


def subspace_rate(d: int, params: Mapping[str, Any] | None = None) -> tuple[float, str]:
    """Low-dimensional data [HSVZ23, Theorem 4.2]: -1/d' in the d'-dimensional subspace (default d' = 2)."""
    dp = int((params or {}).get("target_dim") or 2)
    return (-1.0 if dp == 1 else -1.0 / dp), f"-1/d' with d' = {dp}, up to logs"


class BoundKind(str, Enum):
    """What kind of claim a release's ``bound`` is, set by the mechanism that made it.

    The dashboard, the command line and the reports read this (never the wording of ``bound_kind`` or of
    the notes) to decide how to show the number; :mod:`dpsynth_core.wording` says it in words.

    * ``PROVEN`` -- a proven upper bound on the expected W1 for this run (its paper's theorem, its
      constants explicit).
    * ``CERTIFICATE`` -- a private, high-probability upper bound released with the data (sparse marginals).
    * ``RATE`` -- a rate whose constants the paper does not give: evaluated with constant 1 it is a number
      (``bound``) but not a bound; or no number at all (``bound`` None).
    * ``ESTIMATE`` -- a bound whose proof leaves a part to be estimated (low_dim's tail term): read it as an
      estimate.
    * ``REFERENCE`` -- the paper's bound evaluated for settings its proof does not cover (PMM with
      least-squares consistency): shown for reference, not proved.
    * ``NONE`` -- no bound (baselines; a variant without one).
    """

    PROVEN = "proven"
    CERTIFICATE = "certificate"
    RATE = "rate"
    ESTIMATE = "estimate"
    REFERENCE = "reference"
    NONE = "none"


@dataclass(frozen=True)
class Theory:
    """What a mechanism's paper proves about its W1, declared once in its registration.

    Attributes
    ----------
    proven : bool
        Whether the release's ``bound`` is a proven number (a rate without constants is not).
    bound_label : str
        How a plot names the bound (empty when there is no bound to draw).
    rate : callable (d, params) -> (exponent, text)
        The exponent a of W1 ≍ (εn)^a in the paper's rate, up to logarithmic factors, and a sentence.
    """

    proven: bool
    bound_label: str = ""
    rate: Callable[[int, Mapping[str, Any] | None], tuple[float, str]] = dimension_rate


def theory_exponent(spec: Any, d: int, params: Mapping[str, Any] | None = None) -> tuple[float, str]:
    """The rate exponent of a registered mechanism (its spec's :class:`Theory`) in dimension d."""
    theory = spec.theory if spec.theory is not None else Theory(proven=False)
    return theory.rate(d, params)
