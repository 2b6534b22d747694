"""Liveness and readiness: public, unaudited, never touching patient data."""

from fastapi import APIRouter
from pydantic import BaseModel

from api.deps import StoreDep

PUBLIC = True  # create_app() does not authenticate this router
router = APIRouter(prefix="/health", tags=["health"])

# An org id no tenant can have (ids match ^[A-Za-z0-9._-]+$): a cheap indexed lookup.
_PROBE_ORG = "~ready"


class Health(BaseModel):
    status: str


@router.get("/live")
def live() -> Health:
    """The process answers."""
    return Health(status="ok")


@router.get("/ready", responses={503: {"description": "The store cannot be reached"}})
def ready(store: StoreDep) -> Health:
    """The store answers; 503 (with Retry-After) while it does not."""
    store.list_patients(_PROBE_ORG)
    return Health(status="ready")
