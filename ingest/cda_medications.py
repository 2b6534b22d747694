"""Medication Activity entries (substanceAdministration) → medication claims and indications."""

from engine.models import Claim, FactKind, FactLink, FactLinkType, FieldValue
from ingest.cda_common import (
    MED_ACTIVITY,
    Context,
    Mapped,
    Skip,
    author_name,
    decimal,
    make_claim,
    negated,
    product,
    statement_text,
    statements,
    status_code,
    status_observation,
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
    meaningful,
    xsi_type,
)
from ingest.keys import fact_key

STOPPED = {"aborted", "cancelled", "nullified", "suspended", "obsolete"}
UNITS = {"s": "second", "min": "minute", "h": "hour", "d": "day", "wk": "week"}
UNITS |= {"mo": "month", "a": "year"}
EVENTS = {  # EIVL_TS event codes (HL7 TimingEvent)
    "HS": "at bedtime",
    "AC": "before meals",
    "PC": "after meals",
    "C": "with meals",
    "ACM": "before breakfast",
    "ACD": "before lunch",
    "ACV": "before dinner",
    "WAKE": "on waking",
}


def map_medication(entry: Element, ctx: Context) -> Mapped:
    """A Medication Activity (also inside a Discharge Medication act): one medication claim."""
    mapped = Mapped("MedicationActivity")
    activities = statements(entry, MED_ACTIVITY) or every(entry, "h:substanceAdministration")
    if not activities:
        mapped.warnings.append("medication entry without a substanceAdministration")
    for sa in activities:
        try:
            claim = _medication_claim(sa, ctx)
        except Skip as skip:
            mapped.warnings.append(str(skip))
            continue
        mapped.claims.append(claim)
        mapped.links.extend(
            FactLink(from_key=claim.fact_key, to_key=key, type=FactLinkType.PRESCRIBED_FOR)
            for key in _indication_keys(sa, ctx)
        )
    return mapped


def _medication_claim(sa: Element, ctx: Context) -> Claim:
    if negated(sa):  # refused, or "no medications": nothing the patient takes
        raise Skip("medication not taken (negationInd=true) not recorded")
    codes, label = product(sa, ctx, "medication")
    times = every(sa, "h:effectiveTime")
    span = next((t for t in times if xsi_type(t) in {None, "IVL_TS", "TS"}), None)
    start, end = interval(span)
    fields: dict[str, FieldValue] = {
        "dose": _dose(sa),
        "route": code_label(first(sa, "h:routeCode"), ctx.narrative)
        or attr(first(sa, "h:routeCode"), "code"),
        "frequency": _frequency(sa),
        "start": start,
        "end": end,
        "prescriber": author_name(sa) or author_name(first(sa, "h:entryRelationship/h:supply")),
        "reason": "; ".join(reason for reason, _ in _indications(sa, ctx)) or None,
        "raw_status": status_code(sa),
    }
    status = _medication_status(sa, end, ctx.doc_date)
    return make_claim(FactKind.MEDICATION, codes, label, status, fields)


def _medication_status(sa: Element, end: str | None, doc_date: str | None) -> str:
    """current / discontinued.

    Any sign of stopping wins: a stopping statusCode, or an end date on or before the
    document date; then a Medication Status observation. Exporters commonly send
    `completed` for a current prescription (Cerner, PracticeFusion, Allscripts), so
    `completed` alone means current.
    """
    if status_code(sa) in STOPPED:
        return "discontinued"
    if end and (doc_date is None or end[:10] <= doc_date[:10]):
        return "discontinued"
    explicit = status_observation(sa)
    if explicit is not None and explicit != "active":
        return "discontinued"
    return "current"


def _dose(sa: Element) -> str | None:
    """`2 Puff`, `1-2 tablet`: doseQuantity (PQ or IVL_PQ), unit else administrationUnitCode."""
    dose = first(sa, "h:doseQuantity")
    amount, unit = attr(dose, "value"), attr(dose, "unit")
    if amount is None:
        bounds = [
            (value, attr(b, "unit"))
            for b in every(dose, "h:low") + every(dose, "h:high")
            if (value := attr(b, "value"))
        ]
        if not bounds:
            return None
        amount = "-".join(decimal(v) for v, _ in bounds)
        unit = bounds[-1][1]
    else:
        amount = decimal(amount)
    if unit in {None, "1", "null"}:
        admin = first(sa, "h:administrationUnitCode")
        unit = (
            meaningful(flat_text(first(dose, "h:translation/h:originalText")))
            or attr(admin, "displayName")
            or meaningful(flat_text(first(admin, "h:originalText")))
        )
    return f"{amount} {unit}" if unit else amount


def _frequency(sa: Element) -> str | None:
    """PIVL_TS / EIVL_TS as the FHIR reader words timings: "every 6 hours", "4x every day"."""
    parts: list[str] = []
    for t in every(sa, "h:effectiveTime"):
        kind = xsi_type(t)
        if kind == "PIVL_TS":
            parts.append(_period(t))
        elif kind == "EIVL_TS":
            event = attr(first(t, "h:event"), "code")
            if event:
                parts.append(EVENTS.get(event, event))
    if any(parts) and first(sa, "h:precondition") is not None:
        parts.append("as needed")
    return " ".join(p for p in parts if p) or None


def _period(pivl: Element) -> str:
    period = first(pivl, "h:period")
    value, unit = attr(period, "value"), attr(period, "unit") or ""
    if value is None:  # IVL_PQ: every 4-6 hours
        low, high = attr(first(period, "h:low"), "value"), attr(first(period, "h:high"), "value")
        unit = attr(first(period, "h:high"), "unit") or attr(first(period, "h:low"), "unit") or ""
        return _every(f"{decimal(low)}-{decimal(high)}", unit) if low and high else ""
    if attr(pivl, "institutionSpecified") == "true" and (per_day := _per_day(value, unit)):
        return f"{per_day}x every day"  # "6 h, institution specified" means 4 times a day
    return _every(decimal(value), unit)


def _every(period: str, unit: str) -> str:
    name = UNITS.get(unit, unit or "period")
    return f"every {name}" if period == "1" else f"every {period} {name}s"


def _per_day(value: str, unit: str) -> int | None:
    try:
        hours = float(value) * {"h": 1, "d": 24}[unit]
    except (KeyError, ValueError):
        return None
    if hours <= 0 or 24 % hours:
        return None
    return int(24 // hours)


def _indications(sa: Element, ctx: Context) -> list[tuple[str, Element]]:
    """(label, value) of each indication (RSON) observation."""
    found: list[tuple[str, Element]] = []
    for obs in every(sa, "h:entryRelationship[@typeCode='RSON']/h:observation"):
        value = first(obs, "h:value")
        label = code_label(value, ctx.narrative) or statement_text(obs, ctx)
        if label and value is not None:
            found.append((label, value))
    return found


def _indication_keys(sa: Element, ctx: Context) -> list[str]:
    """Condition fact keys of coded indications: PRESCRIBED_FOR targets."""
    keys: list[str] = []
    for label, value in _indications(sa, ctx):
        codes = codings(value)
        if codes:
            key = fact_key(FactKind.CONDITION, codes, label)
            if key not in keys:
                keys.append(key)
    return keys
