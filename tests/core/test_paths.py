"""Paths through grid cells and point sets ([BSV22, Sections 6–7]; [DLS+24, Appendix C.1])."""

import numpy as np
import pytest
from scipy import sparse

from dpsynth_core import paths
from dpsynth_core.grid import cell_centres, cell_of


def _coords(order, k, d):
    """Row-major cell index -> integer coordinates (axis 0 most significant), as in grid.py."""
    c = np.empty((order.size, d), dtype=np.int64)
    rest = np.asarray(order).copy()
    for a in range(d - 1, -1, -1):
        c[:, a] = rest % k
        rest //= k
    return c


def _assert_axis_neighbour_path(order, k, d):
    assert order.dtype == np.int64
    assert np.array_equal(np.sort(order), np.arange(k**d)), "every cell exactly once"
    steps = np.abs(np.diff(_coords(order, k, d), axis=0))
    # axis neighbours: exactly one coordinate changes, by one (so also l_inf distance 1)
    assert np.all(steps.sum(axis=1) == 1) and np.all(steps.max(axis=1) == 1)
    # the same through grid.py's centres: consecutive centres are 1/k apart in l_inf and l1
    C = cell_centres(k, d)[order]
    assert np.array_equal(cell_of(C, k), order)
    if order.size > 1:
        dif = np.abs(np.diff(C, axis=0))
        assert np.allclose(dif.max(axis=1), 1.0 / k) and np.allclose(dif.sum(axis=1), 1.0 / k)


@pytest.mark.parametrize("d,ks", [(1, (1, 2, 7)), (2, (1, 2, 3, 5, 8)), (3, (2, 3, 4)), (4, (2, 3))])
def test_snake_visits_every_cell_with_neighbouring_steps(d, ks):
    for k in ks:
        _assert_axis_neighbour_path(paths.snake_order(k, d), k, d)


def test_snake_small_examples():
    assert paths.snake_order(3, 2).tolist() == [0, 1, 2, 5, 4, 3, 6, 7, 8]
    assert paths.snake_order(2, 3).tolist() == [0, 1, 3, 2, 6, 7, 5, 4]


@pytest.mark.parametrize("d,ks", [(1, (1, 4)), (2, (1, 2, 4, 8, 32)), (3, (2, 4, 8)), (4, (2, 4))])
def test_hilbert_visits_every_cell_with_neighbouring_steps(d, ks):
    for k in ks:
        order = paths.hilbert_order(k, d)
        _assert_axis_neighbour_path(order, k, d)
        if k > 1 and d > 1:
            c = _coords(order, k, d)
            assert np.all(c[0] == 0)  # starts in a corner ...
            assert np.all((c[-1] == 0) | (c[-1] == k - 1))  # ... and ends in a corner


def test_hilbert_is_local():
    # The Hilbert curve keeps each aligned 2x2 (and 4x4) block contiguous: positions 4j..4j+3 lie in one
    # aligned 2x2 block. A snake does not.
    k = 16
    c = _coords(paths.hilbert_order(k, 2), k, 2) // 2
    blocks = c.reshape(-1, 4, 2)
    assert np.all(blocks == blocks[:, :1, :])
    cs = _coords(paths.snake_order(k, 2), k, 2) // 2
    assert not np.all(cs.reshape(-1, 4, 2) == cs.reshape(-1, 4, 2)[:, :1, :])


@pytest.mark.parametrize("kind", ["snake", "hilbert"])
def test_grid_path_lengths(kind):
    for k, d in [(4, 2), (8, 3), (16, 1)]:
        gp = paths.grid_path(kind, k, d)
        assert gp.length == pytest.approx((k**d - 1) / k)
        assert np.allclose(gp.positions, np.arange(k**d) / k)
        assert gp.length == pytest.approx(paths.path_length(cell_centres(k, d), gp.order))
        assert gp.to_dict()["cells"] == k**d


def _prim(P, p):
    """Brute-force Prim's MST weight (O(N^2)), an independent reference."""
    n = P.shape[0]
    D = np.linalg.norm(P[:, None, :] - P[None, :, :], ord=p, axis=2)
    in_tree = np.zeros(n, bool)
    in_tree[0] = True
    best = D[0].copy()
    total = 0.0
    for _ in range(n - 1):
        best[in_tree] = np.inf
        j = int(np.argmin(best))
        total += best[j]
        in_tree[j] = True
        best = np.minimum(best, D[j])
    return total


@pytest.mark.parametrize("metric,p", [("linf", np.inf), ("l2", 2), ("l1", 1)])
def test_mst_tour_visits_every_point_and_is_at_most_twice_the_mst(metric, p):
    rng = np.random.default_rng(3)
    for n, d in [(1, 2), (2, 1), (50, 2), (300, 3)]:
        P = rng.random((n, d))
        order = paths.mst_order(P, metric)
        assert np.array_equal(np.sort(order), np.arange(n)) and order[0] == 0
        w = paths.mst_weight(P, metric)
        assert w == pytest.approx(_prim(P, p), rel=1e-12, abs=1e-12)
        assert paths.path_length(P, order, metric) <= 2 * w + 1e-12


def test_mst_with_duplicate_points_and_start():
    P = np.array([[0.1, 0.1], [0.1, 0.1], [0.9, 0.9], [0.5, 0.5], [0.5, 0.5]])
    order = paths.mst_order(P, start=2)
    assert order[0] == 2 and np.array_equal(np.sort(order), np.arange(5))
    assert paths.mst_weight(P) == pytest.approx(0.8)
    assert paths.path_length(P, order) <= 2 * 0.8 + 1e-12


def test_mst_grid_path():
    k, d = 8, 2
    gp = paths.grid_path("mst", k, d)
    assert np.array_equal(np.sort(gp.order), np.arange(k**d))
    mst = (k**d - 1) / k  # every spanning tree of unit steps
    assert mst <= gp.length <= 2 * mst + 1e-12
    assert np.all(np.diff(gp.positions) >= 1.0 / k - 1e-12)
    assert gp.length == pytest.approx(paths.path_length(cell_centres(k, d), gp.order))


def test_path_positions():
    P = np.array([[0.0, 0.0], [0.3, 0.1], [0.3, 0.5]])
    assert np.allclose(paths.path_positions(P, np.array([0, 1, 2])), [0.0, 0.3, 0.7])
    assert np.allclose(paths.path_positions(P, np.array([0, 1, 2]), "l1"), [0.0, 0.4, 0.8])
    assert np.allclose(paths.path_positions(P, np.array([2, 0, 1]), "l2"), [0.0, np.hypot(0.3, 0.5),
                                                                             np.hypot(0.3, 0.5) + np.hypot(0.3, 0.1)])


def test_validation_rules():
    with pytest.raises(ValueError, match="The 'k' parameter of snake_order must be an int in \\[1, inf\\)"):
        paths.snake_order(0, 2)
    with pytest.raises(ValueError, match="The 'd' parameter of snake_order must be an int in \\[1, 32\\]"):
        paths.snake_order(2, 0)
    with pytest.raises(ValueError, match="The 'k' parameter of snake_order must be such that k\\^d <= 2\\^24"):
        paths.snake_order(5000, 2)
    with pytest.raises(ValueError, match="The 'k' parameter of hilbert_order must be a power of two"):
        paths.hilbert_order(6, 2)
    with pytest.raises(TypeError, match="The 'k' parameter of hilbert_order must be an int"):
        paths.hilbert_order("4", 2)
    with pytest.raises(ValueError, match="The 'kind' parameter of grid_path must be one of 'snake', 'hilbert', 'mst'"):
        paths.grid_path("zigzag", 4, 2)
    with pytest.raises(ValueError, match="The 'metric' parameter of grid_path must be one of"):
        paths.grid_path("snake", 4, 2, metric="l3")
    with pytest.raises(ValueError, match="The 'metric' parameter of mst_order must be one of"):
        paths.mst_order(np.zeros((3, 2)), "cosine")
    with pytest.raises(ValueError, match="The 'start' parameter of mst_order must be an int in \\[0, 2\\]"):
        paths.mst_order(np.zeros((3, 2)), start=3)
    with pytest.raises(ValueError, match="The 'points' parameter of mst_order must be at most 2000 points"):
        paths.mst_order(np.arange(2001.0)[:, None])
    with pytest.raises(ValueError, match="The 'points' parameter of mst_order must contain only finite values"):
        paths.mst_order(np.array([[0.0], [np.nan]]))
    with pytest.raises(TypeError, match="The 'graph' parameter of mst_order must be a scipy sparse matrix"):
        paths.mst_order(np.zeros((3, 1)), graph=np.ones((3, 3)))
    with pytest.raises(ValueError, match="The 'graph' parameter of mst_order must connect all 3 points"):
        paths.mst_order(np.arange(3.0)[:, None], graph=sparse.csr_matrix(([1.0], ([0], [1])), shape=(3, 3)))
    with pytest.raises(ValueError, match="The 'order' parameter of path_positions must be an int array of 3"):
        paths.path_positions(np.zeros((3, 1)), np.array([0, 1]))
    with pytest.raises(ValueError, match="The 'metric' parameter of mst_weight must be one of"):
        paths.mst_weight(np.zeros((3, 1)), "x")
