"""How values read in the VFS: dates, numbers, codes, sources, conflicts."""

import re
from collections import Counter
from datetime import datetime

from engine.matching import describe
from engine.models import Fact, FieldConflict, FieldValue, Source
from vfs.doc import DISCREPANCY, Item, Section, fields

SYSTEM_NAMES = {
    "snomed": "SNOMED CT",
    "icd10cm": "ICD-10-CM",
    "icd10": "ICD-10",
    "icd9cm": "ICD-9-CM",
    "rxnorm": "RxNorm",
    "loinc": "LOINC",
    "cvx": "CVX",
    "ndc": "NDC",
    "cpt": "CPT",
    "unii": "UNII",
}
_ISO_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}")
_LONG_DECIMAL = re.compile(r"\d+\.\d{3,}")
# Observation components known by LOINC code (blood pressure panels), in reading order.
COMPONENT_NAMES = {"8480-6": "systolic", "8462-4": "diastolic"}


def day(value: FieldValue) -> str | None:
    """The day of an ISO date or date-time (`2020-08-24T05:41:52Z` → `2020-08-24`)."""
    if value is None:
        return None
    text = str(value)
    return text[:10] if _ISO_DAY.match(text) else text


def when(moment: datetime) -> str:
    """A stored (UTC) time to the minute: `2024-03-02 10:15 UTC`."""
    return moment.strftime("%Y-%m-%d %H:%M UTC")


def number(value: float) -> str:
    """A measured value without float noise: at most 2 decimals, 4 digits when small."""
    if value != 0 and abs(value) < 0.01:
        return f"{value:.4g}"
    return f"{value:.2f}".rstrip("0").rstrip(".")


def show(value: FieldValue) -> str | None:
    """A field value as text; None when there is nothing to show."""
    if value is None or value == "" or value == []:
        return None
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return number(value)
    if isinstance(value, list):
        return ", ".join(value)
    return str(value)


def measured(fact: Fact) -> str | None:
    """An observation's value with its unit."""
    value = show(fact.fields.get("value"))
    unit = show(fact.fields.get("unit"))
    if value is not None:
        return f"{value} {unit}" if unit else value
    components = [
        f"{_component(name.removeprefix('component:'))} {_LONG_DECIMAL.sub(_round, str(part))}"
        for name, part in sorted(fact.fields.items(), key=_component_order)
        if name.startswith("component:") and part is not None
    ]
    return "; ".join(components) or show(fact.fields.get("data_absent"))


def _component(code: str) -> str:
    return COMPONENT_NAMES.get(code, code)


def _component_order(pair: tuple[str, FieldValue]) -> tuple[int, str]:
    code = pair[0].removeprefix("component:")
    names = list(COMPONENT_NAMES)
    return (names.index(code) if code in names else len(names), code)


def _round(match: re.Match[str]) -> str:
    return number(float(match.group()))


def codes(fact: Fact) -> str | None:
    """`SNOMED CT 44054006, ICD-10-CM E11.9`."""
    return ", ".join(f"{SYSTEM_NAMES.get(c.system, c.system)} {c.code}" for c in fact.codes) or None


def source_name(source: Source) -> str:
    """`fhir Condition/abc from bundle.json`: format, resource and the file it came from."""
    origin = source.label.rstrip("/").rsplit("/", 1)[-1]
    return f"{source.format.value} {source.resource_type}/{source.resource_id} from {origin}"


def sources(fact: Fact) -> str | None:
    """How many sources a fact has, by format: `3 (fhir 2, cda 1)`."""
    if not fact.sources:
        return None
    counts = Counter(source.format.value for source in fact.sources)
    by_format = ", ".join(f"{name} {count}" for name, count in sorted(counts.items()))
    return f"{len(fact.sources)} ({by_format})"


def sources_section(fact: Fact) -> Section:
    """`## Sources`: every source of a fact, the one whose values are shown first."""
    merges = {m.source_ref: describe(m) for m in fact.merged_by}
    return Section(
        "Sources",
        tuple(source_item(source, merges.get(source.source_ref)) for source in fact.sources),
    )


def source_item(source: Source, merged_by: str | None = None) -> Item:
    """A source as an item: where from, which version, when ingested, why it joined."""
    return Item(
        title=source_name(source),
        fields=fields(
            ("File", source.label),
            ("Version", source.version),
            ("Last updated", when(source.last_updated) if source.last_updated else None),
            ("Ingested", when(source.ingested_at)),
            ("Reliability", number(source.reliability)),
            ("Merged by", merged_by),
        ),
    )


def conflict_item(conflict: FieldConflict, sources_by_ref: dict[str, Source]) -> Item:
    """A field on which the sources disagree, marked as a discrepancy."""

    def origin(ref: str) -> str:
        source = sources_by_ref.get(ref)
        return source_name(source) if source else ref

    others = [
        f"{show(value)} ({origin(ref)})"
        for value, ref in conflict.values
        if ref != conflict.winner_source
    ]
    return Item(
        title=f"Sources disagree on {conflict.field}",
        flag=DISCREPANCY,
        fields=fields(
            ("Shown", f"{show(conflict.winner)} ({origin(conflict.winner_source)})"),
            ("Also asserted", "; ".join(others)),
            ("Rule", conflict.strategy),
        ),
    )


def conflict_items(fact: Fact) -> tuple[Item, ...]:
    """One discrepancy item per disputed field of a fact."""
    by_ref = {source.source_ref: source for source in fact.sources}
    return tuple(conflict_item(conflict, by_ref) for conflict in fact.conflicts)


def discrepancies(among_sources: int, reported: int) -> str | None:
    """The header line that counts a fact's discrepancies, if it has any."""
    parts = []
    if among_sources:
        parts.append(f"{among_sources} field(s) disputed among sources")
    if reported:
        parts.append(f"{reported} patient report(s) conflict with the record")
    return "; ".join(parts) or None
