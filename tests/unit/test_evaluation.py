"""GUIDELINE §4 scoring on a tiny hand-made case with known counts."""

import pytest

from api.evaluate import held_out
from engine.evaluation import (
    Gold,
    PredictedMemory,
    PredictedQuote,
    PredictedRelationship,
    locate,
    score_case,
)

TURNS = [
    "Are you taking the metformin?",  # 0 provider
    "Yes .",  # 1
    "My knees hurt when I climb stairs and I get dizzy .",  # 2
    "Yes .",  # 3
    "Could this be cancer ?",  # 4
]
GOLD = Gold.model_validate(
    {
        "memories": [
            {
                "id": "g1",
                "type": "adherence",
                "subject": "metformin",
                "aliases": ["glucophage"],
                "evidence": ["are you taking the metformin?", "yes ."],
            },
            {
                "id": "g2",
                "type": "symptom",
                "subject": "knee pain",
                "aliases": [],
                "evidence": ["my knees hurt when i climb stairs"],
            },
            {
                "id": "g3",
                "type": "symptom",
                "subject": "dizziness",
                "aliases": ["dizzy"],
                "evidence": ["i get dizzy"],
            },
            {
                "id": "g4",
                "type": "concern",
                "subject": "cancer",
                "evidence": ["could this be cancer"],
            },
        ],
        "edges": [
            {"memory": "g1", "fact": "MedicationRequest/met", "type": "corroborates"},
            {"memory": "g2", "fact": "Condition/oa", "type": "conflicts"},
        ],
    }
)


def pred(pid: str, kind: str, subject: str, *quotes: tuple[int, int, int]) -> PredictedMemory:
    return PredictedMemory(
        id=pid,
        type=kind,
        subject=subject,
        evidence=[PredictedQuote(turn=t, start=s, end=e) for t, s, e in quotes],
    )


def test_known_precision_and_recall() -> None:
    predicted = [
        pred("p1", "adherence", "metformin", (1, 0, 5)),  # matches g1 via the answer turn
        pred("p2", "symptom", "knee pain", (2, 0, 13)),  # matches g2
        pred("p3", "symptom", "knee", (2, 3, 8)),  # also g2: ignored, neither right nor wrong
        pred("p4", "symptom", "headache", (2, 40, 49)),  # overlaps g3 but wrong subject: FP
        pred("p5", "preference", "care", (4, 0, 10)),  # wrong type: FP
    ]
    rels = [
        PredictedRelationship(
            memory_id="p1", type="corroborates", fact_resources=["MedicationRequest/met"]
        ),  # correct
        PredictedRelationship(
            memory_id="p2", type="enriches", fact_resources=["Condition/oa"]
        ),  # wrong type
    ]
    scores = score_case(TURNS, GOLD, predicted, rels)
    overall = scores.overall
    assert (overall.tp, overall.fp, overall.fn) == (2, 2, 2)
    assert overall.precision == pytest.approx(0.5) and overall.recall == pytest.approx(0.5)
    assert (scores.memories["symptom"].tp, scores.memories["symptom"].fp) == (1, 1)
    assert scores.memories["concern"].fn == 1
    rel = scores.relationships
    assert (rel.tp, rel.fp, rel.fn) == (1, 1, 1)
    assert rel.f1 == pytest.approx(0.5)
    assert (scores.conflicts_found, scores.conflicts_total) == (0, 1)


def test_a_repeated_short_answer_is_pinned_to_the_turn_near_its_question() -> None:
    spans = locate(["are you taking the metformin?", "yes ."], TURNS)
    assert {t for t, _, _ in spans} == {0, 1}  # turn 3's "Yes ." is too far from turn 0


def test_scores_add_up_over_cases() -> None:
    one = score_case(TURNS, GOLD, [pred("p1", "adherence", "glucophage", (0, 0, 10))], [])
    total = one + one
    assert total.overall.tp == 2 and total.overall.fn == 6


def test_the_held_out_third_is_fixed_by_name_not_order() -> None:
    names = [f"case-{i}" for i in range(10)]
    held = held_out(names)
    assert len(held) == 4 and held <= set(names)
    assert held_out(list(reversed(names))) == held
    assert len(held_out([*names, "case-10", "case-11"])) == 4
