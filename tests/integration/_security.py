"""Helpers of the security tests: a local OIDC issuer (JWKS over HTTP), tokens, sample data."""

import hashlib
import json
import threading
import time
import uuid
from collections.abc import Iterable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa
from fastapi import FastAPI
from fastapi.routing import APIRoute
from fastapi.testclient import TestClient
from starlette.routing import BaseRoute

from api.app import create_app
from api.auth import ALL_SCOPES
from engine.models import Batch, NewMessage, Role, Scope, Session
from engine.settings import Settings
from engine.store import GraphStore
from tests.contract.builders import memory, relationship

AUDIENCE = "cce-api"
SYNTHEA = Path(__file__).parent.parent / "data/corpus/fhir/synthea-r4-bundles"


def rsa_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


class LocalIdp:
    """An issuer on 127.0.0.1 serving its discovery document and JWKS from a thread."""

    def __init__(self) -> None:
        self.keys: dict[str, rsa.RSAPrivateKey] = {"k1": rsa_key()}
        self.current = "k1"
        self.jwks_fetches = 0
        idp = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                if self.path == "/.well-known/openid-configuration":
                    body: dict[str, Any] = {"issuer": idp.issuer, "jwks_uri": idp.jwks_url}
                elif self.path == "/jwks.json":
                    idp.jwks_fetches += 1
                    body = idp.jwks()
                else:
                    self.send_error(404)
                    return
                data = json.dumps(body).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.issuer = f"http://127.0.0.1:{self.server.server_port}"
        self.jwks_url = f"{self.issuer}/jwks.json"
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self.thread.start()

    def jwks(self) -> dict[str, Any]:
        keys = []
        for kid, key in self.keys.items():
            jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(key.public_key()))
            keys.append(jwk | {"kid": kid, "alg": "RS256", "use": "sig"})
        return {"keys": keys}

    def rotate(self) -> str:
        kid = f"k{len(self.keys) + 1}"
        self.keys[kid] = rsa_key()
        self.current = kid
        return kid

    def token(
        self,
        org: str,
        scopes: frozenset[str] | set[str] = ALL_SCOPES,
        *,
        key: rsa.RSAPrivateKey | None = None,
        kid: str | None = None,
        drop: tuple[str, ...] = (),
        **claims: Any,
    ) -> str:
        now = int(time.time())
        payload = {
            "iss": self.issuer,
            "aud": AUDIENCE,
            "sub": "user-1",
            "org": org,
            "scope": " ".join(sorted(scopes)),
            "iat": now,
            "exp": now + 300,
        } | claims
        payload = {k: v for k, v in payload.items() if k not in drop}
        kid = kid or self.current
        signer = key or self.keys.get(kid) or self.keys[self.current]
        return jwt.encode(payload, signer, algorithm="RS256", headers={"kid": kid})

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def idp() -> Iterator[LocalIdp]:
    server = LocalIdp()
    yield server
    server.stop()


def api_routes(app: FastAPI) -> list[APIRoute]:
    """Every APIRoute of the app, also where FastAPI (0.16x) keeps included routers lazily."""

    def walk(routes: Iterable[BaseRoute]) -> Iterator[APIRoute]:
        for route in routes:
            if isinstance(route, APIRoute):
                yield route
            included = getattr(route, "original_router", None)
            if included is not None:
                yield from walk(included.routes)

    found = list(walk(app.routes))
    assert len(found) >= 12, "fewer routes than this app has: FastAPI changed its routing?"
    return found


def settings_for(idp: LocalIdp | None = None, **overrides: Any) -> Settings:
    # Explicit auth fields, so that CCE_* variables of the environment cannot leak in.
    fields: dict[str, Any] = {
        "org": "local-org",
        "rate_limit_per_second": 0,
        "oidc_issuer": None,
        "oidc_jwks_url": None,
        "api_keys": "",
        "api_keys_file": None,
    }
    if idp is not None:
        fields |= {"oidc_issuer": idp.issuer, "oidc_audience": AUDIENCE}
    return Settings(_env_file=None, **(fields | overrides))


def client(store: GraphStore, settings: Settings) -> TestClient:
    return TestClient(create_app(store, settings), raise_server_exceptions=False)


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def key_entry(org: str, scopes: set[str], key: str) -> str:
    return f"{org}:{','.join(sorted(scopes))}:{hashlib.sha256(key.encode()).hexdigest()}"


def fhir_bundle(marker: str) -> bytes:
    """A small bundle whose condition text and note carry `marker`."""
    condition = {
        "resourceType": "Condition",
        "id": f"c-{marker}",
        "subject": {"reference": "Patient/pt"},
        "clinicalStatus": {"coding": [{"code": "active"}]},
        "code": {
            "coding": [{"system": "http://snomed.info/sct", "code": "44054006"}],
            "text": f"Type 2 diabetes {marker}",
        },
        "onsetDateTime": "2019-03-01",
    }
    medication = {
        "resourceType": "MedicationRequest",
        "id": "m1",
        "status": "active",
        "intent": "order",
        "subject": {"reference": "Patient/pt"},
        "medicationCodeableConcept": {
            "coding": [{"system": "http://www.nlm.nih.gov/research/umls/rxnorm", "code": "860975"}],
            "text": f"metformin {marker}",
        },
    }
    patient = {"resourceType": "Patient", "id": "pt", "name": [{"family": marker}]}
    entries = [{"resource": r} for r in (patient, condition, medication)]
    return json.dumps({"resourceType": "Bundle", "type": "collection", "entry": entries}).encode()


def add_conversation(store: GraphStore, scope: Scope, marker: str) -> None:
    """A session, a message, a memory and its relationship, all carrying `marker`."""
    store.create_session(scope, Session(session_id="s1"))
    text = f"I stopped the metformin {marker}"
    store.append_messages(scope, "s1", [NewMessage(role=Role.PATIENT, text=text)])
    key = next(f.fact_key for f in store.list_facts(scope) if f.kind.value == "medication")
    store.write(
        scope,
        Batch(memories=(memory("m1", "s1", text),), relationships=(relationship("m1", key),)),
    )


def unique(prefix: str) -> str:
    return f"{prefix}{uuid.uuid4().hex[:12]}"
