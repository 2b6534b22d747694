"""The FHIR R4 resources one memory, one discrepancy or one generate-memories run becomes
(see `fhir_export` for the mapping). Plain JSON; ids are stable."""

import hashlib
import re
from datetime import datetime
from typing import Any

from engine.models import Fact, MemoryRecord, MemoryType, Patient, Role, Source, SourceFormat

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


def memory_resource(patient_id: str, record: MemoryRecord, facts: dict[str, Fact]) -> Json:
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
        "meta": meta(),
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
        "meta": meta(),
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


def detected_issue(
    patient_id: str, record: MemoryRecord, fact: Fact, rationale: str, reported: Json
) -> Json:
    return {
        "resourceType": "DetectedIssue",
        "id": stable_id("di", record.memory.memory_id, fact.fact_key),
        "meta": meta(),
        "status": "preliminary",  # not reviewed by a clinician
        "code": {"text": "Patient report conflicts with the record"},
        "patient": {"reference": f"Patient/{patient_id}"},
        "identifiedDateTime": _instant(record.memory.created_at),
        "implicated": [_source_ref(s) for s in fact.sources],
        "detail": rationale,
        "evidence": [{"detail": [{"reference": ref(reported)}]}],
    }


def provenance(session: str, device: Json, at: datetime, targets: list[str]) -> Json:
    return {
        "resourceType": "Provenance",
        "id": stable_id("prov", session, device["id"], at.isoformat()),
        "meta": meta(),
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
                "who": {"reference": ref(device)},
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


def device(extractor: str, version: str) -> Json:
    return {
        "resourceType": "Device",
        "id": stable_id("device", extractor, version),
        "deviceName": [{"name": extractor, "type": "model-name"}],
        "version": [{"value": version}],
    }


def patient_resource(patient_id: str, patient: Patient) -> Json:
    resource: Json = {"resourceType": "Patient", "id": patient_id}
    if patient.name:
        resource["name"] = [{"text": patient.name}]
    if patient.gender in {"male", "female", "other", "unknown"}:
        resource["gender"] = patient.gender
    if patient.birth_date:
        resource["birthDate"] = patient.birth_date
    return resource


def caregiver(patient_id: str) -> Json:
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


def fhir_id(patient_id: str) -> str:
    """The patient id when FHIR allows it as an id (no "_", at most 64), else a digest."""
    return patient_id if _FHIR_ID.match(patient_id) else stable_id("pt", patient_id)


def _caregiver_id(patient_id: str) -> str:
    own = f"{patient_id}-caregiver"
    return own if len(own) <= 64 else stable_id("rp", patient_id)


def ref(resource: Json) -> str:
    return f"{resource['resourceType']}/{resource['id']}"


def meta() -> Json:
    return {"tag": [{"system": TAG_SYSTEM, "code": TAG_CODE, "display": "Patient-reported"}]}


def stable_id(prefix: str, *parts: str) -> str:
    digest = hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:40]
    return f"{prefix}-{digest}"


def _instant(at: datetime) -> str:
    return at.isoformat().replace("+00:00", "Z")
