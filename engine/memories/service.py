"""generate-memories (SPEC §3): new messages → memories + relationships, written once.

The stages: extract (the offline or the LLM extractor, interchangeable) → verify
(`verify`: verbatim quotes, patient speech, proposed relationships) → relate (`relate`:
shared by every extractor) → write (one batch, below).

The session's `processed_through` watermark moves in the same transaction as the
memories, so a retry after a crash or a concurrent second call creates nothing twice:
the store refuses a batch whose watermark no longer stands where it was read.

When another extractor proposes relationships, the offline extractor reads the same
messages as a second opinion (`relate.relate_all`), and what it finds of how a recorded
medication is taken that the model left out is kept too (`_adherence_missed`).
"""

from typing import Literal

from pydantic import BaseModel

from engine.memories.extractor import MEMORY_ROLES, Candidate, Extractor, Usage
from engine.memories.offline import OfflineExtractor
from engine.memories.relate import relate, relate_all, same_statement
from engine.memories.speakers import as_spoken
from engine.memories.verify import checked
from engine.models import (
    Batch,
    Fact,
    Memory,
    MemoryType,
    Message,
    Relationship,
    Scope,
    Watermark,
)
from engine.store import GraphStore

# The attributes GUIDELINE §2 defines (plus an as-needed `pattern`); what else extractors
# attach are hints for relationship inference, not part of what the patient said.
PUBLIC_ATTRIBUTES = frozenset(
    {
        "present",
        "onset",
        "duration",
        "frequency",
        "severity",
        "trigger",
        "behavior",
        "reason",
        "detail",
        "pattern",
    }
)

# How many earlier messages the extractor sees as context (the question that a first
# new message answers, a drug named just before); memories still need evidence in the
# new range.
CONTEXT_MESSAGES = 6


class GenerateResult(BaseModel):
    """What one generate-memories call did."""

    status: Literal["ok", "nothing-new", "paused"]
    memories: list[Memory] = []
    relationships: list[Relationship] = []
    processed_through: int
    usage: Usage = Usage()  # the extractor's model calls; zeros for the offline extractor
    # the transcript's patient and provider labels were the wrong way round, and were read
    # swapped (`speakers`)
    labels_swapped: bool = False


def generate_memories(
    store: GraphStore, scope: Scope, session_id: str, extractor: Extractor | None = None
) -> GenerateResult:
    """Extracts memories from the session's unprocessed messages and links them to facts.

    Args:
        store: the graph store.
        scope: the (org, patient) the session belongs to.
        session_id: the session to process.
        extractor: defaults to the offline extractor.

    Returns:
        "paused" while the patient has paused memory: nothing is kept, and the messages
        are marked processed so that they are never learned from, even after a resume;
        "nothing-new" when no message is past the watermark; otherwise "ok" with the
        memories and relationships written.

    Raises:
        NotFound: the session does not exist.
        Conflict: another call moved the watermark first (nothing was written).
    """
    offline = OfflineExtractor()
    if extractor is None:
        extractor = offline
    session = store.get_session(scope, session_id)
    done = session.processed_through
    if store.is_memory_paused(scope):
        return _skip_while_paused(store, scope, session_id, done)
    whole = store.list_messages(scope, session_id)
    new = [m for m in whole if m.seq > done]
    if not new:
        return GenerateResult(status="nothing-new", processed_through=done)
    context = [m for m in whole if max(0, done - CONTEXT_MESSAGES) < m.seq <= done]
    messages, swapped = as_spoken(context + new, whole)
    facts = store.list_facts(scope)
    extraction = extractor.extract(messages, facts, processed=len(context))
    accepted = [
        (m, c)
        for m, c in checked(extraction.candidates, messages, extractor.name, extractor.version)
        if _spoken_in(m, done, messages)
    ]
    reading: list[Memory] = []
    if extractor is not offline and any(c.relationships is not None for _, c in accepted):
        # the offline reading of the same messages checks the proposals (`relate_all`)
        again = offline.extract(messages, facts, processed=len(context)).candidates
        read = checked(again, messages, offline.name, offline.version)
        reading = [m for m, _ in read]
        accepted += _adherence_missed(accepted, read, facts, done, messages)
    relationships = relate_all(accepted, facts, f"{extractor.name} {extractor.version}", reading)
    memories = [_public(m) for m, _ in accepted]
    last = new[-1].seq
    store.write(
        scope,
        Batch(
            memories=tuple(memories),
            relationships=tuple(relationships),
            watermark=Watermark(session_id=session_id, expected=done, new=last),
        ),
    )
    return GenerateResult(
        status="ok",
        memories=memories,
        relationships=relationships,
        processed_through=last,
        usage=extraction.usage,
        labels_swapped=swapped,
    )


def _adherence_missed(
    accepted: list[tuple[Memory, Candidate]],
    read: list[tuple[Memory, Candidate]],
    facts: list[Fact],
    done: int,
    messages: list[Message],
) -> list[tuple[Memory, Candidate]]:
    """The offline reading's statements of how a recorded medication is taken that the
    model left out: no memory of the model says the same or shares a quote with it."""
    said = {(m.type, m.subject) for m, _ in accepted}
    missed = [
        (m, c)
        for m, c in read
        if m.type is MemoryType.ADHERENCE
        and (m.type, m.subject) not in said
        and not any(same_statement(m, a) for a, _ in accepted)
        and _spoken_in(m, done, messages)
    ]
    recorded = {r.memory_id for r in relate([m for m, _ in missed], facts)}
    return [(m, c) for m, c in missed if m.memory_id in recorded]


def _spoken_in(memory: Memory, after: int, messages: list[Message]) -> bool:
    """Every patient/caregiver quote of the memory lies in the new range."""
    roles = {m.message_id: m.role.value for m in messages}
    seqs = [
        int(e.message_id.rsplit(":", 1)[1])
        for e in memory.evidence
        if roles.get(e.message_id) in MEMORY_ROLES
    ]
    return bool(seqs) and min(seqs) > after


def _skip_while_paused(
    store: GraphStore, scope: Scope, session_id: str, done: int
) -> GenerateResult:
    new = store.list_messages(scope, session_id, after=done)
    if not new:
        return GenerateResult(status="paused", processed_through=done)
    last = new[-1].seq
    store.write(scope, Batch(watermark=Watermark(session_id=session_id, expected=done, new=last)))
    return GenerateResult(status="paused", processed_through=last)


def _public(memory: Memory) -> Memory:
    attributes = {k: v for k, v in memory.attributes.items() if k in PUBLIC_ATTRIBUTES}
    return memory.model_copy(update={"attributes": attributes})
