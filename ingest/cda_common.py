"""What every C-CDA entry mapper shares: templates, the mapping result, claim building."""

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from engine.models import Claim, Coding, FactKind, FactLink, FieldValue
from ingest.cda_xml import (
    Element,
    Narrative,
    attr,
    code_label,
    codings,
    every,
    first,
    flat_text,
    meaningful,
    person_name,
    templates,
)
from ingest.keys import DATED, fact_key
from ingest.matching import match_keys

CCDA = "2.16.840.1.113883.10.20.22.4."
CCD1 = "2.16.840.1.113883.10.20.1."  # CCD R1 / HITSP C32 entries, still in older exports


def _t(*ids: str) -> frozenset[str]:
    return frozenset(ids)


PROBLEM_OBS = _t(CCDA + "4", CCD1 + "28")
ALLERGY_OBS = _t(CCDA + "7", CCD1 + "18")
MED_ACTIVITY = _t(CCDA + "16", CCD1 + "24")
IMMUNIZATION = _t(CCDA + "52", CCD1 + "24")
REFUSAL = _t(CCDA + "53")
STATUS_OBS = _t(CCDA + "6", CCDA + "28", CCD1 + "39", CCD1 + "47", CCD1 + "50", CCD1 + "57")
REACTION = _t(CCDA + "9", CCD1 + "54")
CRITICALITY = _t(CCDA + "145")
STATUS_LOINC = "33999-4"
# Text-only entries that say nothing is there: "No Encounters Indicated", "None", "NKDA".
_PLACEHOLDER = re.compile(r"(?:none|nka|nkda|nkfa|n/a)\b|no\s", re.IGNORECASE)

# Problem / allergy / medication status observation values (SNOMED CT).
STATUS_CODES = {
    "55561003": "active",
    "73425007": "inactive",
    "421139008": "inactive",  # no longer active
    "392521001": "inactive",  # history of
    "413322009": "resolved",
    "385655000": "inactive",  # suspended
}


class Skip(Exception):
    """A statement that yields no claim; the message becomes a warning Problem."""


@dataclass(frozen=True)
class Context:
    """Document-wide facts an entry mapper needs."""

    narrative: Narrative
    doc_date: str | None  # the document's effectiveTime, normalised


@dataclass
class Mapped:
    """What one entry yields: claims, links, and warnings for the parts that were skipped."""

    resource_type: str
    claims: list[Claim] = field(default_factory=list)
    links: list[FactLink] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


Mapper = Callable[[Element, Context], Mapped]


def make_claim(
    kind: FactKind,
    codes: tuple[Coding, ...],
    label: str,
    status: str | None,
    fields: Mapping[str, FieldValue],
    date: str | None = None,
) -> Claim:
    """A claim keyed by `fact_key` (dated kinds on `date`, as the FHIR reader); None dropped."""
    return Claim(
        fact_key=fact_key(kind, codes, label, date if kind in DATED else None),
        kind=kind,
        label=label,
        status=status,
        codes=codes,
        fields={k: v for k, v in fields.items() if v is not None and v != []},
        match_keys=match_keys(kind, codes, label, date),
    )


def placeholder(label: str, codes: tuple[Coding, ...]) -> bool:
    """An uncoded entry whose text only says that there is nothing to record."""
    return not codes and _PLACEHOLDER.match(label.strip()) is not None


def decimal(text: str) -> str:
    """A decimal without a pointless fraction ("1.0" → "1"), as the FHIR reader writes it."""
    try:
        number = float(text)
    except ValueError:
        return text
    return str(int(number)) if number.is_integer() and abs(number) < 1e15 else text


def require_label(what: str, codes: tuple[Coding, ...], *candidates: str | None) -> str:
    """The first usable label (else the first code), refusing empty and placeholder entries.

    Raises:
        Skip: neither code nor text, or text such as "No Encounters Indicated".
    """
    label = next((c for c in candidates if c), None) or (codes[0].code if codes else None)
    if label is None:
        raise Skip(f"{what} with neither code nor text skipped")
    if placeholder(label, codes):
        raise Skip(f"{what} {label!r} records nothing; skipped")
    return label


def statements(entry: Element, wanted: frozenset[str]) -> list[Element]:
    """The outermost statements under `entry` that carry one of the `wanted` templates."""
    found: list[Element] = []

    def walk(el: Element) -> None:
        for child in el:
            if not isinstance(child.tag, str):
                continue
            if templates(child) & wanted:
                found.append(child)
            else:
                walk(child)

    walk(entry)
    return found


def top(entry: Element) -> Element | None:
    """The clinical statement an `<entry>` holds."""
    return next((c for c in entry if isinstance(c.tag, str)), None)


def negated(el: Element) -> bool:
    return attr(el, "negationInd") == "true"


def status_code(el: Element | None) -> str | None:
    code = attr(first(el, "h:statusCode"), "code")
    return code.lower() if code else None


def status_observation(el: Element) -> str | None:
    """`active`, `inactive` or `resolved` from a nested status observation, if any."""
    for obs in every(el, "h:entryRelationship/h:observation"):
        if not (templates(obs) & STATUS_OBS or attr(first(obs, "h:code"), "code") == STATUS_LOINC):
            continue
        value = first(obs, "h:value")
        if word := STATUS_CODES.get(attr(value, "code") or ""):
            return word
        display = (attr(value, "displayName") or "").lower()
        for word in ("inactive", "resolved", "active"):
            if word in display:
                return word
    return None


def statement_text(el: Element, ctx: Context) -> str | None:
    """The statement's own `<text>`, resolved into the section narrative."""
    return meaningful(ctx.narrative.text(first(el, "h:text")))


def product(sa: Element, ctx: Context, what: str) -> tuple[tuple[Coding, ...], str]:
    """The codes and label of the drug or vaccine a substanceAdministration gives.

    Raises:
        Skip: (from `require_label`) when it has neither code nor text.
    """
    material = first(sa, "h:consumable/h:manufacturedProduct/h:manufacturedMaterial")
    code = first(material, "h:code")
    codes = codings(code)
    label = require_label(
        what,
        codes,
        code_label(code, ctx.narrative),
        meaningful(flat_text(first(material, "h:name"))),
        statement_text(sa, ctx),
    )
    return codes, label


def author_name(el: Element | None) -> str | None:
    for name in every(el, "h:author/h:assignedAuthor/h:assignedPerson/h:name"):
        if found := person_name(name):
            return found
    return None
