"""The GraphStore port: one protocol, two adapters (SQLite, Neo4j), one contract suite.

Every call names its `(org, patient)` scope and sees nothing outside it. Every write goes
through `write(scope, batch)`, which is the transaction boundary: a batch is applied
entirely or not at all.
"""

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from pydantic import Field

from engine.as_of import AsOf
from engine.audit import AuditEvent
from engine.errors import InvalidInput
from engine.models import (
    Batch,
    Fact,
    FactKind,
    FactLink,
    Frozen,
    Memory,
    MemoryRecord,
    MemoryReview,
    MemoryType,
    Message,
    NewMessage,
    Patient,
    Scope,
    Session,
    WriteResult,
)


class ViewRequest(Frozen):
    """What one view of a patient reads: facts of some kinds, links, memories, sessions."""

    kinds: frozenset[FactKind] = frozenset()
    links: bool = False
    memories: bool = False
    sessions: bool = False


class PatientView(Frozen):
    """Everything a `ViewRequest` asked for, read at one instant.

    `facts` holds every requested kind (an empty list for a kind without facts), sorted by
    key; a part that was not requested is None.
    """

    patient: Patient
    facts: dict[FactKind, list[Fact]] = Field(default_factory=dict)
    links: list[FactLink] | None = None
    memories: list[MemoryRecord] | None = None
    sessions: list[Session] | None = None


@runtime_checkable
class GraphStore(Protocol):
    """The storage port of the engine."""

    # Whether a caller gains by running writes on a thread of their own while it does its
    # other work: true where a write mostly waits on a server (Neo4j); false where it is
    # this process's own work (SQLite: the threads would only take turns).
    overlapped_writes: bool

    def write(self, scope: Scope, batch: Batch) -> WriteResult:
        """Applies a batch in one transaction.

        Patient demographics are upserted. Each source is merged by `source_ref`: the same
        content hash changes nothing, an older `last_updated` than the stored one is
        ignored as stale, and otherwise the source's claims replace everything it asserted
        before (facts left with no source and no memory relationship are removed). Fact
        links are merged; a link naming a fact that does not exist is skipped and counted.
        Memories and relationships are appended; a memory id that already exists raises
        `Conflict`. A watermark that no longer stands at its `expected` value raises
        `Conflict` and nothing of the batch is written.
        """
        ...

    def write_many(self, writes: Sequence[tuple[Scope, Batch]]) -> list[WriteResult]:
        """Applies batches, of any patients, in order in one transaction; their results.

        The same as `write` of each in turn, one commit instead of one each: a batch sees
        what the batches before it wrote. When one raises, nothing of any is written.
        """
        ...

    def get_patient(self, scope: Scope) -> Patient:
        """The patient's demographics; `NotFound` when nothing of the patient exists."""
        ...

    def list_patients(self, org: str) -> list[str]:
        """The ids of the org's patients, sorted."""
        ...

    def list_facts(
        self,
        scope: Scope,
        kind: FactKind | None = None,
        status: str | None = None,
        as_of: AsOf = None,
    ) -> list[Fact]:
        """The patient's merged facts, sorted by key, optionally filtered.

        With `as_of`, each fact is merged from the claims of the sources ingested by then
        only, and a fact none of them asserts is left out (`engine.as_of`).
        """
        ...

    def get_fact(self, scope: Scope, fact_key: str, as_of: AsOf = None) -> Fact:
        """One merged fact with its sources and conflicts; `NotFound` if absent (by `as_of`)."""
        ...

    def read_view(self, scope: Scope, request: ViewRequest, as_of: AsOf = None) -> PatientView:
        """The patient and what `request` names, in one read (one round trip on a server).

        The same as `get_patient`, `list_facts` per kind, `list_fact_links`,
        `list_memories` and `list_sessions` with the same `as_of`; `NotFound` when the
        patient does not exist.
        """
        ...

    def list_fact_links(self, scope: Scope) -> list[FactLink]:
        """Fact-to-fact edges of the patient, sorted."""
        ...

    def create_session(self, scope: Scope, session: Session) -> Session:
        """Creates a session (and the patient node if needed); `Conflict` if it exists."""
        ...

    def get_session(self, scope: Scope, session_id: str) -> Session:
        """One session; `NotFound` if absent."""
        ...

    def list_sessions(self, scope: Scope, as_of: AsOf = None) -> list[Session]:
        """The patient's sessions (created by `as_of`, if given), oldest first."""
        ...

    def close_session(self, scope: Scope, session_id: str) -> Session:
        """Closes a session; it stays readable and accepts no more messages."""
        ...

    def append_messages(
        self, scope: Scope, session_id: str, messages: Sequence[NewMessage]
    ) -> list[Message]:
        """Appends messages in one transaction, numbering them from the last `seq` + 1.

        `Conflict` when the session is closed, `NotFound` when it does not exist.
        """
        ...

    def list_messages(self, scope: Scope, session_id: str, after: int = 0) -> list[Message]:
        """The session's messages with `seq > after`, in order."""
        ...

    def list_memories(
        self, scope: Scope, type: MemoryType | None = None, as_of: AsOf = None
    ) -> list[MemoryRecord]:
        """Memories (created by `as_of`, if given) with their relationships and reviews
        (oldest first, those made by `as_of`), most recent first."""
        ...

    def add_review(self, scope: Scope, review: MemoryReview) -> MemoryReview:
        """Appends a review to a memory; reviews are never updated or deleted.

        `NotFound` when the memory does not exist, `Conflict` when the review id does.
        """
        ...

    def list_reviews(self, scope: Scope, memory_id: str) -> list[MemoryReview]:
        """A memory's reviews, oldest first; `NotFound` when the memory does not exist."""
        ...

    def get_memory(self, scope: Scope, memory_id: str) -> Memory:
        """One memory; `NotFound` if absent."""
        ...

    def erase_patient(self, scope: Scope) -> int:
        """Removes every node, edge and row of the patient; returns how many went.

        The patient's audit events stay, with the patient replaced by `audit.ERASED`.
        """
        ...

    def count_patient_items(self, scope: Scope) -> int:
        """How many nodes, edges, rows or audit events still hold anything of the patient."""
        ...

    def set_memory_paused(self, scope: Scope, paused: bool) -> None:
        """Pauses (or resumes) generate-memories for the patient; `NotFound` without one."""
        ...

    def is_memory_paused(self, scope: Scope) -> bool:
        """Whether generate-memories is paused for the patient (False for an unknown one)."""
        ...

    def append_audit(self, events: Sequence[AuditEvent]) -> None:
        """Appends audit events in one transaction; they are never updated or deleted."""
        ...

    def list_audit(
        self, org: str, patient: str | None = None, limit: int = 100
    ) -> list[AuditEvent]:
        """The org's audit events, optionally of one patient, most recent first."""
        ...

    def close(self) -> None:
        """Releases connections."""
        ...


def compose_view(
    store: GraphStore, scope: Scope, request: ViewRequest, as_of: AsOf = None
) -> PatientView:
    """A `PatientView` made of the store's single reads (what `read_view` must equal)."""
    return PatientView(
        patient=store.get_patient(scope),
        facts={kind: store.list_facts(scope, kind, as_of=as_of) for kind in request.kinds},
        links=store.list_fact_links(scope) if request.links else None,
        memories=store.list_memories(scope, as_of=as_of) if request.memories else None,
        sessions=store.list_sessions(scope, as_of=as_of) if request.sessions else None,
    )


def open_store(url: str, wait: bool = False) -> GraphStore:
    """Opens the store a URL names: `sqlite:///path.db`, or `neo4j://` / `bolt://`.

    Args:
        url: the store's URL.
        wait: for Neo4j, open even while the server is down; calls answer
            `StoreUnavailable` until it is up (what a long-running server wants).

    Raises:
        InvalidInput: for any other scheme.
    """
    if url.startswith("sqlite://"):
        from engine.sqlite_store import SqliteStore

        return SqliteStore.from_url(url)
    if url.split("://", 1)[0] in {"neo4j", "neo4j+s", "neo4j+ssc", "bolt", "bolt+s", "bolt+ssc"}:
        from engine.neo4j_store import Neo4jStore

        return Neo4jStore.from_url(url, wait)
    raise InvalidInput(f"unsupported store URL {url!r}: use sqlite:///path.db, neo4j:// or bolt://")
