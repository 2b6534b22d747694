"""Golden files: every renderer, every format, and budget cuts, on the fixture patient.

A change in rendering shows up as a diff of `tests/unit/golden/`. To accept one, run
`CCE_UPDATE_GOLDEN=1 pytest tests/unit/test_vfs_golden.py` and review the diff.
"""

import os
from pathlib import Path

import pytest

from engine.models import Scope
from engine.store import GraphStore
from tests.unit.test_vfs_builders import jane
from vfs import VfsFile, read

GOLDEN = Path(__file__).parent / "golden"

DIABETES_STORY = "/conditions/active/type_2_diabetes_mellitus/_story.md"
METFORMIN = "/medications/current/metformin_500_mg_oral_tablet"

# (path, format, token budget): each renderer at least once in narrative form.
CASES: list[tuple[str, str, int | None]] = [
    ("/patient.md", "narrative", None),
    (DIABETES_STORY, "narrative", None),
    ("/conditions/active/type_2_diabetes_mellitus/_raw.json", "narrative", None),
    ("/conditions/active/hypertension/_story.md", "narrative", None),
    ("/conditions/active/asthma_c6b1d4/_story.md", "narrative", None),
    ("/conditions/resolved/acute_bronchitis/_story.md", "narrative", None),
    (METFORMIN, "narrative", None),
    ("/medications/discontinued/amoxicillin_500_mg_oral_capsule", "narrative", None),
    ("/allergies.md", "narrative", None),
    ("/immunizations.md", "narrative", None),
    ("/procedures.md", "narrative", None),
    ("/labs/latest.md", "narrative", None),
    ("/labs/hemoglobin_a1c_hemoglobin_total_in_blood.md", "narrative", None),
    ("/labs/blood_pressure_panel.md", "narrative", None),
    ("/encounters/2024/2024-02-01-general_examination.md", "narrative", None),
    ("/timeline.md", "narrative", None),
    ("/sources.md", "narrative", None),
    ("/memory/symptom.md", "narrative", None),
    ("/memory/adherence.md", "narrative", None),
    ("/memory/concern.md", "narrative", None),
    ("/memory/preference.md", "narrative", None),
    ("/patient.md", "compact", None),
    (DIABETES_STORY, "compact", None),
    (METFORMIN, "compact", None),
    ("/labs/latest.md", "compact", None),
    ("/memory/symptom.md", "compact", None),
    (DIABETES_STORY, "structured", None),
    (METFORMIN, "structured", None),
    ("/conditions/active/type_2_diabetes_mellitus/_raw.json", "compact", None),
    (DIABETES_STORY, "narrative", 450),
    ("/timeline.md", "compact", 120),
    (DIABETES_STORY, "structured", 300),
    ("/conditions/active/type_2_diabetes_mellitus/_raw.json", "narrative", 300),
]


def golden_name(path: str, fmt: str, budget: int | None) -> str:
    stem = path.strip("/").replace("/", "__")
    suffix = "json" if fmt == "structured" or path.endswith(".json") else "md"
    return f"{stem}.{fmt}{f'.budget{budget}' if budget else ''}.{suffix}"


@pytest.fixture(scope="module")
def patient() -> tuple[GraphStore, Scope]:
    return jane()


def check_golden(content: str, name: str, directory: Path = GOLDEN) -> None:
    golden = directory / name
    if os.environ.get("CCE_UPDATE_GOLDEN") == "1":
        golden.parent.mkdir(exist_ok=True)
        golden.write_text(content, encoding="utf-8")
    assert golden.exists(), f"no golden file {name}: run with CCE_UPDATE_GOLDEN=1 and review"
    assert content == golden.read_text(encoding="utf-8")


@pytest.mark.parametrize(("path", "fmt", "budget"), CASES, ids=lambda v: str(v))
def test_rendering_matches_the_golden_file(
    patient: tuple[GraphStore, Scope], path: str, fmt: str, budget: int | None
) -> None:
    store, scope = patient

    result = read(store, scope, path, fmt, budget)

    assert isinstance(result, VfsFile)
    assert result.path == path
    check_golden(result.content, golden_name(path, fmt, budget))


def test_every_golden_file_belongs_to_a_case() -> None:
    expected = {golden_name(*case) for case in CASES}
    assert {p.name for p in GOLDEN.iterdir()} == expected
