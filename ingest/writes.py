"""An ingest's store writes, run in order on one thread beside the reading.

A write to a server store (`GraphStore.overlapped_writes`) spends most of its time waiting
on the server's statements and commit; meanwhile the ingest can read, map and check the
next records. The writes still run one at a time in the order they were queued, as in a
serial ingest, and their results are counted in that order by the ingest's own thread. A
read of a patient first waits for the patient's queued writes (`settle`), so that it sees
them. After a write fails, the writes queued behind it are dropped and the failure is
raised by the next call, as the write itself would have raised it. At most
`MAX_QUEUED_SOURCES` sources wait in the queue: beyond that, `write` waits for the oldest
writes, so a reader faster than the server does not hold the export in memory. Other
stores are written at once, on the ingest's thread.
"""

import threading
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor

from engine.models import Batch, Scope, WriteResult
from engine.store import GraphStore

# Sources queued and not yet written, at most (with the reader's own `MAX_PENDING`, what
# an ingest holds in memory).
MAX_QUEUED_SOURCES = 5_000


class Writes:
    """The writes of one ingest; `close` waits for them all."""

    def __init__(self, store: GraphStore, counted: Callable[[WriteResult], None]) -> None:
        self._store = store
        self._counted = counted
        self._thread = (
            ThreadPoolExecutor(max_workers=1, thread_name_prefix="ingest-writes")
            if store.overlapped_writes
            else None
        )
        self._queued: deque[tuple[Future[WriteResult | None], int]] = deque()
        self._queued_sources = 0
        self._last: dict[str, Future[WriteResult | None]] = {}  # by patient
        self._failed = threading.Event()

    def write(self, scope: Scope, batch: Batch) -> None:
        """Queues a write; raises the failure of an earlier one."""
        if self._thread is None:
            self._counted(self._store.write(scope, batch))
            return
        self._count(wait=False)
        while self._queued and self._queued_sources + len(batch.sources) > MAX_QUEUED_SOURCES:
            self._count_oldest()
        future = self._thread.submit(self._run, scope, batch)
        self._queued.append((future, len(batch.sources)))
        self._queued_sources += len(batch.sources)
        self._last[scope.patient] = future

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
            self._thread.shutdown(wait=True)

    def _run(self, scope: Scope, batch: Batch) -> WriteResult | None:
        if self._failed.is_set():
            return None  # queued behind a failed write: never counted, the failure is raised
        try:
            return self._store.write(scope, batch)
        except BaseException:
            self._failed.set()
            raise

    def _count(self, wait: bool) -> None:
        while self._queued and (wait or self._queued[0][0].done()):
            self._count_oldest()

    def _count_oldest(self) -> None:
        future, sources = self._queued.popleft()
        self._queued_sources -= sources
        result = future.result()
        if result is not None:
            self._counted(result)
