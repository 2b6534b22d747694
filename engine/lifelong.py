"""What a process keeps until it exits, hidden from the garbage collector's full passes.

Each full collection of CPython walks every container object alive. What is loaded once
and kept (modules, pydantic schemas, the drug dictionary, the vocabularies, the spaCy
pipeline) is never garbage, yet walking it took 10-12 ms a pass with the modules alone
and 280-350 ms with the drug dictionary's 300,000 lists and sets, inside whichever read
allocated the object that set the pass off. Frozen, it is never walked again; a pass then
costs what the live requests hold (bench.vfs, README "Benchmarks").
"""

import functools
import gc
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

T = TypeVar("T")


def freeze() -> None:
    """Collects what is garbage now, then moves every object still alive out of the
    collector's sight for good (`gc.freeze`): call it once start-up is done."""
    gc.collect()
    gc.freeze()


@contextmanager
def _collector_off() -> Iterator[None]:
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def lifelong(load: Callable[[], T]) -> Callable[[], T]:
    """A loader of something kept for the life of the process, run once, which `freeze`s
    once it has loaded. The collector is off while it loads: nothing it builds is garbage,
    and passes over the growing heap were a quarter of the drug dictionary's load. Threads
    asking at once (a server's first requests) wait for that one load rather than each
    running it; once loaded, no one waits."""
    lock = threading.Lock()
    loaded: list[T] = []

    @functools.wraps(load)
    def once() -> T:
        if not loaded:
            with lock:
                if not loaded:
                    with _collector_off():
                        loaded.append(load())
                    freeze()
        return loaded[0]

    return once
