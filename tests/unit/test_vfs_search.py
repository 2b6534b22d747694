"""Search: BM25 over facts, memories and rendered files, one hit per path."""

import pytest

from engine.errors import InvalidInput, NotFound
from engine.models import Scope
from engine.store import GraphStore
from tests.unit.test_vfs_builders import jane
from vfs import search
from vfs.search import rank, tokens


@pytest.fixture(scope="module")
def patient() -> tuple[GraphStore, Scope]:
    return jane()


def test_a_drug_name_finds_its_file_and_what_the_patient_said(
    patient: tuple[GraphStore, Scope],
) -> None:
    store, scope = patient

    hits = search(store, scope, "metformin")

    top = {(hit.kind, hit.path) for hit in hits[:2]}
    assert top == {
        ("fact", "/medications/current/metformin_500_mg_oral_tablet"),
        ("memory", "/memory/adherence.md"),
    }
    paths = [hit.path for hit in hits]
    assert len(paths) == len(set(paths))
    assert "/conditions/active/type_2_diabetes_mellitus/_story.md" in paths
    assert [hit.score for hit in hits] == sorted((hit.score for hit in hits), reverse=True)


def test_memory_hits_are_marked_untrusted(patient: tuple[GraphStore, Scope]) -> None:
    store, scope = patient

    hits = search(store, scope, "dizzy stand")

    assert hits[0].path == "/memory/symptom.md"
    assert hits[0].kind == "memory"
    assert hits[0].untrusted
    assert "dizzy" in hits[0].snippet
    assert all(not hit.untrusted for hit in hits if hit.kind != "memory")


def test_codes_and_rendered_text_are_searchable(patient: tuple[GraphStore, Scope]) -> None:
    store, scope = patient

    by_code = search(store, scope, "E11.9", limit=3)
    by_rendered = search(store, scope, "discrepancy", limit=5)

    assert by_code[0].path == "/conditions/active/type_2_diabetes_mellitus/_story.md"
    assert {hit.kind for hit in by_rendered} == {"file"}
    # the files that flag an open discrepancy: the patient's summary and the memory file
    # (its current state and its statement both carry the flag)
    assert {hit.path for hit in by_rendered[:2]} == {"/patient.md", "/memory/adherence.md"}
    assert tokens("ICD-10-CM E11.9") == ["icd-10-cm", "icd", "10", "cm", "e11.9", "e11", "9"]


def test_limit_and_empty_queries(patient: tuple[GraphStore, Scope]) -> None:
    store, scope = patient

    assert len(search(store, scope, "the of and", limit=2)) <= 2
    assert search(store, scope, "zzzyxq") == []
    with pytest.raises(InvalidInput, match="no letters or digits"):
        search(store, scope, "  ?! ")
    with pytest.raises(InvalidInput, match="between 1 and 100"):
        search(store, scope, "metformin", limit=0)
    with pytest.raises(NotFound):
        search(store, Scope(org="vfs-tests", patient="nobody"), "metformin")


def test_bm25_prefers_rarer_terms_and_shorter_documents() -> None:
    from vfs.search import _Entry

    entries = [
        _Entry("/a", "file", "a", "insulin pump insulin " + "filler " * 50),
        _Entry("/b", "file", "b", "insulin pump"),
        _Entry("/c", "file", "c", "pump pump pump"),
    ]

    ranked = [entry.path for _, entry in rank(entries, tokens("insulin pump"))]

    assert ranked == ["/b", "/a", "/c"]
