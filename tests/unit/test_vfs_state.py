"""The current state per subject in /memory/adherence.md and /memory/symptom.md: derived
at read time from append-only memories, across sessions."""

from datetime import UTC, datetime

from engine.models import (
    Evidence,
    Memory,
    MemoryRecord,
    MemoryType,
    Relationship,
    RelationshipType,
    Role,
)
from vfs.render_state import state_section

METFORMIN = "medication:rxnorm:860975"


def _record(
    day: str, type: MemoryType, subject: str, linked: bool = False, **attributes: object
) -> MemoryRecord:
    at = datetime.fromisoformat(f"{day}T09:00:00+00:00").astimezone(UTC)
    text = f"said on {day}"
    memory = Memory(
        memory_id=f"mem-{day}-{subject}".replace(" ", "-"),
        session_id=f"s-{day}",
        type=type,
        text=text,
        subject=subject,
        evidence=(Evidence(message_id=f"s-{day}:1", quote=text, start=0, end=len(text)),),
        speaker=Role.PATIENT,
        attributes=attributes,
        confidence=0.8,
        extractor="test",
        extractor_version="1",
        created_at=at,
    )
    rels = (
        (
            Relationship(
                memory_id=memory.memory_id,
                fact_key=METFORMIN,
                type=RelationshipType.CONFLICTS,
                rationale="r",
                confidence=0.8,
                method="t",
            ),
        )
        if linked
        else ()
    )
    return MemoryRecord(memory=memory, relationships=rels)


def test_a_stopped_then_restarted_drug_reads_as_one_subject() -> None:
    newest_first = [
        _record(
            "2026-11-20", MemoryType.ADHERENCE, "glucophage", linked=True, behavior="as_prescribed"
        ),
        _record("2026-10-02", MemoryType.ADHERENCE, "metformin", linked=True, behavior="stopped"),
        _record(
            "2026-09-01", MemoryType.ADHERENCE, "metformin", linked=True, behavior="as_prescribed"
        ),
    ]
    section = state_section(newest_first, MemoryType.ADHERENCE)
    assert section is not None
    [item] = section.items
    assert item.title == "restarted as of 2026-11-20 · session s-2026-11-20"
    assert (
        dict(item.fields)["History"]
        == "taking 2026-09-01, stopped 2026-10-02, restarted 2026-11-20"
    )
    assert item.quote is not None and item.quote.parts == (("Subject", "glucophage"),)


def test_symptoms_group_by_their_words_and_say_gone_and_back() -> None:
    newest_first = [
        _record("2026-11-30", MemoryType.SYMPTOM, "headaches", present=True),
        _record("2026-11-01", MemoryType.SYMPTOM, "headache", present=False),
        _record("2026-10-01", MemoryType.SYMPTOM, "dizziness"),
    ]
    section = state_section(newest_first, MemoryType.SYMPTOM)
    assert section is not None
    titles = [item.title.split(" · ")[0] for item in section.items]
    assert titles == ["back as of 2026-11-30", "present as of 2026-10-01"]
    assert dict(section.items[0].fields)["History"] == "gone 2026-11-01, back 2026-11-30"


def test_concerns_and_preferences_have_no_state() -> None:
    assert state_section([], MemoryType.CONCERN) is None
