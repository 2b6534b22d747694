"""Audit events and the memory-pause flag on every backend."""

import sqlite3
from datetime import UTC, datetime, timedelta

import pytest

from engine.audit import ERASED, AuditEvent
from engine.errors import NotFound
from engine.models import Scope
from engine.store import GraphStore
from tests.contract.builders import asserted, claim

T0 = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)


def event(scope: Scope, minute: int, patient: str | None = "", **fields: object) -> AuditEvent:
    return AuditEvent.model_validate(
        {
            "org": scope.org,
            "patient": scope.patient if patient == "" else patient,
            "time": T0 + timedelta(minutes=minute),
            "actor": "user-1",
            "action": "GET /v1/patients/{pid}/facts",
            "outcome": 200,
            "correlation_id": f"req-{minute}",
        }
        | fields
    )


def test_events_come_back_newest_first_within_the_limit(store: GraphStore, scope: Scope) -> None:
    events = [event(scope, minute) for minute in (3, 1, 2)]
    store.append_audit(events)

    listed = store.list_audit(scope.org)

    assert [e.correlation_id for e in listed] == ["req-3", "req-2", "req-1"]
    assert listed[0] == events[0]
    assert [e.correlation_id for e in store.list_audit(scope.org, limit=2)] == ["req-3", "req-2"]


def test_events_filter_by_patient_and_stay_in_their_org(store: GraphStore, scope: Scope) -> None:
    other_org = Scope(org=f"{scope.org}-other", patient=scope.patient)
    store.append_audit(
        [
            event(scope, 1),
            event(scope, 2, patient="p2"),
            event(scope, 3, patient=None, action="GET /v1/admin/audit"),
            event(other_org, 4),
        ]
    )

    assert [e.correlation_id for e in store.list_audit(scope.org, scope.patient)] == ["req-1"]
    assert [e.correlation_id for e in store.list_audit(scope.org)] == ["req-3", "req-2", "req-1"]
    assert store.list_audit(scope.org)[0].patient is None
    assert [e.correlation_id for e in store.list_audit(other_org.org)] == ["req-4"]


def test_erasure_anonymises_the_patients_events_only(store: GraphStore, scope: Scope) -> None:
    store.write(scope, asserted("fhir:Condition/c1", claim()))
    store.append_audit([event(scope, 1), event(scope, 2, patient="p2")])
    assert store.count_patient_items(scope) > 0

    store.erase_patient(scope)

    assert store.count_patient_items(scope) == 0
    assert store.list_audit(scope.org, scope.patient) == []
    kept = {e.correlation_id: e for e in store.list_audit(scope.org)}
    assert kept["req-1"].patient == ERASED
    assert kept["req-1"].actor == "user-1"
    assert kept["req-1"].outcome == 200
    assert kept["req-2"].patient == "p2"


def test_audit_events_alone_count_as_items_of_the_patient(store: GraphStore, scope: Scope) -> None:
    store.append_audit([event(scope, 1)])

    assert store.count_patient_items(scope) == 1
    store.erase_patient(scope)
    assert store.count_patient_items(scope) == 0


def test_memory_pause_is_stored_on_the_patient(store: GraphStore, scope: Scope) -> None:
    store.write(scope, asserted("fhir:Condition/c1", claim()))
    assert store.is_memory_paused(scope) is False

    store.set_memory_paused(scope, True)
    assert store.is_memory_paused(scope) is True
    assert store.is_memory_paused(Scope(org=f"{scope.org}-other", patient=scope.patient)) is False
    store.write(scope, asserted("fhir:Condition/c2", claim(), content="v2"))
    assert store.is_memory_paused(scope) is True

    store.set_memory_paused(scope, False)
    assert store.is_memory_paused(scope) is False


def test_memory_pause_needs_a_patient_and_goes_with_erasure(
    store: GraphStore, scope: Scope
) -> None:
    with pytest.raises(NotFound):
        store.set_memory_paused(scope, True)
    store.write(scope, asserted("fhir:Condition/c1", claim()))
    store.set_memory_paused(scope, True)

    store.erase_patient(scope)

    assert store.count_patient_items(scope) == 0
    assert store.is_memory_paused(scope) is False


def test_sqlite_refuses_to_change_or_delete_audit_events(
    sqlite_store: GraphStore, scope: Scope
) -> None:
    sqlite_store.append_audit([event(scope, 1)])
    db = sqlite_store._db()  # type: ignore[attr-defined]
    where = (scope.org,)

    for statement in (
        "DELETE FROM audit_events WHERE org = ?",
        "UPDATE audit_events SET outcome = 500 WHERE org = ?",
        "UPDATE audit_events SET patient = 'p9' WHERE org = ?",
    ):
        with pytest.raises(sqlite3.DatabaseError, match="append-only"):
            db.execute(statement, where)
    (kept,) = sqlite_store.list_audit(scope.org)
    assert (kept.patient, kept.outcome) == (scope.patient, 200)
