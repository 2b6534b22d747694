"""The garbage collector's rhythm while an ingest runs.

An ingest allocates objects by the hundred thousand that live until their batch is
written (sources, claims, match keys: up to `MAX_PENDING` sources across patients).
With CPython's default threshold, a young collection runs every 700 allocations and
promotes them, so the older generations fill up and full collections come often, each
walking everything the process holds: 0.3 s of a 10-patient export into SQLite and 0.7 s
into Neo4j went to collections (`bench.ingest`). Almost all of it is freed by reference
counting anyway, so collecting less often while ingests run loses little memory.
"""

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

# Allocations between young collections while an ingest runs (CPython's default: 700).
INGEST_THRESHOLD = 100_000

_lock = threading.Lock()
_running = 0
_saved = gc.get_threshold()


@contextmanager
def fewer_collections() -> Iterator[None]:
    """Collects less often until the last of the ingests running at once ends, then puts
    the thresholds back as they were."""
    global _running, _saved
    with _lock:
        if _running == 0:
            _saved = gc.get_threshold()
            gc.set_threshold(max(INGEST_THRESHOLD, _saved[0]), *_saved[1:])
        _running += 1
    try:
        yield
    finally:
        with _lock:
            _running -= 1
            if _running == 0:
                gc.set_threshold(*_saved)
