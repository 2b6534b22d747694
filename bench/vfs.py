"""VFS read latency at 10 and 10,000 patients: one `read_view` per view against separate reads.

Patients are cloned from one real Synthea bundle under new ids, each with a session and
a symptom memory linked to their hypertension. For a condition story, a medication file,
`/memory/symptom.md`, `/patient.md` and `/timeline.md`, p50/p95/p99 of `vfs.read` are
measured on random patients, interleaved with the same read through a store whose
`read_view` is made of one call per part (`compose_view`: how views read before, one
round trip per part on Neo4j). After each, the same patient's `get_patient` is timed too:
the trivial read whose p99 shows how much of a tail is the machine's, not the view's.
Goals: p99 ≤ 20 ms at 10,000 patients and ≤ 1.2× the 10-patient figure.

    python -m bench.vfs [--neo4j bolt://127.0.0.1:7687] [--no-sqlite] [--sizes 10,10000]
        [--reads 1000] [--threads 4]
"""

import argparse
import random
import tempfile
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import vfs
from bench.stats import percentile
from engine.as_of import AsOf
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
from engine.store import GraphStore, PatientView, ViewRequest, compose_view, open_store
from ingest.pipeline import Ingestor, read_document
from ingest.records import Record

DATA = Path(__file__).parent.parent / "tests" / "data" / "corpus" / "fhir" / "synthea-r4-bundles"
BUNDLE = sorted(DATA.glob("Joaquin_Rodriguez_*.json"))[0]
HYPERTENSION = "condition:snomed:38341003"
PATHS = (
    "/conditions/active/hypertension/_story.md",
    "/medications/current/hydrochlorothiazide_25_mg",
    "/memory/symptom.md",
    "/patient.md",
    "/timeline.md",
)
SAID = "My blood pressure has been running high in the mornings."


class SeparateReads:
    """The store, with views read as before `read_view`: one store call per part."""

    def __init__(self, store: GraphStore) -> None:
        self.store = store

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)

    def read_view(self, scope: Scope, request: ViewRequest, as_of: AsOf = None) -> PatientView:
        return compose_view(self.store, scope, request, as_of)


class Recorder:
    """Passes calls through to a store and remembers them."""

    def __init__(self, store: GraphStore) -> None:
        self.store = store
        self.overlapped_writes = store.overlapped_writes  # an attribute, not a call
        self.calls: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = []

    def __getattr__(self, name: str) -> Callable[..., Any]:
        method = getattr(self.store, name)

        def call(*args: Any, **kwargs: Any) -> Any:
            self.calls.append((name, args, kwargs))
            return method(*args, **kwargs)

        return call


def memory_batch(patient: str) -> Batch:
    """One symptom memory, enriching the patient's hypertension."""
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
    return Batch(memories=(memory,), relationships=(relationship,))


def record_ingest(store: GraphStore, org: str, patient: str) -> list[Batch]:
    """Ingests the bundle for one patient and returns the batches the ingestor wrote."""
    recorder = Recorder(store)
    records = [r for r in read_document(BUNDLE) if isinstance(r, Record)]
    Ingestor(recorder, org, patient=patient).feed(BUNDLE.name, iter(records))
    # a server store is written through `write_many`, the batches waiting applied together
    written = [[args] for name, args, _ in recorder.calls if name == "write"]
    written += [args[0] for name, args, _ in recorder.calls if name == "write_many"]
    return [batch for group in written for _, batch in group]


def populate(store: GraphStore, org: str, count: int, threads: int) -> list[str]:
    """`count` clones of the bundle's patient, each with a session and a memory.

    The first clone goes through the ingest pipeline; the batches it wrote are then
    written for every other clone (the same facts under another patient id), from
    `threads` threads: what is measured is reading, and parsing 10,000 copies of one
    bundle would only make loading slow.
    """
    patients = [f"clone-{i:05d}" for i in range(count)]
    batches = record_ingest(store, org, patients[0])

    def load(patient: str) -> None:
        scope = Scope(org=org, patient=patient)
        if patient != patients[0]:
            for batch in batches:
                store.write(scope, batch)
        store.create_session(scope, Session(session_id="visit"))
        store.write(scope, memory_batch(patient))

    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(load, patients))
    return patients


def percentiles(samples: list[float]) -> tuple[float, float, float]:
    return percentile(samples, 0.5), percentile(samples, 0.95), percentile(samples, 0.99)


Figures = tuple[tuple[float, float, float], tuple[float, float, float], float]


Loaded = tuple[GraphStore, str, list[str]]


def timed(samples: list[float], read: Callable[..., object], *args: Any) -> None:
    started = time.perf_counter()
    read(*args)
    samples.append(time.perf_counter() - started)


def measure(loaded: list[Loaded], path: str, reads: int) -> list[Figures]:
    """p50/p95/p99 of `vfs.read` in one `read_view`, then with one store call per part,
    and p99 of `get_patient`, for each loaded size; reads of the sizes are interleaved, so
    that the load of the machine at any moment weighs on every size alike."""
    rng = random.Random(7)
    timings: list[tuple[list[float], list[float], list[float]]] = [([], [], []) for _ in loaded]
    for _ in range(reads):
        for (store, org, patients), (one, many, base) in zip(loaded, timings, strict=True):
            scope = Scope(org=org, patient=rng.choice(patients))
            timed(one, vfs.read, store, scope, path)
            timed(many, vfs.read, SeparateReads(store), scope, path)
            timed(base, store.get_patient, scope)
    return [
        (percentiles(one), percentiles(many), percentile(base, 0.99)) for one, many, base in timings
    ]


def run(
    name: str, open_fresh: Callable[[], GraphStore], sizes: list[int], reads: int, threads: int
) -> None:
    """Loads every size (a fresh store each), then measures each path on all of them."""
    loaded: list[Loaded] = []
    try:
        for size in sizes:
            store = open_fresh()
            org = f"bench-{uuid.uuid4().hex[:8]}"
            loaded.append((store, org, []))
            started = time.perf_counter()
            loaded[-1] = (store, org, populate(store, org, size, threads))
            print(f"{name}: {size} patients loaded in {time.perf_counter() - started:.1f} s")
        results: dict[tuple[str, int], Figures] = {}
        for path in PATHS:
            for store, org, patients in loaded:
                vfs.read(store, Scope(org=org, patient=patients[0]), path)  # warm-up
            for size, figures in zip(sizes, measure(loaded, path, reads), strict=True):
                results[(path, size)] = figures
    finally:
        for store, _, _ in loaded:
            store.close()
    print(
        f"{'backend':7} {'path':47} {'patients':>8} {'p50':>6} {'p95':>6} {'p99':>6}"
        f" {'sep p50':>7} {'sep p95':>7} {'sep p99':>7} {'p99 sep/one':>11}"
        f" {'p50 ×first':>10} {'p99 ×first':>10} {'base p99':>8}"
    )
    for (path, size), ((p50, p95, p99), (s50, s95, s99), b99) in results.items():
        first = results[(path, sizes[0])][0]
        print(
            f"{name:7} {path:47} {size:8d} {p50 * 1e3:6.2f} {p95 * 1e3:6.2f} {p99 * 1e3:6.2f}"
            f" {s50 * 1e3:7.2f} {s95 * 1e3:7.2f} {s99 * 1e3:7.2f} {s99 / p99:11.2f}"
            f" {p50 / first[0]:10.2f} {p99 / first[2]:10.2f} {b99 * 1e3:8.2f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--neo4j", help="Bolt URI of a Neo4j server to include")
    parser.add_argument("--sizes", default="10,1000")
    parser.add_argument("--reads", type=int, default=1000)
    parser.add_argument("--no-sqlite", action="store_true", help="only the Neo4j server")
    parser.add_argument("--threads", type=int, default=4, help="writers while loading")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        if not args.no_sqlite:
            run(
                "sqlite",
                lambda: open_store(f"sqlite:///{tmp}/{uuid.uuid4().hex}.db"),
                sizes,
                args.reads,
                args.threads,
            )
    if args.neo4j:
        run("neo4j", lambda: open_store(args.neo4j), sizes, args.reads, args.threads)


if __name__ == "__main__":
    main()
