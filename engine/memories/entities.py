"""Same clinical entity (GUIDELINE §3): which record fact a memory is about.

A symptom is the same entity as a condition when they share a distinctive word ("back
pain" / "Chronic low back pain"; a lay body part also as the vocabulary's adjective: "belly
pain" / "Chronic epigastric abdominal pain"), when the HPO-generated vocabulary gives both one
concept ("shortness of breath" / "Dyspnea"), or when the symptom is a manifestation of it
in the curated table (`cues.json`: wheezing → asthma, sugars → diabetes). A medication is
the same entity when an ingredient matches, brand or generic ("Norvasc" / amlodipine), or
when a description names the product ("scar gel") or its class ("blood pressure pill").
"""

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache

from engine.memories.drugs import generic_names, ingredients
from engine.memories.lexicon import load_lexicon
from engine.memories.text import stem, words
from engine.models import Fact, FactKind

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
        "joint",
        "joints",
    ]
)


@dataclass(frozen=True)
class ConditionView:
    fact: Fact
    text: str
    words: frozenset[str]
    concepts: frozenset[str]  # the vocabulary's concepts the label's parts name


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
            displays = [c.display for c in fact.codes if c.display]
            text = " ".join([fact.label, *displays]).lower()
            parts = [fact.label, *_LABEL_BREAK.split(fact.label), *displays]
            concepts = frozenset(c for part in parts if part and (c := concept(part)))
            views.append(ConditionView(fact, text, content_words(text), concepts))
    return views


def concept(phrase: str) -> str | None:
    """The symptom vocabulary's concept for this phrase: HPO's preferred name, which its
    synonyms share ("shortness of breath" and "dyspnea": dyspnea; "belly pain" and
    "stomach pain": abdominal pain)."""
    said = phrase.strip()
    # as said and with a lay body part said as the vocabulary says it; in either number:
    # "kidney stone" is HPO's "kidney stones", "migraines" its "migraine"
    forms = [f for s in (said, _anatomical(said)) for f in (s, s + "s", s.removesuffix("s"))]
    symptoms = load_lexicon().symptoms
    term = next((t for form in forms if (t := symptoms.get(form))), None)
    return term.canonical if term else None


def _anatomical(phrase: str) -> str:
    """The phrase with a lay body part said as the vocabulary's anatomical adjective
    ("belly pain" → "abdominal pain")."""
    adjectives = load_lexicon().part_adjectives
    return " ".join(adjectives.get(w, w) for w in words(phrase))


# Where a condition label divides into the things it names ("Osteoarthritis of knee,
# status post total knee replacement last year").
_LABEL_BREAK = re.compile(
    r"[,;:()/\[\]]|\s-\s|\b(?:of|with|without|due to|after|status post|s/p|on|in|for|and|or"
    r"|from|since|last|ago|at|following|associated|secondary to|caused by|along|planned"
    r"|scheduled|history)\b"
)
_TIME_WORDS = frozenset({"year", "years", "month", "months", "week", "weeks", "day", "days"})


def record_phrases(views: Iterable[ConditionView]) -> list[tuple[str, str]]:
    """What the record calls a patient's conditions, as the conversation may name them:
    two- and three-word parts of each label that join a body part to what is wrong or
    was done there ("knee replacement", "rotator cuff tear"), with the label's own words.
    """
    body = load_lexicon().body_part_words
    out = []
    for view in views:
        for chunk in _LABEL_BREAK.split(view.fact.label.lower()):
            tokens = [w for w in words(chunk) if w not in _TIME_WORDS]
            for n in (3, 2):
                for i in range(len(tokens) - n + 1):
                    gram = tokens[i : i + n]
                    named = [w for w in gram if w not in GENERIC and w not in body and len(w) > 2]
                    if set(gram) & body and named and gram[-1] in named:
                        out.append((" ".join(gram), " ".join(gram)))
    return out


def same_condition(subject: str, view: ConditionView) -> str | None:
    """How a symptom subject is the condition: "name", "manifestation", or None.

    Sharing only a body part is no name match when both name something else there: a
    "breast lump" is not "scars of both breasts"; "knee pain" is "arthritis of knee".
    """
    subject_words = content_words(subject) | content_words(_anatomical(subject))
    shared = {w for w in subject_words if any(_kin(w, theirs) for theirs in view.words)}
    felt = _sensations(subject_words - _body_words())
    if shared and (felt or not (shared <= _body_words() and _differ(subject_words, view.words))):
        return "name"
    if concept(subject) in view.concepts:
        return "name"
    # "blood pressures" shows blood pressure, "belly pain" abdominal pain
    tokens = {_stem(w) for w in words(subject) + words(_anatomical(subject))}
    for key, signs in load_lexicon().manifestations.items():
        if key not in view.text:
            continue
        for sign in signs:
            sign_words = {_stem(w) for w in words(sign)}
            if sign_words and sign_words <= tokens:
                return "manifestation"
    return None


_SIDES = ("left", "right")


def side(text: str, subject: str) -> str | None:
    """The one side the text gives the body part of a symptom subject ("my left knee
    does n't really hurt" → left for "knee pain"); None for no side, or both."""
    part = words(subject)[:-1]
    if not part:
        return None
    said = {
        m.group(1)
        for m in re.finditer(rf"\b(left|right)(?: \w+)? {re.escape(part[-1])}", text.lower())
    }
    return said.pop() if len(said) == 1 else None


def same_sided_condition(subject: str, part_side: str | None, view: ConditionView) -> str | None:
    """`same_condition`, unless the condition is recorded on the other side only: a left
    knee is not the "Right knee injury"."""
    how = same_condition(subject, view)
    if how is None or part_side is None:
        return how
    named = {w for w in words(view.fact.label) if w in _SIDES or w in {"bilateral", "both"}}
    other = bool(named) and part_side not in named and not named & {"bilateral", "both"}
    return None if other else how


def _kin(mine: str, theirs: str) -> bool:
    """One word, or a form derived from it: "hypertension" and "hypertensive", "anemia"
    and "anemic" (Snowball stems, or one stem and at most two letters more); "heart" is
    not "heartburn"."""
    if mine == theirs:
        return True
    a, b = sorted((stem(mine), stem(theirs)), key=len)
    return len(a) >= 4 and b.startswith(a) and len(b) - len(a) <= 2


def _differ(mine: frozenset[str], theirs: frozenset[str]) -> bool:
    body = _body_words()
    return bool(mine - body) and bool(theirs - body) and not (mine & theirs) - body


# What a patient feels in a body part, as opposed to a lesion found there (a lump, a rash):
# "knee stiffness" is about the recorded knee injury, a "breast lump" is not breast scars.
_FELT = frozenset(
    {"pain", "swelling", "stiffness", "numbness", "tingling", "weakness", "cramps", "discomfort"}
)


def _sensations(rest: frozenset[str]) -> bool:
    """Every word besides the body part names a sensation ("stiffness", "aching")."""
    complaints = load_lexicon().body_complaint_words
    return bool(rest) and all(complaints.get(w) in _FELT for w in rest)


@cache
def _body_words() -> frozenset[str]:
    """Body parts, in lay words and as the vocabulary's adjectives ("belly", "abdominal")."""
    lexicon = load_lexicon()
    return frozenset(
        _stem(w) for w in [*lexicon.body_part_words, *lexicon.part_adjectives.values()]
    )


def medication_generics(fact: Fact) -> frozenset[str]:
    """Ingredient names of a medication fact, from its label, code displays and key."""
    names: set[str] = set()
    for text in [fact.label, *(c.display or "" for c in fact.codes)]:
        for name in generic_names(text):
            names |= ingredients(name)
    if fact.fact_key.startswith("medication:text:"):
        names |= ingredients(fact.fact_key.removeprefix("medication:text:").replace("-", " "))
    return frozenset(names)


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
        "half",
        "milligram",
        "milligrams",
        "microgram",
        "micrograms",
        "little",
        "small",
        "big",
        "same",
        "regular",
        "usual",
        "morning",
        "night",
        "all",
        "any",
        "some",
        "these",
        "those",
        "your",
    ]
)


def product_words(text: str) -> frozenset[str]:
    """Distinctive words of a product name or description ("scar gel" → scar, gel)."""
    return frozenset(
        w
        for w in words(text)
        if w not in _UNSPECIFIC and w not in GENERIC and w.isalpha() and len(w) > 2
    )
