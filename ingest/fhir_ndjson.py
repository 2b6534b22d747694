"""FHIR Bulk Data NDJSON (`$export` folders, files, HTTP bodies) → records and problems.

Lines are streamed: memory holds one line at a time, plus the Patients' identities, the
Medications (small, needed to resolve `Medication/id`) and the fact key of each Condition
(so that `reasonReference` becomes a PRESCRIBED_FOR link). Patients are read first,
then Medications, then Conditions, then everything else: in a folder by file name
(`<Type>.*.ndjson[.gz]`), in a single stream by one pass per type.

Given a process pool, its processes validate the lines ahead of the mapping
(`ingest.fhir_ndjson_pool`).
"""

import gzip
import io
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from functools import partial
from multiprocessing.pool import Pool
from pathlib import Path
from typing import IO, Any, cast

from ingest import json_text
from ingest.fhir_ndjson_pool import Known, checked
from ingest.fhir_read import (
    Identity,
    Item,
    Where,
    contained,
    count,
    is_mapped,
    map_resource,
    patient_record,
    resource_type,
    stop,
    type_id,
    validate,
)
from ingest.fhir_values import Json, obj
from ingest.records import Problem, Record

FIRST = ("Patient", "Medication", "Condition")
_FILE = re.compile(r"^([A-Z][A-Za-z]+)(\..*)?\.ndjson(\.gz)?$")
Opener = Callable[[], IO[bytes]]
Only = tuple[str, re.Pattern[bytes] | None, set[int]]


def read_fhir_ndjson(
    path: str | Path,
    label: str,
    patient_key: str | None = None,
    skipped: Counter[str] | None = None,
    pool: Pool | None = None,
) -> Iterator[Record | Problem]:
    """Reads a Bulk Data export folder, or one `.ndjson` / `.ndjson.gz` file, lazily.

    In a folder, only files named `<ResourceType>[.*].ndjson[.gz]` are read (so
    `log.ndjson` is not). A line that is not JSON, or not a valid resource, yields a
    Problem with the file and line number; the other lines are still read.

    Args:
        path: the folder or file.
        label: the source label; problems name `label/<file name>` for a folder.
        patient_key: `None`/"id" for the FHIR Patient id, or "identifier:SYSTEM".
        skipped: if given, counts the resources of types that are not mapped.
        pool: if given, its processes validate the lines ahead of the mapping.

    Returns:
        An iterator of one Record per usable resource and one Problem per bad one.

    Raises:
        InvalidInput: the patient_key is malformed (raised at once).
    """
    reader = _NdjsonReader(label, Identity(patient_key), skipped, pool)
    root = Path(path)
    if not root.is_dir():
        return reader.read_mixed(label, lambda: _open(root))
    files = []
    for file in sorted(root.iterdir()):
        match = _FILE.match(file.name)
        if match and file.is_file():
            rank = FIRST.index(match[1]) if match[1] in FIRST else len(FIRST)
            files.append((rank, file))
    return reader.read_files((f"{label}/{f.name}", f) for _, f in sorted(files))


def mapped_lines(path: str | Path) -> int | None:
    """The lines of mapped resource types in an export folder or `.ndjson` file.

    What a progress bar can count to without parsing anything; `None` for gzipped files,
    whose lines cannot be counted without decompressing them.
    """
    root = Path(path)
    files = sorted(root.iterdir()) if root.is_dir() else [root]
    total = 0
    for file in files:
        match = _FILE.match(file.name)
        if not match or not file.is_file() or not is_mapped(match[1]):
            continue
        if match[3]:
            return None
        with file.open("rb") as lines:
            total += sum(chunk.count(b"\n") for chunk in iter(lambda: lines.read(1 << 20), b""))
    return total


def read_fhir_ndjson_bytes(
    data: bytes,
    label: str,
    patient_key: str | None = None,
    skipped: Counter[str] | None = None,
) -> Iterator[Record | Problem]:
    """Reads an `application/fhir+ndjson` body (gzip-compressed or not), lazily.

    Args:
        data: the body.
        label: the source label, also the `file` of every problem.
        patient_key: `None`/"id" for the FHIR Patient id, or "identifier:SYSTEM".
        skipped: if given, counts the resources of types that are not mapped.

    Returns:
        An iterator of one Record per usable resource and one Problem per bad one.
    """
    reader = _NdjsonReader(label, Identity(patient_key), skipped)
    if data[:2] == b"\x1f\x8b":
        return reader.read_mixed(
            label, lambda: cast(IO[bytes], gzip.GzipFile(fileobj=io.BytesIO(data)))
        )
    return reader.read_mixed(label, lambda: io.BytesIO(data))


def _open(path: Path) -> IO[bytes]:
    if path.name.endswith(".gz"):
        return cast(IO[bytes], gzip.open(path, "rb"))
    return path.open("rb")


class _NdjsonReader:
    def __init__(
        self,
        label: str,
        identity: Identity,
        skipped: Counter[str] | None,
        pool: Pool | None = None,
    ) -> None:
        self.label, self.identity, self.skipped, self.pool = label, identity, skipped, pool
        self.medications: dict[str, Json] = {}
        self.conditions: dict[str, str] = {}

    def read_files(self, files: Iterable[tuple[str, Path]]) -> Iterator[Item]:
        for name, path in files:
            yield from self._stream(name, partial(_open, path), None)

    def read_mixed(self, name: str, opener: Opener) -> Iterator[Item]:
        """Several passes over one stream, so that patients and medications come first."""
        try:
            opener().close()
        except OSError as exc:
            yield from stop(Where(file=name), f"cannot read file: {exc.strerror or exc}")
            return
        done: set[int] = set()
        for rtype in FIRST:
            pattern = re.compile(rb'"resourceType"\s*:\s*"' + rtype.encode() + rb'"')
            yield from self._stream(name, opener, (rtype, pattern, done))
        yield from self._stream(name, opener, ("", None, done))

    def _stream(self, name: str, opener: Opener, only: Only | None) -> Iterator[Item]:
        try:
            stream = opener()
        except OSError as exc:
            yield from stop(Where(file=name), f"cannot read file: {exc.strerror or exc}")
            return
        with stream:
            try:
                yield from self._lines(name, stream, only)
            except (OSError, EOFError) as exc:  # a truncated or corrupt .gz
                yield from stop(Where(file=name), f"cannot read file: {exc}")

    def _lines(self, name: str, stream: IO[bytes], only: Only | None) -> Iterator[Item]:
        for number, line, known in checked(self.pool, name, _selected(stream, only)):
            where = Where(file=name, line=number)
            try:
                res = json_text.loads(line)
            except ValueError as exc:
                if only is not None:
                    only[2].add(number)
                yield where.problem(None, f"invalid JSON: {exc}")
                continue
            if only is not None and only[0]:
                if resource_type(res) != only[0]:
                    continue
                only[2].add(number)
            yield from self._resource(res, where, known)

    def _resource(self, res: Any, where: Where, known: Known | None) -> Iterator[Item]:
        """The items of one resource; `known`, what the pool found out about it, if it did."""
        rtype = resource_type(res)
        if rtype is None:
            yield where.problem(None, "not a FHIR resource: no resourceType")
            return
        if rtype == "Medication":
            problem = validate(res, where) if known is None else known.problem
            if problem is not None:
                yield problem
            elif isinstance(res.get("id"), str):
                self.medications[f"Medication/{res['id']}"] = res
            return
        if not is_mapped(rtype):
            count(self.skipped, rtype)
            return
        problem = validate(res, where) if known is None else known.problem
        if problem is not None:
            yield problem
        elif rtype == "Patient":
            yield patient_record(res, where, self.identity, ())
        else:
            content_hash = known.content_hash if known is not None else None
            item = map_resource(res, where, self.label, self.identity, self, content_hash)
            known_id = isinstance(res.get("id"), str)
            if rtype == "Condition" and known_id and isinstance(item, Record) and item.source:
                self.conditions[f"Condition/{res['id']}"] = item.source.claims[0].fact_key
            yield item

    def resource(self, reference: Any, container: Json) -> Json | None:
        """A contained resource, or a Medication of the export."""
        text = obj(reference).get("reference")
        if not isinstance(text, str) or not text:
            return None
        if text.startswith("#"):
            return contained(text, container)
        return self.medications.get(type_id(text) or "")

    def condition_key(self, reference: Any, container: Json) -> str | None:
        """The fact key of a Condition read earlier in the export."""
        text = obj(reference).get("reference")
        return self.conditions.get(type_id(text) or "") if isinstance(text, str) else None


def _selected(stream: IO[bytes], only: Only | None) -> Iterator[tuple[int, bytes]]:
    """The numbered lines of a stream that a pass reads: not blank, not read before, and
    (in a pass for one type) mentioning that type."""
    for number, line in enumerate(stream, start=1):
        if not line.strip():
            continue
        if only is not None:
            _, pattern, done = only
            if number in done or (pattern is not None and not pattern.search(line)):
                continue
        yield number, line
