r"""Compiled kernels for the certified exact W1 between two clouds of equal size.

With uniform weights and n = m points on each side, W1 is the optimal assignment cost divided by n
(the transport polytope's vertices are permutation matrices, Birkhoff). :func:`dpsynth_core.transport.sparse.assignment_w1`
solves it with Bertsekas' forward auction [Ber88] and epsilon-scaling on the *complete* bipartite graph,
which is never formed:

* :func:`auction_full` -- person i (a point of X) bids for the object j (a point of Y) minimising
  :math:`c(x_i, y_j) + p_j`, raising :math:`p_j` by the gap to its second best plus
  :math:`\varepsilon`; the best and second best over *all* j come from an exact branch and bound over
  a kd-tree of Y whose nodes carry their bounding box and the minimum price below them (lower bound of
  a node = box distance + min price). At termination every person is within :math:`\varepsilon` of
  its best object (epsilon-complementary slackness).
* :func:`c_knn` -- the k smallest :math:`c(x_i, y_j) + p_j` over all j for every i (parallel over i);
  with k = 1 and tau = 0 the exact c-transform :math:`f_i = \min_j c(x_i, y_j) + p_j`, so that
  :math:`(f, -p)` is dual feasible over every pair and
  :math:`\frac1n \sum_i f_i - \frac1n \sum_j p_j \le W_1` -- the certificate's lower bound.

The tree itself is the kd-tree of :mod:`dpsynth_core.transport.sparse` laid out as a heap.
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


@nb.njit(cache=True)
def auction_full(X, metric, lo, hi, pm, Yl, idxl, leaf_of, price, person_obj, obj_person, eps, big, max_bids,
                 cache_j, cache_c, cache_lb):
    """Gauss-Seidel forward auction at fixed eps on the *complete* bipartite graph X x Y.

    Each person keeps a cache of C objects (cache_j, their costs cache_c) and a lower bound cache_lb on
    c + p of every other object, taken when the cache was filled: the (C+1)-th smallest value of an
    exact kd-tree search (node bound = box distance + min price below). Prices only increase, so the
    bound stays valid for the rest of the run (across eps phases too); when the second-best cached
    value is <= cache_lb the best and second best over *all* objects are in the cache, otherwise the
    cache is refilled by a new search. A stale node minimum is still a lower bound (prices only rise);
    it is refreshed along the path of the raised object after every bid.

    Returns (bids, searches), bids = -1 when max_bids was reached."""
    n = person_obj.shape[0]
    C = cache_j.shape[1]
    nleaf = idxl.shape[0]
    leaf = idxl.shape[1]
    base = nleaf - 1
    depth = 0
    while (1 << depth) < nleaf:
        depth += 1
    stack = np.empty(2 * depth + 4, dtype=np.int64)
    bv = np.empty(C + 1)
    bi = np.empty(C + 1, dtype=np.int64)
    queue = np.empty(n, dtype=np.int64)
    head = 0
    size = 0
    for i in range(n):
        if person_obj[i] < 0:
            queue[(head + size) % n] = i
            size += 1
    bids = 0
    searches = 0
    while size > 0:
        i = queue[head]
        head = (head + 1) % n
        size -= 1
        best = np.inf
        second = np.inf
        bj = -1
        for q in range(C):
            j = cache_j[i, q]
            if j < 0:
                continue
            val = cache_c[i, q] + price[j]
            if val < best:
                second = best
                best = val
                bj = j
            elif val < second:
                second = val
        if not second <= cache_lb[i]:
            _topk(X[i], metric, lo, hi, pm, Yl, idxl, price, base, stack, bv, bi, 0.0)
            searches += 1
            for q in range(C):
                j = bi[q]
                cache_j[i, q] = j
                cache_c[i, q] = bv[q] - price[j] if j >= 0 else np.inf
            cache_lb[i] = bv[C]
            best = bv[0]
            second = bv[1]
            bj = bi[0]
        if bj < 0:
            return -1, searches
        if second == np.inf:
            second = best + big
        price[bj] += second - best + eps
        # refresh the node minima on bj's path
        t = leaf_of[bj]
        m = np.inf
        for s in range(leaf):
            j = idxl[t, s]
            if j >= 0 and price[j] < m:
                m = price[j]
        h = base + t
        pm[h] = m
        while h > 0:
            h = (h - 1) // 2
            a = pm[2 * h + 1]
            b = pm[2 * h + 2]
            nm = a if a < b else b
            if nm == pm[h]:
                break
            pm[h] = nm
        prev = obj_person[bj]
        obj_person[bj] = i
        person_obj[i] = bj
        if prev >= 0:
            person_obj[prev] = -1
            queue[(head + size) % n] = prev
            size += 1
        bids += 1
        if bids >= max_bids:
            return -1, searches
    return bids, searches
