"""Scoring of extracted memories and relationships against gold, as GUIDELINE §4 says.

Pure functions over plain data: the runner (`api/evaluate.py`) turns a store's memories
into `PredictedMemory` / `PredictedRelationship` and a case folder into `Gold`.

- A predicted memory matches a gold memory when the types are equal, one of its quotes
  overlaps one of the gold quotes (same turn, overlapping characters; gold quotes are
  located in the turns case-insensitively), and, for symptom and adherence, its subject
  shares a content word with the gold subject or an alias. Each gold memory is matched
  once; further predictions matching only already-matched gold memories are ignored; a
  prediction matching nothing is a false positive.
- A predicted relationship is correct when its memory matches the gold edge's memory, it
  points at a fact ingested from the gold `fact` resource, and the type is equal.
"""

import re
from collections.abc import Iterable, Sequence

from pydantic import BaseModel, Field

TYPES = ("symptom", "adherence", "concern", "preference")
SUBJECT_CHECKED = frozenset({"symptom", "adherence"})
# A gold quote found in several turns ("yes .") is pinned to the turns near the memory's
# other quotes.
NEAR_TURNS = 2
_WORD = re.compile(r"[a-z0-9]+")
STOPWORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "my",
        "your",
        "his",
        "her",
        "their",
        "our",
        "of",
        "for",
        "to",
        "in",
        "on",
        "at",
        "by",
        "and",
        "or",
        "with",
        "without",
        "from",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "it",
        "its",
        "this",
        "that",
        "these",
        "those",
        "any",
        "all",
        "some",
        "no",
        "not",
        "i",
        "me",
        "you",
        "he",
        "she",
        "we",
        "they",
        "them",
        "as",
        "into",
        "about",
    ]
)


class GoldMemory(BaseModel):
    id: str
    type: str
    subject: str
    aliases: list[str] = Field(default_factory=list)
    evidence: list[str]
    attributes: dict[str, object] = Field(default_factory=dict)


class GoldEdge(BaseModel):
    memory: str
    fact: str
    type: str


class Gold(BaseModel):
    memories: list[GoldMemory]
    edges: list[GoldEdge] = Field(default_factory=list)


class PredictedQuote(BaseModel):
    turn: int
    start: int
    end: int


class PredictedMemory(BaseModel):
    id: str
    type: str
    subject: str
    evidence: list[PredictedQuote]


class PredictedRelationship(BaseModel):
    memory_id: str
    type: str
    fact_resources: list[str]  # "Type/id" of every source of the fact


class PRF(BaseModel):
    tp: int = 0
    fp: int = 0
    fn: int = 0

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 0.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 0.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    def __add__(self, other: "PRF") -> "PRF":
        return PRF(tp=self.tp + other.tp, fp=self.fp + other.fp, fn=self.fn + other.fn)


class Scores(BaseModel):
    """Counts for one case or summed over many; rates are derived."""

    memories: dict[str, PRF] = Field(default_factory=lambda: {t: PRF() for t in TYPES})
    relationships: PRF = Field(default_factory=PRF)
    conflicts_found: int = 0
    conflicts_total: int = 0
    matched: dict[str, str] = Field(default_factory=dict)  # predicted id → gold id

    @property
    def overall(self) -> PRF:
        return sum(self.memories.values(), PRF())

    @property
    def conflicts_recall(self) -> float:
        return self.conflicts_found / self.conflicts_total if self.conflicts_total else 0.0

    def __add__(self, other: "Scores") -> "Scores":
        return Scores(
            memories={t: self.memories[t] + other.memories[t] for t in TYPES},
            relationships=self.relationships + other.relationships,
            conflicts_found=self.conflicts_found + other.conflicts_found,
            conflicts_total=self.conflicts_total + other.conflicts_total,
        )


def content_words(text: str) -> set[str]:
    """Lower-case words minus stop words, with a plural -s folded."""
    out = set()
    for w in _WORD.findall(text.lower()):
        if w in STOPWORDS:
            continue
        out.add(w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w)
    return out


def locate(quotes: Sequence[str], turns: Sequence[str]) -> list[tuple[int, int, int]]:
    """Every (turn, start, end) of a gold memory's quotes, case-insensitive.

    A quote found in several turns keeps only the occurrences within `NEAR_TURNS` of a
    turn that another quote of the same memory pins down uniquely (when there is one).
    """
    lowered = [t.lower() for t in turns]
    found: list[list[tuple[int, int, int]]] = []
    for quote in quotes:
        q = quote.lower()
        hits = []
        for i, text in enumerate(lowered):
            start = text.find(q)
            while start >= 0 and q:
                hits.append((i, start, start + len(q)))
                start = text.find(q, start + 1)
        found.append(hits)
    anchors = {hits[0][0] for hits in found if len({h[0] for h in hits}) == 1}
    spans: list[tuple[int, int, int]] = []
    for hits in found:
        if len({h[0] for h in hits}) > 1 and anchors:
            near = [h for h in hits if any(abs(h[0] - a) <= NEAR_TURNS for a in anchors)]
            hits = near or hits
        spans.extend(hits)
    return spans


def _overlaps(pred: Iterable[PredictedQuote], gold: Iterable[tuple[int, int, int]]) -> bool:
    gold = list(gold)
    return any(p.turn == t and p.start < e and s < p.end for p in pred for t, s, e in gold)


def memory_matches(
    pred: PredictedMemory, gold: GoldMemory, spans: list[tuple[int, int, int]]
) -> bool:
    """GUIDELINE §4's match test for one predicted and one gold memory."""
    if pred.type != gold.type or not _overlaps(pred.evidence, spans):
        return False
    if gold.type not in SUBJECT_CHECKED:
        return True
    names = content_words(gold.subject).union(*(content_words(a) for a in gold.aliases))
    return bool(content_words(pred.subject) & names)


def score_case(
    turns: Sequence[str],
    gold: Gold,
    predicted: Sequence[PredictedMemory],
    relationships: Sequence[PredictedRelationship],
) -> Scores:
    """Scores one case: per-type memory counts, relationship counts, conflicts recall."""
    spans = {g.id: locate(g.evidence, turns) for g in gold.memories}
    scores = Scores()
    candidates: dict[str, list[str]] = {}
    taken: set[str] = set()
    order = sorted(predicted, key=lambda p: min((q.turn for q in p.evidence), default=0))
    for pred in order:
        hits = [g.id for g in gold.memories if memory_matches(pred, g, spans[g.id])]
        candidates[pred.id] = hits
        counts = scores.memories.setdefault(pred.type, PRF())
        free = [h for h in hits if h not in taken]
        if free:
            taken.add(free[0])
            scores.matched[pred.id] = free[0]
            counts.tp += 1
        elif not hits:
            counts.fp += 1
    for g in gold.memories:
        if g.id not in taken:
            scores.memories.setdefault(g.type, PRF()).fn += 1
    _score_relationships(scores, gold, candidates, relationships)
    return scores


def _score_relationships(
    scores: Scores,
    gold: Gold,
    candidates: dict[str, list[str]],
    relationships: Sequence[PredictedRelationship],
) -> None:
    edges = {(e.memory, e.fact, e.type) for e in gold.edges}
    credited: set[tuple[str, str, str]] = set()
    for rel in relationships:
        keys = [
            (g, f, rel.type)
            for g in candidates.get(rel.memory_id, [])
            for f in rel.fact_resources
            if (g, f, rel.type) in edges
        ]
        if not keys:
            scores.relationships.fp += 1
            continue
        fresh = [k for k in keys if k not in credited]
        if fresh:
            credited.add(fresh[0])
            scores.relationships.tp += 1
    scores.relationships.fn = len(edges - credited)
    conflicts = {e for e in edges if e[2] == "conflicts"}
    scores.conflicts_total = len(conflicts)
    scores.conflicts_found = len(conflicts & credited)
