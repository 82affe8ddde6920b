"""The privacy settings, the privacy controls' grids and the shareable state in the URL (no Streamlit here)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["PrivacySettings", "EPSILON_GRID", "DELTA_GRID", "TEACHING_SEED", "snap_epsilon", "snap_delta", "parse_query"]

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


def parse_query(qp: Mapping[str, Any]) -> dict:
    """Read the shareable state (``eps``, ``delta``, ``rel``, ``seed``, ``dataset``, ``page``) from URL
    query parameters; invalid values are dropped (listed in ``"ignored"``), never raised; values the
    sliders cannot show are snapped to the nearest step and listed, with what was used, in ``"adjusted"``."""
    out: dict[str, Any] = {"ignored": [], "adjusted": []}

    def first(v):
        return v[0] if isinstance(v, (list, tuple)) and v else v

    if "eps" in qp:
        v = first(qp["eps"])
        try:
            x = float(v)
            if not (math.isfinite(x) and x > 0):
                raise ValueError
            out["epsilon"] = snap_epsilon(x)
            _note_snap(out, "eps", x, out["epsilon"], EPSILON_GRID, "ε", "g")
        except (TypeError, ValueError):
            out["ignored"].append(f"eps={v!r}")
    if "delta" in qp:
        v = first(qp["delta"])
        try:
            x = float(v)
            if not 0 < x < 1:
                raise ValueError
            out["delta"] = snap_delta(x)
            _note_snap(out, "delta", x, out["delta"], DELTA_GRID, "δ", ".0e")
        except (TypeError, ValueError):
            out["ignored"].append(f"delta={v!r}")
    if "seed" in qp:
        v = first(qp["seed"])
        try:
            s = int(str(v))
            if s < 0 or s > 2**32 - 1:
                raise ValueError
            out["seed"] = s
        except (TypeError, ValueError):
            out["ignored"].append(f"seed={v!r}")
    if "rel" in qp:
        v = first(qp["rel"])
        if v in ("add_remove", "replace"):
            out["neighbours"] = v
        else:
            out["ignored"].append(f"rel={v!r}")
    if "dataset" in qp:
        out["dataset"] = str(first(qp["dataset"]))
    if "page" in qp:
        out["page"] = str(first(qp["page"]))
    return out
