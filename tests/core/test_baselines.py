import numpy as np
import pytest

from dpsynth_core import Domain, run
from dpsynth_core.grid import cell_centres, grid_counts, largest_remainder, points_in_cells


def test_largest_remainder_sums_and_is_within_one():
    rng = np.random.default_rng(0)
    for _ in range(50):
        w = rng.random(37) * (rng.random(37) > 0.3)
        m = int(rng.integers(1, 500))
        c = largest_remainder(w, m)
        assert c.sum() == m and np.all(c >= 0)
        assert np.all(np.abs(c - w * m / w.sum()) < 1.0)
    assert largest_remainder(np.zeros(3), 5).sum() == 0


def test_points_in_cells_land_in_their_cells():
    rng = np.random.default_rng(1)
    counts = rng.integers(0, 4, 5**3)
    P = points_in_cells(counts, 5, 3, rng)
    assert np.array_equal(grid_counts(P, 5), counts)
    C = points_in_cells(counts, 5, 3, rng, placement="center")
    assert np.allclose(np.unique(C, axis=0), cell_centres(5, 3)[counts > 0])


def test_flat_histogram_privacy_parameters():
    X = np.random.default_rng(0).random((4000, 2))
    rel = run("flat_histogram", X, Domain.unit(2), epsilon=1.0, rng=0)
    # add/remove, no public n: 5% on the size, the rest on the counts with sensitivity 1
    assert rel.ledger.entries[0].epsilon == pytest.approx(0.05)
    assert rel.params["noise_scale"] == pytest.approx(1 / 0.95)
    rel = run("flat_histogram", X, Domain.unit(2), epsilon=1.0, neighbours="replace", bins=10, rng=0)
    assert rel.params["noise_scale"] == pytest.approx(2.0) and len(rel.ledger) == 1
    assert rel.synthetic.shape == (4000, 2)  # n is public under replace


def test_flat_histogram_at_huge_epsilon_reproduces_the_histogram():
    X = np.random.default_rng(0).random((1000, 2))
    rel = run("flat_histogram", X, Domain.unit(2), epsilon=1e6, bins=8, n_public=1000, rng=0)
    assert np.array_equal(grid_counts(rel.synthetic, 8), grid_counts(X, 8))


def test_flat_histogram_validation():
    X = np.random.default_rng(0).random((10, 2))
    with pytest.raises(ValueError, match="'bins' parameter of flat_histogram"):
        run("flat_histogram", X, Domain.unit(2), epsilon=1.0, bins=0)
    with pytest.raises(ValueError, match="'n_synthetic' parameter of flat_histogram"):
        run("flat_histogram", X, Domain.unit(2), epsilon=1.0, bins=4, n_synthetic=0)
    with pytest.raises(ValueError, match="2\\^22 cells"):
        run("flat_histogram", X, Domain.unit(2), epsilon=1.0, bins=4096)


def test_per_point_laplace_noise_scale():
    X = np.full((20000, 2), 0.5)
    rel = run("per_point_laplace", X, Domain.unit(2), epsilon=20.0, rng=0)
    # scale d/ε = 0.1; clamping at 0.5 ± 0.5 rarely binds (P ≈ e^{-5}/2 per side).
    # The s.e. of the mean absolute deviation is ~0.1/√20000; tolerance 0.005 is > 5 s.e.
    assert abs(np.mean(np.abs(rel.synthetic - 0.5)) - 0.1) < 0.005
    assert rel.params["noise_scale"] == pytest.approx(0.1)
