"""Sources keep their own facts: only a proven newer version replaces or retires them."""

from engine.models import Batch, Scope, Session, SourceFormat
from engine.store import GraphStore
from tests.contract.builders import (
    DIABETES,
    METFORMIN,
    asserted,
    at,
    claim,
    memory,
    relationship,
)

HYPERTENSION = "condition:snomed:38341003"


def _keys(store: GraphStore, scope: Scope) -> list[str]:
    return [f.fact_key for f in store.list_facts(scope)]


def test_a_reused_id_without_version_evidence_is_kept_apart(
    store: GraphStore, scope: Scope
) -> None:
    store.write(scope, asserted("fhir:Condition/c1", claim()))
    other = asserted("fhir:Condition/c1", claim(HYPERTENSION, label="Hypertension"), content="b")

    result = store.write(scope, other)
    again = store.write(scope, other)

    assert (result.sources_kept_apart, result.sources_added, result.facts_removed) == (1, 1, 0)
    assert (again.sources_unchanged, again.sources_added, again.sources_kept_apart) == (1, 0, 0)
    assert _keys(store, scope) == [HYPERTENSION, DIABETES]
    refs = {s.source_ref for f in store.list_facts(scope) for s in f.sources}
    assert refs == {"fhir:Condition/c1", "fhir:Condition/c1~hash-b"}


def test_equal_versions_with_other_content_are_kept_apart(store: GraphStore, scope: Scope) -> None:
    cda = SourceFormat.CDA
    store.write(scope, asserted("cda:doc:e1", claim(), version="2", updated=at(3), fmt=cda))
    hypertension = claim(HYPERTENSION, label="Hypertension")

    # a later effectiveTime is no version of a C-CDA document: only a higher versionNumber
    result = store.write(
        scope,
        asserted("cda:doc:e1", hypertension, content="b", version="2", updated=at(5), fmt=cda),
    )

    assert (result.sources_kept_apart, result.sources_replaced) == (1, 0)
    assert _keys(store, scope) == [HYPERTENSION, DIABETES]


def test_version_ids_compare_as_numbers(store: GraphStore, scope: Scope) -> None:
    store.write(scope, asserted("fhir:Condition/c1", claim(), version="9"))
    hypertension = claim(HYPERTENSION, label="Hypertension")

    newer = store.write(
        scope, asserted("fhir:Condition/c1", hypertension, content="v2", version="10")
    )
    older = store.write(scope, asserted("fhir:Condition/c1", claim(), content="v0", version="8"))

    assert (newer.sources_replaced, newer.facts_removed) == (1, 1)
    assert (older.sources_stale, older.sources_replaced, older.facts_added) == (1, 0, 0)
    assert _keys(store, scope) == [HYPERTENSION]


def test_the_version_decides_before_the_time(store: GraphStore, scope: Scope) -> None:
    store.write(scope, asserted("fhir:Condition/c1", claim(), version="3", updated=at(1)))

    result = store.write(
        scope,
        asserted(
            "fhir:Condition/c1", claim(status="resolved"), content="v2", updated=at(9), version="2"
        ),
    )

    assert result.sources_stale == 1
    assert store.get_fact(scope, DIABETES).status == "active"


def test_retiring_a_source_removes_only_the_facts_no_one_else_asserts(
    store: GraphStore, scope: Scope
) -> None:
    store.write(scope, asserted("cda:doc:e1", claim(), claim(METFORMIN, status="current")))
    store.write(scope, asserted("cda:other:e7", claim()))

    result = store.write(scope, Batch(retire=("cda:doc:e1", "cda:doc:never-stored")))
    again = store.write(scope, Batch(retire=("cda:doc:e1",)))

    assert (result.sources_retired, result.facts_removed) == (1, 1)
    assert (again.sources_retired, again.facts_removed) == (0, 0)
    (fact,) = store.list_facts(scope)
    assert fact.fact_key == DIABETES
    assert [s.source_ref for s in fact.sources] == ["cda:other:e7"]


def test_retiring_keeps_a_fact_a_memory_bears_on(store: GraphStore, scope: Scope) -> None:
    store.write(scope, asserted("cda:doc:e1", claim(METFORMIN, status="current")))
    store.create_session(scope, Session(session_id="s1"))
    store.write(scope, Batch(memories=(memory("m1", "s1"),), relationships=(relationship("m1"),)))

    result = store.write(scope, Batch(retire=("cda:doc:e1",)))

    assert (result.sources_retired, result.facts_removed) == (1, 0)
    (record,) = store.list_memories(scope)
    assert [r.fact_key for r in record.relationships] == [METFORMIN]
