"""Medication files: `/medications/{current|discontinued}/{slug}`."""

from engine.models import Fact, FactKind, FactLinkType, MemoryType
from vfs.doc import Doc, Item, Section, fields
from vfs.graph import PatientGraph
from vfs.render_memory import reported_items, reported_section
from vfs.values import codes, conflict_items, day, discrepancies, show, sources, sources_section


def render_medication(graph: PatientGraph, fact: Fact) -> Doc:
    """A medication: status, dosage, dates, prescriber, what it is for, patient reports."""
    reported = reported_items(graph.about(fact.fact_key), (MemoryType.ADHERENCE,))
    disputed = sum(1 for item in reported if item.flag)
    value = fact.fields.get
    sections = [Section("Source Discrepancies", conflict_items(fact))] if fact.conflicts else []
    sections += [
        Section("Prescribed For", _indications(graph, fact), empty="No condition linked."),
        reported_section(reported, "adherence reports"),
        sources_section(fact),
    ]
    return Doc(
        path=graph.path_of(fact) or "",
        title=fact.label,
        fields=fields(
            ("Status", fact.status or "not recorded"),
            ("Status in the record", show(value("raw_status"))),
            ("Codes", codes(fact)),
            ("Dose", show(value("dose"))),
            ("Route", show(value("route"))),
            ("Frequency", show(value("frequency"))),
            ("Started", day(value("start"))),
            ("Ended", day(value("end"))),
            ("Prescriber", show(value("prescriber"))),
            ("Reason", show(value("reason"))),
            ("Quantity", show(value("quantity"))),
            ("Sources", sources(fact)),
            ("Discrepancies", discrepancies(len(fact.conflicts), disputed)),
        ),
        sections=tuple(sections),
    )


def _indications(graph: PatientGraph, medication: Fact) -> tuple[Item, ...]:
    keys = graph.linked(medication.fact_key, FactLinkType.PRESCRIBED_FOR, outgoing=True)
    conditions = [
        fact
        for key in dict.fromkeys(keys)
        if (fact := graph.fact(key)) is not None and fact.kind is FactKind.CONDITION
    ]
    return tuple(
        Item(title=c.label, link=graph.path_of(c), fields=fields(("Status", c.status)))
        for c in conditions
    )
