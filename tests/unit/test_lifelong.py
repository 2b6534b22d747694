"""`engine.lifelong`: loaded once, then out of the garbage collector's sight."""

import gc

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
