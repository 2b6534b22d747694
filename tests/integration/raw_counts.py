"""An independent count of the facts that Synthea-style FHIR data should produce.

Written from the FHIR specification, not from the readers: plain JSON, one rule per
resource type, so a bug in the readers' keys or filters shows up as a mismatch.
"""

import json
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

Resource = dict[str, Any]

CODE_SYSTEM = {
    "Condition": "http://snomed.info/sct",
    "MedicationRequest": "http://www.nlm.nih.gov/research/umls/rxnorm",
    "AllergyIntolerance": "http://snomed.info/sct",
    "Observation": "http://loinc.org",
    "Procedure": "http://snomed.info/sct",
    "Immunization": "http://hl7.org/fhir/sid/cvx",
    "Encounter": "http://snomed.info/sct",
}
KIND = {
    "Condition": "condition",
    "MedicationRequest": "medication",
    "AllergyIntolerance": "allergy",
    "Observation": "observation",
    "Procedure": "procedure",
    "Immunization": "immunization",
    "Encounter": "encounter",
}


def bundle_resources(paths: Iterable[Path]) -> Iterator[Resource]:
    for path in paths:
        for entry in json.loads(path.read_text("utf-8")).get("entry", []):
            yield entry["resource"]


def ndjson_resources(folder: Path) -> Iterator[Resource]:
    for path in sorted(folder.glob("*.ndjson")):
        if path.name.split(".")[0] in KIND or path.name.startswith("Patient."):
            for line in path.read_text("utf-8").splitlines():
                if line.strip():
                    yield json.loads(line)


def _utc(value: str) -> str:
    if len(value) == 10:
        return value
    moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _code(resource: Resource, element: str) -> str | None:
    concept = resource.get(element)
    if isinstance(concept, list):
        concept = concept[0] if concept else None
    for coding in (concept or {}).get("coding", []):
        if coding.get("system") == CODE_SYSTEM[resource["resourceType"]]:
            return str(coding["code"])
    return None


def _identity(resource: Resource) -> tuple[str, ...] | None:
    rtype = resource["resourceType"]
    if rtype == "Observation":
        if resource.get("status") in {"cancelled", "entered-in-error"}:
            return None
        return (_code(resource, "code") or "", _utc(resource["effectiveDateTime"]))
    if rtype == "Procedure":
        when = resource.get("performedDateTime") or resource["performedPeriod"]["start"]
        return (_code(resource, "code") or "", _utc(when))
    if rtype == "Immunization":
        return (_code(resource, "vaccineCode") or "", _utc(resource["occurrenceDateTime"]))
    if rtype == "Encounter":
        return (_code(resource, "type") or "", _utc(resource["period"]["start"]))
    if rtype == "MedicationRequest":
        return (_code(resource, "medicationCodeableConcept") or "",)
    return (_code(resource, "code") or "",)


def _patient_of(resource: Resource) -> str:
    owner: dict[str, str] = resource.get("subject") or resource["patient"]
    return owner["reference"].rsplit("/", 1)[-1].removeprefix("urn:uuid:")


def expected_counts(resources: Iterable[Resource]) -> dict[str, Counter[str]]:
    """Distinct facts per kind per patient id."""
    seen: dict[str, set[tuple[str, ...]]] = defaultdict(set)
    for resource in resources:
        rtype = resource["resourceType"]
        if rtype not in KIND:
            continue
        identity = _identity(resource)
        if identity is not None:
            seen[_patient_of(resource)].add((KIND[rtype], *identity))
    return {patient: Counter(kind for kind, *_ in facts) for patient, facts in seen.items()}
