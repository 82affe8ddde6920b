"""The mechanism: :func:`sparse_marginals`, its parameters (:class:`SparseMarginalsConfig`) and its typed
results (:class:`SparseMarginalsTrace`, :class:`SparseMarginalsOwner`). The body calls the steps of the
other modules of this package; the mathematics is in the package docstring.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ... import limits
from ...domain import Domain
from ...grid import largest_remainder
from ...haar import levels_for
from ...privacy import Ledger
from ...theory import BoundKind, Theory, marginal_rate
from ...validation import check_choice, check_points, param_error
from ..contract import Config, Prepared, mechanism, n_synthetic_param, param
from ..release import OwnerView, Release, Trace
from .certificate import (
    CERTIFICATES,
    Certificates,
    CertificateTerms,
    Fit,
    NoiseDraws,
    Noisy,
    block_max,
    certify,
    default_k_within_budget,
    fit,
    lt_of,
    mc_order,
    noise_draws,
    plan_quantiles,
    section_5_3,
)
from .consistency import CONSISTENCY, consistency_map, consistent_part, mixed_consistency_map
from .mixed import DENSE_MIXED_MAX, MixedBlocks, block_scales, mixed_marginal_counts
from .projection import PUBLIC_GENERATORS, TIE_BREAK, discretise_support, public_points, step3_lp, step3_ut_lp
from .proxies import SolveBudget
from .query import (
    MAX_CELLS_PER_BLOCK,
    MAX_CELLS_TOTAL,
    NOISES,
    Grid,
    default_k,
    haar_block_noise,
    marginal_counts,
    noise_scale,
)

__all__ = ["sparse_marginals", "SparseMarginalsConfig", "SparseMarginalsTrace", "SparseMarginalsOwner", "DEFAULT_K_MIN"]

#: The default grid searches k^s <= 4096 cells per block.
_DEFAULT_MAX_CELLS = 4096
#: The default grid has at least this many cells per numeric axis (within the limits): at k = 1 the release
#: puts every numeric value at the centre of its declared range, whatever the data (docs/sparse-marginals.md).
DEFAULT_K_MIN = 2


# ------------------------------------------------------------------------------------ parameters
def _check_public(value: Any, owner: str) -> Any:
    """``public``: a generator name (:data:`PUBLIC_GENERATORS`) or public points (array (n_pub, d) or a
    DataFrame, domain units); their dimension is checked against the domain in ``check_domain``."""
    if isinstance(value, str):
        return check_choice(value, "public", owner, PUBLIC_GENERATORS)
    if hasattr(value, "columns"):  # a DataFrame: its columns are matched to the domain's names in check_domain
        return value
    return check_points(value, "public", owner)


def _public_columns(public: Any, domain: Domain) -> tuple[str, ...] | None:
    """The domain's column names when ``public`` is a DataFrame holding all of them (as for X)."""
    if hasattr(public, "columns") and all(name in public.columns for name in domain.names):
        return domain.names
    return None


@dataclass(frozen=True)
class SparseMarginalsConfig(Config):
    """The parameters of :func:`sparse_marginals`. ``public`` is a generator name or (Python API) an array
    of public points."""

    s: int = param("int", 2, "Marginal order: the utility loss is the largest W1 over all s-dimensional "
                   "marginals (Eq. 1).", low=1, high=6)
    k: int | None = param("int", None, "Cells per axis of each marginal grid (k^s cells per block, k^s <= 2^16, C(d, s) k^s <= "
                          "2^21); default: the k >= 2 minimising the expected-loss bound of Eq. (15) for (n, ε, d, "
                          "s), no data used (query.default_k).", low=1,
                          high=4096)
    public: Any = param("choice", "uniform", "Public candidate points the synthetic measure lives on "
                        "(Section 5.1): 'uniform' = public_size uniform points of the domain (drawn from rng), 'grid' "
                        "= the centres of T_k,d (all of them when k^d <= public_size: the exact Eq. (12)); an array "
                        "(n_pub, d) of public data in domain units through the API.",
                        choices=PUBLIC_GENERATORS, check=_check_public)
    public_size: int = param("int", 4000, "Number of generated public candidates (the paper uses 4000).",
                             low=1, high=200_000, log=True)
    snap_public: bool = param("bool", True, "Move public points to their cell centres in T_k,d (Section 5.1: "
                              "D_pub ⊂ T_k), so the last projection term of Eq. (4), U(T^{-1}Tμ, μ), is zero; off, it is "
                              "added, computed exactly.")
    certificate: str = param("choice", "U_T", "Proxy loss in the released certificate: U_T (Eq. 17, tighter) "
                             "or L_T (Eq. 10).", choices=CERTIFICATES)
    delta_cert: float = param("float", 0.1, "The certificate holds with probability at least 1 - delta_cert "
                              "over the noise (Lemma 1).", low=0.001, high=0.5, log=True)
    step3: str = param("choice", "L_T", "Proxy minimised by the Step 3 LP: L_T (the paper) or U_T "
                       "(Algorithm 1 with G = U_T, an LP over public-point measures; not in the paper).",
                       choices=CERTIFICATES)
    noise: str = param("choice", "exact_total", "exact_total: under replace the block totals are public and get "
                       "no noise, the other Haar coefficients slightly less (same ε; docs/sparse-marginals.md, "
                       "'Step 2: noise'); paper: Laplace(2K/(nε)) on every Haar coefficient (Lemma 2).",
                       choices=NOISES)
    consistency: str = param("choice", "certificate", "certificate: the released bound uses the proxy composed "
                             "with the consistency projection Π of the noisy marginals (Lemma 1 with G∘Π; removes the "
                             "noise components that no dataset can have, valid by the same proof); both: Step 3 also "
                             "fits Π v_DP; none: the paper's Eq. (4) as printed.", choices=CONSISTENCY)
    mc_draws: int = param("int", 200, "Monte Carlo noise draws for the privatisation quantile (no data used; "
                          "the paper uses 200); at least (1-δ)/δ for δ = delta_cert (certificate.mc_order).", low=20,
                          high=100_000, log=True, advanced=True)
    n_synthetic: int | None = n_synthetic_param("Synthetic points (largest-remainder rounding of the measure); "
                                                "default n (public under replace), capped at dpsynth_core.limits "
                                                "max_synthetic_rows (post-processing, noted); a larger value is "
                                                "refused.")

    @property
    def exact_total(self) -> bool:
        return self.noise == "exact_total"

    @property
    def consistent(self) -> bool:
        """Whether the consistency projection Π is used (in the certificate, and with "both" in Step 3)."""
        return self.consistency != "none"

    @property
    def uses_ut(self) -> bool:
        """Whether U_T is computed (the released certificate or Step 3 uses it): exact transport solves."""
        return self.certificate == "U_T" or self.step3 == "U_T"

    def check_domain(self, domain: Domain, owner: str) -> None:
        """s <= d; enough Monte Carlo draws for delta_cert; the query vector and the Monte Carlo noise
        within the size limits (public inputs only, before anything is allocated); public points of
        dimension d."""
        super().check_domain(domain, owner)
        d, s, M = domain.d, self.s, self.mc_draws
        if s > d:
            raise param_error(owner, "s", f"an int in [1, {d}]", s)
        K = math.comb(d, s)
        mc_order(M, self.delta_cert, owner)
        limits.check_planned(M * K, "max_cells", owner=owner, param="mc_draws", what="Monte Carlo entries",
                             fix="pass fewer mc_draws or a smaller s",
                             got=f"{M} draws x C({d}, {s}) = {K} blocks = {M * K} entries at k = 1")
        if domain.is_mixed:
            self._check_mixed(domain, owner, K, M)
            return
        if self.k is None and K > MAX_CELLS_TOTAL:
            raise param_error(owner, "k", f"an int with C(d, s) k^s <= {MAX_CELLS_TOTAL} (d={d}, s={s}, "
                              f"C(d, s)={K})", None)
        if self.k is not None:
            _check_grid(self.k, s, K, d, M, owner)
        if not isinstance(self.public, str):
            check_points(self.public, "public", owner, d=d, columns=_public_columns(self.public, domain))

    def _check_mixed(self, domain: Domain, owner: str, K: int, M: int) -> None:
        """A mixed domain: the L_T Step 3 (the U_T one is a flow on the numeric grid's king-move graph, which
        does not carry the mixed metric), the largest block within the size limits at the given k (at k = 1
        for the default: the categorical axes alone), public points with the declared categories."""
        if self.step3 == "U_T":
            raise param_error(owner, "step3", "'L_T' on a domain with categorical columns (the U_T Step 3 is a "
                              "flow on the numeric grid's king-move graph, which does not carry the mixed metric; "
                              "the released certificate may still use U_T)", "U_T")
        for k in (1,) if self.k is None else (1, self.k):  # the categorical axes alone, then the given k
            m, shape = _largest_block(domain, self.s, k)
            what = (f"the largest {self.s}-marginal ({shape}) has {m} cells at k = {k}"
                    + ("; categorical columns have one cell per declared category" if k == 1 else ""))
            if m > MAX_CELLS_PER_BLOCK or K * m > MAX_CELLS_TOTAL:
                param, fix = ("s", "a smaller s or fewer categories") if k == 1 else ("k", "a smaller k or s")
                raise param_error(owner, param, f"a value whose marginal tables fit {MAX_CELLS_PER_BLOCK} cells each "
                                  f"and {MAX_CELLS_TOTAL} in all (pass {fix})", f"{getattr(self, param)}: {what}")
        limits.check_planned(M * K * m, "max_cells", owner=owner, param="k" if self.k is not None else "mc_draws",
                             what="Monte Carlo entries", fix="pass a smaller k, s or fewer mc_draws",
                             got=f"{M} draws x {K} blocks x {m} cells = {M * K * m} entries ({what})")
        if not isinstance(self.public, str):
            domain.read(self.public, name="public", owner=owner)


def _largest_block(domain: Domain, s: int, k: int) -> tuple[int, str]:
    """The cells of the largest s-marginal of a mixed domain at k cells per numeric axis, and its shape."""
    sizes = [(len(domain.categories[c]) if c in domain.categories else k, c) for c in domain.names]
    top = sorted(sizes, key=lambda t: -t[0])[:s]
    return math.prod(t[0] for t in top), " x ".join(f"{c} ({n})" for n, c in top)


def _check_grid(k: int, s: int, K: int, d: int, M: int, owner: str) -> None:
    """An explicit k: at most 2^16 cells per block, 2^21 entries of the query vector, and the Monte Carlo
    noise (M K k^s entries) within ``limits`` max_cells."""
    m = k**s
    if m > MAX_CELLS_PER_BLOCK:
        raise param_error(owner, "k", f"an int with k^s <= {MAX_CELLS_PER_BLOCK} (s={s})", k)
    if K * m > MAX_CELLS_TOTAL:
        raise param_error(owner, "k", f"an int with C(d, s) k^s <= {MAX_CELLS_TOTAL} (d={d}, s={s}, C(d, s)={K})", k)
    limits.check_planned(M * K * m, "max_cells", owner=owner, param="k", what="Monte Carlo entries",
                         fix="pass a smaller k or fewer mc_draws",
                         got=f"{M} draws x {K} blocks x {k}^{s} cells = {M * K * m} entries")


# --------------------------------------------------------------------------------- typed results
@dataclass(frozen=True)
class SparseMarginalsTrace(Trace):
    """The intermediates of a release (all differentially private: post-processing of v_DP and public inputs).

    ``s``, ``k``, ``subsets`` (the K subsets S, as lists) and ``snake_order`` (row-major cell at each path
    position) describe the grid; ``delta_cert`` is the certificate's failure probability. The marginals
    are (K, k^s) arrays in row-major cell order: ``noisy_marginals`` (v_DP), ``consistent_marginals``
    (Π v_DP, equal to v_DP with consistency="none"), ``projected_marginals`` (those of the released points)
    and ``lp_marginals`` (of the LP's measure). ``certificate`` holds every certificate of the released
    points by key ("L_T", "U_T", "L_T_consistent", "U_T_consistent"; :class:`CertificateTerms`),
    ``certificate_key`` the one in ``release.bound`` (:attr:`released`), ``certificate_lp_measure`` the
    same for the LP's measure and ``mc_samples`` the Monte Carlo samples of each privatisation term.
    ``lp`` summarises Step 3 (objective, size, seconds), ``support`` and ``weights`` are the LP's measure
    on the public support (unit cube), ``section_5_3`` the comparison of Section 5.3 and
    ``transport_solves`` the exact solves the certificate used. ``candidates`` is the number of public
    candidates drawn (or given); snapped to their cell centres and merged they are the ``support_size``
    points Step 3 fits, of which ``support_used`` get mass in the release.
    """

    s: int
    k: int
    delta_cert: float
    subsets: list
    snake_order: np.ndarray
    noisy_marginals: np.ndarray
    consistent_marginals: np.ndarray
    projected_marginals: np.ndarray
    lp_marginals: np.ndarray
    certificate: dict[str, CertificateTerms]
    certificate_key: str
    certificate_lp_measure: dict[str, CertificateTerms]
    mc_samples: dict[str, np.ndarray]
    lp: dict
    support: np.ndarray
    weights: np.ndarray
    section_5_3: dict
    transport_solves: int
    candidates: int

    @property
    def released(self) -> CertificateTerms:
        """The terms of the released certificate (``release.bound`` is its total)."""
        return self.certificate[self.certificate_key]

    @property
    def K(self) -> int:
        """Number of marginal blocks, C(d, s)."""
        return len(self.subsets)

    @property
    def support_size(self) -> int:
        """Number of public candidates Step 3 chose from (after snapping and merging)."""
        return int(self.support.shape[0])

    @property
    def support_used(self) -> int:
        """Number of those points with mass in the LP's measure."""
        return int(np.count_nonzero(self.weights > 0))

    def grid_view(self, values) -> np.ndarray:
        """One marginal table (a row of ``noisy_marginals``, ``projected_marginals``, the owner's
        ``true_marginals``) on its k^s grid as a picture of the grid reads it: for s = 2 the k x k table
        column-major (its first column along x), for s = 1 the k cells. A mixed release pads its tables to
        the largest one's cells; the padding is dropped."""
        v = np.asarray(values, dtype=float)[: self.k ** self.s]
        return v.reshape(self.k, self.k).T.ravel() if self.s == 2 else v.ravel()


@dataclass(frozen=True)
class SparseMarginalsOwner(OwnerView):
    """Owner view (NOT DP): the true marginals T μ_D ((K, k^s), row-major cells) and the realised proxy
    losses of the noise actually added, G(0, η) and G(0, Πη) (None when not computed: U_T only when the
    release uses it, Π only with the consistency projection)."""

    true_marginals: np.ndarray
    noise_lt: float
    noise_ut: float | None
    noise_lt_consistent: float | None
    noise_ut_consistent: float | None


# ------------------------------------------------------------------------------------- mechanism
@mechanism(
    name="sparse_marginals",
    title="Certified sparse-marginal release (Donhauser et al.)",
    paper=("Donhauser, Lokna, Sanyal, Boedihardjo, Hönig, Yang, Certified private data release for sparse Lipschitz "
           "functions (AISTATS 2024) [DLS+24]"),
    algorithm="[DLS+24] Algorithm 1 with public-data Step 3 (Section 5.1); certificate Eq. (4) with U_T (Eq. 17) or "
              "L_T (Eq. 10)",
    dp="pure",
    neighbours=("replace",),
    config=SparseMarginalsConfig,
    theory=Theory(proven=False, rate=marginal_rate),
    categorical=True,
    summary="All s-way marginals on k^s grids with Haar-transformed Laplace noise, projected onto measures over "
            "public points by a sparse LP, released with a private high-probability bound on the utility loss.",
)
def sparse_marginals(p: Prepared[SparseMarginalsConfig]) -> Release[SparseMarginalsTrace, SparseMarginalsOwner]:
    """Certified DP release for s-sparse Lipschitz queries [DLS+24, Algorithm 1, Sections 3 and 5].

    .. math:: \\mathcal B(\\mu, v_{DP}) = \\frac{1}{2k} + q_{1-\\delta}\\big(\\mathcal G(0,\\eta)\\big)
              + \\mathcal G(v_{DP}, T\\mu) + \\mathcal U(T^{-1}T\\mu, \\mu) \\ \\ge\\ \\mathcal U(\\mu_D, \\mu)
              \\ \\text{w.p.} \\ge 1 - \\delta

    Noisy marginals (Eq. (7), Lemma 2), Step 3 as a sparse LP over measures on public points (Section 5.1),
    rounding to ``n_synthetic`` points, and the certificate of Eq. (4) evaluated *on the released points*
    (Lemma 1 holds uniformly over μ). The steps are in the package docstring.

    Parameters
    ----------
    X : array (n, d), DataFrame, Dask array (n, d) or Dask DataFrame; domain : Domain (public bounds)
        Private data in domain units (clamped into the domain), read only through the marginal counts
        (:func:`~.query.marginal_counts`): a Dask collection is never materialised.
    epsilon : float in (0, inf); neighbours : "replace" only (n is public; add/remove is refused)
    s, k, public, public_size, snap_public, certificate, delta_cert, step3, noise, consistency, mc_draws,
    n_synthetic
        Declared in :class:`SparseMarginalsConfig` (listed below). Step 3's LPs are
        :func:`~.projection.step3_lp` (L_T) and :func:`~.projection.step3_ut_lp` (U_T); the noise scales
        :func:`~.query.noise_scale` (docs/deviations.md §9; measured in benchmarks/results/sparse_marginals.json,
        "variants"); the consistency projection :func:`~.consistency.consistency_map`. The paper's certificates
        are always in the trace.

    Returns
    -------
    Release[SparseMarginalsTrace, SparseMarginalsOwner]
        ``bound``: the certificate for the released points (unit cube, l_inf, Eq. (1)); ``trace``: the
        marginals, every certificate's terms, the Monte Carlo samples, the LP summary and Section 5.3's
        comparison; ``owner``: the true marginals and the realised proxy losses of the noise (not DP).

    References
    ----------
    .. [DLS+24] K. Donhauser, J. Lokna, A. Sanyal, M. Boedihardjo, R. Hönig, F. Yang. Certified private data release for sparse Lipschitz functions. AISTATS 2024.
    .. [HH18] Q. Huangfu, J. A. J. Hall. Parallelizing the dual revised simplex method. Math. Prog. Comp. 10(1), 2018.
    See docs/references.md for the full entries.
    """
    cfg = p.config
    # the certificate's Monte Carlo draws and the default grid's planning draws: fresh noise from child
    # streams of rng, independent of the release's noise and of each other (no data involved)
    mc_gen, plan_gen = p.rng.spawn(2)
    grid, k_rule = _grid(p, plan_gen)
    m_syn, capped = _output_size(p, grid)
    true, eta, scale = _noisy_marginals(p, grid)
    noisy = _consistent(true + eta, grid, cfg)
    ledger = Ledger().add(_ledger_entry(grid, scale, cfg), p.epsilon)
    draws = noise_draws(grid, scale, mc_gen, cfg.mc_draws, exact_total=cfg.exact_total, cmap=noisy.cmap,
                        consistent=cfg.consistent)
    budget = _solve_budget(p, grid, draws)
    raw, described = public_points(cfg.public, cfg.public_size, p.domain, grid.k, p.rng, owner=p.owner)
    support = (discretise_support(raw, grid.k, _categorical_mask(grid)) if cfg.snap_public else raw)
    lp = _step3(p, grid, noisy, support)
    U_syn, released = _round(lp["alpha"], support, m_syn, grid, p)
    lp_fit, certs, key = _certify(cfg, grid, noisy, draws, budget, released, support, lp)
    bound = certs.released[key].total
    trace = _trace(cfg, grid, noisy, released, lp, lp_fit, certs, key, budget, int(raw.shape[0]))
    return p.finish(
        p.domain.from_unit(U_syn), ledger=ledger, trace=trace, owner=_owner(p, grid, cfg, true, eta, noisy),
        bound=bound, bound_kind=_bound_kind(cfg), bound_type=BoundKind.CERTIFICATE,
        params=_params(cfg, grid, k_rule, scale, p.n, key, noisy, described, raw, support, m_syn, budget),
        notes=_notes(cfg, grid, described, bound, key, certs, noisy, budget, trace.support_size)
        + _one_cell_note(p, grid, bound),
        capped=capped)


# ------------------------------------------------------------------------------------ the steps
def _output_size(p: Prepared[SparseMarginalsConfig], grid: Grid) -> tuple[int, dict | None]:
    """The given ``n_synthetic``, or n capped at the output limits: n is public under replace, so capping the
    default output size at it is post-processing (the record of the cap, or None)."""
    if p.config.n_synthetic is not None:
        return p.config.n_synthetic, None
    return limits.cap_rows(p.n, source="the public n (replace)", d=grid.d)


def _certify(cfg: SparseMarginalsConfig, grid: Grid, noisy: Noisy, draws: NoiseDraws, budget: SolveBudget, released: Fit,
             support: np.ndarray, lp: dict) -> tuple[Fit, Certificates, str]:
    """Eq. (4) on the released points and on Step 3's measure (the LP's fit to the marginals): every
    certificate (:func:`~.certificate.certify`), and the key of the released one (its consistent version when
    the consistency projection is on)."""
    lp_fit = fit(support, lp["alpha"], grid, snap=cfg.snap_public)
    certs = certify(grid, noisy, draws, budget, released, lp_fit, delta=cfg.delta_cert, snap=cfg.snap_public,
                    use_ut=cfg.uses_ut)
    return lp_fit, certs, f"{cfg.certificate}_consistent" if cfg.consistent else cfg.certificate


def _bound_kind(cfg: SparseMarginalsConfig) -> str:
    return (f"certificate (Eq. 4, {cfg.certificate}): high-probability (1-β={1 - cfg.delta_cert:g}, β = "
            "delta_cert, the certificate's failure probability, not a privacy δ) upper "
            f"bound on the utility loss of Eq. (1) for the released points; private")


def _grid(p: Prepared[SparseMarginalsConfig], plan_gen: np.random.Generator) -> tuple[Grid, str]:
    """The grid and the rule that chose k: the given k, or the default (:func:`default_k`, data-independent)
    searched within the size limits and, with U_T, lowered until the certificate's exact-solve plan fits."""
    cfg, d, s = p.config, p.domain.d, p.config.s
    if p.domain.is_mixed:
        return _mixed_grid(p, plan_gen)
    if cfg.k is not None:
        return Grid(d, s, cfg.k), "given"
    K, M = math.comb(d, s), cfg.mc_draws
    lim = limits.current()
    full = int(math.floor(_DEFAULT_MAX_CELLS ** (1.0 / s) + 1e-9))
    cells_cap = min(MAX_CELLS_TOTAL, lim.max_cells // M) // K
    k_cap = max(1, min(full, int(math.floor(cells_cap ** (1.0 / s) + 1e-9))))
    while k_cap > 1 and (k_cap**s > cells_cap or K * (min(cfg.public_size, k_cap**d) + 7 * k_cap**s)
                         > lim.max_lp_nonzeros):
        k_cap -= 1
    k = default_k(p.n, p.epsilon, d, s, k_max=k_cap, k_min=DEFAULT_K_MIN)
    rule = (f"default_k: minimiser of 1/2k + 2 E L_T(0, eta) (Eq. 15 with Eq. 30) over k >= {DEFAULT_K_MIN}, "
            "data-independent")
    if k_cap < full:
        rule += f"; searched up to k = {k_cap} (dpsynth_core.limits max_cells)"
    n_quantiles = (1 + cfg.consistent) if cfg.uses_ut else 0
    if n_quantiles:
        # the largest k <= the default whose estimated plan (from independent planning draws, so the
        # certificate's draws stay unselected) is at most half the limit; a default run never refuses on it
        k0 = k
        k = default_k_within_budget(k0, s, K, M, cfg.delta_cert, n_quantiles, cfg.exact_total, plan_gen,
                                    limits.current().max_transport_solves // 2)
        if k < k0:
            rule += (f"; lowered from k = {k0} so that the certificate's exact transport solves fit "
                     f"dpsynth_core.limits max_transport_solves")
    return Grid(d, s, k), rule


def _mixed_grid(p: Prepared[SparseMarginalsConfig], plan_gen: np.random.Generator) -> tuple[Grid, str]:
    """:func:`_grid` on a mixed domain: the given k, or the default k (:func:`default_k` for (n, ε, d, s), the
    same data-independent rule) searched among the k whose largest block fits max(4096, its categorical part)
    cells and the size limits, and with U_T lowered until the certificate's estimated plan fits."""
    cfg, dom, d, s = p.config, p.domain, p.domain.d, p.config.s

    def grid_of(k: int) -> Grid:
        return Grid(d, s, k, MixedBlocks.of(dom, s, k))

    if cfg.k is not None:
        return grid_of(cfg.k), "given"
    K, M, lim = math.comb(d, s), cfg.mc_draws, limits.current()
    full = int(math.floor(_DEFAULT_MAX_CELLS ** (1.0 / s) + 1e-9))
    cap = max(_DEFAULT_MAX_CELLS, _largest_block(dom, s, 1)[0])
    cells_cap = min(MAX_CELLS_TOTAL, lim.max_cells // M) // K
    cand = math.prod(len(c) for c in dom.categories.values())
    k_cap = full
    while k_cap > 1 and (_largest_block(dom, s, k_cap)[0] > min(cap, cells_cap)
                         or K * (min(cfg.public_size, k_cap**dom.k * cand) + 7 * _largest_block(dom, s, k_cap)[0])
                         > lim.max_lp_nonzeros):
        k_cap -= 1
    k = default_k(p.n, p.epsilon, d, s, k_max=k_cap, k_min=DEFAULT_K_MIN)
    rule = (f"default_k: minimiser of 1/2k + 2 E L_T(0, eta) (Eq. 15 with Eq. 30) over k >= {DEFAULT_K_MIN} for "
            f"(n, ε, d, s), data-independent; "
            f"searched up to k = {k_cap} (largest block within max(4096, its categories) cells and the limits)")
    if cfg.uses_ut:
        def make_geo(kk: int) -> tuple[MixedBlocks, np.ndarray]:
            blocks = MixedBlocks.of(dom, s, kk)
            return blocks, block_scales(1, 1.0, blocks, exact_total=cfg.exact_total)

        k0 = k
        k = default_k_within_budget(k0, s, K, M, cfg.delta_cert, 1 + cfg.consistent, cfg.exact_total, plan_gen,
                                    lim.max_transport_solves // 2, make_geo=make_geo)
        if k < k0:
            rule += (f"; lowered from k = {k0} so that the certificate's exact transport solves fit "
                     f"dpsynth_core.limits max_transport_solves")
    return grid_of(k), rule


def _noisy_marginals(p: Prepared[SparseMarginalsConfig], grid: Grid) -> tuple[np.ndarray, np.ndarray, Any]:
    """Steps 1-2: the true query vector T μ_D (owner-side) and the Haar-transformed Laplace noise η added to
    it (Eq. (7), Lemma 2), both in path order, and the noise's Laplace scale.

    The one read of the private rows: integer marginal counts summed over the rows (in memory once; with
    Dask per partition, merged exactly), divided by the public n here, correctly rounded per cell. On a mixed
    domain the counts are those of every block's cells (:func:`~.mixed.mixed_marginal_counts`) and the scale
    one value per block (:func:`~.mixed.block_scales`)."""
    cfg = p.config
    if grid.mixed:
        true = p.rows.sum(mixed_marginal_counts, grid.blocks) / p.n
        scales = block_scales(p.n, p.epsilon, grid.blocks, exact_total=cfg.exact_total)
        return true, grid.noise(scales, p.rng, exact_total=cfg.exact_total), scales
    true = p.rows.sum(marginal_counts, grid.s, grid.k, "path") / p.n
    scale = noise_scale(p.n, p.epsilon, grid.d, grid.s, grid.k, exact_total=cfg.exact_total)
    eta = haar_block_noise(grid.K, grid.k, grid.s, scale, p.rng, exact_total=cfg.exact_total)
    return true, eta, scale


def _consistent(v_dp: np.ndarray, grid: Grid, cfg: SparseMarginalsConfig) -> Noisy:
    """v_DP and its consistency projection (post-processing): v_cons = c0 + Π(v_DP - c0), c0 the uniform
    tables (v_cons = v_DP without the projection, or when Π is too large to build)."""
    cmap = None
    if cfg.consistent:
        cmap = (mixed_consistency_map(grid.blocks, exact_total=cfg.exact_total) if grid.mixed
                else consistency_map(grid.d, grid.s, grid.k, exact_total=cfg.exact_total))
    v_dp_row = grid.to_row(v_dp)
    c0 = grid.uniform
    v_cons_row = v_dp_row.copy() if cmap is None else c0 + consistent_part(v_dp_row - c0, cmap)
    return Noisy(dp=v_dp, consistent_row=v_cons_row, cmap=cmap, consistent=cfg.consistent)


def _solve_budget(p: Prepared[SparseMarginalsConfig], grid: Grid, draws: NoiseDraws) -> SolveBudget:
    """The certificate's exact-solve budget: hard for an explicit k, whose plan for the U_T quantiles (from the
    cheap bounds on the Monte Carlo draws) is refused before Step 3 and before any exact solve; soft for the
    default grid (chosen to fit; declined solves fall back to proven upper bounds)."""
    cfg = p.config
    budget = SolveBudget(p.owner, k=grid.k, s=grid.s, K=grid.K, mc_draws=cfg.mc_draws, soft=cfg.k is None)
    if cfg.uses_ut and not budget.soft:
        budget.plan(plan_quantiles(draws, grid, cfg.delta_cert))
    return budget


def _step3(p: Prepared[SparseMarginalsConfig], grid: Grid, noisy: Noisy, support: np.ndarray) -> dict:
    """Step 3: the measure on the public support minimising L_T (or U_T) to v_DP (or Π v_DP with
    consistency="both"). Its constraint matrix has about K (N + 7 k^s) non-zeros (public sizes),
    checked against ``limits`` before it is built."""
    cfg, K, N, k, s = p.config, grid.K, support.shape[0], grid.k, grid.s
    nnz = K * (N + 7 * grid.m)
    limits.check_planned(nnz, "max_lp_nonzeros", owner=p.owner, param="public_size", what="Step 3 LP non-zeros",
                         fix="pass a smaller public_size or k",
                         got=f"C({grid.d}, {s}) = {K} blocks x ({N} public points + 7 x {k}^{s} cells) = {nnz}")
    cells = np.empty((K, N), dtype=np.int64)
    for b in range(K):
        cells[b] = grid.cells_of(support, b)
    v_fit = grid.to_path(noisy.consistent_row) if cfg.consistency == "both" else noisy.dp
    if grid.mixed:  # the L_T Step 3 with the path's step lengths (check_domain refuses the U_T one)
        return step3_lp(v_fit, np.take_along_axis(grid.rank, cells, axis=1), k, steps=grid.blocks.steps)
    if cfg.step3 == "L_T":
        return step3_lp(v_fit, grid.rank[cells], k)
    return step3_ut_lp(v_fit[:, grid.rank], cells, k, s)


def _round(alpha: np.ndarray, support: np.ndarray, m_syn: int, grid: Grid,
           p: Prepared[SparseMarginalsConfig]) -> tuple[np.ndarray, Fit]:
    """The released points: the LP's measure rounded to ``m_syn`` points (largest remainder), in random
    order (unit cube), and their empirical measure."""
    counts = largest_remainder(alpha, m_syn)
    keep = counts > 0
    released = fit(support[keep], counts[keep] / m_syn, grid, snap=p.config.snap_public)
    U_syn = np.repeat(support, counts, axis=0)
    return U_syn[p.rng.permutation(U_syn.shape[0])], released


def _trace(cfg: SparseMarginalsConfig, grid: Grid, noisy: Noisy, released: Fit, lp: dict, lp_fit: Fit,
           certs: Certificates, key: str, budget: SolveBudget, candidates: int) -> SparseMarginalsTrace:
    """The typed trace: the marginals in row-major cell order, every certificate, the LP's measure."""
    return SparseMarginalsTrace(
        s=grid.s, k=grid.k, delta_cert=cfg.delta_cert, subsets=[list(S) for S in grid.subsets],
        snake_order=np.asarray(grid.order), noisy_marginals=grid.to_row(noisy.dp),
        consistent_marginals=noisy.consistent_row, projected_marginals=grid.to_row(released.t_mu),
        lp_marginals=grid.to_row(lp_fit.t_mu), certificate=certs.released, certificate_key=key,
        certificate_lp_measure=certs.lp_measure, mc_samples=certs.mc_samples,
        lp={name: value for name, value in lp.items() if name != "alpha"}, support=lp_fit.points,
        weights=lp_fit.weights, section_5_3=section_5_3(certs), transport_solves=budget.used, candidates=candidates)


def _owner(p: Prepared[SparseMarginalsConfig], grid: Grid, cfg: SparseMarginalsConfig, true: np.ndarray,
           eta: np.ndarray, noisy: Noisy) -> SparseMarginalsOwner:
    """The owner view: the true marginals and the realised proxy losses of the noise actually added (no
    solve budget: owner-side diagnostics are never refused)."""
    eta_row = grid.to_row(eta)
    pi_eta = consistent_part(eta_row, noisy.cmap) if cfg.consistent else None
    return SparseMarginalsOwner(
        n=p.n, n_clamped=p.n_clamped, true_marginals=grid.to_row(true), noise_lt=float(lt_of(grid, eta)),
        noise_ut=block_max(grid, eta_row) if cfg.uses_ut else None,
        noise_lt_consistent=None if pi_eta is None else float(lt_of(grid, grid.to_path(pi_eta))),
        noise_ut_consistent=block_max(grid, pi_eta) if pi_eta is not None and cfg.uses_ut else None)


def _params(cfg: SparseMarginalsConfig, grid: Grid, k_rule: str, scale: float, n: int, key: str, noisy: Noisy,
            described: str, raw: np.ndarray, support: np.ndarray, m_syn: int, budget: SolveBudget) -> dict:
    """The public record of the release (exported; the golden pins hash it)."""
    params = {
        "s": grid.s, "k": grid.k, "k_rule": k_rule, "K": grid.K, "cells_per_block": grid.m,
        "haar_levels": levels_for(grid.m), "delta_cert": cfg.delta_cert, "mc_draws": cfg.mc_draws,
        "noise_scale": scale, "sensitivity": 2.0 * grid.K / n, "certificate": cfg.certificate,
        "certificate_key": key, "step3": cfg.step3, "noise": cfg.noise, "consistency": cfg.consistency,
        "consistency_projection": ("none" if not cfg.consistent else "identity (too large)" if noisy.cmap is None
                                   else noisy.cmap["kind"]), "public": described, "public_size": int(raw.shape[0]),
        "support_size": int(support.shape[0]), "snap_public": cfg.snap_public, "n_synthetic": m_syn,
        "subsets": [list(S) for S in grid.subsets], "path": "snake", "tie_break": TIE_BREAK,
    }
    if budget.declined:  # the default grid's certificate met the solve limit: proven upper bounds took over
        params["certificate_upper_bounds"] = budget.declined
    if grid.mixed:
        blocks = grid.blocks
        params.update({
            "cells_per_block": blocks.cells.tolist(), "haar_levels": [levels_for(int(m)) for m in blocks.cells],
            "noise_scale": float(np.max(scale)), "noise_scales": np.asarray(scale).tolist(),
            "block_shapes": [list(g.shape) for g in blocks.geos], "path": "snake, categorical axes outermost",
            "categorical": "one cell per declared category (not discretised); numeric columns k cells each",
            "certificate_large_blocks": budget.bounded})
    return params


def _ledger_entry(grid: Grid, scale: Any, cfg: SparseMarginalsConfig) -> str:
    """The ledger's one line: the noisy marginals and their Laplace scale(s)."""
    total = ", exact totals" if cfg.exact_total else ""
    if not grid.mixed:
        return f"noisy {grid.s}-marginals: Haar-transformed Laplace, scale {scale:.4g} (Lemma 2{total})"
    lo, hi = float(np.min(scale)), float(np.max(scale))
    return (f"noisy {grid.s}-marginals over numeric and categorical columns: Haar-transformed Laplace per block, "
            f"scale {lo:.4g}" + (f" to {hi:.4g}" if hi > lo else "") + f" (Lemma 2, Appendix C.2{total})")


def _categorical_mask(grid: Grid) -> np.ndarray | None:
    """The categorical columns of a mixed grid (None on the cube)."""
    return np.asarray(grid.blocks.weights) > 0 if grid.mixed else None


def rows_for_two_cells(n: int, epsilon: float, d: int, s: int) -> int | None:
    """The smallest public size n' >= n (within a factor 2^30) at which :func:`~.query.default_k` picks at
    least 2 cells per axis at this ε, d and s; None if none is. Data-independent (public inputs only)."""
    if default_k(n, epsilon, d, s) >= 2:
        return n
    lo, hi = n, None
    for j in range(1, 31):
        if default_k(n * 2**j, epsilon, d, s) >= 2:
            lo, hi = n * 2 ** (j - 1), n * 2**j
            break
    if hi is None:
        return None
    while hi - lo > 1:  # bisection: default_k grows with n (its noise term falls as 1/n)
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if default_k(mid, epsilon, d, s) >= 2 else (mid, hi)
    return hi


def _one_cell_note(p: Prepared[SparseMarginalsConfig], grid: Grid, bound: float) -> list[str]:
    """When the paper's expected-loss bound alone would pick one cell per axis, say why the default did not and
    from how many rows the bound itself prefers 2 cells."""
    if grid.mixed or p.config.k is not None or default_k(p.n, p.epsilon, grid.d, grid.s) >= 2:
        return []
    need = rows_for_two_cells(p.n, p.epsilon, grid.d, grid.s)
    more = (f" From about {need:,} rows at this ε (or a larger ε) the bound itself prefers 2 cells or more."
            if need is not None else "")
    return [f"With {p.n:,} rows at ε = {p.epsilon:g} the paper's expected-loss bound (Eq. 15) is smallest at one cell "
            f"per axis, where every released point is the centre of the box; the default keeps k = {grid.k} so that "
            f"the release keeps the columns' shape, at the price of a larger certificate ({bound:.3g}).{more} For the "
            "best release of these columns use the marginals mechanism (docs/marginals.md)."]


def _notes(cfg: SparseMarginalsConfig, grid: Grid, described: str, bound: float, key: str, certs: Certificates,
           noisy: Noisy, budget: SolveBudget, support: int) -> list[str]:
    """The plain-language caveats of the release (``support``: the distinct candidates Step 3 fitted)."""
    cert = cfg.certificate
    notes = [
        f"Public candidates: {described}" + (f"; moved to their cell centres in T_k,d (Section 5.1), they fall on "
                                             f"{support} distinct points, which Step 3 fitted." if cfg.snap_public
                                             else f"; Step 3 fitted {support} distinct points."),
        f"bound = certificate (Eq. 4, proxy {cert}): with probability >= {1 - cfg.delta_cert:g} over the noise the "
        f"utility loss (largest W1 over all {grid.s}-marginals, l_inf, unit cube) of the released points is at most "
        f"{bound:.4g}. The (1-β)-quantile (β = delta_cert = {cfg.delta_cert:g}, the paper's δ; the release itself "
        f"is pure ε-DP) is the ⌈(1-β)(M+1)⌉-th smallest of M = {cfg.mc_draws} fresh noise draws (exceeded with "
        "probability at most β).",
        ("Consistent certificate (trace key " + key + "): Eq. (4) with the proxy composed with the consistency "
         f"projection Π ({'identity: too many constraints' if noisy.cmap is None else noisy.cmap['kind']}); the "
         f"paper's Eq. (4) as printed is under key {cert} ({certs.released[cert].total:.4g})."
         + (" Step 3 fitted Π v_DP." if cfg.consistency == "both" else "")) if cfg.consistent
        else "Certificate: the paper's Eq. (4) as printed (consistency='none').",
        "Only replace neighbours: the marginal histograms are normalised by the public size n.",
    ]
    if budget.declined:
        notes.append(f"The certificate reached dpsynth_core.limits max_transport_solves ({budget.limit}): "
                     f"{budget.declined} exact transport solve(s) were replaced by their proven upper bounds, so "
                     f"the bound is valid but looser than the exact computation.")
    if grid.mixed:
        notes.append("Categorical columns: a marginal over a categorical column has one cell per declared category "
                     "(nothing is discretised on that axis); the public candidates carry categories drawn from the "
                     "declared lists; the bound is on the largest W1 over the marginals under the mixed metric "
                     "(l_inf on the numeric unit coordinates, w_j between two different categories, combined by max; "
                     "docs/mixed-data.md).")
        if budget.bounded:
            notes.append(f"{budget.bounded} U_T value(s) of marginal tables over more than {DENSE_MIXED_MAX} cells "
                         "with a categorical axis were replaced by their proven upper bounds (valid, looser).")
    return notes
