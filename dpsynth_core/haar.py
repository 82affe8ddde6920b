"""The transposed Haar matrix and the superregular random walk ([BSV22, Theorem 3.1]; [DLS+24, Lemma 3]).

Conventions (docs/random-walk.md, "The transposed Haar matrix"; [DLS+24, Appendix B])
--------------------------------------------------------------------------------------
For :math:`m = 2^k` the *transposed Haar matrix* :math:`M_k \\in \\mathbb{R}^{m \\times m}` has its columns
grouped in levels :math:`L_0, \\dots, L_k`:

* column 0 (level 0) is constant :math:`2^{-k}`;
* column 1 (level 1) is :math:`+2^{-k}` on the first half of the positions and :math:`-2^{-k}` on the second;
* the :math:`2^{l-1}` columns of level :math:`l \\ge 2` (indices :math:`2^{l-1}, \\dots, 2^l - 1`) are
  supported on disjoint consecutive blocks of length :math:`2^{k-l+1}`: :math:`+2^{l-1}/2^k` on the first
  half of the block, :math:`-2^{l-1}/2^k` on the second.

Every column has l1 norm 1 and the columns are orthogonal, so :math:`M_k^{-1}` is :math:`M_k^T` with rescaled
rows: its entries are in :math:`\\{-1, 0, 1\\}`, row 0 is all ones (the total) and row ``(l, j)`` is
"+1 on the first half of block j of level l, -1 on the second half". Each column of :math:`M_k^{-1}` has
exactly :math:`k + 1` non-zeros. With :math:`\\Phi = (k+1) M_k` [DLS+24, Lemma 3]:

.. math:: \\|\\Phi^{-1}\\|_1 = \\max_j \\sum_i |(\\Phi^{-1})_{ij}| = 1, \\qquad
          \\max_i \\Big\\|\\sum_{j \\le i} \\Phi_j\\Big\\|_2 \\le (k+1)^{3/2}

(:math:`\\Phi_j` the j-th row). Synthesis (:math:`a \\mapsto M_k a`) and analysis (:math:`x \\mapsto M_k^{-1} x`)
run level by level in :math:`O(m)` with vectorised numpy; dense matrices (:func:`haar_matrix`) exist only
for tests and pictures.

Superregular noise ([BSV22, Theorem 3.1, Section 5.1]; [DLS+24, Eq. (7), Lemma 2])
----------------------------------------------------------------------------------
For a count vector :math:`c \\in \\mathbb{Z}^m` of l1 sensitivity Δ (1 under add/remove, 2 under replace),

.. math:: \\tilde c = c + \\Phi\\eta, \\qquad \\eta_i \\overset{iid}{\\sim} \\mathrm{Lap}(\\Delta/\\varepsilon)

is ε-DP. Why: :math:`\\tilde c = \\Phi(\\Phi^{-1}c + \\eta)` is the Laplace mechanism applied to
:math:`\\Phi^{-1}c`, followed by the data-independent map Φ (post-processing). The l1 sensitivity of
:math:`\\Phi^{-1}c` is :math:`\\sup \\|\\Phi^{-1}(c - c')\\|_1 \\le \\|\\Phi^{-1}\\|_1 \\|c - c'\\|_1 \\le \\Delta`, because the
operator norm :math:`\\ell_1 \\to \\ell_1` is the largest column l1 norm of :math:`\\Phi^{-1}`, which is
:math:`(k+1)/(k+1) = 1`. So Laplace noise of scale Δ/ε on each coefficient is enough ([DR14,
Theorem 3.6]; [DLS+24, Lemma 2]).

The noise is as "regular" as i.i.d. Laplace noise of the same scale on every count (same ε), yet its
partial sums :math:`S_i = \\sum_{j\\le i} (\\Phi\\eta)_j = \\langle \\sum_{j \\le i}\\Phi_j, \\eta\\rangle` have standard
deviation at most :math:`\\sqrt2\\,(\\Delta/\\varepsilon)(k+1)^{3/2}` (Lemma 3), against
:math:`\\sqrt{2i}\\,\\Delta/\\varepsilon` for i.i.d. noise.

Integer (discrete) variant. :math:`M_k^{-1}c` is an *integer* vector whose l1 sensitivity is
:math:`(k+1)\\Delta`; adding :math:`\\xi_i \\sim \\mathrm{Lap}_\\mathbb{Z}((k+1)\\Delta/\\varepsilon)` to it is ε-DP
(discrete Laplace mechanism), and :math:`M_k(M_k^{-1}c + \\xi) = c + \\Phi(\\xi/(k+1))`. So
``discrete=True`` draws the noise as :math:`M_k\\xi`: the same construction with integer noise on integer
Haar coefficients ([DLS+24, footnote 2]; docs/privacy-model.md §5: counts receive integer noise). The result is a
dyadic rational, exact in float64 for any realistic count.

Exact total under replace. Under replace, n is public and :math:`(M_k^{-1}c)_0 = \\sum_i c_i = n` does not
move; the other coefficients of :math:`M_k^{-1}(e_a - e_b)` have at most 2 non-zeros per level, l1 norm at
most :math:`2k`. So ``exact_total=True`` leaves coefficient 0 noiseless and the remaining coefficients need
scale :math:`2k/((k+1)\\varepsilon)` in Φ units (:func:`privatize_counts` does this for ``"replace"``).

Padding. m must be a power of two. A count vector of any length m is padded with zeros up to
:math:`2^K`, :math:`K = \\lceil \\log_2 m \\rceil`, the noise is drawn for :math:`2^K` positions and the first m
entries are kept ([DLS+24, Eq. (7)]: :math:`[\\Phi\\tilde\\eta]_{1:m}`); dropping coordinates is
post-processing, and every partial sum bound above holds with K in place of k.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .noise import discrete_laplace
from .privacy import check_neighbours
from .validation import check_bool, check_float, check_int, check_rng, param_error

__all__ = [
    "levels_for",
    "pad_to_power_of_two",
    "haar_synthesis",
    "haar_analysis",
    "haar_matrix",
    "haar_inverse_matrix",
    "prefix_row_norms",
    "superregular_noise",
    "iid_laplace_noise",
    "privatize_counts",
    "noise_partial_sum_bound",
    "NoiseWalks",
    "noise_walks",
]

_MAX_LEVELS = 40  # 2^40 positions: far beyond any memory; guards against absurd inputs


# ------------------------------------------------------------------------------------ sizes
def levels_for(m: int, owner: str = "levels_for", name: str = "m") -> int:
    """:math:`K = \\lceil \\log_2 m \\rceil`, the number of Haar levels below the root for m positions.

    Parameters
    ----------
    m : int in [1, 2^40]

    Returns
    -------
    int, with :math:`2^{K-1} < m \\le 2^K` (K = 0 for m = 1).
    """
    mm = check_int(m, name, owner, low=1, high=2**_MAX_LEVELS)
    return int(mm - 1).bit_length()


def _exact_levels(m: int, owner: str, name: str) -> int:
    k = levels_for(m, owner, name)
    if (1 << k) != m:
        raise param_error(owner, name, "of length a power of two (pad with pad_to_power_of_two)", f"length {m}")
    return k


def pad_to_power_of_two(c: Any) -> tuple[np.ndarray, int]:
    """Pad a 1-D vector with zeros up to the next power of two.

    Parameters
    ----------
    c : array_like of shape (m,), m >= 1

    Returns
    -------
    padded : ndarray of shape (2^K,), same dtype as ``c`` (the first m entries are ``c``)
    K : int, :math:`\\lceil \\log_2 m \\rceil`
    """
    arr = np.asarray(c)
    if arr.ndim != 1:
        raise param_error("pad_to_power_of_two", "c", "a 1-D array", arr)
    k = levels_for(arr.size, "pad_to_power_of_two", "c (its length)")
    out = np.zeros(1 << k, dtype=arr.dtype)
    out[: arr.size] = arr
    return out, k


# --------------------------------------------------------------------------- fast transforms
def haar_synthesis(a: Any, *, scaled: bool = False) -> np.ndarray:
    """Apply :math:`M_k` (or :math:`\\Phi = (k+1)M_k`) to coefficient vectors, in O(m).

    .. math:: x = M_k a \\quad (\\text{or } x = \\Phi a)

    Coarse to fine: the block values at level l - 1 are split in two halves which get
    :math:`\\pm a_{l,j}\\, 2^{l-1}/2^k`.

    Parameters
    ----------
    a : array_like of shape (..., m), m = 2^k, k in [0, 40]
        Coefficients in the column order of :func:`haar_matrix`; leading axes are batches.
    scaled : bool, default False
        ``True`` applies Φ = (k+1) M_k.

    Returns
    -------
    ndarray of shape (..., m), float64
    """
    owner = "haar_synthesis"
    arr = np.asarray(a, dtype=np.float64)
    if arr.ndim < 1:
        raise param_error(owner, "a", "an array of shape (..., 2^k)", a)
    m = arr.shape[-1]
    k = _exact_levels(m, owner, "a")
    batch = arr.shape[:-1]
    flat = arr.reshape(-1, m)
    out = np.empty(flat.shape)
    for rows in _row_blocks(flat.shape[0], m):
        out[rows] = _synthesis_rows(flat[rows], k)
    if check_bool(scaled, "scaled", owner):
        out *= k + 1
    return out.reshape(*batch, m)


#: Values per block of rows that the fast transforms work on at a time, so that their temporaries stay in the CPU's
#: cache: a batch of 200,000 noise vectors of 48 cells was transformed 5 times faster than all rows at once (the same
#: numbers: every row is transformed on its own either way).
_BLOCK_VALUES = 1 << 16


def _row_blocks(n_rows: int, m: int) -> list[slice]:
    step = max(1, _BLOCK_VALUES // m)
    return [slice(i, i + step) for i in range(0, n_rows, step)]


def _synthesis_rows(flat: np.ndarray, k: int) -> np.ndarray:
    """:func:`haar_synthesis` (unscaled) of the rows of ``flat``, coarse to fine."""
    # level 0: constant 2^-k
    v = flat[:, :1] * (2.0**-k)
    for lev in range(1, k + 1):
        half = 1 << (lev - 1)  # number of columns at this level = number of blocks
        coef = flat[:, half: 2 * half] * (float(half) * 2.0**-k)
        nv = np.empty((flat.shape[0], half, 2))
        nv[:, :, 0] = v + coef
        nv[:, :, 1] = v - coef
        v = nv.reshape(flat.shape[0], 2 * half)
    return v


def haar_analysis(x: Any, *, scaled: bool = False) -> np.ndarray:
    """Apply :math:`M_k^{-1}` (or :math:`\\Phi^{-1}`) to vectors, in O(m).

    .. math:: a = M_k^{-1} x: \\quad a_0 = \\sum_i x_i, \\quad
              a_{l,j} = \\sum_{\\text{first half of block } j} x - \\sum_{\\text{second half}} x

    Fine to coarse with pairwise sums. Integer input stays integer (int64) when ``scaled`` is False:
    the Haar coefficients of a count vector are exact integers.

    Parameters
    ----------
    x : array_like of shape (..., m), m = 2^k
    scaled : bool, default False
        ``True`` applies :math:`\\Phi^{-1} = M_k^{-1}/(k+1)` (float64 output).

    Returns
    -------
    ndarray of shape (..., m): int64 for integer input and ``scaled=False``, else float64
    """
    owner = "haar_analysis"
    arr = np.asarray(x)
    if arr.ndim < 1 or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == np.bool_):
        raise param_error(owner, "x", "a numeric array of shape (..., 2^k)", x,
                          kind=TypeError if arr.ndim >= 1 else ValueError)
    if np.issubdtype(arr.dtype, np.integer) or arr.dtype == np.bool_:
        arr = arr.astype(np.int64)
    else:
        arr = arr.astype(np.float64)
    m = arr.shape[-1]
    k = _exact_levels(m, owner, "x")
    batch = arr.shape[:-1]
    flat = arr.reshape(-1, m)
    out = np.empty_like(flat)
    for rows in _row_blocks(flat.shape[0], m):
        _analysis_rows(flat[rows], k, out[rows])
    out = out.reshape(*batch, m)
    if check_bool(scaled, "scaled", owner):
        return out / float(k + 1)
    return out


def _analysis_rows(s: np.ndarray, k: int, out: np.ndarray) -> None:
    """:func:`haar_analysis` (unscaled) of the rows of ``s`` into ``out``, fine to coarse with pairwise sums."""
    for lev in range(k, 0, -1):
        half = 1 << (lev - 1)
        pairs = s.reshape(s.shape[0], half, 2)
        out[:, half: 2 * half] = pairs[:, :, 0] - pairs[:, :, 1]
        s = pairs[:, :, 0] + pairs[:, :, 1]
    out[:, 0] = s[:, 0]


def haar_matrix(k: int, *, scaled: bool = False) -> np.ndarray:
    """The dense transposed Haar matrix :math:`M_k` (or :math:`\\Phi = (k+1)M_k`), for tests and pictures.

    .. math:: (M_k)_{i, c} = \\pm \\max(1, 2^{l-1}) / 2^k \\ \\text{on the support of column } c \\text{ (level } l)

    Parameters
    ----------
    k : int in [0, 12]
        :math:`m = 2^k` (dense: at most 4096 x 4096).
    scaled : bool, default False

    Returns
    -------
    ndarray of shape (2^k, 2^k): row i = position on the path, column c = coefficient (levels in order).
    """
    kk = check_int(k, "k", "haar_matrix", low=0, high=12)
    return haar_synthesis(np.eye(1 << kk), scaled=scaled).T


def haar_inverse_matrix(k: int, *, scaled: bool = False) -> np.ndarray:
    """Dense :math:`M_k^{-1}` (entries in {-1, 0, 1}) or :math:`\\Phi^{-1} = M_k^{-1}/(k+1)`; k in [0, 12]."""
    kk = check_int(k, "k", "haar_inverse_matrix", low=0, high=12)
    return haar_analysis(np.eye(1 << kk, dtype=np.int64), scaled=scaled).T


def prefix_row_norms(k: int, *, scaled: bool = True) -> np.ndarray:
    """:math:`\\|\\sum_{j\\le i}\\Phi_j\\|_2` for every i [DLS+24, Lemma 3], in O(m k) without dense matrices.

    The sum of the first i+1 rows of :math:`M_k` has at most one non-zero per level; it is computed
    as the running sums of the columns restricted to the prefix.

    Parameters
    ----------
    k : int in [0, 30]
    scaled : bool, default True (Φ; ``False`` for :math:`M_k`)

    Returns
    -------
    ndarray of shape (2^k,), float64
    """
    kk = check_int(k, "k", "prefix_row_norms", low=0, high=30)
    m = 1 << kk
    i = np.arange(m, dtype=np.float64) + 1.0  # prefix length
    total = (i * 2.0**-kk) ** 2  # level 0: (i+1)/2^k
    for lev in range(1, kk + 1):
        block = m >> (lev - 1)  # block length at this level
        halfb = block // 2
        val = (1 << (lev - 1)) * 2.0**-kk
        pos = np.mod(np.arange(m), block) + 1  # positions covered in the current block
        s = np.where(pos <= halfb, pos, block - pos) * val
        total += s**2
    out = np.sqrt(total)
    if check_bool(scaled, "scaled", "prefix_row_norms"):
        out *= kk + 1
    return out


# ----------------------------------------------------------------------------------- noise
def _scale(owner: str, epsilon: Any, sensitivity: Any, scale: Any) -> float:
    if scale is not None:
        if epsilon is not None:
            raise ValueError(f"The 'scale' parameter of {owner} must be None when 'epsilon' is given. "
                             f"Got scale={scale!r} and epsilon={epsilon!r}.")
        return check_float(scale, "scale", owner, low=0.0, low_open=True)
    if epsilon is None:
        raise ValueError(f"The 'epsilon' parameter of {owner} must be given (or 'scale'). Got None.")
    eps = check_float(epsilon, "epsilon", owner, low=0.0, low_open=True)
    sens = check_float(sensitivity, "sensitivity", owner, low=0.0, low_open=True)
    return sens / eps


def _draws(draws: Any, owner: str) -> int | None:
    return None if draws is None else check_int(draws, "draws", owner, low=1, high=10**7)


def superregular_noise(m: int, epsilon: float | None = None, sensitivity: float = 1.0, rng: Any = None, *,
                       scale: float | None = None, discrete: bool = False, exact_total: bool = False,
                       draws: int | None = None) -> np.ndarray:
    """Superregular noise :math:`[\\Phi\\eta]_{1:m}` ([BSV22, Theorem 3.1]; [DLS+24, Eq. (7), Lemma 3]).

    .. math:: \\mathrm{noise} = [\\Phi \\eta]_{1:m}, \\quad \\Phi = (K+1) M_K, \\quad
              \\eta_i \\overset{iid}{\\sim} \\mathrm{Lap}(b), \\quad b = \\Delta/\\varepsilon,\\ K = \\lceil\\log_2 m\\rceil

    Adding it to a count vector of l1 sensitivity Δ is ε-DP (module docstring). For other uses (the K
    blocks of [DLS+24]: ``scale = K Δ / ε``) pass the Laplace scale b directly.

    Parameters
    ----------
    m : int in [1, 2^30]
        Number of positions (need not be a power of two: noise for :math:`2^K` positions, first m kept).
    epsilon : float in (0, inf), optional
        Privacy parameter; with ``sensitivity`` gives b = Δ/ε. Exclusive with ``scale``.
    sensitivity : float in (0, inf), default 1
        Δ, the l1 sensitivity of the count vector (1 add/remove, 2 replace).
    rng : numpy Generator, int or None
    scale : float in (0, inf), optional
        The Laplace scale b of the coefficients η directly.
    discrete : bool, default False
        ``True``: integer noise :math:`\\xi \\sim \\mathrm{Lap}_\\mathbb{Z}((K+1) b)` on the unnormalised
        coefficients, returned as :math:`M_K\\xi = \\Phi(\\xi/(K+1))` (same privacy, module docstring).
    exact_total : bool, default False
        Leave coefficient 0 (the total) noiseless; only valid when the total is public (replace),
        with the scale of the remaining coefficients computed by the caller.
    draws : int in [1, 10^7] or None
        Independent draws stacked along a leading axis (for pictures and Monte Carlo).

    Returns
    -------
    ndarray of shape (m,) or (draws, m), float64

    References
    ----------
    .. [BSV22] M. Boedihardjo, T. Strohmer, R. Vershynin. Private measures, random walks, and synthetic data. arXiv:2204.09167, 2022.
    .. [DLS+24] K. Donhauser, J. Lokna, A. Sanyal, M. Boedihardjo, R. Hönig, F. Yang. Certified private data release for sparse Lipschitz functions. AISTATS 2024.
    See docs/references.md for the full entries.
    """
    owner = "superregular_noise"
    mm = check_int(m, "m", owner, low=1, high=2**30)
    b = _scale(owner, epsilon, sensitivity, scale)
    gen = check_rng(rng, owner)
    nd = _draws(draws, owner)
    k = levels_for(mm)
    size = (1 if nd is None else nd, 1 << k)
    if check_bool(discrete, "discrete", owner):
        coef = discrete_laplace((k + 1) * b, size, gen).astype(np.float64)
        scaled = False
    else:
        coef = gen.laplace(0.0, b, size)
        scaled = True
    if check_bool(exact_total, "exact_total", owner):
        coef[:, 0] = 0.0
    out = haar_synthesis(coef, scaled=scaled)[:, :mm]
    return out[0] if nd is None else out


def iid_laplace_noise(m: int, epsilon: float | None = None, sensitivity: float = 1.0, rng: Any = None, *,
                      scale: float | None = None, discrete: bool = False, draws: int | None = None) -> np.ndarray:
    """The i.i.d. Laplace walk of equal privacy: :math:`\\mathrm{Lap}(\\Delta/\\varepsilon)` on every count.

    .. math:: \\mathrm{noise}_i \\overset{iid}{\\sim} \\mathrm{Lap}(\\Delta/\\varepsilon), \\qquad
              \\mathrm{sd}\\Big(\\sum_{j\\le i}\\mathrm{noise}_j\\Big) = \\sqrt{2i}\\,\\Delta/\\varepsilon

    Parameters as in :func:`superregular_noise` (``discrete=True``: :math:`\\mathrm{Lap}_\\mathbb{Z}(\\Delta/\\varepsilon)`).

    Returns
    -------
    ndarray of shape (m,) or (draws, m), float64
    """
    owner = "iid_laplace_noise"
    mm = check_int(m, "m", owner, low=1, high=2**30)
    b = _scale(owner, epsilon, sensitivity, scale)
    gen = check_rng(rng, owner)
    nd = _draws(draws, owner)
    size = mm if nd is None else (nd, mm)
    if check_bool(discrete, "discrete", owner):
        return discrete_laplace(b, size, gen).astype(np.float64)
    return gen.laplace(0.0, b, size)


def privatize_counts(c: Any, epsilon: float, neighbours: str = "add_remove", rng: Any = None, *,
                     discrete: bool = False, return_noise: bool = False, draws: int | None = None):
    """ε-DP counts :math:`c + [\\Phi\\eta]_{1:m}` along a path ([BSV22, Section 5.1]; [DLS+24, Lemma 2]).

    .. math:: \\tilde c = c + [\\Phi\\eta]_{1:m}, \\quad \\eta_i \\sim \\mathrm{Lap}(\\Delta/\\varepsilon),\\
              \\Delta = 1 \\text{ (add/remove)}, 2 \\text{ (replace)}

    Under ``"replace"`` the total is public: coefficient 0 gets no noise and the others get
    :math:`\\mathrm{Lap}(2K/((K+1)\\varepsilon))` (l1 sensitivity 2K of the non-root Haar coefficients,
    module docstring); for K = 0 (a single cell) nothing is random.

    Parameters
    ----------
    c : array_like of int, shape (m,), m in [1, 2^30]
        Counts along the path (padded with zeros to :math:`2^K` internally).
    epsilon : float in (0, inf)
    neighbours : {"add_remove", "replace"}
    rng : numpy Generator, int or None
    discrete : bool, default False
        Integer noise on the integer Haar coefficients (see :func:`superregular_noise`).
    return_noise : bool, default False
        Also return the noise vector (owner-side: with the output it reveals c).
    draws : int in [1, 10^7] or None
        Independent releases stacked along a leading axis (Monte Carlo, privacy audits).

    Returns
    -------
    noisy : ndarray of shape (m,) or (draws, m), float64
    noise : same shape, only when ``return_noise``

    References
    ----------
    .. [BSV22] M. Boedihardjo, T. Strohmer, R. Vershynin. Private measures, random walks, and synthetic data. arXiv:2204.09167, 2022.
    .. [DLS+24] K. Donhauser, J. Lokna, A. Sanyal, M. Boedihardjo, R. Hönig, F. Yang. Certified private data release for sparse Lipschitz functions. AISTATS 2024.
    .. [DR14] C. Dwork, A. Roth. The Algorithmic Foundations of Differential Privacy. FnT-TCS 9(3-4), 2014.
    See docs/references.md for the full entries.
    """
    owner = "privatize_counts"
    eps = check_float(epsilon, "epsilon", owner, low=0.0, low_open=True)
    rel = check_neighbours(neighbours, owner)
    gen = check_rng(rng, owner)
    arr = np.asarray(c)
    if arr.ndim != 1 or arr.size < 1 or not (np.issubdtype(arr.dtype, np.integer)
                                             or (np.issubdtype(arr.dtype, np.floating)
                                                 and np.all(np.isfinite(arr)) and np.all(arr == np.round(arr)))):
        raise param_error(owner, "c", "a non-empty 1-D array of integer counts", c,
                          kind=TypeError if not np.issubdtype(arr.dtype, np.number) else ValueError)
    m = arr.size
    k = levels_for(m, owner, "c (its length)")
    nd = _draws(draws, owner)
    if rel == "add_remove":
        noise = superregular_noise(m, scale=1.0 / eps, rng=gen, discrete=discrete, draws=nd)
    elif k == 0:
        noise = np.zeros(1 if nd is None else (nd, 1))
    else:
        noise = superregular_noise(m, scale=2.0 * k / ((k + 1) * eps), rng=gen, discrete=discrete,
                                   exact_total=True, draws=nd)
    noisy = arr.astype(np.float64) + noise
    return (noisy, noise) if return_noise else noisy


def noise_partial_sum_bound(m: int, scale: float) -> float:
    """Lemma 3 bound on the standard deviation of every partial sum of :math:`[\\Phi\\eta]_{1:m}`.

    .. math:: \\max_i \\mathrm{sd}\\Big(\\sum_{j\\le i} (\\Phi\\eta)_j\\Big) \\le \\sqrt{2}\\, b\\, (K+1)^{3/2}

    (Var Lap(b) = 2b²; [DLS+24, Eq. (30), Lemma 3]; also bounds :math:`\\mathbb{E}|S_i|` by Jensen.)

    Parameters
    ----------
    m : int >= 1; scale : float in (0, inf), the Laplace scale b of η.
    """
    k = levels_for(m, "noise_partial_sum_bound")
    b = check_float(scale, "scale", "noise_partial_sum_bound", low=0.0, low_open=True)
    return math.sqrt(2.0) * b * (k + 1) ** 1.5


@dataclass(frozen=True)
class NoiseWalks:
    """Running sums of two noises of the same privacy over ``draws`` independent draws (:func:`noise_walks`):
    ``superregular`` and ``iid`` are (draws, m) arrays; ``superregular_bound`` is Lemma 3's bound on the
    spread of every running sum of the superregular walk (one value per step, constant), ``iid_spread`` the
    spread of the running sums of independent Laplace noise, :math:`\\sqrt{2i}\\,b`."""

    superregular: np.ndarray
    iid: np.ndarray
    superregular_bound: np.ndarray
    iid_spread: np.ndarray


def noise_walks(m: int, scale_superregular: float, scale_iid: float, draws: int, rng: int = 0) -> NoiseWalks:
    """The running sums of superregular noise (coefficient scale ``scale_superregular``,
    :func:`superregular_noise`) and of independent Laplace noise of the same privacy (``scale_iid``,
    :func:`iid_laplace_noise`) over ``draws`` draws of length ``m``, with their spreads: noise only (no data,
    no privacy cost), for the picture of why the walk's running sums stay small. ``rng`` seeds the first
    noise and ``rng + 1`` the second."""
    sr = superregular_noise(m, scale=scale_superregular, rng=rng, draws=draws)
    iid = iid_laplace_noise(m, scale=scale_iid, rng=rng + 1, draws=draws)
    return NoiseWalks(superregular=np.cumsum(sr, axis=1), iid=np.cumsum(iid, axis=1),
                      superregular_bound=np.full(m, noise_partial_sum_bound(m, scale_superregular)),
                      iid_spread=np.sqrt(2.0 * np.arange(1, m + 1)) * scale_iid)
