"""Token budgets: approximate counting and a cut that ends on a whole item.

Tokens are estimated as characters / 4 (rounded up), close enough for English markdown
with the common BPE tokenizers and free of dependencies. A cut keeps the header of the
file whatever the budget, then items in reading order while they fit, and ends with a
note naming each section it left items out of and how many.
"""

from collections.abc import Sequence
from dataclasses import dataclass

from vfs.doc import Doc
from vfs.markdown import Chunk, join
from vfs.safe import inline


def estimate_tokens(text: str) -> int:
    """Approximate token count of `text` (characters / 4, rounded up)."""
    return (len(text) + 3) // 4


@dataclass(frozen=True)
class Omission:
    """How many items of one section a cut left out, of how many."""

    section: str
    left_out: int
    total: int


def cut_chunks(doc: Doc, parts: Sequence[Chunk], budget: int) -> tuple[str, list[Omission]]:
    """Markdown of the chunks that fit in `budget` tokens, with a note on what was cut.

    Args:
        doc: the document the chunks were made from (for section titles).
        parts: its chunks, as `vfs.markdown.chunks` made them.
        budget: the most tokens to return; the header is kept even if it is larger.

    Returns:
        The markdown, and the omissions (empty when everything fitted).
    """
    if estimate_tokens(join(list(parts))) <= budget:
        return join(list(parts)), []
    reserve = estimate_tokens(note(budget, _all_omitted(doc)))
    kept = keep_prefix([estimate_tokens(c.sep + c.text) for c in parts], parts, budget - reserve)
    omissions = _omissions(doc, parts, kept)
    return join(list(parts[:kept])) + "\n" + note(budget, omissions) + "\n", omissions


def keep_prefix(costs: Sequence[int], parts: Sequence[Chunk], budget: int) -> int:
    """How many leading chunks to keep: the header always, then whole units that fit.

    A unit is an item, or the "none recorded" line of an empty section, together with the
    headings before it that are not paid for yet: no heading is kept without content.
    """
    used, kept, pending = 0, 0, 0
    for index, (cost, chunk) in enumerate(zip(costs, parts, strict=True)):
        if chunk.section is None:
            used, kept = used + cost, index + 1
            continue
        following = parts[index + 1] if index + 1 < len(parts) else None
        if not chunk.item and following is not None and following.section == chunk.section:
            pending += cost
            continue
        if used + pending + cost > budget:
            break
        used, kept, pending = used + pending + cost, index + 1, 0
    return kept


def _all_omitted(doc: Doc) -> list[Omission]:
    return [Omission(s.title, len(s.items), len(s.items)) for s in doc.sections if s.items]


def _omissions(doc: Doc, parts: Sequence[Chunk], kept: int) -> list[Omission]:
    shown: dict[int, int] = {}
    for chunk in parts[:kept]:
        if chunk.item and chunk.section is not None:
            shown[chunk.section] = shown.get(chunk.section, 0) + 1
    return [
        Omission(section.title, len(section.items) - shown.get(index, 0), len(section.items))
        for index, section in enumerate(doc.sections)
        if len(section.items) > shown.get(index, 0)
    ]


def note(budget: int, omissions: Sequence[Omission]) -> str:
    """The closing note of a cut file, in markdown."""
    parts = [f"{o.left_out} of {o.total} items of “{inline(o.section)}”" for o in omissions] or [
        "nothing"
    ]
    return (
        f"**Truncated** to fit a budget of about {budget} tokens: left out "
        + ", ".join(parts)
        + ". Read again without a token budget, or with a larger one, for the rest."
    )
