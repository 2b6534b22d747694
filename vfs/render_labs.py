"""Labs and other observations: `/labs/latest.md` and one trend file per lab."""

from engine.models import Fact
from vfs.doc import DISCREPANCY, Doc, Item, Section, fields
from vfs.graph import PatientGraph, fact_date
from vfs.values import codes, day, measured, number, show

CATEGORY_TITLES = {
    "laboratory": "Laboratory",
    "vital-signs": "Vital Signs",
    "survey": "Surveys",
    "social-history": "Social History",
    "exam": "Exam",
    "imaging": "Imaging",
    "procedure": "Procedure Results",
}
OTHER = "Other Observations"


def _category(fact: Fact) -> str:
    raw = show(fact.fields.get("category")) or ""
    first = raw.split(";", 1)[0].strip()
    if not first:
        return OTHER
    return CATEGORY_TITLES.get(first, first.replace("-", " ").title())


def _order(title: str) -> tuple[int, str]:
    known = list(CATEGORY_TITLES.values())
    return (known.index(title) if title in known else len(known) + (title == OTHER), title)


def render_latest(graph: PatientGraph) -> Doc:
    """The latest result of every lab and observation, grouped by category."""
    by_category: dict[str, list[Item]] = {}
    for group, facts in graph.lab_groups.items():
        latest = facts[0]
        item = Item(
            title=latest.label,
            link=f"/labs/{graph.lab_slugs[group]}.md",
            flag=DISCREPANCY if latest.conflicts else None,
            fields=fields(
                ("Value", measured(latest) or "-"),
                ("Date", day(fact_date(latest)) or "undated"),
                ("Interpretation", show(latest.fields.get("interpretation")) or ""),
                ("Results", len(facts)),
            ),
        )
        by_category.setdefault(_category(latest), []).append(item)
    sections = tuple(
        Section(
            title, tuple(sorted(items, key=lambda i: i.title.lower())), "table", first_column="Test"
        )
        for title, items in sorted(by_category.items(), key=lambda pair: _order(pair[0]))
    )
    results = sum(len(facts) for facts in graph.lab_groups.values())
    return Doc(
        path="/labs/latest.md",
        title="Latest results",
        fields=fields(("Tests", len(graph.lab_groups)), ("Results", results)),
        sections=sections or (Section("Results", empty="No observation on record."),),
    )


def _numbers(facts: list[Fact]) -> list[float]:
    return [v for f in facts if isinstance(v := f.fields.get("value"), int | float)]


def render_trend(graph: PatientGraph, group: str) -> Doc:
    """One lab's results over time, newest first, as a table."""
    facts = graph.lab_groups[group]
    latest = facts[0]
    values = _numbers(facts)
    rows = tuple(
        Item(
            title=day(fact_date(f)) or "undated",
            flag=DISCREPANCY if f.conflicts else None,
            fields=fields(
                ("Value", measured(f) or "-"),
                ("Interpretation", show(f.fields.get("interpretation")) or ""),
                ("Reference range", show(f.fields.get("reference_range")) or ""),
                ("Status", f.status or ""),
            ),
        )
        for f in facts
    )
    span = f"{number(min(values))} – {number(max(values))}" if len(values) > 1 else None
    return Doc(
        path=f"/labs/{graph.lab_slugs[group]}.md",
        title=latest.label,
        fields=fields(
            ("Codes", codes(latest)),
            ("Unit", show(latest.fields.get("unit"))),
            ("Category", show(latest.fields.get("category"))),
            ("Results", len(facts)),
            ("Latest", f"{measured(latest) or '-'} ({day(fact_date(latest)) or 'undated'})"),
            ("Range of values", span),
            ("First", day(fact_date(facts[-1]))),
        ),
        sections=(Section("Results", rows, "table", first_column="Date"),),
    )
