"""The current state of each subject in `/memory/symptom.md` and `/memory/adherence.md`.

A patient talks to agents many times; what a clinician needs first is where each subject
stands now: the latest statement, then how it got there ("stopped 2026-10-02, restarted
2026-11-20"). Subjects are grouped at read time and nothing stored changes: adherence
memories by the medication facts they are linked to (relate matched them by ingredient,
brand or generic), else by subject; symptom memories by the subject's words. The subject
itself is patient-derived text and stays in the quote block.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from engine.memories.mentions import singular
from engine.memories.text import words
from engine.models import MemoryRecord, MemoryType, RelationshipType
from vfs.doc import DISCREPANCY, Item, Quote, Section

_TAKING = {
    "as_prescribed": "taking",
    "missed_doses": "missing doses",
    "changed_dose": "changed the dose",
}
_OFF = {"stopped": "stopped", "never_started": "never started", "ran_out": "ran out"}


@dataclass(frozen=True)
class SubjectState:
    """Where one subject stands: the latest statement's state, when, and how it got there."""

    subject: str  # patient-derived: quote and escape it wherever it is shown
    now: str
    at: datetime
    session: str
    history: tuple[str, ...]
    statements: int
    conflicting: bool


def subject_states(records: Sequence[MemoryRecord], type: MemoryType) -> list[SubjectState]:
    """One state per subject of `records` (most recent first), subjects said about most
    recently first; none for concerns and preferences."""
    if type not in (MemoryType.SYMPTOM, MemoryType.ADHERENCE):
        return []
    groups: dict[tuple[str, ...], list[MemoryRecord]] = {}
    for record in records:
        if record.memory.type is type:
            groups.setdefault(_subject_key(record), []).append(record)
    return [_summary(list(reversed(group))) for group in groups.values()]


def state_section(records: Sequence[MemoryRecord], type: MemoryType) -> Section | None:
    """ "Current state": one item per subject, the subject said about most recently first."""
    if type not in (MemoryType.SYMPTOM, MemoryType.ADHERENCE):
        return None
    items = tuple(
        Item(
            title=f"{s.now} as of {s.at:%Y-%m-%d} · session {s.session}",
            fields=(("History", ", ".join(s.history)), ("Statements", str(s.statements))),
            flag=DISCREPANCY if s.conflicting else None,
            quote=Quote(parts=(("Subject", s.subject),)),
        )
        for s in subject_states(records, type)
    )
    return Section(
        "Current state",
        items,
        empty="None.",
        note="Per subject: the latest statement first, then how it changed over sessions.",
    )


def _summary(history: list[MemoryRecord]) -> SubjectState:
    """One subject; `history` oldest first. A statement that repeats the state before it
    adds no step ("stopped 2026-10-02, restarted 2026-11-20", not every "taking")."""
    steps: list[str] = []
    now = ""
    before: str | None = None
    for record in history:
        now = _state(record, before)
        if now != before:
            steps.append(f"{now} {record.memory.created_at:%Y-%m-%d}")
        before = _state(record, None)
    latest = history[-1]
    return SubjectState(
        subject=latest.memory.subject,
        now=now,
        at=latest.memory.created_at,
        session=latest.memory.session_id,
        history=tuple(steps),
        statements=len(history),
        conflicting=any(r.type is RelationshipType.CONFLICTS for r in latest.relationships),
    )


def _state(record: MemoryRecord, before: str | None) -> str:
    """What the statement says of its subject, against the state before it."""
    memory = record.memory
    if memory.type is MemoryType.ADHERENCE:
        behaviour = str(memory.attributes.get("behavior", "as_prescribed"))
        if behaviour in _OFF:
            return _OFF[behaviour]
        if memory.attributes.get("pattern") == "as_needed":
            return "taking as needed"
        taking = _TAKING.get(behaviour, "taking")
        return "restarted" if before in _OFF.values() and taking == "taking" else taking
    present = memory.attributes.get("present", True) is not False
    if not present:
        return "gone"
    return "back" if before == "gone" else "present"


def _subject_key(record: MemoryRecord) -> tuple[str, ...]:
    if record.memory.type is MemoryType.ADHERENCE:
        meds = sorted(
            {r.fact_key for r in record.relationships if r.fact_key.startswith("medication:")}
        )
        if meds:
            return ("fact", *meds)
    return ("words", *sorted({singular(w) for w in words(record.memory.subject)}))
