"""Private Evolution (Gonzalez, Fanti, Ramdas, *Private Evolution Converges* [GFR25]).

PE refines a synthetic set ``S_0`` drawn from a data-independent Random API. At iteration t it
draws variations ``V_t = Variation_API(S_{t-1})`` (Eq. 1), counts how many private points have each
variation as nearest neighbour (Algorithm 4), privatises that histogram, post-processes it into a
probability vector over ``V_t`` and samples the next synthetic set from it (Algorithms 2 and 3).

Post-processings (``histogram``)
--------------------------------
``"threshold"``  Gaussian noise on every count, keep entries ``>= H`` and renormalise (Algorithm 3;
                 H = 0 in the paper's simulations, Section 6).
``"dbl"``        Gaussian noise, then the closest probability vector in bounded-Lipschitz distance
                 (Algorithm 2, line 8), via :func:`dpsynth_core.transport.bl_projection`; small
                 supports only.
``"laplace_threshold"``  Laplace noise on the positive counts only and the stability threshold
                 ``H = 2 log(1/δ)/(nε) + 1/n`` (Section 4.2, Proposition 4.1), then renormalise.

Privacy accounting
------------------
Gaussian histograms: one record moves one count by 1 under add/remove and two counts by 1 under
replace, so the histogram of counts has l2 sensitivity Δ = 1 or √2 ([GFR25, proof of Theorem 4.1]
uses √2/n for the normalised histogram). T adaptive Gaussian mechanisms with noise σ compose
exactly to μ-GDP with μ = √T Δ/σ [DRS22, Corollary 3.3]; σ is solved from (ε, δ)
with :func:`dpsynth_core.privacy.gaussian_sigma`. The ledger lists every iteration with the equal
share ε/T, δ/T of that exact total.

Laplace + threshold: each iteration is an (ε/T, δ/T)-DP stability-based histogram ([GFR25,
Proposition 4.1]; [Vad17, Theorem 3.5]) and the T iterations compose by basic composition. See
:func:`laplace_count_threshold` for the exact calibration with discrete Laplace noise.

Coordinates: everything runs in the unit cube ``[0, 1]^d`` of the public :class:`Domain`
(``region="box"``) or in the l2 ball inscribed in it (``region="ball"``: centre (1/2, ..., 1/2),
radius 1/2 in unit-cube coordinates; the paper's unit l2 ball is ``Domain([-1, -1], [1, 1])`` with
``region="ball"``). Distances, variation scales and ``rel.trace["owner"]["w1"]`` are in unit-cube
coordinates with the release's ``metric``.

Data beyond memory
------------------
The private data enter only through the nearest-neighbour votes of each iteration, a sum over
records: :func:`_votes` (project a block of rows into the region, count each row's vote over the
current candidates V_t) summed by :meth:`dpsynth_core.rows.Rows.sum`, one pass over the data per
iteration, V_t going to the workers as an argument. In memory it is called once on all the rows. The
votes are integers and each row's vote depends only on the row and on V_t (exact search, ties to the
smallest index), so with the same rng the release from a Dask array or DataFrame, in any number of
partitions, is bit for bit the NumPy one. With Dask the owner-side W1 (``track_w1``) is not computed
(``trace["owner"]["w1_note"]`` says why) and the non-private teaching starts are refused.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.spatial import cKDTree

from .. import limits
from ..noise import discrete_laplace, gaussian
from ..privacy import Ledger, check_n_public, gaussian_sigma, resolve_size
from ..theory import Theory
from ..validation import (
    check_bool,
    check_choice,
    check_float,
    check_int,
    check_points,
    check_probability,
    param_error,
)
from .base import ParamSpec, Release, prepare, register

__all__ = [
    "private_evolution",
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
    "METRICS",
    "REGIONS",
]

OWNER = "private_evolution"
HISTOGRAMS: tuple[str, ...] = ("threshold", "dbl", "laplace_threshold")
INITS: tuple[str, ...] = ("uniform", "public", "origin", "private", "interpolate")
NONPRIVATE_INITS: tuple[str, ...] = ("private", "interpolate")
METRICS: tuple[str, ...] = ("l2", "l1", "linf")
REGIONS: tuple[str, ...] = ("box", "ball")
_MINKOWSKI_P = {"l2": 2.0, "l1": 1.0, "linf": np.inf}

#: Largest default synthetic size (Theorem 4.1's n_s grows like 1/σ); pass ``n_synthetic`` to go beyond.
N_SYNTHETIC_DEFAULT_CAP = 20_000
#: Largest number of private x synthetic pairs for which the owner-side W1 is computed exactly.
W1_EXACT_PAIRS = 4_000_000
#: Trace keeps every iteration's variations and histograms while they fit in this many float64 values.
TRACE_MAX_VALUES = 8_000_000
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


def region_diameter(region: str, d: int, metric: str) -> float:
    """Diameter D of the working region (unit cube or its inscribed ball) in unit-cube coordinates.

    Box: √d (l2), d (l1), 1 (l_inf). Ball of radius 1/2: 1 (l2), √d (l1), 1 (l_inf).
    """
    if region == "box":
        return {"l2": math.sqrt(d), "l1": float(d), "linf": 1.0}[metric]
    return {"l2": 1.0, "l1": math.sqrt(d), "linf": 1.0}[metric]


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


def _uniform_in_region(m: int, d: int, region: str, rng: np.random.Generator) -> np.ndarray:
    if region == "box":
        return rng.random((m, d))
    g = rng.standard_normal((m, d))
    g /= np.maximum(np.linalg.norm(g, axis=1), 1e-300)[:, None]
    radius = 0.5 * rng.random(m) ** (1.0 / d)
    return project_into_region(0.5 + g * radius[:, None], region)


def _in_region(u: np.ndarray, region: str) -> bool:
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


def _votes(U: np.ndarray, V: np.ndarray, region: str, metric: str) -> np.ndarray:
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
    P = project_into_region(np.array(U, dtype=np.float64), region)  # np.array copies: U is never modified
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


# ------------------------------------------------------------------------------ owner-side W1
def _w1_exact(A: np.ndarray, B: np.ndarray, metric: str) -> tuple[float, bool, str]:
    """Exact W1 (uniform weights) via :func:`dpsynth_core.transport.wasserstein1`: the CDF formula on the
    line (d = 1, where every metric is |x - y| and a network simplex on the dense cost matrix was the
    slowest step of a run), POT's network simplex otherwise."""
    from ..transport import wasserstein1

    res = wasserstein1(A, B, metric=metric, method="exact_1d" if A.shape[1] == 1 else "pot", return_result=True)
    return float(res.value), bool(res.certified or res.exact), res.method


def _owner_w1(U: np.ndarray, S: np.ndarray, metric: str, diag_rng: np.random.Generator) -> tuple[float, str]:
    """W1(private, synthetic) in unit-cube coordinates and the release's metric (owner-side).

    Exact (POT network simplex, dual-certified) up to :data:`W1_EXACT_PAIRS` pairs; beyond that the
    same exact solver on a random subsample of the private points, labelled as an estimate (the
    transport module's certified "sparse" method is far slower at 10^5 x 2000 points in l2).
    """
    if U.shape[1] == 1 or U.shape[0] * S.shape[0] <= W1_EXACT_PAIRS:
        value, cert, method = _w1_exact(U, S, metric)
        if method == "exact_1d":
            return value, "exact (1-D CDF formula)"
        return value, "exact (POT emd, dual-certified)" if cert else "exact (POT emd, certificate failed)"
    k = max(1, W1_EXACT_PAIRS // max(1, S.shape[0]))
    sub = U[diag_rng.choice(U.shape[0], size=min(k, U.shape[0]), replace=False)]
    value, _, _ = _w1_exact(sub, S, metric)
    return value, f"exact POT on a random subsample of {sub.shape[0]} private points (estimate)"


# ------------------------------------------------------------------------------ the mechanism
@register(dict(
    theory=Theory(proven=False),
    name="private_evolution",
    title="Private Evolution (nearest-neighbour votes on variations)",
    paper="González, Fanti, Ramdas, Private Evolution converges (2025) [GFR25]",
    algorithm="[GFR25] Algorithms 2-4, Eq. (1), Theorem 4.1, Section 4.2",
    dp="approximate",
    neighbours=("add_remove", "replace"),
    default_neighbours="replace",
    needs_delta=True,
    params=(
        ParamSpec("iterations", "int", None, "PE steps T; default T = 2 log(nε) (Section 6).", low=1, high=500),
        ParamSpec("n_synthetic", "int", None,
                  "Synthetic points n_s; default (σ(2L+1)^{1-1/max(d,2)})^{-1} from Theorem 4.1 (σ on counts/n).",
                  low=1, high=1_000_000, log=True),
        ParamSpec("histogram", "choice", "threshold",
                  "Post-processing of the noisy votes: Gaussian + threshold H and renormalise (Algorithm 3), "
                  "Gaussian + bounded-Lipschitz projection (Algorithm 2, small supports), or Laplace on positive "
                  "votes + stability threshold (Section 4.2).",
                  choices=HISTOGRAMS),
        ParamSpec("threshold", "float", 0.0,
                  "Threshold H on the normalised noisy histogram ('threshold' only); H = 0 in Section 6.",
                  low=0.0, high=1.0),
        ParamSpec("alpha", "float", None,
                  "Smallest variation radius α of Eq. (1), unit-cube units; default D σ^{1/max(d,2)} (Theorem 4.1).",
                  low=1e-6, high=10.0, log=True, advanced=True),
        ParamSpec("init", "choice", "uniform",
                  "Random API for S_0: uniform over the region, the public dataset, a single point at the origin "
                  "(or the centre); 'private' (S_0 = S) and 'interpolate' (S_0 = (1-2β)S) are non-private teaching "
                  "starts that need allow_nonprivate_init.",
                  choices=INITS),
        ParamSpec("beta", "float", 0.25, "β of the 'interpolate' start S_0 = (1-2β)S about the origin (Figure 2).",
                  low=0.0, high=1.0, advanced=True),
        ParamSpec("region", "choice", "box",
                  "Working region: the domain box, or the l2 ball inscribed in it (the paper's setting).",
                  choices=REGIONS),
        ParamSpec("metric", "choice", "l2", "Distance of the nearest-neighbour votes (Theorem 4.1 uses l2).",
                  choices=METRICS),
        ParamSpec("allow_nonprivate_init", "bool", False,
                  "Allow the teaching starts that read the private data (the release is then NOT DP).",
                  advanced=True),
        ParamSpec("track_w1", "bool", True,
                  "Owner-side W1 to the private data after every iteration (for the iterations view).",
                  advanced=True),
    ),
    summary="Iteratively moves a synthetic cloud towards the data with privatised nearest-neighbour votes on "
            "Gaussian variations; T Gaussian histograms composed exactly (μ-GDP).",
))
def private_evolution(X, domain, *, epsilon, delta, iterations=None, n_synthetic=None, histogram="threshold",
                      threshold=0.0, variation_scales=None, alpha=None, init="uniform", public=None, beta=0.25,
                      region="box", metric="l2", neighbours="replace", n_public=None,
                      allow_nonprivate_init=False, track_w1=True, rng=None) -> Release:
    """Private Evolution [GFR25, Algorithms 2–4] with the variation API of [GFR25, Eq. (1)].

    For t = 1..T:

    .. math:: V_t = \\mathrm{Var}(S_{t-1}),\\quad \\tilde c_t = \\mathrm{NN}(S, V_t) + \\mathcal N(0, \\sigma^2 I),
              \\quad \\mu'_t = \\mathrm{post}(\\tilde c_t),\\quad S_t \\sim (\\mu'_t)^{n_s}

    with :math:`\\sigma = \\sqrt T \\Delta_2 / \\mu(\\varepsilon, \\delta)` (exact μ-GDP composition,
    Δ_2 = 1 add/remove, √2 replace).

    Parameters
    ----------
    X : array (n, d), DataFrame, Dask array or Dask DataFrame
        Private data in domain units; points outside the region are projected into it. A Dask
        collection is read one partition at a time, one pass per iteration (module docstring).
    domain : Domain
        Public bounds.
    epsilon : float in (0, inf); delta : float in (0, 1)
        Total budget of the release.
    iterations : int in [1, 500] or None
        T. ``None``: :math:`T = 2\\log(n\\varepsilon)` rounded (Section 6), from the public n (replace,
        ``n_public``) or a noisy size (add/remove; costs 5% of ε, on the ledger).
    n_synthetic : int in [1, 10^6] or None
        n_s. ``None``: Theorem 4.1's :math:`\\lceil(\\sigma(2L+1)^{1-1/\\max(d,2)})^{-1}\\rceil` with σ the
        noise on the normalised histogram, capped at 20,000. At most ``dpsynth_core.limits``
        ``max_synthetic_rows``; and T × n_s(2L+1) × d candidate coordinates must stay within
        ``max_candidates`` (checked before anything is allocated; refused with a message naming what
        to lower).
    histogram : {"threshold", "dbl", "laplace_threshold"}
        Post-processing (module docstring). ``"dbl"`` needs ``dpsynth_core.transport.bl_projection``
        and refuses supports above its limit.
    threshold : float in [0, 1]
        H of Algorithm 3 on the normalised histogram (``"threshold"`` only; must be 0 otherwise).
    variation_scales : sequence of float > 0 or None
        The σ_l of Eq. (1) in unit-cube coordinates (at most 64). ``None``: Eq. (1) from ``alpha``.
        Not in the dashboard schema (a list).
    alpha : float in (0, 10] or None
        α of Eq. (1). ``None``: :math:`D\\sigma^{1/\\max(d,2)}` (Theorem 4.1), D the region's diameter.
    init : {"uniform", "public", "origin", "private", "interpolate"}
        Random API for S_0 (n_s uniform points; ``public`` itself, subsampled to n_s rows without
        replacement when larger; one point at the origin of the domain, or at its centre when the
        origin is outside the region). ``"private"`` (S_0 = S) and ``"interpolate"``
        (:math:`S_0 = c + (1-2\\beta)(S - c)`, c the origin point above, Figure 2) read the private
        data: only with ``allow_nonprivate_init=True``, and the release has ``is_dp=False``; refused
        for a Dask X (they copy all the rows).
    public : array (m, d) or None
        Public data in domain units, for ``init="public"`` only.
    beta : float in [0, 1]
        β of the ``"interpolate"`` start.
    region : {"box", "ball"}
        The domain box, or the l2 ball inscribed in it in unit-cube coordinates.
    metric : {"l2", "l1", "linf"}
        Distance of the votes (unit-cube coordinates).
    neighbours : {"replace", "add_remove"}
    n_public : int in [1, ``limits.current().max_size``] or None
        A public dataset size for parameters that depend on n under add/remove.
    allow_nonprivate_init : bool
    track_w1 : bool
        Owner-side W1 (unit cube, ``metric``) between the private data and every S_t, exact with
        POT up to 4·10^6 pairs, else on a random subsample of the private data (labelled). Not
        computed for a Dask X (``trace["owner"]["w1"]`` is None, ``"w1_note"`` says why).
    rng : numpy Generator, int or None

    Returns
    -------
    Release
        ``synthetic`` (n_s, d); ``params`` with ``iterations``, ``sigma`` (noise std on counts, None
        for laplace_threshold), ``l2_sensitivity``, ``alpha``, ``variation_scales``, ``n_synthetic``...;
        ``trace`` with per-iteration ``synthetic`` (domain units), ``variations``, ``noisy_histograms``,
        ``weights`` and, in ``trace["owner"]``, ``clean_histograms`` and ``w1``.

    Notes
    -----
    When a post-processing keeps no mass (every noisy vote below the threshold, typical of
    ``"laplace_threshold"`` on spread-out data, Appendix E), the paper's μ' is the zero measure and
    cannot be sampled; this implementation keeps ``S_t = S_{t-1}`` (post-processing of the DP output)
    and records it in ``trace["votes_kept"]`` and ``notes``.

    Theorem 4.1 bounds E W1 by an Õ rate with unspecified constants, so ``bound`` is None;
    ``params["theorem_4_1_rate"]`` gives :math:`d D(\\sqrt{\\log(n\\varepsilon/\\sqrt{\\log(1/\\delta)})
    \\log(1/\\delta)}/(n\\varepsilon))^{1/d}` without constants.

    References
    ----------
    .. [GFR25] T. González, G. Fanti, A. Ramdas. Private Evolution Converges. arXiv:2506.08312, 2025.
    .. [DRS22] J. Dong, A. Roth, W. J. Su. Gaussian Differential Privacy. JRSS B 84(1), 2022.
    .. [Vad17] S. Vadhan. The Complexity of Differential Privacy. Tutorials on the Foundations of Cryptography, 2017.
    See docs/references.md for the full entries.
    """
    p = prepare(X, domain, owner=OWNER, epsilon=epsilon, neighbours=neighbours, rng=rng)
    dlt = check_probability(delta, "delta", OWNER)
    d = domain.d
    hist = check_choice(histogram, "histogram", OWNER, HISTOGRAMS)
    reg = check_choice(region, "region", OWNER, REGIONS)
    met = check_choice(metric, "metric", OWNER, METRICS)
    ini = check_choice(init, "init", OWNER, INITS)
    allow = check_bool(allow_nonprivate_init, "allow_nonprivate_init", OWNER)
    track = check_bool(track_w1, "track_w1", OWNER)
    H = check_float(threshold, "threshold", OWNER, low=0.0, high=1.0)
    b_interp = check_float(beta, "beta", OWNER, low=0.0, high=1.0)
    if H > 0 and hist != "threshold":
        raise param_error(OWNER, "threshold", f"0 with histogram={hist!r} (H applies to 'threshold' only)", threshold)
    if ini in NONPRIVATE_INITS and not allow:
        raise ValueError(
            f"The 'init' parameter of {OWNER} is {ini!r}, a start that reads the private data and is not "
            f"differentially private. Pass allow_nonprivate_init=True to run it as a teaching example "
            f"(the release will say it is not DP)."
        )
    if ini in NONPRIVATE_INITS and p.rows.dask:
        raise ValueError(
            f"The 'init' parameter of {OWNER} is {ini!r}, a teaching start that copies the private rows into "
            f"S_0: it needs X in memory (a NumPy array or a pandas DataFrame), and X is a Dask collection, read "
            f"only through per-record sums. Use init='uniform', 'public' or 'origin', or pass X in memory."
        )
    if ini == "public" and public is None:
        raise param_error(OWNER, "public", "an array of shape (m, d) when init='public'", public, kind=TypeError)
    if ini != "public" and public is not None:
        raise param_error(OWNER, "public", "None unless init='public'", public)
    T_user = None if iterations is None else check_int(iterations, "iterations", OWNER, low=1, high=500)
    ns_user = None if n_synthetic is None else check_int(n_synthetic, "n_synthetic", OWNER, low=1, high=1_000_000)
    if ns_user is not None:
        limits.check_rows(ns_user, domain.d, owner=OWNER)
    if variation_scales is not None and alpha is not None:
        raise param_error(OWNER, "alpha", "None when variation_scales is given", alpha)
    scales_user = None
    if variation_scales is not None:
        try:
            scales_user = np.asarray(variation_scales, dtype=np.float64).ravel()
        except (TypeError, ValueError):
            raise param_error(OWNER, "variation_scales", "a sequence of floats in (0, inf)", variation_scales,
                              kind=TypeError) from None
        if scales_user.size == 0 or scales_user.size > 64 or not np.all(np.isfinite(scales_user)) or np.any(
                scales_user <= 0):
            raise param_error(OWNER, "variation_scales", "a sequence of 1 to 64 floats in (0, inf)",
                              variation_scales)
    alpha_user = None if alpha is None else check_float(alpha, "alpha", OWNER, low=0.0, high=10.0, low_open=True)
    pub = None
    if public is not None:
        pub = check_points(public, "public", OWNER, d=d, columns=domain._cols(public))
        pub = project_into_region(domain.to_unit(pub, owner=OWNER), reg)

    # The private rows are read only through p.rows.sum(_votes, ...) (one pass per iteration, NumPy or
    # Dask). In memory, the owner-side W1 and the teaching starts also use all the rows at once.
    in_memory = not p.rows.dask
    U_owner = None
    if in_memory and (track or ini in NONPRIVATE_INITS):
        U_owner = project_into_region(p.U.copy(), reg)  # private data in the working region (owner-side)
    gen = p.rng
    diameter = region_diameter(reg, d, met)
    sens2 = pe_l2_sensitivity(p.neighbours)
    ledger = Ledger()

    # ---- the dataset size, when a parameter depends on it (public under replace)
    needs_n = (T_user is None or ns_user is None or (scales_user is None and alpha_user is None)
               or H > 0 or hist == "dbl")
    size = None
    if needs_n:
        size = resolve_size(p.n, epsilon=p.epsilon, neighbours=p.neighbours, n_public=n_public, rng=gen, owner=OWNER)
        if size.epsilon_spent:
            ledger.add("noisy size n (discrete Laplace, for T, n_s, α defaults)", size.epsilon_spent)
    elif n_public is not None:
        check_n_public(n_public, OWNER)
    n_used = None if size is None else size.n
    eps_avail = p.epsilon - ledger.epsilon

    T = T_user if T_user is not None else default_iterations(n_used, eps_avail)
    sigma_counts = pe_sigma(eps_avail, dlt, p.neighbours, T)  # Gaussian histograms; reference for laplace
    sigma_norm = None if n_used is None else sigma_counts / n_used
    if scales_user is not None:
        scales = scales_user
        alpha_used = None
    else:
        alpha_used = alpha_user if alpha_user is not None else default_alpha(sigma_norm, diameter, d)
        scales = variation_scales_eq1(min(alpha_used, diameter), diameter, d)
    L = int(scales.size)
    n_s = ns_user if ns_user is not None else default_n_synthetic(sigma_norm, L, d)
    # Resource limit (dpsynth_core.limits max_candidates), checked before S_0 and the variations exist:
    # T iterations of n_s (2L+1) variation points of d coordinates. T, n_s and L come from public
    # inputs and the size estimate (public, or a DP noisy size): refusing is post-processing.
    planned = T * n_s * (2 * L + 1) * d
    blame = "n_synthetic" if ns_user is not None else "iterations" if T_user is not None else "alpha"
    limits.check_planned(planned, "max_candidates", owner=OWNER, param=blame, what="candidate coordinates",
                         fix="pass a smaller n_synthetic, fewer iterations, or a larger alpha (fewer variation "
                             "scales L)",
                         got=f"{T} iterations x {n_s} points x {2 * L + 1} variations x d={d} = {planned}")

    # ---- per-iteration privacy
    if hist == "laplace_threshold":
        eps_t, dlt_t = eps_avail / T, dlt / T
        lap_scale, count_thr = laplace_count_threshold(eps_t, dlt_t, p.neighbours)
        for t in range(1, T + 1):
            ledger.add(f"iteration {t}: Laplace + threshold NN histogram (scale {lap_scale:.4g}, keep counts >= "
                       f"{count_thr})", eps_t, dlt_t)
        ledger.note = (f"Each iteration is an (ε/T, δ/T)-DP stability-based histogram ([GFR25, Proposition 4.1]; "
                       f"[Vad17, Theorem 3.5]; discrete Laplace scale {lap_scale:.4g} on positive counts, threshold "
                       f"{count_thr}); the T = {T} iterations compose by basic composition.")
        sigma_used = None
    else:
        lap_scale = count_thr = None
        for t in range(1, T + 1):
            ledger.add(f"iteration {t}: Gaussian NN histogram (σ = {sigma_counts:.4g} on counts)", eps_avail / T,
                       dlt / T)
        mu = math.sqrt(T) * sens2 / sigma_counts
        ledger.note = (f"Exact composition: the T = {T} Gaussian histograms (l2 sensitivity {sens2:.4g}, σ = "
                       f"{sigma_counts:.4g}) are together μ-GDP with μ = √T·Δ/σ = {mu:.4g}, which implies "
                       f"({eps_avail:.4g}, {dlt:.3g})-DP. The per-iteration entries are the equal shares ε/T, δ/T "
                       f"of that exact total, not separate guarantees.")
        sigma_used = sigma_counts
    if size is not None and size.epsilon_spent:
        ledger.note += " The noisy size is pure DP and composes with the rest by basic composition."

    count_threshold_h = None
    if hist == "threshold":
        count_threshold_h = H * n_used if H > 0 else 0.0

    # ---- S_0 (Random API, or the teaching starts)
    to_dom = _to_domain(domain)
    anchor = domain.to_unit(np.zeros((1, d)), owner=OWNER)[0]
    origin_inside = bool(np.all(np.asarray(domain.lower) <= 0) and np.all(np.asarray(domain.upper) >= 0)
                         and _in_region(anchor, reg))
    if not origin_inside:
        anchor = np.full(d, 0.5)
    if ini == "uniform":
        S = _uniform_in_region(n_s, d, reg, gen)
    elif ini == "public":
        S = pub if pub.shape[0] <= n_s else pub[gen.choice(pub.shape[0], size=n_s, replace=False)]
        S = S.copy()
    elif ini == "origin":
        S = anchor[None, :].copy()
    elif ini == "private":
        S = U_owner.copy()
    else:
        S = project_into_region(anchor + (1.0 - 2.0 * b_interp) * (U_owner - anchor), reg)
    nonprivate = ini in NONPRIVATE_INITS
    S0_private = to_dom(S) if nonprivate else None  # reads the private data: owner-side only

    # ---- trace budget
    v_size = n_s * (2 * L + 1)
    keep_all = T * v_size * (d + 3) <= TRACE_MAX_VALUES
    diag_rng = np.random.default_rng(0)  # owner-side diagnostics never touch the release's generator
    synth_trace: list = [None if nonprivate else to_dom(S)]
    var_trace: list = []
    noisy_trace: list = []
    weight_trace: list = []
    kept_trace: list = []
    clean_trace: list = []
    w1_trace: list = []
    w1_method = None
    w1_note = None
    if track and not in_memory:
        track = False  # the exact W1 needs every private row at once: never materialise a Dask collection
        w1_note = ("not computed: X is a Dask collection, read only through per-record sums, and the W1 to the "
                   "private data needs all the rows in memory")
    if track:
        w, w1_method = _owner_w1(U_owner, S, met, diag_rng)
        w1_trace.append(w)

    bl = None
    if hist == "dbl":
        from ..transport import BL_DENSE_MAX_M

        m_max = max(S.shape[0], n_s) * (2 * L + 1)
        if m_max > BL_DENSE_MAX_M:
            raise ValueError(
                f"The 'n_synthetic' parameter of {OWNER} must keep the support small with histogram='dbl': "
                f"the dense bounded-Lipschitz LP (Algorithm 2, 2m^2 variables) takes at most {BL_DENSE_MAX_M} "
                f"variations per iteration, and max(|S_0|, n_s) x (2L+1) = {max(S.shape[0], n_s)} x {2 * L + 1} = "
                f"{m_max}. Got n_synthetic={n_s}. Lower n_synthetic, or use fewer variation scales (alpha, "
                f"variation_scales)."
            )
        bl = _bl_projection_fn()

    for t in range(1, T + 1):
        V = variation_api(S, scales, reg, gen)
        counts = p.rows.sum(_votes, V, reg, met)  # what the release reads of the private data: one pass
        if hist == "laplace_threshold":
            noisy = laplace_threshold_counts(counts, lap_scale, count_thr, gen)
            weights = threshold_weights(noisy, 1)
        else:
            noisy = gaussian_noisy_counts(counts, sigma_counts, gen)
            if hist == "threshold":
                weights = threshold_weights(noisy, count_threshold_h)
            else:
                weights = bl(noisy / n_used, V, met)
        if weights is None:  # every vote removed: no information, keep S_{t-1} (post-processing)
            fallback = True
        else:
            fallback = False
            S = V[gen.choice(V.shape[0], size=n_s, p=weights)]
        last = t == T
        if keep_all or last:
            var_trace.append(to_dom(V))
            noisy_trace.append(noisy)
            weight_trace.append(weights)
            clean_trace.append(counts)
        else:
            var_trace.append(None)
            noisy_trace.append(None)
            weight_trace.append(None)
            clean_trace.append(None)
        kept_trace.append(not fallback)
        synth_trace.append(to_dom(S))
        if track:
            w1_trace.append(_owner_w1(U_owner, S, met, diag_rng)[0])

    notes = []
    if nonprivate:
        notes.append(f"NOT differentially private: init={ini!r} reads the private data (teaching run). The ledger "
                     f"shows what the iterations alone would cost; the release guarantees nothing.")
    if not all(kept_trace):
        notes.append(f"{kept_trace.count(False)} iteration(s) lost every vote to the threshold and kept S_(t-1).")
    if not keep_all:
        notes.append("Trace keeps variations and histograms for the last iteration only (memory bound).")
    rate = None
    if n_used is not None:
        ne = n_used * eps_avail
        rate = d * diameter * (math.sqrt(max(math.log(max(ne / math.sqrt(math.log(1 / dlt)), math.e)), 1.0)
                                         * math.log(1 / dlt)) / ne) ** (1.0 / d)
    params = {
        "iterations": T,
        "sigma": sigma_used,
        "sigma_normalised": None if (sigma_used is None or n_used is None) else sigma_used / n_used,
        "reference_sigma": sigma_counts,
        "l2_sensitivity": sens2,
        "histogram": hist,
        "threshold": H,
        "count_threshold": count_thr if hist == "laplace_threshold" else count_threshold_h,
        "laplace_scale": lap_scale,
        "alpha": alpha_used,
        "variation_scales": [float(s) for s in scales],
        "levels": L,
        "variations_per_point": 2 * L + 1,
        "n_synthetic": n_s,
        "init": ini,
        "beta": b_interp if ini == "interpolate" else None,
        "region": reg,
        "metric": met,
        "diameter": diameter,
        "size": None if size is None else size.to_dict(),
        "theorem_4_1_rate": rate,
    }
    trace = {
        "synthetic": synth_trace,
        "variations": var_trace,
        "noisy_histograms": noisy_trace,
        "weights": weight_trace,
        "votes_kept": kept_trace,
        "owner": {
            "clean_histograms": clean_trace,
            "w1": w1_trace if track else None,
            "w1_metric": met,
            "w1_units": "unit cube",
            "w1_method": w1_method,
            "w1_note": w1_note,
            "initial_synthetic": S0_private,
            "n": p.n,
            "n_clamped": p.n_clamped,
        },
    }
    return Release(
        synthetic=to_dom(S), epsilon=p.epsilon, delta=dlt, neighbours=p.neighbours, mechanism=OWNER,
        domain=domain, ledger=ledger, params=params, bound=None,
        bound_kind="none: Theorem 4.1 is an Õ rate with unspecified constants (see params['theorem_4_1_rate'])",
        trace=trace, is_dp=not nonprivate, notes=notes,
    )


def _to_domain(domain):
    lo, hi = domain.lower_array, domain.upper_array

    def f(P: np.ndarray) -> np.ndarray:
        return np.clip(domain.from_unit(P), lo, hi)

    return f


def _bl_projection_fn():
    """Algorithm 2, line 8: the probability vector on V_t closest to ν = c̃/n in D_BL.

    Uses :func:`dpsynth_core.transport.bl_projection` ([HVZ23, Algorithm 2], dense LP). Its function
    class is {Lip f ≤ 1, |f| ≤ diam [0,1]^d}, the F_BL of [GFR25] with Ω the unit cube (with
    ``region="ball"`` the bound on |f| is the cube's diameter, not the ball's).
    """
    from ..transport import bl_projection

    def project(nu: np.ndarray, V: np.ndarray, metric: str) -> np.ndarray:
        tau = bl_projection(nu, support=V, method="dense", metric=metric).tau
        tau = np.clip(tau, 0.0, None)
        return tau / tau.sum()

    return project
