"""The ingest and fact routes, from real exports through HTTP to the store."""

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from engine.settings import Settings, get_settings
from engine.store import GraphStore
from tests.conftest import DATA

SYNTHEA = sorted((DATA / "corpus" / "fhir" / "synthea-r4-bundles").glob("Max_*.json"))[0]
BULK = DATA / "corpus" / "fhir" / "bulk-ndjson-10-patients"
PAIR = DATA / "pair"


@pytest.fixture
def client(store: GraphStore, org: str) -> Iterator[TestClient]:
    app = create_app(store)
    app.dependency_overrides[get_settings] = lambda: Settings(org=org, max_ingest_bytes=2_000_000)
    with TestClient(app) as client:
        yield client


def test_bundle_is_ingested_under_the_url_patient(client: TestClient) -> None:
    response = client.post(
        "/v1/patients/alice/ingest/fhir",
        content=SYNTHEA.read_bytes(),
        headers={"content-type": "application/fhir+json"},
    )

    assert response.status_code == 200, response.text
    report = response.json()
    assert report["deltas"]["facts_added"] > 100
    assert report["deltas"]["sources_added"] == report["resources"] - 1  # the Patient
    assert list(report["patients"]) == ["alice"]
    facts = client.get("/v1/patients/alice/facts", params={"kind": "condition"}).json()
    assert facts and all(f["kind"] == "condition" for f in facts)
    assert {"fact_id", "label", "status", "sources", "conflicts"} <= set(facts[0])


def test_ndjson_body_is_ingested(client: TestClient) -> None:
    lines = (BULK / "Condition.000.ndjson").read_bytes()

    response = client.post(
        "/v1/patients/bob/ingest/fhir",
        content=lines,
        headers={"content-type": "application/fhir+ndjson"},
    )

    assert response.status_code == 200, response.text
    assert response.json()["deltas"]["facts_added"] > 10
    assert client.get("/v1/patients/bob/facts").json()


def test_cda_and_fhir_merge_and_resolution_reports_the_conflict(client: TestClient) -> None:
    fhir = client.post(
        "/v1/patients/pair/ingest/fhir",
        content=(PAIR / "record.fhir.json").read_bytes(),
        headers={"content-type": "application/json"},
    )
    cda = client.post(
        "/v1/patients/pair/ingest/cda",
        content=(PAIR / "record.cda.xml").read_bytes(),
        headers={"content-type": "application/xml"},
    )

    assert (fhir.status_code, cda.status_code) == (200, 200)
    assert cda.json()["deltas"]["facts_merged"] == 2
    resolution = client.get("/v1/patients/pair/resolution").json()
    merged = {m["fact_id"]: m for m in resolution["merged"]}
    assert set(merged) == {"condition:snomed:44054006", "medication:rxnorm:860975"}
    (conflict,) = merged["condition:snomed:44054006"]["conflicts"]
    assert (conflict["field"], conflict["winner"]) == ("status", "resolved")
    fact = client.get("/v1/patients/pair/facts/condition:snomed:44054006").json()
    assert len(fact["sources"]) == 2


def test_rejected_resources_are_reported_and_the_rest_kept(client: TestClient) -> None:
    body = b"""{"resourceType": "Bundle", "type": "collection", "entry": [
      {"resource": {"resourceType": "Condition", "id": "bad", "subject": {"reference": "Patient/x"},
                    "code": {"coding": [{"system": 12, "code": "1"}]}}},
      {"resource": {"resourceType": "Condition", "id": "good",
                    "subject": {"reference": "Patient/x"}, "code": {"text": "Migraine"}}}]}"""

    response = client.post(
        "/v1/patients/carol/ingest/fhir", content=body, headers={"content-type": "application/json"}
    )

    assert response.status_code == 200
    (error,) = response.json()["errors"]
    assert (error["index"], error["resource_type"], error["resource_id"]) == (0, "Condition", "bad")
    assert error["path"].startswith("entry[0].resource.code.coding[0].system")
    assert [f["label"] for f in client.get("/v1/patients/carol/facts").json()] == ["Migraine"]


@pytest.mark.parametrize(
    ("route", "body", "content_type", "status"),
    [
        ("fhir", b"{}", "text/plain", 415),
        ("cda", b"<x/>", "application/json", 415),
        ("fhir", b"not json", "application/json", 422),
        ("cda", b"<?xml version='1.0'?><notcda/>", "application/xml", 422),
        ("fhir", b"{" + b" " * 2_000_001 + b"}", "application/json", 413),
    ],
)
def test_bad_bodies_are_problem_details(
    client: TestClient, route: str, body: bytes, content_type: str, status: int
) -> None:
    response = client.post(
        f"/v1/patients/dave/ingest/{route}", content=body, headers={"content-type": content_type}
    )

    assert response.status_code == status
    assert response.headers["content-type"] == "application/problem+json"
    assert response.json()["status"] == status and response.json()["detail"]


@pytest.mark.parametrize(
    ("body", "named"),
    [
        (b'{"resourceType": "Frobnicate", "id": "x"}', "one resource of type Frobnicate"),
        (
            b'{"resourceType": "Bundle", "type": "collection", "entry": ['
            b'{"resource": {"resourceType": "Basic", "id": "b", "code": {"text": "x"}}}]}',
            "a Bundle of 1 entries: Basic",
        ),
    ],
)
def test_a_body_with_no_usable_resource_is_422_naming_what_it_holds(
    client: TestClient, body: bytes, named: str
) -> None:
    response = client.post(
        "/v1/patients/erin/ingest/fhir", content=body, headers={"content-type": "application/json"}
    )

    assert response.status_code == 422
    assert response.headers["content-type"] == "application/problem+json"
    assert named in response.json()["detail"]
    assert client.get("/v1/patients/erin").status_code == 404  # nothing was written


def test_unknown_patient_and_fact_are_404(client: TestClient) -> None:
    assert client.get("/v1/patients/nobody/facts").status_code == 404
    assert client.get("/v1/patients/nobody/facts/condition:text:x").status_code == 404
    assert client.get("/v1/patients/bad%20id/facts").status_code == 422


def test_fact_ids_survive_a_round_trip(client: TestClient) -> None:
    client.post(
        "/v1/patients/erin/ingest/fhir",
        content=SYNTHEA.read_bytes(),
        headers={"content-type": "application/json"},
    )
    for fact in client.get("/v1/patients/erin/facts", params={"kind": "observation"}).json()[:20]:
        response = client.get(f"/v1/patients/erin/facts/{fact['fact_id']}")
        assert response.status_code == 200
        assert response.json()["fact_key"] == fact["fact_id"]
