"""Shared machinery of the FHIR readers: validation, references, patient identity.

Only the resources that are mapped (and the Medications they point to) are validated, each
once, with the `fhir.resources` R4B model of its type; the mapping then reads the same
JSON dict, so nothing is copied.
"""

import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from fhir.resources.R4B import get_fhir_model_class
from pydantic import ValidationError

from engine.errors import InvalidInput
from engine.fhir_export import is_patient_reported
from engine.models import SourceClaims
from ingest.fhir_map import (
    MAPPERS,
    PATIENT_ELEMENT,
    Resolver,
    Skip,
    canonical_hash,
    map_patient,
    source_for,
)
from ingest.fhir_values import Json, obj
from ingest.records import Problem, Record

Item = Record | Problem

# `Type/id` at the end of a relative or absolute reference, a version suffix allowed.
_TYPE_ID = re.compile(r"(?:^|/)([A-Z][A-Za-z]+)/([A-Za-z0-9\-.]{1,64})(?:/_history/[^/]+)?$")
_MORE_ERRORS = 3


def type_id(reference: str) -> str | None:
    """`Type/id` of a reference (`Patient/1`, `http://x/fhir/Patient/1/_history/2`)."""
    match = _TYPE_ID.search(reference)
    return f"{match[1]}/{match[2]}" if match else None


@dataclass(frozen=True, slots=True)
class Where:
    """Where a resource sits in the input, for locating problems."""

    file: str
    index: int | None = None
    line: int | None = None
    prefix: str = ""

    def problem(self, res: Json | None, message: str, path: str = "", **kw: Any) -> Problem:
        res = res or {}
        rtype, rid = res.get("resourceType"), res.get("id")
        return Problem(
            file=self.file,
            index=self.index,
            line=self.line,
            resource_type=rtype if isinstance(rtype, str) else None,
            resource_id=rid if isinstance(rid, str) else None,
            path=self.prefix + path if path else self.prefix.rstrip("."),
            message=message,
            **kw,
        )


def json_path(loc: tuple[int | str, ...]) -> str:
    """A pydantic error location as a JSON path: ("code", "coding", 0) → `code.coding[0]`."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part.replace("_", "").isalnum():
            out += f".{part}" if out else part
    return out


def validate(res: Json, where: Where) -> Problem | None:
    """Validates a resource with its R4B model; the first error located, the rest counted."""
    try:
        get_fhir_model_class(res["resourceType"]).model_validate(res)
    except ValidationError as exc:
        errors = exc.errors(include_url=False, include_input=False)
        head, rest = errors[0], errors[1:]
        message = head["msg"]
        if rest:
            more = ", ".join(json_path(e["loc"]) or "(resource)" for e in rest[:_MORE_ERRORS])
            extra = len(rest) - _MORE_ERRORS
            message += f" (and {len(rest)} more: {more}{', ...' if extra > 0 else ''})"
        return where.problem(res, message, json_path(head["loc"]))
    except (ValueError, TypeError, KeyError, LookupError) as exc:
        return where.problem(res, f"not a valid FHIR R4 resource: {exc}")
    return None


def contained(reference: str, container: Json) -> Json | None:
    """The contained resource `#id` of `container`."""
    wanted = reference[1:]
    for res in container.get("contained") or ():
        if isinstance(res, dict) and res.get("id") == wanted:
            return res
    return None


class Identity:
    """How a resource's patient becomes `Record.patient_ref`.

    By default the FHIR Patient id; with `patient_key="identifier:SYSTEM"` the value of the
    Patient's identifier in that system, which needs the Patient resources read first.
    """

    def __init__(self, patient_key: str | None) -> None:
        self.system: str | None = None
        if patient_key not in (None, "", "id"):
            system = str(patient_key).removeprefix("identifier:")
            if system == patient_key or not system:
                raise InvalidInput(
                    f"patient_key must be 'id' or 'identifier:SYSTEM', not {patient_key!r}"
                )
            self.system = system.removeprefix("urn:oid:")
        self._refs: dict[str, str | None] = {}

    def register(self, res: Json, aliases: tuple[str, ...]) -> str | None:
        """The patient_ref of a Patient resource, remembered under its aliases."""
        if self.system is None:
            ref = res.get("id") or next(filter(None, map(_alias_id, aliases)), None)
        else:
            ref = self._identifier(res.get("identifier"))
        keys = [*aliases, f"Patient/{res['id']}" if res.get("id") else ""]
        for key in filter(None, keys):
            self._refs[key] = ref
        return ref

    def _identifier(self, identifiers: Any) -> str | None:
        for ident in identifiers if isinstance(identifiers, list) else [identifiers]:
            i = obj(ident)
            if str(i.get("system", "")).removeprefix("urn:oid:") == self.system and i.get("value"):
                return str(i["value"])
        return None

    def lookup(self, reference: Any, container: Json) -> tuple[str | None, str]:
        """(patient_ref, why not) for a Reference to a patient from `container`."""
        ref = obj(reference)
        text = str(ref.get("reference") or "")
        if text.startswith("#"):
            patient = obj(contained(text, container))
            found = self._identifier(patient.get("identifier")) if self.system else None
            return found, "" if found else f"the patient {text} is contained: it has no identity"
        if not text:
            if self.system is not None and ref.get("identifier"):
                found = self._identifier(ref["identifier"])
                return found, "" if found else f"no identifier in system {self.system}"
            return None, "no patient reference"
        key = type_id(text)
        for alias in (text, key):
            if alias and alias in self._refs:
                found = self._refs[alias]
                return found, "" if found else f"{text} has no identifier in system {self.system}"
        if key and not key.startswith("Patient/"):
            return None, f"the subject is {key}, not a Patient"
        if self.system is not None:
            return None, f"patient {text} is not in the input (needed for its identifier)"
        if key:
            return key.removeprefix("Patient/"), ""
        if text.startswith("urn:uuid:"):
            return text.removeprefix("urn:uuid:"), ""
        return None, f"cannot tell the patient from reference {text!r}"


def _alias_id(full_url: str) -> str | None:
    """The id that a Patient without one has by its fullUrl (urn:uuid or .../Patient/id)."""
    if full_url.startswith("urn:uuid:"):
        return full_url.removeprefix("urn:uuid:")
    key = type_id(full_url)
    return key.removeprefix("Patient/") if key and key.startswith("Patient/") else None


def patient_record(res: Json, where: Where, identity: Identity, aliases: tuple[str, ...]) -> Item:
    """The Record of a validated Patient resource (or why it cannot have one)."""
    ref = identity.register(res, aliases)
    if not ref:
        what = "id" if identity.system is None else f"identifier in system {identity.system}"
        return where.problem(res, f"Patient has no {what}", severity="warning")
    return Record(patient_ref=ref, patient=map_patient(res))


PATIENT_REPORTED = (
    "not ingested: a patient-reported resource exported by this engine (tag"
    " 'patient-reported'); what patients say stays a memory and never becomes a record fact"
)


def map_resource(
    res: Json,
    where: Where,
    label: str,
    identity: Identity,
    resolver: Resolver,
    content_hash: str | None = None,
) -> Item:
    """A validated clinical resource → its Record, or the Problem that stops it.

    `content_hash` is the resource's `canonical_hash` when it is known already (a pool
    process computed it).
    """
    rtype = str(res["resourceType"])
    if is_patient_reported(res):
        # what a patient told an agent, exported by this engine: a memory, never a fact
        return where.problem(res, PATIENT_REPORTED, severity="warning")
    patient_ref, why = identity.lookup(res.get(PATIENT_ELEMENT[rtype]), res)
    if patient_ref is None:
        return where.problem(res, why, PATIENT_ELEMENT[rtype])
    try:
        claim, links = MAPPERS[rtype](res, resolver)
    except Skip as skip:
        return where.problem(res, f"not ingested: {skip}", severity="warning")
    source = source_for(res, label, content_hash or canonical_hash(res))
    return Record(
        patient_ref=patient_ref,
        source=SourceClaims(source=source, claims=(claim,)),
        links=links,
    )


def count(skipped: Counter[str] | None, rtype: str) -> None:
    """Counts a resource of a type that is not mapped."""
    if skipped is not None:
        skipped[rtype] += 1


def resource_type(value: Any) -> str | None:
    """The resourceType of a JSON value that looks like a resource."""
    if isinstance(value, dict) and isinstance(value.get("resourceType"), str):
        return str(value["resourceType"])
    return None


def preload() -> None:
    """Imports the R4B model of every type validated here (and their types' modules as
    validation needs them): processes forked afterwards share them instead of each
    importing its own."""
    for rtype in ("Patient", "Medication", *MAPPERS):
        get_fhir_model_class(rtype)


def is_mapped(rtype: str) -> bool:
    """Whether resources of this type become records."""
    return rtype == "Patient" or rtype in MAPPERS


def stop(where: Where, message: str) -> Iterator[Item]:
    """A single fatal problem for input that cannot be read at all."""
    yield where.problem(None, message, fatal=True)
