"""The current state of each subject in `/memory/symptom.md` and `/memory/adherence.md`.

A patient talks to agents many times; what a clinician needs first is where each subject
stands now: the latest statement, then how it got there ("stopped 2026-10-02, restarted
2026-11-20"). Subjects are grouped at read time and nothing stored changes: adherence
memories by the medication facts they are linked to (relate matched them by ingredient,
brand or generic), else by subject; symptom memories by the subject's words. The subject
itself is patient-derived text and stays in the quote block.
"""

import re
from collections.abc import Sequence

from engine.models import MemoryRecord, MemoryType, RelationshipType
from vfs.doc import DISCREPANCY, Item, Quote, Section

_TAKING = {
    "as_prescribed": "taking",
    "missed_doses": "missing doses",
    "changed_dose": "changed the dose",
}
_OFF = {"stopped": "stopped", "never_started": "never started", "ran_out": "ran out"}
_WORD = re.compile(r"[a-z0-9]+")


def state_section(records: Sequence[MemoryRecord], type: MemoryType) -> Section | None:
    """ "Current state": one item per subject, the subject said about most recently first."""
    if type not in (MemoryType.SYMPTOM, MemoryType.ADHERENCE):
        return None
    groups: dict[tuple[str, ...], list[MemoryRecord]] = {}
    for record in records:  # most recent first
        groups.setdefault(_subject_key(record), []).append(record)
    items = tuple(_item(list(reversed(group))) for group in groups.values())
    return Section(
        "Current state",
        items,
        empty="None.",
        note="Per subject: the latest statement first, then how it changed over sessions.",
    )


def _item(history: list[MemoryRecord]) -> Item:
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
    conflicting = any(r.type is RelationshipType.CONFLICTS for r in latest.relationships)
    return Item(
        title=f"{now} as of {latest.memory.created_at:%Y-%m-%d} · session"
        f" {latest.memory.session_id}",
        fields=(("History", ", ".join(steps)), ("Statements", str(len(history)))),
        flag=DISCREPANCY if conflicting else None,
        quote=Quote(parts=(("Subject", latest.memory.subject),)),
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
    return ("words", *sorted({_stem(w) for w in _WORD.findall(record.memory.subject.lower())}))


def _stem(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word
