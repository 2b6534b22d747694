"""Relationship inference: same entity, then conflicts / corroborates / enriches."""

import pytest

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


def test_a_manifestation_said_in_the_plural_is_the_same_manifestation() -> None:
    readings = memory(
        MemoryType.SYMPTOM,
        "blood pressures",
        "i check my blood pressures and they run high in the morning",
        present=True,
        details=["frequency"],
    )
    [edge] = relate([readings], [ASTHMA, HYPERTENSION])
    assert edge.fact_key == HYPERTENSION.fact_key and "by manifestation" in edge.rationale


def test_a_present_symptom_of_an_active_condition_enriches_even_when_brief() -> None:
    plain = memory(
        MemoryType.SYMPTOM, "shortness of breath", "shortness of breath", present=True, details=[]
    )
    [edge] = relate([plain], [ASTHMA])
    assert edge.type is RelationshipType.ENRICHES


def test_a_symptom_absent_as_its_resolved_condition_says_corroborates() -> None:
    clear = memory(
        MemoryType.SYMPTOM, "blood in urine", "no blood in my urine", present=False, details=[]
    )
    [edge] = relate([clear], [KIDNEY_STONE])
    assert edge.type is RelationshipType.CORROBORATES


def test_symptoms_of_a_resolved_condition_conflict() -> None:
    pain = memory(
        MemoryType.SYMPTOM, "blood in urine", "I see blood in my urine", present=True, details=[]
    )
    [edge] = relate([pain], [KIDNEY_STONE])
    assert edge.type is RelationshipType.CONFLICTS


def test_a_symptom_an_active_condition_explains_does_not_conflict_with_a_resolved_one() -> None:
    injury = condition("condition:text:knee-injury", "Right knee injury (skiing)")
    repair = condition(
        "condition:text:knee-repair", "Knee ligament injury, status post repair", status="resolved"
    )
    pain = memory(MemoryType.SYMPTOM, "knee pain", "my right knee hurts", present=True)
    [edge] = relate([pain], [injury, repair])
    assert edge.fact_key == injury.fact_key and edge.type is RelationshipType.ENRICHES
    [alone] = relate([pain], [repair])
    assert alone.type is RelationshipType.CONFLICTS


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


# -- which record medication a description means ---------------------------------------

LOSARTAN = medication("medication:rxnorm:52175", "Cozaar 100 mg", ref="MedicationRequest/m2")
FLONASE = medication("medication:rxnorm:41126", "Flonase (fluticasone) nasal spray")
ADVAIR = medication(
    "medication:rxnorm:284635",
    "Advair (fluticasone propionate/salmeterol) 250/50",
    status="discontinued",
    ref="MedicationRequest/m3",
)
VITAMIN_D3 = medication("medication:rxnorm:2418", "Vitamin D3 2000 IU capsule")


def by_class(subject: str, plural: bool) -> Memory:
    return memory(
        MemoryType.ADHERENCE,
        subject,
        f"I forget my {subject}",
        behavior="missed_doses",
        drugs=[],
        class_drugs=["amlodipine", "losartan", "lisinopril"],
        plural=plural,
    )


def test_a_class_phrase_means_the_one_record_drug_of_that_class_or_all_when_plural() -> None:
    [only] = relate([by_class("blood pressure pill", plural=False)], [AMLODIPINE, ASTHMA])
    assert only.fact_key == AMLODIPINE.fact_key and only.type is RelationshipType.ENRICHES
    assert relate([by_class("blood pressure pill", plural=False)], [AMLODIPINE, LOSARTAN]) == []
    both = relate([by_class("blood pressure pills", plural=True)], [AMLODIPINE, LOSARTAN])
    assert {e.fact_key for e in both} == {AMLODIPINE.fact_key, LOSARTAN.fact_key}


def test_a_form_named_is_the_one_record_drug_given_in_it() -> None:
    inhaler = medication("medication:text:albuterol", "Albuterol 90 mcg/actuation inhaler")
    said = memory(
        MemoryType.ADHERENCE,
        "inhaler",
        "I use my inhaler every day",
        behavior="as_prescribed",
        drugs=[],
        class_drugs=["albuterol", "fluticasone"],
    )
    [edge] = relate([said], [inhaler, FLONASE])  # Flonase: a nasal spray of fluticasone
    assert edge.fact_key == inhaler.fact_key


def test_a_single_drug_is_the_product_with_exactly_that_ingredient() -> None:
    [edge] = relate(
        [adherence("fluticasone", "I'm not taking the Flonase right now", "stopped")],
        [FLONASE, ADVAIR],
    )
    assert edge.fact_key == FLONASE.fact_key and edge.type is RelationshipType.CONFLICTS


def test_vitamin_d_is_either_form() -> None:
    [edge] = relate(
        [adherence("ergocalciferol", "I take my vitamin D", "as_prescribed")], [VITAMIN_D3]
    )
    assert edge.fact_key == VITAMIN_D3.fact_key


# -- adherence against the order -------------------------------------------------------


def test_past_use_of_a_stopped_drug_agrees_and_current_use_conflicts() -> None:
    stopped = medication("medication:rxnorm:17767", "Norvasc 5 mg", status="discontinued")
    past = adherence("amlodipine", "I was on it before", "as_prescribed", current=False)
    again = adherence("amlodipine", "I started it again", "as_prescribed", current=True)
    [then] = relate([past], [stopped])
    [now] = relate([again], [stopped])
    assert then.type is RelationshipType.CORROBORATES and now.type is RelationshipType.CONFLICTS


def test_how_often_an_as_needed_drug_is_used() -> None:
    prn = medication("medication:rxnorm:1", "Nystatin ointment", dose="once a day as needed")
    less = adherence("nystatin", "I've been using it much less now", "changed_dose")
    plain = adherence(
        "nystatin",
        "I use it as needed",
        "changed_dose",
        pattern="as_needed",
        pattern_said="as needed",
    )
    assert relate([less], [prn])[0].type is RelationshipType.ENRICHES
    assert relate([plain], [prn])[0].type is RelationshipType.CORROBORATES


def test_a_different_frequency_conflicts_and_the_same_one_agrees() -> None:
    twice = medication("medication:rxnorm:6809", "Metformin 500 mg", dose="500 mg twice daily")
    once = adherence("metformin", "I take it once a day", "as_prescribed")
    meals = adherence("metformin", "I take it with breakfast and with my dinner", "as_prescribed")
    assert relate([once], [twice])[0].type is RelationshipType.CONFLICTS
    assert relate([meals], [twice])[0].type is RelationshipType.CORROBORATES


# -- conditions ------------------------------------------------------------------------


def test_a_flare_that_went_away_conflicts_with_the_flare_not_the_disease() -> None:
    gout = condition("condition:snomed:90560007", "Gout", ref="Condition/g")
    flare = condition("condition:text:flare", "Acute gout flare", ref="Condition/f")
    went = memory(
        MemoryType.SYMPTOM, "gout", "it went away", present=False, gone=True, condition_term=True
    )
    edges = {e.fact_key: e.type for e in relate([went], [gout, flare])}
    assert edges == {
        flare.fact_key: RelationshipType.CONFLICTS,
        gout.fact_key: RelationshipType.ENRICHES,
    }


def test_sharing_only_a_body_part_is_no_match_when_each_names_something_else() -> None:
    scars = condition("condition:text:scars", "Widened surgical scars of both breasts")
    knee = condition("condition:snomed:239873007", "Osteoarthritis of knee")
    lump = memory(MemoryType.SYMPTOM, "breast lump", "a lump in my breast", present=True)
    knee_pain = memory(MemoryType.SYMPTOM, "knee pain", "my knee hurts", present=True)
    assert relate([lump], [scars]) == []
    assert [e.fact_key for e in relate([knee_pain], [knee])] == [knee.fact_key]


def test_a_symptom_and_a_condition_the_vocabulary_calls_one_concept_are_the_same() -> None:
    dyspnea = condition("condition:snomed:267036007", "Dyspnea (finding)")
    breath = memory(MemoryType.SYMPTOM, "shortness of breath", "i get winded", present=True)
    [edge] = relate([breath], [dyspnea, HYPERTENSION])  # HPO: a synonym of dyspnea
    assert edge.fact_key == dyspnea.fact_key
    assert edge.type is RelationshipType.ENRICHES and "by name" in edge.rationale


def test_a_lay_body_part_names_the_part_the_record_gives_as_an_adjective() -> None:
    epigastric = condition("condition:text:epigastric", "Chronic epigastric abdominal pain")
    said = memory(MemoryType.SYMPTOM, "belly pain", "i am having a bellyache", present=True)
    [edge] = relate([said], [epigastric, HYPERTENSION])
    assert edge.fact_key == epigastric.fact_key and "by name" in edge.rationale
    # the adjective is a body part too: sharing only it is no match when both name more
    embolism = condition("condition:snomed:59282003", "Pulmonary embolism")
    cancer = memory(MemoryType.SYMPTOM, "lung cancer", "they found cancer in my lung")
    assert relate([cancer], [embolism]) == []


def test_a_concept_is_found_in_either_number() -> None:
    stones = condition("condition:snomed:95570007", "Nephrolithiasis")  # HPO: "kidney stones"
    stone = memory(MemoryType.SYMPTOM, "kidney stone", "i passed a kidney stone", present=True)
    [edge] = relate([stone], [stones, HYPERTENSION])
    assert edge.fact_key == stones.fact_key and "by name" in edge.rationale


def test_a_symptom_on_file_itself_is_that_entrys_not_also_a_manifestation_of_another() -> None:
    dyspnea = condition("condition:text:sob", "Shortness of breath on exertion")
    breath = memory(
        MemoryType.SYMPTOM, "shortness of breath", "i get short of breath on the stairs"
    )
    [edge] = relate([breath], [ASTHMA, dyspnea])
    assert edge.fact_key == dyspnea.fact_key and "by name" in edge.rationale
    [alone] = relate([breath], [ASTHMA])
    assert alone.fact_key == ASTHMA.fact_key and "by manifestation" in alone.rationale


def test_a_word_and_its_derived_form_name_the_same_condition() -> None:
    said = memory(MemoryType.SYMPTOM, "hypertension", "still kind of working with my hypertension")
    [edge] = relate([said], [ASTHMA, HYPERTENSION])  # "Hypertensive disorder"
    assert edge.fact_key == HYPERTENSION.fact_key and "by name" in edge.rationale
    # a longer word that starts with another is not its derived form
    heartburn = memory(MemoryType.SYMPTOM, "heartburn", "i get heartburn", present=True)
    assert relate([heartburn], [condition("condition:text:hd", "Heart disease")]) == []


@pytest.mark.parametrize(
    ("label", "sign"),
    [
        ("Non-small cell lung cancer, left upper lobe", "cough"),
        ("Left ventricular dysfunction, ejection fraction 40%", "leg swelling"),
        ("Chronic gastritis", "nausea"),
        ("Paroxysmal atrial fibrillation", "palpitations"),
        ("Iron deficiency anemia", "lightheadedness"),
        ("Peripheral vascular disease", "leg pain"),
    ],
)
def test_a_denied_cardinal_symptom_enriches_its_condition(label: str, sign: str) -> None:
    denied = memory(MemoryType.SYMPTOM, sign, f"no {sign}", present=False, details=[])
    [edge] = relate([denied], [condition("condition:text:c", label), HYPERTENSION])
    assert edge.fact_key == "condition:text:c" and edge.type is RelationshipType.ENRICHES
