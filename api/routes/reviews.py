"""Clinician reviews of memories: confirm, dismiss with a reason, or note (SPEC §5)."""

from typing import Annotated

from fastapi import APIRouter, Path, status

from api.deps import (
    MEMORY_REVIEW,
    PID_PATTERN,
    RECORD_READ,
    PrincipalDep,
    ScopeDep,
    StoreDep,
    require,
)
from api.schemas import ReviewCreate, ReviewPublic
from engine.memories.reviews import review_memory

router = APIRouter(prefix="/v1/patients/{pid}/memories/{mid}", tags=["reviews"])
MemoryId = Annotated[str, Path(pattern=PID_PATTERN)]


@router.post("/reviews", status_code=status.HTTP_201_CREATED, dependencies=[require(MEMORY_REVIEW)])
def add_review(
    store: StoreDep, scope: ScopeDep, principal: PrincipalDep, mid: MemoryId, body: ReviewCreate
) -> ReviewPublic:
    """Append a review: `dismiss` needs a `reason`, `note` needs a `note`."""
    review = review_memory(store, scope, mid, principal.actor, body.action, body.reason, body.note)
    return ReviewPublic.of(review)


@router.get("/reviews", dependencies=[require(RECORD_READ)])
def list_reviews(store: StoreDep, scope: ScopeDep, mid: MemoryId) -> list[ReviewPublic]:
    """The memory's reviews, oldest first."""
    return [ReviewPublic.of(r) for r in store.list_reviews(scope, mid)]
