"""The project's documentation inside the app (plain Python, no Streamlit): the documents of ``docs/``, their
titles, a link that opens one on the Documentation page, and their text with the links between them pointing
there too.

A page never shows a path such as "docs/deviations.md" as plain text a browser cannot open: it writes
:func:`doc_link` (a Markdown link to the Documentation page, ``docs?doc=deviations``, relative so that it works
under any base URL; Streamlit opens it in a new tab, so the page being read keeps its state), and text from the
library that names a document goes through :func:`link_docs`. Works offline: the documents are read from the
checkout.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

__all__ = ["DOCS", "URL", "names", "title", "doc_link", "link_docs", "parts"]

#: The documentation folder of the checkout.
DOCS = Path(__file__).resolve().parents[1] / "docs"
#: The Documentation page's URL path (its record in :mod:`dashboard.registry`).
URL = "docs"
_PATH = re.compile(r"(?<!\]\()(?<![\w/\[])docs/([a-z0-9-]+)\.md\b")
_LINK = re.compile(r"\]\(([a-z0-9-]+)\.md(#[^)]*)?\)")
_CODE = re.compile(r"(`[^`\n]*`)")
_IMAGE = re.compile(r"^!\[([^\]]*)\]\((img/[^)]+)\)\s*$", re.MULTILINE)


def names() -> tuple[str, ...]:
    """The documents, by name (their file names without ".md"), the index (README) first."""
    found = sorted(p.stem for p in DOCS.glob("*.md"))
    return tuple(["README"] * ("README" in found) + [n for n in found if n != "README"])


@lru_cache(maxsize=64)
def title(name: str) -> str:
    """A document's first heading ("Architecture: the house and its rules"), or its name."""
    for line in _text(name).splitlines():
        if line.startswith("# "):
            return line[2:].strip()
    return name


def doc_link(name: str, label: str | None = None) -> str:
    """A Markdown link that opens document ``name`` on the Documentation page (``label``: the text shown,
    by default its path, "docs/<name>.md")."""
    if name not in names():
        raise ValueError(f"There is no document {name!r} in docs/: use one of {', '.join(names())}.")
    return f"[{label or f'docs/{name}.md'}]({URL}?doc={name})"


def link_docs(text: str) -> str:
    """``text`` with every plain "docs/<name>.md" of an existing document turned into a :func:`doc_link` (paths
    already inside a Markdown link, and code spans such as `docs/transport.md, "Grid flows"`, are left as they
    are: a link cannot show inside code)."""
    known = set(names())
    pieces = _CODE.split(text)  # code spans at the odd positions
    return "".join(p if i % 2 else _PATH.sub(lambda m: doc_link(m.group(1)) if m.group(1) in known else m.group(0), p)
                   for i, p in enumerate(pieces))


def parts(name: str) -> list[tuple[str, str, str]]:
    """Document ``name`` as the page draws it, in order: ("markdown", text, "") and ("image", path, caption)
    parts, its links to other documents pointing to the Documentation page and its images (``img/…``) files of
    the checkout."""
    if name not in names():
        raise ValueError(f"There is no document {name!r} in docs/: use one of {', '.join(names())}.")
    text = link_docs(_LINK.sub(lambda m: f"]({URL}?doc={m.group(1)})", _text(name)))
    out: list[tuple[str, str, str]] = []
    at = 0
    for m in _IMAGE.finditer(text):
        out.append(("markdown", text[at:m.start()], ""))
        out.append(("image", str(DOCS / m.group(2)), m.group(1)))
        at = m.end()
    out.append(("markdown", text[at:], ""))
    return [part for part in out if part[1].strip()]


@lru_cache(maxsize=64)
def _text(name: str) -> str:
    return (DOCS / f"{name}.md").read_text(encoding="utf-8")
