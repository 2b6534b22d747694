"""What the FHIR mappers share: the Resolver they follow references with, skipping, claims."""

from collections.abc import Callable
from typing import Any, Protocol

from engine.models import Claim, FactKind, FactLink, FieldValue
from ingest.fhir_values import Json, cc_code, cc_codes, cc_text
from ingest.keys import fact_key
from ingest.matching import match_keys

SKIPPED_VERIFICATION = frozenset({"entered-in-error", "refuted"})


class Skip(Exception):
    """A valid resource that is deliberately not ingested; the message becomes a warning."""


class Resolver(Protocol):
    """Follows references from inside one resource (contained, bundle, export)."""

    def resource(self, reference: Any, container: Json) -> Json | None:
        """The validated resource that a Reference points to, if it is in the input."""

    def condition_key(self, reference: Any, container: Json) -> str | None:
        """The fact key of the Condition a Reference points to, if it is in the input."""


Mapped = tuple[Claim, tuple[FactLink, ...]]
Mapper = Callable[[Json, Resolver], Mapped]


def make_claim(
    kind: FactKind,
    concept: Any,
    status: str | None,
    fields: dict[str, FieldValue],
    date: str | None = None,
) -> Claim:
    """A claim keyed by `fact_key`; None fields dropped; no label at all → Skip."""
    label = cc_text(concept)
    if not label:
        raise Skip(f"no {kind} code or text")
    codes = cc_codes(concept)
    return Claim(
        fact_key=fact_key(kind, codes, label, date),
        kind=kind,
        label=label,
        status=status,
        codes=codes,
        fields={name: value for name, value in fields.items() if value is not None},
        match_keys=match_keys(kind, codes, label, date),
    )


def verification(resource: Json) -> str | None:
    """The verificationStatus code; entered-in-error and refuted → Skip."""
    verification = cc_code(resource.get("verificationStatus"))
    if verification in SKIPPED_VERIFICATION:
        raise Skip(f"verificationStatus is {verification}")
    return verification


def category(res: Json) -> str | None:
    """The codes (else texts) of `category`, one concept or a list, joined by "; "."""
    cats = res.get("category")
    concepts = cats if isinstance(cats, list) else [cats]
    found = [cc_code(c) or cc_text(c) for c in concepts]
    return "; ".join(dict.fromkeys(c for c in found if c)) or None


def unless_in_error(res: Json) -> str:
    """The raw status; entered-in-error → Skip."""
    status = str(res.get("status") or "unknown")
    if status == "entered-in-error":
        raise Skip("status is entered-in-error")
    return status
