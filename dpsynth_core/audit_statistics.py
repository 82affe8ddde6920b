"""The audit's statistics: functions that reduce a release to one number (:func:`dpsynth_core.audit.audit`
reads them). Each reads only the release's DP outputs (its synthetic data or its public trace), never the
owner view; :func:`dpsynth_core.audit.statistic_named` offers the teaching page's choices from them."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .validation import check_float, check_int, check_points, param_error


def count_in_box(lower: Sequence[float], upper: Sequence[float]) -> Callable:
    """Statistic: number of synthetic points x with ``lower <= x < upper`` (domain units; a face on
    the domain's upper bound is closed). For the flat histogram, PMM and PSMM this is a
    post-processing of the noisy counts, as private as the release."""
    owner = "count_in_box"
    lo = check_points(np.asarray(lower, dtype=float).reshape(1, -1) if not isinstance(lower, str) else lower,
                      "lower", owner)[0]
    hi = check_points(np.asarray(upper, dtype=float).reshape(1, -1) if not isinstance(upper, str) else upper,
                      "upper", owner, d=lo.size)[0]
    if np.any(hi <= lo):
        raise param_error(owner, "upper", "greater than 'lower' in every coordinate", hi.tolist())

    def stat(release) -> float:
        S = np.asarray(release.synthetic, dtype=float)
        if S.shape[0] == 0:
            return 0.0
        if S.shape[1] != lo.size:
            raise param_error(owner, "lower", f"of the release's dimension {S.shape[1]}", lo.tolist())
        top = np.asarray(release.domain.upper, dtype=float)
        upper_ok = np.where(hi >= top, S <= hi, S < hi)
        return float(np.count_nonzero(np.all((S >= lo) & upper_ok, axis=1)))

    return stat


def synthetic_size() -> Callable:
    """Statistic: the number of synthetic points (it reveals a noisy n under add/remove)."""
    return lambda release: float(np.asarray(release.synthetic).shape[0])


def coordinate_mean(j: int, empty: float = 0.0) -> Callable:
    """Statistic: mean of coordinate ``j`` of the synthetic data (domain units; ``empty`` if none)."""
    jj = check_int(j, "j", "coordinate_mean", low=0)
    fill = check_float(empty, "empty", "coordinate_mean")

    def stat(release) -> float:
        S = np.asarray(release.synthetic, dtype=float)
        if jj >= S.shape[1]:
            raise param_error("coordinate_mean", "j", f"an int in [0, {S.shape[1] - 1}]", jj)
        return float(S[:, jj].mean()) if S.shape[0] else fill

    return stat


_REDUCERS = {"sum": np.sum, "max": np.max, "min": np.min, "mean": np.mean}


def trace_value(key: Any, index: Any = None, *, reduce: str | None = None) -> Callable:
    """Statistic: a value of ``release.trace`` (DP intermediates, never the owner view), e.g. a noisy count.

    Parameters
    ----------
    key : str or tuple
        A trace key, or a path of keys / list positions (``("noisy_histograms", 0)``).
        ``"owner"`` is refused: those entries are not differentially private.
    index : None, int or tuple of int
        Position in the (array) value; None for a scalar value or with ``reduce``.
    reduce : {None, "sum", "max", "min", "mean"}
        Reduce the selected value to a scalar.
    """
    owner = "trace_value"
    path = key if isinstance(key, tuple) else (key,)
    if not path or not isinstance(path[0], str):
        raise param_error(owner, "key", "a trace key (str) or a tuple path starting with one", key, kind=TypeError)
    if path[0] == "owner":
        raise param_error(owner, "key", "a public trace entry (the owner view, release.owner, is not private)", key)
    if reduce is not None and reduce not in _REDUCERS:
        raise param_error(owner, "reduce", "None or one of " + ", ".join(repr(r) for r in _REDUCERS), reduce)

    def stat(release) -> float:
        value = _lookup(release.trace, path, owner, key)
        arr = np.asarray(value, dtype=float) if value is not None else np.asarray(np.nan)
        if index is not None:
            arr = np.asarray(arr[index], dtype=float)
        if reduce is not None:
            arr = np.asarray(_REDUCERS[reduce](arr), dtype=float)
        if arr.size != 1:
            raise ValueError(f"The 'index' parameter of {owner} must select one value of trace[{key!r}]. "
                             f"Got {index!r} on shape {arr.shape}.")
        return float(arr.reshape(()))

    return stat


def _lookup(trace: Any, path: tuple, owner: str, key: Any) -> Any:
    """``trace`` followed along ``path``: a field of a typed trace (a dataclass), then keys or positions."""
    value = trace
    for step in path:
        try:
            if dataclasses.is_dataclass(value) and isinstance(step, str):
                value = getattr(value, step)
            else:
                value = value[step]
        except (KeyError, IndexError, TypeError, AttributeError):
            raise ValueError(f"The 'key' parameter of {owner} must name an entry of the release's trace. "
                             f"Got {key!r} (no {step!r}).") from None
    return value


def count_shift(key: Any, cells: Sequence[Any], base: Sequence[float], sign: Sequence[int],
                weight: Sequence[float] | None = None) -> Callable:
    """Statistic with power for noisy counts: a weighted number of cells that moved the way D' moves them.

    .. math:: s = \\sum_i w_i\\, \\mathbf 1\\{\\sigma_i (\\tilde n_i - b_i) \\ge 1\\}

    where :math:`\\tilde n_i` is the released noisy count of cell i (``trace[key][cells[i]]``),
    :math:`b_i` its true value on D and :math:`\\sigma_i = \\pm 1` the direction D' moves it (+1 for
    the cells of an added point, -1 for a removed or moved-away one). For independent discrete
    Laplace noise with per-cell budget :math:`\\varepsilon_i` and :math:`w_i = \\varepsilon_i`, s is the
    privacy-loss random variable itself, so its threshold events are the Neyman–Pearson optimal
    tests ([HVZ23, Appendix B]: :math:`P(Z \\ge 0)/P(Z \\ge 1) = e^{1/\\sigma}`). Any weights give a
    valid (post-processing) statistic.

    Parameters
    ----------
    key : str or tuple
        Public trace entry (``"owner"`` refused), e.g. ``"noisy_counts"``.
    cells : sequence of int or tuple of int
        Position of each cell in ``trace[key]``; a tuple indexes nested values (``(level, code)``).
    base : sequence of float, same length
        True counts of the cells on D (known to the auditor, who built D).
    sign : sequence of {+1, -1}, same length
    weight : sequence of float >= 0 or None (all 1)
    """
    owner = "count_shift"
    path = key if isinstance(key, tuple) else (key,)
    if not path or not isinstance(path[0], str):
        raise param_error(owner, "key", "a trace key (str) or a tuple path starting with one", key, kind=TypeError)
    if path[0] == "owner":
        raise param_error(owner, "key", "a public trace entry (the owner view, release.owner, is not private)", key)
    cells = list(cells)
    b = np.asarray(base, dtype=float).ravel()
    sg = np.asarray(sign, dtype=float).ravel()
    w = np.ones(len(cells)) if weight is None else np.asarray(weight, dtype=float).ravel()
    if not cells:
        raise param_error(owner, "cells", "a non-empty sequence of cell positions", cells)
    for name, arr in (("base", b), ("sign", sg), ("weight", w)):
        if arr.size != len(cells):
            raise param_error(owner, name, f"a sequence of {len(cells)} values (one per cell)", arr)
    if not np.all(np.isin(sg, (-1.0, 1.0))):
        raise param_error(owner, "sign", "a sequence of +1 / -1", sg)
    if not np.all(np.isfinite(b)) or not np.all(np.isfinite(w)) or np.any(w < 0):
        raise param_error(owner, "weight", "finite non-negative weights (and finite base counts)", w)

    def stat(release) -> float:
        value = _lookup(release.trace, path, owner, key)
        total = 0.0
        for c, bi, si, wi in zip(cells, b, sg, w, strict=True):
            idx = c if isinstance(c, tuple) else (c,)
            v = value
            for step in idx:
                v = v[step]
            if si * (float(v) - bi) >= 1.0:
                total += wi
        return total

    return stat
