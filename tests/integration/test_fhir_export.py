"""Patient-reported data as FHIR R4, on both backends: valid by construction, references
resolved, patient text only in `note`/`valueString`, stable ids, and never a fact again."""

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from fhir.resources.R4B import get_fhir_model_class
from typer.testing import CliRunner

from api.app import create_app
from api.cli import app as cli
from engine.fhir_export import TAG_CODE, is_patient_reported
from engine.settings import Settings, get_settings
from engine.store import GraphStore
from ingest.fhir_read import PATIENT_REPORTED
from ingest.pipeline import Ingestor, read_bytes
from tests.conftest import DATA

PATIENT = "pair-patient-1"
BASE = f"/v1/patients/{PATIENT}"
EXPORT = f"{BASE}/fhir/patient-reported"
# Every memory type and relationship type, a caregiver among the speakers.
TURNS = [
    ("provider", "How have you been doing with the metformin?"),
    ("patient", "I stopped taking the metformin two weeks ago because it upset my stomach."),
    ("provider", "And your sugars?"),
    ("patient", "My sugars have been running in the 200s every morning."),
    ("caregiver", "She has been very thirsty at night, drinking water all the time."),
    ("patient", "I have diabetes."),
    ("patient", "I'm worried this could be damaging my kidneys."),
    ("patient", "Please text me rather than call."),
]
SENT = [text for role, text in TURNS if role != "provider"]


@pytest.fixture
def client(store: GraphStore, org: str) -> Iterator[TestClient]:
    app = create_app(store)
    app.dependency_overrides[get_settings] = lambda: Settings(org=org)
    with TestClient(app) as client:
        response = client.post(
            f"{BASE}/ingest/fhir",
            content=(DATA / "pair" / "record.fhir.json").read_bytes(),
            headers={"content-type": "application/fhir+json"},
        )
        assert response.status_code == 200
        sid = client.post(f"{BASE}/sessions", json={}).json()["session_id"]
        messages = [{"role": r, "text": t} for r, t in TURNS]
        assert client.post(
            f"{BASE}/sessions/{sid}/messages", json={"messages": messages}
        ).is_success
        assert client.post(f"{BASE}/sessions/{sid}/generate-memories").is_success
        yield client


def _resources(bundle: dict[str, Any]) -> list[dict[str, Any]]:
    return [e["resource"] for e in bundle["entry"]]


def _references(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        if isinstance(value.get("reference"), str):
            yield value["reference"]
        for v in value.values():
            yield from _references(v)
    elif isinstance(value, list):
        for v in value:
            yield from _references(v)


def _strings(value: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], str]]:
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _strings(v, (*path, k))
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v, path)
    elif isinstance(value, str):
        yield path, value


def test_every_resource_validates_and_every_reference_resolves(client: TestClient) -> None:
    response = client.get(EXPORT)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/fhir+json")
    bundle = response.json()
    get_fhir_model_class("Bundle").model_validate(bundle)
    resources = _resources(bundle)
    for resource in resources:
        get_fhir_model_class(resource["resourceType"]).model_validate(resource)
    kinds = {r["resourceType"] for r in resources}
    assert {"MedicationStatement", "Observation", "DetectedIssue", "Provenance"} <= kinds
    assert {"Patient", "RelatedPerson", "Device"} <= kinds
    inside = {f"{r['resourceType']}/{r['id']}" for r in resources}
    record = {"Condition/pair-diabetes", "MedicationRequest/pair-metformin"}
    assert set(_references(bundle)) <= inside | record
    assert set(_references(bundle)) & record  # linked back to the record it bears on


def test_each_memory_maps_as_documented(client: TestClient) -> None:
    resources = _resources(client.get(EXPORT).json())
    [statement] = [r for r in resources if r["resourceType"] == "MedicationStatement"]
    assert statement["status"] == "stopped"
    assert statement["informationSource"] == {"reference": f"Patient/{PATIENT}"}
    assert statement["derivedFrom"] == [{"reference": "MedicationRequest/pair-metformin"}]
    assert any("upset my stomach" in n["text"] for n in statement["note"])
    [issue] = [r for r in resources if r["resourceType"] == "DetectedIssue"]
    assert issue["implicated"] == [{"reference": "MedicationRequest/pair-metformin"}]
    assert issue["evidence"] == [
        {"detail": [{"reference": f"MedicationStatement/{statement['id']}"}]}
    ]
    observations = {
        r["code"]["coding"][0]["code"]: r for r in resources if r["resourceType"] == "Observation"
    }
    assert {"symptom", "concern", "preference"} <= set(observations)
    symptoms = [
        r for r in resources if r.get("code", {}).get("coding", [{}])[0].get("code") == "symptom"
    ]
    assert any(s.get("focus") == [{"reference": "Condition/pair-diabetes"}] for s in symptoms)
    by_caregiver = [
        s for s in symptoms if s["performer"][0]["reference"].startswith("RelatedPerson/")
    ]
    assert by_caregiver
    assert "valueString" in observations["preference"]
    [provenance] = [r for r in resources if r["resourceType"] == "Provenance"]
    produced = {f"{r['resourceType']}/{r['id']}" for r in resources if is_patient_reported(r)}
    assert {t["reference"] for t in provenance["target"]} == produced - {
        f"Provenance/{provenance['id']}"
    }


def test_patient_words_appear_only_in_note_and_value_string(client: TestClient) -> None:
    bundle = client.get(EXPORT).json()
    for path, text in _strings(bundle):
        if any(len(text) > 12 and text in said or said in text for said in SENT):
            assert path[-2:] == ("note", "text") or path[-1] == "valueString", (path, text)


def test_ids_are_stable_and_filters_apply(client: TestClient) -> None:
    first, again = client.get(EXPORT).json(), client.get(EXPORT).json()
    assert [r["id"] for r in _resources(first)] == [r["id"] for r in _resources(again)]
    only = _resources(client.get(EXPORT, params={"type": "adherence"}).json())
    assert {r["resourceType"] for r in only} == {
        "Patient",
        "MedicationStatement",
        "DetectedIssue",
        "Device",
        "Provenance",
    }
    later = _resources(client.get(EXPORT, params={"since": "2999-01-01T00:00:00Z"}).json())
    assert [r["resourceType"] for r in later] == ["Patient"]
    assert client.get("/v1/patients/nobody/fhir/patient-reported").status_code == 404


def test_the_demo_patient_exports_valid_fhir(store: GraphStore, org: str) -> None:
    from api.cli_demo import DEMO
    from engine.fhir_export import export_patient
    from engine.memories.service import generate_memories
    from engine.models import NewMessage, Role, Scope, Session
    from ingest.pipeline import ingest_paths

    report = ingest_paths(store, org, [Path(str(DEMO / "patient.json"))], workers=1)
    (patient,) = report.patients
    scope = Scope(org=org, patient=patient)
    store.create_session(scope, Session(session_id="demo-visit"))
    turns = json.loads(Path(str(DEMO / "conversation.json")).read_text("utf-8"))["turns"]
    store.append_messages(
        scope, "demo-visit", [NewMessage(role=Role(t["role"]), text=t["text"]) for t in turns]
    )
    generate_memories(store, scope, "demo-visit")
    bundle = export_patient(store, scope)
    get_fhir_model_class("Bundle").model_validate(bundle)
    counts: dict[str, int] = {}
    for resource in _resources(bundle):
        get_fhir_model_class(resource["resourceType"]).model_validate(resource)
        counts[resource["resourceType"]] = counts.get(resource["resourceType"], 0) + 1
    assert counts["DetectedIssue"] >= 1 and counts["MedicationStatement"] >= 1
    assert counts["Observation"] >= 1 and counts["Provenance"] == 1


def test_ingesting_the_export_never_makes_a_fact(
    client: TestClient, store: GraphStore, org: str
) -> None:
    from engine.models import Scope

    scope = Scope(org=org, patient=PATIENT)
    before = store.list_facts(scope)
    bundle = client.get(EXPORT).json()
    ingestor = Ingestor(store, org, patient=PATIENT)
    ingestor.feed("export.json", read_bytes(json.dumps(bundle).encode(), "export.json"))
    assert store.list_facts(scope) == before
    warned = [w for w in ingestor.report.warnings if PATIENT_REPORTED in str(w)]
    tagged = [
        r
        for r in _resources(bundle)
        if is_patient_reported(r) and r["resourceType"] != "Provenance"
    ]
    assert len(warned) >= len(
        [r for r in tagged if r["resourceType"] in ("Observation", "MedicationStatement")]
    )
    assert TAG_CODE == "patient-reported"


def test_the_cli_writes_a_bundle_or_ndjson(org: str, tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'cli.db'}"
    runner = CliRunner()
    record = str(DATA / "pair" / "record.fhir.json")
    assert runner.invoke(cli, ["ingest", record, "--store", db, "--org", org]).exit_code == 0
    transcript = tmp_path / "t.json"
    transcript.write_text(json.dumps({"turns": [{"role": r, "text": t} for r, t in TURNS]}))
    made = runner.invoke(
        cli, ["session", "import", PATIENT, str(transcript), "--store", db, "--org", org]
    )
    assert made.exit_code == 0, made.output
    sid = made.output.strip().split()[-1]
    assert (
        runner.invoke(cli, ["generate-memories", sid, "--store", db, "--org", org]).exit_code == 0
    )
    out = tmp_path / "export.json"
    done = runner.invoke(
        cli, ["export", PATIENT, "--fhir", "--out", str(out), "--store", db, "--org", org]
    )
    assert done.exit_code == 0, done.output
    assert json.loads(out.read_text())["type"] == "collection"
    nd = tmp_path / "nd"
    done = runner.invoke(
        cli, ["export", PATIENT, "--fhir", "--ndjson", str(nd), "--store", db, "--org", org]
    )
    assert done.exit_code == 0, done.output
    assert (nd / "MedicationStatement.ndjson").read_text().count("\n") == 1
    refused = runner.invoke(cli, ["export", PATIENT, "--store", db, "--org", org])
    assert refused.exit_code == 2
