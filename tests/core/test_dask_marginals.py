"""The marginal-table mechanism on Dask input: bit for bit the NumPy release.

``marginals`` reads the rows once, through the integer counts of every fine 1-way and coarse 2-way table
(``marginals.marginal_counts`` summed by ``Rows.sum``); the noise, the fit, the sampling and the
certificate are post-processing on the client. With the same rng the whole public report from a Dask
array or DataFrame, in any number of partitions, must equal the NumPy one exactly (not within a tolerance).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from dask_support import PARTITIONS, dask_array, dask_frame, public_json

from dpsynth_core import Domain
from dpsynth_core.mechanisms import run
from dpsynth_core.mechanisms.marginals import marginal_counts, plan_layout
from dpsynth_core.rows import merge

pytestmark = pytest.mark.usefixtures("dask_synchronous")

NAMES = ("age", "income", "hours", "score")


def _domain(d: int) -> Domain:
    return Domain([0.0, 0.0, 0.0, -1.0][:d], [100.0, 5.0, 60.0, 1.0][:d], names=NAMES[:d],
                  integers=("hours",) if d >= 3 else ())


def _data(n: int, d: int, seed: int = 0) -> np.ndarray:
    """Two clusters, some rows outside the domain (clamped), a whole-number column with a spike at 0."""
    rng = np.random.default_rng(seed)
    lab = rng.random(n) < 0.4
    hours = np.where(rng.random(n) < 0.6, 0.0, np.round(rng.gamma(2.0, 8.0, n)))
    X = np.column_stack([rng.normal(np.where(lab, 30, 60), 18), rng.gamma(np.where(lab, 1.5, 3.0), 0.8), hours,
                         rng.normal(np.where(lab, -0.3, 0.4), 0.4)])[:, :d]
    X[::17, 0] = 50.0  # a fine-bin boundary of the age axis
    return X


CASES = [
    (3, 1500, dict()),  # pure ε, defaults (a noisy size for the rules)
    (4, 2000, dict(delta=1e-5, n_public=2000)),  # the rule's family with δ, n public
    (4, 900, dict(fine=10, coarse=5, neighbours="replace", noise="laplace")),
]


@pytest.mark.parametrize("d,n,kw", CASES, ids=["pure-defaults", "delta-public-n", "replace-explicit"])
def test_dask_release_is_bit_identical(d, n, kw):
    X = _data(n, d)
    ref_rel = run("marginals", X, _domain(d), epsilon=1.0, rng=5, **kw)
    assert ref_rel.owner.n_clamped > 0
    ref = public_json(ref_rel)
    for parts in PARTITIONS:
        assert public_json(run("marginals", dask_array(X, parts), _domain(d), epsilon=1.0, rng=5, **kw)) == ref, parts
    assert public_json(run("marginals", dask_frame(X, NAMES[:d], 7), _domain(d), epsilon=1.0, rng=5, **kw)) == ref


def test_mixed_frame_is_bit_identical():
    dom = Domain([0.0, 0.0], [100.0, 5.0], names=("age", "sex", "income", "region"),
                 categories={"sex": ["F", "M"], "region": ["a", "b", "c"]})
    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"age": rng.uniform(10, 90, 800), "sex": rng.choice(["F", "M"], 800),
                          "income": rng.gamma(2, 0.8, 800), "region": rng.choice(["a", "b", "c"], 800)})
    import dask.dataframe as dd

    ref = public_json(run("marginals", frame, dom, epsilon=2.0, rng=1))
    assert public_json(run("marginals", dd.from_pandas(frame, npartitions=6), dom, epsilon=2.0, rng=1)) == ref


def test_the_release_depends_on_the_data():
    """Guards the comparisons above against a release that ignores X (then any input would agree)."""
    a = public_json(run("marginals", dask_array(_data(600, 3), 7), _domain(3), epsilon=1.0, rng=0, n_public=600))
    b = public_json(run("marginals", dask_array(_data(600, 3, seed=1), 7), _domain(3), epsilon=1.0, rng=0,
                        n_public=600))
    assert a != b


def test_counts_merge_exactly_over_partitions():
    dom = _domain(4)
    U = dom.to_unit(_data(503, 4))
    lay = plan_layout(dom, 12, 4)
    whole = marginal_counts(U, lay)
    for parts in (2, 7, 64):
        blocks = [marginal_counts(b, lay) for b in np.array_split(U, parts)]
        total = blocks[0]
        for b in blocks[1:]:
            total = merge(total, b)
        for x, y in zip(whole[0] + whole[1], total[0] + total[1], strict=True):
            assert np.array_equal(x, y) and y.dtype == np.int64
