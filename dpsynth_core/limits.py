"""Resource limits: one ceiling on what a release may allocate, checked before it allocates.

A mechanism's sizes (synthetic rows, grid cells, tree leaves, candidate points, transport solves)
follow from public inputs (d, the caller's parameters, a declared ``n_public``) and from
differentially private quantities (a noisy dataset size, a noisy root count). At the ends of the ε
range (:data:`dpsynth_core.privacy.EPSILON_MIN` = 1e-6) a noisy size of 40 records can be ten
million. Every mechanism therefore compares its *planned* sizes with the limits below before it
builds the arrays, and then either

* **caps** a size that is a DP quantity (the default output size of a noisy size or of a noisy
  root count): the release keeps the same measure, rounded to fewer points. That is
  post-processing of the DP output, so it costs no privacy; the cap is written to ``rel.notes`` and
  to ``rel.params["limits"]``; or
* **refuses** a plan that follows from public inputs only (an explicit ``n_synthetic``, ``bins``,
  ``depth``, the dimension): a ``ValueError`` with the project's one-line message that names the
  parameter to change and the limit to raise. A refusal that depends on a DP quantity (the
  certificate of ``sparse_marginals`` needs more exact transport solves than allowed) is
  post-processing as well: it reveals nothing beyond the DP output.

docs/privacy-model.md ("Resource limits") lists the decision per mechanism.

The limits
----------
``max_synthetic_rows`` (default 10^6)
    Rows of a release, whatever d.
``max_synthetic_values`` (default 2^23)
    Rows × d of a release: the coordinates a release draws, holds and hands to a caller. 2^23 values
    are 64 MiB of float64 (a CSV of about 200 MB): 10^6 rows up to d = 8, about 168,000 rows at
    d = 50. Before this limit a flat histogram at ε = 1e-6, d = 50 drew 10^6 × 50 values (400 MB, tens
    of seconds); every default run at the ends of the ε range now returns within seconds
    (``benchmarks/results/limits.json``). A default output size is capped at
    ``min(max_synthetic_rows, max_synthetic_values // d)`` rows; an explicit one above it is refused.
``max_cells`` (default 2^24)
    Entries of the largest count structure a mechanism builds: grid cells (flat histogram, PSMM,
    the Haar walk), leaves of the PMM tree, blocks × cells of the sparse-marginal query vector, and
    Monte Carlo draws × blocks × cells held at once by its certificate. 2^24 entries are 128 MiB
    as int64/float64; a mechanism keeps a handful of such vectors (noisy, clipped, consistent,
    synthetic counts), so the peak stays near 1 GiB. It is the size the deepest PMM tree (depth
    24) already had; the mechanisms' own algorithmic maxima (e.g. 2^22 cells for the Haar walk,
    2^16 for the exact BL projection) stay below it.
``max_size`` (default 10^7)
    The largest dataset size n a release plans for: the range of ``n_public`` in every mechanism
    and the clamp of a noisy size (post-processing), the same as the largest table
    :func:`dpsynth_core.tabular.load_csv` reads. It replaces the former ``privacy.MAX_SIZE``.
``max_candidates`` (default 2^26)
    Private Evolution's candidate coordinates over a release: iterations × n_s(2L+1) variation
    points × d. Each iteration holds n_s(2L+1) × d float64 values (at most 512 MiB at the
    limit) and the nearest-neighbour votes cost time in proportion to the total.
``max_transport_solves`` (default 5,000)
    Exact transport problems the certificate of ``sparse_marginals`` may solve (Monte Carlo
    quantile and projection terms, after the cheap bounds that decide most blocks and draws; a block
    of m cells counts as ⌈m/64⌉ solves, since the solve time grows with m). The plan is bounded from
    the cheap bounds before any solve: a given k whose plan exceeds the limit is refused then (before
    Step 3); the default k is lowered until its plan fits, and should its fresh draws still need more,
    the remaining solves are replaced by their proven upper bounds (a looser certificate that is still
    valid, noted in the release); it is never replaced by one that has not been proved. The time per
    counted solve is measured in ``benchmarks/bench_limits.py``.
``max_lp_nonzeros`` (default 2^17)
    Non-zeros of the Step 3 linear program of ``sparse_marginals`` (about C(d, s) × (public support
    + 7 k^s)); the interior-point solver's time grows faster than linearly in it. The default k is
    searched only among grids that fit; a given k or public_size that does not fit is refused.

Changing the limits
-------------------
>>> from dpsynth_core import limits
>>> limits.current().max_synthetic_rows
1000000
>>> with limits.override(max_synthetic_rows=10**7):
...     limits.current().max_synthetic_rows
10000000

:func:`override` is a context manager over a :class:`contextvars.ContextVar`: it applies to the
current thread (and to asyncio tasks started inside it) only, so one Streamlit session raising a
limit does not raise it for another. :func:`set_defaults` changes the process-wide defaults (for a
server's start-up), which every context without an override sees.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import numbers
import threading
from collections.abc import Iterator
from typing import Any

__all__ = ["Limits", "DEFAULTS", "current", "override", "set_defaults", "check_planned", "cap_rows",
           "row_ceiling", "check_rows", "LIMIT_NAMES"]


@dataclasses.dataclass(frozen=True)
class Limits:
    """The ceilings a release may allocate (module docstring). All are positive ints."""

    max_synthetic_rows: int = 1_000_000
    max_synthetic_values: int = 2**23
    max_cells: int = 2**24
    max_size: int = 10_000_000
    max_candidates: int = 2**26
    max_transport_solves: int = 5_000
    max_lp_nonzeros: int = 2**17

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if isinstance(value, bool) or not isinstance(value, numbers.Integral) or int(value) < 1:
                kind = TypeError if isinstance(value, bool) or not isinstance(value, numbers.Integral) else ValueError
                raise kind(f"The '{f.name}' parameter of dpsynth_core.limits must be an int >= 1. Got {value!r}.")
            object.__setattr__(self, f.name, int(value))

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


#: The limits the library ships with.
DEFAULTS = Limits()
LIMIT_NAMES: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(Limits))

_lock = threading.Lock()
_process_defaults = DEFAULTS
_override: contextvars.ContextVar[Limits | None] = contextvars.ContextVar("dpsynth_core_limits", default=None)


def current() -> Limits:
    """The limits in force here: the innermost :func:`override`, else the process defaults."""
    value = _override.get()
    return _process_defaults if value is None else value


def _changed(base: Limits, changes: dict[str, Any]) -> Limits:
    unknown = sorted(set(changes) - set(LIMIT_NAMES))
    if unknown:
        raise TypeError(f"The '{unknown[0]}' parameter of dpsynth_core.limits must be one of "
                        + ", ".join(repr(n) for n in LIMIT_NAMES) + f". Got {unknown[0]!r}.")
    return dataclasses.replace(base, **changes)


@contextlib.contextmanager
def override(**changes: int) -> Iterator[Limits]:
    """Raise or lower limits inside a ``with`` block (this context only; nests; restored on exit).

    >>> with override(max_synthetic_rows=10**7, max_cells=2**26) as lim:
    ...     lim.max_cells
    67108864
    """
    new = _changed(current(), changes)
    token = _override.set(new)
    try:
        yield new
    finally:
        _override.reset(token)


def set_defaults(**changes: int) -> Limits:
    """Change the process-wide limits (seen by every context without an :func:`override`).

    Returns the new defaults. ``set_defaults(**dpsynth_core.limits.DEFAULTS.to_dict())`` restores
    the shipped values.
    """
    global _process_defaults
    with _lock:
        _process_defaults = _changed(_process_defaults, changes)
        return _process_defaults


def _fmt(x: int) -> str:
    return f"{x:,}".replace(",", "_") if x >= 10**5 else str(x)


def check_planned(planned: int, limit: str, *, owner: str, param: str, what: str, fix: str,
                  got: str | None = None) -> None:
    """Raise before allocating when ``planned`` exceeds ``current().<limit>``.

    The message is the project's one-line format::

        The '<param>' parameter of <owner> must give at most <limit value> <what> (dpsynth_core.limits
        <limit>); <fix>, or raise the limit with dpsynth_core.limits.override(<limit>=...). Got <got>.
    """
    ceiling = getattr(current(), limit)
    if planned > ceiling:
        raise ValueError(
            f"The '{param}' parameter of {owner} must give at most {_fmt(ceiling)} {what} (dpsynth_core.limits "
            f"{limit}); {fix}, or raise the limit with dpsynth_core.limits.override({limit}=...). "
            f"Got {got if got is not None else _fmt(int(planned)) + ' ' + what}."
        )


def row_ceiling(d: int = 1) -> tuple[int, str]:
    """The most rows a release of dimension d may have, and the limit that sets it:
    ``min(max_synthetic_rows, max_synthetic_values // d)`` (at least 1)."""
    lim = current()
    by_values = max(1, lim.max_synthetic_values // max(1, int(d)))
    if by_values < lim.max_synthetic_rows:
        return by_values, "max_synthetic_values"
    return lim.max_synthetic_rows, "max_synthetic_rows"


def check_rows(rows: int, d: int, *, owner: str, param: str = "n_synthetic", fix: str = "pass a smaller n_synthetic") -> None:
    """Refuse an explicit output size above :func:`row_ceiling` (``max_synthetic_rows``, or
    ``max_synthetic_values`` rows × d), before anything is drawn."""
    check_planned(rows, "max_synthetic_rows", owner=owner, param=param, what="synthetic rows", fix=fix)
    check_planned(int(rows) * max(1, int(d)), "max_synthetic_values", owner=owner, param=param,
                  what="synthetic values (rows x d)", fix=fix,
                  got=f"{_fmt(int(rows))} rows x d = {d} = {_fmt(int(rows) * max(1, int(d)))} values")


def cap_rows(planned: int, *, source: str, d: int = 1) -> tuple[int, dict | None]:
    """Cap a default output size that is a DP quantity (or follows from a public n) at
    :func:`row_ceiling` (post-processing).

    Returns ``(rows, record)``: ``record`` is None when nothing was capped, else a dict for
    ``rel.params["limits"]`` (the planned size, the row cap, the limit that set it and what the
    planned size came from).
    """
    ceiling, name = row_ceiling(d)
    if planned <= ceiling:
        return int(planned), None
    record = {"max_synthetic_rows": int(ceiling), "planned_rows": int(planned), "source": source}
    if name == "max_synthetic_values":
        record.update(max_synthetic_values=int(current().max_synthetic_values), d=int(d))
    return int(ceiling), record


def cap_note(record: dict, owner: str) -> str:
    """The ``rel.notes`` line of a cap recorded by :func:`cap_rows`."""
    which = ("max_synthetic_rows" if "max_synthetic_values" not in record else
             f"max_synthetic_values: {_fmt(record['max_synthetic_values'])} values at d = {record['d']}")
    return (f"Output size capped at {_fmt(record['max_synthetic_rows'])} rows (dpsynth_core.limits "
            f"{which}); the planned size was {_fmt(record['planned_rows'])} ({record['source']}). "
            f"The released measure is the same, rounded to fewer points: post-processing, no privacy cost. "
            f"To release more rows, raise the limit: dpsynth_core.limits.override(max_synthetic_rows=...) in "
            f"Python, --max-rows on the command line.")
