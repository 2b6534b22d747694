"""Encounter files: `/encounters/{year}/{date}-{slug}.md`."""

from engine.models import Fact, FactKind
from vfs.doc import Doc, Item, Section, fields
from vfs.graph import PatientGraph, fact_date
from vfs.values import codes, conflict_items, day, measured, show, sources, sources_section

SAME_DAY_KINDS = (
    FactKind.CONDITION,
    FactKind.MEDICATION,
    FactKind.PROCEDURE,
    FactKind.IMMUNIZATION,
    FactKind.OBSERVATION,
)


def render_encounter(graph: PatientGraph, fact: Fact) -> Doc:
    """An encounter: when, what kind, why, where, and what else the record dates that day."""
    value = fact.fields.get
    date = day(fact_date(fact))
    sections = [Section("Source Discrepancies", conflict_items(fact))] if fact.conflicts else []
    sections += [
        Section(
            "Same Day",
            _same_day(graph, date),
            empty="Nothing else on record for this day.",
            note="Other records dated the same day (not necessarily from this encounter).",
        ),
        sources_section(fact),
    ]
    return Doc(
        path=graph.path_of(fact) or "",
        title=f"{fact.label} ({date or 'undated'})",
        fields=fields(
            ("Start", show(value("start"))),
            ("End", show(value("end"))),
            ("Class", show(value("class"))),
            ("Type", show(value("type"))),
            ("Status", fact.status),
            ("Reason", show(value("reason"))),
            ("Location", show(value("location"))),
            ("Provider", show(value("service_provider"))),
            ("Codes", codes(fact)),
            ("Sources", sources(fact)),
        ),
        sections=tuple(sections),
    )


def _same_day(graph: PatientGraph, date: str | None) -> tuple[Item, ...]:
    if date is None or len(date) != 10:
        return ()
    items: list[Item] = []
    for kind in SAME_DAY_KINDS:
        for fact in graph.facts(kind):
            if day(fact_date(fact)) == date:
                detail = measured(fact) if kind is FactKind.OBSERVATION else fact.status
                items.append(
                    Item(
                        title=fact.label,
                        link=graph.path_of(fact),
                        fields=fields(("Kind", kind.value), ("Detail", detail)),
                    )
                )
    return tuple(items)
