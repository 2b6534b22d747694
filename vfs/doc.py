"""The document model between renderers and formats.

A renderer turns graph data into a `Doc` of raw (unescaped) strings; `vfs.markdown` and
`vfs.structured` turn a Doc into narrative or compact markdown, or JSON, escaping as they
go. Items are the units that a token budget keeps or leaves out whole.
"""

from dataclasses import dataclass
from typing import Literal

Fields = tuple[tuple[str, str], ...]

DISCREPANCY = "DISCREPANCY"


@dataclass(frozen=True)
class Quote:
    """Untrusted, patient-reported text: (caption, text) parts, captions trusted."""

    parts: tuple[tuple[str | None, str], ...]


@dataclass(frozen=True)
class Item:
    """One entry of a section: a fact, a memory, a lab value, a source file.

    `title` and `fields` are record text (escaped inline); `link` is a VFS path the
    renderer built and `links` (caption, VFS path) pairs of related files; `flag` marks an
    item (DISCREPANCY); `quote` is patient-reported.
    """

    title: str
    fields: Fields = ()
    link: str | None = None
    flag: str | None = None
    quote: Quote | None = None
    links: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Section:
    """A `##` section: a list of items, or a table whose rows are the items' fields."""

    title: str
    items: tuple[Item, ...] = ()
    layout: Literal["list", "table"] = "list"
    empty: str = "None recorded."
    note: str | None = None
    first_column: str = "Item"


@dataclass(frozen=True)
class Doc:
    """A whole file: title, header fields, an optional fixed note, sections."""

    path: str
    title: str
    fields: Fields = ()
    sections: tuple[Section, ...] = ()
    note: str | None = None


def fields(*pairs: tuple[str, object]) -> Fields:
    """Header or item fields with the empty ones (None, "", empty list) left out."""
    out: list[tuple[str, str]] = []
    for name, value in pairs:
        if value is None or value == "" or value == [] or value == ():
            continue
        text = ", ".join(map(str, value)) if isinstance(value, list | tuple) else str(value)
        out.append((name, text))
    return tuple(out)
