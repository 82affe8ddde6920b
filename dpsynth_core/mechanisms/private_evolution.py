"""Private Evolution (Gonzalez, Fanti, Ramdas, *Private Evolution Converges* [GFR25]).

PE refines a synthetic set ``S_0`` drawn from a data-independent Random API. At iteration t it
draws variations ``V_t = Variation_API(S_{t-1})`` (Eq. 1), counts how many private points have each
variation as nearest neighbour (Algorithm 4), privatises that histogram, post-processes it into a
probability vector μ'_t over ``V_t`` and samples the next synthetic set from it (Algorithms 2 and 3).

Post-processings (``histogram``)
--------------------------------
``"dbl"`` (default)  Gaussian noise, then the closest probability vector in bounded-Lipschitz
                 distance (Algorithm 2, line 8, the algorithm of Theorem 4.1): the exact projection up to
                 400 candidates, beyond it the projection on the graph joining every candidate to its
                 16 nearest (:func:`dpsynth_core.evolution.bl_weights_graph`, a min-cost flow).
``"threshold"``  Gaussian noise on every count, keep entries ``>= H`` and renormalise (Algorithm 3;
                 H = 0 in the paper's simulations, Section 6).
``"laplace_threshold"``  Laplace noise on the positive counts only and the stability threshold
                 ``H = 2 log(1/δ)/(nε) + 1/n`` (Section 4.2, Proposition 4.1), then renormalise.

Schedules and releases (the defaults study, docs/private-evolution.md)
-----------------------------------------------------------------------
``schedule="refine"`` (default): T = max(2, round(log(n̂ε)/2)); the last iteration gets the share
``final_share`` = 0.7 of the Gaussian-DP budget μ² and only the ``refine_levels`` = 4 finest scales of
Eq. (1), the others share the rest equally; α is Theorem 4.1's with the last iteration's σ, n_s
Theorem 4.1's with the other iterations' σ (at most n̂). ``schedule="paper"``: one σ for all T = 2
log(n̂ε) iterations, every scale every time, α and n_s from Theorem 4.1 (Section 6).
``release="histogram"`` (default) releases ``n_release`` (default n̂) points, the largest-remainder
rounding of μ'_T: a function of the privatised votes and the public V_T, so post-processing;
``release="samples"`` releases S_T, the n_s draws of Algorithm 2, line 9.

Privacy accounting
------------------
Gaussian histograms: one record moves one count by 1 under add/remove and two counts by 1 under
replace, so the histogram of counts has l2 sensitivity Δ = 1 or √2 ([GFR25, proof of Theorem 4.1]
uses √2/n for the normalised histogram). T adaptive Gaussian mechanisms with noise σ_t compose
exactly to μ-GDP with μ = (Σ_t (Δ/σ_t)²)^{1/2} [DRS22, Corollary 3.3]; σ_t = Δ/(μ(ε, δ)√s_t) for
shares s_t summing to 1 (:func:`dpsynth_core.evolution.iteration_sigmas`). The ledger lists every
iteration with its share (ε s_t, δ s_t) of that exact total.

Laplace + threshold: each iteration is an (ε s_t, δ s_t)-DP stability-based histogram ([GFR25,
Proposition 4.1]; [Vad17, Theorem 3.5]) and the T iterations compose by basic composition. See
:func:`laplace_count_threshold` for the exact calibration with discrete Laplace noise.

The steps (the variation API, the votes, the noisy histograms, the default rules) are the pure
functions of :mod:`dpsynth_core.evolution`; this module validates, plans, accounts, iterates and
releases.

Coordinates: everything runs in the unit cube ``[0, 1]^d`` of the public :class:`Domain`
(``region="box"``) or in the l2 ball inscribed in it (``region="ball"``: centre (1/2, ..., 1/2),
radius 1/2 in unit-cube coordinates; the paper's unit l2 ball is ``Domain([-1, -1], [1, 1])`` with
``region="ball"``). Distances, variation scales and ``rel.owner.w1`` are in unit-cube
coordinates with the release's ``metric``.

Data beyond memory
------------------
The private data enter only through the nearest-neighbour votes of each iteration, a sum over
records: :func:`dpsynth_core.evolution.nn_votes` (project a block of rows into the region, count each
row's vote over the current candidates V_t) summed by :meth:`dpsynth_core.rows.Rows.sum`, one pass
over the data per iteration, V_t going to the workers as an argument. In memory it is called once on
all the rows. The votes are integers and each row's vote depends only on the row and on V_t (exact
search, ties to the smallest index), so with the same rng the release from a Dask array or
DataFrame, in any number of partitions, is bit for bit the NumPy one (everything after the votes
reads only the votes and public values). With Dask the owner-side W1 (``track_w1``) is not computed
(``rel.owner.w1_note`` says why) and the non-private teaching starts are refused.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import limits
from ..domain import Domain
from ..evolution import (
    COSTS,
    INTERACTIVE_MAX_ITERATIONS,
    INTERACTIVE_MAX_LEVELS,
    INTERACTIVE_MAX_SYNTHETIC,
    METRICS,
    N_SYNTHETIC_DEFAULT_CAP,
    REFINE_FINAL_SHARE,
    REFINE_GRID,
    REFINE_LEVELS,
    REGIONS,
    SCHEDULES,
    MixedMetric,
    bl_weights,
    budget_shares,
    default_alpha,
    default_iterations,
    default_n_synthetic,
    gaussian_noisy_counts,
    in_region,
    iteration_sigmas,
    laplace_count_threshold,
    laplace_threshold_counts,
    mixed_uniform,
    mixed_variation_api,
    nn_assign,
    nn_histogram,
    nn_votes,
    pe_l2_sensitivity,
    pe_sigma,
    project_into_region,
    refine_iterations,
    region_diameter,
    snap_to_grid,
    spread_in_cells,
    theorem_4_1_rate,
    threshold_weights,
    uniform_in_region,
    variation_api,
    variation_scales_eq1,
)
from ..grid import largest_remainder
from ..privacy import Ledger, SizeEstimate, check_n_public, resolve_size
from ..theory import BoundKind, Theory
from ..transport import wasserstein1
from ..validation import check_int, param_error
from .contract import Config, Prepared, mechanism, n_public_param, param
from .release import OwnerView, Release, Trace

__all__ = [
    "private_evolution",
    "PEConfig",
    "PETrace",
    "PEOwner",
    "pe_l2_sensitivity",
    "pe_sigma",
    "default_iterations",
    "default_alpha",
    "default_n_synthetic",
    "variation_scales_eq1",
    "region_diameter",
    "project_into_region",
    "variation_api",
    "nn_assign",
    "nn_histogram",
    "gaussian_noisy_counts",
    "laplace_count_threshold",
    "laplace_threshold_counts",
    "threshold_weights",
    "HISTOGRAMS",
    "INITS",
    "RELEASES",
    "SCHEDULES",
    "METRICS",
    "REGIONS",
    "N_SYNTHETIC_DEFAULT_CAP",
]

OWNER = "private_evolution"
HISTOGRAMS: tuple[str, ...] = ("threshold", "dbl", "laplace_threshold")
INITS: tuple[str, ...] = ("uniform", "public", "origin", "private", "interpolate")
NONPRIVATE_INITS: tuple[str, ...] = ("private", "interpolate")
RELEASES: tuple[str, ...] = ("histogram", "samples")

#: Largest number of private x synthetic pairs for which the owner-side W1 is computed exactly.
W1_EXACT_PAIRS = 4_000_000
#: Largest side (private or synthetic points) for which the owner-side W1 beyond W1_EXACT_PAIRS is the exact
#: sparse method rather than a subsample's.
W1_SPARSE_MAX_POINTS = 20_000
#: Trace keeps every iteration's variations and histograms while they fit in this many float64 values.
TRACE_MAX_VALUES = 8_000_000
_STUDY = "the defaults study in docs/private-evolution.md"


# ------------------------------------------------------------------------------ owner-side W1
def _w1_exact(A: np.ndarray, B: np.ndarray, metric: str | MixedMetric,
              weights: np.ndarray | None) -> tuple[float, bool, str]:
    """Exact W1 (private points uniform, B weighted by ``weights`` or uniform) via
    :func:`dpsynth_core.transport.wasserstein1`: the CDF formula on the line (d = 1, where every metric
    is |x - y| and a network simplex on the dense cost matrix was the slowest step of a run), POT's
    network simplex otherwise; on a mixed table POT's network simplex on the matrix of
    :meth:`~dpsynth_core.evolution.MixedMetric.pairwise` distances."""
    if isinstance(metric, MixedMetric):
        import ot  # POT: heavy, needed for the owner's diagnostics only

        b = np.full(B.shape[0], 1.0 / B.shape[0]) if weights is None else weights / weights.sum()
        value, log = ot.emd2(np.full(A.shape[0], 1.0 / A.shape[0]), b, metric.pairwise(A, B), numItermax=10**7,
                             log=True)
        return float(value), log.get("warning") is None, "pot"
    res = wasserstein1(A, B, metric=metric, method="exact_1d" if A.shape[1] == 1 else "pot", weights_y=weights,
                       return_result=True)
    return float(res.value), bool(res.certified or res.exact), res.method


def _owner_w1(U: np.ndarray, S: np.ndarray, metric: str | MixedMetric, diag_rng: np.random.Generator,
              weights: np.ndarray | None = None) -> tuple[float, str]:
    """W1(private, synthetic) in unit-cube coordinates and the release's metric (owner-side); the
    synthetic side is the points S, or the measure with ``weights`` on them.

    Exact (POT network simplex, dual-certified) up to :data:`W1_EXACT_PAIRS` pairs; beyond that, on a numeric
    table with both sides within :data:`W1_SPARSE_MAX_POINTS` points, the transport module's exact sparse
    method (certified over all pairs: the release spread over its cells has as many distinct points as the
    data); otherwise the same exact solver on a random subsample of the private points, labelled as an
    estimate (the sparse method is far slower at 10^5 x 2000 points in l2).
    """
    if weights is not None:
        keep = weights > 0
        S, weights = S[keep], weights[keep]
    if U.shape[1] == 1 or U.shape[0] * S.shape[0] <= W1_EXACT_PAIRS:
        value, cert, method = _w1_exact(U, S, metric, weights)
        if method == "exact_1d":
            return value, "exact (1-D CDF formula)"
        if isinstance(metric, MixedMetric):
            return value, "exact (POT emd on the mixed cost matrix)" if cert else "POT emd (did not converge)"
        return value, "exact (POT emd, dual-certified)" if cert else "exact (POT emd, certificate failed)"
    if not isinstance(metric, MixedMetric) and max(U.shape[0], S.shape[0]) <= W1_SPARSE_MAX_POINTS:
        res = wasserstein1(U, S, metric=metric, method="sparse", weights_y=weights, return_result=True)
        return float(res.value), ("exact (sparse transshipment, certified)" if res.exact else
                                  f"certified bracket [{res.lower:.4g}, {res.upper:.4g}] (its upper end)")
    k = max(1, W1_EXACT_PAIRS // max(1, S.shape[0]))
    sub = U[diag_rng.choice(U.shape[0], size=min(k, U.shape[0]), replace=False)]
    value, _, _ = _w1_exact(sub, S, metric, weights)
    return value, f"exact POT on a random subsample of {sub.shape[0]} private points (estimate)"


# ------------------------------------------------------------------------------ the contract
def _check_scales(value: Any, owner: str) -> np.ndarray:
    """``variation_scales``: one float or a sequence of 1 to 64 floats in (0, inf)."""
    try:
        scales = np.asarray(value, dtype=np.float64).ravel()
    except (TypeError, ValueError):
        raise param_error(owner, "variation_scales", "a sequence of floats in (0, inf)", value,
                          kind=TypeError) from None
    if scales.size == 0 or scales.size > 64 or not np.all(np.isfinite(scales)) or np.any(scales <= 0):
        raise param_error(owner, "variation_scales", "a sequence of 1 to 64 floats in (0, inf)", value)
    return scales


def _check_public(value: Any, owner: str) -> Any:
    """``public``: public points (array (m, d) or a DataFrame, domain units), read against the domain
    in :meth:`PEConfig.check_domain`."""
    return value


def _check_n_release(value: Any, owner: str) -> int:
    return check_int(value, "n_release", owner, low=1)  # the ceiling is the current limits' (check_domain)


@dataclass(frozen=True)
class PEConfig(Config):
    """Private Evolution's parameters. ``variation_scales`` and ``public`` also take sequences and arrays
    (Python API); the checks that involve several parameters or the domain are in :meth:`check_domain`."""

    iterations: int | None = param(
        "int", None, "PE steps T. Default: schedule 'refine' T = max(2, round(log(nε)/2)) (" + _STUDY + "); "
        "'paper' T = 2 log(nε) (Section 6). T × n_s(2L+1) × d candidate coordinates must stay within "
        "dpsynth_core.limits max_candidates.", low=1, high=500)
    n_synthetic: int | None = param(
        "int", None, "Points n_s of the synthetic cloud in every iteration. Default: Theorem 4.1's "
        "(σ(2L+1)^{1-1/max(d,2)})^{-1} with σ the noise on counts/n of the exploration iterations "
        "('refine') or of every iteration ('paper').", low=1, high=1_000_000, log=True)
    schedule: str = param(
        "choice", "refine", "'refine': the last iteration gets final_share of the budget and only the finest "
        "variation scales (" + _STUDY + "); 'paper': one σ for every iteration and T, α, n_s as in Section 6 "
        "and Theorem 4.1.", choices=SCHEDULES)
    final_share: float | None = param(
        "float", None, "Share of the Gaussian-DP budget μ² given to the last iteration ('refine' only). Default "
        f"{REFINE_FINAL_SHARE} (" + _STUDY + "); 1/T is the paper's equal split.", low=0.01, high=0.99,
        advanced=True)
    refine_levels: int | None = param(
        "int", None, "How many of the finest Eq. (1) scales the last iteration uses ('refine' only). Default "
        f"min(L, {REFINE_LEVELS}) (" + _STUDY + ").", low=1, high=64, advanced=True)
    final_grid: float | None = param(
        "float", None, "'refine' only: the last iteration votes on the cells of a grid of this side, in multiples of "
        "its finest variation scale, that its variations fall in, and the release spreads each cell's points over "
        f"it; 0 = on the variations themselves. Default {REFINE_GRID:g} (docs/private-evolution.md).", low=0.0,
        high=100.0, advanced=True)
    release: str = param(
        "choice", "histogram", "What is released: 'histogram' = n_release points rounded from the last privatised "
        "histogram (post-processing of Algorithm 2, line 8); 'samples' = S_T, the n_s points sampled from it "
        "(Algorithm 2, line 9, as in the paper).", choices=RELEASES)
    n_release: int | None = param(
        "int", None, "Released points with release='histogram' (largest-remainder rounding). Default: the public "
        "or noisy n, capped at dpsynth_core.limits max_synthetic_rows.", low=1,
        high=limits.DEFAULTS.max_synthetic_rows, advanced=True, check=_check_n_release)
    histogram: str = param(
        "choice", "dbl", "Post-processing of the noisy votes: the closest probability vector in bounded-Lipschitz "
        "distance (Algorithm 2; exact up to 400 candidates, on their 16-nearest-neighbour graph beyond), Gaussian "
        "+ threshold H and renormalise (Algorithm 3), or Laplace on positive votes + stability threshold "
        "(Section 4.2).", choices=HISTOGRAMS)
    threshold: float = param(
        "float", 0.0, "Threshold H on the normalised noisy histogram ('threshold' only); H = 0 in Section 6.",
        low=0.0, high=1.0)
    alpha: float | None = param(
        "float", None, "Smallest variation radius α of Eq. (1), unit-cube units; default D σ^{1/max(d,2)} "
        "(Theorem 4.1) with σ the last iteration's noise on counts/n.", low=1e-6, high=10.0, log=True,
        advanced=True)
    init: str = param(
        "choice", "uniform", "Random API for S_0: n_s points uniform over the region, the public dataset (subsampled "
        "to n_s rows), a single point at the domain's origin (its centre when the origin is outside the region); "
        "'private' (S_0 = S) and 'interpolate' (S_0 = c + (1-2β)(S - c)) are non-private teaching starts that "
        "need allow_nonprivate_init and X in memory (the release then has is_dp=False).", choices=INITS)
    beta: float = param(
        "float", 0.25, "β of the 'interpolate' start S_0 = (1-2β)S about the origin (Figure 2).", low=0.0,
        high=1.0, advanced=True)
    region: str = param(
        "choice", "box", "Working region: the domain box, or the l2 ball inscribed in it (the paper's setting).",
        choices=REGIONS)
    metric: str = param(
        "choice", "auto", "Distance of the nearest-neighbour votes: 'auto' = l2 (Theorem 4.1) on a numeric table, "
        "l_inf with categorical columns (the mixed metric max(||u_x - u_y||_inf, max_j w_j [c_xj != c_yj]), "
        "docs/mixed-data.md); on a mixed table l2 or l1 replace l_inf on the numeric part.",
        choices=("auto",) + METRICS)
    allow_nonprivate_init: bool = param(
        "bool", False, "Allow the teaching starts that read the private data (the release is then NOT DP).",
        advanced=True)
    track_w1: bool = param(
        "bool", False, "Owner-side W1 (unit cube, 'metric') between the private data and every S_t and μ'_t, for "
        "the iterations view: exact with POT up to 4·10^6 pairs, else on a labelled subsample; not with Dask; "
        "most of a run's time when on.", advanced=True)
    cost: str = param(
        "choice", "full", "Cost of the run: 'full' = the rules above; 'interactive' = at most "
        f"{INTERACTIVE_MAX_ITERATIONS} iterations, {INTERACTIVE_MAX_SYNTHETIC} synthetic points and "
        f"{INTERACTIVE_MAX_LEVELS} variation scales, at every ε (public caps; the dashboard's page).", choices=COSTS,
        advanced=True)
    variation_scales: Any = param(
        "float", None, "The σ_l of Eq. (1) in unit-cube coordinates instead of α: one float, or (Python API) a "
        "sequence of 1 to 64 floats.", low=1e-12, high=None, advanced=True, check=_check_scales)
    public: Any = param(
        "choice", None, "Public points S_0 is drawn from with init='public' (Python API only: an array (m, d) or a "
        "DataFrame in domain units).", choices=(None,), advanced=True, check=_check_public)
    n_public: int | None = n_public_param()

    def check_domain(self, domain: Domain, owner: str) -> None:
        """The checks that involve several parameters or the domain, in the order the messages are expected."""
        super().check_domain(domain, owner)
        if self.threshold > 0 and self.histogram != "threshold":
            raise param_error(owner, "threshold", f"0 with histogram={self.histogram!r} (H applies to 'threshold' "
                              "only)", self.threshold)
        if self.init in NONPRIVATE_INITS and not self.allow_nonprivate_init:
            raise ValueError(
                f"The 'init' parameter of {owner} is {self.init!r}, a start that reads the private data and is not "
                f"differentially private. Pass allow_nonprivate_init=True to run it as a teaching example "
                f"(the release will say it is not DP).")
        if self.init == "public" and self.public is None:
            raise param_error(owner, "public", "an array of shape (m, d) when init='public'", None, kind=TypeError)
        if self.init != "public" and self.public is not None:
            raise param_error(owner, "public", "None unless init='public'", self.public)
        if self.variation_scales is not None and self.alpha is not None:
            raise param_error(owner, "alpha", "None when variation_scales is given", self.alpha)
        if self.public is not None:
            domain.read(self.public, name="public", owner=owner)
        if self.schedule == "paper" and self.final_share is not None:
            raise param_error(owner, "final_share", "None with schedule='paper' (every iteration gets 1/T)",
                              self.final_share)
        if self.schedule == "paper" and self.final_grid is not None:
            raise param_error(owner, "final_grid", "None with schedule='paper' (the last iteration votes on its "
                              "variations)", self.final_grid)
        if self.schedule == "paper" and self.refine_levels is not None:
            raise param_error(owner, "refine_levels", "None with schedule='paper' (every iteration uses every "
                              "scale)", self.refine_levels)
        if self.cost == "interactive":
            self._check_interactive(owner)
        if self.n_release is not None:
            if self.release == "samples":
                raise param_error(owner, "n_release", "None with release='samples' (the release is S_T, "
                                  "n_synthetic points)", self.n_release)
            limits.check_rows(self.n_release, domain.d, owner=owner)


    def _check_interactive(self, owner: str) -> None:
        """cost='interactive': the values given must be within its caps (the defaults are capped in the plan)."""
        why = "with cost='interactive' (pass cost='full' for more)"
        if self.iterations is not None and self.iterations > INTERACTIVE_MAX_ITERATIONS:
            raise param_error(owner, "iterations", f"at most {INTERACTIVE_MAX_ITERATIONS} {why}", self.iterations)
        if self.n_synthetic is not None and self.n_synthetic > INTERACTIVE_MAX_SYNTHETIC:
            raise param_error(owner, "n_synthetic", f"at most {INTERACTIVE_MAX_SYNTHETIC} {why}", self.n_synthetic)
        if self.variation_scales is not None and np.size(self.variation_scales) > INTERACTIVE_MAX_LEVELS:
            raise param_error(owner, "variation_scales", f"at most {INTERACTIVE_MAX_LEVELS} scales {why}",
                              f"{np.size(self.variation_scales)} scales")


@dataclass(frozen=True)
class PETrace(Trace):
    """Private Evolution's intermediates (all DP: functions of the privatised votes and public randomness).

    Per iteration t = 1..T (``synthetic`` also has S_0 first): ``synthetic`` the cloud S_t in domain units
    (the last entry is the release; S_0 is None for a start that reads the private data),
    ``variations`` V_t, ``noisy_histograms`` the privatised votes, ``weights`` μ'_t (None when no mass
    was kept) and ``votes_kept``. Variations and histograms are kept for every iteration while they fit
    in :data:`TRACE_MAX_VALUES` values, else for the last one only (None elsewhere). ``iterations`` T,
    ``n_synthetic`` n_s and ``levels`` L of the run.
    """

    synthetic: list
    variations: list
    noisy_histograms: list
    weights: list
    votes_kept: list
    iterations: int
    n_synthetic: int
    levels: int


@dataclass(frozen=True)
class PEOwner(OwnerView):
    """Owner view (NOT DP): the true votes of every iteration (``clean_histograms``); the W1 between the
    private data and S_0..S_T (``w1``, the last entry is the release) and each μ'_t (``w1_histograms``), in
    unit-cube coordinates and the vote metric (``w1_metric``), how it was computed (``w1_method``) or why
    not (``w1_note``); ``initial_synthetic`` the S_0 of a start that reads the private data."""

    clean_histograms: list
    w1: list | None
    w1_histograms: list | None
    w1_metric: str
    w1_units: str
    w1_method: str | None
    w1_note: str | None
    initial_synthetic: np.ndarray | None


# ------------------------------------------------------------------------------ the mechanism
@mechanism(
    name="private_evolution",
    title="Private Evolution (nearest-neighbour votes on variations)",
    paper="González, Fanti, Ramdas, Private Evolution converges (2025) [GFR25]",
    algorithm="[GFR25] Algorithms 2-4, Eq. (1), Theorem 4.1, Section 4.2",
    dp="approximate",
    neighbours=("add_remove", "replace"),
    needs_delta=True,
    categorical=True,
    config=PEConfig,
    theory=Theory(proven=False),
    summary="Iteratively moves a synthetic cloud towards the data with privatised nearest-neighbour votes on "
            "Gaussian variations; T Gaussian histograms composed exactly (μ-GDP), most of the budget on the last.",
)
def private_evolution(p: Prepared[PEConfig]) -> Release[PETrace, PEOwner]:
    """Private Evolution [GFR25, Algorithms 2–4] with the variation API of [GFR25, Eq. (1)].

    For t = 1..T:

    .. math:: V_t = \\mathrm{Var}(S_{t-1}),\\quad \\tilde c_t = \\mathrm{NN}(S, V_t) + \\mathcal N(0, \\sigma_t^2 I),
              \\quad \\mu'_t = \\mathrm{post}(\\tilde c_t),\\quad S_t \\sim (\\mu'_t)^{n_s}

    with :math:`\\sigma_t = \\Delta_2 / (\\mu(\\varepsilon, \\delta)\\sqrt{s_t})`, shares s_t summing to 1
    (exact μ-GDP composition; Δ_2 = 1 add/remove, √2 replace). The release rounds μ'_T to n_release
    points (``release="histogram"``) or is S_T (``"samples"``).

    Parameters
    ----------
    X : array (n, d), DataFrame, Dask array or Dask DataFrame; domain : Domain (public bounds)
        Private data in domain units; points outside the region are projected into it. A Dask
        collection is read one partition at a time, one pass per iteration (module docstring).
    epsilon : float in (0, inf); delta : float in (0, 1); neighbours : {"add_remove", "replace"}
        The budget of the release. Rules that need n read the public n (replace, ``n_public``) or a noisy size
        (add/remove; 5% of ε, on the ledger).
    iterations, n_synthetic, schedule, final_share, refine_levels, final_grid, release, n_release, histogram,
    threshold, alpha, init, beta, region, metric, allow_nonprivate_init, track_w1, cost, variation_scales, public,
    n_public
        Declared in :class:`PEConfig` (listed below); the schedules, the releases and the post-processings of the
        votes are in the module docstring and docs/private-evolution.md.

    Returns
    -------
    Release[PETrace, PEOwner]
        ``synthetic`` (n_release or n_s, d); ``params`` with the resolved T, σ_t, shares, scales,
        n_s, n_release...; ``trace`` (:class:`PETrace`) with per-iteration ``synthetic`` (domain units;
        the last entry is the release), ``variations``, ``noisy_histograms``, ``weights``; ``owner``
        (:class:`PEOwner`, not DP) with ``clean_histograms``, ``w1`` and ``w1_histograms``.

    Notes
    -----
    When a post-processing keeps no mass, the iteration keeps S_{t-1} (post-processing) and says so.
    ``bound`` is None: Theorem 4.1 is an Õ rate with unspecified constants (``params["theorem_4_1_rate"]``).

    References
    ----------
    .. [GFR25] T. González, G. Fanti, A. Ramdas. Private Evolution Converges. arXiv:2506.08312, 2025.
    .. [DRS22] J. Dong, A. Roth, W. J. Su. Gaussian Differential Privacy. JRSS B 84(1), 2022.
    See docs/references.md for the full entries.
    """
    cfg = p.config
    if cfg.init in NONPRIVATE_INITS and p.rows.dask:
        raise ValueError(
            f"The 'init' parameter of {OWNER} is {cfg.init!r}, a teaching start that copies the private rows into "
            f"S_0: it needs X in memory (a NumPy array or a pandas DataFrame), and X is a Dask collection, read "
            f"only through per-record sums. Use init='uniform', 'public' or 'origin', or pass X in memory.")
    ledger = Ledger()
    plan = _plan(p, ledger)
    _account(p, plan, ledger)
    U_owner = None  # the private data in the working region (owner-side; in memory only)
    if not p.rows.dask and (cfg.track_w1 or cfg.init in NONPRIVATE_INITS):
        U_owner = _into_region(p.U.copy(), cfg.region, p.domain)
    S0 = _start(p, plan, U_owner)
    run = _evolve(p, plan, S0, U_owner, _to_domain(p.domain, encoded=True))
    return _release(p, plan, run, ledger)


# ------------------------------------------------------------------------------ the steps
@dataclass(frozen=True)
class _Plan:
    """Every resolved quantity of a run: public inputs, or functions of them and of a DP size."""

    size: SizeEstimate | None
    epsilon: float  # the budget of the iterations (ε minus a noisy size's share)
    shares: tuple[float, ...]  # of μ² (Gaussian) or of (ε, δ) (laplace_threshold), one per iteration
    sigmas: tuple[float, ...]  # Gaussian noise on the counts (the reference scale for laplace_threshold)
    scales: np.ndarray  # Eq. (1) scales of the exploration iterations
    final_scales: np.ndarray  # the scales of the last iteration
    alpha: float | None
    n_synthetic: int
    n_release: int | None
    release_cap: dict | None  # limits.cap_rows record when the default output size was capped
    diameter: float
    sensitivity: float
    count_thresholds: tuple | None  # "threshold": H n; "laplace_threshold": the integer count thresholds
    laplace_scales: tuple[float, ...] | None
    norm: str  # the resolved vote metric ("l2", "l1", "linf"; on the numeric part of a mixed table)
    metric: str | MixedMetric  # what the votes, the projection and the owner's W1 measure with
    grid_side: float | None = None  # the last iteration's grid (unit cube), None: it votes on its variations

    @property
    def iterations(self) -> int:
        return len(self.shares)

    @property
    def levels(self) -> int:
        return int(self.scales.size)

    def scales_at(self, t: int) -> np.ndarray:
        return self.final_scales if t == self.iterations else self.scales


def _size(p: Prepared[PEConfig], ledger: Ledger) -> SizeEstimate | None:
    """The dataset size, when a default depends on it (public under replace, or a noisy size on the ledger)."""
    cfg = p.config
    needs_n = (cfg.iterations is None or cfg.n_synthetic is None
               or (cfg.variation_scales is None and cfg.alpha is None) or cfg.threshold > 0
               or cfg.histogram == "dbl" or (cfg.release == "histogram" and cfg.n_release is None))
    if not needs_n:
        if cfg.n_public is not None:
            check_n_public(cfg.n_public, OWNER)
        return None
    size = resolve_size(p.n, epsilon=p.epsilon, neighbours=p.neighbours, n_public=cfg.n_public, rng=p.rng,
                        owner=OWNER)
    if size.epsilon_spent:
        ledger.add("noisy size n (discrete Laplace, for the defaults and the normalisation)", size.epsilon_spent)
    return size


def _plan(p: Prepared[PEConfig], ledger: Ledger) -> _Plan:
    """T, the shares and σ_t, the variation scales, n_s and the output size (the schedule's rules,
    docs/private-evolution.md), checked against the resource limits before anything is allocated."""
    cfg = p.config
    d = p.domain.k  # the rules' dimension: the numeric columns the variations move (all columns if numeric)
    norm = ("linf" if p.domain.is_mixed else "l2") if cfg.metric == "auto" else cfg.metric
    metric = MixedMetric.of(p.domain, norm) if p.domain.is_mixed else norm
    size = _size(p, ledger)
    n_used = None if size is None else size.n
    eps = p.epsilon - ledger.epsilon
    refine = cfg.schedule == "refine"
    interactive = cfg.cost == "interactive"
    T = cfg.iterations
    if T is None:
        T = refine_iterations(n_used, eps) if refine else default_iterations(n_used, eps)
        T = min(T, INTERACTIVE_MAX_ITERATIONS) if interactive else T
    shares = budget_shares(T, cfg.schedule, cfg.final_share)
    sigmas = iteration_sigmas(eps, p.delta, p.neighbours, shares)
    diameter = metric.diameter(cfg.region) if p.domain.is_mixed else region_diameter(cfg.region, d, norm)
    alpha_used, scales = _scales(cfg, None if n_used is None else sigmas[-1] / n_used, diameter, d)
    L = int(scales.size)
    final_scales = scales[:min(L, cfg.refine_levels or REFINE_LEVELS)] if refine else scales
    # Theorem 4.1's n_s with the noise of the iterations that move the cloud (all but the last under refine),
    # under refine at most n: the n votes reach at most n of the candidates, more points only add noise
    n_s = cfg.n_synthetic
    if n_s is None:
        n_s = default_n_synthetic(sigmas[0] / n_used, L, d)
        n_s = min(n_s, max(1, n_used)) if refine else n_s
        n_s = min(n_s, INTERACTIVE_MAX_SYNTHETIC) if interactive else n_s
    _check_candidates(T, n_s, L, p.domain.d, cfg)
    n_out, cap = None, None
    if cfg.release == "histogram":
        n_out = cfg.n_release
        if n_out is None:  # the public or DP size: capping it is post-processing
            n_out, cap = limits.cap_rows(size.n, source=f"n from {size.source}", d=p.domain.d)
    lap, thr = _thresholds(p, eps, shares, n_used)
    factor = (REFINE_GRID if cfg.final_grid is None else cfg.final_grid) if refine else 0.0
    side = None if factor <= 0 else 1.0 / max(1, math.ceil(1.0 / (factor * float(final_scales[0])) - 1e-12))
    return _Plan(size, eps, shares, sigmas, scales, final_scales, alpha_used, n_s, n_out, cap, diameter,
                 pe_l2_sensitivity(p.neighbours), thr, lap, norm, metric, side)


def _scales(cfg: PEConfig, sigma_normalised: float | None, diameter: float, d: int) -> tuple[float | None, np.ndarray]:
    """α (None when ``variation_scales`` are given) and the Eq. (1) scales. The default α is Theorem 4.1's
    D σ^{1/max(d,2)} with the noise σ of the iteration that makes the release; with cost='interactive' it is
    at least D 2^-L_max, so that there are at most :data:`INTERACTIVE_MAX_LEVELS` scales (an α given smaller
    is refused)."""
    if cfg.variation_scales is not None:
        return None, np.asarray(cfg.variation_scales, dtype=np.float64)
    alpha = cfg.alpha if cfg.alpha is not None else default_alpha(sigma_normalised, diameter, d)
    if cfg.cost == "interactive":
        floor = diameter * 2.0 ** -INTERACTIVE_MAX_LEVELS
        if cfg.alpha is not None and cfg.alpha < floor:
            raise param_error(OWNER, "alpha", f"at least D 2^-{INTERACTIVE_MAX_LEVELS} = {floor:.4g} with "
                              "cost='interactive' (at most that many variation scales; pass cost='full' for more)",
                              cfg.alpha)
        alpha = max(alpha, floor)
    return alpha, variation_scales_eq1(min(alpha, diameter), diameter, d)


def _check_candidates(T: int, n_s: int, L: int, d: int, cfg: PEConfig) -> None:
    """Resource limit (dpsynth_core.limits max_candidates), checked before S_0 and the variations exist:
    T iterations of n_s (2L+1) variation points of d coordinates. T, n_s and L come from public inputs
    and the size estimate (public, or a DP noisy size): refusing is post-processing."""
    planned = T * n_s * (2 * L + 1) * d
    blame = "n_synthetic" if cfg.n_synthetic is not None else "iterations" if cfg.iterations is not None else "alpha"
    limits.check_planned(planned, "max_candidates", owner=OWNER, param=blame, what="candidate coordinates",
                         fix="pass a smaller n_synthetic, fewer iterations, or a larger alpha (fewer variation "
                             "scales L)",
                         got=f"{T} iterations x {n_s} points x {2 * L + 1} variations x d={d} = {planned}")


def _thresholds(p: Prepared[PEConfig], eps: float, shares, n_used) -> tuple[tuple | None, tuple | None]:
    """laplace_threshold: each iteration's (ε s_t, δ s_t) calibration; threshold: H n (one per iteration)."""
    cfg = p.config
    T = len(shares)
    if cfg.histogram == "laplace_threshold":
        pairs = [laplace_count_threshold(eps * s, p.delta * s, p.neighbours) for s in shares]
        return tuple(b for b, _ in pairs), tuple(c for _, c in pairs)
    if cfg.histogram == "threshold":
        return None, (cfg.threshold * n_used if cfg.threshold > 0 else 0.0,) * T
    return None, None


def _account(p: Prepared[PEConfig], plan: _Plan, ledger: Ledger) -> None:
    """One ledger entry per iteration and the note saying how they compose."""
    T, eps, dlt = plan.iterations, plan.epsilon, p.delta
    equal = len(set(plan.shares)) == 1
    if p.config.histogram == "laplace_threshold":
        for t, s in enumerate(plan.shares, start=1):
            ledger.add(f"iteration {t}: Laplace + threshold NN histogram (scale {plan.laplace_scales[t - 1]:.4g}, "
                       f"keep counts >= {plan.count_thresholds[t - 1]})", eps * s, dlt * s)
        split = "(ε/T, δ/T)" if equal else "(ε s_t, δ s_t)"
        ledger.note = (f"Each iteration is an {split}-DP stability-based histogram ([GFR25, Proposition 4.1]; "
                       f"[Vad17, Theorem 3.5]; discrete Laplace noise on positive counts, then a threshold); the "
                       f"T = {T} iterations compose by basic composition.")
    else:
        for t, (s, sigma) in enumerate(zip(plan.shares, plan.sigmas, strict=True), start=1):
            ledger.add(f"iteration {t}: Gaussian NN histogram (σ = {sigma:.4g} on counts)", eps * s, dlt * s)
        sens2 = plan.sensitivity
        mu = math.sqrt(math.fsum((sens2 / sigma) ** 2 for sigma in plan.sigmas))
        if equal:
            ledger.note = (f"Exact composition: the T = {T} Gaussian histograms (l2 sensitivity {sens2:.4g}, σ = "
                           f"{plan.sigmas[0]:.4g}) are together μ-GDP with μ = √T·Δ/σ = {mu:.4g}, which implies "
                           f"({eps:.4g}, {dlt:.3g})-DP. The per-iteration entries are the equal shares ε/T, δ/T "
                           f"of that exact total, not separate guarantees.")
        else:
            ledger.note = (f"Exact composition: the T = {T} Gaussian histograms (l2 sensitivity {sens2:.4g}, σ_t = "
                           f"{', '.join(f'{x:.4g}' for x in plan.sigmas)}) are together μ-GDP with μ = "
                           f"(Σ_t (Δ/σ_t)²)^(1/2) = {mu:.4g}, which implies ({eps:.4g}, {dlt:.3g})-DP. The "
                           f"per-iteration entries are the shares s_t = (μ_t/μ)² of that exact total, not separate "
                           f"guarantees.")
    if plan.size is not None and plan.size.epsilon_spent:
        ledger.note += " The noisy size is pure DP and composes with the rest by basic composition."


def _start(p: Prepared[PEConfig], plan: _Plan, U_owner: np.ndarray | None) -> np.ndarray:
    """S_0 in unit-cube coordinates: the Random API, a public dataset, the origin, or a teaching start."""
    cfg, domain = p.config, p.domain
    anchor = _anchor(domain, cfg.region)
    if cfg.init == "uniform":
        if domain.is_mixed:
            return mixed_uniform(plan.n_synthetic, domain.d, cfg.region, p.rng, plan.metric)
        return uniform_in_region(plan.n_synthetic, domain.d, cfg.region, p.rng)
    if cfg.init == "public":
        pub = _into_region(domain.to_unit(domain.read(cfg.public, name="public", owner=OWNER), owner=OWNER),
                           cfg.region, domain)
        if pub.shape[0] > plan.n_synthetic:
            pub = pub[p.rng.choice(pub.shape[0], size=plan.n_synthetic, replace=False)]
        return pub.copy()
    if cfg.init == "origin":
        return anchor[None, :].copy()
    if cfg.init == "private":
        return U_owner.copy()
    S0 = U_owner.copy()
    num = domain.numeric_index if domain.is_mixed else slice(None)  # categories stay the private rows' own
    S0[:, num] = project_into_region(anchor[num] + (1.0 - 2.0 * cfg.beta) * (U_owner[:, num] - anchor[num]),
                                     cfg.region)
    return S0


def _anchor(domain: Domain, region: str) -> np.ndarray:
    """The domain's origin in unit-cube coordinates, or the centre when the origin is outside the region
    (encoded row of a mixed table: every categorical column at its first declared category)."""
    anchor = domain.to_unit(np.zeros((1, domain.d)), owner=OWNER)[0]
    num = domain.numeric_index if domain.is_mixed else np.arange(domain.d)
    inside = bool(np.all(np.asarray(domain.lower) <= 0) and np.all(np.asarray(domain.upper) >= 0)
                  and in_region(anchor[num], region))
    if not inside:
        anchor[num] = 0.5
    return anchor


def _into_region(U: np.ndarray, region: str, domain: Domain) -> np.ndarray:
    """Unit rows projected into the working region (numeric columns only on a mixed table); in place."""
    if domain.is_mixed:
        U[:, domain.numeric_index] = project_into_region(U[:, domain.numeric_index], region)
        return U
    return project_into_region(U, region)


@dataclass
class _Run:
    """What the iterations leave behind: the last cloud, the release, the per-iteration trace."""

    S: np.ndarray
    keep_all: bool
    released: np.ndarray | None = None
    measure: tuple | None = None  # (V, weights, on grid cells?) of the last iteration that kept votes
    synthetic: list = field(default_factory=list)
    variations: list = field(default_factory=list)
    noisy: list = field(default_factory=list)
    weights: list = field(default_factory=list)
    clean: list = field(default_factory=list)
    kept: list = field(default_factory=list)
    w1: list | None = None
    w1_histograms: list | None = None
    w1_method: str | None = None
    w1_note: str | None = None
    initial_private: np.ndarray | None = None

    def record(self, last: bool, to_dom, V, counts, noisy, weights) -> None:
        full = self.keep_all or last
        self.variations.append(to_dom(V) if full else None)
        self.noisy.append(noisy if full else None)
        self.weights.append(weights if full else None)
        self.clean.append(counts if full else None)
        self.kept.append(weights is not None)
        self.synthetic.append(to_dom(self.released if last and self.released is not None else self.S))


def _evolve(p: Prepared[PEConfig], plan: _Plan, S: np.ndarray, U_owner, to_dom) -> _Run:
    """The T iterations [GFR25, Algorithms 2-3]: variations, votes, privatised votes, resampling; the
    last one ends in the release."""
    cfg = p.config
    T = plan.iterations
    v_size = plan.n_synthetic * (2 * plan.levels + 1)
    nonprivate = cfg.init in NONPRIVATE_INITS
    run = _Run(S=S, keep_all=T * v_size * (p.domain.d + 3) <= TRACE_MAX_VALUES,
               initial_private=to_dom(S) if nonprivate else None)  # reads the private data: owner-side only
    run.synthetic.append(None if nonprivate else to_dom(S))
    w1 = _W1Tracker(cfg, plan.metric, U_owner, run, S)
    for t in range(1, T + 1):
        V, counts, noisy, weights = _iteration(p, plan, run.S, t)
        if weights is not None:  # else every vote was removed: no information, keep S_{t-1} (post-processing)
            run.measure = (V, weights, t == T and plan.grid_side is not None)
            if t < T or cfg.release == "samples":
                run.S = V[p.rng.choice(V.shape[0], size=plan.n_synthetic, p=weights)]
        if t == T and cfg.release == "histogram":
            run.released = _round_measure(run, plan, p)
        run.record(t == T, to_dom, V, counts, noisy, weights)
        w1.after(t == T, V, weights)
    if run.released is None:
        run.released = run.S
    return run


def _round_measure(run: _Run, plan: _Plan, p: Prepared[PEConfig]) -> np.ndarray:
    """The release of ``release="histogram"``: n_release points, ``largest_remainder`` counts of the last
    privatised histogram μ'_T on its candidates (or of the last one that kept votes; the current cloud when
    none did); when the last iteration voted on grid cells, each point is placed uniformly in its cell. A
    function of the privatised votes and public randomness: post-processing."""
    V, weights, cells = run.measure if run.measure is not None else (run.S, np.ones(run.S.shape[0]), False)
    counts = largest_remainder(weights, plan.n_release)
    points = np.repeat(V, counts, axis=0)
    if not cells:
        return points
    num = p.domain.numeric_index if p.domain.is_mixed else None
    return spread_in_cells(points, plan.grid_side, p.rng, p.config.region, num)


class _W1Tracker:
    """Owner-side W1 between the private data and every S_t (the release at T) and every μ'_t."""

    def __init__(self, cfg: PEConfig, metric: str | MixedMetric, U_owner, run: _Run, S0: np.ndarray) -> None:
        self.U, self.metric, self.run = U_owner, metric, run
        self.diag_rng = np.random.default_rng(0)  # owner-side diagnostics never touch the release's generator
        self.on = cfg.track_w1 and U_owner is not None
        if cfg.track_w1 and U_owner is None:
            run.w1_note = ("not computed: X is a Dask collection, read only through per-record sums, and the W1 to "
                           "the private data needs all the rows in memory")
        if self.on:
            w, run.w1_method = _owner_w1(U_owner, S0, self.metric, self.diag_rng)
            run.w1, run.w1_histograms = [w], []

    def after(self, last: bool, V: np.ndarray, weights: np.ndarray | None) -> None:
        if not self.on:
            return
        run = self.run
        if last and run.released is not None:
            pts, counts = np.unique(run.released, axis=0, return_counts=True)
            run.w1.append(_owner_w1(self.U, pts, self.metric, self.diag_rng, counts.astype(float))[0])
        else:
            run.w1.append(_owner_w1(self.U, run.S, self.metric, self.diag_rng)[0])
        run.w1_histograms.append(None if weights is None else
                                 _owner_w1(self.U, V, self.metric, self.diag_rng, weights)[0])


def _iteration(p: Prepared[PEConfig], plan: _Plan, S: np.ndarray, t: int):
    """Iteration t: V_t = Var(S_{t-1}) (Eq. 1), the votes (Algorithm 4, the one pass over the private
    rows), the privatised votes and their post-processing into weights (None when no mass is kept)."""
    cfg = p.config
    if p.domain.is_mixed:
        V = mixed_variation_api(S, plan.scales_at(t), cfg.region, p.rng, plan.metric)
    else:
        V = variation_api(S, plan.scales_at(t), cfg.region, p.rng)
    if t == plan.iterations and plan.grid_side is not None:  # the cells the variations fall in (post-processing)
        num = p.domain.numeric_index if p.domain.is_mixed else None
        V, _ = snap_to_grid(V, plan.grid_side, num)
        if cfg.region == "ball":
            V[:, slice(None) if num is None else num] = project_into_region(
                V[:, slice(None) if num is None else num], "ball")
    counts = p.rows.sum(nn_votes, V, cfg.region, plan.metric)  # what the release reads of the private data
    if cfg.histogram == "laplace_threshold":
        noisy = laplace_threshold_counts(counts, plan.laplace_scales[t - 1], plan.count_thresholds[t - 1], p.rng)
        return V, counts, noisy, threshold_weights(noisy, 1)
    noisy = gaussian_noisy_counts(counts, plan.sigmas[t - 1], p.rng)
    if cfg.histogram == "threshold":
        return V, counts, noisy, threshold_weights(noisy, plan.count_thresholds[t - 1])
    return V, counts, noisy, bl_weights(noisy / plan.size.n, V, plan.metric)


def _release(p: Prepared[PEConfig], plan: _Plan, run: _Run, ledger: Ledger) -> Release[PETrace, PEOwner]:
    """The Release: the released points in domain units, the resolved parameters, the typed trace and owner view."""
    cfg = p.config
    trace = PETrace(synthetic=run.synthetic, variations=run.variations, noisy_histograms=run.noisy,
                    weights=run.weights, votes_kept=run.kept, iterations=plan.iterations,
                    n_synthetic=plan.n_synthetic, levels=plan.levels)
    owner = PEOwner(n=p.n, n_clamped=p.n_clamped, clean_histograms=run.clean, w1=run.w1,
                    w1_histograms=run.w1_histograms, w1_metric=_metric_name(plan), w1_units="unit cube",
                    w1_method=run.w1_method, w1_note=run.w1_note, initial_synthetic=run.initial_private)
    # a capped default output size is recorded by _params and _notes (it is n_release, not n_synthetic)
    return p.finish(_to_domain(p.domain)(run.released), ledger=ledger, trace=trace, owner=owner,
                    params=_params(p, plan), bound=None,
                    bound_kind="none: Theorem 4.1 is an Õ rate with unspecified constants (see "
                               "params['theorem_4_1_rate'])", bound_type=BoundKind.RATE,
                    notes=_notes(cfg, plan, run), is_dp=cfg.init not in NONPRIVATE_INITS)


def _notes(cfg: PEConfig, plan: _Plan, run: _Run) -> list[str]:
    notes = []
    if cfg.init in NONPRIVATE_INITS:
        notes.append(f"NOT differentially private: init={cfg.init!r} reads the private data (teaching run). The "
                     f"ledger shows what the iterations alone would cost; the release guarantees nothing.")
    if not all(run.kept):
        notes.append(f"{run.kept.count(False)} iteration(s) lost every vote to the threshold and kept S_(t-1).")
    if not run.keep_all:
        notes.append("Trace keeps variations and histograms for the last iteration only (memory bound).")
    if plan.release_cap is not None:
        notes.append(limits.cap_note(plan.release_cap, OWNER))
    return notes


def _params(p: Prepared[PEConfig], plan: _Plan) -> dict:
    """The resolved parameters (public or DP values only)."""
    cfg = p.config
    n_used = None if plan.size is None else plan.size.n
    gaussian = cfg.histogram != "laplace_threshold"
    equal = len(set(plan.sigmas)) == 1
    sigma_used = plan.sigmas[-1] if gaussian and equal else None
    params = {
        "iterations": plan.iterations,
        "schedule": cfg.schedule,
        "budget_shares": list(plan.shares),
        "sigma": sigma_used,
        "sigmas": list(plan.sigmas) if gaussian else None,
        "sigma_normalised": None if (sigma_used is None or n_used is None) else sigma_used / n_used,
        "reference_sigma": plan.sigmas[-1],
        "l2_sensitivity": plan.sensitivity,
        "histogram": cfg.histogram,
        "threshold": cfg.threshold,
        "count_threshold": None if plan.count_thresholds is None else plan.count_thresholds[-1],
        "laplace_scale": None if plan.laplace_scales is None else plan.laplace_scales[-1],
        "alpha": plan.alpha,
        "variation_scales": [float(s) for s in plan.scales],
        "final_scales": [float(s) for s in plan.final_scales],
        "levels": plan.levels,
        "variations_per_point": 2 * plan.levels + 1,
        "n_synthetic": plan.n_synthetic,
        "final_grid_side": plan.grid_side,
        "cost": cfg.cost,
        "release": cfg.release,
        "n_release": plan.n_release,
        "init": cfg.init,
        "beta": cfg.beta if cfg.init == "interpolate" else None,
        "region": cfg.region,
        "metric": plan.norm,
        "diameter": plan.diameter,
        "size": None if plan.size is None else plan.size.to_dict(),
        "theorem_4_1_rate": None if n_used is None else theorem_4_1_rate(n_used, plan.epsilon, p.delta,
                                                                          p.domain.d, plan.diameter),
    }
    if p.domain.is_mixed:  # how the categories were handled (a mixed table only: numeric records are unchanged)
        params["categorical"] = {
            "metric": f"max(||u_x - u_y||_{plan.norm[1:]}, max_j w_j [c_xj != c_yj])",
            "weights": list(p.domain.weights),
            "variation": "each categorical column redrawn uniformly among its declared categories with "
                         "probability min(1, sigma_l / w_j) at scale sigma_l",
            "start": {"uniform": "categories uniform among the declared ones", "origin": "first declared category",
                      "public": "the public rows' categories"}.get(cfg.init, "the private rows' categories"),
        }
    if plan.release_cap is not None:  # the default output size was capped (dpsynth_core.limits)
        params["limits"] = plan.release_cap
    return params


def _metric_name(plan: _Plan) -> str:
    if isinstance(plan.metric, MixedMetric):
        return f"mixed (numeric {plan.norm}, categories weighted)"
    return plan.norm


def _to_domain(domain: Domain, *, encoded: bool = False):
    """Unit rows to domain units: an array (numeric table); on a mixed table a DataFrame with the
    declared categories, or with ``encoded`` the encoded array (numeric values and category indices:
    the trace's per-iteration clouds, ``domain.read`` of the frames)."""
    lo, hi = domain.lower_array, domain.upper_array
    if not domain.is_mixed:
        return lambda P: np.clip(domain.from_unit(P), lo, hi)
    num = domain.numeric_index

    def f(P: np.ndarray):
        E = np.array(P, dtype=np.float64)
        E[:, num] = np.clip(lo + np.clip(E[:, num], 0.0, 1.0) * domain.widths, lo, hi)
        return E if encoded else domain.from_unit(np.array(P, dtype=np.float64))

    return f
