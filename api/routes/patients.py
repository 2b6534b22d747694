"""Patient and fact routes: demographics, merged facts, the resolution report, erasure."""

from collections import Counter
from typing import Any

from fastapi import APIRouter, Depends, Query
from pydantic import BaseModel

from api.audit import anonymise
from api.deps import PATIENT_ERASE, RECORD_READ, ScopeDep, StoreDep, require
from engine.models import Fact, FactKind, FieldConflict, Merge, Patient

router = APIRouter(prefix="/v1/patients/{pid}", tags=["patients"])


class PatientPublic(BaseModel):
    id: str
    demographics: Patient
    facts: dict[str, int]
    sessions: int


class MergedFact(BaseModel):
    fact_id: str
    kind: FactKind
    label: str
    sources: list[str]
    conflicts: list[FieldConflict]
    merged_by: list[Merge]


class CandidatePublic(BaseModel):
    fact_id: str
    source_ref: str
    label: str
    also_matches: list[str]


class ResolutionReport(BaseModel):
    facts: int
    merged: list[MergedFact]
    conflicts: int
    merges_by_layer: dict[str, int]
    candidates: list[CandidatePublic]


class Erasure(BaseModel):
    patient: str
    removed: int
    remaining: int


@router.get("", dependencies=[require(RECORD_READ)])
def get_patient(store: StoreDep, scope: ScopeDep) -> PatientPublic:
    """Demographics and counts of one patient."""
    demographics = store.get_patient(scope)
    counts: dict[str, int] = {}
    for fact in store.list_facts(scope):
        counts[fact.kind.value] = counts.get(fact.kind.value, 0) + 1
    sessions = len(store.list_sessions(scope))
    return PatientPublic(
        id=scope.patient, demographics=demographics, facts=counts, sessions=sessions
    )


@router.delete("", dependencies=[require(PATIENT_ERASE), Depends(anonymise)])
def erase_patient(store: StoreDep, scope: ScopeDep) -> Erasure:
    """Erase everything of the patient and verify that nothing remains."""
    store.get_patient(scope)
    removed = store.erase_patient(scope)
    return Erasure(
        patient=scope.patient, removed=removed, remaining=store.count_patient_items(scope)
    )


@router.get("/facts", dependencies=[require(RECORD_READ)])
def list_facts(
    store: StoreDep,
    scope: ScopeDep,
    kind: FactKind | None = None,
    status: str | None = Query(default=None, max_length=64),
) -> list[dict[str, Any]]:
    """Merged facts, optionally of one kind and status."""
    store.get_patient(scope)
    return [_public(fact) for fact in store.list_facts(scope, kind, status)]


@router.get("/facts/{fact_id:path}", dependencies=[require(RECORD_READ)])
def get_fact(store: StoreDep, scope: ScopeDep, fact_id: str) -> dict[str, Any]:
    """One fact with every source and conflict record."""
    return _public(store.get_fact(scope, fact_id))


@router.get("/resolution", dependencies=[require(RECORD_READ)])
def resolution(store: StoreDep, scope: ScopeDep) -> ResolutionReport:
    """Which facts were merged from several sources, and where the sources disagree."""
    store.get_patient(scope)
    facts = store.list_facts(scope)
    merged = [
        MergedFact(
            fact_id=f.fact_key,
            kind=f.kind,
            label=f.label,
            sources=[s.source_ref for s in f.sources],
            conflicts=list(f.conflicts),
            merged_by=list(f.merged_by),
        )
        for f in facts
        if len(f.sources) > 1 or f.conflicts
    ]
    candidates = [
        CandidatePublic(
            fact_id=f.fact_key,
            source_ref=c.source_ref,
            label=c.label,
            also_matches=list(c.fact_keys),
        )
        for f in facts
        for c in f.candidates
    ]
    return ResolutionReport(
        facts=len(facts),
        merged=merged,
        conflicts=sum(len(f.conflicts) for f in facts),
        merges_by_layer=dict(Counter(m.layer.value for f in facts for m in f.merged_by)),
        candidates=candidates,
    )


def _public(fact: Fact) -> dict[str, Any]:
    return {"fact_id": fact.fact_key} | fact.model_dump(mode="json")
