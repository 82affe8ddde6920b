"""Marginals over categorical columns: the blocks of the query vector on a mixed domain.

On a mixed domain (docs/mixed-data.md) the s-marginal over a set S of columns lives on the product of
its axes: a numeric axis has k cells of side 1/k (centres (2i+1)/2k, as on the cube), a categorical axis
one cell per declared category (the category itself: nothing is discretised on it). Block S has

.. math:: m_S = k^{\\#\\text{numeric}(S)} \\prod_{j \\in S \\text{ categorical}} c_j

cells, with the mixed metric restricted to S,

.. math:: \\rho(z, z') = \\max\\Big(\\max_{a \\text{ numeric}} |z_a - z'_a|,\\ \\max_{a \\text{ categorical}} w_a\\,[z_a \\ne z'_a]\\Big).

This is the general setting of [DLS+24, Appendix C]: one finite metric space per block, blocks of
different sizes :math:`m_{(i)}`, each with its own Haar matrix. The query vector is stored as an array
(K, m) with m = max_S m_S: the cells of block S are its first m_S entries (in path order and in row-major
order alike) and the rest is padding that holds 0 for every dataset, every noise draw and every measure.

* **Path** (the Hamiltonian path of Appendix C.1): the boustrophedon over the block's axes with the
  categorical axes outermost, so that the path steps along a categorical axis (length w_a) as seldom
  as possible; consecutive cells differ in one axis by one index, at distance 1/k (numeric) or w_a
  (categorical). :attr:`MixedBlocks.steps` holds these lengths, which weight the cumulative sums of
  L_T (Eq. (28)).
* **Noise**: per block the superregular noise :math:`[\\Phi_S\\tilde\\eta_S]_{1:m_S}` of its own size
  (Lemma 3 for :math:`m = m_S`), scale from :func:`block_scales`.
* **U_T** (Eq. (17)): per block the KR norm of a signed measure on {base} ∪ cells, base the point with
  numeric coordinates 0 and every category index 0; exact by dense transport up to
  :data:`DENSE_MIXED_MAX` cells (blocks of numeric axes only use the numeric code of
  :mod:`.proxies`), else its proven upper bound (:meth:`MixedBlocks.ut_bounds`).

References: [DLS+24] K. Donhauser, J. Lokna, A. Sanyal, M. Boedihardjo, R. Hönig, F. Yang. Certified
private data release for sparse Lipschitz functions. AISTATS 2024. See docs/references.md.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...domain import Domain
from ...haar import haar_synthesis, levels_for, superregular_noise
from ...transport.marginals import marginal_subsets, mixed_cost
from .proxies import SolveBudget, emd_value, ut_exact

__all__ = ["DENSE_MIXED_MAX", "MixedBlocks", "block_scales", "mixed_marginal_counts", "snake_shape"]

#: Largest block (cells) whose U_T is solved exactly with a dense mixed cost; above, the proven upper bound.
DENSE_MIXED_MAX = 1500


def snake_shape(shape: tuple[int, ...]) -> np.ndarray:
    """Boustrophedon order of the cells of a grid of the given shape (row-major indices in path order).

    The first axis is the outermost: layer i of axis 0 is traversed with the snake of the other axes,
    reversed on odd layers (the reflected mixed-radix Gray code; :func:`dpsynth_core.paths.snake_order`
    for equal sizes). Consecutive cells differ in one axis by one index."""
    order = np.arange(shape[-1], dtype=np.int64)
    for size in reversed(shape[:-1]):
        inner = order.size
        layers = np.empty((size, inner), dtype=np.int64)
        layers[0::2] = order
        layers[1::2] = order[::-1]
        order = (np.arange(size, dtype=np.int64)[:, None] * inner + layers).ravel()
    return order


@dataclass(frozen=True)
class _Geo:
    """One block's geometry (row-major cells over the block's axes in S order): path ``order``/``rank``,
    ``steps`` (length m: distances between consecutive path cells, then the imbalance weight 1/k),
    ``coords`` (numeric centres and category indices), ``base`` (distance of each cell to the base point),
    ``weights`` (0 for a numeric axis, w_a for a categorical one)."""

    shape: tuple[int, ...]
    weights: tuple[float, ...]
    k: int
    order: np.ndarray
    rank: np.ndarray
    steps: np.ndarray
    coords: np.ndarray
    base: np.ndarray

    @property
    def m(self) -> int:
        return int(self.order.size)

    @functools.cached_property
    def cost(self) -> np.ndarray:
        """The mixed distances among {base} ∪ cells (node 0 the base point)."""
        pts = np.vstack([np.zeros((1, len(self.shape))), self.coords])
        out = mixed_cost(pts, pts, self.weights)
        out.setflags(write=False)
        return out


@functools.lru_cache(maxsize=64)
def _geometry(shape: tuple[int, ...], weights: tuple[float, ...], k: int) -> _Geo:
    s = len(shape)
    m = math.prod(shape)
    cat = [a for a in range(s) if weights[a] > 0]
    perm = cat + [a for a in range(s) if weights[a] == 0]  # categorical axes outermost
    walk = snake_shape(tuple(shape[a] for a in perm))
    idx_perm = np.unravel_index(walk, tuple(shape[a] for a in perm))
    idx = [None] * s
    for pos, a in enumerate(perm):
        idx[a] = idx_perm[pos]
    order = np.ravel_multi_index(tuple(idx), shape).astype(np.int64)
    rank = np.empty_like(order)
    rank[order] = np.arange(m, dtype=np.int64)
    grid_idx = np.unravel_index(np.arange(m), shape)
    coords = np.empty((m, s))
    for a in range(s):
        coords[:, a] = grid_idx[a] if weights[a] > 0 else (grid_idx[a] + 0.5) / k
    w = np.asarray(weights)
    base = mixed_cost(coords, np.zeros((1, s)), w)[:, 0]
    path = coords[order]
    steps = np.empty(m)
    diff = np.abs(np.diff(path, axis=0))  # consecutive path cells: one axis moves by one index
    steps[:-1] = np.where(w > 0, w * (diff != 0), diff).max(axis=1) if m > 1 else steps[:-1]
    steps[-1] = 1.0 / k  # the weight of the total imbalance: free (Definition 2 needs only im T), the paper's 1/k
    for arr in (order, rank, steps, coords, base):
        arr.setflags(write=False)
    return _Geo(shape=shape, weights=tuple(weights), k=k, order=order, rank=rank, steps=steps, coords=coords,
                base=base)


@dataclass(frozen=True)
class MixedBlocks:
    """The blocks of the query vector on a mixed domain (module docstring).

    ``sizes[j]`` is the number of cells of column j (k numeric, c_j categorical) and ``weights[j]`` its
    category weight (0 for a numeric column)."""

    d: int
    s: int
    k: int
    sizes: tuple[int, ...]
    weights: tuple[float, ...]

    @classmethod
    def of(cls, domain: Domain, s: int, k: int) -> MixedBlocks:
        cats = domain.categories
        sizes = tuple(len(cats[c]) if c in cats else int(k) for c in domain.names)
        weights = tuple(float(domain.weight(c)) if c in cats else 0.0 for c in domain.names)
        return cls(d=domain.d, s=int(s), k=int(k), sizes=sizes, weights=weights)

    # ------------------------------------------------------------------------- layout
    @functools.cached_property
    def subsets(self) -> list[tuple[int, ...]]:
        return marginal_subsets(self.d, self.s)

    @property
    def K(self) -> int:
        return len(self.subsets)

    @functools.cached_property
    def geos(self) -> tuple[_Geo, ...]:
        return tuple(_geometry(tuple(self.sizes[a] for a in S), tuple(self.weights[a] for a in S), self.k)
                     for S in self.subsets)

    @functools.cached_property
    def cells(self) -> np.ndarray:
        """m_S, the cells of each block."""
        return np.array([g.m for g in self.geos], dtype=np.int64)

    @property
    def m(self) -> int:
        """The padded width of the query vector, max_S m_S."""
        return int(self.cells.max())

    @functools.cached_property
    def numeric_block(self) -> np.ndarray:
        """Blocks of numeric axes only (their U_T is the numeric code's, on k^s cells)."""
        return np.array([not any(g.weights) for g in self.geos])

    def _padded(self, name: str, fill: Any, dtype: Any) -> np.ndarray:
        out = np.full((self.K, self.m), fill, dtype=dtype)
        for b, g in enumerate(self.geos):
            out[b, :g.m] = getattr(g, name)
        out.setflags(write=False)
        return out

    @functools.cached_property
    def order(self) -> np.ndarray:
        """(K, m): ``order[b, p]`` the row-major cell at path position p (padding maps to itself)."""
        out = self._padded("order", 0, np.int64).copy()
        for b, g in enumerate(self.geos):
            out[b, g.m:] = np.arange(g.m, self.m)
        out.setflags(write=False)
        return out

    @functools.cached_property
    def rank(self) -> np.ndarray:
        """(K, m): ``rank[b, c]`` the path position of row-major cell c (padding maps to itself)."""
        out = np.empty_like(self.order)
        np.put_along_axis(out, self.order, np.broadcast_to(np.arange(self.m), self.order.shape), axis=1)
        out.setflags(write=False)
        return out

    @functools.cached_property
    def steps(self) -> np.ndarray:
        """(K, m) in path order: the L_T weights (0 on padding)."""
        return self._padded("steps", 0.0, np.float64)

    @functools.cached_property
    def real(self) -> np.ndarray:
        """(K, m) boolean: True on the cells of each block, False on padding (the same in either order)."""
        return np.arange(self.m)[None, :] < self.cells[:, None]

    def to_row(self, w_path: np.ndarray) -> np.ndarray:
        return np.take_along_axis(w_path, np.broadcast_to(self.rank, w_path.shape), axis=-1)

    def to_path(self, w_row: np.ndarray) -> np.ndarray:
        return np.take_along_axis(w_row, np.broadcast_to(self.order, w_row.shape), axis=-1)

    def describe(self) -> str:
        shapes = sorted({"x".join(str(x) for x in g.shape) for g in self.geos})
        return f"blocks of {', '.join(shapes)} cells"

    # -------------------------------------------------------------------------- cells
    def cell_index(self, U: np.ndarray, b: int) -> np.ndarray:
        """Row-major cell of each encoded unit row in block b: numeric axes as :func:`dpsynth_core.grid.cell_of`,
        categorical axes their category index."""
        S, g = self.subsets[b], self.geos[b]
        idx = np.zeros(U.shape[0], dtype=np.int64)
        for a, size, w in zip(S, g.shape, g.weights, strict=True):
            if w > 0:
                c = U[:, a].astype(np.int64)
            else:
                c = (U[:, a] * self.k).astype(np.int64)
                np.clip(c, 0, self.k - 1, out=c)
            idx = idx * size + c
        return idx

    def positions(self, U: np.ndarray) -> np.ndarray:
        """(K, n): the path position of each row's cell in every block."""
        return np.stack([self.geos[b].rank[self.cell_index(U, b)] for b in range(self.K)]) if U.shape[0] \
            else np.zeros((self.K, 0), dtype=np.int64)

    def bins(self, U: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
        """(K, m) in path order: integer counts (``weights`` None) or summed weights of the rows per cell."""
        pos = self.positions(U)
        out = np.zeros((self.K, self.m), dtype=np.int64 if weights is None else np.float64)
        for b in range(self.K):
            out[b] = np.bincount(pos[b], weights=weights, minlength=self.m)
        return out

    # -------------------------------------------------------------------------- noise
    def noise(self, scales: np.ndarray, rng: np.random.Generator, *, draws: int | None = None,
              exact_total: bool) -> np.ndarray:
        """Superregular noise per block of its own size (Lemma 3 for m_S), scaled by ``scales[b]``; zero on
        padding. Shape (K, m) or (draws, K, m), path order. Blocks are drawn by increasing size."""
        nd = 1 if draws is None else int(draws)
        out = np.zeros((nd, self.K, self.m))
        for mb in np.unique(self.cells).tolist():
            blocks = np.flatnonzero(self.cells == mb)
            count = nd * blocks.size
            if mb == 1:
                z = np.zeros((count, 1)) if exact_total else rng.laplace(0.0, 1.0, (count, 1))
            else:
                z = superregular_noise(int(mb), scale=1.0, rng=rng, draws=count, exact_total=exact_total)
            out[:, blocks, :mb] = z.reshape(nd, blocks.size, mb) * np.asarray(scales)[blocks][None, :, None]
        return out[0] if draws is None else out

    def noise_factors(self, scales: np.ndarray, exact_total: bool) -> list[np.ndarray]:
        """Per block F_b (m, r) with block noise = F_b · (i.i.d. standard Laplace) in row-major order,
        relative to the largest scale (the GLS weights of the consistency projection); zero rows on padding,
        zero columns to a common width r."""
        rel = np.asarray(scales, dtype=float) / max(float(np.max(scales)), 1e-300)
        width = max(1 << levels_for(int(mb)) for mb in self.cells.tolist())
        out = []
        for b, g in enumerate(self.geos):
            F = np.zeros((self.m, width))
            if g.m == 1:
                F[0, 0] = 0.0 if exact_total else 1.0
            else:
                H = haar_synthesis(np.eye(1 << levels_for(g.m)), scaled=True).T[:g.m]  # column j = Φ e_j, path
                if exact_total:
                    H = H[:, 1:]
                F[:g.m, :H.shape[1]] = H[g.rank] * rel[b]
            out.append(F)
        return out

    # ---------------------------------------------------------------------------- U_T
    def ut_bounds(self, w_row: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Cheap lower and upper bounds on U_T of every block, arrays (..., K) (as :func:`.proxies.ut_bounds`).

        Upper: :math:`\\sum_i |w_i|\\rho(z_i, \\text{base})` and summation by parts along the path,
        :math:`|R_1|\\rho(z_1, \\text{base}) + \\sum_{l \\ge 2} \\rho(z_{l-1}, z_l)|R_l|` (R the tail sums).
        Lower: :math:`|\\sum_i f(z_i) w_i|` for the admissible f = ρ(·, base), a numeric coordinate, and
        :math:`w_a[z_a \\ne 0]` of a categorical axis. Widened by a relative 1e-12 against rounding."""
        w = np.asarray(w_row, dtype=float)
        lb = np.empty(w.shape[:-1])
        ub = np.empty(w.shape[:-1])
        for b, g in enumerate(self.geos):
            wb = w[..., b, :g.m]
            u1 = np.abs(wb) @ g.base
            tails = np.cumsum(wb[..., g.order][..., ::-1], axis=-1)[..., ::-1]
            u2 = np.abs(tails[..., 0]) * g.base[g.order[0]] + np.abs(tails[..., 1:]) @ g.steps[:-1]
            ub[..., b] = np.minimum(u1, u2)
            feats = [g.base] + [g.coords[:, a] if wa == 0 else wa * (g.coords[:, a] != 0)
                                for a, wa in enumerate(g.weights)]
            lb[..., b] = np.abs(wb @ np.column_stack(feats)).max(axis=-1)
        return lb * (1.0 - 1e-12), ub * (1.0 + 1e-12)

    def ut_exact(self, w_block: np.ndarray, b: int, budget: SolveBudget | None) -> float:
        """U_T of block b (signed vector, row-major cells, padded), exact: the numeric code for a block of
        numeric axes, dense transport with the mixed cost up to :data:`DENSE_MIXED_MAX` cells, else the
        proven upper bound."""
        g = self.geos[b]
        w = np.asarray(w_block, dtype=float)[:g.m]
        if self.numeric_block[b]:
            return ut_exact(w, self.k, self.s, budget)
        if g.m == 1:
            return abs(float(w[0])) * float(g.base[0])
        if not np.any(w):
            return 0.0
        too_large = g.m > DENSE_MIXED_MAX
        if too_large and budget is not None:
            budget.bounded += 1
        if too_large or (budget is not None and not budget.charge(g.m)):
            pad = np.zeros((1, self.K, self.m))
            pad[0, b, :g.m] = w
            return float(self.ut_bounds(pad)[1][0, b])
        nu = np.concatenate([[-w.sum()], w])
        pos, neg = nu > 0, nu < 0
        a, c = nu[pos], -nu[neg]
        c = c * (a.sum() / c.sum())  # rounding imbalance only (the base point balances the masses)
        return emd_value(a, c, np.ascontiguousarray(g.cost[np.ix_(pos, neg)]))

    def ut_block_max(self, w_row: np.ndarray, budget: SolveBudget | None = None,
                     bounds: tuple[np.ndarray, np.ndarray] | None = None) -> float:
        """max over blocks of U_T, exact, solving only the blocks whose upper bound can attain it."""
        if bounds is None:
            lo, hi = self.ut_bounds(w_row[None])
            lb, ub = lo[0], hi[0]
        else:
            lb, ub = bounds
        best = -math.inf
        for b in np.argsort(-ub, kind="stable"):
            if ub[b] <= best:
                break
            best = max(best, self.ut_exact(w_row[b], int(b), budget))
        return float(max(best, 0.0))

    def kr_points(self, b: int, w_block: np.ndarray, points: np.ndarray, weights: np.ndarray) -> float:
        """Exact :math:`\\|\\sum_i w_i\\delta_{z_i} - \\sum_j \\alpha_j\\delta_{p_j}\\|_{KR,0}` on block b under the
        mixed metric (as :func:`.certificate.kr_grid_points` on the cube): z_i the block's cells, p_j points in
        the block's coordinates (numeric in [0, 1], category indices) with weights α_j; the mass imbalance
        goes to the base point; dense transport (POT)."""
        g = self.geos[b]
        w = np.asarray(w_block, dtype=float)[:g.m]
        P = np.asarray(points, dtype=float).reshape(-1, len(g.shape))
        a = np.asarray(weights, dtype=float).ravel()
        nz = w != 0
        pts = np.vstack([np.zeros((1, len(g.shape))), g.coords[nz], P])
        nu = np.concatenate([[a.sum() - w.sum()], w[nz], -a])
        pos, neg = nu > 0, nu < 0
        if not pos.any() or not neg.any():
            return 0.0
        A_, B_ = nu[pos], -nu[neg]
        B_ = B_ * (A_.sum() / B_.sum())
        return emd_value(A_, B_, np.ascontiguousarray(mixed_cost(pts[pos], pts[neg], g.weights)))


def mixed_marginal_counts(U: np.ndarray, blocks: MixedBlocks) -> np.ndarray:
    """The per-record statistic of the query operator on a mixed domain: int64 counts (K, m) of every block's
    cells in path order (padding 0), exactly additive over disjoint row blocks (:meth:`dpsynth_core.rows.Rows.sum`
    passes encoded unit rows: numeric in [0, 1], category indices)."""
    return blocks.bins(np.asarray(U, dtype=float))


def block_scales(n: int, epsilon: float, blocks: MixedBlocks, *, exact_total: bool) -> np.ndarray:
    """Laplace scale of each block's Haar coefficients ([DLS+24, Lemma 2; Appendix C.2]).

    .. math:: b_S = \\frac{2K}{n\\varepsilon}\\quad(\\text{paper}), \\qquad
              b_S = \\frac{2K}{n\\varepsilon}\\cdot\\frac{L_S}{L_S + 1},\\ L_S = \\lceil\\log_2 m_S\\rceil\\quad(\\text{exact totals})

    One record changing (any of its coordinates, a category included) moves at most two cells of each
    block by 1/n, so after :math:`\\Phi_S^{-1}` (Lemma 3, :math:`\\|\\Phi_S^{-1}\\|_1 = 1`) block S moves by
    at most 2/n in l1, and by :math:`2L_S/((L_S+1)n)` without its root coefficient (the block total, public
    under replace). The privacy loss of the Laplace mechanism is at most
    :math:`\\sum_S \\Delta_S / b_S = K \\cdot \\varepsilon / K = \\varepsilon`."""
    base = 2.0 * blocks.K / (n * epsilon)
    if not exact_total:
        return np.full(blocks.K, base)
    lev = np.array([levels_for(int(mb)) for mb in blocks.cells], dtype=float)
    return base * np.where(lev > 0, lev / np.maximum(lev + 1.0, 1.0), 1.0)
