"""FHIR MedicationRequest, -Statement, -Administration, -Dispense → medication claims.

Status table: see `ingest.fhir_map`.
"""

from engine.models import FactKind, FactLink, FactLinkType, FieldValue
from ingest.fhir_claims import Mapped, Resolver, Skip, make_claim
from ingest.fhir_values import (
    Json,
    cc_text,
    choice_date,
    choice_end,
    dosage_fields,
    first,
    obj,
    quantity,
    ref_texts,
    texts,
)
from ingest.keys import normalize_date

CURRENT, DISCONTINUED = "current", "discontinued"
MEDICATION_STATUS: dict[str, dict[str, str]] = {
    "MedicationRequest": {
        "active": CURRENT,
        "on-hold": CURRENT,
        "draft": CURRENT,
        "unknown": CURRENT,
        "completed": DISCONTINUED,
        "stopped": DISCONTINUED,
        "cancelled": DISCONTINUED,
    },
    "MedicationStatement": {
        "active": CURRENT,
        "intended": CURRENT,
        "on-hold": CURRENT,
        "unknown": CURRENT,
        "completed": DISCONTINUED,
        "stopped": DISCONTINUED,
        "not-taken": DISCONTINUED,
    },
    "MedicationAdministration": {
        "in-progress": CURRENT,
        "on-hold": CURRENT,
        "completed": DISCONTINUED,
        "stopped": DISCONTINUED,
        "not-done": DISCONTINUED,
        "unknown": DISCONTINUED,
    },
    "MedicationDispense": {
        "preparation": CURRENT,
        "in-progress": CURRENT,
        "on-hold": CURRENT,
        "completed": DISCONTINUED,
        "stopped": DISCONTINUED,
        "cancelled": DISCONTINUED,
        "declined": DISCONTINUED,
        "unknown": DISCONTINUED,
    },
}


def map_medication(res: Json, resolver: Resolver) -> Mapped:
    """Any of MedicationRequest, -Statement, -Administration, -Dispense."""
    rtype = str(res["resourceType"])
    raw = str(res.get("status") or "unknown")
    if raw == "entered-in-error":
        raise Skip("status is entered-in-error")
    if res.get("doNotPerform") is True:
        raise Skip("doNotPerform: an order not to give the medication")
    table = MEDICATION_STATUS[rtype]
    concept = _medication_concept(res, resolver)
    if rtype == "MedicationAdministration":
        dosage = obj(res.get("dosage"))
    else:
        dosage = first(res.get("dosage") or res.get("dosageInstruction"))
    start = normalize_date(
        res.get("authoredOn") or res.get("whenHandedOver") or res.get("whenPrepared")
    ) or choice_date(res, "effective")
    end = choice_end(res, "effective") or _request_end(res)
    fields: dict[str, FieldValue] = {
        **dosage_fields(dosage),
        "start": start,
        "end": end,
        "prescriber": obj(res.get("requester")).get("display"),
        "reason": texts(res.get("reasonCode")) or ref_texts(res.get("reasonReference")),
        "raw_status": raw,
        "quantity": quantity(res.get("quantity")),
    }
    claim = make_claim(FactKind.MEDICATION, concept, table.get(raw, table["unknown"]), fields)
    links = tuple(
        FactLink(from_key=claim.fact_key, to_key=key, type=FactLinkType.PRESCRIBED_FOR)
        for key in dict.fromkeys(
            resolver.condition_key(ref, res) for ref in res.get("reasonReference") or ()
        )
        if key
    )
    return claim, links


def _request_end(res: Json) -> str | None:
    validity = obj(obj(res.get("dispenseRequest")).get("validityPeriod"))
    bounds = obj(obj(first(res.get("dosageInstruction")).get("timing")).get("repeat"))
    return normalize_date(validity.get("end") or obj(bounds.get("boundsPeriod")).get("end"))


def _medication_concept(res: Json, resolver: Resolver) -> Json:
    if res.get("medicationCodeableConcept"):
        return obj(res["medicationCodeableConcept"])
    ref = obj(res.get("medicationReference"))
    medication = resolver.resource(ref, res)
    concept = _medication_code(medication) if medication is not None else {}
    if not cc_text(concept) and ref.get("display"):
        concept = {**concept, "text": ref["display"]}
    if cc_text(concept):
        return concept
    where = "is not in the input" if medication is None else "has no code or ingredient"
    raise Skip(f"medication {ref.get('reference')!r} {where}, and the reference no display")


def _medication_code(medication: Json) -> Json:
    """A Medication's code; a compound without one is named by its ingredients (not coded
    by them: one ingredient's code would make it that ingredient)."""
    if medication.get("code"):
        return obj(medication["code"])
    names = [
        cc_text(obj(i).get("itemCodeableConcept"))
        or obj(obj(i).get("itemReference")).get("display")
        for i in medication.get("ingredient") or ()
    ]
    return {"text": " + ".join(n for n in names if n)} if any(names) else {}
