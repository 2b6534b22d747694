"""Deterministic fact keys: normalised code first, normalised text as the fallback."""

import hashlib
import re
import unicodedata
from datetime import datetime, timedelta, timezone
from functools import lru_cache

from engine.models import Coding, FactKind, as_utc
from ingest.drugs import generic_names

# Code-system URIs and OIDs (FHIR, C-CDA) → the short names used in fact keys.
SYSTEMS = {
    "http://snomed.info/sct": "snomed",
    "2.16.840.1.113883.6.96": "snomed",
    "http://hl7.org/fhir/sid/icd-10-cm": "icd10cm",
    "http://hl7.org/fhir/sid/icd-10": "icd10",
    "2.16.840.1.113883.6.90": "icd10cm",
    "2.16.840.1.113883.6.3": "icd10",
    "http://hl7.org/fhir/sid/icd-9-cm": "icd9cm",
    "2.16.840.1.113883.6.103": "icd9cm",
    "2.16.840.1.113883.6.104": "icd9cm",
    "http://www.nlm.nih.gov/research/umls/rxnorm": "rxnorm",
    "2.16.840.1.113883.6.88": "rxnorm",
    "http://loinc.org": "loinc",
    "2.16.840.1.113883.6.1": "loinc",
    "http://hl7.org/fhir/sid/cvx": "cvx",
    "2.16.840.1.113883.12.292": "cvx",
    "2.16.840.1.113883.6.59": "cvx",
    "http://hl7.org/fhir/sid/ndc": "ndc",
    "2.16.840.1.113883.6.69": "ndc",
    "http://www.ama-assn.org/go/cpt": "cpt",
    "2.16.840.1.113883.6.12": "cpt",
    "http://unitsofmeasure.org": "ucum",
    "http://fdasis.nlm.nih.gov": "unii",
    "2.16.840.1.113883.4.9": "unii",
}

# Which normalised systems identify a fact of each kind, best first.
PREFERRED = {
    FactKind.CONDITION: ("snomed", "icd10cm", "icd10", "icd9cm"),
    FactKind.MEDICATION: ("rxnorm", "ndc", "snomed"),
    FactKind.ALLERGY: ("snomed", "rxnorm", "unii", "ndc"),
    FactKind.OBSERVATION: ("loinc", "snomed"),
    FactKind.PROCEDURE: ("snomed", "cpt", "icd10", "loinc"),
    FactKind.IMMUNIZATION: ("cvx", "snomed", "ndc"),
    FactKind.ENCOUNTER: ("snomed", "cpt"),
}

DATED = {FactKind.OBSERVATION, FactKind.PROCEDURE, FactKind.IMMUNIZATION, FactKind.ENCOUNTER}


@lru_cache(maxsize=4096)
def normalize_system(system: str | None) -> str:
    """The short name of a code system URI or OID (`urn:oid:` prefix allowed)."""
    if not system:
        return "unknown"
    raw = system.strip().removeprefix("urn:oid:").rstrip("/")
    return SYSTEMS.get(raw, SYSTEMS.get(raw.lower(), raw.lower()))


@lru_cache(maxsize=65536)
def coding(system: str | None, code: str | None, display: str | None = None) -> Coding | None:
    """A normalised coding, or None when the code is missing."""
    if not code or not code.strip():
        return None
    return Coding(system=normalize_system(system), code=code.strip(), display=display or None)


# SNOMED CT semantic tags that displays carry ("Hypertension (disorder)"): not part of the name.
_SEMANTIC_TAG = re.compile(
    r"\s*\((disorder|finding|situation|procedure|regime/therapy|observable entity|"
    r"morphologic abnormality|substance|product|medicinal product|clinical drug|event|"
    r"qualifier value|body structure)\)\s*$",
    re.IGNORECASE,
)

# Common clinical abbreviations in problem lists, expanded for condition text keys only
# (elsewhere they are ambiguous: "MS" is multiple sclerosis or morphine sulfate).
CONDITION_ABBREVIATIONS = {
    "htn": "hypertension",
    "dm": "diabetes mellitus",
    "dm1": "type 1 diabetes mellitus",
    "dm2": "type 2 diabetes mellitus",
    "t1dm": "type 1 diabetes mellitus",
    "t2dm": "type 2 diabetes mellitus",
    "iddm": "type 1 diabetes mellitus",
    "niddm": "type 2 diabetes mellitus",
    "chf": "congestive heart failure",
    "copd": "chronic obstructive pulmonary disease",
    "cad": "coronary artery disease",
    "ckd": "chronic kidney disease",
    "afib": "atrial fibrillation",
    "gerd": "gastroesophageal reflux disease",
    "mi": "myocardial infarction",
    "uti": "urinary tract infection",
    "uri": "upper respiratory infection",
    "osa": "obstructive sleep apnea",
    "bph": "benign prostatic hyperplasia",
    "hld": "hyperlipidemia",
    "ra": "rheumatoid arthritis",
    "oa": "osteoarthritis",
    "pvd": "peripheral vascular disease",
    "tia": "transient ischemic attack",
    "dvt": "deep vein thrombosis",
    "pe": "pulmonary embolism",
}
_ROMAN_TYPE = {"type-i": "type-1", "type-ii": "type-2"}


MAX_SLUG = 120


def text_slug(text: str) -> str:
    """Case, accents, punctuation and spacing folded: `Type 2 Diabetes` → `type-2-diabetes`.

    A slug longer than 120 characters is cut and ends in a hash of the whole, so keys stay
    short, deterministic and distinct.
    """
    folded = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode().lower()
    slug = re.sub(r"[^a-z0-9]+", "-", folded).strip("-") or "unnamed"
    if len(slug) <= MAX_SLUG:
        return slug
    digest = hashlib.sha256(slug.encode()).hexdigest()[:12]
    return f"{slug[: MAX_SLUG - 13].rstrip('-')}-{digest}"


def normalize_text(kind: FactKind, label: str) -> str:
    """The text part of a fact key when no preferred code is present.

    Folds case, accents and punctuation (`text_slug`), drops a SNOMED semantic tag such
    as "(disorder)", expands common abbreviations of conditions (`HTN` → hypertension,
    `type II` → `type 2`) and, for medications, reduces the text to its generic
    ingredient names (`Lipitor 20 mg` → `atorvastatin`; sorted and joined by `-`).

    Args:
        kind: the fact kind; only conditions and medications get the extra steps.
        label: the display text.

    Returns:
        A slug of `[a-z0-9-]`, never empty.
    """
    if kind is FactKind.MEDICATION:
        generics = generic_names(_SEMANTIC_TAG.sub("", label))
        if generics:
            return "-".join(text_slug(name) for name in generics)
    return folded_text(kind, label)


@lru_cache(maxsize=65536)
def folded_text(kind: FactKind, label: str) -> str:
    """A display folded to a slug: no semantic tag, abbreviations of conditions expanded.

    Args:
        kind: the fact kind; conditions get their common abbreviations expanded.
        label: the display text.

    Returns:
        A slug of `[a-z0-9-]`, never empty.
    """
    slug = text_slug(_SEMANTIC_TAG.sub("", label))
    if kind is FactKind.CONDITION:
        words = [CONDITION_ABBREVIATIONS.get(word, word) for word in slug.split("-")]
        slug = text_slug(" ".join(words))
        for roman, arabic in _ROMAN_TYPE.items():
            slug = re.sub(rf"(^|-){roman}(-|$)", rf"\g<1>{arabic}\g<2>", slug)
    return slug


# An HL7 v2/v3 timestamp as C-CDA writes it: 20200131 or 20200131143000.123-0500.
_HL7_TS = re.compile(
    r"^(\d{4})(\d{2})?(\d{2})?(?:(\d{2})(\d{2})?(\d{2})?(?:\.\d+)?)?(?:([+-])(\d{2})(\d{2}))?$"
)
_ISO_TIME = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?"
    r"(Z|[+-]\d{2}:?\d{2})?$"
)


@lru_cache(maxsize=65536)
def normalize_date(value: str | None) -> str | None:
    """A date or dateTime (FHIR ISO 8601 or HL7 TS) as the ISO string used in keys.

    A date-only value (`YYYY`, `YYYY-MM`, `YYYY-MM-DD`, or `YYYYMMDD`) stays a date; a
    dateTime with an offset becomes UTC `YYYY-MM-DDTHH:MM:SSZ` (fractions dropped); a
    dateTime without an offset keeps its local time, without `Z`. Anything else is
    returned stripped, unchanged.

    Args:
        value: the date text, or None.

    Returns:
        The normalised string, or None when the value is missing or blank.
    """
    if value is None or not value.strip():
        return None
    text = value.strip()
    iso = _ISO_TIME.match(text)
    if iso:
        parts = [int(iso.group(i) or 0) for i in range(1, 7)]
        return _format_time(parts, _offset(iso.group(7))) or text
    if re.fullmatch(r"\d{4}(-\d{2}(-\d{2})?)?", text):
        return text
    ts = _HL7_TS.match(text)
    if not ts:
        return text
    year, month, day, hour = ts.group(1), ts.group(2), ts.group(3), ts.group(4)
    if hour is None or day is None:
        return "-".join(part for part in (year, month, day) if part)
    parts = [int(ts.group(i) or 0) for i in range(1, 7)]
    sign = ts.group(7)
    offset = None if sign is None else f"{sign}{ts.group(8)}:{ts.group(9)}"
    return _format_time(parts, _offset(offset)) or text


def _offset(text: str | None) -> timedelta | None:
    if text is None:
        return None
    if text == "Z":
        return timedelta(0)
    digits = text[1:].replace(":", "")
    delta = timedelta(hours=int(digits[:2]), minutes=int(digits[2:4] or 0))
    return -delta if text[0] == "-" else delta


def _format_time(parts: list[int], offset: timedelta | None) -> str | None:
    try:
        year, month, day, hour, minute, second = parts[:6]
        zone = None if offset is None else timezone(offset)
        local = datetime(year, month, day, hour, minute, second, tzinfo=zone)
        local = local if offset is None else as_utc(local)
    except ValueError:  # 30 February, or before year 1 in UTC: no point in time to normalise
        return None
    text = f"{local.year:04d}-{local.month:02d}-{local.day:02d}T"
    text += f"{local.hour:02d}:{local.minute:02d}:{local.second:02d}"
    return text if offset is None else text + "Z"


def fact_key(kind: FactKind, codes: tuple[Coding, ...], label: str, date: str | None = None) -> str:
    """The deterministic key of a fact.

    Args:
        kind: the fact kind.
        codes: normalised codings; the kind's preferred system wins.
        label: text used when no preferred code is present.
        date: for dated kinds (observations, procedures, immunizations, encounters);
            normalised with `normalize_date`, so FHIR and HL7 TS forms give one key.

    Returns:
        `kind:system:code` or `kind:text:slug` (see `normalize_text`), with `:date`
        appended for dated kinds.
    """
    by_system: dict[str, str] = {}
    for c in codes:
        by_system.setdefault(c.system, c.code)
    system = next((s for s in PREFERRED[kind] if s in by_system), None)
    if system is not None:
        base = f"{kind}:{system}:{by_system[system]}"
    else:
        base = f"{kind}:text:{normalize_text(kind, label)}"
    if kind in DATED:
        return f"{base}:{normalize_date(date) or 'undated'}"
    return base
