"""What a mechanism returns: a :class:`Release` with a typed trace and a typed owner view.

Every release carries the synthetic data, what it guarantees (ε, δ, the neighbouring relation) and
the :class:`~dpsynth_core.privacy.Ledger` that adds up to it. Two typed records travel with it:

* ``trace`` — a frozen dataclass of the mechanism (:class:`Trace` subclass, e.g. ``PMMTrace``):
  the differentially private intermediates the pictures show (noisy counts, the projected measure,
  ...). Computed from DP quantities only, but not part of an export.
* ``owner`` — a frozen dataclass (:class:`OwnerView` subclass): what was computed from the private
  data WITHOUT noise (true counts, n, the number of clamped rows). NOT differentially private; the
  type keeps it apart from everything that may leave the machine.

:meth:`Release.public` is the one view of a release that may leave the machine
(:mod:`dpsynth_core.export` checks its keys against an allow-list).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import numpy as np
import pandas as pd

from ..domain import Domain
from ..privacy import AccountingError, Ledger
from ..theory import BoundKind

__all__ = ["Release", "Trace", "OwnerView", "NoTrace", "BoundKind", "to_jsonable", "describe_randomness"]


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


_R = TypeVar("_R")


class _Typed:
    """``Kind.of(release)``: the release's record of this kind, or a TypeError naming what it holds."""

    _attribute = ""

    @classmethod
    def of(cls: type[_R], release: Release) -> _R:
        value = getattr(release, cls._attribute)  # type: ignore[attr-defined]
        if not isinstance(value, cls):
            raise TypeError(f"The {cls._attribute} of this {release.mechanism} release is a "  # type: ignore[attr-defined]
                            f"{type(value).__name__}, not a {cls.__name__}.")
        return value


@dataclass(frozen=True)
class Trace(_Typed):
    """Base of every mechanism's trace: DP intermediates for the pictures (not exported)."""

    _attribute = "trace"


@dataclass(frozen=True)
class NoTrace(Trace):
    """The trace of a mechanism with no intermediates worth a picture."""


@dataclass(frozen=True)
class OwnerView(_Typed):
    """Base of every mechanism's owner view: computed from the private data without noise.

    NOT differentially private: for the data owner's own diagnostics and teaching pictures only.
    ``n`` is the number of private rows, ``n_clamped`` how many had a coordinate outside the bounds.
    """

    _attribute = "owner"
    n: int
    n_clamped: int


TraceT = TypeVar("TraceT", bound=Trace)
OwnerT = TypeVar("OwnerT", bound=OwnerView)


@dataclass
class Release(Generic[TraceT, OwnerT]):
    """The output of a mechanism.

    Attributes
    ----------
    synthetic : ndarray (m, d) or DataFrame
        Synthetic data in the domain's units (differentially private): an array for a numeric domain;
        for a domain with categorical columns a DataFrame in the domain's column order, categorical
        columns holding the declared categories.
    epsilon, delta : float
        What the release actually guarantees, under ``neighbours``. Equal to the ledger's totals.
    neighbours : str
        ``"add_remove"`` or ``"replace"``.
    mechanism : str
    domain : Domain
    ledger : Ledger
        (step, ε, δ) entries adding up to (epsilon, delta).
    params : dict
        The public record of every resolved parameter (depth, noise scales, grid, ...), as exported.
        Only public or DP values.
    bound : float or None
        The paper's expected-W1 bound for this run, unit-cube l_inf units (or the mechanism's
        certificate, see ``bound_kind``).
    bound_kind : str
        What ``bound`` is, in the mechanism's words ("Theorem 11 (expected W1)", "certificate (Eq. 4) ...").
        For people; code reads ``bound_type``.
    bound_type : BoundKind
        What kind of claim ``bound`` is (proven, certificate, rate without constants, estimate, reference,
        none), set by the mechanism: what the dashboard, the command line and the reports read.
    trace : Trace
        The mechanism's typed intermediates for the pictures (DP; not exported).
    owner : OwnerView
        Computed from the private data without noise: NOT differentially private, never exported.
    is_dp : bool
        False for teaching runs that read the private data (a non-private start, or a domain whose
        ``provenance`` is "data": bounds or categories read off the data). Set from the domain here.
    notes : list of str
        Plain-language caveats shown with the release.
    seconds : float
        Wall time of the mechanism call.
    randomness : dict
        Where the noise came from (:func:`describe_randomness`): fresh operating-system entropy (the
        default: private), a pinned seed (reproducible, NOT private: whoever knows the seed can
        re-draw the noise) or a caller's generator.
    """

    synthetic: np.ndarray | pd.DataFrame
    epsilon: float
    delta: float
    neighbours: str
    mechanism: str
    domain: Domain
    ledger: Ledger
    trace: TraceT = field(default_factory=NoTrace)  # type: ignore[assignment]
    owner: OwnerT | None = None
    params: dict = field(default_factory=dict)
    bound: float | None = None
    bound_kind: str = ""
    bound_type: BoundKind = BoundKind.NONE
    is_dp: bool = True
    notes: list = field(default_factory=list)
    seconds: float = float("nan")
    randomness: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        led_e, led_d = self.ledger.epsilon, self.ledger.delta
        if not math.isclose(led_e, self.epsilon, rel_tol=1e-9, abs_tol=1e-12) or not math.isclose(
            led_d, self.delta, rel_tol=1e-9, abs_tol=1e-15
        ):
            raise AccountingError(
                f"{self.mechanism}: the ledger sums to (ε={led_e}, δ={led_d}) but the release states "
                f"(ε={self.epsilon}, δ={self.delta})"
            )
        if not self.domain.declared:
            self.is_dp = False
        self.bound_type = BoundKind(self.bound_type)
        if not isinstance(self.trace, Trace) or not isinstance(self.owner, OwnerView):
            raise TypeError(f"{self.mechanism}: a release holds a Trace and an OwnerView; got "
                            f"{type(self.trace).__name__} and {type(self.owner).__name__}")

    @property
    def bound_is_vacuous(self) -> bool:
        """True when ``bound`` is a number at or above the space's diameter (:attr:`Domain.diameter
        <dpsynth_core.domain.Domain.diameter>`): no W1 exceeds the diameter, so such a bound says nothing
        about this release (more rows or a larger ε give an informative one)."""
        return self.bound is not None and float(self.bound) >= self.domain.diameter

    @property
    def pinned(self) -> bool:
        """True when the noise came from a pinned seed (reproducible, not private)."""
        return self.randomness.get("source") == "seed"

    @property
    def _not_dp_reason(self) -> str:
        if not self.domain.declared:
            return "NOT differentially private (the domain's bounds or categories were read off the private data)"
        return "NOT differentially private (teaching run that reads the private data)"

    @property
    def label(self) -> str:
        """What an export of this release may be called: private, or why not."""
        if not self.is_dp:
            return self._not_dp_reason
        if self.pinned:
            return "reproducible, not private (pinned seed: whoever knows it can re-draw the noise)"
        return "differentially private"

    @property
    def privacy(self) -> str:
        """One line: what the release guarantees."""
        if not self.is_dp:
            return self._not_dp_reason
        kind = "pure" if self.delta == 0 else "approximate"
        return f"({self.epsilon:.4g}, {self.delta:.3g})-DP ({kind}), {self.neighbours.replace('_', '/')} neighbours"

    def synthetic_frame(self) -> pd.DataFrame:
        """The synthetic data as a DataFrame in the domain's column order."""
        if isinstance(self.synthetic, pd.DataFrame):
            return self.synthetic
        return pd.DataFrame(self.synthetic, columns=list(self.domain.names))

    def public(self, *, include_synthetic: bool = True) -> dict:
        """Only what may leave the machine: the synthetic data, (ε, δ), the relation, the ledger, the
        resolved parameters, the bound, where the randomness came from and the label. The trace and
        the owner view are excluded; :mod:`dpsynth_core.export` checks the keys against its
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
            "bound_type": self.bound_type.value,
            "domain": self.domain.to_dict(),
            "n_synthetic": int(self.synthetic.shape[0]),
            "notes": list(self.notes),
            "randomness": dict(self.randomness),
            "label": self.label,
        }
        if include_synthetic:
            out["synthetic"] = (self.synthetic.astype(object).to_numpy().tolist()
                                if isinstance(self.synthetic, pd.DataFrame) else self.synthetic.tolist())
        return out

    def public_json(self, *, include_synthetic: bool = False) -> str:
        """:meth:`public` as JSON text (the report of the command line and the dashboard)."""
        return json.dumps(to_jsonable(self.public(include_synthetic=include_synthetic)), indent=2)
