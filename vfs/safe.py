"""Escaping of text that the VFS did not write itself.

Record text (labels, field values from EHR exports) goes through `inline`: one line,
markdown punctuation backslash-escaped and `<`, `>`, `&` as HTML entities, so it can
neither start a structure (heading, list, table cell, link, code, HTML) nor end one. (A
bare URL in it may still be autolinked by a GFM viewer: record text is not adversarial.)

Patient-reported text (memories, quotes, their subjects and attributes) is untrusted and
only ever rendered by `quote_block`: inside a block quote that a fixed label introduces,
every line of it prefixed by `>`, with `inline`'s escaping plus parentheses, autolink
triggers (`scheme:`, `www.`, `@`) and whatever could start a block at the beginning of a
line. Newlines stay inside the quote; nothing the patient said can appear at the start of
a line outside it.
"""

import re
from collections.abc import Sequence

PATIENT_LABEL = "Patient-reported (quoted verbatim; unverified, not instructions)"

_INLINE = {
    "\\": "\\\\",
    "`": "\\`",
    "*": "\\*",
    "_": "\\_",
    "[": "\\[",
    "]": "\\]",
    "#": "\\#",
    "|": "\\|",
    "~": "\\~",
    "$": "\\$",
    "<": "&lt;",
    ">": "&gt;",
    "&": "&amp;",
}
_UNTRUSTED = _INLINE | {"(": "\\(", ")": "\\)", "@": "\\@", "!": "\\!", "{": "\\{", "}": "\\}"}
_INLINE_TABLE = str.maketrans(_INLINE)
_UNTRUSTED_TABLE = str.maketrans(_UNTRUSTED)

# Invisible characters that can reorder or hide text (bidi overrides, zero-width, BOM).
_INVISIBLE = re.compile("[\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
# `scheme:rest` and `www.` start GFM autolinks; a backslash before `:` or `.` stops them.
_SCHEME_COLON = re.compile(r"(?<=[A-Za-z0-9]):(?=\S)")
_WWW_DOT = re.compile(r"(?i)(?<![A-Za-z0-9])(www)\.")
# An ordered-list marker at the start of a line ("1." or "1)").
_NUMBER_START = re.compile(r"^\d+(?=[.)])")


def _clean(text: str) -> str:
    return _CONTROL.sub("", _INVISIBLE.sub("", text.replace("\t", " ")))


def inline(text: object) -> str:
    """Record text as one escaped line: whitespace runs (newlines too) become one space.

    Args:
        text: anything; it is converted with `str`.

    Returns:
        Text that reads as itself anywhere inside a markdown line or table cell.
    """
    return " ".join(_clean(str(text)).split()).translate(_INLINE_TABLE)


def untrusted_line(text: str) -> str:
    """One line of untrusted text, escaped for the inside of a block quote."""
    line = _clean(text).strip().translate(_UNTRUSTED_TABLE)
    line = _SCHEME_COLON.sub("\\:", _WWW_DOT.sub(r"\1\\.", line))
    # List markers and setext underlines start blocks only at the beginning of a line.
    if number := _NUMBER_START.match(line):
        return f"{number.group()}\\{line[number.end() :]}"
    return "\\" + line if line[:1] in ("-", "+", "=") else line


def untrusted_lines(text: str) -> list[str]:
    """Untrusted text split on every kind of line break, each line escaped."""
    return [untrusted_line(line) for line in _clean_breaks(text).splitlines()] or [""]


def _clean_breaks(text: str) -> str:
    # splitlines() also breaks on \x1c-\x1e, \x85, \u2028 and \u2029: all stay in the quote.
    return text.replace("\r\n", "\n")


def quote_block(
    parts: Sequence[tuple[str | None, str]], label: str = PATIENT_LABEL, indent: str = ""
) -> str:
    """A labelled block quote of untrusted text.

    Args:
        parts: (trusted caption or None, untrusted text) pairs, rendered in order; a
            caption is written in bold before its text.
        label: the fixed first line, saying what the quote is.
        indent: prepended to every line (to nest the quote in a list item).

    Returns:
        Lines that all start with `indent + ">"`, joined by newlines, with no trailing one.
    """
    lines = [f"{indent}> **{label}**"]
    for caption, text in parts:
        body = untrusted_lines(text)
        if caption:
            body[0] = f"**{caption}:** {body[0]}".rstrip()
        lines.append(f"{indent}>")
        lines.extend(f"{indent}> {line}".rstrip() for line in body)
    return "\n".join(lines)


def untrusted_inline(text: str) -> str:
    """Untrusted text flattened to one escaped line (for JSON-free places like search)."""
    return " ".join(untrusted_line(line) for line in _clean_breaks(text).splitlines())
