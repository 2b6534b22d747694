"""The verify stage: nothing an extractor proposes is written unchecked.

`accept` keeps the candidates whose type is one of the four memory types, whose every
quote is a verbatim substring of the message it names and that a patient or caregiver
said, and turns them into `Memory` objects with deterministic ids. `verify_proposals`
keeps the relationships an extractor proposed that GUIDELINE §3 allows: a fact that
exists, symptom → condition and adherence → medication, one of the three types, one
relationship per memory–fact pair; the extractor's `why` becomes the rationale.
"""

import hashlib
from collections.abc import Sequence
from datetime import datetime

from engine.memories.extractor import MEMORY_ROLES, MEMORY_TYPES, Candidate, Quote
from engine.models import (
    Evidence,
    Fact,
    FactKind,
    Memory,
    MemoryType,
    Message,
    Relationship,
    RelationshipType,
    utcnow,
)

METHOD_PROPOSED = "extractor-proposed"
# Which fact kind each memory type links to (GUIDELINE §3); others link to nothing.
TARGET_KIND = {MemoryType.SYMPTOM: FactKind.CONDITION, MemoryType.ADHERENCE: FactKind.MEDICATION}
_TYPES = {t.value: t for t in RelationshipType}


def verify_quote(quote: Quote, messages: dict[str, Message]) -> Evidence | None:
    """The quote as checked evidence, or None when it is not verbatim in its message.

    With offsets, the text at those offsets must equal the quote exactly; without them,
    the first case-sensitive occurrence is used.
    """
    message = messages.get(quote.message_id)
    if message is None or not quote.quote.strip():
        return None
    if quote.start is not None:
        end = quote.start + len(quote.quote)
        if message.text[quote.start : end] != quote.quote:
            return None
        if quote.end is not None and quote.end != end:
            return None
        start = quote.start
    else:
        start = message.text.find(quote.quote)
        if start < 0:
            return None
    return Evidence(
        message_id=message.message_id,
        quote=quote.quote,
        start=start,
        end=start + len(quote.quote),
    )


def memory_id(session_id: str, type_: str, subject: str, evidence: Sequence[Evidence]) -> str:
    """Deterministic from (session, message range, type, subject, quotes): retries collide."""
    seqs = sorted(int(e.message_id.rsplit(":", 1)[1]) for e in evidence)
    parts = [session_id, str(seqs[0]), str(seqs[-1]), type_, subject.strip().lower()]
    parts += [f"{e.message_id}@{e.start}:{e.quote}" for e in evidence]
    digest = hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:32]
    return f"mem-{digest}"


def accept(
    candidates: Sequence[Candidate],
    messages: Sequence[Message],
    extractor: str,
    version: str,
) -> list[Memory]:
    """The candidates that pass the shared checks, as memories (see `checked`)."""
    return [memory for memory, _ in checked(candidates, messages, extractor, version)]


def checked(
    candidates: Sequence[Candidate],
    messages: Sequence[Message],
    extractor: str,
    version: str,
    created_at: datetime | None = None,
) -> list[tuple[Memory, Candidate]]:
    """The candidates that pass the shared checks, each with the memory it becomes.

    A candidate is dropped when its type is not one of the four memory types, when it
    has no evidence, when any quote is not a verbatim substring of its message, or when
    no quote comes from a patient or caregiver message. Duplicates (same id) collapse
    into the first. Every memory of one call gets the same `created_at` (one run).
    """
    at = created_at or utcnow()
    by_id = {m.message_id: m for m in messages}
    out: dict[str, tuple[Memory, Candidate]] = {}
    for candidate in candidates:
        if candidate.type not in MEMORY_TYPES or not candidate.evidence:
            continue
        verified = [verify_quote(q, by_id) for q in candidate.evidence]
        evidence = [e for e in verified if e is not None]
        if len(evidence) != len(verified):
            continue
        speakers = [by_id[e.message_id].role for e in evidence]
        spoken = [r for r in speakers if r.value in MEMORY_ROLES]
        if not spoken:
            continue
        evidence.sort(key=lambda e: (int(e.message_id.rsplit(":", 1)[1]), e.start))
        session_id = by_id[evidence[0].message_id].session_id
        mid = memory_id(session_id, candidate.type, candidate.subject, evidence)
        memory = Memory(
            memory_id=mid,
            session_id=session_id,
            type=MemoryType(candidate.type),
            text=candidate.text,
            subject=candidate.subject.strip().lower(),
            evidence=tuple(evidence),
            speaker=spoken[0],
            attributes=candidate.attributes,
            confidence=candidate.confidence,
            extractor=extractor,
            extractor_version=version,
            created_at=at,
        )
        out.setdefault(mid, (memory, candidate))
    return list(out.values())


def verify_proposals(
    memory: Memory, candidate: Candidate, facts: dict[str, Fact], extractor: str
) -> list[Relationship]:
    """The relationships the extractor proposed for `memory` that pass the checks.

    A proposal is dropped when its fact does not exist, is not of the kind the memory
    type links to, when its type is not one of the three, or when an earlier proposal
    already links the same pair.
    """
    target = TARGET_KIND.get(memory.type)
    out: dict[str, Relationship] = {}
    for proposal in candidate.relationships or ():
        fact = facts.get(proposal.fact_key or "")
        kind = _TYPES.get(proposal.type.strip().lower())
        if fact is None or target is None or fact.kind is not target or kind is None:
            continue
        why = " ".join(proposal.why.split())[:500] or f"proposed by {extractor}"
        out.setdefault(
            fact.fact_key,
            Relationship(
                memory_id=memory.memory_id,
                fact_key=fact.fact_key,
                type=kind,
                rationale=why,
                confidence=memory.confidence,
                method=METHOD_PROPOSED,
                extractor=extractor,
            ),
        )
    return list(out.values())
