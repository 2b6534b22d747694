"""Problem details for every failure, body limits, request ids, health and access logs."""

import json
import logging
from collections.abc import Iterator
from typing import Any

import pytest

from api.logs import JsonFormatter
from engine.errors import Conflict, NotFound, StoreUnavailable
from engine.store import GraphStore
from tests.integration._security import client, fhir_bundle, settings_for

PROBLEM = "application/problem+json"
FHIR = {"content-type": "application/fhir+json"}


class Broken:
    """A store whose reads fail with a given error; everything else passes through."""

    def __init__(self, store: GraphStore, error: Exception) -> None:
        self._store = store
        self.error = error

    def get_patient(self, *args: Any) -> Any:
        raise self.error

    list_patients = get_patient

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)


@pytest.mark.parametrize(
    ("error", "status"),
    [
        (NotFound("patient", "p1"), 404),
        (Conflict("the watermark moved"), 409),
        (StoreUnavailable("Neo4j is unavailable"), 503),
        (RuntimeError("secret detail"), 500),
    ],
)
def test_engine_errors_are_problem_details(
    store: GraphStore, org: str, error: Exception, status: int
) -> None:
    api = client(Broken(store, error), settings_for(org=org))

    response = api.get("/v1/patients/p1", headers={"X-Request-ID": "abc"})

    assert response.status_code == status
    assert response.headers["content-type"] == PROBLEM
    assert response.headers["X-Request-ID"] == "abc"
    body = response.json()
    assert body["status"] == status
    assert body["title"] and body["detail"]
    assert "secret detail" not in response.text
    assert ("Retry-After" in response.headers) == (status == 503)


def test_health_is_public_and_ready_follows_the_store(store: GraphStore) -> None:
    settings = settings_for(oidc_issuer="https://issuer.invalid", oidc_audience="cce")
    api = client(store, settings)
    down = client(Broken(store, StoreUnavailable("down")), settings)

    assert api.get("/health/live").json() == {"status": "ok"}
    assert api.get("/health/ready").json() == {"status": "ready"}
    assert down.get("/health/live").status_code == 200
    unready = down.get("/health/ready")
    assert unready.status_code == 503
    assert unready.headers["Retry-After"] == "5"


def test_validation_errors_name_the_field(store: GraphStore, org: str) -> None:
    api = client(store, settings_for(org=org))

    bad_pid = api.get("/v1/patients/no%20spaces")
    bad_query = api.get("/v1/patients/p1/context", params={"token_budget": "many"})

    assert bad_pid.status_code == 422
    assert bad_pid.headers["content-type"] == PROBLEM
    assert [e["path"] for e in bad_pid.json()["errors"]] == ["path.pid"]
    assert [e["path"] for e in bad_query.json()["errors"]] == ["query.token_budget"]


def test_a_time_before_year_one_in_utc_is_a_validation_error(store: GraphStore, org: str) -> None:
    api = client(store, settings_for(org=org))
    said = {"role": "patient", "text": "hi", "timestamp": "0001-01-01T00:00:00+00:01"}

    response = api.post("/v1/patients/p1/sessions/s1/messages", json={"messages": [said]})

    assert response.status_code == 422
    assert [e["path"] for e in response.json()["errors"]] == ["body.messages.0.timestamp"]


def test_unknown_routes_and_methods_are_problems(store: GraphStore, org: str) -> None:
    api = client(store, settings_for(org=org))

    assert api.get("/v1/nowhere").json()["status"] == 404
    wrong_method = api.patch("/v1/patients/p1/context")
    assert wrong_method.status_code == 405
    assert wrong_method.headers["content-type"] == PROBLEM


def test_bodies_over_the_limits_are_413(store: GraphStore, org: str) -> None:
    api = client(store, settings_for(org=org, max_ingest_bytes=2000, max_request_bytes=100))
    big = fhir_bundle("x" * 3000)

    declared = api.post("/v1/patients/p1/ingest/fhir", content=big, headers=FHIR)
    chunked = api.post(
        "/v1/patients/p1/ingest/fhir", content=iter([big[:1500], big[1500:]]), headers=FHIR
    )
    json_body = api.put("/v1/patients/p1/memory-pause", json={"paused": True, "pad": "x" * 200})
    chunked_json = api.put(
        "/v1/patients/p1/memory-pause",
        content=iter([b'{"paused": true, "pad": "', b"x" * 200, b'"}']),
        headers={"content-type": "application/json"},
    )

    for response in (declared, chunked, json_body, chunked_json):
        assert response.status_code == 413, response.text
        assert response.headers["content-type"] == PROBLEM
    assert store.list_patients(org) == []


def test_bodies_of_other_media_types_are_415(store: GraphStore, org: str) -> None:
    api = client(store, settings_for(org=org))

    cda_as_fhir = api.post("/v1/patients/p1/ingest/fhir", content=b"<x/>", headers={})
    text = api.put(
        "/v1/patients/p1/memory-pause", content=b"paused", headers={"content-type": "text/plain"}
    )

    assert cda_as_fhir.status_code == 415
    assert text.status_code == 415
    assert text.json()["title"] == "Unsupported media type"


@pytest.mark.parametrize(
    ("given", "echoed"),
    [("abc-123", True), ("trace:00-4bf92f/3577b34d", True), ("bad id", False), ("x" * 129, False)],
)
def test_request_ids_are_echoed_when_plain_else_generated(
    store: GraphStore, org: str, given: str, echoed: bool
) -> None:
    api = client(store, settings_for(org=org))

    answered = api.get("/v1/patients/p1", headers={"X-Request-ID": given}).headers["X-Request-ID"]

    assert (answered == given) is echoed
    assert len(answered) <= 128
    assert api.get("/health/live").headers["X-Request-ID"]


@pytest.fixture
def access_log() -> Iterator[list[str]]:
    lines: list[str] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            lines.append(self.format(record))

    handler = Collect()
    handler.setFormatter(JsonFormatter())
    logger = logging.getLogger("cce.access")
    logger.addHandler(handler)
    yield lines
    logger.removeHandler(handler)


def test_one_json_log_line_per_request_without_ids_queries_or_bodies(
    store: GraphStore, org: str, access_log: list[str]
) -> None:
    api = client(store, settings_for(org=org))
    api.post("/v1/patients/pt-7/ingest/fhir", content=fhir_bundle("marker-9"), headers=FHIR)
    api.get(
        "/v1/patients/pt-7/context", params={"token_budget": 4321}, headers={"X-Request-ID": "r1"}
    )

    entries = [json.loads(line) for line in access_log]

    assert [(e["method"], e["route"], e["status"]) for e in entries] == [
        ("POST", "/v1/patients/{pid}/ingest/fhir", 200),
        ("GET", "/v1/patients/{pid}/context", 200),
    ]
    assert entries[1]["request_id"] == "r1"
    assert entries[1]["org"] == org
    assert entries[1]["duration_ms"] >= 0
    for text in ("pt-7", "marker-9", "4321", "token_budget", "diabetes"):
        assert text not in "\n".join(access_log)
