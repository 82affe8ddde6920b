"""Privacy model: neighbouring relations, the budget ledger, sensitivities, Gaussian-DP accounting.

Neighbouring relations (docs/privacy-model.md §2)
-------------------------------------------------
``"add_remove"``: datasets differ by adding or removing one record (n is private).
``"replace"``: datasets of the same public size n differ in one record.

Counts of a partition level move by 1 in one cell under add/remove and by 1 in two cells under
replace ([HVZ23, proof of Theorem 9] for add/remove; docs/privacy-model.md §2), so the l1 sensitivity of a count vector is 1 or 2.

Gaussian differential privacy [DRS22]
-------------------------------------
A Gaussian mechanism with l2 sensitivity Δ and noise σ is μ-GDP with μ = Δ/σ; T of them compose
to μ = √T · Δ/σ exactly. μ-GDP implies (ε, δ(ε))-DP for every ε ≥ 0 with

.. math:: \\delta(\\varepsilon) = \\Phi(-\\varepsilon/\\mu + \\mu/2) - e^{\\varepsilon}\\Phi(-\\varepsilon/\\mu - \\mu/2).

The second term is evaluated in log space (``scipy.special.log_ndtr``): the plain formula is
``inf · 0 = nan`` at large ε.

Zero-concentrated DP [BS16]
---------------------------
A mechanism is ρ-zCDP when the Rényi divergence of order α between its outputs on neighbouring
datasets is at most ρα for every α > 1; ρ adds up under composition. A Gaussian mechanism with l2
sensitivity Δ and noise σ is ρ = Δ²/(2σ²)-zCDP, and a composition of Gaussian mechanisms of total
ρ = Σ_t Δ_t²/(2σ_t²) is *exactly* μ-GDP with μ = √(2ρ) [DRS22, Corollary 3.3], so for Gaussian noise the
conversion to (ε, δ) is exact: :func:`gaussian_rho` and :func:`rho_delta`. For any other ρ-zCDP
mechanism (the discrete Gaussian of [CKS20], for instance) :func:`zcdp_delta` is the general,
conservative conversion [CKS20, Corollary 13].
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from . import limits
from .noise import discrete_laplace
from .validation import check_choice, check_float, check_int, param_error

__all__ = [
    "NEIGHBOURS",
    "SIZE_SHARE",
    "MAX_SIZE",
    "EPSILON_MIN",
    "EPSILON_MAX",
    "WEAK_EPSILON",
    "weak_epsilon_note",
    "check_epsilon",
    "LedgerEntry",
    "Ledger",
    "AccountingError",
    "check_neighbours",
    "count_sensitivity",
    "gaussian_delta",
    "gaussian_mu",
    "gaussian_sigma",
    "gaussian_epsilon",
    "gaussian_rho",
    "rho_delta",
    "zcdp_delta",
    "resolve_size",
    "check_n_public",
    "SizeEstimate",
]

NEIGHBOURS: tuple[str, ...] = ("add_remove", "replace")

#: Share of ε a mechanism spends on a noisy dataset size when a parameter depends on n, the
#: relation is add/remove and the caller did not declare ``n_public``.
SIZE_SHARE = 0.05

#: The shipped largest dataset size (``dpsynth_core.limits`` ``max_size``): the clamp of a noisy size
#: and the top of every mechanism's ``n_public`` range. The value in force is
#: ``dpsynth_core.limits.current().max_size`` (one ceiling, configurable; docs/privacy-model.md).
MAX_SIZE = 10_000_000

#: Range of ε every mechanism accepts. Below 1e-6 the noise scales leave 64-bit integer range at
#: deep partitions and every count is pure noise; above 1e6 nothing is private and the
#: data-size-driven grids and depths exhaust memory.
EPSILON_MIN, EPSILON_MAX = 1e-6, 1e6


def check_neighbours(neighbours: Any, owner: str, supported: tuple[str, ...] = NEIGHBOURS) -> str:
    """Validate a neighbouring relation against those the mechanism supports."""
    value = check_choice(neighbours, "neighbours", owner, NEIGHBOURS)
    if value not in supported:
        raise param_error(owner, "neighbours", "one of " + ", ".join(repr(s) for s in supported)
                          + f" (this mechanism does not support {value!r})", value)
    return value


#: Above this ε a release gives no meaningful protection (docs/privacy-model.md, section 6, has the
#: argument): the library's release notes, the command line and the dashboard say so.
WEAK_EPSILON = 10.0


def weak_epsilon_note(epsilon: float) -> str | None:
    """The warning every front end shows for an ε above :data:`WEAK_EPSILON` (None at or below it): a
    function of the public ε only, so it may go into a release's public notes."""
    eps = float(epsilon)
    if not eps > WEAK_EPSILON:
        return None
    factor = f"e^{eps:g} ≈ {math.exp(eps):.3g}" if eps < 700 else f"e^{eps:g}, more than 10^300"
    return (f"ε = {eps:g} gives no meaningful protection: above ε = {WEAK_EPSILON:g} the guarantee lets what the "
            f"release reveals multiply an attacker's odds about any one person by up to {factor}, enough to turn "
            f"a 1-in-100 guess into near certainty (docs/privacy-model.md, section 6). Choose ε of at most "
            f"{WEAK_EPSILON:g} for a private release.")


def check_epsilon(epsilon: Any, owner: str) -> float:
    """A mechanism's ε: a float in [1e-6, 1e6] (:data:`EPSILON_MIN`, :data:`EPSILON_MAX`)."""
    return check_float(epsilon, "epsilon", owner, low=EPSILON_MIN, high=EPSILON_MAX)


def check_n_public(n_public: Any, owner: str) -> int:
    """A declared public dataset size: an int in [1, ``limits.current().max_size``]."""
    ceiling = limits.current().max_size
    value = check_int(n_public, "n_public", owner, low=1)
    if value > ceiling:
        raise param_error(owner, "n_public", f"an int in [1, {ceiling}] (dpsynth_core.limits max_size; raise it "
                          f"with dpsynth_core.limits.override(max_size=...))", n_public)
    return value


def count_sensitivity(neighbours: str) -> int:
    """l1 sensitivity of one level of partition counts: 1 (add/remove), 2 (replace)."""
    return 1 if check_neighbours(neighbours, "count_sensitivity") == "add_remove" else 2


# ---------------------------------------------------------------------------------------- ledger
class AccountingError(RuntimeError):
    """A release whose ledger does not add up to the (ε, δ) it states: a bug in a mechanism, never a
    user error. Raised instead of returning a release whose privacy claim is not backed by its steps."""


@dataclass(frozen=True)
class LedgerEntry:
    """One privacy-consuming step: (step, ε, δ)."""

    step: str
    epsilon: float
    delta: float = 0.0

    def to_dict(self) -> dict:
        return {"step": self.step, "epsilon": self.epsilon, "delta": self.delta}


@dataclass
class Ledger:
    """Basic-composition ledger of (step, ε, δ) entries.

    The release's (ε, δ) is the sum of the entries, except when a step records an exact composition
    already (Private Evolution's μ-GDP composition appears as per-iteration entries whose ε, δ are
    the iteration's share of the exactly composed total; see ``note``).
    """

    entries: list[LedgerEntry] = field(default_factory=list)
    note: str = ""

    def add(self, step: str, epsilon: float, delta: float = 0.0) -> Ledger:
        eps = check_float(epsilon, "epsilon", "Ledger.add", low=0.0)
        dlt = check_float(delta, "delta", "Ledger.add", low=0.0, high=1.0)
        self.entries.append(LedgerEntry(str(step), eps, dlt))
        return self

    @property
    def epsilon(self) -> float:
        return float(math.fsum(e.epsilon for e in self.entries))

    @property
    def delta(self) -> float:
        return float(math.fsum(e.delta for e in self.entries))

    def to_list(self) -> list[dict]:
        return [e.to_dict() for e in self.entries]

    def to_frame(self):
        return pd.DataFrame(self.to_list(), columns=["step", "epsilon", "delta"])

    def __len__(self) -> int:
        return len(self.entries)


# ------------------------------------------------------------------------------ Gaussian DP
def gaussian_delta(epsilon: float, mu: float) -> float:
    """δ(ε) of μ-GDP [DRS22, Corollary 2.13], stable for large ε.

    .. math:: \\delta = \\Phi(-\\varepsilon/\\mu + \\mu/2) - e^{\\varepsilon}\\Phi(-\\varepsilon/\\mu - \\mu/2)

    References
    ----------
    .. [DRS22] J. Dong, A. Roth, W. J. Su. Gaussian Differential Privacy. JRSS B 84(1), 2022.
       See docs/references.md.
    """
    eps = check_float(epsilon, "epsilon", "gaussian_delta", low=0.0)
    m = check_float(mu, "mu", "gaussian_delta", low=0.0, low_open=True)
    from scipy import special  # imported on use: most mechanisms never need it

    a = special.log_ndtr(-eps / m + m / 2.0)
    b = eps + special.log_ndtr(-eps / m - m / 2.0)
    if b >= a:  # only by rounding; δ is non-negative
        return 0.0
    # δ = e^a (1 - e^{b-a})
    return float(math.exp(a) * -math.expm1(b - a))


def gaussian_mu(epsilon: float, delta: float) -> float:
    """The largest μ such that μ-GDP implies (ε, δ)-DP (δ(ε) is increasing in μ)."""
    eps = check_float(epsilon, "epsilon", "gaussian_mu", low=0.0, low_open=True)
    dlt = check_float(delta, "delta", "gaussian_mu", low=0.0, high=1.0, low_open=True, high_open=True)
    return _gaussian_mu(eps, dlt)


@functools.lru_cache(maxsize=256)
def _gaussian_mu(eps: float, dlt: float) -> float:
    """:func:`gaussian_mu` of checked floats, remembered: a pure function of (ε, δ) whose root search (about
    40 evaluations of δ(ε)) every Gaussian release repeats, thousands of times in an audit."""

    def f(log_mu: float) -> float:
        return math.log(max(gaussian_delta(eps, math.exp(log_mu)), 1e-320)) - math.log(dlt)

    lo, hi = -20.0, 5.0
    while f(hi) < 0:
        hi += 5.0
        if hi > 60:  # pragma: no cover - δ close to 1
            raise ValueError(f"The 'epsilon' parameter of gaussian_mu must be at most about 1e26 for "
                             f"delta={dlt:g}. Got {eps:g}.")
    while f(lo) > 0:
        lo -= 20.0
    from scipy import optimize

    return float(math.exp(optimize.brentq(f, lo, hi, xtol=1e-14, rtol=1e-13)))


def gaussian_sigma(epsilon: float, delta: float, sensitivity: float = 1.0, compositions: int = 1) -> float:
    """Noise σ for ``compositions`` Gaussian mechanisms of l2 ``sensitivity`` to be (ε, δ)-DP in total.

    Exact μ-GDP composition: μ = √T Δ / σ, so σ = √T Δ / μ(ε, δ).
    """
    owner = "gaussian_sigma"
    check_float(epsilon, "epsilon", owner, low=0.0, low_open=True)
    check_float(delta, "delta", owner, low=0.0, high=1.0, low_open=True, high_open=True)
    sens = check_float(sensitivity, "sensitivity", owner, low=0.0, low_open=True)
    t = check_int(compositions, "compositions", owner, low=1)
    return math.sqrt(t) * sens / gaussian_mu(epsilon, delta)


def gaussian_epsilon(sigma: float, delta: float, sensitivity: float = 1.0, compositions: int = 1) -> float:
    """Inverse of :func:`gaussian_sigma`: the ε at which T compositions of N(0, σ²) with l2
    sensitivity Δ are (ε, δ)-DP (μ = √T Δ/σ)."""
    owner = "gaussian_epsilon"
    s = check_float(sigma, "sigma", owner, low=0.0, low_open=True)
    dlt = check_float(delta, "delta", owner, low=0.0, high=1.0, low_open=True, high_open=True)
    sens = check_float(sensitivity, "sensitivity", owner, low=0.0, low_open=True)
    t = check_int(compositions, "compositions", owner, low=1)
    mu = math.sqrt(t) * sens / s
    if gaussian_delta(0.0, mu) <= dlt:
        return 0.0
    hi = 1.0
    while gaussian_delta(hi, mu) > dlt:
        hi *= 2.0
    from scipy import optimize

    return float(optimize.brentq(lambda e: gaussian_delta(e, mu) - dlt, 0.0, hi, xtol=1e-13, rtol=1e-13))


# -------------------------------------------------------------------------------------- zCDP
def gaussian_rho(epsilon: float, delta: float) -> float:
    """The largest total ρ = Σ_t Δ_t²/(2σ_t²) at which a composition of Gaussian mechanisms is (ε, δ)-DP.

    Exact: such a composition is μ-GDP with μ = √(2ρ) [DRS22, Corollary 3.3] (also when each mechanism is
    chosen after seeing the previous outputs), so ρ = μ(ε, δ)²/2 with μ from :func:`gaussian_mu`.

    References
    ----------
    .. [BS16] M. Bun, T. Steinke. Concentrated Differential Privacy: Simplifications, Extensions, and
       Lower Bounds. TCC 2016. .. [DRS22] See docs/references.md.
    """
    return _gaussian_rho(check_float(epsilon, "epsilon", "gaussian_rho", low=0.0, low_open=True),
                         check_float(delta, "delta", "gaussian_rho", low=0.0, high=1.0, low_open=True, high_open=True))


@functools.lru_cache(maxsize=256)
def _gaussian_rho(epsilon: float, delta: float) -> float:
    mu = gaussian_mu(epsilon, delta)  # a root search: mechanisms plan their noise several times per release
    return 0.5 * mu * mu


def rho_delta(rho: float, epsilon: float) -> float:
    """δ(ε) of a composition of Gaussian mechanisms of total ρ: exactly :func:`gaussian_delta` at μ = √(2ρ)."""
    r = check_float(rho, "rho", "rho_delta", low=0.0, low_open=True)
    return gaussian_delta(epsilon, math.sqrt(2.0 * r))


def zcdp_delta(rho: float, epsilon: float) -> float:
    """δ(ε) implied by ρ-zCDP for ANY mechanism [CKS20, Corollary 13] (conservative):

    .. math:: \\delta = \\inf_{\\alpha > 1} \\frac{\\exp\\big((\\alpha-1)(\\alpha\\rho - \\varepsilon)\\big)}{\\alpha - 1}
              \\Big(1 - \\frac1\\alpha\\Big)^{\\alpha},

    minimised over the Rényi order α in log space (bounded scalar search over log(α - 1), the objective
    being smooth and unimodal there). For Gaussian noise :func:`rho_delta` is exact and smaller; this one
    is what a mechanism whose noise is only known to be ρ-zCDP (the discrete Gaussian) could claim.
    """
    owner = "zcdp_delta"
    r = check_float(rho, "rho", owner, low=0.0, low_open=True)
    eps = check_float(epsilon, "epsilon", owner, low=0.0)
    from scipy import optimize

    def log_delta(t: float) -> float:  # t = log(α - 1)
        a = 1.0 + math.exp(t)
        return (a - 1.0) * (a * r - eps) - t + a * math.log1p(-1.0 / a)

    res = optimize.minimize_scalar(log_delta, bounds=(-30.0, 30.0), method="bounded",
                                   options={"xatol": 1e-10})
    return float(min(1.0, math.exp(min(res.fun, 0.0))))


# -------------------------------------------------------------------------------- noisy size
@dataclass(frozen=True)
class SizeEstimate:
    """A dataset size a mechanism may use publicly, and what it cost."""

    n: int  # the value parameters may depend on (public, noisy, or exact under replace)
    source: str  # "n_public", "replace" (n is public under replace), "noisy"
    epsilon_spent: float

    def to_dict(self) -> dict:
        return {"n": self.n, "source": self.source, "epsilon_spent": self.epsilon_spent}


def resolve_size(
    n_true: int,
    *,
    epsilon: float,
    neighbours: str,
    n_public: int | None,
    rng: np.random.Generator,
    owner: str,
    share: float = SIZE_SHARE,
) -> SizeEstimate:
    """The dataset size a mechanism may base parameters (depth, grid, cells) on.

    * ``n_public`` declared by the caller: used as is, no cost.
    * ``"replace"``: n is public under this relation, no cost.
    * ``"add_remove"`` without ``n_public``: ``n + Lap_Z(1/(share·ε))`` clamped into
      ``[1, limits.current().max_size]`` (counting query of sensitivity 1; the clamp is
      post-processing), which spends ``share · ε``; the mechanism must record that on its ledger.

    ``n_public`` must lie in ``[1, limits.current().max_size]`` (:func:`check_n_public`).
    """
    if n_public is not None:
        return SizeEstimate(check_n_public(n_public, owner), "n_public", 0.0)
    if neighbours == "replace":
        return SizeEstimate(int(n_true), "replace", 0.0)
    eps_size = share * epsilon
    noisy = int(n_true) + int(discrete_laplace(1.0 / eps_size, None, rng))
    # Clamping into [1, max_size] is post-processing of the noisy count (no privacy cost). The output
    # size that follows from it is capped separately at limits.max_synthetic_rows by each mechanism.
    return SizeEstimate(min(max(1, noisy), limits.current().max_size), "noisy", eps_size)
