"""The embedded GraphStore: one SQLite file, WAL, foreign keys, one transaction per batch."""

import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from engine import sqlite_schema
from engine.audit import AuditEvent
from engine.errors import Conflict, InvalidInput, NotFound
from engine.models import (
    Batch,
    Claim,
    Fact,
    FactKind,
    FactLink,
    Memory,
    MemoryRecord,
    MemoryType,
    Message,
    NewMessage,
    Patient,
    Relationship,
    Scope,
    Session,
    SessionStatus,
    Source,
    SourceClaims,
    Watermark,
    WriteResult,
    utcnow,
)
from engine.resolution import resolve


class SqliteStore:
    """GraphStore on SQLite; a connection per thread, so a web server's threads can share it."""

    def __init__(self, path: str) -> None:
        # An in-memory database is shared by the threads' connections through a named URI.
        self._path = f"file:cce-{id(self)}?mode=memory&cache=shared" if path == ":memory:" else path
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
        counts: dict[str, int] = {}
        with self._transaction() as db:
            key = (scope.org, scope.patient)
            if batch.patient is not None or batch.sources:
                _upsert_patient(db, key, batch.patient)
            for item in batch.sources:
                _upsert_source(db, key, item, counts)
            for link in batch.fact_links:
                _add_link(db, key, link, counts)
            if batch.memories or batch.relationships:
                _append_memories(db, key, batch, counts)
            if batch.watermark is not None:
                _move_watermark(db, key, batch.watermark)
        return WriteResult(**counts)

    def create_session(self, scope: Scope, session: Session) -> Session:
        with self._transaction() as db:
            _upsert_patient(db, (scope.org, scope.patient), None)
            try:
                db.execute(
                    "INSERT INTO sessions VALUES (?, ?, ?, ?, ?, ?)",
                    (
                        scope.org,
                        scope.patient,
                        session.session_id,
                        session.status.value,
                        session.processed_through,
                        session.created_at.isoformat(),
                    ),
                )
            except sqlite3.IntegrityError as e:
                raise Conflict(f"session {session.session_id!r} already exists") from e
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
            session = _session(db, scope, session_id)
            if session.status is SessionStatus.CLOSED:
                raise Conflict(f"session {session_id!r} is closed")
            (last,) = db.execute(
                "SELECT COALESCE(MAX(seq), 0) FROM messages"
                " WHERE org = ? AND patient = ? AND session_id = ?",
                (scope.org, scope.patient, session_id),
            ).fetchone()
            added = [
                Message(
                    session_id=session_id,
                    seq=last + i,
                    role=m.role,
                    text=m.text,
                    timestamp=m.timestamp or utcnow(),
                )
                for i, m in enumerate(messages, start=1)
            ]
            db.executemany(
                "INSERT INTO messages VALUES (?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        scope.org,
                        scope.patient,
                        session_id,
                        m.seq,
                        m.role.value,
                        m.text,
                        m.timestamp.isoformat(),
                    )
                    for m in added
                ],
            )
        return added

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
        self, scope: Scope, kind: FactKind | None = None, status: str | None = None
    ) -> list[Fact]:
        sql = sqlite_schema.SELECT_ASSERTIONS + " AND (? IS NULL OR f.kind = ?) ORDER BY f.fact_key"
        kind_value = kind.value if kind else None
        rows = self._db().execute(sql, (scope.org, scope.patient, kind_value, kind_value))
        facts = _resolve_rows(rows)
        return [f for f in facts if status is None or f.status == status]

    def get_fact(self, scope: Scope, fact_key: str) -> Fact:
        sql = sqlite_schema.SELECT_ASSERTIONS + " AND f.fact_key = ?"
        facts = _resolve_rows(self._db().execute(sql, (scope.org, scope.patient, fact_key)))
        if not facts:
            raise NotFound("fact", fact_key)
        return facts[0]

    def list_fact_links(self, scope: Scope) -> list[FactLink]:
        rows = self._db().execute(
            "SELECT from_key, to_key, type FROM fact_links WHERE org = ? AND patient = ?"
            " ORDER BY from_key, to_key, type",
            (scope.org, scope.patient),
        )
        return [FactLink(from_key=r[0], to_key=r[1], type=r[2]) for r in rows]

    def get_session(self, scope: Scope, session_id: str) -> Session:
        return _session(self._db(), scope, session_id)

    def list_sessions(self, scope: Scope) -> list[Session]:
        rows = self._db().execute(
            "SELECT * FROM sessions WHERE org = ? AND patient = ? ORDER BY created_at, session_id",
            (scope.org, scope.patient),
        )
        return [_session_from_row(row) for row in rows]

    def list_messages(self, scope: Scope, session_id: str, after: int = 0) -> list[Message]:
        _session(self._db(), scope, session_id)
        rows = self._db().execute(
            "SELECT session_id, seq, role, text, timestamp FROM messages"
            " WHERE org = ? AND patient = ? AND session_id = ? AND seq > ? ORDER BY seq",
            (scope.org, scope.patient, session_id, after),
        )
        return [Message.model_validate(dict(row)) for row in rows]

    def list_memories(self, scope: Scope, type: MemoryType | None = None) -> list[MemoryRecord]:
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
        records = []
        for row in memories:
            memory = Memory.model_validate_json(row["data"])
            rels = tuple(relationships.get(memory.memory_id, ()))
            records.append(MemoryRecord(memory=memory, relationships=rels))
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


Key = tuple[str, str]


def _patient_row(db: sqlite3.Connection, scope: Scope) -> sqlite3.Row | None:
    row: sqlite3.Row | None = db.execute(
        "SELECT data FROM patients WHERE org = ? AND patient = ?", (scope.org, scope.patient)
    ).fetchone()
    return row


def _upsert_patient(db: sqlite3.Connection, key: Key, patient: Patient | None) -> None:
    if patient is None:
        db.execute(
            "INSERT OR IGNORE INTO patients VALUES (?, ?, ?)", (*key, Patient().model_dump_json())
        )
        return
    db.execute(
        "INSERT INTO patients VALUES (?, ?, ?)"
        " ON CONFLICT (org, patient) DO UPDATE SET data = excluded.data",
        (*key, patient.model_dump_json()),
    )


def _bump(counts: dict[str, int], name: str, by: int = 1) -> None:
    counts[name] = counts.get(name, 0) + by


def _upsert_source(
    db: sqlite3.Connection, key: Key, item: SourceClaims, counts: dict[str, int]
) -> None:
    source = item.source
    existing = db.execute(
        "SELECT content_hash, last_updated FROM sources"
        " WHERE org = ? AND patient = ? AND source_ref = ?",
        (*key, source.source_ref),
    ).fetchone()
    if existing is not None:
        if existing["content_hash"] == source.content_hash:
            _bump(counts, "sources_unchanged")
            return
        stored = existing["last_updated"]
        if stored and source.last_updated and source.last_updated.isoformat() < stored:
            _bump(counts, "sources_stale")
            return
        _bump(counts, "sources_replaced")
    else:
        _bump(counts, "sources_added")
    db.execute(
        "INSERT INTO sources VALUES (?, ?, ?, ?, ?, ?)"
        " ON CONFLICT (org, patient, source_ref) DO UPDATE"
        " SET content_hash = excluded.content_hash, last_updated = excluded.last_updated,"
        " data = excluded.data",
        (
            *key,
            source.source_ref,
            source.content_hash,
            source.last_updated.isoformat() if source.last_updated else None,
            source.model_dump_json(),
        ),
    )
    previous = {
        row[0]
        for row in db.execute(
            "SELECT fact_key FROM assertions WHERE org = ? AND patient = ? AND source_ref = ?",
            (*key, source.source_ref),
        )
    }
    db.execute(
        "DELETE FROM assertions WHERE org = ? AND patient = ? AND source_ref = ?",
        (*key, source.source_ref),
    )
    for claim in item.claims:
        created = db.execute(
            "INSERT OR IGNORE INTO facts VALUES (?, ?, ?, ?)",
            (*key, claim.fact_key, claim.kind.value),
        ).rowcount
        if created:
            _bump(counts, "facts_added")
        elif claim.fact_key not in previous:
            has_others = db.execute(
                "SELECT 1 FROM assertions WHERE org = ? AND patient = ? AND fact_key = ? LIMIT 1",
                (*key, claim.fact_key),
            ).fetchone()
            if has_others:
                _bump(counts, "facts_merged")
        db.execute(
            "INSERT OR REPLACE INTO assertions VALUES (?, ?, ?, ?, ?)",
            (*key, source.source_ref, claim.fact_key, claim.model_dump_json()),
        )
    dropped = previous - {claim.fact_key for claim in item.claims}
    for fact_key in dropped:
        _bump(counts, "facts_removed", _drop_if_orphan(db, key, fact_key))


def _add_link(db: sqlite3.Connection, key: Key, link: FactLink, counts: dict[str, int]) -> None:
    known = db.execute(
        "SELECT COUNT(*) FROM facts WHERE org = ? AND patient = ? AND fact_key IN (?, ?)",
        (*key, link.from_key, link.to_key),
    ).fetchone()[0] == len({link.from_key, link.to_key})
    if not known:
        _bump(counts, "links_skipped")
        return
    cursor = db.execute(
        "INSERT OR IGNORE INTO fact_links VALUES (?, ?, ?, ?, ?)",
        (*key, link.from_key, link.to_key, link.type.value),
    )
    _bump(counts, "links_added", cursor.rowcount)


def _drop_if_orphan(db: sqlite3.Connection, key: Key, fact_key: str) -> int:
    return db.execute(
        "DELETE FROM facts WHERE org = ? AND patient = ? AND fact_key = ?"
        " AND NOT EXISTS (SELECT 1 FROM assertions a WHERE a.org = facts.org"
        "   AND a.patient = facts.patient AND a.fact_key = facts.fact_key)"
        " AND NOT EXISTS (SELECT 1 FROM relationships r WHERE r.org = facts.org"
        "   AND r.patient = facts.patient AND r.fact_key = facts.fact_key)",
        (*key, fact_key),
    ).rowcount


def _append_memories(
    db: sqlite3.Connection, key: Key, batch: Batch, counts: dict[str, int]
) -> None:
    for memory in batch.memories:
        _session(db, Scope(org=key[0], patient=key[1]), memory.session_id)
        try:
            db.execute(
                "INSERT INTO memories VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    *key,
                    memory.memory_id,
                    memory.session_id,
                    memory.type.value,
                    memory.created_at.isoformat(),
                    memory.model_dump_json(),
                ),
            )
        except sqlite3.IntegrityError as e:
            raise Conflict(f"memory {memory.memory_id!r} already exists") from e
        _bump(counts, "memories_added")
    for rel in batch.relationships:
        try:
            db.execute(
                "INSERT INTO relationships VALUES (?, ?, ?, ?, ?, ?)",
                (*key, rel.memory_id, rel.fact_key, rel.type.value, rel.model_dump_json()),
            )
        except sqlite3.IntegrityError as e:
            raise Conflict(
                f"relationship {rel.memory_id!r} → {rel.fact_key!r} exists or names an unknown"
                " memory or fact"
            ) from e
        _bump(counts, "relationships_added")


def _move_watermark(db: sqlite3.Connection, key: Key, mark: Watermark) -> None:
    moved = db.execute(
        "UPDATE sessions SET processed_through = ?"
        " WHERE org = ? AND patient = ? AND session_id = ? AND processed_through = ?",
        (mark.new, *key, mark.session_id, mark.expected),
    ).rowcount
    if not moved:
        raise Conflict(f"session {mark.session_id!r} watermark moved since it was read; retry")


def _session(db: sqlite3.Connection, scope: Scope, session_id: str) -> Session:
    row = db.execute(
        "SELECT * FROM sessions WHERE org = ? AND patient = ? AND session_id = ?",
        (scope.org, scope.patient, session_id),
    ).fetchone()
    if row is None:
        raise NotFound("session", session_id)
    return _session_from_row(row)


def _session_from_row(row: sqlite3.Row) -> Session:
    return Session(
        session_id=row["session_id"],
        status=row["status"],
        processed_through=row["processed_through"],
        created_at=row["created_at"],
    )


def _resolve_rows(rows: Iterator[sqlite3.Row] | sqlite3.Cursor) -> list[Fact]:
    grouped: dict[str, list[tuple[Source, Claim]]] = {}
    for row in rows:
        pair = (Source.model_validate_json(row["source"]), Claim.model_validate_json(row["claim"]))
        grouped.setdefault(row["fact_key"], []).append(pair)
    return [resolve(pairs) for pairs in grouped.values()]
