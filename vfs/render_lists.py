"""One-file lists: `/allergies.md`, `/immunizations.md`, `/procedures.md`."""

from engine.models import Fact, FactKind
from vfs.doc import DISCREPANCY, Doc, Fields, Item, Section, fields
from vfs.graph import PatientGraph, fact_date
from vfs.values import codes, day, show

INACTIVE_ALLERGY = frozenset({"inactive", "resolved", "refuted"})


def newest_first(facts: list[Fact]) -> list[Fact]:
    """Dated facts newest first, undated ones last, ties by key."""
    dated = sorted((f for f in facts if fact_date(f)), key=lambda f: f.fact_key)
    dated.sort(key=lambda f: fact_date(f) or "", reverse=True)
    return dated + sorted((f for f in facts if not fact_date(f)), key=lambda f: f.fact_key)


def fact_item(fact: Fact, details: Fields, link: str | None = None) -> Item:
    """A fact as an item, marked when its sources disagree on some field."""
    disputed = ", ".join(c.field for c in fact.conflicts)
    return Item(
        title=fact.label,
        link=link,
        flag=DISCREPANCY if fact.conflicts else None,
        fields=details
        + fields(
            ("Codes", codes(fact)),
            ("Sources", len(fact.sources)),
            ("Sources disagree on", disputed),
        ),
    )


def _allergy(fact: Fact) -> Item:
    value = fact.fields.get
    return fact_item(
        fact,
        fields(
            ("Status", fact.status),
            ("No known allergy", "yes" if value("no_known") else None),
            ("Category", show(value("category"))),
            ("Type", show(value("type"))),
            ("Criticality", show(value("criticality"))),
            ("Reactions", show(value("reactions"))),
            ("Onset", day(value("onset"))),
            ("Verification", show(value("verification_status"))),
        ),
    )


def render_allergies(graph: PatientGraph) -> Doc:
    """Allergies and intolerances: active ones first."""
    facts = sorted(graph.facts(FactKind.ALLERGY), key=lambda f: (f.label.lower(), f.fact_key))
    active = [f for f in facts if (f.status or "active") not in INACTIVE_ALLERGY]
    other = [f for f in facts if f not in active]
    return Doc(
        path="/allergies.md",
        title="Allergies and intolerances",
        fields=fields(("Active", len(active)), ("Inactive or resolved", len(other))),
        sections=(
            Section("Active", tuple(map(_allergy, active)), empty="No active allergy on record."),
            Section("Inactive or Resolved", tuple(map(_allergy, other)), empty="None."),
        ),
    )


def _immunization(fact: Fact) -> Item:
    value = fact.fields.get
    return fact_item(
        fact,
        fields(
            ("Date", day(value("occurrence") or value("date"))),
            ("Status", fact.status),
            ("Not done because", show(value("status_reason") or value("not_done_reason"))),
            ("Route", show(value("route"))),
            ("Site", show(value("site"))),
            ("Lot", show(value("lot_number"))),
        ),
    )


def render_immunizations(graph: PatientGraph) -> Doc:
    """Immunizations, newest first."""
    facts = newest_first(graph.facts(FactKind.IMMUNIZATION))
    return Doc(
        path="/immunizations.md",
        title="Immunizations",
        fields=fields(("Immunizations", len(facts))),
        sections=(Section("Immunizations", tuple(map(_immunization, facts))),),
    )


def _procedure(fact: Fact) -> Item:
    value = fact.fields.get
    return fact_item(
        fact,
        fields(
            ("Date", day(value("performed") or value("date"))),
            ("Ended", day(value("performed_end"))),
            ("Status", fact.status),
            ("Reason", show(value("reason"))),
            ("Body site", show(value("body_site"))),
            ("Outcome", show(value("outcome"))),
            ("Status reason", show(value("status_reason"))),
        ),
    )


def render_procedures(graph: PatientGraph) -> Doc:
    """Procedures, newest first."""
    facts = newest_first(graph.facts(FactKind.PROCEDURE))
    return Doc(
        path="/procedures.md",
        title="Procedures",
        fields=fields(("Procedures", len(facts))),
        sections=(Section("Procedures", tuple(map(_procedure, facts))),),
    )
