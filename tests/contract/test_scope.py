"""Scope isolation, erasure and concurrency on every backend."""

from concurrent.futures import ThreadPoolExecutor

from engine.models import Batch, NewMessage, Role, Scope, Session
from engine.store import GraphStore
from tests.contract.builders import DIABETES, METFORMIN, asserted, claim, memory, relationship


def _fill(store: GraphStore, scope: Scope) -> None:
    store.write(scope, asserted("fhir:Condition/c1", claim()))
    store.write(scope, asserted("fhir:MedicationRequest/m1", claim(METFORMIN, status="current")))
    store.create_session(scope, Session(session_id="s1"))
    store.append_messages(scope, "s1", [NewMessage(role=Role.PATIENT, text="I stopped it")])
    store.write(scope, Batch(memories=(memory("m1", "s1"),), relationships=(relationship("m1"),)))


def test_another_org_or_patient_sees_nothing(store: GraphStore, scope: Scope) -> None:
    _fill(store, scope)
    others = [
        Scope(org=f"{scope.org}-other", patient=scope.patient),
        Scope(org=scope.org, patient="p2"),
    ]

    for other in others:
        assert store.list_facts(other) == []
        assert store.list_memories(other) == []
        assert store.list_sessions(other) == []
        assert store.count_patient_items(other) == 0
    assert store.list_patients(f"{scope.org}-other") == []


def test_same_keys_in_two_orgs_stay_apart(store: GraphStore, scope: Scope) -> None:
    other = Scope(org=f"{scope.org}-other", patient=scope.patient)
    store.write(scope, asserted("fhir:Condition/c1", claim(status="active")))
    store.write(other, asserted("fhir:Condition/c1", claim(status="resolved"), content="v2"))

    assert store.get_fact(scope, DIABETES).status == "active"
    assert store.get_fact(other, DIABETES).status == "resolved"
    assert len(store.get_fact(scope, DIABETES).sources) == 1


def test_erasure_leaves_nothing_and_touches_no_one_else(store: GraphStore, scope: Scope) -> None:
    neighbour = Scope(org=scope.org, patient="p2")
    _fill(store, scope)
    _fill(store, neighbour)
    neighbour_items = store.count_patient_items(neighbour)

    removed = store.erase_patient(scope)

    assert removed > 0
    assert store.count_patient_items(scope) == 0
    assert store.list_patients(scope.org) == ["p2"]
    assert store.count_patient_items(neighbour) == neighbour_items
    assert len(store.list_memories(neighbour)[0].relationships) == 1


def test_concurrent_upserts_of_one_key_leave_one_fact(store: GraphStore, scope: Scope) -> None:
    def ingest(worker: int) -> None:
        for round_ in range(5):
            ref = f"fhir:Condition/w{worker}-r{round_}"
            store.write(scope, asserted(ref, claim(), content=f"{worker}-{round_}"))

    with ThreadPoolExecutor(max_workers=4) as pool:
        list(pool.map(ingest, range(4)))

    (fact,) = store.list_facts(scope)
    assert fact.fact_key == DIABETES
    assert len(fact.sources) == 20
