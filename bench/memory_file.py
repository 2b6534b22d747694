"""`/memory/adherence.md` of a patient with 50 sessions: today's file against the flat list.

One patient, 50 sessions, each with two adherence statements about one of five drugs
(taking, stopped, restarted...) linked to the medication facts, and a review on every
fifth memory (confirmations, dismissals, notes). Measured in the same run, on the same
store: p50/p95 of `vfs.read("/memory/adherence.md")` as rendered now (current state per
subject, confirmed first, reviews, the Dismissed section), and a baseline that renders
the same memories as the flat most-recent-first list the file was before issue 11 (one
item per memory, no state, no reviews). The ratio is what the review and state views
add. Goal: ratio ≤ 2.

    python -m bench.memory_file [--neo4j bolt://127.0.0.1:7687] [--sessions 50] [--reads 200]
"""

import argparse
import tempfile
import time
import uuid
from datetime import UTC, datetime, timedelta

import vfs
from bench.stats import percentile
from engine.models import (
    Batch,
    DismissReason,
    Evidence,
    Memory,
    MemoryReview,
    MemoryType,
    Relationship,
    RelationshipType,
    ReviewAction,
    Role,
    Scope,
    Session,
)
from engine.store import GraphStore, open_store
from tests.contract.builders import asserted, claim
from vfs.doc import Doc, Section
from vfs.graph import PatientGraph
from vfs.markdown import render
from vfs.render_memory import memory_item

DRUGS = [f"medication:rxnorm:{code}" for code in ("860975", "197361", "314076", "310798", "83367")]
BEHAVIOURS = ("as_prescribed", "stopped", "as_prescribed", "missed_doses")
START = datetime(2026, 1, 1, tzinfo=UTC)


def populate(store: GraphStore, scope: Scope, sessions: int) -> None:
    for i, key in enumerate(DRUGS):
        store.write(
            scope, asserted(f"fhir:MedicationRequest/m{i}", claim(key, "current", f"drug {i}"))
        )
    for s in range(sessions):
        at = START + timedelta(days=7 * s)
        store.create_session(scope, Session(session_id=f"s{s}", created_at=at))
        memories, rels = [], []
        for n in range(2):
            memory_id, key = f"m{s}-{n}", DRUGS[(s + n) % len(DRUGS)]
            text = f"About drug {(s + n) % len(DRUGS)}: {BEHAVIOURS[(s + n) % 4]}"
            memories.append(
                Memory(
                    memory_id=memory_id,
                    session_id=f"s{s}",
                    type=MemoryType.ADHERENCE,
                    text=text,
                    subject=f"drug {(s + n) % len(DRUGS)}",
                    evidence=(Evidence(message_id=f"s{s}:1", quote=text, start=0, end=len(text)),),
                    speaker=Role.PATIENT,
                    attributes={"behavior": BEHAVIOURS[(s + n) % 4]},
                    confidence=0.55 + 0.05 * (s % 6),
                    extractor="bench",
                    extractor_version="1",
                    created_at=at + timedelta(minutes=n),
                )
            )
            kind = (
                RelationshipType.CONFLICTS if "stopped" in text else RelationshipType.CORROBORATES
            )
            rels.append(
                Relationship(
                    memory_id=memory_id,
                    fact_key=key,
                    type=kind,
                    rationale="bench",
                    confidence=0.5,
                    method="bench",
                )
            )
        store.write(scope, Batch(memories=tuple(memories), relationships=tuple(rels)))
        if s % 5 == 0:
            action = (ReviewAction.CONFIRM, ReviewAction.DISMISS, ReviewAction.NOTE)[s % 3]
            store.add_review(
                scope,
                MemoryReview(
                    review_id=f"r{s}",
                    memory_id=f"m{s}-0",
                    actor="bench",
                    action=action,
                    reason=DismissReason.DUPLICATE if action is ReviewAction.DISMISS else None,
                    note="checked" if action is ReviewAction.NOTE else "",
                    created_at=at + timedelta(days=1),
                ),
            )


def flat(store: GraphStore, scope: Scope) -> str:
    """The file as it was: every memory, most recent first, one item each."""
    graph = PatientGraph(store, scope)
    records = graph.store.list_memories(scope, MemoryType.ADHERENCE)
    items = tuple(memory_item(graph, r) for r in records)
    return render(
        Doc(path="/memory/adherence.md", title="x", sections=(Section("Memories", items),)), False
    )


def run(name: str, store: GraphStore, sessions: int, reads: int) -> None:
    scope = Scope(org=f"bench-{uuid.uuid4().hex[:8]}", patient="p1")
    populate(store, scope, sessions)
    now, before = [], []
    for _ in range(reads):
        started = time.perf_counter()
        vfs.read(store, scope, "/memory/adherence.md")
        now.append(time.perf_counter() - started)
        started = time.perf_counter()
        flat(store, scope)
        before.append(time.perf_counter() - started)
    now50, now95, before50 = percentile(now, 0.5), percentile(now, 0.95), percentile(before, 0.5)
    print(
        f"{name}: {sessions} sessions, {2 * sessions} memories, {reads} reads — "
        f"now p50 {now50 * 1000:.2f} ms p95 {now95 * 1000:.2f} ms; "
        f"flat list p50 {before50 * 1000:.2f} ms; ratio {now50 / before50:.2f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--neo4j", help="Bolt URI of a Neo4j server to include")
    parser.add_argument("--sessions", type=int, default=50)
    parser.add_argument("--reads", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        store = open_store(f"sqlite:///{tmp}/bench.db")
        run("sqlite", store, args.sessions, args.reads)
        store.close()
    if args.neo4j:
        store = open_store(args.neo4j)
        run("neo4j", store, args.sessions, args.reads)
        store.close()


if __name__ == "__main__":
    main()
