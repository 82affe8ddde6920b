"""The privacy settings, the privacy controls' grids and the shareable state in the URL (no Streamlit here)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["PrivacySettings", "EPSILON_GRID", "DELTA_GRID", "TEACHING_SEED", "DEFAULT_SETTINGS", "snap_epsilon", "snap_delta", "parse_query"]

#: ε values of the log slider: 1-2-5 steps from 10^-3 to 10^2.
EPSILON_GRID: tuple[float, ...] = tuple(
    float(f"{m}e{e}") for e in range(-3, 3) for m in (1, 2, 5) if float(f"{m}e{e}") <= 100.0
)
#: δ values offered for approximate-DP mechanisms.
DELTA_GRID: tuple[float, ...] = tuple(10.0**-k for k in range(12, 1, -1))
#: The default teaching seed: on-screen releases are reproducible for a class; downloads never use it.
TEACHING_SEED = 0


@dataclass(frozen=True)
class PrivacySettings:
    """The sidebar's privacy settings (:func:`dashboard.state.settings`): ε, δ, the neighbouring relation and
    the teaching seed of the releases on screen (downloads never use it)."""

    epsilon: float
    delta: float
    neighbours: str
    seed: int

    def bind_keywords(self, spec: Any) -> dict[str, Any]:
        """The relation and, for an approximate mechanism, δ: the keywords :func:`~dpsynth_core.mechanisms.bind`
        (and a sweep's ``params``) take besides ε."""
        return {"neighbours": self.neighbours, **({"delta": self.delta} if spec.needs_delta else {})}


#: A new session's settings before its URL is read: what every page shows first (and the server warms:
#: :mod:`dashboard.warm`).
DEFAULT_SETTINGS = PrivacySettings(epsilon=1.0, delta=1e-6, neighbours="add_remove", seed=TEACHING_SEED)


def _snap(value: Any, grid: tuple[float, ...], default: float) -> float:
    try:
        x = float(value)
    except (TypeError, ValueError):
        return default
    if not math.isfinite(x) or x <= 0:
        return default
    g = np.asarray(grid)
    return float(g[np.argmin(np.abs(np.log(g) - math.log(x)))])


def snap_epsilon(value: Any, default: float = 1.0) -> float:
    """The value of :data:`EPSILON_GRID` nearest to ``value`` in log scale (``default`` if invalid)."""
    return _snap(value, EPSILON_GRID, default)


def snap_delta(value: Any, default: float = 1e-6) -> float:
    """The value of :data:`DELTA_GRID` nearest to ``value`` in log scale (``default`` if invalid)."""
    return _snap(value, DELTA_GRID, default)


def _note_snap(out: dict, name: str, asked: float, used: float, grid: tuple[float, ...], symbol: str,
               fmt: str) -> None:
    """Record in ``out["adjusted"]`` a URL value that the slider cannot show as it is (beyond its ends or
    between its steps), with the value used instead: a link never changes a setting silently."""
    if math.isclose(asked, used, rel_tol=1e-9):
        return
    if asked < grid[0] or asked > grid[-1]:
        why = f"outside the slider's range {grid[0]:{fmt}} to {grid[-1]:{fmt}}"
    else:
        why = "between the slider's steps"
    out["adjusted"].append(f"The link's {name}={asked:{fmt}} is {why}: {symbol} = {used:{fmt}} is used instead.")


def _first(v: Any) -> Any:
    """A query parameter's value (the first, when it is given several times)."""
    return v[0] if isinstance(v, (list, tuple)) and v else v


def _read_snapped(qp: Mapping[str, Any], name: str, setting: str, valid, grid: tuple[float, ...], symbol: str,
                  fmt: str, out: dict) -> None:
    """``qp[name]`` read as a float, kept when ``valid``, snapped to the slider's ``grid`` (and said, when it
    moves) into ``out[setting]``; anything else is listed in ``out["ignored"]``."""
    if name not in qp:
        return
    v = _first(qp[name])
    try:
        x = float(v)
        if not valid(x):
            raise ValueError
    except (TypeError, ValueError):
        out["ignored"].append(f"{name}={v!r}")
        return
    out[setting] = _snap(x, grid, x)
    _note_snap(out, name, x, out[setting], grid, symbol, fmt)


def parse_query(qp: Mapping[str, Any]) -> dict:
    """Read the shareable state (``eps`` -- or ``epsilon`` --, ``delta``, ``rel``, ``seed``, ``dataset``, ``page``) from URL
    query parameters; invalid values are dropped (listed in ``"ignored"``), never raised; values the
    sliders cannot show are snapped to the nearest step and listed, with what was used, in ``"adjusted"``."""
    out: dict[str, Any] = {"ignored": [], "adjusted": []}

    # "eps" in the links the dashboard writes; "epsilon", the name people type, is read the same way
    eps = "eps" if "eps" in qp or "epsilon" not in qp else "epsilon"
    _read_snapped(qp, eps, "epsilon", lambda x: math.isfinite(x) and x > 0, EPSILON_GRID, "ε", "g", out)
    _read_snapped(qp, "delta", "delta", lambda x: 0 < x < 1, DELTA_GRID, "δ", ".0e", out)
    if "seed" in qp:
        v = _first(qp["seed"])
        try:
            s = int(str(v))
            if s < 0 or s > 2**32 - 1:
                raise ValueError
            out["seed"] = s
        except (TypeError, ValueError):
            out["ignored"].append(f"seed={v!r}")
    if "rel" in qp:
        v = _first(qp["rel"])
        if v in ("add_remove", "replace"):
            out["neighbours"] = v
        else:
            out["ignored"].append(f"rel={v!r}")
    if "dataset" in qp:
        out["dataset"] = str(_first(qp["dataset"]))
    if "page" in qp:
        out["page"] = str(_first(qp["page"]))
    return out
