"""Parameter schemas: one description of a parameter for the command line, the dashboard and checks.

A :class:`ParamSpec` says what a mechanism's (or a data generator's) keyword parameter is: its
type, default, range or choices, and one sentence of help. The command line parses ``key=value``
strings with :meth:`ParamSpec.parse`; the dashboard builds one widget per spec; both report errors
in the project's one message format.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from .validation import check_bool, check_choice, check_float, check_int, param_error

__all__ = ["ParamSpec", "KINDS"]

KINDS = ("float", "int", "choice", "bool")


@dataclass(frozen=True)
class ParamSpec:
    """One keyword parameter, as the command line and the dashboard see it.

    Parameters
    ----------
    name : str
        The keyword.
    kind : {"float", "int", "choice", "bool"}
    default : Any
        The default value; ``None`` means "resolved by the mechanism from the paper's rule"
        (``help`` says which).
    help : str
        One sentence for people.
    low, high : float or None
        Bounds of numeric values (inclusive).
    choices : tuple
        The options of a "choice".
    log : bool
        Ask for a log-scale control.
    advanced : bool
        Shown behind an "Advanced" expander by the dashboard.
    label : str
        The control's label for people (default: the name with spaces).
    """

    name: str
    kind: str
    default: Any
    help: str
    low: float | None = None
    high: float | None = None
    choices: tuple = ()
    log: bool = False
    advanced: bool = False
    label: str = ""

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise param_error("ParamSpec", "kind", "one of " + ", ".join(repr(k) for k in KINDS), self.kind)
        if self.kind == "choice" and not self.choices:
            raise param_error("ParamSpec", "choices", f"a non-empty tuple for the choice {self.name!r}", self.choices)

    @property
    def title(self) -> str:
        """The label shown to people."""
        return self.label or self.name.replace("_", " ")

    def check(self, value: Any, owner: str) -> Any:
        """``value`` validated against the spec (``None`` passes when the default is ``None``)."""
        if value is None and self.default is None:
            return None
        if self.kind == "choice":
            return check_choice(value, self.name, owner, tuple(self.choices))
        if self.kind == "bool":
            return check_bool(value, self.name, owner)
        low = None if self.low is None or not math.isfinite(self.low) else self.low
        high = None if self.high is None or not math.isfinite(self.high) else self.high
        if self.kind == "int":
            return check_int(value, self.name, owner, low=None if low is None else int(math.ceil(low)),
                             high=None if high is None else int(math.floor(high)))
        return check_float(value, self.name, owner, low=-math.inf if low is None else low,
                           high=math.inf if high is None else high)

    def parse(self, text: str, owner: str) -> Any:
        """Parse a command-line ``key=value`` string into this parameter's type (not range-checked)."""
        if text.lower() in ("none", "auto", "") and self.default is None:
            return None
        try:
            if self.kind == "float":
                return float(text)
            if self.kind == "int":
                f = float(text)
                return int(f) if f.is_integer() else f
            if self.kind == "bool":
                if text.lower() in ("1", "true", "yes", "on"):
                    return True
                if text.lower() in ("0", "false", "no", "off"):
                    return False
                raise ValueError
        except ValueError:
            article = "an" if self.kind[0] in "aeiou" else "a"
            raise param_error(owner, self.name, f"{article} {self.kind}", text) from None
        return text

    def describe(self) -> str:
        """``<kind> [low, high]`` or ``{a, b}``: the range as the command line lists it."""
        if self.choices:
            return "{" + ", ".join(map(str, self.choices)) + "}"
        if self.low is not None or self.high is not None:
            return f"[{self.low}, {self.high}]"
        return ""
