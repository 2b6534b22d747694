"""FHIR R4 resources (validated JSON) → claims: one `Claim` per clinical resource.

Status tables (raw FHIR code → claim status; "skip" = not ingested, reported as a warning):

| resource | claim status | raw codes |
|---|---|---|
| Condition | active | clinicalStatus active, recurrence, relapse; absent without abatement |
| Condition | resolved | clinicalStatus inactive, remission, resolved; absent with abatement |
| Condition | skip | verificationStatus entered-in-error, refuted |
| MedicationRequest | current | active, on-hold, draft, unknown |
| MedicationRequest | discontinued | completed, stopped, cancelled |
| MedicationStatement | current | active, intended, on-hold, unknown |
| MedicationStatement | discontinued | completed, stopped, not-taken |
| MedicationAdministration | current | in-progress, on-hold |
| MedicationAdministration | discontinued | completed, stopped, not-done, unknown |
| MedicationDispense | current | preparation, in-progress, on-hold |
| MedicationDispense | discontinued | completed, stopped, cancelled, declined, unknown |
| Medication* | skip | entered-in-error; MedicationRequest with doNotPerform |
| AllergyIntolerance | active, inactive, resolved | clinicalStatus as is; absent → active |
| AllergyIntolerance | skip | verificationStatus entered-in-error, refuted |
| Observation | raw status | final, amended, corrected, preliminary, registered, unknown |
| Observation | skip | cancelled, entered-in-error |
| Procedure, Immunization, Encounter | raw status | e.g. completed, not-done, finished |
| Procedure, Immunization, Encounter | skip | entered-in-error |

Requests and statements are orders and reports of ongoing use, so an unknown status stays
current (better shown than hidden); administrations and dispenses are events, which are
over once completed. The raw code is always kept in `fields["raw_status"]`.

Fields per kind (absent values are left out; dates normalised by `keys.normalize_date`):

| kind | fields |
|---|---|
| condition | onset, abatement, clinical_status, verification_status, category, severity, |
| | recorded_date |
| medication | dose, route, frequency, start, end, prescriber, reason, raw_status, quantity |
| allergy | category, criticality, type, reactions (list), onset, verification_status, no_known |
| observation | value (float, or text), unit, interpretation, effective, category, |
| | reference_range, data_absent, component:* |
| procedure | performed, performed_end, reason, body_site, outcome, status_reason |
| immunization | occurrence, status_reason, lot_number, primary_source, route, site |
| encounter | class, type, start, end, reason, location, service_provider |

Observations, procedures, immunizations and encounters key on their effective, performed,
occurrence and start date. Observation components (blood pressure...) are fields of the
observation's one claim: `component:<loinc code>` (or `component:<system>:<code>`, or
`component:<text slug>`) = "value unit".
"""

import hashlib
from datetime import datetime
from typing import Any

from engine.models import Patient, Source, SourceFormat
from ingest import json_text
from ingest.fhir_claims import Mapper, Resolver, Skip
from ingest.fhir_clinical import (
    map_allergy,
    map_condition,
    map_encounter,
    map_immunization,
    map_observation,
    map_procedure,
)
from ingest.fhir_meds import map_medication
from ingest.fhir_values import Json, first, obj

__all__ = ["MAPPERS", "PATIENT_ELEMENT", "Resolver", "Skip", "canonical_hash", "map_patient"]
__all__ += ["source_for"]


def canonical_hash(resource: Json) -> str:
    """sha256 of the resource's canonical JSON (sorted keys, no whitespace)."""
    return hashlib.sha256(json_text.canonical(resource)).hexdigest()


def source_for(resource: Json, label: str, content_hash: str) -> Source:
    """The `Source` of one resource; without an id it is named by its content hash."""
    rtype = str(resource["resourceType"])
    rid = str(resource.get("id") or f"sha-{content_hash[:16]}")
    meta = obj(resource.get("meta"))
    return Source(
        source_ref=f"fhir:{rtype}/{rid}",
        format=SourceFormat.FHIR,
        label=label,
        resource_type=rtype,
        resource_id=rid,
        version=str(meta["versionId"]) if meta.get("versionId") else None,
        last_updated=_instant(meta.get("lastUpdated")),
        content_hash=content_hash,
    )


def _instant(value: Any) -> datetime | None:
    try:
        return datetime.fromisoformat(str(value)) if value else None
    except ValueError:
        return None


def map_patient(resource: Json) -> Patient:
    """Demographics of a Patient resource; identifiers as `system|value`."""
    names = [obj(n) for n in resource.get("name") or ()]
    name = next((n for n in names if n.get("use") in ("official", "usual")), first(names))
    full = name.get("text") or " ".join([*name.get("given", ()), name.get("family", "")]).strip()
    identifiers = tuple(
        f"{obj(i).get('system', '')}|{obj(i)['value']}"
        for i in resource.get("identifier") or ()
        if obj(i).get("value")
    )
    address = first([obj(a) for a in resource.get("address") or ()])
    lines = [*address.get("line", ()), address.get("city"), address.get("postalCode")]
    phones = [obj(t) for t in resource.get("telecom") or () if obj(t).get("system") == "phone"]
    return Patient(
        name=full or None,
        birth_date=resource.get("birthDate"),
        gender=resource.get("gender"),
        identifiers=identifiers,
        address=", ".join(str(part) for part in lines if part) or None,
        phone=first(phones).get("value"),
    )


MAPPERS: dict[str, Mapper] = {
    "Condition": map_condition,
    "MedicationRequest": map_medication,
    "MedicationStatement": map_medication,
    "MedicationAdministration": map_medication,
    "MedicationDispense": map_medication,
    "AllergyIntolerance": map_allergy,
    "Observation": map_observation,
    "Procedure": map_procedure,
    "Immunization": map_immunization,
    "Encounter": map_encounter,
}

# Where each mapped type names its patient.
PATIENT_ELEMENT = dict.fromkeys(MAPPERS, "subject")
PATIENT_ELEMENT |= {"AllergyIntolerance": "patient", "Immunization": "patient"}
