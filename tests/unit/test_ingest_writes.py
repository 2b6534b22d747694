"""The ingest's writes on a thread of their own: order, counts, settling, failures."""

import threading
import time
from collections.abc import Sequence

import pytest

from engine.errors import StoreUnavailable
from engine.models import Batch, Scope, SourceClaims, WriteResult
from engine.store import GraphStore
from ingest import writes as writes_module
from ingest.writes import Writes
from tests.unit.test_memories_builders import source


class SlowStore:
    """Writes that take a while, remembered in the order they ran, and on which thread.

    Each `write_many` is one call, as one transaction is; `hold` keeps the first waiting
    until it is set, so that the writes queued meanwhile wait together.
    """

    def __init__(
        self, overlapped: bool, fail_on: str | None = None, hold: threading.Event | None = None
    ) -> None:
        self.overlapped_writes = overlapped
        self.fail_on = fail_on
        self.hold = hold
        self.calls: list[list[str]] = []  # the patients of each call
        self.written: list[tuple[str, str]] = []
        self.sources_written = 0

    def write(self, scope: Scope, batch: Batch) -> WriteResult:
        return self.write_many([(scope, batch)])[0]

    def write_many(self, writes: Sequence[tuple[Scope, Batch]]) -> list[WriteResult]:
        if self.hold is not None:
            self.hold.wait()
        time.sleep(0.01)
        self.calls.append([scope.patient for scope, _ in writes])
        for scope, _ in writes:
            if scope.patient == self.fail_on:
                raise StoreUnavailable(f"Neo4j is unavailable: gone while writing {scope.patient}")
        for scope, batch in writes:
            self.written.append((scope.patient, threading.current_thread().name))
            self.sources_written += len(batch.sources)
        return [WriteResult(sources_retired=len(batch.retire)) for _, batch in writes]


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
    with pytest.raises(StoreUnavailable, match="gone while writing b"):
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


def retiring(n: int) -> Batch:
    return Batch(retire=tuple(f"r{i}" for i in range(n)))


def test_the_writes_queued_while_the_store_is_busy_are_applied_in_one_call() -> None:
    hold = threading.Event()
    store = SlowStore(overlapped=True, hold=hold)
    writes, counted = writes_to(store)
    writes.write(scope("a"), retiring(1))
    time.sleep(0.05)  # the thread has taken the first write
    for n, patient in enumerate(["b", "c", "a", "d"], start=2):
        writes.write(scope(patient), retiring(n))
    hold.set()
    writes.close()
    assert store.calls == [["a"], ["b", "c", "a", "d"]]
    assert counted == [1, 2, 3, 4, 5]


def test_one_call_applies_at_most_the_bounds_of_a_group(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(writes_module, "MAX_GROUP_BATCHES", 3)
    monkeypatch.setattr(writes_module, "MAX_GROUP_SOURCES", 2)
    hold = threading.Event()
    store = SlowStore(overlapped=True, hold=hold)
    writes, _ = writes_to(store)
    writes.write(scope("a"), Batch())
    time.sleep(0.05)
    one = (SourceClaims(source=source("Condition/c1"), claims=()),)
    three = tuple(SourceClaims(source=source(f"Condition/c{n}"), claims=()) for n in range(3))
    for patient, sources in [("b", ()), ("c", ()), ("d", ()), ("e", ()), ("f", one)]:
        writes.write(scope(patient), Batch(sources=sources))
    writes.write(scope("g"), Batch(sources=one))
    writes.write(scope("h"), Batch(sources=three))  # over the bound alone: a call of its own
    writes.write(scope("i"), Batch())
    hold.set()
    writes.close()
    assert store.calls == [["a"], ["b", "c", "d"], ["e", "f", "g"], ["h"], ["i"]]
    assert store.sources_written == 5


def test_a_failing_write_in_a_call_raises_its_own_error_after_the_ones_before_it() -> None:
    hold = threading.Event()
    store = SlowStore(overlapped=True, fail_on="c", hold=hold)
    writes, counted = writes_to(store)
    writes.write(scope("a"), retiring(1))
    time.sleep(0.05)
    for n, patient in enumerate(["b", "c", "d"], start=2):
        writes.write(scope(patient), retiring(n))
    hold.set()
    with pytest.raises(StoreUnavailable, match="gone while writing c"):
        writes.close()
    # the call of three failed; then one per call, up to the failing one, d dropped
    assert store.calls == [["a"], ["b", "c", "d"], ["b"], ["c"]]
    assert [patient for patient, _ in store.written] == ["a", "b"]
    assert counted == [1, 2]
