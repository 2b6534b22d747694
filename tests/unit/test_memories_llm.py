"""The LLM extractor against a fake OpenAI-compatible endpoint on 127.0.0.1 (no real network)."""

import json

import pytest
from pydantic import SecretStr

from engine.errors import EngineError
from engine.memories.extractor import Extraction, Usage
from engine.memories.llm import LlmExtractor
from engine.memories.service import generate_memories
from engine.memories.verify import accept
from engine.models import Fact, Memory, Message, Scope
from engine.settings import Settings
from tests.unit.fake_llm import FakeLLM, Reply, chat
from tests.unit.test_memories_builders import condition, conversation, medication
from tests.unit.test_memories_service import FakeStore

TURNS = conversation(
    ("provider", "How have you been doing with the metformin?"),
    ("patient", "I stopped taking the metformin about two weeks ago, it upset my stomach."),
    ("provider", "Any headaches?"),
    ("patient", "Yes."),
)
FACTS = [
    medication(
        "medication:rxnorm:860975", "Metformin 500 MG Oral Tablet", ref="MedicationRequest/m"
    ),
    condition("condition:snomed:44054006", "Type 2 diabetes mellitus"),
]
STOPPED = {
    "type": "adherence",
    "subject": "metformin",
    "text": "Stopped metformin.",
    "quotes": [{"message": 2, "quote": "I stopped taking the metformin about two weeks ago"}],
    "attributes": {"behavior": "stopped", "reason": "upset stomach"},
    "confidence": 0.9,
}
HEADACHE = {
    "type": "symptom",
    "subject": "headache",
    "text": "Has headaches.",
    "quotes": [{"message": 4, "quote": "Yes."}, {"message": 3, "quote": "Any headaches?"}],
}


def run(
    llm: LlmExtractor, messages: list[Message] = TURNS, facts: list[Fact] = FACTS
) -> list[Memory]:
    return accept(llm.extract(messages, facts).candidates, messages, llm.name, llm.version)


def summary(memories: list[Memory]) -> list[tuple[str, str, list[str]]]:
    return [(m.type.value, m.subject, [e.quote for e in m.evidence]) for m in memories]


# -- what is sent ----------------------------------------------------------------------


def test_the_request_carries_guideline_transcript_record_and_key(
    fake: FakeLLM, llm: LlmExtractor
) -> None:
    fake.replies = [chat('{"memories": []}')]
    assert run(llm) == []
    [(path, headers, body)] = fake.requests
    assert path == "/v1/chat/completions"
    assert headers["Authorization"] == "Bearer sk-test"
    assert body["model"] == "test-model" and body["temperature"] == 0
    system, user = body["messages"]
    assert system["role"] == "system" and user["role"] == "user"
    guideline = ("adherence", "preference", "family history", "hypotheticals", "yes or no")
    assert all(words in system["content"] for words in guideline)
    assert "exact, character-for-character copies" in system["content"]
    assert "[2] patient: I stopped taking the metformin" in user["content"]
    assert "[3] provider: Any headaches?" in user["content"]
    assert "F2 medication: Metformin 500 MG Oral Tablet | status: current" in user["content"]
    assert "condition:snomed" not in user["content"]


def test_no_messages_no_request(fake: FakeLLM, llm: LlmExtractor) -> None:
    fake.replies = [chat("{}")]
    assert llm.extract([], FACTS) == Extraction([]) and fake.requests == []


# -- answers as models give them ---------------------------------------------------------


@pytest.mark.parametrize(
    "content",
    [
        "```json\n" + json.dumps({"memories": [STOPPED, HEADACHE]}, indent=2) + "\n```",
        "Here is what I found:\n" + json.dumps({"memories": [STOPPED, HEADACHE]}) + "\nDone.",
        json.dumps({"memories": [STOPPED, HEADACHE]}, indent=1).replace("}\n", "},\n"),
        json.dumps([STOPPED, HEADACHE]),
    ],
    ids=["fenced", "prose-wrapped", "trailing-commas", "bare-list"],
)
def test_wrapped_answers_yield_the_same_memories(
    fake: FakeLLM, llm: LlmExtractor, content: str
) -> None:
    fake.replies = [chat(content)]
    memories = run(llm)
    assert summary(memories) == [
        ("adherence", "metformin", ["I stopped taking the metformin about two weeks ago"]),
        ("symptom", "headache", ["Any headaches?", "Yes."]),
    ]
    assert {m.extractor for m in memories} == {"llm-chat"}
    assert memories[0].attributes["behavior"] == "stopped"


def test_a_truncated_answer_keeps_whole_items(fake: FakeLLM, llm: LlmExtractor) -> None:
    body = json.dumps({"memories": [STOPPED, HEADACHE]})
    fake.replies = [chat(body[: body.index('"Any headaches?"')], finish="length")]
    assert summary(run(llm)) == [
        ("adherence", "metformin", ["I stopped taking the metformin about two weeks ago"])
    ]
    assert llm.last_call is not None and llm.last_call.truncated and llm.last_call.items == 1


def test_hallucinated_quotes_and_foreign_types_are_refused(
    fake: FakeLLM, llm: LlmExtractor
) -> None:
    invented = {**STOPPED, "quotes": [{"message": 2, "quote": "I never liked metformin"}]}
    diagnosis = {**HEADACHE, "type": "diagnosis"}
    fake.replies = [chat(json.dumps({"memories": [invented, diagnosis, HEADACHE]}))]
    assert summary(run(llm)) == [("symptom", "headache", ["Any headaches?", "Yes."])]


def test_an_answer_without_json_is_an_error(fake: FakeLLM, llm: LlmExtractor) -> None:
    fake.replies = [chat("I'm sorry, I can't help with that.")]
    with pytest.raises(EngineError, match="held no JSON"):
        run(llm)
    assert llm.usage == Usage(120, 30, 1)


# -- retries -----------------------------------------------------------------------------


def test_429_then_success_waits_as_told(
    fake: FakeLLM, llm: LlmExtractor, waits: list[float]
) -> None:
    fake.replies = [Reply(429, {"error": "slow down"}, {"Retry-After": "7"}), chat("[]")]
    assert run(llm) == []
    assert waits == [7.0] and len(fake.requests) == 2
    assert llm.last_call is not None and llm.last_call.attempts == 2


def test_retry_after_is_capped(fake: FakeLLM, waits: list[float]) -> None:
    fake.replies = [Reply(503, "busy", {"Retry-After": "3600"}), chat("[]")]
    with LlmExtractor(fake.base_url, "m", max_backoff_s=5, sleep=waits.append) as llm:
        assert llm.extract(TURNS, []).candidates == []
    assert waits == [5.0]


def test_persistent_500_gives_up_after_bounded_retries(
    fake: FakeLLM, llm: LlmExtractor, waits: list[float]
) -> None:
    fake.replies = [Reply(500, {"error": "boom"})]
    with pytest.raises(EngineError, match=r"failed 3 times; last: HTTP 500") as error:
        run(llm)
    assert len(fake.requests) == 3 and len(waits) == 2
    assert 0.5 <= waits[0] <= 1 <= waits[1] <= 2  # doubling from 1s, with jitter
    assert "sk-test" not in str(error.value)
    assert llm.usage == Usage()


def test_a_client_error_is_not_retried(fake: FakeLLM, llm: LlmExtractor) -> None:
    fake.replies = [Reply(401, {"error": {"message": "bad key"}})]
    with pytest.raises(EngineError, match="refused the request: HTTP 401"):
        run(llm)
    assert len(fake.requests) == 1


def test_a_timeout_is_retried_then_reported(fake: FakeLLM, waits: list[float]) -> None:
    slow = Reply(body={"choices": []}, delay=1.5)
    fake.replies = [slow, chat(json.dumps([HEADACHE]))]
    with LlmExtractor(fake.base_url, "m", timeout_s=0.5, sleep=waits.append) as llm:
        assert [m.subject for m in run(llm)] == ["headache"]
        assert llm.last_call is not None and llm.last_call.attempts == 2
        fake.replies = [slow]
        with pytest.raises(EngineError, match=r"failed 3 times; last: no answer within 0.5s"):
            llm.extract(TURNS, [])


# -- usage -------------------------------------------------------------------------------


def test_usage_per_call_and_in_total(fake: FakeLLM, llm: LlmExtractor) -> None:
    fake.replies = [chat("[]", 100, 20), chat("[]", 50, 5)]
    first = llm.extract(TURNS, FACTS)
    second = llm.extract(TURNS, FACTS)
    assert (first.usage, second.usage) == (Usage(100, 20, 1), Usage(50, 5, 1))
    assert llm.usage == Usage(150, 25, 2) and llm.usage.total_tokens == 175


def test_missing_usage_counts_nothing(fake: FakeLLM, llm: LlmExtractor) -> None:
    reply = chat("[]")
    reply.body.pop("usage")
    fake.replies = [reply]
    assert llm.extract(TURNS, []).usage == Usage(0, 0, 1)


# -- settings and the service ------------------------------------------------------------


def test_built_from_settings(fake: FakeLLM) -> None:
    settings = Settings(
        llm_base_url=fake.base_url,
        llm_model="from-env",
        llm_api_key=SecretStr("k"),
        llm_timeout_s=3,
        llm_max_retries=0,
    )
    with LlmExtractor.from_settings(settings) as llm:
        assert (llm.model, llm.max_retries, llm.timeout_s) == ("from-env", 0, 3)
    with pytest.raises(EngineError, match="CCE_LLM_BASE_URL"):
        LlmExtractor.from_settings(Settings(llm_base_url="", llm_model="m"))


def test_the_service_writes_memories_and_relationships(fake: FakeLLM, llm: LlmExtractor) -> None:
    fake.replies = [chat(json.dumps({"memories": [STOPPED]}))]
    store = FakeStore(TURNS, FACTS)
    result = generate_memories(store, Scope(org="o", patient="p"), "s1", llm)  # type: ignore[arg-type]
    assert [m.subject for m in result.memories] == ["metformin"]
    assert [(r.fact_key, r.type.value) for r in result.relationships] == [
        ("medication:rxnorm:860975", "conflicts")
    ]
    assert store.session.processed_through == 4


def test_the_service_writes_nothing_when_the_endpoint_keeps_failing(
    fake: FakeLLM, llm: LlmExtractor
) -> None:
    fake.replies = [Reply(502, "bad gateway")]
    store = FakeStore(TURNS, FACTS)
    with pytest.raises(EngineError):
        generate_memories(store, Scope(org="o", patient="p"), "s1", llm)  # type: ignore[arg-type]
    assert store.batches == [] and store.session.processed_through == 0
