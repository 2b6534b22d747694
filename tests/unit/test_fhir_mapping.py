"""FHIR resource → claim mapping: every mapped type, its status table, its fields."""

import json
from pathlib import Path
from typing import Any

import pytest

from engine.models import Claim, FactKind, FactLinkType, SourceFormat
from ingest.fhir import read_fhir_json
from ingest.records import Problem, Record

HL7 = Path(__file__).parents[1] / "data" / "fhir" / "hl7"
PATIENT = {"reference": "Patient/p1"}


def read(resource: dict[str, Any] | str) -> list[Record | Problem]:
    if isinstance(resource, str):
        return list(read_fhir_json(HL7 / resource, resource))
    return list(read_fhir_json(json.dumps(resource).encode(), "test"))


def claim_of(resource: dict[str, Any] | str) -> Claim:
    items = read(resource)
    assert len(items) == 1, items
    record = items[0]
    assert isinstance(record, Record), record
    assert record.source is not None
    return record.source.claims[0]


def warning_of(resource: dict[str, Any]) -> Problem:
    items = read(resource)
    assert len(items) == 1 and isinstance(items[0], Problem), items
    assert items[0].severity == "warning"
    return items[0]


def condition(**extra: Any) -> dict[str, Any]:
    return {
        "resourceType": "Condition",
        "id": "c1",
        "subject": PATIENT,
        "code": {"coding": [{"system": "http://snomed.info/sct", "code": "38341003"}]},
        **extra,
    }


def status(code: str, system: str = "condition-clinical") -> dict[str, Any]:
    return {"coding": [{"system": f"http://terminology.hl7.org/CodeSystem/{system}", "code": code}]}


# --- conditions -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("clinical", "expected"),
    [
        ("active", "active"),
        ("recurrence", "active"),
        ("relapse", "active"),
        ("inactive", "resolved"),
        ("remission", "resolved"),
        ("resolved", "resolved"),
    ],
)
def test_condition_status(clinical: str, expected: str) -> None:
    claim = claim_of(condition(clinicalStatus=status(clinical)))
    assert claim.status == expected
    assert claim.fields["clinical_status"] == clinical
    assert claim.fact_key == "condition:snomed:38341003"
    assert claim.kind is FactKind.CONDITION


def test_condition_without_clinical_status_resolves_by_abatement() -> None:
    assert claim_of(condition()).status == "active"
    abated = claim_of(condition(abatementDateTime="2020-02-01"))
    assert (abated.status, abated.fields["abatement"]) == ("resolved", "2020-02-01")


@pytest.mark.parametrize("verification", ["entered-in-error", "refuted"])
def test_condition_in_error_or_refuted_is_skipped_with_a_warning(verification: str) -> None:
    resource = condition(
        verificationStatus=status(verification, "condition-ver-status"),
        clinicalStatus=status("active"),
    )
    problem = warning_of(resource)
    assert verification in problem.message
    assert (problem.resource_type, problem.resource_id) == ("Condition", "c1")


def test_condition_fields_from_the_hl7_example() -> None:
    claim = claim_of("condition-example.json")
    assert claim.label == "Burnt Ear"
    assert claim.fields == {
        "onset": "2012-05-24",
        "clinical_status": "active",
        "verification_status": "confirmed",
        "category": "encounter-diagnosis",
        "severity": "Severe",
    }


def test_uncoded_condition_keys_on_its_text() -> None:
    claim = claim_of("condition-example2.json")
    assert claim.fact_key == "condition:text:asthma"
    assert claim.fields["onset"] == "approximately November 2012"


# --- medications ------------------------------------------------------------------------


def medication(rtype: str, raw: str, **extra: Any) -> dict[str, Any]:
    resource: dict[str, Any] = {
        "resourceType": rtype,
        "id": "m1",
        "status": raw,
        "subject": PATIENT,
        "medicationCodeableConcept": {
            "coding": [{"system": "http://www.nlm.nih.gov/research/umls/rxnorm", "code": "314076"}],
            "text": "lisinopril 10 MG Oral Tablet",
        },
        **extra,
    }
    if rtype == "MedicationRequest":
        resource["intent"] = "order"
    if rtype == "MedicationAdministration":
        resource["effectiveDateTime"] = "2020-01-01T08:00:00Z"
    return resource


@pytest.mark.parametrize(
    ("rtype", "raw", "expected"),
    [
        ("MedicationRequest", "active", "current"),
        ("MedicationRequest", "on-hold", "current"),
        ("MedicationRequest", "draft", "current"),
        ("MedicationRequest", "unknown", "current"),
        ("MedicationRequest", "completed", "discontinued"),
        ("MedicationRequest", "stopped", "discontinued"),
        ("MedicationRequest", "cancelled", "discontinued"),
        ("MedicationStatement", "active", "current"),
        ("MedicationStatement", "intended", "current"),
        ("MedicationStatement", "completed", "discontinued"),
        ("MedicationStatement", "not-taken", "discontinued"),
        ("MedicationAdministration", "in-progress", "current"),
        ("MedicationAdministration", "completed", "discontinued"),
        ("MedicationAdministration", "not-done", "discontinued"),
        ("MedicationDispense", "in-progress", "current"),
        ("MedicationDispense", "completed", "discontinued"),
        ("MedicationDispense", "declined", "discontinued"),
    ],
)
def test_medication_status(rtype: str, raw: str, expected: str) -> None:
    claim = claim_of(medication(rtype, raw))
    assert (claim.status, claim.fields["raw_status"]) == (expected, raw)
    assert claim.fact_key == "medication:rxnorm:314076"
    assert claim.label == "lisinopril 10 MG Oral Tablet"


@pytest.mark.parametrize(
    "rtype",
    ["MedicationRequest", "MedicationStatement", "MedicationAdministration", "MedicationDispense"],
)
def test_medication_entered_in_error_is_skipped(rtype: str) -> None:
    assert "entered-in-error" in warning_of(medication(rtype, "entered-in-error")).message


def test_medication_request_fields() -> None:
    resource = medication(
        "MedicationRequest",
        "active",
        authoredOn="2021-03-04T10:00:00-05:00",
        requester={"display": "Dr. House"},
        reasonCode=[{"text": "Hypertension"}],
        dosageInstruction=[
            {
                "timing": {"repeat": {"frequency": 2, "period": 1, "periodUnit": "d"}},
                "route": {"text": "oral"},
                "doseAndRate": [{"doseQuantity": {"value": 1.0, "unit": "tablet"}}],
            }
        ],
    )
    assert claim_of(resource).fields == {
        "dose": "1 tablet",
        "route": "oral",
        "frequency": "2x every day",
        "start": "2021-03-04T15:00:00Z",
        "prescriber": "Dr. House",
        "reason": "Hypertension",
        "raw_status": "active",
    }


def test_contained_medication_is_resolved() -> None:
    claim = claim_of("medicationrequest0301.json")
    assert claim.fact_key == "medication:snomed:430127000"
    assert claim.label == "Oral Form Oxycodone (product)"
    assert claim.status == "discontinued"
    assert claim.fields["dose"] == "one to two tablets every 4-6 hours as needed for rib pain"
    assert claim.fields["frequency"] == "1x every 4-6 hours"
    assert claim.fields["start"] == "2015-01-15"
    assert claim.fields["prescriber"] == "Patrick Pump"


def test_contained_ndc_medication_statement() -> None:
    claim = claim_of("medicationstatementexample1.json")
    assert claim.fact_key == "medication:ndc:50580-506-02"
    assert (claim.status, claim.fields["start"]) == ("current", "2015-01-23")
    assert claim.fields["reason"] == "Restless Legs"


def test_uncoded_compound_medication_is_named_by_its_ingredients() -> None:
    claim = claim_of("medicationrequest0323.json")
    assert claim.codes == ()
    assert claim.label.startswith("Clinimix 4.25/10")
    assert " + Intralipid 20% IV Fat Emulsion" in claim.label
    assert claim.fact_key.startswith("medication:text:")


def test_uncoded_brand_medication_keys_on_its_generic_name() -> None:
    resource = medication("MedicationStatement", "active")
    resource["medicationCodeableConcept"] = {"text": "Lipitor 20mg tablet"}
    assert claim_of(resource).fact_key == "medication:text:atorvastatin"


def test_medication_statement_in_error_from_hl7_example() -> None:
    problem = read("medicationstatementexample5.json")[0]
    assert isinstance(problem, Problem)
    assert (problem.severity, problem.resource_id) == ("warning", "example005")


# --- allergies --------------------------------------------------------------------------


def test_allergy_fields() -> None:
    claim = claim_of("allergyintolerance-example.json")
    assert claim.fact_key == "allergy:snomed:227493005"
    assert claim.status == "active"
    assert claim.fields["category"] == "food"
    assert claim.fields["criticality"] == "high"
    assert claim.fields["reactions"] == ["Anaphylactic reaction", "Urticaria"]
    assert claim.fields["onset"] == "2004"
    assert "no_known" not in claim.fields


def test_no_known_allergy() -> None:
    claim = claim_of("allergyintolerance-nka.json")
    assert claim.fact_key == "allergy:snomed:716186003"
    assert claim.fields["no_known"] is True
    assert claim.label == "NKA"


@pytest.mark.parametrize("clinical", ["active", "inactive", "resolved"])
def test_allergy_status(clinical: str) -> None:
    resource = {
        "resourceType": "AllergyIntolerance",
        "id": "a1",
        "patient": PATIENT,
        "clinicalStatus": status(clinical, "allergyintolerance-clinical"),
        "code": {"coding": [{"system": "http://snomed.info/sct", "code": "409137002"}]},
    }
    claim = claim_of(resource)
    assert claim.status == clinical
    assert claim.fields["no_known"] is True


# --- observations -----------------------------------------------------------------------


def test_lab_value_and_utc_effective_date() -> None:
    claim = claim_of("observation-example-f001-glucose.json")
    assert claim.fact_key == "observation:loinc:15074-8:2013-04-02T08:30:10Z"
    assert claim.fields["value"] == 6.3
    assert claim.fields["unit"] == "mmol/l"
    assert claim.fields["interpretation"] == "High"
    assert claim.fields["reference_range"] == "3.1 mmol/l - 6.2 mmol/l"
    assert claim.status == "final"


def test_blood_pressure_components_are_fields() -> None:
    claim = claim_of("observation-example-bloodpressure.json")
    assert claim.fact_key == "observation:loinc:85354-9:2012-09-17"
    assert claim.fields["component:8480-6"] == "107 mmHg"
    assert claim.fields["component:8462-4"] == "60 mmHg"
    assert claim.fields["category"] == "vital-signs"
    assert "value" not in claim.fields


def test_cancelled_observation_is_skipped() -> None:
    items = read("observation-example-bloodpressure-cancel.json")
    assert [type(i) for i in items] == [Problem]
    assert isinstance(items[0], Problem) and "cancelled" in items[0].message


def test_coded_and_string_values() -> None:
    base = {
        "resourceType": "Observation",
        "id": "o1",
        "status": "final",
        "subject": PATIENT,
        "code": {"text": "Smoking status"},
        "effectivePeriod": {"start": "2020-05-01"},
    }
    coded = claim_of({**base, "valueCodeableConcept": {"text": "Never smoker"}})
    assert coded.fields["value"] == "Never smoker"
    assert coded.fact_key == "observation:text:smoking-status:2020-05-01"
    assert claim_of({**base, "valueString": "none"}).fields["value"] == "none"


# --- procedures, immunizations, encounters ----------------------------------------------


def test_procedure() -> None:
    claim = claim_of("procedure-example.json")
    assert claim.fact_key == "procedure:snomed:80146002:2013-04-05"
    assert (claim.label, claim.status) == ("Appendectomy", "completed")
    assert claim.fields["performed"] == "2013-04-05"
    assert str(claim.fields["reason"]).startswith("Generalized abdominal pain")


def test_immunization_not_done_keeps_its_reason() -> None:
    claim = claim_of("immunization-example-refused.json")
    assert claim.fact_key == "immunization:cvx:01:2013-01-10"
    assert claim.status == "not-done"
    assert claim.fields["status_reason"] == "medical precaution"


def test_immunization_completed() -> None:
    claim = claim_of("immunization-example.json")
    assert claim.status == "completed"
    assert claim.fields["lot_number"] == "AAJN11K"
    assert claim.fields["occurrence"] == "2013-01-10"


def test_encounter_keys_on_type_and_start() -> None:
    resource = {
        "resourceType": "Encounter",
        "id": "e1",
        "status": "finished",
        "class": {"code": "AMB", "display": "ambulatory"},
        "type": [
            {
                "coding": [{"system": "http://snomed.info/sct", "code": "185349003"}],
                "text": "Encounter for check up",
            }
        ],
        "subject": PATIENT,
        "period": {"start": "2020-01-01T09:00:00+01:00", "end": "2020-01-01T09:30:00+01:00"},
        "reasonCode": [{"text": "Annual review"}],
    }
    claim = claim_of(resource)
    assert claim.fact_key == "encounter:snomed:185349003:2020-01-01T08:00:00Z"
    assert claim.fields == {
        "class": "AMB",
        "type": "Encounter for check up",
        "start": "2020-01-01T08:00:00Z",
        "end": "2020-01-01T08:30:00Z",
        "reason": "Annual review",
    }


def test_encounter_without_type_is_named_by_its_class() -> None:
    claim = claim_of("encounter-example-f001-heart.json")
    assert claim.fact_key == "encounter:snomed:270427003:undated"
    untyped = {
        "resourceType": "Encounter",
        "id": "e2",
        "status": "finished",
        "class": {"code": "EMER", "display": "emergency"},
        "subject": PATIENT,
    }
    assert claim_of(untyped).fact_key == "encounter:text:emergency:undated"


# --- sources ----------------------------------------------------------------------------


def test_source_carries_provenance() -> None:
    resource = condition(meta={"versionId": "3", "lastUpdated": "2021-01-02T03:04:05Z"})
    record = read(resource)[0]
    assert isinstance(record, Record) and record.source is not None
    source = record.source.source
    assert source.source_ref == "fhir:Condition/c1"
    assert (source.format, source.label) == (SourceFormat.FHIR, "test")
    assert (source.resource_type, source.resource_id, source.version) == ("Condition", "c1", "3")
    assert source.last_updated is not None and source.last_updated.isoformat() == (
        "2021-01-02T03:04:05+00:00"
    )
    assert len(source.content_hash) == 64
    assert record.patient_ref == "p1"


def test_content_hash_ignores_key_order_and_names_sources_without_id() -> None:
    resource = condition()
    del resource["id"]
    shuffled = dict(reversed(list(resource.items())))
    first, second = read(resource)[0], read(shuffled)[0]
    assert isinstance(first, Record) and isinstance(second, Record)
    assert first.source is not None and second.source is not None
    assert first.source.source.content_hash == second.source.source.content_hash
    ref = first.source.source.source_ref
    assert ref == f"fhir:Condition/sha-{first.source.source.content_hash[:16]}"


def test_reason_reference_links_are_prescribed_for() -> None:
    bundle = {
        "resourceType": "Bundle",
        "type": "collection",
        "entry": [
            {
                "fullUrl": "urn:uuid:m",
                "resource": medication(
                    "MedicationRequest",
                    "active",
                    reasonReference=[{"reference": "urn:uuid:c"}, {"reference": "Observation/x"}],
                ),
            },
            {"fullUrl": "urn:uuid:c", "resource": condition()},
        ],
    }
    items = read(bundle)
    med = items[0]
    assert isinstance(med, Record)
    assert [(link.from_key, link.to_key, link.type) for link in med.links] == [
        ("medication:rxnorm:314076", "condition:snomed:38341003", FactLinkType.PRESCRIBED_FOR)
    ]
    assert isinstance(items[1], Record) and items[1].source is not None
    assert items[1].source.claims[0].fact_key == "condition:snomed:38341003"
