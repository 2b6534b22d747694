"""Bulk Data NDJSON: folders, .gz files, HTTP bodies, bad lines, reading order."""

import gzip
import json
import multiprocessing
import shutil
from collections import Counter
from pathlib import Path

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


def test_validating_in_a_pool_reads_the_same_items_in_the_same_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    export = tmp_path / "export"
    shutil.copytree(BULK, export)
    broken = json.loads(lines("Condition.000.ndjson", 1)[0])
    broken["onsetDateTime"] = "not a date"
    bad = [lines("Condition.000.ndjson", 1)[0], b"{not json", json.dumps(broken).encode()]
    (export / "Condition.001.ndjson").write_bytes(b"\n".join(bad))
    gz = (export / "Immunization.000.ndjson.gz").read_bytes()
    (export / "Immunization.000.ndjson.gz").write_bytes(gz[: len(gz) // 2])  # cut short
    monkeypatch.setattr(fhir_ndjson_pool, "CHUNK_LINES", 2)  # lines in flight across chunks

    serial = list(read_fhir_ndjson(export, "export"))
    with multiprocessing.get_context("fork").Pool(2) as pool:
        pooled = list(read_fhir_ndjson(export, "export", pool=pool))

    assert [without_time(i) for i in pooled] == [without_time(i) for i in serial]
    assert [(p.file, p.line, p.path) for p in problems(serial)][:2] == [
        ("export/Condition.001.ndjson", 2, ""),
        ("export/Condition.001.ndjson", 3, "onsetDateTime"),
    ]
    assert problems(serial)[-1].message.startswith("cannot read file")
    assert types(serial)["Immunization"] > 0  # the lines before the cut are read
