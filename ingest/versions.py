"""Which C-CDA documents are newer versions of stored ones, and what those retire.

A document's lineage is its setId and its person (`ingest.cda`): its entries' source refs
share the lineage's prefix. A document with a higher versionNumber than the stored
entries of its lineage replaces them entry by entry (the store decides per entry, see
`engine.resolution.verdict`) and retires the stored entries it no longer contains. A
document older than what is stored is skipped whole, so that it cannot bring back an
entry that a newer version retired.
"""

from collections.abc import Iterator
from dataclasses import dataclass, field

from engine.errors import NotFound
from engine.models import Scope, Source
from engine.resolution import newer
from engine.store import GraphStore


@dataclass
class _Document:
    stored: list[Source]  # the lineage's entries stored before this document was read
    stale: bool
    refs: set[str] = field(default_factory=set)
    newest: Source | None = None


class Documents:
    """The C-CDA documents of one input, per patient and lineage."""

    def __init__(self, store: GraphStore, org: str) -> None:
        self._store = store
        self._org = org
        self._seen: dict[tuple[str, str], _Document] = {}

    def admit(self, patient: str, prefix: str, source: Source) -> bool:
        """Records one entry of a document; False when the document is an older version
        of what is stored (the entry is then skipped as stale)."""
        document = self._seen.get((patient, prefix))
        if document is None:
            stored = self._lineage(patient, prefix)
            stale = any(newer(old, source) for old in stored)
            document = self._seen[(patient, prefix)] = _Document(stored=stored, stale=stale)
        if document.stale:
            return False
        document.refs.add(source.source_ref)
        document.newest = source
        return True

    def retired(self) -> Iterator[tuple[str, tuple[str, ...]]]:
        """(patient, source refs) that the newer versions read leave out."""
        for (patient, _), document in self._seen.items():
            if document.newest is None:
                continue
            refs = {
                old.source_ref
                for old in document.stored
                if old.source_ref not in document.refs and newer(document.newest, old)
            }
            if refs:
                yield patient, tuple(sorted(refs))

    def _lineage(self, patient: str, prefix: str) -> list[Source]:
        try:
            facts = self._store.list_facts(Scope(org=self._org, patient=patient))
        except NotFound:
            return []
        found = {
            s.source_ref: s for f in facts for s in f.sources if s.source_ref.startswith(prefix)
        }
        return list(found.values())
