"""Private Evolution on tables with categorical columns (docs/mixed-data.md, PE's section).

The votes, the bounded-Lipschitz projection and the owner's W1 use the mixed metric
max(||u_x - u_y||_inf, max_j w_j [c_xj != c_yj]); the variation redraws a category with probability
min(1, σ_l / w_j). Privacy is unchanged: one record still casts one vote.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from mixed_tables import CATS, mixed_table
from mixed_tables import mixed_domain as _dom

from dpsynth_core import run
from dpsynth_core.audit import audit
from dpsynth_core.evolution import (
    MixedMetric,
    bl_weights_graph,
    mixed_uniform,
    mixed_variation_api,
    nn_assign,
)
from dpsynth_core.mechanisms.private_evolution import PEOwner, PETrace

OWNER = "private_evolution"


def _table(n: int = 2000, seed: int = 0) -> pd.DataFrame:
    """Two tight clusters of age by sex, region skewed: the categories carry structure a release must find."""
    return mixed_table(n, seed, age_sd=3.0, bmi_sd=2.0, ages=(35.0, 70.0), region_p=(0.6, 0.3, 0.1))


# --------------------------------------------------------------------------------- the blocks
@pytest.mark.parametrize("norm", ["linf", "l2", "l1"])
def test_mixed_votes_equal_brute_force_with_ties_to_the_smallest_index(norm):
    """The grouped KD-tree search equals the argmin of the full distance matrix (first minimiser), on
    random rows and on a coarse grid full of ties, with combinations missing among the candidates."""
    dom = _dom()
    mm = MixedMetric.of(dom, norm)
    rng = np.random.default_rng(1)
    for trial in range(24):
        E = mixed_uniform(150, 4, "box", rng, mm)
        V = mixed_uniform(int(rng.integers(1, 50)), 4, "box", rng, mm)
        if trial % 2:
            E[:, mm.num], V[:, mm.num] = np.round(E[:, mm.num] * 4) / 4, np.round(V[:, mm.num] * 4) / 4
        V[:, mm.cat[1]] = np.minimum(V[:, mm.cat[1]], trial % 3)  # some regions absent from V
        ref = np.argmin(mm.pairwise(E, V), axis=1)
        assert np.array_equal(nn_assign(E, V, mm), ref), (norm, trial)


def test_weighted_category_changes_the_nearest_candidate():
    """With a light column (w = 0.1) a category mismatch costs less than a numeric move of 0.3."""
    dom = _dom(weights={"region": 0.1})
    mm = MixedMetric.of(dom)
    x = np.array([[0.5, 0.5, 0, 0]])
    V = np.array([[0.8, 0.5, 0, 0], [0.5, 0.5, 0, 1]])
    assert nn_assign(x, V, mm).tolist() == [1]
    assert nn_assign(x, V, MixedMetric.of(_dom())).tolist() == [0]  # unit weights: the category costs 1


def test_variation_redraws_categories_at_the_stated_rate_and_stays_declared():
    """q = min(1, σ/w): at σ = 0.2 and unit weights a variation redraws a category with probability 0.2,
    and changes it with probability 0.2 (1 - 1/|C|). 40 000 draws: the standard error is ~0.002, the
    tolerance 0.01 is five of them."""
    mm = MixedMetric.of(_dom())
    rng = np.random.default_rng(2)
    S = np.tile([[0.5, 0.5, 1, 2]], (10_000, 1))
    V = mixed_variation_api(S, np.array([0.2]), "box", rng, mm)
    moved = V[np.arange(V.shape[0]) % 3 != 0]  # the variations (row 0 of each block is the point)
    assert abs(np.mean(moved[:, 2] != 1) - 0.2 * (1 - 1 / 2)) < 0.01
    assert abs(np.mean(moved[:, 3] != 2) - 0.2 * (1 - 1 / 3)) < 0.01
    assert set(np.unique(V[:, 2])) <= {0, 1} and set(np.unique(V[:, 3])) <= {0, 1, 2}
    assert np.all((V[:, :2] >= 0) & (V[:, :2] <= 1))


def test_bl_projection_on_a_mixed_graph_is_a_probability_vector():
    mm = MixedMetric.of(_dom())
    rng = np.random.default_rng(3)
    V = mixed_uniform(600, 4, "box", rng, mm)
    nu = rng.normal(1 / 600, 1 / 600, 600)
    for k in (599, 8):  # complete graph (exact distances) and the combination kNN graph + hub
        tau = bl_weights_graph(nu, V, mm, k=k)
        assert tau.min() >= 0 and tau.sum() == pytest.approx(1.0)


# --------------------------------------------------------------------------------- the mechanism
def test_mixed_release_frame_ledger_and_declared_categories():
    dom = _dom()
    rel = run(OWNER, _table(800, seed=4), dom, epsilon=1.0, delta=1e-5, rng=5)
    assert isinstance(rel.synthetic, pd.DataFrame) and list(rel.synthetic.columns) == list(dom.names)
    for col, labels in CATS.items():
        assert set(rel.synthetic[col].astype(str)) <= set(labels)
    assert rel.ledger.epsilon == pytest.approx(rel.epsilon) and rel.ledger.delta == pytest.approx(rel.delta)
    assert rel.epsilon == 1.0 and rel.delta == 1e-5 and rel.is_dp
    assert rel.params["metric"] == "linf" and "min(1, sigma_l / w_j)" in rel.params["categorical"]["variation"]
    tr = PETrace.of(rel)
    assert np.array_equal(tr.synthetic[-1], dom.read(rel.synthetic))  # the trace holds encoded rows
    assert all(set(np.unique(V[:, 3])) <= {0, 1, 2} for V in tr.variations if V is not None)
    public = rel.public_json(include_synthetic=True)
    assert "clean_histograms" not in public and "w1_histograms" not in public


def test_w1_to_the_data_falls_over_the_iterations_on_a_mixed_table():
    """Owner view, exact W1 under the mixed metric, fixed seeds. From the uniform start (W1 about 0.6:
    half the mass has the wrong sex, at distance 1) the default run must end at least 3 times closer;
    measured 6.3-10x on these seeds, so a factor 3 leaves room without passing a run that does not
    converge (the start itself is 1x)."""
    dom = _dom()
    df = _table(2000, seed=6)
    for seed in (0, 1, 2):
        w1 = PEOwner.of(run(OWNER, df, dom, epsilon=1.0, delta=1e-5, rng=seed, track_w1=True)).w1
        assert w1[0] > 0.4 and w1[-1] < w1[0] / 3, (seed, w1)


def test_mixed_dask_is_bit_identical():
    import dask.dataframe as dd

    dom = _dom()
    df = _table(1500, seed=8)
    kw = dict(epsilon=1.0, delta=1e-5, iterations=3, track_w1=False, rng=9)
    ref = run(OWNER, df, dom, **kw)
    got = run(OWNER, dd.from_pandas(df, npartitions=5), dom, **kw)
    pd.testing.assert_frame_equal(ref.synthetic, got.synthetic)
    assert ref.public_json() == got.public_json()


def test_audit_changing_one_records_category_stays_within_epsilon():
    """Replace neighbours: one private record whose region changes (its age and sex stay). One iteration:
    the record's vote is the whole signal; the statistic is the Gaussian likelihood-ratio direction,
    the noisy vote of the variation D' votes for minus the one D votes for. At α = 0.05 with fixed
    seeds, ε̂ <= ε must hold for a correct mechanism (δ = 1e-3 is passed to the audit).

    Power at 1000 trials: the same audit of PE calibrated for 4ε gives ε̂ of 1.33, 1.53 and 1.45 at audit
    seeds 3, 103 and 203, so a bug that quadruples the loss fails this test (3ε: 0.98 to 1.07; it was 1.09
    to 1.23 at the 1500 trials used before). Threshold events see little of a Gaussian's loss at this δ;
    the noise step itself is audited with a million draws in tests/core/test_private_evolution.py."""
    dom = _dom()
    mm = MixedMetric.of(dom)
    D = dom.read(pd.DataFrame({"age": [30.0], "bmi": [25.0], "sex": ["F"], "region": ["north"]}))
    D2 = D.copy()
    D2[0, 3] = 2  # north -> east
    eps, delta = 1.0, 1e-3
    U, U2 = dom.to_unit(D), dom.to_unit(D2)

    def stat(release):
        V = dom.to_unit(release.trace.variations[0])
        noisy = np.asarray(release.trace.noisy_histograms[0], dtype=float)
        old, new = (int(j) for j in nn_assign(np.vstack([U, U2]), V, mm))  # row by row: one search for both
        return 0.0 if old == new else float(noisy[new] - noisy[old])

    def mech(X, rng):
        return run(OWNER, X, dom, epsilon=eps, delta=delta, iterations=1, n_synthetic=4, track_w1=False,
                   neighbours="replace", rng=rng)

    res = audit(mech, D, D2, statistic=stat, trials=1000, epsilon=eps, delta=delta, rng=3)
    assert np.unique(np.r_[res.samples_D, res.samples_D_prime]).size > 1
    assert res.epsilon_lower <= eps, res.summary()
