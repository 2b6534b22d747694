"""Sources keep their own facts: only a newer version of a document replaces what it said."""

import uuid
from pathlib import Path

from engine.models import Scope
from engine.store import GraphStore
from ingest.pipeline import ingest_paths
from tests.conftest import DATA

VENDOR = sorted((DATA / "ccda" / "vendor").glob("*.xml"))
CROSS = DATA / "cross" / "record.cda.xml"
PATIENT = "cross-patient-1"


def facts_per_document(store: GraphStore, org: str) -> dict[str, int]:
    counts: dict[str, int] = {}
    for patient in store.list_patients(org):
        for fact in store.list_facts(Scope(org=org, patient=patient)):
            for label in {source.label for source in fact.sources}:
                counts[label] = counts.get(label, 0) + 1
    return counts


def test_vendor_documents_one_by_one_and_together_give_the_same_facts(
    store: GraphStore, org: str
) -> None:
    alone: dict[str, int] = {}
    for path in VENDOR:
        one = f"{org}-{uuid.uuid4().hex[:6]}"
        assert ingest_paths(store, one, [path], workers=1).exit_code == 0
        alone |= facts_per_document(store, one)

    # the eMERGE five share a patient id: accepted under it, they still keep their facts
    report = ingest_paths(store, org, VENDOR, workers=1, accept_identity_mismatch=True)

    assert len(VENDOR) >= 14
    assert report.exit_code == 0
    assert report.deltas.facts_removed == 0
    assert report.deltas.sources_replaced == 0
    assert facts_per_document(store, org) == alone


def variant(tmp_path: Path, name: str, *swaps: tuple[str, str]) -> Path:
    text = CROSS.read_text()
    for old, new in swaps:
        assert old in text
        text = text.replace(old, new)
    path = tmp_path / name
    path.write_text(text)
    return path


GOUT = (
    "<originalText>OSTEOARTHRITIS OF HIP</originalText>",
    "<originalText>GOUT</originalText>",
)


def test_an_unrelated_document_with_the_same_entry_ids_removes_nothing(
    store: GraphStore, org: str, tmp_path: Path
) -> None:
    other = variant(
        tmp_path,
        "other.xml",
        ('extension="cross-doc-1"', 'extension="other-doc"'),
        ('extension="cross-doc-1-set"', 'extension="other-set"'),
        GOUT,
    )
    ingest_paths(store, org, [CROSS], workers=1)
    report = ingest_paths(store, org, [other], workers=1)

    labels = {f.label for f in store.list_facts(Scope(org=org, patient=PATIENT))}
    assert report.deltas.facts_removed == 0
    assert {"OSTEOARTHRITIS OF HIP", "GOUT"} <= labels


def test_a_newer_version_of_the_document_replaces_its_entries(
    store: GraphStore, org: str, tmp_path: Path
) -> None:
    newer = variant(
        tmp_path,
        "v2.xml",
        ('<versionNumber value="1"/>', '<versionNumber value="2"/>'),
        ('<effectiveTime value="20240301120000+0000"/>', '<effectiveTime value="20240401"/>'),
        GOUT,
    )
    ingest_paths(store, org, [CROSS], workers=1)
    report = ingest_paths(store, org, [newer], workers=1)

    labels = {f.label for f in store.list_facts(Scope(org=org, patient=PATIENT))}
    # every entry takes the new version; the one that changed replaces its fact
    assert (report.deltas.facts_removed, report.deltas.sources_replaced) == (1, 6)
    assert "GOUT" in labels and "OSTEOARTHRITIS OF HIP" not in labels
