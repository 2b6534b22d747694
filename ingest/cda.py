"""C-CDA (R2.1, and the R1.1 / CCD exports still in the wild) → records and problems.

One `Source` per section entry, with the claims of every clinical statement it holds:
conditions, medications, allergies, results and vital signs, immunizations, procedures
and encounters, with the kinds, statuses and field names the FHIR reader uses so facts
merge across formats. Other sections (plan of care, social history...) are not read.

Statuses, first match wins:

- condition: `resolved` with an effectiveTime/high; else as its Problem Status
  observation says (inactive and resolved → `resolved`); else `resolved` for a
  completed or aborted concern act; else `active`.
- medication: `discontinued` with statusCode aborted/cancelled/nullified/suspended, an
  end on or before the document date, or a Medication Status observation other than
  active; else `current` (exporters send `completed` for current prescriptions). The
  statusCode is kept in `raw_status`.
- allergy: `resolved` with an effectiveTime/high; else the Allergy Status observation
  (`active`, `inactive`, `resolved`); else concern act completed → `resolved`,
  suspended/aborted → `inactive`; else `active`.
- observation (FHIR vocabulary): statusCode completed → `final`, active → `preliminary`,
  aborted/cancelled → `cancelled`.
- immunization: negationInd="true" → `not-done` (with `status_reason`); else `completed`.
- procedure: negationInd="true" → `not-done`; statusCode completed → `completed`,
  active → `in-progress`, aborted → `stopped`.
- encounter: statusCode completed → `finished`, active → `in-progress`.

Negated problem observations and medications (refused, "no medications") are warnings,
not claims; negated allergies are `no_known` claims.
"""

import hashlib
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from lxml import etree

from engine.models import Claim, Source, SourceClaims, SourceFormat
from ingest.cda_common import Context, Mapper, top
from ingest.cda_concerns import map_allergy, map_problem
from ingest.cda_events import (
    map_encounter,
    map_immunization,
    map_procedure,
    map_result,
    map_vital_signs,
)
from ingest.cda_medications import map_medication
from ingest.cda_patient import cda_patient, cda_patient_ref, patient_system
from ingest.cda_xml import (
    HL7,
    Element,
    MalformedXml,
    Narrative,
    UnsafeXml,
    attr,
    element_path,
    every,
    first,
    ii,
    instance_id,
    local,
    parse_ts,
    parse_xml,
    templates,
    ts_instant,
)
from ingest.records import Problem, Record

__all__ = ["cda_patient", "cda_patient_ref", "read_cda", "section_kind"]

SECTION = "2.16.840.1.113883.10.20.22.2."
CCD1 = "2.16.840.1.113883.10.20.1."


@dataclass(frozen=True)
class SectionKind:
    name: str
    mapper: Mapper
    template_ids: frozenset[str]
    loinc: frozenset[str]  # section codes, for sections without a known templateId


def _kind(name: str, mapper: Mapper, ids: list[str], loinc: list[str]) -> SectionKind:
    return SectionKind(name, mapper, frozenset(ids), frozenset(loinc))


SECTION_KINDS = (
    _kind("problems", map_problem, [SECTION + "5", SECTION + "5.1", CCD1 + "11"], ["11450-4"]),
    _kind(
        "medications",
        map_medication,
        # Discharge medications (2.11) hold Medication Activities inside a wrapping act.
        [SECTION + "1", SECTION + "1.1", CCD1 + "8", SECTION + "11", SECTION + "11.1"],
        ["10160-0", "10183-2"],
    ),
    _kind("allergies", map_allergy, [SECTION + "6", SECTION + "6.1", CCD1 + "2"], ["48765-2"]),
    _kind("results", map_result, [SECTION + "3", SECTION + "3.1", CCD1 + "14"], ["30954-2"]),
    _kind(
        "vital signs", map_vital_signs, [SECTION + "4", SECTION + "4.1", CCD1 + "16"], ["8716-3"]
    ),
    _kind(
        "immunizations", map_immunization, [SECTION + "2", SECTION + "2.1", CCD1 + "6"], ["11369-6"]
    ),
    _kind("procedures", map_procedure, [SECTION + "7", SECTION + "7.1", CCD1 + "12"], ["47519-4"]),
    _kind("encounters", map_encounter, [SECTION + "22", SECTION + "22.1", CCD1 + "3"], ["46240-8"]),
)


def read_cda(
    data: bytes | str | os.PathLike[str], label: str, patient_key: str | None = None
) -> Iterator[Record | Problem]:
    """Read one C-CDA document.

    Args:
        data: the document's bytes, or the path of a file holding them.
        label: the source label (a file name, an upload name) put on every Source and Problem.
        patient_key: `None`/"id" for the default patient reference (see `cda_patient_ref`),
            or "identifier:SYSTEM": the extension of the recordTarget id whose root is the
            OID SYSTEM (`urn:oid:` allowed), as the FHIR readers take a Patient identifier.

    Yields:
        First a `Record` carrying the `Patient` (no source), then one `Record` per usable
        entry of the problem, medication, allergy, result, vital-sign, immunization,
        procedure and encounter sections. Unusable input (unreadable, malformed, DOCTYPE or
        entity declarations, not a ClinicalDocument, no patient) gives a single error
        `Problem` and nothing else; skipped entries and empty sections give warnings
        located by line and element path (`index`: the entry's ordinal among those read).

    Raises:
        InvalidInput: the patient_key is malformed (raised at once, not when iterating).
    """
    return _read(data, label, patient_system(patient_key))


def _read(
    data: bytes | str | os.PathLike[str], label: str, system: str | None
) -> Iterator[Record | Problem]:
    try:
        raw = data if isinstance(data, bytes) else Path(data).read_bytes()
        root = parse_xml(raw)
    except OSError as e:
        yield Problem(file=label, fatal=True, message=f"cannot read C-CDA file: {e.strerror or e}")
        return
    except UnsafeXml as e:
        yield Problem(file=label, fatal=True, message=str(e))
        return
    except MalformedXml as e:
        yield Problem(file=label, line=e.line, fatal=True, message=f"malformed XML: {e}")
        return
    if root.tag != f"{{{HL7}}}ClinicalDocument":
        yield Problem(
            file=label,
            fatal=True,
            line=root.sourceline,
            path=f"/{local(root)}",
            message=f"not a C-CDA document: root element {root.tag!r}, "
            f"expected ClinicalDocument in {HL7}",
        )
        return
    patient_ref = cda_patient_ref(root, system)
    if patient_ref is None:
        where = f" in system {system}" if system else ""
        yield Problem(
            file=label,
            fatal=True,
            path="/ClinicalDocument/recordTarget/patientRole",
            message=f"no patient identifier{where}",
        )
        return
    yield Record(patient_ref=patient_ref, patient=cda_patient(root))
    yield from _DocumentReader(root, raw, label, patient_ref).entries()


def _lineage(root: Element, doc_id: str) -> str:
    """The versions of one document about one person: its setId (else its id) and a hash
    of the person's name and birth date.

    Vendors reuse setIds and ids (the eMERGE samples share setId, version and id across
    five people), so the person is part of the lineage: their entries never replace
    each other, even when an ingest is told to accept them under one patient.
    """
    patient = cda_patient(root)
    person = f"{(patient.name or '').casefold()}|{patient.birth_date or ''}"
    digest = hashlib.sha256(person.encode()).hexdigest()[:12]
    return f"{ii(first(root, 'h:setId')) or doc_id}~{digest}"


def section_kind(section: Element) -> SectionKind | None:
    """The kind of a section by templateId (root, any extension), else by its LOINC code."""
    ids = templates(section)
    for kind in SECTION_KINDS:
        if ids & kind.template_ids:
            return kind
    code = attr(first(section, "h:code"), "code")
    return next((k for k in SECTION_KINDS if code in k.loinc), None)


class _DocumentReader:
    """Walks the recognised sections of one parsed document."""

    def __init__(self, root: Element, raw: bytes, label: str, patient_ref: str) -> None:
        self.root = root
        self.label = label
        self.patient_ref = patient_ref
        self.doc_id = instance_id(root) or f"sha256-{hashlib.sha256(raw).hexdigest()[:32]}"
        effective = attr(first(root, "h:effectiveTime"), "value")
        self.last_updated = ts_instant(effective)
        self.version = attr(first(root, "h:versionNumber"), "value")
        self.context = Context(narrative=Narrative(root), doc_date=parse_ts(effective))
        self.lineage = _lineage(root, self.doc_id)
        self.seen_refs: set[str] = set()
        self.ordinal = 0

    def entries(self) -> Iterator[Record | Problem]:
        for section in self.root.iterfind(".//h:component/h:section", {"h": HL7}):
            kind = section_kind(section)
            if kind is None:
                continue
            entries = every(section, "h:entry")
            if not entries:
                yield self._empty_section(section, kind)
            for index, entry in enumerate(entries):
                yield from self._entry(section, index, entry, kind)
                self.ordinal += 1

    def _empty_section(self, section: Element, kind: SectionKind) -> Problem:
        why = "no information (nullFlavor)" if attr(section, "nullFlavor") else "narrative only"
        return Problem(
            severity="warning",
            file=self.label,
            line=section.sourceline,
            path=element_path(section),
            message=f"{kind.name} section has no entries ({why}); its text is not ingested",
        )

    def _entry(
        self, section: Element, index: int, entry: Element, kind: SectionKind
    ) -> Iterator[Record | Problem]:
        entry_id = instance_id(top(entry))
        try:
            mapped = kind.mapper(entry, self.context)
        except ValueError as e:  # a value the models refuse: one entry lost, not the document
            yield self._problem(entry, None, entry_id, f"entry not ingested: {e}", "error")
            return
        claims: dict[str, Claim] = {}
        for claim in mapped.claims:
            claims.setdefault(claim.fact_key, claim)
        if len(claims) < len(mapped.claims):  # e.g. a tapering dose as two activities
            mapped.warnings.append("statements repeating one fact in an entry: the first is kept")
        for warning in mapped.warnings:
            yield self._problem(entry, mapped.resource_type, entry_id, warning, "warning")
        if not claims:
            return
        source = Source(
            source_ref=self._source_ref(section, index, entry_id),
            format=SourceFormat.CDA,
            label=self.label,
            resource_type=mapped.resource_type,
            resource_id=entry_id or "",
            version=self.version,
            last_updated=self.last_updated,
            reliability=1.0,
            content_hash=hashlib.sha256(
                etree.tostring(entry, method="c14n", with_comments=False)
            ).hexdigest(),
        )
        yield Record(
            patient_ref=self.patient_ref,
            source=SourceClaims(source=source, claims=tuple(claims.values())),
            links=tuple(dict.fromkeys(mapped.links)),
            document=f"cda:{self.lineage}:",
        )

    def _source_ref(self, section: Element, index: int, entry_id: str | None) -> str:
        """`cda:{lineage}:{entry id}`, or `cda:{lineage}:{section code}:{index}` without an id.

        Entry ids stay the same in every version of a document, so within a lineage (see
        `_lineage`) a newer version of the entry replaces what it asserted; exporters reuse
        ids across unrelated documents, which the lineage keeps apart.
        """
        where = f"{attr(first(section, 'h:code'), 'code') or 'section'}:{index}"
        ref = f"cda:{self.lineage}:{entry_id or where}"
        if ref in self.seen_refs:  # exporters reuse ids; a second entry must not replace the first
            ref = f"cda:{self.lineage}:{entry_id}:{where}"
        if len(ref) > 512:
            ref = f"cda:{self.doc_id[:64]}:sha256-{hashlib.sha256(ref.encode()).hexdigest()}"
        self.seen_refs.add(ref)
        return ref

    def _problem(
        self,
        entry: Element,
        resource_type: str | None,
        entry_id: str | None,
        message: str,
        severity: Literal["error", "warning"],
    ) -> Problem:
        return Problem(
            severity=severity,
            file=self.label,
            index=self.ordinal,
            line=entry.sourceline,
            resource_type=resource_type,
            resource_id=entry_id,
            path=element_path(entry),
            message=message,
        )
