"""One eligibility and settings path: ``MechanismSpec.misfit`` (the limits a mechanism declares) and
``MechanismSpec.check_settings`` (ε, δ, the relation), used alike by ``bind`` and by a mechanism's call."""

from __future__ import annotations

import numpy as np
import pytest

from dpsynth_core import MECHANISMS, Domain
from dpsynth_core.datasets import clinic
from dpsynth_core.mechanisms import SETTINGS, MisfitKind, bind, run


def test_misfit_names_the_limit_and_prepare_raises_it():
    mixed = clinic(n=60)
    psmm, low_dim, pmm = MECHANISMS["psmm"], MECHANISMS["low_dim"], MECHANISMS["pmm"]
    assert pmm.misfit(mixed.domain, mixed.n) is None  # PMM takes categorical columns
    no_cats = MECHANISMS["low_dim"].misfit(mixed.domain)
    assert no_cats.kind is MisfitKind.CATEGORIES and "categorical" in no_cats.reason
    with pytest.raises(ValueError, match="does not take categorical columns") as info:
        run("low_dim", mixed.to_frame(), mixed.domain, epsilon=1.0, rng=0)
    assert str(info.value) == str(no_cats.error(low_dim, mixed.domain))
    wide = Domain.unit(psmm.max_dim + 1)
    assert psmm.misfit(wide).kind is MisfitKind.COLUMNS
    with pytest.raises(ValueError, match=f"of dimension at most {psmm.max_dim}"):
        run("psmm", np.full((10, wide.d), 0.5), wide, epsilon=1.0, rng=0)
    assert low_dim.min_rows > 1 and low_dim.misfit(Domain.unit(3), low_dim.min_rows - 1).kind is MisfitKind.ROWS
    assert low_dim.misfit(Domain.unit(3)) is None  # without n the rows are not checked
    with pytest.raises(ValueError, match=f"at least {low_dim.min_rows} rows"):
        run("low_dim", np.full((1, 3), 0.5), Domain.unit(3), epsilon=1.0, rng=0, neighbours="replace")


@pytest.mark.parametrize(("name", "kwargs", "error", "words"), [
    ("pmm", {"delta": 1e-6}, TypeError, "must be left out: PMM"),  # a pure mechanism refuses a δ
    ("private_evolution", {}, ValueError, "e.g. delta=1e-6"),  # an approximate one needs it
    ("private_evolution", {"delta": 2.0}, ValueError, "'delta' parameter of private_evolution must be"),
    ("sparse_marginals", {"neighbours": "add_remove"}, ValueError, "does not support 'add_remove'"),
    ("pmm", {"epsilon": -1.0}, ValueError, "'epsilon' parameter of pmm must be"),
])
def test_bind_and_the_call_raise_the_same_error_for_the_same_mistake(name, kwargs, error, words):
    settings = {"epsilon": 1.0, **kwargs}
    with pytest.raises(error, match=words) as at_bind:
        bind(name, **settings)
    with pytest.raises(error) as at_call:
        MECHANISMS[name].func(np.full((20, 2), 0.5), Domain.unit(2), rng=0, **settings)
    assert str(at_bind.value) == str(at_call.value)


def test_one_constant_for_the_settings_keywords():
    assert SETTINGS == ("epsilon", "delta", "neighbours", "n_public", "rng")
    rel = run("pmm", np.full((30, 2), 0.5), Domain.unit(2), epsilon=1.0, neighbours="replace", n_public=30, rng=0)
    assert rel.neighbours == "replace" and rel.params["size"]["source"] == "n_public"
