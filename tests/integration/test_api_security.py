"""Authentication, scopes and tenancy on every route; tokens, JWKS, API keys, rate limits."""

import re
import time
from pathlib import Path
from typing import Any

import jwt
import pytest
from fastapi import FastAPI
from fastapi.routing import APIRoute
from fastapi.testclient import TestClient
from pydantic import SecretStr
from typer.testing import CliRunner

from api.app import create_app
from api.auth import ALL_SCOPES, INGEST_WRITE, RECORD_READ
from api.cli import app as cli
from api.deps import Requirement
from engine.models import Scope
from engine.store import GraphStore
from ingest.pipeline import Ingestor, read_bytes
from tests.contract.builders import DIABETES
from tests.integration._security import (
    LocalIdp,
    add_conversation,
    api_routes,
    bearer,
    client,
    fhir_bundle,
    idp,
    key_entry,
    rsa_key,
    settings_for,
)

__all__ = ["idp"]  # the fixture, imported for pytest

FILL = {"pid": "p1", "sid": "s1", "session_id": "s1", "memory_id": "m1", "fact_id": DIABETES}
FILL |= {"path": "patient.md"}
# Routes that create what they name: from another org they create it there.
CREATES = {
    ("POST", "/v1/patients/{pid}/ingest/fhir"),
    ("POST", "/v1/patients/{pid}/ingest/cda"),
    ("POST", "/v1/patients/{pid}/sessions"),
}
CDA = (Path(__file__).parents[1] / "data/ccda/hl7/problem_resolved.xml").read_bytes()
BODIES: dict[str, Any] = {
    "/v1/patients/{pid}/memory-pause": {"paused": True},
    "/v1/patients/{pid}/sessions/{sid}/messages": {"messages": [{"role": "patient", "text": "x"}]},
}


def operations(app: FastAPI) -> list[tuple[str, APIRoute]]:
    """Every (method, route) of the versioned API."""
    return [
        (method, route)
        for route in api_routes(app)
        if route.path.startswith("/v1/")
        for method in sorted(route.methods or ())
    ]


def required_scope(route: APIRoute) -> str | None:
    pending = list(route.dependant.dependencies)
    while pending:
        dependant = pending.pop()
        if isinstance(dependant.call, Requirement):
            return dependant.call.scope
        pending.extend(dependant.dependencies)
    return None


def call(api: TestClient, method: str, route: APIRoute, **kwargs: Any) -> Any:
    url = re.sub(r"\{(\w+)(:[^}]*)?\}", lambda m: FILL.get(m[1], "x"), route.path)
    if method in {"POST", "PUT", "PATCH"}:
        if route.path.endswith("/ingest/cda"):
            kwargs["content"] = CDA
            kwargs["headers"] = kwargs.get("headers", {}) | {"content-type": "application/xml"}
        elif "/ingest/" in route.path:
            kwargs["content"] = fhir_bundle("other")
            kwargs["headers"] = kwargs.get("headers", {}) | {"content-type": "application/json"}
        else:
            kwargs["json"] = BODIES.get(route.path, {})
    return api.request(method, url, **kwargs)


def fill(store: GraphStore, scope: Scope) -> None:
    ingestor = Ingestor(store, scope.org, patient=scope.patient)
    ingestor.feed("bundle", read_bytes(fhir_bundle("x"), "bundle", media_type="application/json"))
    add_conversation(store, scope, "x")


def test_every_route_names_its_scope(sqlite_store: GraphStore) -> None:
    app = create_app(sqlite_store, settings_for())
    missing = [f"{m} {r.path}" for m, r in operations(app) if required_scope(r) is None]
    assert not missing, "routes without require(scope) (api/deps.py): " + ", ".join(missing)


def test_every_route_refuses_an_anonymous_caller(store: GraphStore, idp: LocalIdp) -> None:
    api = client(store, settings_for(idp))
    for method, route in operations(api.app):  # type: ignore[arg-type]
        response = call(api, method, route)
        assert response.status_code == 401, f"{method} {route.path}"
        assert response.headers["WWW-Authenticate"].startswith("Bearer")
        assert response.headers["content-type"] == "application/problem+json"


def test_every_route_refuses_a_token_without_its_scope(
    store: GraphStore, idp: LocalIdp, org: str
) -> None:
    api = client(store, settings_for(idp))
    for method, route in operations(api.app):  # type: ignore[arg-type]
        scope = required_scope(route)
        if scope is None:
            continue  # test_every_route_names_its_scope fails for it
        token = idp.token(org, ALL_SCOPES - {scope})
        response = call(api, method, route, headers=bearer(token))
        assert response.status_code == 403, f"{method} {route.path}"
        assert f'scope="{scope}"' in response.headers["WWW-Authenticate"]


def test_another_orgs_patient_is_not_found(store: GraphStore, idp: LocalIdp, org: str) -> None:
    owner = Scope(org=org, patient="p1")
    fill(store, owner)
    before = store.count_patient_items(owner)
    api = client(store, settings_for(idp))
    for n, (method, route) in enumerate(operations(api.app)):  # type: ignore[arg-type]
        if "{pid}" not in route.path:
            continue
        intruder = bearer(idp.token(f"{org}-other{n}"))  # a create cannot help the next call
        status = call(api, method, route, headers=intruder).status_code
        where = f"{method} {route.path}: {status}"
        if (method, route.path) in CREATES:
            assert status < 300 or status in (404, 422), where
        else:
            assert status in ((404, 422) if method == "POST" else (404,)), where
        assert store.count_patient_items(owner) == before, where
    assert store.get_patient(owner).name == "x"


def test_the_audit_trail_shows_only_the_callers_org(
    store: GraphStore, idp: LocalIdp, org: str
) -> None:
    api = client(store, settings_for(idp))
    api.get("/v1/patients/p1", headers=bearer(idp.token(org)))

    mine = api.get("/v1/admin/audit", headers=bearer(idp.token(org))).json()
    theirs = api.get("/v1/admin/audit", headers=bearer(idp.token(f"{org}-other"))).json()

    assert [e["action"] for e in mine] == ["GET /v1/patients/{pid}"]
    assert theirs == []


HOUR = 3600
BAD_TOKENS: dict[str, dict[str, Any]] = {
    "expired": {"exp": int(time.time()) - HOUR, "iat": int(time.time()) - 2 * HOUR},
    "wrong audience": {"aud": "another-api"},
    "wrong issuer": {"iss": "https://issuer.example"},
    "no org": {"drop": ("org",)},
    "org not an id": {"org": "a b"},
    "no expiry": {"drop": ("exp",)},
    "no subject": {"drop": ("sub",)},
}


@pytest.mark.parametrize("case", sorted(BAD_TOKENS))
def test_a_token_that_does_not_hold_is_refused(
    store: GraphStore, idp: LocalIdp, org: str, case: str
) -> None:
    api = client(store, settings_for(idp))
    token = idp.token(**{"org": org} | BAD_TOKENS[case])

    response = api.get("/v1/patients/p1", headers=bearer(token))

    assert response.status_code == 401, response.json()
    assert 'error="invalid_token"' in response.headers["WWW-Authenticate"]


def test_a_wrongly_signed_or_unsigned_token_is_refused(
    store: GraphStore, idp: LocalIdp, org: str
) -> None:
    api = client(store, settings_for(idp))
    forged = idp.token(org, key=rsa_key(), kid="k1")
    claims = jwt.decode(forged, options={"verify_signature": False})
    unsigned = jwt.encode(claims, "", algorithm="none", headers={"kid": "k1"})
    hmac = jwt.encode(claims, "secret-of-at-least-32-bytes-length!", algorithm="HS256")

    for token in (forged, unsigned, hmac, "not.a.token", "garbage"):
        response = api.get("/v1/patients/p1", headers=bearer(token))
        assert response.status_code == 401, token
    assert api.get("/v1/patients/p1", headers=bearer(idp.token(org))).status_code == 404


def test_an_unreachable_identity_provider_is_503_not_401(
    store: GraphStore, idp: LocalIdp, org: str
) -> None:
    api = client(store, settings_for(idp))
    token = idp.token(org)
    idp.stop()

    response = api.get("/v1/patients/p1", headers=bearer(token))

    assert response.status_code == 503
    assert response.headers["Retry-After"]
    assert response.json()["title"] == "Service unavailable"


def test_keys_are_discovered_and_refetched_once_on_rotation(
    store: GraphStore, idp: LocalIdp, org: str
) -> None:
    api = client(store, settings_for(idp, oidc_jwks_min_refetch_seconds=0))
    assert api.get("/v1/admin/audit", headers=bearer(idp.token(org))).status_code == 200
    assert api.get("/v1/admin/audit", headers=bearer(idp.token(org))).status_code == 200
    assert idp.jwks_fetches == 1

    idp.rotate()
    assert api.get("/v1/admin/audit", headers=bearer(idp.token(org))).status_code == 200
    assert idp.jwks_fetches == 2


def test_unknown_key_ids_refetch_at_most_once_per_interval(
    store: GraphStore, idp: LocalIdp, org: str
) -> None:
    api = client(store, settings_for(idp, oidc_jwks_min_refetch_seconds=60))
    assert api.get("/v1/admin/audit", headers=bearer(idp.token(org))).status_code == 200

    for n in range(5):
        token = idp.token(org, kid=f"made-up-{n}", key=rsa_key())
        assert api.get("/v1/admin/audit", headers=bearer(token)).status_code == 401
    assert idp.jwks_fetches == 1


def test_api_keys_carry_their_org_and_scopes(store: GraphStore, org: str, tmp_path: Any) -> None:
    fill(store, Scope(org=org, patient="p1"))
    keys_file = tmp_path / "keys"
    keys_file.write_text(f"# readers\n{key_entry(org, {RECORD_READ}, 'file-key')}\n")
    entries = key_entry(org, {RECORD_READ}, "reader") + ";" + key_entry("elsewhere", set(), "x")
    settings = settings_for(api_keys=SecretStr(entries), api_keys_file=keys_file)
    api = client(store, settings)

    assert api.get("/v1/patients/p1", headers={"X-API-Key": "reader"}).status_code == 200
    assert api.get("/v1/patients/p1", headers=bearer("reader")).status_code == 200
    assert api.get("/v1/patients/p1", headers=bearer("file-key")).status_code == 200
    assert api.get("/v1/patients/p1", headers=bearer("wrong")).status_code == 401
    assert api.get("/v1/patients/p1").status_code == 401
    assert api.get("/v1/patients/p1", headers=bearer("x")).status_code == 403
    refused = api.post(
        "/v1/patients/p1/ingest/fhir",
        content=fhir_bundle("y"),
        headers={"X-API-Key": "reader", "content-type": "application/json"},
    )
    assert refused.status_code == 403
    assert INGEST_WRITE in refused.json()["detail"]


def test_a_malformed_key_entry_stops_the_app(store: GraphStore) -> None:
    with pytest.raises(ValueError, match="org:scopes:sha256hex"):
        create_app(store, settings_for(api_keys=SecretStr("acme:record:read:not-a-hash")))


def test_without_auth_the_local_principal_has_every_scope_in_its_org(
    store: GraphStore, org: str
) -> None:
    fill(store, Scope(org=org, patient="p-local"))
    api = client(store, settings_for(org=org))

    assert api.get("/v1/patients/p-local").status_code == 200
    assert api.put("/v1/patients/p-local/memory-pause", json={"paused": True}).status_code == 200
    events = api.get("/v1/admin/audit", params={"patient": "p-local"}).json()
    assert [(e["actor"], e["org"], e["outcome"]) for e in events] == [("local", org, 200)] * 2


def test_serve_refuses_other_interfaces_without_auth() -> None:
    result = CliRunner().invoke(
        cli, ["serve", "--host", "0.0.0.0", "--store", "sqlite:///:memory:"]
    )

    assert result.exit_code == 2
    assert "refusing to bind to 0.0.0.0" in result.output
    assert "CCE_OIDC_ISSUER" in result.output


def test_a_principal_over_its_rate_gets_429(store: GraphStore, idp: LocalIdp, org: str) -> None:
    api = client(store, settings_for(idp, rate_limit_per_second=0.5, rate_limit_burst=2))
    token = bearer(idp.token(org))
    other = bearer(idp.token(org, sub="user-2"))

    statuses = [api.get("/v1/admin/audit", headers=token).status_code for _ in range(3)]

    assert statuses == [200, 200, 429]
    refused = api.get("/v1/admin/audit", headers=token)
    assert int(refused.headers["Retry-After"]) >= 1
    assert refused.json()["status"] == 429
    assert api.get("/v1/admin/audit", headers=other).status_code == 200
