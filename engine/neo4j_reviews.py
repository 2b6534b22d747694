"""Memory reviews in Neo4j: `(:MemoryReview)-[:REVIEWS]->(:Memory)`, appended, never set."""

from collections.abc import Iterable

from engine import cypher
from engine.errors import Conflict, NotFound
from engine.models import MemoryReview
from engine.neo4j_write import Params, Transaction, lock_patient


def add_review(tx: Transaction, scope: Params, review: MemoryReview) -> None:
    """Appends a review to its memory.

    Raises:
        Conflict: the review id exists.
        NotFound: the memory does not exist.
    """
    params = scope | {
        "review_id": review.review_id,
        "memory_id": review.memory_id,
        "created_at": review.created_at.isoformat(timespec="microseconds"),
        "data": review.model_dump_json(),
    }
    lock_patient(tx, params, upsert=False)
    if tx.run(cypher.GET_REVIEW, params).single() is not None:
        raise Conflict(f"review {review.review_id!r} already exists")
    if not tx.run(cypher.CREATE_REVIEW, params).single(strict=True)["created"]:
        raise NotFound("memory", review.memory_id)


def list_reviews(tx: Transaction, scope: Params, memory_id: str) -> list[MemoryReview] | None:
    """A memory's reviews, oldest first; None when the memory does not exist."""
    params = scope | {"memory_id": memory_id}
    if tx.run(cypher.GET_MEMORY, params).single() is None:
        return None
    return ordered(row["data"] for row in tx.run(cypher.LIST_REVIEWS, params))


def ordered(rows: Iterable[str]) -> list[MemoryReview]:
    """Reviews from their stored JSON, oldest first (ties by id), as SQLite orders them."""
    reviews = [MemoryReview.model_validate_json(data) for data in rows]
    return sorted(reviews, key=lambda r: (r.created_at, r.review_id))
