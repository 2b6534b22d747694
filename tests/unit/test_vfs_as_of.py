"""As-of views, golden: a patient with two ingests and three sessions, read at four instants.

The record is ingested on 2026-01-10 (diabetes active, metformin current) and again on
2026-03-05 (a C-CDA that adds an onset and an HbA1c); the patient talks on 2026-01-20,
2026-02-15 and 2026-04-01. All timestamps are injected; nothing sleeps. To accept a change,
run `CCE_UPDATE_GOLDEN=1 pytest tests/unit/test_vfs_as_of.py` and review the diff.
"""

from datetime import UTC, datetime
from pathlib import Path

import pytest

from engine.as_of import parse_as_of
from engine.errors import InvalidInput
from engine.models import Batch, Claim, MemoryType, Scope, Session, SourceClaims, SourceFormat
from engine.sqlite_store import SqliteStore
from engine.store import GraphStore
from tests.unit.test_vfs_builders import DIABETES, METFORMIN, claim, memory, source
from tests.unit.test_vfs_golden import check_golden
from vfs import VfsDir, VfsFile, VfsNotFound, read

GOLDEN = Path(__file__).parent / "golden_as_of"
HBA1C = "observation:loinc:4548-4:2026-03-01"
MED = "/medications/current/metformin_500_mg_oral_tablet"
STORY = "/conditions/active/type_2_diabetes_mellitus/_story.md"
# Before anything, after the first ingest, between the second and third sessions, now.
CUTOFFS = {
    "before": "2026-01-09",
    "first-ingest": "2026-01-10T12:00:00+00:00",
    "two-sessions": "2026-03-01",
    "now": None,
}
PATHS = [STORY, MED, "/memory/adherence.md", "/sources.md", "/timeline.md"]


def _ingest(store: GraphStore, scope: Scope, when: datetime, *found: SourceClaims) -> None:
    dated = tuple(
        SourceClaims(source=s.source.model_copy(update={"ingested_at": when}), claims=s.claims)
        for s in found
    )
    store.write(scope, Batch(sources=dated))


def _claims(ref: str, kind: str, fmt: SourceFormat, *claims: Claim) -> SourceClaims:
    return SourceClaims(source=source(ref, kind, fmt), claims=claims)


def _write(store: GraphStore, scope: Scope) -> None:
    fhir, cda = SourceFormat.FHIR, SourceFormat.CDA
    diabetes = claim(DIABETES, "Type 2 diabetes mellitus", "active")
    metformin = claim(METFORMIN, "Metformin 500 MG Oral Tablet", "current", dosage="twice daily")
    _ingest(
        store,
        scope,
        datetime(2026, 1, 10, 8, tzinfo=UTC),
        _claims("fhir:Condition/dm", "Condition", fhir, diabetes),
        _claims("fhir:MedicationRequest/met", "MedicationRequest", fhir, metformin),
    )
    onset = claim(DIABETES, "Type 2 diabetes mellitus", "active", onset="2019-05-02")
    a1c = claim(HBA1C, "Hemoglobin A1c", "final", value=7.9, unit="%", date="2026-03-01")
    _ingest(
        store,
        scope,
        datetime(2026, 3, 5, 8, tzinfo=UTC),
        _claims("cda:ccd.xml#problem-1", "ProblemObservation", cda, onset),
        _claims("cda:ccd.xml#result-1", "ResultObservation", cda, a1c),
    )
    said = [
        ("s1", datetime(2026, 1, 20, 9, tzinfo=UTC), "I take the metformin every day", "taking"),
        ("s2", datetime(2026, 2, 15, 9, tzinfo=UTC), "I stopped the metformin", "stopped"),
        ("s3", datetime(2026, 4, 1, 9, tzinfo=UTC), "I started the metformin again", "restarted"),
    ]
    for sid, when, text, behavior in said:
        store.create_session(scope, Session(session_id=sid, created_at=when))
        adherence = memory(
            f"m-{sid}", sid, MemoryType.ADHERENCE, text, "metformin", when, behavior=behavior
        )
        store.write(scope, Batch(memories=(adherence,)))


@pytest.fixture(scope="module")
def patient() -> tuple[GraphStore, Scope]:
    store, scope = SqliteStore(":memory:"), Scope(org="vfs-as-of", patient="ana")
    _write(store, scope)
    return store, scope


def _name(path: str, label: str) -> str:
    return f"{path.strip('/').replace('/', '__')}.{label}.md"


@pytest.mark.parametrize("label", [k for k in CUTOFFS if k != "before"])
@pytest.mark.parametrize("path", PATHS)
def test_each_path_renders_as_the_engine_knew_it(
    patient: tuple[GraphStore, Scope], path: str, label: str
) -> None:
    store, scope = patient
    cutoff = CUTOFFS[label]

    result = read(store, scope, path, as_of=parse_as_of(cutoff))

    assert isinstance(result, VfsFile)
    check_golden(result.content, _name(path, label), GOLDEN)


def test_a_cutoff_after_everything_changes_nothing(patient: tuple[GraphStore, Scope]) -> None:
    store, scope = patient
    later = parse_as_of("2030-01-01")

    for path in PATHS:
        assert read(store, scope, path, as_of=later) == read(store, scope, path)


def test_before_the_first_ingest_the_folders_are_empty(patient: tuple[GraphStore, Scope]) -> None:
    store, scope = patient
    before = parse_as_of(CUTOFFS["before"])

    listing = read(store, scope, "/medications/current/", as_of=before)
    assert isinstance(listing, VfsDir)
    assert listing.entries == ()
    with pytest.raises(VfsNotFound):
        read(store, scope, STORY, as_of=before)
    adherence = read(store, scope, "/memory/adherence.md", as_of=before)
    assert isinstance(adherence, VfsFile)
    assert "metformin" not in adherence.content.lower()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-03-01", datetime(2026, 3, 1, 23, 59, 59, 999999, tzinfo=UTC)),
        ("2026-03-01T10:00:00+02:00", datetime(2026, 3, 1, 8, tzinfo=UTC)),
        ("2026-03-01T08:00:00Z", datetime(2026, 3, 1, 8, tzinfo=UTC)),
        (None, None),
    ],
)
def test_as_of_is_a_day_end_or_an_instant(text: str | None, expected: datetime | None) -> None:
    assert parse_as_of(text) == expected


@pytest.mark.parametrize(
    "text",
    ["yesterday", "2026-13-01", "2026-03-01T10:00:00", "03/01/2026", "0001-01-01T00:00:00+00:01"],
)
def test_a_bad_as_of_is_refused_with_what_to_use(text: str) -> None:
    with pytest.raises(InvalidInput, match="YYYY-MM-DD"):
        parse_as_of(text)
