"""Clinician reviews over HTTP: scope, problem details, the latest review in memory JSON."""

import re

import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from engine.models import Scope
from engine.store import GraphStore
from tests.integration._security import (
    add_conversation,
    client,
    fhir_bundle,
    key_entry,
    settings_for,
)

FHIR = {"content-type": "application/fhir+json"}
REVIEWS = "/v1/patients/p1/memories/m1/reviews"


@pytest.fixture
def scope(store: GraphStore, org: str) -> Scope:
    scope = Scope(org=org, patient="p1")
    api = client(store, settings_for(org=org))
    assert api.post(
        "/v1/patients/p1/ingest/fhir", content=fhir_bundle("r"), headers=FHIR
    ).is_success
    add_conversation(store, scope, "r")
    return scope


def test_reviews_are_appended_and_the_latest_is_in_the_memory(
    store: GraphStore, scope: Scope
) -> None:
    api = client(store, settings_for(org=scope.org))

    confirmed = api.post(REVIEWS, json={"action": "confirm"})
    dismissed = api.post(REVIEWS, json={"action": "dismiss", "reason": "duplicate"})

    assert confirmed.status_code == 201, confirmed.text
    assert dismissed.json()["reason"] == "duplicate"
    assert dismissed.json()["by"] == "local"
    listed = api.get(REVIEWS).json()
    assert [r["action"] for r in listed] == ["confirm", "dismiss"]
    (memory,) = api.get("/v1/patients/p1/memories").json()
    assert memory["review"]["action"] == "dismiss"
    assert memory["review"]["id"] == dismissed.json()["id"]
    events = store.list_audit(scope.org, scope.patient, limit=100)
    posted = [e for e in events if e.action == "POST /v1/patients/{pid}/memories/{mid}/reviews"]
    assert [e.outcome for e in posted] == [201, 201]


@pytest.mark.parametrize(
    ("body", "path"),
    [
        ({"action": "dismiss"}, "body"),
        ({"action": "confirm", "reason": "wrong"}, "body"),
        ({"action": "note", "note": "  "}, "body"),
        ({"action": "note", "note": "x" * 2001}, "note"),
        ({"action": "approve"}, "body.action"),
        ({"action": "dismiss", "reason": "boring"}, "body.reason"),
    ],
)
def test_bad_reviews_are_problem_details(
    store: GraphStore, scope: Scope, body: dict[str, str], path: str
) -> None:
    api = client(store, settings_for(org=scope.org))

    response = api.post(REVIEWS, json=body)

    assert response.status_code == 422
    assert response.headers["content-type"] == "application/problem+json"
    assert response.json()["errors"][0]["path"] == path
    assert api.get(REVIEWS).json() == []


def test_unknown_memory_is_404(store: GraphStore, scope: Scope) -> None:
    api = client(store, settings_for(org=scope.org))

    response = api.post("/v1/patients/p1/memories/nope/reviews", json={"action": "confirm"})

    assert response.status_code == 404
    assert "memory 'nope' not found" in response.json()["detail"]
    assert api.get("/v1/patients/p1/memories/nope/reviews").status_code == 404


def test_reviewing_needs_the_memory_review_scope(store: GraphStore, scope: Scope) -> None:
    keys = ";".join(
        [
            key_entry(scope.org, {"record:read", "memory:write"}, "writer"),
            key_entry(scope.org, {"memory:review"}, "reviewer"),
        ]
    )
    api = client(store, settings_for(org=scope.org, api_keys=keys))

    refused = api.post(REVIEWS, json={"action": "confirm"}, headers={"X-API-Key": "writer"})
    allowed = api.post(REVIEWS, json={"action": "confirm"}, headers={"X-API-Key": "reviewer"})

    assert refused.status_code == 403
    assert "memory:review" in refused.json()["detail"]
    assert allowed.status_code == 201
    assert allowed.json()["by"].startswith("key:")
    assert len(store.list_reviews(scope, "m1")) == 1


def test_a_dismissed_memory_leaves_the_views_and_raises_no_discrepancy(
    store: GraphStore, scope: Scope
) -> None:
    api = client(store, settings_for(org=scope.org))
    assert "conflicts record" in api.get("/v1/patients/p1/context").json()["text"]
    assert "DISCREPANCY" in api.get("/v1/patients/p1/vfs/patient.md").text
    issues = api.get("/v1/patients/p1/fhir/patient-reported").json()["entry"]
    assert any(e["resource"]["resourceType"] == "DetectedIssue" for e in issues)

    api.post(REVIEWS, json={"action": "dismiss", "reason": "wrong"})

    context = api.get("/v1/patients/p1/context").json()["text"]
    assert "I stopped the metformin" not in context
    kept = api.get("/v1/patients/p1/context", params={"include_dismissed": "true"}).json()
    assert "dismissed by a clinician" in kept["text"]
    assert "conflicts record" not in kept["text"]
    assert "DISCREPANCY" not in api.get("/v1/patients/p1/vfs/patient.md").text
    adherence = api.get("/v1/patients/p1/vfs/memory/adherence.md").text
    assert adherence.index("## Dismissed") < adherence.index("I stopped the metformin")
    assert "DISCREPANCY" not in adherence
    assert "dismiss (wrong) by local" in adherence
    issues = api.get("/v1/patients/p1/fhir/patient-reported").json()["entry"]
    assert not any(e["resource"]["resourceType"] == "DetectedIssue" for e in issues)
    listing = api.get("/v1/patients/p1/vfs/medications/current/").json()["entries"]
    (path,) = [e["path"] for e in listing]
    assert "I stopped the metformin" not in api.get(f"/v1/patients/p1/vfs{path}").text
    shown = api.get(f"/v1/patients/p1/vfs{path}", params={"include_dismissed": "true"}).text
    assert "I stopped the metformin" in shown


def test_the_viewer_form_post_is_audited_and_needs_its_token(
    store: GraphStore, scope: Scope
) -> None:
    app = create_app(store, settings_for(org=scope.org))
    api = TestClient(app, base_url="http://127.0.0.1", raise_server_exceptions=False)
    page = api.get("/patients/p1/vfs/memory/adherence.md")
    token = re.search(r'name="csrf" value="([^"]+)"', page.text)
    assert page.status_code == 200 and token is not None
    assert api.cookies.get("cce_csrf") == token[1]
    url = "/patients/p1/memories/m1/reviews"

    refused = api.post(url, data={"action": "confirm"}, follow_redirects=False)
    posted = api.post(url, data={"action": "confirm", "csrf": token[1]}, follow_redirects=False)
    bad = api.post(url, data={"action": "dismiss", "csrf": token[1]}, follow_redirects=False)

    assert refused.status_code == 403
    assert posted.status_code == 303
    assert posted.headers["location"].endswith("/vfs/memory/adherence.md#memory-m1")
    assert bad.status_code == 422 and "needs a reason" in bad.text
    assert [r.action.value for r in store.list_reviews(scope, "m1")] == ["confirm"]
    events = store.list_audit(scope.org, scope.patient, limit=100)
    viewer = [e.outcome for e in events if e.action.endswith("/memories/{mid}/reviews")]
    assert sorted(viewer) == [303, 403, 422]


@pytest.mark.parametrize(("secret", "status"), [("shared-secret", 303), ("", 403)])
def test_a_form_served_by_one_process_posts_to_another_only_with_a_shared_secret(
    store: GraphStore, scope: Scope, secret: str, status: int
) -> None:
    one, other = (
        TestClient(
            create_app(store, settings_for(org=scope.org, viewer_secret=secret)),
            base_url="http://127.0.0.1",
        )
        for _ in range(2)
    )
    page = one.get("/patients/p1/vfs/memory/adherence.md")
    token = re.search(r'name="csrf" value="([^"]+)"', page.text)
    assert token is not None
    other.cookies.set("cce_csrf", token[1], domain="127.0.0.1", path="/patients/")

    posted = other.post(
        "/patients/p1/memories/m1/reviews",
        data={"action": "confirm", "csrf": token[1]},
        follow_redirects=False,
    )

    assert posted.status_code == status
