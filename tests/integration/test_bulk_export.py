"""A Bulk NDJSON export of cloned Synthea patients: bounded buffering, a progress total,
and an ingest killed with SIGKILL that a rerun completes without duplicates."""

import gzip
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from engine.models import Batch, Scope, WriteResult
from engine.sqlite_store import SqliteStore
from ingest import pipeline
from ingest.pipeline import expected_resources, ingest_paths
from tools.make_bulk_export import write_export

ROOT = Path(__file__).parents[2]


@pytest.fixture(scope="module")
def export(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("bulk") / "export"
    write_export(out, 60)
    return out


class Counting:
    """A store that remembers how many sources were written, for a progress callback."""

    def __init__(self, store: SqliteStore) -> None:
        self.store = store
        self.written = 0

    def __getattr__(self, name: str) -> object:
        return getattr(self.store, name)

    def write(self, scope: Scope, batch: Batch) -> WriteResult:
        self.written += len(batch.sources)
        return self.store.write(scope, batch)


def test_an_export_is_written_while_it_is_read_not_held_to_the_end(
    export: Path, monkeypatch: pytest.MonkeyPatch, org: str
) -> None:
    monkeypatch.setattr(pipeline, "MAX_PENDING", 200)
    store = Counting(SqliteStore.from_url("sqlite:///:memory:"))
    read, held = 0, [0]

    def progress(n: int) -> None:
        nonlocal read
        read += n
        held.append(read - store.written)

    report = ingest_paths(store, org, [export], progress=progress)  # type: ignore[arg-type]

    assert report.exit_code == 0
    assert len(report.patients) == 60
    # Patient records are read but are not sources: at most one each on top of the bound.
    assert max(held) <= 200 + 60
    assert expected_resources([export]) == report.resources == read


def test_the_pool_ingests_what_one_process_does(export: Path, org: str) -> None:
    reports, facts = [], []
    for workers in (1, 2):
        store = SqliteStore.from_url("sqlite:///:memory:")
        reports.append(ingest_paths(store, org, [export], workers=workers).model_dump())
        facts.append(
            {
                patient: [
                    f.model_dump(exclude={"sources": {"__all__": {"ingested_at"}}})
                    for f in store.list_facts(Scope(org=org, patient=patient))
                ]
                for patient in store.list_patients(org)
            }
        )
        store.close()

    assert reports[0] == reports[1]
    assert facts[0] == facts[1]
    assert len(facts[0]) == 60


def _ingest(export: Path, db: Path, org: str) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-m", "api.cli", "ingest", str(export), "--json"]
    return subprocess.Popen(
        [*command, "--store", f"sqlite:///{db}", "--org", org],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def _counts(db: Path, org: str) -> dict[str, int]:
    store = SqliteStore.from_url(f"sqlite:///{db}")
    try:
        return {
            patient: store.count_patient_items(Scope(org=org, patient=patient))
            for patient in store.list_patients(org)
        }
    finally:
        store.close()


def test_an_ingest_killed_midway_completes_on_a_rerun_without_duplicates(
    export: Path, tmp_path: Path, org: str
) -> None:
    killed, clean = tmp_path / "killed.db", tmp_path / "clean.db"
    running = _ingest(export, killed, org)
    deadline = time.monotonic() + 120
    while not killed.exists() or len(_counts(killed, org)) < 3:
        assert running.poll() is None, "the ingest finished before it could be killed"
        assert time.monotonic() < deadline
        time.sleep(0.05)
    running.send_signal(signal.SIGKILL)
    running.wait()
    partial = _counts(killed, org)
    assert 3 <= len(partial) < 60

    assert _ingest(export, killed, org).wait() == 0
    assert _ingest(export, clean, org).wait() == 0

    assert _counts(killed, org) == _counts(clean, org)
    assert len(_counts(clean, org)) == 60


def test_a_progress_total_is_known_only_for_plain_ndjson(export: Path, tmp_path: Path) -> None:
    conditions = export / "Condition.ndjson"
    lines = conditions.read_bytes().count(b"\n")
    assert expected_resources([conditions]) == lines > 0
    assert expected_resources([export / "Claim.ndjson"]) == 0  # not a mapped type
    gzipped = tmp_path / "Condition.ndjson.gz"
    gzipped.write_bytes(gzip.compress(conditions.read_bytes()))
    assert expected_resources([gzipped]) is None
    bundle = sorted((ROOT / "tests/data/corpus/fhir/synthea-r4-bundles").glob("*.json"))[0]
    assert expected_resources([export, bundle]) is None
