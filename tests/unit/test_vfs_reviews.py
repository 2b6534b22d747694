"""Confidence and reviews in the views: confirmed first and badged, then the most confident."""

from engine.models import DismissReason, MemoryRecord, Relationship, RelationshipType, ReviewAction
from tests.contract.builders import memory, review
from tests.unit.test_vfs_builders import jane
from tests.unit.test_vfs_golden import DIABETES_STORY
from vfs import VfsFile, read
from vfs.render_memory import badge, reported_items


def _pair(
    memory_id: str, confidence: float, *reviews: ReviewAction
) -> tuple[MemoryRecord, Relationship]:
    record = MemoryRecord(
        memory=memory(memory_id, "s1").model_copy(update={"confidence": confidence}),
        reviews=tuple(review(f"{memory_id}-{i}", memory_id, a) for i, a in enumerate(reviews)),
    )
    rel = Relationship(
        memory_id=memory_id,
        fact_key="medication:rxnorm:1",
        type=RelationshipType.CORROBORATES,
        rationale="why",
        confidence=0.5,
        method="test",
    )
    return record, rel


def test_confirmed_first_then_the_most_confident() -> None:
    hedged, direct, confirmed = (
        _pair("a", 0.4),
        _pair("b", 0.8),
        _pair("c", 0.3, ReviewAction.CONFIRM),
    )

    items = reported_items([hedged, direct, confirmed], [hedged[0].memory.type])

    badges = [dict(i.fields)["Confidence"] for i in items]
    assert badges == ["0.3 (confirmed)", "0.8 (high)", "0.4 (low)"]


def test_a_note_keeps_the_confirmation_and_a_dismissal_ends_it() -> None:
    record, _ = _pair("a", 0.6, ReviewAction.CONFIRM)
    noted = record.model_copy(
        update={"reviews": (*record.reviews, review("n", "a", ReviewAction.NOTE, note="ok"))}
    )
    dismissal = review("d", "a", ReviewAction.DISMISS, DismissReason.DUPLICATE)
    dismissed = record.model_copy(update={"reviews": (*record.reviews, dismissal)})

    assert (badge(record), badge(noted)) == ("confirmed", "confirmed")
    assert badge(dismissed) == "medium" and dismissed.dismissed
    assert badge(_pair("c", 0.3)[0]) == "low"


def test_dismissed_memories_are_read_only_when_asked_for() -> None:
    store, scope = jane()

    story = read(store, scope, DIABETES_STORY)
    kept = read(store, scope, DIABETES_STORY, include_dismissed=True)

    assert isinstance(story, VfsFile) and isinstance(kept, VfsFile)
    assert "never thirsty" not in story.content
    assert "never thirsty" in kept.content
    item = next(x for x in kept.content.split("\n- ") if "never thirsty" in x)
    assert "DISCREPANCY" not in item and "dismiss (wrong) by dr-house" in item
