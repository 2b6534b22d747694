"""Reading values out of (already validated) FHIR JSON: texts, codes, dates, quantities."""

from typing import Any

from engine.models import Coding, FieldValue
from ingest.keys import coding, normalize_date

Json = dict[str, Any]

_PERIOD_UNITS = {"s": "second", "min": "minute", "h": "hour", "d": "day", "wk": "week"}
_PERIOD_UNITS |= {"mo": "month", "a": "year"}


def obj(value: Any) -> Json:
    """`value` when it is a JSON object, else an empty one (absent elements read as {})."""
    return value if isinstance(value, dict) else {}


def first(value: Any) -> Json:
    """The first object of a JSON array, or {}."""
    if isinstance(value, list) and value:
        return obj(value[0])
    return {}


def number(value: Any) -> str:
    """A decimal as text without a pointless `.0` (1.0 → "1", 2.5 → "2.5")."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def cc_text(concept: Any) -> str | None:
    """A CodeableConcept's text, else its first coding's display, else its first code."""
    cc = obj(concept)
    if cc.get("text"):
        return str(cc["text"])
    codings = [obj(c) for c in cc.get("coding") or ()]
    for key in ("display", "code"):
        for c in codings:
            if c.get(key):
                return str(c[key])
    return None


def cc_code(concept: Any) -> str | None:
    """The first code of a CodeableConcept (status concepts carry exactly one)."""
    for c in obj(concept).get("coding") or ():
        if obj(c).get("code"):
            return str(c["code"])
    return None


def cc_codes(*concepts: Any) -> tuple[Coding, ...]:
    """The normalised codings of one or more CodeableConcepts, in order, deduplicated."""
    seen: dict[tuple[str, str], Coding] = {}
    for concept in concepts:
        for raw in obj(concept).get("coding") or ():
            c = obj(raw)
            norm = coding(c.get("system"), c.get("code"), c.get("display"))
            if norm is not None:
                seen.setdefault((norm.system, norm.code), norm)
    return tuple(seen.values())


def texts(concepts: Any) -> str | None:
    """The texts of a list of CodeableConcepts, joined by "; "."""
    found = [t for t in (cc_text(c) for c in concepts or ()) if t]
    return "; ".join(dict.fromkeys(found)) or None


def ref_texts(refs: Any) -> str | None:
    """The displays of a list of References, joined by "; "."""
    found = [str(obj(r)["display"]) for r in refs or () if obj(r).get("display")]
    return "; ".join(dict.fromkeys(found)) or None


def quantity(value: Any) -> str | None:
    """A Quantity (or Age, Duration...) as "value unit"."""
    q = obj(value)
    if q.get("value") is None:
        return None
    unit = q.get("unit") or q.get("code")
    text = f"{q.get('comparator', '')}{number(q['value'])}"
    return f"{text} {unit}" if unit else text


def choice_date(resource: Json, base: str) -> str | None:
    """The date of a `base[x]` choice (dateTime, instant, Period.start), normalised."""
    for suffix in ("DateTime", "Instant"):
        if resource.get(base + suffix):
            return normalize_date(str(resource[base + suffix]))
    period = obj(resource.get(base + "Period"))
    return normalize_date(period.get("start") or period.get("end"))


def choice_end(resource: Json, base: str) -> str | None:
    """The end of a `base[x]` Period choice, normalised."""
    return normalize_date(obj(resource.get(base + "Period")).get("end"))


def choice_text(resource: Json, base: str) -> str | None:
    """A `base[x]` choice as text: a date, else an age, range or string."""
    found = choice_date(resource, base)
    if found:
        return found
    if resource.get(base + "String"):
        return str(resource[base + "String"])
    age = quantity(resource.get(base + "Age"))
    if age:
        return f"age {age}"
    bounds = obj(resource.get(base + "Range"))
    low, high = bounds.get("low"), bounds.get("high")
    if low or high:
        return f"{quantity(low) or ''}-{quantity(high) or ''}"
    if isinstance(resource.get(base + "Boolean"), bool):
        return str(resource[base + "Boolean"]).lower()
    return None


def timing_text(timing: Any) -> str | None:
    """A Timing as text: its code ("BID"), or its repeat ("2x every 1 day")."""
    t = obj(timing)
    if t.get("code"):
        return cc_text(t["code"])
    rep = obj(t.get("repeat"))
    if rep.get("period") is None:
        return None
    unit = _PERIOD_UNITS.get(str(rep.get("periodUnit")), str(rep.get("periodUnit") or "period"))
    period = number(rep["period"])
    if rep.get("periodMax") is not None:
        period = f"{period}-{number(rep['periodMax'])}"
    every = f"every {unit}" if period == "1" else f"every {period} {unit}s"
    freq = rep.get("frequency")
    if freq is None:
        return every
    return f"{number(freq)}x {every}"


def dosage_fields(dosage: Any) -> dict[str, FieldValue]:
    """dose, route and frequency of a Dosage (MedicationAdministration's `dosage` too)."""
    d = obj(dosage)
    dose = d.get("text")
    if not dose:
        rate = first(d.get("doseAndRate"))
        dose = quantity(rate.get("doseQuantity") or d.get("dose"))
        if dose is None and rate.get("doseRange"):
            dose = choice_text(rate, "dose")
    return {
        "dose": dose,
        "route": cc_text(d.get("route")),
        "frequency": timing_text(d.get("timing")) or cc_text(d.get("asNeededCodeableConcept")),
    }


def observation_value(holder: Json) -> tuple[FieldValue, str | None]:
    """An Observation's (or component's) value[x] and its unit."""
    q = holder.get("valueQuantity")
    if isinstance(q, dict) and q.get("value") is not None:
        unit = q.get("unit") or q.get("code")
        return float(q["value"]), str(unit) if unit else None
    if holder.get("valueCodeableConcept"):
        return cc_text(holder["valueCodeableConcept"]), None
    for key in ("valueString", "valueBoolean", "valueInteger", "valueDateTime", "valueTime"):
        if holder.get(key) is not None:
            return holder[key], None
    if holder.get("valueRange"):
        return choice_text(holder, "value"), None
    ratio = obj(holder.get("valueRatio"))
    if ratio:
        return f"{quantity(ratio.get('numerator'))}/{quantity(ratio.get('denominator'))}", None
    if holder.get("valuePeriod"):
        return choice_date(holder, "value"), None
    return None, None
