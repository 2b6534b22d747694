"""The offline extractor on how people word things: stems, wh-answers, the record's own
names, clauses without full stops, and a yes that only acknowledges the clinician's advice."""

from engine.memories.context import assertions
from engine.memories.cues import Polarity, polarity
from engine.memories.entities import condition_views, record_phrases
from engine.memories.lexicon import load_lexicon
from engine.memories.mentions import SYMPTOMISH, find_mentions, find_parts
from engine.memories.relate import relate
from engine.memories.text import PhraseIndex, tokenize
from engine.models import MemoryType, RelationshipType
from tests.unit.test_memories_answers import of_type, run
from tests.unit.test_memories_builders import condition, medication

BACK = condition("condition:snomed:161891005", "Chronic back pain", ref="Condition/back")
KNEE = condition(
    "condition:text:knee-oa",
    "Osteoarthritis of knee, status post total knee replacement last year",
    ref="Condition/knee",
)
AFIB = condition("condition:snomed:49436004", "Atrial fibrillation", ref="Condition/af")
IBUPROFEN = medication("medication:rxnorm:5640", "Ibuprofen 200 mg oral tablet")


def test_a_derived_word_finds_its_symptom_by_its_stem() -> None:
    index = PhraseIndex([("palpitations", "palpitations"), ("prostatitis", "p")], stems=True)
    found = index.find(tokenize("i find myself palpitating a lot"))
    assert [value for _, _, value in found] == ["palpitations"]
    assert index.find(tokenize("my prostate is enlarged")) == []  # not a derived form
    assert PhraseIndex([("palpitations", "p")]).find(tokenize("palpitating")) == []


def test_a_verb_form_before_to_is_an_action_not_a_symptom() -> None:
    index = PhraseIndex([("forgetfulness", "forgetfulness")], stems=True)
    assert index.find(tokenize("i keep forgetting to take it")) == []
    assert len(index.find(tokenize("i keep forgetting things"))) == 1


def test_a_derived_symptom_word_is_named_plainly() -> None:
    memories = run(("patient", "i find myself palpitating a lot when i walk ."), facts=(AFIB,))
    [palpitations] = of_type(memories, MemoryType.SYMPTOM)
    assert palpitations.subject == "palpitations"


def test_an_answer_to_how_the_symptom_is_is_about_it_with_the_part_named_before() -> None:
    memories = run(
        ("provider", "okay , so you're in for a follow up for your back pain ."),
        ("patient", "yessir ."),
        ("provider", "how's your pain now ?"),
        ("patient", "manageable , i guess ."),
        facts=(BACK,),
    )
    [pain] = of_type(memories, MemoryType.SYMPTOM)
    assert pain.subject == "back pain" and pain.attributes["present"] is True
    assert {e.quote for e in pain.evidence} == {"manageable , i guess .", "how's your pain now ?"}
    [edge] = relate([pain], [BACK])
    assert edge.type is RelationshipType.ENRICHES


def test_a_wh_answer_that_names_its_own_subject_is_read_as_a_statement() -> None:
    memories = run(
        ("provider", "how's the pain in your back ?"),
        ("patient", "it's mostly the headaches now ."),
        facts=(BACK,),
    )
    assert [m.subject for m in of_type(memories, MemoryType.SYMPTOM)] == ["headache"]


def test_the_record_names_what_the_conversation_calls_a_condition() -> None:
    phrases = {p for p, _ in record_phrases(condition_views([KNEE, BACK]))}
    assert {"knee replacement", "total knee replacement"} <= phrases
    assert not any("year" in p for p in phrases)
    memories = run(
        (
            "provider",
            "how are you doing in terms of your knee replacement . i know you had that done "
            "last year . that's going okay ?",
        ),
        ("patient", "mm , it seems okay . yeah ."),
        facts=(KNEE,),
    )
    [knee] = of_type(memories, MemoryType.SYMPTOM)
    assert knee.subject == "knee replacement" and knee.attributes["via"] == "topic"


def test_a_yes_to_the_clinicians_advice_or_explanation_is_no_memory() -> None:
    advice = run(
        (
            "provider",
            "try not to take any ibuprofen and try to cut down on any alcohol intake , okay ?",
        ),
        ("patient", "yup , yup ."),
        facts=(IBUPROFEN,),
    )
    assert advice == []
    explained = run(
        (
            "provider",
            "so the abdominal x-rays show a possible kidney stone , okay ?",
        ),
        ("patient", "okay ."),
        facts=(condition("condition:text:kidney-stone", "Kidney stone"),),
    )
    assert explained == []
    asked = run(
        ("provider", "are you taking the ibuprofen ?"),
        ("patient", "yup ."),
        facts=(IBUPROFEN,),
    )
    assert [m.subject for m in asked] == ["ibuprofen"]


def _flags(text: str, *targets: str) -> list[tuple[bool, bool]]:
    spans = [(text.index(t), text.index(t) + len(t)) for t in targets]
    return [(a.negated, a.hypothetical) for a in assertions(text, spans)]


def test_without_full_stops_a_new_clause_ends_a_negation_or_a_hypothetical() -> None:
    said = "no fever some chills and i just ca n't eat and i do feel a little nauseous"
    assert _flags(said, "fever", "chills", "nauseous") == [
        (True, False),
        (False, False),
        (False, False),
    ]
    assert _flags("i do n't have any chest pain or cough", "chest pain", "cough") == [
        (True, False),
        (True, False),
    ]
    habit = "not if i'm on my feet for a long time i'll notice a little swelling"
    assert _flags(habit, "swelling") == [(False, False)]
    even = "even if i'm just walking up my driveway i find myself short of breath"
    assert _flags(even, "short of breath") == [(False, False)]
    assert _flags("if i get chest pain i will call you", "chest pain") == [(False, True)]


def test_what_was_had_at_a_time_named_by_it_is_the_past() -> None:
    then = "i'm feeling the same pain that i had when i had kidney stones"
    [stones] = assertions(then, [(then.index("kidney"), len(then))])
    assert stones.historical
    since = "ever since i had the surgery my knee has been swelling"
    [now] = assertions(since, [(since.index("knee"), len(since))])
    assert not now.historical


def test_a_question_run_on_after_a_history_asks_of_now() -> None:
    said = "you've got a history of diabetes and how are you doing with your blood sugars"
    spans = [(said.index(t), said.index(t) + len(t)) for t in ("diabetes", "blood sugars")]
    assert [a.historical for a in assertions(said, spans)] == [True, False]
    # "what" opens a clause too: these rashes are had, not denied
    rashes = "i do n't know what else could have given me these rashes"
    assert _flags(rashes, "rashes") == [(False, False)]


def test_what_is_there_instead_ends_a_negation() -> None:
    assert _flags("no weakness , just the weird numbing", "weakness", "numbing") == [
        (True, False),
        (False, False),
    ]
    lingering = "i have n't noticed any shortness of breath it just seems to be a dry cough"
    assert _flags(lingering, "shortness of breath", "dry cough") == [(True, False), (False, False)]


def test_a_bare_complaint_takes_the_body_part_the_conversation_named_last() -> None:
    reconstruction = condition(
        "condition:text:knee-reconstruction",
        "Right knee ligament injury, status post reconstruction",
        status="resolved",
        ref="Condition/knee",
    )
    turns = [("patient", "i twisted my right knee skiing .")]
    turns += [("provider", "are you back on your skis ?"), ("patient", "no , not yet .")] * 12
    turns += [
        ("provider", "have you noticed any swelling ?"),
        ("patient", "yeah , i get a lot of swelling ."),
    ]
    memories = run(*turns, facts=(reconstruction,))
    [swelling] = [m for m in of_type(memories, MemoryType.SYMPTOM) if "swelling" in m.subject]
    assert swelling.subject == "knee swelling"
    [edge] = relate([swelling], [reconstruction])
    assert edge.type is RelationshipType.CONFLICTS  # ongoing symptoms of a resolved condition


def test_an_answer_echoing_the_questions_verb_is_a_yes_or_a_no() -> None:
    assert polarity("i think it is .") is Polarity.YES
    assert polarity("they do , yeah .") is Polarity.YES
    assert polarity("it does n't really help .") is Polarity.NO
    assert polarity("it is what it is .") is Polarity.NONE
    gabapentin = medication("medication:rxnorm:25480", "Gabapentin 300 mg oral capsule")
    memories = run(
        ("provider", "we've been giving you the gabapentin for that . is that helping the pain ?"),
        ("patient", "i think it is ."),
        facts=(gabapentin, BACK),
    )
    [taking] = of_type(memories, MemoryType.ADHERENCE)
    assert taking.subject == "gabapentin" and taking.attributes["behavior"] == "as_prescribed"


def test_a_body_word_used_as_an_adverb_is_no_body_part() -> None:
    lex = load_lexicon()

    def parts(text: str) -> list[str]:
        return [part for _, _, part in find_parts(tokenize(text), lex)]

    assert parts("i was able to get back to the house but it was painful") == []
    assert parts("my back in the morning is stiff") == ["back"]
    assert parts("i have pain in my lower back") == ["lower back"]


def test_words_of_number_or_person_before_a_medicine_noun_are_not_its_kind() -> None:
    lex = load_lexicon()

    def medicines(text: str) -> list[str]:
        return [m.subject for m in find_mentions(text, lex) if m.kind == "mednoun"]

    assert medicines("you're taking three different medications") == ["medications"]
    assert medicines("i don't want to take anymore medications") == ["medications"]
    assert medicines("and he takes medication for it") == ["medication"]
    assert medicines("i ran out of my blood pressure pills") == ["blood pressure pills"]


def test_a_symptom_word_naming_a_service_or_device_is_no_symptom() -> None:
    lex = load_lexicon()

    def subjects(text: str) -> list[str]:
        return [m.subject for m in find_mentions(text, lex) if m.kind in SYMPTOMISH]

    assert subjects("have you been going to pain management ?") == []
    assert subjects("they sent me for a sleep study") == []
    assert subjects("my blood pressure cuff broke") == []
    assert subjects("he has to see a heart doctor once a year") == []
    assert subjects("i get a little tired during hay fever season") == ["fatigue"]
    assert subjects("the pain is worse at night") == ["pain"]
