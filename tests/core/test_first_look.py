"""The first screen's library (dpsynth_core.first_look) and its words: rows side by side, what a release keeps
in the data's units, the membership question asked of a table and of releases from its neighbours.

Releases use fixed seeds: the numbers asserted are those of the seeds given (the Home page uses the teaching
seed 0 through ``first_screen(clinic(), rng=0)``), and each tolerance is said where it is used.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from dpsynth_core import Domain, run
from dpsynth_core.dataset import Dataset
from dpsynth_core.datasets import CLINIC_UNITS, clinic
from dpsynth_core.first_look import (
    CountQuery,
    first_screen,
    kept_in_units,
    membership_demo,
    membership_question,
    sample_rows,
)
from dpsynth_core.wording import epsilon_meaning, kept_sentence, membership_words

TEACHING_SEED = 0  # dashboard.settings.TEACHING_SEED: the seed of the Home page's first screen


@pytest.fixture(scope="module")
def table() -> Dataset:
    return clinic()


def _group_sizes_by_brute_force(frame: pd.DataFrame, dom: Domain, column: str, half_width: float) -> np.ndarray:
    v = frame[column].to_numpy(dtype=float)
    lo, hi = np.floor(v - half_width), np.ceil(v + half_width)
    same = np.ones((len(v), len(v)), dtype=bool)
    for c in dom.categories:
        labels = frame[c].astype(str).to_numpy()
        same &= labels[:, None] == labels[None, :]
    same &= (v[None, :] >= lo[:, None]) & (v[None, :] <= hi[:, None])
    return same.sum(axis=1)


def test_the_question_is_about_the_person_in_the_smallest_group(table):
    """membership_question picks the row whose group (same categories, age within whole-unit bounds around its
    own) is smallest, and its CountQuery counts exactly that group: checked against every pair of rows."""
    target, query = membership_question(table)
    frame = table.to_frame()
    sizes = _group_sizes_by_brute_force(frame, table.domain, "age", 0.025 * (100 - 18))
    assert sizes[target] == sizes.min()
    assert target == int(np.argmin(sizes))  # the first among equals, in the table's order
    assert query.count(frame) == sizes[target]
    assert query.mask(frame)[target]  # the person is in their own group
    (col, lo, hi), = query.ranges
    assert col == "age" and lo == math.floor(lo) and hi == math.ceil(hi) and lo <= frame["age"][target] <= hi
    assert dict(query.equals) == {c: str(frame[c][target]) for c in ("sex", "region", "diabetes")}


def test_the_question_on_a_numeric_table_and_its_refusals():
    rng = np.random.default_rng(3)
    ds = Dataset(rng.random((300, 2)), Domain.unit(2, names=("a", "b")), "unit")
    target, query = membership_question(ds, column="b", half_width=0.01)
    assert query.equals == () and query.ranges[0][0] == "b"
    assert query.count(ds.to_frame()) >= 1
    with pytest.raises(ValueError, match="'column' parameter of first_look must be one of the numeric columns"):
        membership_question(ds, column="c")
    with pytest.raises(ValueError, match="'half_width' parameter of first_look"):
        membership_question(ds, half_width=0.0)


def test_the_table_answers_and_the_releases_are_real_runs(table):
    demo = membership_demo(table, epsilon=1.0, releases=4, rng=11)
    assert demo.table_with == demo.table_without + 1  # the difference is the person
    assert len(demo.released_with) == len(demo.released_without) == demo.releases == 4
    again = membership_demo(table, epsilon=1.0, releases=4, rng=11)
    assert again == demo  # the same seed, the same releases
    other = membership_demo(table, epsilon=1.0, releases=4, rng=12)
    assert other.released_with + other.released_without != demo.released_with + demo.released_without
    # the answers are counts of PMM releases at ε = 1: recompute the first release from the table by hand
    first = np.random.default_rng(11).spawn(8)[0]
    rel = run("pmm", table.X, table.domain, epsilon=1.0, neighbours="add_remove", rng=first)
    assert demo.query.count(rel.synthetic) == demo.released_with[0]


def test_the_guess_cap_and_the_overlap():
    demo = membership_demo(clinic(n=300), epsilon=1.0, releases=2, rng=0)
    assert demo.guess_cap == pytest.approx(math.e / (1 + math.e), abs=1e-12)  # 0.731: the DP cap at ε = 1
    cap = type(demo)(**{**demo.__dict__, "epsilon": 1.0, "delta": 1e-3}).guess_cap
    assert cap == pytest.approx((math.e + 1e-3) / (1 + math.e), abs=1e-12)
    split = type(demo)(**{**demo.__dict__, "released_with": (0, 1, 2), "released_without": (2, 3, 4)})
    assert split.overlap == pytest.approx(2 / 6)  # the answer 2 came from both tables: 2 of 6 answers
    apart = type(demo)(**{**demo.__dict__, "released_with": (1, 1), "released_without": (0, 0)})
    assert apart.overlap == 0.0


def test_the_home_page_claims_hold_at_the_teaching_seed(table):
    """What the Home lesson says a class will see, with the page's own call (teaching seed, 8 releases each):
    at ε = 1 the releases' answers overlap, at ε = 100 they separate and every release answers as its table does;
    at ε = 0.01 the averages are far off, at ε = 10 close. Exact for these seeds (no tolerance: deterministic)."""
    at = {eps: first_screen(table, epsilon=eps, rng=TEACHING_SEED, units=CLINIC_UNITS)
          for eps in (0.01, 1.0, 10.0, 100.0)}
    assert at[1.0].demo.overlap > 0.5
    far = at[100.0].demo
    assert far.overlap == 0.0
    assert set(far.released_with) == {far.table_with} and set(far.released_without) == {far.table_without}
    off = {eps: {m.column: m.off for m in fs.kept.means} for eps, fs in at.items()}
    share = {eps: max(s.off for s in fs.kept.shares) for eps, fs in at.items()}
    assert off[0.01]["age"] > 1 and off[0.01]["systolic_bp"] > 10 and share[0.01] > 0.10  # years, mmHg, tens of pp
    assert off[10.0]["age"] < 1 and off[10.0]["systolic_bp"] < 5 and share[10.0] < 0.015  # within a year, a few mmHg


def test_kept_is_the_difference_of_the_means_and_shares(table):
    rel = run("pmm", table.X, table.domain, epsilon=1.0, rng=5)
    kept = kept_in_units(table.to_frame(), rel.synthetic, table.domain, epsilon=1.0, units=CLINIC_UNITS)
    real, syn = table.to_frame(), rel.synthetic
    assert kept.rows == len(syn)
    for m in kept.means:  # clinic's values lie inside its bounds: the clamped means are the plain ones
        assert m.real == pytest.approx(real[m.column].mean(), rel=1e-12)
        j = list(table.domain.numeric_names).index(m.column)
        lo, hi = table.domain.lower[j], table.domain.upper[j]
        assert m.synthetic == pytest.approx(syn[m.column].clip(lo, hi).mean(), rel=1e-12)
        assert m.unit == CLINIC_UNITS[m.column]
    for s in kept.shares:
        r = real[s.column].astype(str).value_counts(normalize=True)
        y = syn[s.column].astype(str).value_counts(normalize=True)
        gaps = (y.reindex(r.index.union(y.index), fill_value=0) - r.reindex(r.index.union(y.index), fill_value=0)).abs()
        assert s.off == pytest.approx(gaps.max(), abs=1e-12) and s.category == gaps.idxmax()
    text = kept_sentence(kept)
    assert text.startswith("At ε = 1, the average age is off by ") and "years" in text and "mmHg" in text
    worst = max(kept.shares, key=lambda s: s.off)
    assert f"{100 * worst.off:.1f} percentage points" in text


def test_an_empty_release_keeps_nothing_and_says_so(table):
    empty = table.to_frame().iloc[:0]
    kept = kept_in_units(table.to_frame(), empty, table.domain, epsilon=0.001)
    assert (kept.rows, kept.means, kept.shares) == (0, (), ())
    assert "the release is empty" in kept_sentence(kept)


def test_rows_side_by_side(table):
    rel = run("pmm", table.X, table.domain, epsilon=1.0, rng=5)
    real, syn = sample_rows(table.to_frame(), rel.synthetic, table.domain, rows=8, rng=1)
    assert len(real) == len(syn) == 8 and list(real.columns) == list(syn.columns) == list(table.domain.names)
    assert (real["age"] == real["age"].round(1)).all()
    again = sample_rows(table.to_frame(), rel.synthetic, table.domain, rows=8, rng=1)
    pd.testing.assert_frame_equal(real, again[0])
    pd.testing.assert_frame_equal(syn, again[1])
    short, _ = sample_rows(table.to_frame().iloc[:3], rel.synthetic, table.domain, rows=8)
    assert len(short) == 3


def test_the_first_screen_is_one_reproducible_call(table):
    a = first_screen(table, epsilon=1.0, rng=TEACHING_SEED, units=CLINIC_UNITS)
    b = first_screen(table, epsilon=1.0, rng=TEACHING_SEED, units=CLINIC_UNITS)
    assert a.n == 2000 and a.release.epsilon == 1.0 and a.release.is_dp
    np.testing.assert_array_equal(table.domain.read(a.release.synthetic), table.domain.read(b.release.synthetic))
    assert a.kept == b.kept and a.demo == b.demo
    replace = first_screen(table, epsilon=1.0, neighbours="replace", rng=TEACHING_SEED)
    assert "replace" in replace.release.privacy
    assert replace.demo == a.demo  # the membership question is always about adding or removing the person


def test_the_words(table):
    demo = membership_demo(table, epsilon=1.0, releases=3, rng=2)
    question, said_table, said_releases = membership_words(demo, who="patient")
    assert question.startswith("Is this patient in the table: age ") and "how many rows have age from" in question
    assert said_table.startswith(f"The table answers {demo.table_with}; without this patient it would answer "
                                 f"{demo.table_without}.")
    assert f"{demo.releases} releases from each table" in said_releases
    apart = type(demo)(**{**demo.__dict__, "epsilon": 100.0, "released_with": (1, 1, 1), "released_without": (0, 0, 0)})
    assert "no answer came from both tables" in membership_words(apart)[2]
    assert "be right at most 73% of the time" in epsilon_meaning(1.0)
    assert "e^1 ≈ 2.7 times" in epsilon_meaning(1.0)
    assert "50.0%" in epsilon_meaning(0.001) and "99.995%" in epsilon_meaning(10.0)
    assert "hardly limits a guess" in epsilon_meaning(100.0) and "10^43" in epsilon_meaning(100.0)
    assert "except with probability δ = 10⁻⁶" in epsilon_meaning(1.0, 1e-6)


def test_count_query_counts_labels_and_ranges():
    frame = pd.DataFrame({"age": [30.0, 35.0, 40.0, 41.0], "sex": ["F", "M", "F", "F"]})
    q = CountQuery((("age", 30.0, 40.0),), (("sex", "F"),))
    assert q.count(frame) == 2  # both ends included; 41 is out, M is out
