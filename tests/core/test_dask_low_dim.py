"""Data beyond memory (issue #20): low_dim on Dask input, and its exact moments.

low_dim reads the private rows in two passes, both sums over records through ``Rows.sum``: the
exact moments (``low_dim.moments``: count, sum, sum of outer products; integers) for the covariance
(Algorithm 2) and the mean (Algorithm 3), then the subroutine's counts (PMM or PSMM) of the rows
projected on the private basis (``Rows.map``, row by row on the workers). Everything else happens on
the client from the merged integers and the rng. So with the same rng the release from a Dask array
or DataFrame, in any number of partitions, must equal the NumPy release bit for bit: these tests
compare the whole public report (JSON text), not a tolerance.
"""

from __future__ import annotations

import importlib
from fractions import Fraction

import numpy as np
import pytest
from dask_support import PARTITIONS, dask_array, dask_frame, public_json

from dpsynth_core import Domain
from dpsynth_core.mechanisms import run
from dpsynth_core.rows import merge

pytestmark = pytest.mark.usefixtures("dask_synchronous")

LD = importlib.import_module("dpsynth_core.mechanisms.low_dim")  # the module (the package attribute is the function)

NAMES = ("age", "income", "score", "height", "weight")
DOM = Domain(lower=[0.0, 0.0, -1.0, 140.0, 40.0], upper=[100.0, 5.0, 1.0, 210.0, 140.0], names=NAMES)


def _data(n=1500, seed=0):
    """Correlated columns (a plane plus noise) in the domain's units; some rows leave the box."""
    rng = np.random.default_rng(seed)
    z = rng.normal(size=(n, 2))
    U = 0.5 + 0.18 * z @ np.array([[1.0, 0.6, -0.4, 0.8, 0.7], [0.2, -0.7, 0.9, 0.3, -0.5]])
    U = U + rng.normal(scale=0.03, size=U.shape)
    return DOM.from_unit(U)  # from_unit does not clip: rows outside the unit cube stay outside the domain


def _run(X, **kw):
    return run("low_dim", X, DOM, rng=11, **{"epsilon": 2.0, **kw})


def _public(X, **kw):
    return public_json(_run(X, **kw))


def _frame(X, parts=7):
    return dask_frame(X, NAMES, parts)


CASES = [
    dict(subroutine="pmm"),
    dict(subroutine="pmm", adaptive=True),
    dict(subroutine="psmm"),
    dict(subroutine="psmm", adaptive=True),
    dict(subroutine="pmm", target_dim=3, box="projected_cube", covariance_noise="paper"),
]


@pytest.mark.parametrize("kw", CASES, ids=["pmm", "pmm-adaptive", "psmm", "psmm-adaptive", "pmm-cube-paper"])
def test_dask_release_is_bit_identical(kw):
    X = _data()
    ref = _public(X, **kw)
    for parts in PARTITIONS:
        assert _public(dask_array(X, parts), **kw) == ref, f"{kw}: {parts} partitions"
    assert _public(_frame(X), **kw) == ref, f"{kw}: Dask DataFrame"


def test_dask_release_is_bit_identical_at_another_size_and_seed():
    X = _data(n=3001, seed=4)
    ref = _public(X, epsilon=0.7, subroutine="psmm", target_dim=2)
    assert _public(dask_array(X, 13), epsilon=0.7, subroutine="psmm", target_dim=2) == ref


@pytest.mark.parametrize("subroutine", ["pmm", "psmm"])
def test_owner_view_matches_and_projection_is_not_materialised(subroutine):
    X = _data()
    mem = _run(X, subroutine=subroutine)
    dsk = _run(dask_array(X, 7), subroutine=subroutine)
    a, b = mem.owner, dsk.owner
    for key in ("true_covariance", "true_spectrum", "true_basis", "principal_angles", "noise_matrix", "mean_noise"):
        assert np.array_equal(getattr(a, key), getattr(b, key)), key
    assert a.n == b.n == X.shape[0]
    assert a.n_clamped == b.n_clamped > 0  # the data do leave the box
    assert a.subroutine.n_clamped == b.subroutine.n_clamped
    # in memory the projected coordinates are at hand; with Dask they stay on the workers
    assert a.projected_coordinates.shape == (X.shape[0], 2) and a.projected_note is None
    assert a.projected_summary["n_outside_box"] == a.subroutine.n_clamped
    assert b.projected_coordinates is None and b.projected_summary is None
    assert "Dask" in b.projected_note
    for key in ("noisy_covariance", "private_basis", "private_mean", "synthetic_coordinates"):
        assert np.array_equal(getattr(mem.trace, key), getattr(dsk.trace, key)), key


def test_the_data_are_read_in_two_passes():
    """One pass for the moments (which also counts the clamped rows), one for the subroutine's
    counts of the projected rows; n comes from the chunks. Nothing else touches the blocks."""
    calls = []

    def spy(block):
        if block.size:  # Dask calls it once on an empty array to learn the output type
            calls.append(block.shape[0])
        return block

    X = _data(900)
    for subroutine in ("pmm", "psmm"):
        calls.clear()
        _run(dask_array(X, 3).map_blocks(spy, dtype=float), subroutine=subroutine)
        assert len(calls) == 2 * 3 and sum(calls) == 2 * 900, subroutine


def test_fewer_than_two_rows_is_refused_for_dask_too():
    X = _data(5)[:1]
    with pytest.raises(ValueError, match=r"The 'X' parameter of low_dim must be a table of at least 2 rows"):
        _run(X)
    with pytest.raises(ValueError, match=r"The 'X' parameter of low_dim must be a table of at least 2 rows"):
        _run(dask_array(X, 1))


# ----------------------------------------------------------------------------- the moments statistic
def _unit(n=5000, d=4, seed=0):
    return np.random.default_rng(seed).random((n, d))


def _exact_mean_cov(U):
    """The mean and the centred covariance (1.2) in rational arithmetic, each rounded once."""
    F = [[Fraction(float(x)) for x in row] for row in U]
    n, d = U.shape
    mu = [sum(r[j] for r in F) / n for j in range(d)]
    cov = [[float(sum((r[j] - mu[j]) * (r[k] - mu[k]) for r in F) / (n - 1)) for k in range(d)] for j in range(d)]
    return [float(m) for m in mu], cov


def test_moments_over_any_split_are_the_same_integers():
    """The statistic summed over row blocks of any sizes (empty, single rows, chunk boundaries,
    shuffled rows) holds the same exact integers as over all the rows, so the mean and covariance
    computed from it are the same bits. (The two int64 limbs may split an integer differently:
    compare the integers.)"""
    U = _unit(n=9001, d=5, seed=1)
    U[:7] = 1.0  # the largest digit (2^20) and exact zeros
    U[7:11] = 0.0
    whole = LD.moments(U)
    rng = np.random.default_rng(2)
    cuts = np.unique(np.r_[0, 0, 1, 4095, 4096, 4097, np.sort(rng.integers(0, 9001, 20)), 9001, 9001])
    parts = [LD.moments(U[a:b]) for a, b in zip(cuts[:-1], cuts[1:], strict=True)] + [LD.moments(U[:0])]
    merged = parts[0]
    for part in parts[1:]:
        merged = merge(merged, part)
    shuffled = LD.moments(U[rng.permutation(U.shape[0])])
    n, s, S = LD.moment_sums(whole)
    for other in (merged, shuffled):
        n2, s2, S2 = LD.moment_sums(other)
        assert n2 == n == 9001 and list(s2) == list(s) and S2.tolist() == S.tolist()
        for x, y in zip(LD.mean_and_covariance(other), LD.mean_and_covariance(whole), strict=True):
            assert np.array_equal(x, y)


def test_moments_are_the_exact_sums():
    """rng.random gives multiples of 2^-53, kept exactly by the 60-bit digits: the integer sums are
    the exact sums, the mean and the covariance the exact rational values rounded once."""
    U = _unit(n=300, d=3, seed=3)
    n, s, S = LD.moment_sums(LD.moments(U))
    F = [[Fraction(float(x)) for x in row] for row in U]
    assert n == 300
    for j in range(3):
        assert Fraction(int(s[j]), 2**60) == sum(r[j] for r in F)
        for k in range(3):
            assert Fraction(int(S[j, k]), 2**120) == sum(r[j] * r[k] for r in F)
    _, mean, M = LD.mean_and_covariance(LD.moments(U))
    exact_mean, exact_cov = _exact_mean_cov(U)
    assert mean.tolist() == exact_mean and M.tolist() == exact_cov and np.array_equal(M, M.T)


def test_covariance_agrees_with_the_float_formula():
    """Against np.cov (centre, then a BLAS sum of n products): within 1e-12 absolute (entries are at
    most 1/4 in the unit cube). Ours is the exact covariance rounded once (previous test), so the
    difference is np.cov's own rounding error, which the standard bound for a recursive sum limits to
    about n eps max|z_i z_j| ~ 10^4 x 1.1e-16 ~ 1.1e-12 at the largest n here, whatever the BLAS
    kernel's summation order (in practice it is ~1e-17). 1e-12 is also 10^3-10^4 times below the
    covariance noise σ = d^2 (n+1)/(n(n-1)) / (2ε/3) for these n and d even at ε = 10^6, the largest
    ε accepted (σ >= 9e-9)."""
    for seed, (n, d) in enumerate([(2, 3), (10, 2), (4097, 5), (10_000, 10)]):
        U = _unit(n, d, seed)
        M = LD.covariance_matrix(U)
        assert np.abs(M - np.cov(U, rowvar=False)).max() <= 1e-12
        assert np.array_equal(M, M.T)


def test_covariance_has_no_cancellation():
    """A hard case for a one-pass float formula (sum of squares minus n mean^2): a spread of 1e-7
    around 0.9999999, variance ~1e-15 against squares ~1. The integer formula (nS - ss^T)/(n(n-1))
    is still the exact value rounded once (the float one-pass formula, (U^T U - n m m^T)/(n-1), is
    off by ~2e-15 here, more than the covariance itself)."""
    U = 1.0 - 1e-7 * _unit(1000, 3, 9)
    mean, M = LD.mean_and_covariance(LD.moments(U))[1:]
    exact_mean, exact_cov = _exact_mean_cov(U)
    assert mean.tolist() == exact_mean and M.tolist() == exact_cov


def test_covariance_matrix_checks_its_input():
    U = _unit(10, 2, 1)
    with pytest.raises(ValueError, match="unit cube"):
        LD.covariance_matrix(U + 1.0)
    with pytest.raises(ValueError, match="unit cube"):
        LD.covariance_matrix(np.where(U > 0.5, np.nan, U))
    with pytest.raises(ValueError, match="n >= 2"):
        LD.covariance_matrix(U[:1])


def test_private_covariance_keeps_its_signature():
    U = _unit(200, 3, 5)
    M_hat, M, A, sigma = LD.private_covariance(U, 1.0, np.random.default_rng(0))
    assert np.array_equal(M, LD.covariance_matrix(U)) and np.array_equal(M_hat, M + A)
    assert sigma == pytest.approx(LD.covariance_noise_scale(200, 3, 1.0))


def test_projection_does_not_depend_on_the_block():
    """Rows are projected one by one with elementwise sums (no BLAS): the coordinates of a row are the
    same bits alone, in a block, or with all the rows."""
    U = _unit(20_000, 7, 6)
    rng = np.random.default_rng(7)
    V = np.linalg.qr(rng.normal(size=(7, 3)))[0]
    c = rng.random(7)
    whole = LD._project(U, c, V)
    pieces = np.concatenate([LD._project(U[a:a + 333], c, V) for a in range(0, 20_000, 333)])
    assert np.array_equal(whole, pieces) and np.array_equal(whole[5:6], LD._project(U[5:6], c, V))
    assert np.abs(whole - (U - c) @ V).max() < 1e-14
