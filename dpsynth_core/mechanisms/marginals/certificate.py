"""The certificate: a private bound on the W1 of every 2-way marginal between the data and the release.

For a pair S of columns, let T be its coarse grid, c(z) the representative point of z's cell (the middle
of the cell's extent on a numeric or integer axis, the category on a categorical one), μ_D the data, μ the
release and v_S = y_S / N̂ the noisy table divided by a size N̂. On the 2-dimensional marginal, with the
metric of the domain (l_inf on unit coordinates, w_j between two different categories), the triangle
inequality gives, as in [DLS+24, Eq. (4), Lemma 1]:

.. math::

    W_1(\\mu_D^S, \\mu^S) \\le
    \\underbrace{h_S}_{\\text{data to centres}}
    + \\underbrace{\\lVert T\\mu_D^S - v_S\\rVert_{KR,0}}_{\\text{privatisation}}
    + \\underbrace{\\lVert v_S - T\\mu^S\\rVert_{KR,0}}_{\\text{projection}}
    + \\underbrace{W_1(T^{-1}T\\mu^S, \\mu^S)}_{\\text{release to centres}},

with :math:`\\lVert\\nu\\rVert_{KR,0} = \\sup\\{\\int f d\\nu : f \\text{ 1-Lipschitz}, f(o) = 0\\}` on the
representatives and a base point o (the centre of the numeric axes, the first category), computed
exactly as W1 after sending ν's mass to o (POT's network simplex); h_S is the largest distance from a
point of a cell to its representative (nothing about the data is used). The release-to-centres term is
computed exactly from the released rows (each row to its own representative is an optimal coupling).

Privatisation. With y_S = n Tμ_D^S + η_S, :math:`T\\mu_D^S - v_S = -\\eta_S/\\hat N - (n - \\hat N)/\\hat N\\, T\\mu_D^S`,
so it is at most :math:`Z/\\hat N` with

.. math:: Z = \\max_S \\big(\\lVert\\eta_S\\rVert_{KR,0} + D_S\\,\\lvert\\hat N - n\\rvert\\big),

D_S the largest distance from o to a representative. N̂ is the public n when there is one, else the
inverse-variance weighted mean of the 2-way tables' noisy totals, so N̂ - n is a function of the 2-way
noise alone and Z is a function of noise whose law is known (the 2-way tables' noise is drawn after the
layout is fixed, independently of everything else). Z's (1 - β) quantile is the ⌈(1-β)(M+1)⌉-th smallest
of M fresh draws (:func:`~dpsynth_core.mechanisms.sparse_marginals.certificate.mc_order`: the release's Z
and the draws are exchangeable, so it is exceeded with probability at most β over the noise and the draws
together). Hence, with probability at least 1 - β,

.. math:: \\max_S W_1(\\mu_D^S, \\mu^S) \\le \\max_S (h_S + \\text{projection}_S + \\text{release}_S) + q_{1-\\beta}(Z)/\\hat N.

Every term is a function of the noisy tables, the release and public inputs: the bound is DP
(post-processing). docs/marginals.md says where it departs from [DLS+24].
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ...transport.marginals import mixed_cost
from ..sparse_marginals.certificate import mc_order
from .tables import Column, Layout

__all__ = ["Block", "blocks_of", "kr0", "transport_value", "Certificate", "certify"]


@dataclass(frozen=True)
class Block:
    """The geometry of one pair's coarse cells (row-major over the two axes).

    ``points`` are the representatives (unit coordinates, category codes), ``weights`` the axes'
    category weights (0 for a numeric axis), ``cost`` the distances among {base} ∪ cells (node 0 the
    base), ``halfwidth`` the largest distance from a point of a cell to its representative and
    ``base_distance`` the largest distance from the base to a representative."""

    pair: tuple[int, int]
    points: np.ndarray
    weights: np.ndarray
    cost: np.ndarray
    halfwidth: float
    base_distance: float


def _axis(col: Column) -> tuple[np.ndarray, np.ndarray, float, float]:
    """(representatives, half-widths, weight, base coordinate) of a column's coarse bins."""
    if col.kind == "categorical":
        return np.arange(col.coarse, dtype=float), np.zeros(col.coarse), col.weight, 0.0
    lo, hi = col.coarse_extent()
    return (lo + hi) / 2.0, (hi - lo) / 2.0, 0.0, 0.5


def blocks_of(layout: Layout) -> list[Block]:
    """The geometry of every pair's coarse grid (public)."""
    out = []
    for i, j in layout.pairs:
        (ri, hi_, wi, bi), (rj, hj, wj, bj) = _axis(layout.columns[i]), _axis(layout.columns[j])
        pts = np.stack(np.meshgrid(ri, rj, indexing="ij"), axis=-1).reshape(-1, 2)
        w = np.array([wi, wj])
        nodes = np.vstack([[bi, bj], pts])
        cost = np.ascontiguousarray(mixed_cost(nodes, nodes, w))
        out.append(Block((i, j), pts, w, cost, float(max(hi_.max(), hj.max())), float(cost[0, 1:].max())))
    return out


def kr0(w: np.ndarray, cost: np.ndarray) -> float:
    """:math:`\\lVert\\sum_c w_c\\delta_c\\rVert_{KR,0}` with the base as node 0 of ``cost``: the signed
    measure's mass imbalance is sent to the base and the two parts are transported (exact)."""
    w = np.asarray(w, dtype=float).ravel()
    nu = np.empty(w.size + 1)
    nu[0] = -w.sum()
    nu[1:] = w
    pos, neg = np.flatnonzero(nu > 0), np.flatnonzero(nu < 0)
    if not pos.size or not neg.size:
        return 0.0
    a, b = nu[pos], -nu[neg]
    b *= a.sum() / b.sum()  # rounding only: the base balances the masses
    return transport_value(a, b, np.ascontiguousarray(cost[pos][:, neg]))


def transport_value(a: np.ndarray, b: np.ndarray, cost: np.ndarray) -> float:
    """Exact optimal transport cost between ``a`` and ``b`` (equal masses) by POT's network simplex [FCG+21].

    POT's compiled solver (``ot.lp.emd_wrap.emd_c``) is called directly: on these problems of 2-100 nodes
    ``ot.emd2``'s input checks cost about 30 times the solve, and the certificate solves thousands of them.
    A solve that does not end optimal is an error, never a number."""
    from ot.lp.emd_wrap import check_result, emd_c

    _, value, _, _, code = emd_c(np.ascontiguousarray(a, dtype=float), np.ascontiguousarray(b, dtype=float),
                                 cost, 100_000_000, 1)
    if code != 1:
        raise RuntimeError(f"POT's network simplex did not reach optimality: {check_result(code)}")
    return float(value)


def _cells_of(layout: Layout, rows: np.ndarray, pair: tuple[int, int]) -> np.ndarray:
    """Row-major coarse cell of each released row in the pair's grid."""
    i, j = pair
    ci, cj = layout.columns[i], layout.columns[j]
    bi = ci.to_coarse[ci.fine_of(rows[:, i])]
    bj = cj.to_coarse[cj.fine_of(rows[:, j])]
    return bi * cj.coarse + bj


@dataclass(frozen=True)
class Certificate:
    """The bound and its terms. ``per_pair`` lists, per pair, (h_S, projection_S, release_S); ``quantile``
    is q_{1-β}(Z) (counts), ``size`` the N̂ it is divided by, ``draws``/``order`` the Monte Carlo sample
    size and the order statistic used."""

    bound: float
    beta: float
    quantile: float
    size: float
    size_source: str
    draws: int
    order: int
    per_pair: list

    def to_dict(self) -> dict:
        return {"bound": self.bound, "beta": self.beta, "quantile": self.quantile, "size": self.size,
                "size_source": self.size_source, "draws": self.draws, "order": self.order,
                "largest_terms": dict(zip(("data_to_centres", "projection", "release_to_centres"),
                                          (max(t[k] for t in self.per_pair) for k in range(3)), strict=True))}


def _size_error(noise: list[np.ndarray], weights: np.ndarray | None) -> float:
    """N̂ - n of the 2-way totals' weighted mean for one noise draw (0 when n is public)."""
    if weights is None:
        return 0.0
    # correctly rounded sums (math.fsum), not a BLAS dot whose last bits depend on the CPU kernel
    return math.fsum(w * float(x.sum()) for w, x in zip(weights, noise, strict=True)) / math.fsum(weights)


def certify(layout: Layout, blocks: list[Block], noisy_two: list[np.ndarray], draw, rows: np.ndarray, *,
            size: float, size_source: str, total_weights: np.ndarray | None, beta: float, draws: int,
            rng: np.random.Generator) -> Certificate:
    """The certificate of the released ``rows`` (unit coordinates, codes) against the noisy 2-way tables.

    ``draw(shape, rng)`` draws the 2-way tables' noise law; ``size`` is N̂ (public n, or the weighted mean
    of the 2-way totals with ``total_weights``, one per table; None when n is public)."""
    order = mc_order(draws, beta, owner="marginals")
    m = rows.shape[0]
    terms = []
    for blk, y in zip(blocks, noisy_two, strict=True):
        cells = _cells_of(layout, rows, blk.pair)
        syn = np.bincount(cells, minlength=blk.points.shape[0]) / max(m, 1)
        projection = kr0(y.ravel() / size - syn, blk.cost)
        gap = _distance(rows[:, list(blk.pair)], blk.points[cells], blk.weights)
        terms.append((blk.halfwidth, projection, float(gap.mean()) if m else 0.0))
    noise = [draw((draws,) + y.shape, rng) for y in noisy_two]  # all draws of a table at once
    stats = np.empty(draws)
    for t in range(draws):
        e = abs(_size_error([z[t] for z in noise], total_weights))
        stats[t] = max(kr0(z[t].ravel(), blk.cost) + blk.base_distance * e for z, blk in zip(noise, blocks, strict=True))
    q = float(np.sort(stats)[order - 1])
    bound = max(sum(t) for t in terms) + q / size
    return Certificate(bound=float(bound), beta=beta, quantile=q, size=float(size), size_source=size_source,
                       draws=draws, order=order, per_pair=terms)


def _distance(a: np.ndarray, b: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Row-wise distance of the domain's metric on two columns (l_inf; w_j between two categories)."""
    out = np.zeros(a.shape[0])
    for k in range(2):
        diff = np.abs(a[:, k] - b[:, k])
        out = np.maximum(out, diff if weights[k] == 0 else weights[k] * (diff > 0))
    return out
