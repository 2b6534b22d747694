"""FHIR JSON: a Bundle of any type, or a single resource → records and problems."""

import json
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ingest import json_text
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

MAX_DEPTH = 3  # bundles in bundles: a batch-response holds searchsets


def read_fhir_json(
    data: bytes | str | Path,
    label: str,
    patient_key: str | None = None,
    skipped: Counter[str] | None = None,
) -> Iterator[Record | Problem]:
    """Reads a FHIR R4 Bundle (any type) or a single resource, lazily.

    Patients come first (they give the other resources their `patient_ref`), then every
    other entry in order. References are resolved through `urn:uuid:` and absolute
    fullUrls, `Type/id`, and contained `#id` resources.

    Args:
        data: the JSON document, or the path of a file holding it (a `str` is a path).
        label: the source label, also the `file` of every problem.
        patient_key: `None`/"id" for the FHIR Patient id, or "identifier:SYSTEM".
        skipped: if given, counts the resources of types that are not mapped.

    Returns:
        An iterator of one Record per usable resource and one Problem per bad or
        deliberately skipped one; unreadable JSON yields a single error Problem.

    Raises:
        InvalidInput: the patient_key is malformed (raised at once, not when iterating).
    """
    identity = Identity(patient_key)
    return _read(data, label, identity, skipped)


def _read(
    data: bytes | str | Path, label: str, identity: Identity, skipped: Counter[str] | None
) -> Iterator[Item]:
    where = Where(file=label)
    try:
        raw = data if isinstance(data, bytes) else Path(data).read_bytes()
        doc = json_text.loads(raw)
    except OSError as exc:
        yield from stop(where, f"cannot read file: {exc.strerror or exc}")
        return
    except json.JSONDecodeError as exc:
        yield from stop(where, f"invalid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}")
        return
    except ValueError as exc:  # bytes that are not UTF-8
        yield from stop(where, f"invalid JSON: {exc}")
        return
    rtype = resource_type(doc)
    if rtype is None:
        yield from stop(where, "not a FHIR resource: no resourceType")
        return
    if rtype == "Bundle" and not isinstance(doc.get("entry", []), list):
        yield from stop(Where(file=label, prefix="entry"), "Bundle.entry is not an array")
        return
    reader = _BundleReader(label, identity, skipped)
    if rtype == "Bundle":
        reader.add_bundle(doc, None, "")
    else:
        reader.entries.append(_Entry(where, None, doc))
    yield from reader.read()


@dataclass(frozen=True, slots=True)
class _Entry:
    where: Where
    full_url: str | None
    resource: Json | None
    problem: str = ""  # why an entry without a resource is an error


class _BundleReader:
    """The entries of a bundle, nested bundles (batch-response searchsets) included, read
    with references resolved inside the bundle."""

    def __init__(self, label: str, identity: Identity, skipped: Counter[str] | None) -> None:
        self.label, self.identity, self.skipped = label, identity, skipped
        self.entries: list[_Entry] = []
        self.by_ref: dict[str, int] = {}
        self.outcomes: dict[int, Item | None] = {}
        self.validated: dict[int, bool] = {}
        self.pending: list[Problem] = []

    def add_bundle(self, bundle: Json, index: int | None, prefix: str, depth: int = 0) -> None:
        entries = bundle.get("entry")
        for i, entry in enumerate(entries if isinstance(entries, list) else ()):
            where = Where(self.label, i if index is None else index, prefix=f"{prefix}entry[{i}]")
            full_url = obj(entry).get("fullUrl")
            res = obj(entry).get("resource")
            rtype = resource_type(res)
            if rtype == "Bundle" and depth < MAX_DEPTH:
                self.add_bundle(obj(res), where.index, f"{where.prefix}.resource.", depth + 1)
                continue
            if not isinstance(entry, dict):
                self.entries.append(_Entry(where, None, None, "Bundle entry is not an object"))
            elif rtype is not None:
                where = Where(self.label, where.index, prefix=f"{where.prefix}.resource.")
                url = full_url if isinstance(full_url, str) else None
                self.entries.append(_Entry(where, url, obj(res)))
                self._index(len(self.entries) - 1)
            elif "resource" in entry:  # else a request or response without a resource
                where = Where(self.label, where.index, prefix=f"{where.prefix}.resource")
                self.entries.append(_Entry(where, None, None, "entry.resource has no resourceType"))

    def _index(self, position: int) -> None:
        entry = self.entries[position]
        res = obj(entry.resource)
        if entry.full_url:
            self.by_ref.setdefault(entry.full_url, position)
        if isinstance(res.get("id"), str):
            self.by_ref.setdefault(f"{res['resourceType']}/{res['id']}", position)

    def read(self) -> Iterator[Item]:
        for entry in self.entries:
            if resource_type(entry.resource) == "Patient":
                yield from self._patient(entry)
        for position, entry in enumerate(self.entries):
            rtype = resource_type(entry.resource)
            if rtype is None:
                yield entry.where.problem(None, entry.problem)
            elif rtype == "Patient":
                continue
            elif not is_mapped(rtype):
                count(self.skipped, rtype)
            else:
                outcome = self._outcome(position)
                yield from self.pending
                self.pending.clear()
                if outcome is not None:
                    yield outcome

    def _patient(self, entry: _Entry) -> Iterator[Item]:
        res = obj(entry.resource)
        problem = validate(res, entry.where)
        if problem is not None:
            yield problem
            return
        aliases = (entry.full_url,) if entry.full_url else ()
        yield patient_record(res, entry.where, self.identity, aliases)

    def _outcome(self, position: int) -> Item | None:
        """Validates and maps an entry once; a Condition may be mapped early for a link."""
        if position in self.outcomes:
            return self.outcomes[position]
        self.outcomes[position] = None  # guards against reference cycles
        entry = self.entries[position]
        res = obj(entry.resource)
        outcome = validate(res, entry.where) or map_resource(
            res, entry.where, self.label, self.identity, self
        )
        self.outcomes[position] = outcome
        return outcome

    def _find(self, reference: Any, container: Json) -> tuple[int | None, Json | None]:
        text = obj(reference).get("reference")
        if not isinstance(text, str) or not text:
            return None, None
        if text.startswith("#"):
            return None, contained(text, container)
        position = self.by_ref.get(text)
        if position is None:
            key = type_id(text)
            position = self.by_ref.get(key) if key else None
        if position is None:
            return None, None
        return position, obj(self.entries[position].resource)

    def resource(self, reference: Any, container: Json) -> Json | None:
        """The resource a reference points to: contained, or in the bundle (validated)."""
        position, res = self._find(reference, container)
        if position is None or res is None:
            return res
        if position not in self.validated:
            problem = validate(res, self.entries[position].where)
            self.validated[position] = problem is None
            if problem is not None:
                self.pending.append(problem)
        return res if self.validated[position] else None

    def condition_key(self, reference: Any, container: Json) -> str | None:
        """The fact key of a Condition in the bundle, mapping it now if need be."""
        position, res = self._find(reference, container)
        if position is None or resource_type(res) != "Condition":
            return None
        outcome = self._outcome(position)
        if isinstance(outcome, Record) and outcome.source is not None:
            return outcome.source.claims[0].fact_key
        return None
