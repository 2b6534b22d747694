"""Long conversations in parts: how they are cut, and how the parts' memories are joined.

A part is a run of messages whose prompt fits the input budget; consecutive parts share
`overlap` messages, so a statement at the cut is read whole at least once, and each part
is preceded by the messages before it, marked as already processed, so that an answer
at its start still meets its question. A statement read in two parts comes back twice:
candidates of the same type and subject whose evidence overlaps are one memory, with the
union of their quotes and relationship proposals.
"""

from collections.abc import Iterator

from engine.memories.extractor import Candidate, Proposal, Quote
from engine.models import Message

_LINE_OVERHEAD = 16  # "[123] caregiver: " and the line break


def parts(
    messages: list[Message], processed: int, budget_chars: int, overlap: int
) -> Iterator[tuple[list[Message], int]]:
    """`(messages shown, how many of them are context)` for each part, in order."""
    sizes = [len(m.text) + _LINE_OVERHEAD for m in messages]
    if sum(sizes) <= budget_chars:
        yield messages, processed
        return
    start = processed
    while start < len(messages):
        first = max(0, start - overlap) if start > processed else max(0, processed - overlap)
        used = sum(sizes[first:start])
        end = start
        while end < len(messages) and (end == start or used + sizes[end] <= budget_chars):
            used += sizes[end]
            end += 1
        yield messages[first:end], start - first
        if end >= len(messages):
            return
        start = max(start + 1, end - overlap)


def merge_parts(found: list[list[Candidate]]) -> list[Candidate]:
    """The candidates of every part, a statement read by two parts kept once."""
    merged: list[Candidate] = []
    for candidates in found:
        before = len(merged)
        for candidate in candidates:
            same = next((m for m in merged[:before] if _same_statement(m, candidate)), None)
            if same is None:
                merged.append(candidate)
            else:
                merged[merged.index(same)] = _joined(same, candidate)
    return merged


def _same_statement(a: Candidate, b: Candidate) -> bool:
    if a.type != b.type or a.subject.strip().lower() != b.subject.strip().lower():
        return False
    return any(_overlap(q, r) for q in a.evidence for r in b.evidence)


def _overlap(q: Quote, r: Quote) -> bool:
    if q.message_id != r.message_id:
        return False
    if None in (q.start, r.start):
        return q.quote in r.quote or r.quote in q.quote
    q_start, r_start = q.start or 0, r.start or 0
    return q_start < r_start + len(r.quote) and r_start < q_start + len(q.quote)


def _joined(a: Candidate, b: Candidate) -> Candidate:
    quotes = {(q.message_id, q.start, q.quote): q for q in [*a.evidence, *b.evidence]}
    proposals: dict[str | None, Proposal] = {}
    for p in [*(a.relationships or ()), *(b.relationships or ())]:
        proposals.setdefault(p.fact_key, p)
    either = a.relationships is not None or b.relationships is not None
    return a.model_copy(
        update={
            "evidence": list(quotes.values()),
            "confidence": max(a.confidence, b.confidence),
            "relationships": list(proposals.values()) if either else None,
        }
    )
