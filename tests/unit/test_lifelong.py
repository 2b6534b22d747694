"""`engine.lifelong`: loaded once, by one thread, then out of the garbage collector's sight."""

import gc
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from engine.lifelong import lifelong


def test_a_lifelong_loader_loads_once_and_freezes_what_it_loaded() -> None:
    calls: list[int] = []

    @lifelong
    def load() -> dict[str, list[int]]:
        calls.append(1)
        return {"kept": [1, 2, 3]}

    first = load()

    assert load() is first
    assert calls == [1]
    assert all(o is not first for o in gc.get_objects())  # frozen: in no generation
    assert gc.get_freeze_count() > 0


def test_threads_asking_at_once_wait_for_one_load() -> None:
    calls: list[int] = []
    started = threading.Event()

    @lifelong
    def load() -> list[int]:
        calls.append(1)
        started.set()
        time.sleep(0.2)  # the other threads ask while this load runs
        return [1]

    with ThreadPoolExecutor(max_workers=8) as pool:
        first = pool.submit(load)
        started.wait()
        values = [f.result() for f in [pool.submit(load) for _ in range(7)]]

    assert calls == [1]
    assert all(v is first.result() for v in values)


def test_the_collector_is_off_while_loading_and_back_as_it_was_after() -> None:
    seen: list[bool] = []

    @lifelong
    def load() -> list[int]:
        seen.append(gc.isenabled())
        return [1]

    @lifelong
    def failing() -> list[int]:
        raise RuntimeError("cannot load")

    load()
    with pytest.raises(RuntimeError):
        failing()
    assert seen == [False]
    assert gc.isenabled()

    gc.disable()
    try:
        lifelong(lambda: [2])()
        assert not gc.isenabled()  # a caller that had it off keeps it off
    finally:
        gc.enable()
