"""The LLM path end to end without a network, on both backends.

Recorded answers of a capable chat model (tests/data/llm_recorded: answers given to
exactly the prompt the code builds, from that prompt alone, never edited; and
tests/data/llm_recorded_again, the same prompts answered a second time) are replayed
by a loopback OpenAI-compatible endpoint. Each case goes prompt → parse → verify →
relate → write → VFS; its scores must stay at or above those measured when the answers
were recorded (`llm_recorded_scores.json` and `llm_recorded_again_scores.json`, written
by `python -m tests.integration.test_llm_recorded`).
A prompt change makes the endpoint answer 404, so these tests fail until the cases are
recorded again (tools/llm_fixtures.py).
"""

import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from api.evaluate import ScoreReport, run_case, run_in_store
from engine.memories.llm import LlmExtractor
from engine.memories.llm_prompt import PROMPT_VERSION
from engine.models import RelationshipType, Scope
from engine.store import GraphStore
from tests.llm_replay import RECORDED, RECORDED_AGAIN, recorded, replaying
from vfs.paths import read

CASES = Path(__file__).parent.parent / "data" / "eval"
FIXTURES = recorded()
RECORDINGS = {root.name: recorded(root) for root in (RECORDED, RECORDED_AGAIN)}
# Cases with a recorded conflict, read back through the VFS.
SHOWN = ("mts-711", "aci-D2N021")


@pytest.fixture(scope="module")
def endpoint() -> Iterator[tuple[str, list[str]]]:
    with replaying(FIXTURES) as served:
        yield served


def _floor_file(recording: str) -> Path:
    return RECORDED.parent / f"{recording}_scores.json"


def _floor(recording: str = RECORDED.name) -> dict[str, dict[str, float]]:
    return json.loads(_floor_file(recording).read_text("utf-8"))  # type: ignore[no-any-return]


def _measured(report: ScoreReport) -> dict[str, float]:
    return {
        "memories_f1": report.memories_overall.f1,
        "relationships_f1": report.relationships.f1,
        "conflicts_found": report.conflicts_found,
    }


@pytest.mark.parametrize("recording", sorted(RECORDINGS))
def test_at_least_twelve_cases_are_recorded_for_this_prompt(recording: str) -> None:
    fixtures = RECORDINGS[recording]
    assert len(fixtures) >= 12
    assert {f["prompt_version"] for f in fixtures.values()} == {PROMPT_VERSION}
    assert set(_floor(recording)) == set(fixtures)


@pytest.mark.parametrize(
    ("recording", "case"), [(r, c) for r in sorted(RECORDINGS) for c in sorted(RECORDINGS[r])]
)
def test_recorded_case_scores_hold(recording: str, case: str, store: GraphStore) -> None:
    fixture = {case: RECORDINGS[recording][case]}
    with replaying(fixture) as (url, served), LlmExtractor(url, "recorded") as llm:
        _, report = run_case(CASES / case, llm, store)
    assert len(served) == 1, "the prompt was not the recorded one"
    assert report.usage.calls == 1 and report.usage.prompt_tokens > 0
    floor = _floor(recording)[case]
    measured = _measured(report.scores)
    assert all(measured[k] >= floor[k] - 1e-9 for k in floor), (measured, floor)


@pytest.mark.parametrize("case", SHOWN)
def test_recorded_conflicts_reach_the_vfs(
    case: str, store: GraphStore, scope: Scope, endpoint: tuple[str, list[str]]
) -> None:
    url, _ = endpoint
    with LlmExtractor(url, "recorded") as llm:
        run_in_store(CASES / case, llm, store, scope)
    conflicts = [
        (record.memory, rel)
        for record in store.list_memories(scope)
        for rel in record.relationships
        if rel.type is RelationshipType.CONFLICTS
    ]
    assert conflicts
    assert all(
        rel.extractor.startswith((f"llm-chat {PROMPT_VERSION}", "offline-inference"))
        for _, rel in conflicts
    )
    adherence = read(store, scope, "/memory/adherence.md")
    symptom = read(store, scope, "/memory/symptom.md")
    text = getattr(adherence, "content", "") + getattr(symptom, "content", "")
    for memory, _ in conflicts:
        assert memory.evidence[0].quote[:20].lower() in text.lower()
    assert "conflicts" in text.lower()


# How other models quote a speech-recognised transcript: the tokenisation undone ("do n't"
# → "don't", "pain ." → "pain."), fillers and words said twice left out, a long quote
# shortened with an ellipsis.
_REWRITES = (
    (r" (n't|'s|'re|'ve|'ll|'m|'d)\b", r"\1"),
    (r" ([,.?!;:])", r"\1"),
    (r"\b(?:um+|uh+|uhm)\b[,.]? ?", ""),
    (r"\b(\w+)(?: \1\b)+", r"\1"),
)


def _as_other_models_quote(quote: str) -> str:
    for pattern, replacement in _REWRITES:
        quote = re.sub(pattern, replacement, quote, flags=re.IGNORECASE)
    words = quote.split(" ")
    return " ".join([*words[:4], "...", *words[-4:]]) if len(words) > 14 else quote


def _requoted(fixture: dict[str, Any]) -> dict[str, Any]:
    answer = json.loads(fixture["answer"])
    for memory in answer["memories"]:
        for quote in memory["quotes"]:
            quote["quote"] = _as_other_models_quote(quote["quote"])
    return {**fixture, "answer": json.dumps(answer)}


def test_quotes_written_as_other_models_write_them_score_as_recorded() -> None:
    spoken = {case: f for case, f in FIXTURES.items() if case.startswith("aci-")}
    requoted = {case: _requoted(f) for case, f in spoken.items()}
    assert sum(f != requoted[c] for c, f in spoken.items()) >= len(spoken) - 1
    floor = _floor()
    with replaying(requoted) as (url, _), LlmExtractor(url, "recorded") as llm:
        for case in sorted(requoted):
            _, report = run_case(CASES / case, llm)
            measured = _measured(report.scores)
            assert all(measured[k] >= floor[case][k] - 1e-9 for k in floor[case]), case


def write_floor() -> None:
    """Measures each recording's cases on SQLite and writes its floor file."""
    for recording, fixtures in sorted(RECORDINGS.items()):
        floor = {}
        with replaying(fixtures) as (url, _), LlmExtractor(url, "recorded") as llm:
            for case in sorted(fixtures):
                _, report = run_case(CASES / case, llm)
                floor[case] = _measured(report.scores)
        path = _floor_file(recording)
        path.write_text(json.dumps(floor, indent=1, sort_keys=True) + "\n", "utf-8")
        sys.stdout.write(f"wrote {path} ({len(floor)} cases)\n")


if __name__ == "__main__":
    write_floor()


def test_cce_eval_measures_an_endpoint(
    endpoint: tuple[str, list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    from typer.testing import CliRunner

    from api.cli import app as cli
    from engine.settings import get_settings

    url, _ = endpoint
    monkeypatch.setenv("CCE_LLM_BASE_URL", url)
    monkeypatch.setenv("CCE_LLM_MODEL", "recorded")
    get_settings.cache_clear()
    runner = CliRunner()
    cases = ["--case", "mts-711", "--case", "mts-789"]
    try:
        done = runner.invoke(cli, ["eval", str(CASES), "--extractor", "llm", *cases, "--json"])
        assert done.exit_code == 0, done.output
        report = json.loads(done.output)
        assert report["extractor"].startswith(f"llm-chat {PROMPT_VERSION}")
        assert [c["case"] for c in report["cases"]] == ["mts-711", "mts-789"]
        assert report["usage"]["calls"] == 2 and report["usage"]["prompt_tokens"] > 0
        unknown = runner.invoke(cli, ["eval", str(CASES), "--case", "nope"])
        assert unknown.exit_code == 2
        monkeypatch.setenv("CCE_LLM_BASE_URL", "http://127.0.0.1:9/v1")
        monkeypatch.setenv("CCE_LLM_MAX_RETRIES", "0")
        get_settings.cache_clear()
        down = runner.invoke(cli, ["eval", str(CASES), "--extractor", "llm", *cases])
        assert down.exit_code == 1 and "error:" in down.output
    finally:
        get_settings.cache_clear()
