"""`read_view`: one read of what a VFS view needs, equal to the single reads on every backend."""

from datetime import UTC, datetime, timedelta

import pytest

from engine.errors import NotFound
from engine.models import (
    Batch,
    DismissReason,
    FactKind,
    FactLink,
    FactLinkType,
    Patient,
    ReviewAction,
    Scope,
    Session,
    SourceClaims,
)
from engine.store import GraphStore, ViewRequest, compose_view
from tests.contract.builders import (
    DIABETES,
    METFORMIN,
    claim,
    memory,
    relationship,
    review,
    source,
)

A1C = "observation:loinc:4548-4"
FIRST = datetime(2026, 3, 1, 9, tzinfo=UTC)
SECOND = datetime(2026, 6, 1, 9, tzinfo=UTC)
REQUESTS = [
    ViewRequest(),
    ViewRequest(kinds=frozenset({FactKind.CONDITION})),
    ViewRequest(kinds=frozenset({FactKind.MEDICATION, FactKind.ALLERGY}), memories=True),
    ViewRequest(kinds=frozenset(FactKind), links=True, memories=True, sessions=True),
]


def _ingest(store: GraphStore, scope: Scope, ref: str, when: datetime, batch: Batch) -> None:
    sourced = tuple(
        SourceClaims(source=s.source.model_copy(update={"ingested_at": when}), claims=s.claims)
        for s in batch.sources
    )
    store.write(scope, batch.model_copy(update={"sources": sourced}))


def _patient(store: GraphStore, scope: Scope, name: str) -> None:
    """Facts of three kinds from two ingests, a link, two sessions, memories, reviews."""
    first = Batch(
        patient=Patient(name=name, birth_date="1970-01-01"),
        sources=(
            SourceClaims(source=source("fhir:Condition/c1", "c1"), claims=(claim(DIABETES),)),
        ),
    )
    _ingest(store, scope, "c1", FIRST, first)
    second = Batch(
        sources=(
            SourceClaims(
                source=source("cda:doc2:e1", "doc2"),
                claims=(
                    claim(DIABETES, status="resolved"),
                    claim(METFORMIN, status="current", label="Metformin"),
                    claim(A1C, status="final", label="HbA1c", value="7.1"),
                ),
            ),
        ),
        fact_links=(
            FactLink(from_key=METFORMIN, to_key=DIABETES, type=FactLinkType.PRESCRIBED_FOR),
        ),
    )
    _ingest(store, scope, "doc2", SECOND, second)
    for day, sid in ((2, "s1"), (9, "s2")):
        created = FIRST + timedelta(days=day)
        store.create_session(scope, Session(session_id=sid, created_at=created))
        said = memory(f"m-{sid}", sid).model_copy(update={"created_at": created})
        store.write(scope, Batch(memories=(said,), relationships=(relationship(said.memory_id),)))
    reviews = (
        ("r1", "m-s1", ReviewAction.CONFIRM, FIRST + timedelta(days=3)),
        ("r2", "m-s1", ReviewAction.DISMISS, FIRST + timedelta(days=7)),
        ("r3", "m-s2", ReviewAction.DISMISS, SECOND),
    )
    for review_id, memory_id, action, when in reviews:
        reason = DismissReason.WRONG if action is ReviewAction.DISMISS else None
        made = review(review_id, memory_id, action, reason)
        store.add_review(scope, made.model_copy(update={"created_at": when}))


@pytest.fixture
def patient(store: GraphStore, scope: Scope) -> GraphStore:
    _patient(store, scope, "Ada Example")
    _patient(store, scope.model_copy(update={"patient": "someone-else"}), "Someone Else")
    return store


@pytest.mark.parametrize("request_", REQUESTS, ids=["patient", "kind", "memories", "all"])
@pytest.mark.parametrize("as_of", [None, FIRST + timedelta(days=5), SECOND], ids=str)
def test_a_view_equals_the_single_reads(
    patient: GraphStore, scope: Scope, request_: ViewRequest, as_of: datetime | None
) -> None:
    view = patient.read_view(scope, request_, as_of=as_of)

    assert view == compose_view(patient, scope, request_, as_of)
    assert set(view.facts) == set(request_.kinds)
    assert view.patient.name == "Ada Example"


def test_a_view_holds_the_patients_facts_links_memories_and_sessions(
    patient: GraphStore, scope: Scope
) -> None:
    view = patient.read_view(scope, REQUESTS[-1])

    assert [f.fact_key for f in view.facts[FactKind.CONDITION]] == [DIABETES]
    assert view.facts[FactKind.CONDITION][0].status == "resolved"
    assert [f.fact_key for f in view.facts[FactKind.OBSERVATION]] == [A1C]
    assert view.facts[FactKind.ALLERGY] == []
    assert view.links == [
        FactLink(from_key=METFORMIN, to_key=DIABETES, type=FactLinkType.PRESCRIBED_FOR)
    ]
    assert view.memories is not None and view.sessions is not None
    assert [r.memory.memory_id for r in view.memories] == ["m-s2", "m-s1"]
    assert [[v.review_id for v in r.reviews] for r in view.memories] == [["r3"], ["r1", "r2"]]
    assert [r.relationships[0].fact_key for r in view.memories] == [METFORMIN, METFORMIN]
    assert [s.session_id for s in view.sessions] == ["s1", "s2"]


def test_as_of_leaves_out_later_sources_sessions_memories_and_reviews(
    patient: GraphStore, scope: Scope
) -> None:
    view = patient.read_view(scope, REQUESTS[-1], as_of=FIRST + timedelta(days=5))

    assert [(f.fact_key, f.status) for kind in FactKind for f in view.facts[kind]] == [
        (DIABETES, "active")
    ]
    assert view.memories is not None and view.sessions is not None
    assert [s.session_id for s in view.sessions] == ["s1"]
    assert [[v.review_id for v in r.reviews] for r in view.memories] == [["r1"]]


def test_parts_not_asked_for_are_none(patient: GraphStore, scope: Scope) -> None:
    view = patient.read_view(scope, ViewRequest())

    assert (view.facts, view.links, view.memories, view.sessions) == ({}, None, None, None)


def test_an_unknown_patient_is_not_found(store: GraphStore, scope: Scope) -> None:
    with pytest.raises(NotFound):
        store.read_view(scope, REQUESTS[-1])
