"""Mechanisms: one module per mechanism, each registering itself in :data:`MECHANISMS`.

Modules are discovered with :mod:`pkgutil`, so adding ``mechanisms/<name>.py`` that calls
:func:`base.register` is all a new mechanism needs. The functions are re-exported lazily:
``from dpsynth_core.mechanisms import pmm`` works once ``mechanisms/pmm.py`` defines ``pmm``.
"""

from __future__ import annotations

import importlib
import pkgutil

from .base import MECHANISMS, BoundMechanism, MechanismSpec, ParamSpec, Release, bind, register, run

__all__ = ["MECHANISMS", "MechanismSpec", "ParamSpec", "Release", "BoundMechanism", "bind", "register", "run", "load_all"]

_LOADED = False


def load_all() -> dict:
    """Import every mechanism module once (they register themselves)."""
    global _LOADED
    if not _LOADED:
        for info in pkgutil.iter_modules(__path__):
            if info.name != "base":
                importlib.import_module(f"{__name__}.{info.name}")
        _LOADED = True
        # Importing a submodule binds its name on this package to the module; the API contract
        # wants the function (``from dpsynth_core.mechanisms import pmm`` is the mechanism).
        for spec in MECHANISMS.values():
            globals()[spec.func.__name__] = spec.func
    return MECHANISMS


def __getattr__(name: str):
    load_all()
    for spec in MECHANISMS.values():
        if spec.func.__name__ == name:
            return spec.func
    try:
        return importlib.import_module(f"{__name__}.{name}")
    except ModuleNotFoundError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
