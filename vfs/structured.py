"""A Doc as JSON (format=structured): the same content as the markdown, as data.

Strings are raw, not markdown-escaped: JSON quoting keeps them in place. Patient-reported
text sits only under an item's `patient_reported` key, beside a `label` that says so.
"""

import json
import math
from typing import Any

from vfs.budget import Omission, estimate_tokens
from vfs.doc import Doc, Item, Section
from vfs.safe import PATIENT_LABEL


def _item(item: Item) -> dict[str, Any]:
    out: dict[str, Any] = {"title": item.title}
    if item.flag:
        out["flag"] = item.flag
    if item.link:
        out["link"] = item.link
    if item.fields:
        out["fields"] = dict(item.fields)
    if item.links:
        out["links"] = [{"text": text, "path": path} for text, path in item.links]
    if item.quote is not None:
        out["patient_reported"] = {
            "label": PATIENT_LABEL,
            "parts": [{"caption": caption, "text": text} for caption, text in item.quote.parts],
        }
    return out


def _section(section: Section, items: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {"title": section.title, "layout": section.layout, "items": items}
    if section.note:
        out["note"] = section.note
    return out


def _fit(section: Section, remaining: float) -> tuple[list[dict[str, Any]], float]:
    """The section's leading items that fit in `remaining` tokens, and what is left."""
    items: list[dict[str, Any]] = []
    remaining -= estimate_tokens(dump(_section(section, [])))
    for item in section.items:
        entry = _item(item)
        cost = estimate_tokens(dump(entry))
        if cost > remaining:
            break
        items.append(entry)
        remaining -= cost
    return items, remaining


def to_data(doc: Doc, budget: int | None = None) -> tuple[dict[str, Any], list[Omission]]:
    """The Doc as JSON-ready data, cut to `budget` tokens on whole items if given.

    The cut keeps title and header fields, then items in reading order while they fit;
    sections after the first cut one are left out, and `truncated` says what went.
    """
    data: dict[str, Any] = {"path": doc.path, "title": doc.title}
    if doc.note:
        data["note"] = doc.note
    data["fields"] = dict(doc.fields)
    data["sections"] = []
    remaining = math.inf if budget is None else budget - estimate_tokens(dump(data)) - 60
    omissions: list[Omission] = []
    for section in doc.sections:
        items, remaining = _fit(section, -1 if omissions else remaining)
        if len(items) < len(section.items):
            left_out = len(section.items) - len(items)
            omissions.append(Omission(section.title, left_out, len(section.items)))
        if items or not omissions:
            data["sections"].append(_section(section, items))
    if omissions:
        left = [{"section": o.section, "items": o.left_out, "of": o.total} for o in omissions]
        data["truncated"] = {"budget": budget, "left_out": left}
    return data, omissions


def dump(data: Any, pretty: bool = False) -> str:
    """JSON text on one line, or indented for people; keys in the order given."""
    if pretty:
        return json.dumps(data, ensure_ascii=False, indent=2) + "\n"
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")) + "\n"
