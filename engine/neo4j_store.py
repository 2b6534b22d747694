"""The server GraphStore: Neo4j through the official driver, one managed transaction per batch
(or per `write_many`).

Every write transaction first takes a write lock on the patient's node (or the session's,
for messages; the nodes of all its patients, in sorted order, for `write_many`), so writes
to one patient are serialised as SQLite serialises all writes: the reads a write decides on
cannot change under it, and uniqueness constraints remain as a backstop. Cypher lives in
`engine.cypher`, the write transactions in `engine.neo4j_write`; this is the only module
that imports `neo4j`."""

import functools
import threading
from collections.abc import Callable, Sequence
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

from engine import cypher, cypher_view, neo4j_reviews, neo4j_write
from engine.as_of import AsOf, known, known_claims
from engine.audit import ERASED, AuditEvent
from engine.errors import Conflict, EngineError, InvalidInput, NotFound, StoreUnavailable
from engine.models import (
    Batch,
    Claim,
    Fact,
    FactKind,
    FactLink,
    Memory,
    MemoryRecord,
    MemoryReview,
    MemoryType,
    Message,
    NewMessage,
    Patient,
    Relationship,
    Scope,
    Session,
    Source,
    WriteResult,
)
from engine.neo4j_write import Params
from engine.resolution import resolve
from engine.settings import get_settings
from engine.store import PatientView, ViewRequest

P = ParamSpec("P")
T = TypeVar("T")

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

    overlapped_writes = True  # a write waits on the server's statements and commit

    def __init__(self, driver: Driver, database: str | None = None, wait: bool = False) -> None:
        """Wraps a driver and creates the uniqueness constraints if they are missing.

        Args:
            driver: the driver to use (closed by `close`).
            database: the database, else the server's default.
            wait: open even while the server is down; the constraints are then created
                by the first call that reaches it (a server process starting before its
                database does, as after a host reboot).

        Raises:
            StoreUnavailable: when the server cannot be reached and `wait` is false.
        """
        self._driver = driver
        self._database = database
        self._schema_lock = threading.Lock()
        self._schema_ready = False
        try:
            self._ensure_schema()
        except StoreUnavailable:
            if not wait:
                raise

    @classmethod
    def from_url(cls, url: str, wait: bool = False) -> "Neo4jStore":
        """Connects to `neo4j://`, `bolt://` (and `+s`, `+ssc`) URLs.

        User, password and database come from the settings; an empty password means the
        server runs without authentication.

        Args:
            url: the server's URL.
            wait: open even while the server is down (see `Neo4jStore`).

        Raises:
            InvalidInput: for a URL the driver cannot use.
            StoreUnavailable: when the server cannot be reached and `wait` is false.
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
            return cls(driver, settings.neo4j_database, wait)
        except BaseException:
            driver.close()
            raise

    def close(self) -> None:
        """Closes the driver and its connection pool."""
        self._driver.close()

    # plumbing

    @_translated
    def _ensure_schema(self) -> None:
        """Creates the constraints and indexes once per store, on the first call that can."""
        with self._schema_lock:
            if self._schema_ready:
                return
            self._driver.verify_connectivity()  # fails fast, where a transaction would retry
            for statement in cypher.schema():
                try:
                    with self._driver.session(database=self._database) as session:
                        session.execute_write(_consume, statement, {})
                except ClientError as e:
                    # Another process created the same constraint between check and create.
                    if "EquivalentSchemaRuleAlreadyExists" not in (e.code or ""):
                        raise
            self._schema_ready = True

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
        if not self._schema_ready:
            self._ensure_schema()
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
        if not self._schema_ready:
            self._ensure_schema()
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

    def write(self, scope: Scope, batch: Batch) -> WriteResult:
        """Applies a batch in one transaction; see `GraphStore.write`."""
        return self.write_many([(scope, batch)])[0]

    @_translated
    def write_many(self, writes: Sequence[tuple[Scope, Batch]]) -> list[WriteResult]:
        """Applies batches in order in one transaction; see `GraphStore.write_many`."""
        return self._write(neo4j_write.apply_batches, [(_scope(s), b) for s, b in writes])

    @_translated
    def create_session(self, scope: Scope, session: Session) -> Session:
        """Creates a session and, if needed, its patient; `Conflict` if it exists."""
        self._write(neo4j_write.create_session, _scope(scope), session)
        return session

    @_translated
    def close_session(self, scope: Scope, session_id: str) -> Session:
        """Closes a session; `NotFound` if it does not exist."""
        return self._write(neo4j_write.close_session, _scope(scope), session_id)

    @_translated
    def append_messages(
        self, scope: Scope, session_id: str, messages: Sequence[NewMessage]
    ) -> list[Message]:
        """Appends messages numbered from the last `seq` + 1; see `GraphStore`."""
        return self._write(neo4j_write.append_messages, _scope(scope), session_id, messages)

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
    def add_review(self, scope: Scope, review: MemoryReview) -> MemoryReview:
        """Appends a review to a memory; see `GraphStore.add_review`."""
        self._write(neo4j_reviews.add_review, _scope(scope), review)
        return review

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
        self,
        scope: Scope,
        kind: FactKind | None = None,
        status: str | None = None,
        as_of: AsOf = None,
    ) -> list[Fact]:
        """The patient's merged facts, sorted by key, filtered after resolution."""
        kind_value = kind.value if kind else None
        rows = self._query(cypher.LIST_ASSERTIONS, **_scope(scope), kind=kind_value)
        return [f for f in _resolve_rows(rows, as_of) if status is None or f.status == status]

    @_translated
    def get_fact(self, scope: Scope, fact_key: str, as_of: AsOf = None) -> Fact:
        """One merged fact with its sources and conflicts; `NotFound` if absent."""
        rows = self._query(cypher.FACT_ASSERTIONS, **_scope(scope), fact_key=fact_key)
        facts = _resolve_rows(rows, as_of)
        if not facts:
            raise NotFound("fact", fact_key)
        return facts[0]

    @_translated
    def list_fact_links(self, scope: Scope) -> list[FactLink]:
        """Fact-to-fact edges of the patient, sorted by from, to and type."""
        return _links(self._query(cypher.LIST_LINKS, **_scope(scope)))

    @_translated
    def get_session(self, scope: Scope, session_id: str) -> Session:
        """One session; `NotFound` if absent."""
        row = self._one(
            ("session", session_id), cypher.GET_SESSION, **_scope(scope), session_id=session_id
        )
        return Session.model_validate(row["session"])

    @_translated
    def list_sessions(self, scope: Scope, as_of: AsOf = None) -> list[Session]:
        """The patient's sessions (created by `as_of`, if given), oldest first."""
        rows = [r["session"] for r in self._query(cypher.LIST_SESSIONS, **_scope(scope))]
        return _sessions(rows, as_of)

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
    def list_memories(
        self, scope: Scope, type: MemoryType | None = None, as_of: AsOf = None
    ) -> list[MemoryRecord]:
        """Memories (created by `as_of`, if given) with their relationships and reviews, most
        recent first."""
        type_value = type.value if type else None
        rows = self._query(cypher.LIST_MEMORIES, **_scope(scope), type=type_value)
        return _memory_records(rows, as_of)

    @_translated
    def read_view(self, scope: Scope, request: ViewRequest, as_of: AsOf = None) -> PatientView:
        """The patient and what `request` names in one statement; see `GraphStore`."""
        kinds = sorted(kind.value for kind in request.kinds)
        statement = cypher_view.view(bool(kinds), request.links, request.memories, request.sessions)
        row = self._one(("patient", scope.patient), statement, **_scope(scope), kinds=kinds)
        facts: dict[FactKind, list[Fact]] = {kind: [] for kind in request.kinds}
        for fact in _resolve_rows(row.get("assertions", []), as_of):
            facts[fact.kind].append(fact)
        return PatientView(
            patient=Patient.model_validate_json(row["data"]),
            facts=facts,
            links=_links(row["links"]) if request.links else None,
            memories=_memory_records(row["memories"], as_of) if request.memories else None,
            sessions=_sessions(row["sessions"], as_of) if request.sessions else None,
        )

    @_translated
    def list_reviews(self, scope: Scope, memory_id: str) -> list[MemoryReview]:
        """A memory's reviews, oldest first; `NotFound` if the memory is absent."""
        reviews = self._read(lambda tx: neo4j_reviews.list_reviews(tx, _scope(scope), memory_id))
        if reviews is None:
            raise NotFound("memory", memory_id)
        return reviews

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


def _resolve_rows(rows: list[dict[str, Any]], as_of: AsOf) -> list[Fact]:
    grouped: dict[str, list[tuple[Source, Claim]]] = {}
    for row in rows:
        pair = (Source.model_validate_json(row["source"]), Claim.model_validate_json(row["claim"]))
        grouped.setdefault(row["fact_key"], []).append(pair)
    known_pairs = (known_claims(grouped[key], as_of) for key in sorted(grouped))
    return [resolve(pairs) for pairs in known_pairs if pairs]


def _links(rows: list[dict[str, Any]]) -> list[FactLink]:
    links = [FactLink.model_validate(r) for r in rows]
    return sorted(links, key=lambda link: (link.from_key, link.to_key, link.type.value))


def _sessions(rows: list[dict[str, Any]], as_of: AsOf) -> list[Session]:
    rows = sorted(rows, key=lambda s: (s["created_at"], s["session_id"]))
    sessions = [Session.model_validate(s) for s in rows]
    return [s for s in sessions if known(s.created_at, as_of)]


def _memory_records(rows: list[dict[str, Any]], as_of: AsOf) -> list[MemoryRecord]:
    """Memories most recent first (ties in id order), with what was known by `as_of`."""
    rows = sorted(rows, key=lambda r: r["memory_id"])
    rows.sort(key=lambda r: r["created_at"], reverse=True)  # stable: ties keep id order
    records = [
        MemoryRecord(
            memory=Memory.model_validate_json(r["data"]),
            relationships=tuple(
                Relationship.model_validate_json(data) for _, data in sorted(r["relationships"])
            ),
            reviews=tuple(
                v for v in neo4j_reviews.ordered(r["reviews"]) if known(v.created_at, as_of)
            ),
        )
        for r in rows
    ]
    return [r for r in records if known(r.memory.created_at, as_of)]
