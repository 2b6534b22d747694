"""Ingest throughput against a baseline measured in the same run.

Two corpora: the 20 Synthea patient bundles, and a Bulk FHIR NDJSON export (10 patients,
one file per resource type). Baseline: JSON-parse the corpus and validate, with
fhir.resources, the resources the readers map (the least any ingest must do), in one
process. Then the full ingest into a fresh SQLite file and, with --neo4j, into a fresh org
of a Neo4j server, each twice: in one process (`workers=1`), and as `cce ingest` runs by
default, with one pool process per core parsing and validating beside the writer. Each is
timed `--repeat` times, the runs taking turns after one warm-up each, and the best time is
kept; the ratios are what to compare across runs, since machines are shared and noisy.

Each run's CPU time (this process and its pool's, not a Neo4j server's) is printed too,
with the least wall time it allows on this machine's cores: that CPU spread evenly over
every core, × the baseline. A ratio target below that figure cannot be met on the machine
by scheduling; only by doing less work.

    python -m bench.ingest [--neo4j bolt://127.0.0.1:7687] [--repeat 3]
"""

import argparse
import json
import os
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from functools import partial
from pathlib import Path
from resource import RUSAGE_CHILDREN, RUSAGE_SELF, getrusage
from typing import Any

from fhir.resources.R4B import get_fhir_model_class

from engine.store import GraphStore, open_store
from ingest.fhir_read import is_mapped
from ingest.pipeline import ingest_paths

FHIR = Path(__file__).parent.parent / "tests" / "data" / "corpus" / "fhir"
BUNDLES = sorted(
    p for p in (FHIR / "synthea-r4-bundles").glob("*.json") if "Information" not in p.name
)
EXPORT = FHIR / "bulk-ndjson-10-patients"


def bundle_resources() -> Iterator[dict[str, Any]]:
    for path in BUNDLES:
        for entry in json.loads(path.read_bytes())["entry"]:
            yield entry["resource"]


def export_resources() -> Iterator[dict[str, Any]]:
    for path in sorted(EXPORT.glob("[A-Z]*.ndjson")):  # resource files, not log.ndjson
        with path.open("rb") as lines:
            yield from (json.loads(line) for line in lines if line.strip())


POOL = f"{os.cpu_count() or 1}-process"  # the default pool: one process per core
CORPORA: dict[str, tuple[list[Path], Callable[[], Iterator[dict[str, Any]]]]] = {
    f"{len(BUNDLES)} Synthea bundles": (BUNDLES, bundle_resources),
    "bulk NDJSON export (10 patients)": ([EXPORT], export_resources),
}


def validate_only(resources: Callable[[], Iterator[dict[str, Any]]]) -> int:
    count = 0
    for resource in resources():
        if is_mapped(resource["resourceType"]):
            get_fhir_model_class(resource["resourceType"]).model_validate(resource)
            count += 1
    return count


def ingest_into(store: GraphStore, paths: list[Path], workers: int | None) -> int:
    report = ingest_paths(store, f"bench-{uuid.uuid4().hex[:8]}", paths, workers=workers)
    assert report.exit_code == 0, report.errors
    return report.resources


def cpu_seconds() -> float:
    """CPU time so far of this process and of its ended child processes (the pool's)."""
    return sum(
        usage.ru_utime + usage.ru_stime for usage in map(getrusage, (RUSAGE_SELF, RUSAGE_CHILDREN))
    )


Timing = tuple[float, float, int]  # wall seconds, CPU seconds, resources


def best(runs: dict[str, Callable[[], int]], repeat: int) -> dict[str, Timing]:
    """The best time of each run, with its CPU time; the runs take turns so that they
    share the load."""
    timings: dict[str, list[Timing]] = {name: [] for name in runs}
    for _ in range(repeat):
        for name, run in runs.items():
            started, cpu = time.perf_counter(), cpu_seconds()
            count = run()
            timings[name].append((time.perf_counter() - started, cpu_seconds() - cpu, count))
    return {name: min(timings[name]) for name in runs}


def measure(
    paths: list[Path], resources: Callable[[], Iterator[dict[str, Any]]], args: argparse.Namespace
) -> dict[str, Timing]:
    with tempfile.TemporaryDirectory() as tmp, ExitStack() as stack:

        def sqlite_run(workers: int | None) -> int:
            store = open_store(f"sqlite:///{tmp}/{uuid.uuid4().hex}.db")
            try:
                return ingest_into(store, paths, workers)
            finally:
                store.close()

        stores: dict[str, Callable[[int | None], int]] = {"SQLite": sqlite_run}
        if args.neo4j:
            neo4j = open_store(args.neo4j)
            stack.callback(neo4j.close)
            stores["Neo4j"] = partial(ingest_into, neo4j, paths)
        runs: dict[str, Callable[[], int]] = {
            "validate-only baseline": lambda: validate_only(resources)
        }
        for name, ingest in stores.items():
            runs[f"ingest → {name}, 1 process"] = partial(ingest, 1)
            runs[f"ingest → {name}, {POOL} pool"] = partial(ingest, None)
        for run in runs.values():
            run()  # warm-up: imports, drug tables, query plans
        return best(runs, args.repeat)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--neo4j", help="Bolt URI of a Neo4j server to include")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    for corpus, (paths, resources) in CORPORA.items():
        results = measure(paths, resources, args)
        baseline = results["validate-only baseline"][0]
        cores = os.cpu_count() or 1
        print(f"{corpus}, best of {args.repeat}; least × on {cores} cores: CPU / {cores}")
        print(
            f"{'run':36} {'seconds':>8} {'resources':>10} {'resources/s':>12} {'× baseline':>11}"
            f" {'CPU s':>6} {'least ×':>8}"
        )
        for name, (seconds, cpu, count) in results.items():
            rate, ratio, least = count / seconds, seconds / baseline, cpu / cores / baseline
            print(
                f"{name:36} {seconds:8.3f} {count:10d} {rate:12.0f} {ratio:11.2f}"
                f" {cpu:6.2f} {least:8.2f}"
            )


if __name__ == "__main__":
    main()
