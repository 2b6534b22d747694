"""The ingest's writes on a thread of their own: order, counts, settling, failures."""

import threading
import time

import pytest

from engine.errors import StoreUnavailable
from engine.models import Batch, Scope, SourceClaims, WriteResult
from engine.store import GraphStore
from ingest import writes as writes_module
from ingest.writes import Writes
from tests.unit.test_memories_builders import source


class SlowStore:
    """Writes that take a while, remembered in the order they ran, and on which thread."""

    def __init__(self, overlapped: bool, fail_on: str | None = None) -> None:
        self.overlapped_writes = overlapped
        self.fail_on = fail_on
        self.written: list[tuple[str, str]] = []
        self.sources_written = 0

    def write(self, scope: Scope, batch: Batch) -> WriteResult:
        time.sleep(0.01)
        if scope.patient == self.fail_on:
            raise StoreUnavailable("Neo4j is unavailable: gone")
        self.written.append((scope.patient, threading.current_thread().name))
        self.sources_written += len(batch.sources)
        return WriteResult(sources_retired=len(batch.retire))


def writes_to(store: SlowStore) -> tuple[Writes, list[int]]:
    counted: list[int] = []
    fake: GraphStore = store  # type: ignore[assignment]  # only write is called
    return Writes(fake, lambda result: counted.append(result.sources_retired)), counted


def scope(patient: str) -> Scope:
    return Scope(org="writes", patient=patient)


def test_writes_run_in_order_beside_the_caller_and_are_counted_in_order() -> None:
    store = SlowStore(overlapped=True)
    writes, counted = writes_to(store)
    for i, patient in enumerate(["a", "b", "a", "c"], start=1):
        writes.write(scope(patient), Batch(retire=tuple(f"r{n}" for n in range(i))))
    assert len(store.written) < 4  # queued, not written yet
    writes.close()
    assert [patient for patient, _ in store.written] == ["a", "b", "a", "c"]
    assert {thread for _, thread in store.written} != {threading.current_thread().name}
    assert counted == [1, 2, 3, 4]


def test_settling_a_patient_waits_for_its_queued_writes() -> None:
    store = SlowStore(overlapped=True)
    writes, _ = writes_to(store)
    writes.write(scope("a"), Batch())
    writes.write(scope("b"), Batch())
    writes.settle("b")
    assert [patient for patient, _ in store.written] == ["a", "b"]
    writes.close()


def test_a_failed_write_drops_the_writes_behind_it_and_is_raised() -> None:
    store = SlowStore(overlapped=True, fail_on="b")
    writes, counted = writes_to(store)
    for patient in ["a", "b", "c", "d"]:
        writes.write(scope(patient), Batch())
    with pytest.raises(StoreUnavailable, match="gone"):
        writes.close()
    assert [patient for patient, _ in store.written] == ["a"]
    assert counted == [0]


def test_a_store_that_does_not_overlap_writes_is_written_at_once_here() -> None:
    store = SlowStore(overlapped=False)
    writes, counted = writes_to(store)
    writes.write(scope("a"), Batch(retire=("r",)))
    assert store.written == [("a", threading.current_thread().name)]
    assert counted == [1]
    writes.close()


def test_a_reader_faster_than_the_store_waits_once_the_queue_is_full(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(writes_module, "MAX_QUEUED_SOURCES", 3)
    store = SlowStore(overlapped=True)
    writes, _ = writes_to(store)
    queued = []
    for n in range(10):
        batch = Batch(sources=(SourceClaims(source=source(f"Condition/c{n}"), claims=()),))
        writes.write(scope("a"), batch)
        queued.append(n + 1 - store.sources_written)
    writes.close()
    assert max(queued) == 3  # written as fast as the store goes, never more waiting
    assert store.sources_written == 10
