"""Private Signed Measure Mechanism (PSMM): He, Vershynin, Zhu [HVZ23, Algorithms 1–2].

The unit cube is cut into the regular :math:`k^d` grid (:mod:`dpsynth_core.grid`); each cell count
receives discrete Laplace noise, giving a signed measure on the cell centres, which is projected
onto the probability measures in the bounded-Lipschitz distance (Algorithm 2, Proposition 6) and
rounded to synthetic points.

The paper's LP has :math:`2m^2` variables; on a grid with the l_inf metric the same optimum is a
sparse min-cost flow on the king's-move graph with O(m 3^d) arcs
(:func:`dpsynth_core.transport.bl_projection`, ``method="sparse"``; docs/transport.md, "Bounded-Lipschitz projection").

Mixed tables (docs/mixed-data.md, "PSMM and the flat histogram"): the cells are every combination of the
declared categories times the numeric grid (:mod:`dpsynth_core.mixed_grid`); the noise and the privacy
are unchanged (each record is in one cell), and the projection runs on the mixed metric between the
cells (:mod:`dpsynth_core.transport.mixed_cells`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import defaults, limits
from ..domain import Domain
from ..grid import grid_counts, largest_remainder, points_in_cells
from ..mixed_grid import MixedGrid, check_combinations, combinations
from ..noise import discrete_laplace
from ..privacy import Ledger, SizeEstimate, count_sensitivity, resolve_size
from ..theory import BoundKind, Theory, laplacian_complexity_rate, psmm_theorem7
from ..transport import bl_projection
from ..validation import param_error
from .contract import Config, Prepared, mechanism, n_public_param, n_synthetic_param, param
from .release import OwnerView, Release, Trace

__all__ = ["psmm", "PSMMConfig", "PSMMTrace", "PSMMOwner", "PROJECTIONS", "MAX_BL_CELLS", "MAX_CELLS",
           "DEFAULT_CELL_CAP", "project", "psmm_mixed_theorem7"]

OWNER = "psmm"
#: The sparse grid LP of the exact projection handles grids of at most 6 axes.
PSMM_MAX_DIM = 6
PROJECTIONS = ("bl", "clip")
#: Largest grid the exact BL projection accepts (256 x 256, 40^3: seconds to a minute).
MAX_BL_CELLS = 2**16
#: Largest grid with the clip projection.
MAX_CELLS = 2**22
#: The default grid (:func:`dpsynth_core.defaults.psmm_cells`) is capped at this many cells so that the
#: projection stays interactive.
DEFAULT_CELL_CAP = defaults.MAX_PSMM_CELLS


def project(nu: np.ndarray, k: int, d: int, method: str = "bl", *, categories: tuple[int, ...] = (),
            weights: tuple[float, ...] = ()) -> tuple[np.ndarray, dict]:
    """Probability vector from the noisy signed measure ``nu`` (row-major on the ``k^d`` grid; on a mixed
    grid, ``categories`` = the category counts, combination-major as in :mod:`dpsynth_core.mixed_grid`).

    * ``"bl"``: :math:`\\hat\\tau = \\arg\\min_\\tau d_{BL}(\\nu, \\tau)` exactly (Algorithm 2 through the
      sparse grid LP of :func:`dpsynth_core.transport.bl_projection`; on a mixed grid the mixed metric with
      the category ``weights``, exact when every weight is at least (k-1)/k, else on l_inf + W:
      ``summary["mixed_metric"]``).
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
        if categories:
            res = bl_projection(nu, grid_shape=(k,) * d, method="sparse", categories=categories, weights=weights)
            summary["mixed_metric"] = res.details["mixed_metric"]
        else:
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
        "int", None, "Cells per numeric axis k of the regular grid (k^d cells). Default: rule "
        "dpsynth_core.defaults.psmm_cells, k = round(c_d (n̂ sinh ε')^{1/(d+1)}) with the public or noisy n̂ and "
        "ε' = the counts' ε / sensitivity (n̂/C per combination of categories on a mixed table), at most "
        f"{DEFAULT_CELL_CAP} cells, fitted by the defaults study (benchmarks/defaults_study.py, docs/defaults.md; "
        "for Corollary 8's k^d ≈ εn pass cells explicitly, dpsynth_core.grid.default_cells_per_axis). A given k: at "
        "most 2^16 cells (C k^d on a mixed table) with projection 'bl', 2^22 with 'clip'.", low=1, high=4096)
    projection: str = param(
        "choice", "bl", "'bl' = exact bounded-Lipschitz projection onto probability measures (Algorithm 2, solved as "
        "a sparse grid min-cost flow); 'clip' = clip negative cells at 0 and renormalise.", choices=PROJECTIONS)
    n_synthetic: int | None = n_synthetic_param(
        "Synthetic points (largest-remainder rounding of the projected measure). Default: n̂ (the public n, n "
        "under replace, or the noisy size), capped at dpsynth_core.limits max_synthetic_rows (post-processing, noted in the release).")
    n_public: int | None = n_public_param(
        "Public dataset size; without it (add/remove) 5% of ε buys a noisy size, used for the normalisation "
        "ν = (n_i + λ_i)/n̂, the default grid and the output size.")

    def check_domain(self, domain: Domain, owner: str) -> None:
        super().check_domain(domain, owner)
        cap = MAX_BL_CELLS if self.projection == "bl" else MAX_CELLS
        C = combinations(domain.category_sizes)
        if domain.is_mixed:
            check_combinations(domain, cap, owner=owner, why=f"at most {cap} cells with projection={self.projection!r}")
        if self.cells is not None:
            k, d = self.cells, domain.k
            grid = f"{k}^{d}" if C == 1 else f"{C} combinations × {k}^{d}"
            if C * k**d > cap:
                raise param_error(owner, "cells", f"such that {'' if C == 1 else 'combinations × '}cells^d <= {cap} "
                                  f"with projection={self.projection!r}", f"{grid} = {C * k**d}")
            limits.check_planned(C * k**d, "max_cells", owner=owner, param="cells", what="grid cells",
                                 fix="pass fewer cells", got=f"{grid} = {C * k**d} grid cells")


@dataclass(frozen=True)
class PSMMTrace(Trace):
    """PSMM's intermediates (all DP): the grid, the noisy signed measure ν, its projection τ, the counts
    of the synthetic points per cell and the transport between ν and τ (:func:`project`'s summary).

    ``d`` is the number of numeric axes. On a mixed domain the cell arrays have ``combinations`` × k^d
    entries, combination-major (:mod:`dpsynth_core.mixed_grid`): reshape to (combinations, k, ..., k);
    ``category_sizes`` gives the categories per categorical column (empty for a numeric domain)."""

    k: int
    d: int
    noisy_signed_measure: np.ndarray
    noisy_counts: np.ndarray
    projected_measure: np.ndarray
    synthetic_counts: np.ndarray
    transport: dict
    combinations: int = 1
    category_sizes: tuple = ()

    def numeric(self, measure) -> np.ndarray:
        """A measure on the cells (``noisy_signed_measure``, ``projected_measure``, the owner's ``true_measure``)
        on the numeric grid alone, k^d entries: on a mixed domain the cells of every combination of categories
        summed (the cell arrays are combination-major); on a numeric one the measure itself."""
        return np.asarray(measure, dtype=float).reshape(self.combinations, -1).sum(axis=0)


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
    categorical=True,
    max_dim=PSMM_MAX_DIM,
    max_dim_reason="its projection solves a linear program over every cell of a grid, and the grid grows "
                   "exponentially with the number of columns",
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
    X : array (n, d), DataFrame or Dask collection
        Private rows (a mixed domain: a DataFrame with its categorical columns, or encoded rows).
    domain : Domain
        Public bounds (and declared categories); the mechanism works in the unit cube, l_inf metric. On a
        mixed domain the cells are every combination of the declared categories times the numeric grid
        (C k^d cells) under the mixed metric (docs/mixed-data.md, "PSMM: the projection in the mixed metric").
    epsilon : float in (0, inf)
        Total budget; ε' = ε minus the noisy size's 5% when one is bought (Proposition 5: the
        noisy cell counts are ε'-DP with sensitivity Δ = 1 (add/remove) or 2 (replace)).
    neighbours : {"add_remove", "replace"}
    cells, projection, n_synthetic, n_public
        Declared in :class:`PSMMConfig` (listed below). The grid and the output are checked against the
        resource limits (:mod:`dpsynth_core.limits`, docs/privacy-model.md) before they are allocated.

    Returns
    -------
    Release[PSMMTrace, PSMMOwner]
        ``synthetic``: ``n_synthetic`` points, uniform in their cells (largest-remainder counts of τ); on a
        mixed domain a DataFrame whose categories are those of each point's cell (declared values only).
        ``params``: cells (k), grid cells (k^d), noise scale, n̂ and its source, projection.
        ``bound``: Theorem 7 with Corollary 4's Laplacian complexity and its unspecified absolute
        constant set to C = 1 (``params["complexity_constant"]``), so a constant-free evaluation.

    References
    ----------
    .. [HVZ23] Y. He, R. Vershynin, Y. Zhu. Algorithmically Effective Differentially Private Synthetic Data. COLT 2023.
       See docs/references.md.
    """
    cfg, domain, d = p.config, p.domain, p.domain.k  # d: numeric axes (all of them on a numeric domain)
    ledger = Ledger()
    size = _size(p, ledger)
    eps_counts = p.epsilon - ledger.epsilon
    k = cfg.cells if cfg.cells is not None else _default_cells(p, size, eps_counts)
    grid = MixedGrid(domain, k) if domain.is_mixed else None
    n_hat = size.n
    # n̂ is public or a DP count: capping the output size at it is post-processing
    m, capped = ((cfg.n_synthetic, None) if cfg.n_synthetic is not None
                 else limits.cap_rows(n_hat, source=f"n̂ from {size.source}", d=domain.d))
    scale = count_sensitivity(p.neighbours) / eps_counts
    counts, noisy = _noisy_counts(p, grid, k, scale, eps_counts, ledger)
    nu = noisy / float(n_hat)
    tau, summary = project(nu, k, d, cfg.projection, categories=domain.category_sizes, weights=domain.weights)
    out_counts = largest_remainder(tau, m)
    synthetic = _points(p, grid, k, out_counts)
    constant = 1.0
    bound, notes = _bound_and_notes(p, grid, k, n_hat, size, eps_counts, constant, summary)
    params = _params(p, grid, k, size, eps_counts, m, constant, summary)
    trace = PSMMTrace(k=k, d=d, noisy_signed_measure=nu, noisy_counts=noisy, projected_measure=tau,
                      synthetic_counts=out_counts, transport=summary,
                      combinations=1 if grid is None else grid.combinations, category_sizes=domain.category_sizes)
    owner = PSMMOwner(n=p.n, n_clamped=p.n_clamped, true_counts=counts, true_measure=counts / max(p.n, 1))
    return p.finish(synthetic, ledger=ledger, trace=trace, owner=owner, params=params, bound=bound,
                    bound_kind="Theorem 7 with Corollary 4's complexity, C = 1 (constant-free)",
                    bound_type=BoundKind.RATE, notes=notes, capped=capped)


def _size(p: Prepared[PSMMConfig], ledger: Ledger) -> SizeEstimate:
    """n̂: the public n, n under replace, or a noisy size bought with 5% of ε (one ledger entry)."""
    size = resolve_size(p.n, epsilon=p.epsilon, neighbours=p.neighbours, n_public=p.config.n_public, rng=p.rng,
                        owner=p.owner)
    if size.epsilon_spent:
        ledger.add("noisy size n̂ (discrete Laplace)", size.epsilon_spent)
    return size


def _points(p: Prepared[PSMMConfig], grid: MixedGrid | None, k: int, out_counts: np.ndarray) -> Any:
    """The synthetic rows: ``out_counts[i]`` points uniform in cell i, in the domain's units (on a mixed domain
    a DataFrame with each cell's categories)."""
    domain = p.domain
    if grid is not None:
        return grid.sample(out_counts, p.rng)
    U_syn = points_in_cells(out_counts, k, domain.k, p.rng)
    return np.clip(domain.from_unit(U_syn), domain.lower_array, domain.upper_array)


def _noisy_counts(p: Prepared[PSMMConfig], grid: MixedGrid | None, k: int, scale: float, eps_counts: float,
                  ledger: Ledger) -> tuple[np.ndarray, np.ndarray]:
    """Algorithm 1's counts and their ε'-DP version (discrete Laplace of ``scale``), one ledger entry. The one
    pass over the private rows (exact integer counts); on a mixed domain one cell per combination of categories
    and numeric cell: each record is still in exactly one cell."""
    counts = p.rows.sum(grid_counts, k) if grid is None else grid.counts(p.rows)
    noisy = counts + discrete_laplace(scale, counts.size, p.rng)
    where = "" if grid is None else f" of {grid.combinations} category combinations × {k}^{p.domain.k} numeric cells"
    ledger.add(f"cell counts{where} (discrete Laplace, scale {scale:.4g})", eps_counts)
    return counts, noisy


def _params(p: Prepared[PSMMConfig], grid: MixedGrid | None, k: int, size: SizeEstimate, eps_counts: float,
            m: int, constant: float, summary: dict) -> dict:
    """The public record of the release (every resolved parameter; the mixed grid's shape on a mixed domain)."""
    d, sens = p.domain.k, count_sensitivity(p.neighbours)
    params = {
        "cells": k, "grid_cells": k**d, "cell_diameter": 1.0 / k, "noise_scale": sens / eps_counts,
        "sensitivity": sens, "epsilon_counts": eps_counts, "projection": p.config.projection, "n_hat": size.n,
        "n_source": size.source, "n_synthetic": m, "complexity_constant": constant,
        "bl_value": summary.get("bl_value"), "size": size.to_dict(),
    }
    if grid is not None:
        params.update({"grid_cells": grid.cells, "numeric_cells": grid.numeric_cells,
                       "combinations": grid.combinations, "category_sizes": list(p.domain.category_sizes),
                       "mixed_metric": summary.get("mixed_metric")})
    return params


def _default_cells(p: Prepared[PSMMConfig], size: SizeEstimate, eps_counts: float) -> int:
    """Cells per numeric axis: the defaults study's rule :func:`dpsynth_core.defaults.psmm_cells` at n̂ and
    ε' / Δ (Δ the counts' sensitivity), at most DEFAULT_CELL_CAP cells; on a mixed domain the rule at n̂ / C
    (C = the number of combinations of the declared categories) and at most DEFAULT_CELL_CAP cells in all.
    Public inputs only (n̂ is public or DP); checked against the limits before anything is allocated."""
    d, sizes = p.domain.k, p.domain.category_sizes
    C = combinations(sizes)
    eps_unit = eps_counts / count_sensitivity(p.neighbours)
    k = 1 if d == 0 else defaults.per_combination_cells(defaults.psmm_cells, size.n, eps_unit, d, C,
                                                         DEFAULT_CELL_CAP)
    got = (f"the default {k}^{d} = {k**d} grid cells" if C == 1 else
           f"the default {C} combinations × {k}^{d} = {C * k**d} grid cells")
    limits.check_planned(C * k**d, "max_cells", owner=p.owner, param="cells", what="grid cells",
                         fix="pass fewer cells", got=got)
    return k


def _bound_and_notes(p: Prepared[PSMMConfig], grid: MixedGrid | None, k: int, n_hat: int, size: SizeEstimate,
                     eps_counts: float, constant: float, summary: dict) -> tuple[float, list[str]]:
    """Theorem 7 (constant-free) and the release's notes; on a mixed domain the notes say how the categories
    were handled and in which metric the projection is exact."""
    cfg, d = p.config, p.domain.k
    if grid is None:
        bound = psmm_theorem7(n_hat, eps_counts, d, k, complexity_constant=constant, neighbours=p.neighbours)
        return bound, [
            f"Bound: Theorem 7 on the {k}^{d} grid with Corollary 4's Laplacian complexity; its absolute constant is "
            "unspecified in the paper and set to C = 1 here, so the value is a constant-free rate, not a proven "
            f"number. Evaluated at n = {n_hat} ({size.source}); unit cube, l_inf metric.",
        ] + (["projection='clip' is a comparison baseline: Theorem 7's proof needs the BL projection."]
             if cfg.projection == "clip" else [])
    kind = summary.get("mixed_metric") or "max"
    w = p.domain.weights
    diam = max(1.0, max(w)) if kind == "max" else 1.0 + max(w)
    bound = psmm_mixed_theorem7(n_hat, eps_counts, d, k, grid.combinations, diam, complexity_constant=constant,
                                neighbours=p.neighbours)
    notes = [grid.describe(),
             f"Bound: Theorem 7 on the {grid.combinations} × {k}^{d} mixed grid, the Laplacian complexity bounded "
             f"combination by combination (Corollary 4 on {k}^{d} cells, times the diameter {diam:g}); its absolute "
             "constant is unspecified in the paper and set to C = 1 here, so the value is a constant-free rate, not "
             f"a proven number. Evaluated at n = {n_hat} ({size.source}); unit cube, l_inf metric combined with the "
             "category weights by max."]
    if cfg.projection == "clip":
        notes.append("projection='clip' is a comparison baseline: Theorem 7's proof needs the BL projection.")
    elif kind == "max":
        notes.append("Projection: the exact bounded-Lipschitz projection in the mixed metric (every category weight "
                     f"is at least (k-1)/k = {(k - 1) / k:.4g}, so the sparse graph with a tree of the categories "
                     "realises the metric exactly).")
    else:
        notes.append(f"Projection: a category weight ({min(w):g}) is below (k-1)/k = {(k - 1) / k:.4g}, where the "
                     "sparse graph cannot realise the mixed metric: the projection is exact for l_inf + W instead (at "
                     "least the mixed metric and at most twice it), and the bound is Theorem 7 in that metric "
                     f"(diameter {diam:g}), which bounds W1 in the mixed metric as well.")
    return bound, notes


def psmm_mixed_theorem7(n: float, epsilon: float, d: int, cells_per_axis: int, combos: int, diam: float, *,
                        complexity_constant: float = 1.0, neighbours: str = "add_remove") -> float:
    """Theorem 7 of [HVZ23] on a mixed grid: C combinations × the k^d numeric grid, m = C k^d cells.

    .. math:: \\mathbb{E} W_1 \\le \\frac1k + \\frac{2m}{\\varepsilon' n}\\,\\mathrm{diam}\\, C_0\\, \\ell_d(k^d)

    Theorem 7 holds for any partition of any metric space; its Laplacian complexity splits over the
    combinations (the supremum of a sum is at most the sum of the suprema, and a function with
    :math:`\\|f\\|_{Lip} \\le 1` on the mixed space, divided by diam, is in the cube's unit ball on each
    combination), so :math:`\\tilde L_m \\le \\mathrm{diam}\\, \\tilde L_{k^d}([0,1]^d)`, bounded by Corollary 4
    (:func:`dpsynth_core.theory.laplacian_complexity_rate`, constant :math:`C_0` = ``complexity_constant``,
    unspecified in the paper). With ``combos = 1`` and ``diam = 1`` this is
    :func:`dpsynth_core.theory.psmm_theorem7`."""
    eps_eff = epsilon if neighbours == "add_remove" else epsilon / 2.0
    K = cells_per_axis**d
    rate = laplacian_complexity_rate(K, d, complexity_constant)
    return float(1.0 / cells_per_axis + 2.0 * combos * K / (eps_eff * n) * diam * rate)
