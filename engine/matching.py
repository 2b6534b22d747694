"""Layered matching: which stored fact an incoming claim is about, by its strongest key.

A claim carries all its match keys (every coding, the generic ingredients with strength
and form of a medication, the folded text of every display). It joins the fact it shares
a key of the strongest layer with (code, then ingredient, then text). A claim whose
strongest shared layer points at two or more facts, or whose weaker keys point at other
facts than the one it joins, is not used to merge them: those facts are recorded on the
claim as resolution candidates.
"""

import functools
from collections.abc import Iterable

from engine.models import Claim, FactKind, FactLink, MatchKey, MatchLayer, Merge, SourceClaims

LAYERS = tuple(MatchLayer)

IndexKey = tuple[FactKind, MatchLayer, str]


# Every batch of a patient reads back all its stored claims to match against; a patient
# written in several batches (an export spreads each one over the whole file) would have
# the same JSON parsed again each time. Claims are frozen, so one parse can be shared.
@functools.lru_cache(maxsize=20_000)
def parse_claim(data: str) -> Claim:
    """A stored claim's JSON, parsed once per process."""
    return Claim.model_validate_json(data)


class MatchIndex:
    """The match keys of a patient's facts, updated as claims are placed."""

    def __init__(self) -> None:
        self._facts: dict[IndexKey, set[str]] = {}
        self._origins: dict[str, str] = {}
        self._known: set[str] = set()

    @classmethod
    def of(cls, claims: Iterable[Claim]) -> "MatchIndex":
        """The index of stored claims (each in the fact it was placed in)."""
        index = cls()
        for claim in claims:
            index._add(claim)
        return index

    def _add(self, claim: Claim) -> None:
        self._known.add(claim.fact_key)
        self._origins[claim.origin_key or claim.fact_key] = claim.fact_key
        for match in claim.match_keys:
            self._facts.setdefault((claim.kind, match.layer, match.key), set()).add(claim.fact_key)

    def link_key(self, key: str) -> str:
        """The fact that a claim keyed `key` on its own was placed in (links name those)."""
        return self._origins.get(key, key)

    def place(self, claim: Claim) -> Claim:
        """The claim in the fact it belongs to, with `merged_by` and `candidates` set.

        The index learns the claim's keys, so later claims of the batch meet it too.
        """
        own = claim.origin_key or claim.fact_key
        hits = [(match, self._hits(claim.kind, match)) for match in claim.match_keys]
        target, merged_by, others = own, None, set[str]()
        for layer in LAYERS:
            found = {key for match, keys in hits if match.layer is layer for key in keys}
            if found and not others and (len(found) == 1 or own in found):
                target = own if own in found else next(iter(found))
                merged_by = next(m for m, keys in hits if m.layer is layer and target in keys)
            others |= found
        if merged_by is None and own in self._known:
            merged_by = _own_match(own)
        update = {
            "fact_key": target,
            "origin_key": own if target != own else None,
            "merged_by": merged_by if target in self._known else None,
            "candidates": tuple(sorted(others - {target})),
        }
        # Most claims of an ingest land in their own new fact; claims are frozen, so such
        # a claim is kept as it is rather than copied.
        unchanged = all(getattr(claim, name) == value for name, value in update.items())
        placed = claim if unchanged else claim.model_copy(update=update)
        self._add(placed)
        return placed

    def _hits(self, kind: FactKind, match: MatchKey) -> set[str]:
        return self._facts.get((kind, match.layer, match.key), set())


def describe(match: MatchKey | Merge) -> str:
    """A match key as people read it: "snomed 239872002", "text 'osteoarthritis of hip'"."""
    if match.layer is MatchLayer.CODE:
        return match.key
    if match.layer is MatchLayer.TEXT:
        return f"text {match.key!r}"
    return f"ingredient {match.key}"


def _own_match(fact_key: str) -> MatchKey:
    """What a claim shares with the fact of its own key: `kind:system:code` or `kind:text:slug`."""
    _, system, rest = fact_key.split(":", 2)
    if system == "text":
        return MatchKey(layer=MatchLayer.TEXT, key=rest.replace("-", " "))
    return MatchKey(layer=MatchLayer.CODE, key=f"{system} {rest}")


def place_source(index: MatchIndex, item: SourceClaims) -> SourceClaims:
    """The source with each of its claims placed in the fact it belongs to."""
    placed = tuple(index.place(claim) for claim in item.claims)
    return item if placed == item.claims else item.model_copy(update={"claims": placed})


def place_link(index: MatchIndex, link: FactLink) -> FactLink:
    """The link between the facts its ends were placed in."""
    return link.model_copy(
        update={"from_key": index.link_key(link.from_key), "to_key": index.link_key(link.to_key)}
    )
