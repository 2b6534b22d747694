"""Builders shared by the memories unit tests (no tests here)."""

from datetime import UTC, datetime

from engine.models import Coding, Fact, FactKind, Message, Role, Source, SourceFormat

SESSION = "s1"
T0 = datetime(2024, 5, 1, tzinfo=UTC)


def conversation(*turns: tuple[str, str]) -> list[Message]:
    """Messages numbered from 1: ("provider" | "patient" | "caregiver", text)."""
    return [
        Message(session_id=SESSION, seq=i, role=Role(role), text=text, timestamp=T0)
        for i, (role, text) in enumerate(turns, start=1)
    ]


def source(ref: str) -> Source:
    rtype, rid = ref.split("/")
    return Source(
        source_ref=f"fhir:{ref}",
        format=SourceFormat.FHIR,
        label="t",
        resource_type=rtype,
        resource_id=rid,
        content_hash=f"h-{ref}",
    )


def condition(key: str, label: str, status: str = "active", ref: str = "Condition/c1") -> Fact:
    return Fact(
        fact_key=key, kind=FactKind.CONDITION, label=label, status=status, sources=(source(ref),)
    )


def medication(
    key: str, label: str, status: str = "current", dose: str = "", ref: str = "MedicationRequest/m1"
) -> Fact:
    codes = (Coding(system="rxnorm", code=key.rsplit(":", 1)[1], display=label),)
    return Fact(
        fact_key=key,
        kind=FactKind.MEDICATION,
        label=label,
        status=status,
        codes=codes,
        fields={"dose": dose} if dose else {},
        sources=(source(ref),),
    )
