"""Memory → fact relationships (GUIDELINE §3): same entity first, then the edge type.

Only symptom → condition and adherence → medication edges are inferred. A symptom is the
same entity as a condition when they share a distinctive word ("back pain" / "Chronic
low back pain") or the symptom is a manifestation of it in the curated table
(`cues.json`: wheezing → asthma, sugars → diabetes). A medication is the same entity
when an ingredient matches, brand or generic ("Norvasc" / amlodipine). Facts are only
read, never changed.
"""

import re
from collections.abc import Iterable
from dataclasses import dataclass

from engine.memories.drugs import generic_names, ingredients
from engine.memories.lexicon import load_lexicon
from engine.memories.text import words
from engine.models import Fact, FactKind, Memory, MemoryType, Relationship, RelationshipType

METHOD_SYMPTOM = "lexical-manifestation"
METHOD_DRUG = "ingredient-match"
# Words that say nothing about which condition is meant.
GENERIC = frozenset(
    [
        "pain",
        "chronic",
        "acute",
        "disorder",
        "disease",
        "syndrome",
        "left",
        "right",
        "bilateral",
        "unspecified",
        "history",
        "of",
        "the",
        "and",
        "with",
        "without",
        "in",
        "on",
        "type",
        "mild",
        "moderate",
        "severe",
        "primary",
        "essential",
        "systemic",
        "arterial",
        "condition",
        "problem",
        "problems",
        "issue",
        "issues",
        "episode",
        "episodes",
        "flare",
        "recurrent",
        "status",
        "post",
        "body",
        "symptoms",
        "symptom",
        "finding",
        "lower",
        "upper",
    ]
)
INACTIVE = frozenset(
    {
        "resolved",
        "inactive",
        "remission",
        "discontinued",
        "stopped",
        "completed",
        "cancelled",
        "entered-in-error",
        "not-taken",
    }
)
_DOSE = re.compile(r"(\d+(?:\.\d+)?)\s*(?:mg|milligrams?|m g|mcg|micrograms?|units?)\b")


@dataclass(frozen=True)
class ConditionView:
    fact: Fact
    text: str
    words: frozenset[str]


def _stem(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def content_words(text: str) -> frozenset[str]:
    """Distinctive, singular words of a subject or label."""
    return frozenset(_stem(w) for w in words(text) if w not in GENERIC and len(w) > 2)


def condition_views(facts: Iterable[Fact]) -> list[ConditionView]:
    """Condition facts with their searchable text (label and code displays)."""
    views = []
    for fact in facts:
        if fact.kind is FactKind.CONDITION:
            text = " ".join([fact.label, *(c.display or "" for c in fact.codes)]).lower()
            views.append(ConditionView(fact, text, content_words(text)))
    return views


def same_condition(subject: str, view: ConditionView) -> str | None:
    """How a symptom subject is the condition: "name", "manifestation", or None."""
    subject_words = content_words(subject)
    if subject_words & view.words:
        return "name"
    tokens = set(words(subject))
    for key, signs in load_lexicon().manifestations.items():
        if key not in view.text:
            continue
        for sign in signs:
            sign_words = set(words(sign))
            if sign_words and sign_words <= tokens:
                return "manifestation"
    return None


def medication_generics(fact: Fact) -> frozenset[str]:
    """Ingredient names of a medication fact, from its label, code displays and key."""
    names: set[str] = set()
    for text in [fact.label, *(c.display or "" for c in fact.codes)]:
        for name in generic_names(text):
            names |= ingredients(name)
    if fact.fact_key.startswith("medication:text:"):
        names |= ingredients(fact.fact_key.removeprefix("medication:text:").replace("-", " "))
    return frozenset(names)


def relate(memories: Iterable[Memory], facts: list[Fact]) -> list[Relationship]:
    """The relationships of the memories to the patient's facts, at most one per pair."""
    conditions = condition_views(facts)
    meds = [(f, medication_generics(f)) for f in facts if f.kind is FactKind.MEDICATION]
    out: list[Relationship] = []
    for memory in memories:
        if memory.type is MemoryType.SYMPTOM:
            out.extend(_symptom_edges(memory, conditions))
        elif memory.type is MemoryType.ADHERENCE:
            out.extend(_adherence_edges(memory, meds))
    return out


def _symptom_edges(memory: Memory, conditions: list[ConditionView]) -> list[Relationship]:
    edges = []
    for view in conditions:
        how = same_condition(memory.subject, view)
        if how is None:
            continue
        kind, why = symptom_type(memory, view.fact, how)
        edges.append(
            Relationship(
                memory_id=memory.memory_id,
                fact_key=view.fact.fact_key,
                type=kind,
                rationale=f"{memory.subject!r} matches {view.fact.label!r} by {how}: {why}",
                confidence=0.8 if how == "name" else 0.6,
                method=METHOD_SYMPTOM,
            )
        )
    return edges


def symptom_type(memory: Memory, fact: Fact, how: str) -> tuple[RelationshipType, str]:
    """GUIDELINE §3 for a symptom and a condition that are the same entity."""
    present = memory.attributes.get("present", True)
    inactive = (fact.status or "active").lower() in INACTIVE
    if inactive and present:
        return RelationshipType.CONFLICTS, "ongoing symptoms of a condition recorded resolved"
    if inactive:
        return RelationshipType.CORROBORATES, "absent, as the resolved record says"
    named = how == "name" or bool(memory.attributes.get("condition_term"))
    if not present and memory.attributes.get("gone") and named:
        return RelationshipType.CONFLICTS, "patient says a condition recorded active is gone"
    if not present:
        return RelationshipType.ENRICHES, "absence of a manifestation adds current control"
    if memory.attributes.get("details"):
        return RelationshipType.ENRICHES, "adds " + ", ".join(memory.attributes["details"])
    if _brief(memory):
        return RelationshipType.CORROBORATES, "confirms the active condition"
    return RelationshipType.ENRICHES, "adds how the condition affects the patient"


def _adherence_edges(memory: Memory, meds: list[tuple[Fact, frozenset[str]]]) -> list[Relationship]:
    named = {i for d in memory.attributes.get("drugs", []) for i in ingredients(d)}
    inferred = {i for d in memory.attributes.get("class_drugs", []) for i in ingredients(d)}
    edges = []
    label_words = _product_words(memory.subject) if not named else frozenset()
    for fact, generics in meds:
        direct = bool(named & generics)
        by_label = bool(label_words & _product_words(fact.label))
        if not direct and not (inferred & generics) and not by_label:
            continue
        kind, why = adherence_type(memory, fact)
        edges.append(
            Relationship(
                memory_id=memory.memory_id,
                fact_key=fact.fact_key,
                type=kind,
                rationale=f"{memory.subject!r} is {fact.label!r} ({why})",
                confidence=0.85 if direct else 0.55,
                method=METHOD_DRUG if direct else "drug-class",
            )
        )
    return edges


def adherence_type(memory: Memory, fact: Fact) -> tuple[RelationshipType, str]:
    """GUIDELINE §3 for an adherence statement about a recorded medication."""
    behaviour = memory.attributes.get("behavior", "as_prescribed")
    recorded_off = (fact.status or "active").lower() in INACTIVE
    if recorded_off:
        if behaviour in {"stopped", "never_started"}:
            if memory.attributes.get("reason"):
                return RelationshipType.ENRICHES, "gives the reason for a recorded stop"
            return RelationshipType.CORROBORATES, "stopped, as recorded"
        return RelationshipType.CONFLICTS, "taking a medication recorded as stopped"
    if memory.attributes.get("pattern") == "as_needed":
        if _as_needed(fact):
            return RelationshipType.ENRICHES, "usage pattern of an as-needed medication"
        return RelationshipType.CONFLICTS, "taken only as needed vs a scheduled order"
    if behaviour in {"stopped", "never_started", "ran_out", "changed_dose"}:
        return RelationshipType.CONFLICTS, f"{behaviour.replace('_', ' ')} vs active order"
    if _dose_differs(memory, fact):
        return RelationshipType.CONFLICTS, "dose differs from the record"
    if behaviour == "missed_doses" or memory.attributes.get("details"):
        return RelationshipType.ENRICHES, "partial adherence or detail the record lacks"
    return RelationshipType.CORROBORATES, "taking it as prescribed"


BRIEF_WORDS = 10
# Words that name no particular product ("my blood pressure medication").
_UNSPECIFIC = frozenset(
    [
        "medication",
        "medications",
        "medicine",
        "medicines",
        "meds",
        "pill",
        "pills",
        "tablet",
        "tablets",
        "capsule",
        "capsules",
        "oral",
        "dose",
        "daily",
        "mg",
        "the",
        "my",
        "new",
        "old",
        "other",
        "one",
        "ones",
        "prescription",
    ]
)


def _product_words(text: str) -> frozenset[str]:
    """Distinctive words of a product name or description ("scar gel" → scar, gel)."""
    return frozenset(
        w
        for w in words(text)
        if w not in _UNSPECIFIC and w not in GENERIC and w.isalpha() and len(w) > 2
    )


def _brief(memory: Memory) -> bool:
    """A bare confirmation: the patient's own words are few ("yes .", "shortness of breath")."""
    spoken = [e for e in memory.evidence if e.message_id.rsplit(":", 1)[0] == memory.session_id]
    first = spoken[-1] if memory.attributes.get("answer") else spoken[0]
    return len(words(first.quote)) <= BRIEF_WORDS


def _as_needed(fact: Fact) -> bool:
    text = (" ".join(str(v) for v in fact.fields.values()) + " " + fact.label).lower()
    return bool(re.search(r"as needed|\bprn\b|when needed|if needed", text))


def _dose_differs(memory: Memory, fact: Fact) -> bool:
    said = {float(m) for e in memory.evidence for m in _DOSE.findall(e.quote.lower())}
    recorded_text = " ".join(str(v) for v in fact.fields.values()) + " " + fact.label
    recorded = {float(m) for m in _DOSE.findall(recorded_text.lower())}
    return bool(said and recorded and not said & recorded)
