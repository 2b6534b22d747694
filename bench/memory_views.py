"""`/memory/adherence.md` for a patient with 50 sessions against one with a single session.

Both patients hold the same Synthea record (cloned under new ids); one talked once, the
other 50 times, one adherence memory about metformin per session (taking, stopped,
restarted in turn, a day apart), which the current-state view groups into one subject
with a 50-step history. p50 of `vfs.read` is measured on each in the same run; the ratio
50 sessions / 1 session is the figure. The same read "as of" the 25th session is shown
against the live read of the 50-session patient, the cost of the cutoff.

    python -m bench.memory_views [--neo4j bolt://127.0.0.1:7687] [--reads 100]
"""

import argparse
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import vfs
from bench.vfs import BUNDLE
from engine.as_of import AsOf
from engine.models import Batch, Evidence, Memory, MemoryType, Role, Scope, Session
from engine.store import GraphStore, open_store
from ingest.pipeline import Ingestor, read_document
from ingest.records import Record

PATH = "/memory/adherence.md"
START = datetime(2026, 1, 1, 9, tzinfo=UTC)
SAYINGS = (
    ("taking", "I take the metformin every morning"),
    ("stopped", "I stopped the metformin, it upsets my stomach"),
    ("restarted", "I started the metformin again last week"),
)


def populate(store: GraphStore, org: str, patient: str, sessions: int) -> Scope:
    records = [r for r in read_document(BUNDLE) if isinstance(r, Record)]
    Ingestor(store, org, patient=patient).feed(BUNDLE.name, iter(records))
    scope = Scope(org=org, patient=patient)
    for index in range(sessions):
        when, sid = START + timedelta(days=index), f"visit-{index:03d}"
        behavior, text = SAYINGS[index % len(SAYINGS)]
        store.create_session(scope, Session(session_id=sid, created_at=when))
        memory = Memory(
            memory_id=f"m-{index:03d}",
            session_id=sid,
            type=MemoryType.ADHERENCE,
            text=text,
            subject="metformin",
            evidence=(Evidence(message_id=f"{sid}:1", quote=text, start=0, end=len(text)),),
            speaker=Role.PATIENT,
            attributes={"behavior": behavior},
            confidence=0.9,
            extractor="bench",
            extractor_version="1",
            created_at=when,
        )
        store.write(scope, Batch(memories=(memory,)))
    return scope


def p50(store: GraphStore, scope: Scope, reads: int, as_of: AsOf = None) -> float:
    vfs.read(store, scope, PATH, as_of=as_of)  # warm-up
    samples = []
    for _ in range(reads):
        started = time.perf_counter()
        vfs.read(store, scope, PATH, as_of=as_of)
        samples.append(time.perf_counter() - started)
    return statistics.median(samples)


def run(name: str, store: GraphStore, reads: int) -> None:
    org = f"bench-{uuid.uuid4().hex[:8]}"
    try:
        one = populate(store, org, "one-session", 1)
        many = populate(store, org, "fifty-sessions", 50)
        single, fifty = p50(store, one, reads), p50(store, many, reads)
        halfway = p50(store, many, reads, as_of=START + timedelta(days=24, hours=1))
    finally:
        store.close()
    print(
        f"{name:7} {PATH}  1 session p50 {single * 1000:7.2f} ms   50 sessions p50"
        f" {fifty * 1000:7.2f} ms   ratio {fifty / single:5.2f}   as of session 25"
        f" {halfway * 1000:7.2f} ms ({halfway / fifty:4.2f}× live)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--neo4j", help="Bolt URI of a Neo4j server to include")
    parser.add_argument("--reads", type=int, default=100)
    args = parser.parse_args()
    stores: list[tuple[str, Callable[[], GraphStore]]] = []
    with tempfile.TemporaryDirectory() as tmp:
        stores.append(("sqlite", lambda: open_store(f"sqlite:///{tmp}/bench.db")))
        if args.neo4j:
            stores.append(("neo4j", lambda: open_store(args.neo4j)))
        for name, opened in stores:
            run(name, opened(), args.reads)


if __name__ == "__main__":
    main()
