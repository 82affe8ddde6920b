"""Exact min-cost flows with POT's network simplex, and W1 on a regular grid as one of them.

* :func:`transshipment` -- an uncapacitated min-cost flow (transshipment) on a sparse digraph,
  written as a transportation problem (Orden's reduction) and solved exactly by POT [FCG+21].
* :func:`grid_arcs` -- the k^d grid graph whose path metric is the l_inf distance between cell centres
  (king's moves, 3^d - 1 neighbours) or the l1 distance (axis moves, 2d neighbours).
* :func:`solve` -- ``wasserstein1(method="grid")``: both point sets binned on the grid; the transport
  between the two histograms is solved *exactly* as a min-cost flow on the grid graph, so the true
  W1 lies in ``[value - h, value + h]`` with ``h`` the cell's diameter (each binned measure is within
  h/2 of its original). See docs/transport.md, "Grid flows".
"""

from __future__ import annotations

import itertools
import math
import time

import numpy as np
import scipy.sparse as sp

from ..grid import cell_of
from ._common import W1Result, cell_diam, emd_checked

__all__ = ["grid_moves", "grid_arcs", "grid_arc_count", "MAX_GRID_ARCS", "transshipment", "transshipment_pot", "default_grid", "grid_w1_hist",
           "MAX_GRID_CELLS", "solve"]

#: Largest number of grid cells the grid method accepts (arcs are 3^d - 1 or 2d per cell).
MAX_GRID_CELLS = 2_000_000
#: Most arcs of a grid graph (source and target int64 arrays and the costs: about 0.5 GB): the king's moves
#: grow like 3^d, so in 10 or more dimensions even 2 cells per axis pass this (2^10 x 59,048 arcs).
MAX_GRID_ARCS = 20_000_000


def grid_arc_count(k: int, d: int, metric: str) -> int:
    """Arcs of the k^d grid graph counted before it is built (every cell times its moves: an upper bound,
    border cells have fewer): 3^d - 1 king's moves for l_inf, 2d axis moves for l1."""
    return k**d * ((3**d - 1) if metric == "linf" else 2 * d)


def grid_moves(d: int, metric: str) -> list[tuple[int, ...]]:
    if metric == "linf":
        return [m for m in itertools.product((-1, 0, 1), repeat=d) if any(m)]
    return [tuple(s if a == c else 0 for c in range(d)) for a in range(d) for s in (-1, 1)]


def grid_arcs(k: int, d: int, metric: str) -> tuple[np.ndarray, np.ndarray]:
    """Directed arcs (src, dst) of the k^d grid graph (row-major cells): king's moves (3^d - 1
    neighbours) for l_inf, axis moves (2d neighbours) for l1. Every arc has length 1/k in the metric,
    and the graph's path metric equals the metric between cell centres. Refused (ValueError) beyond
    :data:`MAX_GRID_ARCS`, before anything is allocated."""
    arcs = grid_arc_count(k, d, metric)
    if arcs > MAX_GRID_ARCS:
        raise ValueError(f"The 'd' parameter of grid_arcs must leave at most {MAX_GRID_ARCS:.0e} arcs (k^d (3^d - 1) "
                         f"for l_inf, k^d 2d for l1). Got {d} dimensions with {k} cells per axis: about {arcs:.3g} "
                         "arcs; use method='interval' (a proven interval from every row).")
    idx = np.arange(k**d, dtype=np.int64).reshape((k,) * d)
    src, dst = [], []
    for mv in grid_moves(d, metric):
        s = tuple(slice(max(0, -o), k - max(0, o)) for o in mv)
        t = tuple(slice(max(0, o), k - max(0, -o)) for o in mv)
        src.append(idx[s].ravel())
        dst.append(idx[t].ravel())
    if not src:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    return np.concatenate(src), np.concatenate(dst)


def transshipment_pot(supply: np.ndarray, src: np.ndarray, dst: np.ndarray, cost: np.ndarray,
                       what: str) -> tuple[float, np.ndarray, np.ndarray]:
    """Exact min-cost flow (uncapacitated transshipment) with POT's sparse network simplex.

    Minimise :math:`\\sum_e c_e x_e` over :math:`x \\ge 0` with net outflow ``supply[k]`` at every
    node. Written as a transportation problem (Orden's reduction): node k is a source of mass
    ``max(s_k, 0) + B`` and a sink of mass ``max(-s_k, 0) + B``; arc k -> l becomes the pair
    (source k, sink l) with cost c_kl and (source k, sink k) costs 0. With ``B`` = the total positive
    supply (an upper bound on the throughput of any node in an acyclic optimal flow) both problems
    have the same optimum. Returns (value, arc flows, node potentials).
    """
    value, f_arcs, U, _V, _err = transshipment(supply, src, dst, cost, what, slack=1.0)
    return value, f_arcs, U


def transshipment(supply: np.ndarray, src: np.ndarray, dst: np.ndarray, cost: np.ndarray, what: str,
                   slack: float = 1.0) -> tuple[float, np.ndarray, np.ndarray, np.ndarray, float]:
    """Orden's reduction solved by POT (see :func:`transshipment_pot`) with ``B = slack * supply``.

    Returns (value, arc flows, source potentials U, sink potentials V, conservation error
    :math:`\\sum_k |\\text{net outflow}_k - s_k|`). With ``slack > 1`` every self arc (k, k) carries
    flow ``B - inflow_k > 0``, so complementary slackness forces ``U_k + V_k = 0`` at every node:
    ``f = U = -V`` is then one potential on the nodes (the Kantorovich-Rubinstein dual on the arcs).
    The arcs (src, dst) must be distinct and without loops.
    """
    N = supply.size
    s = np.concatenate([src, np.arange(N)])
    t = np.concatenate([dst, np.arange(N)])
    c = np.concatenate([cost, np.zeros(N)])
    M = sp.coo_array((c, (s, t)), shape=(N, N))  # explicit zero costs (self arcs) are kept
    pos = np.maximum(supply, 0.0)
    neg = np.maximum(-supply, 0.0)
    B0 = max(float(pos.sum()), float(neg.sum()))
    if B0 <= 0:
        return 0.0, np.zeros(src.size), np.zeros(N), np.zeros(N), 0.0
    B = slack * B0
    a = pos + B
    bb = neg + B
    bb = bb * (a.sum() / bb.sum())
    try:
        G, log = emd_checked(a, bb, M, what)
    except RuntimeError:
        # POT declares infeasibility when rounding leaves a few ulps on an artificial arc (its test is
        # an exact comparison with 0). The problem is feasible (connected graph, balanced supplies):
        # solve it again with dyadic masses, exactly balanced, so that every flow update is exact.
        total = float(a.sum())
        q = 50 - int(math.ceil(math.log2(total)))
        scale = 2.0**q
        si = np.round(supply * scale)
        si[np.argmax(np.abs(si))] -= si.sum()
        Bi = np.ceil(B * scale)
        a = (np.maximum(si, 0) + Bi) / scale
        bb = (np.maximum(-si, 0) + Bi) / scale
        G, log = emd_checked(a, bb, M, what)
    G = sp.coo_matrix(G)
    gr, gc, gv = np.asarray(G.row, np.int64), np.asarray(G.col, np.int64), np.asarray(G.data, float)
    real = gr != gc
    gr, gc, gv = gr[real], gc[real], gv[real]
    # flows on the real arcs, matched by key (arcs are distinct)
    akey = src.astype(np.int64) * N + dst
    order = np.argsort(akey, kind="stable")
    pos_in = np.searchsorted(akey[order], gr * N + gc)
    pos_in = np.minimum(pos_in, akey.size - 1)
    f_arcs = np.zeros(src.size)
    hit = akey[order][pos_in] == gr * N + gc
    np.add.at(f_arcs, order[pos_in[hit]], gv[hit])
    value = math.fsum(f_arcs * cost)  # correctly rounded: the same bits on every CPU (BLAS dot is not)
    net = np.bincount(src, weights=f_arcs, minlength=N) - np.bincount(dst, weights=f_arcs, minlength=N)
    err = float(np.abs(net - supply).sum()) + float(np.abs(gv[~hit]).sum()) + float(-min(0.0, f_arcs.min(initial=0.0)))
    return value, f_arcs, np.asarray(log["u"], float), np.asarray(log["v"], float), err


def default_grid(d: int) -> int:
    """Cells per axis for the grid method: the largest k with k^d (3^d) <= 6e5 arcs, capped at 256
    (256^2 in 2-D, 28^3 in 3-D, 9^4, 4^5, ...), at least 2; 4096 on the line."""
    if d == 1:
        return 4096
    k = 256 if d <= 2 else int((6e5 / 3**d) ** (1.0 / d))
    return max(2, k)


def grid_w1_hist(a: np.ndarray, b: np.ndarray, k: int, d: int, metric: str) -> tuple[float, dict]:
    """Exact W1 between two histograms on the k^d grid (cell centres), via the grid-graph flow."""
    src, dst = grid_arcs(k, d, metric)
    cost = np.full(src.size, 1.0 / k)
    value, _flows, _ = transshipment_pot(a - b, src, dst, cost, "wasserstein1(method='grid')")
    return value, {"arcs": int(src.size), "cells": int(k**d)}


def solve(X: np.ndarray, Y: np.ndarray, a: np.ndarray, b: np.ndarray, metric: str, owner: str, *,
          grid: int | None = None) -> W1Result:
    """``wasserstein1(method="grid")``: points in [0, 1]^d, metric l_inf or l1."""
    t0 = time.perf_counter()
    d = X.shape[1]
    if metric == "l2":
        raise ValueError(
            f"The 'metric' parameter of {owner} must be 'linf' or 'l1' with method='grid' (the grid "
            f"graph's path metric is not the l2 distance). Got 'l2'."
        )
    if X.min() < 0 or Y.min() < 0 or X.max() > 1 or Y.max() > 1:
        raise ValueError(
            f"The 'X' parameter of {owner} must lie in the unit cube [0, 1]^d with method='grid' "
            f"(pass domain= to map the data). Got coordinates outside [0, 1]."
        )
    k = grid if grid is not None else default_grid(d)
    if k**d > MAX_GRID_CELLS:
        if grid is None:
            raise ValueError(
                f"The 'method' parameter of {owner} must not be 'grid' in dimension {d}: even 2 cells per "
                f"axis make {k}^{d} > 2e6 cells. Got 'grid'; use 'pot' for small sets."
            )
        raise ValueError(f"The 'grid' parameter of {owner} must give at most 2e6 cells (grid^d). "
                         f"Got {k} in dimension {d}.")
    arcs = grid_arc_count(k, d, metric)
    if arcs > MAX_GRID_ARCS:
        raise ValueError(f"The 'method' parameter of {owner} must not be 'grid' with {k} cells per axis in dimension "
                         f"{d}: its graph would have about {arcs:.3g} arcs (more than {MAX_GRID_ARCS:.0e}). Got "
                         "'grid'; use 'interval' (a proven interval from every row) or 'pot' for small sets.")
    size = k**d
    ha = np.bincount(cell_of(X, k), weights=a, minlength=size)
    hb = np.bincount(cell_of(Y, k), weights=b, minlength=size)
    v, det = grid_w1_hist(ha, hb, k, d, metric)
    h = cell_diam(k, d, metric)
    return W1Result(v, max(0.0, v - h), v + h, "grid", False, True, 1, time.perf_counter() - t0,
                    {**det, "grid": k, "h": h})
