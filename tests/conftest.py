"""Fixtures shared by every test: stores on both backends, each test in its own org."""

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from engine.models import Scope
from engine.settings import get_settings
from engine.sqlite_store import SqliteStore
from engine.store import GraphStore

DATA = Path(__file__).parent / "data"


def _docker_answers() -> bool:
    try:
        import docker  # type: ignore[import-untyped]

        docker.from_env().ping()
    except Exception:
        return False
    return True


@pytest.fixture(scope="session")
def neo4j_uri() -> Iterator[str]:
    """NEO4J_URI if set, else a testcontainers Neo4j, else skip (fail under CCE_REQUIRE_NEO4J=1)."""
    if uri := os.environ.get("NEO4J_URI"):
        yield uri
        return
    if _docker_answers():
        from testcontainers.neo4j import Neo4jContainer

        with Neo4jContainer("neo4j:5.26-community") as container:
            os.environ["CCE_NEO4J_PASSWORD"] = container.password
            get_settings.cache_clear()
            yield container.get_connection_url()
        return
    message = "no Neo4j: set NEO4J_URI or start a Docker engine"
    if os.environ.get("CCE_REQUIRE_NEO4J") == "1":
        pytest.fail(f"{message} (CCE_REQUIRE_NEO4J=1 makes this a failure)", pytrace=False)
    pytest.skip(message)


@pytest.fixture(scope="session")
def sqlite_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GraphStore]:
    store = SqliteStore(str(tmp_path_factory.mktemp("sqlite") / "contract.db"))
    yield store
    store.close()


@pytest.fixture(scope="session")
def neo4j_store(neo4j_uri: str) -> Iterator[GraphStore]:
    from engine.neo4j_store import Neo4jStore

    store = Neo4jStore.from_url(neo4j_uri)
    yield store
    store.close()


@pytest.fixture(params=["sqlite", pytest.param("neo4j", marks=pytest.mark.neo4j)])
def store(request: pytest.FixtureRequest) -> GraphStore:
    """The same test, once per backend."""
    backend: GraphStore = request.getfixturevalue(f"{request.param}_store")
    return backend


@pytest.fixture
def org() -> str:
    """A fresh org: tests need no cleanup and cannot see each other."""
    return f"t-{uuid.uuid4().hex[:12]}"


@pytest.fixture
def scope(org: str) -> Scope:
    return Scope(org=org, patient="p1")
