"""What a batch of sources does to the stored ones in Neo4j, counted as SQLite counts.

SQLite applies the sources one statement at a time; the Neo4j adapter reads the stored
state once, decides here in Python, and writes the result in a few batched statements.
"""

from collections import Counter
from collections.abc import Sequence
from typing import Any

from engine.matching import parse_claim
from engine.models import Source, SourceClaims
from engine.resolution import place


def fact_state(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each stored fact's key, asserting sources, claims, and whether a memory relates to it."""
    return [
        {
            "key": row["key"],
            "refs": [ref for ref, _ in row["asserted"]],
            "claims": [parse_claim(claim) for _, claim in row["asserted"]],
            "related": row["related"],
        }
        for row in rows
    ]


def accept(
    items: Sequence[SourceClaims], stored: dict[str, Any], counts: Counter[str]
) -> list[SourceClaims]:
    """The sources that replace or add to what is stored, in order; counts the others.

    `stored` holds the rows of every ref an item may take: its own and its `apart_ref`.
    A source kept apart (see `engine.resolution.verdict`) is returned under its apart ref.
    """
    state = {ref: Source.model_validate_json(r["data"]) for ref, r in stored.items()}
    accepted = []
    for item in items:
        placed = place(item, state, counts)
        if placed is not None:
            state[placed[0].source.source_ref] = placed[0].source
            accepted.append(placed[0])
    return accepted


def replay(
    accepted: list[SourceClaims],
    by_source: dict[str, set[str]],
    facts: list[dict[str, Any]],
    counts: Counter[str],
) -> set[str]:
    """Applies the sources one by one to the facts' state, counting as SQLite does.

    Returns the keys of facts left with no source and no memory relationship on the way
    (a later source of the batch may assert such a key again: it is then a new fact).
    """
    asserters = {f["key"]: set(f["refs"]) for f in facts}
    related = {f["key"] for f in facts if f["related"]}
    removed: set[str] = set()
    for item in accepted:
        ref = item.source.source_ref
        previous = by_source.get(ref, set())
        for key in previous:
            asserters[key].discard(ref)
        now: set[str] = set()
        for claim in item.claims:
            key = claim.fact_key
            if key not in asserters:
                asserters[key] = set()
                counts["facts_added"] += 1
            elif key not in previous and asserters[key]:
                counts["facts_merged"] += 1
            asserters[key].add(ref)
            now.add(key)
        by_source[ref] = now
        for key in previous - now:
            if not asserters[key] and key not in related:
                del asserters[key]
                removed.add(key)
                counts["facts_removed"] += 1
    return removed
