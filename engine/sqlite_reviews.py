"""Memory reviews in SQLite: appended to the `memory_reviews` table, read oldest first."""

import sqlite3

from engine import sqlite_schema
from engine.errors import Conflict, NotFound
from engine.models import MemoryReview, Scope


def add_review(db: sqlite3.Connection, scope: Scope, review: MemoryReview) -> None:
    """Appends a review; `NotFound` for an unknown memory, `Conflict` for a known review id."""
    _require_memory(db, scope, review.memory_id)
    try:
        db.execute(
            sqlite_schema.INSERT_REVIEW,
            (
                scope.org,
                scope.patient,
                review.review_id,
                review.memory_id,
                review.created_at.isoformat(timespec="microseconds"),
                review.model_dump_json(),
            ),
        )
    except sqlite3.IntegrityError as e:
        raise Conflict(f"review {review.review_id!r} already exists") from e


def list_reviews(db: sqlite3.Connection, scope: Scope, memory_id: str) -> list[MemoryReview]:
    """One memory's reviews, oldest first; `NotFound` for an unknown memory."""
    _require_memory(db, scope, memory_id)
    return reviews_by_memory(db, scope, memory_id).get(memory_id, [])


def reviews_by_memory(
    db: sqlite3.Connection, scope: Scope, memory_id: str | None = None
) -> dict[str, list[MemoryReview]]:
    """Memory id → its reviews, oldest first (of one memory, or of all when None)."""
    grouped: dict[str, list[MemoryReview]] = {}
    params = (scope.org, scope.patient, memory_id, memory_id)
    for row in db.execute(sqlite_schema.SELECT_REVIEWS, params):
        review = MemoryReview.model_validate_json(row["data"])
        grouped.setdefault(review.memory_id, []).append(review)
    return grouped


def _require_memory(db: sqlite3.Connection, scope: Scope, memory_id: str) -> None:
    found = db.execute(
        "SELECT 1 FROM memories WHERE org = ? AND patient = ? AND memory_id = ?",
        (scope.org, scope.patient, memory_id),
    ).fetchone()
    if found is None:
        raise NotFound("memory", memory_id)
