"""Wrong-patient protection on real documents: the five eMERGE samples carry one
placeholder recordTarget id for five different people (issue 10), on both backends."""

import json
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from api.cli import app as cli
from engine.errors import IdentityMismatch
from engine.models import Patient, Scope
from engine.store import GraphStore
from ingest.identity import identity_conflict, masked
from ingest.pipeline import ingest_paths

VENDOR = Path(__file__).parents[1] / "data" / "ccda" / "vendor"
EMERGE = [VENDOR / f"emerge_patient_{n}.xml" for n in (1, 3, 5, 7, 9)]


def test_five_people_under_one_id_stay_apart(store: GraphStore, org: str) -> None:
    report = ingest_paths(store, org, EMERGE, workers=1)

    [patient] = report.patients
    refused = [e for e in report.errors if "identity mismatch" in e.message]
    assert [Path(e.file).name for e in refused] == [p.name for p in EMERGE[1:]]
    assert report.deltas.facts_removed == 0 and report.exit_code == 1
    assert all("born 19" in e.message and "W. C." in e.message for e in refused)
    alone = ingest_paths(store, f"{org}-alone", EMERGE[:1], workers=1)
    facts = store.list_facts(Scope(org=org, patient=patient))
    assert len(facts) == alone.deltas.facts_added  # only the first person's record
    assert masked(store.get_patient(Scope(org=org, patient=patient))).startswith("W. C.")


def test_accepting_a_mismatch_writes_and_is_audited(store: GraphStore, org: str) -> None:
    report = ingest_paths(store, org, EMERGE[:2], workers=1, accept_identity_mismatch=True)

    assert report.exit_code == 0
    assert any("accepted as asked" in w.message for w in report.warnings)
    events = store.list_audit(org)
    assert [e.action for e in events] == ["ingest: identity mismatch accepted"]


def test_the_cli_names_the_file_and_exits_1(org: str, tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'cli.db'}"
    files = [str(p) for p in EMERGE[:2]]
    result = CliRunner().invoke(cli, ["ingest", *files, "--store", db, "--org", org, "--json"])
    assert result.exit_code == 1
    report = json.loads(result.output)
    [error] = report["errors"]
    assert (
        error["file"].endswith("emerge_patient_3.xml") and "identity mismatch" in error["message"]
    )


def test_http_answers_409_and_writes_nothing(client: TestClient) -> None:
    url = "/v1/patients/emerge/ingest/cda"
    xml = {"content-type": "application/xml"}
    assert client.post(url, content=EMERGE[0].read_bytes(), headers=xml).status_code == 200
    before = client.get("/v1/patients/emerge/facts").json()

    refused = client.post(url, content=EMERGE[1].read_bytes(), headers=xml)

    assert refused.status_code == 409
    assert refused.headers["content-type"] == "application/problem+json"
    assert refused.json()["type"] == IdentityMismatch.problem_type
    assert "J. L." in refused.json()["detail"] and "W. C." in refused.json()["detail"]
    assert client.get("/v1/patients/emerge/facts").json() == before
    accepted = client.post(
        url,
        params={"accept_identity_mismatch": "true"},
        content=EMERGE[1].read_bytes(),
        headers=xml,
    )
    assert accepted.status_code == 200
    deltas = accepted.json()["deltas"]
    assert deltas["sources_added"] + deltas["sources_replaced"] > 0


@pytest.mark.parametrize(
    ("stored", "incoming", "why"),
    [
        (
            Patient(name="Ann Lee", birth_date="1970-02-01"),
            Patient(name="Ann Lee", birth_date="1970-02-01"),
            None,
        ),
        (Patient(name="Ann Lee", birth_date="1970-02-01"), Patient(name="ANN B. LEE"), None),
        (
            Patient(name="Ann Lee", birth_date="1970-02-01"),
            Patient(name="Ann Lee", birth_date="1971-02-01"),
            "the birth date differs",
        ),
        (Patient(name="Ann Lee"), Patient(name="Bob Stone"), "no name part in common"),
        (Patient(), Patient(name="Bob Stone", birth_date="1980"), None),
    ],
)
def test_identity_is_decided_by_birth_date_and_name(
    stored: Patient, incoming: Patient, why: str | None
) -> None:
    assert identity_conflict(stored, incoming) == why


def test_identities_are_masked() -> None:
    assert masked(Patient(name="William Cooper", birth_date="1943-05-02")) == "W. C., born 1943"
    assert masked(Patient()) == "no name"


def test_an_explicit_patient_assignment_overrides_and_is_audited(
    store: GraphStore, org: str
) -> None:
    report = ingest_paths(store, org, EMERGE[:2], workers=1, patient="chosen")

    assert report.exit_code == 0 and list(report.patients) == ["chosen"]
    assert any("assigned to this patient explicitly" in w.message for w in report.warnings)
    assert [e.action for e in store.list_audit(org)] == [
        "ingest: identity mismatch assigned explicitly"
    ]


def test_http_patient_query_is_an_explicit_assignment(client: TestClient) -> None:
    url = "/v1/patients/emerge/ingest/cda"
    xml = {"content-type": "application/xml"}
    assert client.post(url, content=EMERGE[0].read_bytes(), headers=xml).status_code == 200

    other = client.post(url, content=EMERGE[1].read_bytes(), headers=xml, params={"patient": "x"})
    assigned = client.post(
        url, content=EMERGE[1].read_bytes(), headers=xml, params={"patient": "emerge"}
    )

    assert other.status_code == 422
    assert assigned.status_code == 200, assigned.text


def test_address_and_phone_differences_are_conflicts_not_refusals(
    store: GraphStore, org: str
) -> None:
    cross = Path(__file__).parents[1] / "data" / "cross"
    report = ingest_paths(
        store, org, [cross / "record.fhir.json", cross / "record.cda.xml"], workers=1
    )

    assert report.exit_code == 0
    patient = store.get_patient(Scope(org=org, patient="cross-patient-1"))
    assert [(c.field, c.winner) for c in patient.conflicts] == [
        ("address", "22 New Street, Springfield, 01102"),
        ("phone", "555-0199"),
    ]
    assert patient.address == "22 New Street, Springfield, 01102"
