"""From a real Synthea export and a conversation memory to every VFS path, on both backends.

The bundle is read once per test session and the same records are fed to each store, so
that every stored time (`ingested_at` included) is the same and the renderings of the two
backends can be compared byte for byte.
"""

import functools
from datetime import UTC, datetime

import pytest

from engine.models import (
    Batch,
    Evidence,
    Memory,
    MemoryType,
    Relationship,
    RelationshipType,
    Role,
    Scope,
    Session,
)
from engine.store import GraphStore
from ingest.pipeline import Ingestor, read_bytes
from ingest.records import Problem, Record
from tests.conftest import DATA
from tests.unit.test_vfs_builders import write_patient
from tests.unit.test_vfs_golden import CASES, check_golden, golden_name
from vfs import Format, VfsDir, VfsFile, list_dir, read, search
from vfs.graph import PatientGraph
from vfs.tree import walk

BUNDLE = (
    DATA
    / "corpus/fhir/synthea-r4-bundles/Joaquin_Rodriguez_69ee9841-f4a6-427a-a2fd-f5a891682057.json"
)
PATIENT = "39e53c6f-309b-4ed7-b650-79a4ef7b1e99"
HCTZ = "medication:rxnorm:316049"
HYPERTENSION = "condition:snomed:38341003"
QUOTE = "I quit the water pill a month ago, it had me running to the bathroom all night"
STORY = "/conditions/active/hypertension/_story.md"
PILL = "/medications/current/hydrochlorothiazide_25_mg"


@functools.cache
def exported() -> tuple[Record | Problem, ...]:
    return tuple(read_bytes(BUNDLE.read_bytes(), str(BUNDLE)))


def load(store: GraphStore, org: str) -> Scope:
    """The Synthea patient, one conversation, one adherence memory that conflicts."""
    ingested = datetime(2021, 5, 1, 9, 0, tzinfo=UTC)  # the same on both backends
    ingestor = Ingestor(store, org, clock=lambda: ingested)
    ingestor.feed(str(BUNDLE), iter(exported()))
    assert list(ingestor.report.patients) == [PATIENT]
    assert not ingestor.report.errors
    scope = Scope(org=org, patient=PATIENT)
    when = datetime(2021, 5, 4, 15, 30, tzinfo=UTC)
    store.create_session(scope, Session(session_id="visit-1", created_at=when))
    said = Memory(
        memory_id="mem-1",
        session_id="visit-1",
        type=MemoryType.ADHERENCE,
        text=QUOTE,
        subject="hydrochlorothiazide",
        evidence=(Evidence(message_id="visit-1:1", quote=QUOTE, start=0, end=len(QUOTE)),),
        speaker=Role.PATIENT,
        attributes={"behavior": "stopped"},
        confidence=0.85,
        extractor="offline",
        extractor_version="1",
        created_at=when,
    )
    stopped = Relationship(
        memory_id="mem-1",
        fact_key=HCTZ,
        type=RelationshipType.CONFLICTS,
        rationale="the record lists hydrochlorothiazide as current",
        confidence=0.8,
        method="rules",
    )
    store.write(scope, Batch(memories=(said,), relationships=(stopped,)))
    return scope


def render_all(store: GraphStore, scope: Scope) -> dict[str, str]:
    """Every directory listing, and every file in every format, keyed by path and format."""
    out: dict[str, str] = {}
    files = [path for path, _ in walk(PatientGraph(store, scope))]
    directories = {
        "/".join(path.split("/")[:depth]) + "/"
        for path in files
        for depth in range(1, path.count("/") + 1)
    }
    for directory in sorted(directories):
        listing = list_dir(store, scope, directory)
        out[directory] = "\n".join(f"{e.kind} {e.path}" for e in listing.entries)
    for path in files:
        for fmt in Format:
            result = read(store, scope, path, fmt)
            assert isinstance(result, VfsFile), path
            out[f"{path} [{fmt.value}]"] = result.content
    return out


def test_every_path_of_a_synthea_patient_renders(store: GraphStore, org: str) -> None:
    scope = load(store, org)

    rendered = render_all(store, scope)

    assert len(rendered) > 150
    assert rendered["/conditions/"] == "dir /conditions/active/\ndir /conditions/resolved/"
    story = rendered[f"{STORY} [narrative]"]
    assert "- **Hydrochlorothiazide 25 MG** → [`" + PILL in story
    medication = rendered[f"{PILL} [narrative]"]
    assert (
        "**DISCREPANCY** · **conflicts · adherence · 2021-05-04 15:30 UTC · session visit-1**"
        in (medication)
    )
    assert f"  > **Quote:** {QUOTE}" in medication
    assert "- **Hypertension** → [`/conditions/active/hypertension/_story.md`]" in medication
    assert (
        "Patient report conflicts with the record: Hydrochlorothiazide 25 MG"
        in (rendered["/patient.md [narrative]"])
    )
    assert "## Vital Signs" in rendered["/labs/latest.md [narrative]"]
    assert "Joaquin" in rendered["/patient.md [narrative]"]
    assert "fhir 1" in rendered[f"{STORY} [narrative]"]
    assert (
        "dir /conditions/resolved/acute_bronchitis_disorder/" in rendered["/conditions/resolved/"]
    )
    assert "synthea-r4-bundles/Joaquin\\_Rodriguez" in rendered["/sources.md [narrative]"]


def test_search_and_budgets_work_on_real_data(store: GraphStore, org: str) -> None:
    scope = load(store, org)

    hits = search(store, scope, "hydrochlorothiazide water pill", limit=5)
    cut = read(store, scope, "/timeline.md", "compact", token_budget=300)
    listing = read(store, scope, "/encounters/")

    assert {hit.path for hit in hits[:2]} == {PILL, "/memory/adherence.md"}
    assert isinstance(cut, VfsFile) and cut.truncated and cut.tokens <= 300
    assert isinstance(listing, VfsDir) and all(e.kind == "dir" for e in listing.entries)


@pytest.mark.neo4j
def test_both_backends_render_identical_markdown(
    sqlite_store: GraphStore, neo4j_store: GraphStore, org: str
) -> None:
    on_sqlite = render_all(sqlite_store, load(sqlite_store, org))
    on_neo4j = render_all(neo4j_store, load(neo4j_store, org))

    assert list(on_neo4j) == list(on_sqlite)
    different = [key for key in on_sqlite if on_sqlite[key] != on_neo4j[key]]
    assert different == []
    scope = Scope(org=org, patient=PATIENT)
    assert search(sqlite_store, scope, "blood pressure") == search(
        neo4j_store, scope, "blood pressure"
    )


def test_the_golden_files_hold_on_each_backend(store: GraphStore, org: str) -> None:
    scope = Scope(org=org, patient="jane")
    write_patient(store, scope)

    for path, fmt, budget in CASES:
        result = read(store, scope, path, fmt, budget)
        assert isinstance(result, VfsFile)
        check_golden(result.content, golden_name(path, fmt, budget))
