"""Releases, mechanism specifications and the registry.

Every mechanism is a function ``name(X, domain, *, epsilon, ..., neighbours=..., rng=None) -> Release``
registered with :func:`register`, which records a parameter schema the dashboard and the CLI build
their controls from.
"""

from __future__ import annotations

import functools
import inspect
import json
import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..domain import Domain
from ..privacy import Ledger, check_epsilon, check_neighbours
from ..rows import Rows
from ..schema import ParamSpec
from ..validation import check_rng, param_error

__all__ = ["Release", "ParamSpec", "MechanismSpec", "MECHANISMS", "register", "bind", "BoundMechanism", "run",
           "describe_randomness", "prepare", "Prepared", "to_jsonable"]


def to_jsonable(obj: Any) -> Any:
    """Convert numpy scalars/arrays, tuples and dataclass-like values to JSON-serialisable ones."""
    if isinstance(obj, Mapping):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return to_jsonable(obj.tolist())
    if isinstance(obj, np.bool_):
        return bool(obj)
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        x = float(obj)
        return x if math.isfinite(x) else str(x)
    if isinstance(obj, Domain):
        return obj.to_dict()
    if hasattr(obj, "to_dict"):
        return to_jsonable(obj.to_dict())
    return obj


@dataclass
class Release:
    """The output of a mechanism.

    Attributes
    ----------
    synthetic : ndarray (m, d)
        Synthetic data in the domain's units (differentially private).
    epsilon, delta : float
        What the release actually guarantees, under ``neighbours``. Equal to the ledger's totals.
    neighbours : str
        ``"add_remove"`` or ``"replace"``.
    mechanism : str
    domain : Domain
    ledger : Ledger
        (step, ε, δ) entries adding up to (epsilon, delta).
    params : dict
        Every resolved parameter (depth, noise scales, grid, ...). Only public or DP values.
    bound : float or None
        The paper's expected-W1 bound for this run, unit-cube l_inf units (or the mechanism's
        certificate, see ``bound_kind``).
    bound_kind : str
        What ``bound`` is ("Theorem 11 (expected W1)", "certificate", ...).
    trace : dict
        Mechanism-specific intermediates for the pictures. Everything under ``trace["owner"]`` is
        computed from the private data without noise: owner-side, NOT differentially private.
    is_dp : bool
        False only for teaching runs that read the private data (e.g. a non-private start).
    notes : list of str
        Plain-language caveats shown with the release.
    seconds : float
        Wall time of the mechanism call.
    randomness : dict
        Where the noise came from (:func:`describe_randomness`): fresh operating-system entropy (the
        default: private), a pinned seed (reproducible, NOT private: whoever knows the seed can
        re-draw the noise) or a caller's generator.
    """

    synthetic: np.ndarray
    epsilon: float
    delta: float
    neighbours: str
    mechanism: str
    domain: Domain
    ledger: Ledger
    params: dict = field(default_factory=dict)
    bound: float | None = None
    bound_kind: str = ""
    trace: dict = field(default_factory=dict)
    is_dp: bool = True
    notes: list = field(default_factory=list)
    seconds: float = float("nan")
    randomness: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        led_e, led_d = self.ledger.epsilon, self.ledger.delta
        if not math.isclose(led_e, self.epsilon, rel_tol=1e-9, abs_tol=1e-12) or not math.isclose(
            led_d, self.delta, rel_tol=1e-9, abs_tol=1e-15
        ):
            raise AssertionError(
                f"{self.mechanism}: the ledger sums to (ε={led_e}, δ={led_d}) but the release states "
                f"(ε={self.epsilon}, δ={self.delta})"
            )
        self.trace.setdefault("owner", {})

    @property
    def pinned(self) -> bool:
        """True when the noise came from a pinned seed (reproducible, not private)."""
        return self.randomness.get("source") == "seed"

    @property
    def label(self) -> str:
        """What an export of this release may be called: private, or why not."""
        if not self.is_dp:
            return "NOT differentially private (teaching run that reads the private data)"
        if self.pinned:
            return "reproducible, not private (pinned seed: whoever knows it can re-draw the noise)"
        return "differentially private"

    @property
    def privacy(self) -> str:
        """One line: what the release guarantees."""
        if not self.is_dp:
            return "NOT differentially private (teaching run that reads the private data)"
        kind = "pure" if self.delta == 0 else "approximate"
        return f"({self.epsilon:.4g}, {self.delta:.3g})-DP ({kind}), {self.neighbours.replace('_', '/')} neighbours"

    def synthetic_frame(self):
        import pandas as pd

        return pd.DataFrame(self.synthetic, columns=list(self.domain.names))

    def public(self, *, include_synthetic: bool = True) -> dict:
        """Only what may leave the machine: the synthetic data, (ε, δ), the relation, the ledger, the
        resolved parameters, the bound, where the randomness came from and the label. Owner-side
        diagnostics (``trace``) are excluded; :mod:`dpsynth_core.export` checks the keys against its
        allow-list."""
        out = {
            "mechanism": self.mechanism,
            "is_dp": self.is_dp,
            "epsilon": self.epsilon,
            "delta": self.delta,
            "neighbours": self.neighbours,
            "privacy": self.privacy,
            "ledger": self.ledger.to_list(),
            "params": to_jsonable(self.params),
            "bound": self.bound,
            "bound_kind": self.bound_kind,
            "domain": self.domain.to_dict(),
            "n_synthetic": int(self.synthetic.shape[0]),
            "notes": list(self.notes),
            "randomness": dict(self.randomness),
            "label": self.label,
        }
        if include_synthetic:
            out["synthetic"] = self.synthetic.tolist()
        return out

    def public_json(self, *, include_synthetic: bool = False) -> str:
        """:meth:`public` as JSON text (the report of the command line and the dashboard)."""
        return json.dumps(to_jsonable(self.public(include_synthetic=include_synthetic)), indent=2)


# ------------------------------------------------------------------------------------ registry
@dataclass(frozen=True)
class MechanismSpec:
    name: str
    func: Callable[..., Release]
    title: str
    paper: str  # authors, short title, venue/year and key: "He, Vershynin, Zhu, ... (COLT 2023) [HVZ23]"
    algorithm: str  # e.g. "Algorithms 3-4, Theorem 11"
    dp: str  # "pure" or "approximate"
    neighbours: tuple[str, ...]
    params: tuple[ParamSpec, ...]
    summary: str
    default_neighbours: str = "add_remove"
    needs_delta: bool = False
    max_dim: int | None = None

    def param(self, name: str) -> ParamSpec:
        for p in self.params:
            if p.name == name:
                return p
        raise KeyError(name)


MECHANISMS: dict[str, MechanismSpec] = {}


def register(spec_kwargs: dict) -> Callable[[Callable[..., Release]], Callable[..., Release]]:
    """Decorator: ``@register(dict(name=..., title=..., params=(...), ...))``."""

    def deco(func: Callable[..., Release]) -> Callable[..., Release]:
        @functools.wraps(func)
        def mechanism(X: Any, domain: Any, *args: Any, rng: Any = None, **kwargs: Any) -> Release:
            t0 = time.perf_counter()
            rel = func(X, domain, *args, rng=rng, **kwargs)
            rel.seconds = time.perf_counter() - t0
            rel.randomness = describe_randomness(rng)
            return rel

        spec = MechanismSpec(func=mechanism, **spec_kwargs)
        MECHANISMS[spec.name] = spec
        return mechanism

    return deco


def describe_randomness(rng: Any) -> dict:
    """Where a release's noise comes from, as recorded in :attr:`Release.randomness`.

    ``None``: fresh entropy from the operating system (private). An int: a pinned seed
    (reproducible and NOT private: whoever knows the seed re-draws the noise and undoes it). A numpy
    ``Generator``: managed by the caller (private only if seeded from fresh entropy and not reused).
    """
    if rng is None:
        return {"source": "fresh", "private": True, "note": "fresh randomness from the operating system"}
    if isinstance(rng, np.random.Generator):
        return {"source": "generator", "private": None,
                "note": "the caller's numpy Generator: private only if it was seeded from fresh entropy"}
    return {"source": "seed", "seed": int(rng), "private": False,
            "note": "pinned seed: reproducible, not private (whoever knows the seed can re-draw the noise)"}


def _spec(name: Any, owner: str) -> MechanismSpec:
    from . import load_all

    load_all()
    expected = "one of " + ", ".join(repr(k) for k in sorted(MECHANISMS))
    if not isinstance(name, str):
        raise param_error(owner, "name", expected, name, kind=TypeError)
    if name not in MECHANISMS:
        raise param_error(owner, "name", expected, name)
    return MECHANISMS[name]


#: Keywords that :func:`bind` and :func:`run` handle themselves (not mechanism parameters).
_SETTINGS = ("epsilon", "delta", "neighbours", "n_public", "rng")


@dataclass(frozen=True)
class BoundMechanism:
    """A registered mechanism with its privacy settings and parameters fixed: call it on data.

    Made by :func:`bind`. ``bound(X, domain, rng=None)`` runs the mechanism and returns its
    :class:`Release`; the same object serves the command line, the dashboard, sweeps and audits.
    """

    spec: MechanismSpec
    kwargs: Mapping[str, Any]

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
        return {k: v for k, v in self.kwargs.items() if k not in ("epsilon", "delta", "neighbours")}

    def __call__(self, X: Any, domain: Domain, *, rng: Any = None) -> Release:
        spec = self.spec
        if isinstance(domain, Domain) and spec.max_dim is not None and domain.d > spec.max_dim:
            raise param_error(spec.name, "domain", f"of dimension at most {spec.max_dim} ({spec.title} "
                              f"allocates a grid exponential in d)", f"d = {domain.d}")
        return spec.func(X, domain, rng=rng, **self.kwargs)


def bind(name: str, *, epsilon: Any, delta: Any = None, neighbours: str | None = None, n_public: Any = None,
         params: Mapping[str, Any] | None = None) -> BoundMechanism:
    """Bind a registered mechanism to (ε, δ, neighbouring relation, parameters).

    Parameters
    ----------
    name : str
        A key of :data:`MECHANISMS`.
    epsilon : float
        The privacy budget (validated by the mechanism when it runs).
    delta : float or None
        Required by approximate-DP mechanisms (``spec.needs_delta``); refused by pure ones.
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
    """
    spec = _spec(name, "bind")
    owner = spec.name
    accepted = set(inspect.signature(spec.func).parameters) - {"X", "domain", "rng"}
    extra = dict(params or {})
    unknown = [k for k in extra if k in ("epsilon", "delta", "neighbours", "rng") or k not in accepted]
    if unknown:
        known = sorted(accepted - {"epsilon", "delta", "neighbours"})
        raise param_error(owner, "params", "names of parameters of " + owner + " (" + ", ".join(known) + ")",
                          repr(unknown[0]), kind=TypeError)
    kwargs: dict[str, Any] = {"epsilon": epsilon}
    if spec.needs_delta:
        if delta is None:
            raise param_error(owner, "delta", f"a float in (0, 1): {spec.title} is approximate (ε, δ)-DP",
                              "none")
        kwargs["delta"] = delta
    elif delta is not None:
        raise param_error(owner, "delta", f"left out: {spec.title} is pure ε-DP (δ = 0)", delta)
    relation = spec.default_neighbours if neighbours is None else neighbours
    if relation not in spec.neighbours:
        supported = " and ".join(r.replace("_", "/") for r in spec.neighbours)
        raise param_error(owner, "neighbours", f"one of {', '.join(repr(r) for r in spec.neighbours)} "
                          f"({spec.title} supports only {supported} neighbours)", relation)
    kwargs["neighbours"] = relation
    if n_public is not None:
        if "n_public" not in accepted:
            raise param_error(owner, "n_public", f"left out: {spec.title} does not use a public size", n_public)
        if extra.get("n_public") is not None:
            raise param_error(owner, "n_public", "given once (as n_public or in params)", "both")
        extra["n_public"] = n_public
    kwargs.update({k: v for k, v in extra.items() if v is not None})
    return BoundMechanism(spec, kwargs)


def run(name: str, X: Any, domain: Domain, **kwargs: Any) -> Release:
    """Run a registered mechanism by name: ``run("pmm", X, dom, epsilon=1.0)``.

    ``epsilon``, ``delta``, ``neighbours``, ``n_public`` and ``rng`` are the privacy settings (see
    :func:`bind`); every other keyword is a mechanism parameter. ``rng=None`` (the default) draws
    fresh randomness from the operating system: the release is private. A fixed ``rng`` makes it
    reproducible, for tests and teaching only.
    """
    spec = _spec(name, "run")
    if "epsilon" not in kwargs:
        raise param_error(spec.name, "epsilon", "a float in (0, inf)", "none")
    settings = {k: kwargs.pop(k) for k in _SETTINGS if k in kwargs}
    rng = settings.pop("rng", None)
    return bind(name, params=kwargs, **settings)(X, domain, rng=rng)


# ------------------------------------------------------------------- common mechanism set-up
class Prepared:
    """What :func:`prepare` hands a mechanism: the checked privacy settings and the private rows.

    ``rows`` (:class:`~dpsynth_core.rows.Rows`) is how the mechanism reads the data: ``rows.sum(stat)``
    for a per-record statistic, the same call in memory and on a Dask collection. ``U`` is the
    in-memory unit-cube copy (None with Dask); ``n`` and ``n_clamped`` are owner-side (n is a release
    parameter only under replace, where it is public)."""

    __slots__ = ("rows", "epsilon", "neighbours", "rng")

    def __init__(self, *, epsilon: float, neighbours: str, rng: np.random.Generator, rows: Rows | None = None,
                 U: np.ndarray | None = None, n: int | None = None, n_clamped: int = 0, domain: Domain | None = None,
                 owner: str = "mechanism") -> None:
        if rows is None:  # a sub-step handing over rows already in the unit cube (low_dim)
            rows = Rows.from_unit(U, domain, owner=owner, n_clamped=n_clamped)
        self.rows = rows
        self.epsilon = epsilon
        self.neighbours = neighbours
        self.rng = rng

    @property
    def U(self) -> np.ndarray | None:
        return self.rows.U

    @property
    def n(self) -> int:
        return self.rows.n

    @property
    def n_clamped(self) -> int:
        return self.rows.n_clamped


def prepare(
    X: Any,
    domain: Any,
    *,
    owner: str,
    epsilon: Any,
    neighbours: Any,
    rng: Any,
    supported: tuple[str, ...] = ("add_remove", "replace"),
    min_rows: int = 1,
    max_dim: int | None = None,
) -> Prepared:
    """Validate the arguments every mechanism shares and wrap X (NumPy, pandas or Dask) as
    :class:`~dpsynth_core.rows.Rows`, which maps it into the unit cube. Dask collections are computed
    with Dask's current scheduler (``dask.config``, or the active ``distributed.Client``)."""
    if not isinstance(domain, Domain):
        raise param_error(owner, "domain", "a dpsynth_core.Domain", domain, kind=TypeError)
    eps = check_epsilon(epsilon, owner)
    rel = check_neighbours(neighbours, owner, supported)
    gen = check_rng(rng, owner)
    if max_dim is not None and domain.d > max_dim:
        raise param_error(owner, "domain", f"of dimension at most {max_dim}", f"d={domain.d}")
    rows = Rows(X, domain, owner=owner, min_rows=min_rows)
    return Prepared(rows=rows, epsilon=eps, neighbours=rel, rng=gen)
