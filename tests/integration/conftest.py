"""Fixtures of the integration tests (the stores and orgs come from tests/conftest.py)."""

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from engine.settings import Settings, get_settings
from engine.store import GraphStore


@pytest.fixture
def client(store: GraphStore, org: str) -> Iterator[TestClient]:
    """The HTTP API over the test's store, acting for the test's org."""
    app = create_app(store)
    app.dependency_overrides[get_settings] = lambda: Settings(org=org)
    with TestClient(app) as client:
        yield client
