"""The building blocks of Private Evolution [GFR25]: the working region, the variation API (Eq. 1),
the nearest-neighbour votes (Algorithm 4), the noisy histograms and their post-processings
(Algorithms 2-3, Section 4.2), the Gaussian accounting and the default rules.

The mechanism itself (validation, the iterations, the ledger and the release) is
:mod:`dpsynth_core.mechanisms.private_evolution`; everything here is a pure function of its
arguments, so that the steps can be read, tested and reused one at a time.

References
----------
.. [GFR25] T. González, G. Fanti, A. Ramdas. Private Evolution Converges. arXiv:2506.08312, 2025.
.. [DRS22] J. Dong, A. Roth, W. J. Su. Gaussian Differential Privacy. JRSS B 84(1), 2022.
.. [Vad17] S. Vadhan. The Complexity of Differential Privacy. Tutorials on the Foundations of Cryptography, 2017.
See docs/references.md for the full entries.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.spatial import cKDTree

from .noise import discrete_laplace, gaussian
from .privacy import gaussian_sigma
from .transport import BL_DENSE_MAX_M
from .transport.flows import transshipment_pot
from .validation import check_choice

__all__ = [
    "METRICS",
    "REGIONS",
    "N_SYNTHETIC_DEFAULT_CAP",
    "COSTS",
    "INTERACTIVE_MAX_ITERATIONS",
    "INTERACTIVE_MAX_SYNTHETIC",
    "INTERACTIVE_MAX_LEVELS",
    "pe_l2_sensitivity",
    "pe_sigma",
    "default_iterations",
    "region_diameter",
    "theorem_4_1_rate",
    "refine_iterations",
    "budget_shares",
    "iteration_sigmas",
    "default_alpha",
    "variation_scales_eq1",
    "default_n_synthetic",
    "project_into_region",
    "uniform_in_region",
    "in_region",
    "variation_api",
    "nn_assign",
    "nn_histogram",
    "nn_votes",
    "gaussian_noisy_counts",
    "laplace_count_threshold",
    "laplace_threshold_counts",
    "threshold_weights",
    "bl_weights",
    "bl_weights_graph",
    "SCHEDULES",
    "REFINE_FINAL_SHARE",
    "REFINE_LEVELS",
    "REFINE_GRID",
    "snap_to_grid",
    "spread_in_cells",
    "BL_GRAPH_NEIGHBOURS",
    "MixedMetric",
    "category_resample_probability",
]

#: The owner named in messages (the mechanism these blocks belong to).
OWNER = "private_evolution"

METRICS: tuple[str, ...] = ("l2", "l1", "linf")
REGIONS: tuple[str, ...] = ("box", "ball")
_MINKOWSKI_P = {"l2": 2.0, "l1": 1.0, "linf": np.inf}

#: Budget schedules: "refine" (the defaults study) and "paper" ([GFR25, Section 6 and Theorem 4.1]).
SCHEDULES: tuple[str, ...] = ("refine", "paper")
#: "refine": share of the privacy budget (of μ², the Gaussian-DP budget) given to the last iteration.
REFINE_FINAL_SHARE = 0.7
#: "refine": the last iteration uses at most this many of the finest Eq. (1) scales.
REFINE_LEVELS = 4
#: "refine": the last iteration's candidates are the cells of a grid of this side, in multiples of its finest
#: variation scale, that its variations fall in (:func:`snap_to_grid`); the release spreads each cell's points
#: uniformly over it.
REFINE_GRID = 3.0
#: Neighbours per candidate of the graph on which the bounded-Lipschitz projection is solved beyond
#: :data:`dpsynth_core.transport.BL_DENSE_MAX_M` candidates.
BL_GRAPH_NEIGHBOURS = 16

#: Largest default synthetic size (Theorem 4.1's n_s grows like 1/σ); pass ``n_synthetic`` to go beyond.
N_SYNTHETIC_DEFAULT_CAP = 20_000

#: Cost profiles of a run (``cost``): "full" follows the rules above; "interactive" caps the iterations, the
#: synthetic points and the variation scales at the values below, whatever ε and n are (public constants: the
#: cost of a run then does not grow with ε, where Theorem 4.1's n_s and L do).
COSTS: tuple[str, ...] = ("full", "interactive")
#: "interactive": at most this many iterations T.
INTERACTIVE_MAX_ITERATIONS = 5
#: "interactive": at most this many synthetic points n_s per iteration.
INTERACTIVE_MAX_SYNTHETIC = 300
#: "interactive": at most this many variation scales L (2L + 1 variations per point): α at least D 2^-L.
INTERACTIVE_MAX_LEVELS = 6

#: Relative/absolute tolerance under which two KD-tree distances are re-checked as a possible tie.
_TIE_TOL = 1e-9


# ------------------------------------------------------------------------------ accounting
def pe_l2_sensitivity(neighbours: str) -> float:
    """l2 sensitivity of the nearest-neighbour histogram of counts.

    .. math:: \\Delta_2 = 1 \\text{ (add/remove)}, \\qquad \\Delta_2 = \\sqrt{2} \\text{ (replace)}

    Adding or removing a record changes one count by 1; replacing one moves one vote from a count
    to another ([GFR25, proof of Theorem 4.1]: √2/n for the normalised histogram).
    """
    value = check_choice(neighbours, "neighbours", "pe_l2_sensitivity", ("add_remove", "replace"))
    return 1.0 if value == "add_remove" else math.sqrt(2.0)


def pe_sigma(epsilon: float, delta: float, neighbours: str, iterations: int) -> float:
    """Standard deviation of the Gaussian noise on each count so that T iterations are (ε, δ)-DP.

    .. math:: \\sigma = \\sqrt{T}\\,\\Delta_2 / \\mu(\\varepsilon, \\delta)

    where μ(ε, δ) is the largest μ with μ-GDP ⟹ (ε, δ)-DP (exact composition of T Gaussian
    mechanisms, [DRS22, Corollary 3.3]; [GFR25, Theorem 4.1] uses the looser
    ``4 √(T log(1.25/δ)) / (nε)``).

    Parameters
    ----------
    epsilon : float in (0, inf); delta : float in (0, 1)
    neighbours : "add_remove" or "replace"
    iterations : int >= 1

    References
    ----------
    .. [GFR25] T. González, G. Fanti, A. Ramdas. Private Evolution Converges. arXiv:2506.08312, 2025.
    .. [DRS22] J. Dong, A. Roth, W. J. Su. Gaussian Differential Privacy. JRSS B 84(1), 2022.
    See docs/references.md for the full entries.
    """
    return gaussian_sigma(epsilon, delta, pe_l2_sensitivity(neighbours), iterations)


def default_iterations(n: int, epsilon: float) -> int:
    """Section 6's number of PE steps :math:`T = 2 \\log(n\\varepsilon)`, rounded, at least 1."""
    return max(1, int(round(2.0 * math.log(max(n * epsilon, 1.0)))))


def refine_iterations(n: int, epsilon: float) -> int:
    """The "refine" schedule's number of PE steps :math:`T = \\max(2, \\mathrm{round}(\\tfrac12 \\log(n\\varepsilon)))`.

    A quarter of Section 6's :math:`2\\log(n\\varepsilon)`: every step spends budget, and the defaults
    study (docs/private-evolution.md) measured that three to five steps bring the cloud from any
    start in the box to the data, after which more steps only add noise. At least 2: one step to
    find the data, one to refine it.
    """
    return max(2, int(round(0.5 * math.log(max(n * epsilon, 1.0)))))


def budget_shares(iterations: int, schedule: str, final_share: float | None = None) -> tuple[float, ...]:
    """How the Gaussian-DP budget μ² is split over the T iterations (shares summing to 1).

    .. math:: \\text{paper: } s_t = 1/T; \\qquad \\text{refine: } s_T = f,\\ s_t = (1 - f)/(T - 1)\\ (t < T)

    with ``f = final_share`` (:data:`REFINE_FINAL_SHARE` when None; 1 when T = 1). A larger share for
    the last iteration is a variant of [GFR25, Algorithm 2], whose T Gaussian mechanisms share one σ:
    the exploration steps only need to bring the cloud to the data, the last one makes the release.
    """
    T = int(iterations)
    if schedule == "paper" or T == 1:
        return (1.0 / T,) * T
    f = REFINE_FINAL_SHARE if final_share is None else float(final_share)
    return ((1.0 - f) / (T - 1),) * (T - 1) + (f,)


def iteration_sigmas(epsilon: float, delta: float, neighbours: str, shares: tuple[float, ...]) -> tuple[float, ...]:
    """Noise σ_t on the counts of each iteration so that the T Gaussian histograms are (ε, δ)-DP together.

    .. math:: \\sigma_t = \\frac{\\Delta_2}{\\mu(\\varepsilon, \\delta)\\sqrt{s_t}}, \\qquad
              \\sqrt{\\textstyle\\sum_t (\\Delta_2/\\sigma_t)^2} = \\mu(\\varepsilon, \\delta)

    T adaptive Gaussian mechanisms, the t-th μ_t-GDP with μ_t = Δ_2/σ_t, are μ-GDP with
    μ = (Σ μ_t²)^{1/2} [DRS22, Corollary 3.3]. Equal shares give :func:`pe_sigma` exactly (the same
    formula, evaluated the same way).
    """
    T = len(shares)
    if all(x == shares[0] for x in shares):
        return (pe_sigma(epsilon, delta, neighbours, T),) * T
    base = pe_sigma(epsilon, delta, neighbours, 1)
    return tuple(base / math.sqrt(x) for x in shares)


def region_diameter(region: str, d: int, metric: str) -> float:
    """Diameter D of the working region (unit cube or its inscribed ball) in unit-cube coordinates.

    Box: √d (l2), d (l1), 1 (l_inf). Ball of radius 1/2: 1 (l2), √d (l1), 1 (l_inf).
    """
    if region == "box":
        return {"l2": math.sqrt(d), "l1": float(d), "linf": 1.0}[metric]
    return {"l2": 1.0, "l1": math.sqrt(d), "linf": 1.0}[metric]


def theorem_4_1_rate(n: int, epsilon: float, delta: float, d: int, diameter: float) -> float:
    """Theorem 4.1's rate without its constants,

    .. math:: d D \\Big(\\sqrt{\\log\\big(n\\varepsilon/\\sqrt{\\log(1/\\delta)}\\big)\\,\\log(1/\\delta)}
              \\,/\\,(n\\varepsilon)\\Big)^{1/d}

    (the logarithm floored at 1 for small nε).
    """
    ne = n * epsilon
    inner = max(math.log(max(ne / math.sqrt(math.log(1 / delta)), math.e)), 1.0)
    return d * diameter * (math.sqrt(inner * math.log(1 / delta)) / ne) ** (1.0 / d)


def default_alpha(sigma_normalised: float, diameter: float, d: int) -> float:
    """Theorem 4.1's smallest variation radius :math:`\\alpha = D\\,\\sigma^{1/\\max(d,2)}`
    (σ is the noise on the normalised histogram, i.e. on counts / n), capped at D."""
    return float(min(diameter, diameter * sigma_normalised ** (1.0 / max(d, 2))))


def variation_scales_eq1(alpha: float, diameter: float, d: int) -> np.ndarray:
    """Scales of the variation API, Eq. (1).

    .. math:: \\sigma_l = \\frac{\\alpha\\, 2^{l-1}}{\\sqrt{\\pi[(\\sqrt d + \\log 2)^2 + \\log 2]}},
              \\qquad l = 1, \\dots, L = \\lceil \\log_2(D/\\alpha) \\rceil \\;(\\ge 1)

    Returns
    -------
    ndarray of shape (L,)
    """
    L = max(1, int(math.ceil(math.log2(diameter / alpha) - 1e-12)))
    denom = math.sqrt(math.pi * ((math.sqrt(d) + math.log(2.0)) ** 2 + math.log(2.0)))
    return alpha * 2.0 ** np.arange(L) / denom


def default_n_synthetic(sigma_normalised: float, levels: int, d: int) -> int:
    """Theorem 4.1's synthetic size :math:`n_s = \\lceil (\\sigma (2L+1)^{1-1/\\max(d,2)})^{-1} \\rceil`
    (proof in Appendix D), at least 1 and at most :data:`N_SYNTHETIC_DEFAULT_CAP`."""
    k = max(d, 2)
    value = 1.0 / (sigma_normalised * (2 * levels + 1) ** (1.0 - 1.0 / k))
    return int(min(N_SYNTHETIC_DEFAULT_CAP, max(1, math.ceil(value))))


# -------------------------------------------------------------------------------- geometry
def project_into_region(P: np.ndarray, region: str) -> np.ndarray:
    """Metric projection (in place) onto the unit cube or onto its inscribed l2 ball.

    .. math:: \\mathrm{proj}_{\\mathrm{box}}(x) = \\min(\\max(x, 0), 1), \\qquad
              \\mathrm{proj}_{\\mathrm{ball}}(x) = c + \\min(1, r/\\|x - c\\|_2)(x - c),\\;
              c = \\tfrac12 \\mathbf 1,\\; r = \\tfrac12

    Parameters
    ----------
    P : float ndarray (m, d), modified in place and returned.
    region : "box" or "ball"
    """
    if region == "ball":
        D = P - 0.5
        norms = np.sqrt(np.einsum("ij,ij->i", D, D))
        over = norms > 0.5
        if np.any(over):
            P[over] = 0.5 + D[over] * (0.5 / norms[over])[:, None]
    np.clip(P, 0.0, 1.0, out=P)
    return P


def uniform_in_region(m: int, d: int, region: str, rng: np.random.Generator) -> np.ndarray:
    if region == "box":
        return rng.random((m, d))
    g = rng.standard_normal((m, d))
    g /= np.maximum(np.linalg.norm(g, axis=1), 1e-300)[:, None]
    radius = 0.5 * rng.random(m) ** (1.0 / d)
    return project_into_region(0.5 + g * radius[:, None], region)


def in_region(u: np.ndarray, region: str) -> bool:
    if np.any(u < 0.0) or np.any(u > 1.0):
        return False
    return region == "box" or float(np.linalg.norm(u - 0.5)) <= 0.5


def variation_api(S: np.ndarray, scales: np.ndarray, region: str, rng: np.random.Generator) -> np.ndarray:
    """Variation API of Eq. (1), applied to every point of S and projected into the region.

    .. math:: \\mathrm{Var}(z) = \\{z\\} \\cup \\{\\mathrm{proj}_\\Omega(z + N^{k,l}) :
              l = 1..L,\\ k = 1, 2\\},\\qquad N^{k,l} \\sim \\mathcal N(0, \\sigma_l^2 I_d)

    Parameters
    ----------
    S : ndarray (s, d) in the region (unit-cube coordinates)
    scales : ndarray (L,) of σ_l > 0
    region : "box" or "ball"
    rng : numpy Generator

    Returns
    -------
    V : ndarray (s (2L+1), d)
        Row ``i (2L+1)`` is ``S[i]``; rows ``i (2L+1) + 1 + 2(l-1) + (k-1)`` its variations.
    """
    s, d = S.shape
    L = scales.size
    block = np.empty((s, 2 * L + 1, d))
    block[:, 0, :] = S
    noise = rng.standard_normal((s, 2 * L, d)) * np.repeat(scales, 2)[None, :, None]
    block[:, 1:, :] = S[:, None, :] + noise
    V = block.reshape(s * (2 * L + 1), d)
    return project_into_region(V, region)


def snap_to_grid(V: np.ndarray, side: float, columns: np.ndarray | None = None) -> tuple[np.ndarray, float]:
    """The distinct cells, of the grid of side ``1/k`` with :math:`k = \\lceil 1/\\text{side} \\rceil` cells per axis of
    the unit cube, that the rows of V fall in, as their centres (in the order of their first row); on the
    numeric ``columns`` only (the others are kept, and rows that differ there stay apart). Returns (the
    centres, the grid's side 1/k).

    The last iteration of the "refine" schedule votes on these centres instead of on the variations: where
    the cloud is dense, many variations share a cell and their votes a single noisy count, so the last
    histogram has far fewer noisy entries (on 5000 points in the plane at ε = 1: 110–420 cells instead of
    972 variations), and every entry carries noise. A function of public candidates:
    post-processing, no privacy cost."""
    k = max(1, int(math.ceil(1.0 / side - 1e-12)))
    num = slice(None) if columns is None else columns
    C = np.array(V, dtype=np.float64)
    C[:, num] = (np.minimum(np.floor(C[:, num] * k), k - 1) + 0.5) / k
    uniq, first = _merge_duplicates(C)
    return uniq[np.argsort(first, kind="stable")], 1.0 / k


def spread_in_cells(P: np.ndarray, side: float, rng: np.random.Generator, region: str,
                    columns: np.ndarray | None = None) -> np.ndarray:
    """Each row of P (cell centres of :func:`snap_to_grid`) moved to a uniform point of its cell (numeric
    ``columns`` only), then projected into the region: the release of the "refine" schedule, which places
    the points of a cell as PMM and PSMM place the points of theirs (public randomness: post-processing)."""
    out = np.array(P, dtype=np.float64)
    num = slice(None) if columns is None else columns
    width = out[:, num].shape[1]
    out[:, num] += (rng.random((out.shape[0], width)) - 0.5) * side
    out[:, num] = project_into_region(np.clip(out[:, num], 0.0, 1.0), region)
    return out


# ---------------------------------------------------------------- nearest-neighbour histogram
def _canonical_distance(x: np.ndarray, Y: np.ndarray, metric: str) -> np.ndarray:
    diff = np.abs(Y - x)
    if metric == "l2":
        return np.sqrt(np.sum(diff * diff, axis=1))
    if metric == "l1":
        return np.sum(diff, axis=1)
    return np.max(diff, axis=1)


def _merge_duplicates(V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows of V with exact duplicates merged, and for each kept row the smallest index of V holding it.

    One stable argsort of a scalar key (a fixed combination of the coordinates with weights drawn once
    from a fixed seed, public and data-independent; equal rows have equal keys) and one comparison of
    consecutive rows: O(d m + m log m). (``np.unique(V,
    axis=0)`` sorts the rows as opaque byte strings, the slowest step of an iteration at m ~ 10^4.)
    Two different rows with the same key can keep a duplicate apart; that only costs time, not
    exactness: :func:`nn_assign` sees the two copies at the same distance and its tie re-scoring picks
    the smallest index among them.
    """
    m, d = V.shape
    key = V[:, 0] if d == 1 else V @ np.random.default_rng(0x5EED).uniform(0.5, 1.5, size=d)
    order = np.argsort(key, kind="stable")
    Vs = V[order]
    new = np.ones(m, dtype=bool)
    if m > 1:
        new[1:] = np.any(Vs[1:] != Vs[:-1], axis=1)
    return Vs[new], order[new].astype(np.int64)


def nn_assign(U: np.ndarray, V: np.ndarray, metric: str = "l2") -> np.ndarray:
    """Index of the nearest variation of every private point, ties to the smallest index (Algorithm 4).

    .. math:: k(i) = \\min\\{k : k \\in \\arg\\min_j \\rho(U_i, V_j)\\}

    How ties are made exact: exact duplicate rows of V are merged first (:func:`_merge_duplicates`
    keeps the first occurrence, the smallest index). A KD-tree (``scipy.spatial.cKDTree``, exact search)
    returns the two nearest distinct rows; when the second is farther than the first by more than
    ``1e-9 (1 + d_1)`` the first is the unique minimiser. Otherwise every row within that radius
    is re-scored with the float64 distance ``ρ`` computed by numpy and the smallest original index
    among the minimisers wins. The radius exceeds any rounding difference between the tree's and
    numpy's distances (both within a few ulps of the true distance of points in [0, 1]^d), so the
    candidate set always contains all minimisers: the result equals a brute-force argmin with
    ties to the smallest index, ``ρ`` being the numpy float64 distance.

    Parameters
    ----------
    U : ndarray (n, d); V : ndarray (m, d), m >= 1
    metric : "l2", "l1" or "linf"

    Returns
    -------
    int64 ndarray (n,) of indices into V.
    """
    if isinstance(metric, MixedMetric):
        return _nn_assign_mixed(np.asarray(U, dtype=np.float64), np.ascontiguousarray(V, dtype=np.float64), metric)
    V = np.ascontiguousarray(V, dtype=np.float64)
    uniq, first = _merge_duplicates(V)
    tree = cKDTree(uniq)
    p = _MINKOWSKI_P[metric]
    if uniq.shape[0] == 1:
        return np.zeros(U.shape[0], dtype=np.int64) + first[0]
    dist, idx = tree.query(U, k=2, p=p)
    d1, d2 = dist[:, 0], dist[:, 1]
    out = first[idx[:, 0]]
    tol = _TIE_TOL * (1.0 + d1)
    ambiguous = np.flatnonzero(d2 <= d1 + tol)
    if ambiguous.size:
        cands = tree.query_ball_point(U[ambiguous], r=d1[ambiguous] + tol[ambiguous], p=p)
        for row, cand in zip(ambiguous, cands, strict=True):
            cand = np.asarray(cand, dtype=np.int64)
            dc = _canonical_distance(U[row], uniq[cand], metric)
            out[row] = first[cand[dc == dc.min()]].min()
    return out


def nn_histogram(U: np.ndarray, V: np.ndarray, metric: str = "l2") -> np.ndarray:
    """Nearest-neighbour histogram of counts (Algorithm 4 times n).

    .. math:: c_j = |\\{i : k(i) = j\\}|, \\qquad \\hat\\mu = c / n

    Returns
    -------
    int64 ndarray (m,) summing to n.
    """
    return np.bincount(nn_assign(U, V, metric), minlength=V.shape[0]).astype(np.int64)


def nn_votes(U: np.ndarray, V: np.ndarray, region: str, metric: str) -> np.ndarray:
    """The private statistic of one PE iteration, for :meth:`dpsynth_core.rows.Rows.sum`: the
    nearest-neighbour votes of a block of private rows over the candidates ``V``.

    ``U`` is a block of rows in the unit cube (all the rows in memory, one partition with Dask); they
    are projected into the region (on a copy) and each votes for its nearest candidate by
    :func:`nn_histogram`. A row's vote depends only on the row and on ``V`` (projection row by row,
    exact search, ties to the smallest index of V), so the int64 counts of the blocks add up to the
    counts of all the rows, whatever the partitioning.

    Returns
    -------
    int64 ndarray (m,), m = len(V), summing to the number of rows of the block.
    """
    P = np.array(U, dtype=np.float64)  # a copy: U is never modified
    if isinstance(metric, MixedMetric):
        P[:, metric.num] = project_into_region(P[:, metric.num], region)
    else:
        project_into_region(P, region)
    return nn_histogram(P, V, metric)


# ------------------------------------------------------------------------------ noisy histograms
def gaussian_noisy_counts(counts: np.ndarray, sigma: float, rng: np.random.Generator) -> np.ndarray:
    """The Gaussian mechanism of Algorithms 2-3, line 7, on counts.

    .. math:: \\tilde c = c + \\mathcal N(0, \\sigma^2 I)

    ``counts`` may have any shape (the tests stack many copies to draw many releases at once).
    """
    c = np.asarray(counts, dtype=np.float64)
    return c + gaussian(sigma, c.shape, rng)


def laplace_count_threshold(epsilon_t: float, delta_t: float, neighbours: str) -> tuple[float, int]:
    """Discrete-Laplace scale and integer count threshold of one (ε_t, δ_t)-DP stability histogram.

    [GFR25, Section 4.2, Proposition 4.1] ([Vad17, Theorem 3.5]): noise ``Lap(2/(nε))`` on the
    positive entries of the normalised histogram and threshold ``H = 2 log(1/δ)/(nε) + 1/n``. On
    counts with integer noise ``Lap_Z(b)``, ``b = Δ_1/ε_t`` (Δ_1 = 1 add/remove, 2 replace), an
    entry is kept when

    .. math:: c_j > 0 \\text{ and } c_j + Z_j \\ge 1 + m, \\qquad
              m = \\min\\{m \\in \\mathbb N : P(Z \\ge m) = p^m/(1+p) \\le \\delta_t/2\\},\\; p = e^{-1/b},

    i.e. ``m ≈ b log(1/δ_t)``: exactly the paper's H under replace. Privacy: counts present in both
    neighbours shift by 1 in at most Δ_1 bins (ratio e^{ε_t}); a bin whose count goes 1 → 0 is
    released with probability ``q = p^m/(1+p) ≤ δ_t/2`` (the δ part) and costs a factor
    ``1/(1-q)`` on the other side, which must not exceed ``e^{ε_t/Δ_1}``; otherwise a ValueError.

    Returns
    -------
    scale : float, b
    count_threshold : int, 1 + m

    References
    ----------
    .. [GFR25] T. González, G. Fanti, A. Ramdas. Private Evolution Converges. arXiv:2506.08312, 2025.
    .. [Vad17] S. Vadhan. The Complexity of Differential Privacy. Tutorials on the Foundations of Cryptography, 2017.
    See docs/references.md for the full entries.
    """
    delta_1 = 1.0 if neighbours == "add_remove" else 2.0
    b = delta_1 / epsilon_t
    p = math.exp(-1.0 / b)
    m = max(0, int(math.ceil(b * (math.log(2.0 / delta_t) - math.log1p(p)))))
    while p**m / (1.0 + p) > delta_t / 2.0:  # guard against rounding in the closed form
        m += 1
    q = p**m / (1.0 + p)
    if -math.log1p(-q) > epsilon_t / delta_1:
        raise ValueError(
            f"The 'delta' parameter of {OWNER} is too large for the laplace_threshold histogram: each "
            f"iteration needs delta/T <= 2(1 - exp(-epsilon/(T Δ1))) with Δ1 = {delta_1:g}. Got delta/T = "
            f"{delta_t:g} and epsilon/T = {epsilon_t:g}."
        )
    return b, 1 + m


def laplace_threshold_counts(counts: np.ndarray, scale: float, count_threshold: int,
                             rng: np.random.Generator) -> np.ndarray:
    """Section 4.2's noisy histogram on counts: noise on positive entries, then the threshold.

    .. math:: \\tilde c_j = (c_j + Z_j)\\, \\mathbb 1(c_j > 0,\\ c_j + Z_j \\ge \\tau),
              \\qquad Z_j \\sim \\mathrm{Lap}_\\mathbb{Z}(b)

    Noise is drawn for every entry (so the stream of random numbers does not depend on the data)
    and discarded on the zero counts. Returns int64 of the shape of ``counts``.
    """
    c = np.asarray(counts, dtype=np.int64)
    noisy = c + discrete_laplace(scale, c.shape, rng)
    keep = (c > 0) & (noisy >= count_threshold)
    return np.where(keep, noisy, 0)


def threshold_weights(noisy: np.ndarray, count_threshold: float) -> np.ndarray | None:
    """Algorithm 3, line 8: keep entries ``>= H`` and renormalise; ``None`` when nothing is kept.

    .. math:: \\mu'_j = \\tilde c_j \\mathbb 1(\\tilde c_j \\ge H n) / \\textstyle\\sum_k \\tilde c_k \\mathbb 1(\\tilde c_k \\ge H n)

    Entries are also required to be positive (they carry the mass).
    """
    x = np.asarray(noisy, dtype=np.float64)
    kept = np.where((x >= count_threshold) & (x > 0), x, 0.0)
    total = kept.sum()
    if not total > 0:
        return None
    return kept / total


def bl_weights(nu: np.ndarray, V: np.ndarray, metric: str) -> np.ndarray:
    """Algorithm 2, line 8: the probability vector on V_t closest to ν = c̃/n in D_BL.

    Up to :data:`dpsynth_core.transport.BL_DENSE_MAX_M` candidates the exact projection (the flow of
    :func:`bl_weights_graph` on the complete graph, the optimum of [HVZ23, Algorithm 2]'s LP); beyond,
    the projection on the graph joining each candidate to its :data:`BL_GRAPH_NEIGHBOURS` nearest. The
    function class is {Lip f ≤ 1, |f| ≤ diam [0,1]^d}, the F_BL of [GFR25] with Ω the unit cube (with
    ``region="ball"`` the bound on |f| is the cube's diameter, not the ball's).
    """
    m = V.shape[0]
    return bl_weights_graph(nu, V, metric, k=m - 1 if m <= BL_DENSE_MAX_M else BL_GRAPH_NEIGHBOURS)


def bl_weights_graph(nu: np.ndarray, V: np.ndarray, metric: str, k: int = BL_GRAPH_NEIGHBOURS,
                     solver: str = "lemon") -> np.ndarray:
    """The bounded-Lipschitz projection of ν onto the probability vectors on V, as a min-cost flow
    on the graph joining each candidate to its k nearest ones.

    .. math:: \\hat\\tau = \\arg\\min_{\\tau \\in \\Delta_m} \\min_{x \\ge 0}\\; \\sum_{(i,j) \\in E} \\rho(v_i, v_j)\\,x_{ij}
              + D \\sum_i (x_{ig} + x_{gi}) \\quad\\text{s.t. the net outflow of } i \\text{ is } \\nu_i - \\tau_i

    E holds both directions of every k-nearest-neighbour pair (``scipy.spatial.cKDTree``, the vote
    metric ρ), g is a ground node reached at cost D = diam [0,1]^d (the bound |f| ≤ D), and the
    flows into a sink of demand 1 are τ; exact duplicates of V are merged first (their ν added up:
    moving mass between them costs nothing, so the problem is the same). By Kantorovich-Rubinstein
    duality the optimum is :math:`\\min_\\tau d_{BL}^{\\rho_E}(\\nu, \\tau)` for the path metric
    ρ_E ≥ ρ of the graph; on the complete graph ρ_E = ρ and this is the exact projection of
    [HVZ23, Algorithm 2]. Solved exactly by LEMON's network simplex on integer masses and costs
    (:func:`_min_cost_flow`), O(k m) arcs; ``solver="pot"`` solves the same flow with POT's network simplex
    on Orden's reduction (:func:`dpsynth_core.transport.flows.transshipment_pot`), the solver used before, kept
    to compare the two. Post-processing of ν and of the public V: no privacy cost.

    Returns
    -------
    ndarray (m,) of non-negative weights summing to 1 (zero on the duplicates merged away).
    """
    m, d = V.shape
    uniq, first = _merge_duplicates(V)
    inverse = _row_index(V, uniq, first)
    nu_u = np.bincount(inverse, weights=np.asarray(nu, dtype=np.float64), minlength=uniq.shape[0])
    u = uniq.shape[0]
    cells = np.arange(u)
    g, s = u, u + 1
    if isinstance(metric, MixedMetric):
        src, dst, cost = metric.arcs(uniq, k, hub=u + 2)
        diam, extra = metric.diameter("box"), 1
    else:
        src, dst, cost = _knn_arcs(uniq, metric, k)
        diam, extra = {"l2": math.sqrt(d), "l1": float(d), "linf": 1.0}[metric], 0
    S = np.concatenate([src, cells, np.full(u, g), cells])
    T = np.concatenate([dst, np.full(u, g), cells, np.full(u, s)])
    c = np.concatenate([cost, np.full(2 * u, diam), np.zeros(u)])
    if check_choice(solver, "solver", "bl_weights_graph", ("lemon", "pot")) == "pot":
        supply = np.concatenate([nu_u, [1.0 - math.fsum(nu_u), -1.0], np.zeros(extra)])
        _, flows, _ = transshipment_pot(supply, S, T, c, "the bounded-Lipschitz projection of private_evolution")
        tau_u = np.clip(flows[-u:], 0.0, None)
    else:
        tau_u = _min_cost_flow(nu_u, u + 2 + extra, S, T, c, diam)
    tau = np.zeros(m)
    tau[first] = tau_u / math.fsum(tau_u)
    return tau


#: Integer units of LEMON's flow in :func:`bl_weights_graph`: masses to 2^-40, costs to 2^-40 of D
#: (the resolution of the exact sparse W1's integer costs, dpsynth_core.transport.transshipment).
_MASS_BITS = 40
_COST_BITS = 40


def _min_cost_flow(nu_u: np.ndarray, nodes: int, S: np.ndarray, T: np.ndarray, c: np.ndarray,
                   diam: float) -> np.ndarray:
    """The flows of the last ``u = len(nu_u)`` arcs (the candidates into the sink) of the min-cost flow of
    :func:`bl_weights_graph`, in units of mass, solved exactly by LEMON's network simplex (``pylmcf``) on
    integer supplies (ν to 2^-40, the ground node making them sum to 1) and integer costs (to 2^-40 of D).

    LEMON rather than POT's network simplex on Orden's reduction (which doubles the nodes and was used
    before): on the graph of 34,000 candidates (n = 10^5, n_s = 2,000) one projection took 3.1 s against
    9.0 s, measured in the same run (a loaded machine). The rounding moves the optimum by at most about
    2^-40 of D per unit of mass moved; the minimiser itself need not be unique in either solver."""
    import pylmcf  # LEMON's network simplex, a dependency of the library (the exact sparse W1)

    u = nu_u.size
    scale = float(2**_MASS_BITS)
    si = np.rint(nu_u * scale).astype(np.int64)
    supply = np.zeros(nodes, dtype=np.int64)
    supply[:u] = si
    supply[u] = 2**_MASS_BITS - int(si.sum())  # the ground node: mass created or destroyed
    supply[u + 1] = -(2**_MASS_BITS)  # the sink: demand 1
    C = np.rint(c / diam * 2.0**_COST_BITS).astype(np.int64)
    order = np.lexsort((T, S))  # LEMON's graphs are sorted by (start, end)
    G = pylmcf.Graph(nodes, S[order].astype(np.int32), T[order].astype(np.int32))
    G.set_node_supply(supply)
    G.set_edge_capacities(np.full(S.size, int(np.abs(supply).sum()), dtype=np.int64))
    G.set_edge_costs(C[order])
    G.solve()
    F = np.empty(S.size, dtype=np.int64)
    F[order] = np.asarray(G.result(), dtype=np.int64)
    return F[-u:].astype(np.float64) / scale


def _row_index(V: np.ndarray, uniq: np.ndarray, first: np.ndarray) -> np.ndarray:
    """For every row of V, the index of its row in ``uniq`` (``uniq[i] == V[first[i]]``)."""
    if uniq.shape[0] == V.shape[0]:
        out = np.empty(V.shape[0], dtype=np.int64)
        out[first] = np.arange(V.shape[0])
        return out
    tree = cKDTree(uniq)
    _, idx = tree.query(V, k=1)
    return np.asarray(idx, dtype=np.int64)


def _knn_arcs(P: np.ndarray, metric: str, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Both directions of every k-nearest-neighbour pair of the distinct points P, with their length."""
    u = P.shape[0]
    kk = min(k, u - 1)
    if kk < 1:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0)
    dist, idx = cKDTree(P).query(P, k=kk + 1, p=_MINKOWSKI_P[metric])
    src = np.repeat(np.arange(u, dtype=np.int64), kk)
    dst = np.asarray(idx[:, 1:], dtype=np.int64).ravel()
    length = np.asarray(dist[:, 1:], dtype=np.float64).ravel()
    a, b = np.concatenate([src, dst]), np.concatenate([dst, src])
    w = np.concatenate([length, length])
    keep = a != b
    key = a[keep] * u + b[keep]
    # the first occurrence of every key, in key order: np.unique(key, return_index=True) by one stable sort
    # (np.unique took 0.7 s of an iteration's 5 s at 34,000 candidates)
    order = np.argsort(key, kind="stable")
    sorted_key = key[order]
    first = np.ones(key.size, dtype=bool)
    first[1:] = sorted_key[1:] != sorted_key[:-1]
    pick = order[first]
    return a[keep][pick], b[keep][pick], w[keep][pick]


# ------------------------------------------------------------------------------ mixed tables
@dataclass(frozen=True, eq=False)
class MixedMetric:
    """The distance of Private Evolution on a table with categorical columns (docs/mixed-data.md).

    Rows are encoded unit rows: numeric columns (positions ``num``) in [0, 1], categorical columns
    (positions ``cat``) holding the index of the category among ``sizes[j]`` declared ones. The
    distance is

    .. math:: \\rho(x, y) = \\max\\big(\\|u_x - u_y\\|_p,\\ \\max_j w_j\\,[c_{xj} \\ne c_{yj}]\\big)

    with p the vote metric ``norm`` on the numeric part: with ``norm="linf"`` (the default on mixed
    tables) this is the project's mixed metric. It is a metric for every p (the category term is an
    ultrametric, and the max of two metrics is one).
    """

    num: np.ndarray
    cat: np.ndarray
    sizes: np.ndarray
    weights: np.ndarray
    norm: str = "linf"

    @classmethod
    def of(cls, domain, norm: str = "linf") -> MixedMetric:
        """The metric of a mixed :class:`~dpsynth_core.domain.Domain` (its weights and category lists)."""
        return cls(np.asarray(domain.numeric_index, dtype=np.int64), np.asarray(domain.categorical_index,
                   dtype=np.int64), np.asarray(domain.category_sizes, dtype=np.int64),
                   np.asarray(domain.weights, dtype=np.float64), norm)

    def diameter(self, region: str) -> float:
        """The diameter of the working set: the numeric region's (unit-cube coordinates) or the heaviest
        category weight, whichever is larger."""
        return max(region_diameter(region, self.num.size, self.norm), float(self.weights.max(initial=0.0)))

    def mismatch(self, C: np.ndarray, combo: np.ndarray) -> np.ndarray:
        """:math:`\\max_j w_j [C_{ij} \\ne combo_j]` for every row of the category codes C (0 when equal)."""
        if not self.cat.size:
            return np.zeros(C.shape[0])
        return np.max(np.where(C != combo[None, :], self.weights[None, :], 0.0), axis=1)

    def pairwise(self, A: np.ndarray, B: np.ndarray) -> np.ndarray:
        """The (len(A), len(B)) matrix of distances between encoded unit rows."""
        diff = np.abs(A[:, None, self.num] - B[None, :, self.num])
        numd = {"l2": lambda z: np.sqrt(np.sum(z * z, axis=2)), "l1": lambda z: np.sum(z, axis=2),
                "linf": lambda z: np.max(z, axis=2, initial=0.0)}[self.norm](diff)
        neq = A[:, None, self.cat] != B[None, :, self.cat]
        catd = np.max(np.where(neq, self.weights[None, None, :], 0.0), axis=2, initial=0.0)
        return np.maximum(numd, catd)

    def arcs(self, P: np.ndarray, k: int, hub: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Arcs of the graph of the bounded-Lipschitz projection on the distinct rows P.

        Complete graph when k >= len(P) - 1 (exact distances). Otherwise the k nearest rows of the same
        category combination (numeric distance, ``scipy.spatial.cKDTree``) and a hub node ``hub`` joined
        to every row at cost D/2 each way, D = :meth:`diameter` of the box: two rows of different
        combinations are then at path length D >= ρ (= ρ with unit weights and l_inf, where a category
        change costs 1 = D). The path metric is >= ρ, as for the numeric k-nearest-neighbour graph.
        """
        u = P.shape[0]
        if k >= u - 1:
            C = self.pairwise(P, P)
            a, b = np.nonzero(~np.eye(u, dtype=bool))
            return a.astype(np.int64), b.astype(np.int64), C[a, b]
        codes = P[:, self.cat].astype(np.int64)
        _, group = np.unique(codes, axis=0, return_inverse=True)
        src, dst, cost = [], [], []
        for g in np.unique(group):
            members = np.flatnonzero(group == g)
            s_, d_, c_ = _knn_arcs(P[members][:, self.num], self.norm, k)
            src.append(members[s_])
            dst.append(members[d_])
            cost.append(c_)
        half = np.full(u, self.diameter("box") / 2.0)
        rows = np.arange(u, dtype=np.int64)
        src += [rows, np.full(u, hub, dtype=np.int64)]
        dst += [np.full(u, hub, dtype=np.int64), rows]
        cost += [half, half]
        return np.concatenate(src), np.concatenate(dst), np.concatenate(cost)


def category_resample_probability(scales: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """The probability with which a variation at scale σ_l redraws the category of column j:

    .. math:: q_{lj} = \\min(1, \\sigma_l / w_j)

    so that the expected category distance a variation adds, :math:`q_{lj} w_j`, is the numeric scale
    σ_l (as long as it is below w_j). Returns an array (L, m)."""
    return np.minimum(1.0, np.asarray(scales, dtype=np.float64)[:, None] / np.asarray(weights, dtype=np.float64)[None, :])


def mixed_variation_api(S: np.ndarray, scales: np.ndarray, region: str, rng: np.random.Generator,
                        metric: MixedMetric) -> np.ndarray:
    """The variation API on encoded unit rows: Eq. (1) on the numeric columns, and every categorical
    column redrawn uniformly among its declared categories with probability
    :func:`category_resample_probability` (it then keeps its value with probability 1/|C_j|).

    Row ``i (2L+1)`` is ``S[i]``; rows ``i (2L+1) + 1 + 2(l-1) + (k-1)`` its variations (as
    :func:`variation_api`). Numeric columns are projected into the region."""
    s, d = S.shape
    L = scales.size
    num, cat = metric.num, metric.cat
    block = np.repeat(S[:, None, :], 2 * L + 1, axis=1)
    per = np.repeat(scales, 2)
    block[:, 1:, num] += rng.standard_normal((s, 2 * L, num.size)) * per[None, :, None]
    if cat.size:
        q = np.repeat(category_resample_probability(scales, metric.weights), 2, axis=0)  # (2L, m)
        redraw = rng.random((s, 2 * L, cat.size)) < q[None]
        drawn = np.minimum(np.floor(rng.random((s, 2 * L, cat.size)) * metric.sizes), metric.sizes - 1)
        block[:, 1:, cat] = np.where(redraw, drawn, block[:, 1:, cat])
    V = block.reshape(s * (2 * L + 1), d)
    V[:, num] = project_into_region(V[:, num], region)
    return V


def mixed_uniform(m: int, d: int, region: str, rng: np.random.Generator, metric: MixedMetric) -> np.ndarray:
    """The Random API on a mixed table: numeric columns uniform in the region, every category uniform
    among the declared ones (independent columns)."""
    out = np.empty((m, d))
    out[:, metric.num] = uniform_in_region(m, metric.num.size, region, rng)
    out[:, metric.cat] = np.minimum(np.floor(rng.random((m, metric.cat.size)) * metric.sizes), metric.sizes - 1)
    return out


def _nn_assign_mixed(E: np.ndarray, V: np.ndarray, metric: MixedMetric) -> np.ndarray:
    """:func:`nn_assign` under :class:`MixedMetric`: exact, ties to the smallest index of V.

    The candidates are grouped by category combination. Within a group the distance of a row x to a
    candidate v is max(‖u_x − u_v‖_p, W) with W = the row's category mismatch with the group: when W
    is at least the numeric diameter every member is at distance W and the group's smallest index
    wins; otherwise the exact numeric search of :func:`nn_assign` (one KD-tree per group) gives the
    nearest member d_n, and when W > d_n every member within W ties at W (a ball query, re-scored with
    the numpy distance). Rows first search their own combination (W = 0); the other groups are searched
    only for rows whose best distance so far is at least W. Over the groups the smallest distance wins,
    ties to the smallest index.
    """
    n = E.shape[0]
    best_d = np.full(n, np.inf)
    best_i = np.full(n, np.iinfo(np.int64).max, dtype=np.int64)
    codes = E[:, metric.cat].astype(np.int64)
    combos, group = np.unique(V[:, metric.cat].astype(np.int64), axis=0, return_inverse=True)
    group = np.asarray(group).ravel()
    members = [np.flatnonzero(group == g) for g in range(combos.shape[0])]
    diam = region_diameter("box", metric.num.size, metric.norm)
    W = [metric.mismatch(codes, combos[g]) for g in range(combos.shape[0])]
    for own in (True, False):
        for g, mem in enumerate(members):
            rows = np.flatnonzero(W[g] == 0) if own else np.flatnonzero((W[g] > 0) & (W[g] <= best_d))
            if rows.size:
                dg, ig = _group_best(E[rows], V[mem], mem, W[g][rows], diam, metric)
                better = (dg < best_d[rows]) | ((dg == best_d[rows]) & (ig < best_i[rows]))
                best_d[rows[better]], best_i[rows[better]] = dg[better], ig[better]
    return best_i


def _group_best(X: np.ndarray, Vg: np.ndarray, mem: np.ndarray, W: np.ndarray, diam: float,
                metric: MixedMetric) -> tuple[np.ndarray, np.ndarray]:
    """For rows X and the candidates Vg of one combination (original indices ``mem``, ascending) at
    category mismatch W: the smallest distance and the smallest index attaining it."""
    dist = W.astype(np.float64).copy()
    idx = np.full(X.shape[0], mem[0], dtype=np.int64)  # W >= the numeric diameter: every member ties at W
    near = np.flatnonzero(W < diam)
    if near.size:
        num = metric.num
        Xn, Vn = X[near][:, num], np.ascontiguousarray(Vg[:, num])
        local = nn_assign(Xn, Vn, metric.norm)
        diff = np.abs(Vn[local] - Xn)
        dn = {"l2": lambda z: np.sqrt(np.sum(z * z, axis=1)), "l1": lambda z: np.sum(z, axis=1),
              "linf": lambda z: np.max(z, axis=1)}[metric.norm](diff)
        dist[near] = np.maximum(dn, W[near])
        idx[near] = mem[local]
        wide = np.flatnonzero(W[near] > dn)  # every member within W ties at W: the smallest such index
        if wide.size:
            tree = cKDTree(Vn)
            r = W[near][wide]
            cands = tree.query_ball_point(Xn[wide], r=r * (1.0 + _TIE_TOL) + _TIE_TOL, p=_MINKOWSKI_P[metric.norm])
            for row, w, cand in zip(near[wide], r, cands, strict=True):
                cand = np.asarray(cand, dtype=np.int64)
                dc = _canonical_distance(X[row, num], Vn[cand], metric.norm)
                idx[row] = mem[cand[dc <= w]].min()
    return dist, idx
