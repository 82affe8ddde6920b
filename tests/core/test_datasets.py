"""Tests of dpsynth_core.datasets: generators and bundled real data."""

import math

import numpy as np
import pytest

from dpsynth_core import Domain
from dpsynth_core import datasets as D
from dpsynth_core.datasets import (
    GENERATORS,
    REAL_DATASETS,
    Dataset,
    affine_plane,
    clustered_ball,
    corner,
    default_dataset,
    gaussian_mixture,
    mixture_1d,
    ring,
    uniform_cube,
)
from dpsynth_core.schema import ParamSpec


def _defaults(name):
    return {p.name: p.default for p in GENERATORS[name][1]}


# ------------------------------------------------------------------------------ generators
@pytest.mark.parametrize("name", sorted(GENERATORS))
def test_generator_schema_defaults_shape_and_domain(name):
    func, schema = GENERATORS[name]
    for p in schema:
        assert isinstance(p, ParamSpec) and p.help, p
        assert p.check(p.default, name) == p.default  # every default is inside its own range
    params = _defaults(name)
    params["n"] = 300
    ds = func(**params)
    assert isinstance(ds, Dataset) and ds.name == name and ds.description
    assert ds.X.shape == (300, ds.domain.d) and ds.n == 300
    assert ds.domain.contains(ds.X).all()
    assert not ds.X.flags.writeable  # a frozen value: the cached dashboard copy cannot be mutated
    if ds.labels is not None:
        assert ds.labels.shape == (300,)


@pytest.mark.parametrize("name", sorted(GENERATORS))
def test_generator_determinism_and_public_domain(name):
    func = GENERATORS[name][0]
    params = _defaults(name) | {"n": 200}
    a = func(**(params | {"rng": 3}))
    b = func(**(params | {"rng": 3}))
    c = func(**(params | {"rng": 4}))
    np.testing.assert_array_equal(a.X, b.X)
    assert not np.array_equal(a.X, c.X)
    # The domain is fixed by the parameters, not by the sample: two samples share it.
    assert a.domain == c.domain
    gen = np.random.default_rng(3)
    np.testing.assert_array_equal(func(**(params | {"rng": gen})).X, a.X)


def test_shapes_with_explicit_parameters():
    assert uniform_cube(7, d=5, rng=0).X.shape == (7, 5)
    assert gaussian_mixture(9, d=3, k=4, rng=0).X.shape == (9, 3)
    assert corner(4, d=6, rng=0).X.shape == (4, 6)
    assert affine_plane(11, D=7, d_prime=3, rng=0).X.shape == (11, 7)
    assert mixture_1d(5, k=2, rng=0).X.shape == (5, 1)
    assert ring(1, rng=0).X.shape == (1, 2)
    assert clustered_ball(3, rng=0).X.shape == (3, 2)


def test_gaussian_mixture_default_is_two_separated_clusters():
    ds = gaussian_mixture(4000, rng=1)
    assert ds.domain == Domain.unit(2, ("x0", "x1"))
    assert set(np.unique(ds.labels)) == {0, 1}
    for lab, centre in ((0, 0.2), (1, 0.8)):
        pts = ds.X[ds.labels == lab]
        # ~2000 points with sd 0.05: the standard error of the mean is ~0.0011 per coordinate, and
        # clipping at 4 sd moves it by < 1e-5; 0.01 is about 9 standard errors.
        np.testing.assert_allclose(pts.mean(axis=0), centre, atol=0.01)
    # Balanced weights: 2000 ± 4 sd (sd = sqrt(4000 / 4) ≈ 32).
    assert abs(int((ds.labels == 0).sum()) - 2000) < 130


def test_gaussian_mixture_options():
    ds = gaussian_mixture(50, d=2, k=2, spread=0.0, weights=[1.0, 0.0], rng=0)
    assert (ds.labels == 0).all() and np.allclose(ds.X, 0.2)
    C = np.array([[0.1, 0.9], [0.5, 0.5], [0.9, 0.1]])
    ds = gaussian_mixture(30, k=3, spread=0.0, centers=C, rng=0)
    np.testing.assert_array_equal(ds.X, C[ds.labels])
    ds = gaussian_mixture(30, d=3, k=5, spread=0.0, centers="random", rng=0)
    assert ((ds.X >= 0.15) & (ds.X <= 0.85)).all()
    assert np.allclose(gaussian_mixture(5, k=1, spread=0.0, rng=0).X, 0.5)
    assert np.array_equal(gaussian_mixture(5, centers=None, rng=2).X, gaussian_mixture(5, rng=2).X)
    # Heavy spread: the clipping keeps the stated domain honest.
    wide = gaussian_mixture(500, spread=1.0, rng=0)
    assert wide.domain.contains(wide.X).all() and (wide.X == 0).any() and (wide.X == 1).any()


def test_ring_radii_and_area_uniformity():
    ds = ring(4000, radius=0.3, width=0.1, rng=0)
    r = np.hypot(ds.X[:, 0] - 0.5, ds.X[:, 1] - 0.5)
    assert (r >= 0.25 - 1e-12).all() and (r <= 0.35 + 1e-12).all()
    # Area-uniform: R^2 is uniform on [0.25^2, 0.35^2], so half the points have R^2 below the
    # midpoint; 4000 Bernoulli(1/2): sd 0.0079, tolerance 0.04 is about 5 sd.
    mid = (0.25**2 + 0.35**2) / 2
    assert abs(np.mean(r**2 < mid) - 0.5) < 0.04
    circle = ring(100, radius=0.2, width=0.0, rng=0)
    np.testing.assert_allclose(np.hypot(*(circle.X - 0.5).T), 0.2, atol=1e-12)


def test_corner():
    ds = corner(500, d=3, size=0.1, rng=0)
    assert (ds.X >= 0).all() and (ds.X <= 0.1).all()
    assert ds.domain == Domain.unit(3, ("x0", "x1", "x2"))
    assert (corner(10, size=0.0, rng=0).X == 0).all()


def test_clustered_ball_matches_seed_003():
    ds = clustered_ball(2000, rng=0)  # Figure 4, left: radius 0.02 around the origin, positive quadrant
    assert ds.domain == Domain([-1, -1], [1, 1], names=("x0", "x1"))
    r = np.hypot(ds.X[:, 0], ds.X[:, 1])
    assert (r <= 0.02 + 1e-12).all() and (ds.X >= 0).all()
    # Uniform on the quarter disc: P(R <= 0.02 / sqrt 2) = 1/2; 2000 draws, sd 0.011, tol ~4.5 sd.
    assert abs(np.mean(r <= 0.02 / math.sqrt(2)) - 0.5) < 0.05
    # Section 6: the whole positive quarter of the unit disc.
    q = clustered_ball(500, radius=1.0, rng=0)
    assert (np.hypot(*q.X.T) <= 1 + 1e-12).all() and (q.X >= 0).all()
    # positive=False: the full ball around a centre, including negative coordinates.
    full = clustered_ball(500, radius=0.3, center=(0.5, 0.0), positive=False, rng=0)
    assert (np.hypot(full.X[:, 0] - 0.5, full.X[:, 1]) <= 0.3 + 1e-12).all()
    assert (full.X[:, 1] < 0).any()


def test_affine_plane_is_low_dimensional():
    exact = affine_plane(400, D=8, d_prime=3, noise=0.0, rng=0)
    s = np.linalg.svd(exact.X - exact.X.mean(axis=0), compute_uv=False)
    assert s[2] > 1.0 and s[3] < 1e-9 * s[0]  # rank exactly d' = 3 after centring
    # Not a linear subspace: the plane goes through the cube's centre, so X itself has rank d' + 1.
    assert np.linalg.svd(exact.X, compute_uv=False)[3] > 1.0
    noisy = affine_plane(4000, D=10, d_prime=2, noise=0.01, rng=0)
    sv = np.linalg.svd(noisy.X - noisy.X.mean(axis=0), compute_uv=False) / math.sqrt(4000)
    # The trailing singular values estimate the noise sd 0.01 (relative error ~ 1/sqrt(n) ~ 2%,
    # plus the largest-of-8 effect ~ 5%): 15% tolerance. The plane directions are >> 0.01.
    np.testing.assert_allclose(sv[2:], 0.01, rtol=0.15)
    assert sv[1] > 0.1


def test_mixture_1d():
    ds = mixture_1d(3000, k=3, spread=0.02, rng=0)
    assert ds.domain == Domain.unit(1, ("x0",))
    for j in range(3):
        # ~1000 points, sd 0.02: standard error 0.0006; tolerance 0.005 is about 8 of them.
        assert abs(ds.X[ds.labels == j, 0].mean() - (j + 0.5) / 3) < 0.005
    ds = mixture_1d(20, k=2, spread=0.0, centers=[0.0, 1.0], weights=[0, 1], rng=0)
    assert (ds.X == 1.0).all()


@pytest.mark.parametrize(
    "func,kwargs,exc,match",
    [
        (uniform_cube, dict(n=0), ValueError, r"'n' parameter of uniform_cube must be an int in \[1, 10000000\]"),
        (uniform_cube, dict(n=D.MAX_N + 1), ValueError, "'n' parameter of uniform_cube"),
        (uniform_cube, dict(n=2.5), ValueError, "'n' parameter"),
        (uniform_cube, dict(n="10"), TypeError, "'n' parameter"),
        (uniform_cube, dict(n=5, d=0), ValueError, "'d' parameter of uniform_cube"),
        (uniform_cube, dict(n=5, d=D.MAX_D + 1), ValueError, "'d' parameter of uniform_cube"),
        (uniform_cube, dict(n=5, rng=-1), ValueError, "'rng' parameter of uniform_cube"),
        (uniform_cube, dict(n=5, rng="seed"), TypeError, "'rng' parameter of uniform_cube"),
        (gaussian_mixture, dict(n=5, k=0), ValueError, r"'k' parameter of gaussian_mixture must be an int in \[1, 100\]"),
        (gaussian_mixture, dict(n=5, k=101), ValueError, "'k' parameter"),
        (gaussian_mixture, dict(n=5, spread=-0.1), ValueError, r"'spread' parameter of gaussian_mixture must be a float in \[0, 1\]"),
        (gaussian_mixture, dict(n=5, spread=float("nan")), ValueError, "'spread' parameter"),
        (gaussian_mixture, dict(n=5, spread=1.5), ValueError, "'spread' parameter"),
        (gaussian_mixture, dict(n=5, centers="grid"), ValueError, "'centers' parameter of gaussian_mixture must be one of 'diagonal', 'random'"),
        (gaussian_mixture, dict(n=5, centers=[[0.5, 0.5]]), ValueError, r"'centers' parameter .* shape \(2, 2\)"),
        (gaussian_mixture, dict(n=5, centers=[[0.5, 0.5], [0.5, 1.5]]), ValueError, r"entries in \[0, 1\]"),
        (gaussian_mixture, dict(n=5, centers=[[0.5, {}], [0.5, 0.5]]), TypeError, "'centers' parameter"),
        (gaussian_mixture, dict(n=5, weights=[1.0, -1.0]), ValueError, "'weights' parameter of gaussian_mixture"),
        (gaussian_mixture, dict(n=5, weights=[1.0]), ValueError, "'weights' parameter .* 2 non-negative"),
        (gaussian_mixture, dict(n=5, weights=[0.0, 0.0]), ValueError, "positive sum"),
        (gaussian_mixture, dict(n=5, weights=[1.0, np.inf]), ValueError, "'weights' parameter"),
        (gaussian_mixture, dict(n=5, weights="equal"), TypeError, "'weights' parameter"),
        (ring, dict(n=5, radius=0.0), ValueError, r"'radius' parameter of ring must be a float in \(0, 0.5\)"),
        (ring, dict(n=5, radius=0.5), ValueError, "'radius' parameter of ring"),
        (ring, dict(n=5, width=-0.01), ValueError, "'width' parameter of ring"),
        (ring, dict(n=5, radius=0.1, width=0.25), ValueError, r"'width' parameter of ring must be a float in \[0, 2 min\(radius, 0.5 - radius\)\] = \[0, 0.2\]"),
        (ring, dict(n=5, radius=0.45, width=0.2), ValueError, r"= \[0, 0.1\] so the annulus fits"),
        (corner, dict(n=5, size=-0.1), ValueError, r"'size' parameter of corner must be a float in \[0, 1\]"),
        (corner, dict(n=5, size=1.1), ValueError, "'size' parameter of corner"),
        (clustered_ball, dict(n=5, radius=0.0), ValueError, r"'radius' parameter of clustered_ball must be a float in \(0, 1\]"),
        (clustered_ball, dict(n=5, radius=1.5), ValueError, "'radius' parameter of clustered_ball"),
        (clustered_ball, dict(n=5, center="origin"), TypeError, "'center' parameter of clustered_ball"),
        (clustered_ball, dict(n=5, center=0.0), TypeError, "'center' parameter of clustered_ball"),
        (clustered_ball, dict(n=5, center=(0.1, 0.1, 0.1)), ValueError, "a pair of finite floats"),
        (clustered_ball, dict(n=5, center=(0.1, np.nan)), ValueError, "a pair of finite floats"),
        (clustered_ball, dict(n=5, radius=0.5, center=(0.6, 0.0)), ValueError, "unit disc"),
        (clustered_ball, dict(n=5, center=(-0.1, 0.2)), ValueError, "non-negative coordinates when positive=True"),
        (clustered_ball, dict(n=5, positive="yes"), TypeError, "'positive' parameter of clustered_ball must be a bool"),
        (affine_plane, dict(n=5, D=0), ValueError, "'D' parameter of affine_plane"),
        (affine_plane, dict(n=5, D=3, d_prime=4), ValueError, r"'d_prime' parameter of affine_plane must be an int in \[1, 3\]"),
        (affine_plane, dict(n=5, d_prime=0), ValueError, "'d_prime' parameter"),
        (affine_plane, dict(n=5, noise=0.2), ValueError, r"'noise' parameter of affine_plane must be a float in \[0, 0.1\]"),
        (affine_plane, dict(n=5, noise=-0.01), ValueError, "'noise' parameter"),
        (mixture_1d, dict(n=5, k=0), ValueError, "'k' parameter of mixture_1d"),
        (mixture_1d, dict(n=5, spread=2.0), ValueError, "'spread' parameter of mixture_1d"),
        (mixture_1d, dict(n=5, k=2, centers=[0.5]), ValueError, r"'centers' parameter of mixture_1d .* shape \(2,\)"),
        (mixture_1d, dict(n=5, k=2, centers=[0.5, -0.5]), ValueError, "'centers' parameter of mixture_1d"),
        (mixture_1d, dict(n=5, k=2, weights=[1, 2, 3]), ValueError, "'weights' parameter of mixture_1d"),
    ],
)
def test_generator_validation(func, kwargs, exc, match):
    with pytest.raises(exc, match=match):
        func(**kwargs)


def test_dataset_validation():
    dom = Domain.unit(2)
    with pytest.raises(TypeError, match="'domain' parameter of Dataset must be a Domain"):
        Dataset(np.zeros((2, 2)), (0, 1), "x")
    with pytest.raises(ValueError, match=r"'X' parameter of Dataset must be an array of shape \(n, 2\)"):
        Dataset(np.zeros((2, 3)), dom, "x")
    with pytest.raises(ValueError, match="finite"):
        Dataset(np.array([[0.0, np.nan]]), dom, "x")
    with pytest.raises(ValueError, match=r"'labels' parameter of Dataset must be an array of shape \(2,\)"):
        Dataset(np.zeros((2, 2)), dom, "x", labels=[0, 1, 2])
    ds = Dataset(np.zeros((2, 2)), dom, "x", labels=[0, 1])
    with pytest.raises(AttributeError):
        ds.name = "y"
    assert list(ds.to_frame().columns) == ["x0", "x1"]


# ------------------------------------------------------------------------------- real data
def test_digits_scaled_by_public_bound():
    ds = REAL_DATASETS["digits"]()
    assert ds.X.shape == (1797, 64) and ds.domain == Domain.unit(64, ds.domain.names)
    assert (ds.X >= 0).all() and (ds.X <= 1).all() and ds.X.max() == 1.0  # 16 / 16 occurs
    np.testing.assert_array_equal(ds.X * 16, np.round(ds.X * 16))  # integer pixels 0..16 / 16
    assert sorted(np.unique(ds.labels).tolist()) == list(range(10))
    assert ds.domain.names[9] == "pixel_1_1"


@pytest.mark.parametrize("name,bounds,shape", [("iris", D.IRIS_BOUNDS, (150, 4)), ("wine", D.WINE_BOUNDS, (178, 13))])
def test_real_data_bounds_are_hard_coded_and_honest(name, bounds, shape):
    ds = REAL_DATASETS[name]()
    assert ds.X.shape == shape and len(np.unique(ds.labels)) == 3
    assert ds.domain.names == tuple(bounds)
    assert ds.domain.lower == tuple(b[0] for b in bounds.values())
    assert ds.domain.upper == tuple(b[1] for b in bounds.values())
    # Rounded outward: every value strictly inside, so the bounds are not the sample's min/max.
    assert (ds.X > ds.domain.lower_array).all() and (ds.X < ds.domain.upper_array).all()


def test_iris_public_bounds_are_zero_to_ten_cm():
    assert set(D.IRIS_BOUNDS.values()) == {(0.0, 10.0)}


def test_default_dataset():
    ds = default_dataset()
    assert ds.name == "two_clusters" and ds.X.shape == (5000, 2)
    np.testing.assert_array_equal(ds.X, gaussian_mixture(5000, d=2, k=2, rng=0).X)
    assert ds.domain == Domain.unit(2, ("x0", "x1")) and set(np.unique(ds.labels)) == {0, 1}


# ------------------------------------------------------------------------------- mixed data
def test_clinic_declared_domain_is_the_constants_not_the_sample():
    ds = D.clinic()
    dom = ds.domain
    assert ds.name == "clinic" and ds.X.shape == (2000, 6) and dom.names == D.CLINIC_COLUMNS
    assert dom.categories == D.CLINIC_CATEGORIES
    assert dict(zip(dom.numeric_names, zip(dom.lower, dom.upper, strict=True), strict=True)) == D.CLINIC_BOUNDS
    # honest: every row inside the declared box, and the box wider than the sample on every side
    assert dom.contains(ds.X).all()
    num = ds.X[:, dom.numeric_index]
    assert (num > dom.lower_array).all() and (num < dom.upper_array).all()
    # every declared category occurs in the bundled table, and nothing else can (codes in range)
    frame = ds.to_frame()
    for col, labels in D.CLINIC_CATEGORIES.items():
        assert set(frame[col].astype(str)) == set(labels), col
    # the same domain for another sample (it is fixed by the declaration, not by the rows)
    assert D.clinic(300, rng=1).domain == dom


def test_clinic_is_reproducible_and_encodes_its_table():
    a, b, c = D.clinic(), D.clinic(), D.clinic(rng=D.CLINIC_SEED + 1)
    np.testing.assert_array_equal(a.X, b.X)
    assert not np.array_equal(a.X, c.X)
    frame = a.to_frame()
    assert list(frame.columns) == list(D.CLINIC_COLUMNS)
    assert str(frame["sex"].dtype) == "category" and list(frame["sex"].cat.categories) == ["F", "M"]
    np.testing.assert_array_equal(a.domain.read(frame), a.X)  # the frame reads back to the same encoding


def test_clinic_follows_its_documented_model():
    """The relations the docstring states, on 20,000 rows (seed fixed). Tolerances: the standard error
    of a share near 0.5 over 20,000 rows is 0.0035, of a mean BMI difference between two regions of
    ~6,000 rows each about 0.08 kg/m²; every check below is at least 5 standard errors wide."""
    f = D.clinic(20_000).to_frame()
    assert abs((f["sex"] == "M").mean() - 0.48) < 0.02
    shares = f["region"].value_counts(normalize=True)
    for region, p in zip(("north", "east", "south", "west"), (0.3, 0.2, 0.3, 0.2), strict=True):
        assert abs(shares[region] - p) < 0.02, region
    by_region = f.groupby("region", observed=True)["bmi"].mean()
    assert 1.5 < by_region["south"] - by_region["north"] < 2.5  # r_south - r_north = 2 kg/m²
    assert np.corrcoef(f["age"], f["systolic_bp"])[0, 1] > 0.4  # 0.55 mmHg per year against sd 12
    assert 0.12 < (f["diabetes"] == "yes").mean() < 0.25
    young, old = f[f["age"] < 40], f[f["age"] > 65]
    assert (old["diabetes"] == "yes").mean() > (young["diabetes"] == "yes").mean() + 0.1
