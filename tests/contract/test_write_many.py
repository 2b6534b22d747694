"""Batches of several patients in one transaction: the same as writing them one by one."""

import threading
import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest

from engine.errors import NotFound
from engine.models import (
    Batch,
    FactLink,
    FactLinkType,
    Patient,
    Scope,
    SourceFormat,
    WriteResult,
)
from engine.store import GraphStore
from tests.contract.builders import DIABETES, METFORMIN, asserted, at, claim, memory

LINK = FactLink(from_key=METFORMIN, to_key=DIABETES, type=FactLinkType.PRESCRIBED_FOR)


def batches() -> list[tuple[str, Batch]]:
    """Two patients, the first thrice (its later batches merging into and linking what the
    first wrote), a patient that only a retirement names, and a stale source."""
    current = claim(METFORMIN, status="current", label="metformin")
    ada = Patient(name="Ada Lovelace")
    return [
        ("p2", asserted("fhir:Condition/c9", claim(), updated=at(2))),
        ("p1", asserted("fhir:Condition/c1", claim()).model_copy(update={"patient": ada})),
        ("p3", Batch(retire=("fhir:Condition/c1",))),
        ("p1", asserted("cda:doc1:e1", claim(status="resolved"), current, fmt=SourceFormat.CDA)),
        ("p1", Batch(patient=Patient(name="Ada King"), fact_links=(LINK,))),
        (
            "p2",
            asserted("fhir:Condition/c9", claim(status="resolved"), content="v2", updated=at(1)),
        ),
    ]


def state(store: GraphStore, org: str) -> list[object]:
    patients = store.list_patients(org)
    scopes = [Scope(org=org, patient=p) for p in patients]
    return [
        patients,
        [store.get_patient(s) for s in scopes],
        [store.list_facts(s) for s in scopes],
        [store.list_fact_links(s) for s in scopes],
        [store.count_patient_items(s) for s in scopes],
    ]


def test_write_many_writes_and_counts_as_the_writes_one_by_one(store: GraphStore, org: str) -> None:
    other = f"{org}-one-by-one"
    written = batches()

    together = store.write_many([(Scope(org=org, patient=p), batch) for p, batch in written])
    apart = [store.write(Scope(org=other, patient=p), batch) for p, batch in written]

    assert together == apart
    assert apart[3].facts_merged == 1 and apart[4].links_added == 1  # saw the batches before
    assert apart[5] == WriteResult(sources_stale=1)
    assert state(store, org) == state(store, other)
    assert store.list_patients(org) == ["p1", "p2"]  # p3: nothing to retire, no patient
    assert store.get_patient(Scope(org=org, patient="p1")) == Patient(name="Ada King")


def test_a_batch_that_fails_in_write_many_writes_nothing_of_any(
    store: GraphStore, org: str
) -> None:
    p1, p2 = Scope(org=org, patient="p1"), Scope(org=org, patient="p2")

    with pytest.raises(NotFound):
        store.write_many(
            [
                (p1, asserted("fhir:Condition/c1", claim())),
                (p2, Batch(patient=Patient(name="Ada"), memories=(memory("m1", "missing"),))),
            ]
        )

    assert store.list_patients(org) == []


def test_write_many_of_several_orgs_keeps_each_to_its_own(store: GraphStore, org: str) -> None:
    other = f"{org}-{uuid.uuid4().hex[:6]}"
    mine, theirs = Scope(org=org, patient="p1"), Scope(org=other, patient="p1")

    store.write_many(
        [
            (theirs, asserted("fhir:Condition/c1", claim())),
            (mine, asserted("fhir:MedicationRequest/m1", claim(METFORMIN, status="current"))),
        ]
    )

    assert [f.fact_key for f in store.list_facts(mine)] == [METFORMIN]
    assert [f.fact_key for f in store.list_facts(theirs)] == [DIABETES]


def test_two_write_many_locking_the_same_patients_in_other_orders_both_succeed(
    store: GraphStore, org: str
) -> None:
    patients = [f"p{n}" for n in range(8)]
    barrier = threading.Barrier(2)

    def write(worker: int) -> list[WriteResult]:
        order = patients if worker == 0 else patients[::-1]
        writes = [
            (Scope(org=org, patient=p), asserted(f"fhir:Condition/w{worker}", claim()))
            for p in order
        ]
        barrier.wait()
        return store.write_many(writes)

    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(write, range(2)))

    assert [sum(r.sources_added for r in rs) for rs in results] == [8, 8]
    assert store.list_patients(org) == patients
    for p in patients:
        (fact,) = store.list_facts(Scope(org=org, patient=p))
        assert len(fact.sources) == 2
