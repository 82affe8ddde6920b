"""Noise samplers: discrete Laplace (fast and exact), Laplace, Gaussian.

All samplers take an explicit :class:`numpy.random.Generator`; none touches numpy's global state.

Discrete Laplace [HVZ23, Appendix B]: :math:`\\mathrm{Lap}_\\mathbb{Z}(\\sigma)` has pmf

.. math:: P(Z = z) = \\frac{1-p}{1+p} e^{-|z|/\\sigma}, \\qquad p = e^{-1/\\sigma}, \\; z \\in \\mathbb{Z},

the law of ``scipy.stats.dlaplace(a=1/σ)``.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np

from .validation import check_bool, check_float, check_int, check_rng, param_error

__all__ = ["discrete_laplace", "laplace", "gaussian"]


def _size(size: Any, owner: str):
    if size is None:
        return None
    if isinstance(size, (tuple, list)):
        return tuple(check_int(s, "size", owner, low=0) for s in size)
    return check_int(size, "size", owner, low=0)


def discrete_laplace(scale: float, size=None, rng=None, *, exact: bool = False):
    """Draw from the discrete Laplace law :math:`\\mathrm{Lap}_\\mathbb{Z}(\\sigma)`.

    Parameters
    ----------
    scale : float in (0, inf)
        σ, so that the pmf is proportional to :math:`e^{-|z|/\\sigma}`.
    size : int, tuple of int or None
        Output shape; ``None`` returns a Python int.
    rng : numpy Generator, int or None
    exact : bool, default False
        ``False``: vectorised inverse-CDF sampler in floating point (one uniform per draw:
        magnitude :math:`M = \\lfloor \\sigma\\,(\\log 2 - \\log W - \\log(1+p)) \\rfloor^+` with
        :math:`W \\sim U(0, 1]`, independent sign; :math:`P(|Z| \\ge k) = 2p^k/(1+p)`).
        ``True``: [CKS20, Algorithm 2] with integer and rational arithmetic
        only — no floating point touches the noise; slower (a Python loop per draw). ``scale`` is
        converted exactly with :class:`fractions.Fraction`.

    Returns
    -------
    int64 ndarray of shape ``size`` (or int).

    References
    ----------
    .. [HVZ23] Y. He, R. Vershynin, Y. Zhu. Algorithmically Effective Differentially Private Synthetic Data. COLT 2023.
    .. [CKS20] C. L. Canonne, G. Kamath, T. Steinke. The Discrete Gaussian for Differential Privacy. NeurIPS 2020.
    See docs/references.md for the full entries.
    """
    owner = "discrete_laplace"
    sigma = check_float(scale, "scale", owner, low=0.0, low_open=True)
    shape = _size(size, owner)
    gen = check_rng(rng, owner)
    if check_bool(exact, "exact", owner):
        frac = Fraction(sigma)  # exact value of the float
        n_draws = 1 if shape is None else int(np.prod(shape))
        out = np.fromiter((_cks_discrete_laplace(frac.numerator, frac.denominator, gen) for _ in range(n_draws)),
                          dtype=np.int64, count=n_draws)
        return int(out[0]) if shape is None else out.reshape(shape)
    u = gen.random(shape)
    neg = u < 0.5
    w = 1.0 - np.where(neg, 2.0 * u, 2.0 * u - 1.0)  # uniform on (0, 1], independent of the sign
    p = math.exp(-1.0 / sigma)
    # M >= k  <=>  W <= 2 p^k / (1+p)  <=>  k <= sigma * (log 2 - log1p(p) - log W)
    mag = np.floor(sigma * (math.log(2.0) - math.log1p(p) - np.log(w)))
    mag = np.maximum(mag, 0.0)
    if np.any(mag > 2**62):  # pragma: no cover - only for absurd scales
        raise param_error(owner, "scale", "small enough for 64-bit output", scale)
    z = np.where(neg, -mag, mag).astype(np.int64)
    return int(z) if shape is None else z


# ------------------------------------------------------------- exact sampler [CKS20]
def _randbelow(rng: np.random.Generator, n: int) -> int:
    """Uniform integer in [0, n) from the generator's raw bits (exact, any size)."""
    if n <= 1:
        return 0
    if n < 2**62:
        return int(rng.integers(0, n))
    k = n.bit_length()
    nbytes = (k + 7) // 8
    while True:
        r = int.from_bytes(rng.bytes(nbytes), "little") >> (8 * nbytes - k)
        if r < n:
            return r


def _bernoulli(rng: np.random.Generator, num: int, den: int) -> bool:
    """Bernoulli(num/den) exactly."""
    return _randbelow(rng, den) < num


def _bernoulli_exp_le1(rng: np.random.Generator, num: int, den: int) -> bool:
    """Bernoulli(exp(-γ)) for γ = num/den in [0, 1] (CKS Algorithm 1, first branch)."""
    k = 1
    while _bernoulli(rng, num, den * k):
        k += 1
    return k % 2 == 1


def _bernoulli_exp(rng: np.random.Generator, num: int, den: int) -> bool:
    """Bernoulli(exp(-γ)) for rational γ = num/den ≥ 0 (CKS Algorithm 1)."""
    whole = num // den
    for _ in range(whole):
        if not _bernoulli_exp_le1(rng, 1, 1):
            return False
    return _bernoulli_exp_le1(rng, num - whole * den, den)


def _cks_discrete_laplace(s_num: int, s_den: int, rng: np.random.Generator) -> int:
    """CKS Algorithm 2: discrete Laplace with scale t/s where t = s_num, s = s_den (integers)."""
    t, s = s_num, s_den
    while True:
        u = _randbelow(rng, t)
        if not _bernoulli_exp(rng, u, t):
            continue
        v = 0
        while _bernoulli_exp_le1(rng, 1, 1):
            v += 1
        x = u + t * v
        y = x // s
        b = _bernoulli(rng, 1, 2)
        if b and y == 0:
            continue
        return -y if b else y


# --------------------------------------------------------------------- continuous samplers
def laplace(scale: float, size=None, rng=None) -> np.ndarray:
    """Laplace(0, b) with density :math:`e^{-|x|/b}/(2b)`, b = ``scale`` in (0, inf)."""
    b = check_float(scale, "scale", "laplace", low=0.0, low_open=True)
    return check_rng(rng, "laplace").laplace(0.0, b, _size(size, "laplace"))


def gaussian(sigma: float, size=None, rng=None) -> np.ndarray:
    """N(0, σ²), σ = ``sigma`` in (0, inf)."""
    s = check_float(sigma, "sigma", "gaussian", low=0.0, low_open=True)
    return check_rng(rng, "gaussian").normal(0.0, s, _size(size, "gaussian"))
