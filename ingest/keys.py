"""Deterministic fact keys: normalised code first, normalised text as the fallback."""

import re
import unicodedata

from engine.models import Coding, FactKind

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


def normalize_system(system: str | None) -> str:
    """The short name of a code system URI or OID (`urn:oid:` prefix allowed)."""
    if not system:
        return "unknown"
    raw = system.strip().removeprefix("urn:oid:").rstrip("/")
    return SYSTEMS.get(raw, SYSTEMS.get(raw.lower(), raw.lower()))


def coding(system: str | None, code: str | None, display: str | None = None) -> Coding | None:
    """A normalised coding, or None when the code is missing."""
    if not code or not code.strip():
        return None
    return Coding(system=normalize_system(system), code=code.strip(), display=display or None)


def text_slug(text: str) -> str:
    """Case, accents, punctuation and spacing folded: `Type 2 Diabetes` → `type-2-diabetes`."""
    folded = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode().lower()
    return re.sub(r"[^a-z0-9]+", "-", folded).strip("-") or "unnamed"


def fact_key(
    kind: FactKind, codes: tuple[Coding, ...], label: str, date: str | None = None
) -> str:
    """The deterministic key of a fact.

    Args:
        kind: the fact kind.
        codes: normalised codings; the kind's preferred system wins.
        label: text used when no preferred code is present.
        date: for dated kinds (observations, procedures, immunizations, encounters).

    Returns:
        `kind:system:code` or `kind:text:slug`, with `:date` appended for dated kinds.
    """
    by_system = {c.system: c.code for c in codes}
    base = next(
        (f"{kind}:{system}:{by_system[system]}" for system in PREFERRED[kind] if system in by_system),
        f"{kind}:text:{text_slug(label)}",
    )
    if kind in DATED:
        return f"{base}:{date or 'undated'}"
    return base
