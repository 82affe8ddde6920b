"""Step 4 of [DLS+24, Algorithm 1]: the certificate of Eq. (4) (Lemma 1) and its Monte Carlo quantile.

* The privatisation quantile: :func:`mc_order` (the order statistic a fresh draw exceeds with
  probability at most δ) and :func:`quantile_high`; for U_T the exact quantile of
  :func:`ut_quantile` solves only the draws and blocks that decide it, within a solve budget planned
  beforehand by :func:`ut_solve_plan` (:func:`default_k_within_budget` lowers the default grid until the
  plan fits).
* The projection term: :func:`support_discretisation` (the support term
  :math:`\\mathcal U(T^{-1}T\\mu, \\mu)`), :func:`kr_grid_points` and :func:`direct_projection` (the
  exact KR term of the consistent U_T certificate).
* :func:`certificate_terms`: the terms of one certificate and their sum.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...grid import cell_centres
from ...transport.marginals import unique_weighted
from .consistency import consistent_part
from .mixed import DENSE_MIXED_MAX
from .proxies import SolveBudget, emd_value, proxy_lt, solve_cost, ut_block_max, ut_bounds, ut_exact
from .query import Grid, haar_block_noise, path_rank

__all__ = ["CERTIFICATES", "DIRECT_MAX_NODES", "mc_order", "quantile_high", "ut_solve_plan", "ut_quantile",
           "default_k_within_budget", "support_discretisation", "kr_grid_points", "direct_projection",
           "CertificateTerms", "certificate_terms", "NoiseDraws", "noise_draws", "plan_quantiles", "Fit", "fit",
           "Noisy", "Certificates", "certify", "section_5_3", "lt_of", "block_max"]

#: Proxy losses a certificate can use (``certificate=...``; also the Step 3 choices).
CERTIFICATES: tuple[str, ...] = ("U_T", "L_T")
#: Largest number of transport nodes for the exact unsnapped projection term (:func:`kr_grid_points`).
DIRECT_MAX_NODES = 3000


# ------------------------------------------------------------------- the Monte Carlo quantile
def mc_order(M: int, delta: float, owner: str = "mc_order") -> int:
    """The order statistic j = ⌈(1-δ)(M+1)⌉ whose j-th smallest of M Monte Carlo draws bounds a fresh draw
    with probability at least 1-δ; refuses when j > M (too few draws for δ).

    Let :math:`Z_0` be the privatisation term of the release (:math:`\\mathcal G(\\eta)` or
    :math:`\\mathcal G(\\Pi\\eta)` of the noise actually added) and :math:`Z_1, \\dots, Z_M` the same
    function of M fresh draws of the noise law. The M + 1 values are i.i.d., hence exchangeable, so
    for continuous draws the rank of :math:`Z_0` among them is uniform on {1, ..., M+1} and

    .. math:: P\\big(Z_0 > Z_{(j)}\\big) = P(\\text{rank of } Z_0 > j) = \\frac{M + 1 - j}{M + 1} \\le \\delta
              \\iff j \\ge (1-\\delta)(M+1),

    with :math:`Z_{(j)}` the j-th smallest of the M fresh draws; ties only lower the left side. The
    probability is over the release's noise and the Monte Carlo draws together, which is what the
    certificate's statement (Eq. (4) via Lemma 1, [DLS+24]) needs: exactly at most δ, not
    approximately. The smallest such j is ⌈(1-δ)(M+1)⌉; it exists among M draws only when
    :math:`M \\ge (1-\\delta)/\\delta`. (The ⌈(1-δ)M⌉-th draw, the plain empirical quantile, is exceeded
    with probability (M+1-⌈(1-δ)M⌉)/(M+1), e.g. 21/201 ≈ 0.104 > 0.1 at M = 200, δ = 0.1.)
    See docs/sparse-marginals.md, "Step 4: certificate", and docs/deviations.md §9.

    References
    ----------
    .. [DLS+24] K. Donhauser, J. Lokna, A. Sanyal, M. Boedihardjo, R. Hönig, F. Yang. Certified private data
       release for sparse Lipschitz functions. AISTATS 2024. See docs/references.md.
    """
    M = int(M)
    j = math.ceil((1.0 - float(delta)) * (M + 1) - 1e-12)
    if j > M:
        need = math.ceil((1.0 - float(delta)) / float(delta) - 1e-12)
        raise ValueError(
            f"The 'mc_draws' parameter of {owner} must be at least {need} for delta_cert={float(delta):g}: the "
            f"certificate uses the ⌈(1-δ)(M+1)⌉-th smallest of M Monte Carlo draws, which needs "
            f"M >= (1-δ)/δ. Got {M}; pass more mc_draws or a larger delta_cert.")
    return max(1, j)


def quantile_high(samples: np.ndarray, delta: float) -> float:
    """The ⌈(1-δ)(M+1)⌉-th smallest of M samples (:func:`mc_order`): exceeded by a fresh draw of the same
    law with probability at most δ."""
    srt = np.sort(np.asarray(samples, dtype=float))
    return float(srt[mc_order(srt.size, delta) - 1])


def ut_solve_plan(w_row: np.ndarray, k: int, s: int, delta: float | None = None, *, geo: Any = None,
                  weighted: bool = False) -> int:
    """An upper bound, from the cheap bounds only (no transport solve), on what :func:`ut_quantile`
    (``delta`` given; ``w_row`` of shape (M, K, k^s)) or :func:`ut_block_max` (``delta=None``, shape
    (K, k^s)) can charge to the solve budget.

    A draw is refined only while its interval [max lb, max ub] meets the order statistic's range, which
    only narrows as draws are refined, so the draws whose initial interval meets the initial range are a
    superset of the refined ones. Within a draw, :func:`ut_block_max` solves blocks by decreasing upper
    bound and stops at the first whose upper bound is at most the best exact value; the block with the
    largest lower bound comes before any block whose upper bound is below that lower bound, so only
    blocks with ub >= max lb can be solved. One-cell and all-zero blocks cost nothing.

    ``geo`` (:class:`~.mixed.MixedBlocks`): the blocks of a mixed domain, each solve costing its own block's
    cells (blocks above :data:`~.mixed.DENSE_MIXED_MAX` are never solved). ``weighted``: each solve counted
    by its cost squared (what :func:`default_k_within_budget` estimates time with)."""
    w = np.asarray(w_row, dtype=float)
    if geo is not None:
        return _mixed_solve_plan(w, delta, geo, weighted)
    if k**s == 1:
        return 0
    lb, ub = ut_bounds(w, k, s)
    if delta is None:
        lb, ub, w = lb[None], ub[None], w[None]
    lo, hi = lb.max(axis=-1), ub.max(axis=-1)
    if delta is None:
        open_ = np.ones(lo.shape, dtype=bool)
    else:
        r = mc_order(lo.size, delta) - 1
        q_lo, q_hi = float(np.partition(lo, r)[r]), float(np.partition(hi, r)[r])
        open_ = (hi >= q_lo) & (lo <= q_hi)
    solvable = (ub >= lo[:, None]) & np.any(w != 0, axis=-1)
    return int(solvable[open_].sum()) * solve_cost(k**s)


def _open_draws(lo: np.ndarray, hi: np.ndarray, delta: float | None) -> np.ndarray:
    """The draws whose interval [max lb, max ub] meets the order statistic's initial range (all without δ)."""
    if delta is None:
        return np.ones(lo.shape, dtype=bool)
    r = mc_order(lo.size, delta) - 1
    q_lo, q_hi = float(np.partition(lo, r)[r]), float(np.partition(hi, r)[r])
    return (hi >= q_lo) & (lo <= q_hi)


def _mixed_solve_plan(w: np.ndarray, delta: float | None, geo: Any, weighted: bool) -> int:
    """:func:`ut_solve_plan` on the blocks of a mixed domain: a block's solve costs :func:`solve_cost` of its
    own cells; one-cell blocks and blocks too large for an exact solve cost nothing."""
    lb, ub = geo.ut_bounds(w if delta is not None else w[None])
    if delta is None:
        w = w[None]
    lo, hi = lb.max(axis=-1), ub.max(axis=-1)
    cost = np.array([solve_cost(int(mb)) if 1 < mb and (num or mb <= DENSE_MIXED_MAX) else 0
                     for mb, num in zip(geo.cells.tolist(), geo.numeric_block.tolist(), strict=True)])
    if weighted:
        cost = cost * cost
    solvable = (ub >= lo[:, None]) & np.any(w != 0, axis=-1)
    return int((solvable[_open_draws(lo, hi, delta)] * cost).sum())


def ut_quantile(w_row: np.ndarray, k: int, s: int, delta: float,
                 budget: SolveBudget | None = None, *, geo: Any = None) -> tuple[float, np.ndarray]:
    """The Monte Carlo (1-δ) quantile (:func:`quantile_high`, order statistic :func:`mc_order`) of :math:`\\max_S \\mathcal U_T` over the
    draws of ``w_row`` (M, K, k^s), exact, and the samples it is the order statistic of.

    Each draw's maximum lies in [max of the lower bounds, max of the upper bounds]; only the draws whose
    interval can still contain the order statistic are computed exactly (:func:`ut_block_max`), until
    it is determined. The returned samples are exact for those draws; for the others they are the
    bound on the same side of the quantile (the upper bound below it, the lower bound above it), so the
    same order statistic of the samples is the quantile. ``geo``: the blocks of a mixed domain."""
    M = w_row.shape[0]
    lb, ub = ut_bounds(w_row, k, s) if geo is None else geo.ut_bounds(w_row)
    lo, hi = lb.max(axis=-1), ub.max(axis=-1)
    exact = np.full(M, np.nan)
    known = np.zeros(M, dtype=bool)
    r = mc_order(M, delta) - 1

    def refine(t: int) -> None:
        exact[t] = (ut_block_max(w_row[t], k, s, budget, (lb[t], ub[t])) if geo is None
                    else geo.ut_block_max(w_row[t], budget, (lb[t], ub[t])))
        known[t] = True

    while True:
        lo_e = np.where(known, exact, lo)
        hi_e = np.where(known, exact, hi)
        q_lo = float(np.partition(lo_e, r)[r])
        q_hi = float(np.partition(hi_e, r)[r])
        open_ = ~known & (lo_e <= q_hi) & (hi_e >= q_lo) & ~((lo_e == hi_e) & (lo_e == q_hi))
        if q_lo == q_hi and not np.any(~known & (lo_e < q_hi) & (hi_e > q_hi)):
            break
        cand = np.flatnonzero(open_)
        if cand.size <= 4:
            picks = cand
        else:  # the undetermined draws at the order statistic of the lower and of the upper ends
            picks = {int(cand[np.argmin(np.abs(lo_e[cand] - q_lo))]), int(cand[np.argmin(np.abs(hi_e[cand] - q_hi))])}
        for t in picks:
            refine(int(t))
    q = q_hi
    samples = np.where(known, exact, np.where(hi <= q, hi, lo))
    return q, samples


def default_k_within_budget(k0: int, s: int, K: int, M: int, delta: float, n_quantiles: int, exact_total: bool,
                             rng: np.random.Generator, allowance: int, *, make_geo: Any = None) -> int:
    """The largest k <= k0 whose estimated exact-solve plan for ``n_quantiles`` U_T quantiles is at most
    ``allowance``, each solve weighted by its own cost (one solve on m cells counts ⌈m/64⌉ against the
    limit but takes time of order m², so the default stays fast; the limit itself is the unweighted count):
    :func:`ut_solve_plan` on at most 40 planning draws of the noise law (U_T and its bounds
    are positively homogeneous, so the plan does not depend on the noise scale, hence not on n or ε),
    scaled to M draws; bisection between 1 (no solve: one cell) and k0. Data-independent; the planning
    draws are not the certificate's. ``make_geo(k)``: on a mixed domain, the blocks for k and their relative
    noise scales (the plan is homogeneous in one common scale, not in the blocks' ratios)."""
    Mp = min(M, 40)
    dp = max(delta, 1.0 / (Mp + 1))

    def fits(k: int) -> bool:
        if make_geo is not None:
            geo, rel = make_geo(k)
            w = geo.to_row(geo.noise(rel, rng, draws=Mp, exact_total=exact_total))
            return n_quantiles * ut_solve_plan(w, k, s, dp, geo=geo, weighted=True) * M / Mp <= allowance
        if k**s == 1:
            return True
        _, rank = path_rank(k, s)
        w = haar_block_noise(K, k, s, 1.0, rng, draws=Mp, exact_total=exact_total)[..., rank]
        # weighted by the cost of one solve again: a dense solve on m cells takes time of order m^2
        return n_quantiles * ut_solve_plan(w, k, s, dp) * solve_cost(k**s) * M / Mp <= allowance

    if fits(k0):
        return k0
    lo, hi = 1, k0
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if fits(mid) else (lo, mid)
    return lo


# ------------------------------------------------------------------------- the projection term
def support_discretisation(points: np.ndarray, weights: np.ndarray, subsets, k: int,
                           categorical: np.ndarray | None = None) -> float:
    """:math:`\\mathcal U(T^{-1}T\\mu, \\mu) = \\max_S \\sum_j \\alpha_j \\|z_j^S - c(z_j^S)\\|_\\infty` exactly.

    Moving every point to its own cell centre is an optimal coupling: the own centre is the nearest
    centre, and every coupling moves each unit of mass at least that far. ``categorical`` (a mask of the
    columns, mixed domains): a categorical coordinate is its own cell, it moves by 0.
    """
    centre = (np.clip(np.floor(points * k), 0, k - 1) + 0.5) / k
    dev = np.abs(points - centre)
    if categorical is not None:
        dev[:, categorical] = 0.0
    return float(max(float(np.dot(weights, dev[:, list(S)].max(axis=1))) for S in subsets))


def kr_grid_points(w_row: Any, k: int, s: int, points: Any, weights: Any) -> float:
    """Exact :math:`\\|\\sum_i w_i\\delta_{c_i} - \\sum_j \\alpha_j\\delta_{p_j}\\|_{KR,0}` on ``[0,1]^s`` (l_inf).

    :math:`\\|\\nu\\|_{KR,0} = \\sup\\{\\int f\\,d\\nu : f\\ 1\\text{-Lipschitz},\\ f(0) = 0\\}` (the norm of
    Eq. (17); for zero-mass ν it is the KR norm and for the difference of two probability measures it
    is W1). c_i are the centres of :math:`T_{k,s}` (row-major), w signed; p_j points of ``[0,1]^s`` with
    weights α_j. Computed as :math:`W_1(\\nu^+, \\nu^-)` after sending the mass imbalance to the origin
    (dense transport, POT). Lipschitz functions on the finite support extend to the cube (McShane), so
    the supremum over the cube equals the one over the support.
    """
    w = np.asarray(w_row, dtype=float).ravel()
    P = np.asarray(points, dtype=float).reshape(-1, s)
    a = np.asarray(weights, dtype=float).ravel()
    cent = cell_centres(k, s)
    nz = w != 0
    pts = np.vstack([np.zeros((1, s)), cent[nz], P])
    nu = np.concatenate([[a.sum() - w.sum()], w[nz], -a])
    pos, neg = nu > 0, nu < 0
    if not pos.any() or not neg.any():
        return 0.0
    A_, B_ = nu[pos], -nu[neg]
    B_ = B_ * (A_.sum() / B_.sum())  # rounding imbalance only (the origin balances the masses)
    cost = np.max(np.abs(pts[pos][:, None, :] - pts[neg][None, :, :]), axis=2)
    return emd_value(A_, B_, np.ascontiguousarray(cost))


def direct_projection(v_row: np.ndarray, pts: np.ndarray, wts: np.ndarray, subsets, k: int, s: int, *,
                      geo: Any = None) -> np.ndarray:
    """Per block :math:`\\|T^{-1}v^S - P^S_\\#\\mu\\|_{KR,0}` for μ = Σ α_j δ_{z_j} (points merged per block);
    ``geo``: the blocks of a mixed domain (the mixed metric, :meth:`~.mixed.MixedBlocks.kr_points`)."""
    out = np.empty(len(subsets))
    for b, S in enumerate(subsets):
        Pu, wu = unique_weighted(pts[:, list(S)], wts)
        out[b] = kr_grid_points(v_row[b], k, s, Pu, wu) if geo is None else geo.kr_points(b, v_row[b], Pu, wu)
    return out


def lt_of(grid: Grid, w_path: Any, *, per_block: bool = False):
    """The proxy L_T of blocks in path order: :func:`~.proxies.proxy_lt` (Eq. (10)); on a mixed domain the
    cumulative sums weighted by the path's step lengths (Eq. (28), :attr:`~.mixed.MixedBlocks.steps`)."""
    if not grid.mixed:
        return proxy_lt(w_path, grid.k, per_block=per_block)
    vals = (np.abs(np.cumsum(np.asarray(w_path, dtype=float), axis=-1)) * grid.blocks.steps).sum(axis=-1)
    return vals if per_block else vals.max(axis=-1)


def block_max(grid: Grid, w_row: np.ndarray, budget: SolveBudget | None = None) -> float:
    """:math:`\\max_S \\mathcal U_T` of the blocks of ``w_row`` (K, m), exact (:func:`~.proxies.ut_block_max`)."""
    if not grid.mixed:
        return ut_block_max(w_row, grid.k, grid.s, budget)
    return grid.blocks.ut_block_max(w_row, budget)


def _block_exact(grid: Grid, w_row: np.ndarray, b: int, budget: SolveBudget | None) -> float:
    if not grid.mixed:
        return ut_exact(w_row, grid.k, grid.s, budget)
    return grid.blocks.ut_exact(w_row, b, budget)


# ---------------------------------------------------------------------------- the certificates
@dataclass(frozen=True)
class CertificateTerms:
    """The terms of one certificate (Eq. (4)), all differentially private (post-processing of v_DP).

    ``total = discretisation + privatisation_quantile + projection_proxy + projection_support`` and
    ``projection = projection_proxy + projection_support``. ``proxy`` names G ("L_T", "U_T", "L_T∘Π",
    "U_T∘Π"). For the consistent U_T certificate only, ``projection_kind`` says how its projection term
    was computed and ``projection_via_grid`` is the grid proxy's value, which it never exceeds.
    """

    proxy: str
    discretisation: float
    privatisation_quantile: float
    projection_proxy: float
    projection_support: float
    projection: float
    total: float
    projection_kind: str = ""
    projection_via_grid: float | None = None


def certificate_terms(proxy: str, *, k: int, quantile: float, proj_proxy: float, proj_support: float,
                      projection_kind: str = "", projection_via_grid: float | None = None) -> CertificateTerms:
    """The certificate 1/2k + quantile + projection terms (Eq. (4)) on the grid of k cells per axis."""
    disc = 0.5 / k
    return CertificateTerms(proxy=proxy, discretisation=disc, privatisation_quantile=quantile,
                            projection_proxy=proj_proxy, projection_support=proj_support,
                            projection=proj_proxy + proj_support, total=disc + quantile + proj_proxy + proj_support,
                            projection_kind=projection_kind, projection_via_grid=projection_via_grid)


@dataclass(frozen=True)
class NoiseDraws:
    """M fresh draws of the noise law (no data): η in path order (``path``, (M, K, k^s)), in row-major
    cell order (``row``) and Πη (``projected``, row-major; None without the consistency projection)."""

    path: np.ndarray
    row: np.ndarray
    projected: np.ndarray | None


def noise_draws(grid: Grid, scale: float, rng: np.random.Generator, draws: int, *, exact_total: bool,
                cmap: dict | None, consistent: bool) -> NoiseDraws:
    """The certificate's Monte Carlo draws of the noise law (fresh noise from ``rng``, no data)."""
    path = grid.noise(scale, rng, draws=draws, exact_total=exact_total)
    row = grid.to_row(path)
    return NoiseDraws(path=path, row=row, projected=consistent_part(row, cmap) if consistent else None)


def plan_quantiles(draws: NoiseDraws, grid: Grid, delta: float) -> int:
    """Exact solves the U_T quantiles (of η and, with the consistency projection, of Πη) can need, from the
    cheap bounds only (:func:`ut_solve_plan`)."""
    plan = ut_solve_plan(draws.row, grid.k, grid.s, delta, geo=grid.blocks)
    if draws.projected is not None:
        plan += ut_solve_plan(draws.projected, grid.k, grid.s, delta, geo=grid.blocks)
    return plan


@dataclass(frozen=True)
class Fit:
    """A measure μ = Σ_j weights_j δ_{points_j} on public points of the unit cube with what its certificates
    need: its query vector Tμ (``t_mu``, path order) and the support term U(T^{-1}Tμ, μ) (0 when snapped)."""

    points: np.ndarray
    weights: np.ndarray
    t_mu: np.ndarray
    support_term: float


def fit(points: np.ndarray, weights: np.ndarray, grid: Grid, *, snap: bool) -> Fit:
    """:class:`Fit` of the measure with ``weights`` on ``points`` (snapped points: no support term)."""
    t_mu = grid.bins(points, weights)
    cat = np.asarray(grid.blocks.weights) > 0 if grid.mixed else None
    sup = 0.0 if snap else support_discretisation(points, weights, grid.subsets, grid.k, cat)
    return Fit(points=points, weights=weights, t_mu=t_mu, support_term=sup)


@dataclass(frozen=True)
class Noisy:
    """The released statistic the certificates post-process: v_DP (path order) and, with the consistency
    projection, v_cons = c0 + Π(v_DP - c0) (row-major; equal to v_DP otherwise) and Π's map."""

    dp: np.ndarray
    consistent_row: np.ndarray
    cmap: dict | None
    consistent: bool


@dataclass
class Certificates:
    """Every certificate computed, by key ("L_T", "U_T", "L_T_consistent", "U_T_consistent"): for the
    released points and for the LP's measure, and the Monte Carlo samples of each privatisation term."""

    released: dict[str, CertificateTerms] = field(default_factory=dict)
    lp_measure: dict[str, CertificateTerms] = field(default_factory=dict)
    mc_samples: dict[str, np.ndarray] = field(default_factory=dict)


def certify(grid: Grid, noisy: Noisy, draws: NoiseDraws, budget: SolveBudget, released: Fit, lp: Fit, *,
            delta: float, snap: bool, use_ut: bool) -> Certificates:
    """Eq. (4) for the released points and the LP measure with L_T and, if ``use_ut``, U_T: the paper's
    certificates and, with the consistency projection, the consistent ones (package docstring, item 5).

    A hard ``budget`` is checked against the projection terms' plan before any exact solve; the exact
    solves then run in a fixed order (the paper's U_T quantile and terms, then the consistent ones), which
    decides which ones a soft budget declines."""
    if use_ut and not budget.soft:
        budget.plan(_plan_projection(grid, noisy, released, lp, snap=snap))
    out = Certificates()
    r_dp = [noisy.dp - released.t_mu, noisy.dp - lp.t_mu]  # v_DP - Tμ, path order
    _lt_certificate(out, "L_T", "L_T", draws.path, r_dp, grid, (released, lp), delta)
    if use_ut:
        _ut_certificate(out, draws.row, [grid.to_row(r) for r in r_dp], grid, (released, lp), delta, budget)
    if noisy.consistent:
        r_cons = [noisy.consistent_row - grid.to_row(f.t_mu) for f in (released, lp)]  # Π v_DP - Tμ, row-major
        _lt_certificate(out, "L_T_consistent", "L_T∘Π", grid.to_path(draws.projected),
                        [grid.to_path(r) for r in r_cons], grid, (released, lp), delta)
        if use_ut:
            _consistent_ut_certificate(out, draws.projected, r_cons, noisy, grid, (released, lp), delta, budget,
                                       snap=snap)
    return out


def _plan_projection(grid: Grid, noisy: Noisy, released: Fit, lp: Fit, *, snap: bool) -> int:
    """Exact solves the U_T projection terms can need (the residual maxima over blocks; the direct KR terms
    of unsnapped points), from the cheap bounds only."""
    k, s, m = grid.k, grid.s, grid.m
    residuals = [grid.to_row(noisy.dp - released.t_mu), grid.to_row(noisy.dp - lp.t_mu)]
    if noisy.consistent:
        residuals += [noisy.consistent_row - grid.to_row(released.t_mu), noisy.consistent_row - grid.to_row(lp.t_mu)]
    plan = sum(ut_solve_plan(r_row, k, s, geo=grid.blocks) for r_row in residuals)
    if noisy.consistent and not snap:
        plan += sum(grid.K * (solve_cost(m) + solve_cost(m + 1 + n_pts))
                    for n_pts in (released.points.shape[0], lp.points.shape[0]) if m + 1 + n_pts <= DIRECT_MAX_NODES)
    return plan


def _lt_certificate(out: Certificates, key: str, proxy: str, samples_path: np.ndarray, residuals_path: list,
                    grid: Grid, fits: tuple[Fit, Fit], delta: float) -> None:
    """An L_T certificate: the quantile of L_T over the noise draws, L_T of each residual (path order)."""
    mc = lt_of(grid, samples_path)
    q = quantile_high(mc, delta)
    for store, r, f in zip((out.released, out.lp_measure), residuals_path, fits, strict=True):
        store[key] = certificate_terms(proxy, k=grid.k, quantile=q, proj_proxy=float(lt_of(grid, r)),
                                       proj_support=f.support_term)
    out.mc_samples[key] = mc


def _ut_certificate(out: Certificates, samples_row: np.ndarray, residuals_row: list, grid: Grid,
                    fits: tuple[Fit, Fit], delta: float, budget: SolveBudget) -> None:
    """The paper's U_T certificate: the exact quantile and maxima, solving only the draws and blocks that
    decide them (:func:`ut_quantile`)."""
    q, mc = ut_quantile(samples_row, grid.k, grid.s, delta, budget, geo=grid.blocks)
    for store, r, f in zip((out.released, out.lp_measure), residuals_row, fits, strict=True):
        top = block_max(grid, r, budget)
        store["U_T"] = certificate_terms("U_T", k=grid.k, quantile=q, proj_proxy=top, proj_support=f.support_term)
    out.mc_samples["U_T"] = mc


def _consistent_ut_certificate(out: Certificates, samples_row: np.ndarray, residuals_row: list, noisy: Noisy,
                               grid: Grid, fits: tuple[Fit, Fit], delta: float, budget: SolveBudget, *,
                               snap: bool) -> None:
    """The consistent U_T certificate: the quantile of U_T(Πη) and, per measure, the exact KR projection
    term (:func:`_ut_projection`)."""
    q, mc = ut_quantile(samples_row, grid.k, grid.s, delta, budget, geo=grid.blocks)
    out.mc_samples["U_T_consistent"] = mc
    for store, r, f in zip((out.released, out.lp_measure), residuals_row, fits, strict=True):
        per_block, exact, via_grid = _ut_projection(r, f, noisy, grid, budget, snap=snap)
        kind = ("exact KR distance ||T^-1 Π v_DP - P^S mu||, max over blocks" if exact
                else "U_T(Π v_DP, T mu) + U(T^-1 T mu, mu) (too large for the exact term)")
        store["U_T_consistent"] = certificate_terms("U_T∘Π", k=grid.k, quantile=q,
                                                    proj_proxy=float(per_block.max()), proj_support=0.0,
                                                    projection_kind=kind, projection_via_grid=via_grid)


def _ut_projection(r_row: np.ndarray, f: Fit, noisy: Noisy, grid: Grid, budget: SolveBudget, *,
                   snap: bool) -> tuple[np.ndarray, bool, float]:
    """The projection term of the consistent U_T certificate per block, whether it is exact, and the grid
    proxy's maximum (U_T of the residual plus the support term).

    Snapped: the exact KR term is U_T of the block (both measures live on the centres), and only the
    maximum over blocks enters the certificate. Unsnapped: the smaller of the grid value and the exact
    KR distance to the points (:func:`direct_projection`), when the transport fits
    :data:`DIRECT_MAX_NODES` and the budget."""
    k, s, m, sup = grid.k, grid.s, grid.m, f.support_term
    if snap or m + 1 + f.points.shape[0] > DIRECT_MAX_NODES:
        top = block_max(grid, r_row, budget) + sup
        return np.array([top]), snap, float(top)
    via_grid = np.array([_block_exact(grid, row, b, budget) for b, row in enumerate(r_row)]) + sup
    if not all([budget.charge(m + 1 + f.points.shape[0]) for _ in grid.subsets]):  # a soft budget declined
        return via_grid, False, float(via_grid.max())
    direct = direct_projection(noisy.consistent_row, f.points, f.weights, grid.subsets, k, s, geo=grid.blocks)
    return np.minimum(direct, via_grid), True, float(via_grid.max())


def section_5_3(certs: Certificates) -> dict:
    """[DLS+24, Section 5.3]: the projection term L_T(v_DP, Tμ) of the released points against the
    distribution of L_T(0, η) (once they are comparable, a better Step 3 cannot be expected to help)."""
    lt = certs.released["L_T"].projection_proxy
    mc_lt = certs.mc_samples["L_T"]
    out = {
        "L_T(v_DP, T mu)": lt,
        "L_T(0, eta) MC mean": float(np.mean(mc_lt)),
        "L_T(0, eta) MC q05": float(np.quantile(mc_lt, 0.05)),
        "L_T(0, eta) MC q95": float(np.quantile(mc_lt, 0.95)),
        "ratio to MC mean": lt / float(np.mean(mc_lt)) if np.mean(mc_lt) > 0 else float("nan"),
        "note": "Section 5.3: once L_T(v_DP, T mu) is about L_T(v_DP, T mu_D) = L_T(0, eta), further "
                "optimisation of Step 3 (e.g. more public points) cannot be expected to help.",
    }
    if "U_T_consistent" in certs.released:
        out["U_T(Pi v_DP, T mu)"] = certs.released["U_T_consistent"].projection_proxy
        out["U_T(0, Pi eta) MC mean"] = float(np.mean(certs.mc_samples["U_T_consistent"]))
    return out
