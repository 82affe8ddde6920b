"""Data for the mechanisms: synthetic generators and bundled real data.

Every dataset comes with its PUBLIC domain (docs/privacy-model.md §1): for a generator the domain
is known by construction and every point is drawn inside it (or clipped into it, when the
generator says so); for a bundled real dataset the bounds are hard-coded from the dataset's
documentation, never computed from the sample. Mechanisms clamp points outside the declared box,
so a domain that lied about the data would silently change the data; the tests check every
generator and real dataset against its domain.

Generators
    :func:`uniform_cube`, :func:`gaussian_mixture`, :func:`ring`, :func:`corner`,
    :func:`clustered_ball` ([GFR25, Section 6, Figure 4]), :func:`affine_plane` (the regime of
    [HSVZ23, Theorem 1.2]), :func:`mixture_1d`. :data:`GENERATORS` maps each name to
    ``(function, parameter schema)`` for the dashboard and the CLI. :func:`shift_scenario` draws a
    private sample and a shifted public one (the idea of [DLS+24, Figures 1–2]) for the certified
    marginals' tests and benchmarks.
Real data
    :func:`digits` ([HSVZ23, Section 5]), :func:`iris`, :func:`wine`; :data:`REAL_DATASETS`.
    :func:`default_dataset` is the dashboard's embedded default.
Mixed data (numeric and categorical columns)
    :func:`clinic`, a small health-like table generated with a fixed seed from a documented model, with
    its declared public domain (:data:`CLINIC_BOUNDS`, :data:`CLINIC_CATEGORIES`); :data:`MIXED_DATASETS`.
    A mixed dataset's ``X`` is the domain's encoding (category indices in the categorical columns,
    :meth:`~dpsynth_core.domain.Domain.read`); :meth:`Dataset.to_frame` gives the table with its labels.
CSV
    Reading and writing CSV files is :mod:`dpsynth_core.tabular` (:func:`~dpsynth_core.tabular.load_csv`,
    :func:`~dpsynth_core.tabular.csv_bytes`).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from .dataset import Dataset
from .domain import Domain
from .schema import ParamSpec
from .validation import check_bool, check_choice, check_float, check_int, check_rng, param_error

__all__ = [
    "Dataset",
    "uniform_cube",
    "gaussian_mixture",
    "ring",
    "corner",
    "clustered_ball",
    "affine_plane",
    "mixture_1d",
    "shift_scenario",
    "GENERATORS",
    "digits",
    "iris",
    "wine",
    "REAL_DATASETS",
    "clinic",
    "CLINIC_BOUNDS",
    "CLINIC_CATEGORIES",
    "CLINIC_SEED",
    "CLINIC_UNITS",
    "MIXED_DATASETS",
    "default_dataset",
    "resampler",
    "two_bumps",
    "MAX_N",
    "MAX_D",
]

#: Largest sample size a generator accepts (a guard against accidental huge allocations).
MAX_N = 10_000_000
#: Largest dimension a generator accepts.
MAX_D = 1_000


# ----------------------------------------------------------------------------- shared checks
def _check_n(n: Any, owner: str) -> int:
    return check_int(n, "n", owner, low=1, high=MAX_N)


def _check_d(d: Any, owner: str, name: str = "d") -> int:
    return check_int(d, name, owner, low=1, high=MAX_D)


def _check_weights(weights: Any, k: int, owner: str) -> np.ndarray:
    """``None`` (equal weights) or k non-negative finite numbers with a positive sum, normalised."""
    if weights is None:
        return np.full(k, 1.0 / k)
    expected = f"None or {k} non-negative finite numbers with a positive sum"
    if isinstance(weights, (str, bytes)) or np.isscalar(weights):
        raise param_error(owner, "weights", expected, weights, kind=TypeError)
    try:
        w = np.asarray(weights, dtype=float)
    except (TypeError, ValueError) as exc:
        raise param_error(owner, "weights", expected, weights, kind=TypeError) from exc
    if w.shape != (k,) or not np.isfinite(w).all() or (w < 0).any() or w.sum() <= 0:
        raise param_error(owner, "weights", expected, weights)
    return w / w.sum()


def _check_unit_points(value: Any, name: str, owner: str, shape: tuple[int, ...]) -> np.ndarray:
    """An array of the given shape with every entry in [0, 1]."""
    expected = f"an array of shape {shape} with entries in [0, 1]"
    if isinstance(value, (str, bytes)):
        raise param_error(owner, name, expected, value, kind=TypeError)
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError) as exc:
        raise param_error(owner, name, expected, value, kind=TypeError) from exc
    if arr.shape != shape or not np.isfinite(arr).all() or (arr < 0).any() or (arr > 1).any():
        raise param_error(owner, name, expected, value)
    return arr


def _names(d: int) -> tuple[str, ...]:
    return tuple(f"x{i}" for i in range(d))


def _param(name: str, kind: str, default: Any, help_: str, low: Any = None, high: Any = None,
           choices: Sequence[str] | None = None) -> ParamSpec:
    return ParamSpec(name, kind, default, help_, low=low, high=high, choices=tuple(choices or ()))


# Schema highs are the dashboard's limits (a browser demo); the functions accept up to MAX_N / MAX_D.
_N_PARAM = _param("n", "int", 2000, "Number of points.", 1, 200_000)
_RNG_PARAM = _param("rng", "int", 0, "Random seed of the generator: the same seed gives the same data.", 0, 2**31 - 1)


# --------------------------------------------------------------------------------- generators
def uniform_cube(n: int, d: int = 2, *, rng: Any = None) -> Dataset:
    """Points drawn uniformly from the unit cube.

    .. math:: X_i \\overset{iid}{\\sim} \\mathrm{Unif}([0, 1]^d)

    Parameters
    ----------
    n : int in [1, MAX_N]
        Number of points.
    d : int in [1, MAX_D]
        Dimension.
    rng : numpy.random.Generator, int or None
        Randomness (normalised once with :func:`numpy.random.default_rng`).

    Returns
    -------
    Dataset
        ``X`` of shape (n, d), public domain ``[0, 1]^d`` (exact: no point is clipped). The
        unstructured case of the papers' worst-case rates [HVZ23, Theorems 10–11].
    """
    owner = "uniform_cube"
    n, d = _check_n(n, owner), _check_d(d, owner)
    gen = check_rng(rng, owner)
    X = gen.random((n, d))
    return Dataset(X, Domain.unit(d, _names(d)), "uniform_cube",
                   f"{n} points uniform in the unit cube [0, 1]^{d} (public domain [0, 1]^{d}).")


def _mixture_centres(centers: Any, k: int, d: int, owner: str, gen: np.random.Generator) -> np.ndarray:
    if isinstance(centers, str):
        check_choice(centers, "centers", owner, ("diagonal", "random"))
        if centers == "random":
            return 0.15 + 0.7 * gen.random((k, d))
        if k == 1:
            return np.full((1, d), 0.5)
        t = 0.2 + 0.6 * np.arange(k) / (k - 1)
        return np.repeat(t[:, None], d, axis=1)
    return _check_unit_points(centers, "centers", owner, (k, d))


def gaussian_mixture(
    n: int,
    d: int = 2,
    k: int = 2,
    spread: float = 0.05,
    *,
    centers: Any = "diagonal",
    weights: Any = None,
    rng: Any = None,
) -> Dataset:
    """A mixture of k isotropic Gaussian clusters, clipped into the unit cube.

    .. math:: X_i = \\mathrm{clip}_{[0,1]^d}\\big(c_{L_i} + \\mathrm{spread}\\cdot Z_i\\big),
              \\quad L_i \\sim \\mathrm{Cat}(w),\\ Z_i \\sim N(0, I_d)

    With the defaults this is the "two-cluster mixture" of the benchmarks: centres
    ``(0.2, ..., 0.2)`` and ``(0.8, ..., 0.8)``, standard deviation 0.05 (12 standard deviations
    apart along each axis), equal weights.

    Parameters
    ----------
    n : int in [1, MAX_N]
        Number of points.
    d : int in [1, MAX_D]
        Dimension.
    k : int in [1, 100]
        Number of clusters.
    spread : float in [0, 1]
        Standard deviation of every cluster, per coordinate (0 gives k point masses).
    centers : {"diagonal", "random"}, None or array of shape (k, d) with entries in [0, 1]
        ``"diagonal"`` (default, also None): evenly spaced on the main diagonal,
        :math:`c_j = 0.2 + 0.6\\, j/(k-1)` in every coordinate (the centre 0.5 when k = 1);
        ``"random"``: uniform in :math:`[0.15, 0.85]^d`, drawn from ``rng``; or explicit centres.
    weights : None or array of shape (k,)
        Non-negative mixture weights (normalised); None means equal weights.
    rng : numpy.random.Generator, int or None
        Randomness.

    Returns
    -------
    Dataset
        ``X`` of shape (n, d), public domain ``[0, 1]^d``: points falling outside are clipped into
        the cube (so the domain is honest), ``labels`` the cluster index of each point.
    """
    owner = "gaussian_mixture"
    n, d = _check_n(n, owner), _check_d(d, owner)
    k = check_int(k, "k", owner, low=1, high=100)
    spread = check_float(spread, "spread", owner, low=0.0, high=1.0)
    gen = check_rng(rng, owner)
    if centers is None:
        centers = "diagonal"
    C = _mixture_centres(centers, k, d, owner, gen)
    w = _check_weights(weights, k, owner)
    labels = gen.choice(k, size=n, p=w)
    X = np.clip(C[labels] + spread * gen.standard_normal((n, d)), 0.0, 1.0)
    layout = centers if isinstance(centers, str) else "given"
    return Dataset(X, Domain.unit(d, _names(d)), "gaussian_mixture",
                   f"{n} points from a mixture of {k} Gaussian clusters ({layout} centres, sd {spread:g}) "
                   f"clipped into the public domain [0, 1]^{d}.", labels.astype(np.int64))


def ring(n: int, radius: float = 0.35, width: float = 0.03, *, rng: Any = None) -> Dataset:
    """Points uniform on an annulus centred at (0.5, 0.5).

    .. math:: X_i = (0.5, 0.5) + R_i(\\cos\\Theta_i, \\sin\\Theta_i),\\quad
              \\Theta_i \\sim \\mathrm{Unif}[0, 2\\pi),\\ R_i^2 \\sim \\mathrm{Unif}[r_-^2, r_+^2]

    with :math:`r_\\pm = \\mathrm{radius} \\pm \\mathrm{width}/2` (uniform with respect to area).

    Parameters
    ----------
    n : int in [1, MAX_N]
        Number of points.
    radius : float in (0, 0.5)
        Mid radius of the annulus.
    width : float in [0, 2 min(radius, 0.5 - radius)]
        Radial thickness (0 gives the circle itself). The bound keeps the annulus inside the
        unit square and off the centre.
    rng : numpy.random.Generator, int or None
        Randomness.

    Returns
    -------
    Dataset
        ``X`` of shape (n, 2), public domain ``[0, 1]^2``; every point lies inside it by
        construction (no clipping). A one-dimensional structure in the plane.
    """
    owner = "ring"
    n = _check_n(n, owner)
    radius = check_float(radius, "radius", owner, low=0.0, high=0.5, low_open=True, high_open=True)
    width = check_float(width, "width", owner, low=0.0)
    wmax = 2.0 * min(radius, 0.5 - radius)
    if width > wmax + 1e-12:
        raise param_error(owner, "width", f"a float in [0, 2 min(radius, 0.5 - radius)] = [0, {wmax:.6g}] so the "
                                          f"annulus fits in the unit square", width)
    width = min(width, wmax)
    gen = check_rng(rng, owner)
    r_lo, r_hi = max(radius - width / 2.0, 0.0), min(radius + width / 2.0, 0.5)
    theta = gen.uniform(0.0, 2.0 * math.pi, size=n)
    r = np.sqrt(gen.uniform(r_lo**2, r_hi**2, size=n))
    X = np.clip(0.5 + r[:, None] * np.column_stack([np.cos(theta), np.sin(theta)]), 0.0, 1.0)  # rounding only
    return Dataset(X, Domain.unit(2, _names(2)), "ring",
                   f"{n} points uniform on the annulus of radius {radius:g} ± {width / 2:g} centred at "
                   f"(0.5, 0.5) (public domain [0, 1]^2).")


def corner(n: int, d: int = 2, size: float = 0.05, *, rng: Any = None) -> Dataset:
    """All points in one corner of the unit cube: uniform in ``[0, size]^d``.

    .. math:: X_i \\overset{iid}{\\sim} \\mathrm{Unif}([0, \\mathrm{size}]^d)

    The adversarial case for hierarchical mechanisms (PMM, [HVZ23, Algorithm 4]): all the mass sits in one
    small cell of the public domain, so most of the partition is empty and the noise in the empty
    cells is what the synthetic data spreads around.

    Parameters
    ----------
    n : int in [1, MAX_N]
        Number of points.
    d : int in [1, MAX_D]
        Dimension.
    size : float in [0, 1]
        Side of the occupied corner cube (0 puts every point at the origin).
    rng : numpy.random.Generator, int or None
        Randomness.

    Returns
    -------
    Dataset
        ``X`` of shape (n, d), public domain ``[0, 1]^d`` (the data do NOT fill it, on purpose).
    """
    owner = "corner"
    n, d = _check_n(n, owner), _check_d(d, owner)
    size = check_float(size, "size", owner, low=0.0, high=1.0)
    gen = check_rng(rng, owner)
    X = size * gen.random((n, d))
    return Dataset(X, Domain.unit(d, _names(d)), "corner",
                   f"{n} points uniform in the corner cube [0, {size:g}]^{d} of the public domain [0, 1]^{d}.")


def clustered_ball(
    n: int,
    radius: float = 0.02,
    center: Any = (0.0, 0.0),
    *,
    positive: bool = True,
    rng: Any = None,
) -> Dataset:
    """Points uniform in a small l2 ball inside the unit disc [GFR25, Section 6, Figure 4].

    .. math:: X_i \\overset{iid}{\\sim} \\mathrm{Unif}\\big(B_2(c, r) \\cap \\Omega'\\big),\\quad
              \\Omega' = \\mathbb{R}^2_+ \\text{ if positive else } \\mathbb{R}^2

    Gonzalez, Fanti, Ramdas (*Private Evolution Converges* [GFR25]) run their simulations on the
    sample space :math:`\\Omega` = the unit l2 ball of :math:`\\mathbb{R}^2`, with the sensitive
    data in :math:`\\Omega \\cap \\mathbb{R}^2_+` (Section 6); Figure 4 (Appendix E) contrasts a
    heavily clustered dataset, uniform in the ball of radius 0.02 around the origin (the default
    here), with an unclustered one of radius 0.5 (``radius=0.5``). ``radius=1`` with the default
    centre gives the Section 6 dataset itself (uniform on the positive quarter disc).

    Parameters
    ----------
    n : int in [1, MAX_N]
        Number of points.
    radius : float in (0, 1]
        Radius r of the ball.
    center : pair of floats
        Centre c, with :math:`\\|c\\|_2 + r \\le 1` (the ball lies in the unit disc) and, when
        ``positive``, :math:`c \\ge 0` coordinate-wise.
    positive : bool
        Keep only the part of the ball in the positive quadrant, as in Section 6 (rejection
        sampling; the acceptance rate is at least 1/4 because c >= 0).
    rng : numpy.random.Generator, int or None
        Randomness.

    Returns
    -------
    Dataset
        ``X`` of shape (n, 2). Public domain ``[-1, 1]^2``: the smallest box around the unit disc
        :math:`\\Omega`, which is the paper's public sample space. (Mechanisms work in the box, so
        its corners outside the disc are part of their domain.)
    """
    owner = "clustered_ball"
    n = _check_n(n, owner)
    radius = check_float(radius, "radius", owner, low=0.0, high=1.0, low_open=True)
    positive = check_bool(positive, "positive", owner)
    if isinstance(center, (str, bytes)) or center is None or np.isscalar(center):
        raise param_error(owner, "center", "a pair of finite floats", center, kind=TypeError)
    try:
        c = np.asarray(center, dtype=float)
    except (TypeError, ValueError) as exc:
        raise param_error(owner, "center", "a pair of finite floats", center, kind=TypeError) from exc
    if c.shape != (2,) or not np.isfinite(c).all():
        raise param_error(owner, "center", "a pair of finite floats", center)
    if float(np.hypot(c[0], c[1])) + radius > 1.0 + 1e-12:
        raise param_error(owner, "center", f"a point with ||center||_2 + radius <= 1 so the ball lies in the "
                                           f"unit disc (radius = {radius:g})", center)
    if positive and (c < 0).any():
        raise param_error(owner, "center", "a point with non-negative coordinates when positive=True", center)
    gen = check_rng(rng, owner)
    out = np.empty((0, 2))
    while out.shape[0] < n:
        m = 2 * (n - out.shape[0]) + 16
        theta = gen.uniform(0.0, 2.0 * math.pi, size=m)
        r = radius * np.sqrt(gen.random(m))
        P = c + r[:, None] * np.column_stack([np.cos(theta), np.sin(theta)])
        if positive:
            P = P[(P >= 0).all(axis=1)]
        out = np.vstack([out, P])
    X = np.clip(out[:n], -1.0, 1.0)  # rounding only: the ball lies in the unit disc
    where = "in the positive quadrant, " if positive else ""
    return Dataset(X, Domain([-1.0, -1.0], [1.0, 1.0], names=_names(2)), "clustered_ball",
                   f"{n} points uniform in the l2 ball of radius {radius:g} around ({c[0]:g}, {c[1]:g}), "
                   f"{where}inside the unit disc [GFR25, Section 6, Figure 4]. Public domain [-1, 1]^2, "
                   f"the box around the unit disc.")


def affine_plane(
    n: int,
    D: int = 10,
    d_prime: int = 2,
    noise: float = 0.01,
    *,
    rng: Any = None,
) -> Dataset:
    """Points near a random d'-dimensional affine plane in ``[0, 1]^D`` (the setting of [HSVZ23]).

    .. math:: X_i = \\mathrm{clip}_{[0,1]^D}\\big(\\tfrac12\\mathbf 1 + s\\,V Z_i + \\mathrm{noise}\\cdot G_i\\big),
              \\quad Z_i \\sim \\mathrm{Unif}[-1, 1]^{d'},\\ G_i \\sim N(0, I_D)

    V (D x d') has orthonormal columns, drawn from ``rng`` (QR of a Gaussian matrix). The scale
    :math:`s = (0.5 - 3\\,\\mathrm{noise}) / \\max_j \\|V_{j\\cdot}\\|_1` is the largest for which
    the noiseless plane patch stays at least 3 noise standard deviations inside the cube, so the
    final clip touches few points. The plane passes through the cube's centre, not the origin:
    an affine, not linear, subspace. [HSVZ23] (Theorem 1.2 and the remark "Improved accuracy if X
    is low-dimensional") shows its Algorithm 1 attains the rate :math:`(\\varepsilon n)^{-1/d'}`
    instead of :math:`(\\varepsilon n)^{-1/D}` on such data: the centred covariance has rank d'
    (plus noise). The paper's own experiment (Section 5) uses the digits, see :func:`digits`.

    Parameters
    ----------
    n : int in [1, MAX_N]
        Number of points.
    D : int in [1, MAX_D]
        Ambient dimension.
    d_prime : int in [1, D]
        Dimension of the plane.
    noise : float in [0, 0.1]
        Standard deviation of the isotropic Gaussian noise around the plane (0: exactly on it).
    rng : numpy.random.Generator, int or None
        Randomness (draws both the plane and the points).

    Returns
    -------
    Dataset
        ``X`` of shape (n, D), public domain ``[0, 1]^D`` (points clipped into it).
    """
    owner = "affine_plane"
    n = _check_n(n, owner)
    D = _check_d(D, owner, "D")
    d_prime = check_int(d_prime, "d_prime", owner, low=1, high=D)
    noise = check_float(noise, "noise", owner, low=0.0, high=0.1)
    gen = check_rng(rng, owner)
    Q, R = np.linalg.qr(gen.standard_normal((D, d_prime)))
    V = Q * np.where(np.diag(R) < 0, -1.0, 1.0)  # sign-fixed: a Haar-distributed orthonormal frame
    s = (0.5 - 3.0 * noise) / float(np.abs(V).sum(axis=1).max())
    Z = gen.uniform(-1.0, 1.0, size=(n, d_prime))
    X = np.clip(0.5 + s * Z @ V.T + noise * gen.standard_normal((n, D)), 0.0, 1.0)
    return Dataset(X, Domain.unit(D, _names(D)), "affine_plane",
                   f"{n} points within noise sd {noise:g} of a random {d_prime}-dimensional affine plane "
                   f"through the centre of [0, 1]^{D}, clipped into that public domain (the setting of [HSVZ23]).")


def mixture_1d(
    n: int,
    k: int = 3,
    spread: float = 0.03,
    *,
    centers: Any = None,
    weights: Any = None,
    rng: Any = None,
) -> Dataset:
    """A one-dimensional Gaussian mixture clipped into [0, 1].

    .. math:: X_i = \\mathrm{clip}_{[0,1]}(c_{L_i} + \\mathrm{spread}\\cdot Z_i),\\quad
              L_i \\sim \\mathrm{Cat}(w),\\ Z_i \\sim N(0, 1)

    In one dimension W1 is the L1 distance between CDFs, so these data make the line mechanisms
    (the private measure on the line of [BSV22, Section 5], the Haar walk) easy to picture.

    Parameters
    ----------
    n : int in [1, MAX_N]
        Number of points.
    k : int in [1, 100]
        Number of components.
    spread : float in [0, 1]
        Standard deviation of every component.
    centers : None or array of shape (k,) with entries in [0, 1]
        None: evenly spaced, :math:`c_j = (j + 1/2)/k`.
    weights : None or array of shape (k,)
        Non-negative weights (normalised); None means equal weights.
    rng : numpy.random.Generator, int or None
        Randomness.

    Returns
    -------
    Dataset
        ``X`` of shape (n, 1), public domain ``[0, 1]`` (points clipped into it), ``labels`` the
        component of each point.
    """
    owner = "mixture_1d"
    n = _check_n(n, owner)
    k = check_int(k, "k", owner, low=1, high=100)
    spread = check_float(spread, "spread", owner, low=0.0, high=1.0)
    C = (np.arange(k) + 0.5) / k if centers is None else _check_unit_points(centers, "centers", owner, (k,))
    w = _check_weights(weights, k, owner)
    gen = check_rng(rng, owner)
    labels = gen.choice(k, size=n, p=w)
    X = np.clip(C[labels] + spread * gen.standard_normal(n), 0.0, 1.0)[:, None]
    return Dataset(X, Domain.unit(1, ("x0",)), "mixture_1d",
                   f"{n} points from a 1-D mixture of {k} Gaussians (sd {spread:g}) clipped into the public "
                   f"domain [0, 1].", labels.astype(np.int64))


def shift_scenario(n: int, d: int = 4, shift: float = 0.5, rng: Any = None, *, n_public: int = 4000,
                   names: tuple[str, ...] | None = None):
    """Private and public data with a distribution shift (the idea of [DLS+24, Figures 1–2]), generated.

    The private data is a mixture of three correlated Gaussian clusters (clipped to ``[0,1]^d``), in the
    spirit of census covariates (age, schooling, hours, ...). The public data is drawn from the same
    family with every cluster mean moved by ``shift · 0.35`` along a fixed direction, the mixture weights
    tilted towards the last cluster and the spread widened by ``1 + shift``; ``shift = 0`` gives two
    samples of one distribution. Public data of the first kind helps Step 3; strongly shifted public data
    puts little mass where the private data is, which the certificate's projection term reports.

    Parameters
    ----------
    n : int >= 1, private size; d : int in [2, 20], default 4
    shift : float in [0, 1], default 0.5
    rng : numpy Generator, int or None
    n_public : int >= 1, default 4000
    names : optional column names

    Returns
    -------
    X : ndarray (n, d) private; P : ndarray (n_public, d) public; domain : Domain (the unit cube)
    """
    owner = "shift_scenario"
    nn = check_int(n, "n", owner, low=1)
    dd = check_int(d, "d", owner, low=2, high=20)
    sh = check_float(shift, "shift", owner, low=0.0, high=1.0)
    npub = check_int(n_public, "n_public", owner, low=1)
    gen = check_rng(rng, owner)
    # Fixed (seeded) geometry of the clusters, independent of rng so both draws share it.
    geo = np.random.default_rng(20240202)
    means = np.clip(geo.uniform(0.2, 0.8, size=(3, dd)), 0.0, 1.0)
    covs = []
    for _ in range(3):
        A = geo.normal(size=(dd, dd)) * 0.06
        covs.append(A @ A.T + np.eye(dd) * 0.004)
    direction = np.ones(dd) / math.sqrt(dd)
    weights = np.array([0.45, 0.35, 0.20])

    def sample(size: int, mu: np.ndarray, w: np.ndarray, spread: float) -> np.ndarray:
        lab = gen.choice(3, size=size, p=w)
        out = np.empty((size, dd))
        for c in range(3):
            idx = np.flatnonzero(lab == c)
            out[idx] = gen.multivariate_normal(mu[c], covs[c] * spread**2, size=idx.size)
        return np.clip(out, 0.0, 1.0)

    X = sample(nn, means, weights, 1.0)
    w_pub = weights * np.array([1.0 - 0.6 * sh, 1.0, 1.0 + 2.0 * sh])
    P = sample(npub, means + sh * 0.35 * direction, w_pub / w_pub.sum(), 1.0 + sh)
    dom = Domain.unit(dd, names=names)
    return X, P, dom


#: name -> (function, parameter schema): a tuple of :class:`~dpsynth_core.schema.ParamSpec`, the same
#: type the mechanisms use. Calling ``function(**{p.name: value})`` with values in range builds the
#: dataset. Array-valued parameters (explicit centres, weights) are left to the Python API.
GENERATORS: dict[str, tuple[Callable[..., Dataset], tuple[ParamSpec, ...]]] = {
    "gaussian_mixture": (gaussian_mixture, (
        _N_PARAM,
        _param("d", "int", 2, "Dimension.", 1, 64),
        _param("k", "int", 2, "Number of clusters.", 1, 20),
        _param("spread", "float", 0.05, "Standard deviation of each cluster (points are clipped into [0, 1]^d).",
               0.0, 0.5),
        _param("centers", "choice", "diagonal", "Cluster centres: evenly spaced on the diagonal, or random.",
               choices=("diagonal", "random")),
        _RNG_PARAM,
    )),
    "uniform_cube": (uniform_cube, (
        _N_PARAM,
        _param("d", "int", 2, "Dimension.", 1, 64),
        _RNG_PARAM,
    )),
    "ring": (ring, (
        _N_PARAM,
        _param("radius", "float", 0.35, "Mid radius of the annulus, centred at (0.5, 0.5).", 0.01, 0.49),
        _param("width", "float", 0.03, "Radial thickness; at most 2 min(radius, 0.5 - radius).", 0.0, 0.5),
        _RNG_PARAM,
    )),
    "corner": (corner, (
        _N_PARAM,
        _param("d", "int", 2, "Dimension.", 1, 64),
        _param("size", "float", 0.05, "Side of the corner cube [0, size]^d holding every point.", 0.0, 1.0),
        _RNG_PARAM,
    )),
    "clustered_ball": (clustered_ball, (
        _N_PARAM,
        _param("radius", "float", 0.02, "Radius of the ball around the origin ([GFR25, Figure 4]: 0.02 "
                                        "clustered, 0.5 not clustered).", 0.001, 1.0),
        _param("positive", "bool", True, "Keep the positive quadrant only ([GFR25, Section 6])."),
        _RNG_PARAM,
    )),
    "affine_plane": (affine_plane, (
        _N_PARAM,
        _param("D", "int", 10, "Ambient dimension.", 1, 64),
        _param("d_prime", "int", 2, "Dimension of the affine plane (at most D).", 1, 64),
        _param("noise", "float", 0.01, "Standard deviation of the noise around the plane.", 0.0, 0.1),
        _RNG_PARAM,
    )),
    "mixture_1d": (mixture_1d, (
        _N_PARAM,
        _param("k", "int", 3, "Number of components, evenly spaced in [0, 1].", 1, 20),
        _param("spread", "float", 0.03, "Standard deviation of each component (clipped into [0, 1]).", 0.0, 0.5),
        _RNG_PARAM,
    )),
}


def resampler(X: Any, domain: Domain) -> Callable[[int, np.random.Generator], Dataset]:
    """A ``data_fn`` for :func:`dpsynth_core.experiments.sweep`: n rows drawn from X (without
    replacement when n <= len(X)), i.e. fresh samples of the data's empirical distribution, on the
    same public domain."""
    arr = np.asarray(X, dtype=float)

    def draw(n: int, rng: np.random.Generator) -> Dataset:
        idx = rng.choice(arr.shape[0], size=int(n), replace=int(n) > arr.shape[0])
        return Dataset(arr[idx], domain, "resample")

    return draw


# ---------------------------------------------------------------------------------- real data
# Public bounds below are hard-coded from each dataset's DOCUMENTATION (never from the sample at
# run time), then checked against the data by tests/core/test_datasets.py.

def _sklearn_loader(name: str):
    """A loader of scikit-learn's bundled copy of a UCI dataset (no network), with a clear message
    when scikit-learn is not installed (it is an optional dependency: ``pip install dpsynth[ml]``)."""
    try:
        from sklearn import datasets as skd
    except ImportError:
        raise ImportError("The bundled real datasets (digits, iris, wine) come with scikit-learn, which is not "
                          "installed: pip install 'dpsynth[ml]' (or scikit-learn).") from None
    return getattr(skd, name)


#: UCI Optical Recognition of Handwritten Digits: "each element is an integer in the range 0..16"
#: (8x8 images of counts of on pixels in 4x4 blocks of a 32x32 bitmap).
DIGITS_PIXEL_MAX = 16.0

#: Iris (Fisher 1936 / UCI): lengths and widths in cm. The documented ranges are 4.3-7.9, 2.0-4.4,
#: 1.0-6.9 and 0.1-2.5 cm; the public box is the generous, round [0, 10] cm for every feature.
IRIS_BOUNDS: dict[str, tuple[float, float]] = {
    "sepal_length_cm": (0.0, 10.0),
    "sepal_width_cm": (0.0, 10.0),
    "petal_length_cm": (0.0, 10.0),
    "petal_width_cm": (0.0, 10.0),
}

#: Wine (UCI Wine recognition, Forina et al.). Each bound is the UCI / scikit-learn documented
#: range ("Summary Statistics": min, max) rounded OUTWARD to a round number, strictly outside it.
WINE_BOUNDS: dict[str, tuple[float, float]] = {
    "alcohol": (10.0, 15.0),                        # documented 11.0 - 14.8
    "malic_acid": (0.0, 6.0),                       # 0.74 - 5.80
    "ash": (1.0, 3.5),                              # 1.36 - 3.23
    "alcalinity_of_ash": (10.0, 35.0),              # 10.6 - 30.0
    "magnesium": (60.0, 170.0),                     # 70.0 - 162.0
    "total_phenols": (0.5, 4.0),                    # 0.98 - 3.88
    "flavanoids": (0.0, 5.5),                       # 0.34 - 5.08
    "nonflavanoid_phenols": (0.0, 0.7),             # 0.13 - 0.66
    "proanthocyanins": (0.0, 4.0),                  # 0.41 - 3.58
    "color_intensity": (1.0, 14.0),                 # 1.3 - 13.0
    "hue": (0.4, 1.8),                              # 0.48 - 1.71
    "od280/od315_of_diluted_wines": (1.0, 4.5),     # 1.27 - 4.00
    "proline": (200.0, 1700.0),                     # 278 - 1680
}


@functools.lru_cache(maxsize=None)
def digits() -> Dataset:
    """scikit-learn's handwritten digits, scaled into ``[0, 1]^64`` by their public bound 16.

    .. math:: X_{ij} = \\mathrm{pixel}_{ij} / 16 \\in [0, 1]

    The dataset of [HSVZ23, Section 5] (1797 images of the UCI Optical Recognition of Handwritten
    Digits test split, 8 x 8 pixels with integer values 0..16, shipped inside scikit-learn: no
    network). The bound 16 comes from the UCI documentation, not from the sample.

    Returns
    -------
    Dataset
        ``X`` of shape (1797, 64), public domain ``[0, 1]^64`` with columns ``pixel_r_c``
        (row r, column c of the image), ``labels`` the digit 0..9.
    """
    load_digits = _sklearn_loader("load_digits")

    raw = load_digits()
    names = tuple(f"pixel_{r}_{c}" for r in range(8) for c in range(8))
    return Dataset(raw.data / DIGITS_PIXEL_MAX, Domain.unit(64, names), "digits",
                   "1797 handwritten digits (8x8 images, UCI / scikit-learn) with pixel values 0..16 scaled "
                   "by their documented public bound 16 into [0, 1]^64; labels are the digits 0-9 "
                   "([HSVZ23, Section 5]).", raw.target.astype(np.int64))


@functools.lru_cache(maxsize=None)
def iris() -> Dataset:
    """Fisher's iris measurements (cm) with the public bounds ``[0, 10]`` cm per feature.

    The bounds are round and generous, from domain knowledge (UCI documents 4.3-7.9, 2.0-4.4,
    1.0-6.9 and 0.1-2.5 cm): they are hard-coded in :data:`IRIS_BOUNDS`, never read off the sample.

    Returns
    -------
    Dataset
        ``X`` of shape (150, 4) in cm, ``labels`` the species (0 setosa, 1 versicolor, 2 virginica).
    """
    load_iris = _sklearn_loader("load_iris")

    raw = load_iris()
    names = tuple(IRIS_BOUNDS)
    dom = Domain([IRIS_BOUNDS[c][0] for c in names], [IRIS_BOUNDS[c][1] for c in names], names)
    return Dataset(raw.data, dom, "iris",
                   "150 iris flowers, 4 measurements in cm (UCI / scikit-learn); public bounds [0, 10] cm "
                   "for every feature, from domain knowledge. Labels: 0 setosa, 1 versicolor, 2 virginica.",
                   raw.target.astype(np.int64))


@functools.lru_cache(maxsize=None)
def wine() -> Dataset:
    """UCI wine recognition data (13 chemical measurements) with documented public bounds.

    Each bound in :data:`WINE_BOUNDS` is the documented UCI range (the "Summary Statistics" table
    of the UCI / scikit-learn description) rounded outward to a round number; hard-coded, never
    read off the sample.

    Returns
    -------
    Dataset
        ``X`` of shape (178, 13) in the original units, ``labels`` the cultivar 0..2.
    """
    load_wine = _sklearn_loader("load_wine")

    raw = load_wine()
    if list(raw.feature_names) != list(WINE_BOUNDS):  # pragma: no cover - scikit-learn changed the data
        raise RuntimeError(f"Unexpected wine columns {raw.feature_names}.")
    names = tuple(WINE_BOUNDS)
    dom = Domain([WINE_BOUNDS[c][0] for c in names], [WINE_BOUNDS[c][1] for c in names], names)
    return Dataset(raw.data, dom, "wine",
                   "178 wines, 13 chemical measurements (UCI / scikit-learn); public bounds are the documented "
                   "UCI ranges rounded outward. Labels: cultivar 0, 1, 2.", raw.target.astype(np.int64))


#: name -> loader (a function with no argument returning a :class:`Dataset`).
REAL_DATASETS: dict[str, Callable[[], Dataset]] = {"digits": digits, "iris": iris, "wine": wine}


# ---------------------------------------------------------------------------------- mixed data
#: The clinic table's public bounds, declared as a data owner would before looking at any record:
#: adult patients (18 to 100 years), a body-mass index in [10, 60] kg/m² and a systolic blood pressure
#: in [60, 250] mmHg (the ranges a clinical form accepts). The generator draws inside narrower ranges.
CLINIC_BOUNDS: dict[str, tuple[float, float]] = {
    "age": (18.0, 100.0),
    "bmi": (10.0, 60.0),
    "systolic_bp": (60.0, 250.0),
}
#: The clinic table's categories, declared with the form's choices (not read off the records).
CLINIC_CATEGORIES: dict[str, tuple[str, ...]] = {
    "sex": ("F", "M"),
    "region": ("north", "east", "south", "west"),
    "diabetes": ("no", "yes"),
}
#: The units of the clinic table's numeric columns (for sentences in the data's own units).
CLINIC_UNITS: dict[str, str] = {"age": "years", "bmi": "kg/m²", "systolic_bp": "mmHg"}
#: The columns in the table's order.
CLINIC_COLUMNS = ("age", "sex", "bmi", "systolic_bp", "region", "diabetes")
#: The fixed seed of the bundled table.
CLINIC_SEED = 20260
_CLINIC_REGION_P = (0.30, 0.20, 0.30, 0.20)            # north, east, south, west
_CLINIC_REGION_BMI = (0.0, 0.5, 2.0, -0.5)             # kg/m² added to the BMI, per region


def clinic(n: int = 2000, *, rng: Any = CLINIC_SEED) -> Dataset:
    """A small health-like table with numeric and categorical columns, generated from a documented model.

    Columns (in this order): ``age`` (years), ``sex`` (F, M), ``bmi`` (kg/m²), ``systolic_bp`` (mmHg),
    ``region`` (north, east, south, west) and ``diabetes`` (no, yes). The generating model, with
    :math:`Z_1, Z_2 \\sim N(0, 1)` independent and :math:`\\sigma(t) = 1/(1 + e^{-t})`:

    .. math::

        \\mathrm{sex} &\\sim \\mathrm{Cat}(F: 0.52,\\ M: 0.48), \\qquad
        \\mathrm{region} \\sim \\mathrm{Cat}(\\mathrm{north}: 0.3,\\ \\mathrm{east}: 0.2,\\
        \\mathrm{south}: 0.3,\\ \\mathrm{west}: 0.2)\\\\
        \\mathrm{age} &= 18 + 72\\,B, \\quad B \\sim \\mathrm{Beta}(2, 2.2)\\\\
        \\mathrm{bmi} &= \\mathrm{clip}_{[12, 55]}\\big(21 + 0.08(\\mathrm{age} - 18) + 0.8[\\mathrm{M}]
        + r_{\\mathrm{region}} + 4 Z_1\\big), \\quad r = (0, 0.5, 2, -0.5)\\\\
        \\mathrm{systolic\\_bp} &= \\mathrm{clip}_{[80, 220]}\\big(100 + 0.55(\\mathrm{age} - 18)
        + 0.9(\\mathrm{bmi} - 25) + 5[\\mathrm{M}] + 12 Z_2\\big)\\\\
        P(\\mathrm{diabetes} = \\mathrm{yes}) &= \\sigma\\big(-8.5 + 0.045\\,\\mathrm{age} + 0.17\\,\\mathrm{bmi}
        + 0.4[\\mathrm{south}]\\big)

    so the columns are related as in real clinical data: blood pressure grows with age and BMI, BMI
    with age and differs by region, diabetes is more frequent with age, BMI and in the south (about one
    row in five says "yes"). Nothing in it describes real people.

    The public domain is declared, not read off the sample: :data:`CLINIC_BOUNDS` (wider than the
    ranges drawn, as a clinical form's limits are) and :data:`CLINIC_CATEGORIES` (the form's choices).

    Parameters
    ----------
    n : int in [1, MAX_N]
        Number of rows (default 2000).
    rng : numpy.random.Generator, int or None
        Randomness; the default :data:`CLINIC_SEED` gives the bundled table.

    Returns
    -------
    Dataset
        ``X`` of shape (n, 6): the domain's encoding (numbers, and the index of each category in its
        declared list); :meth:`Dataset.to_frame` gives the table with its labels. No labels.
    """
    owner = "clinic"
    n = _check_n(n, owner)
    gen = check_rng(rng, owner)
    male = gen.random(n) < 0.48
    region = gen.choice(4, size=n, p=_CLINIC_REGION_P)
    age = 18.0 + 72.0 * gen.beta(2.0, 2.2, size=n)
    bmi = np.clip(21.0 + 0.08 * (age - 18.0) + 0.8 * male + np.asarray(_CLINIC_REGION_BMI)[region]
                  + 4.0 * gen.standard_normal(n), 12.0, 55.0)
    bp = np.clip(100.0 + 0.55 * (age - 18.0) + 0.9 * (bmi - 25.0) + 5.0 * male + 12.0 * gen.standard_normal(n),
                 80.0, 220.0)
    logit = -8.5 + 0.045 * age + 0.17 * bmi + 0.4 * (region == 2)
    diabetes = gen.random(n) < 1.0 / (1.0 + np.exp(-logit))
    cats = CLINIC_CATEGORIES
    frame = pd.DataFrame({
        "age": age,
        "sex": np.asarray(cats["sex"])[male.astype(np.int64)],
        "bmi": bmi,
        "systolic_bp": bp,
        "region": np.asarray(cats["region"])[region],
        "diabetes": np.asarray(cats["diabetes"])[diabetes.astype(np.int64)],
    }, columns=list(CLINIC_COLUMNS))
    numeric = [c for c in CLINIC_COLUMNS if c in CLINIC_BOUNDS]
    dom = Domain([CLINIC_BOUNDS[c][0] for c in numeric], [CLINIC_BOUNDS[c][1] for c in numeric],
                 names=CLINIC_COLUMNS, categories=cats)
    return Dataset(dom.read(frame, name="frame", owner=owner), dom, "clinic",
                   f"{n} patients of a generated clinic (not real people): age, sex, BMI, systolic blood pressure, "
                   "region and diabetes. Public domain declared as on a clinical form: age in [18, 100] years, "
                   "BMI in [10, 60] kg/m², blood pressure in [60, 250] mmHg; sex F/M, region north/east/south/west, "
                   "diabetes no/yes.")


#: name -> loader (no argument) of the bundled tables with categorical columns.
MIXED_DATASETS: dict[str, Callable[[], Dataset]] = {"clinic": clinic}


@functools.lru_cache(maxsize=None)
def default_dataset() -> Dataset:
    """The dashboard's embedded default: the two-cluster mixture, n = 5000, d = 2, seed 0.

    ``gaussian_mixture(5000, d=2, k=2, rng=0)`` named ``"two_clusters"``; public domain ``[0, 1]^2``.
    """
    ds = gaussian_mixture(5000, d=2, k=2, rng=0)
    return Dataset(ds.X, ds.domain, "two_clusters",
                   "Two Gaussian clusters (centres (0.2, 0.2) and (0.8, 0.8), sd 0.05) in the unit square, "
                   "n = 5000, seed 0; public domain [0, 1]^2.", ds.labels)


def two_bumps(shift: float, *, rng: Any = 0) -> tuple[np.ndarray, np.ndarray]:
    """Two samples on the line for a picture of W1 (Kantorovich–Rubinstein duality): μ, two clusters (3000 points
    at 0.3, 2000 at 0.65), and ν, two clusters of other weights and widths moved right by ``shift`` (the left
    one) and ``shift / 2`` (the right one). Not private data: a drawing."""
    shift = check_float(shift, "shift", "two_bumps", low=-1.0, high=1.0)
    gen = check_rng(rng, "two_bumps")
    mu = np.concatenate([gen.normal(0.3, 0.06, 3000), gen.normal(0.65, 0.08, 2000)])
    nu = np.concatenate([gen.normal(0.3 + shift, 0.07, 2600), gen.normal(0.65 + shift / 2, 0.08, 2400)])
    return mu, nu
