"""Each VFS view of a real Synthea patient is one store call: one `read_view`."""

from typing import Any

import pytest

from engine.models import Scope
from engine.store import GraphStore
from tests.integration.test_vfs_synthea import PILL, STORY, load
from vfs import read
from vfs.graph import PatientGraph
from vfs.tree import walk

VIEWS = [
    STORY,
    "/conditions/active/hypertension/_raw.json",
    PILL,
    "/medications/current/",
    "/memory/adherence.md",
    "/patient.md",
    "/timeline.md",
    "/sources.md",
    "/labs/latest.md",
    "/allergies.md",
    "/encounters/",
]


class Counting:
    """Passes every call through to a store and counts them by name."""

    def __init__(self, store: GraphStore) -> None:
        self.store = store
        self.calls: list[str] = []

    def __getattr__(self, name: str) -> Any:
        self.calls.append(name)
        return getattr(self.store, name)


@pytest.fixture
def patient(store: GraphStore, org: str) -> Scope:
    return load(store, org)


@pytest.mark.parametrize("path", VIEWS)
def test_a_view_is_one_store_call(store: GraphStore, patient: Scope, path: str) -> None:
    counting = Counting(store)

    read(counting, patient, path)

    assert counting.calls == ["read_view"]


def test_every_file_and_directory_is_one_store_call(store: GraphStore, patient: Scope) -> None:
    files = [path for path, _ in walk(PatientGraph(store, patient))]
    directories = {path.rsplit("/", 1)[0] + "/" for path in files}
    calls: dict[str, list[str]] = {}
    for path in [*files, *sorted(directories)]:
        counting = Counting(store)
        read(counting, patient, path)
        calls[path] = counting.calls

    assert len(files) > 40
    assert {path: made for path, made in calls.items() if made != ["read_view"]} == {}
