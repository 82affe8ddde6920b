"""What a kept result was computed from: the one fingerprint of every result the dashboard keeps (plain Python,
no Streamlit).

A result kept behind a button (a sweep, a comparison, the digits experiment, a fresh release to download) is
kept with the :class:`Inputs` it was computed from -- the data (its rows and its public domain, by content:
another table of the same name and size is another table), the privacy settings it used (ε, δ, the
neighbouring relation, the seed) and the page's parameters. :mod:`dashboard.sweep` compares them with the
current inputs on every run: a result whose inputs differ is shown as earlier work, labelled with what it was
computed for and what changed (:meth:`Inputs.changed`), never as the current result.
"""

from __future__ import annotations

import hashlib
import json
import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpsynth_core.validation import plural
from dpsynth_core.wording import RELATION_WORDS, delta_text

__all__ = ["Inputs", "inputs", "data_digest"]

#: The digests of the tables seen lately, by the identity of their rows (a table's rows are never changed in
#: place: a new table is a new array), so that a page's rerun does not hash the same rows again.
_SEEN: dict[int, tuple[weakref.ref, str]] = {}
_SEEN_MAX = 16


@dataclass(frozen=True)
class Inputs:
    """The inputs of a kept result, part by part: ``(name, words, digest)`` each, e.g.
    ``("data", "clinic (2,000 rows)", "<digest of its rows and domain>")``. Two results have the same inputs
    when every part's digest is the same."""

    parts: tuple[tuple[str, str, str], ...]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Inputs) and self._digests() == other._digests()

    def __hash__(self) -> int:
        return hash(self._digests())

    def _digests(self) -> tuple[tuple[str, str], ...]:
        return tuple((name, digest) for name, _, digest in self.parts)

    def changed(self, earlier: Any) -> list[str]:
        """The names of the parts that differ from ``earlier`` (every part when ``earlier`` is not an
        :class:`Inputs`, e.g. a result kept before fingerprints had parts)."""
        if not isinstance(earlier, Inputs):
            return [name for name, _, _ in self.parts]
        before = dict(earlier._digests())
        return [name for name, _, digest in self.parts if before.get(name) != digest]

    def words(self) -> str:
        """"clinic (2,000 rows); ε ∈ {0.3, 1}; 2 repeats": what a person reads of these inputs."""
        return "; ".join(words for _, words, _ in self.parts if words)


def _digest(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, default=repr)
    return hashlib.blake2b(text.encode(), digest_size=12).hexdigest()


def data_digest(ds: Any) -> str:
    """The digest of a dataset's content: its rows (bytes and shape) and its whole public domain (bounds,
    names, categories, weights, "other" categories, integers, provenance)."""
    X = ds.X
    seen = _SEEN.get(id(X))
    if seen is not None and seen[0]() is X:
        rows = seen[1]
    else:
        h = hashlib.blake2b(digest_size=16)
        A = np.ascontiguousarray(X)
        h.update(repr((A.shape, str(A.dtype))).encode())
        h.update(A.tobytes())
        rows = h.hexdigest()
        try:
            _SEEN[id(X)] = (weakref.ref(X), rows)
        except TypeError:  # an array type without weak references: hashed on every call
            pass
        while len(_SEEN) > _SEEN_MAX:
            _SEEN.pop(next(iter(_SEEN)))
    return _digest([rows, ds.domain.to_dict()])


def _epsilons(values: Any) -> str:
    values = [float(v) for v in (values if isinstance(values, (list, tuple)) else [values])]
    return f"ε = {values[0]:g}" if len(values) == 1 else "ε ∈ {" + ", ".join(f"{v:g}" for v in values) + "}"


def inputs(*, data: Any = None, data_words: str | None = None, epsilon: Any = None, delta: float | None = None,
           neighbours: str | None = None, seed: int | None = None, params: Mapping[str, Any] | None = None,
           **more: Any) -> Inputs:
    """The :class:`Inputs` of a result, from what it used (leave out what it does not use):

    ``data`` a dataset (by content; ``data_words`` names a fixed table instead, e.g. the bundled digits),
    ``epsilon`` one ε or a list of them, ``delta``, ``neighbours`` (the relation), ``seed`` (the teaching
    seed), ``params`` (the page's parameters of the mechanism), and any other named input in ``more``, whose
    words are ``"<name>: <value>"`` (e.g. ``repeats=3``)."""
    parts: list[tuple[str, str, str]] = []
    if data is not None:
        parts.append(("data", f"{data.name} ({plural(int(data.n), 'row')})", data_digest(data)))
    elif data_words is not None:
        parts.append(("data", data_words, _digest(data_words)))
    if epsilon is not None:
        parts.append(("ε", _epsilons(epsilon), _digest(epsilon)))
    if delta is not None:
        parts.append(("δ", f"δ = {delta_text(float(delta))}", _digest(float(delta))))
    if neighbours is not None:
        parts.append(("relation", f"{RELATION_WORDS.get(neighbours, neighbours)} neighbours", _digest(neighbours)))
    if seed is not None:
        parts.append(("seed", f"seed {int(seed)}", _digest(int(seed))))
    if params is not None:
        parts.append(("parameters", "the page's parameters as they were", _digest(sorted(params.items()))))
    for name, value in more.items():
        words = ", ".join(map(str, value)) if isinstance(value, (list, tuple)) else str(value)
        parts.append((name, f"{name.replace('_', ' ')}: {words}", _digest(value)))
    return Inputs(tuple(parts))
