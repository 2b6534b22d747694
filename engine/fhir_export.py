"""What patients said, back in FHIR R4 terms: memories and discrepancies, kept apart from the
record and traceable to it (issue 12).

- adherence → `MedicationStatement`: status from the behaviour, the drug coded from the
  linked fact, `derivedFrom` the fact's sources;
- symptom → `Observation` (category `survey`): `valueBoolean` present or absent, the
  attributes as components, `focus` the linked Condition's sources;
- concern, preference → `Observation` (category `survey`, a local code): `valueString` the
  patient's words;
- a `conflicts` edge → `DetectedIssue`: `implicated` the fact's sources, `detail` the
  rationale, `evidence` the memory's resource; none for a memory a clinician dismissed;
- one generate-memories run → `Provenance`: agent the extractor (a `Device`), entity the
  session, target what the run produced.

Every resource made from what was said (and the Provenance) carries the tag
`patient-reported` (`TAG_SYSTEM`): an ingest of the export refuses those with a warning, so
a patient report never becomes a record fact. Ids are stable (derived from the memory id and the
fact key), so a receiver can upsert. Patient text appears only in `note` and `valueString`.
The output is plain JSON (`dict`s); the tests validate it with fhir.resources.
"""

from collections import defaultdict
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from engine.fhir_resources import (
    TAG_CODE,
    TAG_SYSTEM,
    caregiver,
    detected_issue,
    device,
    fhir_id,
    memory_resource,
    meta,
    patient_resource,
    provenance,
    ref,
    stable_id,
)
from engine.models import (
    Fact,
    MemoryRecord,
    MemoryType,
    Patient,
    RelationshipType,
    Role,
    Scope,
)
from engine.store import GraphStore

__all__ = [
    "TAG_CODE",
    "TAG_SYSTEM",
    "by_type",
    "export_bundle",
    "export_patient",
    "is_patient_reported",
]

Json = dict[str, Any]


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
    patient_id = fhir_id(patient_id)
    if since is not None and since.tzinfo is None:
        since = since.replace(tzinfo=UTC)
    by_key = {f.fact_key: f for f in facts}
    chosen = [
        r
        for r in records
        if (since is None or r.memory.created_at >= since)
        and (types is None or r.memory.type in types)
    ]
    resources: list[Json] = [patient_resource(patient_id, patient)]
    if any(r.memory.speaker is Role.CAREGIVER for r in chosen):
        resources.append(caregiver(patient_id))
    runs: dict[tuple[str, str, str, datetime], list[str]] = defaultdict(list)
    for record in chosen:
        memory = record.memory
        produced = [memory_resource(patient_id, record, by_key)]
        produced += [
            detected_issue(patient_id, record, by_key[r.fact_key], r.rationale, produced[0])
            for r in record.relationships
            if r.type is RelationshipType.CONFLICTS
            and r.fact_key in by_key
            and not record.dismissed
        ]
        resources += produced
        run = (memory.session_id, memory.extractor, memory.extractor_version, memory.created_at)
        runs[run] += [ref(r) for r in produced]
    for (session, extractor, version, at), targets in sorted(runs.items()):
        agent = device(extractor, version)
        if all(r["id"] != agent["id"] for r in resources):
            resources.append(agent)
        resources.append(provenance(session, agent, at, targets))
    return {
        "resourceType": "Bundle",
        "id": stable_id("bundle", patient_id, *(r["id"] for r in resources)),
        "type": "collection",
        "meta": meta(),
        "entry": [{"fullUrl": f"urn:cce:{ref(r)}", "resource": r} for r in resources],
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
