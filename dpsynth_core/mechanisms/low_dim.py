"""Low-dimensional synthetic data through private PCA [HSVZ23, Algorithms 1–5, Theorem 4.2].

Default plan (issue 27; :func:`dpsynth_core.defaults.low_dim_plan`, docs/defaults.md): when d <= 6 the
mechanism does not project and releases PSMM in full dimension (the defaults study found no projection
ahead of it on average there); for d > 6 it releases PMM in full dimension when εn < 250 and otherwise
projects as below, with PSMM in the subspace and, once εn/d >= 100, the projected cube as its box (issue 37:
:func:`dpsynth_core.defaults.low_dim_box`). ``plan="paper"`` always projects.

Algorithm 1 with the budget split in thirds (``budget_split``; basic / adaptive composition, Lemmas A.1-A.2):

1. **Private centred covariance** (Algorithm 2, Theorem 2.1), budget ε/3:
   :math:`\\widehat M = M + A` with :math:`M = \\frac{1}{n-1}\\sum_i (X_i-\\bar X)(X_i-\\bar X)^\\top` (1.2)
   and the symmetric Laplace matrix :math:`A_{ij} = A_{ji} = \\lambda_{ij}` (i < j),
   :math:`A_{ii} = 2\\lambda_{ii}`, :math:`\\lambda_{ij} \\sim \\mathrm{Lap}(\\sigma)` i.i.d.,
   :math:`\\sigma = \\Delta_1/(2\\varepsilon/3)` with the covariance's l1 sensitivity
   :math:`\\Delta_1 = d^2(n+1)/(n(n-1))` (proved below; the paper's :math:`6d^2/n` on request).
2. **Private mean and projection** (Algorithm 3), budget ε/3: :math:`\\bar X_{priv} = \\bar X + \\lambda`,
   :math:`\\lambda \\sim \\mathrm{Lap}(d/((\\varepsilon/3) n))^d`; coordinates
   :math:`a_i = \\widehat V_{d'}^\\top (X_i - \\bar X_{priv})` on the top-d' eigenvectors of
   :math:`\\widehat M`.
3. **Synthetic data in the subspace** (Algorithm 4 = PMM, Algorithm 5 = PSMM), budget ε/3, on the
   public box :math:`[-R, R]^{d'}`, :math:`R = \\sqrt d + \\|\\bar X_{priv}\\|_2` (Section 3: every
   :math:`\\|a_i\\|_2 \\le R`). The subroutine runs under the replace relation (n is public; one
   replaced record moves one projected record).
4. **Shift back and metric projection**: :math:`Y_j = f(\\widehat V_{d'} a'_j + \\bar X_{priv})`,
   f = clip to :math:`[0,1]^d` (the l_inf metric projection, Proposition 3.2). Post-processing.

Privacy and the paper's constants (docs/low-dim.md; docs/deviations.md §3)
    * Algorithm 2's privacy loss is :math:`\\frac{1}{2\\sigma}\\sum_{i,j}|M_{ij}-M'_{ij}|` (proof of
      Theorem 2.1: off-diagonal λ_ij enters two entries, the diagonal noise is doubled), so
      :math:`\\sigma = \\Delta_1/(2\\varepsilon)` with :math:`\\Delta_1` the replace sensitivity of M
      in the entrywise l1 norm. The paper bounds every entry by 6/n, :math:`\\Delta_1 \\le 6d^2/n`,
      :math:`\\sigma = 3d^2/(\\varepsilon n)` (``covariance_noise="paper"``).
    * **Default** (``covariance_noise="tight"``): the exact worst case,
      :math:`\\Delta_1 = d^2(n+1)/(n(n-1))` (about d²/n, six times smaller). Proof (data in
      :math:`[0,1]^d`, :func:`covariance_sensitivity`): replacing x by x' in a dataset with mean m
      changes :math:`(n-1)M` by :math:`u'u'^\\top - uu^\\top - aa^\\top/n` with u = x - m, u' = x' - m,
      a = x' - x. Since :math:`u'u'^\\top - uu^\\top = \\tfrac12(ab^\\top + ba^\\top)`, b = u + u', the
      entrywise l1 norm is at most :math:`\\|a\\|_1\\|b\\|_1 + \\|a\\|_1^2/n`; coordinatewise
      :math:`|a_k| + |b_k| = 2\\max(|u_k|, |u'_k|) \\le 2`, so with :math:`\\alpha = \\|a\\|_1 \\le d`
      the bound is :math:`\\alpha(2d-\\alpha) + \\alpha^2/n`, increasing on [0, d], at most
      :math:`d^2(1 + 1/n)`; divide by n - 1. It is attained up to a factor 1 + 2/n: everyone at the
      origin and one record jumping to (1, ..., 1) moves every entry by exactly 1/n
      (tests/core/test_low_dim.py checks both the bound and this pair, and the privacy audit
      measures the release). The step is ε/3-DP either way; "tight" only stops overpaying.
    * Algorithm 3 adds :math:`\\mathrm{Lap}(d/(\\varepsilon n))` per coordinate (l1 sensitivity of
      the mean d/n under replace); the proof of Theorem 2.3 writes :math:`\\mathrm{Lap}(1/(\\varepsilon n))`
      in (C.7). We follow Algorithm 3 (the calibrated scale). The proof of Theorem 4.1 speaks of
      ε/4 per step for four steps; Algorithm 1 spends ε/3 on three noisy steps (the shift back
      reuses the already released :math:`\\bar X_{priv}`, no cost): we follow Algorithm 1.
    * Algorithm 4 prints :math:`\\sigma_j = \\varepsilon^{-1}2^{\\frac12(1-1/d')(r-j)}` without the
      normalisation that makes the levels add up to ε; the subroutine here is this package's
      :func:`~dpsynth_core.mechanisms.pmm.pmm` (the (A.4) noise of [HVZ23], spending exactly ε/3 under
      replace) or :func:`~dpsynth_core.mechanisms.psmm.psmm`, with their default parameters. Their
      ledger entries appear on this release's ledger, prefixed with the subroutine's name.
    * Only the replace relation is supported: every step is calibrated to a public n.

Box option (not in the paper)
    ``box="projected_cube"`` replaces :math:`[-R,R]^{d'}` by the exact coordinate range of the
    projected unit cube, :math:`a_k \\in [\\sum_i \\min(\\hat v_{ik},0) - \\hat v_k^\\top \\bar X_{priv},
    \\sum_i \\max(\\hat v_{ik},0) - \\hat v_k^\\top \\bar X_{priv}]` (width :math:`\\|\\hat v_k\\|_1 \\le \\sqrt d`
    instead of :math:`2R \\ge 2\\sqrt d`). It is computed from released quantities only
    (:math:`\\widehat V_{d'}` and :math:`\\bar X_{priv}`), so it costs no privacy, and every projected
    point lies in it.

Reading the data (docs/scale.md)
    The rows are read only through sums over records (:mod:`dpsynth_core.rows`), in memory or from a
    Dask collection: :func:`moments` (count, sum and sum of outer products, exact integers) gives
    :math:`\\bar X` and M, each entry correctly rounded from the exact sums of the data truncated to
    :math:`2^{-60}`; they depend neither on the order of the rows, nor on their partitioning, nor on
    the BLAS kernel. The projected rows reach the subroutine through ``Rows.map`` (projected row by
    row with elementwise sums), so a Dask release equals the in-memory one bit for bit.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import defaults, limits
from ..domain import Domain
from ..noise import laplace
from ..privacy import Ledger
from ..rows import Rows
from ..theory import BoundKind, Theory, subspace_rate
from ..validation import check_int, param_error
from .contract import Config, Prepared, mechanism, param
from .pmm import PMMConfig, PMMOwner, PMMTrace, pmm
from .psmm import PSMM_MAX_DIM, PSMMConfig, PSMMOwner, PSMMTrace, psmm
from .release import OwnerView, Release, Trace

__all__ = [
    "low_dim",
    "LowDimConfig",
    "LowDimTrace",
    "LowDimOwner",
    "LowDimHandoverTrace",
    "LowDimHandoverOwner",
    "PLANS",
    "BUDGET_SPLITS",
    "resolve_plan",
    "moments",
    "moment_sums",
    "mean_and_covariance",
    "SUBROUTINES",
    "BOXES",
    "PSMM_MAX_DIM",
    "covariance_matrix",
    "covariance_noise_scale",
    "covariance_sensitivity",
    "COVARIANCE_NOISES",
    "symmetric_laplace",
    "private_covariance",
    "mean_noise_scale",
    "top_eigenvectors",
    "choose_target_dim",
    "expected_noise_norm",
    "subspace_box",
    "theorem42_terms",
]

SUBROUTINES = ("pmm", "psmm")
BOXES = ("paper", "projected_cube")
#: How the unset parameters are resolved: the defaults study's plan (:func:`dpsynth_core.defaults.low_dim_plan`,
#: which may hand over to PSMM or PMM in full dimension) or the paper's Algorithm 1 (always project).
PLANS = ("study", "paper")
#: Named budget splits (covariance, mean, subroutine); the Python API also takes three shares summing to 1.
BUDGET_SPLITS = {"thirds": (1 / 3, 1 / 3, 1 / 3), "subroutine": (0.2, 0.1, 0.7)}
#: Calibration of Algorithm 2's noise: the exact l1 sensitivity (default) or the paper's 6d²/n.
COVARIANCE_NOISES = ("tight", "paper")


# ------------------------------------------------------------------------------ the one pass over the data
#: :func:`moments` writes a coordinate u in [0, 1] in 3 digits of 20 bits: u is kept to 60 fractional bits.
_DIGIT_BITS = 20
_DIGITS = 3
_FRACTION_BITS = _DIGITS * _DIGIT_BITS
#: Rows per exact product in :func:`moments`: digits are integers <= 2^20, so every partial sum of a
#: chunk's digit products is an integer below 4096 * 2^40 = 2^52, exact in float64 in any order.
_MOMENT_CHUNK = 4096
#: A chunk's integer products (< 2^52) are accumulated as two int64 limbs, value = hi * 2^26 + lo.
_LIMB_BITS = 26


def moments(U: np.ndarray) -> np.ndarray:
    """The per-record statistic of Algorithms 2 and 3: the count, the sum and the sum of outer products
    of the rows, exactly, as one integer array that adds up over disjoint blocks of rows.

    Each coordinate :math:`u \\in [0, 1]` is truncated to :math:`\\tilde u = \\lfloor u\\,2^{60}\\rfloor 2^{-60}`
    (exact for u >= 2^-8, whose float64 ulp is at least 2^-60; an error below 2^-60 otherwise) and written in three
    20-bit digits, :math:`\\tilde u = \\sum_{l<3} a_l 2^{-20(l+1)}` with integers :math:`0 \\le a_l \\le 2^{20}`.
    For the digit matrix :math:`D = [1, a_0, a_1, a_2]` (rows x (1 + 3d)), :math:`D^\\top D` holds the count,
    the digit sums and the digit products, hence :math:`n`, :math:`\\sum_i \\tilde u_i` and
    :math:`\\sum_i \\tilde u_i \\tilde u_i^\\top` exactly (:func:`moment_sums`). It is computed by a BLAS
    product per chunk of 4096 rows, which is exact (every partial sum is an integer below 2^53, so the
    result does not depend on the summation order or the CPU kernel), and accumulated in int64.

    Sums over blocks are exact integers, so the statistic of a Dask partitioning, merged by addition,
    represents the same integers as the in-memory one (the two limbs may split them differently:
    compare :func:`moment_sums`, not the limbs). Cost: O(n d) elementwise work and an O(n d^2) BLAS
    product; memory O(4096 d), whatever n.

    Parameters
    ----------
    U : ndarray (n, d), entries in [0, 1] (the unit cube; not checked here, see :func:`covariance_matrix`)

    Returns
    -------
    int64 ndarray (2, 1 + 3d, 1 + 3d): limbs hi, lo of :math:`D^\\top D` = hi * 2^26 + lo.
    """
    U = np.asarray(U, dtype=np.float64)
    rows, d = U.shape
    k = 1 + _DIGITS * d
    hi = np.zeros((k, k), dtype=np.int64)
    lo = np.zeros((k, k), dtype=np.int64)
    size = min(_MOMENT_CHUNK, rows)
    D = np.empty((size, k))
    D[:, 0] = 1.0
    t = np.empty((size, d))
    mask = (1 << _LIMB_BITS) - 1
    for start in range(0, rows, _MOMENT_CHUNK):
        block = U[start:start + _MOMENT_CHUNK]
        r = block.shape[0]
        Dr, tr = D[:r], t[:r]
        np.ldexp(block, _DIGIT_BITS, out=tr)  # exact: a power-of-two scaling
        for digit in range(_DIGITS):
            a = Dr[:, 1 + digit * d:1 + (digit + 1) * d]
            np.floor(tr, out=a)
            if digit + 1 < _DIGITS:
                np.subtract(tr, a, out=tr)  # exact: the fractional part
                np.ldexp(tr, _DIGIT_BITS, out=tr)
        G = (Dr.T @ Dr).astype(np.int64)  # integers below 2^53: exact in any summation order
        hi += G >> _LIMB_BITS
        lo += G & mask
    return np.stack([hi, lo])


def moment_sums(stat: np.ndarray) -> tuple[int, np.ndarray, np.ndarray]:
    """The exact sums held by :func:`moments` (merged over any blocks), as Python integers.

    Returns
    -------
    n : int
    s : object ndarray (d,) of int, :math:`\\sum_i \\tilde u_i` in units of 2^-60
    S : object ndarray (d, d) of int, :math:`\\sum_i \\tilde u_i \\tilde u_i^\\top` in units of 2^-120 (symmetric)
    """
    limbs = np.asarray(stat)
    k = limbs.shape[-1]
    d = (k - 1) // _DIGITS
    G = limbs[0].astype(object) * (1 << _LIMB_BITS) + limbs[1].astype(object)
    blocks = [slice(1 + digit * d, 1 + (digit + 1) * d) for digit in range(_DIGITS)]
    top = _FRACTION_BITS  # digit l weighs 2^-20(l+1), i.e. 2^(60 - 20(l+1)) units of 2^-60
    s = sum(G[0, blocks[a]] * (1 << (top - _DIGIT_BITS * (a + 1))) for a in range(_DIGITS))
    S = sum(G[blocks[a], blocks[b]] * (1 << (2 * top - _DIGIT_BITS * (a + b + 2)))
            for a in range(_DIGITS) for b in range(_DIGITS))
    return int(G[0, 0]), s, S


def mean_and_covariance(stat: np.ndarray) -> tuple[int, np.ndarray, np.ndarray]:
    """n, the mean and the centred covariance (1.2) from :func:`moments`, each entry correctly rounded
    from the exact sums: :math:`\\bar u = s/n`, :math:`M = (nS - ss^\\top)/(n(n-1))` in integer arithmetic
    (no cancellation, no dependence on the order of the rows or on BLAS). Needs n >= 2."""
    n, s, S = moment_sums(stat)
    if n < 2:
        raise ValueError(f"the centred covariance (1.2) needs at least 2 rows; got {n}")
    mean = (s / (n << _FRACTION_BITS)).astype(np.float64)  # Python int / int: correctly rounded
    M = ((n * S - np.multiply.outer(s, s)) / ((n * (n - 1)) << (2 * _FRACTION_BITS))).astype(np.float64)
    return n, mean, M


# ------------------------------------------------------------------------------ Algorithm 2
def covariance_matrix(U: np.ndarray) -> np.ndarray:
    """Centred covariance (1.2): :math:`M = \\frac{1}{n-1}\\sum_i (X_i - \\bar X)(X_i - \\bar X)^\\top`.

    Computed from the exact sums of :func:`moments` (the statistic the mechanism reads), each entry
    correctly rounded (for data given to 2^-60, e.g. ``rng.random``, it is the exact covariance
    rounded once).

    Parameters
    ----------
    U : ndarray (n, d), n >= 2, entries in [0, 1] (the unit cube)

    Returns
    -------
    ndarray (d, d), symmetric positive semi-definite.
    """
    U = np.asarray(U, dtype=np.float64)
    if U.ndim != 2 or U.shape[0] < 2:
        raise ValueError(f"covariance_matrix needs an array (n, d) with n >= 2; got shape {U.shape}")
    if not np.all((U >= 0.0) & (U <= 1.0)):  # also refuses NaN
        raise ValueError("covariance_matrix needs data in the unit cube [0, 1]^d (Domain.to_unit)")
    return mean_and_covariance(moments(U))[2]


def covariance_sensitivity(n: int, d: int, rule: str = "tight") -> float:
    """Replace sensitivity of the centred covariance (1.2) in the entrywise l1 norm,
    :math:`\\max \\sum_{i,j} |M_{ij} - M'_{ij}|` over neighbouring datasets in :math:`[0,1]^d`.

    ``"tight"``: :math:`d^2(n+1)/(n(n-1))`, proved in the module docstring and attained up to a
    factor 1 + 2/n. ``"paper"``: :math:`6d^2/n` (Theorem 2.1's proof, 6/n per entry).
    """
    if rule == "paper":
        return 6.0 * d * d / n
    return d * d * (n + 1.0) / (n * (n - 1.0))


def covariance_noise_scale(n: int, d: int, epsilon: float, rule: str = "tight") -> float:
    """Algorithm 2's Laplace scale for an ε-DP covariance: :math:`\\sigma = \\Delta_1/(2\\varepsilon)`
    (the privacy loss is :math:`\\sum_{i,j}|\\Delta M_{ij}|/(2\\sigma)`, proof of Theorem 2.1).
    With ``rule="paper"`` this is the paper's :math:`\\sigma = 3d^2/(\\varepsilon n)`."""
    return covariance_sensitivity(n, d, rule) / (2.0 * epsilon)


def symmetric_laplace(d: int, sigma: float, rng: np.random.Generator) -> np.ndarray:
    """Algorithm 2's symmetric Laplace matrix: :math:`A_{ij} = A_{ji} = \\lambda_{ij}` (i < j),
    :math:`A_{ii} = 2\\lambda_{ii}`, :math:`\\lambda_{ij} \\sim \\mathrm{Lap}(\\sigma)` i.i.d. (d(d+1)/2 draws,
    upper triangle in row-major order)."""
    iu = np.triu_indices(d)
    lam = laplace(sigma, iu[0].size, rng)
    A = np.zeros((d, d))
    A[iu] = lam
    A = A + A.T  # off-diagonal λ_ij on both sides, the diagonal doubled: 2 λ_ii
    return A


def private_covariance(U: np.ndarray, epsilon: float, rng: np.random.Generator, rule: str = "tight"):
    """Algorithm 2 at budget ``epsilon``: :math:`\\widehat M = M + A`, σ from
    :func:`covariance_noise_scale` with ``rule``; M from :func:`covariance_matrix`.

    Returns
    -------
    M_hat : ndarray (d, d), the private matrix
    M : ndarray (d, d), the true centred covariance (owner-side)
    A : ndarray (d, d), the noise (owner-side: ``M_hat - M``)
    sigma : float
    """
    n, d = np.shape(U)
    return _noisy_covariance(covariance_matrix(U), n, epsilon, rng, rule)


def _noisy_covariance(M: np.ndarray, n: int, epsilon: float, rng: np.random.Generator, rule: str):
    """Algorithm 2's noise on the true covariance M of n rows: (M + A, M, A, σ)."""
    d = M.shape[0]
    sigma = covariance_noise_scale(n, d, epsilon, rule)
    A = symmetric_laplace(d, sigma, rng)
    return M + A, M, A, sigma


def mean_noise_scale(n: int, d: int, epsilon: float) -> float:
    """Algorithm 3's Laplace scale :math:`d/(\\varepsilon n)` per coordinate of the private mean
    (replace: the mean moves by at most 1/n per coordinate, l1 sensitivity d/n)."""
    return d / (epsilon * n)


def top_eigenvectors(M_hat: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Eigen-decomposition of a symmetric matrix, eigenvalues in decreasing order.

    Eigenvector signs are fixed (largest-magnitude entry positive) so that pictures are stable.

    Returns
    -------
    values : ndarray (d,), decreasing
    vectors : ndarray (d, d), column k is the eigenvector of ``values[k]``
    """
    w, V = np.linalg.eigh((M_hat + M_hat.T) / 2.0)
    w, V = w[::-1], V[:, ::-1]
    idx = np.argmax(np.abs(V), axis=0)
    signs = np.sign(V[idx, np.arange(V.shape[1])])
    signs[signs == 0] = 1.0
    return w.copy(), V * signs


# ------------------------------------------------------------------------------ Appendix E
def choose_target_dim(noisy_spectrum: np.ndarray, n: int, epsilon: float, d: int, k_max: int | None = None
                      ) -> tuple[int, np.ndarray]:
    """Appendix E, (E.1): the d' minimising the estimated Theorem 4.2 bound on the noisy spectrum,

    .. math:: d' = \\arg\\min_{2 \\le k \\le d} \\sqrt{\\textstyle\\sum_{i>k}\\sigma_i(\\widehat M)}
              + \\sqrt{d/k}\\,(\\varepsilon n)^{-1/k} + \\sqrt{k d^{2.5}/(\\varepsilon n)}

    (negative noisy tails are read as 0). A function of :math:`\\widehat M` only: post-processing,
    no privacy cost. For d = 1 the only choice is 1.

    Returns
    -------
    d_prime : int
    objective : ndarray, the criterion for k = k_lo..k_max (k_lo = min(2, d))
    """
    k_max = d if k_max is None else min(k_max, d)
    k_lo = min(2, d)
    s = np.asarray(noisy_spectrum, dtype=float)
    en = epsilon * n
    ks = np.arange(k_lo, k_max + 1)
    obj = np.array([math.sqrt(max(float(s[k:].sum()), 0.0)) + math.sqrt(d / k) * en ** (-1.0 / k)
                    + math.sqrt(k * d**2.5 / en) for k in ks])
    return int(ks[int(np.argmin(obj))]), obj


# ------------------------------------------------------------------------------ Theorem 4.2
@functools.lru_cache(maxsize=256)
def _unit_noise_norm(d: int) -> float:
    """E||A|| for Algorithm 2's matrix with σ = 1 (Monte Carlo with a fixed public seed for d <= 128;
    the Wigner semicircle edge :math:`2\\sqrt{2d}` (off-diagonal variance 2) beyond)."""
    if d > 128:
        return 2.0 * math.sqrt(2.0 * d)
    gen = np.random.default_rng(20240004)
    draws = 64
    norms = [float(np.abs(np.linalg.eigvalsh(symmetric_laplace(d, 1.0, gen))).max()) for _ in range(draws)]
    return float(np.mean(norms))


def expected_noise_norm(d: int, sigma: float) -> float:
    """:math:`\\mathbb{E}\\|A\\|` (operator norm) of Algorithm 2's noise at scale σ.

    Data-independent: a Monte Carlo mean over 64 matrices drawn with a fixed seed (d <= 128), or
    the semicircle edge :math:`2\\sqrt{2d}\\,\\sigma` (d > 128). The paper only states
    :math:`\\mathbb{E}\\|A\\| \\lesssim \\sigma\\sqrt d` (C.8)."""
    return sigma * _unit_noise_norm(int(d))


def subspace_box(V: np.ndarray, center: np.ndarray, box: str) -> tuple[np.ndarray, np.ndarray, float]:
    """Public box of the subroutine in the coordinates :math:`a = \\widehat V^\\top (x - c)`.

    ``"paper"``: :math:`[-R, R]^{d'}`, :math:`R = \\sqrt d + \\|c\\|_2` (Section 3, Algorithm 4).
    ``"projected_cube"``: the exact range of :math:`\\hat v_k^\\top (x - c)` over :math:`x \\in [0,1]^d`.

    Returns (lower (d',), upper (d',), R).
    """
    d, k = V.shape
    R = math.sqrt(d) + float(np.linalg.norm(center))
    if box == "paper":
        return np.full(k, -R), np.full(k, R), R
    shift = V.T @ center
    lo = np.minimum(V, 0.0).sum(axis=0) - shift
    hi = np.maximum(V, 0.0).sum(axis=0) - shift
    # widen by a few ulps so that rounding in V^T (x - c) never leaves the box
    pad = 1e-12 * (1.0 + np.abs(lo) + np.abs(hi))
    return lo - pad, hi + pad, R


def theorem42_terms(*, tail: float, d: int, d_prime: int, sigma: float, mean_scale: float,
                    subroutine_w1: float) -> dict[str, float]:
    """The terms of Theorem 4.2's bound as its proof ((C.6), (C.9)-(C.12)) gives them, with the
    explicit constants of the proof and expectations evaluated, unit cube, l_inf metric:

    .. math:: \\mathbb{E}W_1 \\le 2\\sqrt{2T} + 2\\sqrt{4d'\\,\\mathbb{E}\\|A\\|} + 2\\sqrt{2\\,\\mathbb{E}\\|\\lambda\\|_2^2}
              + 2\\,\\mathbb{E}W_1(\\mu_{\\widehat X}, \\mu_{X'}) + 2\\,\\mathbb{E}\\|\\lambda\\|_\\infty

    with T the tail :math:`\\sum_{i>d'}\\sigma_i(M)` (or a public estimate of it),
    :math:`\\mathbb{E}\\|\\lambda\\|_2^2 = 2d b^2`, :math:`\\mathbb{E}\\|\\lambda\\|_\\infty = b H_d` (b the mean's
    Laplace scale, :math:`H_d` the harmonic number) and the subroutine's W1 bound already mapped to
    :math:`\\mathbb{R}^d` with the l_inf metric. The first inequality of (C.6) bounds l_inf by l2.
    """
    e_norm = expected_noise_norm(d, sigma)
    harmonic = float(np.sum(1.0 / np.arange(1, d + 1)))
    terms = {
        "rank_approximation": 2.0 * math.sqrt(2.0 * max(tail, 0.0)),
        "private_pca": 2.0 * math.sqrt(4.0 * d_prime * e_norm),
        "mean_in_projection": 2.0 * math.sqrt(2.0 * 2.0 * d * mean_scale**2),
        "subroutine": 2.0 * subroutine_w1,
        "mean_shift": 2.0 * mean_scale * harmonic,
    }
    terms["total"] = float(sum(terms.values()))
    return terms


#: Rows per block of :func:`_project` (keeps its temporaries in cache; the result does not depend on it).
_PROJECT_CHUNK = 8192


def _project(U: np.ndarray, center: np.ndarray, V: np.ndarray) -> np.ndarray:
    """Algorithm 3's coordinates :math:`a_i = \\widehat V^\\top (u_i - c)` of each row (rows mapped one by one).

    Each coordinate is summed over the d terms left to right with elementwise operations (no BLAS,
    whose summation order may depend on the number of rows or on the CPU kernel): a row's coordinates
    are the same bits whether it is projected with all the data or within a Dask partition."""
    rows, d = U.shape
    k = V.shape[1]
    out = np.empty((rows, k))
    W = np.ascontiguousarray(V.T)
    for start in range(0, rows, _PROJECT_CHUNK):
        Z = U[start:start + _PROJECT_CHUNK] - center
        for col in range(k):
            P = Z * W[col]  # (rows, d): the terms (u_ij - c_j) v_jk
            acc = P[:, 0].copy()
            for j in range(1, d):
                acc += P[:, j]
            out[start:start + Z.shape[0], col] = acc
    return out


# ------------------------------------------------------------------------------ mechanism
def _check_target_dim(value: Any, owner: str) -> int:
    return check_int(value, "target_dim", owner)  # its range [1, d] depends on the data (check_domain)


def _check_budget_split(value: Any, owner: str) -> tuple[float, float, float]:
    """``budget_split``: a name of :data:`BUDGET_SPLITS`, "a,b,c" (the command line) or three shares in (0, 1)
    summing to 1 (within 1e-9)."""
    expected = ("'auto', " + ", ".join(repr(k) for k in BUDGET_SPLITS) + " or three shares in (0, 1) of ε "
                "(covariance, mean, subroutine) summing to 1")
    if isinstance(value, str):
        if value == "auto":
            return value
        if value in BUDGET_SPLITS:
            return BUDGET_SPLITS[value]
        value = value.split(",")
    try:
        shares = tuple(float(v) for v in value)
    except (TypeError, ValueError):
        raise param_error(owner, "budget_split", expected, value, kind=TypeError) from None
    if len(shares) != 3 or not all(math.isfinite(v) and 0.0 < v < 1.0 for v in shares) or \
            abs(math.fsum(shares) - 1.0) > 1e-9:
        raise param_error(owner, "budget_split", expected, value)
    return shares


@dataclass(frozen=True)
class LowDimConfig(Config):
    """low_dim's parameters. ``target_dim`` lies in [1, d] (and at most 6 with PSMM unless ``adaptive``):
    checked against the domain in :meth:`check_domain`."""

    plan: str = param(
        "choice", "study", "How the parameters left empty are chosen: 'study' = rule dpsynth_core.defaults.low_dim_plan "
        "of the defaults study (benchmarks/defaults_study.py, docs/defaults.md): for d <= 6 no projection, PSMM in "
        "full dimension with the whole ε (cells by defaults.psmm_cells at ε/2); for d > 6 PMM in full dimension when "
        "εn < 250, else project on d' = 2 with PSMM, thirds and the projected cube as box once εn/d >= 100 (the "
        "paper's box below); any projection parameter given (target_dim, subroutine, box, budget_split, adaptive) "
        "makes it project. 'paper' = always project ([HSVZ23] Algorithm 1: d' = 2, PMM, the paper's box, thirds).", choices=PLANS)
    target_dim: int | None = param(
        "int", None, "Dimension d' of the private subspace (top-d' eigenvectors of the noisy covariance), in [1, d]; "
        "Theorem 4.2 covers d' >= 2 (d' = 1 runs, Appendix D, and the reported bound, from the same proof steps, "
        "still holds). Default: by 'plan' (2, or d - 1 when d = 2). Ignored when 'adaptive' is on.",
        low=1, high=1000, check=_check_target_dim)
    subroutine: str = param(
        "choice", "auto", "Synthetic data in the subspace: 'pmm' (Algorithm 4, linear time; the paper's choice for "
        "d' = 2) or 'psmm' (Algorithm 5, an LP; d' <= 6 here); 'auto' = by 'plan' (psmm for 'study', pmm for "
        "'paper').", choices=("auto",) + SUBROUTINES)
    adaptive: bool = param(
        "bool", False, "Choose d' from the noisy spectrum by Appendix E's rule (E.1): post-processing of the "
        "private covariance, within [min(2, d), d] (at most 6 with PSMM); no extra privacy cost (a ledger entry of "
        "ε = 0 records the step).")
    box: str = param(
        "choice", "auto", "Public box of the subroutine: 'paper' = [-R, R]^{d'}, R = √d + ||mean_priv||_2; "
        "'projected_cube' = the exact range of the projected unit cube (narrower, same privacy); 'auto' = by 'plan' "
        "('study': the projected cube once εn/d >= 100, else the paper's; 'paper': the paper's).",
        choices=("auto",) + BOXES, advanced=True)
    budget_split: Any = param(
        "choice", "auto", "Shares of ε for the covariance, the mean and the subroutine: 'thirds' (Algorithm 1), "
        "'subroutine' = (0.2, 0.1, 0.7), or (Python API; 'a,b,c' on the command line) three shares in (0, 1) "
        "summing to 1 (basic composition, Theorem 4.1); 'auto' = thirds (both plans; the defaults study "
        "found smaller shares for the covariance and the mean disastrous on the digits).",
        choices=("auto",) + tuple(BUDGET_SPLITS), advanced=True, check=_check_budget_split)
    covariance_noise: str = param(
        "choice", "tight", "Calibration of the covariance noise: 'tight' = the exact l1 sensitivity d²(n+1)/(n(n-1)) "
        "(proved in the module docstring); 'paper' = Theorem 2.1's 6d²/n (six times more noise). Both are ε/3-DP.",
        choices=COVARIANCE_NOISES, advanced=True)

    @property
    def projects_explicitly(self) -> bool:
        """Whether a projection parameter was given (then the plan 'study' projects too)."""
        return self.adaptive or self.target_dim is not None or any(
            v != "auto" for v in (self.subroutine, self.box, self.budget_split))

    @property
    def resolved_subroutine(self) -> str:
        """The subroutine when projecting: the given one, else the plan's (psmm for 'study', pmm for 'paper')."""
        if self.subroutine != "auto":
            return self.subroutine
        return "psmm" if self.plan == "study" else "pmm"

    def max_target_dim(self, d: int) -> int:
        """The largest d' the subroutine handles in dimension d (PSMM's exact projection: at most 6)."""
        return d if self.resolved_subroutine == "pmm" else min(d, PSMM_MAX_DIM)

    def check_domain(self, domain: Domain, owner: str) -> None:
        super().check_domain(domain, owner)
        if self.target_dim is None:
            return
        check_int(self.target_dim, "target_dim", owner, low=1, high=domain.d)
        k_max = self.max_target_dim(domain.d)
        if not self.adaptive and self.target_dim > k_max:
            raise param_error(owner, "target_dim", f"an int in [1, {k_max}] with subroutine='psmm' (the exact BL "
                              f"projection handles at most {PSMM_MAX_DIM} dimensions)", self.target_dim)


@dataclass(frozen=True)
class LowDimTrace(Trace):
    """low_dim's intermediates (all DP: functions of the private covariance, the private mean and the
    subroutine's release). Unit-cube coordinates.

    ``noisy_covariance`` :math:`\\widehat M` (d, d), ``noisy_spectrum`` its eigenvalues (d,), decreasing,
    ``private_basis`` :math:`\\widehat V_{d'}` (d, d'), ``private_mean`` :math:`\\bar X_{priv}` (d,); the
    subroutine's public box ``box_lower``/``box_upper`` (d',) and ``R``; ``synthetic_coordinates`` (m, d') the
    subroutine's output; ``selection`` Appendix E's choice of d' (``adaptive`` only: rule, candidates k,
    objective, chosen); ``bound_terms`` :func:`theorem42_terms` (in ``bound_units``); ``subroutine`` the
    sub-step's own trace (:class:`~dpsynth_core.mechanisms.pmm.PMMTrace` or
    :class:`~dpsynth_core.mechanisms.psmm.PSMMTrace`), named by ``subroutine_name``."""

    d: int
    target_dim: int
    noisy_covariance: np.ndarray
    noisy_spectrum: np.ndarray
    private_basis: np.ndarray
    private_mean: np.ndarray
    R: float
    box_lower: np.ndarray
    box_upper: np.ndarray
    synthetic_coordinates: np.ndarray
    selection: dict | None
    bound_terms: dict
    bound_units: str
    subroutine_name: str
    subroutine: PMMTrace | PSMMTrace


@dataclass(frozen=True)
class LowDimOwner(OwnerView):
    """Owner view (NOT DP). ``true_covariance`` M, ``true_spectrum``, ``true_basis`` (d, d') and
    ``principal_angles`` (radians, between the private and the true top-d' subspaces,
    :func:`scipy.linalg.subspace_angles`); ``projected_coordinates`` (n, d') and ``projected_summary`` (the
    coordinates of the projected data are not private, Section 2.2; None for Dask input, with the reason in
    ``projected_note``); the noises ``noise_matrix`` A (and its operator norm ``noise_norm``) and
    ``mean_noise`` λ; the true ``tail`` :math:`\\sum_{i>d'}\\sigma_i(M)` and Theorem 4.2's bound with it
    (``bound_true_tail``, terms ``bound_terms_true_tail``); ``subroutine`` the sub-step's own owner view
    (:class:`~dpsynth_core.mechanisms.pmm.PMMOwner` or :class:`~dpsynth_core.mechanisms.psmm.PSMMOwner`)."""

    true_covariance: np.ndarray
    true_spectrum: np.ndarray
    true_basis: np.ndarray
    principal_angles: np.ndarray
    projected_coordinates: np.ndarray | None
    projected_summary: dict | None
    projected_note: str | None
    noise_matrix: np.ndarray
    noise_norm: float
    mean_noise: np.ndarray
    tail: float
    bound_true_tail: float
    bound_terms_true_tail: dict
    subroutine: PMMOwner | PSMMOwner


@dataclass(frozen=True)
class LowDimHandoverTrace(Trace):
    """low_dim's trace when its plan hands over to a mechanism in full dimension (no projection):
    ``plan`` the public record of the decision (:func:`resolve_plan`), ``mechanism`` "psmm" or "pmm" and
    ``subroutine`` that mechanism's own trace (DP)."""

    plan: dict
    mechanism: str
    subroutine: PMMTrace | PSMMTrace


@dataclass(frozen=True)
class LowDimHandoverOwner(OwnerView):
    """Owner view (NOT DP) of a handed-over release: the full-dimension mechanism's own owner view."""

    subroutine: PMMOwner | PSMMOwner


def resolve_plan(config: LowDimConfig, n: int, epsilon: float, d: int) -> defaults.LowDimPlan:
    """The plan of one release from public quantities only (n is public under replace, ε, d): with
    ``plan="study"`` :func:`dpsynth_core.defaults.low_dim_plan`, unless a projection parameter is given (then
    project, its unset parameters taken from the study's projection); with ``plan="paper"`` always project
    with the paper's values (d' = 2, PMM, the paper's box, thirds). Given parameters always win; the study's
    box is :func:`dpsynth_core.defaults.low_dim_box`."""
    study = config.plan == "study"
    base = defaults.low_dim_plan(n, epsilon, d) if study else None
    if base is not None and not base.project and not config.projects_explicitly:
        return base
    target = config.target_dim if config.target_dim is not None else (
        min(defaults.LOW_DIM_TARGET_DIM, max(d - 1, 1)) if study else min(2, d))
    split = config.budget_split if config.budget_split != "auto" else (
        defaults.LOW_DIM_SPLIT if study else BUDGET_SPLITS["thirds"])
    box = config.box if config.box != "auto" else (defaults.low_dim_box(n, epsilon, d) if study else "paper")
    return defaults.LowDimPlan(project=True, mechanism="low_dim", target_dim=target,
                               subroutine=config.resolved_subroutine, box=box, split=tuple(float(v) for v in split))


def _share(epsilon: float, share: float) -> float:
    """ε × share; a third as ε / 3 (bit for bit the split of Algorithm 1 before the split was a parameter)."""
    return epsilon / 3.0 if share == 1 / 3 else epsilon * share


def _budgets(epsilon: float, split: tuple[float, float, float]) -> tuple[float, float, float]:
    """ε of the covariance, the mean and the subroutine (what the first two leave)."""
    eps_cov, eps_mean = _share(epsilon, split[0]), _share(epsilon, split[1])
    return eps_cov, eps_mean, epsilon - eps_cov - eps_mean


def _shift_back(domain: Domain, coords: np.ndarray, V: np.ndarray, center: np.ndarray) -> np.ndarray:
    """Algorithm 1's last step (post-processing): the subspace's points back in the cube, shifted by the private
    mean and clipped to it (the metric projection), in the domain's units."""
    U_syn = np.clip(coords @ V.T + center, 0.0, 1.0)
    return np.clip(domain.from_unit(U_syn), domain.lower_array, domain.upper_array)


@dataclass(frozen=True)
class _PCA:
    """Algorithm 2 and Appendix E: the true mean and covariance (owner-side), the private covariance, its
    noise and scale, the noisy eigen-decomposition and the chosen d' (with Appendix E's record)."""

    true_mean: np.ndarray
    M: np.ndarray
    M_hat: np.ndarray
    A: np.ndarray
    sigma: float
    noisy_values: np.ndarray
    noisy_vectors: np.ndarray
    d_prime: int
    selection: dict | None

    @property
    def V(self) -> np.ndarray:
        """:math:`\\widehat V_{d'}`, the top-d' noisy eigenvectors (d, d')."""
        return self.noisy_vectors[:, :self.d_prime]


@dataclass(frozen=True)
class _Subspace:
    """Algorithm 3's projection and Algorithm 4/5's release: the public box, the projected rows (lazy with
    Dask) and the sub-step's release."""

    lower: np.ndarray
    upper: np.ndarray
    R: float
    projected: Rows
    release: Release


@mechanism(
    name="low_dim",
    title="Low-dimensional synthetic data (private PCA + PMM/PSMM)",
    paper=("He, Strohmer, Vershynin, Zhu, Differentially private low-dimensional synthetic data from "
           "high-dimensional datasets (2023) [HSVZ23]"),
    algorithm="[HSVZ23] Algorithms 1-5; Theorems 2.1, 4.1, 4.2; Appendix E",
    dp="pure",
    neighbours=("replace",),
    min_rows=2,
    min_rows_reason="low_dim estimates the data's covariance, which divides by n - 1; PMM and PSMM work with any "
                    "number of rows",
    config=LowDimConfig,
    theory=Theory(proven=False, rate=subspace_rate),
    summary="Private centred covariance and mean, projection on the top-d' noisy eigenvectors, PMM/PSMM in "
            "the subspace, shift back and clip; by default (the defaults study's plan) PSMM in full dimension "
            "when d <= 6.",
)
def low_dim(p: Prepared[LowDimConfig]) -> Release[LowDimTrace, LowDimOwner]:
    """Low-dimensional synthetic data [HSVZ23, Algorithm 1 with Algorithms 2–5].

    .. math:: Y_j = \\mathrm{clip}_{[0,1]^d}\\big(\\widehat V_{d'} a'_j + \\bar X_{priv}\\big),\\quad
              \\widehat V_{d'} = \\mathrm{top}_{d'}\\big(M + A\\big),\\quad
              a' = \\mathrm{PMM/PSMM}_{\\varepsilon/3}\\big(\\widehat V_{d'}^\\top(X_i - \\bar X_{priv})\\big)

    Parameters
    ----------
    X : array (n, d), DataFrame, Dask array or Dask DataFrame, n >= 2
        Private data, clamped into ``domain`` (public bounds); the work is in the unit cube, the release in the
        domain's units. Two passes, both sums over records (:mod:`dpsynth_core.rows`): the exact moments
        (:func:`moments`) for Algorithms 2 and 3, then the subroutine's counts of the projected rows. A Dask
        collection is read partition by partition; the same rng gives the same release, bit for bit.
    epsilon : float in [1e-6, 1e6]
        Split by ``budget_split`` between the covariance (Algorithm 2), the mean (Algorithm 3) and the subroutine
        (Algorithm 4 or 5): Theorem 4.1, with the composition of Lemma A.2.
    neighbours : {"replace"}
        Only replace is supported (n is public and every noise scale uses it).
    plan, target_dim, subroutine, adaptive, box, budget_split, covariance_noise
        Declared in :class:`LowDimConfig` (listed below). Under ``plan="study"`` with d <= 6 the release is
        PSMM's in full dimension and its trace a :class:`LowDimHandoverTrace` (:func:`resolve_plan`).

    Returns
    -------
    Release[LowDimTrace, LowDimOwner]
        ``synthetic``: (m, d), m = n with PMM or PSMM under replace, in the domain's units.
        ``bound``: Theorem 4.2's total as its proof gives it (:func:`theorem42_terms`), unit cube, l_inf metric,
        with the tail estimated publicly by (E.2) (:func:`_public_bound_terms`); terms in ``trace.bound_terms``,
        the same bound with the true tail in ``owner.bound_true_tail``. ``trace`` a :class:`LowDimTrace` (DP),
        ``owner`` a :class:`LowDimOwner` (NOT private): what each holds is in its docstring.

    References
    ----------
    .. [HSVZ23] Y. He, T. Strohmer, R. Vershynin, Y. Zhu. Differentially Private Low-Dimensional Synthetic Data from High-Dimensional Datasets. arXiv:2305.17148, 2023.
    .. [HVZ23] Y. He, R. Vershynin, Y. Zhu. Algorithmically Effective Differentially Private Synthetic Data. COLT 2023.
    See docs/references.md for the full entries.
    """
    n, domain = p.n, p.domain
    plan = resolve_plan(p.config, n, p.epsilon, domain.d)
    if not plan.project:
        return _handover(p, plan)
    ledger = Ledger()
    eps_cov, eps_mean, eps_sub = _budgets(p.epsilon, plan.split)
    pca = _private_pca(p, plan, eps_cov, ledger)
    b, lam, center = _private_mean(p, pca.true_mean, eps_mean, ledger)
    sub = _subspace_release(p, plan, pca.V, center, eps_sub, ledger)
    syn_coords = np.asarray(sub.release.synthetic, dtype=float)
    synthetic = _shift_back(domain, syn_coords, pca.V, center)
    sub_w1 = _subroutine_w1(pca.V, sub)
    terms = _public_bound_terms(domain.d, pca, b, sub_w1)
    params, notes = _params_and_notes(p, plan, pca, b, sub, (eps_cov, eps_mean, eps_sub), synthetic.shape[0])
    trace = LowDimTrace(
        d=domain.d, target_dim=pca.d_prime, noisy_covariance=pca.M_hat, noisy_spectrum=pca.noisy_values,
        private_basis=pca.V, private_mean=center, R=sub.R, box_lower=sub.lower, box_upper=sub.upper,
        synthetic_coordinates=syn_coords, selection=pca.selection, bound_terms=terms,
        bound_units="unit cube [0,1]^d, l_inf metric", subroutine_name=plan.subroutine,
        subroutine=sub.release.trace)
    owner = _owner_view(p, pca, lam, b, sub, sub_w1)
    return p.finish(synthetic, ledger=ledger, trace=trace, owner=owner, params=params, bound=float(terms["total"]),
                    bound_kind="Theorem 4.2 (expected W1, proof constants, tail estimated by (E.2))",
                    bound_type=BoundKind.ESTIMATE, notes=notes)


def _public_bound_terms(d: int, pca: _PCA, b: float, sub_w1: float) -> dict:
    """Theorem 4.2's terms (:func:`theorem42_terms`) with the public estimate of the tail
    :math:`\\sum_{i>d'}\\sigma_i(M)` from the noisy spectrum by (E.2):
    :math:`\\sqrt{T} \\le \\sqrt{\\hat T} + \\sqrt{(d-d')\\,\\mathbb{E}\\|A\\|}`."""
    tail_hat = max(float(pca.noisy_values[pca.d_prime:].sum()), 0.0)
    tail_public = (math.sqrt(tail_hat) + math.sqrt((d - pca.d_prime) * expected_noise_norm(d, pca.sigma))) ** 2
    return theorem42_terms(tail=tail_public, d=d, d_prime=pca.d_prime, sigma=pca.sigma, mean_scale=b,
                           subroutine_w1=sub_w1)


def _handover(p: Prepared[LowDimConfig], plan: defaults.LowDimPlan) -> Release:
    """The plan's release without projection: PSMM (at the plan's cells) or PMM in full dimension with the
    whole ε under replace (n public), its ledger entries prefixed with its name."""
    name = plan.mechanism
    # PSMM's own default under replace is the plan's grid, psmm_cells(n, ε/2, d), and its default path checks the
    # grid against the resource limits before allocating it (an explicit cells= would skip that check here)
    sub_mech, sub_config = (psmm, PSMMConfig()) if name == "psmm" else (pmm, PMMConfig())
    sub = sub_mech.release(p.sub(mechanism=name, config=sub_config, epsilon=p.epsilon, neighbours="replace"))
    if name == "psmm" and sub.params["cells"] != plan.cells:  # the two rules are one: a drift is a bug
        raise RuntimeError(f"low_dim: PSMM chose {sub.params['cells']} cells, the plan {plan.cells}")
    ledger = Ledger()
    for entry in sub.ledger.entries:
        ledger.add(f"{name}: {entry.step}", entry.epsilon, entry.delta)
    d = p.domain.d
    why = (f"d = {d} <= {defaults.LOW_DIM_FULL_MAX_D}: in the defaults study no projection beat PSMM in full "
           "dimension on average" if d <= defaults.LOW_DIM_FULL_MAX_D else
           f"d = {d} > {defaults.LOW_DIM_FULL_MAX_D} and εn = {p.epsilon * p.n:.4g} < "
           f"{defaults.LOW_DIM_PROJECT_MIN_EPS_N:g}: too little budget for the private PCA")
    record = {"plan": p.config.plan, "project": False, "mechanism": name, "cells": plan.cells, "reason": why}
    params = {"plan": p.config.plan, "handover": name, "reason": why, "n": p.n,
              "n_source": "replace (n is public)", "n_synthetic": int(np.asarray(sub.synthetic).shape[0]),
              "subroutine_params": sub.params, "subroutine_bound": sub.bound}
    notes = [f"Plan 'study' (dpsynth_core.defaults.low_dim_plan, docs/defaults.md): no projection; {name} in full "
             f"dimension with the whole ε under replace ({why}). Pass plan='paper' or a projection parameter "
             "(target_dim, subroutine, box, budget_split, adaptive) for [HSVZ23]'s projection."]
    notes += [f"{name}: {note}" for note in sub.notes]
    if "limits" in sub.params:
        params["limits"] = sub.params["limits"]
    return p.finish(sub.synthetic, ledger=ledger, trace=LowDimHandoverTrace(plan=record, mechanism=name,
                                                                            subroutine=sub.trace),
                    owner=LowDimHandoverOwner(n=p.n, n_clamped=p.n_clamped, subroutine=sub.owner), params=params,
                    bound=sub.bound, bound_kind=f"{sub.bound_kind} ({name} in full dimension: the plan's handover)",
                    bound_type=sub.bound_type,
                    notes=notes)


def _private_pca(p: Prepared[LowDimConfig], plan: defaults.LowDimPlan, eps_cov: float, ledger: Ledger) -> _PCA:
    """The one pass for Algorithms 2 and 3 (count, sum and sum of outer products, exact, NumPy or Dask),
    Algorithm 2's private centred covariance (ε/3) and its top eigenvectors, and Appendix E's choice of d'
    from the noisy spectrum (post-processing, a ledger entry of ε = 0)."""
    cfg, n, d = p.config, p.n, p.domain.d
    _, true_mean, M = mean_and_covariance(p.rows.sum(moments))
    M_hat, M, A, sigma = _noisy_covariance(M, n, eps_cov, p.rng, cfg.covariance_noise)
    ledger.add(f"private centred covariance (Algorithm 2, symmetric Laplace, σ={sigma:.4g}, l1 sensitivity "
               f"{covariance_sensitivity(n, d, cfg.covariance_noise):.4g})", eps_cov)
    noisy_values, noisy_vectors = top_eigenvectors(M_hat)
    selection = None
    d_prime = plan.target_dim
    if cfg.adaptive:
        k_max = cfg.max_target_dim(d)
        d_prime, objective = choose_target_dim(noisy_values, n, p.epsilon, d, k_max)
        selection = {"rule": "(E.1)", "k": list(range(min(2, d), k_max + 1)), "objective": objective,
                     "chosen": d_prime}
        ledger.add("choice of d' from the noisy spectrum (Appendix E, post-processing)", 0.0)
    return _PCA(true_mean=true_mean, M=M, M_hat=M_hat, A=A, sigma=sigma, noisy_values=noisy_values,
                noisy_vectors=noisy_vectors, d_prime=d_prime, selection=selection)


def _private_mean(p: Prepared[LowDimConfig], true_mean: np.ndarray, eps_mean: float,
                  ledger: Ledger) -> tuple[float, np.ndarray, np.ndarray]:
    """Algorithm 3's private mean (ε/3): the Laplace scale b, the noise λ (owner-side) and :math:`\\bar X + \\lambda`."""
    b = mean_noise_scale(p.n, p.domain.d, eps_mean)
    lam = laplace(b, p.domain.d, p.rng)
    ledger.add(f"private mean (Algorithm 3, Laplace scale {b:.4g} per coordinate)", eps_mean)
    return b, lam, true_mean + lam


def _subspace_release(p: Prepared[LowDimConfig], plan: defaults.LowDimPlan, V: np.ndarray, center: np.ndarray,
                      eps_sub: float, ledger: Ledger) -> _Subspace:
    """Algorithm 4/5 on the public box (ε/3): the coordinates :math:`a_i = \\widehat V^\\top (x_i - \\bar X_{priv})`
    (NOT private, Section 2.2) reach the subroutine row by row (lazily with Dask: projected on the workers,
    inside the subroutine's pass). The sub-step runs under replace (n public, so its output size is n) with
    ε/3, a share of the ε checked by low_dim (it may be below EPSILON_MIN when ε is near it); its messages
    name low_dim and its ledger entries join this one, prefixed with its name."""
    lo, hi, R = subspace_box(V, center, plan.box)
    sub_domain = Domain(lower=lo, upper=hi, names=tuple(f"a{k + 1}" for k in range(V.shape[1])))
    projected = p.rows.map(_project, center, V, domain=sub_domain)
    sub_mech, sub_config = (pmm, PMMConfig()) if plan.subroutine == "pmm" else (psmm, PSMMConfig())
    sub = sub_mech.release(p.sub(mechanism=plan.subroutine, config=sub_config, epsilon=eps_sub, rows=projected,
                                 domain=sub_domain, neighbours="replace"))
    for entry in sub.ledger.entries:
        ledger.add(f"{plan.subroutine}: {entry.step}", entry.epsilon, entry.delta)
    return _Subspace(lower=lo, upper=hi, R=R, projected=projected, release=sub)


def _subroutine_w1(V: np.ndarray, sub: _Subspace) -> float:
    """The subroutine's W1 bound (unit box, l_inf) mapped to :math:`\\mathbb{R}^d` with the l_inf metric:
    scaled by the box's widest side and by :math:`\\max_i \\|V_{i\\cdot}\\|_1` (:math:`\\|Va\\|_\\infty \\le
    \\max_i\\|V_{i\\cdot}\\|_1 \\|a\\|_\\infty`); NaN when the subroutine states no bound."""
    bound = sub.release.bound
    row_l1 = float(np.abs(V).sum(axis=1).max())
    return float(bound) * float((sub.upper - sub.lower).max()) * row_l1 if bound is not None else math.nan


def _owner_view(p: Prepared[LowDimConfig], pca: _PCA, lam: np.ndarray, b: float, sub: _Subspace,
                sub_w1: float) -> LowDimOwner:
    """What the data owner may see (NOT private): the true subspace and its angles to the private one, the
    projected coordinates (in memory only), the noises, the bound with the true tail, the sub-step's view."""
    from scipy.linalg import subspace_angles

    d, d_prime = p.domain.d, pca.d_prime
    true_values, true_vectors = top_eigenvectors(pca.M)
    tail_true = max(float(true_values[d_prime:].sum()), 0.0)
    terms_true = theorem42_terms(tail=tail_true, d=d, d_prime=d_prime, sigma=pca.sigma, mean_scale=b,
                                 subroutine_w1=sub_w1)
    true_basis = true_vectors[:, :d_prime]
    angles = np.sort(subspace_angles(pca.V, true_basis)) if d_prime < d else np.zeros(d_prime)
    if p.U is not None:  # in memory: the projected coordinates are at hand
        coords = sub.projected.raw
        summary = {"min": coords.min(axis=0), "max": coords.max(axis=0), "mean": coords.mean(axis=0),
                   "std": coords.std(axis=0),
                   "n_outside_box": int(np.any((coords < sub.lower) | (coords > sub.upper), axis=1).sum())}
        note = None
    else:  # Dask: the coordinates exist only on the workers, inside the subroutine's pass
        coords = summary = None
        note = ("not computed for Dask input (they would need all n projected rows on the client); the rows outside "
                "the box are counted in owner.subroutine.n_clamped")
    return LowDimOwner(
        n=p.n, n_clamped=p.n_clamped, true_covariance=pca.M, true_spectrum=true_values, true_basis=true_basis,
        principal_angles=angles, projected_coordinates=coords, projected_summary=summary, projected_note=note,
        noise_matrix=pca.A, noise_norm=float(np.abs(np.linalg.eigvalsh(pca.A)).max()), mean_noise=lam,
        tail=tail_true, bound_true_tail=terms_true["total"], bound_terms_true_tail=terms_true,
        subroutine=sub.release.owner)


def _params_and_notes(p: Prepared[LowDimConfig], plan: defaults.LowDimPlan, pca: _PCA, b: float, sub: _Subspace,
                      shares: tuple[float, float, float], m: int) -> tuple[dict, list[str]]:
    """The public record of the release and its notes (with the sub-step's cap, if it capped its output)."""
    cfg, n, d = p.config, p.n, p.domain.d
    eps_cov, eps_mean, eps_sub = shares
    notes = [
        f"Theorem 4.2's bound as its proof gives it (constants of (C.6)-(C.12), expectations evaluated), unit "
        f"cube, l_inf metric; the tail Σ_{{i>d'}} σ_i(M) is estimated from the noisy spectrum by (E.2). "
        f"Subroutine term: {sub.release.bound_kind} on the box, mapped to R^{d}.",
        f"Replace neighbours only: n is public; covariance ({eps_cov:.4g}), mean ({eps_mean:.4g}) and subroutine "
        f"({eps_sub:.4g}) compose to ε (Theorem 4.1).",
        f"Plan {cfg.plan!r}: projection on d' = {pca.d_prime} with {plan.subroutine}, box {plan.box!r}, budget "
        f"split {tuple(round(v, 4) for v in plan.split)}.",
    ]
    if pca.d_prime == 1:
        notes.append("d' = 1: Theorem 4.2 assumes d' >= 2 (Appendix D treats d' = 1); the bound's proof steps "
                     "still hold.")
    params = {
        "plan": cfg.plan, "budget_split": list(plan.split),
        "target_dim": pca.d_prime, "target_dim_requested": plan.target_dim, "adaptive": cfg.adaptive,
        "subroutine": plan.subroutine, "box": plan.box, "epsilon_covariance": eps_cov, "epsilon_mean": eps_mean,
        "epsilon_subroutine": eps_sub, "covariance_sigma": pca.sigma, "covariance_noise": cfg.covariance_noise,
        "covariance_sensitivity_l1": covariance_sensitivity(n, d, cfg.covariance_noise), "mean_scale": b,
        "R": sub.R, "box_lower": sub.lower.tolist(), "box_upper": sub.upper.tolist(), "n": n,
        "n_source": "replace (n is public)", "n_synthetic": int(m), "subroutine_params": sub.release.params,
        "subroutine_bound": sub.release.bound,
    }
    if "limits" in sub.release.params:  # the sub-step capped its output size (dpsynth_core.limits)
        params["limits"] = sub.release.params["limits"]
        notes.append(limits.cap_note(sub.release.params["limits"], p.owner))
    return params, notes
