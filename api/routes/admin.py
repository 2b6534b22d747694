"""Admin routes: the org's audit trail (scope `admin`, org from the principal)."""

from typing import Annotated

from fastapi import APIRouter, Query

from api.deps import ADMIN, PID_PATTERN, PrincipalDep, StoreDep, require
from engine.audit import AuditEvent

router = APIRouter(prefix="/v1/admin", tags=["admin"])


@router.get("/audit", dependencies=[require(ADMIN)])
def list_audit(
    store: StoreDep,
    principal: PrincipalDep,
    patient: Annotated[str | None, Query(pattern=PID_PATTERN)] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> list[AuditEvent]:
    """The caller's org's audit events, most recent first, optionally of one patient."""
    return store.list_audit(principal.org, patient, limit)
