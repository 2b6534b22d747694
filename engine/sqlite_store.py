"""The embedded GraphStore: one SQLite file, WAL, foreign keys, one transaction per batch
(or per `write_many`)."""

import json
import sqlite3
import threading
import uuid
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from engine import sqlite_reviews, sqlite_schema, sqlite_write
from engine.as_of import AsOf, known, known_claims
from engine.audit import AuditEvent
from engine.errors import InvalidInput, NotFound
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
    SessionStatus,
    Source,
    WriteResult,
)
from engine.resolution import resolve
from engine.sqlite_write import load_session, session_from_row
from engine.store import PatientView, ViewRequest


class SqliteStore:
    """GraphStore on SQLite; a connection per thread, so a web server's threads can share it."""

    # A write is this process's own work, and a writing thread would open a connection of
    # its own per ingest (and meet an in-memory database's table locks).
    overlapped_writes = False

    def __init__(self, path: str) -> None:
        # An in-memory database is shared by the threads' connections through a named URI,
        # named afresh: an `id()` is reused while a dropped store's connection may live on.
        if path == ":memory:":
            path = f"file:cce-{uuid.uuid4().hex}?mode=memory&cache=shared"
        self._path = path
        self._local = threading.local()
        self._connections: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        self._db().executescript(sqlite_schema.SCHEMA)

    @classmethod
    def from_url(cls, url: str) -> "SqliteStore":
        """Opens `sqlite:///relative.db`, `sqlite:////absolute.db` or `sqlite:///:memory:`."""
        path = url.removeprefix("sqlite://").removeprefix("/")
        if not path:
            raise InvalidInput(f"store URL {url!r} names no file: use sqlite:///path.db")
        if path != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        return cls(path)

    def _db(self) -> sqlite3.Connection:
        db: sqlite3.Connection | None = getattr(self._local, "db", None)
        if db is None:
            db = sqlite3.connect(
                self._path, timeout=60, isolation_level=None, check_same_thread=False, uri=True
            )
            db.row_factory = sqlite3.Row
            for pragma in sqlite_schema.PRAGMAS:
                db.execute(pragma)
            self._local.db = db
            with self._lock:
                self._connections.append(db)
        return db

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        db = self._db()
        db.execute("BEGIN IMMEDIATE")
        try:
            yield db
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")

    def close(self) -> None:
        with self._lock:
            for db in self._connections:
                db.close()
            self._connections.clear()
        self._local = threading.local()

    # writes

    def write(self, scope: Scope, batch: Batch) -> WriteResult:
        return self.write_many([(scope, batch)])[0]

    def write_many(self, writes: Sequence[tuple[Scope, Batch]]) -> list[WriteResult]:
        with self._transaction() as db:
            return [sqlite_write.apply_batch(db, (s.org, s.patient), b) for s, b in writes]

    def create_session(self, scope: Scope, session: Session) -> Session:
        with self._transaction() as db:
            sqlite_write.create_session(db, (scope.org, scope.patient), session)
        return session

    def close_session(self, scope: Scope, session_id: str) -> Session:
        with self._transaction() as db:
            cursor = db.execute(
                "UPDATE sessions SET status = ? WHERE org = ? AND patient = ? AND session_id = ?",
                (SessionStatus.CLOSED.value, scope.org, scope.patient, session_id),
            )
            if cursor.rowcount == 0:
                raise NotFound("session", session_id)
        return self.get_session(scope, session_id)

    def append_messages(
        self, scope: Scope, session_id: str, messages: Sequence[NewMessage]
    ) -> list[Message]:
        with self._transaction() as db:
            return sqlite_write.append_messages(db, scope, session_id, messages)

    def erase_patient(self, scope: Scope) -> int:
        with self._transaction() as db:
            removed = 0
            for table in sqlite_schema.ERASE_ORDER:
                cursor = db.execute(
                    f"DELETE FROM {table} WHERE org = ? AND patient = ?",  # noqa: S608 fixed names
                    (scope.org, scope.patient),
                )
                removed += cursor.rowcount
            removed += db.execute(
                sqlite_schema.ANONYMISE_AUDIT, (scope.org, scope.patient)
            ).rowcount
        # secure_delete zeroes deleted cells and freed pages, but page balancing leaves
        # stale copies of cells in the unused space of b-tree pages, which only a rebuild
        # removes; the checkpoint then empties the WAL of the old page images.
        if "mode=memory" not in self._path:
            self._db().execute("VACUUM")
        self._db().execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return removed

    def add_review(self, scope: Scope, review: MemoryReview) -> MemoryReview:
        with self._transaction() as db:
            sqlite_reviews.add_review(db, scope, review)
        return review

    def set_memory_paused(self, scope: Scope, paused: bool) -> None:
        with self._transaction() as db:
            if _patient_row(db, scope) is None:
                raise NotFound("patient", scope.patient)
            db.execute(
                "INSERT INTO patient_flags VALUES (?, ?, ?) ON CONFLICT (org, patient)"
                " DO UPDATE SET memory_paused = excluded.memory_paused",
                (scope.org, scope.patient, int(paused)),
            )

    def append_audit(self, events: Sequence[AuditEvent]) -> None:
        rows = [
            (
                e.org,
                e.event_id,
                e.patient,
                e.time.isoformat(timespec="microseconds"),
                e.actor,
                e.action,
                e.outcome,
                e.correlation_id,
            )
            for e in events
        ]
        with self._transaction() as db:
            db.executemany(sqlite_schema.INSERT_AUDIT, rows)

    # reads

    def get_patient(self, scope: Scope) -> Patient:
        row = _patient_row(self._db(), scope)
        if row is None:
            raise NotFound("patient", scope.patient)
        return Patient.model_validate_json(row["data"])

    def list_patients(self, org: str) -> list[str]:
        rows = self._db().execute(
            "SELECT patient FROM patients WHERE org = ? ORDER BY patient", (org,)
        )
        return [row["patient"] for row in rows]

    def list_facts(
        self,
        scope: Scope,
        kind: FactKind | None = None,
        status: str | None = None,
        as_of: AsOf = None,
    ) -> list[Fact]:
        facts = self._facts(scope, {kind} if kind else set(FactKind), as_of)
        return [f for f in facts if status is None or f.status == status]

    def _facts(self, scope: Scope, kinds: Iterable[FactKind], as_of: AsOf) -> list[Fact]:
        """The merged facts of some kinds, sorted by key, in one query."""
        kinds_json = json.dumps(sorted(kind.value for kind in kinds))
        rows = self._db().execute(
            sqlite_schema.SELECT_KINDS, (scope.org, scope.patient, kinds_json)
        )
        return _resolve_rows(rows, as_of)

    def get_fact(self, scope: Scope, fact_key: str, as_of: AsOf = None) -> Fact:
        sql = sqlite_schema.SELECT_ASSERTIONS + " AND f.fact_key = ?"
        rows = self._db().execute(sql, (scope.org, scope.patient, fact_key))
        facts = _resolve_rows(rows, as_of)
        if not facts:
            raise NotFound("fact", fact_key)
        return facts[0]

    def read_view(self, scope: Scope, request: ViewRequest, as_of: AsOf = None) -> PatientView:
        """The reads of `compose_view` inside one read transaction, so one snapshot, with
        the facts of every kind asked for in one query."""
        db = self._db()
        db.execute("BEGIN")
        try:
            patient = self.get_patient(scope)
            facts: dict[FactKind, list[Fact]] = {kind: [] for kind in request.kinds}
            for fact in self._facts(scope, request.kinds, as_of) if request.kinds else ():
                facts[fact.kind].append(fact)
            return PatientView(
                patient=patient,
                facts=facts,
                links=self.list_fact_links(scope) if request.links else None,
                memories=self.list_memories(scope, as_of=as_of) if request.memories else None,
                sessions=self.list_sessions(scope, as_of=as_of) if request.sessions else None,
            )
        finally:
            db.execute("COMMIT")

    def list_fact_links(self, scope: Scope) -> list[FactLink]:
        rows = self._db().execute(
            "SELECT from_key, to_key, type FROM fact_links WHERE org = ? AND patient = ?"
            " ORDER BY from_key, to_key, type",
            (scope.org, scope.patient),
        )
        return [FactLink(from_key=r[0], to_key=r[1], type=r[2]) for r in rows]

    def get_session(self, scope: Scope, session_id: str) -> Session:
        return load_session(self._db(), scope, session_id)

    def list_sessions(self, scope: Scope, as_of: AsOf = None) -> list[Session]:
        rows = self._db().execute(
            "SELECT * FROM sessions WHERE org = ? AND patient = ? ORDER BY created_at, session_id",
            (scope.org, scope.patient),
        )
        sessions = [session_from_row(row) for row in rows]
        return [s for s in sessions if known(s.created_at, as_of)]

    def list_messages(self, scope: Scope, session_id: str, after: int = 0) -> list[Message]:
        load_session(self._db(), scope, session_id)
        rows = self._db().execute(
            "SELECT session_id, seq, role, text, timestamp FROM messages"
            " WHERE org = ? AND patient = ? AND session_id = ? AND seq > ? ORDER BY seq",
            (scope.org, scope.patient, session_id, after),
        )
        return [Message.model_validate(dict(row)) for row in rows]

    def list_memories(
        self, scope: Scope, type: MemoryType | None = None, as_of: AsOf = None
    ) -> list[MemoryRecord]:
        type_value = type.value if type else None
        db = self._db()
        memories = db.execute(
            "SELECT data FROM memories WHERE org = ? AND patient = ? AND (? IS NULL OR type = ?)"
            " ORDER BY created_at DESC, memory_id",
            (scope.org, scope.patient, type_value, type_value),
        ).fetchall()
        relationships: dict[str, list[Relationship]] = {}
        for row in db.execute(
            "SELECT data FROM relationships WHERE org = ? AND patient = ? ORDER BY fact_key",
            (scope.org, scope.patient),
        ):
            rel = Relationship.model_validate_json(row["data"])
            relationships.setdefault(rel.memory_id, []).append(rel)
        reviews = sqlite_reviews.reviews_by_memory(db, scope)
        records = []
        for row in memories:
            memory = Memory.model_validate_json(row["data"])
            if not known(memory.created_at, as_of):
                continue
            rels = tuple(relationships.get(memory.memory_id, ()))
            own = tuple(r for r in reviews.get(memory.memory_id, ()) if known(r.created_at, as_of))
            records.append(MemoryRecord(memory=memory, relationships=rels, reviews=own))
        return records

    def get_memory(self, scope: Scope, memory_id: str) -> Memory:
        row = (
            self._db()
            .execute(
                "SELECT data FROM memories WHERE org = ? AND patient = ? AND memory_id = ?",
                (scope.org, scope.patient, memory_id),
            )
            .fetchone()
        )
        if row is None:
            raise NotFound("memory", memory_id)
        return Memory.model_validate_json(row["data"])

    def list_reviews(self, scope: Scope, memory_id: str) -> list[MemoryReview]:
        return sqlite_reviews.list_reviews(self._db(), scope, memory_id)

    def count_patient_items(self, scope: Scope) -> int:
        db = self._db()
        key = (scope.org, scope.patient)
        rows = sum(
            db.execute(
                f"SELECT COUNT(*) FROM {table} WHERE org = ? AND patient = ?",  # noqa: S608
                key,
            ).fetchone()[0]
            for table in sqlite_schema.ERASE_ORDER
        )
        count: int = rows + db.execute(sqlite_schema.COUNT_AUDIT, key).fetchone()[0]
        return count

    def is_memory_paused(self, scope: Scope) -> bool:
        row = (
            self._db()
            .execute(
                "SELECT memory_paused FROM patient_flags WHERE org = ? AND patient = ?",
                (scope.org, scope.patient),
            )
            .fetchone()
        )
        return bool(row and row[0])

    def list_audit(
        self, org: str, patient: str | None = None, limit: int = 100
    ) -> list[AuditEvent]:
        rows = self._db().execute(sqlite_schema.SELECT_AUDIT, (org, patient, patient, limit))
        return [AuditEvent.model_validate(dict(row)) for row in rows]


def _patient_row(db: sqlite3.Connection, scope: Scope) -> sqlite3.Row | None:
    row: sqlite3.Row | None = db.execute(
        "SELECT data FROM patients WHERE org = ? AND patient = ?", (scope.org, scope.patient)
    ).fetchone()
    return row


def _resolve_rows(rows: Iterator[sqlite3.Row] | sqlite3.Cursor, as_of: AsOf) -> list[Fact]:
    grouped: dict[str, list[tuple[Source, Claim]]] = {}
    for row in rows:
        pair = (Source.model_validate_json(row["source"]), Claim.model_validate_json(row["claim"]))
        grouped.setdefault(row["fact_key"], []).append(pair)
    known_pairs = (known_claims(pairs, as_of) for pairs in grouped.values())
    return [resolve(pairs) for pairs in known_pairs if pairs]
