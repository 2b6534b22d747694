"""The path router: listings, canonical paths, refusals with nearby entries, slugs."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.errors import InvalidInput, NotFound
from engine.models import Batch, MemoryType, Scope
from engine.store import GraphStore
from tests.unit.test_vfs_builders import at, jane, memory
from vfs import Format, VfsDir, VfsFile, VfsInvalidPath, VfsNotFound, list_dir, read
from vfs.graph import PatientGraph
from vfs.paths import split
from vfs.slugs import SLUG, assign, slugify
from vfs.tree import walk

ROOT = [
    "conditions/",
    "encounters/",
    "labs/",
    "medications/",
    "memory/",
    "allergies.md",
    "immunizations.md",
    "patient.md",
    "procedures.md",
    "sources.md",
    "timeline.md",
]


@pytest.fixture(scope="module")
def patient() -> tuple[GraphStore, Scope]:
    return jane()


def names(listing: VfsDir) -> list[str]:
    return [e.name + ("/" if e.kind == "dir" else "") for e in listing.entries]


def test_root_lists_every_entry_of_the_spec(patient: tuple[GraphStore, Scope]) -> None:
    store, scope = patient

    listing = list_dir(store, scope, "/")

    assert listing.path == "/"
    assert names(listing) == ROOT
    assert listing.entries[0].path == "/conditions/"


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("/conditions", ["active/", "resolved/"]),
        (
            "conditions/active/",
            ["asthma/", "asthma_c6b1d4/", "hypertension/", "type_2_diabetes_mellitus/"],
        ),
        ("/conditions/resolved/acute_bronchitis", ["_raw.json", "_story.md"]),
        ("/medications/", ["current/", "discontinued/"]),
        (
            "/medications/current",
            ["lisinopril_10_mg_oral_tablet", "metformin_500_mg_oral_tablet"],
        ),
        (
            "/labs",
            [
                "blood_pressure_panel.md",
                "hemoglobin_a1c_hemoglobin_total_in_blood.md",
                "latest.md",
                "smoking_status.md",
            ],
        ),
        ("/encounters/", ["2024/"]),
        (
            "/encounters/2024",
            ["2024-02-01-general_examination.md", "2024-02-01-general_examination_0be88a.md"],
        ),
        ("/memory", ["adherence.md", "concern.md", "preference.md", "symptom.md"]),
    ],
)
def test_directories_list_their_entries(
    patient: tuple[GraphStore, Scope], path: str, expected: list[str]
) -> None:
    store, scope = patient

    listing = read(store, scope, path)

    assert isinstance(listing, VfsDir)
    assert listing.path.endswith("/")
    assert names(listing) == expected


def test_every_listed_file_is_readable_in_every_format(patient: tuple[GraphStore, Scope]) -> None:
    store, scope = patient
    paths = [path for path, _ in walk(PatientGraph(store, scope))]

    assert len(paths) == 29
    for path in paths:
        for fmt in Format:
            result = read(store, scope, path, fmt)
            assert isinstance(result, VfsFile)
            assert result.path == path
            assert result.content.strip()
            json_expected = fmt is Format.STRUCTURED or path.endswith(".json")
            assert (result.media_type == "application/json") is json_expected


def test_medication_files_answer_to_a_md_suffix_too(patient: tuple[GraphStore, Scope]) -> None:
    store, scope = patient

    plain = read(store, scope, "/medications/current/metformin_500_mg_oral_tablet")
    suffixed = read(store, scope, "/medications/current/metformin_500_mg_oral_tablet.md")

    assert isinstance(plain, VfsFile) and isinstance(suffixed, VfsFile)
    assert suffixed.path == plain.path == "/medications/current/metformin_500_mg_oral_tablet"
    assert suffixed.content == plain.content


def test_percent_encoded_names_are_decoded_once(patient: tuple[GraphStore, Scope]) -> None:
    store, scope = patient

    result = read(store, scope, "/%70atient.md")

    assert isinstance(result, VfsFile) and result.path == "/patient.md"


@pytest.mark.parametrize(
    ("path", "directory"),
    [
        ("..", "/"),
        ("/../patient.md", "/"),
        ("/conditions/../patient.md", "/conditions/"),
        ("/conditions/active/./hypertension", "/conditions/active/"),
        ("%2e%2e/%2e%2e/etc/passwd", "/"),
        ("/conditions/%2E%2E/%2E%2E", "/conditions/"),
        ("/%252e%252e/patient.md", "/"),
        ("..\\..\\windows", "/"),
        ("C:/Windows", "/"),
        ("//etc/passwd", "/"),
        ("/labs//latest.md", "/labs/"),
        ("/memory/symptom.md\x00.txt", "/memory/"),
        ("~/secrets", "/"),
        ("/%ff%fe", "/"),
        ("/" + "a" * 1100, "/"),
    ],
)
def test_escapes_are_refused_with_the_nearby_entries(
    patient: tuple[GraphStore, Scope], path: str, directory: str
) -> None:
    store, scope = patient

    with pytest.raises(VfsInvalidPath) as caught:
        read(store, scope, path)

    assert isinstance(caught.value, InvalidInput)
    assert caught.value.directory == directory
    assert f"{directory} contains: " in str(caught.value)
    assert caught.value.nearby == tuple(names(list_dir(store, scope, directory)))


@pytest.mark.parametrize(
    ("path", "directory", "nearby"),
    [
        ("/etc/passwd", "/", "conditions/, encounters/"),
        ("/Patient.md", "/", "patient.md"),
        ("/conditions/active/diabetes/_story.md", "/conditions/active/", "hypertension/"),
        (
            "/conditions/active/hypertension/story.md",
            "/conditions/active/hypertension/",
            "_story.md",
        ),
        ("/conditions/chronic/", "/conditions/", "active/, resolved/"),
        ("/patient.md/more", "/", "patient.md"),
        ("/labs/latest", "/labs/", "latest.md"),
        ("/encounters/1999/", "/encounters/", "2024/"),
        ("/memory/symptoms.md", "/memory/", "symptom.md"),
    ],
)
def test_unknown_paths_are_not_found_with_the_nearby_entries(
    patient: tuple[GraphStore, Scope], path: str, directory: str, nearby: str
) -> None:
    store, scope = patient

    with pytest.raises(VfsNotFound) as caught:
        read(store, scope, path)

    assert isinstance(caught.value, NotFound)
    assert caught.value.directory == directory
    assert nearby in str(caught.value)
    assert str(caught.value).startswith(f"no such VFS path {path.rstrip('/')!r}")


def test_reads_of_an_unknown_patient_are_not_found(patient: tuple[GraphStore, Scope]) -> None:
    store, _ = patient

    with pytest.raises(NotFound, match="patient"):
        read(store, Scope(org="vfs-tests", patient="nobody"), "/patient.md")


def test_bad_format_and_budget_are_invalid(patient: tuple[GraphStore, Scope]) -> None:
    store, scope = patient

    with pytest.raises(InvalidInput, match="narrative, compact, structured"):
        read(store, scope, "/patient.md", "html")
    with pytest.raises(InvalidInput, match="positive"):
        read(store, scope, "/patient.md", token_budget=0)
    with pytest.raises(InvalidInput, match="is a file"):
        list_dir(store, scope, "/patient.md")


def test_etag_follows_the_content() -> None:
    store, scope = jane()
    before = read(store, scope, "/memory/concern.md")
    again = read(store, scope, "/memory/concern.md")
    extra = memory("m9", "s1", MemoryType.CONCERN, "I worry about my eyes", "eyes", at(9))
    store.write(scope, Batch(memories=(extra,)))

    after = read(store, scope, "/memory/concern.md")

    assert isinstance(before, VfsFile) and isinstance(again, VfsFile)
    assert isinstance(after, VfsFile)
    assert before.etag == again.etag != after.etag
    assert "I worry about my eyes" in after.content


@given(st.text())
def test_split_never_yields_a_traversal(path: str) -> None:
    segments, invalid = split(path)

    for segment in segments:
        assert segment not in {"", ".", ".."}
        assert "/" not in segment and "\\" not in segment and "%" not in segment


@given(st.text())
def test_slugs_are_lowercase_words_joined_by_underscores(label: str) -> None:
    slug = slugify(label)

    assert SLUG.match(slug)
    assert len(slug) <= 80
    assert slugify(slug) == slug


def test_slug_examples() -> None:
    assert slugify("Type 2 diabetes mellitus") == "type_2_diabetes_mellitus"
    assert (
        slugify("Amoxicillin 250 MG / Clavulanate 125 MG")
        == "amoxicillin_250_mg_clavulanate_125_mg"
    )
    assert slugify("Ménière's disease") == "meniere_s_disease"
    assert slugify("!!!") == slugify("糖尿病") == "unnamed"


@given(st.lists(st.tuples(st.text(min_size=1), st.text()), unique_by=lambda pair: pair[0]))
def test_assigned_slugs_are_unique_and_independent_of_order(named: list[tuple[str, str]]) -> None:
    slugs = assign(named, reserved=("latest",))

    assert set(slugs) == {key for key, _ in named}
    assert len(set(slugs.values())) == len(slugs)
    assert "latest" not in slugs.values()
    assert assign(list(reversed(named)), reserved=("latest",)) == slugs
    assert all(SLUG.match(slug) for slug in slugs.values())


def test_colliding_labels_get_a_stable_suffix() -> None:
    first = assign([("k1", "Asthma"), ("k2", "ASTHMA")])
    more = assign([("k1", "Asthma"), ("k2", "ASTHMA"), ("k3", "asthma!")])

    assert first["k1"] == "asthma"
    assert first["k2"].startswith("asthma_") and len(first["k2"]) == len("asthma_") + 6
    assert more["k2"] == first["k2"]
    assert assign([("k1", "Latest")], reserved=("latest",))["k1"].startswith("latest_")


@given(
    st.one_of(
        st.text(),
        st.lists(
            st.sampled_from(["conditions", "active", "..", ".", "%2e", "labs", "x.md", ""])
        ).map("/".join),
    )
)
def test_any_path_is_read_or_refused_cleanly(patient: tuple[GraphStore, Scope], path: str) -> None:
    store, scope = patient

    try:
        result = read(store, scope, path)
    except (VfsNotFound, VfsInvalidPath) as refused:
        assert refused.directory.startswith("/") and refused.directory.endswith("/")
        return
    assert result.path.startswith("/")
    assert ".." not in result.path.split("/")
