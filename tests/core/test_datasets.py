"""Tests of dpsynth_core.datasets: generators, bundled real data, CSV loading and export."""

import builtins
import io
import math
import tempfile

import numpy as np
import pandas as pd
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
    csv_bytes,
    default_dataset,
    gaussian_mixture,
    load_csv,
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


# ------------------------------------------------------------------------------------- CSV
GOOD = b"a,b,name,c\n1,2.5,x,7\n3,-4e-3,y,7\n5,6,z,7\n"


def test_load_csv_from_bytes_path_and_file_likes(tmp_path):
    expected = pd.DataFrame({"a": [1.0, 3.0, 5.0], "b": [2.5, -4e-3, 6.0], "c": [7.0, 7.0, 7.0]})
    path = tmp_path / "data.csv"
    path.write_bytes(GOOD)

    class ReadOnly:  # an object with read() only (no getvalue)
        def __init__(self, data):
            self._buf = io.BytesIO(data)

        def read(self, size=-1):
            return self._buf.read(size)

    consumed = io.BytesIO(GOOD)
    consumed.read()  # Streamlit's UploadedFile may already have been read: getvalue() still works
    with open(path, "rb") as fh:
        sources = [GOOD, bytearray(GOOD), memoryview(GOOD), str(path), path, io.BytesIO(GOOD), consumed,
                   ReadOnly(GOOD), fh]
        for src in sources:
            df = load_csv(src)
            pd.testing.assert_frame_equal(df, expected)
            assert (df.dtypes == np.float64).all()


def test_load_csv_header_selection_and_edge_cases():
    df = load_csv(GOOD, columns=["c", "a"])
    assert list(df.columns) == ["c", "a"] and df["a"].tolist() == [1.0, 3.0, 5.0]
    assert load_csv(b"\xef\xbb\xbfa,b\n1,2\n").columns.tolist() == ["a", "b"]  # UTF-8 with BOM
    one = load_csv(b"a,b\n1,2")  # a single row, no final newline
    assert one.shape == (1, 2)
    assert load_csv(b"a,flag\n1,True\n2,False\n").columns.tolist() == ["a"]  # booleans are not numbers
    assert load_csv(b"a,b\r\n1,2\r\n3,4\r\n\r\n\n").shape == (2, 2)  # CRLF and trailing blank lines
    assert load_csv(b"x\n0\n0\n")["x"].tolist() == [0.0, 0.0]  # a constant column is fine
    assert load_csv(b"a;b\n1;x\n").columns.tolist() == ["a"]  # separator detected, the text column left out
    assert load_csv(b"x;y\n1,5;2,25\n").to_numpy().tolist() == [[1.5, 2.25]]  # decimal commas


@pytest.mark.parametrize(
    "data,kwargs,match",
    [
        (b"", {}, "The CSV data is empty: it must be a non-empty CSV file with a header row"),
        (b"  \n\n", {}, "The CSV data is empty"),
        (b"a,b\n", {}, "has a header row but no data: it needs at least one data row"),
        (b"name,city\nann,rome\n", {}, "has no numeric column: its 2 columns hold text or are empty"),
        (b"a b\n1 x\n", {}, "single column: are its cells separated by something other than commas"),
        (b"a,b\n1,2\n3,\n", {}, r"missing values \(an empty cell, NA or NaN\) in 1 row, the first at row 3, "
                                r"column 'b': fill them in, or choose to drop the 1 row"),
        (b"a,b\n1,NA\n2,3\n", {}, "the first at row 2, column 'b'"),
        (b"a,b\n1,2\n\n3,4\n", {}, "the first at row 3, column 'a'"),
        (b"a,b\n1,2\n3,inf\n", {}, "infinite value at row 3, column 'b'"),
        (b"a,b\n-inf,2\n", {}, "infinite value at row 2, column 'a'"),
        (b"a,b\ncaf\xe9,1\n", {}, r"not UTF-8 text \(the first unreadable character is on line 2\): save it as "
                                 r"'CSV UTF-8'"),
        ("a,b\n1,2\n".encode("utf-16"), {}, "UTF-16 text, not UTF-8"),
        (b"a,b\n1,\x002\n", {}, "NUL characters"),
        (b"1,2\n3,4\n", {}, "numbers in its first line instead of column names: add a header row"),
        (b"a,b\n1,2\n1,2,3\n", {}, "not a regular table: row 3 has 3 cells but the header has 2"),
        (b"a,b\n1,2\n3,4\n5,6\n", dict(max_rows=2), "more than 2 data rows; at most 2 can be read"),
        (b"a,b,c\n1,2,3\n", dict(max_cols=2), "has 3 numeric columns; at most 2 can be read at once: choose the "
                                             "columns"),
        (b"a,b\n1,2\n3,4\n", dict(max_bytes=10), "is 12 bytes; at most 10 bytes can be read"),
        (GOOD, dict(columns=["a", "zz"]), "has no column 'zz'; its columns are 'a', 'b', 'name', 'c'"),
        (GOOD, dict(columns=["name"]), r"column 'name' holds text, not numbers \(the first text is at row 2\)"),
    ],
)
def test_load_csv_rejects(data, kwargs, match):
    with pytest.raises(ValueError, match=match):
        load_csv(data, **kwargs)


def test_load_csv_limits_are_inclusive():
    assert load_csv(b"a,b\n1,2\n3,4\n", max_rows=2, max_cols=2, max_bytes=12).shape == (2, 2)
    assert load_csv(b"a,b,c\n1,2,3\n", max_cols=2, columns=["a", "c"]).shape == (1, 2)


def test_load_csv_oversize_path_and_stream(tmp_path):
    path = tmp_path / "big.csv"
    path.write_bytes(b"a\n" + b"1\n" * 100)
    with pytest.raises(ValueError, match="is 202 bytes; at most 50 bytes can be read"):
        load_csv(path, max_bytes=50)

    class ReadOnly:
        def read(self, size=-1):
            return b"a\n" + b"1\n" * 100 if size < 0 else (b"a\n" + b"1\n" * 100)[:size]

    with pytest.raises(ValueError, match="is larger than 50 bytes; at most 50 bytes can be read"):
        load_csv(ReadOnly(), max_bytes=50)


@pytest.mark.parametrize(
    "source,kwargs,exc,match",
    [
        (123, {}, TypeError, "'source' parameter of load_csv must be a path, bytes or a binary file-like object. Got int"),
        (io.StringIO("a\n1\n"), {}, TypeError, r"opened in binary mode \('rb'\)"),
        ("/no/such/file.csv", {}, ValueError, "The file '/no/such/file.csv' does not exist or is not a file"),
        (GOOD, dict(columns="a"), TypeError, "'columns' parameter of load_csv"),
        (GOOD, dict(columns=[1]), TypeError, "'columns' parameter of load_csv"),
        (GOOD, dict(columns=[]), ValueError, "'columns' parameter of load_csv must be None or a non-empty"),
        (GOOD, dict(columns=["a", "a"]), ValueError, "distinct"),
        (GOOD, dict(max_rows=0), ValueError, "'max_rows' parameter of load_csv"),
        (GOOD, dict(max_cols=0), ValueError, "'max_cols' parameter of load_csv"),
        (GOOD, dict(max_bytes=0), ValueError, "'max_bytes' parameter of load_csv"),
    ],
)
def test_load_csv_argument_validation(source, kwargs, exc, match):
    with pytest.raises(exc, match=match):
        load_csv(source, **kwargs)


def test_load_csv_text_stream_returning_non_bytes_is_a_type_error():
    class Weird:
        def read(self, size=-1):
            return 42

    with pytest.raises(TypeError, match="returning bytes. Got one returning int"):
        load_csv(Weird())


def test_load_csv_never_writes_or_echoes_the_data(monkeypatch):
    def no_files(*args, **kwargs):
        raise AssertionError("load_csv touched the file system")

    monkeypatch.setattr(builtins, "open", no_files)
    monkeypatch.setattr(tempfile, "mkstemp", no_files)
    monkeypatch.setattr(tempfile, "NamedTemporaryFile", no_files)
    monkeypatch.setattr(tempfile, "TemporaryFile", no_files)
    assert load_csv(GOOD).shape == (3, 3)
    with pytest.raises(ValueError) as info:
        load_csv(b"salary,code\n1,SECRET-4711\n2,3\n", columns=["code"])
    assert "SECRET" not in str(info.value) and "row 2" in str(info.value)


# ---------------------------------------------------------------------------------- export
def test_csv_bytes_round_trip_is_exact():
    X = np.random.default_rng(0).random((50, 3)) * np.array([1.0, 1e-9, 1e9])
    X[0] = [1 / 3, -0.0, 5e-324]
    data = csv_bytes(X, ["a", "b b", "c,d"])
    assert data.startswith(b'a,b b,"c,d"\n')
    back = load_csv(data)
    assert list(back.columns) == ["a", "b b", "c,d"]
    np.testing.assert_array_equal(back.to_numpy(), X)
    assert csv_bytes(np.zeros((0, 2))) == b"x0,x1\n"


@pytest.mark.parametrize(
    "X,names,exc,match",
    [
        (np.zeros((2, 2)), ["a"], ValueError, "'names' parameter of csv_bytes must be 2 distinct column names"),
        (np.zeros((2, 2)), ["a", "a"], ValueError, "'names' parameter of csv_bytes"),
        (np.zeros((2, 2)), "ab", TypeError, "'names' parameter of csv_bytes"),
        (np.zeros((2, 2)), ["a", ""], TypeError, "'names' parameter of csv_bytes"),
        (np.array([[0.0, np.inf]]), None, ValueError, "'X' parameter of csv_bytes must contain only finite values"),
        ("not data", None, TypeError, "'X' parameter of csv_bytes"),
    ],
)
def test_csv_bytes_validation(X, names, exc, match):
    with pytest.raises(exc, match=match):
        csv_bytes(X, names)
