"""`/timeline.md`: dated events of the record and of conversations, newest first.

It ends with "At a glance", a per-year strip of encounters, condition onsets and sessions
drawn as text bars (one block per event, capped), readable in any markdown viewer.
"""

from collections import defaultdict
from dataclasses import dataclass

from engine.models import Fact, FactKind, FieldValue
from vfs.doc import Doc, Item, Section, fields
from vfs.graph import PatientGraph
from vfs.render_memory import TITLES
from vfs.values import day, measured

# (kind, date field, what happened), for the facts that are events.
EVENTS = (
    (FactKind.CONDITION, "onset", "Condition began"),
    (FactKind.CONDITION, "abatement", "Condition resolved"),
    (FactKind.MEDICATION, "start", "Medication started"),
    (FactKind.MEDICATION, "end", "Medication ended"),
    (FactKind.ALLERGY, "onset", "Allergy began"),
    (FactKind.PROCEDURE, "performed", "Procedure"),
    (FactKind.PROCEDURE, "date", "Procedure"),
    (FactKind.IMMUNIZATION, "occurrence", "Immunization"),
    (FactKind.IMMUNIZATION, "date", "Immunization"),
    (FactKind.ENCOUNTER, "start", "Encounter"),
)
SHOWN_RESULTS = 5
# The at-a-glance strip: one row per year, a bar per kind of event, one block each (capped).
GLANCE = ((FactKind.ENCOUNTER, "start", "Encounters"), (FactKind.CONDITION, "onset", "Conditions"))
LANES = tuple(label for _, _, label in GLANCE) + ("Sessions",)
BAR, BAR_MAX = "■", 12


@dataclass(frozen=True)
class _Event:
    moment: str
    item: Item


def _is_date(value: FieldValue) -> bool:
    return isinstance(value, str) and len(value) >= 4 and value[:4].isdigit()


def _fact_events(graph: PatientGraph) -> list[_Event]:
    events: list[_Event] = []
    for kind, name, what in EVENTS:
        for fact in graph.facts(kind):
            moment = fact.fields.get(name)
            if _is_date(moment):
                item = Item(title=f"{day(moment)} · {what}: {fact.label}", link=graph.path_of(fact))
                events.append(_Event(str(moment), item))
    return events


def _result_events(graph: PatientGraph) -> list[_Event]:
    by_day: dict[str, list[Fact]] = defaultdict(list)
    for fact in graph.facts(FactKind.OBSERVATION):
        moment = fact.fields.get("effective")
        if _is_date(moment):
            by_day[str(day(moment))].append(fact)
    events = []
    for date, facts in by_day.items():
        facts.sort(key=lambda f: (f.label.lower(), f.fact_key))
        shown = [f"{f.label} {measured(f) or ''}".strip() for f in facts[:SHOWN_RESULTS]]
        more = len(facts) - len(shown)
        item = Item(
            title=f"{date} · Results: {len(facts)}",
            link="/labs/latest.md",
            fields=fields(("Results", "; ".join(shown) + (f"; and {more} more" if more else ""))),
        )
        events.append(_Event(date, item))
    return events


def _memory_events(graph: PatientGraph) -> list[_Event]:
    return [
        _Event(
            record.memory.created_at.isoformat(),
            Item(
                title=f"{day(record.memory.created_at.isoformat())} · "
                f"{TITLES[record.memory.type]} (session {record.memory.session_id})",
                link=f"/memory/{record.memory.type.value}.md",
            ),
        )
        for record in graph.memories
    ]


def _bar(count: int) -> str:
    if not count:
        return "·"
    return BAR * min(count, BAR_MAX) + ("+" if count > BAR_MAX else "") + f" {count}"


def glance(graph: PatientGraph) -> dict[str, dict[str, int]]:
    """Year → {"Encounters", "Conditions", "Sessions"} → count, newest year first."""
    counts: dict[str, dict[str, int]] = defaultdict(lambda: dict.fromkeys(LANES, 0))
    for kind, name, label in GLANCE:
        for fact in graph.facts(kind):
            moment = fact.fields.get(name)
            if _is_date(moment):
                counts[str(moment)[:4]][label] += 1
    for session in graph.sessions:
        counts[str(session.created_at.year)]["Sessions"] += 1
    return {year: counts[year] for year in sorted(counts, reverse=True)}


def _glance(graph: PatientGraph) -> Section | None:
    """Per year, how many encounters, condition onsets and sessions, as text bars."""
    rows = tuple(
        Item(title=year, fields=tuple((label, _bar(n)) for label, n in counts.items()))
        for year, counts in glance(graph).items()
    )
    return Section("At a glance", rows, "table", first_column="Year") if rows else None


def render_timeline(graph: PatientGraph) -> Doc:
    """Dated events, newest first, one section per year."""
    events = _fact_events(graph) + _result_events(graph) + _memory_events(graph)
    events.sort(key=lambda e: e.item.title)
    events.sort(key=lambda e: e.moment, reverse=True)
    by_year: dict[str, list[Item]] = {}
    for event in events:
        by_year.setdefault(event.moment[:4], []).append(event.item)
    return Doc(
        path="/timeline.md",
        title="Timeline",
        note="Dated events of the record and of conversations, newest first.",
        fields=fields(("Events", len(events))),
        # The strip comes last, so a token budget still spends itself on the newest events.
        sections=(
            tuple(Section(year, tuple(items)) for year, items in by_year.items())
            or (Section("Events", empty="No dated event on record."),)
        )
        + tuple(s for s in [_glance(graph)] if s),
    )
