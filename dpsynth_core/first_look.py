"""What a stakeholder sees first: a release next to the data, what it keeps in the data's own units, and the
membership question it stops answering.

Everything here reads the real rows without noise: an OWNER VIEW, for the data owner's eyes (the
dashboard's first screen), never exported.

* :func:`first_screen` -- all of the below for one release, in one call (what a page caches);
* :func:`sample_rows` -- a few real and a few synthetic rows, side by side, rounded for reading;
* :func:`kept_in_units` -- how far the release's column means and category shares are from the data's, in
  the columns' own units (years, mmHg, percentage points), read off :func:`dpsynth_core.evaluate.report`;
* :func:`membership_demo` -- the differencing attack differential privacy stops: a counting question about
  one person's narrow group, asked of the table with and without that person (the two answers differ by one,
  so the table gives the person away) and of releases from those two neighbouring tables (the answers
  overlap). Each release is a real run of the mechanism (add/remove neighbours: membership is what they
  protect), with its own seed.

The words for these facts are :func:`dpsynth_core.wording.kept_sentence`,
:func:`~dpsynth_core.wording.membership_words` and :func:`~dpsynth_core.wording.epsilon_meaning`; the
picture is :func:`dpsynth_core.viz.membership_answers`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .dataset import Dataset
from .domain import Domain
from .evaluate import report
from .mechanisms import bind
from .validation import check_float, check_int, check_rng, param_error

__all__ = ["FirstScreen", "first_screen", "MeanKept", "ShareKept", "Kept", "kept_in_units", "sample_rows", "CountQuery", "membership_question",
           "MembershipDemo", "membership_demo", "MAX_DEMO_RELEASES"]

_OWNER = "first_look"
#: The most releases per table :func:`membership_demo` runs (each is a whole release of the mechanism).
MAX_DEMO_RELEASES = 200


def _frame(rows: Any, domain: Domain) -> pd.DataFrame:
    """A release's or a dataset's rows as a table with the domain's column names (categories as labels)."""
    if isinstance(rows, pd.DataFrame):
        return rows
    X = np.asarray(rows, dtype=float)
    if domain.is_mixed:  # the domain's encoding: category indices -> their declared labels
        return Dataset(X, domain, "rows").to_frame()
    return pd.DataFrame(X, columns=list(domain.names))


# ----------------------------------------------------------------------------------- rows side by side
def sample_rows(real: Any, synthetic: Any, domain: Domain, *, rows: int = 8, rng: Any = 0,
                decimals: int = 1) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``rows`` rows of the real table and ``rows`` of the release, drawn uniformly without replacement
    (``rng``), with the numeric columns rounded to ``decimals``: what a reader compares at a glance. The two
    samples are unrelated rows (a synthetic row is nobody's): the point is that they look alike."""
    rows = check_int(rows, "rows", _OWNER, low=1, high=1000)
    gen = check_rng(rng, _OWNER)
    out = []
    for table in (_frame(real, domain), _frame(synthetic, domain)):
        pick = np.sort(gen.choice(len(table), size=min(rows, len(table)), replace=False))
        t = table.iloc[pick].reset_index(drop=True)
        out.append(t.round({c: decimals for c in domain.numeric_names}))
    return out[0], out[1]


# ----------------------------------------------------------------------------------- kept, in the units
@dataclass(frozen=True)
class MeanKept:
    """A numeric column's mean in the data and in the release, in the column's ``unit`` ("" when none)."""

    column: str
    real: float
    synthetic: float
    unit: str = ""

    @property
    def off(self) -> float:
        """How far the release's mean is from the data's (absolute, in the column's unit)."""
        return abs(self.synthetic - self.real)


@dataclass(frozen=True)
class ShareKept:
    """A categorical column: the category whose share moved most, and by how much (a share, 0 to 1)."""

    column: str
    category: str
    real: float
    synthetic: float

    @property
    def off(self) -> float:
        return abs(self.synthetic - self.real)


@dataclass(frozen=True)
class Kept:
    """What a release of ``rows`` rows kept of the data's columns: the means (``means``) and the category
    shares (``shares``), at the release's ``epsilon`` (both empty for an empty release: nothing was kept)."""

    epsilon: float
    rows: int
    means: tuple[MeanKept, ...]
    shares: tuple[ShareKept, ...]


def kept_in_units(real: Any, synthetic: Any, domain: Domain, *, epsilon: float,
                  units: Mapping[str, str] | None = None) -> Kept:
    """How close a release is to the data in the data's own units (OWNER VIEW): each numeric column's
    mean, real against synthetic, and for each categorical column the category whose share moved most.

    The statistics are those of :func:`dpsynth_core.evaluate.report` (clamped to the bounds, as a mechanism
    sees the data), without W1 ceilings, pairs or a downstream model (a first screen needs neither).
    ``units`` names a column's unit ({"age": "years"}); ``epsilon`` is the release's, said with the numbers.
    An empty release (its noisy size came out at 0) keeps nothing: ``rows`` 0, no means, no shares.
    """
    epsilon = check_float(epsilon, "epsilon", _OWNER, low=0.0, low_open=True)
    if len(synthetic) == 0:  # at a small ε the noisy size can come out at 0: an empty release keeps nothing
        return Kept(epsilon, 0, (), ())
    rep = report(real, synthetic, domain, w1=None, pairs=[])
    units = dict(units or {})
    means, shares = [], []
    for col in rep.columns:
        if col.kind == "numeric":
            means.append(MeanKept(col.name, float(col.real_mean), float(col.synthetic_mean), units.get(col.name, "")))
        else:
            j = int(np.argmax(np.abs(col.share_diffs)))
            shares.append(ShareKept(col.name, col.categories[j], float(col.real_shares[j]),
                                    float(col.synthetic_shares[j])))
    return Kept(epsilon, int(rep.n_synthetic), tuple(means), tuple(shares))


# ----------------------------------------------------------------------------------- the membership question
@dataclass(frozen=True)
class CountQuery:
    """A counting question about a table: how many rows have each numeric column of ``ranges`` within
    ``(column, low, high)`` (both ends included) and each categorical column of ``equals`` at ``(column,
    label)``."""

    ranges: tuple[tuple[str, float, float], ...]
    equals: tuple[tuple[str, str], ...]

    def mask(self, frame: pd.DataFrame) -> np.ndarray:
        keep = np.ones(len(frame), dtype=bool)
        for c, lo, hi in self.ranges:
            v = frame[c].to_numpy(dtype=float)
            keep &= (v >= lo) & (v <= hi)
        for c, label in self.equals:
            keep &= frame[c].astype(str).to_numpy() == label
        return keep

    def count(self, frame: pd.DataFrame) -> int:
        return int(self.mask(frame).sum())


def membership_question(data: Dataset, *, column: str | None = None,
                        half_width: float | None = None) -> tuple[int, CountQuery]:
    """The person an attacker asks about and the question (OWNER VIEW): for every row, the group of rows
    with the same category in every categorical column and ``column`` within ``half_width`` of its value
    (default: the first numeric column, 2.5% of its range); the row whose group is smallest (the first in
    the table's order among equals) and its group's :class:`CountQuery`, its range rounded outwards to
    whole units. A small group is where a count gives a person away."""
    dom = data.domain
    if not dom.numeric_names:
        raise param_error(_OWNER, "data", "a table with a numeric column (the question fixes a range of one)",
                          f"only categorical columns {list(dom.names)}")
    column = dom.numeric_names[0] if column is None else column
    if column not in dom.numeric_names:
        raise param_error(_OWNER, "column", f"one of the numeric columns {list(dom.numeric_names)}", column)
    j = list(dom.numeric_names).index(column)
    span = float(dom.upper[j] - dom.lower[j])
    half_width = 0.025 * span if half_width is None else check_float(half_width, "half_width", _OWNER, low=0.0,
                                                                    low_open=True)
    frame = data.to_frame()
    v = frame[column].to_numpy(dtype=float)
    lo, hi = np.floor(v - half_width), np.ceil(v + half_width)  # each row's range, in whole units
    sizes = np.empty(len(v), dtype=np.int64)
    groups = frame.groupby(list(dom.categories), sort=False, observed=True).indices if dom.categories else {(): None}
    for rows in groups.values():
        rows = np.arange(len(v)) if rows is None else np.asarray(rows)
        w = np.sort(v[rows])  # the rows of the group within each row's range, by binary search
        sizes[rows] = np.searchsorted(w, hi[rows], "right") - np.searchsorted(w, lo[rows], "left")
    target = int(np.argmin(sizes))
    query = CountQuery(((column, float(lo[target]), float(hi[target])),),
                       tuple((c, str(frame[c].iloc[target])) for c in dom.categories))
    return target, query


@dataclass(frozen=True)
class MembershipDemo:
    """The differencing attack, asked of a table and of its releases (OWNER VIEW).

    ``target`` is the person's record (column -> value); ``query`` the counting question about their group;
    ``table_with`` and ``table_without`` its answers on the table with and without the person (they differ by
    one: the table gives the person away); ``released_with`` and ``released_without`` its answers on
    ``releases`` releases of ``mechanism`` at (``epsilon``, ``delta``) from each of the two tables, add/remove
    neighbours.
    """

    mechanism: str
    epsilon: float
    delta: float
    target: dict[str, Any]
    query: CountQuery
    table_with: int
    table_without: int
    released_with: tuple[int, ...]
    released_without: tuple[int, ...]

    @property
    def releases(self) -> int:
        return len(self.released_with)

    @property
    def guess_cap(self) -> float:
        """The best chance any guess from one release has of saying rightly whether the person is in the
        table, when both are equally likely beforehand: (e^ε + δ) / (1 + e^ε) (from P(guess "in" | in) ≤
        e^ε P(guess "in" | out) + δ and the same for "out")."""
        e = math.exp(min(self.epsilon, 700.0))
        return min(1.0, (e + self.delta) / (1.0 + e))

    @property
    def overlap(self) -> float:
        """The share of all the releases' answers that also came from the other table (0: the answers tell
        the two tables apart; 1: every answer came from both)."""
        both = set(self.released_with) & set(self.released_without)
        answers = self.released_with + self.released_without
        return sum(a in both for a in answers) / len(answers) if answers else 0.0


def membership_demo(data: Dataset, mechanism: str = "pmm", *, epsilon: float, delta: float | None = None,
                    releases: int = 10, rng: Any = None, column: str | None = None,
                    half_width: float | None = None, **params: Any) -> MembershipDemo:
    """Ask the membership question (:func:`membership_question`) of ``data``, of ``data`` without the person,
    and of ``releases`` releases of ``mechanism`` from each (add/remove neighbours; ``params`` its other
    parameters). ``rng`` seeds the releases (one independent stream each). OWNER VIEW: it reads the rows
    without noise, and each release costs a run of the mechanism."""
    releases = check_int(releases, "releases", _OWNER, low=1, high=MAX_DEMO_RELEASES)
    target, query = membership_question(data, column=column, half_width=half_width)
    without = Dataset(np.delete(data.X, target, axis=0), data.domain, f"{data.name} without one person")
    run = bind(mechanism, epsilon=epsilon, delta=delta, neighbours="add_remove", params=params)
    streams = check_rng(rng, _OWNER).spawn(2 * releases)
    answers = []
    for table, gens in ((data, streams[:releases]), (without, streams[releases:])):
        answers.append(tuple(query.count(_frame(run(table.X, table.domain, rng=g).synthetic, table.domain))
                             for g in gens))
    record = data.to_frame().iloc[target]
    return MembershipDemo(mechanism, float(epsilon), float(delta or 0.0),
                          {c: (round(float(x), 1) if c in data.domain.numeric_names else str(x))
                           for c, x in record.items()},
                          query, query.count(data.to_frame()), query.count(without.to_frame()), *answers)


@dataclass(frozen=True)
class FirstScreen:
    """A release and what a stakeholder reads of it first (OWNER VIEW but ``release``): the ``release`` of a
    table of ``n`` rows, ``real_rows`` and ``synthetic_rows`` side by side, what it ``kept`` and the membership
    ``demo``."""

    n: int
    release: Any
    real_rows: pd.DataFrame
    synthetic_rows: pd.DataFrame
    kept: Kept
    demo: MembershipDemo


def first_screen(data: Dataset, mechanism: str = "pmm", *, epsilon: float, neighbours: str = "add_remove",
                 rng: Any = None, units: Mapping[str, str] | None = None, rows: int = 8, releases: int = 8,
                 **params: Any) -> FirstScreen:
    """One release of ``mechanism`` on ``data`` at ``epsilon`` (``neighbours``), with :func:`sample_rows`,
    :func:`kept_in_units` and :func:`membership_demo` (``releases`` per table, add/remove neighbours). ``rng``
    seeds everything, one independent stream each (the same seed, the same screen)."""
    gens = check_rng(rng, _OWNER).spawn(3)
    rel = bind(mechanism, epsilon=epsilon, neighbours=neighbours, params=params)(data.X, data.domain, rng=gens[0])
    real = data.to_frame()
    real_rows, synthetic_rows = sample_rows(real, rel.synthetic, data.domain, rows=rows, rng=gens[1])
    kept = kept_in_units(real, rel.synthetic, data.domain, epsilon=epsilon, units=units)
    demo = membership_demo(data, mechanism, epsilon=epsilon, releases=releases, rng=gens[2], **params)
    return FirstScreen(data.n, rel, real_rows, synthetic_rows, kept, demo)
