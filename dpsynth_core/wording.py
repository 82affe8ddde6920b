"""The library's words for its typed facts: one place that says them to people.

Every front end (the dashboard, the command line, the reports) shows a release's bound, the
neighbouring relation, δ and a W1 value or interval in the same words, made here from typed facts:
:class:`~dpsynth_core.theory.BoundKind` and :attr:`Release.bound_is_vacuous
<dpsynth_core.mechanisms.release.Release.bound_is_vacuous>`, never from the wording of a release's
``bound_kind`` or ``notes`` (``tests/core/test_house.py`` checks that no code outside this module tests
a release's text). Plain Python: no Streamlit, no plotting.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from .theory import BoundKind

__all__ = ["RELATION_WORDS", "RELATION_REASONS", "BoundWords", "bound_words", "vacuous_note", "delta_text",
           "column_domain",
           "w1_text", "w1_bracket_text", "w1_interval_text", "w1_metric_text"]

#: The neighbouring relations as people read them.
RELATION_WORDS = {"add_remove": "add / remove one record", "replace": "replace one record"}
#: Why a mechanism works with one relation only (said in brackets after "works with ... neighbours only").
RELATION_REASONS = {"replace": "the dataset size n must be public",
                    "add_remove": "the analysis covers adding or removing a record"}

_NO_BOUND = "This mechanism has no bound from its paper."
_CERTIFICATE = ("A private, high-probability upper bound on the largest W1 over the released marginals, published "
                "with the data (see the certificate below).")


@dataclass(frozen=True)
class BoundWords:
    """A release's bound as a headline shows it: ``label``, ``value`` ("—" when the number is not a bound
    worth reading) and ``help`` (what it is, or why "—"). ``vacuous``: the value is "—" because the bound is
    not below the space's diameter (then ``help`` is :func:`vacuous_note`, worth showing beside it)."""

    label: str
    value: str
    help: str
    vacuous: bool = False


def bound_words(rel: Any) -> BoundWords:
    """The theory's bound of a release, honestly (from ``rel.bound_type``, ``rel.bound`` and
    ``rel.bound_is_vacuous``; ``rel.bound_kind`` is only quoted).

    A number is shown as a bound only when it is one for this run and below the space's diameter: a rate
    without constants, a bound at or above the diameter, or none at all is "—" with the reason in the help.
    """
    kind = BoundKind(rel.bound_type)
    b = None if rel.bound is None else float(rel.bound)
    text = rel.bound_kind or ""
    if b is None or not math.isfinite(b):
        if kind is BoundKind.RATE:
            return BoundWords("Theory's rate", "—", _sentence(text) or "The paper gives a rate without constants.")
        return BoundWords("Theory's bound", "—", _sentence(text) or _NO_BOUND)
    diameter = rel.domain.diameter
    if kind is BoundKind.CERTIFICATE:
        if rel.bound_is_vacuous:
            return BoundWords("Certified bound", "—", vacuous_note(b, diameter, what="certificate"), vacuous=True)
        return BoundWords("Certified bound", f"{b:.3g}", _CERTIFICATE)
    if kind is BoundKind.RATE:
        return BoundWords("Theory's rate", "—", f"The paper gives a rate whose constants it does not specify; "
                                                f"evaluated with constant 1 it is {b:.3g} here, which is not a bound.")
    if rel.bound_is_vacuous:
        return BoundWords("Theory's bound", "—", vacuous_note(b, diameter, what="paper's bound"), vacuous=True)
    if kind is BoundKind.ESTIMATE:
        return BoundWords("Theory's estimate", f"{b:.3g}",
                          f"{text}: part of it is estimated rather than proven, so read it as an estimate.")
    if kind is BoundKind.REFERENCE:
        return BoundWords("Theory's bound (reference)", f"{b:.3g}",
                          text + " For these settings the proof does not apply; the value is shown for reference.")
    return BoundWords("Theory's bound", f"{b:.3g}", text)


def _sentence(text: str) -> str:
    """A release's ``bound_kind`` as a sentence of a help text ("" for none)."""
    text = text.strip()
    return text[:1].upper() + text[1:] + ("" if text.endswith(".") else ".") if text else ""


def column_domain(domain: Any, column: str, most: int | None = None) -> str:
    """A column's public domain as people write it: "age ∈ [0, 120]", "sex ∈ {F, M}" (at most ``most``
    categories, then "…")."""
    if column in domain.categories:
        labels = list(domain.categories[column])
        shown = labels if most is None else labels[:most]
        return f"{column} ∈ {{{', '.join(shown)}{', …' if len(shown) < len(labels) else ''}}}"
    j = list(domain.numeric_names).index(column)
    return f"{column} ∈ [{domain.lower[j]:g}, {domain.upper[j]:g}]"


def vacuous_note(bound: float, diameter: float = 1.0, *, what: str = "bound") -> str:
    """Why a bound at or above the space's diameter (the largest possible W1) is not worth reading."""
    return (f"The {what} at this n and ε is {float(bound):.3g}, not below the largest possible W1 ({diameter:g}): "
            "it says nothing here. More rows or a larger ε give an informative one.")


_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def delta_text(delta: float) -> str:
    """δ as people write it: "10⁻⁶" for a power of ten, "5e-07" otherwise."""
    k = round(math.log10(delta)) if delta > 0 else 0
    if delta > 0 and math.isclose(delta, 10.0**k, rel_tol=1e-9):
        return "10" + str(k).translate(_SUPERSCRIPT)
    return f"{delta:.0e}"


def w1_text(w: Any) -> str:
    """A W1 result (:class:`~dpsynth_core.transport.W1Result`) for people: the exact value, or the value
    with its certified interval."""
    if w.exact or w.upper - w.lower < 1e-12:
        return f"{w.value:.4g}"
    return f"{w.value:.4g} ∈ [{w.lower:.4g}, {w.upper:.4g}]"


def w1_bracket_text(lower: float, upper: float) -> str:
    """What is proven about a W1 in a table cell: "exact", or "[a, b]" (3 significant digits)."""
    return "exact" if abs(float(upper) - float(lower)) < 1e-12 else f"[{float(lower):.3g}, {float(upper):.3g}]"


def w1_interval_text(lower: float, upper: float, *, brackets: bool = True) -> str:
    """``[a, b]`` with 3 to 6 significant digits (enough to show the width), ``a`` rounded down and ``b``
    up, so that the printed interval still contains the certified one."""
    lower, upper = max(float(lower), 0.0), float(upper)
    if upper <= 0 or not math.isfinite(upper):
        text = f"{lower:.3g}, {upper:.3g}"
    else:
        top = math.floor(math.log10(upper))
        for digits in range(3, 7):
            q = 10.0 ** (top - digits + 1)
            if q <= (upper - lower) / 4:
                break
        lo, hi = math.floor(lower / q + 1e-9) * q, math.ceil(upper / q - 1e-9) * q  # 1e-9: 0.01 / 1e-5 < 1000
        decimals = max(0, digits - 1 - top)
        text = ("0" if lo <= 0 else f"{lo:.{decimals}f}") + f", {hi:.{decimals}f}"
    return f"[{text}]" if brackets else text


def w1_metric_text(lower: float, upper: float) -> str:
    """A headline's short value for a certified bracket: "≈ v" (v the midpoint, 3 significant digits) when
    the bracket is at most 1% wide -- then v is within 0.5% of W1 and its digits are the ones the bracket
    fixes -- otherwise the bracket itself (:func:`w1_interval_text`)."""
    lower, upper = max(float(lower), 0.0), float(upper)
    if math.isfinite(upper) and upper > 0 and (upper - lower) <= 0.01 * upper:
        return f"≈ {0.5 * (lower + upper):.3g}"
    return w1_interval_text(lower, upper)
