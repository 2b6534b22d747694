"""Sessions and generate-memories over HTTP, on both backends."""

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from engine.settings import Settings, get_settings
from engine.store import GraphStore
from tests.conftest import DATA

PATIENT = "pair-patient-1"
BASE = f"/v1/patients/{PATIENT}"


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
        yield client


def _session(client: TestClient, *turns: tuple[str, str]) -> str:
    session_id: str = client.post(f"{BASE}/sessions", json={}).json()["session_id"]
    messages = [{"role": role, "text": text} for role, text in turns]
    response = client.post(f"{BASE}/sessions/{session_id}/messages", json={"messages": messages})
    assert response.status_code == 201, response.text
    return session_id


def test_generate_links_memories_by_relationship_type(client: TestClient) -> None:
    session_id = _session(
        client,
        ("provider", "Are you still taking the metformin?"),
        ("patient", "I stopped taking the metformin two weeks ago because it upset my stomach."),
        ("patient", "I'm worried that my diabetes is getting worse."),
    )

    response = client.post(f"{BASE}/sessions/{session_id}/generate-memories")

    assert response.status_code == 200, response.text
    body = response.json()
    assert body["status"] == "ok"
    adherence = [m for m in body["memories"] if m["type"] == "adherence"]
    assert adherence and adherence[0]["subject"] == "metformin"
    (link,) = adherence[0]["relationships"]
    assert (link["type"], link["fact_id"]) == ("conflicts", "medication:rxnorm:860975")
    assert link["fact_sources"] == [
        {"format": "fhir", "resource_type": "MedicationRequest", "resource_id": "pair-metformin"}
    ]
    assert any(m["type"] == "concern" for m in body["memories"])
    texts = [m["text"] for m in client.get(f"{BASE}/sessions/{session_id}").json()["messages"]]
    for memory in body["memories"]:
        for e in memory["evidence"]:
            assert any(text[e["start"] : e["end"]] == e["quote"] for text in texts), e
    fact = client.get(f"{BASE}/facts/medication:rxnorm:860975").json()
    assert fact["status"] == "current"  # a memory never changes a fact


def test_second_call_without_new_messages_creates_nothing(client: TestClient) -> None:
    session_id = _session(client, ("patient", "I stopped taking the metformin last month."))
    first = client.post(f"{BASE}/sessions/{session_id}/generate-memories").json()

    second = client.post(f"{BASE}/sessions/{session_id}/generate-memories").json()

    assert first["memories"] and first["status"] == "ok"
    assert (second["status"], second["memories"], second["relationships"]) == (
        "nothing-new",
        [],
        [],
    )
    assert len(client.get(f"{BASE}/memories").json()) == len(first["memories"])


def test_a_repeated_statement_in_a_new_session_is_a_new_memory(client: TestClient) -> None:
    statement = ("patient", "I stopped taking the metformin last month.")
    first = _session(client, statement)
    client.post(f"{BASE}/sessions/{first}/generate-memories")
    before = client.get(f"{BASE}/memories", params={"type": "adherence"}).json()

    second = _session(client, statement)
    client.post(f"{BASE}/sessions/{second}/generate-memories")
    after = client.get(f"{BASE}/memories", params={"type": "adherence"}).json()

    assert len(after) == 2 * len(before) == 2
    assert {m["session_id"] for m in after} == {first, second}
    old = next(m for m in after if m["session_id"] == first)
    assert old == before[0]


def test_closed_session_is_readable_and_refuses_messages(client: TestClient) -> None:
    session_id = _session(client, ("patient", "Hello."))

    closed = client.delete(f"{BASE}/sessions/{session_id}")
    refused = client.post(
        f"{BASE}/sessions/{session_id}/messages",
        json={"messages": [{"role": "patient", "text": "More."}]},
    )

    assert closed.json()["status"] == "closed"
    assert refused.status_code == 409
    session = client.get(f"{BASE}/sessions/{session_id}").json()
    assert [m["text"] for m in session["messages"]] == ["Hello."]


@pytest.mark.parametrize(
    "messages",
    [
        [],
        [{"role": "doctor", "text": "hi"}],
        [{"role": "patient", "text": ""}],
        [{"role": "patient", "text": "x" * 32_001}],
    ],
)
def test_invalid_messages_are_422_with_field_paths(
    client: TestClient, messages: list[dict[str, str]]
) -> None:
    session_id = _session(client, ("patient", "Hello."))

    response = client.post(f"{BASE}/sessions/{session_id}/messages", json={"messages": messages})

    assert response.status_code == 422
    assert response.json()["errors"][0]["path"].startswith("body.messages")


def test_unknown_session_is_404(client: TestClient) -> None:
    assert client.get(f"{BASE}/sessions/s-nope").status_code == 404
    assert client.post(f"{BASE}/sessions/s-nope/generate-memories").status_code == 404


def test_paused_patient_keeps_nothing_even_after_resuming(client: TestClient) -> None:
    assert client.put(f"{BASE}/memory-pause", json={"paused": True}).status_code == 200
    session_id = _session(client, ("patient", "I stopped taking the metformin last month."))

    paused = client.post(f"{BASE}/sessions/{session_id}/generate-memories").json()
    client.put(f"{BASE}/memory-pause", json={"paused": False})
    resumed = client.post(f"{BASE}/sessions/{session_id}/generate-memories").json()

    assert (paused["status"], paused["memories"]) == ("paused", [])
    assert (resumed["status"], resumed["memories"]) == ("nothing-new", [])
    assert client.get(f"{BASE}/memories").json() == []
    assert client.get(f"{BASE}/sessions/{session_id}").json()["messages"]  # still readable


def test_a_failing_model_endpoint_is_502_and_writes_nothing(store: GraphStore, org: str) -> None:
    settings = Settings(
        org=org,
        extractor="llm",
        llm_base_url="http://127.0.0.1:9/v1",
        llm_model="m",
        llm_max_retries=0,
        llm_timeout_s=2,
    )
    app = create_app(store)
    app.dependency_overrides[get_settings] = lambda: settings
    with TestClient(app) as client:
        client.post(
            f"{BASE}/ingest/fhir",
            content=(DATA / "pair" / "record.fhir.json").read_bytes(),
            headers={"content-type": "application/fhir+json"},
        )
        session_id = _session(client, ("patient", "I stopped taking the metformin."))
        response = client.post(f"{BASE}/sessions/{session_id}/generate-memories")

        assert response.status_code == 502
        assert response.headers["content-type"] == "application/problem+json"
        assert "model endpoint failed" in response.json()["detail"]
        assert "127.0.0.1:9" not in response.text
        assert client.get(f"{BASE}/sessions/{session_id}").json()["processed_through"] == 0
        assert client.get(f"{BASE}/memories").json() == []
