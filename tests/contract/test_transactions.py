"""Batches are all or nothing, counted alike, and concurrent writers neither duplicate nor lose."""

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

import pytest

from engine.errors import Conflict, EngineError, StoreUnavailable
from engine.models import Batch, NewMessage, Role, Scope, Session, SourceClaims, Watermark
from engine.store import GraphStore
from tests.contract.builders import (
    DIABETES,
    METFORMIN,
    asserted,
    at,
    claim,
    memory,
    relationship,
    source,
)

T = TypeVar("T")


def _race(workers: int, task: Callable[[int], T]) -> list[T | EngineError]:
    """Runs `task` on `workers` threads released together; engine errors are returned."""
    barrier = threading.Barrier(workers)

    def run(worker: int) -> T | EngineError:
        barrier.wait()
        try:
            return task(worker)
        except EngineError as e:
            return e

    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(run, range(workers)))


def test_two_sources_of_one_batch_make_one_fact(store: GraphStore, scope: Scope) -> None:
    batch = Batch(
        sources=(
            SourceClaims(source=source("fhir:Condition/c1"), claims=(claim(),)),
            SourceClaims(source=source("cda:doc1:e1"), claims=(claim(status="resolved"),)),
        )
    )

    result = store.write(scope, batch)

    assert (result.sources_added, result.facts_added, result.facts_merged) == (2, 1, 1)
    (fact,) = store.list_facts(scope)
    assert len(fact.sources) == 2


def test_a_batch_that_fails_writes_nothing(store: GraphStore, scope: Scope) -> None:
    store.write(
        scope,
        asserted("fhir:MedicationRequest/m1", claim(METFORMIN, status="current"), updated=at(1)),
    )
    store.create_session(scope, Session(session_id="s1"))
    store.write(scope, Batch(memories=(memory("m1", "s1"),)))
    before = store.count_patient_items(scope)

    with pytest.raises(Conflict):
        store.write(
            scope,
            Batch(
                sources=asserted("fhir:Condition/c1", claim()).sources,
                memories=(memory("m2", "s1"), memory("m1", "s1")),
            ),
        )

    assert [f.fact_key for f in store.list_facts(scope)] == [METFORMIN]
    assert [r.memory.memory_id for r in store.list_memories(scope)] == ["m1"]
    assert store.count_patient_items(scope) == before


def test_a_fact_a_memory_bears_on_outlives_its_source(store: GraphStore, scope: Scope) -> None:
    store.write(
        scope,
        asserted("fhir:MedicationRequest/m1", claim(METFORMIN, status="current"), updated=at(1)),
    )
    store.create_session(scope, Session(session_id="s1"))
    store.write(scope, Batch(memories=(memory("m1", "s1"),), relationships=(relationship("m1"),)))

    result = store.write(
        scope,
        asserted("fhir:MedicationRequest/m1", claim(DIABETES), content="v2", updated=at(2)),
    )

    assert (result.sources_replaced, result.facts_added, result.facts_removed) == (1, 1, 0)
    (record,) = store.list_memories(scope)
    assert [r.fact_key for r in record.relationships] == [METFORMIN]


def test_concurrent_creations_of_one_session_leave_one(store: GraphStore, scope: Scope) -> None:
    outcomes = _race(4, lambda _: store.create_session(scope, Session(session_id="s1")))

    assert sum(isinstance(o, Session) for o in outcomes) == 1
    assert sum(isinstance(o, Conflict) for o in outcomes) == 3
    assert [s.session_id for s in store.list_sessions(scope)] == ["s1"]


def test_concurrent_appends_number_messages_without_gaps(store: GraphStore, scope: Scope) -> None:
    store.create_session(scope, Session(session_id="s1"))

    def append(worker: int) -> list[int]:
        return [
            m.seq
            for round_ in range(5)
            for m in store.append_messages(
                scope, "s1", [NewMessage(role=Role.PATIENT, text=f"{worker}-{round_}")]
            )
        ]

    outcomes = _race(4, append)

    taken = [seq for seqs in outcomes if isinstance(seqs, list) for seq in seqs]
    assert sorted(taken) == list(range(1, 21))
    assert [m.seq for m in store.list_messages(scope, "s1")] == list(range(1, 21))


def test_concurrent_watermark_moves_succeed_once(store: GraphStore, scope: Scope) -> None:
    store.create_session(scope, Session(session_id="s1"))

    def generate(worker: int) -> object:
        return store.write(
            scope,
            Batch(
                memories=(memory(f"m{worker}", "s1"),),
                watermark=Watermark(session_id="s1", expected=0, new=3),
            ),
        )

    outcomes = _race(4, generate)

    assert sum(isinstance(o, Conflict) for o in outcomes) == 3
    assert len(store.list_memories(scope)) == 1
    assert store.get_session(scope, "s1").processed_through == 3


@pytest.mark.neo4j
def test_neo4j_retries_a_seq_taken_by_a_concurrent_writer(neo4j_uri: str, scope: Scope) -> None:
    """A uniqueness violation caused by another writer is retried, not reported."""
    from neo4j import GraphDatabase

    from engine.neo4j_store import Neo4jStore
    from engine.settings import get_settings

    store = Neo4jStore.from_url(neo4j_uri)
    store.create_session(scope, Session(session_id="s1"))
    password = get_settings().neo4j_password.get_secret_value()
    auth = (get_settings().neo4j_user, password) if password else None
    with GraphDatabase.driver(neo4j_uri, auth=auth) as driver, driver.session() as session:
        # A writer that takes seq 1 without the session lock the adapter uses.
        tx = session.begin_transaction()
        tx.run(
            "CREATE (:Message {org: $org, patient: $patient, session_id: 's1', seq: 1,"
            " role: 'patient', text: 'first', timestamp: '2024-01-01T00:00:00+00:00'})",
            org=scope.org,
            patient=scope.patient,
        ).consume()
        with ThreadPoolExecutor(max_workers=1) as pool:
            pending = pool.submit(
                store.append_messages, scope, "s1", [NewMessage(role=Role.PATIENT, text="x")]
            )
            threading.Event().wait(0.5)  # the append now waits on the index entry for seq 1
            tx.commit()
            (added,) = pending.result(timeout=30)
    store.close()

    assert added.seq == 2


@pytest.mark.neo4j
def test_neo4j_unreachable_is_store_unavailable() -> None:
    from engine.neo4j_store import Neo4jStore

    with pytest.raises(StoreUnavailable):
        Neo4jStore.from_url("bolt://127.0.0.1:9")
