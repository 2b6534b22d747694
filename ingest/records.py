"""What readers yield: one record per usable resource or entry, one problem per bad one."""

from typing import Literal

from engine.models import FactLink, Frozen, Patient, SourceClaims


class Problem(Frozen):
    """A located error or warning; the rest of the input is still ingested.

    A `fatal` problem means the whole input is unusable (unreadable, not JSON or XML, not
    a document of a known kind): nothing of it is ingested.
    """

    severity: Literal["error", "warning"] = "error"
    fatal: bool = False
    file: str
    index: int | None = None
    line: int | None = None
    resource_type: str | None = None
    resource_id: str | None = None
    path: str = ""
    message: str


class Record(Frozen):
    """What one resource (FHIR) or entry (C-CDA) contributes to one patient's graph."""

    patient_ref: str
    patient: Patient | None = None
    source: SourceClaims | None = None
    links: tuple[FactLink, ...] = ()
    # C-CDA: the source-ref prefix of the entry's document lineage (its setId and person),
    # whose entries that a newer version no longer contains are retired
    document: str | None = None
