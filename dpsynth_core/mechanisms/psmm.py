"""Private Signed Measure Mechanism (PSMM): He, Vershynin, Zhu [HVZ23, Algorithms 1–2].

The unit cube is cut into the regular :math:`k^d` grid (:mod:`dpsynth_core.grid`); each cell count
receives discrete Laplace noise, giving a signed measure on the cell centres, which is projected
onto the probability measures in the bounded-Lipschitz distance (Algorithm 2, Proposition 6) and
rounded to synthetic points.

The paper's LP has :math:`2m^2` variables; on a grid with the l_inf metric the same optimum is a
sparse min-cost flow on the king's-move graph with O(m 3^d) arcs
(:func:`dpsynth_core.transport.bl_projection`, ``method="sparse"``; docs/transport.md, "Bounded-Lipschitz projection").
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import limits
from ..domain import Domain
from ..grid import default_cells_per_axis, grid_counts, largest_remainder, points_in_cells
from ..noise import discrete_laplace
from ..privacy import Ledger, count_sensitivity, resolve_size
from ..theory import Theory, psmm_theorem7
from ..transport import bl_projection
from ..validation import param_error
from .contract import Config, Prepared, mechanism, n_public_param, n_synthetic_param, param
from .release import OwnerView, Release, Trace

__all__ = ["psmm", "PSMMConfig", "PSMMTrace", "PSMMOwner", "PROJECTIONS", "MAX_BL_CELLS", "MAX_CELLS",
           "DEFAULT_CELL_CAP", "project"]

OWNER = "psmm"
#: The sparse grid LP of the exact projection handles grids of at most 6 axes.
PSMM_MAX_DIM = 6
PROJECTIONS = ("bl", "clip")
#: Largest grid the exact BL projection accepts (256 x 256, 40^3: seconds to a minute).
MAX_BL_CELLS = 2**16
#: Largest grid with the clip projection.
MAX_CELLS = 2**22
#: The default grid (k^d ≈ εn) is capped at this many cells so that the projection stays interactive.
DEFAULT_CELL_CAP = 2**15


def project(nu: np.ndarray, k: int, d: int, method: str = "bl") -> tuple[np.ndarray, dict]:
    """Probability vector from the noisy signed measure ``nu`` (row-major on the ``k^d`` grid).

    * ``"bl"``: :math:`\\hat\\tau = \\arg\\min_\\tau d_{BL}(\\nu, \\tau)` exactly (Algorithm 2 through the
      sparse grid LP of :func:`dpsynth_core.transport.bl_projection`).
    * ``"clip"``: :math:`\\tau = \\nu_+ / \\sum \\nu_+` (uniform if every cell is <= 0).

    Returns (tau, summary) where the summary describes the transport between ν and τ: the BL
    value (``"bl"`` only), the mass removed from and added to cells, the negative mass of ν.
    """
    nu = np.asarray(nu, dtype=float)
    summary = {
        "nu_total": float(nu.sum()),
        "negative_cells": int((nu < 0).sum()),
        "negative_mass": float(-nu[nu < 0].sum()),
    }
    if method == "bl":
        res = bl_projection(nu, grid_shape=(k,) * d, method="sparse")
        tau = np.asarray(res.tau, dtype=float)
        summary.update({"bl_value": float(res.value), "solver_seconds": float(res.seconds),
                        "solver": dict(res.details)})
    else:
        pos = np.maximum(nu, 0.0)
        tot = pos.sum()
        tau = pos / tot if tot > 0 else np.full(nu.size, 1.0 / nu.size)
        summary["bl_value"] = None
    diff = nu - tau
    summary["mass_removed"] = float(diff[diff > 0].sum())  # ν above τ: moved out or sent to ground
    summary["mass_added"] = float(-diff[diff < 0].sum())
    summary["cells_changed"] = int((np.abs(diff) > 1e-12).sum())
    return tau, summary


@dataclass(frozen=True)
class PSMMConfig(Config):
    """PSMM's parameters."""

    cells: int | None = param(
        "int", None, "Cells per axis k of the regular grid (k^d cells). Default: k^d ≈ εn (Corollary 8), from the "
        f"public or noisy n, capped at {DEFAULT_CELL_CAP} cells.", low=1, high=4096)
    projection: str = param(
        "choice", "bl", "'bl' = exact bounded-Lipschitz projection onto probability measures (Algorithm 2, solved as "
        "a sparse grid min-cost flow); 'clip' = clip negative cells at 0 and renormalise.", choices=PROJECTIONS)
    n_synthetic: int | None = n_synthetic_param(
        "Synthetic points (largest-remainder rounding of the projected measure). Default: the public or noisy n, "
        "capped at dpsynth_core.limits max_synthetic_rows (post-processing, noted in the release).")
    n_public: int | None = n_public_param(
        "Public dataset size; without it (add/remove) 5% of ε buys a noisy size, used for the normalisation "
        "ν = (n_i + λ_i)/n̂, the default grid and the output size.")

    def check_domain(self, domain: Domain, owner: str) -> None:
        super().check_domain(domain, owner)
        if self.cells is not None:
            k, d = self.cells, domain.d
            cap = MAX_BL_CELLS if self.projection == "bl" else MAX_CELLS
            if k**d > cap:
                raise param_error(owner, "cells", f"such that cells^d <= {cap} with projection={self.projection!r}",
                                  f"{k}^{d} = {k**d}")
            limits.check_planned(k**d, "max_cells", owner=owner, param="cells", what="grid cells",
                                 fix="pass fewer cells", got=f"{k}^{d} = {k**d} grid cells")


@dataclass(frozen=True)
class PSMMTrace(Trace):
    """PSMM's intermediates (all DP): the grid, the noisy signed measure ν, its projection τ, the counts
    of the synthetic points per cell and the transport between ν and τ (:func:`project`'s summary)."""

    k: int
    d: int
    noisy_signed_measure: np.ndarray
    noisy_counts: np.ndarray
    projected_measure: np.ndarray
    synthetic_counts: np.ndarray
    transport: dict


@dataclass(frozen=True)
class PSMMOwner(OwnerView):
    """Owner view (NOT DP): the true cell counts and the true measure."""

    true_counts: np.ndarray
    true_measure: np.ndarray


@mechanism(
    name="psmm",
    title="PSMM — private signed measure mechanism",
    paper="He, Vershynin, Zhu, Algorithmically effective DP synthetic data (COLT 2023) [HVZ23]",
    algorithm="[HVZ23] Algorithms 1-2; Proposition 6, Theorem 7, Corollary 8",
    dp="pure",
    neighbours=("add_remove", "replace"),
    max_dim=PSMM_MAX_DIM,
    max_dim_reason="the exact projection is a grid LP exponential in d",
    config=PSMMConfig,
    theory=Theory(proven=False),  # Theorem 7's complexity constant is unspecified: a rate, not a number
    summary="Discrete-Laplace noise on a regular grid, projected onto probability measures in the "
            "bounded-Lipschitz distance.",
)
def psmm(p: Prepared[PSMMConfig]) -> Release[PSMMTrace, PSMMOwner]:
    """Private Signed Measure Mechanism [HVZ23, Algorithm 1 with Algorithm 2].

    .. math:: \\nu(\\{y_i\\}) = \\frac{n_i + \\lambda_i}{\\hat n},\\ \\lambda_i \\sim \\mathrm{Lap}_\\mathbb{Z}(\\Delta/\\varepsilon');
              \\quad \\hat\\nu = \\arg\\min_{\\tau \\in \\mathcal P} d_{BL}(\\nu, \\tau)

    Parameters
    ----------
    X : array (n, d) or DataFrame
    domain : Domain
        Public bounds; the mechanism works in the unit cube, l_inf metric.
    epsilon : float in (0, inf)
        Total budget; ε' = ε minus the noisy size's 5% when one is bought (Proposition 5: the
        noisy cell counts are ε'-DP with sensitivity Δ = 1 (add/remove) or 2 (replace)).
    cells : int in [1, 4096] or None
        Cells per axis k; at most 2^16 cells with ``projection="bl"``, 2^22 with "clip".
        ``None``: :func:`dpsynth_core.grid.default_cells_per_axis` (k^d ≈ ε'n̂, at most 2^15 cells).
    projection : {"bl", "clip"}
    n_synthetic : int in [1, ``limits.current().max_synthetic_rows``] or None
        Output size; ``None``: n̂ (public n, n under replace, or the noisy size), capped at
        ``max_synthetic_rows`` (post-processing of a DP or public size; recorded in ``notes`` and
        ``params["limits"]``). An explicit value above the limit is refused.
    neighbours : {"add_remove", "replace"}
    n_public : int in [1, ``limits.current().max_size``] or None
    rng : numpy Generator, int or None

    Resource limits (:mod:`dpsynth_core.limits`, docs/privacy-model.md) are checked before the
    grid and the output are allocated.

    Returns
    -------
    Release[PSMMTrace, PSMMOwner]
        ``synthetic``: ``n_synthetic`` points, uniform in their cells (largest-remainder counts of τ).
        ``params``: cells (k), grid cells (k^d), noise scale, n̂ and its source, projection.
        ``bound``: Theorem 7 with Corollary 4's Laplacian complexity and its unspecified absolute
        constant set to C = 1 (``params["complexity_constant"]``), so a constant-free evaluation.

    References
    ----------
    .. [HVZ23] Y. He, R. Vershynin, Y. Zhu. Algorithmically Effective Differentially Private Synthetic Data. COLT 2023.
       See docs/references.md.
    """
    cfg, domain, d = p.config, p.domain, p.domain.d
    ledger = Ledger()
    size = resolve_size(p.n, epsilon=p.epsilon, neighbours=p.neighbours, n_public=cfg.n_public, rng=p.rng,
                        owner=p.owner)
    if size.epsilon_spent:
        ledger.add("noisy size n̂ (discrete Laplace)", size.epsilon_spent)
    eps_counts = p.epsilon - ledger.epsilon
    k = cfg.cells
    if k is None:
        k = default_cells_per_axis(size.n, eps_counts, d, cap_cells=DEFAULT_CELL_CAP)
        limits.check_planned(k**d, "max_cells", owner=p.owner, param="cells", what="grid cells",
                             fix="pass fewer cells", got=f"the default {k}^{d} = {k**d} grid cells")
    n_hat = size.n
    # n̂ is public or a DP count: capping the output size at it is post-processing
    m, capped = ((cfg.n_synthetic, None) if cfg.n_synthetic is not None
                 else limits.cap_rows(n_hat, source=f"n̂ from {size.source}", d=d))
    sens = count_sensitivity(p.neighbours)
    scale = sens / eps_counts
    counts = p.rows.sum(grid_counts, k)  # the one pass over the private rows (exact integer counts)
    noisy = counts + discrete_laplace(scale, counts.size, p.rng)
    ledger.add(f"cell counts (discrete Laplace, scale {scale:.4g})", eps_counts)
    nu = noisy / float(n_hat)
    tau, summary = project(nu, k, d, cfg.projection)
    out_counts = largest_remainder(tau, m)
    U_syn = points_in_cells(out_counts, k, d, p.rng)
    synthetic = np.clip(domain.from_unit(U_syn), domain.lower_array, domain.upper_array)

    constant = 1.0
    bound = psmm_theorem7(n_hat, eps_counts, d, k, complexity_constant=constant, neighbours=p.neighbours)
    notes = [
        f"Bound: Theorem 7 on the {k}^{d} grid with Corollary 4's Laplacian complexity; its absolute constant is "
        "unspecified in the paper and set to C = 1 here, so the value is a constant-free rate, not a proven "
        f"number. Evaluated at n = {n_hat} ({size.source}); unit cube, l_inf metric.",
    ]
    if cfg.projection == "clip":
        notes.append("projection='clip' is a comparison baseline: Theorem 7's proof needs the BL projection.")
    params = {
        "cells": k, "grid_cells": k**d, "cell_diameter": 1.0 / k, "noise_scale": scale, "sensitivity": sens,
        "epsilon_counts": eps_counts, "projection": cfg.projection, "n_hat": n_hat, "n_source": size.source,
        "n_synthetic": m, "complexity_constant": constant, "bl_value": summary.get("bl_value"),
        "size": size.to_dict(),
    }
    trace = PSMMTrace(k=k, d=d, noisy_signed_measure=nu, noisy_counts=noisy, projected_measure=tau,
                      synthetic_counts=out_counts, transport=summary)
    owner = PSMMOwner(n=p.n, n_clamped=p.n_clamped, true_counts=counts, true_measure=counts / max(p.n, 1))
    return p.finish(synthetic, ledger=ledger, trace=trace, owner=owner, params=params, bound=bound,
                    bound_kind="Theorem 7 with Corollary 4's complexity, C = 1 (constant-free)", notes=notes,
                    capped=capped)
