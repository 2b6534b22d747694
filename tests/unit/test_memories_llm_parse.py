"""Reading chat-model answers as models really write them (no I/O)."""

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from engine.memories.llm_parse import read_answer, to_candidates
from engine.memories.llm_quotes import find_span, locate, pinned_quotes
from engine.memories.verify import accept
from engine.models import Memory, Message
from tests.unit.test_memories_builders import conversation

TURNS = conversation(
    ("provider", "How have you been doing with the metformin?"),
    (
        "patient",
        "Honestly I stopped taking the metformin about two weeks ago, it upset my stomach.",
    ),
    ("provider", "Any headaches?"),
    ("patient", "Yes."),
    ("patient", "I\u2019m worried this could be  my kidneys."),
    ("caregiver", "Please text me rather than call, I work nights."),
)

ADHERENCE = {
    "type": "adherence",
    "subject": "metformin",
    "text": "Stopped metformin two weeks ago because of stomach upset.",
    "quotes": [{"message": 2, "quote": "I stopped taking the metformin about two weeks ago"}],
    "attributes": {"behavior": "stopped", "reason": "stomach upset"},
    "confidence": 0.9,
}
HEADACHE = {
    "type": "symptom",
    "subject": "headache",
    "text": "Has headaches.",
    "quotes": [{"message": 4, "quote": "Yes."}, {"message": 3, "quote": "Any headaches?"}],
    "confidence": 0.7,
}
TEXTING = {
    "type": "preference",
    "subject": "communication",
    "text": "Prefers text messages.",
    "quotes": [{"message": 6, "quote": "text me rather than call"}],
}


def read(answer: str, messages: list[Message] = TURNS) -> list[Memory]:
    """The memories an answer yields after the shared checks."""
    items = read_answer(answer).items
    return accept(to_candidates(items, messages), messages, "llm-chat", "test")


def summary(memories: list[Memory]) -> list[tuple[str, str, list[str]]]:
    return [(m.type.value, m.subject, [e.quote for e in m.evidence]) for m in memories]


STOPPED = ("adherence", "metformin", ["I stopped taking the metformin about two weeks ago"])
HEADACHES = ("symptom", "headache", ["Any headaches?", "Yes."])
TEXTS = ("preference", "communication", ["text me rather than call"])


# -- wrappers ----------------------------------------------------------------------------


def test_fenced_json_with_prose_around_it() -> None:
    body = json.dumps({"memories": [ADHERENCE, HEADACHE]}, indent=2)
    answer = f"Sure! Here are the memories:\n```json\n{body}\n```\nLet me know if..."
    assert summary(read(answer)) == [STOPPED, HEADACHES]


def test_trailing_commas_single_quotes_and_python_literals() -> None:
    answer = """{"memories": [
      {'type': 'preference', 'subject': 'communication', 'text': 'texts',
       "quotes": [{"message": 6, "quote": "text me rather than call",},],
       "attributes": {"detail": None, "urgent": False},},
    ],}"""
    [memory] = read(answer)
    assert summary([memory]) == [TEXTS]
    assert memory.attributes == {"detail": None, "urgent": False, "details": []}


def test_a_bare_list_where_an_object_was_asked() -> None:
    assert summary(read(json.dumps([ADHERENCE, TEXTING]))) == [STOPPED, TEXTS]


def test_memories_nested_grouped_by_type_or_missing() -> None:
    nested = {"result": {"memories": [TEXTING]}}
    grouped = {"memories": {"symptoms": [{k: v for k, v in HEADACHE.items() if k != "type"}]}}
    single = ADHERENCE
    assert summary(read(json.dumps(nested))) == [TEXTS]
    assert summary(read(json.dumps(grouped))) == [HEADACHES]
    assert summary(read(json.dumps(single))) == [STOPPED]


def test_drafts_in_a_thinking_block_are_not_the_answer() -> None:
    draft = json.dumps([{**TEXTING, "type": "concern", "subject": "texting"}])
    answer = f"<think>Maybe {draft}? No, that is a preference.</think>\n{json.dumps([TEXTING])}"
    assert summary(read(answer)) == [TEXTS]


def test_one_json_object_per_line_is_read_whole() -> None:
    lines = "\n".join(json.dumps(item) for item in (ADHERENCE, HEADACHE, TEXTING))
    assert summary(read(lines)) == [STOPPED, HEADACHES, TEXTS]


def test_an_item_broken_by_an_unescaped_quote_spares_its_neighbours() -> None:
    broken = '{"type": "concern", "subject": "kidneys", "text": "said "kidneys"", "quotes": []}'
    answer = f'{{"memories": [{json.dumps(ADHERENCE)}, {broken}, {json.dumps(TEXTING)}]}}'
    assert summary(read(answer)) == [STOPPED, TEXTS]


def test_truncated_mid_item_keeps_every_whole_item() -> None:
    body = json.dumps({"memories": [ADHERENCE, TEXTING, HEADACHE]})
    cut = body[: body.index('"Any headaches?"') + 5]
    answer = read_answer("```json\n" + cut)
    assert answer.truncated and answer.found_json
    assert [i["subject"] for i in answer.items] == ["metformin", "communication"]
    assert summary(read(cut)) == [STOPPED, TEXTS]


def test_no_json_at_all_is_told_apart_from_no_memories() -> None:
    assert not read_answer("I could not find any memories in [1] or [2].").found_json
    assert read_answer('```json\n{"memories": []}\n```').found_json
    assert read_answer("[]").found_json
    assert read_answer("").items == []


def test_runaway_nesting_is_skipped_and_what_follows_still_read() -> None:
    answer = "[" * 50_000 + "{" + json.dumps([TEXTING])
    assert summary(read(answer)) == [TEXTS]


def test_code_is_never_run() -> None:
    answer = '{"memories": [__import__("os").system("false")]} {"memories": [1, "x", null]}'
    result = read_answer(answer)
    assert result.items == [] and result.found_json


# -- wrong field types -------------------------------------------------------------------


def test_fields_of_the_wrong_type_are_coerced_or_dropped() -> None:
    item = {
        "type": " Adherence ",
        "subject": ["Metformin", "glucophage"],
        "quotes": ["[2] I stopped taking the metformin", {"msg": "message 2", "text": "it upset"}],
        "attributes": "stopped",
        "behavior": "Stopped it",
        "confidence": "85%",
    }
    [memory] = read(json.dumps({"memories": [item]}))
    assert (memory.type.value, memory.subject, memory.confidence) == (
        "adherence",
        "metformin",
        0.85,
    )
    assert [e.quote for e in memory.evidence] == ["I stopped taking the metformin", "it upset"]
    assert memory.attributes["behavior"] == "stopped"
    assert memory.attributes["drugs"] == ["metformin"]
    assert memory.text == "I stopped taking the metformin … it upset"


def test_confidence_words_and_out_of_range_numbers() -> None:
    items = [
        {**TEXTING, "confidence": c, "subject": s}
        for c, s in [("high", "a"), (7, "b"), (-1, "c"), (True, "d"), ("n/a", "e")]
    ]
    candidates = to_candidates(read_answer(json.dumps(items)).items, TURNS)
    assert [c.confidence for c in candidates] == [0.9, 0.07, 0.0, 0.5, 0.5]


def test_items_without_subject_or_quotes_are_skipped() -> None:
    items = [{**TEXTING, "subject": ""}, {**TEXTING, "quotes": []}, {**TEXTING, "quotes": [" "]}]
    assert to_candidates(read_answer(json.dumps(items)).items, TURNS) == []


def test_symptom_attributes_take_the_shape_relate_reads() -> None:
    gone = {**HEADACHE, "attributes": {"present": "false", "frequency": "daily"}}
    gone["quotes"] = [{"message": 2, "quote": "about two weeks ago"}]
    [candidate] = to_candidates([gone], TURNS)
    assert candidate.attributes["present"] is False
    assert candidate.attributes["details"] == ["frequency"]


# -- quotes ------------------------------------------------------------------------------


def test_a_hallucinated_quote_is_rejected_with_its_memory() -> None:
    invented = {**ADHERENCE, "quotes": [{"message": 2, "quote": "I quit metformin"}]}
    assert summary(read(json.dumps([invented, TEXTING]))) == [TEXTS]


def test_a_type_outside_the_four_is_refused() -> None:
    family = {**TEXTING, "type": "family_history", "subject": "diabetes"}
    assert summary(read(json.dumps([family, TEXTING]))) == [TEXTS]


def test_a_type_named_in_other_words_is_one_of_the_four() -> None:
    said = {**ADHERENCE, "type": "Medication_Adherence"}
    grouped = {"patient_preferences": [{k: v for k, v in TEXTING.items() if k != "type"}]}
    assert summary(read(json.dumps([said]))) == [STOPPED]
    assert summary(read(json.dumps(grouped))) == [TEXTS]


def test_a_provider_only_quote_is_refused() -> None:
    plan = {**HEADACHE, "quotes": [{"message": 3, "quote": "Any headaches?"}]}
    assert read(json.dumps([plan])) == []


def test_a_wrong_message_number_is_fixed_when_one_message_holds_the_quote() -> None:
    moved = {**TEXTING, "quotes": [{"message": 2, "quote": "text me rather than call"}]}
    [memory] = read(json.dumps([moved]))
    assert memory.evidence[0].message_id == TURNS[5].message_id


def test_an_ambiguous_quote_under_a_wrong_number_is_refused() -> None:
    turns = conversation(
        ("patient", "Yes, daily."), ("provider", "Ok."), ("patient", "Yes, daily.")
    )
    quote = locate(2, "Yes, daily.", turns)
    assert quote.message_id == turns[1].message_id and quote.start is None
    assert locate(9, "Yes", turns).message_id == "unknown:9"


def test_a_quote_held_by_several_messages_is_pinned_to_the_one_next_to_its_number() -> None:
    turns = conversation(
        ("patient", "Yes."), ("provider", "Daily?"), ("patient", "Yes."), ("provider", "Ok.")
    )
    assert locate(4, "yes.", turns).message_id == turns[2].message_id
    assert locate(6, "yes.", turns).message_id == "unknown:6"


def test_a_question_and_its_answer_quoted_as_one_are_two_quotes() -> None:
    turns = conversation(
        ("provider", "Ok."), ("provider", "Any chest pain?"), ("patient", "No, none at all.")
    )
    joined = pinned_quotes(3, "Any chest pain? No, none at all.", turns)
    assert [(q.message_id, q.quote) for q in joined] == [
        (turns[1].message_id, "Any chest pain?"),
        (turns[2].message_id, "No, none at all."),
    ]
    [refused] = pinned_quotes(3, "Any chest pain? Yes, a lot.", turns)
    assert refused.start is None


def test_case_spacing_and_curly_quotes_are_pinned_to_the_message_text() -> None:
    item = {
        "type": "concern",
        "subject": "kidney damage",
        "text": "Worried about kidneys.",
        "quotes": [{"message": 5, "quote": '"i\'m worried this could be my kidneys..."'}],
    }
    [memory] = read(json.dumps([item]))
    assert memory.evidence[0].quote == "I\u2019m worried this could be  my kidneys"
    assert find_span("abc", "") is None and find_span("abc", "...") is None


def test_a_quote_undoing_the_transcripts_tokenisation_is_pinned_to_the_message_text() -> None:
    text = "well , i do n't take it daily , doctor ."
    assert span_of(text, "I don't take it daily, doctor.") == "i do n't take it daily , doctor"


def test_the_speaker_label_the_prompt_shows_is_no_part_of_a_quote() -> None:
    text = "I stopped it last month."
    assert span_of(text, "[4] patient: I stopped it last month.") == text
    assert span_of(text, 'Patient: "I stopped it"') == "I stopped it"


def test_fillers_and_words_said_twice_may_be_left_out_of_a_quote() -> None:
    text = "um , i i think it it's , uh , getting better"
    assert span_of(text, "I think it's getting better") == "i think it it's , uh , getting better"


def test_speech_reading_neither_drops_a_word_nor_cuts_one() -> None:
    assert find_span("i do n't take it", "I take it") is None
    assert find_span("no , i stopped it", "i stop it") is None
    assert find_span("my eyes .", "yes.") is None
    # offsets are the message's own, even where lower case is longer ("İ" → "i̇")
    assert span_of("İstanbul , i do n't feel well", "I don't feel well") == "i do n't feel well"


def test_a_quote_shortened_with_an_ellipsis_spans_the_text_between_its_parts() -> None:
    text = "i felt a sharp pain in my chest , it lasted all night"
    assert span_of(text, "I felt a sharp pain ... it lasted all night") == text
    assert find_span(text, "it lasted all night ... i felt a sharp pain") is None


def span_of(text: str, quote: str) -> str | None:
    span = find_span(text, quote)
    return text[span[0] : span[1]] if span else None


# -- properties --------------------------------------------------------------------------

_ITEM = st.fixed_dictionaries(
    {
        "type": st.sampled_from(["symptom", "adherence", "concern", "preference"]),
        "subject": st.text(st.characters(exclude_categories=["Cs"]), min_size=1),
        "quotes": st.lists(
            st.fixed_dictionaries(
                {
                    "message": st.integers(1, 9),
                    "quote": st.text(st.characters(exclude_categories=["Cs"])),
                }
            ),
            max_size=2,
        ),
        "confidence": st.floats(0, 1),
    }
)


@given(st.lists(_ITEM, max_size=4), st.data())
def test_any_cut_keeps_exactly_the_items_that_ended_before_it(
    items: list[dict[str, Any]], data: st.DataObject
) -> None:
    head = '{"memories": ['
    pieces = [json.dumps(item) for item in items]
    ends = [
        len(head) + sum(len(p) + 2 for p in pieces[:i]) + len(pieces[i]) for i in range(len(items))
    ]
    body = head + ", ".join(pieces) + "]}"
    cut = data.draw(st.integers(0, len(body)))
    answer = read_answer(body[:cut])
    assert answer.items == [item for item, end in zip(items, ends, strict=True) if end <= cut]
    assert answer.truncated == (0 < cut < len(body))


@given(st.text())
def test_any_text_reads_without_error(text: str) -> None:
    answer = read_answer(text)
    assert all(isinstance(item, dict) for item in answer.items)
