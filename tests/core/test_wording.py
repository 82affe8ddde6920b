"""Typed facts on a release and the library's words for them (``dpsynth_core.wording``).

Each mechanism says what kind of claim its bound is (``Release.bound_type``, a ``BoundKind``); whether a
bound says anything is ``Release.bound_is_vacuous`` (at or above ``Domain.diameter``); the headline's words
come from those facts, never from the wording of ``bound_kind`` or of the notes.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from dpsynth_core import BoundKind, Domain, run
from dpsynth_core.mechanisms import bind
from dpsynth_core.wording import (
    BOUND_KIND_WORDS,
    BOUND_LABELS,
    RELATION_WORDS,
    bound_cell,
    bound_words,
    delta_text,
    vacuous_note,
    w1_interval_text,
    w1_metric_text,
)


def _data(d: int, n: int = 300) -> np.ndarray:
    rng = np.random.default_rng(5)
    return np.clip(rng.normal(0.5, 0.15, size=(n, d)), 0.0, 1.0)


#: (mechanism, d, keywords) -> the kind of bound its release carries, and whether it carries a number.
KINDS = [
    ("pmm", 2, {}, BoundKind.REFERENCE, True),  # least-squares consistency: the proof covers other maps
    ("pmm", 2, {"consistency": "proportional"}, BoundKind.PROVEN, True),
    ("psmm", 2, {}, BoundKind.RATE, True),  # Theorem 7 evaluated with constant 1
    ("haar_walk", 2, {}, BoundKind.PROVEN, True),
    ("haar_walk", 2, {"projection": "clip"}, BoundKind.NONE, False),
    ("sparse_marginals", 3, {"public_size": 300, "mc_draws": 20, "neighbours": "replace"}, BoundKind.CERTIFICATE,
     True),
    ("private_evolution", 2, {"delta": 1e-5, "iterations": 2, "n_synthetic": 50, "track_w1": False},
     BoundKind.RATE, False),
    ("low_dim", 4, {"plan": "paper"}, BoundKind.ESTIMATE, True),
    ("low_dim", 4, {}, BoundKind.RATE, True),  # the default plan hands over to PSMM at d = 4: PSMM's kind
    ("flat_histogram", 2, {}, BoundKind.NONE, False),
    ("per_point_laplace", 2, {}, BoundKind.NONE, False),
]


@pytest.mark.parametrize(("name", "d", "kwargs", "kind", "number"), KINDS,
                         ids=[f"{k[0]}-{k[3].value}" for k in KINDS])
def test_each_mechanism_says_what_kind_of_bound_it_releases(name, d, kwargs, kind, number):
    rel = run(name, _data(d), Domain.unit(d), epsilon=4.0, rng=1, **kwargs)
    assert rel.bound_type is kind
    assert (rel.bound is not None) == number
    assert rel.public()["bound_type"] == kind.value
    words = bound_words(rel)
    assert words.value == "—" or kind in (BoundKind.PROVEN, BoundKind.CERTIFICATE, BoundKind.ESTIMATE,
                                          BoundKind.REFERENCE)
    assert words.label == BOUND_LABELS[kind]  # one label per kind, whatever the value shows
    assert bound_cell(rel.bound, rel.bound_type, rel.bound_is_vacuous).endswith(f"({BOUND_KIND_WORDS[kind]})")


def test_one_label_per_kind_of_bound_from_one_table():
    """Every kind has its label, the labels differ, and all say the same thing first ("Bound on W1: ...") so that the
    same kind of claim reads the same on every page; a vacuous bound keeps its kind's label (only the value is
    "—")."""
    assert set(BOUND_LABELS) == set(BoundKind) == set(BOUND_KIND_WORDS)
    assert len(set(BOUND_LABELS.values())) == len(BoundKind)
    assert all(label == f"Bound on W1: {BOUND_KIND_WORDS[k]}" for k, label in BOUND_LABELS.items())
    small = run("pmm", _data(2, 20), Domain.unit(2), epsilon=0.05, rng=0)
    assert small.bound_is_vacuous and bound_words(small).label == BOUND_LABELS[BoundKind.REFERENCE]


def test_a_bound_in_a_table_cell():
    assert bound_cell(0.1234, "reference") == "0.123 (reference)"
    assert bound_cell(0.1234, BoundKind.RATE) == "— (rate only)"  # a rate with constant 1 is no bound
    assert bound_cell(2.5, "proven", vacuous=True) == "— (proven)"
    assert bound_cell(None, "none") == bound_cell(float("nan"), "none") == "— (none)"


def test_domain_diameter_is_the_largest_distance():
    assert Domain.unit(3).diameter == 1.0
    mixed = Domain([0.0], [1.0], names=["age", "sex", "region"], categories={"sex": ["F", "M"], "region": ["a", "b"]},
                   weights={"sex": 0.5, "region": 3.0})
    assert mixed.diameter == 3.0  # the heavier category weight
    light = dataclasses.replace(mixed, weights={"sex": 0.5, "region": 0.25})
    assert light.diameter == 1.0  # the unit cube's


def test_a_bound_at_the_diameter_is_vacuous_and_said_once():
    """At n = 20 and ε = 0.05 PMM's bound is far above 1: vacuous, with one note, and "—" in the headline."""
    rel = run("pmm", _data(2, 20), Domain.unit(2), epsilon=0.05, rng=0, consistency="proportional")
    assert rel.bound > 1.0 and rel.bound_is_vacuous
    assert rel.notes.count(vacuous_note(rel.bound, 1.0)) == 1
    words = bound_words(rel)
    assert (words.label, words.value, words.vacuous) == ("Bound on W1: proven", "—", True)
    assert words.help == vacuous_note(rel.bound, 1.0, what="paper's bound")
    big = run("pmm", _data(2, 2000), Domain.unit(2), epsilon=10.0, rng=0, consistency="proportional")
    assert not big.bound_is_vacuous and bound_words(big).value == f"{big.bound:.3g}"


def test_bound_words_follow_the_kind_not_the_wording():
    """The same release with its bound_kind text replaced by nonsense gets the same label and value: the words
    come from bound_type."""
    rel = run("pmm", _data(2, 2000), Domain.unit(2), epsilon=10.0, rng=0)
    before = bound_words(rel)
    rel.bound_kind = "certificate constant-free rate baseline estimated"  # every word the old code looked for
    after = bound_words(rel)
    assert (after.label, after.value) == (before.label, before.value) == ("Bound on W1: reference", f"{rel.bound:.3g}")
    rel.bound_type = BoundKind.RATE
    assert (bound_words(rel).label, bound_words(rel).value) == ("Bound on W1: rate only", "—")
    rel.bound_type = BoundKind.CERTIFICATE
    assert (bound_words(rel).label, bound_words(rel).value) == ("Bound on W1: certified (marginals)", f"{rel.bound:.3g}")


def test_a_release_with_a_bound_must_say_its_kind():
    rel = bind("pmm", epsilon=1.0)(_data(2), Domain.unit(2), rng=0)
    from dpsynth_core.mechanisms.pmm import pmm

    p = pmm.prepare(_data(2), Domain.unit(2), epsilon=1.0, rng=0)
    with pytest.raises(TypeError, match="what kind of bound"):
        p.finish(rel.synthetic, ledger=rel.ledger, trace=rel.trace, owner=rel.owner, params={}, bound=0.1)
    assert p.finish(rel.synthetic, ledger=rel.ledger, trace=rel.trace, owner=rel.owner,
                    params={}).bound_type is BoundKind.NONE


def test_small_words():
    assert RELATION_WORDS == {"add_remove": "add / remove one record", "replace": "replace one record"}
    assert [delta_text(x) for x in (1e-6, 1e-12, 5e-7)] == ["10⁻⁶", "10⁻¹²", "5e-07"]
    assert w1_interval_text(0.01, 0.0102) == "[0.01000, 0.01020]"
    assert w1_metric_text(0.0099, 0.01) == "≈ 0.00995" and w1_metric_text(0.0, 0.0147) == "[0, 0.0147]"
