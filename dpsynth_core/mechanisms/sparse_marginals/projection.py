"""Step 3 of [DLS+24, Algorithm 1] on public points (Section 5.1): the candidates and the projection LPs.

* The public candidates: :func:`public_points` (data-independent generators or the caller's
  points) and :func:`discretise_support` (snapping to the centres of :math:`T_{k,d}`).
* The projection: :func:`step3_lp` minimises the proxy L_T over measures on the public points as one
  sparse linear program (Eq. (16), HiGHS through ``scipy.optimize.linprog``); :func:`step3_ut_lp`
  minimises U_T instead (a min-cost flow per block; not in the paper); :func:`step3_dense_lp` is the
  dense reference of :func:`step3_lp`.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
from scipy import sparse
from scipy.optimize import linprog

from ...domain import Domain
from ...grid import cell_centres
from .proxies import king_edges

__all__ = ["PUBLIC_GENERATORS", "TIE_BREAK", "discretise_support", "public_points", "step3_lp", "step3_ut_lp",
           "step3_dense_lp"]

#: Data-independent generators of public candidate points (``public=...``).
PUBLIC_GENERATORS: tuple[str, ...] = ("uniform", "grid")
#: Weight of the tie-breaking term in Step 3 (see :func:`step3_lp`).
TIE_BREAK = 1e-3


# ------------------------------------------------------------------------------ public support
def discretise_support(P: np.ndarray, k: int, categorical: np.ndarray | None = None) -> np.ndarray:
    """Move points of the unit cube to the centres of their cells of :math:`T_{k,d}` and drop duplicates.

    Section 5.1 takes the public points in :math:`T_k`, so that :math:`T^{-1}T\\mu = \\mu` and the last
    projection term of Eq. (4) vanishes. ``categorical`` (a mask of the columns, mixed domains): those
    columns hold category indices, which are their own cells and stay as they are.

    Returns
    -------
    ndarray (n_unique, d) of cell centres, sorted row-major.
    """
    idx = np.clip(np.floor(P * k).astype(np.int64), 0, k - 1)
    if categorical is not None:
        idx[:, categorical] = P[:, categorical].astype(np.int64)
        uniq = np.unique(idx, axis=0).astype(np.float64)
        uniq[:, ~categorical] = (uniq[:, ~categorical] + 0.5) / k
        return uniq
    uniq = np.unique(idx, axis=0)
    return (uniq + 0.5) / k


def public_points(public: Any, public_size: int, domain: Domain, k: int, rng: np.random.Generator, *,
                  owner: str = "public_points") -> tuple[np.ndarray, str]:
    """The public candidates in the unit cube and a sentence describing them (Section 5.1).

    ``public`` is "uniform" (``public_size`` i.i.d. uniform points, drawn from ``rng``), "grid" (the
    centres of :math:`T_{k,d}`: all of them when ``k^d <= public_size``, else ``public_size`` of them chosen
    uniformly) or points in domain units (an array or a DataFrame with the domain's columns), already
    checked against the domain by the caller; they are clamped into the unit cube like X. No data used.
    On a mixed domain the candidates carry categories too (:func:`_mixed_public_points`).
    """
    d = domain.d
    if not isinstance(public, str):
        U = domain.to_unit(public, owner=owner)
        return U, f"{U.shape[0]} public points given by the caller"
    if domain.is_mixed:
        return _mixed_public_points(public, public_size, domain, k, rng)
    if public == "uniform":
        return rng.random((public_size, d)), f"{public_size} points drawn uniformly on the domain (data-independent)"
    total = k**d
    if total <= public_size:
        return cell_centres(k, d), f"all {total} centres of the k^d grid (exact Step 3 over T_k,d)"
    # uniform subset of the grid centres without materialising k^d of them
    picks: set[int] = set()
    while len(picks) < public_size:
        picks.update(int(x) for x in rng.integers(0, total, size=public_size - len(picks)))
    flat = np.array(sorted(picks), dtype=np.int64)
    coords = np.empty((flat.size, d))
    rest = flat.copy()
    for a in range(d - 1, -1, -1):
        coords[:, a] = rest % k
        rest //= k
    return (coords + 0.5) / k, f"{public_size} of the {total} k^d grid centres, chosen uniformly (data-independent)"


def _mixed_public_points(public: str, public_size: int, domain: Domain, k: int,
                         rng: np.random.Generator) -> tuple[np.ndarray, str]:
    """Public candidates on a mixed domain (encoded unit rows), data-independent: "uniform" draws the numeric
    columns uniformly on the cube and every category uniformly among the declared ones; "grid" takes the
    centres of the numeric k-grid times every combination of declared categories (all of them when there
    are at most ``public_size``, else that many chosen uniformly)."""
    cat = domain.categorical_index
    sizes = np.array([len(domain.categories[c]) if c in domain.categories else k for c in domain.names],
                     dtype=np.int64)
    if public == "uniform":
        U = rng.random((public_size, domain.d))
        U[:, cat] = np.minimum(np.floor(U[:, cat] * sizes[cat]), sizes[cat] - 1)
        return U, (f"{public_size} points drawn uniformly on the domain, categories uniform among the declared "
                   "ones (data-independent)")
    total = int(np.prod(sizes.astype(object)))
    if total <= public_size:
        flat = np.arange(total, dtype=np.int64)
        what = f"all {total} cells of the k-grid times the declared categories (exact Step 3)"
    else:
        picks: set[int] = set()
        while len(picks) < public_size:
            picks.update(int(x) for x in rng.integers(0, total, size=public_size - len(picks)))
        flat = np.array(sorted(picks), dtype=np.int64)
        what = (f"{public_size} of the {total} cells of the k-grid times the declared categories, chosen uniformly "
                "(data-independent)")
    coords = np.empty((flat.size, domain.d))
    rest = flat.copy()
    for a in range(domain.d - 1, -1, -1):
        coords[:, a] = rest % sizes[a]
        rest //= sizes[a]
    num = domain.numeric_index
    coords[:, num] = (coords[:, num] + 0.5) / k
    return coords, what


# ------------------------------------------------------------------------------------- the LPs
def _cum_targets(v_path: np.ndarray) -> np.ndarray:
    return np.cumsum(v_path, axis=-1)


def step3_lp(v_path: Any, pos: Any, k: int, *, tie_break: float = TIE_BREAK, steps: Any = None) -> dict:
    """Step 3 of Algorithm 1 over measures on public points [DLS+24, Section 5.1, Eq. (16)], sparse.

    .. math:: \\min_{\\alpha \\in \\Delta^{N-1}} \\ t + \\frac{\\lambda}{K}\\sum_S \\ell_S \\quad \\text{s.t.}\\quad
              \\ell_S = \\frac1k\\sum_l e_{S,l} \\le t,\\quad e_{S,l} \\ge |c_{S,l} - P_{S,l}|,\\quad
              P_{S,l} = P_{S,l-1} + \\sum_{j:\\ \\mathrm{pos}_S(z_j) = l} \\alpha_j

    with :math:`c_{S,l} = \\sum_{i\\le l} (v_{DP})^S_i` and cumulative-mass variables :math:`P_{S,l}`, so the
    constraint matrix has :math:`O(K(N + k^s))` non-zeros (the dense form, :func:`step3_dense_lp`, has
    :math:`O(K N k^s)`). Solved with HiGHS' interior-point method and crossover (``scipy.optimize.linprog``).
    At the optimum :math:`t = \\mathcal L_T(v_{DP}, T\\mu)` up to the tie-break: λ > 0 also lowers the
    non-maximal blocks (any minimiser of the max is allowed by Eq. (12)); it moves t by at most a relative λ.

    Parameters
    ----------
    v_path : array (K, m), the noisy query vector, blocks in path order (m = k^s)
    pos : int array (K, N): path position of public point j's cell in block S
    k : int >= 1
    tie_break : float >= 0, λ
    steps : array (K, m) or None
        On a mixed domain the weights of the cumulative sums (the path's step lengths, Eq. (28);
        :attr:`~.mixed.MixedBlocks.steps`) in place of 1/k.

    Returns
    -------
    dict with ``alpha`` (N,) on the simplex, ``objective`` (t at the optimum), ``lp_value`` (full objective),
    ``seconds``, ``nnz``, ``n_variables``, ``n_constraints``.

    References
    ----------
    .. [DLS+24] K. Donhauser, J. Lokna, A. Sanyal, M. Boedihardjo, R. Hönig, F. Yang. Certified private data release for sparse Lipschitz functions. AISTATS 2024.
    .. [HH18] Q. Huangfu, J. A. J. Hall. Parallelizing the dual revised simplex method. Math. Prog. Comp. 10(1), 2018.
    See docs/references.md for the full entries.
    """
    v = np.asarray(v_path, dtype=float)
    pos = np.asarray(pos, dtype=np.int64)
    K, m = v.shape
    N = pos.shape[1]
    c = _cum_targets(v)
    t0 = time.perf_counter()
    nP = K * m
    iE = N + nP  # offset of e (alpha: 0..N-1, P: N..N+nP-1)
    it = N + 2 * nP  # t
    n_var = it + 1
    A_eq, b_eq = _lt_equalities(pos, K, m, n_var)
    A_ub, b_ub = _lt_inequalities(c, k, N, n_var, steps)
    obj = np.zeros(n_var)
    obj[it] = 1.0
    obj[iE:it] = tie_break / (K * k) if steps is None else (tie_break / K) * np.asarray(steps, dtype=float).ravel()
    bounds = np.zeros((n_var, 2))
    bounds[:, 1] = np.inf
    bounds[N:iE] = (-np.inf, np.inf)
    return _solve(obj, A_ub, b_ub, A_eq, b_eq, bounds, N=N, it=it, t0=t0, what="Step 3 LP")


def _cum_columns(K: int, m: int, offset: int) -> np.ndarray:
    """Columns (K, m) of a block of per-(block, path position) variables starting at ``offset``."""
    return offset + np.arange(K)[:, None] * m + np.arange(m)[None, :]


def _lt_equalities(pos: np.ndarray, K: int, m: int, n_var: int) -> tuple[sparse.csr_matrix, np.ndarray]:
    """Row 0: the simplex (Σ α_j = 1); row 1 + b m + l: P_{b,l} - P_{b,l-1} - Σ_{j: pos_b(j) = l} α_j = 0."""
    N = pos.shape[1]
    nP = K * m
    blk = np.arange(K)[:, None]
    Pcol = _cum_columns(K, m, N)
    rows_bl = 1 + _cum_columns(K, m, 0)
    r_eq = [np.zeros(N, dtype=np.int64), rows_bl.ravel(), rows_bl[:, 1:].ravel(), (1 + blk * m + pos).ravel()]
    c_eq = [np.arange(N), Pcol.ravel(), Pcol[:, :-1].ravel(), np.broadcast_to(np.arange(N)[None, :], (K, N)).ravel()]
    d_eq = [np.ones(N), np.ones(nP), -np.ones(K * (m - 1)), -np.ones(K * N)]
    A_eq = sparse.csr_matrix((np.concatenate(d_eq), (np.concatenate(r_eq), np.concatenate(c_eq))),
                             shape=(1 + nP, n_var))
    b_eq = np.zeros(1 + nP)
    b_eq[0] = 1.0
    return A_eq, b_eq


def _lt_inequalities(c: np.ndarray, k: int, N: int, n_var: int,
                     steps: Any = None) -> tuple[sparse.csr_matrix, np.ndarray]:
    """-P - e <= -c; P - e <= c (so e >= |c - P|); (1/k) Σ_l e_{b,l} - t <= 0 for every block b (Σ_l h_{b,l} e_{b,l}
    with the path's step lengths h on a mixed domain)."""
    K, m = c.shape
    nP = K * m
    it = N + 2 * nP
    Pcol, Ecol = _cum_columns(K, m, N), _cum_columns(K, m, N + nP)
    r1 = np.arange(nP)
    r2 = nP + np.arange(nP)
    r3 = 2 * nP + np.repeat(np.arange(K), m)
    rows = np.concatenate([r1, r1, r2, r2, r3, 2 * nP + np.arange(K)])
    cols = np.concatenate([Pcol.ravel(), Ecol.ravel(), Pcol.ravel(), Ecol.ravel(), Ecol.ravel(), np.full(K, it)])
    weight = np.full(nP, 1.0 / k) if steps is None else np.asarray(steps, dtype=float).ravel()
    data = np.concatenate([-np.ones(nP), -np.ones(nP), np.ones(nP), -np.ones(nP), weight, -np.ones(K)])
    A_ub = sparse.csr_matrix((data, (rows, cols)), shape=(2 * nP + K, n_var))
    return A_ub, np.concatenate([-c.ravel(), c.ravel(), np.zeros(K)])


def _solve(obj: np.ndarray, A_ub: sparse.csr_matrix, b_ub: np.ndarray, A_eq: sparse.csr_matrix, b_eq: np.ndarray,
           bounds: Any, *, N: int, it: int, t0: float, what: str) -> dict:
    """One Step 3 LP with HiGHS' interior point method (with crossover to a vertex: faster than the simplex
    default on these sparse LPs); α (the first N variables) renormalised onto the simplex, t at index ``it``."""
    res = linprog(obj, A_ub=A_ub, b_ub=b_ub, A_eq=A_eq, b_eq=b_eq, bounds=bounds, method="highs-ipm")
    if res.status != 0:
        raise RuntimeError(f"{what} failed (HiGHS status {res.status}): {res.message}")
    alpha = np.clip(res.x[:N], 0.0, None)
    alpha /= alpha.sum()
    return {"alpha": alpha, "objective": float(res.x[it]), "lp_value": float(res.fun),
            "seconds": time.perf_counter() - t0, "nnz": int(A_eq.nnz + A_ub.nnz), "n_variables": obj.size,
            "n_constraints": int(A_eq.shape[0] + A_ub.shape[0])}


def step3_ut_lp(v_row: Any, cells: Any, k: int, s: int, *, tie_break: float = TIE_BREAK) -> dict:
    """Step 3 with the proxy :math:`\\mathcal U_T` (Eq. (17)) over measures on public points, as one sparse LP.

    Algorithm 1 minimises the certificate :math:`\\mathcal B_{\\mathcal G}(\\mu, v_{DP})` over μ; with
    :math:`\\mathcal G = \\mathcal U_T` that is :math:`\\min_\\mu \\mathcal U_T(v_{DP}, T\\mu)`. Over all of
    :math:`\\mathcal M_P(T_{k,d})` this is intractable (Section 5.4), but over the measures on N public points
    (Section 5.1) it is a linear program of polynomial size: per block a min-cost flow on the king-move
    graph of :math:`T_{k,s}` plus the origin (edge costs 1/k, origin–corner 1/2k) whose supplies
    :math:`v^S_{DP} - (T\\mu)^S` are linear in α,

    .. math:: \\min_{\\alpha \\in \\Delta^{N-1},\\, f \\ge 0} t + \\frac{\\lambda}{K}\\sum_S \\ell_S,\\quad
              \\ell_S = \\sum_e c_e f^S_e \\le t,\\quad
              \\sum_{e \\in \\mathrm{out}(i)} f^S_e - \\sum_{e \\in \\mathrm{in}(i)} f^S_e = (v_{DP})^S_i - (T\\mu)^S_i

    (flow conservation at every cell; the origin absorbs the imbalance). By LP duality with Eq. (17)
    each :math:`\\ell_S` at the optimum is :math:`\\mathcal U_T` of its block. Not in the paper; an option.

    Parameters
    ----------
    v_row : array (K, k^s), noisy query vector, row-major cells
    cells : int array (K, N), row-major cell of public point j in block S
    k, s : int; tie_break : float >= 0

    Returns
    -------
    dict as :func:`step3_lp` (``objective`` = max_S U_T at the optimum).
    """
    v = np.asarray(v_row, dtype=float)
    cells = np.asarray(cells, dtype=np.int64)
    K, m = v.shape
    N = cells.shape[1]
    t0 = time.perf_counter()
    king = king_edges(k, s)  # directed, both directions present
    # edges of one block: king edges (cells 1..m) + origin(0) <-> corner(1)
    tails = np.concatenate([king[:, 0] + 1, [0, 1]])
    heads = np.concatenate([king[:, 1] + 1, [1, 0]])
    cost = np.concatenate([np.full(king.shape[0], 1.0 / k), [0.5 / k, 0.5 / k]])
    E = tails.size
    iF = N
    it = N + K * E
    n_var = it + 1
    # conservation rows for cells 1..m of every block (origin row is implied): out - in + (T mu)_i = v_i
    r_eq, c_eq, d_eq = [np.zeros(N, dtype=np.int64)], [np.arange(N)], [np.ones(N)]
    for bl in range(K):
        base = 1 + bl * m
        col = iF + bl * E + np.arange(E)
        ok_t = tails > 0
        ok_h = heads > 0
        r_eq += [base + tails[ok_t] - 1, base + heads[ok_h] - 1, base + cells[bl]]
        c_eq += [col[ok_t], col[ok_h], np.arange(N)]
        d_eq += [np.ones(ok_t.sum()), -np.ones(ok_h.sum()), np.ones(N)]
    A_eq = sparse.csr_matrix((np.concatenate(d_eq), (np.concatenate(r_eq), np.concatenate(c_eq))),
                             shape=(1 + K * m, n_var))
    b_eq = np.concatenate([[1.0], v.ravel()])
    rows = np.concatenate([np.repeat(np.arange(K), E), np.arange(K)])
    cols = np.concatenate([iF + np.arange(K * E), np.full(K, it)])
    data = np.concatenate([np.tile(cost, K), -np.ones(K)])
    A_ub = sparse.csr_matrix((data, (rows, cols)), shape=(K, n_var))
    obj = np.zeros(n_var)
    obj[it] = 1.0
    obj[iF:it] = np.tile(cost, K) * (tie_break / K)
    return _solve(obj, A_ub, np.zeros(K), A_eq, b_eq, (0, None), N=N, it=it, t0=t0, what="Step 3 (U_T) LP")


def step3_dense_lp(v_path: Any, pos: Any, k: int, *, tie_break: float = TIE_BREAK) -> dict:
    """Reference for :func:`step3_lp`: the same LP with dense cumulative matrices (small cases only).

    .. math:: \\min\\ t + \\frac{\\lambda}{K}\\sum_S \\ell_S,\\quad e_S \\ge \\pm(c_S - C_S\\alpha),\\quad
              (C_S)_{l j} = 1[\\mathrm{pos}_S(z_j) \\le l]

    Returns a dict with ``alpha``, ``objective`` and ``lp_value`` as :func:`step3_lp`.
    """
    v = np.asarray(v_path, dtype=float)
    pos = np.asarray(pos, dtype=np.int64)
    K, m = v.shape
    N = pos.shape[1]
    c = _cum_targets(v)
    n_var = N + K * m + 1
    A = []
    b = []
    for bl in range(K):
        C = (pos[bl][None, :] <= np.arange(m)[:, None]).astype(float)  # (m, N)
        E = np.zeros((m, K * m))
        E[:, bl * m:(bl + 1) * m] = np.eye(m)
        A.append(np.hstack([-C, -E, np.zeros((m, 1))]))
        b.append(-c[bl])
        A.append(np.hstack([C, -E, np.zeros((m, 1))]))
        b.append(c[bl])
        row = np.zeros((1, n_var))
        row[0, N + bl * m: N + (bl + 1) * m] = 1.0 / k
        row[0, -1] = -1.0
        A.append(row)
        b.append([0.0])
    A_ub = np.vstack(A)
    b_ub = np.concatenate(b)
    A_eq = np.zeros((1, n_var))
    A_eq[0, :N] = 1.0
    obj = np.zeros(n_var)
    obj[-1] = 1.0
    obj[N:-1] = tie_break / (K * k)
    res = linprog(obj, A_ub=A_ub, b_ub=b_ub, A_eq=A_eq, b_eq=[1.0], bounds=[(0, None)] * n_var, method="highs")
    if res.status != 0:  # pragma: no cover
        raise RuntimeError(f"dense Step 3 LP failed: {res.message}")
    alpha = np.clip(res.x[:N], 0.0, None)
    return {"alpha": alpha / alpha.sum(), "objective": float(res.x[-1]), "lp_value": float(res.fun)}
