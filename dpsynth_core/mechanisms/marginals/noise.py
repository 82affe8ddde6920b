"""Noise and accounting: how much noise each table gets, and the ledger that adds up to (ε, δ).

Two families, chosen from public inputs only (docs/marginals.md, "Noise"):

* **laplace** (pure ε-DP): discrete Laplace noise on every count (:func:`dpsynth_core.noise.discrete_laplace`),
  basic composition. One record moves one cell of each of the T_g tables of a group by 1 under
  add/remove (two cells under replace), so the group's counts have l1 sensitivity T_g (2 T_g) and the
  scale b_g = T_g Δ / ε_g gives ε_g-DP [DR14, Theorem 3.6; HVZ23, Appendix B for the discrete law];
* **gaussian** ((ε, δ)-DP): Gaussian noise of variance σ_g² on every count. A group of T_g tables has
  squared l2 sensitivity T_g (2 T_g under replace) and is ρ_g = T_g Δ₂²/(2σ_g²)-zCDP; the two groups
  compose to ρ = ρ_1 + ρ_2, and a composition of Gaussian mechanisms of total ρ is exactly √(2ρ)-GDP
  [DRS22, Corollary 3.3], so the largest ρ for (ε, δ) is :func:`dpsynth_core.privacy.gaussian_rho`
  (exact, no slack from a general zCDP conversion).

The 1-way group gets the share ``split`` of the budget (of ε, or of ρ), the 2-way group the rest.
A noisy size, when one is bought before the tables (:func:`dpsynth_core.privacy.resolve_size`), is pure
ε_size-DP and composes with the tables by basic composition: the tables then spend ε - ε_size.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ...noise import discrete_laplace
from ...privacy import Ledger, count_sensitivity, gaussian_rho

__all__ = ["FAMILIES", "VARIANCE_FLOOR", "NoisePlan", "plan_noise", "discrete_laplace_variance", "size_from_totals"]

#: The noise families (``noise=...``; "auto" is the rule of :func:`dpsynth_core.defaults.marginals_noise`).
FAMILIES: tuple[str, ...] = ("laplace", "gaussian")
#: Smallest variance of a count the fit's weights and the rules use. At ε -> ∞ the discrete Laplace noise
#: vanishes (variance 2e^{-1/b} underflows to 0); a count is then exact, and the floor keeps the weights
#: 1/v finite. It changes no noise: the draws use the true scales.
VARIANCE_FLOOR = 1e-2


def discrete_laplace_variance(scale: float) -> float:
    """Variance of the discrete Laplace law of scale b: 2p/(1-p)² with p = e^{-1/b}."""
    p = math.exp(-1.0 / scale)
    return 2.0 * p / (1.0 - p) ** 2


@dataclass(frozen=True)
class NoisePlan:
    """The noise of the two groups of tables and what it costs.

    ``scales`` are (1-way, 2-way): the discrete Laplace scale b or the Gaussian σ of one count;
    ``variances`` the noise variance of one count (at least :data:`VARIANCE_FLOOR`); ``epsilons``/``deltas`` each group's share of the
    tables' (ε, δ) (exact shares of the composed total for the Gaussian family); ``rho`` the zCDP total
    (Gaussian family) and ``rhos`` its shares.
    """

    family: str
    scales: tuple[float, float]
    variances: tuple[float, float]
    epsilons: tuple[float, float]
    deltas: tuple[float, float]
    sensitivity: int
    rho: float | None = None
    rhos: tuple[float, float] | None = None

    def draw(self, group: int, shape: tuple[int, ...] | int, rng: np.random.Generator) -> np.ndarray:
        """Noise for the counts of one table of ``group`` (0: 1-way, 1: 2-way), as floats."""
        scale = self.scales[group]
        if self.family == "laplace":
            return discrete_laplace(scale, shape, rng).astype(float)
        return rng.normal(0.0, scale, shape)

    def ledger_entries(self, ledger: Ledger, d: int, pairs: int, fine: str, coarse: str) -> None:
        """One entry per group of tables; for the Gaussian family the note on the exact composition."""
        what = ("discrete Laplace, scale" if self.family == "laplace" else "Gaussian, σ")
        names = (f"{d} one-way tables ({fine})", f"{pairs} two-way tables ({coarse})")
        for g in (0, 1):
            if self.epsilons[g] > 0:
                extra = f", ρ = {self.rhos[g]:.4g}" if self.rhos is not None else ""
                ledger.add(f"{names[g]}: {what} {self.scales[g]:.4g} per count{extra}", self.epsilons[g], self.deltas[g])
        if self.family == "gaussian":
            eps, dlt = sum(self.epsilons), sum(self.deltas)
            ledger.note = (f"Exact composition: the Gaussian tables are together ρ = {self.rho:.4g}-zCDP, i.e. "
                           f"μ-GDP with μ = √(2ρ) = {math.sqrt(2 * self.rho):.4g} ([DRS22, Corollary 3.3]), which "
                           f"implies ({eps:.4g}, {dlt:.3g})-DP exactly. The two entries are the shares ρ_g/ρ of that "
                           "total, not separate guarantees.")


def plan_noise(family: str, epsilon: float, delta: float, neighbours: str, d: int, pairs: int,
               split: float) -> NoisePlan:
    """The noise for ``d`` 1-way and ``pairs`` 2-way tables spending (ε, δ) under ``neighbours``, the share
    ``split`` to the 1-way tables (all of it when there is no pair)."""
    share = 1.0 if pairs == 0 else float(split)
    groups = (d, pairs)
    sens = count_sensitivity(neighbours)  # one record moves 1 (add/remove) or 2 (replace) counts a table
    if family == "laplace":
        eps = (share * epsilon, epsilon - share * epsilon)
        scales = tuple(t * sens / e if t else math.inf for t, e in zip(groups, eps, strict=True))
        variances = tuple(max(discrete_laplace_variance(b), VARIANCE_FLOOR) if math.isfinite(b) else math.inf
                          for b in scales)
        return NoisePlan("laplace", scales, variances, eps, (0.0, 0.0), sens)
    rho = gaussian_rho(epsilon, delta)
    rhos = (share * rho, rho - share * rho)
    # squared l2 sensitivity of one table: 1 under add/remove, 2 under replace (two cells move by 1)
    sigmas = tuple(math.sqrt(t * sens / (2.0 * r)) if t else math.inf for t, r in zip(groups, rhos, strict=True))
    return NoisePlan("gaussian", sigmas, tuple(max(s * s, VARIANCE_FLOOR) for s in sigmas),
                     (share * epsilon, epsilon - share * epsilon), (share * delta, delta - share * delta), sens,
                     rho=rho, rhos=rhos)


def size_from_totals(totals: list[tuple[float, float]]) -> tuple[float, float]:
    """The inverse-variance weighted mean of independent unbiased estimates (value, variance) of n, and
    its variance: the size read off the tables' noisy totals (post-processing)."""
    weights = [1.0 / v for _, v in totals if v > 0 and math.isfinite(v)]
    values = [t for t, v in totals if v > 0 and math.isfinite(v)]
    if not weights:
        raise ValueError("size_from_totals: no estimate with a finite positive variance")
    w = math.fsum(weights)
    return math.fsum(x * q for x, q in zip(values, weights, strict=True)) / w, 1.0 / w
