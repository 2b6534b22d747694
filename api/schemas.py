"""Public shapes of sessions and memories (SPEC §5), shared by the HTTP API and the CLI."""

import uuid
from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field

from engine.memories.extractor import Usage
from engine.models import (
    DismissReason,
    Fact,
    FactKind,
    Identifier,
    Memory,
    MemoryRecord,
    MemoryReview,
    MemoryType,
    Message,
    NewMessage,
    Relationship,
    RelationshipType,
    ReviewAction,
    Role,
    Scope,
    Session,
    SessionStatus,
    SourceFormat,
)
from engine.store import GraphStore

MAX_MESSAGES_PER_REQUEST = 500


def new_session_id() -> str:
    """A fresh, unguessable session id."""
    return f"s-{uuid.uuid4().hex[:16]}"


class SessionCreate(BaseModel):
    session_id: Identifier | None = None


class MessagesAppend(BaseModel):
    messages: list[NewMessage] = Field(min_length=1, max_length=MAX_MESSAGES_PER_REQUEST)


class MessagePublic(BaseModel):
    message_id: str
    seq: int
    role: Role
    text: str
    timestamp: datetime

    @classmethod
    def of(cls, message: Message) -> "MessagePublic":
        return cls(message_id=message.message_id, **message.model_dump(exclude={"session_id"}))


class SessionPublic(BaseModel):
    session_id: str
    status: SessionStatus
    processed_through: int
    created_at: datetime
    messages: list[MessagePublic] = []

    @classmethod
    def of(cls, session: Session, messages: list[Message] | None = None) -> "SessionPublic":
        return cls(**session.model_dump(), messages=[MessagePublic.of(m) for m in messages or []])


class SourcePublic(BaseModel):
    format: SourceFormat
    resource_type: str
    resource_id: str


class RelationshipPublic(BaseModel):
    type: RelationshipType
    fact_id: str
    fact_kind: FactKind | None
    fact_label: str | None
    rationale: str
    confidence: float
    method: str
    extractor: str
    fact_sources: list[SourcePublic]

    @classmethod
    def of(cls, rel: Relationship, fact: Fact | None) -> "RelationshipPublic":
        return cls(
            type=rel.type,
            fact_id=rel.fact_key,
            fact_kind=fact.kind if fact else None,
            fact_label=fact.label if fact else None,
            rationale=rel.rationale,
            confidence=rel.confidence,
            method=rel.method,
            extractor=rel.extractor,
            fact_sources=[
                SourcePublic(
                    format=s.format, resource_type=s.resource_type, resource_id=s.resource_id
                )
                for s in (fact.sources if fact else ())
            ],
        )


class ReviewCreate(BaseModel):
    action: ReviewAction
    reason: DismissReason | None = None
    note: str = ""


class ReviewPublic(BaseModel):
    id: str
    memory_id: str
    action: ReviewAction
    reason: DismissReason | None
    note: str
    at: datetime
    by: str

    @classmethod
    def of(cls, review: MemoryReview) -> "ReviewPublic":
        return cls(
            id=review.review_id,
            memory_id=review.memory_id,
            action=review.action,
            reason=review.reason,
            note=review.note,
            at=review.created_at,
            by=review.actor,
        )


class MemoryPublic(BaseModel):
    id: str
    type: MemoryType
    text: str
    subject: str
    evidence: list[dict[str, Any]]
    speaker: Role
    attributes: dict[str, Any]
    confidence: float
    extractor: str
    created_at: datetime
    session_id: str
    relationships: list[RelationshipPublic]
    review: ReviewPublic | None  # the latest

    @classmethod
    def of(cls, record: MemoryRecord, facts: dict[str, Fact]) -> "MemoryPublic":
        memory: Memory = record.memory
        return cls(
            id=memory.memory_id,
            type=memory.type,
            text=memory.text,
            subject=memory.subject,
            evidence=[e.model_dump() for e in memory.evidence],
            speaker=memory.speaker,
            attributes=memory.attributes,
            confidence=memory.confidence,
            extractor=f"{memory.extractor}/{memory.extractor_version}",
            created_at=memory.created_at,
            session_id=memory.session_id,
            relationships=[
                RelationshipPublic.of(r, facts.get(r.fact_key)) for r in record.relationships
            ],
            review=ReviewPublic.of(record.review) if record.review else None,
        )


class GeneratedRelationship(BaseModel):
    memory_id: str
    type: RelationshipType
    fact_id: str
    rationale: str
    confidence: float
    method: str
    extractor: str

    @classmethod
    def of(cls, rel: Relationship) -> "GeneratedRelationship":
        return cls(
            memory_id=rel.memory_id,
            type=rel.type,
            fact_id=rel.fact_key,
            rationale=rel.rationale,
            confidence=rel.confidence,
            method=rel.method,
            extractor=rel.extractor,
        )


class GenerateResponse(BaseModel):
    status: str
    processed_through: int
    memories: list[MemoryPublic]
    relationships: list[GeneratedRelationship]
    usage: Usage  # the extractor's model calls; zeros for the offline extractor
    # the transcript's patient and provider labels were read swapped (engine.memories.speakers)
    labels_swapped: bool = False


def memories_public(
    store: GraphStore, scope: Scope, records: list[MemoryRecord]
) -> list[MemoryPublic]:
    """Memories in the public shape, with the related facts looked up once."""
    wanted = {r.fact_key for record in records for r in record.relationships}
    facts = {f.fact_key: f for f in store.list_facts(scope) if f.fact_key in wanted}
    return [MemoryPublic.of(record, facts) for record in records]
