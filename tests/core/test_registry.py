"""Contract tests over every registered mechanism (the API contract: docs/README.md, "Library conventions").

They iterate over MECHANISMS at run time, so each mechanism that lands is covered.
"""

import inspect
import json

import numpy as np
import pytest

from dpsynth_core import MECHANISMS, Domain, Release, run
from dpsynth_core.mechanisms.base import ParamSpec
from dpsynth_core.mechanisms.release import OwnerView, Trace
from dpsynth_core.privacy import AccountingError

NAMES = sorted(MECHANISMS)


def _data(d, n=300, seed=0):
    return np.random.default_rng(seed).random((n, d))


def _kwargs(spec):
    kw = {"epsilon": 2.0}
    if spec.needs_delta:
        kw["delta"] = 1e-5
    kw["neighbours"] = spec.default_neighbours
    return kw


def test_registry_has_the_baselines():
    assert {"flat_histogram", "per_point_laplace"} <= set(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_signature_matches_contract(name):
    spec = MECHANISMS[name]
    sig = inspect.signature(spec.func)
    params = list(sig.parameters.values())
    assert [p.name for p in params[:2]] == ["X", "domain"]
    kwonly = {p.name: p for p in params if p.kind is inspect.Parameter.KEYWORD_ONLY}
    assert "epsilon" in kwonly and "rng" in kwonly and "neighbours" in kwonly
    assert kwonly["rng"].default is None
    assert kwonly["neighbours"].default == spec.default_neighbours
    assert spec.default_neighbours in spec.neighbours
    assert spec.dp in ("pure", "approximate")
    assert spec.func.__doc__ and ".. math::" in spec.func.__doc__
    for p in spec.params:
        assert isinstance(p, ParamSpec) and p.help
        assert p.name in kwonly, f"{name}: schema parameter {p.name} is not a keyword-only argument"
        assert kwonly[p.name].default == p.default, f"{name}: default of {p.name} differs from the schema"
        if p.kind == "choice":
            assert p.default in p.choices


@pytest.mark.parametrize("name", NAMES)
def test_the_docstring_lists_every_declared_parameter(name):
    """``help(mechanism)`` shows the implementation's docstring, then every declared parameter with its kind and
    its help: the declaration is the one description of a parameter."""
    spec = MECHANISMS[name]
    doc = spec.func.__doc__
    assert doc.startswith(inspect.cleandoc(spec.func.release.__doc__))
    flat = " ".join(doc.split())
    for p in spec.params:
        assert f"\n{p.name} : {p.kind}" in doc, p.name
        assert " ".join(p.help.split()) in flat, p.name


@pytest.mark.parametrize("name", NAMES)
def test_release_invariants(name):
    spec = MECHANISMS[name]
    d = 2 if spec.max_dim is None or spec.max_dim >= 2 else 1
    dom = Domain(lower=[-1.0] * d, upper=[3.0] * d)
    X = dom.from_unit(_data(d))
    rel = run(name, X, dom, rng=1, **_kwargs(spec))
    assert isinstance(rel, Release)
    assert rel.synthetic.ndim == 2 and rel.synthetic.shape[1] == d
    assert np.all(dom.contains(rel.synthetic))
    assert rel.ledger.epsilon == pytest.approx(rel.epsilon) and rel.ledger.delta == pytest.approx(rel.delta)
    assert rel.epsilon <= 2.0 + 1e-12
    assert rel.neighbours == spec.default_neighbours
    assert isinstance(rel.trace, Trace) and isinstance(rel.owner, OwnerView)
    public = json.loads(rel.public_json(include_synthetic=True))
    assert "trace" not in public and "owner" not in json.dumps(public["params"])
    assert rel.seconds > 0
    again = run(name, X, dom, rng=1, **_kwargs(spec))
    assert np.array_equal(rel.synthetic, again.synthetic), "same seed must give the same release"


@pytest.mark.parametrize("name", NAMES)
def test_unsupported_relation_is_refused(name):
    spec = MECHANISMS[name]
    for rel in ("add_remove", "replace"):
        if rel not in spec.neighbours:
            kw = _kwargs(spec) | {"neighbours": rel}
            with pytest.raises(ValueError, match=f"'neighbours' parameter of {name}"):
                run(name, _data(2), Domain.unit(2), rng=0, **kw)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("bad", [0, -1.0, float("inf"), float("nan")])
def test_bad_epsilon(name, bad):
    kw = _kwargs(MECHANISMS[name]) | {"epsilon": bad}
    with pytest.raises(ValueError, match=f"The 'epsilon' parameter of {name} must be a float in \\[1e-06, 1000000\\]"):
        run(name, _data(2), Domain.unit(2), rng=0, **kw)


@pytest.mark.parametrize("name", NAMES)
def test_bad_domain_and_data(name):
    kw = _kwargs(MECHANISMS[name])
    with pytest.raises(TypeError, match=f"'domain' parameter of {name}"):
        run(name, _data(2), [[0, 0], [1, 1]], rng=0, **kw)
    with pytest.raises(ValueError, match=f"'X' parameter of {name}"):
        run(name, _data(3), Domain.unit(2), rng=0, **kw)
    with pytest.raises(ValueError, match=f"'X' parameter of {name}"):
        run(name, np.full((5, 2), np.nan), Domain.unit(2), rng=0, **kw)


def test_run_unknown_name():
    with pytest.raises(ValueError, match="The 'name' parameter of run must be one of"):
        run("nope", _data(2), Domain.unit(2), epsilon=1.0)


def test_api_contract_imports():
    import dpsynth_core.mechanisms as mech

    assert callable(mech.flat_histogram) and mech.flat_histogram is MECHANISMS["flat_histogram"].func


def test_release_refuses_a_ledger_that_does_not_add_up():
    from dpsynth_core.privacy import Ledger

    with pytest.raises(AccountingError, match="ledger sums"):
        Release(synthetic=np.zeros((1, 1)), epsilon=1.0, delta=0.0, neighbours="replace", mechanism="x",
                domain=Domain.unit(1), ledger=Ledger().add("a", 0.5))


def test_param_spec_parse():
    p = ParamSpec("depth", "int", None, "h", low=0, high=20)
    assert p.parse("5", "cli") == 5 and p.parse("auto", "cli") is None
    with pytest.raises(ValueError, match="'depth' parameter of cli must be an int"):
        p.parse("five", "cli")
    b = ParamSpec("flag", "bool", False, "h")
    assert b.parse("yes", "cli") is True and b.parse("0", "cli") is False
