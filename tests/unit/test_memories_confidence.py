"""Confidence follows how a memory was established, not a constant."""

from engine.memories.confidence import memory_confidence, relationship_confidence
from engine.memories.offline import OfflineExtractor
from engine.memories.verify import accept
from tests.unit.test_memories_builders import conversation


def test_direct_beats_answer_beats_inferred_and_hedges_cost() -> None:
    direct = memory_confidence("statement", ["i stopped the metformin"])
    answer = memory_confidence("answer", ["yes ."])
    inferred = memory_confidence("named", ["my water pill"], inferred_drug=True)
    hedged = memory_confidence("statement", ["i think i maybe stopped the metformin"])
    assert direct > answer > inferred
    assert hedged < direct
    assert memory_confidence("statement", ["a", "b"]) > direct  # said again


def test_a_relationship_is_weaker_by_class_and_by_default() -> None:
    assert relationship_confidence(0.8, "ingredient", True) == 0.8
    assert relationship_confidence(0.8, "class", True) < 0.8
    assert relationship_confidence(0.8, "ingredient", False) < 0.8


def test_the_offline_extractor_scores_its_own_memories() -> None:
    messages = conversation(
        ("patient", "I stopped taking the metformin last week."),
        ("provider", "Any headaches?"),
        ("patient", "Yes."),
        ("patient", "I think I maybe have some dizziness."),
    )
    memories = accept(OfflineExtractor().candidates(messages, []), messages, "offline", "1")
    by_subject = {m.subject: m.confidence for m in memories}
    assert by_subject["metformin"] > by_subject["headache"]
    assert by_subject["dizziness"] < by_subject["metformin"]
