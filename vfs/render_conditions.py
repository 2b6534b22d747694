"""Condition stories (`_story.md`) and their raw records (`_raw.json`)."""

from typing import Any

from engine.models import Fact, FactKind, FactLinkType, MemoryType
from vfs.budget import estimate_tokens
from vfs.doc import Doc, Item, Section, fields
from vfs.graph import PatientGraph, fact_date, lab_group, medication_folder
from vfs.monitoring import monitoring_loinc
from vfs.render_memory import reported_items, reported_section
from vfs.structured import dump
from vfs.values import (
    codes,
    conflict_items,
    day,
    discrepancies,
    measured,
    show,
    sources,
    sources_section,
)

RECENT = 3


def render_story(graph: PatientGraph, fact: Fact) -> Doc:
    """A condition's story: header, source discrepancies, treatment, labs, patient reports."""
    reported = reported_items(graph.about(fact.fact_key), (MemoryType.SYMPTOM,))
    disputed = sum(1 for item in reported if item.flag)
    sections = [Section("Source Discrepancies", conflict_items(fact))] if fact.conflicts else []
    sections += [
        Section(
            "Current Treatment",
            _treatment(graph, fact),
            empty="No medication linked.",
            note="Medications prescribed for this condition: current first, then discontinued.",
        ),
        _monitoring(graph, fact),
        reported_section(reported, "symptom reports"),
        sources_section(fact),
    ]
    return Doc(
        path=graph.path_of(fact) or "",
        title=fact.label,
        fields=fields(
            ("Status", fact.status or "not recorded"),
            ("Codes", codes(fact)),
            ("Onset", day(fact.fields.get("onset"))),
            ("Resolved", day(fact.fields.get("abatement"))),
            ("Severity", show(fact.fields.get("severity"))),
            ("Verification", show(fact.fields.get("verification_status"))),
            ("Recorded", day(fact.fields.get("recorded_date"))),
            ("Sources", sources(fact)),
            ("Discrepancies", discrepancies(len(fact.conflicts), disputed)),
        ),
        sections=tuple(sections),
    )


def _treatment(graph: PatientGraph, condition: Fact) -> tuple[Item, ...]:
    keys = graph.linked(condition.fact_key, FactLinkType.PRESCRIBED_FOR, outgoing=False)
    meds = [med for key in dict.fromkeys(keys) if (med := graph.fact(key)) is not None]
    meds.sort(key=lambda med: (medication_folder(med) != "current", med.label, med.fact_key))
    return tuple(
        Item(
            title=med.label,
            link=graph.path_of(med),
            fields=fields(
                ("Status", med.status),
                ("Dose", show(med.fields.get("dose"))),
                ("Frequency", show(med.fields.get("frequency"))),
                ("Since", day(med.fields.get("start"))),
                ("Until", day(med.fields.get("end"))),
            ),
        )
        for med in meds
    )


def _monitoring(graph: PatientGraph, condition: Fact) -> Section:
    key = condition.fact_key
    linked = graph.linked(key, FactLinkType.MONITORS, outgoing=False)
    linked += graph.linked(key, FactLinkType.MONITORS, outgoing=True)
    observations = [f for k in linked if (f := graph.fact(k)) and f.kind is FactKind.OBSERVATION]
    if observations:
        groups = list(dict.fromkeys(lab_group(f) for f in observations))
        note = "Labs linked to this condition in the record (MONITORS)."
    else:
        groups = [f"loinc:{code}" for code in monitoring_loinc(condition)]
        note = "Labs that usually monitor this condition (curated condition → LOINC table)."
    items = tuple(_lab_item(graph, g) for g in dict.fromkeys(groups) if g in graph.lab_groups)
    return Section("Monitoring Labs", items, empty="No monitoring lab on record.", note=note)


def _lab_item(graph: PatientGraph, group: str) -> Item:
    latest, *older = graph.lab_groups[group]
    previous = [f"{measured(f)} ({day(fact_date(f))})" for f in older[: RECENT - 1]]
    return Item(
        title=latest.label,
        link=f"/labs/{graph.lab_slugs[group]}.md",
        fields=fields(
            ("Latest", f"{measured(latest)} ({day(fact_date(latest)) or 'undated'})"),
            ("Interpretation", show(latest.fields.get("interpretation"))),
            ("Previous", "; ".join(previous)),
            ("Results on record", len(older) + 1),
        ),
    )


def raw_data(graph: PatientGraph, fact: Fact) -> dict[str, Any]:
    """`_raw.json`: the merged fact with every source and conflict record, and its links."""
    links = [
        link.model_dump(mode="json")
        for link in graph.links
        if fact.fact_key in (link.from_key, link.to_key)
    ]
    return {"fact": fact.model_dump(mode="json"), "links": links}


def cut_raw(data: dict[str, Any], budget: int) -> tuple[dict[str, Any], bool]:
    """Drops sources from the end of a raw record until it fits, saying how many went."""
    fact = data["fact"]
    sources_in = list(fact["sources"])
    dropped = 0
    while sources_in and estimate_tokens(dump(data, pretty=True)) > budget:
        sources_in.pop()
        dropped += 1
        data = {**data, "fact": {**fact, "sources": sources_in}}
    if dropped:
        data["truncated"] = {
            "budget": budget,
            "left_out": [{"section": "sources", "items": dropped}],
        }
    return data, bool(dropped)
