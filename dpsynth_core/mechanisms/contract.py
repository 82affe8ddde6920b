"""The mechanism contract: declared once by each mechanism, checked once by the shared path.

A mechanism module declares three things and registers them with :func:`mechanism`:

1. **Its parameters**: a frozen dataclass subclassing :class:`Config`, one field per keyword made by
   :func:`param` (kind, default, range or choices, one sentence of help). The command line's
   ``--param``, the dashboard's controls, :func:`~dpsynth_core.mechanisms.bind` and the validation
   all read this one declaration. Checks that involve the domain or several parameters go in the
   config's :meth:`Config.check_domain`.
2. **Its typed results**: a :class:`~dpsynth_core.mechanisms.release.Trace` and an
   :class:`~dpsynth_core.mechanisms.release.OwnerView` subclass.
3. **Its implementation** ``def name(p: Prepared[NameConfig]) -> Release``: a public function of the
   prepared data, where every argument has been validated.

``mechanism(...)`` turns the implementation into the public callable
``name(X, domain, *, epsilon, [delta,] <parameters>, neighbours=..., rng=None) -> Release`` (a
:class:`Mechanism`): it validates the privacy settings (ε, δ, the neighbouring relation against the
ones the mechanism declares), the dimension limit, every parameter against its declaration, wraps
the data as :class:`~dpsynth_core.rows.Rows` and calls the implementation. A mechanism that runs
another as a sub-step (low_dim runs PMM in a subspace) builds a :class:`Prepared` with
:meth:`Prepared.sub` and calls ``other.release(prepared)``.

This is scikit-learn's pattern (parameters declared as data, validated once at the entry point)
applied to functions.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import textwrap
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Generic, TypeVar

import numpy as np

from .. import limits
from ..domain import Domain
from ..privacy import MAX_SIZE, Ledger, check_epsilon, check_n_public, check_neighbours, weak_epsilon_note
from ..rows import Rows
from ..schema import ParamSpec
from ..theory import BoundKind
from ..validation import check_int, check_probability, check_rng, param_error, plural
from ..wording import vacuous_note
from .release import OwnerView, Release, Trace, describe_randomness

__all__ = ["param", "n_public_param", "n_synthetic_param", "Config", "NoParams", "Prepared", "MechanismSpec", "Mechanism",
           "mechanism", "MECHANISMS", "PRIVACY", "SETTINGS", "Misfit", "MisfitKind"]

#: The registry: every mechanism by name, filled by :func:`mechanism` when its module is imported.
MECHANISMS: dict[str, MechanismSpec] = {}
#: The privacy settings of a release: ε, δ and the neighbouring relation (keywords of every mechanism's call,
#: never mechanism parameters).
PRIVACY = ("epsilon", "delta", "neighbours")
#: The keywords :func:`~dpsynth_core.mechanisms.bind` and :func:`~dpsynth_core.mechanisms.run` take themselves
#: rather than as mechanism parameters: the privacy settings, a declared public size and the randomness.
SETTINGS = PRIVACY + ("n_public", "rng")


# ----------------------------------------------------------------------------------- parameters
def param(kind: str, default: Any, help: str, *, low: float | None = None, high: float | None = None,
          choices: tuple = (), log: bool = False, advanced: bool = False, label: str = "",
          check: Callable[[Any, str], Any] | None = None) -> Any:
    """One parameter of a mechanism, as a dataclass field of its :class:`Config`.

    ``kind``, ``default``, ``help``, ``low``/``high``, ``choices``, ``log``, ``advanced`` and
    ``label`` are those of :class:`~dpsynth_core.schema.ParamSpec` (the field's name is its keyword).
    ``check(value, owner) -> value`` replaces the standard check for a parameter that also takes
    values a ParamSpec cannot describe (a sequence of noise scales, an array of public points); it
    must raise the project's :func:`~dpsynth_core.validation.param_error` for anything it refuses.
    """
    meta = {"kind": kind, "help": help, "low": low, "high": high, "choices": tuple(choices), "log": log,
            "advanced": advanced, "label": label, "check": check}
    return field(default=default, metadata={"param": meta})


def n_public_param(help: str = "Public dataset size; without it (add/remove) 5% of ε buys a noisy size when one "
                                "is needed.") -> Any:
    """The ``n_public`` parameter: a declared public dataset size (checked against ``limits.max_size``)."""
    return param("int", None, help, low=1, high=MAX_SIZE, advanced=True, check=check_n_public)


def _check_n_synthetic(value: Any, owner: str) -> int:
    return check_int(value, "n_synthetic", owner, low=1)  # the ceiling is the current limits' (check_domain)


def n_synthetic_param(help: str, *, advanced: bool = True) -> Any:
    """The ``n_synthetic`` parameter: the output size, at least 1 and within the current output limits
    (:func:`dpsynth_core.limits.check_rows`, in :meth:`Config.check_domain`: they may be overridden)."""
    return param("int", None, help, low=1, high=limits.DEFAULTS.max_synthetic_rows, advanced=advanced,
                 check=_check_n_synthetic)


_C = TypeVar("_C", bound="Config")


@dataclass(frozen=True)
class Config:
    """Base of a mechanism's parameters: a frozen dataclass whose fields are made by :func:`param`."""

    @classmethod
    def specs(cls) -> tuple[ParamSpec, ...]:
        """The :class:`~dpsynth_core.schema.ParamSpec` of every field, in declaration order."""
        return _specs(cls)

    @classmethod
    def from_values(cls: type[_C], values: Mapping[str, Any], *, owner: str) -> _C:
        """The config of ``values`` (missing keys take their default), every value checked against its
        declaration. An unknown keyword is refused with the list of known ones."""
        specs = {p.name: p for p in cls.specs()}
        unknown = [k for k in values if k not in specs]
        if unknown:
            raise param_error(owner, "params", f"names of parameters of {owner} ({', '.join(specs) or 'none'})",
                              repr(unknown[0]), kind=TypeError)
        checked = {}
        for name, p in specs.items():
            value = values.get(name, p.default)
            custom = _CHECKS[cls].get(name)
            checked[name] = custom(value, owner) if custom is not None and value is not None else p.check(value, owner)
        return cls(**checked)

    def check_domain(self, domain: Domain, owner: str) -> None:
        """Checks that need the domain or several parameters together. The base checks an explicit
        ``n_synthetic`` against the output limits (rows and rows x d); subclasses extend it."""
        m = getattr(self, "n_synthetic", None)
        if m is not None:
            limits.check_rows(m, domain.d, owner=owner)

    def replace(self: _C, **changes: Any) -> _C:
        return dataclasses.replace(self, **changes)


@dataclass(frozen=True)
class NoParams(Config):
    """The config of a mechanism without parameters."""


_CHECKS: dict[type, dict[str, Callable[[Any, str], Any]]] = {}


@functools.cache
def _specs(cls: type) -> tuple[ParamSpec, ...]:
    out, custom = [], {}
    for f in dataclasses.fields(cls):
        meta = dict(f.metadata.get("param") or {})
        if not meta:
            raise TypeError(f"{cls.__name__}.{f.name}: declare every parameter with param(...)")
        check = meta.pop("check")
        if check is not None:
            custom[f.name] = check
        out.append(ParamSpec(f.name, default=f.default, **meta))
    _CHECKS[cls] = custom
    return tuple(out)


# -------------------------------------------------------------------------------- prepared data
C = TypeVar("C", bound=Config)


@dataclass(frozen=True)
class Prepared(Generic[C]):
    """What the shared path hands an implementation: the private rows and checked settings.

    ``rows`` (:class:`~dpsynth_core.rows.Rows`) is how the implementation reads the data:
    ``rows.sum(stat)`` for a per-record statistic, the same call in memory and on a Dask collection.
    ``mechanism`` is the name the release carries; ``owner`` names the mechanism the user called
    (different when a mechanism runs another as a sub-step), for messages.
    """

    rows: Rows
    domain: Domain
    epsilon: float
    delta: float
    neighbours: str
    rng: np.random.Generator
    config: C
    mechanism: str
    owner: str

    @property
    def n(self) -> int:
        """The number of private rows (owner-side; public only under replace)."""
        return self.rows.n

    @property
    def n_clamped(self) -> int:
        return self.rows.n_clamped

    @property
    def U(self) -> np.ndarray | None:
        """The rows in the unit cube (in memory; None for Dask input)."""
        return self.rows.U

    def sub(self, *, mechanism: str, config: Config, epsilon: float, rows: Rows | None = None,
            domain: Domain | None = None, neighbours: str | None = None) -> Prepared:
        """The prepared input of a sub-step run with a share of this budget (messages keep ``owner``)."""
        return dataclasses.replace(self, mechanism=mechanism, config=config, epsilon=epsilon,
                                   rows=self.rows if rows is None else rows,
                                   domain=self.domain if domain is None else domain,
                                   neighbours=self.neighbours if neighbours is None else neighbours)

    def finish(self, synthetic: np.ndarray, *, ledger: Ledger, trace: Trace, owner: OwnerView, params: dict,
               bound: float | None = None, bound_kind: str = "", bound_type: BoundKind | None = None,
               notes: Iterable[str] = (), capped: dict | None = None, is_dp: bool = True) -> Release:
        """The release of this run: (ε, δ, relation) from the settings, the ledger that must add up to
        them, a note when ε gives no meaningful protection (:func:`~dpsynth_core.privacy.weak_epsilon_note`),
        the domain's declared integer columns rounded (:meth:`Domain.round_integers`), and the record of a
        capped output size (``capped`` from :func:`dpsynth_core.limits.cap_rows`) in ``params["limits"]`` and in
        the notes.

        ``bound_type`` says what kind of claim ``bound`` is (:class:`~dpsynth_core.theory.BoundKind`): a
        mechanism that releases a bound must say it (a TypeError otherwise); without a bound it is
        :attr:`BoundKind.NONE` unless given (a rate the paper states without a number)."""
        if bound_type is None:
            if bound is not None:
                raise TypeError(f"{self.mechanism}: a release with a bound says what kind of bound it is "
                                "(bound_type=BoundKind....)")
            bound_type = BoundKind.NONE
        notes = list(notes)
        weak = weak_epsilon_note(self.epsilon)  # a function of the public ε: a public note
        if weak is not None and weak not in notes:
            notes.insert(0, weak)
        synthetic = self.domain.round_integers(synthetic)  # declared whole-number columns (post-processing)
        if capped is not None:
            params = {**params, "limits": capped}
            notes.append(limits.cap_note(capped, self.owner))
        rel = Release(synthetic=synthetic, epsilon=self.epsilon, delta=self.delta, neighbours=self.neighbours,
                      mechanism=self.mechanism, domain=self.domain, ledger=ledger, trace=trace, owner=owner,
                      params=params, bound=None if bound is None else float(bound), bound_kind=bound_kind,
                      bound_type=bound_type, is_dp=is_dp, notes=notes)
        if rel.bound_is_vacuous:
            rel.notes.append(vacuous_note(rel.bound, self.domain.diameter))
        return rel


# ------------------------------------------------------------------------------------- the spec
class MisfitKind(str, Enum):
    """Which declared limit data falls outside of (:meth:`MechanismSpec.misfit`)."""

    CATEGORIES = "categories"
    COLUMNS = "columns"
    ROWS = "rows"


@dataclass(frozen=True)
class Misfit:
    """Why a mechanism does not take some data: ``kind`` (a :class:`MisfitKind`) and ``reason``, a short
    clause after the mechanism's name ("it takes at most 2 numeric columns and the table has 3")."""

    kind: MisfitKind
    reason: str

    def error(self, spec: MechanismSpec, domain: Domain, n: int | None = None) -> ValueError:
        """The project's parameter error for it, as :meth:`Mechanism.prepare` raises it."""
        owner = spec.name
        if self.kind is MisfitKind.CATEGORIES:
            takers = ", ".join(sorted(name for name, s in MECHANISMS.items() if s.categorical)) or "none yet"
            return param_error(owner, "domain", f"a domain of numeric columns only: {spec.title} does not take "
                               f"categorical columns (these mechanisms do: {takers})",
                               f"the categorical columns {list(domain.categories)}")
        if self.kind is MisfitKind.COLUMNS:
            return param_error(owner, "domain", f"of dimension at most {spec.max_dim}"
                               + (f" ({spec.max_dim_reason})" if spec.max_dim_reason else ""), f"d = {domain.k}")
        return param_error(owner, "X", f"a table of at least {spec.min_rows} rows"
                           + (f" ({spec.min_rows_reason})" if spec.min_rows_reason else ""), plural(n or 0, "row"))


@dataclass(frozen=True)
class MechanismSpec:
    """What a mechanism declares about itself, once.

    ``neighbours`` are the relations it supports (``default_neighbours`` first used), ``needs_delta``
    whether it is approximate (ε, δ)-DP, ``optional_delta`` whether it takes a δ but does not need one
    (pure ε-DP without it, (ε, δ)-DP with it: the caller's choice, a public input), ``max_dim`` the largest dimension it accepts (with the reason
    in ``max_dim_reason``; it counts numeric columns), ``min_rows`` the fewest private rows (with the
    reason in ``min_rows_reason``),
    ``categorical`` whether it takes categorical columns (docs/mixed-data.md). ``params`` come from
    ``config``.
    ``theory`` describes its W1 bound (:class:`dpsynth_core.theory.Theory`).
    """

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
    optional_delta: bool = False
    max_dim: int | None = None
    max_dim_reason: str = ""
    min_rows: int = 1
    min_rows_reason: str = ""
    config: type[Config] = NoParams
    theory: Any = None
    categorical: bool = False

    def misfit(self, domain: Domain, n: int | None = None) -> Misfit | None:
        """Why data on ``domain`` with ``n`` rows is outside what this mechanism declares it takes, or None
        when it fits: categorical columns it does not take, more numeric columns than :attr:`max_dim`, fewer
        rows than :attr:`min_rows` (``n`` None: the row count is not checked). The one eligibility check of
        the project: :meth:`Mechanism.prepare` raises it as an error, the dashboard says it before running."""
        if domain.is_mixed and not self.categorical:
            return Misfit(MisfitKind.CATEGORIES, "it does not take categorical columns")
        if self.max_dim is not None and domain.k > self.max_dim:
            return Misfit(MisfitKind.COLUMNS, f"it takes at most {self.max_dim} numeric columns and the table has "
                                              f"{domain.k}")
        if n is not None and n < self.min_rows:
            return Misfit(MisfitKind.ROWS, f"it needs at least {self.min_rows} rows and the table has {n:,}")
        return None

    def check_settings(self, epsilon: Any, delta: Any = None, neighbours: Any = None) -> tuple[float, float, str]:
        """(ε, δ, relation) checked against what the mechanism declares: ε in range; δ required in (0, 1) by an
        approximate mechanism and refused by a pure one (δ = 0 then); the relation one it supports (None: its
        default). Raises the project's parameter errors; :func:`~dpsynth_core.mechanisms.bind` and
        :meth:`Mechanism.prepare` both call it."""
        owner = self.name
        eps = check_epsilon(epsilon, owner)
        if delta is None:
            if self.needs_delta:
                raise param_error(owner, "delta", f"a float in (0, 1), e.g. delta=1e-6: {self.title} is approximate "
                                  "(ε, δ)-DP", "no delta")
            dlt = 0.0  # pure (a mechanism with optional_delta is pure ε-DP without one)
        elif not self.takes_delta:
            raise param_error(owner, "delta", f"left out: {self.title} is pure ε-DP (δ = 0)", delta, kind=TypeError)
        else:
            dlt = check_probability(delta, "delta", owner)
        relation = check_neighbours(self.default_neighbours if neighbours is None else neighbours, owner,
                                    self.neighbours)
        return eps, dlt, relation
    @property
    def takes_delta(self) -> bool:
        """Whether a δ may be passed (needed, or optional)."""
        return self.needs_delta or self.optional_delta

    def param(self, name: str) -> ParamSpec:
        for p in self.params:
            if p.name == name:
                return p
        raise KeyError(name)

    @property
    def accepted(self) -> tuple[str, ...]:
        """Every keyword the mechanism takes besides X, domain and rng."""
        own = ("epsilon",) + (("delta",) if self.takes_delta else ()) + ("neighbours",)
        return own + tuple(p.name for p in self.params)


# ---------------------------------------------------------------------------------- the callable
class Mechanism(Generic[C]):
    """A registered mechanism: ``m(X, domain, *, epsilon, ..., rng=None) -> Release``.

    ``m.prepare(...)`` runs the shared checks and returns the :class:`Prepared` input;
    ``m.release(prepared)`` is the implementation (no checks: for sub-steps and tests);
    ``m.spec`` is the declaration.
    """

    def __init__(self, spec: MechanismSpec, impl: Callable[[Prepared[C]], Release]) -> None:
        self.spec = spec
        self.release = impl
        functools.update_wrapper(self, impl)
        self.__doc__ = _with_parameters(impl.__doc__, spec)
        self.__signature__ = _signature(spec)

    def prepare(self, X: Any, domain: Any, *, epsilon: Any, delta: Any = None, neighbours: Any = None,
                rng: Any = None, **params: Any) -> Prepared[C]:
        """Validate everything once: the domain, ε, δ, the relation, the rng, the dimension, every
        parameter against its declaration; wrap X (NumPy, pandas or Dask) as Rows."""
        spec, owner = self.spec, self.spec.name
        if not isinstance(domain, Domain):
            raise param_error(owner, "domain", "a dpsynth_core.Domain", domain, kind=TypeError)
        eps, dlt, relation = spec.check_settings(epsilon, delta, neighbours)
        gen = check_rng(rng, owner)
        if (why := spec.misfit(domain)) is not None:
            raise why.error(spec, domain)
        config = spec.config.from_values(params, owner=owner)
        config.check_domain(domain, owner)
        rows = Rows(X, domain, owner=owner, min_rows=1)
        if (why := spec.misfit(domain, rows.n)) is not None:
            raise why.error(spec, domain, rows.n)
        return Prepared(rows=rows, domain=domain, epsilon=eps, delta=dlt, neighbours=relation, rng=gen,
                        config=config, mechanism=owner, owner=owner)

    def __call__(self, X: Any, domain: Any, *, rng: Any = None, **kwargs: Any) -> Release:
        t0 = time.perf_counter()
        rel = self.release(self.prepare(X, domain, rng=rng, **kwargs))
        rel.seconds = time.perf_counter() - t0
        rel.randomness = describe_randomness(rng)
        return rel

    def __repr__(self) -> str:
        return f"<mechanism {self.spec.name!r}: {self.spec.title}>"


def _with_parameters(doc: str | None, spec: MechanismSpec) -> str:
    """The implementation's docstring followed by its parameters as declared (kind, range or choices, default,
    help): the declaration is the one place a parameter is described, and ``help(mechanism)`` shows it."""
    title = f"Parameters of {spec.name} (declared in its config; also ``dpsynth list -v``)"
    lines = [title, "-" * len(title)]
    for p in spec.params:
        within = (" in {" + ", ".join(map(repr, p.choices)) + "}" if p.choices
                  else f" in [{p.low}, {p.high}]" if p.low is not None or p.high is not None else "")
        lines += [f"{p.name} : {p.kind}{within}, default {p.default!r}",
                  textwrap.fill(p.help, 110, initial_indent="    ", subsequent_indent="    ",
                                break_on_hyphens=False, break_long_words=False)]
    head = inspect.cleandoc(doc or "")
    return head if not spec.params else f"{head}\n\n" + "\n".join(lines)


def _signature(spec: MechanismSpec) -> inspect.Signature:
    P = inspect.Parameter
    ps = [P("X", P.POSITIONAL_OR_KEYWORD), P("domain", P.POSITIONAL_OR_KEYWORD), P("epsilon", P.KEYWORD_ONLY)]
    if spec.needs_delta:
        ps.append(P("delta", P.KEYWORD_ONLY))
    elif spec.optional_delta:
        ps.append(P("delta", P.KEYWORD_ONLY, default=None))
    ps += [P(p.name, P.KEYWORD_ONLY, default=p.default) for p in spec.params]
    ps += [P("neighbours", P.KEYWORD_ONLY, default=spec.default_neighbours), P("rng", P.KEYWORD_ONLY, default=None)]
    return inspect.Signature(ps, return_annotation=Release)


def mechanism(*, name: str, title: str, paper: str, algorithm: str, dp: str, neighbours: tuple[str, ...],
              summary: str, config: type[Config] = NoParams, default_neighbours: str | None = None,
              needs_delta: bool = False, optional_delta: bool = False, max_dim: int | None = None, max_dim_reason: str = "", min_rows: int = 1,
              min_rows_reason: str = "", theory: Any = None, categorical: bool = False) -> Callable[[Callable[[Prepared[C]], Release]], Mechanism[C]]:
    """Register a mechanism: ``@mechanism(name=..., config=XConfig, ...)`` above its implementation
    ``def x(p: Prepared[XConfig]) -> Release``. Returns the public :class:`Mechanism`."""

    def deco(impl: Callable[[Prepared[C]], Release]) -> Mechanism[C]:
        spec = MechanismSpec(name=name, func=impl, title=title, paper=paper, algorithm=algorithm, dp=dp,
                             neighbours=tuple(neighbours), params=config.specs(), summary=summary,
                             default_neighbours=default_neighbours or neighbours[0], needs_delta=needs_delta,
                             optional_delta=optional_delta, max_dim=max_dim, max_dim_reason=max_dim_reason, min_rows=min_rows,
                             min_rows_reason=min_rows_reason, config=config,
                             theory=theory, categorical=categorical)
        mech = Mechanism(spec, impl)
        spec = dataclasses.replace(spec, func=mech)
        mech.spec = spec
        MECHANISMS[name] = spec
        return mech

    return deco

