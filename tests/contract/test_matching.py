"""Layered matching on every backend: code, then ingredient + strength, then text."""

from engine.models import (
    Batch,
    Claim,
    Coding,
    FactKind,
    FactLink,
    FactLinkType,
    MatchLayer,
    Scope,
    SourceClaims,
    SourceFormat,
)
from engine.store import GraphStore
from ingest.keys import coding, fact_key
from ingest.matching import match_keys
from tests.contract.builders import asserted, at, source


def made(kind: FactKind, label: str, *codes: tuple[str, str]) -> Claim:
    codings = tuple(c for system, code in codes if (c := coding(system, code)) is not None)
    return Claim(
        fact_key=fact_key(kind, codings, label),
        kind=kind,
        label=label,
        status="active",
        codes=codings,
        match_keys=match_keys(kind, codings, label),
    )


SNOMED = "http://snomed.info/sct"
ICD10 = "http://hl7.org/fhir/sid/icd-10-cm"
RXNORM = "http://www.nlm.nih.gov/research/umls/rxnorm"
HIP_OA = made(FactKind.CONDITION, "OSTEOARTHRITIS OF HIP")
HIP_OA_CODED = made(FactKind.CONDITION, "Osteoarthritis of hip", (SNOMED, "239872002"))


def test_an_uncoded_problem_meets_the_coded_one_by_its_text(
    store: GraphStore, scope: Scope
) -> None:
    store.write(scope, asserted("cda:doc:p1", HIP_OA, fmt=SourceFormat.CDA))
    result = store.write(scope, asserted("fhir:Condition/oa", HIP_OA_CODED))

    (fact,) = store.list_facts(scope)
    assert (result.facts_added, result.facts_merged) == (0, 1)
    assert {s.source_ref for s in fact.sources} == {"cda:doc:p1", "fhir:Condition/oa"}
    assert [(m.layer, m.key, m.source_ref) for m in fact.merged_by] == [
        (MatchLayer.TEXT, "osteoarthritis of hip", "fhir:Condition/oa")
    ]
    assert Coding(system="snomed", code="239872002") in fact.codes


def test_a_brand_meets_the_coded_generic_by_ingredient_and_strength(
    store: GraphStore, scope: Scope
) -> None:
    generic = made(FactKind.MEDICATION, "Warfarin Sodium 5 MG Oral Tablet", (RXNORM, "855332"))
    store.write(scope, asserted("fhir:MedicationRequest/w", generic))
    store.write(
        scope, asserted("cda:doc:m1", made(FactKind.MEDICATION, "Coumadin 5 MG Oral Tablet"))
    )
    store.write(
        scope, asserted("cda:doc:m2", made(FactKind.MEDICATION, "Coumadin 1 MG Oral Tablet"))
    )

    facts = {f.fact_key: f for f in store.list_facts(scope)}
    assert len(facts) == 2
    merged = facts["medication:rxnorm:855332"]
    assert [(m.layer, m.key) for m in merged.merged_by] == [
        (MatchLayer.INGREDIENT, "warfarin 5 mg tablet")
    ]
    assert len(merged.sources) == 2


def test_a_translation_meets_the_other_code_system(store: GraphStore, scope: Scope) -> None:
    icd_only = made(FactKind.CONDITION, "Essential (primary) hypertension", (ICD10, "I10"))
    translated = made(FactKind.CONDITION, "HTN", (SNOMED, "59621000"), (ICD10, "I10"))
    store.write(scope, asserted("fhir:Condition/icd", icd_only))
    store.write(scope, asserted("cda:doc:p2", translated, fmt=SourceFormat.CDA))

    (fact,) = store.list_facts(scope)
    assert fact.fact_key == "condition:icd10cm:I10"
    assert [(m.layer, m.key) for m in fact.merged_by] == [(MatchLayer.CODE, "icd10cm i10")]


def test_a_claim_matching_two_facts_is_a_candidate_not_a_merge(
    store: GraphStore, scope: Scope
) -> None:
    store.write(scope, asserted("fhir:Condition/a", HIP_OA_CODED))
    icd = made(FactKind.CONDITION, "Primary osteoarthritis, right hip", (ICD10, "M16.11"))
    store.write(scope, asserted("fhir:Condition/b", icd))
    both = made(FactKind.CONDITION, "Hip arthritis", (SNOMED, "239872002"), (ICD10, "M16.11"))
    store.write(scope, asserted("cda:doc:p3", both, fmt=SourceFormat.CDA))

    facts = {f.fact_key: f for f in store.list_facts(scope)}
    assert set(facts) == {"condition:snomed:239872002", "condition:icd10cm:M16.11"}
    assert [s.source_ref for s in facts["condition:icd10cm:M16.11"].sources] == ["fhir:Condition/b"]
    (candidate,) = facts["condition:snomed:239872002"].candidates
    assert (candidate.source_ref, candidate.fact_keys) == (
        "cda:doc:p3",
        ("condition:icd10cm:M16.11",),
    )


def test_a_candidate_is_settled_when_its_other_fact_goes(store: GraphStore, scope: Scope) -> None:
    store.write(scope, asserted("fhir:Condition/a", HIP_OA_CODED))
    icd = made(FactKind.CONDITION, "Primary osteoarthritis, right hip", (ICD10, "M16.11"))
    store.write(scope, asserted("fhir:Condition/b", icd))
    both = made(FactKind.CONDITION, "Hip arthritis", (SNOMED, "239872002"), (ICD10, "M16.11"))
    store.write(scope, asserted("cda:doc:p3", both, fmt=SourceFormat.CDA))

    result = store.write(scope, Batch(retire=("fhir:Condition/b",)))

    assert (result.facts_removed, result.candidates_settled) == (1, 1)
    (fact,) = store.list_facts(scope)
    assert fact.fact_key == "condition:snomed:239872002"
    assert fact.candidates == ()
    assert {s.source_ref for s in fact.sources} == {"fhir:Condition/a", "cda:doc:p3"}


def test_claims_of_one_batch_meet_and_links_follow_them(store: GraphStore, scope: Scope) -> None:
    brand = made(FactKind.MEDICATION, "Coumadin 5 MG Oral Tablet")
    generic = made(FactKind.MEDICATION, "Warfarin Sodium 5 MG Oral Tablet", (RXNORM, "855332"))
    batch = Batch(
        sources=(
            SourceClaims(source=source("fhir:MedicationRequest/w"), claims=(generic,)),
            SourceClaims(source=source("fhir:Condition/oa"), claims=(HIP_OA_CODED,)),
            SourceClaims(source=source("cda:doc:m1"), claims=(brand,)),
        ),
        fact_links=(
            FactLink(
                from_key=brand.fact_key,
                to_key=HIP_OA_CODED.fact_key,
                type=FactLinkType.PRESCRIBED_FOR,
            ),
        ),
    )
    result = store.write(scope, batch)

    assert (result.facts_added, result.facts_merged, result.links_added) == (2, 1, 1)
    assert store.list_fact_links(scope) == [
        FactLink(
            from_key="medication:rxnorm:855332",
            to_key="condition:snomed:239872002",
            type=FactLinkType.PRESCRIBED_FOR,
        )
    ]


def test_rewriting_a_merged_source_keeps_it_in_its_fact(store: GraphStore, scope: Scope) -> None:
    store.write(scope, asserted("cda:doc:p1", HIP_OA, fmt=SourceFormat.CDA))
    store.write(scope, asserted("fhir:Condition/oa", HIP_OA_CODED, updated=at(1)))
    resolved = HIP_OA_CODED.model_copy(update={"status": "resolved"})
    store.write(scope, asserted("fhir:Condition/oa", resolved, content="v2", updated=at(2)))

    (fact,) = store.list_facts(scope)
    assert fact.fact_key == HIP_OA.fact_key
    assert len(fact.sources) == 2
    assert fact.status in {"active", "resolved"}
    assert [c.field for c in fact.conflicts] == ["status"]
