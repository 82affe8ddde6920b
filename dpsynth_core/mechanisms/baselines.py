"""Naive DP baselines, so users see what the papers improve on.

* :func:`flat_histogram`: noisy counts on one regular grid (discrete Laplace), clip at 0,
  normalise, round to points placed uniformly in cells.
* :func:`per_point_laplace`: every record moved by Laplace noise (a local-DP style release).
"""

from __future__ import annotations

import numpy as np

from .. import limits
from ..grid import default_cells_per_axis, grid_counts, largest_remainder, points_in_cells
from ..noise import discrete_laplace, laplace
from ..privacy import Ledger, check_n_public, count_sensitivity, resolve_size
from ..validation import check_int
from .base import ParamSpec, Release, prepare, register


@register(dict(
    name="flat_histogram",
    title="Flat Laplace histogram (baseline)",
    paper="Baseline: the Laplace mechanism of Dwork, Roth, The algorithmic foundations of differential privacy (2014) [DR14]",
    algorithm="Laplace histogram on one grid ([DR14] Theorem 3.6)",
    dp="pure",
    neighbours=("add_remove", "replace"),
    params=(
        ParamSpec("bins", "int", None, "Cells per axis; default k with k^d ≈ εn (from the public or noisy n).",
                  low=1, high=4096),
        ParamSpec("n_synthetic", "int", None, "Synthetic points; default the public or noisy size n, capped at "
                  "dpsynth_core.limits max_synthetic_rows (post-processing, noted in the release).", low=1,
                  high=limits.DEFAULTS.max_synthetic_rows, advanced=True),
    ),
    summary="Discrete-Laplace noise on every cell of a single grid, clipped at 0 and normalised.",
))
def flat_histogram(X, domain, *, epsilon, bins=None, n_synthetic=None, neighbours="add_remove", n_public=None,
                   rng=None) -> Release:
    """Flat Laplace histogram baseline.

    .. math:: \\tilde n_c = n_c + \\mathrm{Lap}_\\mathbb{Z}(\\Delta/\\varepsilon'),\\quad
              \\tau_c = \\max(\\tilde n_c, 0) / \\textstyle\\sum_{c'} \\max(\\tilde n_{c'}, 0)

    with Δ = 1 (add/remove) or 2 (replace) and ε' = ε minus what a noisy size costs.

    Parameters
    ----------
    X : array (n, d); domain : Domain; epsilon : float in (0, inf)
    bins : int in [1, 4096] or None
        Cells per axis (``k^d`` cells, at most 2^22 and at most ``dpsynth_core.limits`` ``max_cells``).
        ``None``: ``k^d ≈ ε n``.
    n_synthetic : int in [1, ``limits.current().max_synthetic_rows``] or None
        Output size; ``None``: ``n_public``, n under replace, or the noisy size, capped at
        ``max_synthetic_rows`` (post-processing of the noisy size; recorded in ``notes`` and
        ``params["limits"]``). An explicit value above the limit is refused.
    n_public : int in [1, ``limits.current().max_size``] or None

    Resource limits (:mod:`dpsynth_core.limits`) are checked before the grid and the output are
    allocated: ``k^d`` against ``max_cells`` (refused: the grid follows from public inputs and the
    capped size), the output size against ``max_synthetic_rows`` (capped or refused, as above).

    References
    ----------
    .. [DR14] C. Dwork, A. Roth. The Algorithmic Foundations of Differential Privacy. FnT-TCS 9(3-4), 2014.
       See docs/references.md.
    """
    owner = "flat_histogram"
    p = prepare(X, domain, owner=owner, epsilon=epsilon, neighbours=neighbours, rng=rng)
    d = domain.d
    if n_synthetic is not None:
        m_given = check_int(n_synthetic, "n_synthetic", owner, low=1)
        limits.check_rows(m_given, d, owner=owner)
    if bins is not None:
        check_int(bins, "bins", owner, low=1, high=4096)
    if n_public is not None:
        check_n_public(n_public, owner)
    ledger = Ledger()
    size = None
    if bins is None or n_synthetic is None:
        size = resolve_size(p.n, epsilon=p.epsilon, neighbours=p.neighbours, n_public=n_public, rng=p.rng,
                            owner=owner)
        if size.epsilon_spent:
            ledger.add("noisy size (discrete Laplace)", size.epsilon_spent)
    eps_counts = p.epsilon - ledger.epsilon
    k = default_cells_per_axis(size.n, eps_counts, d) if bins is None else check_int(bins, "bins", owner, low=1,
                                                                                       high=4096)
    if k**d > 2**22:
        raise ValueError(f"The 'bins' parameter of {owner} must give at most 2^22 cells (bins^d). Got {k}^{d}.")
    limits.check_planned(k**d, "max_cells", owner=owner, param="bins", what="grid cells",
                         fix="pass fewer bins", got=f"{k}^{d} = {k**d} grid cells")
    capped = None
    if n_synthetic is None:
        # the public n, n under replace, or the noisy size (clipping biases Σ max(ñ, 0) upwards); a DP or
        # public quantity, so capping it is post-processing
        m, capped = limits.cap_rows(size.n, source=f"n from {size.source}", d=d)
    else:
        m = m_given
    counts = p.rows.sum(grid_counts, k)  # the one pass over the private rows (exact integer counts)
    sens = count_sensitivity(p.neighbours)
    scale = sens / eps_counts
    noisy = counts + discrete_laplace(scale, counts.size, p.rng)
    ledger.add(f"cell counts (discrete Laplace, scale {scale:.4g})", eps_counts)
    clipped = np.maximum(noisy, 0)
    weights = clipped if clipped.sum() > 0 else np.ones_like(clipped)
    out_counts = largest_remainder(weights, m)
    U_syn = points_in_cells(out_counts, k, d, p.rng)
    params = {"bins": k, "cells": k**d, "noise_scale": scale, "n_synthetic": m, "size": size.to_dict() if size else None}
    notes = []
    if capped is not None:
        params["limits"] = capped
        notes.append(limits.cap_note(capped, owner))
    return Release(
        synthetic=domain.from_unit(U_syn), epsilon=p.epsilon, delta=0.0, neighbours=p.neighbours,
        mechanism=owner, domain=domain, ledger=ledger, params=params, notes=notes,
        bound=None, bound_kind="no paper bound (baseline)",
        trace={"noisy_counts": noisy, "clipped_counts": clipped, "synthetic_counts": out_counts,
               "owner": {"true_counts": counts, "n": p.n, "n_clamped": p.n_clamped}},
    )


@register(dict(
    name="per_point_laplace",
    title="Per-point Laplace noise (baseline)",
    paper="Baseline: the Laplace mechanism of Dwork, Roth, The algorithmic foundations of differential privacy (2014) [DR14]",
    algorithm="Laplace mechanism on each record ([DR14] Theorem 3.6)",
    dp="pure",
    neighbours=("replace",),
    default_neighbours="replace",
    params=(),
    summary="Each record is released with Laplace noise of scale d/ε per coordinate, then clamped.",
))
def per_point_laplace(X, domain, *, epsilon, neighbours="replace", rng=None) -> Release:
    """Release every record plus Laplace noise (replace neighbours only: the output size reveals n).

    .. math:: \\tilde x_i = \\mathrm{clip}_{[0,1]^d}(u_i + \\mathrm{Lap}(d/\\varepsilon)^d)

    One record's coordinates have l1 sensitivity d in the unit cube, so each noisy record is ε-DP;
    records are disjoint, so the whole (shuffled) output is ε-DP under replace.

    References
    ----------
    .. [DR14] C. Dwork, A. Roth. The Algorithmic Foundations of Differential Privacy. FnT-TCS 9(3-4), 2014.
       See docs/references.md.
    """
    owner = "per_point_laplace"
    p = prepare(X, domain, owner=owner, epsilon=epsilon, neighbours=neighbours, rng=rng, supported=("replace",))
    d = domain.d
    scale = d / p.epsilon
    # one noisy point per record: the output is the size of the input, so a Dask input is collected
    # only when its size is within the output limit (checked before anything is read)
    U = p.rows.to_numpy(max_rows=limits.current().max_synthetic_rows,
                        why="the per-point baseline releases one noisy point per record; "
                            "dpsynth_core.limits max_synthetic_rows")
    noisy = np.clip(U + laplace(scale, U.shape, p.rng), 0.0, 1.0)
    noisy = noisy[p.rng.permutation(noisy.shape[0])]
    ledger = Ledger().add(f"Laplace on each record (scale {scale:.4g} per coordinate)", p.epsilon)
    return Release(
        synthetic=domain.from_unit(noisy), epsilon=p.epsilon, delta=0.0, neighbours=p.neighbours,
        mechanism=owner, domain=domain, ledger=ledger, params={"noise_scale": scale, "n_synthetic": p.n},
        bound=None, bound_kind="no paper bound (baseline)", trace={"owner": {"n_clamped": p.n_clamped}},
    )
