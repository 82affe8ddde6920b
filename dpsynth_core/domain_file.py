"""The domain travels: a public domain as a JSON file, written and read back by every front end.

:func:`domain_json` writes a :class:`~dpsynth_core.Domain` as the JSON of :meth:`Domain.to_dict` (the
dashboard's "download this domain", ``dpsynth synth --domain``'s format). :func:`read_domain` reads one back
from a path, the file's bytes or an upload, and also takes a report: a release's public report
(``export.report_json``, ``dpsynth synth --report``) and the owner's comparison (``evaluate.Report.to_json``,
``dpsynth report -o``) each hold the domain they used in a ``"domain"`` block, which is read as it is. So the
domain of one release declares the next one without being typed again. A domain is public input (bounds and
categories declared without looking at the data): the file holds nothing private.

Errors say what is wrong in the file's terms (a JSON syntax error by line and column, a duplicate key, a wrong
value by :meth:`Domain.from_dict`'s message), never a traceback.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

from .domain import Domain
from .tabular.read import read_bytes
from .validation import param_error

__all__ = ["domain_json", "read_domain", "DOMAIN_FILE_MAX_BYTES", "DomainFileError"]

#: Largest domain file read, in bytes; checked before the file is read.
DOMAIN_FILE_MAX_BYTES = 16 * 2**20


class DomainFileError(ValueError):
    """A domain file that cannot be read as a domain (the message names the file and what to change)."""


def domain_json(domain: Domain, *, indent: int | None = 2) -> str:
    """The JSON text of ``domain`` (:meth:`Domain.to_dict`), as :func:`read_domain` and ``dpsynth synth
    --domain`` read it."""
    if not isinstance(domain, Domain):
        raise param_error("domain_json", "domain", "a Domain", domain, kind=TypeError)
    return json.dumps(domain.to_dict(), indent=indent, ensure_ascii=False) + "\n"


def _refuse_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict:
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise ValueError(f"the key {key!r} appears twice in one object")
        seen[key] = value
    return seen


def _parse(data: bytes, label: str) -> Any:
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise DomainFileError(f"{label} is not UTF-8 text (the first unreadable character is on line {line}).") from None
    try:
        return json.loads(text, object_pairs_hook=_refuse_duplicate_keys)
    except json.JSONDecodeError as exc:
        raise DomainFileError(f"{label} is not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}.") \
            from None
    except ValueError as exc:  # a duplicate key
        raise DomainFileError(f"{label} is not a valid domain: {exc}; give each key once.") from None
    except RecursionError:
        raise DomainFileError(f"{label} is not a valid domain: its JSON is nested too deeply.") from None


def read_domain(source: Any, *, what: str | None = None) -> Domain:
    """The :class:`Domain` of a domain file, or of the ``"domain"`` block of a report.

    Parameters
    ----------
    source : str, os.PathLike, bytes, binary file-like or mapping
        A path, the file's bytes, an upload (an object with ``getvalue()`` or ``read()``), or the parsed
        JSON object itself. At most :data:`DOMAIN_FILE_MAX_BYTES` bytes are read.
    what : str, optional
        How to name the file in messages (default: "the domain file '<path>'").

    Returns
    -------
    Domain

    Raises
    ------
    DomainFileError
        (a ValueError) Not UTF-8, not JSON, a key given twice, or not a valid domain.
    """
    if isinstance(source, Mapping):
        spec, label = source, what or "the domain"
    else:
        if what is None:
            what = f"the domain file {os.fsdecode(source)!r}" if isinstance(source, (str, os.PathLike)) else \
                "the domain file"
        label = what
        size = os.path.getsize(source) if isinstance(source, (str, os.PathLike)) and os.path.isfile(source) else \
            len(source) if isinstance(source, (bytes, bytearray)) else None
        if size is not None and size > DOMAIN_FILE_MAX_BYTES:
            raise DomainFileError(f"{label[0].upper() + label[1:]} is {size} bytes; a domain file may have at most "
                                  f"{DOMAIN_FILE_MAX_BYTES} bytes.")
        try:
            data = read_bytes(source, DOMAIN_FILE_MAX_BYTES, "read_domain", what)
        except ValueError as exc:  # not a file, or a stream larger than the limit
            raise DomainFileError(str(exc).replace("use a sample of the rows or fewer columns",
                                                   "a domain file is small")) from None
        spec = _parse(data, label[0].upper() + label[1:])
    if isinstance(spec, Mapping) and "lower" not in spec and isinstance(spec.get("domain"), Mapping):
        spec = spec["domain"]  # a release's public report, or the owner's comparison: their domain block
    try:
        return Domain.from_dict(spec)
    except (ValueError, TypeError) as exc:
        raise DomainFileError(f"{label[0].upper() + label[1:]} is not a valid domain: {' '.join(str(exc).split())}") \
            from None
