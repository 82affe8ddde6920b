"""Mechanisms: one module per mechanism, each registering itself in :data:`MECHANISMS`.

Modules are discovered with :mod:`pkgutil` (:func:`base.load_all`), so adding ``mechanisms/<name>.py``
that declares its contract with :func:`contract.mechanism` is all a new mechanism needs. The functions are re-exported lazily:
``from dpsynth_core.mechanisms import pmm`` works once ``mechanisms/pmm.py`` defines ``pmm``.
"""

from __future__ import annotations

import importlib

from ..theory import BoundKind
from .base import (
    MECHANISMS,
    BoundMechanism,
    ClampedRowsWarning,
    MechanismSpec,
    ParamSpec,
    Release,
    bind,
    load_all,
    run,
)
from .contract import PRIVACY, SETTINGS, Misfit, MisfitKind

__all__ = ["MECHANISMS", "MechanismSpec", "ParamSpec", "Release", "BoundMechanism", "bind", "run", "load_all",
           "ClampedRowsWarning", "BoundKind", "PRIVACY", "SETTINGS", "Misfit", "MisfitKind"]

def __getattr__(name: str):
    load_all()
    for spec in MECHANISMS.values():
        if spec.func.__name__ == name:
            return spec.func
    try:
        return importlib.import_module(f"{__name__}.{name}")
    except ModuleNotFoundError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
