"""The registry's entry points: :func:`bind` and :func:`run`, and :func:`mechanism_spec` by name.

Mechanisms declare themselves with :func:`~dpsynth_core.mechanisms.contract.mechanism` (see
:mod:`dpsynth_core.mechanisms.contract`); their releases are
:class:`~dpsynth_core.mechanisms.release.Release` objects.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..clamping import CLAMP_WARNING_SHARE, ClampedRowsWarning, clamping, clamping_of_release, warn_clamping
from ..defaults import AUTO, AutoChoice, auto_mechanism
from ..domain import Domain
from ..schema import ParamSpec
from ..validation import param_error
from .contract import MECHANISMS, PRIVACY, SETTINGS, MechanismSpec
from .release import Release, describe_randomness, to_jsonable

__all__ = ["Release", "ParamSpec", "MechanismSpec", "MECHANISMS", "bind", "bind_auto", "BoundMechanism", "run", "AUTO",
           "describe_randomness", "to_jsonable", "mechanism_spec", "ClampedRowsWarning", "CLAMP_WARNING_SHARE"]

# ------------------------------------------------------------------------------------ registry
_LOADED = False


def load_all() -> dict[str, MechanismSpec]:
    """Import every mechanism module of this package once (each registers itself in MECHANISMS) and
    bind each mechanism's public callable on the package (``dpsynth_core.mechanisms.pmm``)."""
    global _LOADED
    if not _LOADED:
        package = sys.modules[__package__]
        for info in pkgutil.iter_modules(package.__path__):
            if info.name not in ("base", "contract", "release"):
                importlib.import_module(f"{__package__}.{info.name}")
        _LOADED = True
        # Importing a submodule binds its name on the package to the module; the API contract wants
        # the mechanism (``from dpsynth_core.mechanisms import pmm`` is the callable).
        for spec in MECHANISMS.values():
            setattr(package, spec.func.__name__, spec.func)
    return MECHANISMS


def mechanism_spec(name: Any, owner: str = "mechanism_spec") -> MechanismSpec:
    """The declaration of a registered mechanism, or a clear error naming the registered ones."""
    load_all()
    expected = "one of " + ", ".join(repr(k) for k in sorted(MECHANISMS))
    if not isinstance(name, str):
        raise param_error(owner, "name", expected, name, kind=TypeError)
    if name not in MECHANISMS:
        raise param_error(owner, "name", expected, name)
    return MECHANISMS[name]


@dataclass(frozen=True)
class BoundMechanism:
    """A registered mechanism with its privacy settings and parameters fixed: call it on data.

    Made by :func:`bind`. ``bound(X, domain, rng=None)`` runs the mechanism and returns its
    :class:`Release`; the same object serves the command line, the dashboard, sweeps and audits.
    """

    spec: MechanismSpec
    kwargs: Mapping[str, Any]
    auto: AutoChoice | None = None

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def epsilon(self) -> float:
        return float(self.kwargs["epsilon"])

    @property
    def neighbours(self) -> str:
        return str(self.kwargs["neighbours"])

    @property
    def params(self) -> dict:
        """The mechanism parameters (everything but ε, δ and the relation)."""
        return {k: v for k, v in self.kwargs.items() if k not in PRIVACY}

    def __call__(self, X: Any, domain: Domain, *, rng: Any = None) -> Release:
        rel = self.spec.func(X, domain, rng=rng, **self.kwargs)
        if self.auto is not None:  # say what "auto" chose and why (public: a rule of public inputs)
            rel.params = {**rel.params, "auto": self.auto.to_dict()}
            dropped = (" It is pure ε-DP: the δ given is not used (δ = 0, a stronger guarantee)."
                       if self.auto.delta is None and self.auto.asked_delta else "")
            rel.notes.insert(0, f"auto chose {self.auto.mechanism}: {self.auto.reason}.{dropped}")
        return rel


def bind(name: str, *, epsilon: Any, delta: Any = None, neighbours: str | None = None, n_public: Any = None,
         params: Mapping[str, Any] | None = None) -> BoundMechanism:
    """Bind a registered mechanism to (ε, δ, neighbouring relation, parameters).

    Parameters
    ----------
    name : str
        A key of :data:`MECHANISMS`.
    epsilon : float
        The privacy budget.
    delta : float or None
        Required by approximate-DP mechanisms (``spec.needs_delta``); refused by pure ones; either for a
        mechanism that takes an optional δ (``spec.optional_delta``: pure ε-DP without it).
    neighbours : {"add_remove", "replace"} or None
        None: the mechanism's default relation. A relation the mechanism does not support is refused
        with a message naming the ones it supports.
    n_public : int or None
        A public dataset size, for mechanisms that accept one.
    params : mapping, optional
        Mechanism keyword parameters (the registry schema, or any keyword of the mechanism's
        signature such as arrays). ``None`` values mean "the paper's rule" and are dropped.

    Returns
    -------
    BoundMechanism

    ε, δ and the relation are checked here by the check the mechanism runs on every call
    (:meth:`MechanismSpec.check_settings`): the same mistake raises the same error, already at bind time.
    """
    spec = mechanism_spec(name, "bind")
    owner = spec.name
    accepted = set(inspect.signature(spec.func).parameters) - {"X", "domain", "rng"}
    extra = dict(params or {})
    unknown = [k for k in extra if k in SETTINGS and k != "n_public" or k not in accepted]
    if unknown:
        known = sorted(accepted - set(PRIVACY))
        raise param_error(owner, "params", "names of parameters of " + owner + " (" + ", ".join(known) + ")",
                          repr(unknown[0]), kind=TypeError)
    eps, dlt, relation = spec.check_settings(epsilon, delta, neighbours)
    given_delta = spec.needs_delta or (spec.optional_delta and delta is not None)
    kwargs: dict[str, Any] = {"epsilon": eps, **({"delta": dlt} if given_delta else {}), "neighbours": relation}
    if n_public is not None:
        if "n_public" not in accepted:
            raise param_error(owner, "n_public", f"left out: {spec.title} does not use a public size", n_public)
        if extra.get("n_public") is not None:
            raise param_error(owner, "n_public", "given once (as n_public or in params)", "both")
        extra["n_public"] = n_public
    kwargs.update({k: v for k, v in extra.items() if v is not None})
    return BoundMechanism(spec, kwargs)


def bind_auto(domain: Domain, *, epsilon: Any, delta: Any = None, neighbours: str | None = None,
              n_public: Any = None, params: Mapping[str, Any] | None = None) -> BoundMechanism:
    """Bind the mechanism :func:`dpsynth_core.defaults.auto_mechanism` picks for the domain's public shape (column
    types, ε, δ given or not); its release names the choice and why (``params["auto"]`` and the first note).

    The choice fixes the mechanism's parameters by its own rules: mechanism parameters are refused (name the
    mechanism to pass them). A δ is passed on when the chosen mechanism takes one, else left out (the release
    is then pure ε-DP)."""
    extra = {k: v for k, v in dict(params or {}).items() if v is not None}
    if extra:
        raise param_error(AUTO, "params", "left out: auto picks the mechanism and its parameters by the studies' rules "
                          "(name a mechanism to set its parameters)", repr(sorted(extra)[0]), kind=TypeError)
    if not isinstance(domain, Domain):
        raise param_error(AUTO, "domain", "a dpsynth_core.Domain", domain, kind=TypeError)
    choice = auto_mechanism(domain, epsilon=epsilon, delta=delta)
    spec = mechanism_spec(choice.mechanism, AUTO)
    if n_public is not None and "n_public" not in inspect.signature(spec.func).parameters:
        n_public = None  # the chosen mechanism does not use a public size
    bound = bind(spec.name, epsilon=epsilon, delta=choice.delta if spec.takes_delta else None, neighbours=neighbours,
                 n_public=n_public)
    return BoundMechanism(bound.spec, bound.kwargs, choice)


def run(name: str, X: Any, domain: Domain, **kwargs: Any) -> Release:
    """Run a registered mechanism by name: ``run("pmm", X, dom, epsilon=1.0)``; ``run("auto", ...)`` runs the one
    :func:`dpsynth_core.defaults.auto_mechanism` picks for the domain's public shape (:func:`bind_auto`).

    ``epsilon``, ``delta``, ``neighbours``, ``n_public`` and ``rng`` are the privacy settings (see
    :func:`bind`); every other keyword is a mechanism parameter. ``rng=None`` (the default) draws
    fresh randomness from the operating system: the release is private. A fixed ``rng`` makes it
    reproducible, for tests and teaching only. When more than 1% of the rows lay outside the domain's bounds
    (and were clamped into them), a :class:`ClampedRowsWarning` says how many and where, and the release goes
    ahead (:mod:`dpsynth_core.clamping`: the one decision and count of every front end; owner's eyes only).
    """
    if name == AUTO:
        if "epsilon" not in kwargs:
            raise param_error(AUTO, "epsilon", "a float in (0, inf)", "none")
        settings = {k: kwargs.pop(k) for k in SETTINGS if k in kwargs}
        rng = settings.pop("rng", None)
        rel = bind_auto(domain, params=kwargs, **settings)(X, domain, rng=rng)
        warn_clamped(rel, X)
        return rel
    spec = mechanism_spec(name, "run")
    if "epsilon" not in kwargs:
        raise param_error(spec.name, "epsilon", "a float in (0, inf)", "none")
    settings = {k: kwargs.pop(k) for k in SETTINGS if k in kwargs}
    rng = settings.pop("rng", None)
    rel = bind(name, params=kwargs, **settings)(X, domain, rng=rng)
    warn_clamped(rel, X)
    return rel


def warn_clamped(rel: Release, X: Any = None) -> None:
    """A :class:`ClampedRowsWarning` when more than :data:`CLAMP_WARNING_SHARE` of the private rows had a
    value outside the bounds: the release's own count (``rel.owner.n_clamped``), per column when the rows
    ``X`` are in memory (:func:`dpsynth_core.clamping.clamping`, the same rule). Owner's eyes only (a local
    warning; nothing is added to the release)."""
    c = clamping_of_release(rel)
    if c is None or not c.warns:
        return
    if isinstance(X, (np.ndarray, pd.DataFrame)):
        c = clamping(X, rel.domain)
    warn_clamping(c, stacklevel=4)
