"""Relationship inference: same entity, then conflicts / corroborates / enriches."""

from engine.memories.relate import relate
from engine.models import Evidence, Memory, MemoryType, RelationshipType
from tests.unit.test_memories_builders import condition, medication

AMLODIPINE = medication("medication:rxnorm:17767", "Norvasc 5 mg oral tablet", dose="5 mg daily")
ASTHMA = condition("condition:snomed:195967001", "Asthma")
KIDNEY_STONE = condition("condition:snomed:95570007", "Kidney stone", status="resolved")
HYPERTENSION = condition("condition:snomed:38341003", "Hypertensive disorder")


def memory(kind: MemoryType, subject: str, quote: str, **attributes: object) -> Memory:
    evidence = (Evidence(message_id="s1:2", quote=quote, start=0, end=len(quote)),)
    return Memory(
        memory_id=f"m-{subject.replace(' ', '-')}",
        session_id="s1",
        type=kind,
        text=quote,
        subject=subject,
        evidence=evidence,
        speaker="patient",
        attributes=dict(attributes),
        confidence=0.5,
        extractor="t",
        extractor_version="1",
    )


def adherence(subject: str, quote: str, behavior: str, **extra: object) -> Memory:
    return memory(MemoryType.ADHERENCE, subject, quote, behavior=behavior, drugs=[subject], **extra)


def test_brand_and_generic_names_are_the_same_drug() -> None:
    [edge] = relate(
        [adherence("amlodipine", "I take it every day", "as_prescribed")], [AMLODIPINE, ASTHMA]
    )
    assert edge.fact_key == AMLODIPINE.fact_key
    assert edge.type is RelationshipType.CORROBORATES
    assert edge.method == "ingredient-match" and "Norvasc" in edge.rationale


def test_stopping_an_active_drug_conflicts() -> None:
    [edge] = relate([adherence("amlodipine", "I stopped it", "stopped")], [AMLODIPINE])
    assert edge.type is RelationshipType.CONFLICTS


def test_a_different_dose_conflicts() -> None:
    [edge] = relate([adherence("amlodipine", "I take 10 mg now", "as_prescribed")], [AMLODIPINE])
    assert edge.type is RelationshipType.CONFLICTS


def test_missed_doses_enrich() -> None:
    [edge] = relate(
        [adherence("amlodipine", "I forget it sometimes", "missed_doses")], [AMLODIPINE]
    )
    assert edge.type is RelationshipType.ENRICHES


def test_taking_a_drug_recorded_as_stopped_conflicts() -> None:
    stopped = medication("medication:rxnorm:17767", "Norvasc 5 mg", status="discontinued")
    [edge] = relate([adherence("amlodipine", "I take it", "as_prescribed")], [stopped])
    assert edge.type is RelationshipType.CONFLICTS


def test_a_manifestation_with_details_enriches_its_condition() -> None:
    wheeze = memory(
        MemoryType.SYMPTOM,
        "wheezing",
        "I wheeze every night when it's cold",
        present=True,
        details=["frequency", "trigger"],
    )
    [edge] = relate([wheeze], [ASTHMA, HYPERTENSION])
    assert edge.fact_key == ASTHMA.fact_key and edge.type is RelationshipType.ENRICHES


def test_a_bare_confirmation_corroborates() -> None:
    plain = memory(
        MemoryType.SYMPTOM, "shortness of breath", "shortness of breath", present=True, details=[]
    )
    [edge] = relate([plain], [ASTHMA])
    assert edge.type is RelationshipType.CORROBORATES


def test_symptoms_of_a_resolved_condition_conflict() -> None:
    pain = memory(
        MemoryType.SYMPTOM, "blood in urine", "I see blood in my urine", present=True, details=[]
    )
    [edge] = relate([pain], [KIDNEY_STONE])
    assert edge.type is RelationshipType.CONFLICTS


def test_an_active_condition_said_to_be_gone_conflicts() -> None:
    gone = memory(
        MemoryType.SYMPTOM,
        "blood pressure",
        "my blood pressure is basically gone",
        present=False,
        gone=True,
        condition_term=True,
        details=[],
    )
    [edge] = relate([gone], [HYPERTENSION])
    assert edge.type is RelationshipType.CONFLICTS


def test_unrelated_symptoms_and_concerns_get_no_edges() -> None:
    rash = memory(MemoryType.SYMPTOM, "rash", "I have a rash", present=True, details=[])
    worry = memory(MemoryType.CONCERN, "asthma", "is my asthma dangerous?")
    assert relate([rash, worry], [ASTHMA, AMLODIPINE]) == []
