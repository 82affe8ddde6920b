"""The consistency projection Π of the noisy marginals (the consistent certificate; package docstring, item 5).

Differences :math:`\\mathbb T\\rho_1 - \\mathbb T\\rho_2` of the query vectors of two probability measures lie
in the kernel of the constraints A of :func:`consistency_constraints` (zero block totals, shared lower
marginals). :func:`consistency_map` builds :math:`\\Pi = I - MA` with the generalised-least-squares M
(the identity on ``ker A``, whatever M), and :func:`consistent_part` applies it.
"""

from __future__ import annotations

import functools
import itertools
from typing import Any

import numpy as np
from scipy import sparse

from ...transport.marginals import marginal_subsets
from ...validation import check_int
from .query import block_noise_factor

__all__ = ["CONSISTENCY", "consistency_constraints", "consistency_map", "consistent_part"]

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
    subsets = marginal_subsets(dd, ss)
    K, m = len(subsets), kk**ss
    coords = np.array(np.unravel_index(np.arange(m), (kk,) * ss)).T  # (m, s) row-major cell coordinates
    rows, cols, vals = [], [], []
    n_rows = 0
    for b in range(K):  # totals
        rows.append(np.full(m, n_rows))
        cols.append(b * m + np.arange(m))
        vals.append(np.ones(m))
        n_rows += 1
    if ss >= 2:
        mr = kk ** (ss - 1)
        for R in itertools.combinations(range(dd), ss - 1):
            blocks = [b for b, S in enumerate(subsets) if set(R) <= set(S)]

            def r_index(b: int, R: tuple[int, ...] = R) -> np.ndarray:
                keep = [i for i, a in enumerate(subsets[b]) if a in R]
                return np.ravel_multi_index(tuple(coords[:, keep].T), (kk,) * (ss - 1))

            first = r_index(blocks[0])
            for b in blocks[1:]:
                rows += [n_rows + first, n_rows + r_index(b)]
                cols += [blocks[0] * m + np.arange(m), b * m + np.arange(m)]
                vals += [np.ones(m), -np.ones(m)]
                n_rows += mr
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
    n_rows, n_cols = A.shape
    if n_rows > _CONS_MAX_ROWS or n_rows * n_cols > _CONS_MAX_ENTRIES:
        return None
    m = k**s
    K = n_cols // m
    Ad = A.toarray()
    F = block_noise_factor(k, s, bool(exact_total)) if m <= _CONS_GLS_MAX_CELLS else None
    r_dim = n_cols if F is None else K * F.shape[1]
    if n_rows > r_dim:
        return _consistency_map_columns(A, Ad, F, K, m)
    if m <= _CONS_GLS_MAX_CELLS:
        F = block_noise_factor(k, s, bool(exact_total))
        SAt = np.empty((n_cols, n_rows))  # Σ A^T, block by block
        for b in range(K):
            Ab = Ad[:, b * m:(b + 1) * m]
            SAt[b * m:(b + 1) * m] = F @ (F.T @ Ab.T)
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


def _consistency_map_columns(A, Ad: np.ndarray, F: np.ndarray | None, K: int, m: int) -> dict:
    """:func:`consistency_map` through the smaller Gram matrix when A has more rows than Σ has factor columns.

    With :math:`\\Sigma = \\mathcal F\\mathcal F^\\top` (:math:`\\mathcal F` block diagonal with blocks F; the
    identity for the Euclidean choice) and :math:`B = A\\mathcal F`,
    :math:`M = \\Sigma A^\\top (A\\Sigma A^\\top)^+ = \\mathcal F B^\\top (BB^\\top)^+ = \\mathcal F (B^\\top B)^+ B^\\top`:
    the same M from an eigendecomposition of :math:`B^\\top B` (columns × columns) instead of
    :math:`BB^\\top` (rows × rows). High d with small k has many more constraints (shared lower
    marginals) than cells."""
    n_rows, n_cols = Ad.shape
    if F is None:
        B, kind, rb = Ad, "euclidean", m
    else:
        F = F[:, np.any(F != 0, axis=0)]  # a zero column adds nothing to Σ (one cell, exact totals: F = 0)
        rb = F.shape[1]
        B = np.empty((n_rows, K * rb))
        for b in range(K):
            B[:, b * rb:(b + 1) * rb] = Ad[:, b * m:(b + 1) * m] @ F
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
    if F is None:
        M = X
    else:
        M = np.empty((n_cols, n_rows))
        for b in range(K):
            M[b * m:(b + 1) * m] = F @ X[b * rb:(b + 1) * rb]
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
