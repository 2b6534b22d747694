"""The server GraphStore: Neo4j through the official driver, one managed transaction per batch.

Every write transaction first takes a write lock on the patient's node (or the session's,
for messages), so writes to one patient are serialised as SQLite serialises all writes:
the reads a write decides on cannot change under it, and uniqueness constraints remain as a
backstop. Cypher lives in `engine.cypher`; this is the only module that imports `neo4j`.
"""

import functools
from collections import Counter
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any, Concatenate, ParamSpec, TypeVar

from neo4j import Driver, GraphDatabase, ManagedTransaction, ResultSummary
from neo4j.exceptions import (
    AuthError,
    ClientError,
    ConfigurationError,
    ConnectionPoolError,
    ConstraintError,
    DatabaseError,
    Forbidden,
    GqlError,
    ServiceUnavailable,
    SessionExpired,
    TransientError,
)

from engine import cypher
from engine.audit import ERASED, AuditEvent
from engine.errors import Conflict, EngineError, InvalidInput, NotFound, StoreUnavailable
from engine.models import (
    Batch,
    Claim,
    Fact,
    FactKind,
    FactLink,
    FactLinkType,
    Memory,
    MemoryRecord,
    MemoryType,
    Message,
    NewMessage,
    Patient,
    Relationship,
    RelationshipType,
    Scope,
    Session,
    SessionStatus,
    Source,
    SourceClaims,
    WriteResult,
    utcnow,
)
from engine.resolution import resolve
from engine.settings import get_settings

P = ParamSpec("P")
T = TypeVar("T")
Params = dict[str, Any]

_CONSTRAINT_ATTEMPTS = 3
_ERASE_BATCH = 5_000
_UNAVAILABLE = (
    ServiceUnavailable,
    SessionExpired,
    TransientError,
    ConnectionPoolError,
    DatabaseError,
    AuthError,
    Forbidden,
)


def _translated(method: Callable[P, T]) -> Callable[P, T]:
    """Maps driver errors onto the engine's family, so that none leaks out of the adapter."""

    @functools.wraps(method)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> T:
        try:
            return method(*args, **kwargs)
        except ConstraintError as e:
            raise Conflict(f"a concurrent write got there first: {e.message}") from e
        except _UNAVAILABLE as e:
            raise StoreUnavailable(f"Neo4j is unavailable: {e}") from e
        except GqlError as e:  # the base of every driver and server error
            raise EngineError(f"Neo4j refused the operation: {e}") from e

    return wrapper


def _scope(scope: Scope) -> Params:
    return {"org": scope.org, "patient": scope.patient}


class Neo4jStore:
    """GraphStore on Neo4j 5 (Community or Enterprise); safe to share between threads."""

    def __init__(self, driver: Driver, database: str | None = None) -> None:
        """Wraps a driver and creates the uniqueness constraints if they are missing.

        Raises:
            StoreUnavailable: when the server cannot be reached.
        """
        self._driver = driver
        self._database = database
        self._ensure_schema()

    @classmethod
    def from_url(cls, url: str) -> "Neo4jStore":
        """Connects to `neo4j://`, `bolt://` (and `+s`, `+ssc`) URLs.

        User, password and database come from the settings; an empty password means the
        server runs without authentication.

        Raises:
            InvalidInput: for a URL the driver cannot use.
            StoreUnavailable: when the server cannot be reached.
        """
        settings = get_settings()
        password = settings.neo4j_password.get_secret_value()
        auth = (settings.neo4j_user, password) if password else None
        try:
            # Statements name every label and type the model has, before any exists.
            # Short retry and connect times: while the server is down, callers get
            # StoreUnavailable within seconds instead of waiting out the 30 s defaults.
            driver = GraphDatabase.driver(
                url,
                auth=auth,
                notifications_disabled_classifications=["UNRECOGNIZED"],
                max_transaction_retry_time=settings.neo4j_max_retry_seconds,
                connection_timeout=settings.neo4j_connection_timeout,
                connection_acquisition_timeout=settings.neo4j_connection_timeout,
            )
        except (ConfigurationError, ValueError) as e:
            raise InvalidInput(f"cannot use store URL {url!r}: {e}") from e
        try:
            return cls(driver, settings.neo4j_database)
        except BaseException:
            driver.close()
            raise

    def close(self) -> None:
        """Closes the driver and its connection pool."""
        self._driver.close()

    # plumbing

    @_translated
    def _ensure_schema(self) -> None:
        self._driver.verify_connectivity()  # fails fast, where a transaction would retry
        for statement in cypher.schema():
            try:
                self._write(_consume, statement, {})
            except ClientError as e:
                # Another process created the same constraint between check and create.
                if "EquivalentSchemaRuleAlreadyExists" not in (e.code or ""):
                    raise

    def _write(
        self,
        work: Callable[Concatenate[ManagedTransaction, P], T],
        *args: P.args,
        **kwargs: P.kwargs,
    ) -> T:
        """Runs `work` in a managed write transaction, retried on transient errors.

        A uniqueness violation means a concurrent transaction created the same node first;
        running again sees it, so that is retried a few times as well. Engine errors raised
        by `work` roll the transaction back and propagate without a retry.
        """
        attempt = 1
        while True:
            try:
                with self._driver.session(database=self._database) as session:
                    return session.execute_write(work, *args, **kwargs)
            except ConstraintError:
                if attempt >= _CONSTRAINT_ATTEMPTS:
                    raise
                attempt += 1

    def _read(self, work: Callable[[ManagedTransaction], T]) -> T:
        with self._driver.session(database=self._database) as session:
            return session.execute_read(work)

    def _query(self, query: str, **params: Any) -> list[dict[str, Any]]:
        def work(tx: ManagedTransaction) -> list[dict[str, Any]]:
            return tx.run(query, params).data()

        return self._read(work)

    def _one(self, missing: tuple[str, str], query: str, **params: Any) -> dict[str, Any]:
        """The one row `query` returns; `NotFound(*missing)` without one."""
        rows = self._query(query, **params)
        if not rows:
            raise NotFound(*missing)
        return rows[0]

    # writes

    @_translated
    def write(self, scope: Scope, batch: Batch) -> WriteResult:
        """Applies a batch in one transaction; see `GraphStore.write`."""
        return self._write(lambda tx: _apply(tx, _scope(scope), batch))

    @_translated
    def create_session(self, scope: Scope, session: Session) -> Session:
        """Creates a session and, if needed, its patient; `Conflict` if it exists."""
        params = _scope(scope) | {
            "session_id": session.session_id,
            "status": session.status.value,
            "processed_through": session.processed_through,
            "created_at": session.created_at.isoformat(),
        }

        def work(tx: ManagedTransaction) -> None:
            _lock_patient(tx, params, upsert=True)
            if tx.run(cypher.GET_SESSION, params).single() is not None:
                raise Conflict(f"session {session.session_id!r} already exists")
            tx.run(cypher.CREATE_SESSION, params).consume()

        self._write(work)
        return session

    @_translated
    def close_session(self, scope: Scope, session_id: str) -> Session:
        """Closes a session; `NotFound` if it does not exist."""
        params = _scope(scope) | {"session_id": session_id, "status": SessionStatus.CLOSED.value}

        def work(tx: ManagedTransaction) -> Session:
            record = tx.run(cypher.CLOSE_SESSION, params).single()
            if record is None:
                raise NotFound("session", session_id)
            return Session.model_validate(record["session"])

        return self._write(work)

    @_translated
    def append_messages(
        self, scope: Scope, session_id: str, messages: Sequence[NewMessage]
    ) -> list[Message]:
        """Appends messages numbered from the last `seq` + 1; see `GraphStore`."""
        params = _scope(scope) | {"session_id": session_id}

        def work(tx: ManagedTransaction) -> list[Message]:
            if not tx.run(cypher.LOCK_SESSION, params).single(strict=True)["found"]:
                raise NotFound("session", session_id)
            tail = tx.run(cypher.SESSION_TAIL, params).single(strict=True)
            if tail["status"] == SessionStatus.CLOSED.value:
                raise Conflict(f"session {session_id!r} is closed")
            added = [
                Message(
                    session_id=session_id,
                    seq=tail["last"] + i,
                    role=m.role,
                    text=m.text,
                    timestamp=m.timestamp or utcnow(),
                )
                for i, m in enumerate(messages, start=1)
            ]
            rows = [
                {
                    "seq": m.seq,
                    "role": m.role.value,
                    "text": m.text,
                    "timestamp": m.timestamp.isoformat(),
                }
                for m in added
            ]
            if rows:
                tx.run(cypher.APPEND_MESSAGES, params | {"rows": rows}).consume()
            return added

        return self._write(work)

    @_translated
    def erase_patient(self, scope: Scope) -> int:
        """Detach-deletes every node of the patient, in batches; returns nodes + edges."""
        params = _scope(scope) | {"limit": _ERASE_BATCH}

        removed = 0
        for label in cypher.ERASE_ORDER:
            nodes = _ERASE_BATCH
            while nodes == _ERASE_BATCH:
                counters = self._write(_consume, cypher.ERASE[label], params).counters
                nodes = counters.nodes_deleted
                removed += nodes + counters.relationships_deleted
        params |= {"erased": ERASED}
        anonymised = _ERASE_BATCH
        while anonymised == _ERASE_BATCH:
            summary = self._write(_consume, cypher.ANONYMISE_AUDIT, params)
            anonymised = summary.counters.properties_set
            removed += anonymised
        return removed

    @_translated
    def set_memory_paused(self, scope: Scope, paused: bool) -> None:
        """Pauses or resumes generate-memories for the patient; `NotFound` without one."""
        params = _scope(scope) | {"paused": paused}
        found = self._write(
            lambda tx: tx.run(cypher.SET_MEMORY_PAUSED, params).single(strict=True)["found"]
        )
        if not found:
            raise NotFound("patient", scope.patient)

    @_translated
    def append_audit(self, events: Sequence[AuditEvent]) -> None:
        """Appends audit events in one transaction."""
        rows = [
            e.model_dump(mode="json") | {"time": e.time.isoformat(timespec="microseconds")}
            for e in events
        ]
        if rows:
            self._write(_consume, cypher.APPEND_AUDIT, {"rows": rows})

    # reads

    @_translated
    def get_patient(self, scope: Scope) -> Patient:
        """The patient's demographics; `NotFound` when nothing of the patient exists."""
        row = self._one(("patient", scope.patient), cypher.GET_PATIENT, **_scope(scope))
        return Patient.model_validate_json(row["data"])

    @_translated
    def list_patients(self, org: str) -> list[str]:
        """The ids of the org's patients, sorted."""
        return sorted(row["patient"] for row in self._query(cypher.LIST_PATIENTS, org=org))

    @_translated
    def list_facts(
        self, scope: Scope, kind: FactKind | None = None, status: str | None = None
    ) -> list[Fact]:
        """The patient's merged facts, sorted by key, filtered after resolution."""
        kind_value = kind.value if kind else None
        rows = self._query(cypher.LIST_ASSERTIONS, **_scope(scope), kind=kind_value)
        return [f for f in _resolve_rows(rows) if status is None or f.status == status]

    @_translated
    def get_fact(self, scope: Scope, fact_key: str) -> Fact:
        """One merged fact with its sources and conflicts; `NotFound` if absent."""
        rows = self._query(cypher.FACT_ASSERTIONS, **_scope(scope), fact_key=fact_key)
        if not rows:
            raise NotFound("fact", fact_key)
        (fact,) = _resolve_rows(rows)
        return fact

    @_translated
    def list_fact_links(self, scope: Scope) -> list[FactLink]:
        """Fact-to-fact edges of the patient, sorted by from, to and type."""
        links = [
            FactLink.model_validate(r) for r in self._query(cypher.LIST_LINKS, **_scope(scope))
        ]
        return sorted(links, key=lambda link: (link.from_key, link.to_key, link.type.value))

    @_translated
    def get_session(self, scope: Scope, session_id: str) -> Session:
        """One session; `NotFound` if absent."""
        row = self._one(
            ("session", session_id), cypher.GET_SESSION, **_scope(scope), session_id=session_id
        )
        return Session.model_validate(row["session"])

    @_translated
    def list_sessions(self, scope: Scope) -> list[Session]:
        """The patient's sessions, oldest first."""
        rows = [r["session"] for r in self._query(cypher.LIST_SESSIONS, **_scope(scope))]
        rows.sort(key=lambda s: (s["created_at"], s["session_id"]))
        return [Session.model_validate(s) for s in rows]

    @_translated
    def list_messages(self, scope: Scope, session_id: str, after: int = 0) -> list[Message]:
        """The session's messages with `seq > after`, in order; `NotFound` without session."""
        params = _scope(scope) | {"session_id": session_id, "after": after}

        def work(tx: ManagedTransaction) -> list[dict[str, Any]] | None:
            if tx.run(cypher.GET_SESSION, params).single() is None:
                return None
            return tx.run(cypher.LIST_MESSAGES, params).data()

        rows = self._read(work)
        if rows is None:
            raise NotFound("session", session_id)
        return [Message.model_validate(r["message"]) for r in rows]

    @_translated
    def list_memories(self, scope: Scope, type: MemoryType | None = None) -> list[MemoryRecord]:
        """Memories with their relationships (by fact key), most recent first."""
        type_value = type.value if type else None
        rows = self._query(cypher.LIST_MEMORIES, **_scope(scope), type=type_value)
        rows.sort(key=lambda r: r["memory_id"])
        rows.sort(key=lambda r: r["created_at"], reverse=True)  # stable: ties keep id order
        return [
            MemoryRecord(
                memory=Memory.model_validate_json(r["data"]),
                relationships=tuple(
                    Relationship.model_validate_json(data) for _, data in sorted(r["relationships"])
                ),
            )
            for r in rows
        ]

    @_translated
    def get_memory(self, scope: Scope, memory_id: str) -> Memory:
        """One memory; `NotFound` if absent."""
        row = self._one(
            ("memory", memory_id), cypher.GET_MEMORY, **_scope(scope), memory_id=memory_id
        )
        return Memory.model_validate_json(row["data"])

    @_translated
    def is_memory_paused(self, scope: Scope) -> bool:
        """Whether generate-memories is paused for the patient."""
        rows = self._query(cypher.MEMORY_PAUSED, **_scope(scope))
        return bool(rows and rows[0]["paused"])

    @_translated
    def list_audit(
        self, org: str, patient: str | None = None, limit: int = 100
    ) -> list[AuditEvent]:
        """The org's audit events, optionally of one patient, most recent first."""
        rows = self._query(cypher.LIST_AUDIT, org=org, patient=patient, limit=limit)
        return [AuditEvent.model_validate(r["event"]) for r in rows]

    @_translated
    def count_patient_items(self, scope: Scope) -> int:
        """Nodes of the patient plus the edges that leave them; 0 after erasure."""
        return sum(row["items"] for row in self._query(cypher.COUNT_ITEMS, **_scope(scope)))


def _consume(tx: ManagedTransaction, statement: str, params: Params) -> ResultSummary:
    return tx.run(statement, params).consume()


def _resolve_rows(rows: list[dict[str, Any]]) -> list[Fact]:
    grouped: dict[str, list[tuple[Source, Claim]]] = {}
    for row in rows:
        pair = (Source.model_validate_json(row["source"]), Claim.model_validate_json(row["claim"]))
        grouped.setdefault(row["fact_key"], []).append(pair)
    return [resolve(grouped[key]) for key in sorted(grouped)]


# the write transaction


def _lock_patient(
    tx: ManagedTransaction, params: Params, *, upsert: bool, data: str | None = None
) -> None:
    """Locks the patient's node until the transaction ends, creating it if `upsert`."""
    if upsert:
        empty = Patient().model_dump_json()
        tx.run(cypher.MERGE_PATIENT, params | {"empty": empty, "data": data}).consume()
    else:
        tx.run(cypher.LOCK_PATIENT, params).consume()


def _apply(tx: ManagedTransaction, params: Params, batch: Batch) -> WriteResult:
    counts: Counter[str] = Counter()
    data = batch.patient.model_dump_json() if batch.patient is not None else None
    _lock_patient(tx, params, upsert=batch.patient is not None or bool(batch.sources), data=data)
    if batch.sources:
        _upsert_sources(tx, params, batch.sources, counts)
    if batch.fact_links:
        _merge_links(tx, params, batch.fact_links, counts)
    if batch.memories:
        _append_memories(tx, params, batch.memories, counts)
    if batch.relationships:
        _relate(tx, params, batch.relationships, counts)
    if batch.watermark is not None:
        mark = batch.watermark
        moved = tx.run(
            cypher.MOVE_WATERMARK,
            params | {"session_id": mark.session_id, "expected": mark.expected, "new": mark.new},
        ).single(strict=True)["moved"]
        if not moved:
            raise Conflict(f"session {mark.session_id!r} watermark moved since it was read; retry")
    return WriteResult(**counts)


def _upsert_sources(
    tx: ManagedTransaction, params: Params, items: Sequence[SourceClaims], counts: Counter[str]
) -> None:
    """Merges sources by `source_ref`, with the counts and end state of SQLite's sequence.

    What to write is decided in Python from one read of the stored sources and facts, then
    written as four batched statements; the patient lock keeps those reads current.
    """
    refs = sorted({item.source.source_ref for item in items})
    stored = {r["ref"]: r for r in tx.run(cypher.STORED_SOURCES, params | {"refs": refs})}
    accepted = _accept(items, stored, counts)
    if not accepted:
        return
    by_source = {ref: set(stored[ref]["fact_keys"]) for ref in stored}
    keys = {c.fact_key for item in accepted for c in item.claims}
    keys.update(k for item in accepted for k in by_source.get(item.source.source_ref, ()))
    facts = tx.run(cypher.FACT_STATE, params | {"keys": sorted(keys)}).data()
    removed = _replay(accepted, by_source, facts, counts)
    final = {item.source.source_ref: item for item in accepted}
    tx.run(
        cypher.UPSERT_SOURCES, params | {"rows": [_source_row(i.source) for i in final.values()]}
    ).consume()
    tx.run(cypher.UNASSERT, params | {"refs": sorted(final)}).consume()
    if removed:
        tx.run(cypher.DROP_ORPHANS, params | {"keys": sorted(removed)}).consume()
    claims = {(ref, c.fact_key): c for ref, item in final.items() for c in item.claims}
    rows = [
        {"source_ref": ref, "fact_key": key, "kind": c.kind.value, "claim": c.model_dump_json()}
        for (ref, key), c in claims.items()
    ]
    tx.run(cypher.ASSERT, params | {"rows": rows}).consume()


def _source_row(source: Source) -> Params:
    return {
        "source_ref": source.source_ref,
        "content_hash": source.content_hash,
        "last_updated": source.last_updated.isoformat() if source.last_updated else None,
        "data": source.model_dump_json(),
    }


def _utc(moment: datetime) -> datetime:
    # A naive timestamp is taken as UTC, so that naive and aware ones compare.
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _accept(
    items: Sequence[SourceClaims], stored: dict[str, Any], counts: Counter[str]
) -> list[SourceClaims]:
    """The sources that replace or add to what is stored, in order; counts the others."""
    state: dict[str, tuple[str, datetime | None]] = {
        ref: (
            r["content_hash"],
            datetime.fromisoformat(r["last_updated"]) if r["last_updated"] else None,
        )
        for ref, r in stored.items()
    }
    accepted = []
    for item in items:
        source = item.source
        old = state.get(source.source_ref)
        if old is not None:
            old_hash, old_updated = old
            if old_hash == source.content_hash:
                counts["sources_unchanged"] += 1
                continue
            if (
                old_updated
                and source.last_updated
                and _utc(source.last_updated) < _utc(old_updated)
            ):
                counts["sources_stale"] += 1
                continue
            counts["sources_replaced"] += 1
        else:
            counts["sources_added"] += 1
        state[source.source_ref] = (source.content_hash, source.last_updated)
        accepted.append(item)
    return accepted


def _replay(
    accepted: list[SourceClaims],
    by_source: dict[str, set[str]],
    facts: list[dict[str, Any]],
    counts: Counter[str],
) -> set[str]:
    """Applies the sources one by one to the facts' state, counting as SQLite does.

    Returns the keys of facts left with no source and no memory relationship on the way
    (a later source of the batch may assert such a key again: it is then a new fact).
    """
    asserters = {f["key"]: set(f["refs"]) for f in facts}
    related = {f["key"] for f in facts if f["related"]}
    removed: set[str] = set()
    for item in accepted:
        ref = item.source.source_ref
        previous = by_source.get(ref, set())
        for key in previous:
            asserters[key].discard(ref)
        now: set[str] = set()
        for claim in item.claims:
            key = claim.fact_key
            if key not in asserters:
                asserters[key] = set()
                counts["facts_added"] += 1
            elif key not in previous and asserters[key]:
                counts["facts_merged"] += 1
            asserters[key].add(ref)
            now.add(key)
        by_source[ref] = now
        for key in previous - now:
            if not asserters[key] and key not in related:
                del asserters[key]
                removed.add(key)
                counts["facts_removed"] += 1
    return removed


def _merge_links(
    tx: ManagedTransaction, params: Params, links: Sequence[FactLink], counts: Counter[str]
) -> None:
    keys = sorted({k for link in links for k in (link.from_key, link.to_key)})
    found = {r["key"] for r in tx.run(cypher.EXISTING_FACTS, params | {"keys": keys})}
    known = [link for link in links if {link.from_key, link.to_key} <= found]
    counts["links_skipped"] += len(links) - len(known)
    for type in FactLinkType:
        rows = [{"from_key": k.from_key, "to_key": k.to_key} for k in known if k.type is type]
        if rows:
            summary = tx.run(cypher.LINKS[type], params | {"rows": rows}).consume()
            counts["links_added"] += summary.counters.relationships_created


def _append_memories(
    tx: ManagedTransaction, params: Params, memories: Sequence[Memory], counts: Counter[str]
) -> None:
    session_ids = sorted({m.session_id for m in memories})
    sessions = {r["id"] for r in tx.run(cypher.EXISTING_SESSIONS, params | {"ids": session_ids})}
    ids = [m.memory_id for m in memories]
    taken = {r["id"] for r in tx.run(cypher.EXISTING_MEMORIES, params | {"ids": ids})}
    for memory in memories:
        if memory.session_id not in sessions:
            raise NotFound("session", memory.session_id)
        if memory.memory_id in taken:
            raise Conflict(f"memory {memory.memory_id!r} already exists")
        taken.add(memory.memory_id)
    rows = [
        {
            "memory_id": m.memory_id,
            "session_id": m.session_id,
            "type": m.type.value,
            "created_at": m.created_at.isoformat(),
            "data": m.model_dump_json(),
        }
        for m in memories
    ]
    tx.run(cypher.CREATE_MEMORIES, params | {"rows": rows}).consume()
    counts["memories_added"] += len(rows)


def _relate(
    tx: ManagedTransaction, params: Params, rels: Sequence[Relationship], counts: Counter[str]
) -> None:
    pairs = [{"i": i, "memory_id": r.memory_id, "fact_key": r.fact_key} for i, r in enumerate(rels)]
    ok = {r["i"]: r["ok"] for r in tx.run(cypher.RELATABLE, params | {"rows": pairs})}
    seen: set[tuple[str, str]] = set()
    for i, rel in enumerate(rels):
        pair = (rel.memory_id, rel.fact_key)
        if not ok[i] or pair in seen:
            raise Conflict(
                f"relationship {rel.memory_id!r} → {rel.fact_key!r} exists or names an unknown"
                " memory or fact"
            )
        seen.add(pair)
    for type in RelationshipType:
        rows = [
            {
                "memory_id": r.memory_id,
                "fact_key": r.fact_key,
                "rationale": r.rationale,
                "confidence": r.confidence,
                "method": r.method,
                "data": r.model_dump_json(),
            }
            for r in rels
            if r.type is type
        ]
        if rows:
            tx.run(cypher.RELATES[type], params | {"rows": rows}).consume()
    counts["relationships_added"] += len(rels)
