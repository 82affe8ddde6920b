import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpsynth_core.partition import (
    MixedSchedule,
    axis_bits,
    cell_bounds,
    cell_codes,
    count_tree,
    deltas,
    diameters,
    leaf_counts,
)


def _codes_by_bits(U, depth):
    """Slow reference: follow the splits one by one (cell t halves along axis t mod d)."""
    n, d = U.shape
    lo, hi = np.zeros((n, d)), np.ones((n, d))
    code = np.zeros(n, dtype=np.int64)
    for t in range(depth):
        a = t % d
        mid = (lo[:, a] + hi[:, a]) / 2
        right = U[:, a] >= mid
        code = code * 2 + right
        lo[right, a] = mid[right]
        hi[~right, a] = mid[~right]
    return code


@pytest.mark.parametrize("d,depth", [(1, 6), (2, 7), (3, 8), (5, 11), (2, 0)])
def test_codes_match_slow_reference(d, depth):
    U = np.random.default_rng(d * 100 + depth).random((2000, d))
    assert np.array_equal(cell_codes(U, depth), _codes_by_bits(U, depth))
    tree = count_tree(U, depth)
    assert np.array_equal(tree[-1], np.bincount(_codes_by_bits(U, depth), minlength=2**depth))


@given(st.integers(1, 4), st.integers(0, 10), st.integers(0, 2**31 - 1))
def test_tree_levels_are_consistent(d, depth, seed):
    U = np.random.default_rng(seed).random((300, d))
    tree = count_tree(U, depth)
    assert len(tree) == depth + 1
    assert tree[0].tolist() == [300]
    for j in range(depth):
        assert tree[j].size == 2**j
        assert np.array_equal(tree[j], tree[j + 1][0::2] + tree[j + 1][1::2])


def test_points_lie_in_their_cells_and_boundary_goes_last():
    U = np.array([[1.0, 1.0], [0.0, 0.0], [0.5, 0.25], [0.999, 0.0]])
    codes = cell_codes(U, 6)
    lo, hi = cell_bounds(6, 2, codes)
    inside = np.all((U >= lo) & ((U < hi) | (hi == 1.0)), axis=1)
    assert inside.all()
    assert codes[0] == 2**6 - 1 and codes[1] == 0


def test_cell_bounds_tile_the_cube():
    lo, hi = cell_bounds(5, 3)
    assert np.isclose(np.prod(hi - lo, axis=1).sum(), 1.0)
    assert lo.shape == (32, 3)
    # children halve the parent along axis j mod d
    plo, phi = cell_bounds(4, 3)
    assert np.allclose(lo[0::2], plo)
    assert np.allclose(hi[1::2], phi)


def test_geometry():
    assert diameters(6, 2).tolist() == [1, 1, 0.5, 0.5, 0.25, 0.25, 0.125]
    # Δ_{j-1} for j=0..4 with d=2: Δ_{-1}=Δ_0=1, Δ_1=2·1, Δ_2=4·0.5, Δ_3=8·0.5
    assert deltas(4, 2).tolist() == [1, 1, 2, 2, 4]
    assert deltas(3, 1).tolist() == [1, 1, 1, 1]
    assert axis_bits(5, 2).tolist() == [3, 2]
    for j in range(8):
        lo, hi = cell_bounds(j, 3)
        assert np.allclose((hi - lo).max(axis=1), diameters(j, 3)[j])


def test_leaf_counts_equals_last_level():
    U = np.random.default_rng(0).random((1000, 2))
    assert np.array_equal(leaf_counts(U, 9), count_tree(U, 9)[-1])


def test_validation():
    with pytest.raises(ValueError, match="'depth' parameter of leaf_counts must be an int in \\[0, 26\\]"):
        leaf_counts(np.zeros((3, 2)), 27)
    with pytest.raises(ValueError, match="'depth'"):
        count_tree(np.zeros((3, 2)), -1)
    with pytest.raises(TypeError, match="'depth'"):
        cell_codes(np.zeros((3, 2)), "3")
    with pytest.raises(ValueError, match="'U' parameter"):
        leaf_counts(np.full((3, 2), np.nan), 3)
    with pytest.raises(ValueError, match="'level' parameter of cell_bounds"):
        cell_bounds(-1, 2)


def test_mixed_empty_cells_are_kept_per_schedule_and_match_the_leaves():
    """The structurally empty cells are public (the schedule alone decides them), so they are computed once per
    schedule: the same read-only masks come back, and they are the cells whose every leaf has a category index
    beyond a column's list (3 and 5 categories: indices 3 and 5-7 do not exist)."""
    sched = MixedSchedule(2, (3, 5), (1.0, 1.0), 9)
    first, again = sched.empty(), MixedSchedule(2, (3, 5), (1.0, 1.0), 9).empty()
    assert all(a is b for a, b in zip(first, again, strict=True))
    assert not any(m.flags.writeable for m in first)
    _, _, _, count = sched.leaf_parts(np.arange(1 << 9, dtype=np.int64))
    leaf = (count == 0).any(axis=1)
    assert leaf.any() and not leaf.all()
    np.testing.assert_array_equal(first[-1], leaf)
    for j in range(9):  # a cell is empty when both its halves are
        np.testing.assert_array_equal(first[j], first[j + 1][0::2] & first[j + 1][1::2])
