"""Memory reviews: appended on every backend, read oldest first, erased with the patient."""

import pytest

from engine.errors import Conflict, NotFound
from engine.models import Batch, DismissReason, ReviewAction, Scope, Session
from engine.store import GraphStore
from tests.contract.builders import METFORMIN, asserted, claim, memory, relationship, review


@pytest.fixture
def reviewed(store: GraphStore, scope: Scope) -> str:
    store.write(scope, asserted("fhir:MedicationRequest/m1", claim(METFORMIN, status="current")))
    store.create_session(scope, Session(session_id="s1"))
    store.write(scope, Batch(memories=(memory("m1", "s1"),), relationships=(relationship("m1"),)))
    return "m1"


def test_reviews_are_appended_and_read_oldest_first(
    store: GraphStore, scope: Scope, reviewed: str
) -> None:
    store.add_review(scope, review("r2", reviewed, ReviewAction.NOTE, note="<b>ask</b>", day=3))
    store.add_review(scope, review("r1", reviewed, ReviewAction.CONFIRM, day=2))
    dismissal = review("r3", reviewed, ReviewAction.DISMISS, DismissReason.WRONG, day=4)
    assert store.add_review(scope, dismissal) == dismissal

    reviews = store.list_reviews(scope, reviewed)

    assert [r.review_id for r in reviews] == ["r1", "r2", "r3"]
    assert reviews[1].note == "<b>ask</b>"
    assert reviews[2].reason is DismissReason.WRONG
    (record,) = store.list_memories(scope)
    assert record.reviews == tuple(reviews)
    assert record.dismissed
    assert record.relationships[0].fact_key == METFORMIN


def test_a_note_does_not_change_the_verdict(store: GraphStore, scope: Scope, reviewed: str) -> None:
    store.add_review(scope, review("r1", reviewed, ReviewAction.DISMISS, DismissReason.WRONG))
    store.add_review(scope, review("r2", reviewed, ReviewAction.CONFIRM, day=2))
    store.add_review(scope, review("r3", reviewed, ReviewAction.NOTE, note="checked", day=3))

    (record,) = store.list_memories(scope)

    assert record.verdict is ReviewAction.CONFIRM
    assert record.review is not None and record.review.review_id == "r3"
    assert not record.dismissed


def test_unknown_memory_and_duplicate_review(
    store: GraphStore, scope: Scope, reviewed: str
) -> None:
    with pytest.raises(NotFound):
        store.add_review(scope, review("r1", "nope"))
    with pytest.raises(NotFound):
        store.list_reviews(scope, "nope")
    store.add_review(scope, review("r1", reviewed))
    with pytest.raises(Conflict):
        store.add_review(scope, review("r1", reviewed, day=2))
    assert len(store.list_reviews(scope, reviewed)) == 1


def test_reviews_stay_in_their_scope(
    store: GraphStore, scope: Scope, reviewed: str, org: str
) -> None:
    other = Scope(org=org, patient="someone-else")
    store.create_session(other, Session(session_id="s1"))
    store.write(other, Batch(memories=(memory("m1", "s1"),)))
    store.add_review(scope, review("r1", reviewed))

    assert store.list_reviews(other, "m1") == []
    with pytest.raises(NotFound):
        store.add_review(Scope(org=f"{org}-x", patient=scope.patient), review("r2", reviewed))


def test_erasure_removes_reviews(store: GraphStore, scope: Scope, reviewed: str) -> None:
    store.add_review(scope, review("r1", reviewed, ReviewAction.NOTE, note="private"))

    store.erase_patient(scope)

    assert store.count_patient_items(scope) == 0
    with pytest.raises(NotFound):
        store.list_reviews(scope, reviewed)
