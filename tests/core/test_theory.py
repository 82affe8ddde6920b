"""dpsynth_core.theory against hand computations from the formulas of [HVZ23]."""

import math

import numpy as np
import pytest

from dpsynth_core.mechanisms.pmm import level_sigmas
from dpsynth_core.theory import (
    corollary12_depth,
    laplacian_complexity_rate,
    pmm_corollary12,
    pmm_deltas,
    pmm_resolution,
    pmm_S,
    pmm_theorem10,
    pmm_theorem11,
    psmm_corollary8,
    psmm_theorem7,
)


def test_deltas_and_resolution_by_hand():
    # d = 2: Δ_j = 2^j 2^{-floor(j/2)} -> Δ_0..Δ_3 = 1, 2, 2, 4; with Δ_{-1} = Δ_0 first
    assert np.allclose(pmm_deltas(4, 2), [1, 1, 2, 2, 4])
    assert np.allclose(pmm_deltas(3, 1), [1, 1, 1, 1])  # d = 1: Δ_j = 1 (A.9)
    assert pmm_resolution(4, 2) == 0.25 and pmm_resolution(5, 2) == 0.25 and pmm_resolution(3, 1) == 0.125
    assert pmm_S(4, 2) == pytest.approx(4 + 2 * math.sqrt(2))
    assert pmm_S(4, 2, neighbours="replace") == pytest.approx(3 + 2 * math.sqrt(2))


def test_theorem11_by_hand():
    # d = 1, r = 3, n = 100, ε = 1: S = 4, √2·16/100 + 1/8
    assert pmm_theorem11(100, 1.0, 1, 3) == pytest.approx(math.sqrt(2) * 16 / 100 + 0.125)
    # d = 2, r = 4, n = 1000, ε = 0.5: S = 4 + 2√2, √2 S²/(500) + 1/4 = 0.381881...
    S = 4 + 2 * math.sqrt(2)
    assert pmm_theorem11(1000, 0.5, 2, 4) == pytest.approx(math.sqrt(2) * S * S / 500 + 0.25)
    assert pmm_theorem11(1000, 0.5, 2, 4) == pytest.approx(0.3818813, abs=1e-6)
    # replace: sensitivity 2 on levels 1..r only
    S1 = 3 + 2 * math.sqrt(2)
    assert pmm_theorem11(1000, 0.5, 2, 4, neighbours="replace") == pytest.approx(
        2 * math.sqrt(2) * S1 * S1 / 500 + 0.25)


def test_theorem10_by_hand_and_its_a4_substitution():
    # σ = 1..5, d = 2: Σ σ_j Δ_{j-1} = 1 + 2 + 6 + 8 + 20 = 37
    assert pmm_theorem10(100, [1, 2, 3, 4, 5], 2) == pytest.approx(2 * math.sqrt(2) * 37 / 100 + 0.25)
    # substituting A.4 into Theorem 10 gives twice Theorem 11's printed first term (module docstring)
    for d, r, n, eps in [(1, 6, 500, 1.0), (2, 9, 5000, 0.5), (3, 7, 2000, 2.0)]:
        sig = level_sigmas(r, d, eps, split="optimal")
        t10 = pmm_theorem10(n, sig, d)
        assert t10 == pytest.approx(pmm_theorem11(n, eps, d, r, proven=True))
        delta = pmm_resolution(r, d)
        assert t10 - delta == pytest.approx(2 * (pmm_theorem11(n, eps, d, r) - delta))
        # A.4 minimises Theorem 10 among splits spending ε: uniform is never better
        assert t10 <= pmm_theorem10(n, level_sigmas(r, d, eps, split="uniform"), d) + 1e-12
    sig = level_sigmas(4, 2, 1.0, neighbours="replace")
    assert pmm_theorem10(300, sig, 2) == pytest.approx(pmm_theorem11(300, 1.0, 2, 4, neighbours="replace",
                                                                     proven=True))


def test_corollary12_by_hand():
    assert corollary12_depth(1024, 1.0, 1) == pytest.approx(9.0)
    assert corollary12_depth(1024, 2.0, 2) == pytest.approx(11.0)
    val, free = pmm_corollary12(1024, 1.0, 1)
    assert val == pytest.approx((2 + math.sqrt(2)) * 100 / 1024) and not free
    # A.9: at r = log2(εn) - 1, Theorem 11 (d = 1) is at most (2+√2) log2²(εn)/(εn)
    assert pmm_theorem11(1024, 1.0, 1, 9) <= val
    val, free = pmm_corollary12(10**4, 1.0, 2)
    assert val == pytest.approx(0.01) and free


def test_psmm_theorem7_and_corollary8_by_hand():
    # d = 2, k = 10 (m = 100), n = 1000, ε = 1: 1/10 + 2·100/1000 · log(100)/10
    assert psmm_theorem7(1000, 1.0, 2, 10) == pytest.approx(0.1 + 0.2 * math.log(100) / 10)
    assert psmm_theorem7(1000, 1.0, 2, 10) == pytest.approx(0.1921034, abs=1e-6)
    # d = 3, k = 4 (m = 64), n = 640, ε = 0.5: 1/4 + 2·64/320 · (1/3)·64^{-1/3} = 1/4 + 0.4/12
    assert psmm_theorem7(640, 0.5, 3, 4) == pytest.approx(0.25 + 0.4 / 12)
    # replace halves the effective ε; the constant scales the complexity term
    assert psmm_theorem7(640, 1.0, 3, 4, neighbours="replace") == pytest.approx(psmm_theorem7(640, 0.5, 3, 4))
    assert psmm_theorem7(640, 0.5, 3, 4, complexity_constant=3.0) == pytest.approx(0.25 + 0.4 / 4)
    assert laplacian_complexity_rate(100, 1) == pytest.approx(0.1)
    assert psmm_corollary8(1000, 1.0, 2) == (pytest.approx(math.log(1000) / math.sqrt(1000)), True)
    assert psmm_corollary8(100, 1.0, 1)[0] == pytest.approx(0.1)
    assert psmm_corollary8(1000, 1.0, 3)[0] == pytest.approx(0.1)


@pytest.mark.parametrize(
    "call, exc, pattern",
    [
        (lambda: pmm_theorem11(0, 1.0, 2, 3), ValueError, r"'n' parameter of pmm_theorem11 must be a float in \(0"),
        (lambda: pmm_theorem11(10, -1.0, 2, 3), ValueError, r"'epsilon' parameter of pmm_theorem11"),
        (lambda: pmm_theorem11(10, 1.0, 0, 3), ValueError, r"'d' parameter of pmm_theorem11"),
        (lambda: pmm_theorem11(10, 1.0, 2, -1), ValueError, r"'depth' parameter of pmm_theorem11"),
        (lambda: pmm_theorem11(10, 1.0, 2, 3, neighbours="x"), ValueError, r"'neighbours' parameter of pmm_theorem11"),
        (lambda: pmm_theorem10(10, [1.0, -1.0], 2), ValueError, r"'sigmas' parameter of pmm_theorem10"),
        (lambda: pmm_theorem10(10, [], 2), ValueError, r"'sigmas' parameter of pmm_theorem10"),
        (lambda: psmm_theorem7(10, 1.0, 2, 0), ValueError, r"'cells_per_axis' parameter of psmm_theorem7"),
        (lambda: psmm_theorem7(10, 1.0, 2, 3, complexity_constant=0), ValueError, r"'complexity_constant'"),
        (lambda: laplacian_complexity_rate(0.5, 2), ValueError, r"'m' parameter of laplacian_complexity_rate"),
        (lambda: pmm_corollary12("10", 1.0, 2), TypeError, r"'n' parameter of pmm_corollary12"),
    ],
)
def test_validation(call, exc, pattern):
    with pytest.raises(exc, match=pattern):
        call()


def test_every_mechanism_declares_its_theory():
    """The rate exponent and whether the bound is proven come from each mechanism's declaration."""
    from dpsynth_core import MECHANISMS
    from dpsynth_core.theory import Theory, theory_exponent

    for name, spec in MECHANISMS.items():
        assert isinstance(spec.theory, Theory), name
    assert theory_exponent(MECHANISMS["pmm"], 1) == (-1.0, "-1 for d = 1, up to log factors")
    assert theory_exponent(MECHANISMS["pmm"], 4)[0] == -0.25
    assert theory_exponent(MECHANISMS["sparse_marginals"], 6, {"s": 3})[0] == pytest.approx(-1 / 3)
    assert theory_exponent(MECHANISMS["low_dim"], 10)[0] == -0.5
    proven = {name for name, spec in MECHANISMS.items() if spec.theory.proven}
    assert proven == {"pmm", "haar_walk"}
    assert all(MECHANISMS[name].theory.bound_label for name in proven)
