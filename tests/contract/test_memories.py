"""Sessions, messages, memories and relationships: append-only on every backend."""

import pytest

from engine.errors import Conflict, NotFound
from engine.models import (
    Batch,
    MemoryType,
    NewMessage,
    RelationshipType,
    Role,
    Scope,
    Session,
    SessionStatus,
    Watermark,
)
from engine.store import GraphStore
from tests.contract.builders import METFORMIN, asserted, claim, memory, relationship


@pytest.fixture
def session(store: GraphStore, scope: Scope) -> Session:
    store.write(scope, asserted("fhir:MedicationRequest/m1", claim(METFORMIN, status="current")))
    return store.create_session(scope, Session(session_id="s1"))


def test_messages_are_numbered_in_order(store: GraphStore, scope: Scope, session: Session) -> None:
    store.append_messages(scope, "s1", [NewMessage(role=Role.PROVIDER, text="How are you?")])
    added = store.append_messages(
        scope,
        "s1",
        [
            NewMessage(role=Role.PATIENT, text="Tired."),
            NewMessage(role=Role.PATIENT, text="Dizzy."),
        ],
    )

    assert [m.seq for m in added] == [2, 3]
    assert [m.text for m in store.list_messages(scope, "s1", after=1)] == ["Tired.", "Dizzy."]
    assert store.list_messages(scope, "s1")[0].role is Role.PROVIDER


def test_closed_session_stays_readable_and_accepts_nothing(
    store: GraphStore, scope: Scope, session: Session
) -> None:
    store.append_messages(scope, "s1", [NewMessage(role=Role.PATIENT, text="Hello")])
    closed = store.close_session(scope, "s1")

    assert closed.status is SessionStatus.CLOSED
    with pytest.raises(Conflict):
        store.append_messages(scope, "s1", [NewMessage(role=Role.PATIENT, text="More")])
    assert [m.text for m in store.list_messages(scope, "s1")] == ["Hello"]
    assert store.get_session(scope, "s1").status is SessionStatus.CLOSED


def test_duplicate_and_missing_sessions(store: GraphStore, scope: Scope, session: Session) -> None:
    with pytest.raises(Conflict):
        store.create_session(scope, Session(session_id="s1"))
    with pytest.raises(NotFound):
        store.get_session(scope, "nope")
    with pytest.raises(NotFound):
        store.append_messages(scope, "nope", [NewMessage(role=Role.PATIENT, text="x")])
    assert [s.session_id for s in store.list_sessions(scope)] == ["s1"]


def test_memories_and_relationships_are_appended(
    store: GraphStore, scope: Scope, session: Session
) -> None:
    result = store.write(
        scope,
        Batch(
            memories=(memory("m1", "s1"),),
            relationships=(relationship("m1"),),
            watermark=Watermark(session_id="s1", expected=0, new=1),
        ),
    )

    assert (result.memories_added, result.relationships_added) == (1, 1)
    (record,) = store.list_memories(scope)
    assert record.memory == memory("m1", "s1").model_copy(
        update={"created_at": record.memory.created_at}
    )
    assert [(r.fact_key, r.type) for r in record.relationships] == [
        (METFORMIN, RelationshipType.CONFLICTS)
    ]
    assert store.get_session(scope, "s1").processed_through == 1


def test_memories_are_append_only(store: GraphStore, scope: Scope, session: Session) -> None:
    store.write(scope, Batch(memories=(memory("m1", "s1"),)))
    original = store.get_memory(scope, "m1")

    with pytest.raises(Conflict):
        store.write(scope, Batch(memories=(memory("m1", "s1", text="I take it daily"),)))
    store.create_session(scope, Session(session_id="s2"))
    store.write(scope, Batch(memories=(memory("m2", "s2"),)))

    assert store.get_memory(scope, "m1") == original
    assert len(store.list_memories(scope, MemoryType.ADHERENCE)) == 2
    assert store.list_memories(scope, MemoryType.SYMPTOM) == []


def test_relationship_pair_is_written_once(
    store: GraphStore, scope: Scope, session: Session
) -> None:
    store.write(scope, Batch(memories=(memory("m1", "s1"),), relationships=(relationship("m1"),)))

    with pytest.raises(Conflict):
        store.write(
            scope, Batch(relationships=(relationship("m1", type=RelationshipType.CORROBORATES),))
        )
    (record,) = store.list_memories(scope)
    assert [r.type for r in record.relationships] == [RelationshipType.CONFLICTS]


def test_stale_watermark_writes_nothing(store: GraphStore, scope: Scope, session: Session) -> None:
    store.write(scope, Batch(watermark=Watermark(session_id="s1", expected=0, new=2)))

    with pytest.raises(Conflict):
        store.write(
            scope,
            Batch(
                memories=(memory("m1", "s1"),),
                watermark=Watermark(session_id="s1", expected=0, new=2),
            ),
        )
    assert store.list_memories(scope) == []
    assert store.get_session(scope, "s1").processed_through == 2


@pytest.mark.parametrize("type_", list(RelationshipType))
def test_every_relationship_type_round_trips(
    store: GraphStore, scope: Scope, session: Session, type_: RelationshipType
) -> None:
    store.write(
        scope,
        Batch(memories=(memory("m1", "s1"),), relationships=(relationship("m1", type=type_),)),
    )

    (record,) = store.list_memories(scope)
    (rel,) = record.relationships
    assert (rel.type, rel.fact_key, rel.rationale) == (
        type_,
        METFORMIN,
        relationship("m1").rationale,
    )
    assert store.get_fact(scope, METFORMIN).status == "current"  # the fact never changes
