"""Facts, sources and their merging: the same behaviour on every backend."""

from datetime import UTC, datetime, timedelta, timezone

import pytest

from engine.errors import NotFound
from engine.models import Batch, FactKind, FactLink, FactLinkType, Patient, Scope, SourceFormat
from engine.store import GraphStore
from tests.contract.builders import DIABETES, METFORMIN, asserted, at, claim


def test_upsert_is_idempotent(store: GraphStore, scope: Scope) -> None:
    batch = asserted("fhir:Condition/c1", claim())
    first = store.write(scope, batch)
    before = store.list_facts(scope)
    second = store.write(scope, batch)

    assert (first.facts_added, first.sources_added) == (1, 1)
    assert (second.facts_added, second.sources_added, second.sources_unchanged) == (0, 0, 1)
    assert store.list_facts(scope) == before
    assert store.count_patient_items(scope) > 0


def test_second_source_for_same_key_adds_a_source_not_a_fact(
    store: GraphStore, scope: Scope
) -> None:
    store.write(scope, asserted("fhir:Condition/c1", claim(), updated=at(1)))
    result = store.write(
        scope,
        asserted("cda:doc1:e1", claim(label="Diabetes mellitus type 2"), fmt=SourceFormat.CDA),
    )

    facts = store.list_facts(scope)
    assert [f.fact_key for f in facts] == [DIABETES]
    assert (result.facts_added, result.facts_merged, result.sources_added) == (0, 1, 1)
    assert {s.source_ref for s in facts[0].sources} == {"fhir:Condition/c1", "cda:doc1:e1"}


def test_disagreeing_sources_leave_a_conflict_record(store: GraphStore, scope: Scope) -> None:
    store.write(scope, asserted("fhir:Condition/c1", claim(status="active"), updated=at(1)))
    store.write(scope, asserted("cda:doc1:e1", claim(status="resolved"), updated=at(5)))

    fact = store.get_fact(scope, DIABETES)
    assert fact.status == "resolved"
    (conflict,) = fact.conflicts
    assert conflict.field == "status"
    assert conflict.winner == "resolved"
    assert conflict.winner_source == "cda:doc1:e1"
    assert set(conflict.values) == {("active", "fhir:Condition/c1"), ("resolved", "cda:doc1:e1")}
    assert "most recent" in conflict.strategy


def test_newer_version_replaces_what_the_source_asserted(store: GraphStore, scope: Scope) -> None:
    store.write(scope, asserted("fhir:Condition/c1", claim(status="active"), updated=at(1)))
    result = store.write(
        scope,
        asserted(
            "fhir:Condition/c1",
            claim("condition:snomed:38341003", status="resolved", label="Hypertension"),
            content="v2",
            updated=at(2),
        ),
    )

    assert result.sources_replaced == 1
    assert result.facts_removed == 1
    (fact,) = store.list_facts(scope)
    assert (fact.fact_key, fact.status) == ("condition:snomed:38341003", "resolved")


def test_older_version_does_not_replace_a_newer_one(store: GraphStore, scope: Scope) -> None:
    store.write(scope, asserted("fhir:Condition/c1", claim(status="resolved"), updated=at(5)))
    result = store.write(
        scope, asserted("fhir:Condition/c1", claim(status="active"), content="v0", updated=at(1))
    )

    assert result.sources_stale == 1
    assert store.get_fact(scope, DIABETES).status == "resolved"


def test_facts_filter_by_kind_and_status(store: GraphStore, scope: Scope) -> None:
    store.write(scope, asserted("fhir:Condition/c1", claim()))
    store.write(scope, asserted("fhir:MedicationRequest/m1", claim(METFORMIN, status="current")))
    store.write(
        scope, asserted("fhir:Condition/c2", claim("condition:snomed:1", status="resolved"))
    )

    assert [f.fact_key for f in store.list_facts(scope, kind=FactKind.MEDICATION)] == [METFORMIN]
    assert [f.fact_key for f in store.list_facts(scope, FactKind.CONDITION, "active")] == [DIABETES]
    assert len(store.list_facts(scope)) == 3


def test_fact_fields_and_codes_round_trip(store: GraphStore, scope: Scope) -> None:
    store.write(scope, asserted("fhir:Condition/c1", claim(onset="2019-03-01")))

    fact = store.get_fact(scope, DIABETES)
    assert fact.kind is FactKind.CONDITION
    assert fact.label == "Type 2 diabetes"
    assert fact.fields == {"onset": "2019-03-01"}
    assert [(c.system, c.code) for c in fact.codes] == [("snomed", "44054006")]
    (source,) = fact.sources
    assert (source.format, source.resource_type, source.resource_id) == (
        SourceFormat.FHIR,
        "Condition",
        "c1",
    )


def test_missing_fact_and_patient_are_not_found(store: GraphStore, scope: Scope) -> None:
    with pytest.raises(NotFound):
        store.get_fact(scope, DIABETES)
    with pytest.raises(NotFound):
        store.get_patient(scope)


def test_patient_demographics_upsert(store: GraphStore, scope: Scope) -> None:
    store.write(scope, Batch(patient=Patient(name="Ada Lovelace", gender="female")))
    store.write(scope, Batch(patient=Patient(name="Ada King", birth_date="1815-12-10")))

    assert store.get_patient(scope) == Patient(name="Ada King", birth_date="1815-12-10")
    assert store.list_patients(scope.org) == [scope.patient]


def test_fact_links_are_merged(store: GraphStore, scope: Scope) -> None:
    store.write(scope, asserted("fhir:Condition/c1", claim()))
    store.write(scope, asserted("fhir:MedicationRequest/m1", claim(METFORMIN, status="current")))
    link = FactLink(from_key=METFORMIN, to_key=DIABETES, type=FactLinkType.PRESCRIBED_FOR)

    first = store.write(scope, Batch(fact_links=(link,)))
    second = store.write(scope, Batch(fact_links=(link,)))

    assert (first.links_added, second.links_added) == (1, 0)
    assert store.list_fact_links(scope) == [link]


def test_link_to_an_unknown_fact_is_skipped(store: GraphStore, scope: Scope) -> None:
    store.write(scope, asserted("fhir:Condition/c1", claim()))
    link = FactLink(from_key=METFORMIN, to_key=DIABETES, type=FactLinkType.PRESCRIBED_FOR)

    result = store.write(scope, Batch(fact_links=(link,)))

    assert (result.links_added, result.links_skipped) == (0, 1)
    assert store.list_fact_links(scope) == []


def test_versions_compare_as_times_not_as_text(store: GraphStore, scope: Scope) -> None:
    newer = datetime(2024, 1, 1, 9, 0, tzinfo=UTC)
    older_in_another_zone = datetime(2024, 1, 1, 12, 0, tzinfo=timezone(timedelta(hours=5)))
    store.write(scope, asserted("fhir:Condition/c1", claim(status="resolved"), updated=newer))

    result = store.write(
        scope,
        asserted("fhir:Condition/c1", claim(), content="v0", updated=older_in_another_zone),
    )

    assert result.sources_stale == 1
    assert store.get_fact(scope, DIABETES).status == "resolved"
