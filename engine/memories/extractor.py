"""The extractor port and the checks that every extractor's output goes through.

An extractor proposes `Candidate`s; `accept` keeps only those whose type is one of the
four memory types and whose every quote is a verbatim substring of the message it
names, and turns them into `Memory` objects with deterministic ids.
"""

import hashlib
from collections.abc import Sequence
from typing import Any, Protocol

from pydantic import BaseModel, Field

from engine.models import Evidence, Fact, Memory, MemoryType, Message, Role


class Quote(BaseModel):
    """A quote an extractor claims; offsets are optional and checked when given."""

    message_id: str
    quote: str
    start: int | None = None
    end: int | None = None


class Candidate(BaseModel):
    """A proposed memory, not yet checked."""

    type: str
    subject: str
    text: str
    evidence: list[Quote]
    speaker: str = Role.PATIENT.value
    attributes: dict[str, Any] = Field(default_factory=dict)
    confidence: float = Field(default=0.5, ge=0, le=1)


class Extractor(Protocol):
    """Turns conversation messages (and the patient's facts) into candidate memories."""

    name: str
    version: str

    def extract(self, messages: list[Message], facts: list[Fact]) -> list[Candidate]:
        """Candidates for the messages; `accept` filters what it returns."""
        ...


MEMORY_TYPES = frozenset(t.value for t in MemoryType)
MEMORY_ROLES = frozenset({Role.PATIENT.value, Role.CAREGIVER.value})


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
    """The candidates that pass the shared checks, as memories; the rest are dropped.

    A candidate is dropped when its type is not one of the four memory types, when it
    has no evidence, when any quote is not a verbatim substring of its message, or when
    no quote comes from a patient or caregiver message. Duplicates (same id) collapse.
    """
    by_id = {m.message_id: m for m in messages}
    out: dict[str, Memory] = {}
    for candidate in candidates:
        if candidate.type not in MEMORY_TYPES or not candidate.evidence:
            continue
        checked = [verify_quote(q, by_id) for q in candidate.evidence]
        evidence = [e for e in checked if e is not None]
        if len(evidence) != len(checked):
            continue
        speakers = [by_id[e.message_id].role for e in evidence]
        spoken = [r for r in speakers if r.value in MEMORY_ROLES]
        if not spoken:
            continue
        evidence.sort(key=lambda e: (int(e.message_id.rsplit(":", 1)[1]), e.start))
        session_id = by_id[evidence[0].message_id].session_id
        mid = memory_id(session_id, candidate.type, candidate.subject, evidence)
        out.setdefault(
            mid,
            Memory(
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
            ),
        )
    return list(out.values())
