"""Merging: one fact from every source's claim, with a conflict record per disputed field."""

from collections.abc import Iterable, Mapping, MutableMapping
from datetime import datetime
from enum import StrEnum

from engine.models import (
    Candidate,
    Claim,
    Coding,
    Fact,
    FieldConflict,
    FieldValue,
    Merge,
    Source,
    SourceClaims,
    SourceFormat,
)

STRATEGY = "most recent source, then highest reliability"


class Verdict(StrEnum):
    """What an incoming source does to the stored source with the same `source_ref`."""

    ADD = "add"  # none is stored
    UNCHANGED = "unchanged"  # the same content
    REPLACE = "replace"  # a newer version of it
    STALE = "stale"  # an older version of it: skipped, and counted as stale
    APART = "apart"  # no evidence that it is a version of it: kept beside it (`apart_ref`)


def newer(incoming: Source, stored: Source) -> bool | None:
    """Whether `incoming` is a later version of `stored`; None when nothing says.

    Versions (FHIR `meta.versionId`, C-CDA `versionNumber`) are compared first, as numbers
    when both are integers. Then, for FHIR only, `meta.lastUpdated`: C-CDA documents that
    share a setId and a versionNumber are not versions of each other, whatever their
    effectiveTime (exporters and the HL7 examples reuse one setId for unrelated documents).
    """
    versions = (incoming.version or "", stored.version or "")
    if versions[0] != versions[1] and all(v.isdigit() for v in versions):
        return int(versions[0]) > int(versions[1])
    if SourceFormat.CDA in (incoming.format, stored.format):
        return None
    times = (incoming.last_updated, stored.last_updated)
    if times[0] is not None and times[1] is not None and times[0] != times[1]:
        return times[0] > times[1]
    return None


def verdict(incoming: Source, stored: Source | None) -> Verdict:
    """Decides between a source and the stored one of the same `source_ref`.

    Sources keep their own facts: only a proven newer version replaces what a source
    asserted. Content that differs with no version evidence either way (no or equal
    versions and times) comes from an unrelated document that reuses the id: it is kept
    apart, under `apart_ref`.
    """
    if stored is None:
        return Verdict.ADD
    later = newer(incoming, stored)
    if stored.content_hash == incoming.content_hash:
        # the same entry in a newer version of its document takes that version
        return Verdict.REPLACE if later else Verdict.UNCHANGED
    if later is None:
        return Verdict.APART
    return Verdict.REPLACE if later else Verdict.STALE


def place(
    item: SourceClaims, stored: Mapping[str, Source], counts: MutableMapping[str, int]
) -> tuple[SourceClaims, Verdict] | None:
    """Where an incoming source goes, counted as the ingest report counts it: the item to
    write (under its `apart_ref` when kept apart) and whether it adds or replaces, or None
    when it is unchanged or stale. `stored` holds the stored sources by ref."""
    source = item.source
    decision = verdict(source, stored.get(source.source_ref))
    if decision is Verdict.APART:
        source = source.model_copy(update={"source_ref": apart_ref(source)})
        item = item.model_copy(update={"source": source})
        decision = verdict(source, stored.get(source.source_ref))
        if decision is Verdict.ADD:
            _count(counts, "sources_kept_apart")
    if decision is Verdict.UNCHANGED or decision is Verdict.STALE:
        _count(counts, f"sources_{decision.value}")
        return None
    _count(counts, "sources_replaced" if decision is Verdict.REPLACE else "sources_added")
    return item, decision


def _count(counts: MutableMapping[str, int], name: str) -> None:
    counts[name] = counts.get(name, 0) + 1


def settled(claim: Claim, facts: set[str]) -> Claim | None:
    """The claim without the candidate facts that no longer exist (a later ingest removed
    them, so the ambiguity is gone); None when all of them still exist."""
    kept = tuple(key for key in claim.candidates if key in facts)
    return None if kept == claim.candidates else claim.model_copy(update={"candidates": kept})


def apart_ref(source: Source) -> str:
    """The `source_ref` of a source kept apart from another with the same id: its own
    content names it, so ingesting the same document again changes nothing."""
    return f"{source.source_ref[:480]}~{source.content_hash[:16]}"


def _precedence(source: Source) -> tuple[datetime, float, str]:
    return (source.last_updated or source.ingested_at, source.reliability, source.source_ref)


def resolve(assertions: Iterable[tuple[Source, Claim]]) -> Fact:
    """Merges the claims that sources make about one fact.

    Args:
        assertions: every (source, claim) pair for the same fact key; at least one.

    Returns:
        The fact with the winning value of each field, all sources and all codes, and a
        conflict record for each field (status included) on which sources disagree,
        why each source's claim joined it (`merged_by`, when there are several) and the
        claims that matched other facts too (`candidates`).
    """
    ranked = sorted(assertions, key=lambda pair: _precedence(pair[0]), reverse=True)
    if not ranked:
        raise ValueError("a fact needs at least one claim")
    top_source, top = ranked[0]
    conflicts: list[FieldConflict] = []
    status = _merge_field("status", [(c.status, s) for s, c in ranked], conflicts)
    fields: dict[str, FieldValue] = {}
    for name in sorted({name for _, claim in ranked for name in claim.fields}):
        fields[name] = _merge_field(name, [(c.fields.get(name), s) for s, c in ranked], conflicts)
    codes: dict[tuple[str, str], Coding] = {}
    for _, claim in ranked:
        for coding in claim.codes:
            codes.setdefault((coding.system, coding.code), coding)
    return Fact(
        fact_key=top.fact_key,
        kind=top.kind,
        label=top.label,
        status=status,
        codes=tuple(codes.values()),
        fields=fields,
        sources=tuple(source for source, _ in ranked),
        conflicts=tuple(conflicts),
        merged_by=_merges(ranked) if len(ranked) > 1 else (),
        candidates=tuple(
            Candidate(source_ref=s.source_ref, label=c.label, fact_keys=c.candidates)
            for s, c in sorted(ranked, key=lambda pair: pair[0].source_ref)
            if c.candidates
        ),
    )


def _merges(ranked: list[tuple[Source, Claim]]) -> tuple[Merge, ...]:
    return tuple(
        Merge(layer=c.merged_by.layer, key=c.merged_by.key, source_ref=s.source_ref)
        for s, c in sorted(ranked, key=lambda pair: pair[0].source_ref)
        if c.merged_by is not None
    )


def _merge_field(
    name: str, ranked: list[tuple[FieldValue, Source]], conflicts: list[FieldConflict]
) -> FieldValue:
    present = [(value, source) for value, source in ranked if value is not None]
    if not present:
        return None
    winner, winner_source = present[0]
    if len({repr(value) for value, _ in present}) > 1:
        conflicts.append(
            FieldConflict(
                field=name,
                values=tuple((value, source.source_ref) for value, source in present),
                winner=winner,
                winner_source=winner_source.source_ref,
                strategy=STRATEGY,
                explanation=(
                    f"{len(present)} sources disagree on {name}; "
                    f"kept {winner!r} from {winner_source.label} ({winner_source.resource_type}"
                    f" {winner_source.resource_id}), the most recent and most reliable"
                ),
            )
        )
    return winner
