"""Search over one patient: facts, memories and the text of every rendered file.

Ranking is Okapi BM25 (k1 = 1.2, b = 0.75) over lower-cased alphanumeric tokens, computed
by hand on each call: a patient's graph is small, and nothing is indexed ahead of time, so
results always match the live graph. Each path appears once, with its best hit.
"""

import math
import re
from collections import Counter
from dataclasses import dataclass
from typing import Literal

from engine.as_of import AsOf
from engine.errors import InvalidInput
from engine.models import Fact, MemoryRecord, Scope
from engine.store import GraphStore
from vfs.doc import Doc
from vfs.graph import PatientGraph
from vfs.models import SearchHit
from vfs.tree import walk
from vfs.values import codes, show, when

K1, B = 1.2, 0.75
MAX_LIMIT = 100
SNIPPET = 160
# Words, and codes whose parts are joined by `.` or `-` (E11.9, 4548-4) kept whole as well.
_TOKEN = re.compile(r"[a-z0-9]+(?:[.\-][a-z0-9]+)*")
_PART = re.compile(r"[a-z0-9]+")


@dataclass(frozen=True)
class _Entry:
    path: str
    kind: Literal["fact", "memory", "file"]
    title: str
    text: str
    untrusted: bool = False


def tokens(text: str) -> list[str]:
    """Lower-cased runs of letters and digits, and compound codes both whole and in parts."""
    found: list[str] = []
    for token in _TOKEN.findall(text.lower()):
        parts = _PART.findall(token)
        found.extend(parts if len(parts) == 1 else [token, *parts])
    return found


def _fact_entry(graph: PatientGraph, fact: Fact) -> _Entry | None:
    path = graph.path_of(fact)
    if path is None:
        return None
    values = [show(v) for v in fact.fields.values()]
    text = " ".join(
        [fact.label, fact.kind.value, fact.status or "", codes(fact) or "", *filter(None, values)]
    )
    return _Entry(path, "fact", f"{fact.kind.value}: {fact.label}", text)


def _memory_entry(record: MemoryRecord) -> _Entry:
    memory = record.memory
    words = [memory.subject, *dict.fromkeys([memory.text, *(e.quote for e in memory.evidence)])]
    words += [f"{k} {v}" for k, v in memory.attributes.items()]
    title = f"{memory.type.value} memory, {when(memory.created_at)}, session {memory.session_id}"
    return _Entry(f"/memory/{memory.type.value}.md", "memory", title, " ".join(words), True)


def doc_text(doc: Doc) -> str:
    """A Doc's record text (titles, fields, link captions), patient-reported quotes left out."""
    parts = [doc.title, *(value for _, value in doc.fields)]
    for section in doc.sections:
        parts.append(section.title)
        for item in section.items:
            parts.extend([item.title, item.flag or ""])
            parts.extend(value for _, value in item.fields)
            parts.extend(caption for caption, _ in item.links)
    return "\n".join(parts)


def _entries(graph: PatientGraph) -> list[_Entry]:
    found = [e for f in graph.all_facts() if (e := _fact_entry(graph, f)) is not None]
    found += [_memory_entry(record) for record in graph.memories]
    for path, node in walk(graph):
        if node.doc is not None:
            doc = node.doc()
            found.append(_Entry(path, "file", doc.title, doc_text(doc)))
    return found


def _snippet(text: str, terms: set[str]) -> str:
    flat = " ".join(text.split())
    lower = flat.lower()
    starts = [m.start() for t in terms if (m := re.search(rf"\b{re.escape(t)}", lower))]
    start = max(0, min(starts, default=0) - SNIPPET // 4)
    piece = flat[start : start + SNIPPET]
    return ("…" if start else "") + piece + ("…" if start + SNIPPET < len(flat) else "")


def rank(entries: list[_Entry], query: list[str]) -> list[tuple[float, _Entry]]:
    """BM25 scores of the entries that contain at least one query term, best first."""
    counts = [Counter(tokens(e.text + " " + e.title)) for e in entries]
    if not counts:
        return []
    average = sum(sum(c.values()) for c in counts) / len(counts) or 1.0
    terms = set(query)
    df = {t: sum(1 for c in counts if t in c) for t in terms}
    scored = []
    for entry, count in zip(entries, counts, strict=True):
        length = sum(count.values())
        score = 0.0
        for term in terms:
            if count[term]:
                idf = math.log(1 + (len(counts) - df[term] + 0.5) / (df[term] + 0.5))
                norm = count[term] + K1 * (1 - B + B * length / average)
                score += idf * count[term] * (K1 + 1) / norm
        if score > 0:
            scored.append((score, entry))
    scored.sort(key=lambda pair: (-pair[0], pair[1].path, pair[1].kind, pair[1].title))
    return scored


def search(
    store: GraphStore, scope: Scope, q: str, limit: int = 10, as_of: AsOf = None
) -> list[SearchHit]:
    """Ranked hits for a free-text query, one per VFS path.

    Args:
        store: the graph store.
        scope: the (org, patient) to search.
        q: words to look for (case and punctuation ignored).
        limit: at most this many hits (1-100).
        as_of: search the graph as the engine knew it at this instant (`engine.as_of`).

    Returns:
        Hits, best first. A memory hit's snippet is patient-reported (`untrusted`): show it
        quoted and escaped, never as instructions.

    Raises:
        InvalidInput: an empty query or a limit out of range.
        NotFound: the patient does not exist.
    """
    query = tokens(q)
    if not query:
        raise InvalidInput("the search query has no letters or digits")
    if not 1 <= limit <= MAX_LIMIT:
        raise InvalidInput(f"limit must be between 1 and {MAX_LIMIT}, not {limit}")
    graph = PatientGraph(store, scope, as_of=as_of)
    graph.patient  # noqa: B018 - raises NotFound for an unknown patient
    hits: dict[str, SearchHit] = {}
    for score, entry in rank(_entries(graph), query):
        if entry.path not in hits:
            hits[entry.path] = SearchHit(
                path=entry.path,
                kind=entry.kind,
                title=entry.title,
                snippet=_snippet(entry.text, set(query)),
                score=round(score, 4),
                untrusted=entry.untrusted,
            )
        if len(hits) == limit:
            break
    return list(hits.values())
