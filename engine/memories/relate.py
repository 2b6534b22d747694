"""The relate stage: memory → fact relationships (GUIDELINE §3), shared by every extractor.

`relate_all` is the stage: an extractor that proposes relationships (the LLM) has them
verified (`verify_proposals`), and the offline inference below runs over the same
memories as a second opinion. Policy where the two disagree, measured in the issue-9
note: the verified proposals stand; an inferred `conflicts` on a pair the extractor did
not link is added, with its own rationale and the inference's name (missing a
discrepancy is the costly error); every other inferred relationship the extractor did
not propose is dropped (it saw the whole exchange, the inference one sentence); on a
pair both linked, the extractor's type stands, except that a conflict the offline
extractor's own reading of the same adherence statement finds with that fact overrules
it (a stop, dose or frequency compared word for word; its reading of symptoms is not
trusted so far: measured in the issue-9 note). An extractor that proposes nothing
(`relationships` None) gets the inference alone.

The inference: same entity first, then the edge type.

Only symptom → condition and adherence → medication edges are inferred; which facts are
the same entity is decided in `entities`. The type follows GUIDELINE §3 and the dev
set's annotation conventions: a statement about the record's own episode ("the flare
went away") is not one about the chronic disease; past use of a drug recorded as stopped
agrees with the record; using an as-needed drug, or how often, enriches it (it has no
schedule to take as prescribed); an explicit dose or frequency unlike the order's
conflicts (`regimen`). Facts are only read, never changed.
"""

import re
from collections.abc import Iterable, Sequence

from engine.memories.confidence import relationship_confidence
from engine.memories.drugs import ingredients
from engine.memories.entities import (
    ConditionView,
    condition_views,
    medication_generics,
    product_words,
    same_sided_condition,
)
from engine.memories.extractor import Candidate
from engine.memories.regimen import (
    PLAIN_AS_NEEDED,
    as_needed_order,
    dose_differs,
    frequency_differs,
)
from engine.memories.text import words
from engine.memories.verify import verify_proposals
from engine.models import Fact, FactKind, Memory, MemoryType, Relationship, RelationshipType

INFERENCE = "offline-inference 2.17.0"

METHOD_SYMPTOM = "lexical-manifestation"
METHOD_DRUG = "ingredient-match"
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
# A record entry for one episode of a chronic condition ("Acute gout flare").
_EPISODE = re.compile(r"\b(acute|flare|flares|episode|attack|exacerbation)\b", re.IGNORECASE)


def relate_all(
    accepted: list[tuple[Memory, Candidate]],
    facts: list[Fact],
    proposer: str,
    reading: Sequence[Memory] = (),
) -> list[Relationship]:
    """The relationships of the accepted memories: verified proposals and inference.

    Args:
        accepted: each memory with the candidate it was accepted from.
        facts: the patient's facts.
        proposer: the extractor's name and version, kept on what it proposed.
        reading: the offline extractor's memories of the same messages, when another
            extractor proposed; a discrepancy it finds in an adherence statement
            overrules the type proposed for the same statement and fact.
    """
    inferred: dict[str, list[Relationship]] = {}
    for rel in relate([m for m, _ in accepted], facts):
        inferred.setdefault(rel.memory_id, []).append(rel)
    read = {m.memory_id: m for m in reading if m.type is MemoryType.ADHERENCE}
    read_conflicts = [
        (read[r.memory_id], r)
        for r in relate(read.values(), facts)
        if r.type is RelationshipType.CONFLICTS
    ]
    by_key = {f.fact_key: f for f in facts}
    out: list[Relationship] = []
    for memory, candidate in accepted:
        mine = inferred.get(memory.memory_id, [])
        if candidate.relationships is None:
            out.extend(mine)
            continue
        proposed = [
            _overruled(memory, r, read_conflicts)
            for r in verify_proposals(memory, candidate, by_key, proposer)
        ]
        linked = {r.fact_key for r in proposed}
        missed = [
            r for r in mine if r.type is RelationshipType.CONFLICTS and r.fact_key not in linked
        ]
        out.extend(proposed + missed)
    return out


def _overruled(
    memory: Memory, proposed: Relationship, conflicts: list[tuple[Memory, Relationship]]
) -> Relationship:
    """The proposal, or the conflict the offline reading of the same adherence statement
    finds with the same fact (a stop, dose or frequency the proposal did not compare)."""
    if proposed.type is RelationshipType.CONFLICTS or memory.type is not MemoryType.ADHERENCE:
        return proposed
    for read, conflict in conflicts:
        if conflict.fact_key == proposed.fact_key and same_statement(memory, read):
            why = f"the offline reading of the same statement: {conflict.rationale}"
            return conflict.model_copy(update={"memory_id": memory.memory_id, "rationale": why})
    return proposed


def same_statement(a: Memory, b: Memory) -> bool:
    """Some quote of each overlaps one of the other in the same message."""
    return any(
        x.message_id == y.message_id and x.start < y.end and y.start < x.end
        for x in a.evidence
        for y in b.evidence
    )


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
    part_side = memory.attributes.get("side")
    matches = [
        (v, how) for v in conditions if (how := same_sided_condition(memory.subject, part_side, v))
    ]
    if any(how == "name" for _, how in matches):
        # "shortness of breath" with shortness of breath on file is that entry's, not
        # also a manifestation of the heart failure on file
        matches = [(v, how) for v, how in matches if how == "name"]
    about = set(memory.attributes.get("talked_about", ()))
    if len(matches) > 1 and any(v.fact.fact_key in about for v, _ in matches):
        # short of breath while the heart failure is talked about: not also the COPD
        matches = [(v, how) for v, how in matches if v.fact.fact_key in about]
    active = [(v, how) for v, how in matches if not _inactive(v.fact)]
    if active and memory.attributes.get("present", True):
        # the knee that hurts now is the recorded injury's, not the repair years ago
        # coming back: a resolved match conflicts only when nothing active explains it
        matches = active
    episodic = any(_EPISODE.search(v.fact.label) for v, _ in matches)
    edges = []
    for view, how in matches:
        chronic = episodic and not _EPISODE.search(view.fact.label)
        kind, why = symptom_type(memory, view.fact, how, episode_on_file=chronic)
        edges.append(
            Relationship(
                memory_id=memory.memory_id,
                fact_key=view.fact.fact_key,
                type=kind,
                rationale=f"{memory.subject!r} matches {view.fact.label!r} by {how}: {why}",
                confidence=_confidence(memory, "name" if how == "name" else "manifestation", kind),
                method=METHOD_SYMPTOM,
                extractor=INFERENCE,
            )
        )
    return edges


def symptom_type(
    memory: Memory, fact: Fact, how: str, episode_on_file: bool = False
) -> tuple[RelationshipType, str]:
    """GUIDELINE §3 for a symptom and a condition that are the same entity.

    `episode_on_file`: the record also holds an episode of this (chronic) condition,
    and "it went away" is about the episode, not the disease. A present symptom of an
    active condition enriches: the patient's account says how it is now, which the record
    cannot (annotators call 1 in 10 such links a bare corroboration, and word counts do
    not tell which).
    """
    present = memory.attributes.get("present", True)
    inactive = _inactive(fact)
    if inactive and present:
        return RelationshipType.CONFLICTS, "ongoing symptoms of a condition recorded resolved"
    if inactive:
        return RelationshipType.CORROBORATES, "absent, as the resolved record says"
    named = how == "name" or bool(memory.attributes.get("condition_term"))
    if not present and memory.attributes.get("gone") and named and not episode_on_file:
        return RelationshipType.CONFLICTS, "patient says a condition recorded active is gone"
    if not present:
        return RelationshipType.ENRICHES, "absence of a manifestation adds current control"
    if memory.attributes.get("details"):
        return RelationshipType.ENRICHES, "adds " + ", ".join(memory.attributes["details"])
    return RelationshipType.ENRICHES, "adds how the condition affects the patient"


def _inactive(fact: Fact) -> bool:
    return (fact.status or "active").lower() in INACTIVE


def _adherence_edges(memory: Memory, meds: list[tuple[Fact, frozenset[str]]]) -> list[Relationship]:
    named = {i for d in memory.attributes.get("drugs", []) for i in ingredients(d)}
    inferred = {i for d in memory.attributes.get("class_drugs", []) for i in ingredients(d)}
    label_words = product_words(memory.subject) if not named else frozenset()
    direct = [f for f, g in meds if named & g]
    # the product with exactly these ingredients ("Flonase" is not Advair); else, for a
    # combination ("fluticasone and salmeterol"), the product holding all of them
    exact = [f for f, g in meds if named and g == named]
    whole = [f for f, g in meds if len(named) > 1 and named <= g]
    direct = exact or whole or direct
    described = [
        f
        for f, g in meds
        if f not in direct and (inferred & g or label_words & product_words(f.label))
    ]
    edges = []
    for fact in direct + _one_of_class(memory, described):
        kind, why = adherence_type(memory, fact)
        edges.append(
            Relationship(
                memory_id=memory.memory_id,
                fact_key=fact.fact_key,
                type=kind,
                rationale=f"{memory.subject!r} is {fact.label!r} ({why})",
                confidence=_confidence(memory, "ingredient" if fact in direct else "class", kind),
                method=METHOD_DRUG if fact in direct else "drug-class",
                extractor=INFERENCE,
            )
        )
    return edges


def _one_of_class(memory: Memory, facts: list[Fact]) -> list[Fact]:
    """Which record medications a description refers to: a class ("my blood pressure
    pill") or words of the product ("the scar gel").

    All of them when the patient speaks of several ("my blood pressure pills"); else the
    one that fits, or the one active one; none when that is ambiguous.
    """
    if len(facts) <= 1 or memory.attributes.get("plural"):
        return facts
    active = [f for f in facts if not _inactive(f)]
    if len(active) > 1:  # "my inhaler": the inhaler, not the nasal spray of the same drug
        forms = set(words(memory.subject)) & _FORMS
        active = [f for f in active if forms & set(words(f.label))] if forms else active
    return active if len(active) == 1 else []


# The forms a drug is given in, as the patient names one ("my inhaler", "the cream").
_FORMS = frozenset(
    {"inhaler", "cream", "ointment", "gel", "lotion", "patch", "drops", "spray", "injection"}
)


def adherence_type(memory: Memory, fact: Fact) -> tuple[RelationshipType, str]:
    """GUIDELINE §3 for an adherence statement about a recorded medication."""
    behaviour = memory.attributes.get("behavior", "as_prescribed")
    recorded_off = _inactive(fact)
    if recorded_off:
        if behaviour in {"stopped", "never_started"}:
            if memory.attributes.get("reason"):
                return RelationshipType.ENRICHES, "gives the reason for a recorded stop"
            return RelationshipType.CORROBORATES, "stopped, as recorded"
        if memory.attributes.get("current") is False:  # "I took Claritin in the past"
            if memory.attributes.get("details") or memory.attributes.get("reason"):
                return RelationshipType.ENRICHES, "tells how the past course went"
            return RelationshipType.CORROBORATES, "past use, as recorded"
        return RelationshipType.CONFLICTS, "taking a medication recorded as stopped"
    if memory.attributes.get("pattern") == "as_needed":
        if not as_needed_order(fact):
            return RelationshipType.CONFLICTS, "taken only as needed vs a scheduled order"
        if memory.attributes.get("pattern_said") in PLAIN_AS_NEEDED:
            return RelationshipType.CORROBORATES, "taken as needed, as ordered"
        return RelationshipType.ENRICHES, "usage pattern of an as-needed medication"
    if behaviour == "changed_dose" and as_needed_order(fact) and not dose_differs(memory, fact):
        return RelationshipType.ENRICHES, "how often an as-needed medication is used"
    if behaviour in {"stopped", "never_started", "ran_out", "changed_dose"}:
        return RelationshipType.CONFLICTS, f"{behaviour.replace('_', ' ')} vs active order"
    if dose_differs(memory, fact):
        return RelationshipType.CONFLICTS, "dose differs from the record"
    if frequency_differs(memory, fact):
        return RelationshipType.CONFLICTS, "frequency differs from the record"
    if behaviour == "as_prescribed" and as_needed_order(fact):
        return RelationshipType.ENRICHES, "when an as-needed medication is used"
    if behaviour == "missed_doses" or memory.attributes.get("details"):
        return RelationshipType.ENRICHES, "partial adherence or detail the record lacks"
    return RelationshipType.CORROBORATES, "taking it as prescribed"


def _confidence(memory: Memory, match: str, kind: RelationshipType) -> float:
    # a corroboration is the absence of a difference; the other types rest on something said
    compared = kind is not RelationshipType.CORROBORATES
    return relationship_confidence(memory.confidence, match, compared)
