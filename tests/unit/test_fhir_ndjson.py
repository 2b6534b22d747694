"""Bulk Data NDJSON: folders, .gz files, HTTP bodies, bad lines, reading order."""

import gzip
import json
import multiprocessing
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from engine.models import FactLinkType
from ingest import fhir_ndjson_pool
from ingest.fhir import read_fhir_ndjson, read_fhir_ndjson_bytes
from ingest.records import Problem, Record

BULK = Path(__file__).parents[1] / "data" / "fhir" / "bulk"
PATIENTS = {
    "cbc86e51-9eca-3855-76ec-c058f72c5761",
    "fb7c882a-f897-e7c5-67e0-825e7fd55d15",
    "63ee2253-bdd5-da55-2ad2-b4984d0ad700",
}


def lines(name: str, count: int | None = None) -> list[bytes]:
    return (BULK / name).read_bytes().splitlines()[:count]


def records(items: list[Record | Problem]) -> list[Record]:
    return [i for i in items if isinstance(i, Record)]


def problems(items: list[Record | Problem]) -> list[Problem]:
    return [i for i in items if isinstance(i, Problem)]


def without_time(item: Record | Problem) -> dict[str, object]:
    """The item as data, without the instant its source was made (`ingested_at`)."""
    return item.model_dump(exclude={"source": {"source": {"ingested_at"}}})


def types(items: list[Record | Problem]) -> Counter[str]:
    return Counter(r.source.source.resource_type for r in records(items) if r.source)


def test_export_folder() -> None:
    skipped: Counter[str] = Counter()
    items = list(read_fhir_ndjson(BULK, "export", skipped=skipped))
    assert problems(items) == []  # log.ndjson is not a resource file
    assert {i.patient_ref for i in items[:3] if isinstance(i, Record) and i.patient} == PATIENTS
    assert types(items) == Counter(
        Procedure=92,
        Encounter=67,
        MedicationRequest=58,
        Immunization=47,
        Condition=41,
        AllergyIntolerance=8,
    )
    assert skipped == Counter(DocumentReference=15, Device=1)
    assert {r.patient_ref for r in records(items)} == PATIENTS
    assert {r.source.source.label for r in records(items) if r.source} == {"export"}


def test_export_links_medications_to_conditions() -> None:
    items = list(read_fhir_ndjson(BULK, "export"))
    condition_keys = {
        r.source.claims[0].fact_key
        for r in records(items)
        if r.source and r.source.source.resource_type == "Condition"
    }
    links = [link for r in records(items) for link in r.links]
    assert len(links) == 49
    assert all(link.type is FactLinkType.PRESCRIBED_FOR for link in links)
    assert {link.to_key for link in links} <= condition_keys
    assert all(link.from_key.startswith("medication:rxnorm:") for link in links)


def test_single_gz_file() -> None:
    items = list(read_fhir_ndjson(BULK / "Immunization.000.ndjson.gz", "imm"))
    assert types(items) == Counter(Immunization=47)
    keys = [r.source.claims[0].fact_key for r in records(items) if r.source]
    assert all(k.startswith("immunization:cvx:") and k.endswith("Z") for k in keys)


def test_bad_lines_are_located_by_line_number() -> None:
    patient, condition = lines("Patient.000.ndjson", 1)[0], lines("Condition.000.ndjson", 1)[0]
    broken = json.loads(condition)
    broken["onsetDateTime"] = "not a date"
    body = b"\n".join(
        [condition, b"{not json", b"", json.dumps(broken).encode(), b'{"id": "x"}', patient]
    )
    items = list(read_fhir_ndjson_bytes(body, "upload"))
    assert isinstance(items[0], Record) and items[0].patient is not None  # patient first
    located = sorted((p.file, p.line or 0, p.path, p.resource_type) for p in problems(items))
    assert located == [
        ("upload", 2, "", None),
        ("upload", 4, "onsetDateTime", "Condition"),
        ("upload", 5, "", None),
    ]
    assert [p.message for p in problems(items) if p.line == 2] == [
        "invalid JSON: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"
    ]
    assert types(items) == Counter(Condition=1)


def test_bad_line_in_a_folder_file_names_the_file() -> None:
    items = list(read_fhir_ndjson(BULK / "Patient.000.ndjson", "Patient.000.ndjson"))
    assert len(records(items)) == 3 and problems(items) == []


def test_gzip_body_and_mixed_order() -> None:
    med_request = json.loads(lines("MedicationRequest.000.ndjson", 1)[0])
    reason = med_request["reasonReference"][0]["reference"]
    condition_line = next(
        line for line in lines("Condition.000.ndjson") if reason.split("/")[1].encode() in line
    )
    medication = {"resourceType": "Medication", "id": "med1", "code": {"text": "Zocor 20 mg"}}
    med_request.pop("medicationCodeableConcept")
    med_request["medicationReference"] = {"reference": "Medication/med1"}
    body = b"\n".join(
        [json.dumps(med_request).encode(), condition_line, json.dumps(medication).encode()]
    )
    items = list(read_fhir_ndjson_bytes(gzip.compress(body), "upload.gz"))
    assert problems(items) == []
    condition, request = records(items)  # conditions are read before requests
    assert request.source is not None and condition.source is not None
    claim = request.source.claims[0]
    assert (claim.label, claim.fact_key) == ("Zocor 20 mg", "medication:text:simvastatin")
    assert [link.to_key for link in request.links] == [condition.source.claims[0].fact_key]


def test_a_condition_without_an_id_is_no_reason_of_a_request() -> None:
    med_request = json.loads(lines("MedicationRequest.000.ndjson", 1)[0])
    reason_id = med_request["reasonReference"][0]["reference"].split("/")[1].encode()
    line = next(line for line in lines("Condition.000.ndjson") if reason_id in line)
    condition = json.loads(line)
    del condition["id"]
    med_request["reasonReference"] = [{"reference": "Condition/None"}]
    body = b"\n".join(json.dumps(r).encode() for r in (condition, med_request))
    items = list(read_fhir_ndjson_bytes(body, "upload.ndjson"))
    assert problems(items) == []
    read_condition, request = records(items)
    assert read_condition.source is not None and read_condition.source.claims
    assert request.links == ()


def test_identifier_patient_key_in_an_export() -> None:
    items = list(read_fhir_ndjson(BULK, "export", "identifier:http://hl7.org/fhir/sid/us-ssn"))
    assert problems(items) == []
    assert {r.patient_ref for r in records(items)} == {"999-71-3268", "999-84-9409", "999-28-8122"}


def test_unknown_patient_with_identifier_key() -> None:
    body = lines("Condition.000.ndjson", 2)
    items = list(read_fhir_ndjson_bytes(b"\n".join(body), "u", "identifier:http://x"))
    assert records(items) == []
    assert [p.line for p in problems(items)] == [1, 2]
    assert all("is not in the input" in p.message for p in problems(items))


def test_missing_path_is_one_unusable_problem() -> None:
    [problem] = read_fhir_ndjson(BULK / "nothing.ndjson", "nothing.ndjson")
    assert isinstance(problem, Problem)
    assert problem.message.startswith("cannot read file")
    assert (problem.index, problem.line) == (None, None)


def test_truncated_gzip_is_reported() -> None:
    data = (BULK / "Immunization.000.ndjson.gz").read_bytes()
    items = list(read_fhir_ndjson_bytes(data[: len(data) // 2], "cut.gz"))
    assert problems(items)[-1].message.startswith("cannot read file")


SSN = "identifier:http://hl7.org/fhir/sid/us-ssn"


def ndjson(resources: list[dict[str, Any]]) -> bytes:
    return b"\n".join(json.dumps(r).encode() for r in resources) + b"\n"


def tricky_export(folder: Path) -> Path:
    """The bulk export and all that a reader reads in order: a Medication referenced by id,
    reasonReferences, bad lines, a cut .gz, and a late file in which each resource needs
    the one before it (a Medication, a Patient, a Condition)."""
    export = folder / "export"
    shutil.copytree(BULK, export)
    request = json.loads(lines("MedicationRequest.000.ndjson", 1)[0])
    condition = json.loads(lines("Condition.000.ndjson", 1)[0])
    patient = json.loads(lines("Patient.000.ndjson", 1)[0])
    medication = {"resourceType": "Medication", "id": "med1", "code": {"text": "Zocor 20 mg"}}
    (export / "Medication.000.ndjson").write_bytes(ndjson([medication]))
    by_reference = {k: v for k, v in request.items() if k != "medicationCodeableConcept"}
    by_reference |= {"id": "by-reference", "medicationReference": {"reference": "Medication/med1"}}
    (export / "MedicationRequest.001.ndjson").write_bytes(ndjson([by_reference]))
    broken = condition | {"onsetDateTime": "not a date"}
    bad = [lines("Condition.000.ndjson", 1)[0], b"{not json", json.dumps(broken).encode()]
    (export / "Condition.001.ndjson").write_bytes(b"\n".join(bad))
    gz = (export / "Immunization.000.ndjson.gz").read_bytes()
    (export / "Immunization.000.ndjson.gz").write_bytes(gz[: len(gz) // 2])  # cut short
    late_ssn = {"system": "http://hl7.org/fhir/sid/us-ssn", "value": "999-00-0001"}
    late = [
        medication | {"id": "med2", "code": {"text": "Lipitor 10 mg"}},
        by_reference
        | {"id": "late-by-reference", "medicationReference": {"reference": "Medication/med2"}},
        patient | {"id": "late", "identifier": [late_ssn]},
        condition | {"id": "late-condition", "subject": {"reference": "Patient/late"}},
        request
        | {
            "id": "late-reason",
            "subject": {"reference": "Patient/late"},
            "reasonReference": [{"reference": "Condition/late-condition"}],
        },
        by_reference
        | {
            "id": "contained",  # names Medication: a mixed stream's pass for them skips it
            "contained": [medication | {"id": "m", "code": {"text": "Crestor 5 mg"}}],
            "medicationReference": {"reference": "#m"},
        },
        {"id": "no-type"},
        {"resourceType": "Basic", "id": "not-mapped"},
        request | {"id": "nobody", "subject": {"reference": "Patient/nobody"}},
    ]
    (export / "Encounter.001.ndjson").write_bytes(ndjson(late))
    return export


def by_id(items: list[Record | Problem], rid: str) -> Record:
    [record] = [r for r in records(items) if r.source and r.source.source.resource_id == rid]
    return record


def label(record: Record) -> str:
    assert record.source is not None
    return record.source.claims[0].label


@pytest.mark.parametrize("patient_key", [None, SSN])
def test_a_pool_reads_the_same_items_in_the_same_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, patient_key: str | None
) -> None:
    export = tricky_export(tmp_path)
    monkeypatch.setattr(fhir_ndjson_pool, "CHUNK_LINES", 2)  # lines in flight across chunks

    serial_skipped: Counter[str] = Counter()
    serial = list(read_fhir_ndjson(export, "export", patient_key, serial_skipped))
    pooled_skipped: Counter[str] = Counter()
    with multiprocessing.get_context("fork").Pool(2) as pool:
        pooled = list(read_fhir_ndjson(export, "export", patient_key, pooled_skipped, pool))

    assert [without_time(i) for i in pooled] == [without_time(i) for i in serial]
    assert pooled_skipped == serial_skipped
    assert serial_skipped["Basic"] == 1
    # what each line needed of the lines before it was there when it was read
    assert label(by_id(serial, "by-reference")) == "Zocor 20 mg"
    assert label(by_id(serial, "late-by-reference")) == "Lipitor 10 mg"
    late_condition = by_id(serial, "late-condition")
    assert late_condition.patient_ref == ("999-00-0001" if patient_key else "late")
    assert late_condition.source is not None
    assert [link.to_key for link in by_id(serial, "late-reason").links] == [
        late_condition.source.claims[0].fact_key
    ]
    assert sum(len(r.links) for r in records(serial)) > 40
    located = [(p.file.rsplit("/", 1)[-1], p.line, p.path) for p in problems(serial)]
    assert located[:2] == [
        ("Condition.001.ndjson", 2, ""),
        ("Condition.001.ndjson", 3, "onsetDateTime"),
    ]
    assert ("Encounter.001.ndjson", 7, "") in located  # no resourceType
    assert (("Encounter.001.ndjson", 9, "subject") in located) == (patient_key is not None)
    assert problems(serial)[-1].message.startswith("cannot read file")
    assert types(serial)["Immunization"] > 0  # the lines before the cut are read


@pytest.mark.parametrize("patient_key", [None, SSN])
def test_a_pool_reads_a_mixed_stream_as_its_reader_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, patient_key: str | None
) -> None:
    export = tricky_export(tmp_path)
    everything = [
        line
        for file in sorted(export.glob("[A-Z]*.ndjson"), reverse=True)  # patients last
        for line in file.read_bytes().splitlines()
    ]
    mixed = tmp_path / "mixed.ndjson"
    mixed.write_bytes(b"\n".join(everything))
    monkeypatch.setattr(fhir_ndjson_pool, "CHUNK_LINES", 2)

    serial = list(read_fhir_ndjson(mixed, "mixed", patient_key))
    with multiprocessing.get_context("fork").Pool(2) as pool:
        pooled = list(read_fhir_ndjson(mixed, "mixed", patient_key, pool=pool))

    assert [without_time(i) for i in pooled] == [without_time(i) for i in serial]
    assert label(by_id(serial, "by-reference")) == "Zocor 20 mg"
    assert by_id(serial, "late-reason").links
    contained = by_id(serial, "contained")
    assert label(contained) == "Crestor 5 mg"
    assert contained.links  # read in the last pass, after the Conditions
