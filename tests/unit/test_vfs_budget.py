"""Token budgets: cuts end on a whole item, say what was left out, and fit when they can."""

import functools
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.unit.test_vfs_builders import jane
from vfs import VfsFile, read
from vfs.budget import estimate_tokens

STORY = "/conditions/active/type_2_diabetes_mellitus/_story.md"
PATHS = [STORY, "/timeline.md", "/memory/symptom.md", "/labs/latest.md", "/patient.md"]
NOTE = "**Truncated** to fit a budget of about"
patient = functools.cache(jane)


def render(path: str, fmt: str, budget: int | None) -> VfsFile:
    store, scope = patient()
    result = read(store, scope, path, fmt, budget)
    assert isinstance(result, VfsFile)
    return result


def header_tokens(path: str, fmt: str) -> int:
    full = render(path, fmt, None).content
    return estimate_tokens(full.split("\n## ", 1)[0])


def test_estimate_is_a_quarter_of_the_characters() -> None:
    assert estimate_tokens("") == 0
    assert estimate_tokens("abcd") == 1
    assert estimate_tokens("abcde") == 2


def test_a_large_budget_changes_nothing() -> None:
    for path in PATHS:
        full = render(path, "narrative", None)
        budgeted = render(path, "narrative", 100_000)
        assert budgeted.content == full.content
        assert not budgeted.truncated


@settings(max_examples=60, deadline=None)
@given(
    path=st.sampled_from(PATHS),
    fmt=st.sampled_from(["narrative", "compact"]),
    budget=st.integers(min_value=1, max_value=1500),
)
def test_markdown_cuts_end_on_a_whole_item(path: str, fmt: str, budget: int) -> None:
    full = render(path, fmt, None).content
    result = render(path, fmt, budget)

    if not result.truncated:
        assert result.content == full
        assert estimate_tokens(full) <= budget
        return
    kept, note = result.content.rstrip("\n").rsplit("\n\n", 1)
    assert note.startswith(NOTE) and "left out" in note
    assert full.startswith(kept + "\n")  # a prefix of the whole file, cut between chunks
    assert result.tokens <= max(budget, header_tokens(path, fmt) + estimate_tokens(note) + 2)
    assert not kept.rstrip().endswith(("##", ">"))  # no empty heading, no open quote


def test_the_note_counts_what_was_left_out() -> None:
    result = render(STORY, "narrative", 450)

    assert result.truncated
    assert (
        "left out 2 of 2 items of “Patient-Reported”, 2 of 2 items of “Sources”" in result.content
    )
    assert "## Monitoring Labs" in result.content
    assert "## Patient-Reported" not in result.content


def test_bigger_budgets_keep_more() -> None:
    lengths = [len(render("/timeline.md", "compact", b).content) for b in (60, 120, 240, 480)]

    assert lengths == sorted(lengths)


@settings(max_examples=30, deadline=None)
@given(path=st.sampled_from(PATHS), budget=st.integers(min_value=1, max_value=2000))
def test_structured_cuts_are_valid_json_that_says_so(path: str, budget: int) -> None:
    full = json.loads(render(path, "structured", None).content)
    result = render(path, "structured", budget)

    data = json.loads(result.content)
    assert data["path"] == path
    if not result.truncated:
        assert data == full
        return
    left_out = {entry["section"]: entry["items"] for entry in data["truncated"]["left_out"]}
    for section in full["sections"]:
        kept = next((s for s in data["sections"] if s["title"] == section["title"]), None)
        shown = len(kept["items"]) if kept else 0
        assert shown + left_out.get(section["title"], 0) == len(section["items"])
        if kept:
            assert kept["items"] == section["items"][:shown]


def test_raw_json_cuts_drop_sources_and_say_how_many() -> None:
    path = "/conditions/active/type_2_diabetes_mellitus/_raw.json"

    result = render(path, "narrative", 300)

    data = json.loads(result.content)
    assert result.truncated
    assert data["fact"]["sources"] == []
    assert data["truncated"]["left_out"] == [{"section": "sources", "items": 2}]
    assert data["fact"]["conflicts"][0]["field"] == "onset"


@pytest.mark.parametrize("fmt", ["narrative", "compact", "structured"])
def test_a_tiny_budget_still_keeps_the_header(fmt: str) -> None:
    result = render(STORY, fmt, 1)

    assert result.truncated
    assert "Type 2 diabetes mellitus" in result.content
    assert "Patient-Reported" in result.content  # named in what was left out
