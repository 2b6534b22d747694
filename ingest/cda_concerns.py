"""Problem and allergy entries: concern acts wrapping the observations that carry the facts."""

from collections.abc import Callable

from engine.models import Claim, Coding, FactKind, FieldValue
from ingest.cda_common import (
    ALLERGY_OBS,
    CRITICALITY,
    PROBLEM_OBS,
    REACTION,
    Context,
    Mapped,
    Skip,
    make_claim,
    negated,
    placeholder,
    require_label,
    statement_text,
    statements,
    status_code,
    status_observation,
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
)

# Allergy observation value (the kind of reaction propensity) → FHIR category.
ALLERGY_CATEGORY = {
    "416098002": "medication",  # drug allergy
    "419511003": "medication",  # propensity to adverse reactions to drug
    "59037007": "medication",  # drug intolerance
    "414285001": "food",  # food allergy
    "418471000": "food",  # propensity to adverse reactions to food
    "235719002": "food",  # food intolerance
    "426232007": "environment",  # environmental allergy
}
ALLERGY_TYPES = set(ALLERGY_CATEGORY) | {
    "419199007",  # allergy to substance
    "420134006",  # propensity to adverse reactions
    "418038007",  # propensity to adverse reactions to substance
}
# A negated allergy observation with no substance → the FHIR "no known ..." code.
NO_KNOWN_BY_CATEGORY = {
    None: ("716186003", "No known allergy"),
    "medication": ("409137002", "No known drug allergy"),
    "food": ("429625007", "No known food allergy"),
    "environment": ("428607008", "No known environmental allergy"),
}
# "Any substance" allergens: negated, they say "no known (drug, food) allergy".
GENERIC_SUBSTANCE = {
    "105590001": None,  # Substance
    "410942007": "medication",  # Drug or medicament
    "373873005": "medication",  # Pharmaceutical / biologic product
    "255620007": "food",  # Foods
    "762766007": "food",  # Edible substance
}
NO_KNOWN_CODES = {"716186003", "409137002", "429625007", "428607008", "428197003", "716184000"}
CRITICALITY_CODES = {"CRITH": "high", "CRITL": "low", "CRITU": "unable-to-assess"}


def _concern_status(entry: Element) -> str | None:
    """The concern act's statusCode, when the entry wraps its observations in one."""
    act = top(entry)
    if act is None or local(act) != "act":
        return None
    return status_code(act)


def _observations(entry: Element, wanted: frozenset[str]) -> list[Element]:
    found = statements(entry, wanted)
    if found:
        return found
    # Untemplated concern acts (seen from Cerner) still hold their observation as SUBJ.
    return every(entry, "h:act/h:entryRelationship/h:observation") or every(entry, "h:observation")


def map_problem(entry: Element, ctx: Context) -> Mapped:
    """A Problem Concern Act: one condition claim per Problem Observation."""
    return _per_observation(
        entry,
        ctx,
        "ProblemObservation",
        PROBLEM_OBS,
        _condition_claim,
        "problem entry without a problem observation",
    )


def _per_observation(
    entry: Element,
    ctx: Context,
    name: str,
    observation_templates: frozenset[str],
    claim: Callable[[Element, str | None, Context], Claim],
    missing: str,
) -> Mapped:
    """One claim per observation of a concern act; a skipped one becomes a warning."""
    mapped = Mapped(name)
    concern = _concern_status(entry)
    observations = _observations(entry, observation_templates)
    if not observations:
        mapped.warnings.append(missing)
    for obs in observations:
        try:
            mapped.claims.append(claim(obs, concern, ctx))
        except Skip as skip:
            mapped.warnings.append(str(skip))
    return mapped


def _condition_claim(obs: Element, concern: str | None, ctx: Context) -> Claim:
    if negated(obs):
        raise Skip("negated problem observation (negationInd=true) not recorded as a condition")
    value = first(obs, "h:value")
    codes = codings(value)
    label = require_label(
        "problem observation", codes, code_label(value, ctx.narrative), statement_text(obs, ctx)
    )
    onset, abatement = interval(first(obs, "h:effectiveTime"))
    status = _condition_status(obs, concern, abatement)
    fields: dict[str, FieldValue] = {"onset": onset, "abatement": abatement}
    return make_claim(FactKind.CONDITION, codes, label, status, fields)


def _condition_status(obs: Element, concern: str | None, abatement: str | None) -> str:
    """An end date means resolved; then the status observation; then a closed concern."""
    if abatement:
        return "resolved"
    explicit = status_observation(obs)
    if explicit is not None:
        return "active" if explicit == "active" else "resolved"
    if status_code(obs) in {"resolved", "inactive"} or concern in {"completed", "aborted"}:
        return "resolved"
    return "active"


def map_allergy(entry: Element, ctx: Context) -> Mapped:
    """An Allergy Concern Act: one allergy claim per Allergy (Intolerance) Observation."""
    return _per_observation(
        entry,
        ctx,
        "AllergyObservation",
        ALLERGY_OBS,
        _allergy_claim,
        "allergy entry without an allergy observation",
    )


def _allergy_claim(obs: Element, concern: str | None, ctx: Context) -> Claim:
    category = ALLERGY_CATEGORY.get(attr(first(obs, "h:value"), "code") or "")
    codes, label, no_known, category = _allergen(obs, ctx, category)
    if category is None and any(c.system in {"rxnorm", "ndc"} for c in codes):
        category = "medication"
    onset, resolved_at = interval(first(obs, "h:effectiveTime"))
    fields: dict[str, FieldValue] = {
        "category": category,
        "criticality": _criticality(obs),
        "reactions": _reactions(obs, ctx),
        "onset": onset,
        "no_known": True if no_known else None,
    }
    status = _allergy_status(obs, concern, resolved_at)
    return make_claim(FactKind.ALLERGY, codes, label, status, fields)


def _allergen(
    obs: Element, ctx: Context, category: str | None
) -> tuple[tuple[Coding, ...], str, bool, str | None]:
    """(codes, label, no_known, category) of the allergen.

    A negated observation, a "no known allergy" code or placeholder text ("NKA") say that
    there is no known allergy: to the substance if one is named, else in general, coded
    as the FHIR reader's SNOMED "No known (drug, food...) allergy" so the facts merge.
    """
    codes, substance = _substance(obs, ctx)
    generic = [c for c in codes if c.system == "snomed" and c.code in GENERIC_SUBSTANCE]
    if negated(obs) and generic and len(generic) == len(codes):
        category = category or GENERIC_SUBSTANCE[generic[0].code]
        codes, substance = (), None
    text = substance or statement_text(obs, ctx)
    unnamed = substance is None or placeholder(substance, codes)
    if not codes and unnamed and (negated(obs) or (text and placeholder(text, codes))):
        code, display = NO_KNOWN_BY_CATEGORY[category]
        return (Coding(system="snomed", code=code, display=display),), display, True, category
    if negated(obs) and substance:
        return codes, f"No known allergy to {substance}", True, category
    label = require_label("allergy observation", codes, text)
    no_known = negated(obs) or any(c.code in NO_KNOWN_CODES for c in codes)
    return codes, label, no_known, category


def _substance(obs: Element, ctx: Context) -> tuple[tuple[Coding, ...], str | None]:
    """The allergen: participant playingEntity code, else its name, else a non-type value."""
    entity = first(obs, "h:participant/h:participantRole/h:playingEntity")
    code = first(entity, "h:code")
    codes = codings(code)
    label = code_label(code, ctx.narrative) or meaningful(flat_text(first(entity, "h:name")))
    if codes or label:
        return codes, label
    # CCD R1 exports put the substance in the observation value instead of the allergy type.
    value = first(obs, "h:value")
    if (attr(value, "code") or "") in ALLERGY_TYPES:
        return (), None
    return codings(value), code_label(value, ctx.narrative)


def _reactions(obs: Element, ctx: Context) -> list[str]:
    reactions: list[str] = []
    for rel in every(obs, "h:entryRelationship/h:observation"):
        if not templates(rel) & REACTION:
            continue
        value = first(rel, "h:value")
        text = code_label(value, ctx.narrative) or statement_text(rel, ctx)
        if text and text not in reactions:
            reactions.append(text)
    return reactions


def _criticality(obs: Element) -> str | None:
    for rel in every(obs, "h:entryRelationship/h:observation"):
        if templates(rel) & CRITICALITY:
            return CRITICALITY_CODES.get(attr(first(rel, "h:value"), "code") or "")
    return None


def _allergy_status(obs: Element, concern: str | None, resolved_at: str | None) -> str:
    """An end date means resolved; then the status observation; then the concern's status."""
    if resolved_at:
        return "resolved"
    explicit = status_observation(obs)
    if explicit is not None:
        return explicit
    if concern == "completed":
        return "resolved"
    if concern in {"suspended", "aborted"}:
        return "inactive"
    return "active"
