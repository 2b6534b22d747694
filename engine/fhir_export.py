"""What patients said, back in FHIR R4 terms: memories and discrepancies, kept apart from the
record and traceable to it (issue 12).

- adherence → `MedicationStatement`: status from the behaviour, the drug coded from the
  linked fact, `derivedFrom` the fact's sources;
- symptom → `Observation` (category `survey`): `valueBoolean` present or absent, the
  attributes as components, `focus` the linked Condition's sources;
- concern, preference → `Observation` (category `survey`, a local code): `valueString` the
  patient's words;
- a `conflicts` edge → `DetectedIssue`: `implicated` the fact's sources, `detail` the
  rationale, `evidence` the memory's resource;
- one generate-memories run → `Provenance`: agent the extractor (a `Device`), entity the
  session, target what the run produced.

Every resource made from what was said (and the Provenance) carries the tag
`patient-reported` (`TAG_SYSTEM`): an ingest of the export refuses those with a warning, so
a patient report never becomes a record fact. Ids are stable (derived from the memory id and the
fact key), so a receiver can upsert. Patient text appears only in `note` and `valueString`.
The output is plain JSON (`dict`s); the tests validate it with fhir.resources.
"""

import hashlib
import re
from collections import defaultdict
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from engine.models import (
    Fact,
    MemoryRecord,
    MemoryType,
    Patient,
    RelationshipType,
    Role,
    Scope,
    Source,
    SourceFormat,
)
from engine.store import GraphStore

Json = dict[str, Any]

BASE = "https://clinical-context-engine.dev/fhir"
TAG_SYSTEM = f"{BASE}/tag"
TAG_CODE = "patient-reported"
MEMORY_SYSTEM = f"{BASE}/CodeSystem/memory-type"
ATTRIBUTE_SYSTEM = f"{BASE}/CodeSystem/memory-attribute"
SESSION_SYSTEM = f"{BASE}/session"
CDA_ENTRY_SYSTEM = f"{BASE}/cda-entry"
_CATEGORY = "http://terminology.hl7.org/CodeSystem/observation-category"
_RXNORM = "http://www.nlm.nih.gov/research/umls/rxnorm"
_SYSTEMS = {
    "rxnorm": _RXNORM,
    "snomed": "http://snomed.info/sct",
    "ndc": "http://hl7.org/fhir/sid/ndc",
}
# GUIDELINE §2 behaviours → MedicationStatement.status
_STATUS = {
    "as_prescribed": "active",
    "missed_doses": "active",
    "changed_dose": "active",
    "stopped": "stopped",
    "never_started": "not-taken",
    "ran_out": "on-hold",
}
_SYMPTOM_ATTRIBUTES = ("onset", "duration", "frequency", "severity", "trigger")
_TITLES = {
    MemoryType.SYMPTOM: "Patient-reported symptom",
    MemoryType.CONCERN: "Patient-reported concern",
    MemoryType.PREFERENCE: "Patient-reported preference",
}


def export_bundle(
    patient_id: str,
    patient: Patient,
    records: Iterable[MemoryRecord],
    facts: Iterable[Fact],
    since: datetime | None = None,
    types: frozenset[MemoryType] | None = None,
) -> Json:
    """The FHIR R4 `collection` Bundle of the patient's memories and discrepancies.

    Args:
        patient_id: the engine's patient id, also the exported Patient's id.
        patient: the patient's demographics.
        records: the memories with their relationships.
        facts: the patient's facts (for the sources and codes relationships point at).
        since: only memories created at or after this instant.
        types: only memories of these types.
    """
    patient_id = _fhir_id(patient_id)
    if since is not None and since.tzinfo is None:
        since = since.replace(tzinfo=UTC)
    by_key = {f.fact_key: f for f in facts}
    chosen = [
        r
        for r in records
        if (since is None or r.memory.created_at >= since)
        and (types is None or r.memory.type in types)
    ]
    resources: list[Json] = [_patient(patient_id, patient)]
    if any(r.memory.speaker is Role.CAREGIVER for r in chosen):
        resources.append(_caregiver(patient_id))
    runs: dict[tuple[str, str, str, datetime], list[str]] = defaultdict(list)
    for record in chosen:
        memory = record.memory
        produced = [_memory_resource(patient_id, record, by_key)]
        produced += [
            _detected_issue(patient_id, record, by_key[r.fact_key], r.rationale, produced[0])
            for r in record.relationships
            if r.type is RelationshipType.CONFLICTS and r.fact_key in by_key
        ]
        resources += produced
        run = (memory.session_id, memory.extractor, memory.extractor_version, memory.created_at)
        runs[run] += [_ref(r) for r in produced]
    for (session, extractor, version, at), targets in sorted(runs.items()):
        device = _device(extractor, version)
        if all(r["id"] != device["id"] for r in resources):
            resources.append(device)
        resources.append(_provenance(session, device, at, targets))
    return {
        "resourceType": "Bundle",
        "id": _id("bundle", patient_id, *(r["id"] for r in resources)),
        "type": "collection",
        "meta": _meta(),
        "entry": [{"fullUrl": f"urn:cce:{_ref(r)}", "resource": r} for r in resources],
    }


def export_patient(
    store: GraphStore,
    scope: Scope,
    since: datetime | None = None,
    types: frozenset[MemoryType] | None = None,
) -> Json:
    """`export_bundle` for a stored patient.

    Raises:
        NotFound: the patient does not exist.
    """
    patient = store.get_patient(scope)
    return export_bundle(
        scope.patient, patient, store.list_memories(scope), store.list_facts(scope), since, types
    )


def by_type(bundle: Json) -> dict[str, list[Json]]:
    """The bundle's resources per resource type (for Bulk-style NDJSON files)."""
    out: dict[str, list[Json]] = defaultdict(list)
    for entry in bundle["entry"]:
        out[entry["resource"]["resourceType"]].append(entry["resource"])
    return dict(out)


def is_patient_reported(resource: Json) -> bool:
    """The resource is one this engine exported (tagged `patient-reported`)."""
    tags = (resource.get("meta") or {}).get("tag") or []
    return any(
        isinstance(t, dict) and t.get("system") == TAG_SYSTEM and t.get("code") == TAG_CODE
        for t in tags
    )


# -- resources ------------------------------------------------------------------------------


def _memory_resource(patient_id: str, record: MemoryRecord, facts: dict[str, Fact]) -> Json:
    if record.memory.type is MemoryType.ADHERENCE:
        return _medication_statement(patient_id, record, facts)
    return _observation(patient_id, record, facts)


def _medication_statement(patient_id: str, record: MemoryRecord, facts: dict[str, Fact]) -> Json:
    memory = record.memory
    linked = [facts[r.fact_key] for r in record.relationships if r.fact_key in facts]
    coded = next((f for f in linked if any(c.system in _SYSTEMS for c in f.codes)), None)
    concept: Json = {"text": coded.label if coded else memory.subject}
    if coded is not None:
        concept["coding"] = [
            {
                "system": _SYSTEMS[c.system],
                "code": c.code,
                **({"display": c.display} if c.display else {}),
            }
            for c in coded.codes
            if c.system in _SYSTEMS
        ]
    reason = memory.attributes.get("reason")
    notes = ([f"Reason given: {reason}"] if reason else []) + _quotes(record)
    statement: Json = {
        "resourceType": "MedicationStatement",
        "id": memory.memory_id,
        "meta": _meta(),
        "status": _STATUS.get(str(memory.attributes.get("behavior", "as_prescribed")), "unknown"),
        "medicationCodeableConcept": concept,
        "subject": {"reference": f"Patient/{patient_id}"},
        "dateAsserted": _instant(memory.created_at),
        "informationSource": _speaker(patient_id, memory.speaker),
        "note": [{"text": n} for n in notes],
    }
    sources = [_source_ref(s) for f in linked for s in f.sources]
    if sources:
        statement["derivedFrom"] = sources
    return statement


def _observation(patient_id: str, record: MemoryRecord, facts: dict[str, Fact]) -> Json:
    memory = record.memory
    observation: Json = {
        "resourceType": "Observation",
        "id": memory.memory_id,
        "meta": _meta(),
        "status": "final",
        "category": [{"coding": [{"system": _CATEGORY, "code": "survey", "display": "Survey"}]}],
        "code": {
            "coding": [
                {
                    "system": MEMORY_SYSTEM,
                    "code": memory.type.value,
                    "display": _TITLES[memory.type],
                }
            ],
            "text": memory.subject,
        },
        "subject": {"reference": f"Patient/{patient_id}"},
        "issued": _instant(memory.created_at),
        "performer": [_speaker(patient_id, memory.speaker)],
    }
    quotes = _quotes(record)
    if memory.type is MemoryType.SYMPTOM:
        observation["valueBoolean"] = memory.attributes.get("present", True) is not False
        components = [
            {
                "code": {"coding": [{"system": ATTRIBUTE_SYSTEM, "code": name}], "text": name},
                "valueString": str(memory.attributes[name]),
            }
            for name in _SYMPTOM_ATTRIBUTES
            if memory.attributes.get(name)
        ]
        if components:
            observation["component"] = components
        conditions = [facts[r.fact_key] for r in record.relationships if r.fact_key in facts]
        focus = [_source_ref(s) for f in conditions for s in f.sources]
        if focus:
            observation["focus"] = focus
        observation["note"] = [{"text": q} for q in quotes]
    else:
        observation["valueString"] = quotes[0] if quotes else memory.text
        if len(quotes) > 1:
            observation["note"] = [{"text": q} for q in quotes[1:]]
    return observation


def _detected_issue(
    patient_id: str, record: MemoryRecord, fact: Fact, rationale: str, reported: Json
) -> Json:
    return {
        "resourceType": "DetectedIssue",
        "id": _id("di", record.memory.memory_id, fact.fact_key),
        "meta": _meta(),
        "status": "preliminary",  # not reviewed by a clinician
        "code": {"text": "Patient report conflicts with the record"},
        "patient": {"reference": f"Patient/{patient_id}"},
        "identifiedDateTime": _instant(record.memory.created_at),
        "implicated": [_source_ref(s) for s in fact.sources],
        "detail": rationale,
        "evidence": [{"detail": [{"reference": _ref(reported)}]}],
    }


def _provenance(session: str, device: Json, at: datetime, targets: list[str]) -> Json:
    return {
        "resourceType": "Provenance",
        "id": _id("prov", session, device["id"], at.isoformat()),
        "meta": _meta(),
        "target": [{"reference": t} for t in targets],
        "recorded": _instant(at),
        "activity": {"text": "generate-memories"},
        "agent": [
            {
                "type": {
                    "coding": [
                        {
                            "system": "http://terminology.hl7.org/CodeSystem/provenance-participant-type",
                            "code": "assembler",
                        }
                    ]
                },
                "who": {"reference": _ref(device)},
            }
        ],
        "entity": [
            {
                "role": "source",
                "what": {
                    "identifier": {"system": SESSION_SYSTEM, "value": session},
                    "display": f"conversation session {session}",
                },
            }
        ],
    }


def _device(extractor: str, version: str) -> Json:
    return {
        "resourceType": "Device",
        "id": _id("device", extractor, version),
        "deviceName": [{"name": extractor, "type": "model-name"}],
        "version": [{"value": version}],
    }


def _patient(patient_id: str, patient: Patient) -> Json:
    resource: Json = {"resourceType": "Patient", "id": patient_id}
    if patient.name:
        resource["name"] = [{"text": patient.name}]
    if patient.gender in {"male", "female", "other", "unknown"}:
        resource["gender"] = patient.gender
    if patient.birth_date:
        resource["birthDate"] = patient.birth_date
    return resource


def _caregiver(patient_id: str) -> Json:
    return {
        "resourceType": "RelatedPerson",
        "id": _caregiver_id(patient_id),
        "patient": {"reference": f"Patient/{patient_id}"},
        "relationship": [
            {
                "coding": [
                    {
                        "system": "http://terminology.hl7.org/CodeSystem/v3-RoleCode",
                        "code": "FAMMEMB",
                        "display": "family member",
                    }
                ],
                "text": "caregiver who spoke in a conversation",
            }
        ],
    }


# -- helpers --------------------------------------------------------------------------------


def _speaker(patient_id: str, role: Role) -> Json:
    if role is Role.CAREGIVER:
        return {"reference": f"RelatedPerson/{_caregiver_id(patient_id)}"}
    return {"reference": f"Patient/{patient_id}"}


def _quotes(record: MemoryRecord) -> list[str]:
    """The memory's verbatim quotes, each once, in order."""
    return list(dict.fromkeys(e.quote for e in record.memory.evidence))


def _source_ref(source: Source) -> Json:
    """A reference to the record resource a fact came from; a C-CDA entry by identifier."""
    if source.format is SourceFormat.FHIR:
        return {"reference": f"{source.resource_type}/{source.resource_id}"}
    return {
        "identifier": {"system": CDA_ENTRY_SYSTEM, "value": source.source_ref},
        "display": source.label,
    }


_FHIR_ID = re.compile(r"^[A-Za-z0-9\-.]{1,64}$")


def _fhir_id(patient_id: str) -> str:
    """The patient id when FHIR allows it as an id (no "_", at most 64), else a digest."""
    return patient_id if _FHIR_ID.match(patient_id) else _id("pt", patient_id)


def _caregiver_id(patient_id: str) -> str:
    own = f"{patient_id}-caregiver"
    return own if len(own) <= 64 else _id("rp", patient_id)


def _ref(resource: Json) -> str:
    return f"{resource['resourceType']}/{resource['id']}"


def _meta() -> Json:
    return {"tag": [{"system": TAG_SYSTEM, "code": TAG_CODE, "display": "Patient-reported"}]}


def _id(prefix: str, *parts: str) -> str:
    digest = hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:40]
    return f"{prefix}-{digest}"


def _instant(at: datetime) -> str:
    return at.isoformat().replace("+00:00", "Z")
