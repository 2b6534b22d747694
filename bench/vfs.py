"""VFS read latency against the raw store reads of the same data, for 10 and 1,000 patients.

Patients are cloned from one real Synthea bundle under new ids, each with a session and
a symptom memory linked to their hypertension. For a condition story and
`/memory/symptom.md`, p50/p99 of `vfs.read` are measured on random patients, and the
baseline is a replay of exactly the store calls that read made (recorded once), so the
ratio is what rendering adds over fetching. Goals: ratio ≤ 3; latency at 1,000 patients
within 1.3× of 10 patients.

    python -m bench.vfs [--neo4j bolt://127.0.0.1:7687] [--sizes 10,1000] [--reads 200]
"""

import argparse
import random
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import vfs
from engine.models import (
    Batch,
    Evidence,
    Memory,
    MemoryType,
    Relationship,
    RelationshipType,
    Role,
    Scope,
    Session,
)
from engine.store import GraphStore, open_store
from ingest.pipeline import Ingestor, read_document
from ingest.records import Record

DATA = Path(__file__).parent.parent / "tests" / "data" / "corpus" / "fhir" / "synthea-r4-bundles"
BUNDLE = sorted(DATA.glob("Joaquin_Rodriguez_*.json"))[0]
HYPERTENSION = "condition:snomed:38341003"
PATHS = ("/conditions/active/hypertension/_story.md", "/memory/symptom.md")
SAID = "My blood pressure has been running high in the mornings."


class Recorder:
    """Passes calls through to a store and remembers them."""

    def __init__(self, store: GraphStore) -> None:
        self.store = store
        self.calls: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = []

    def __getattr__(self, name: str) -> Callable[..., Any]:
        method = getattr(self.store, name)

        def call(*args: Any, **kwargs: Any) -> Any:
            self.calls.append((name, args, kwargs))
            return method(*args, **kwargs)

        return call


def populate(store: GraphStore, org: str, count: int) -> list[str]:
    records = [r for r in read_document(BUNDLE) if isinstance(r, Record)]
    patients = [f"clone-{i:05d}" for i in range(count)]
    for patient in patients:
        ingestor = Ingestor(store, org, patient=patient)
        ingestor.feed(BUNDLE.name, iter(records))
        scope = Scope(org=org, patient=patient)
        store.create_session(scope, Session(session_id="visit"))
        memory = Memory(
            memory_id=f"m-{patient}",
            session_id="visit",
            type=MemoryType.SYMPTOM,
            text=SAID,
            subject="blood pressure",
            evidence=(Evidence(message_id="visit:1", quote=SAID, start=0, end=len(SAID)),),
            speaker=Role.PATIENT,
            confidence=0.8,
            extractor="bench",
            extractor_version="1",
        )
        relationship = Relationship(
            memory_id=memory.memory_id,
            fact_key=HYPERTENSION,
            type=RelationshipType.ENRICHES,
            rationale="home readings add timing to the recorded hypertension",
            confidence=0.8,
            method="bench",
        )
        store.write(scope, Batch(memories=(memory,), relationships=(relationship,)))
    return patients


def percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return ordered[len(ordered) // 2], ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]


def measure(
    store: GraphStore, org: str, patients: list[str], path: str, reads: int
) -> tuple[float, float, float, float]:
    rng = random.Random(7)
    rendered, raw = [], []
    for _ in range(reads):
        scope = Scope(org=org, patient=rng.choice(patients))
        recorder = Recorder(store)
        started = time.perf_counter()
        vfs.read(recorder, scope, path)
        rendered.append(time.perf_counter() - started)
        started = time.perf_counter()
        for name, args, kwargs in recorder.calls:
            getattr(store, name)(*args, **kwargs)
        raw.append(time.perf_counter() - started)
    return (*percentiles(rendered), *percentiles(raw))


def run(name: str, open_fresh: Callable[[], GraphStore], sizes: list[int], reads: int) -> None:
    results: dict[tuple[str, int], tuple[float, float, float, float]] = {}
    for size in sizes:
        store = open_fresh()
        org = f"bench-{uuid.uuid4().hex[:8]}"
        try:
            started = time.perf_counter()
            patients = populate(store, org, size)
            print(f"{name}: {size} patients loaded in {time.perf_counter() - started:.1f} s")
            for path in PATHS:
                vfs.read(store, Scope(org=org, patient=patients[0]), path)  # warm-up
                results[(path, size)] = measure(store, org, patients, path, reads)
        finally:
            store.close()
    print(
        f"{'backend':8} {'path':45} {'patients':>8} {'p50 ms':>7} {'p99 ms':>7} "
        f"{'raw p50':>8} {'ratio':>6} {'× smallest':>10}"
    )
    for (path, size), (p50, p99, r50, _) in results.items():
        scale = p50 / results[(path, sizes[0])][0]
        print(
            f"{name:8} {path:45} {size:8d} {p50 * 1000:7.2f} {p99 * 1000:7.2f} "
            f"{r50 * 1000:8.2f} {p50 / r50:6.2f} {scale:10.2f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--neo4j", help="Bolt URI of a Neo4j server to include")
    parser.add_argument("--sizes", default="10,1000")
    parser.add_argument("--reads", type=int, default=200)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        run(
            "sqlite",
            lambda: open_store(f"sqlite:///{tmp}/{uuid.uuid4().hex}.db"),
            sizes,
            args.reads,
        )
    if args.neo4j:
        run("neo4j", lambda: open_store(args.neo4j), sizes, args.reads)


if __name__ == "__main__":
    main()
