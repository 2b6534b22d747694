"""`/patient.md` (demographics, counts, open discrepancies) and `/sources.md`."""

from collections import Counter
from collections.abc import Iterable

from engine.models import Fact, FactKind, RelationshipType, Source
from vfs.doc import DISCREPANCY, Doc, Item, Section, fields
from vfs.graph import PatientGraph, condition_folder, medication_folder
from vfs.values import when


def _counted(counter: Counter[str]) -> str:
    return ", ".join(f"{count} {name}" for name, count in sorted(counter.items())) or "none"


def _record_items(graph: PatientGraph) -> tuple[Item, ...]:
    conditions = Counter(condition_folder(f) for f in graph.facts(FactKind.CONDITION))
    medications = Counter(medication_folder(f) for f in graph.facts(FactKind.MEDICATION))
    results = len(graph.facts(FactKind.OBSERVATION))
    memories = Counter(r.memory.type.value for r in graph.memories)

    def item(title: str, link: str, count: str) -> Item:
        return Item(title=title, link=link, fields=(("On record", count),))

    return (
        item("Conditions", "/conditions/", _counted(conditions)),
        item("Medications", "/medications/", _counted(medications)),
        item("Allergies", "/allergies.md", str(len(graph.facts(FactKind.ALLERGY)))),
        item("Labs", "/labs/latest.md", f"{len(graph.lab_groups)} tests, {results} results"),
        item("Immunizations", "/immunizations.md", str(len(graph.facts(FactKind.IMMUNIZATION)))),
        item("Procedures", "/procedures.md", str(len(graph.facts(FactKind.PROCEDURE)))),
        item("Encounters", "/encounters/", str(len(graph.facts(FactKind.ENCOUNTER)))),
        item("Conversations", "/memory/", f"{len(graph.sessions)} sessions; {_counted(memories)}"),
    )


def _discrepancies(graph: PatientGraph) -> tuple[Item, ...]:
    reported = [
        Item(
            title=f"Patient report conflicts with the record: {fact.label}",
            flag=DISCREPANCY,
            link=graph.path_of(fact),
            fields=(
                (
                    "Reported",
                    f"{when(record.memory.created_at)}, session {record.memory.session_id}",
                ),
            ),
            links=(
                (f"{record.memory.type.value} memory", f"/memory/{record.memory.type.value}.md"),
            ),
        )
        for record in graph.memories
        for rel in record.relationships
        if rel.type is RelationshipType.CONFLICTS
        and not record.dismissed
        and (fact := graph.fact(rel.fact_key))
    ]
    disputed = [
        Item(
            title=f"Sources disagree on {', '.join(c.field for c in fact.conflicts)}: {fact.label}",
            flag=DISCREPANCY,
            link=graph.path_of(fact),
            fields=(("Kind", fact.kind.value),),
        )
        for fact in graph.all_facts()
        if fact.conflicts
    ]
    demographics = [
        Item(
            title=f"Documents disagree on the {c.field}",
            flag=DISCREPANCY,
            fields=(("Kept", f"{c.winner} (from {c.winner_source})"),),
        )
        for c in graph.patient.conflicts
    ]
    return tuple(reported + disputed + demographics)


def render_patient(graph: PatientGraph) -> Doc:
    """Who the patient is, what the record holds, and what disagrees."""
    patient = graph.patient
    return Doc(
        path="/patient.md",
        title=patient.name or f"Patient {graph.scope.patient}",
        fields=fields(
            ("Patient id", graph.scope.patient),
            ("Name", patient.name),
            ("Born", patient.birth_date),
            ("Gender", patient.gender),
            ("Identifiers", "; ".join(patient.identifiers)),
        ),
        sections=(
            Section("Record", _record_items(graph)),
            Section(
                "Open Discrepancies",
                _discrepancies(graph),
                empty="None.",
                note="Patient reports that conflict with the record first, then disputed fields.",
            ),
        ),
    )


def _sources(facts: Iterable[Fact]) -> dict[str, tuple[Source, int]]:
    found: dict[str, tuple[Source, int]] = {}
    for fact in facts:
        for source in fact.sources:
            count = found.get(source.source_ref, (source, 0))[1]
            found[source.source_ref] = (source, count + 1)
    return found


def _file_item(label: str, entries: list[tuple[Source, int]]) -> Item:
    sources = [source for source, _ in entries]
    ingested = sorted(source.ingested_at for source in sources)
    updated = [source.last_updated for source in sources if source.last_updated]
    first, last = when(ingested[0]), when(ingested[-1])
    span = first if first == last else f"{first} to {last}"
    return Item(
        title=label,
        fields=fields(
            ("Format", ", ".join(sorted({source.format.value for source in sources}))),
            ("Resources", _counted(Counter(source.resource_type for source in sources))),
            ("Facts asserted", sum(count for _, count in entries)),
            ("Ingested", span),
            ("Last updated", when(max(updated)) if updated else None),
        ),
    )


def render_sources(graph: PatientGraph) -> Doc:
    """What was ingested, when and from where, one item per input file."""
    facts = graph.all_facts()
    found = _sources(facts)
    by_label: dict[str, list[tuple[Source, int]]] = {}
    for ref in sorted(found):
        by_label.setdefault(found[ref][0].label, []).append(found[ref])
    formats = Counter(source.format.value for source, _ in found.values())
    return Doc(
        path="/sources.md",
        title="Sources",
        note="Every ingested resource or entry that asserts a fact, grouped by input.",
        fields=fields(
            ("Sources", len(found)),
            ("Inputs", len(by_label)),
            ("Formats", _counted(formats)),
            ("Merges", _counted(Counter(m.layer.value for f in facts for m in f.merged_by))),
        ),
        sections=(
            Section(
                "Inputs", tuple(_file_item(label, by_label[label]) for label in sorted(by_label))
            ),
            Section(
                "Resolution Candidates",
                _candidates(graph),
                empty="None.",
                note="Claims that matched more than one fact: maybe one thing, not merged.",
            ),
        ),
    )


def _candidates(graph: PatientGraph) -> tuple[Item, ...]:
    return tuple(
        Item(
            title=candidate.label,
            flag=DISCREPANCY,
            link=graph.path_of(fact),
            fields=fields(
                ("In", fact.label),
                ("Also matches", "; ".join(_label(graph, key) for key in candidate.fact_keys)),
                ("Source", candidate.source_ref),
            ),
        )
        for fact in graph.all_facts()
        for candidate in fact.candidates
    )


def _label(graph: PatientGraph, fact_key: str) -> str:
    fact = graph.fact(fact_key)
    return fact.label if fact is not None else fact_key
