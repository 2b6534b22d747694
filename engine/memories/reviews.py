"""A clinician's review of a memory, as every interface (HTTP, CLI, viewer) appends it."""

import uuid

from pydantic import ValidationError

from engine.errors import InvalidInput
from engine.models import DismissReason, MemoryReview, ReviewAction, Scope
from engine.store import GraphStore


def review_memory(
    store: GraphStore,
    scope: Scope,
    memory_id: str,
    actor: str,
    action: ReviewAction,
    reason: DismissReason | None = None,
    note: str = "",
) -> MemoryReview:
    """Appends a new review to a memory and returns it.

    Raises:
        InvalidInput: a dismissal without a reason, a reason on anything else, an empty
            note, or a note over 2000 characters.
        NotFound: the memory does not exist in the scope.
    """
    try:
        review = MemoryReview(
            review_id=uuid.uuid4().hex,
            memory_id=memory_id,
            actor=actor,
            action=action,
            reason=reason,
            note=note,
        )
    except ValidationError as e:
        errors = [
            {"path": ".".join(str(p) for p in err["loc"]) or "body", "message": err["msg"]}
            for err in e.errors()
        ]
        raise InvalidInput(errors[0]["message"].removeprefix("Value error, "), errors) from e
    return store.add_review(scope, review)
