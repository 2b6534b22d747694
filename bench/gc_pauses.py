"""VFS read tail with what the process keeps for life frozen (`engine.lifelong`) or not.

One Synthea patient is ingested into an in-memory SQLite store, which loads the drug
dictionary as any ingest does. `/patient.md` is then read `--reads` times with the
long-lived objects back in the collector's generations (`gc.unfreeze`: how every process
read before) and again after `lifelong.freeze()`, in alternating rounds so that the load
of the machine weighs on both alike. Printed: p50/p99/max of the read, and the count and
longest of the full (generation 2) collections that ran meanwhile.

    python -m bench.gc_pauses [--reads 2000] [--rounds 4]
"""

import argparse
import gc
import time
from collections.abc import Callable
from typing import Any

import vfs
from bench.stats import percentile
from bench.vfs import record_ingest
from engine import lifelong
from engine.models import Scope
from engine.store import open_store

PATH = "/patient.md"


class FullCollections:
    """Durations of the generation-2 collections while installed (`gc.callbacks`)."""

    def __init__(self) -> None:
        self.durations: list[float] = []
        self._started = 0.0

    def __call__(self, phase: str, info: dict[str, Any]) -> None:
        if info["generation"] != 2:
            return
        if phase == "start":
            self._started = time.perf_counter()
        else:
            self.durations.append(time.perf_counter() - self._started)


def measure(
    reads: int, read: Callable[[], None], frozen: bool, found: FullCollections
) -> list[float]:
    """The durations of `reads` reads, with the long-lived objects frozen or not."""
    if frozen:
        lifelong.freeze()
    else:
        gc.unfreeze()
    gc.callbacks.append(found)
    samples = []
    try:
        for _ in range(reads):
            started = time.perf_counter()
            read()
            samples.append(time.perf_counter() - started)
    finally:
        gc.callbacks.remove(found)
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--reads", type=int, default=2000, help="reads per round and way")
    parser.add_argument("--rounds", type=int, default=4)
    args = parser.parse_args()
    store = open_store("sqlite:///:memory:")
    scope = Scope(org="bench", patient="p")
    record_ingest(store, scope.org, scope.patient)
    tracked = len(gc.get_objects()) + gc.get_freeze_count()
    print(f"objects the collector tracks, frozen or not: {tracked}")

    def read() -> None:
        vfs.read(store, scope, PATH)

    read()
    samples: dict[bool, list[float]] = {False: [], True: []}
    pauses = {False: FullCollections(), True: FullCollections()}
    for _ in range(args.rounds):
        for frozen in (False, True):
            samples[frozen] += measure(args.reads, read, frozen, pauses[frozen])
    store.close()
    print(f"{PATH}, {args.rounds} × {args.reads} reads each way, ms")
    print(f"{'':9} {'p50':>6} {'p99':>6} {'max':>7} {'full GCs':>8} {'longest':>8}")
    for frozen, name in ((False, "unfrozen"), (True, "frozen")):
        values, found = samples[frozen], pauses[frozen].durations
        print(
            f"{name:9} {percentile(values, 0.5) * 1e3:6.2f} {percentile(values, 0.99) * 1e3:6.2f}"
            f" {max(values) * 1e3:7.2f} {len(found):8d} {max(found, default=0) * 1e3:8.2f}"
        )
    ratio = percentile(samples[True], 0.99) / percentile(samples[False], 0.99)
    print(f"p99 frozen / unfrozen: {ratio:.2f}")


if __name__ == "__main__":
    main()
