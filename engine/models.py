"""The graph model of SPEC §1 as pydantic data: no behaviour, no I/O."""

from datetime import UTC, datetime
from enum import StrEnum
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    model_validator,
)

Identifier = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9._-]{1,128}$")]
FieldValue = str | int | float | bool | None | list[str]


def utcnow() -> datetime:
    """The current time, timezone-aware (UTC)."""
    return datetime.now(UTC)


def as_utc(value: datetime) -> datetime:
    """The time in UTC (a naive one is taken as UTC).

    Raises:
        ValueError: the time falls outside years 1 to 9999 in UTC
            ("0001-01-01T00:00:00+00:01").
    """
    try:
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    except OverflowError as e:
        raise ValueError("the time is outside the years 1 to 9999 in UTC") from e


# Stored times are UTC, so their ISO strings sort and compare like the times themselves.
UtcDatetime = Annotated[datetime, AfterValidator(as_utc)]


class Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Scope(Frozen):
    """The (org, patient) pair that every store call is confined to."""

    org: Identifier
    patient: Identifier


class FactKind(StrEnum):
    CONDITION = "condition"
    MEDICATION = "medication"
    ALLERGY = "allergy"
    OBSERVATION = "observation"
    PROCEDURE = "procedure"
    IMMUNIZATION = "immunization"
    ENCOUNTER = "encounter"


class SourceFormat(StrEnum):
    FHIR = "fhir"
    CDA = "cda"


class FactLinkType(StrEnum):
    PRESCRIBED_FOR = "PRESCRIBED_FOR"
    MONITORS = "MONITORS"
    COMPLICATION_OF = "COMPLICATION_OF"


class Role(StrEnum):
    PATIENT = "patient"
    CAREGIVER = "caregiver"
    PROVIDER = "provider"
    ASSISTANT = "assistant"


class SessionStatus(StrEnum):
    OPEN = "open"
    CLOSED = "closed"


class MemoryType(StrEnum):
    SYMPTOM = "symptom"
    ADHERENCE = "adherence"
    CONCERN = "concern"
    PREFERENCE = "preference"


class RelationshipType(StrEnum):
    CONFLICTS = "conflicts"
    CORROBORATES = "corroborates"
    ENRICHES = "enriches"


class Patient(Frozen):
    """Demographics from FHIR Patient or a CDA recordTarget.

    `conflicts` records documents that disagree on address or phone (which do not decide
    identity); the latest document's value is kept.
    """

    name: str | None = None
    birth_date: str | None = None
    gender: str | None = None
    identifiers: tuple[str, ...] = ()
    address: str | None = None
    phone: str | None = None
    conflicts: tuple["FieldConflict", ...] = ()


class Coding(Frozen):
    """A code after normalisation: `system` is a short name (snomed, rxnorm...) or a URI."""

    system: str
    code: str
    display: str | None = None


class Source(Frozen):
    """One ingested resource or CDA entry."""

    source_ref: str = Field(min_length=1, max_length=512)
    format: SourceFormat
    label: str
    resource_type: str
    resource_id: str
    version: str | None = None
    last_updated: UtcDatetime | None = None
    ingested_at: UtcDatetime = Field(default_factory=utcnow)
    reliability: float = Field(default=1.0, ge=0, le=1)
    content_hash: str = Field(min_length=1)


class MatchLayer(StrEnum):
    """How two claims are known to be about the same thing, strongest first."""

    CODE = "code"
    INGREDIENT = "ingredient"
    TEXT = "text"


class MatchKey(Frozen):
    """One way a claim can meet another: "snomed 239872002", "warfarin 5 mg tablet"."""

    layer: MatchLayer
    key: str


class Claim(Frozen):
    """What one source asserts about one fact.

    `fact_key` is the fact the claim was placed in; `origin_key` the key it would have
    had alone, when that differs; `merged_by` the match key that placed it in a fact that
    other claims made; `candidates` the other facts it matched too (not merged).
    """

    fact_key: str = Field(min_length=1, max_length=512)
    kind: FactKind
    label: str
    status: str | None = None
    codes: tuple[Coding, ...] = ()
    fields: dict[str, FieldValue] = Field(default_factory=dict)
    match_keys: tuple[MatchKey, ...] = ()
    origin_key: str | None = None
    merged_by: MatchKey | None = None
    candidates: tuple[str, ...] = ()


class SourceClaims(Frozen):
    """A source with everything it asserts; a newer version replaces all of it."""

    source: Source
    claims: tuple[Claim, ...]


class FieldConflict(Frozen):
    """Sources disagree on one field of a fact; the winner is what the fact shows."""

    field: str
    values: tuple[tuple[FieldValue, str], ...]  # (value, source_ref)
    winner: FieldValue
    winner_source: str
    strategy: str
    explanation: str


class Merge(Frozen):
    """Why a source's claim joined a fact: the layer and key it shared with the fact."""

    layer: MatchLayer
    key: str
    source_ref: str


class Candidate(Frozen):
    """A claim that matched more facts than the one it is in: maybe one thing, not merged."""

    source_ref: str
    label: str
    fact_keys: tuple[str, ...]


class Fact(Frozen):
    """A merged fact: the winning values, every source, and the recorded conflicts."""

    fact_key: str
    kind: FactKind
    label: str
    status: str | None = None
    codes: tuple[Coding, ...] = ()
    fields: dict[str, FieldValue] = Field(default_factory=dict)
    sources: tuple[Source, ...] = ()
    conflicts: tuple[FieldConflict, ...] = ()
    merged_by: tuple[Merge, ...] = ()
    candidates: tuple[Candidate, ...] = ()


class FactLink(Frozen):
    from_key: str
    to_key: str
    type: FactLinkType


class Session(Frozen):
    session_id: Identifier
    status: SessionStatus = SessionStatus.OPEN
    processed_through: int = 0
    created_at: UtcDatetime = Field(default_factory=utcnow)


class NewMessage(Frozen):
    role: Role
    text: str = Field(min_length=1, max_length=32_000)
    timestamp: UtcDatetime | None = None


class Message(Frozen):
    session_id: str
    seq: int
    role: Role
    text: str
    timestamp: UtcDatetime

    @property
    def message_id(self) -> str:
        return f"{self.session_id}:{self.seq}"


class Evidence(Frozen):
    message_id: str
    quote: str
    start: int = Field(ge=0)
    end: int = Field(ge=0)


class Memory(Frozen):
    memory_id: Identifier
    session_id: str
    type: MemoryType
    text: str
    subject: str
    evidence: tuple[Evidence, ...]
    speaker: Role
    attributes: dict[str, Any] = Field(default_factory=dict)
    confidence: float = Field(ge=0, le=1)
    extractor: str
    extractor_version: str
    created_at: UtcDatetime = Field(default_factory=utcnow)


class Relationship(Frozen):
    memory_id: str
    fact_key: str
    type: RelationshipType
    rationale: str
    confidence: float = Field(ge=0, le=1)
    method: str
    # Who proposed it: "offline-context 1.3.0", "llm-chat 2.0.0+model"; empty before 2.0.
    extractor: str = ""


class ReviewAction(StrEnum):
    CONFIRM = "confirm"
    DISMISS = "dismiss"
    NOTE = "note"


class DismissReason(StrEnum):
    WRONG = "wrong"
    NOT_RELEVANT = "not_relevant"
    DUPLICATE = "duplicate"


class MemoryReview(Frozen):
    """A clinician's confirmation, dismissal (with its reason) or note on a memory.

    Reviews are appended, never changed: the latest confirmation or dismissal decides.
    """

    review_id: Identifier
    memory_id: Identifier
    actor: str = Field(min_length=1, max_length=256)
    action: ReviewAction
    reason: DismissReason | None = None
    note: str = Field(default="", max_length=2000)
    created_at: UtcDatetime = Field(default_factory=utcnow)

    @model_validator(mode="after")
    def _consistent(self) -> "MemoryReview":
        if (self.action is ReviewAction.DISMISS) != (self.reason is not None):
            raise ValueError("a dismissal needs a reason, and only a dismissal has one")
        if self.action is ReviewAction.NOTE and not self.note.strip():
            raise ValueError("a note review needs a note")
        return self


class MemoryRecord(Frozen):
    """A memory with the relationships it has to facts and its reviews, oldest first."""

    memory: Memory
    relationships: tuple[Relationship, ...] = ()
    reviews: tuple[MemoryReview, ...] = ()

    @property
    def review(self) -> MemoryReview | None:
        """The latest review of any kind."""
        return self.reviews[-1] if self.reviews else None

    @property
    def verdict(self) -> ReviewAction | None:
        """The latest confirmation or dismissal; notes leave it as it was."""
        decisions = [r.action for r in self.reviews if r.action is not ReviewAction.NOTE]
        return decisions[-1] if decisions else None

    @property
    def note(self) -> str:
        """The latest note a review left ("" without one)."""
        return next((r.note for r in reversed(self.reviews) if r.note), "")

    @property
    def dismissed(self) -> bool:
        """Whether a clinician's latest decision on the memory is a dismissal."""
        return self.verdict is ReviewAction.DISMISS


class Watermark(Frozen):
    """Moves a session's `processed_through` only if it still stands at `expected`."""

    session_id: str
    expected: int
    new: int


class Batch(Frozen):
    """One unit of work, applied by `GraphStore.write` in one transaction."""

    patient: Patient | None = None
    sources: tuple[SourceClaims, ...] = ()
    fact_links: tuple[FactLink, ...] = ()
    memories: tuple[Memory, ...] = ()
    relationships: tuple[Relationship, ...] = ()
    watermark: Watermark | None = None
    # source refs that a newer version of their document no longer contains
    retire: tuple[str, ...] = ()


class WriteResult(Frozen):
    """What a batch changed."""

    facts_added: int = 0
    facts_merged: int = 0
    sources_added: int = 0
    sources_replaced: int = 0
    sources_unchanged: int = 0
    sources_stale: int = 0
    sources_kept_apart: int = 0
    sources_retired: int = 0
    facts_removed: int = 0
    candidates_settled: int = 0
    links_added: int = 0
    links_skipped: int = 0
    memories_added: int = 0
    relationships_added: int = 0
