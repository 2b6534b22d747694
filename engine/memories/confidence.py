"""How sure a memory or a relationship is, from how it was established.

A memory in the patient's own words about a thing they name is the strongest evidence; a
reply resolved to what the provider named, a bare yes or no, and a drug inferred from a
description ("my water pill") are progressively weaker; hedges in the patient's words
("i think", "maybe") weaken it further; saying it again later strengthens it. A
relationship is as sure as its memory, scaled by how the fact was matched (by name or
ingredient, as a manifestation, by a drug class) and by what decided its type (an
explicit comparison such as a dose, or a default).
"""

import re
from collections.abc import Sequence

_BY_VIA = {
    "statement": 0.8,
    "named": 0.8,
    "asked-part": 0.7,
    "same-turn": 0.7,
    "demonstrative": 0.7,
    "pronoun-own": 0.65,
    "pronoun-asked": 0.65,
    "provider-named": 0.65,
    "answer-asked": 0.65,
    "topic": 0.6,
    "recent": 0.6,
    "answer": 0.55,
    "unnamed": 0.45,
}
_DEFAULT = 0.6
_HEDGES = re.compile(
    r"\b(i think|i guess|maybe|probably|not sure|i'm not sure|kind of|sort of|i believe"
    r"|might|possibly|i don't know|i do n't know)\b"
)
_HEDGE_COST = 0.15
REPEAT_GAIN = 0.05
CEILING = 0.95
_FLOOR = 0.2

# How the fact was matched, and what decided the relationship type.
MATCH_STRENGTH = {"name": 1.0, "ingredient": 1.0, "manifestation": 0.8, "class": 0.7}
DECIDED_BY_COMPARISON = 1.0
DECIDED_BY_DEFAULT = 0.85


def memory_confidence(via: str, quotes: Sequence[str], inferred_drug: bool = False) -> float:
    """A memory's confidence from how it was read and the patient's words.

    Args:
        via: how the extractor tied the words to their subject ("statement", "answer"...).
        quotes: the patient's (or caregiver's) quotes of the memory.
        inferred_drug: the drug was inferred from a class or a description.
    """
    score = _BY_VIA.get(via, _DEFAULT)
    if inferred_drug:
        score = min(score, _BY_VIA["unnamed"])
    hedges = sum(len(_HEDGES.findall(q.lower())) for q in quotes)
    score -= _HEDGE_COST * min(hedges, 2)
    score += REPEAT_GAIN * max(0, len(quotes) - 1)
    return round(min(CEILING, max(_FLOOR, score)), 2)


def relationship_confidence(memory: float, match: str, compared: bool) -> float:
    """A relationship's confidence: the memory's, scaled by the match and the decision."""
    decided = DECIDED_BY_COMPARISON if compared else DECIDED_BY_DEFAULT
    return round(memory * MATCH_STRENGTH.get(match, 0.7) * decided, 2)
