"""Ingest routes: FHIR (JSON or NDJSON) and C-CDA bodies for one patient."""

from typing import Annotated

from fastapi import APIRouter, Query, Request
from starlette.concurrency import run_in_threadpool

from api.deps import INGEST_WRITE, PrincipalDep, ScopeDep, SettingsDep, StoreDep, require
from api.problems import PayloadTooLarge, UnsupportedMediaType
from engine.errors import IdentityMismatch, InvalidInput
from ingest.pipeline import Ingestor, IngestReport, read_bytes
from ingest.sniff import what_is_in

router = APIRouter(prefix="/v1/patients/{pid}/ingest", tags=["ingest"])

FHIR_TYPES = {"application/json", "application/fhir+json", "application/fhir+ndjson"}
CDA_TYPES = {"application/xml", "text/xml", "application/cda+xml", "application/hl7-cda+xml"}


async def _body(request: Request, limit: int, accepted: set[str]) -> tuple[bytes, str]:
    media_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if media_type not in accepted:
        raise UnsupportedMediaType(
            f"content type {media_type or 'none'!r} not accepted here; use one of "
            + ", ".join(sorted(accepted))
        )
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > limit:
        raise PayloadTooLarge(f"body of {declared} bytes is over the {limit}-byte limit")
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise PayloadTooLarge(f"body is over the {limit}-byte limit")
        chunks.append(chunk)
    return b"".join(chunks), media_type


def _ingest(
    store: StoreDep,
    scope: ScopeDep,
    data: bytes,
    media_type: str,
    accept: bool = False,
    actor: str = "api",
    assigned: str | None = None,
) -> IngestReport:
    if assigned is not None and assigned != scope.patient:
        raise InvalidInput(f"patient={assigned!r} names another patient than the path")
    ingestor = Ingestor(
        store,
        scope.org,
        patient=scope.patient,
        accept_identity_mismatch=accept,
        actor=actor,
        assigned=assigned is not None,
    )
    ingestor.feed("request body", read_bytes(data, "request body", media_type=media_type))
    report = ingestor.report
    if ingestor.identity_refusals:
        found, _ = ingestor.identity_refusals[0]
        raise IdentityMismatch(
            f"{found}; nothing was written (accept_identity_mismatch=true overrides)",
            [p.model_dump(exclude_none=True) for _, p in ingestor.identity_refusals],
        )
    if report.unusable:
        raise InvalidInput(
            "the body is not usable input",
            [p.model_dump(exclude_none=True) for p in report.unusable],
        )
    if report.resources == 0:
        problems = [p.model_dump(exclude_none=True) for p in report.errors + report.warnings]
        raise InvalidInput(f"the body holds no usable resource: {what_is_in(data)}", problems)
    return report


AcceptMismatch = Annotated[
    bool,
    Query(description="write even if the stored patient's demographics disagree (audited)"),
]
Assigned = Annotated[
    str | None,
    Query(
        alias="patient",
        max_length=128,
        description="the path's patient id again: an explicit assignment of the document to"
        " this patient, which overrides (and audits) an identity refusal",
    ),
]


@router.post("/fhir", dependencies=[require(INGEST_WRITE)])
async def ingest_fhir(
    request: Request,
    store: StoreDep,
    scope: ScopeDep,
    settings: SettingsDep,
    principal: PrincipalDep,
    accept_identity_mismatch: AcceptMismatch = False,
    patient: Assigned = None,
) -> IngestReport:
    """Ingest a FHIR Bundle, a single resource, or an NDJSON body."""
    data, media_type = await _body(request, settings.max_ingest_bytes, FHIR_TYPES)
    return await run_in_threadpool(
        _ingest,
        store,
        scope,
        data,
        media_type,
        accept_identity_mismatch,
        principal.actor,
        patient,
    )


@router.post("/cda", dependencies=[require(INGEST_WRITE)])
async def ingest_cda(
    request: Request,
    store: StoreDep,
    scope: ScopeDep,
    settings: SettingsDep,
    principal: PrincipalDep,
    accept_identity_mismatch: AcceptMismatch = False,
    patient: Assigned = None,
) -> IngestReport:
    """Ingest a C-CDA XML document."""
    data, media_type = await _body(request, settings.max_ingest_bytes, CDA_TYPES)
    return await run_in_threadpool(
        _ingest,
        store,
        scope,
        data,
        "application/xml",
        accept_identity_mismatch,
        principal.actor,
        patient,
    )
