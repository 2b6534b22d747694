"""Ingest throughput against a baseline measured in the same run.

Baseline: JSON-parse the 20 Synthea patient bundles and validate, with fhir.resources,
the resources the readers map (the least any ingest must do). Then the full ingest into
a fresh SQLite file and, with --neo4j, into a fresh org of a Neo4j server. Each is timed
`--repeat` times and the best run is kept; the ratios are what to compare across runs,
since machines are shared and noisy.

    python -m bench.ingest [--neo4j bolt://127.0.0.1:7687] [--repeat 3]
"""

import argparse
import json
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

from fhir.resources.R4B import get_fhir_model_class

from engine.store import GraphStore, open_store
from ingest.fhir_read import is_mapped
from ingest.pipeline import ingest_paths

DATA = Path(__file__).parent.parent / "tests" / "data" / "corpus" / "fhir" / "synthea-r4-bundles"
BUNDLES = sorted(p for p in DATA.glob("*.json") if "Information" not in p.name)


def validate_only() -> int:
    count = 0
    for path in BUNDLES:
        for entry in json.loads(path.read_bytes())["entry"]:
            resource = entry["resource"]
            if is_mapped(resource["resourceType"]):
                get_fhir_model_class(resource["resourceType"]).model_validate(resource)
                count += 1
    return count


def ingest_into(store: GraphStore) -> int:
    report = ingest_paths(store, f"bench-{uuid.uuid4().hex[:8]}", BUNDLES)
    assert report.exit_code == 0, report.errors
    return report.resources


def best(run: Callable[[], int], repeat: int) -> tuple[float, int]:
    times, count = [], 0
    for _ in range(repeat):
        started = time.perf_counter()
        count = run()
        times.append(time.perf_counter() - started)
    return min(times), count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--neo4j", help="Bolt URI of a Neo4j server to include")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    results: dict[str, tuple[float, int]] = {}
    results["validate-only baseline"] = best(validate_only, args.repeat)
    with tempfile.TemporaryDirectory() as tmp:

        def sqlite_run() -> int:
            store = open_store(f"sqlite:///{tmp}/{uuid.uuid4().hex}.db")
            try:
                return ingest_into(store)
            finally:
                store.close()

        results["ingest → SQLite"] = best(sqlite_run, args.repeat)
    if args.neo4j:
        store = open_store(args.neo4j)
        try:
            ingest_into(store)  # warm-up: query plans, constraints
            results["ingest → Neo4j"] = best(lambda: ingest_into(store), args.repeat)
        finally:
            store.close()

    baseline = results["validate-only baseline"][0]
    print(f"{len(BUNDLES)} Synthea bundles, best of {args.repeat}")
    print(f"{'run':26} {'seconds':>8} {'resources':>10} {'resources/s':>12} {'× baseline':>11}")
    for name, (seconds, count) in results.items():
        rate, ratio = count / seconds, seconds / baseline
        print(f"{name:26} {seconds:8.3f} {count:10d} {rate:12.0f} {ratio:11.2f}")


if __name__ == "__main__":
    main()
