"""The LLM extractor's proposals through verify and relate, incremental sessions, and
conversations longer than the input budget, against the fake endpoint on 127.0.0.1."""

import json
import re
from typing import Any

from engine.memories.llm import LlmExtractor
from engine.memories.offline import OfflineExtractor
from engine.memories.relate import INFERENCE
from engine.memories.service import generate_memories
from engine.memories.verify import METHOD_PROPOSED
from engine.models import Scope
from tests.unit.fake_llm import FakeLLM, Reply, chat
from tests.unit.test_memories_builders import conversation
from tests.unit.test_memories_llm import FACTS, HEADACHE, STOPPED, TURNS
from tests.unit.test_memories_service import FakeStore

SCOPE = Scope(org="o", patient="p")
METFORMIN, DIABETES = (f.fact_key for f in FACTS)


def answer(*items: dict[str, Any]) -> str:
    return json.dumps({"memories": list(items)})


def test_the_record_is_numbered_with_status_and_dose(fake: FakeLLM, llm: LlmExtractor) -> None:
    fake.replies = [chat(answer())]
    llm.extract(TURNS, FACTS)
    user = fake.bodies()[0]["messages"][1]["content"]
    assert "F1 condition: Type 2 diabetes mellitus | status: active" in user
    assert re.search(r"F2 medication: Metformin 500 MG Oral Tablet \| status: \w+", user)


def test_proposals_are_verified_before_they_are_written(fake: FakeLLM, llm: LlmExtractor) -> None:
    # a type however inflected is one of the three; another word is none of them
    proposals = [
        {"fact": 2, "type": "Conflict", "why": "stopped an active medication"},
        {"fact": "F2", "type": "corroborates", "why": "a second type for the same pair"},
        {"fact": 1, "type": "conflicts", "why": "an adherence memory never links a condition"},
        {"fact": 99, "type": "enriches", "why": "no such fact"},
        {"fact": 2, "type": "contradicts", "why": "not one of the three types"},
    ]
    fake.replies = [chat(answer({**STOPPED, "relationships": proposals}))]
    result = generate_memories(FakeStore(TURNS, FACTS), SCOPE, "s1", llm)  # type: ignore[arg-type]
    [rel] = result.relationships
    assert (rel.fact_key, rel.type.value) == (METFORMIN, "conflicts")
    assert rel.rationale == "stopped an active medication"
    assert rel.method == METHOD_PROPOSED and rel.extractor == f"llm-chat {llm.version}"


def test_a_conflict_the_model_missed_is_added_by_the_inference(
    fake: FakeLLM, llm: LlmExtractor
) -> None:
    fake.replies = [chat(answer({**STOPPED, "relationships": []}))]
    result = generate_memories(FakeStore(TURNS, FACTS), SCOPE, "s1", llm)  # type: ignore[arg-type]
    [rel] = result.relationships
    assert (rel.fact_key, rel.type.value, rel.extractor) == (METFORMIN, "conflicts", INFERENCE)


SUGARS_SAID = conversation(
    ("provider", "How is the diabetes?"),
    ("patient", "My sugars have been running in the 200s every morning."),
    ("provider", "And the metformin?"),
    ("patient", "I stopped taking the metformin about two weeks ago."),
)


def sugars(*proposals: dict[str, Any]) -> dict[str, Any]:
    quote = {"message": 2, "quote": "My sugars have been running in the 200s"}
    return {
        "type": "symptom",
        "subject": "blood sugar",
        "quotes": [quote],
        "relationships": [*proposals],
    }


def test_the_models_type_stands_and_non_conflicts_it_did_not_propose_are_dropped(
    fake: FakeLLM, llm: LlmExtractor
) -> None:
    # the inference reads the sugars as enriching the diabetes
    fake.replies = [
        chat(answer(sugars())),
        chat(answer(sugars({"fact": 1, "type": "corroborates"}))),
    ]
    said = SUGARS_SAID[:2]
    dropped = generate_memories(FakeStore(said, FACTS), SCOPE, "s1", llm)  # type: ignore[arg-type]
    assert dropped.relationships == []
    stands = generate_memories(FakeStore(said, FACTS), SCOPE, "s1", llm)  # type: ignore[arg-type]
    assert [(r.fact_key, r.type.value) for r in stands.relationships] == [
        (DIABETES, "corroborates")
    ]


def test_a_discrepancy_the_offline_reading_finds_in_the_same_adherence_statement_overrules(
    fake: FakeLLM, llm: LlmExtractor
) -> None:
    stopped = {
        **STOPPED,
        "quotes": [{"message": 4, "quote": "I stopped taking the metformin"}],
        "relationships": [{"fact": 2, "type": "enriches", "why": "the model's judgement"}],
    }
    fake.replies = [chat(answer(stopped))]
    result = generate_memories(FakeStore(SUGARS_SAID, FACTS), SCOPE, "s1", llm)  # type: ignore[arg-type]
    [rel] = result.relationships
    assert (rel.fact_key, rel.type.value, rel.extractor) == (METFORMIN, "conflicts", INFERENCE)
    assert rel.memory_id == result.memories[0].memory_id
    assert rel.rationale.startswith("the offline reading of the same statement: ")


def test_how_a_recorded_drug_is_taken_the_model_left_out_comes_from_the_offline_reading(
    fake: FakeLLM, llm: LlmExtractor
) -> None:
    fake.replies = [chat(answer(sugars({"fact": 1, "type": "enriches"})))]
    result = generate_memories(FakeStore(SUGARS_SAID, FACTS), SCOPE, "s1", llm)  # type: ignore[arg-type]
    added = [m for m in result.memories if m.type.value == "adherence"]
    assert [(m.subject, m.extractor) for m in added] == [("metformin", OfflineExtractor.name)]
    [rel] = [r for r in result.relationships if r.memory_id == added[0].memory_id]
    assert (rel.fact_key, rel.type.value, rel.extractor) == (METFORMIN, "conflicts", INFERENCE)
    # said by the model already (by another name, or sharing a quote): not again
    stopped = {**STOPPED, "subject": "glucophage", "quotes": [{"message": 4, "quote": "I stopped"}]}
    fake.replies = [chat(answer(stopped))]
    again = generate_memories(FakeStore(SUGARS_SAID, FACTS), SCOPE, "s1", llm)  # type: ignore[arg-type]
    assert [m.subject for m in again.memories] == ["glucophage"]


def test_earlier_messages_are_shown_as_processed_and_yield_nothing(
    fake: FakeLLM, llm: LlmExtractor
) -> None:
    store = FakeStore(TURNS, FACTS)
    store.session = store.session.model_copy(update={"processed_through": 3})
    fake.replies = [chat(answer(STOPPED, HEADACHE))]
    result = generate_memories(store, SCOPE, "s1", llm)  # type: ignore[arg-type]
    user = fake.bodies()[0]["messages"][1]["content"]
    earlier, new = user.split("New messages (take memories from these only):")
    assert "already processed" in earlier and "[3] provider: Any headaches?" in earlier
    assert "[4] patient: Yes." in new and "[3]" not in new
    # the stop was said in message 2, before the watermark: not learned twice
    assert [m.subject for m in result.memories] == ["headache"]
    assert result.usage.calls == 1 and result.usage.prompt_tokens == 120


def test_a_long_conversation_is_read_in_overlapping_parts_and_merged(fake: FakeLLM) -> None:
    filler = "we talked about the weather and the drive over here for a while. " * 6
    roles = ("provider", "patient") * 12
    turns = [(role, f"Turn {n}: {filler}") for n, role in enumerate(roles, start=1)]
    turns[13] = ("patient", "Turn 14: I stopped taking the metformin about two weeks ago.")
    said = conversation(*turns)
    stopped = {**STOPPED, "quotes": [{"message": 14, "quote": "I stopped taking the metformin"}]}
    fake.replies = [chat(answer(stopped), prompt=900, completion=50)]
    with LlmExtractor(fake.base_url, "m", input_budget_tokens=2_000, overlap_messages=4) as llm:
        result = generate_memories(FakeStore(said, FACTS), SCOPE, "s1", llm)  # type: ignore[arg-type]
    bodies = [b["messages"][1]["content"] for b in fake.bodies()]
    assert len(bodies) >= 3
    assert all(len(b) <= 2_000 * 4 for b in bodies)
    assert all("already processed" in b for b in bodies[1:])
    # messages are numbered from 1 in each part; the turn numbers say which they are
    shown = [set(map(int, re.findall(r"\] \w+: Turn (\d+):", b))) for b in bodies]
    assert set().union(*shown) == set(range(1, 25))
    assert all(len(a & b) >= 4 for a, b in zip(shown, shown[1:], strict=False))
    # every part that shows message 14 reports the stop: one memory, one relationship
    assert [m.subject for m in result.memories] == ["metformin"]
    assert [r.fact_key for r in result.relationships] == [METFORMIN]
    assert result.usage.calls == len(bodies) and result.usage.prompt_tokens == 900 * len(bodies)


def test_a_model_that_refuses_a_temperature_is_asked_again_without_one(fake: FakeLLM) -> None:
    refused = Reply(
        400,
        {
            "error": {
                "message": "Unsupported value: 'temperature' does not support 0 with this model."
            }
        },
    )
    fake.replies = [refused, chat(answer(STOPPED))]
    with LlmExtractor(fake.base_url, "reasoning-model") as llm:
        result = generate_memories(FakeStore(TURNS, FACTS), SCOPE, "s1", llm)  # type: ignore[arg-type]
        again = llm.extract(TURNS, FACTS)
    first, second, third = fake.bodies()
    assert first["temperature"] == 0 and "temperature" not in second
    assert "temperature" not in third and again.usage.calls == 1
    assert [m.subject for m in result.memories] == ["metformin"]


def test_fact_numbers_are_read_however_the_model_writes_them(
    fake: FakeLLM, llm: LlmExtractor
) -> None:
    proposals = [
        {"fact_number": "F2 (Metformin 500 MG Oral Tablet)", "type": "Conflicts", "why": "a"},
    ]
    fake.replies = [chat(answer({**STOPPED, "relationships": proposals}))]
    result = generate_memories(FakeStore(TURNS, FACTS), SCOPE, "s1", llm)  # type: ignore[arg-type]
    assert [(r.fact_key, r.type.value) for r in result.relationships] == [(METFORMIN, "conflicts")]
