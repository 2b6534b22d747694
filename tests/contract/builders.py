"""Small constructors for contract tests."""

from datetime import UTC, datetime

from engine.models import (
    Batch,
    Claim,
    Coding,
    DismissReason,
    Evidence,
    FactKind,
    Memory,
    MemoryReview,
    MemoryType,
    Relationship,
    RelationshipType,
    ReviewAction,
    Role,
    Source,
    SourceClaims,
    SourceFormat,
)

DIABETES = "condition:snomed:44054006"
METFORMIN = "medication:rxnorm:860975"


def source(
    ref: str,
    content: str = "v1",
    updated: datetime | None = None,
    fmt: SourceFormat = SourceFormat.FHIR,
    version: str | None = None,
) -> Source:
    return Source(
        source_ref=ref,
        format=fmt,
        label="test.json",
        resource_type="Condition",
        resource_id=ref.rsplit("/", 1)[-1],
        version=version,
        last_updated=updated,
        content_hash=f"hash-{content}",
    )


def claim(
    key: str = DIABETES, status: str = "active", label: str = "Type 2 diabetes", **fields: str
) -> Claim:
    kind = FactKind(key.split(":", 1)[0])
    code = key.split(":")[2]
    return Claim(
        fact_key=key,
        kind=kind,
        label=label,
        status=status,
        codes=(Coding(system=key.split(":")[1], code=code),),
        fields=dict(fields),
    )


def asserted(
    ref: str,
    *claims: Claim,
    content: str = "v1",
    updated: datetime | None = None,
    fmt: SourceFormat = SourceFormat.FHIR,
    version: str | None = None,
) -> Batch:
    made = source(ref, content, updated, fmt, version)
    return Batch(sources=(SourceClaims(source=made, claims=claims),))


def at(day: int) -> datetime:
    return datetime(2024, 1, day, tzinfo=UTC)


def memory(memory_id: str, session_id: str, text: str = "I stopped the metformin") -> Memory:
    return Memory(
        memory_id=memory_id,
        session_id=session_id,
        type=MemoryType.ADHERENCE,
        text=text,
        subject="metformin",
        evidence=(Evidence(message_id=f"{session_id}:1", quote=text, start=0, end=len(text)),),
        speaker=Role.PATIENT,
        attributes={"behavior": "stopped"},
        confidence=0.9,
        extractor="test",
        extractor_version="1",
    )


def relationship(
    memory_id: str, key: str = METFORMIN, type: RelationshipType = RelationshipType.CONFLICTS
) -> Relationship:
    return Relationship(
        memory_id=memory_id,
        fact_key=key,
        type=type,
        rationale="patient stopped a medication the record lists as current",
        confidence=0.8,
        method="test",
    )


def review(
    review_id: str,
    memory_id: str,
    action: ReviewAction = ReviewAction.CONFIRM,
    reason: DismissReason | None = None,
    note: str = "",
    day: int = 1,
) -> MemoryReview:
    return MemoryReview(
        review_id=review_id,
        memory_id=memory_id,
        actor="dr-test",
        action=action,
        reason=reason,
        note=note,
        created_at=at(day),
    )
