"""A Doc as markdown chunks: narrative (every detail) or compact (one line per item).

Every string from the graph goes through `vfs.safe`: record text through `inline`,
patient-reported text through `quote_block`. Only the layout written here (headings,
list markers, field names, links to VFS paths) is unescaped.
"""

from dataclasses import dataclass

from vfs.doc import Doc, Item, Section
from vfs.safe import inline, quote_block


@dataclass(frozen=True)
class Chunk:
    """A piece of the output; `section` is None in the header, `item` marks a cut unit."""

    text: str
    section: int | None = None
    item: bool = False
    sep: str = "\n\n"


def chunks(doc: Doc, compact: bool) -> list[Chunk]:
    """The Doc's header, then each section's heading and items, in reading order."""
    out = [Chunk(f"# {inline(doc.title)}", sep="")]
    if doc.note:
        out.append(Chunk(f"_{inline(doc.note)}_"))
    if doc.fields:
        out.append(Chunk(_header(doc, compact)))
    for index, section in enumerate(doc.sections):
        if compact and not section.items:
            continue
        out.extend(_section(index, section, compact))
    return out


def join(parts: list[Chunk]) -> str:
    """The chunks as one markdown text ending in a newline."""
    return "".join(chunk.sep + chunk.text for chunk in parts).strip("\n") + "\n"


def render(doc: Doc, compact: bool) -> str:
    """The whole Doc as markdown."""
    return join(chunks(doc, compact))


def _header(doc: Doc, compact: bool) -> str:
    if compact:
        return "; ".join(f"{name}: {inline(value)}" for name, value in doc.fields)
    return "\n".join(f"- **{name}:** {inline(value)}" for name, value in doc.fields)


def _section(index: int, section: Section, compact: bool) -> list[Chunk]:
    heading = f"## {inline(section.title)}"
    if section.note and not compact:
        heading += f"\n\n_{inline(section.note)}_"
    if not section.items:
        return [Chunk(heading, index), Chunk(inline(section.empty), index)]
    if section.layout == "table":
        return [Chunk(heading + "\n\n" + _table_head(section), index)] + [
            Chunk(_row(section, item), index, item=True, sep="\n") for item in section.items
        ]
    out = [Chunk(heading, index)]
    previous_quoted = True
    for item in section.items:
        quoted = item.quote is not None
        text = _compact_item(item) if compact else _narrative_item(item)
        sep = "\n\n" if quoted or previous_quoted else "\n"
        out.append(Chunk(text, index, item=True, sep=sep))
        previous_quoted = quoted
    return out


def _columns(section: Section) -> list[str]:
    names: dict[str, None] = {}
    for item in section.items:
        names.update((name, None) for name, _ in item.fields)
    return list(names)


def _table_head(section: Section) -> str:
    columns = [section.first_column, *_columns(section)]
    return "| " + " | ".join(columns) + " |\n|" + "---|" * len(columns)


def _row(section: Section, item: Item) -> str:
    values = dict(item.fields)
    cells = [
        _titled(item, True) + _link(item, True),
        *(inline(values.get(c, "")) for c in _columns(section)),
    ]
    return "| " + " | ".join(cells) + " |"


def _titled(item: Item, compact: bool) -> str:
    title = inline(item.title)
    if not compact:
        title = f"**{title}**"
    if item.flag:
        title = f"**{inline(item.flag)}** · {title}"
    return title


def _link(item: Item, compact: bool) -> str:
    if not item.link:
        return ""
    return f" → `{item.link}`" if compact else f" → [`{item.link}`]({item.link})"


def _narrative_item(item: Item) -> str:
    lines = [f"- {_titled(item, False)}{_link(item, False)}"]
    lines.extend(f"  - {name}: {inline(value)}" for name, value in item.fields)
    lines.extend(f"  - {inline(text)} → [`{path}`]({path})" for text, path in item.links)
    if item.quote is not None:
        lines.extend(["", quote_block(item.quote.parts, indent="  ")])
    return "\n".join(lines)


def _compact_item(item: Item) -> str:
    line = f"- {_titled(item, True)}"
    if item.fields:
        line += " — " + "; ".join(f"{name}: {inline(value)}" for name, value in item.fields)
    line += _link(item, True)
    line += "".join(f"; {inline(text)} → `{path}`" for text, path in item.links)
    if item.quote is not None:
        line += "\n" + quote_block(item.quote.parts, indent="  ")
    return line
