r"""Compiled kd-tree kernels: the exact c-transform over all pairs without forming them.

For points :math:`x_1..x_n`, :math:`y_1..y_m` and prices :math:`p_j`, :func:`c_knn` returns for every
i the k smallest values of :math:`c(x_i, y_j) + p_j` over *all* j (and their j), by an exact branch and
bound over a kd-tree of Y whose nodes carry their bounding box and the minimum price below them (lower
bound of a node = box distance + min price). With k = 1 and prices :math:`p = -v` this is the
c-transform :math:`\psi_i = \min_j c(x_i, y_j) - v_j`, so :math:`(\psi, v)` is dual feasible over
every pair; larger k lists the most violated pairs of each row.

:func:`heap_tree` builds the tree (a balanced kd-tree laid out as a heap: node h has children 2h+1,
2h+2; leaves of ``leaf`` points, padding marked -1). Used by the ground metrics of
:mod:`dpsynth_core.transport.metrics`.
"""

from __future__ import annotations

import numba as nb
import numpy as np

LINF, L1, L2 = 0, 1, 2


@nb.njit(cache=True, inline="always")
def _dist(x, y, metric):
    s = 0.0
    if metric == LINF:
        for t in range(x.shape[0]):
            a = abs(x[t] - y[t])
            if a > s:
                s = a
        return s
    if metric == L1:
        for t in range(x.shape[0]):
            s += abs(x[t] - y[t])
        return s
    for t in range(x.shape[0]):
        a = x[t] - y[t]
        s += a * a
    return np.sqrt(s)


@nb.njit(cache=True, inline="always")
def _boxdist(x, lo, hi, metric):
    s = 0.0
    for t in range(x.shape[0]):
        g = lo[t] - x[t]
        h = x[t] - hi[t]
        if h > g:
            g = h
        if g < 0.0:
            g = 0.0
        if metric == LINF:
            if g > s:
                s = g
        elif metric == L1:
            s += g
        else:
            s += g * g
    if metric == L2:
        return np.sqrt(s)
    return s


@nb.njit(cache=True)
def node_pmin(price, idxl, L):
    """min price per heap node (leaves from the points, padding = +inf), bottom-up."""
    nleaf = idxl.shape[0]
    total = 2 * nleaf - 1
    pm = np.full(total, np.inf)
    base = nleaf - 1
    for t in range(nleaf):
        m = np.inf
        for s in range(idxl.shape[1]):
            j = idxl[t, s]
            if j >= 0 and price[j] < m:
                m = price[j]
        pm[base + t] = m
    for h in range(base - 1, -1, -1):
        a = pm[2 * h + 1]
        b = pm[2 * h + 2]
        pm[h] = a if a < b else b
    return pm


@nb.njit(cache=True)
def _topk(x, metric, lo, hi, pm, Yl, idxl, price, base, stack, bv, bi, tau):
    """The len(bv) smallest c(x, y_j) + p_j (ascending) into bv / bi by depth-first branch and bound
    (nearer child first), pruning nodes whose bound is >= (current K-th value) - tau; tau = 0: exact.
    Returns the number of nodes visited."""
    K = bv.shape[0]
    for q in range(K):
        bv[q] = np.inf
        bi[q] = -1
    leaf = idxl.shape[1]
    stack[0] = 0
    sp = 1
    nv = 0
    while sp > 0:
        sp -= 1
        h = stack[sp]
        nv += 1
        lb = _boxdist(x, lo[h], hi[h], metric) + pm[h]
        if lb >= bv[K - 1] - tau:
            continue
        if h >= base:
            t = h - base
            for s in range(leaf):
                j = idxl[t, s]
                if j < 0:
                    continue
                val = _dist(x, Yl[t, s], metric) + price[j]
                if val < bv[K - 1]:
                    q = K - 1
                    while q > 0 and bv[q - 1] > val:
                        bv[q] = bv[q - 1]
                        bi[q] = bi[q - 1]
                        q -= 1
                    bv[q] = val
                    bi[q] = j
        else:
            c1 = 2 * h + 1
            c2 = 2 * h + 2
            l1 = _boxdist(x, lo[c1], hi[c1], metric) + pm[c1]
            l2 = _boxdist(x, lo[c2], hi[c2], metric) + pm[c2]
            if l1 <= l2:
                stack[sp] = c2
                stack[sp + 1] = c1
            else:
                stack[sp] = c1
                stack[sp + 1] = c2
            sp += 2
    return nv


@nb.njit(cache=True, parallel=True)
def c_knn(X, k, tau, metric, lo, hi, pm, Yl, idxl, price):
    """For every i: the k smallest values of c(x_i, y_j) + p_j over all j (ascending) and their j,
    by branch and bound over the kd-tree (:func:`_topk`), pruning nodes whose bound is >= (k-th best so
    far) - tau. Any j not returned has value >= (k-th returned value) - tau >= (first value) - tau, so
    ``vals[:, 0] - tau`` is a lower bound of the c-transform min_j c(x_i, y_j) + p_j. Also returns the
    number of tree nodes visited per row."""
    n = X.shape[0]
    base = idxl.shape[0] - 1
    depth = 0
    while (1 << depth) < idxl.shape[0]:
        depth += 1
    vals = np.empty((n, k))
    inds = np.empty((n, k), dtype=np.int64)
    visits = np.zeros(n, dtype=np.int64)
    for i in nb.prange(n):
        stack = np.empty(2 * depth + 4, dtype=np.int64)
        visits[i] = _topk(X[i], metric, lo, hi, pm, Yl, idxl, price, base, stack, vals[i], inds[i], tau)
    return vals, inds, visits


def heap_tree(Y: np.ndarray, leaf: int = 16):
    """A balanced kd-tree over the rows of Y, built level by level (vectorised median splits on the
    widest axis of each node) and laid out as a heap for :func:`c_knn`.

    Returns (lo, hi, Yl, idxl, L): per heap node its bounding box (``lo``, ``hi``, shape
    (2^(L+1) - 1, d); padding-only nodes get an empty box), the points of each leaf ``Yl`` (2^L, leaf, d)
    and their row numbers ``idxl`` (-1 for padding), and the depth L."""
    m, d = Y.shape
    L = max(0, int(np.ceil(np.log2(max(1, m) / leaf))))
    size = leaf * 2**L
    perm = np.concatenate([np.arange(m), np.full(size - m, -1)])
    for lev in range(L):
        P = perm.reshape(2**lev, -1)
        Pc = np.where(P < 0, P.max(axis=1, keepdims=True).clip(0), P)
        pts = Y[Pc]  # (nodes, seg, d); padding copies an existing point of its node
        ax = (pts.max(axis=1) - pts.min(axis=1)).argmax(axis=1)
        key = np.take_along_axis(pts, ax[:, None, None], axis=2)[:, :, 0]
        key = np.where(P < 0, np.inf, key)
        perm = np.take_along_axis(P, np.argsort(key, axis=1, kind="stable"), axis=1).ravel()
    valid = perm >= 0
    safe = np.where(valid, perm, 0)
    Yl = np.ascontiguousarray(Y[safe].reshape(2**L, leaf, d))
    lo = np.where(valid[:, None], Y[safe], np.inf).reshape(2**L, leaf, d).min(axis=1)
    hi = np.where(valid[:, None], Y[safe], -np.inf).reshape(2**L, leaf, d).max(axis=1)
    los, his = [lo], [hi]
    for _ in range(L):
        lo = np.minimum(lo[0::2], lo[1::2])
        hi = np.maximum(hi[0::2], hi[1::2])
        los.insert(0, lo)
        his.insert(0, hi)
    return (np.ascontiguousarray(np.concatenate(los)), np.ascontiguousarray(np.concatenate(his)), Yl,
            np.ascontiguousarray(perm.reshape(2**L, leaf).astype(np.int64)), L)
