"""The consistency projection Π of the noisy marginals (the consistent certificate; package docstring, item 5).

Differences :math:`\\mathbb T\\rho_1 - \\mathbb T\\rho_2` of the query vectors of two probability measures lie
in the kernel of the constraints A of :func:`consistency_constraints` (zero block totals, shared lower
marginals). :func:`consistency_map` builds :math:`\\Pi = I - MA` with the generalised-least-squares M
(the identity on ``ker A``, whatever M), and :func:`consistent_part` applies it.
"""

from __future__ import annotations

import functools
import itertools
import math
from typing import Any

import numpy as np
from scipy import sparse

from ...transport.marginals import marginal_subsets
from ...validation import check_int
from .mixed import block_scales
from .query import block_noise_factor

__all__ = ["CONSISTENCY", "consistency_constraints", "consistency_map", "mixed_consistency_map", "consistent_part"]

#: Where the consistency projection Π of the noisy marginals is used (package docstring, item 5).
CONSISTENCY: tuple[str, ...] = ("certificate", "both", "none")
#: Size limits of :func:`consistency_map` and its limit on cells per block for the GLS weights.
_CONS_MAX_ROWS = 4000
_CONS_MAX_ENTRIES = 20_000_000
_CONS_GLS_MAX_CELLS = 1024


def consistency_constraints(d: int, s: int, k: int) -> sparse.csr_matrix:
    """Linear constraints A with :math:`A\\,\\mathbb T(\\rho_1 - \\rho_2) = 0` for all probability measures ρ1, ρ2.

    Rows (row-major cells within each block, blocks in :func:`marginal_subsets` order):

    * the total of every block (differences of probability measures have zero mass per block);
    * for every (s-1)-subset R and every block S ⊃ R other than the first such block S_R: the
      R-marginal of block S minus the R-marginal of block S_R (the s-marginals of one signed measure
      share their lower marginals).

    Rows may be linearly dependent. ``ker A`` contains the difference space
    :math:`L_0 = \\mathbb T(\\mathcal M_0)` of the query operator (zero-mass signed measures), which is
    all that the certificate needs (package docstring); whether it equals :math:`L_0` only affects tightness.

    Returns
    -------
    scipy.sparse.csr_matrix of shape (n_rows, C(d, s) k^s).
    """
    owner = "consistency_constraints"
    dd = check_int(d, "d", owner, low=1)
    ss = check_int(s, "s", owner, low=1, high=dd)
    kk = check_int(k, "k", owner, low=1)
    return _constraints(marginal_subsets(dd, ss), (kk,) * dd, kk**ss)


def _constraints(subsets: list[tuple[int, ...]], sizes: tuple[int, ...], m: int) -> sparse.csr_matrix:
    """:func:`consistency_constraints` for blocks whose column j has ``sizes[j]`` cells (k for every column on
    the cube; a categorical column its categories), each block's cells the first entries of a row of width m."""
    K, ss = len(subsets), len(subsets[0])
    shapes = [tuple(sizes[a] for a in S) for S in subsets]
    coords = [np.array(np.unravel_index(np.arange(math.prod(sh)), sh)).T for sh in shapes]  # row-major cells
    rows, cols, vals = [], [], []
    n_rows = 0
    for b in range(K):  # totals
        mb = coords[b].shape[0]
        rows.append(np.full(mb, n_rows))
        cols.append(b * m + np.arange(mb))
        vals.append(np.ones(mb))
        n_rows += 1
    if ss >= 2:
        for R in itertools.combinations(range(len(sizes)), ss - 1):
            blocks = [b for b, S in enumerate(subsets) if set(R) <= set(S)]
            r_shape = tuple(sizes[a] for a in R)

            def r_index(b: int, R: tuple[int, ...] = R, r_shape: tuple[int, ...] = r_shape) -> np.ndarray:
                keep = [i for i, a in enumerate(subsets[b]) if a in R]
                return np.ravel_multi_index(tuple(coords[b][:, keep].T), r_shape)

            first = r_index(blocks[0])
            for b in blocks[1:]:
                rows += [n_rows + first, n_rows + r_index(b)]
                cols += [blocks[0] * m + np.arange(first.size), b * m + np.arange(coords[b].shape[0])]
                vals += [np.ones(first.size), -np.ones(coords[b].shape[0])]
                n_rows += math.prod(r_shape)
    return sparse.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                             shape=(n_rows, K * m))


@functools.lru_cache(maxsize=8)
def consistency_map(d: int, s: int, k: int, *, exact_total: bool = True):
    """The linear map Π = I - M A of the consistent certificate (package docstring), or None if too large.

    A is :func:`consistency_constraints`. M is the generalised-least-squares choice
    :math:`M = \\Sigma A^\\top (A\\Sigma A^\\top)^+` with Σ the covariance of the Haar noise (block
    diagonal, per block :math:`F F^\\top`, :func:`block_noise_factor`) when ``k^s <= 1024``, the Euclidean
    :math:`M = A^\\top (AA^\\top)^+` above that. *Any* M gives :math:`\\Pi x = x` on ``ker A``, which is what
    validity needs; M only decides how much of the noise Π removes (GLS: the best linear unbiased
    estimate of the consistent marginals, so :math:`\\Pi\\eta` has the smallest covariance).

    Returns
    -------
    dict with ``A`` (csr), ``M`` (dense (K k^s, rows)), ``kind`` ("GLS" or "euclidean"), ``rows``,
    ``rank``; or None when ``rows > 4000`` or ``K k^s · rows > 2·10^7`` (then Π = I).
    """
    A = consistency_constraints(d, s, k)
    m = k**s
    K = A.shape[1] // m
    return _build_map(A, K, m, lambda: [block_noise_factor(k, s, bool(exact_total))] * K)


@functools.lru_cache(maxsize=8)
def mixed_consistency_map(blocks: Any, *, exact_total: bool = True):
    """:func:`consistency_map` for the blocks of a mixed domain (:class:`~.mixed.MixedBlocks`): the same
    constraints (block totals, shared lower marginals; padding in none) and the GLS weights of each block's
    own noise (its Haar factor times its relative scale). Π is the identity on ``ker A``, which contains
    every difference of query vectors of two probability measures on the mixed space, so the certificate's
    argument is unchanged; padding columns are zero in A and in Σ, so Π keeps the padding at 0."""
    A = _constraints(blocks.subsets, blocks.sizes, blocks.m)
    scales = block_scales(1, 1.0, blocks, exact_total=bool(exact_total))
    return _build_map(A, blocks.K, blocks.m, lambda: blocks.noise_factors(scales, bool(exact_total)))


def _build_map(A, K: int, m: int, factors: Any):
    """Π's M for constraints A over K blocks of width m, ``factors()`` the per-block noise factors (GLS);
    None when A is too large."""
    n_rows, n_cols = A.shape
    if n_rows > _CONS_MAX_ROWS or n_rows * n_cols > _CONS_MAX_ENTRIES:
        return None
    Ad = A.toarray()
    Fs = factors() if m <= _CONS_GLS_MAX_CELLS else None
    r_dim = n_cols if Fs is None else K * Fs[0].shape[1]
    if n_rows > r_dim:
        return _consistency_map_columns(A, Ad, Fs, K, m)
    if m <= _CONS_GLS_MAX_CELLS:
        SAt = np.empty((n_cols, n_rows))  # Σ A^T, block by block
        for b in range(K):
            Ab = Ad[:, b * m:(b + 1) * m]
            SAt[b * m:(b + 1) * m] = Fs[b] @ (Fs[b].T @ Ab.T)
        G = Ad @ SAt
        kind = "GLS"
    else:
        SAt = Ad.T.copy()
        G = Ad @ Ad.T
        kind = "euclidean"
    G = 0.5 * (G + G.T)
    lam, V = np.linalg.eigh(G)
    keep = lam > 1e-10 * max(float(lam.max()), 1e-300)
    Gp = (V[:, keep] / lam[keep]) @ V[:, keep].T
    M = SAt @ Gp
    M.setflags(write=False)
    return {"A": A, "M": M, "kind": kind, "rows": int(n_rows), "rank": int(keep.sum())}


def _consistency_map_columns(A, Ad: np.ndarray, Fs: list[np.ndarray] | None, K: int, m: int) -> dict:
    """:func:`consistency_map` through the smaller Gram matrix when A has more rows than Σ has factor columns.

    With :math:`\\Sigma = \\mathcal F\\mathcal F^\\top` (:math:`\\mathcal F` block diagonal with blocks F; the
    identity for the Euclidean choice) and :math:`B = A\\mathcal F`,
    :math:`M = \\Sigma A^\\top (A\\Sigma A^\\top)^+ = \\mathcal F B^\\top (BB^\\top)^+ = \\mathcal F (B^\\top B)^+ B^\\top`:
    the same M from an eigendecomposition of :math:`B^\\top B` (columns × columns) instead of
    :math:`BB^\\top` (rows × rows). High d with small k has many more constraints (shared lower
    marginals) than cells."""
    n_rows, n_cols = Ad.shape
    if Fs is None:
        B, kind, rb = Ad, "euclidean", m
    else:
        # a column zero in every block adds nothing to Σ (one cell, exact totals: F = 0)
        keep_cols = np.any(np.stack([F != 0 for F in Fs]), axis=(0, 1))
        Fs = [F[:, keep_cols] for F in Fs]
        rb = Fs[0].shape[1]
        B = np.empty((n_rows, K * rb))
        for b in range(K):
            B[:, b * rb:(b + 1) * rb] = Ad[:, b * m:(b + 1) * m] @ Fs[b]
        kind = "GLS"
    if B.shape[1] == 0:  # no noise to remove (one cell per block with exact totals): Π = I
        M = np.zeros((n_cols, n_rows))
        M.setflags(write=False)
        return {"A": A, "M": M, "kind": kind, "rows": int(n_rows), "rank": 0}
    H = B.T @ B
    H = 0.5 * (H + H.T)
    lam, V = np.linalg.eigh(H)
    keep = lam > 1e-10 * max(float(lam.max()), 1e-300)
    X = ((V[:, keep] / lam[keep]) @ V[:, keep].T) @ B.T  # (B^T B)^+ B^T = B^+, shape (K rb, rows)
    if Fs is None:
        M = X
    else:
        M = np.empty((n_cols, n_rows))
        for b in range(K):
            M[b * m:(b + 1) * m] = Fs[b] @ X[b * rb:(b + 1) * rb]
    M.setflags(write=False)
    return {"A": A, "M": M, "kind": kind, "rows": int(n_rows), "rank": int(keep.sum())}


def consistent_part(w_row: Any, cmap: dict | None) -> np.ndarray:
    """:math:`\\Pi w = w - M A w` for arrays (..., K, k^s) in row-major cell order (identity if ``cmap`` is None)."""
    w = np.asarray(w_row, dtype=float)
    if cmap is None:
        return w.copy()
    flat = w.reshape(-1, w.shape[-2] * w.shape[-1])
    Aw = (cmap["A"] @ flat.T).T
    return (flat - Aw @ cmap["M"].T).reshape(w.shape)
