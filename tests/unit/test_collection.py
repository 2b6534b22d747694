"""`ingest.collection`: the collector runs less often while ingests run, and as before after."""

import gc
import multiprocessing
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from engine.sqlite_store import SqliteStore
from ingest import pipeline
from ingest.collection import INGEST_THRESHOLD, fewer_collections
from ingest.pipeline import Ingestor, ingest_paths, read_bytes
from ingest.records import Problem, Record

CONDITION = (
    b'{"resourceType": "Condition", "id": "c", "subject": {"reference": "Patient/p"},'
    b' "code": {"text": "Migraine"}}'
)


def test_an_ingest_reads_with_fewer_collections_and_puts_the_thresholds_back() -> None:
    before = gc.get_threshold()
    seen: list[tuple[int, int, int]] = []

    def reader() -> Iterator[Record | Problem]:
        seen.append(gc.get_threshold())
        yield from read_bytes(CONDITION, "c.json")

    ingestor = Ingestor(SqliteStore(":memory:"), f"org-{uuid.uuid4().hex}", patient="p")
    ingestor.feed("c.json", reader())

    assert ingestor.report.deltas.facts_added == 1
    assert seen == [(INGEST_THRESHOLD, *before[1:])]
    assert gc.get_threshold() == before


def test_overlapping_ingests_put_the_thresholds_back_when_the_last_ends() -> None:
    before = gc.get_threshold()
    first_in, second_out = threading.Event(), threading.Event()
    during: list[tuple[int, int, int]] = []

    def first() -> None:
        with fewer_collections():
            first_in.set()
            second_out.wait()
            during.append(gc.get_threshold())  # the second ended: still raised for this one

    thread = threading.Thread(target=first)
    thread.start()
    first_in.wait()
    with fewer_collections():
        pass
    second_out.set()
    thread.join()

    assert during == [(INGEST_THRESHOLD, *before[1:])]
    assert gc.get_threshold() == before


def test_the_thresholds_come_back_after_a_failure() -> None:
    before = gc.get_threshold()
    try:
        with fewer_collections():
            raise ValueError("boom")
    except ValueError:
        pass

    assert gc.get_threshold() == before


def _threshold_read(path: Path, patient_key: str | None = None) -> list[Record | Problem]:
    """In a pool process: the collector's threshold there, as a warning."""
    return [Problem(severity="warning", file=str(path), message=str(gc.get_threshold()[0]))]


@pytest.mark.skipif(
    "fork" not in multiprocessing.get_all_start_methods(), reason="the pool forks its processes"
)
def test_the_pool_processes_read_with_fewer_collections_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = [tmp_path / "a.json", tmp_path / "b.json"]
    for path in paths:
        path.write_bytes(CONDITION)
    monkeypatch.setattr(pipeline, "read_document", _threshold_read)

    report = ingest_paths(SqliteStore(":memory:"), "org", paths, workers=2)

    thresholds = [w.message for w in report.warnings if w.message.isdigit()]
    assert thresholds == [str(INGEST_THRESHOLD)] * 2
