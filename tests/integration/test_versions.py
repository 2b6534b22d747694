"""Document versions from real files: a newer version replaces and retires, an older one
is skipped as stale, and documents that only reuse ids keep their own facts."""

import json
import uuid
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from lxml import etree
from typer.testing import CliRunner

from api.cli import app as cli
from engine.models import Scope
from engine.store import GraphStore
from ingest.pipeline import ingest_paths
from tests.conftest import DATA
from tests.integration.test_lineage import facts_per_document

CROSS = DATA / "cross" / "record.cda.xml"
PATIENT = "cross-patient-1"
HL7 = DATA / "ccda" / "hl7"
# Two HL7 examples about one person (Eve Everywoman) with one setId and versionNumber 1:
# unrelated documents that reuse the setId and entry ids, not versions of each other.
SAME_SET = [HL7 / "ccd1.xml", HL7 / "referral_note.xml"]
CONDITION = DATA / "fhir" / "hl7" / "condition-example.json"
H = "{urn:hl7-org:v3}"


def version(tmp_path: Path, number: int, drop_last_problem: bool = False) -> Path:
    """The cross-source C-CDA as version `number`, without its last problem entry if asked."""
    root = etree.parse(str(CROSS)).getroot()
    (number_element,) = root.findall(f"{H}versionNumber")
    number_element.set("value", str(number))
    if drop_last_problem:
        section = root.findall(f".//{H}section")[0]
        section.remove(section.findall(f"{H}entry")[-1])
    path = tmp_path / f"v{number}{'-shorter' if drop_last_problem else ''}.xml"
    path.write_bytes(etree.tostring(root))
    return path


def labels(store: GraphStore, org: str) -> set[str]:
    return {f.label for f in store.list_facts(Scope(org=org, patient=PATIENT))}


def test_a_newer_version_retires_the_entries_it_no_longer_contains(
    store: GraphStore, org: str, tmp_path: Path
) -> None:
    first = ingest_paths(store, org, [CROSS], workers=1)
    before = labels(store, org)
    report = ingest_paths(store, org, [version(tmp_path, 2, drop_last_problem=True)], workers=1)

    after = labels(store, org)
    assert (report.deltas.sources_retired, report.deltas.facts_removed) == (1, 1)
    assert report.deltas.sources_replaced == first.deltas.sources_added - 1
    assert len(after) == len(before) - 1


def test_an_older_version_after_a_newer_one_is_skipped_as_stale(
    store: GraphStore, org: str, tmp_path: Path
) -> None:
    newer = version(tmp_path, 3, drop_last_problem=True)
    added = ingest_paths(store, org, [newer], workers=1).deltas.sources_added
    kept = labels(store, org)

    report = ingest_paths(store, org, [version(tmp_path, 2)], workers=1)

    # skipped whole: the entry that version 3 dropped does not come back
    assert (report.deltas.sources_stale, report.deltas.sources_added) == (added + 1, 0)
    assert (report.deltas.sources_replaced, report.deltas.sources_retired) == (0, 0)
    assert report.deltas.facts_removed == 0
    assert kept <= labels(store, org)


def test_documents_that_share_a_set_id_and_version_keep_their_own_facts(
    store: GraphStore, org: str
) -> None:
    alone: dict[str, int] = {}
    for path in SAME_SET:
        one = f"{org}-{uuid.uuid4().hex[:6]}"
        assert ingest_paths(store, one, [path], workers=1).exit_code == 0
        alone |= facts_per_document(store, one)

    report = ingest_paths(store, org, SAME_SET, workers=1)
    again = ingest_paths(store, org, SAME_SET, workers=1)

    assert report.exit_code == 0
    assert (report.deltas.facts_removed, report.deltas.sources_replaced) == (0, 0)
    assert report.deltas.sources_kept_apart > 0
    assert facts_per_document(store, org) == alone
    assert again.deltas.sources_unchanged == report.deltas.sources_added
    assert (again.deltas.sources_added, again.deltas.facts_added) == (0, 0)


def fhir_variant(tmp_path: Path, name: str, **changes: object) -> Path:
    resource = json.loads(CONDITION.read_text()) | changes
    path = tmp_path / name
    path.write_text(json.dumps(resource))
    return path


BURN = {"text": "Burn of ear"}
GOUT = {"coding": [{"system": "http://snomed.info/sct", "code": "90560007"}], "text": "Gout"}


def test_fhir_resources_with_one_id_in_unrelated_files_keep_their_own_facts(
    store: GraphStore, org: str, tmp_path: Path
) -> None:
    ingest_paths(store, org, [CONDITION], workers=1)
    other = fhir_variant(tmp_path, "other.json", code=GOUT)

    report = ingest_paths(store, org, [other], workers=1)

    assert (report.deltas.sources_kept_apart, report.deltas.facts_removed) == (1, 0)
    found = {f.label for f in store.list_facts(Scope(org=org, patient="example"))}
    assert {"Gout", "Burnt Ear"} <= found


def test_cli_reports_replaced_stale_and_kept_apart(
    store: GraphStore, org: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "cli.db"
    monkeypatch.setenv("CCE_ORG", org)
    v1 = fhir_variant(tmp_path, "v1.json", meta={"versionId": "9"}, code=BURN)
    v2 = fhir_variant(tmp_path, "v2.json", meta={"versionId": "10"}, code=GOUT)
    runner = CliRunner()

    def run(*args: str) -> dict[str, int]:
        result = runner.invoke(cli, ["ingest", *args, "--store", f"sqlite:///{db}", "--json"])
        assert result.exit_code == 0, result.output
        deltas: dict[str, int] = json.loads(result.stdout)["deltas"]
        return deltas

    run(str(v1))
    newer = run(str(v2))
    older = run(str(v1))

    assert (newer["sources_replaced"], newer["facts_removed"]) == (1, 1)
    assert (older["sources_stale"], older["facts_added"]) == (1, 0)
    text = runner.invoke(cli, ["ingest", str(v1), "--store", f"sqlite:///{db}"])
    for row in ("sources stale", "sources retired", "sources kept apart", "sources replaced"):
        assert row in text.stdout


def test_http_ingest_reports_retired_entries(client: TestClient, tmp_path: Path) -> None:
    url = f"/v1/patients/{PATIENT}/ingest/cda"
    headers = {"content-type": "application/xml"}
    assert client.post(url, content=CROSS.read_bytes(), headers=headers).status_code == 200

    shorter = version(tmp_path, 2, drop_last_problem=True).read_bytes()
    response = client.post(url, content=shorter, headers=headers)

    assert response.status_code == 200, response.text
    deltas = response.json()["deltas"]
    assert (deltas["sources_retired"], deltas["facts_removed"], deltas["sources_stale"]) == (
        1,
        1,
        0,
    )
