"""generate_memories: one write per message range, nothing twice."""

from collections.abc import Sequence

from engine.memories.service import generate_memories
from engine.models import Batch, Fact, Message, Scope, Session, WriteResult
from tests.unit.test_memories_builders import SESSION, condition, conversation

SCOPE = Scope(org="o", patient="p")


class FakeStore:
    """The four store calls the service makes, in memory."""

    def __init__(self, messages: Sequence[Message], facts: Sequence[Fact]) -> None:
        self.messages = list(messages)
        self.facts = list(facts)
        self.session = Session(session_id=SESSION)
        self.batches: list[Batch] = []

    def get_session(self, scope: Scope, session_id: str) -> Session:
        return self.session

    def list_messages(self, scope: Scope, session_id: str, after: int = 0) -> list[Message]:
        return [m for m in self.messages if m.seq > after]

    def list_facts(self, scope: Scope) -> list[Fact]:
        return self.facts

    def is_memory_paused(self, scope: Scope) -> bool:
        return False

    def write(self, scope: Scope, batch: Batch) -> WriteResult:
        assert batch.watermark is not None
        assert batch.watermark.expected == self.session.processed_through
        self.session = self.session.model_copy(update={"processed_through": batch.watermark.new})
        self.batches.append(batch)
        return WriteResult(memories_added=len(batch.memories))


def test_memories_relationships_and_watermark_are_written_together_once() -> None:
    store = FakeStore(
        conversation(
            ("provider", "How is your asthma?"),
            ("patient", "My asthma has been acting up every night this week."),
        ),
        [condition("condition:snomed:195967001", "Asthma")],
    )
    first = generate_memories(store, SCOPE, SESSION)  # type: ignore[arg-type]
    assert first.status == "ok" and first.processed_through == 2
    assert [m.subject for m in first.memories] == ["asthma"]
    assert [r.type.value for r in first.relationships] == ["enriches"]
    [batch] = store.batches
    assert batch.memories and batch.relationships and batch.watermark is not None

    again = generate_memories(store, SCOPE, SESSION)  # type: ignore[arg-type]
    assert again.status == "nothing-new" and again.memories == []
    assert len(store.batches) == 1


def test_only_new_messages_yield_memories_but_earlier_questions_give_context() -> None:
    messages = conversation(("patient", "I have a headache."), ("provider", "Any nausea?"))
    store = FakeStore(messages, [])
    generate_memories(store, SCOPE, SESSION)  # type: ignore[arg-type]
    store.messages += conversation(("provider", "x"), ("provider", "y"), ("patient", "Yes."))[2:]
    result = generate_memories(store, SCOPE, SESSION)  # type: ignore[arg-type]
    assert [m.subject for m in result.memories] == ["nausea"]
    assert {e.quote for e in result.memories[0].evidence} == {"Yes.", "Any nausea?"}


def test_a_new_statement_of_a_symptom_said_before_is_a_new_memory() -> None:
    """The earlier messages only give context: what the new ones say again about a
    symptom is not folded into the memory written before, and so lost."""
    back = condition("condition:text:lbp", "Low back pain", ref="Condition/b")
    messages = conversation(
        ("patient", "My back hurts a lot."), ("provider", "Any back pain today?")
    )
    store = FakeStore(messages, [back])
    [before] = generate_memories(store, SCOPE, SESSION).memories  # type: ignore[arg-type]
    assert before.attributes["present"] is True
    store.messages += conversation(
        ("provider", "x"), ("provider", "y"), ("patient", "No, not today.")
    )[2:]
    [now] = generate_memories(store, SCOPE, SESSION).memories  # type: ignore[arg-type]
    assert now.subject == "back pain" and now.attributes["present"] is False
    assert {e.quote for e in now.evidence} == {"No, not today.", "Any back pain today?"}
