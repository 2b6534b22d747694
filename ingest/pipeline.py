"""The ingest pipeline: inputs → readers → per-patient batches → the store.

Every batch is one store transaction and every write is idempotent, so an ingest that is
interrupted and rerun converges to the same graph, and two overlapping ingests running at
once create no duplicates.
"""

import codecs
import multiprocessing
import os
import uuid
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from multiprocessing.pool import Pool
from pathlib import Path

from pydantic import BaseModel

from engine.audit import AuditEvent
from engine.errors import NotFound
from engine.models import (
    Batch,
    FactLink,
    Patient,
    Scope,
    SourceClaims,
    WriteResult,
    utcnow,
)
from engine.store import GraphStore
from ingest import drugs, fhir_read
from ingest.cda import read_cda
from ingest.collection import fewer_collections
from ingest.fhir import read_fhir_json, read_fhir_ndjson, read_fhir_ndjson_bytes
from ingest.fhir_ndjson import mapped_lines
from ingest.identity import MISMATCH, demographic_conflicts, identity_conflict, masked
from ingest.records import Problem, Record
from ingest.versions import Documents
from ingest.writes import Writes

BATCH_SIZE = 500
# Sources held across all patients of one input before every buffer is written out: an
# export ordered by resource type spreads each patient over the whole file, and holding
# it all would make resident memory grow with the export.
MAX_PENDING = 5_000
NDJSON_SUFFIXES = (".ndjson", ".ndjson.gz")

Reader = Iterator[Record | Problem]
Progress = Callable[[int], None]


class Deltas(BaseModel):
    """What an ingest changed, summed over its batches."""

    facts_added: int = 0
    facts_merged: int = 0
    facts_removed: int = 0
    sources_added: int = 0
    sources_replaced: int = 0
    sources_unchanged: int = 0
    sources_stale: int = 0  # older versions than the stored ones: skipped
    sources_kept_apart: int = 0  # reused ids with no version evidence: kept beside
    sources_retired: int = 0  # entries that a newer version of their document dropped
    candidates_settled: int = 0  # resolution candidates whose other facts are gone
    relationships_added: int = 0  # fact-to-fact links (PRESCRIBED_FOR...)
    relationships_skipped: int = 0  # links naming a fact that was not ingested

    def add(self, result: WriteResult) -> None:
        counts = result.model_dump()
        counts["relationships_added"] = result.links_added
        counts["relationships_skipped"] = result.links_skipped
        for name in Deltas.model_fields:
            setattr(self, name, getattr(self, name) + counts[name])


class IngestReport(BaseModel):
    """The outcome of one ingest: deltas, per-patient counts, and every located problem."""

    files: int = 0
    resources: int = 0
    rejected: int = 0
    patients: dict[str, int] = {}
    deltas: Deltas = Deltas()
    warnings: list[Problem] = []
    errors: list[Problem] = []
    unusable: list[Problem] = []

    @property
    def exit_code(self) -> int:
        """0: everything ingested; 1: some resources rejected; 2: unusable input."""
        if self.unusable:
            return 2
        return 1 if self.errors else 0


@dataclass
class _PatientBuffer:
    patient: Patient | None = None
    sources: list[SourceClaims] = field(default_factory=list)
    links: list[FactLink] = field(default_factory=list)


class Ingestor:
    """Feeds readers' records into the store for one org, batching per patient."""

    def __init__(
        self,
        store: GraphStore,
        org: str,
        patient: str | None = None,
        progress: Progress | None = None,
        clock: Callable[[], datetime] = utcnow,
        accept_identity_mismatch: bool = False,
        actor: str = "cce ingest",
        assigned: bool = False,
    ) -> None:
        self._store = store
        self._org = org
        self._patient = patient
        # an explicit assignment (`--patient`, `?patient=`) overrides an identity refusal
        self._assigned = assigned and patient is not None
        self._progress = progress or (lambda _: None)
        self._clock = clock
        self._accept_mismatch = accept_identity_mismatch
        self._actor = actor
        self.report = IngestReport()
        # documents refused as another person's: what was found, and the reported problem
        self.identity_refusals: list[tuple[str, Problem]] = []

    def feed(self, label: str, reader: Reader) -> None:
        """Consumes one input's records; links are written once its facts are all in."""
        self.feed_all([(label, reader)])

    def feed_all(self, inputs: Iterable[tuple[str, Reader]]) -> None:
        """Consumes the inputs' records in order, as `feed` does each; the writes run while
        the next records are read (`ingest.writes`), and are all done on return. The
        garbage collector runs less often meanwhile (`ingest.collection`)."""
        with fewer_collections():
            writes = Writes(self._store, self.report.deltas.add)
            try:
                for label, reader in inputs:
                    self._feed(label, reader, writes)
            finally:
                writes.close()

    def _feed(self, label: str, reader: Reader, writes: Writes) -> None:
        self.report.files += 1
        buffers: dict[str, _PatientBuffer] = {}
        documents = Documents(self._store, self._org)
        checked: set[str] = set()
        refused: set[str] = set()
        read = pending = 0
        for item in reader:
            if isinstance(item, Problem):
                self._problem(item)
                continue
            read += 1
            self._progress(1)
            target = self._patient or item.patient_ref
            patient = item.patient
            if patient is not None and target not in checked:
                checked.add(target)
                writes.settle(target)
                patient = self._checked(label, target, patient)
                if patient is None:
                    refused.add(target)
                    buffers.pop(target, None)
            if target in refused:
                self.report.rejected += 1
                continue
            self.report.resources += 1
            if item.document is not None:
                writes.settle(target)  # a document's first entry reads its stored versions
            if (
                item.source is not None
                and item.document is not None
                and not documents.admit(target, item.document, item.source.source)
            ):
                self.report.deltas.sources_stale += 1
                continue
            buffer = buffers.setdefault(target, _PatientBuffer())
            if patient is not None:
                buffer.patient = patient
            if item.source is not None:
                buffer.sources.append(item.source)
                pending += 1
            buffer.links.extend(item.links)
            if len(buffer.sources) >= BATCH_SIZE:
                pending -= len(buffer.sources)
                self._flush(target, buffer, writes, with_links=False)
            elif pending >= MAX_PENDING:
                self._flush_all(buffers, writes, with_links=False)
                pending = 0
        self._flush_all(buffers, writes, with_links=True)
        for owner, refs in documents.retired():
            writes.write(Scope(org=self._org, patient=owner), Batch(retire=refs))
        if read == 0 and not self.report.unusable and not self._errors_in(label):
            self.report.warnings.append(
                Problem(severity="warning", file=label, message="no usable resources found")
            )

    def _checked(self, label: str, patient: str, incoming: Patient) -> Patient | None:
        """The demographics to write, with address and phone differences recorded as
        conflicts; None (and the refusal reported) when the stored patient is someone else.
        """
        try:
            stored = self._store.get_patient(Scope(org=self._org, patient=patient))
        except NotFound:
            return incoming
        merged = incoming.model_copy(
            update={"conflicts": stored.conflicts + demographic_conflicts(stored, incoming, label)}
        )
        why = identity_conflict(stored, incoming)
        if why is None:
            return merged
        message = (
            f"{MISMATCH} for patient {patient}: the document's patient ({masked(incoming)})"
            f" is not the stored one ({masked(stored)}): {why}"
        )
        if self._accept_mismatch or self._assigned:
            how = "assigned to this patient explicitly" if self._assigned else "accepted as asked"
            self.report.warnings.append(
                Problem(severity="warning", file=label, message=f"{message}; {how}")
            )
            event = AuditEvent(
                org=self._org,
                actor=self._actor,
                patient=patient,
                action="ingest: identity mismatch "
                + ("assigned explicitly" if self._assigned else "accepted"),
                outcome=200,
                correlation_id=uuid.uuid4().hex,
            )
            self._store.append_audit([event])
            return merged
        refusal = Problem(
            file=label,
            resource_type="Patient",
            resource_id=patient,
            message=f"{message}; nothing of this document was written for them"
            " (--accept-identity-mismatch overrides)",
        )
        self.report.errors.append(refusal)
        self.identity_refusals.append((message, refusal))
        return None

    def _errors_in(self, label: str) -> bool:
        return any(p.file == label for p in self.report.errors)

    def _problem(self, problem: Problem) -> None:
        if problem.fatal:
            self.report.unusable.append(problem)
        elif problem.severity == "warning":
            self.report.warnings.append(problem)
        else:
            self.report.rejected += 1
            self.report.errors.append(problem)

    def _flush_all(
        self, buffers: dict[str, _PatientBuffer], writes: Writes, with_links: bool
    ) -> None:
        for patient, buffer in buffers.items():
            self._flush(patient, buffer, writes, with_links)

    def _flush(
        self, patient: str, buffer: _PatientBuffer, writes: Writes, with_links: bool
    ) -> None:
        links = tuple(buffer.links) if with_links else ()
        if buffer.patient is None and not buffer.sources and not links:
            return
        scope = Scope(org=self._org, patient=patient)
        # Stamped when written, in input order, not when parsed (workers parse out of
        # order): sources without lastUpdated rank by it, so reruns pick the same winners.
        now = self._clock()
        sources = tuple(
            s.model_copy(update={"source": s.source.model_copy(update={"ingested_at": now})})
            for s in buffer.sources
        )
        writes.write(scope, Batch(patient=buffer.patient, sources=sources, fact_links=links))
        self.report.patients[patient] = self.report.patients.get(patient, 0) + len(buffer.sources)
        buffer.patient = None
        buffer.sources.clear()
        if with_links:
            buffer.links.clear()


def inputs(paths: Iterable[Path]) -> Iterator[tuple[Path, bool]]:
    """(path, is_ndjson) for every input under the paths; a folder of NDJSON is one export."""
    for path in paths:
        if path.is_dir():
            if any(p.name.endswith(NDJSON_SUFFIXES) for p in path.iterdir()):
                yield path, True
            yield from inputs(sorted(p for p in path.iterdir() if p.is_dir() or _is_document(p)))
        else:
            yield path, path.name.endswith(NDJSON_SUFFIXES)


def expected_resources(paths: Iterable[Path]) -> int | None:
    """How many resources the inputs hold, when that is known before reading them.

    Known for NDJSON exports (their lines of mapped types); `None` with any document, or
    a gzipped export, in them.
    """
    total = 0
    for path, is_ndjson in inputs(p for p in paths if p.exists()):
        lines = mapped_lines(path) if is_ndjson else None
        if lines is None:
            return None
        total += lines
    return total


# FHIR JSON and C-CDA files; vendors name C-CDA exports .ccd, .ccda or .cda as well.
DOCUMENT_SUFFIXES = frozenset({".json", ".xml", ".ccd", ".ccda", ".cda"})


def _is_document(path: Path) -> bool:
    return path.suffix.lower() in DOCUMENT_SUFFIXES


def read_document(path: Path, patient_key: str | None = None) -> list[Record | Problem]:
    """Everything one FHIR JSON or C-CDA file yields (documents are read whole anyway)."""
    try:
        data = path.read_bytes()
    except OSError as e:
        return [Problem(file=str(path), fatal=True, message=f"cannot read: {e.strerror or e}")]
    return list(read_bytes(data, str(path), patient_key))


def read_bytes(
    data: bytes, label: str, patient_key: str | None = None, media_type: str | None = None
) -> Reader:
    """Chooses the reader by media type, else by the content's first character.

    A UTF-8 byte-order mark is dropped first (JSON readers refuse it; vendor C-CDA
    exports carry it), as is any whitespace and CRLF before the first character.
    """
    data = data.removeprefix(codecs.BOM_UTF8)
    head = data.lstrip()[:1]
    if media_type == "application/fhir+ndjson":
        return read_fhir_ndjson_bytes(data, label, patient_key)
    if head == b"<" or media_type in {"application/xml", "text/xml", "application/cda+xml"}:
        return read_cda(data, label, patient_key)
    if head in {b"{", b"["} or media_type in {"application/json", "application/fhir+json"}:
        return read_fhir_json(data, label, patient_key)
    return iter(
        [Problem(file=label, fatal=True, message="not FHIR JSON, FHIR NDJSON or C-CDA XML")]
    )


def ingest_paths(
    store: GraphStore,
    org: str,
    paths: Iterable[Path],
    patient_key: str | None = None,
    progress: Progress | None = None,
    workers: int | None = None,
    accept_identity_mismatch: bool = False,
    patient: str | None = None,
) -> IngestReport:
    """Ingests files and folders (any mix) into the org; see `IngestReport.exit_code`.

    Documents (FHIR JSON, C-CDA) are parsed and validated by `workers` processes (default:
    one per core) while this process writes, in input order, so the result is the same as
    a serial run. NDJSON exports are streamed here, line by line; the same processes
    validate their lines a few chunks ahead (`ingest.fhir_ndjson`). With `patient`, every
    record is written to that patient: an explicit assignment, which overrides (and
    audits) an identity refusal.
    """
    ingestor = Ingestor(
        store,
        org,
        patient=patient,
        progress=progress,
        accept_identity_mismatch=accept_identity_mismatch,
        assigned=True,
    )
    found: list[tuple[Path, bool]] = []
    for path in paths:
        if path.exists():
            found.extend(inputs([path]))
        else:
            ingestor.report.unusable.append(
                Problem(file=str(path), fatal=True, message="no such file")
            )
    documents = [path for path, is_ndjson in found if not is_ndjson]
    exports = len(found) > len(documents)
    # the pool's processes fork with the ingest's rhythm of collections (`ingest.collection`)
    with fewer_collections(), _reader_pool(workers, len(documents), exports) as pool:
        read = partial(read_document, patient_key=patient_key)
        parsed = pool.imap(read, documents) if pool else map(read, documents)
        ingestor.feed_all(
            (str(path), read_fhir_ndjson(path, str(path), patient_key, pool=pool))
            if is_ndjson
            else (str(path), iter(next(parsed)))
            for path, is_ndjson in found
        )
    return ingestor.report


@contextmanager
def _reader_pool(workers: int | None, documents: int, exports: bool) -> Iterator[Pool | None]:
    """A forked process pool when there is parallel work and a core to run it on: two
    documents or more, or an NDJSON export (whose lines the pool validates)."""
    count = workers or os.cpu_count() or 1
    if not exports:
        count = min(count, documents)
    if count < 2 or "fork" not in multiprocessing.get_all_start_methods():
        yield None
        return
    if documents:
        drugs.preload()  # every medication's ingredient keys need it (ingest.matching)
    fhir_read.preload()
    with multiprocessing.get_context("fork").Pool(count) as pool:
        yield pool
