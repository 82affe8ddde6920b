"""Pinned releases: the same data and seed give the same synthetic data, bound and parameters.

Restructuring the code (moving modules, splitting functions into named steps, sharing one
per-record statistic between the in-memory and the distributed paths) must not change a single
release. Each case below runs a mechanism on a small fixed dataset with a fixed seed and compares a
SHA-256 digest of the synthetic array (float64 bytes, C order) and of the public parameters with
the digest recorded from the implementation at the time the pin was set. A deliberate change of
behaviour updates the digest in the same commit, with the reason in the commit message.

The digests must not depend on the machine. Published sums are therefore computed with
``math.fsum`` (correctly rounded) rather than a BLAS dot product, whose summation order depends on
the CPU kernel OpenBLAS picks (``OPENBLAS_CORETYPE``): with ``np.dot`` the BL value of the PSMM case
differed in its last bit between Haswell and SkylakeX kernels. The one exception is ``low_dim`` when it
projects (``low_dim_paper``; its default plan hands over to PSMM at d = 4),
whose private PCA calls LAPACK's eigensolver, whose last bits depend on the kernel for almost every
input matrix. Its pin is therefore one digest per kernel (:data:`LOW_DIM_BY_KERNEL`), each recorded by
forcing the kernel, and the test checks the one of the kernel this machine runs (threadpoolctl says
which); a second test forces the others in subprocesses. (Its covariance and mean no longer depend on
the kernel: they are exact sums, ``low_dim.moments``.)
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from dpsynth_core import Domain, run
from dpsynth_core.mechanisms.base import to_jsonable


def _data(d: int, n: int = 400) -> np.ndarray:
    rng = np.random.default_rng(20261123)
    centres = np.where(rng.random((n, 1)) < 0.5, 0.3, 0.7)
    return np.clip(centres + rng.normal(scale=0.08, size=(n, d)), 0.0, 1.0)


CASES = {
    # name: (mechanism, d, keyword arguments)
    "pmm_add_remove": ("pmm", 2, dict(epsilon=1.0)),
    "pmm_replace": ("pmm", 2, dict(epsilon=2.0, neighbours="replace")),
    "psmm": ("psmm", 2, dict(epsilon=1.0)),
    "haar_walk_1d": ("haar_walk", 1, dict(epsilon=1.0)),
    "haar_walk_2d": ("haar_walk", 2, dict(epsilon=0.5, neighbours="replace")),
    "sparse_marginals": ("sparse_marginals", 3, dict(epsilon=1.0, public_size=300, mc_draws=50)),
    "marginals": ("marginals", 3, dict(epsilon=1.0)),
    "marginals_gaussian": ("marginals", 4, dict(epsilon=1.0, delta=1e-5, n_public=400)),
    "private_evolution": ("private_evolution", 2, dict(epsilon=1.0, delta=1e-5, iterations=4, n_synthetic=100,
                                                       track_w1=False)),
    "low_dim": ("low_dim", 4, dict(epsilon=4.0)),
    "low_dim_paper": ("low_dim", 4, dict(epsilon=4.0, plan="paper")),
    "flat_histogram": ("flat_histogram", 2, dict(epsilon=1.0)),
    "per_point_laplace": ("per_point_laplace", 2, dict(epsilon=1.0)),
}

PINNED = {
    # issue 27: the flat histogram's default grid is dpsynth_core.defaults.flat_histogram_bins (9 x 9 here; k^d ≈ εn before)
    "flat_histogram": "6e7695a6baa05e87038f390daa2ae416de8640758bbe82698c7f8c1cfed1880f",
    # issue 27: the walk's default grid is grid_rule="study", dpsynth_core.defaults.haar_walk_grid (32 cells here)
    "haar_walk_1d": "028046e95e54d89ee8ad0d530fe4b9006c4ddb371001db721a2b59f71c36944d",
    # issue 27: grid_rule="study" at ε/2 under replace (6 per axis here)
    "haar_walk_2d": "d6eb4933ac41c4fdb991c04b28b83595b346c0ef9e6ec85ac8770f1fd633fd5a",
    # issue 27: low_dim's default plan (dpsynth_core.defaults.low_dim_plan) hands over to PSMM in full dimension
    # at d = 4 (no eigensolver: one digest for every kernel); the projection is pinned as low_dim_paper
    "low_dim": "6e101276e1b78afd0a20255b95b44e22f98e1fd97fe5855d987921424d44060d",
    "low_dim_paper": None,  # one digest per OpenBLAS kernel: LOW_DIM_BY_KERNEL
    "per_point_laplace": "76feb76a9932f377fb01520563a3fb93a69bf67fb3ced1c551d2186e55ef5ca7",
    "pmm_add_remove": "2766815739f7b556c8bbc9cc50e3d3ec8ab649bc486aad6492276a34caff4925",
    "pmm_replace": "dc8b5b65515920dcf71fdb8c3cf6af7103c63505cbe3a9e305efd11a63b9c93a",
    # Moved deliberately (issue 27, PE defaults study): the defaults are now the add/remove relation, the
    # bounded-Lipschitz projection of Algorithm 2, the "refine" budget schedule (70% of μ² on the last iteration,
    # its four finest scales) and the release of n̂ points rounded from the last privatised histogram.
    # Moved deliberately again (issue 37): the last iteration votes on the cells of a grid (3 times its finest
    # variation scale) its variations fall in and the release spreads each cell's points uniformly over it; the
    # bounded-Lipschitz projection is solved by LEMON's network simplex on integer masses (POT before); params
    # also record final_grid_side and cost.
    "private_evolution": "2d20fcced8191643525a0acf7f64ca735055d2373ae371df8efc42e685ab6bb1",
    # issue 27: PSMM's default cells are dpsynth_core.defaults.psmm_cells (12 per axis here)
    "psmm": "8d7dfb04593450081b4dbd235c360359944d06d26bd067d4f7fa5c0bd1ef4d2b",
    # issue 34: the default grid searches k >= 2 (sparse_marginals.DEFAULT_K_MIN); here k = 2 before and after, the
    # synthetic array is the same bit for bit, and the digest moved only because params["k_rule"] says "over k >= 2"
    "sparse_marginals": "eed5650fc9c5f7c5eebfd6f5cf097a6cfe3e2eac3d90e6f8367c1730a0855821",
    # issue 34: the marginal tables at their defaults (pure: discrete Laplace, a noisy n for the rules) and with δ
    # (Gaussian noise, n public). Moved deliberately (issue 34, the acceptance's misses): the default fine bins are
    # now a multiple of the coarse bins (defaults.marginals_align), 12 fine and 6 coarse here in both cases where
    # the rules gave 11 and 6 before (coarse bins of 2 and 1 fine bins, unequal widths); params["rules"]["fine"] says so
    "marginals": "c8dd7cbf8b08ce234062130ffbb8d457d8b16d5ece69848b199e76f1a460223e",
    "marginals_gaussian": "af157992be6c72dee14016ab46203885695e8290da8482bbf7b7d25549bd1695",
}


def _digest(rel) -> str:
    h = hashlib.sha256()
    syn = rel.domain.read(rel.synthetic) if rel.domain.is_mixed else rel.synthetic  # categories as indices
    h.update(np.ascontiguousarray(syn, dtype=np.float64).tobytes())
    public = rel.public(include_synthetic=False)
    public.pop("notes", None)  # wording may improve without changing the release
    h.update(json.dumps(to_jsonable({k: public[k] for k in ("epsilon", "delta", "neighbours", "ledger", "params",
                                                            "bound")}), sort_keys=True).encode())
    return h.hexdigest()


#: low_dim's digest under each OpenBLAS kernel (recorded with OPENBLAS_CORETYPE=<kernel>): LAPACK's
#: eigensolver differs in the last bit between kernels.
LOW_DIM_BY_KERNEL = {
    # issue 27: plan="paper" reproduces the earlier default release bit for bit (the same synthetic array); the
    # digests moved only because params now also record "plan" and "budget_split"
    "SkylakeX": "959dc703cd341b4c84fb42e1bc43f01e834173b32e85126b137eeeba13a951ee",
    "Haswell": "aad2a6921d7c8a1a87501eea3fe64b9cb6bf8c8f3c5dc7a1e7f0861aa0525340",
    "Sandybridge": "557624e009d3608313b3a8e9f17e147d93564802f5ea15f1935d00b0b2afdbd3",
    "Prescott": "bde2204683f883ad8752260593d6a60645fd891899138e7af970a9596bfa5ada",
}


def _blas_kernel() -> str | None:
    from threadpoolctl import threadpool_info

    for info in threadpool_info():
        if info.get("internal_api") == "openblas":
            return info.get("architecture")
    return None


@pytest.mark.parametrize("case", sorted(CASES))
def test_release_is_pinned(case):
    name, d, kwargs = CASES[case]
    expected = PINNED[case]
    if case == "low_dim_paper":
        kernel = _blas_kernel()
        if kernel not in LOW_DIM_BY_KERNEL:
            pytest.skip(f"low_dim's digest depends on the OpenBLAS kernel; none is recorded for {kernel!r} "
                        f"(recorded: {sorted(LOW_DIM_BY_KERNEL)})")
        expected = LOW_DIM_BY_KERNEL[kernel]
    rel = run(name, _data(d), Domain.unit(d), rng=7, **kwargs)
    assert _digest(rel) == expected, f"{case}: the release changed for the same data and seed"


_DIGESTS_IN_SUBPROCESS = """
import json, sys
sys.path.insert(0, sys.argv[1])
import test_golden_releases as g
out = {}
for case in sys.argv[2:]:
    name, d, kwargs = g.CASES[case]
    out[case] = g._digest(g.run(name, g._data(d), g.Domain.unit(d), rng=7, **kwargs))
print(json.dumps(out))
"""

#: The cases whose digests are checked under forced kernels: the ones with a published sum, and low_dim's
#: projection (one digest per kernel).
KERNEL_CASES = ("psmm", "haar_walk_2d", "pmm_add_remove", "private_evolution", "low_dim_paper")
FORCED_KERNELS = ("Haswell", "Sandybridge")  # both run on any x86-64 CPU with AVX2
_kernel_digests: dict[str, dict[str, str]] = {}


def _digests_under(core: str) -> dict[str, str]:
    """{case: digest} of every KERNEL_CASES release computed in one fresh interpreter with OpenBLAS forced
    to ``core`` (the kernel is chosen when NumPy loads, hence the subprocess); one interpreter per kernel
    and per test process, shared by the tests below."""
    if core not in _kernel_digests:
        here = str(Path(__file__).resolve().parent)
        out = subprocess.run([sys.executable, "-c", _DIGESTS_IN_SUBPROCESS, here, *KERNEL_CASES],
                             capture_output=True, text=True, env={**os.environ, "OPENBLAS_CORETYPE": core},
                             timeout=240, check=True)
        _kernel_digests[core] = json.loads(out.stdout.strip().splitlines()[-1])
    return _kernel_digests[core]


@pytest.mark.slow
@pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"),
                    reason="OPENBLAS_CORETYPE names x86-64 kernels; other CPUs have other kernel names")
@pytest.mark.parametrize("case", [c for c in KERNEL_CASES if c != "low_dim_paper"])
def test_pin_does_not_depend_on_the_blas_kernel(case):
    """NumPy's wheels bundle OpenBLAS, which picks its kernels by CPU; forcing the AVX2 (Haswell) and
    the AVX-only (Sandybridge) kernels must give the pinned digest (np.dot did not: see the module
    docstring). Both kernels run on any x86-64 CPU with AVX2."""
    got = {core: _digests_under(core)[case] for core in FORCED_KERNELS}
    assert got == {"Haswell": PINNED[case], "Sandybridge": PINNED[case]}


@pytest.mark.slow
@pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"),
                    reason="OPENBLAS_CORETYPE names x86-64 kernels; other CPUs have other kernel names")
def test_low_dim_pin_under_each_kernel():
    """Every recorded low_dim digest is checked here, whatever kernel this machine picks by itself."""
    got = {core: _digests_under(core)["low_dim_paper"] for core in FORCED_KERNELS}
    assert got == {core: LOW_DIM_BY_KERNEL[core] for core in got}


def _mixed_data(n: int = 400) -> tuple[object, Domain]:
    import pandas as pd

    rng = np.random.default_rng(20261126)
    sex = rng.choice(["F", "M"], n, p=[0.6, 0.4])
    frame = pd.DataFrame({"age": np.where(sex == "F", 0.3, 0.7) + rng.normal(scale=0.08, size=n), "sex": sex,
                          "region": rng.choice(["north", "south", "east"], n, p=[0.5, 0.3, 0.2])})
    dom = Domain(lower=[0.0], upper=[1.0], names=["age"], categories={"sex": ["F", "M"],
                                                                       "region": ["north", "south", "east"]})
    return frame, dom


#: Releases on a mixed table (a numeric column and two categorical ones); the synthetic categories are
#: hashed as their indices in the declared lists.
MIXED_CASES = {
    "pmm_mixed": ("pmm", dict(epsilon=1.0)),
    "psmm_mixed": ("psmm", dict(epsilon=1.0)),
    "flat_histogram_mixed": ("flat_histogram", dict(epsilon=1.0)),
    "haar_walk_mixed": ("haar_walk", dict(epsilon=1.0)),
    "sparse_marginals_mixed": ("sparse_marginals", dict(epsilon=1.0, public_size=300, mc_draws=50)),
    "private_evolution_mixed": ("private_evolution", dict(epsilon=1.0, delta=1e-5, iterations=3, n_synthetic=60,
                                                          track_w1=False)),
}
MIXED_PINNED = {
    "pmm_mixed": "42b8fbcf17bd7834c10b51d8ef60d882e17856c56129a3ba0cc2e63a65c216c5",
    # issue 27 (this and the next two): the study's rules at n/C per combination of categories, d = numeric columns
    "psmm_mixed": "5db06ca72e4c1450e9849bec0a1a53cace4c65e603f519a3606a33576c86665a",
    "flat_histogram_mixed": "de4dc01bc59ed21699f4a48cbf926fe236ff6f0b2b5805ba68477151a451d86a",
    "haar_walk_mixed": "e6b8b357974a3db755499f289eee355aef3ce24ed1acc139105995c0f4913cec",
    # issue 34: k = 2 before and after; only params["k_rule"] moved (it now says "over k >= 2")
    "sparse_marginals_mixed": "75dbed1031bc2a7df61260d4389502377489f199f3d1a739462706d0f74c8605",
    # issue 37: as private_evolution above (the grid on the numeric column, the categories kept)
    "private_evolution_mixed": "6c32f4716b195db58d7e5fc82269f56f61135bda89a335c239da3873a45e9d43",
}


@pytest.mark.parametrize("case", sorted(MIXED_CASES))
def test_mixed_release_is_pinned(case):
    name, kwargs = MIXED_CASES[case]
    frame, dom = _mixed_data()
    rel = run(name, frame, dom, rng=7, **kwargs)
    assert _digest(rel) == MIXED_PINNED[case], f"{case}: the release changed for the same data and seed"
