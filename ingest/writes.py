"""An ingest's store writes, run in order on one thread beside the reading.

A write to a server store (`GraphStore.overlapped_writes`) spends most of its time waiting
on the server's statements and commit; meanwhile the ingest can read, map and check the
next records. The writes go to the thread in a queue. Each time it is free, the thread
takes the writes waiting there, at most `MAX_GROUP_BATCHES` of them and `MAX_GROUP_SOURCES`
sources, and applies them in order in one transaction (`GraphStore.write_many`): one
commit for the many small batches of patients that an export spreads over its whole file.
Their results are counted in queue order by the ingest's own thread. A read of a patient
first waits for the patient's queued writes (`settle`), so that it sees them. When a
transaction of several writes fails, they are applied again one per transaction, so that
the writes before the failing one are written and counted and it raises its own error;
the writes queued behind it are dropped, and the failure is raised by the next call, as
the write itself would have raised it. At most `MAX_QUEUED_SOURCES` sources wait in the
queue: beyond that, `write` waits for the oldest writes, so a reader faster than the server
does not hold the export in memory. Other stores are written at once, on the ingest's
thread.
"""

import threading
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field

from engine.models import Batch, Scope, WriteResult
from engine.store import GraphStore

# Sources queued and not yet written, at most (with the reader's own `MAX_PENDING`, what
# an ingest holds in memory).
MAX_QUEUED_SOURCES = 5_000
# What one transaction of the thread applies, at most: the commit is shared by many
# batches, and none grows large enough to weigh on the server's memory.
MAX_GROUP_BATCHES = 100
MAX_GROUP_SOURCES = 1_000


@dataclass(frozen=True)
class _Write:
    scope: Scope
    batch: Batch
    # None for a write dropped behind a failed one: never counted, the failure is raised
    done: Future[WriteResult | None] = field(default_factory=Future)


class Writes:
    """The writes of one ingest; `close` waits for them all."""

    def __init__(self, store: GraphStore, counted: Callable[[WriteResult], None]) -> None:
        self._store = store
        self._counted = counted
        self._queued: deque[_Write] = deque()  # not yet counted, in order
        self._queued_sources = 0
        # by patient; the futures only, not the batches, which go once written
        self._last: dict[str, Future[WriteResult | None]] = {}
        self._failed = threading.Event()
        self._waiting: deque[_Write] = deque()  # not yet taken by the thread
        self._wake = threading.Condition()
        self._closed = False
        self._thread = None
        if store.overlapped_writes:
            # A daemon, like an executor's: a process that exits without `close` (only on
            # a crash) abandons the transaction it has open, which the server rolls back.
            self._thread = threading.Thread(target=self._run, name="ingest-writes", daemon=True)
            self._thread.start()

    def write(self, scope: Scope, batch: Batch) -> None:
        """Queues a write; raises the failure of an earlier one."""
        if self._thread is None:
            self._counted(self._store.write(scope, batch))
            return
        self._count(wait=False)
        while self._queued and self._queued_sources + len(batch.sources) > MAX_QUEUED_SOURCES:
            self._count_oldest()
        write = _Write(scope, batch)
        self._queued.append(write)
        self._queued_sources += len(batch.sources)
        self._last[scope.patient] = write.done
        with self._wake:
            self._waiting.append(write)
            self._wake.notify()

    def settle(self, patient: str) -> None:
        """Waits for the patient's queued writes; raises the failure of an earlier write."""
        last = self._last.pop(patient, None)
        if last is not None:
            last.exception()
        self._count(wait=False)

    def close(self) -> None:
        """Waits for every queued write and counts it; raises the first failure."""
        if self._thread is None:
            return
        try:
            self._count(wait=True)
        finally:
            self._failed.set()  # after a failure here, what is still queued is dropped
            with self._wake:
                self._closed = True
                self._wake.notify()
            self._thread.join()

    def _run(self) -> None:
        while group := self._next_group():
            self._apply(group)

    def _next_group(self) -> list[_Write]:
        """The oldest waiting writes, within the bounds of one transaction; none once
        closed."""
        with self._wake:
            while not self._waiting and not self._closed:
                self._wake.wait()
            group: list[_Write] = []
            sources = 0
            while self._waiting and len(group) < MAX_GROUP_BATCHES:
                sources += len(self._waiting[0].batch.sources)
                if group and sources > MAX_GROUP_SOURCES:
                    break
                group.append(self._waiting.popleft())
            return group

    def _apply(self, group: list[_Write]) -> None:
        if self._failed.is_set():
            for write in group:
                write.done.set_result(None)
            return
        try:
            results = self._store.write_many([(w.scope, w.batch) for w in group])
        except BaseException as e:
            if len(group) > 1:
                for write in group:  # the failing one raises its own error
                    self._apply([write])
                return
            self._failed.set()
            group[0].done.set_exception(e)
            return
        for write, result in zip(group, results, strict=True):
            write.done.set_result(result)

    def _count(self, wait: bool) -> None:
        while self._queued and (wait or self._queued[0].done.done()):
            self._count_oldest()

    def _count_oldest(self) -> None:
        write = self._queued.popleft()
        self._queued_sources -= len(write.batch.sources)
        result = write.done.result()
        if result is not None:
            self._counted(result)
