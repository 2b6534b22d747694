"""Property-based requests from the OpenAPI schema: no input makes the API answer 5xx.

The schema is loaded when the module is collected (schemathesis' lazy `from_fixture` does
not run under pytest 9), from an app on a private in-memory store with one patient, served
in-process as the local principal.
"""

from datetime import timedelta
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, settings

from api.app import create_app
from engine.models import Scope
from engine.sqlite_store import SqliteStore
from ingest.pipeline import Ingestor, read_bytes
from tests.integration._security import add_conversation, fhir_bundle, settings_for

pytestmark = pytest.mark.slow

ORG = "schemathesis"


def _app() -> Any:
    store = SqliteStore(":memory:")
    ingestor = Ingestor(store, ORG, patient="p1")
    ingestor.feed("b", read_bytes(fhir_bundle("m"), "b", media_type="application/json"))
    add_conversation(store, Scope(org=ORG, patient="p1"), "m")
    return create_app(store, settings_for(org=ORG, max_request_bytes=64 * 1024))


schema = schemathesis.openapi.from_asgi("/openapi.json", _app())


@schema.parametrize()
@settings(
    max_examples=20,
    deadline=timedelta(seconds=5),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
def test_no_input_makes_a_server_error(case: Any) -> None:
    response = case.call()

    assert response.status_code < 500, f"{case.method} {case.formatted_path}: {response.text}"
    if response.status_code >= 400:
        headers = {k.lower(): v for k, v in response.headers.items()}
        assert headers["content-type"] == ["application/problem+json"], response.text
