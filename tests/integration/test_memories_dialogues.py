"""The offline extractor over real doctor–patient dialogues (ACI-Bench validation set)."""

import pytest

from bench.memories import transcripts
from engine.memories.service import generate_memories
from engine.models import Role, Scope, Session
from engine.store import open_store


@pytest.mark.slow
def test_every_aci_bench_dialogue_is_read_without_error() -> None:
    store = open_store("sqlite:///:memory:")
    scope = Scope(org="o", patient="p")
    dialogues = transcripts()
    for i, messages in enumerate(dialogues):
        store.create_session(scope, Session(session_id=f"s{i}"))
        added = store.append_messages(scope, f"s{i}", messages)
        result = generate_memories(store, scope, f"s{i}")

        assert result.status == "ok"
        spoken = {m.message_id: m for m in added}
        for memory in result.memories:
            assert memory.speaker in {Role.PATIENT, Role.CAREGIVER}
            for e in memory.evidence:
                assert spoken[e.message_id].text[e.start : e.end] == e.quote
    assert len(dialogues) == 20
    assert len(store.list_memories(scope)) > 60
    store.close()
