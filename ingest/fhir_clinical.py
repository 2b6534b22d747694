"""FHIR Conditions, allergies, observations, procedures, immunizations, encounters → claims.

Status tables: see `ingest.fhir_map`.
"""

from engine.models import FactKind, FieldValue
from ingest.fhir_claims import (
    Mapped,
    Resolver,
    Skip,
    category,
    make_claim,
    unless_in_error,
    verification,
)
from ingest.fhir_values import (
    Json,
    cc_code,
    cc_codes,
    cc_text,
    choice_date,
    choice_end,
    choice_text,
    first,
    obj,
    observation_value,
    quantity,
    ref_texts,
    texts,
)
from ingest.keys import normalize_date, text_slug

CONDITION_STATUS = {"active": "active", "recurrence": "active", "relapse": "active"}
CONDITION_STATUS |= {"inactive": "resolved", "remission": "resolved", "resolved": "resolved"}
SKIPPED_OBSERVATION = frozenset({"cancelled", "entered-in-error"})
NO_KNOWN_ALLERGY = frozenset(
    {"716186003", "409137002", "429625007", "428607008", "428197003", "716184000"}
)


def map_condition(res: Json, resolver: Resolver) -> Mapped:
    """A Condition: status active/resolved (see the table above)."""
    verified = verification(res)
    clinical = cc_code(res.get("clinicalStatus"))
    abated = any(key.startswith("abatement") for key in res)
    default = "resolved" if abated else "active"
    status = CONDITION_STATUS.get(clinical or "", default)
    fields: dict[str, FieldValue] = {
        "onset": choice_text(res, "onset"),
        "abatement": choice_text(res, "abatement"),
        "clinical_status": clinical,
        "verification_status": verified,
        "category": category(res),
        "severity": cc_text(res.get("severity")),
        "recorded_date": normalize_date(res.get("recordedDate")),
    }
    return make_claim(FactKind.CONDITION, res.get("code"), status, fields), ()


def map_allergy(res: Json, resolver: Resolver) -> Mapped:
    """An AllergyIntolerance, "no known allergy" situations included (`no_known`)."""
    verified = verification(res)
    concept = obj(res.get("code"))
    codes = {c.code for c in cc_codes(concept) if c.system == "snomed"}
    no_known = bool(codes & NO_KNOWN_ALLERGY) or (cc_text(concept) or "").lower().startswith(
        "no known"
    )
    reactions = [
        text
        for reaction in res.get("reaction") or ()
        for text in [texts(obj(reaction).get("manifestation")) or obj(reaction).get("description")]
        if text
    ]
    fields: dict[str, FieldValue] = {
        "category": "; ".join(str(c) for c in res.get("category") or ()) or None,
        "criticality": res.get("criticality"),
        "type": res.get("type"),
        "reactions": reactions or None,
        "onset": choice_text(res, "onset"),
        "verification_status": verified,
        "no_known": True if no_known else None,
    }
    status = cc_code(res.get("clinicalStatus")) or "active"
    return make_claim(FactKind.ALLERGY, concept, status, fields), ()


def map_observation(res: Json, resolver: Resolver) -> Mapped:
    """A lab result or vital sign, keyed on its code and effective date."""
    status = str(res.get("status") or "unknown")
    if status in SKIPPED_OBSERVATION:
        raise Skip(f"status is {status}")
    value, unit = observation_value(res)
    effective = choice_date(res, "effective") or normalize_date(res.get("issued"))
    fields: dict[str, FieldValue] = {
        "value": value,
        "unit": unit,
        "interpretation": texts(res.get("interpretation")),
        "effective": effective,
        "category": category(res),
        "reference_range": _range(first(res.get("referenceRange"))),
        "data_absent": cc_text(res.get("dataAbsentReason")),
    }
    for component in res.get("component") or ():
        name, text = _component(obj(component))
        fields[name] = text
    return make_claim(FactKind.OBSERVATION, res.get("code"), status, fields, effective), ()


def _range(ref_range: Json) -> str | None:
    if ref_range.get("text"):
        return str(ref_range["text"])
    low, high = quantity(ref_range.get("low")), quantity(ref_range.get("high"))
    return f"{low or ''} - {high or ''}".strip() if low or high else None


def _component(component: Json) -> tuple[str, FieldValue]:
    codes = cc_codes(component.get("code"))
    loinc = next((c.code for c in codes if c.system == "loinc"), None)
    if loinc:
        name = loinc
    elif codes:
        name = f"{codes[0].system}:{codes[0].code}"
    else:
        name = text_slug(cc_text(component.get("code")) or "")
    value, unit = observation_value(component)
    if value is None:
        value = cc_text(component.get("dataAbsentReason"))
    if isinstance(value, float):
        value = quantity({"value": value, "unit": unit})
    return f"component:{name}", None if value is None else str(value)


def map_procedure(res: Json, resolver: Resolver) -> Mapped:
    """A Procedure, keyed on its code and performed date."""
    status = unless_in_error(res)
    performed = choice_date(res, "performed")
    fields: dict[str, FieldValue] = {
        "performed": choice_text(res, "performed"),
        "performed_end": choice_end(res, "performed"),
        "reason": texts(res.get("reasonCode")) or ref_texts(res.get("reasonReference")),
        "body_site": texts(res.get("bodySite")),
        "outcome": cc_text(res.get("outcome")),
        "status_reason": cc_text(res.get("statusReason")),
    }
    return make_claim(FactKind.PROCEDURE, res.get("code"), status, fields, performed), ()


def map_immunization(res: Json, resolver: Resolver) -> Mapped:
    """An Immunization (CVX vaccine code), given or not done, keyed on its date."""
    status = unless_in_error(res)
    occurrence = choice_date(res, "occurrence")
    fields: dict[str, FieldValue] = {
        "occurrence": occurrence or res.get("occurrenceString"),
        "status_reason": cc_text(res.get("statusReason")),
        "lot_number": res.get("lotNumber"),
        "primary_source": res.get("primarySource"),
        "route": cc_text(res.get("route")),
        "site": cc_text(res.get("site")),
    }
    return make_claim(FactKind.IMMUNIZATION, res.get("vaccineCode"), status, fields, occurrence), ()


def map_encounter(res: Json, resolver: Resolver) -> Mapped:
    """An Encounter, keyed on its type and start; without a type, on its class."""
    status = unless_in_error(res)
    klass = obj(res.get("class"))
    types = [obj(t) for t in res.get("type") or ()]
    concept: Json = {"coding": [c for t in types for c in t.get("coding") or ()]}
    concept["text"] = texts(types) or klass.get("display") or klass.get("code")
    period = obj(res.get("period"))
    start = normalize_date(period.get("start"))
    fields: dict[str, FieldValue] = {
        "class": klass.get("code"),
        "type": texts(types),
        "start": start,
        "end": normalize_date(period.get("end")),
        "reason": texts(res.get("reasonCode")) or ref_texts(res.get("reasonReference")),
        "location": ref_texts([obj(loc).get("location") for loc in res.get("location") or ()]),
        "service_provider": obj(res.get("serviceProvider")).get("display"),
    }
    return make_claim(FactKind.ENCOUNTER, concept, status, fields, start), ()
