"""`cce memories review`: the same review as the API's, audited, with usage errors."""

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from api.cli import app as cli
from engine.models import Scope
from engine.settings import get_settings
from engine.sqlite_store import SqliteStore
from tests.integration._security import add_conversation, client, fhir_bundle, settings_for

FHIR = {"content-type": "application/fhir+json"}


@pytest.fixture
def db(tmp_path: Path, org: str) -> Iterator[str]:
    path = tmp_path / "cli.db"
    store = SqliteStore(str(path))
    api = client(store, settings_for(org=org))
    assert api.post(
        "/v1/patients/p1/ingest/fhir", content=fhir_bundle("c"), headers=FHIR
    ).is_success
    add_conversation(store, Scope(org=org, patient="p1"), "c")
    store.close()
    yield f"sqlite:///{path}"
    get_settings.cache_clear()


def _cce(db: str, org: str, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, [*args, "--store", db, "--org", org])
    return result.exit_code, result.output


def test_review_then_list(db: str, org: str) -> None:
    code, out = _cce(db, org, "memories", "review", "p1", "m1", "--dismiss", "wrong", "--json")
    assert code == 0, out
    assert (json.loads(out)["action"], json.loads(out)["reason"]) == ("dismiss", "wrong")
    code, out = _cce(db, org, "memories", "review", "p1", "m1", "--note", "spoke to <GP>")
    assert code == 0, out
    assert "note: memory m1 of p1" in out

    code, out = _cce(db, org, "memories", "p1", "--json")

    assert code == 0, out
    (memory,) = json.loads(out)
    assert (memory["review"]["action"], memory["review"]["note"]) == ("note", "spoke to <GP>")
    store = SqliteStore(db.removeprefix("sqlite:///"))
    events = [e for e in store.list_audit(org, "p1") if e.action.startswith("cce")]
    assert [e.action for e in events] == ["cce memories review"] * 2
    assert all("GP" not in e.model_dump_json() for e in events)
    store.close()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--confirm", "--dismiss", "wrong"), "exclude each other"),
        ((), "a note review needs a note"),
        (("--dismiss", "boring"), "Invalid value"),
    ],
)
def test_bad_reviews_exit_2(db: str, org: str, args: tuple[str, ...], message: str) -> None:
    code, out = _cce(db, org, "memories", "review", "p1", "m1", *args)

    assert code == 2
    assert message in out


def test_unknown_memory(db: str, org: str) -> None:
    code, out = _cce(db, org, "memories", "review", "p1", "nope", "--confirm")

    assert code == 2
    assert "memory 'nope' not found" in out
