"""The Neo4j write transactions: batches, creating and closing a session, messages.

`Neo4jStore` runs each function in one managed transaction and retries it; they reach
the transaction through `Transaction`, the few driver methods they call, so that only
`engine.neo4j_store` imports `neo4j`.
"""

from collections import Counter
from collections.abc import Iterator, Sequence
from typing import Any, Literal, LiteralString, Protocol, overload

from engine import cypher
from engine.errors import Conflict, NotFound
from engine.matching import MatchIndex, parse_claim, place_link, place_source
from engine.models import (
    Batch,
    FactLink,
    FactLinkType,
    Memory,
    Message,
    NewMessage,
    Patient,
    Relationship,
    RelationshipType,
    Session,
    SessionStatus,
    Source,
    SourceClaims,
    WriteResult,
    utcnow,
)
from engine.neo4j_sources import accept, fact_state, replay
from engine.resolution import apart_ref, settled

Params = dict[str, Any]


class _Row(Protocol):
    def __getitem__(self, key: str) -> Any: ...


class _Counters(Protocol):
    @property
    def relationships_created(self) -> int: ...

    @property
    def nodes_deleted(self) -> int: ...


class _Summary(Protocol):
    @property
    def counters(self) -> _Counters: ...


class _Result(Protocol):
    def __iter__(self) -> Iterator[_Row]: ...

    def consume(self) -> _Summary: ...

    def data(self) -> list[dict[str, Any]]: ...

    @overload
    def single(self, strict: Literal[False] = False) -> _Row | None: ...

    @overload
    def single(self, strict: Literal[True]) -> _Row: ...


class Transaction(Protocol):
    """What these functions use of the driver's `ManagedTransaction`."""

    def run(self, query: LiteralString, parameters: Params | None = None) -> _Result: ...


def create_session(tx: Transaction, scope: Params, session: Session) -> None:
    """Creates a session and, if needed, its patient.

    Raises:
        Conflict: the session exists.
    """
    params = scope | {
        "session_id": session.session_id,
        "status": session.status.value,
        "processed_through": session.processed_through,
        "created_at": session.created_at.isoformat(),
    }
    lock_patient(tx, params, upsert=True)
    if tx.run(cypher.GET_SESSION, params).single() is not None:
        raise Conflict(f"session {session.session_id!r} already exists")
    tx.run(cypher.CREATE_SESSION, params).consume()


def close_session(tx: Transaction, scope: Params, session_id: str) -> Session:
    """Closes a session and returns it.

    Raises:
        NotFound: the session does not exist.
    """
    params = scope | {"session_id": session_id, "status": SessionStatus.CLOSED.value}
    record = tx.run(cypher.CLOSE_SESSION, params).single()
    if record is None:
        raise NotFound("session", session_id)
    return Session.model_validate(record["session"])


def append_messages(
    tx: Transaction, scope: Params, session_id: str, messages: Sequence[NewMessage]
) -> list[Message]:
    """Appends messages numbered from the session's last `seq` + 1, under the session lock.

    Raises:
        NotFound: the session does not exist.
        Conflict: the session is closed.
    """
    params = scope | {"session_id": session_id}
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


def lock_patient(tx: Transaction, params: Params, *, upsert: bool) -> None:
    """Locks the patient's node until the transaction ends, creating it if `upsert`."""
    lock_patients(tx, params["org"], [{"patient": params["patient"], "upsert": upsert}])


def lock_patients(tx: Transaction, org: str, rows: Sequence[Params]) -> None:
    """Locks the org's patients until the transaction ends, in the order of `rows`.

    Args:
        tx: the transaction.
        org: the patients' org.
        rows: `{patient, upsert, data}` each: the patient is created if `upsert` (else
            locked only if it exists) and its demographics set to `data` (JSON) unless
            that is missing or None.
    """
    params = {"org": org, "patients": rows, "empty": Patient().model_dump_json()}
    tx.run(cypher.LOCK_PATIENTS, params).consume()


def apply_batches(tx: Transaction, writes: Sequence[tuple[Params, Batch]]) -> list[WriteResult]:
    """Applies batches in order, each under its patient's lock; see `GraphStore.write_many`.

    The patients are all locked first, in one statement per org, in sorted order: two
    transactions that lock some of the same patients take them in the same order, so
    neither waits for a lock the other waits on. A patient is created, with the last
    demographics that a batch brings, if any of its batches creates it; a batch that does
    not finds nothing of a patient that does not exist, so which batch creates it does not
    change what is written.
    """
    locks: dict[str, dict[str, Params]] = {}  # rows by org and patient
    for params, batch in writes:
        patient = params["patient"]
        row = locks.setdefault(params["org"], {}).setdefault(
            patient, {"patient": patient, "upsert": False, "data": None}
        )
        row["upsert"] = row["upsert"] or batch.patient is not None or bool(batch.sources)
        if batch.patient is not None:
            row["data"] = batch.patient.model_dump_json()
    for org, rows in sorted(locks.items()):
        lock_patients(tx, org, [rows[patient] for patient in sorted(rows)])
    return [_apply(tx, params, batch) for params, batch in writes]


def _apply(tx: Transaction, params: Params, batch: Batch) -> WriteResult:
    """Applies a batch whose patient is locked.

    Sources and links cost three round trips however many the batch holds: one read of
    the state they need (`BATCH_STATE`), then one statement for the sources and their
    claims and one for the fact links.
    """
    counts: Counter[str] = Counter()
    if batch.sources or batch.fact_links:
        refs = sorted({ref for item in batch.sources for ref in _refs(item.source)})
        state = tx.run(cypher.BATCH_STATE, params | {"refs": refs}).single(strict=True)
        facts = fact_state(state["facts"])
        index = MatchIndex.of(c for f in facts for c in f["claims"])
        placed = [place_source(index, item) for item in batch.sources]
        keys = {f["key"] for f in facts}
        if placed:
            keys = _upsert_sources(tx, params, placed, state["sources"], facts, counts)
        if batch.fact_links:
            links = [place_link(index, link) for link in batch.fact_links]
            _merge_links(tx, params, links, keys, counts)
    if batch.retire:
        _retire(tx, params, batch.retire, counts)
    if counts["facts_removed"]:
        _settle_candidates(tx, params, counts)
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
    tx: Transaction,
    params: Params,
    items: Sequence[SourceClaims],
    stored_rows: list[dict[str, Any]],
    facts: list[Params],
    counts: Counter[str],
) -> set[str]:
    """Merges sources by `source_ref`, with the counts and end state of SQLite's sequence.

    What to write is decided in Python from the stored state, then written in one
    statement; the patient lock keeps that state current. Returns the keys of the facts
    that exist afterwards.
    """
    stored = {r["ref"]: r for r in stored_rows}
    accepted = accept(items, stored, counts)
    keys = {f["key"] for f in facts}
    if not accepted:
        return keys
    by_source: dict[str, set[str]] = {ref: set() for ref in stored}
    for fact in facts:
        for ref in fact["refs"]:
            if ref in by_source:
                by_source[ref].add(fact["key"])
    removed = replay(accepted, by_source, facts, counts)
    final = {item.source.source_ref: item for item in accepted}
    claims = {(ref, c.fact_key): c for ref, item in final.items() for c in item.claims}
    rows = [
        {"source_ref": ref, "fact_key": key, "claim": c.model_dump_json()}
        for (ref, key), c in claims.items()
    ]
    replaced = sorted(ref for ref in final if ref in stored)  # new ones assert nothing yet
    remaining = keys - removed
    new_facts: dict[str, str] = {}  # kind by key, from the first claim, as a merge would
    for (_, key), claim in claims.items():
        if key not in remaining:
            new_facts.setdefault(key, claim.kind.value)
    write = {
        "new_sources": [_source_row(i.source) for ref, i in final.items() if ref not in stored],
        "stored_sources": [_source_row(final[ref].source) for ref in replaced],
        "refs": replaced,
        "removed": sorted(removed),
        "new_facts": [{"fact_key": key, "kind": kind} for key, kind in new_facts.items()],
        "claims": rows,
    }
    tx.run(cypher.WRITE_SOURCES, params | write).consume()
    return remaining | new_facts.keys()


def _refs(source: Source) -> tuple[str, str]:
    return source.source_ref, apart_ref(source)


def _retire(tx: Transaction, params: Params, refs: Sequence[str], counts: Counter[str]) -> None:
    """Removes the sources and their assertions, and the facts that no one else asserts."""
    retired = tx.run(cypher.RETIRE_SOURCES, params | {"refs": sorted(set(refs))}).data()
    if not retired:
        return
    keys = sorted({key for row in retired for key in row["keys"]})
    summary = tx.run(cypher.DROP_ORPHANS, params | {"keys": keys}).consume()
    counts["sources_retired"] += len(retired)
    counts["facts_removed"] += summary.counters.nodes_deleted


def _settle_candidates(tx: Transaction, params: Params, counts: Counter[str]) -> None:
    """Drops from stored claims the candidate facts that this batch removed."""
    rows = tx.run(cypher.ASSERTED_CLAIMS, params).data()
    facts = {row["key"] for row in rows}
    changed = []
    for row in rows:
        claim = settled(parse_claim(row["claim"]), facts) if row["claim"] else None
        if claim is not None:
            changed.append(
                {"fact_key": row["key"], "source_ref": row["ref"], "claim": claim.model_dump_json()}
            )
    if changed:
        tx.run(cypher.SET_CLAIMS, params | {"rows": changed}).consume()
        counts["candidates_settled"] += len(changed)


def _source_row(source: Source) -> Params:
    return {
        "source_ref": source.source_ref,
        "content_hash": source.content_hash,
        "last_updated": source.last_updated.isoformat() if source.last_updated else None,
        "data": source.model_dump_json(),
    }


def _merge_links(
    tx: Transaction,
    params: Params,
    links: Sequence[FactLink],
    facts: set[str],
    counts: Counter[str],
) -> None:
    """Merges the links between facts that exist; counts the others as skipped."""
    known = [link for link in links if {link.from_key, link.to_key} <= facts]
    counts["links_skipped"] += len(links) - len(known)
    if not known:
        return
    rows = {
        type.name: [{"from_key": k.from_key, "to_key": k.to_key} for k in known if k.type is type]
        for type in FactLinkType
    }
    summary = tx.run(cypher.WRITE_LINKS, params | {"rows": rows}).consume()
    counts["links_added"] += summary.counters.relationships_created


def _append_memories(
    tx: Transaction, params: Params, memories: Sequence[Memory], counts: Counter[str]
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
    tx: Transaction, params: Params, rels: Sequence[Relationship], counts: Counter[str]
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
