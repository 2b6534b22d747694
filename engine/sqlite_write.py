"""The SQLite adapter's writes: a batch, statement by statement, in the caller's transaction.

`SqliteStore` opens the transaction (`BEGIN IMMEDIATE`, so writes are serialised) and
commits or rolls back; these functions run the statements and count what they did.
"""

import json
import sqlite3
from collections.abc import Sequence

from engine.errors import Conflict, NotFound
from engine.matching import MatchIndex, parse_claim, place_link, place_source
from engine.models import (
    Batch,
    FactLink,
    Message,
    NewMessage,
    Patient,
    Scope,
    Session,
    SessionStatus,
    Source,
    SourceClaims,
    Watermark,
    WriteResult,
    utcnow,
)
from engine.resolution import Verdict, apart_ref, place, settled

Key = tuple[str, str]


def apply_batch(db: sqlite3.Connection, key: Key, batch: Batch) -> WriteResult:
    """Applies a batch inside the caller's transaction; see `GraphStore.write`."""
    counts: dict[str, int] = {}
    if batch.patient is not None or batch.sources:
        upsert_patient(db, key, batch.patient)
    index = _match_index(db, key) if batch.sources or batch.fact_links else MatchIndex()
    stored = _stored_sources(db, key, batch.sources)
    for item in batch.sources:
        _upsert_source(db, key, place_source(index, item), stored, counts)
    for link in batch.fact_links:
        _add_link(db, key, place_link(index, link), counts)
    for ref in batch.retire:
        _retire(db, key, ref, counts)
    if counts.get("facts_removed"):
        _settle_candidates(db, key, counts)
    if batch.memories or batch.relationships:
        _append_memories(db, key, batch, counts)
    if batch.watermark is not None:
        _move_watermark(db, key, batch.watermark)
    return WriteResult(**counts)


def _match_index(db: sqlite3.Connection, key: Key) -> MatchIndex:
    rows = db.execute("SELECT claim FROM assertions WHERE org = ? AND patient = ?", key)
    return MatchIndex.of(parse_claim(row[0]) for row in rows)


def create_session(db: sqlite3.Connection, key: Key, session: Session) -> None:
    """Creates a session and, if needed, its patient; `Conflict` if it exists."""
    upsert_patient(db, key, None)
    try:
        db.execute(
            "INSERT INTO sessions VALUES (?, ?, ?, ?, ?, ?)",
            (
                *key,
                session.session_id,
                session.status.value,
                session.processed_through,
                session.created_at.isoformat(),
            ),
        )
    except sqlite3.IntegrityError as e:
        raise Conflict(f"session {session.session_id!r} already exists") from e


def append_messages(
    db: sqlite3.Connection, scope: Scope, session_id: str, messages: Sequence[NewMessage]
) -> list[Message]:
    """Appends messages numbered from the last `seq` + 1; `Conflict` if the session is closed."""
    session = load_session(db, scope, session_id)
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


def upsert_patient(db: sqlite3.Connection, key: Key, patient: Patient | None) -> None:
    """Creates the patient if missing; replaces its demographics when `patient` is given."""
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


def _stored_sources(
    db: sqlite3.Connection, key: Key, items: Sequence[SourceClaims]
) -> dict[str, Source]:
    """The stored sources of every ref the batch's sources may take (own and apart), in one
    query; `_upsert_source` keeps it current as the batch writes."""
    refs = sorted({ref for item in items for ref in _refs(item.source)})
    rows = db.execute(
        "SELECT source_ref, data FROM sources WHERE org = ? AND patient = ?"
        " AND source_ref IN (SELECT value FROM json_each(?))",
        (*key, json.dumps(refs)),
    )
    return {ref: Source.model_validate_json(data) for ref, data in rows}


def _refs(source: Source) -> tuple[str, str]:
    return source.source_ref, apart_ref(source)


def _upsert_source(
    db: sqlite3.Connection,
    key: Key,
    item: SourceClaims,
    stored: dict[str, Source],
    counts: dict[str, int],
) -> None:
    placed = place(item, stored, counts)
    if placed is None:
        return
    item, decision = placed
    source = item.source
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
    # a source that was not stored asserts nothing yet (assertions reference their source)
    previous = set() if decision is Verdict.ADD else _unassert(db, key, source.source_ref)
    stored[source.source_ref] = source
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


def _unassert(db: sqlite3.Connection, key: Key, ref: str) -> set[str]:
    """Deletes what a source asserted; returns those facts' keys."""
    rows = db.execute(
        "DELETE FROM assertions WHERE org = ? AND patient = ? AND source_ref = ?"
        " RETURNING fact_key",
        (*key, ref),
    )
    return {row[0] for row in rows}


def _retire(db: sqlite3.Connection, key: Key, ref: str, counts: dict[str, int]) -> None:
    """Removes a source and its assertions, and the facts that no one else asserts."""
    asserted = _unassert(db, key, ref)
    gone = db.execute(
        "DELETE FROM sources WHERE org = ? AND patient = ? AND source_ref = ?", (*key, ref)
    ).rowcount
    _bump(counts, "sources_retired", gone)
    for fact_key in asserted:
        _bump(counts, "facts_removed", _drop_if_orphan(db, key, fact_key))


def _settle_candidates(db: sqlite3.Connection, key: Key, counts: dict[str, int]) -> None:
    """Drops from stored claims the candidate facts that this batch removed."""
    facts = {
        row[0]
        for row in db.execute("SELECT fact_key FROM facts WHERE org = ? AND patient = ?", key)
    }
    rows = db.execute(
        "SELECT source_ref, fact_key, claim FROM assertions WHERE org = ? AND patient = ?", key
    ).fetchall()
    for ref, fact_key, data in rows:
        claim = settled(parse_claim(data), facts)
        if claim is not None:
            db.execute(
                "UPDATE assertions SET claim = ?"
                " WHERE org = ? AND patient = ? AND source_ref = ? AND fact_key = ?",
                (claim.model_dump_json(), *key, ref, fact_key),
            )
            _bump(counts, "candidates_settled")


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
        load_session(db, Scope(org=key[0], patient=key[1]), memory.session_id)
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


def load_session(db: sqlite3.Connection, scope: Scope, session_id: str) -> Session:
    """One session; `NotFound` if absent."""
    row = db.execute(
        "SELECT * FROM sessions WHERE org = ? AND patient = ? AND session_id = ?",
        (scope.org, scope.patient, session_id),
    ).fetchone()
    if row is None:
        raise NotFound("session", session_id)
    return session_from_row(row)


def session_from_row(row: sqlite3.Row) -> Session:
    """The session of a `SELECT * FROM sessions` row."""
    return Session(
        session_id=row["session_id"],
        status=row["status"],
        processed_through=row["processed_through"],
        created_at=row["created_at"],
    )
