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
from typing import Any

import numpy as np

from ...grid import cell_centres
from ...transport.marginals import unique_weighted
from .proxies import SolveBudget, emd_value, solve_cost, ut_block_max, ut_bounds
from .query import haar_block_noise, path_rank

__all__ = ["CERTIFICATES", "mc_order", "quantile_high", "ut_solve_plan", "ut_quantile", "default_k_within_budget",
           "support_discretisation", "certificate_terms", "kr_grid_points", "direct_projection", "DIRECT_MAX_NODES"]

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


def ut_solve_plan(w_row: np.ndarray, k: int, s: int, delta: float | None = None) -> int:
    """An upper bound, from the cheap bounds only (no transport solve), on what :func:`ut_quantile`
    (``delta`` given; ``w_row`` of shape (M, K, k^s)) or :func:`ut_block_max` (``delta=None``, shape
    (K, k^s)) can charge to the solve budget.

    A draw is refined only while its interval [max lb, max ub] meets the order statistic's range, which
    only narrows as draws are refined, so the draws whose initial interval meets the initial range are a
    superset of the refined ones. Within a draw, :func:`ut_block_max` solves blocks by decreasing upper
    bound and stops at the first whose upper bound is at most the best exact value; the block with the
    largest lower bound comes before any block whose upper bound is below that lower bound, so only
    blocks with ub >= max lb can be solved. One-cell and all-zero blocks cost nothing."""
    w = np.asarray(w_row, dtype=float)
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


def ut_quantile(w_row: np.ndarray, k: int, s: int, delta: float,
                 budget: SolveBudget | None = None) -> tuple[float, np.ndarray]:
    """The Monte Carlo (1-δ) quantile (:func:`quantile_high`, order statistic :func:`mc_order`) of :math:`\\max_S \\mathcal U_T` over the
    draws of ``w_row`` (M, K, k^s), exact, and the samples it is the order statistic of.

    Each draw's maximum lies in [max of the lower bounds, max of the upper bounds]; only the draws whose
    interval can still contain the order statistic are computed exactly (:func:`ut_block_max`), until
    it is determined. The returned samples are exact for those draws; for the others they are the
    bound on the same side of the quantile (the upper bound below it, the lower bound above it), so the
    same order statistic of the samples is the quantile."""
    M = w_row.shape[0]
    lb, ub = ut_bounds(w_row, k, s)
    lo, hi = lb.max(axis=-1), ub.max(axis=-1)
    exact = np.full(M, np.nan)
    known = np.zeros(M, dtype=bool)
    r = mc_order(M, delta) - 1

    def refine(t: int) -> None:
        exact[t] = ut_block_max(w_row[t], k, s, budget, (lb[t], ub[t]))
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
                             rng: np.random.Generator, allowance: int) -> int:
    """The largest k <= k0 whose estimated exact-solve plan for ``n_quantiles`` U_T quantiles is at most
    ``allowance``, each solve weighted by its own cost (one solve on m cells counts ⌈m/64⌉ against the
    limit but takes time of order m², so the default stays fast; the limit itself is the unweighted count):
    :func:`ut_solve_plan` on at most 40 planning draws of the noise law (U_T and its bounds
    are positively homogeneous, so the plan does not depend on the noise scale, hence not on n or ε),
    scaled to M draws; bisection between 1 (no solve: one cell) and k0. Data-independent; the planning
    draws are not the certificate's."""
    Mp = min(M, 40)
    dp = max(delta, 1.0 / (Mp + 1))

    def fits(k: int) -> bool:
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
def support_discretisation(points: np.ndarray, weights: np.ndarray, subsets, k: int) -> float:
    """:math:`\\mathcal U(T^{-1}T\\mu, \\mu) = \\max_S \\sum_j \\alpha_j \\|z_j^S - c(z_j^S)\\|_\\infty` exactly.

    Moving every point to its own cell centre is an optimal coupling: the own centre is the nearest
    centre, and every coupling moves each unit of mass at least that far.
    """
    centre = (np.clip(np.floor(points * k), 0, k - 1) + 0.5) / k
    dev = np.abs(points - centre)
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


def direct_projection(v_row: np.ndarray, pts: np.ndarray, wts: np.ndarray, subsets, k: int, s: int) -> np.ndarray:
    """Per block :math:`\\|T^{-1}v^S - P^S_\\#\\mu\\|_{KR,0}` for μ = Σ α_j δ_{z_j} (points merged per block)."""
    out = np.empty(len(subsets))
    for b, S in enumerate(subsets):
        Pu, wu = unique_weighted(pts[:, list(S)], wts)
        out[b] = kr_grid_points(v_row[b], k, s, Pu, wu)
    return out


def certificate_terms(proxy: str, *, k: int, quantile: float, proj_proxy: float, proj_support: float) -> dict:
    disc = 0.5 / k
    return {
        "proxy": proxy,
        "discretisation": disc,
        "privatisation_quantile": quantile,
        "projection_proxy": proj_proxy,
        "projection_support": proj_support,
        "projection": proj_proxy + proj_support,
        "total": disc + quantile + proj_proxy + proj_support,
    }
