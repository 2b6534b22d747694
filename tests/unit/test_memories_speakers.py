"""A transcript whose patient and provider labels are the wrong way round is read swapped."""

import json
from pathlib import Path

from engine.memories.service import GenerateResult, generate_memories
from engine.memories.speakers import labels_swapped
from engine.models import NewMessage, Role, Scope, Session
from engine.sqlite_store import SqliteStore
from ingest.pipeline import Ingestor, read_bytes
from tests.unit.test_memories_builders import conversation

CASE = Path(__file__).parents[1] / "data" / "eval-fresh" / "a" / "aci-D2N011"
SWAP = {"patient": "provider", "provider": "patient"}


def generated(tmp_path: Path, swap: bool) -> GenerateResult:
    store = SqliteStore(str(tmp_path / f"swap-{swap}.db"))
    scope = Scope(org="o", patient="p")
    record = (CASE / "record.json").read_bytes()
    Ingestor(store, scope.org, patient=scope.patient).feed("record", read_bytes(record, "record"))
    store.create_session(scope, Session(session_id="s"))
    turns = json.loads((CASE / "transcript.json").read_text("utf-8"))["turns"]
    roles = [SWAP.get(t["role"], t["role"]) if swap else t["role"] for t in turns]
    messages = [NewMessage(role=Role(r), text=t["text"]) for r, t in zip(roles, turns, strict=True)]
    store.append_messages(scope, "s", messages)
    try:
        return generate_memories(store, scope, "s")
    finally:
        store.close()


def said(result: GenerateResult) -> set[tuple[str, str, tuple[str, ...]]]:
    return {(m.type.value, m.subject, tuple(e.quote for e in m.evidence)) for m in result.memories}


def test_a_transcript_labelled_the_wrong_way_round_gives_the_same_memories(
    tmp_path: Path,
) -> None:
    as_labelled, flipped = generated(tmp_path, swap=False), generated(tmp_path, swap=True)
    assert not as_labelled.labels_swapped and flipped.labels_swapped
    assert as_labelled.memories and said(flipped) == said(as_labelled)
    assert all(m.speaker == "patient" for m in flipped.memories)
    edges = {(r.type, r.fact_key) for r in as_labelled.relationships}
    assert {(r.type, r.fact_key) for r in flipped.relationships} == edges


def test_a_short_exchange_or_a_patient_asking_a_few_questions_is_read_as_labelled() -> None:
    short = conversation(("patient", "what should i do about it ?"), ("provider", "rest ."))
    assert not labels_swapped(short)
    asking = conversation(
        *[("provider", "how is the knee doing ?"), ("patient", "better , thanks .")] * 6,
        *[("provider", "any swelling ?"), ("patient", "will i need surgery ?")] * 3,
    )
    assert not labels_swapped(asking)
