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

__all__ = ["RELATION_WORDS", "RELATION_REASONS", "BOUND_KIND_WORDS", "BOUND_LABELS", "BoundWords", "bound_words",
           "bound_cell", "vacuous_note",
           "delta_text", "column_domain", "w1_text", "w1_bracket_text", "w1_interval_text", "w1_metric_text",
           "epsilon_meaning", "kept_sentence", "membership_words"]

#: The neighbouring relations as people read them.
RELATION_WORDS = {"add_remove": "add / remove one record", "replace": "replace one record"}
#: Why a mechanism works with one relation only (said in brackets after "works with ... neighbours only").
RELATION_REASONS = {"replace": "the dataset size n must be public",
                    "add_remove": "the analysis covers adding or removing a record"}

#: The words for each kind of bound: one table, used wherever a release's bound is shown (a headline's label, a
#: table's cell, a chart's legend), so the same kind of claim reads the same on every page.
BOUND_KIND_WORDS: dict[BoundKind, str] = {
    BoundKind.PROVEN: "proven",
    BoundKind.CERTIFICATE: "certified (marginals)",
    BoundKind.RATE: "rate only",
    BoundKind.ESTIMATE: "estimate",
    BoundKind.REFERENCE: "reference",
    BoundKind.NONE: "none",
}
#: A headline's label for each kind of bound ("Bound on W1: proven"). The value beside it is "—" when the number is
#: not a bound worth reading (:func:`bound_words` says why).
BOUND_LABELS: dict[BoundKind, str] = {kind: f"Bound on W1: {words}" for kind, words in BOUND_KIND_WORDS.items()}

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
    label = BOUND_LABELS[kind]
    b = None if rel.bound is None else float(rel.bound)
    text = rel.bound_kind or ""
    if b is None or not math.isfinite(b):
        if kind is BoundKind.RATE:
            return BoundWords(label, "—", _sentence(text) or "The paper gives a rate without constants.")
        return BoundWords(label, "—", _sentence(text) or _NO_BOUND)
    diameter = rel.domain.diameter
    if kind is BoundKind.CERTIFICATE:
        if rel.bound_is_vacuous:
            return BoundWords(label, "—", vacuous_note(b, diameter, what="certificate"), vacuous=True)
        return BoundWords(label, f"{b:.3g}", _CERTIFICATE)
    if kind is BoundKind.RATE:
        return BoundWords(label, "—", f"The paper gives a rate whose constants it does not specify; "
                                      f"evaluated with constant 1 it is {b:.3g} here, which is not a bound.")
    if rel.bound_is_vacuous:
        return BoundWords(label, "—", vacuous_note(b, diameter, what="paper's bound"), vacuous=True)
    if kind is BoundKind.ESTIMATE:
        return BoundWords(label, f"{b:.3g}",
                          f"{text}: part of it is estimated rather than proven, so read it as an estimate.")
    if kind is BoundKind.REFERENCE:
        return BoundWords(label, f"{b:.3g}",
                          text + " For these settings the proof does not apply; the value is shown for reference.")
    return BoundWords(label, f"{b:.3g}", text)


def bound_cell(bound: float | None, bound_type: Any, vacuous: bool = False) -> str:
    """A release's bound in a table's cell: "0.123 (reference)", or "— (rate only)" when the number is not a bound
    worth reading (none, a rate without constants, or not below the largest possible W1: ``vacuous``)."""
    kind = BoundKind(bound_type)
    readable = (bound is not None and math.isfinite(float(bound)) and not vacuous
                and kind not in (BoundKind.RATE, BoundKind.NONE))
    return f"{float(bound):.3g} ({BOUND_KIND_WORDS[kind]})" if readable else f"— ({BOUND_KIND_WORDS[kind]})"


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


# ----------------------------------------------------------------------------------- the first screen
def _times(x: float) -> str:
    """A factor as people read it: "2.7", "22,026", "2.7 × 10^43"."""
    if x < 10:
        return f"{x:.4g}" if x < 1.1 else f"{x:.2g}"
    if x < 1e6:
        return f"{x:,.0f}"
    k = math.floor(math.log10(x))
    return f"{x / 10 ** k:.2g} × 10^{k}"


def epsilon_meaning(epsilon: float, delta: float = 0.0, *, who: str = "person") -> str:
    """What a privacy budget means in practice, in two sentences: the factor e^ε, and the best chance of a
    guess, from a release, of whether one ``who`` is in the data when both are equally likely beforehand
    ((e^ε + δ) / (1 + e^ε))."""
    epsilon, delta = float(epsilon), float(delta)
    e = math.exp(min(epsilon, 700.0))
    cap = min(1.0, (e + delta) / (1.0 + e))
    first = (f"At ε = {epsilon:g}, anything computed from the release is at most e^{epsilon:g} ≈ {_times(e)} times "
             f"more likely with any one {who}'s record in the data than without it"
             + (f", except with probability δ = {delta_text(delta)}" if delta else "") + ".")
    pct = f"{100 * cap:.1f}%" if cap < 0.51 else f"{100 * cap:.0f}%" if cap < 0.995 else \
        "100%" if cap > 0.999995 else f"{100 * cap:.5g}%"
    guess = (f"someone who thinks it a coin toss whether a {who} is in the data can, after seeing the release, be "
             f"right at most {pct} of the time")
    if cap >= 0.995:
        return first + f" That factor hardly limits a guess: {guess}."
    return first + " " + guess[0].upper() + guess[1:] + " (a coin toss: 50%)."


def _unit(x: float, unit: str) -> str:
    return f"{x:.2g} {unit}".strip() if abs(x) < 10 else f"{x:.3g} {unit}".strip()


def kept_sentence(kept: Any) -> str:
    """One sentence on what a release kept, in the data's units, from a
    :class:`dpsynth_core.first_look.Kept`: how far each column's mean is off, and the category share that
    moved most ("At ε = 1, the average age is off by 1.1 years, the average bmi by 1.7 kg/m² ...")."""
    if kept.rows == 0:
        return (f"At ε = {kept.epsilon:g} the release is empty: the noisy count of the rows came out at 0 or below, "
                "so nothing of the data is kept. A larger ε keeps more.")
    parts = [f"the average {m.column} {'is off ' if i == 0 else ''}by {_unit(m.off, m.unit)}"
             for i, m in enumerate(kept.means)]
    said = [", ".join(parts[:-1]) + " and " + parts[-1] if len(parts) > 1 else "".join(parts)] if parts else []
    if kept.shares:
        worst = max(kept.shares, key=lambda s: s.off)
        said.append(f"no category's share moved by more than {100 * worst.off:.1f} percentage points "
                    f"({worst.column} = {worst.category}: {100 * worst.real:.1f}% of the rows in the data, "
                    f"{100 * worst.synthetic:.1f}% in the release)")
    return f"At ε = {kept.epsilon:g}, " + "; ".join(said) + "."


def _group(query: Any) -> str:
    """A counting question's group in words: "age from 35 to 40, sex M, region north"."""
    ranges = [f"{c} from {lo:g} to {hi:g}" for c, lo, hi in query.ranges]
    return ", ".join(ranges + [f"{c} {label}" for c, label in query.equals])


def membership_words(demo: Any, *, who: str = "person") -> tuple[str, str, str]:
    """The membership question of a :class:`dpsynth_core.first_look.MembershipDemo` in three sentences: the
    question, what the table answers, and what the releases answer."""
    record = ", ".join(f"{c} {v:g}" if isinstance(v, float) else f"{c} {v}" for c, v in demo.target.items())
    question = (f"Is this {who} in the table: {record}? An attacker who knows everyone else's records (or "
                f"compares the table before and after the {who} joined) asks: how many rows have "
                f"{_group(demo.query)}?")
    table = (f"The table answers {demo.table_with}; without this {who} it would answer {demo.table_without}. "
             f"The difference is the {who}: the raw table gives them away.")
    w, wo = demo.released_with, demo.released_without
    spread = (f"{demo.releases} releases from each table answer from {min(w)} to {max(w)} with the {who} and from "
              f"{min(wo)} to {max(wo)} without")
    if demo.overlap == 0:
        return question, table, (f"{spread}: no answer came from both tables, so at ε = {demo.epsilon:g} the "
                                 f"release gives the {who} away too (a budget this large promises almost nothing).")
    return question, table, (f"{spread}: {100 * demo.overlap:.0f}% of the answers also came from the other table, "
                             "so an answer does not tell which table it came from.")
