"""Dated entries: results, vital signs, immunizations, procedures, encounters."""

from engine.models import Claim, FactKind, FieldValue
from ingest.cda_common import (
    IMMUNIZATION,
    REFUSAL,
    Context,
    Mapped,
    Skip,
    make_claim,
    negated,
    product,
    require_label,
    statement_text,
    statements,
    status_code,
    top,
)
from ingest.cda_xml import (
    Element,
    attr,
    code_label,
    codings,
    every,
    first,
    flat_text,
    interval,
    local,
    meaningful,
    templates,
    time_of,
    xsi_type,
)

OBSERVATION_STATUS = {
    "completed": "final",
    "active": "preliminary",
    "aborted": "cancelled",
    "cancelled": "cancelled",
    "nullified": "entered-in-error",
}
PROCEDURE_STATUS = {
    "completed": "completed",
    "active": "in-progress",
    "aborted": "stopped",
    "cancelled": "not-done",
    "nullified": "entered-in-error",
}
ENCOUNTER_STATUS = {
    "completed": "finished",
    "active": "in-progress",
    "aborted": "cancelled",
    "cancelled": "cancelled",
    "nullified": "entered-in-error",
}
PROCEDURE_TYPES = {
    "procedure": "ProcedureActivityProcedure",
    "act": "ProcedureActivityAct",
    "observation": "ProcedureActivityObservation",
}


def map_result(entry: Element, ctx: Context) -> Mapped:
    """A Result Organizer (or a lone Result Observation): one claim per observation."""
    return _organized(entry, ctx, "laboratory", "Result")


def map_vital_signs(entry: Element, ctx: Context) -> Mapped:
    """A Vital Signs Organizer: one claim per Vital Sign Observation."""
    return _organized(entry, ctx, "vital-signs", "VitalSigns")


def _organized(entry: Element, ctx: Context, category: str, name: str) -> Mapped:
    statement = top(entry)
    if statement is not None and local(statement) == "organizer":
        mapped = Mapped(f"{name}Organizer")
        observations = every(statement, "h:component/h:observation")
        fallback_date = time_of(first(statement, "h:effectiveTime"))
    else:
        mapped = Mapped(f"{name}Observation")
        observations = [statement] if statement is not None else []
        fallback_date = None
    if not observations:
        mapped.warnings.append(f"{name.lower()} entry without observations")
    for obs in observations:
        try:
            mapped.claims.append(_observation_claim(obs, ctx, category, fallback_date))
        except Skip as skip:
            mapped.warnings.append(str(skip))
    return mapped


def _observation_claim(
    obs: Element, ctx: Context, category: str, fallback_date: str | None
) -> Claim:
    code = first(obs, "h:code")
    codes = codings(code)
    label = require_label(
        "observation", codes, code_label(code, ctx.narrative), statement_text(obs, ctx)
    )
    effective = time_of(first(obs, "h:effectiveTime")) or fallback_date
    value, unit = observation_value(first(obs, "h:value"), ctx)
    interpretation = first(obs, "h:interpretationCode")
    fields: dict[str, FieldValue] = {
        "value": value,
        "unit": unit,
        "interpretation": code_label(interpretation, ctx.narrative) or attr(interpretation, "code"),
        "effective": effective,
        "category": category,
    }
    status = OBSERVATION_STATUS.get(status_code(obs) or "")
    return make_claim(FactKind.OBSERVATION, codes, label, status, fields, effective)


def observation_value(el: Element | None, ctx: Context) -> tuple[FieldValue, str | None]:
    """(value, unit) of an ANY-typed observation value, by its xsi:type."""
    if el is None or attr(el, "nullFlavor"):
        return None, None
    kind = xsi_type(el) or ""
    raw = attr(el, "value")
    if kind in {"PQ", "INT", "REAL", ""} and raw is not None:
        number = _number(raw)
        unit = attr(el, "unit")
        return (number if number is not None else raw), (None if unit == "1" else unit)
    if kind == "IVL_PQ":
        low, high = first(el, "h:low"), first(el, "h:high")
        bounds = [attr(low, "value") or "", attr(high, "value") or ""]
        text = "-".join(bounds).strip("-") or None
        return text, attr(high, "unit") or attr(low, "unit")
    if kind == "BL" and raw in {"true", "false"}:
        return raw == "true", None
    if kind in {"TS", "IVL_TS"}:
        return time_of(el), None
    if kind in {"CD", "CE", "CV", "CO"}:
        return code_label(el, ctx.narrative) or attr(el, "code"), None
    if kind in {"RTO", "RTO_PQ_PQ", "RTO_INT_INT"}:
        parts = [attr(first(el, p), "value") for p in ("h:numerator", "h:denominator")]
        return ("/".join(p for p in parts if p) or None), None
    return meaningful(ctx.narrative.text(el) or flat_text(el)), None


def _number(raw: str) -> float | None:
    try:
        number = float(raw)
    except ValueError:
        return None
    return number if number == number and abs(number) != float("inf") else None


def map_immunization(entry: Element, ctx: Context) -> Mapped:
    """An Immunization Activity: completed, or not-done when negated (with the reason)."""
    mapped = Mapped("ImmunizationActivity")
    activities = statements(entry, IMMUNIZATION) or every(entry, "h:substanceAdministration")
    if not activities:
        mapped.warnings.append("immunization entry without a substanceAdministration")
    for sa in activities:
        try:
            mapped.claims.append(_immunization_claim(sa, ctx))
        except Skip as skip:
            mapped.warnings.append(str(skip))
    return mapped


def _immunization_claim(sa: Element, ctx: Context) -> Claim:
    codes, label = product(sa, ctx, "immunization")
    date = time_of(first(sa, "h:effectiveTime"))
    not_done = negated(sa)
    status = "not-done" if not_done else "completed"
    if status_code(sa) == "nullified":
        status = "entered-in-error"
    fields: dict[str, FieldValue] = {
        "occurrence": date,
        "status_reason": _refusal(sa, ctx) if not_done else None,
    }
    return make_claim(FactKind.IMMUNIZATION, codes, label, status, fields, date)


def _refusal(sa: Element, ctx: Context) -> str | None:
    """The Immunization Refusal Reason: its `code` (PATOBJ...), or a reason's `value`."""
    for obs in every(sa, "h:entryRelationship/h:observation"):
        holder = first(obs, "h:code") if templates(obs) & REFUSAL else first(obs, "h:value")
        if reason := code_label(holder, ctx.narrative) or attr(holder, "code"):
            return reason
    return None


def map_procedure(entry: Element, ctx: Context) -> Mapped:
    """A Procedure Activity (procedure, act or observation)."""
    statement = top(entry)
    name = local(statement) if statement is not None else ""
    mapped = Mapped(PROCEDURE_TYPES.get(name, "ProcedureActivity"))
    try:
        if statement is None:
            raise Skip("procedure entry without a statement")
        mapped.claims.append(_procedure_claim(statement, ctx))
    except Skip as skip:
        mapped.warnings.append(str(skip))
    return mapped


def _procedure_claim(statement: Element, ctx: Context) -> Claim:
    code = first(statement, "h:code")
    codes = codings(code)
    label = require_label(
        "procedure", codes, code_label(code, ctx.narrative), statement_text(statement, ctx)
    )
    date = time_of(first(statement, "h:effectiveTime"))
    status = PROCEDURE_STATUS.get(status_code(statement) or "")
    if negated(statement):
        status = "not-done"
    return make_claim(FactKind.PROCEDURE, codes, label, status, {"performed": date}, date)


def map_encounter(entry: Element, ctx: Context) -> Mapped:
    """An Encounter Activity: type from its code, start and end from effectiveTime."""
    mapped = Mapped("EncounterActivity")
    try:
        mapped.claims.append(_encounter_claim(first(entry, "h:encounter"), ctx))
    except Skip as skip:
        mapped.warnings.append(str(skip))
    return mapped


def _encounter_claim(encounter: Element | None, ctx: Context) -> Claim:
    if encounter is None:
        raise Skip("encounter entry without an encounter")
    code = first(encounter, "h:code")
    codes = codings(code)
    label = require_label(
        "encounter", codes, code_label(code, ctx.narrative), statement_text(encounter, ctx)
    )
    start, end = interval(first(encounter, "h:effectiveTime"))
    status = ENCOUNTER_STATUS.get(status_code(encounter) or "")
    fields: dict[str, FieldValue] = {"start": start, "end": end, "type": label}
    return make_claim(FactKind.ENCOUNTER, codes, label, status, fields, start)
