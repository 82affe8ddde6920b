"""Naive DP baselines, so users see what the papers improve on.

* :func:`flat_histogram`: noisy counts on one regular grid (discrete Laplace), clip at 0,
  normalise, round to points placed uniformly in cells.
* :func:`per_point_laplace`: every record moved by Laplace noise (a local-DP style release).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import defaults, limits
from ..domain import Domain
from ..grid import grid_counts, largest_remainder, points_in_cells
from ..mixed_grid import MixedGrid, check_combinations, combinations
from ..noise import discrete_laplace, laplace
from ..privacy import Ledger, SizeEstimate, count_sensitivity, resolve_size
from ..theory import Theory
from ..validation import param_error
from .contract import Config, NoParams, Prepared, mechanism, n_public_param, n_synthetic_param, param
from .release import NoTrace, OwnerView, Release, Trace

__all__ = ["flat_histogram", "per_point_laplace", "FlatHistogramConfig", "FlatHistogramTrace", "GridOwner",
           "MAX_HISTOGRAM_CELLS"]

#: Largest grid of the flat histogram.
MAX_HISTOGRAM_CELLS = 2**22


@dataclass(frozen=True)
class FlatHistogramConfig(Config):
    """The flat histogram's parameters."""

    bins: int | None = param(
        "int", None, "Cells per numeric axis. Default: rule dpsynth_core.defaults.flat_histogram_bins, "
        "k = round(c_d (n sinh ε')^{1/(d+1)}) with the public or noisy n and ε' = the counts' ε / sensitivity "
        "(n/C per combination of categories on a mixed table, with C k^d <= 2^22), fitted by the defaults study "
        "(benchmarks/defaults_study.py, docs/defaults.md). At most 2^22 cells (C k^d on a mixed table) and "
        "dpsynth_core.limits max_cells.", low=1, high=4096)
    n_synthetic: int | None = n_synthetic_param(
        "Synthetic points; default n_public, n under replace or the noisy size, capped at dpsynth_core.limits "
        "max_synthetic_rows (post-processing, noted in the release); a larger value is refused.")
    n_public: int | None = n_public_param()

    def check_domain(self, domain: Domain, owner: str) -> None:
        super().check_domain(domain, owner)
        if domain.is_mixed:
            check_combinations(domain, MAX_HISTOGRAM_CELLS, owner=owner, why="at most 2^22 cells")
        if self.bins is not None:
            _check_grid(self.bins, domain.k, owner, "", combinations(domain.category_sizes))


def _check_grid(k: int, d: int, owner: str, which: str, combos: int = 1) -> None:
    """``combos`` × k^d cells (combos: the combinations of categories of a mixed domain) within the caps."""
    if combos == 1:
        grid, expected = f"{which}{k}^{d}", "at most 2^22 cells (bins^d)"
    else:
        grid, expected = f"{which}{combos} combinations × {k}^{d}", "at most 2^22 cells (combinations × bins^d)"
    if combos * k**d > MAX_HISTOGRAM_CELLS:
        raise param_error(owner, "bins", expected, grid)
    limits.check_planned(combos * k**d, "max_cells", owner=owner, param="bins", what="grid cells",
                         fix="pass fewer bins", got=f"{grid} = {combos * k**d} grid cells")


@dataclass(frozen=True)
class FlatHistogramTrace(Trace):
    """The noisy cell counts (DP), clipped at 0, and the counts of the synthetic points per cell. On a mixed
    domain the cell arrays have ``combinations`` × bins^d entries (d numeric axes), combination-major
    (:mod:`dpsynth_core.mixed_grid`); ``category_sizes`` gives the categories per categorical column."""

    bins: int
    noisy_counts: np.ndarray
    clipped_counts: np.ndarray
    synthetic_counts: np.ndarray
    combinations: int = 1
    category_sizes: tuple = ()


@dataclass(frozen=True)
class GridOwner(OwnerView):
    """Owner view (NOT DP): the true cell counts."""

    true_counts: np.ndarray


@mechanism(
    name="flat_histogram",
    title="Flat Laplace histogram (baseline)",
    paper="Baseline: the Laplace mechanism of Dwork, Roth, The algorithmic foundations of differential privacy "
          "(2014) [DR14]",
    algorithm="Laplace histogram on one grid ([DR14] Theorem 3.6)",
    dp="pure",
    neighbours=("add_remove", "replace"),
    categorical=True,
    config=FlatHistogramConfig,
    theory=Theory(proven=False),
    summary="Discrete-Laplace noise on every cell of a single grid, clipped at 0 and normalised.",
)
def flat_histogram(p: Prepared[FlatHistogramConfig]) -> Release[FlatHistogramTrace, GridOwner]:
    """Flat Laplace histogram baseline.

    .. math:: \\tilde n_c = n_c + \\mathrm{Lap}_\\mathbb{Z}(\\Delta/\\varepsilon'),\\quad
              \\tau_c = \\max(\\tilde n_c, 0) / \\textstyle\\sum_{c'} \\max(\\tilde n_{c'}, 0)

    with Δ = 1 (add/remove) or 2 (replace) and ε' = ε minus what a noisy size costs.

    Parameters
    ----------
    X : array (n, d), DataFrame or Dask collection; domain : Domain; epsilon : float in (0, inf)
        On a mixed domain (declared categories) the cells are every combination of categories times the
        numeric grid, ``C k^d`` cells with C the number of combinations (docs/mixed-data.md); the synthetic
        data is then a DataFrame whose categories are those of each point's cell.
    bins, n_synthetic, n_public
        Declared in :class:`FlatHistogramConfig` (listed below). The grid is checked against the resource
        limits (:mod:`dpsynth_core.limits`) before it is allocated (refused: it follows from public inputs and
        the capped size), the output size against ``max_synthetic_rows`` (capped or refused).

    References
    ----------
    .. [DR14] C. Dwork, A. Roth. The Algorithmic Foundations of Differential Privacy. FnT-TCS 9(3-4), 2014.
       See docs/references.md.
    """
    cfg, d = p.config, p.domain.k  # d: numeric axes (all of them on a numeric domain)
    sizes = p.domain.category_sizes
    ledger = Ledger()
    size = _size_if_needed(p, ledger)
    eps_counts = p.epsilon - ledger.epsilon
    k = cfg.bins if cfg.bins is not None else _default_bins(p, size, eps_counts)
    capped = None
    if cfg.n_synthetic is None:
        # the public n, n under replace, or the noisy size (clipping biases Σ max(ñ, 0) upwards); a DP or
        # public quantity, so capping it is post-processing
        m, capped = limits.cap_rows(size.n, source=f"n from {size.source}", d=p.domain.d)
    else:
        m = cfg.n_synthetic
    grid = MixedGrid(p.domain, k) if p.domain.is_mixed else None
    counts, noisy, scale = _noisy_cells(p, grid, k, eps_counts, ledger)
    clipped = np.maximum(noisy, 0)
    weights = clipped if clipped.sum() > 0 else np.ones_like(clipped)
    out_counts = largest_remainder(weights, m)
    params = {"bins": k, "cells": k**d, "noise_scale": scale, "n_synthetic": m, "size": size.to_dict() if size else None}
    trace = FlatHistogramTrace(bins=k, noisy_counts=noisy, clipped_counts=clipped, synthetic_counts=out_counts,
                               combinations=1 if grid is None else grid.combinations, category_sizes=sizes)
    if grid is None:
        synthetic, notes = p.domain.from_unit(points_in_cells(out_counts, k, d, p.rng)), []
    else:
        synthetic, notes = grid.sample(out_counts, p.rng), [grid.describe()]
        params.update({"cells": grid.cells, "numeric_cells": grid.numeric_cells, "combinations": grid.combinations,
                       "category_sizes": list(sizes)})
    return p.finish(synthetic, ledger=ledger, trace=trace,
                    owner=GridOwner(n=p.n, n_clamped=p.n_clamped, true_counts=counts), params=params,
                    bound=None, bound_kind="no paper bound (baseline)", capped=capped, notes=notes)


def _size_if_needed(p: Prepared[FlatHistogramConfig], ledger: Ledger) -> SizeEstimate | None:
    """The size estimate, bought only when the default grid or the default output size needs n (a declared n,
    or n under replace, is public and costs nothing); one ledger entry for a noisy size."""
    cfg = p.config
    if cfg.bins is not None and cfg.n_synthetic is not None:
        return None
    size = resolve_size(p.n, epsilon=p.epsilon, neighbours=p.neighbours, n_public=cfg.n_public, rng=p.rng,
                        owner=p.owner)
    if size.epsilon_spent:
        ledger.add("noisy size (discrete Laplace)", size.epsilon_spent)
    return size


def _default_bins(p: Prepared[FlatHistogramConfig], size: SizeEstimate, eps_counts: float) -> int:
    """The study's rule (issue 27) from public quantities only: the public or noisy n, ε' per unit of the
    counts' sensitivity, the numeric dimension and, on a mixed domain, the number C of combinations of the
    declared categories (the rule at n/C per combination); checked against the caps before any allocation."""
    d, C = p.domain.k, combinations(p.domain.category_sizes)
    k = 1 if d == 0 else defaults.per_combination_cells(
        defaults.flat_histogram_bins, size.n, eps_counts / count_sensitivity(p.neighbours), d, C,
        MAX_HISTOGRAM_CELLS)
    _check_grid(k, d, p.owner, "the default ", C)
    return k


def _noisy_cells(p: Prepared[FlatHistogramConfig], grid: MixedGrid | None, k: int, eps_counts: float,
                 ledger: Ledger) -> tuple[np.ndarray, np.ndarray, float]:
    """The one pass over the private rows (exact integer counts; on a mixed domain one cell per combination of
    categories and numeric cell: each record is still in exactly one cell), the counts with discrete Laplace
    noise of scale Δ/ε', and that scale; one ledger entry."""
    counts = p.rows.sum(grid_counts, k) if grid is None else grid.counts(p.rows)
    scale = count_sensitivity(p.neighbours) / eps_counts
    noisy = counts + discrete_laplace(scale, counts.size, p.rng)
    where = "" if grid is None else f" of {grid.combinations} category combinations × {k}^{p.domain.k} numeric cells"
    ledger.add(f"cell counts{where} (discrete Laplace, scale {scale:.4g})", eps_counts)
    return counts, noisy, scale


@mechanism(
    name="per_point_laplace",
    title="Per-point Laplace noise (baseline)",
    paper="Baseline: the Laplace mechanism of Dwork, Roth, The algorithmic foundations of differential privacy "
          "(2014) [DR14]",
    algorithm="Laplace mechanism on each record ([DR14] Theorem 3.6)",
    dp="pure",
    neighbours=("replace",),
    config=NoParams,
    theory=Theory(proven=False, rate=lambda d, params=None: (0.0, "no decay: the noise per record does not shrink "
                                                                "with n")),
    summary="Each record is released with Laplace noise of scale d/ε per coordinate, then clamped.",
)
def per_point_laplace(p: Prepared[NoParams]) -> Release[NoTrace, OwnerView]:
    """Release every record plus Laplace noise (replace neighbours only: the output size reveals n).

    .. math:: \\tilde x_i = \\mathrm{clip}_{[0,1]^d}(u_i + \\mathrm{Lap}(d/\\varepsilon)^d)

    One record's coordinates have l1 sensitivity d in the unit cube, so each noisy record is ε-DP;
    records are disjoint, so the whole (shuffled) output is ε-DP under replace.

    References
    ----------
    .. [DR14] C. Dwork, A. Roth. The Algorithmic Foundations of Differential Privacy. FnT-TCS 9(3-4), 2014.
       See docs/references.md.
    """
    scale = p.domain.d / p.epsilon
    # one noisy point per record: the output is the size of the input, so a Dask input is collected
    # only when its size is within the output limit (checked before anything is read)
    U = p.rows.to_numpy(max_rows=limits.current().max_synthetic_rows,
                        why="the per-point baseline releases one noisy point per record; "
                            "dpsynth_core.limits max_synthetic_rows")
    noisy = np.clip(U + laplace(scale, U.shape, p.rng), 0.0, 1.0)
    noisy = noisy[p.rng.permutation(noisy.shape[0])]
    ledger = Ledger().add(f"Laplace on each record (scale {scale:.4g} per coordinate)", p.epsilon)
    return p.finish(p.domain.from_unit(noisy), ledger=ledger, trace=NoTrace(),
                    owner=OwnerView(n=p.n, n_clamped=p.n_clamped), params={"noise_scale": scale, "n_synthetic": p.n},
                    bound=None, bound_kind="no paper bound (baseline)")
