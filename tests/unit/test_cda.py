"""C-CDA documents: the patient, and the provenance of every entry (one Source each)."""

import hashlib
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest
from lxml import etree

from engine.errors import InvalidInput
from engine.models import Patient, SourceFormat
from ingest.cda import cda_patient_ref, read_cda
from ingest.records import Problem, Record

DATA = Path(__file__).resolve().parents[1] / "data" / "ccda"
CERNER = "vendor/cerner_problems_and_medications.xml"


def read(name: str) -> list[Record | Problem]:
    return list(read_cda(DATA / name, name))


def sourced(items: list[Record | Problem]) -> list[Record]:
    return [i for i in items if isinstance(i, Record) and i.source is not None]


def test_patient_comes_first_with_demographics() -> None:
    first, *rest = read("hl7/ccd2.xml")
    assert isinstance(first, Record)
    assert first.source is None
    assert first.patient_ref == "98765432"
    assert first.patient == Patient(
        name="Isabella Jones",
        birth_date="1950-12-19",
        gender="female",
        identifiers=("1.3.6.1.4.1.16517.1|98765432", "2.16.840.1.113883.4.1|12345679"),
        address="4567 Residence Rd, Beaverton, 97867",
        phone="+1(444)444-4444",
    )
    assert all(isinstance(i, Problem) or i.patient_ref == "98765432" for i in rest)


def _role(ids: str) -> etree._Element:
    return etree.fromstring(f'<patientRole xmlns="urn:hl7-org:v3">{ids}</patientRole>')


def test_patient_ref_is_the_first_extension_else_the_root() -> None:
    mrn = '<id root="1.2.3"/><id root="1.2.4" extension="MRN7"/><id root="1.2.5" extension="X"/>'
    assert cda_patient_ref(_role(mrn)) == "MRN7"
    assert cda_patient_ref(_role('<id nullFlavor="NI"/><id root="9.8.7"/>')) == "9.8.7"
    assert cda_patient_ref(_role("")) is None


def test_patient_key_selects_the_identifier_system() -> None:
    ssn = read_cda(DATA / "hl7/ccd2.xml", "ccd2", "identifier:urn:oid:2.16.840.1.113883.4.1")
    first = next(ssn)
    assert isinstance(first, Record) and first.patient_ref == "12345679"
    (problem,) = read_cda(DATA / "hl7/ccd2.xml", "ccd2", "identifier:1.2.3.4")
    assert isinstance(problem, Problem)
    assert problem.message == "no patient identifier in system 1.2.3.4"


def test_malformed_patient_key_is_refused_at_once() -> None:
    with pytest.raises(InvalidInput):
        read_cda(b"", "x", "mrn")


def test_one_source_per_entry_with_its_provenance() -> None:
    records = sourced(read(CERNER))
    assert len(records) == 11  # 5 problem concerns + 6 medication activities
    first = records[0]
    assert first.source is not None
    source = first.source.source
    # the document's lineage (no setId: its id; a hash of the person), then the entry id
    assert re.fullmatch(
        r"cda:28A334FE-9348-4AE5-A48C-6174F3D766A4~[0-9a-f]{12}:CFA98865-0D16-4045-9C25-D45B9751C101",
        source.source_ref,
    )
    assert source.format == SourceFormat.CDA
    assert source.label == CERNER
    assert source.resource_type == "ProblemObservation"
    assert source.resource_id == "CFA98865-0D16-4045-9C25-D45B9751C101"
    assert source.version is None  # neither versionNumber nor setId
    assert source.last_updated == datetime(2010, 10, 28, 14, 20, 16, tzinfo=UTC)
    assert source.reliability == 1.0
    types = {r.source.source.resource_type for r in records if r.source}
    assert types == {"ProblemObservation", "MedicationActivity"}


def test_content_hash_is_sha256_of_the_canonical_entry() -> None:
    (record, *_) = sourced(read(CERNER))
    tree = etree.parse(str(DATA / CERNER))
    entry = tree.find(".//{urn:hl7-org:v3}entry")
    assert entry is not None and record.source is not None
    canonical = etree.tostring(entry, method="c14n", with_comments=False)
    assert record.source.source.content_hash == hashlib.sha256(canonical).hexdigest()


def test_version_number_and_id_with_extension() -> None:
    (record, *_) = sourced(read("vendor/greenway_clinical_visit_summary.xml"))
    assert record.source is not None
    source = record.source.source
    assert source.version == "1"
    # the setId and the entry id, the same in every version of the document
    lineage, entry = source.source_ref.rsplit(":", 1)
    assert lineage.startswith("cda:") and "~" in lineage
    assert entry == "2.16.840.1.113883.3.441.1.50.300011.51.26775.57^1271"


def test_reused_entry_ids_get_section_code_and_index() -> None:
    refs = [
        r.source.source.source_ref for r in sourced(read("vendor/emerge_patient_5.xml")) if r.source
    ]
    assert len(refs) == len(set(refs))
    lineage = refs[0].rsplit(":", 1)[0]
    assert f"{lineage}:36e3e930-7b14-11db-9fe1-0800200c9a66" in refs
    assert f"{lineage}:36e3e930-7b14-11db-9fe1-0800200c9a66:48765-2:1" in refs


def test_entry_without_id_uses_section_code_and_index() -> None:
    document = (
        (DATA / CERNER)
        .read_bytes()
        .replace(b'<id root="CFA98865-0D16-4045-9C25-D45B9751C101"/>', b"")
    )
    (record, *_) = sourced(list(read_cda(document, "no-id")))
    assert record.source is not None
    assert re.fullmatch(
        r"cda:28A334FE-9348-4AE5-A48C-6174F3D766A4~[0-9a-f]{12}:11450-4:0",
        record.source.source.source_ref,
    )
    assert record.source.source.resource_id == ""


def test_reading_twice_gives_the_same_sources_and_claims() -> None:
    def snapshot(items: list[Record | Problem]) -> list[object]:
        return [
            (r.source.source.model_dump(exclude={"ingested_at"}), r.source.claims, r.links)
            for r in sourced(items)
            if r.source
        ]

    from_path = read(CERNER)
    from_bytes = list(read_cda((DATA / CERNER).read_bytes(), CERNER))
    assert snapshot(from_path) == snapshot(from_bytes)
    assert from_path[0] == from_bytes[0]
