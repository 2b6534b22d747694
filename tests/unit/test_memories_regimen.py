"""Explicit dose and frequency, as the patient says them and as the order has them."""

from engine.memories.regimen import dose_amounts, dose_differs, frequencies, frequency_differs
from engine.models import Evidence, Memory, MemoryType
from tests.unit.test_memories_builders import medication


def said(*quotes: str) -> Memory:
    evidence = tuple(
        Evidence(message_id=f"s1:{i}", quote=q, start=0, end=len(q))
        for i, q in enumerate(quotes, start=1)
    )
    return Memory(
        memory_id="m",
        session_id="s1",
        type=MemoryType.ADHERENCE,
        text=quotes[0],
        subject="x",
        evidence=evidence,
        speaker="patient",
        confidence=0.5,
        extractor="t",
        extractor_version="1",
    )


def test_doses_per_day_from_explicit_words_only() -> None:
    assert frequencies("twice a day") == {2}
    assert frequencies("three times a week") == {3 / 7}
    assert frequencies("every 6 hours") == {4}
    assert frequencies("with my breakfast and with my dinner") == {2}
    assert frequencies("i take it every day") == set()
    assert frequencies("i take one metformin a day") == {1}
    assert frequencies("i drink one cup of coffee a day") == set()


def test_a_spoken_dose_in_words_is_compared_with_the_order() -> None:
    norvasc = medication("medication:rxnorm:17767", "Norvasc 5 mg", dose="5 mg daily")
    assert dose_differs(said("it says you are on ten milligrams of norvasc daily"), norvasc)
    assert not dose_differs(said("i take five milligrams"), norvasc)


def test_a_concentration_is_a_lab_value_not_a_dose() -> None:
    norvasc = medication("medication:rxnorm:17767", "Norvasc 5 mg", dose="5 mg daily")
    lab = said("my triglycerides were 265 milligrams per deciliter and i take my norvasc")
    assert dose_amounts(lab.evidence[0].quote) == set()
    assert not dose_differs(lab, norvasc)
    assert dose_amounts("i take 20 mg a day") == {20.0}


def test_the_provider_question_does_not_count_as_what_the_patient_takes() -> None:
    twice = medication("medication:rxnorm:6809", "Metformin 500 mg", dose="500 mg twice daily")
    asked = said("are you taking it once a day ?", "yes")
    assert not frequency_differs(asked, twice)
    assert frequency_differs(said("i only take it once a day"), twice)


def test_a_frequency_corrected_in_the_same_breath_is_the_one_confirmed() -> None:
    twice = medication("medication:rxnorm:6809", "Metformin 500 mg", dose="500 mg twice daily")
    corrected = said(
        "are you still taking the five hundred milligrams once a day no actually it looks"
        " like we increased your metformin to five hundred milligrams twice a day",
        "yes",
    )
    assert frequencies(corrected.evidence[0].quote) == {1, 2}
    assert not frequency_differs(corrected, twice)


def test_an_as_needed_order_has_no_frequency_to_contradict() -> None:
    prn = medication(
        "medication:rxnorm:1", "Albuterol inhaler", dose="2 puffs every 4 hours as needed"
    )
    assert not frequency_differs(said("i use it twice a day"), prn)
