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

import numpy as np

from .. import limits
from ..grid import default_cells_per_axis, grid_counts, largest_remainder, points_in_cells
from ..noise import discrete_laplace
from ..privacy import MAX_SIZE, Ledger, check_n_public, count_sensitivity, resolve_size
from ..validation import check_choice, check_int, param_error
from .base import ParamSpec, Prepared, Release, prepare, register

__all__ = ["psmm", "PROJECTIONS", "MAX_BL_CELLS", "MAX_CELLS", "DEFAULT_CELL_CAP", "project"]

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
        from ..transport import bl_projection

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


@register(dict(
    name="psmm",
    title="PSMM — private signed measure mechanism",
    paper="He, Vershynin, Zhu, Algorithmically effective DP synthetic data (COLT 2023) [HVZ23]",
    algorithm="[HVZ23] Algorithms 1-2; Proposition 6, Theorem 7, Corollary 8",
    dp="pure",
    neighbours=("add_remove", "replace"),
    max_dim=PSMM_MAX_DIM,
    params=(
        ParamSpec("cells", "int", None,
                  "Cells per axis k of the regular grid (k^d cells). Default: k^d ≈ εn (Corollary 8), from "
                  f"the public or noisy n, capped at {DEFAULT_CELL_CAP} cells.", low=1, high=4096),
        ParamSpec("projection", "choice", "bl",
                  "'bl' = exact bounded-Lipschitz projection onto probability measures (Algorithm 2, solved "
                  "as a sparse grid min-cost flow); 'clip' = clip negative cells at 0 and renormalise.",
                  choices=PROJECTIONS),
        ParamSpec("n_synthetic", "int", None,
                  "Synthetic points (largest-remainder rounding of the projected measure). Default: the "
                  "public or noisy n, capped at dpsynth_core.limits max_synthetic_rows (post-processing, noted in "
                  "the release).", low=1, high=limits.DEFAULTS.max_synthetic_rows, advanced=True),
        ParamSpec("n_public", "int", None,
                  "Public dataset size; without it (add/remove) 5% of ε buys a noisy size, used for the "
                  "normalisation ν = (n_i + λ_i)/n̂, the default grid and the output size.",
                  low=1, high=MAX_SIZE, advanced=True),
    ),
    summary="Discrete-Laplace noise on a regular grid, projected onto probability measures in the "
            "bounded-Lipschitz distance.",
))
def psmm(X, domain, *, epsilon, cells=None, projection="bl", n_synthetic=None, neighbours="add_remove",
         n_public=None, rng=None) -> Release:
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
    Release
        ``synthetic``: ``n_synthetic`` points, uniform in their cells (largest-remainder counts of τ).
        ``params``: cells (k), grid cells (k^d), noise scale, n̂ and its source, projection.
        ``bound``: Theorem 7 with Corollary 4's Laplacian complexity and its unspecified absolute
        constant set to C = 1 (``params["complexity_constant"]``), so a constant-free evaluation.
        ``trace``: ``noisy_signed_measure`` ν, ``projected_measure`` τ, ``synthetic_counts``,
        ``transport`` (BL value, mass moved, negative mass, solver), ``k``, ``d``; owner view:
        ``true_counts``, ``n``, ``n_clamped``.

    References
    ----------
    .. [HVZ23] Y. He, R. Vershynin, Y. Zhu. Algorithmically Effective Differentially Private Synthetic Data. COLT 2023.
       See docs/references.md.
    """
    p = prepare(X, domain, owner=OWNER, epsilon=epsilon, neighbours=neighbours, rng=rng, max_dim=PSMM_MAX_DIM)
    return _psmm(p, domain, cells=cells, projection=projection, n_synthetic=n_synthetic, n_public=n_public)


def _psmm(p: Prepared, domain, *, cells=None, projection="bl", n_synthetic=None, n_public=None,
          owner: str = OWNER) -> Release:
    """PSMM after the shared checks (``p`` from :func:`~dpsynth_core.mechanisms.base.prepare`, or built
    by a mechanism that runs PSMM as a sub-step with a share of its own, already validated, ε: low_dim).
    ``owner`` names the mechanism in messages."""
    d = domain.d
    projection = check_choice(projection, "projection", owner, PROJECTIONS)
    cap = MAX_BL_CELLS if projection == "bl" else MAX_CELLS
    if cells is not None:
        k = check_int(cells, "cells", owner, low=1, high=4096)
        if k**d > cap:
            raise param_error(owner, "cells", f"such that cells^d <= {cap} with projection={projection!r}",
                              f"{k}^{d} = {k**d}")
        limits.check_planned(k**d, "max_cells", owner=owner, param="cells", what="grid cells",
                             fix="pass fewer cells", got=f"{k}^{d} = {k**d} grid cells")
    if n_synthetic is not None:
        n_synthetic = check_int(n_synthetic, "n_synthetic", owner, low=1)
        limits.check_rows(n_synthetic, d, owner=owner)
    if n_public is not None:
        n_public = check_n_public(n_public, owner)

    ledger = Ledger()
    size = resolve_size(p.n, epsilon=p.epsilon, neighbours=p.neighbours, n_public=n_public, rng=p.rng, owner=owner)
    if size.epsilon_spent:
        ledger.add("noisy size n̂ (discrete Laplace)", size.epsilon_spent)
    eps_counts = p.epsilon - ledger.epsilon
    if cells is None:
        k = default_cells_per_axis(size.n, eps_counts, d, cap_cells=DEFAULT_CELL_CAP)
        limits.check_planned(k**d, "max_cells", owner=owner, param="cells", what="grid cells",
                             fix="pass fewer cells", got=f"the default {k}^{d} = {k**d} grid cells")
    n_hat = size.n
    # n̂ is public or a DP count: capping the output size at it is post-processing
    m, capped = (n_synthetic, None) if n_synthetic is not None else limits.cap_rows(n_hat, source=f"n̂ from {size.source}", d=d)
    sens = count_sensitivity(p.neighbours)
    scale = sens / eps_counts
    counts = p.rows.sum(grid_counts, k)  # the one pass over the private rows (exact integer counts)
    noisy = counts + discrete_laplace(scale, counts.size, p.rng)
    ledger.add(f"cell counts (discrete Laplace, scale {scale:.4g})", eps_counts)
    nu = noisy / float(n_hat)
    tau, summary = project(nu, k, d, projection)
    out_counts = largest_remainder(tau, m)
    U_syn = points_in_cells(out_counts, k, d, p.rng)
    synthetic = np.clip(domain.from_unit(U_syn), domain.lower_array, domain.upper_array)

    from ..rates import psmm_theorem7

    constant = 1.0
    bound = psmm_theorem7(n_hat, eps_counts, d, k, complexity_constant=constant, neighbours=p.neighbours)
    notes = [
        f"Bound: Theorem 7 on the {k}^{d} grid with Corollary 4's Laplacian complexity; its absolute constant is "
        "unspecified in the paper and set to C = 1 here, so the value is a constant-free rate, not a proven "
        f"number. Evaluated at n = {n_hat} ({size.source}); unit cube, l_inf metric.",
    ]
    if capped is not None:
        notes.append(limits.cap_note(capped, OWNER))
    if projection == "clip":
        notes.append("projection='clip' is a comparison baseline: Theorem 7's proof needs the BL projection.")
    trace = {
        "k": k, "d": d,
        "noisy_signed_measure": nu,
        "noisy_counts": noisy,
        "projected_measure": tau,
        "synthetic_counts": out_counts,
        "transport": summary,
        "owner": {"true_counts": counts, "true_measure": counts / max(p.n, 1), "n": p.n, "n_clamped": p.n_clamped},
    }
    params = {
        "cells": k,
        "grid_cells": k**d,
        "cell_diameter": 1.0 / k,
        "noise_scale": scale,
        "sensitivity": sens,
        "epsilon_counts": eps_counts,
        "projection": projection,
        "n_hat": n_hat,
        "n_source": size.source,
        "n_synthetic": m,
        "complexity_constant": constant,
        "bl_value": summary.get("bl_value"),
        "size": size.to_dict(),
    }
    if capped is not None:
        params["limits"] = capped
    return Release(
        synthetic=synthetic, epsilon=p.epsilon, delta=0.0, neighbours=p.neighbours, mechanism=OWNER, domain=domain,
        ledger=ledger, params=params, bound=float(bound),
        bound_kind="Theorem 7 with Corollary 4's complexity, C = 1 (constant-free)",
        trace=trace, notes=notes,
    )
