"""FHIR JSON reading: bundles of every type, references, validation problems, identity."""

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from engine.errors import InvalidInput
from engine.models import FactKind
from ingest.fhir import read_fhir_json
from ingest.records import Problem, Record

DATA = Path(__file__).parents[1] / "data" / "fhir"
CHET = DATA / "synthea" / "Chet_Hoeger_5c6db3d0-c0fc-4eb7-8eae-dbc7847be741.json"
CHET_ID = "fcece34f-2e51-43b5-acb0-361c3472e679"


def load(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_bytes())
    return data


def records(items: list[Record | Problem]) -> list[Record]:
    return [i for i in items if isinstance(i, Record)]


def problems(items: list[Record | Problem]) -> list[Problem]:
    return [i for i in items if isinstance(i, Problem)]


def kinds(items: list[Record | Problem]) -> Counter[str]:
    return Counter(c.kind.value for r in records(items) if r.source for c in r.source.claims)


def test_synthea_transaction_bundle() -> None:
    skipped: Counter[str] = Counter()
    items = list(read_fhir_json(CHET, "chet.json", skipped=skipped))
    assert problems(items) == []
    first = items[0]
    assert isinstance(first, Record) and first.patient is not None
    assert first.patient_ref == CHET_ID
    assert (first.patient.name, first.patient.birth_date, first.patient.gender) == (
        "Chet Hoeger",
        "1988-09-05",
        "male",
    )
    assert "http://hl7.org/fhir/sid/us-ssn|999-70-1411" in first.patient.identifiers
    assert {r.patient_ref for r in records(items)} == {CHET_ID}  # urn:uuid subject resolved
    assert kinds(items) == Counter(
        observation=50, immunization=8, encounter=7, condition=4, procedure=1, medication=1
    )
    assert skipped == Counter(
        Claim=8, ExplanationOfBenefit=7, DiagnosticReport=3, Organization=1, Practitioner=1
    )
    assert all(r.source.source.label == "chet.json" for r in records(items) if r.source)


def test_urn_uuid_reason_references_become_links() -> None:
    items = list(read_fhir_json(CHET, "chet.json"))
    linked = [r for r in records(items) if r.links]
    assert len(linked) == 1
    # two Condition entries with the same code: one fact, one link
    assert [(lk.from_key, lk.to_key) for lk in linked[0].links] == [
        ("medication:rxnorm:562251", "condition:snomed:444814009")
    ]


def test_every_entry_is_read_once_even_when_mapped_early_for_a_link() -> None:
    items = list(read_fhir_json(CHET, "chet.json"))
    refs = [r.source.source.source_ref for r in records(items) if r.source]
    assert len(refs) == len(set(refs)) == 71
    assert "fhir:Condition/04c63369-ec8f-4419-b4b9-f946522de0da" in refs


def test_type_id_and_absolute_references() -> None:
    items = list(read_fhir_json(DATA / "hl7" / "bundle-references.json", "refs"))
    by_id = {r.source.source.resource_id: r.patient_ref for r in records(items) if r.source}
    assert by_id["123"] == "23"  # Patient/23
    assert by_id["124"] == "23"  # http://example.org/fhir/Patient/23
    assert by_id["12"] == "04121321-4af5-424c-a0e1-ed3aab1c349d"  # urn:uuid, Patient has no id
    [problem] = problems(items)
    assert (problem.index, problem.path, problem.message) == (
        10,
        "entry[10].resource.subject",
        "no patient reference",
    )


def test_patients_come_first_in_a_bundle() -> None:
    bundle = load(CHET)
    bundle["entry"].append(bundle["entry"].pop(0))  # Patient last
    items = list(read_fhir_json(json.dumps(bundle).encode(), "b"))
    assert isinstance(items[0], Record) and items[0].patient is not None


def test_validation_error_is_located_and_the_rest_is_read() -> None:
    bundle = load(CHET)
    bundle["entry"][4]["resource"]["code"]["coding"][0]["system"] = 123
    bundle["entry"][5]["resource"]["onsetDateTime"] = "yesterday"
    bundle["entry"][5]["resource"]["bogus"] = True
    items = list(read_fhir_json(json.dumps(bundle).encode(), "bad.json"))
    first, second = problems(items)
    assert first.model_dump(exclude={"message"}) == {
        "severity": "error",
        "fatal": False,
        "file": "bad.json",
        "index": 4,
        "line": None,
        "resource_type": "Condition",
        "resource_id": "810f9c68-af13-4f12-a2cb-ee7fc316c29f",
        "path": "entry[4].resource.code.coding[0].system",
    }
    assert first.message == "Input should be a valid string"
    assert second.index == 5 and second.path.startswith("entry[5].resource.")
    assert "(and 1 more: " in second.message
    assert kinds(items)["condition"] == 2
    assert len(records(items)) == 72 - 2


def test_invalid_referenced_medication_is_reported_once() -> None:
    med = {"resourceType": "Medication", "id": "med1", "code": {"coding": "oops"}}
    request = {
        "resourceType": "MedicationRequest",
        "id": "r1",
        "status": "active",
        "intent": "order",
        "subject": {"reference": "Patient/p"},
        "medicationReference": {"reference": "Medication/med1", "display": "Aspirin 81 mg"},
    }
    bundle = {
        "resourceType": "Bundle",
        "type": "searchset",
        "entry": [
            {"fullUrl": "http://x/fhir/MedicationRequest/r1", "resource": request},
            {"fullUrl": "http://x/fhir/Medication/med1", "resource": med},
            {"fullUrl": "http://x/fhir/MedicationRequest/r2", "resource": {**request, "id": "r2"}},
        ],
    }
    items = list(read_fhir_json(json.dumps(bundle).encode(), "b"))
    [problem] = problems(items)
    assert (problem.index, problem.resource_type, problem.path) == (
        1,
        "Medication",
        "entry[1].resource.code.coding",
    )
    claims = [r.source.claims[0] for r in records(items) if r.source]
    assert [(c.label, c.fact_key) for c in claims] == [
        ("Aspirin 81 mg", "medication:text:aspirin")
    ] * 2


def test_medication_resolved_by_type_and_id() -> None:
    med = {
        "resourceType": "Medication",
        "id": "med1",
        "code": {
            "coding": [
                {
                    "system": "http://www.nlm.nih.gov/research/umls/rxnorm",
                    "code": "243670",
                    "display": "aspirin 81 MG Oral Tablet",
                }
            ]
        },
    }
    request = {
        "resourceType": "MedicationStatement",
        "id": "s1",
        "status": "active",
        "subject": {"reference": "Patient/p"},
        "medicationReference": {"reference": "Medication/med1"},
    }
    bundle = {
        "resourceType": "Bundle",
        "type": "document",
        "entry": [
            {"fullUrl": "urn:uuid:a", "resource": request},
            {"fullUrl": "urn:uuid:b", "resource": med},
        ],
    }
    [record] = read_fhir_json(json.dumps(bundle).encode(), "b")
    assert isinstance(record, Record) and record.source is not None
    claim = record.source.claims[0]
    assert (claim.fact_key, claim.label) == (
        "medication:rxnorm:243670",
        "aspirin 81 MG Oral Tablet",
    )


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b'{"resourceType": "Bundle", "entry": [', "invalid JSON"),
        (b"\xff\xfe garbage", "invalid JSON"),
        (b"[1, 2]", "not a FHIR resource"),
        (b'{"entry": []}', "not a FHIR resource"),
        (b'{"resourceType": "Bundle", "entry": {}}', "Bundle.entry is not an array"),
    ],
)
def test_unusable_input_is_one_unlocated_problem(data: bytes, message: str) -> None:
    [problem] = read_fhir_json(data, "x.json")
    assert isinstance(problem, Problem)
    assert (problem.severity, problem.fatal, problem.index, problem.line) == (
        "error",
        True,
        None,
        None,
    )
    assert (problem.severity, problem.index, problem.line) == ("error", None, None)


def test_bad_entries_are_located() -> None:
    bundle = {
        "resourceType": "Bundle",
        "type": "batch",
        "entry": [
            "nonsense",
            {"resource": {"no": "type"}},
            {"request": {"method": "DELETE", "url": "x"}},
        ],
    }
    items = list(read_fhir_json(json.dumps(bundle).encode(), "b"))
    assert [(p.index, p.message) for p in problems(items)] == [
        (0, "Bundle entry is not an object"),
        (1, "entry.resource has no resourceType"),
    ]


def test_identifier_patient_key() -> None:
    ssn = "identifier:http://hl7.org/fhir/sid/us-ssn"
    items = list(read_fhir_json(CHET, "chet.json", patient_key=ssn))
    assert problems(items) == []
    assert {r.patient_ref for r in records(items)} == {"999-70-1411"}
    oid = "identifier:urn:oid:2.16.840.1.113883.4.3.25"
    assert {r.patient_ref for r in records(list(read_fhir_json(CHET, "c", oid)))} == {"S99991939"}


def test_identifier_patient_key_without_that_identifier() -> None:
    items = list(read_fhir_json(CHET, "chet.json", patient_key="identifier:http://nowhere"))
    assert records(items) == []
    patient_warning, *rest = problems(items)
    assert patient_warning.severity == "warning"
    assert patient_warning.message == "Patient has no identifier in system http://nowhere"
    assert len(rest) == 71
    assert all("has no identifier in system http://nowhere" in p.message for p in rest)


def test_malformed_patient_key_is_refused_at_once() -> None:
    with pytest.raises(InvalidInput):
        read_fhir_json(CHET, "chet.json", patient_key="ssn")


def test_single_resource_from_a_path() -> None:
    items = list(read_fhir_json(DATA / "hl7" / "patient-example.json", "patient.json"))
    [record] = items
    assert isinstance(record, Record) and record.patient is not None
    assert (record.patient_ref, record.patient.name) == ("example", "Peter James Chalmers")


def test_missing_file_is_one_unusable_problem() -> None:
    [problem] = read_fhir_json(DATA / "nothing.json", "nothing.json")
    assert isinstance(problem, Problem)
    assert problem.message.startswith("cannot read file")
    assert (problem.index, problem.line) == (None, None)


def test_subject_that_is_not_a_patient() -> None:
    [problem] = read_fhir_json(DATA / "hl7" / "observation-example-herd1.json", "herd")
    assert isinstance(problem, Problem)
    assert (problem.path, problem.message) == (
        "subject",
        "the subject is Group/herd1, not a Patient",
    )


def test_all_kinds_of_one_patient_across_two_bundles() -> None:
    path = DATA / "synthea" / "Joaquin_Rodriguez_69ee9841-f4a6-427a-a2fd-f5a891682057.json"
    items = list(read_fhir_json(path, "joaquin"))
    assert problems(items) == []
    assert set(kinds(items)) >= {k.value for k in FactKind} - {"allergy"}


def test_searchsets_nested_in_a_batch_response_are_read() -> None:
    condition = {
        "resourceType": "Condition",
        "id": "c1",
        "subject": {"reference": "Patient/p"},
        "code": {"coding": [{"system": "http://snomed.info/sct", "code": "195662009"}]},
    }
    bad = {**condition, "id": "c2", "code": {"coding": [{"code": 7}]}}
    searchset = {
        "resourceType": "Bundle",
        "type": "searchset",
        "entry": [{"resource": condition}, {"resource": bad}],
    }
    bundle = {
        "resourceType": "Bundle",
        "type": "batch-response",
        "entry": [{"response": {"status": "200"}}, {"resource": searchset}],
    }
    items = list(read_fhir_json(json.dumps(bundle).encode(), "batch"))
    [record] = records(items)
    assert record.source is not None
    assert record.source.claims[0].fact_key == "condition:snomed:195662009"
    [problem] = problems(items)
    assert (problem.index, problem.path, problem.resource_id) == (
        1,
        "entry[1].resource.entry[1].resource.code.coding[0].code",
        "c2",
    )
