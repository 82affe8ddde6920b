"""The mathematics the dashboard's pages used to do themselves, now in the library (issue 35, step 4): a
table read for a preview, a dataset's numeric part, the sizes and slope fits of a rates sweep, the cell
geometry and grid views of the traces, the noise walks of the random-walk lesson."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from dpsynth_core import Domain, run
from dpsynth_core.dataset import Dataset
from dpsynth_core.datasets import clinic, two_bumps
from dpsynth_core.experiments import (
    DRAWN_BOUNDS,
    certified_w1_measure,
    rates_summary,
    sizes_per_decade,
    sweep,
)
from dpsynth_core.haar import noise_partial_sum_bound, noise_walks
from dpsynth_core.mechanisms.pmm import PMMTrace
from dpsynth_core.mechanisms.psmm import PSMMOwner, PSMMTrace
from dpsynth_core.mechanisms.sparse_marginals import SparseMarginalsTrace
from dpsynth_core.partition import cell_bounds
from dpsynth_core.tabular import CSVError, read_preview, read_table


# ----------------------------------------------------------------------------- the text-preview mode
def test_the_preview_reads_text_columns_as_text_on_the_rows_read():
    data = ('sep=;\nage;city;score\n30;"Paris; FR";1,5\n41;Lyon;\n52; Nice ;2,5\nNA;Lille;3\n61;"Metz";4\n\n\n'
            ).encode()
    table = read_preview(data, missing="drop")
    assert table.text_columns == ("city",) and table.dropped_rows == 2
    assert list(table.preview.columns) == ["age", "city", "score"]  # the file's order
    assert list(table.preview["city"]) == ["Paris; FR", "Nice", "Metz"]  # rows 3 and 5 dropped: a missing number
    assert list(table.frame["age"]) == [30.0, 52.0, 61.0]
    assert not any(note.topic == "text" for note in table.notes)  # read, not left out
    holes = read_preview(b"age,sex\n30,F\n41,\n52,NA\n60,M\n")
    assert list(holes.preview["sex"]) == ["F", None, None, "M"]  # missing text cells are None, never refused
    assert read_table(b"age,sex\n30,F\n").preview is None


def test_the_preview_keeps_the_rows_the_bad_cells_leave():
    """With bad rows dropped, the text cells stay on the rows of the numbers (row 3's bad score drops it)."""
    table = read_preview(b"age,city,score\n30,Paris,1\n41,Lyon,x\n52,Nice,2\n", drop_bad_rows=True)
    assert list(table.preview["city"]) == ["Paris", "Nice"] and list(table.preview["score"]) == [1.0, 2.0]
    assert table.bad_rows == 1


def test_the_reader_refuses_a_missing_categorical_cell_with_its_row():
    dom = Domain([0.0], [120.0], names=["age", "sex"], categories={"sex": ["F", "M"]})
    with pytest.raises(CSVError, match=r"row 3, column 'sex'") as info:
        read_table(b"age,sex\n30,F\n41,\n60,M\n", domain=dom)
    assert info.value.kind == "missing"


# ----------------------------------------------------------------------------- Dataset
def test_dataset_from_frame_and_its_numeric_part():
    ds = clinic(n=80)
    again = Dataset.from_frame(ds.to_frame(), ds.domain, "again")
    np.testing.assert_array_equal(again.X, ds.X)
    X, names = ds.numeric_part()
    assert names == ds.domain.numeric_names and X.shape == (80, ds.domain.k)
    part = ds.numeric_only()
    assert part.domain.names == names and not part.domain.is_mixed and part.name == "clinic_numeric"
    assert part.domain.declared == ds.domain.declared
    plain = Dataset(np.full((3, 2), 0.5), Domain.unit(2), "plain")
    assert plain.numeric_part()[1] == plain.domain.names and plain.numeric_part()[0] is plain.X
    with pytest.raises(ValueError, match="'F'"):  # an undeclared value, refused with the domain's words
        Dataset.from_frame(pd.DataFrame({"age": [0.5], "sex": ["X"]}),
                           Domain([0.0], [1.0], names=["age", "sex"], categories={"sex": ["F", "M"]}), "bad")


# ----------------------------------------------------------------------------- rates
def test_sizes_per_decade():
    assert sizes_per_decade(20, 200, 3) == [20, 43, 93, 200]
    assert sizes_per_decade(20, 20_000, 2) == [20, 63, 200, 632, 2000, 6325, 20000]


def test_rates_summary_fits_each_mechanism_and_draws_only_proven_or_reference_bounds():
    X = np.random.default_rng(3).random((400, 2))
    frames = [sweep(name, lambda n, rng: (X[:n], Domain.unit(2)), [50, 100, 200, 400], [1.0], 2, rng=0,
                    measure=certified_w1_measure()) for name in ("pmm", "psmm")]
    summary = rates_summary(pd.concat(frames, ignore_index=True), 2)
    assert (summary.runs["eps_n"] == summary.runs["epsilon"] * summary.runs["n"]).all()
    assert set(summary.fits) == {"pmm", "psmm"} and list(summary.table["runs"]) == [8, 8]
    # PMM's bound is shown for reference (least-squares consistency); PSMM's is a rate without constants
    assert "psmm" not in summary.bounds
    assert set(frames[0]["bound_type"]) <= set(DRAWN_BOUNDS)
    if "pmm" in summary.bounds:  # drawn where it is below the diameter
        assert (summary.bounds["pmm"][1] < 1.0).all()
    slope, _ = summary.fits["pmm"]
    row = summary.table.iloc[0]
    lo, hi = (float(v) for v in row["95% interval of a"][1:-1].split(","))
    assert lo <= slope <= hi and row["theory's exponent"] == -0.5


# ----------------------------------------------------------------------------- traces
def test_pmm_level_cells_and_noise_scales():
    rel = run("pmm", np.random.default_rng(0).random((300, 2)), Domain.unit(2), epsilon=1.0, rng=0,
              neighbours="replace")
    tr = PMMTrace.of(rel)
    lo, hi = tr.level_cells(3, rel.domain)
    ref_lo, ref_hi = cell_bounds(3, 2)
    np.testing.assert_array_equal(lo, ref_lo)
    np.testing.assert_array_equal(hi, ref_hi)
    assert math.isnan(tr.noise_scales[0]) and (tr.noise_scales[1:] > 0).all()  # the exact root under replace
    mixed = clinic(n=300)
    rel = run("pmm", mixed.to_frame(), mixed.domain, epsilon=1.0, rng=0)
    lo, hi = PMMTrace.of(rel).level_cells(4, mixed.domain)
    assert lo.shape == (16, mixed.domain.k) and (hi > lo).all() and (hi <= 1).all()


def test_psmm_numeric_measure_sums_the_combinations():
    mixed = clinic(n=300)
    rel = run("psmm", mixed.to_frame(), mixed.domain, epsilon=1.0, rng=0)
    tr, own = PSMMTrace.of(rel), PSMMOwner.of(rel)
    true = tr.numeric(own.true_measure)
    assert true.size == tr.k ** tr.d and math.isclose(true.sum(), float(np.sum(own.true_measure)))


def test_sparse_marginals_grid_view_is_the_table_column_major():
    rel = run("sparse_marginals", np.random.default_rng(1).random((200, 2)), Domain.unit(2), epsilon=2.0,
              rng=0, neighbours="replace", public_size=200, mc_draws=20)
    tr = SparseMarginalsTrace.of(rel)
    v = tr.noisy_marginals[0]
    np.testing.assert_array_equal(tr.grid_view(v), np.asarray(v)[: tr.k ** 2].reshape(tr.k, tr.k).T.ravel())


def test_noise_walks_and_two_bumps():
    walks = noise_walks(256, 0.5, 2.0, 3, rng=4)
    assert walks.superregular.shape == walks.iid.shape == (3, 256)
    assert (walks.superregular_bound == noise_partial_sum_bound(256, 0.5)).all()
    assert math.isclose(walks.iid_spread[-1], math.sqrt(2 * 256) * 2.0)
    mu, nu = two_bumps(0.1)
    # mean of ν - mean of μ = 0.028 + 0.76 shift (other weights, the right cluster moved by shift / 2); 0.01 is
    # over three standard errors of the difference of two means of 5000 draws (sd about 0.2 each, fixed seed)
    assert mu.size == nu.size == 5000 and math.isclose(nu.mean() - mu.mean(), 0.028 + 0.76 * 0.1, abs_tol=0.01)
