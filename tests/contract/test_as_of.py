"""The `as_of` cutoff of store reads: what the engine knew at an instant, on every backend."""

from datetime import UTC, datetime, timedelta

import pytest

from engine.errors import NotFound
from engine.models import (
    Batch,
    Claim,
    DismissReason,
    MemoryType,
    ReviewAction,
    Scope,
    Session,
    SourceClaims,
)
from engine.store import GraphStore
from tests.contract.builders import DIABETES, METFORMIN, claim, memory, review, source

FIRST = datetime(2026, 3, 1, 9, tzinfo=UTC)
SECOND = datetime(2026, 6, 1, 9, tzinfo=UTC)


def _ingest(store: GraphStore, scope: Scope, ref: str, when: datetime, *claims: Claim) -> None:
    ingested = source(ref, content=ref).model_copy(update={"ingested_at": when})
    store.write(scope, Batch(sources=(SourceClaims(source=ingested, claims=claims),)))


@pytest.fixture
def two_ingests(store: GraphStore, scope: Scope) -> GraphStore:
    _ingest(store, scope, "fhir:Condition/c1", FIRST, claim(DIABETES, status="active"))
    _ingest(
        store,
        scope,
        "cda:doc2:e1",
        SECOND,
        claim(DIABETES, status="resolved"),
        claim(METFORMIN, status="current", label="Metformin"),
    )
    return store


def test_facts_merge_only_the_sources_ingested_by_the_cutoff(
    two_ingests: GraphStore, scope: Scope
) -> None:
    then = two_ingests.list_facts(scope, as_of=FIRST + timedelta(days=1))
    now = two_ingests.list_facts(scope)

    assert [(f.fact_key, f.status) for f in then] == [(DIABETES, "active")]
    assert [s.source_ref for s in then[0].sources] == ["fhir:Condition/c1"]
    assert then[0].conflicts == ()
    assert {f.fact_key for f in now} == {DIABETES, METFORMIN}
    assert len(two_ingests.get_fact(scope, DIABETES).sources) == 2


def test_the_cutoff_is_inclusive_and_a_later_fact_is_absent(
    two_ingests: GraphStore, scope: Scope
) -> None:
    assert two_ingests.get_fact(scope, METFORMIN, as_of=SECOND).status == "current"
    with pytest.raises(NotFound):
        two_ingests.get_fact(scope, METFORMIN, as_of=SECOND - timedelta(microseconds=1))
    assert two_ingests.list_facts(scope, as_of=FIRST - timedelta(seconds=1)) == []


def test_sessions_and_memories_created_after_the_cutoff_are_left_out(
    store: GraphStore, scope: Scope
) -> None:
    for day, sid in ((1, "s1"), (10, "s2")):
        created = datetime(2026, 4, day, tzinfo=UTC)
        store.create_session(scope, Session(session_id=sid, created_at=created))
        said = memory(f"m-{sid}", sid).model_copy(update={"created_at": created})
        store.write(scope, Batch(memories=(said,)))
    cutoff = datetime(2026, 4, 5, tzinfo=UTC)

    assert [s.session_id for s in store.list_sessions(scope, as_of=cutoff)] == ["s1"]
    then = store.list_memories(scope, MemoryType.ADHERENCE, as_of=cutoff)
    assert [r.memory.memory_id for r in then] == ["m-s1"]
    assert [r.memory.memory_id for r in store.list_memories(scope)] == ["m-s2", "m-s1"]


def test_reviews_made_after_the_cutoff_are_left_out(store: GraphStore, scope: Scope) -> None:
    confirmed = review("r1", "m1", ReviewAction.CONFIRM, day=2)
    said = memory("m1", "s1").model_copy(
        update={"created_at": confirmed.created_at - timedelta(days=1)}
    )
    store.create_session(scope, Session(session_id="s1"))
    store.write(scope, Batch(memories=(said,)))
    store.add_review(scope, confirmed)
    store.add_review(scope, review("r2", "m1", ReviewAction.DISMISS, DismissReason.WRONG, day=9))
    (live,) = store.list_memories(scope)
    (then,) = store.list_memories(scope, as_of=confirmed.created_at + timedelta(days=1))

    assert live.dismissed
    assert [r.review_id for r in then.reviews] == ["r1"]
    assert not then.dismissed
