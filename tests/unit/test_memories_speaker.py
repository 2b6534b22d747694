"""The offline extractor on whose words a statement carries: a clinician's diagnosis or
the record repeated by the patient, a wish, and the patient's own questions."""

from engine.memories.context import assertions
from engine.memories.cues import Polarity, asks_itself, polarity
from engine.memories.lexicon import load_lexicon
from engine.memories.mentions import find_mentions
from engine.memories.regimen import dose_amounts, frequencies
from engine.memories.relate import relate
from engine.models import MemoryType, RelationshipType
from tests.unit.test_memories_answers import of_type, run
from tests.unit.test_memories_builders import condition, medication

STONE = condition("condition:text:kidney-stone", "Kidney stone, right", ref="Condition/stone")
BACK = condition("condition:snomed:161891005", "Chronic back pain", ref="Condition/back")
LUPUS = condition("condition:snomed:55464009", "Systemic lupus erythematosus", ref="Condition/sle")
ANAPHYLAXIS = condition("condition:text:anaphylaxis", "History of anaphylaxis", ref="Condition/a")
OBESITY = condition("condition:snomed:414916001", "Obesity", ref="Condition/obesity")


def test_a_diagnosis_a_clinician_gave_is_not_the_patients_symptom() -> None:
    memories = run(
        ("provider", "so tell me what happened ."),
        ("patient", "i saw my doctor and he ordered a cat scan and said that i had a kidney stone"),
        ("provider", "what did they think ?"),
        ("patient", "they were concerned that i might have another kidney stone ."),
        facts=(STONE,),
    )
    assert of_type(memories, MemoryType.SYMPTOM) == []


def test_a_recorded_diagnosis_a_clinician_named_is_not_the_patients_symptom() -> None:
    ddd = condition("condition:text:ddd", "Degenerative disc disease", ref="Condition/ddd")
    said = ("patient", "the p t said i have degenerative disc disease .")
    memories = run(("provider", "what did they find ?"), said, facts=(ddd,))
    assert of_type(memories, MemoryType.SYMPTOM) == []
    diagnosed = ("patient", "well , in november she was diagnosed with degenerative disc disease .")
    assert (
        of_type(run(("provider", "what happened ?"), diagnosed, facts=(ddd,)), MemoryType.SYMPTOM)
        == []
    )
    # not on record, it is news the patient brings
    [news] = of_type(run(("provider", "what did they find ?"), said), MemoryType.SYMPTOM)
    assert news.subject == "degenerative disc disease"


def test_the_records_diagnoses_listed_are_no_symptoms() -> None:
    lipids = condition("condition:snomed:55822004", "Hyperlipidemia", ref="Condition/lipids")
    reflux = condition("condition:snomed:235595009", "Gastroesophageal reflux disease")
    facts = (lipids, reflux)
    listed = "um , i have a lot going on , high cholesterol , acid reflux , and all that ."
    assert (
        of_type(
            run(("provider", "why is that ?"), ("patient", listed), facts=facts), MemoryType.SYMPTOM
        )
        == []
    )
    # how one of them is going is the patient's own
    said = "my acid reflux has been worse , and i have high cholesterol ."
    memories = run(("provider", "why is that ?"), ("patient", said), facts=facts)
    assert "acid reflux" in {m.subject for m in of_type(memories, MemoryType.SYMPTOM)}


def test_what_a_recorded_drug_is_taken_for_is_no_symptom() -> None:
    afib = condition("condition:snomed:49436004", "Atrial fibrillation", ref="Condition/afib")
    asked = ("provider", "so , is he taking any medicines currently ?")
    said = ("patient", "he is taking coumadin for his atrial fibrillation .")
    assert of_type(run(asked, said, facts=(afib,)), MemoryType.SYMPTOM) == []
    acting_up = ("patient", "his atrial fibrillation has been acting up lately .")
    assert of_type(run(asked, acting_up, facts=(afib,)), MemoryType.SYMPTOM) != []


def test_what_the_patient_feared_it_was_is_no_symptom() -> None:
    memories = run(
        ("provider", "what happened on saturday ?"),
        ("patient", "i was short of breath . i thought i was having a heart attack ."),
    )
    assert [m.subject for m in of_type(memories, MemoryType.SYMPTOM)] == ["shortness of breath"]


def test_the_patients_own_guess_at_a_diagnosis_is_a_concern_and_a_clinicians_is_not() -> None:
    asked = ("provider", "what brings you in today ?")
    [guess] = of_type(run(asked, ("patient", "I think I have diabetes.")), MemoryType.CONCERN)
    assert guess.subject == "diabetes"
    theirs = ("patient", "they thought it might be arthritis in my knee .")
    assert of_type(run(asked, theirs), MemoryType.CONCERN) == []
    # a hedged account of what happened is no guess at a diagnosis
    told = ("patient", "i think i had a seizure and then i passed out .")
    assert of_type(run(asked, told), MemoryType.CONCERN) == []


def test_what_the_patient_feels_stays_theirs_when_a_clinician_explains_it() -> None:
    memories = run(
        ("provider", "tell me more about the back pain ."),
        ("patient", "they've said , the back pain is age-related ."),
        facts=(BACK,),
    )
    [pain] = of_type(memories, MemoryType.SYMPTOM)
    assert pain.subject == "back pain"


def test_a_history_said_or_confirmed_repeats_the_record() -> None:
    said = run(
        ("provider", "what seems to be the problem today ?"),
        ("patient", "well , i have a history of systemic lupus erythematosus ."),
        facts=(LUPUS,),
    )
    confirmed = run(
        ("provider", "looks like you've got a history of lupus , is that correct ?"),
        ("patient", "yes ."),
        facts=(LUPUS,),
    )
    on_file = run(
        ("provider", "okay . looks like you've got a history of anaphylaxis , is that correct ?"),
        ("patient", "yes ."),
        facts=(ANAPHYLAXIS,),
    )
    assert of_type(said, MemoryType.SYMPTOM) == of_type(confirmed, MemoryType.SYMPTOM) == []
    assert of_type(on_file, MemoryType.SYMPTOM) == []


def test_a_wish_is_not_a_report() -> None:
    [flag] = assertions("but i wish i had some weight loss .", [(22, 33)])
    assert flag.hypothetical
    memories = run(
        ("provider", "how is your appetite ?"),
        ("patient", "about the same , but i wish i had some weight loss ."),
        facts=(OBESITY,),
    )
    assert "weight loss" not in [m.subject for m in of_type(memories, MemoryType.SYMPTOM)]


def test_bearing_weight_is_no_weight_change() -> None:
    memories = run(
        ("provider", "can you walk on it ?"),
        ("patient", "it hurts quite a bit to stand but i am able to put weight on it ."),
    )
    assert "weight" not in " ".join(m.subject for m in memories)
    gained = run(("patient", "i have gained weight since the winter ."), facts=(OBESITY,))
    assert [m.subject for m in of_type(gained, MemoryType.SYMPTOM)] == ["weight gain"]


def test_a_bare_answer_is_covered_by_the_kind_the_reply_names() -> None:
    memories = run(
        ("provider", "are you having any pain with swallowing food ?"),
        ("patient", "yes , i get some chest pain , but i'd say it's pretty mild ."),
    )
    assert [m.subject for m in of_type(memories, MemoryType.SYMPTOM)] == ["chest pain"]


def test_a_question_is_known_without_its_mark_and_an_echo_is_none() -> None:
    assert asks_itself("is that related to my diabetes")
    assert asks_itself("when can i play basketball again")
    assert asks_itself("yeah do i have to do the surgery")  # after a reply to the provider
    assert asks_itself("yeah like how long do you think it's gon na take for me to heal")
    assert not asks_itself("i think it is related to my diabetes")
    assert not asks_itself("the one on my left wrist ?")
    assert not asks_itself("like fever or chills ?")
    # said rising, a statement is still one; a question word opens a question's clause
    assert not asks_itself("i would- i tend to lie on my right side and that helped a bit ?")
    assert not asks_itself("my mother died about three or maybe it is four years ago ?")
    assert asks_itself("i was wondering , is it bad ?")
    assert asks_itself("doc what are you going to diagnose me as ?")
    assert asks_itself("this is the same procedure he had before , right ?")


def test_asking_what_can_be_done_is_a_concern_not_a_request() -> None:
    memories = run(
        ("provider", "this shows the kidney stone has not moved ."),
        ("patient", "what can we do about the kidney stone ?"),
        facts=(STONE,),
    )
    assert [m.type for m in memories] == [MemoryType.CONCERN]


def test_a_question_naming_no_complaint_is_about_the_care_it_names() -> None:
    asked = ("provider", "we'll do the procedure next week .")
    [care] = of_type(
        run(asked, ("patient", "will she be asleep for this procedure ?")), MemoryType.CONCERN
    )
    assert care.subject == "procedure"
    [plain] = of_type(run(asked, ("patient", "will i be able to drive ?")), MemoryType.CONCERN)
    assert plain.subject == "question"


def test_a_worry_about_something_is_a_concern_about_it_not_a_symptom() -> None:
    memories = run(
        ("provider", "and did you give him anything for the fever ?"),
        ("patient", "i was worried about giving him something on top of the benadryl ."),
    )
    assert [(m.type, m.subject) for m in memories if m.type is not MemoryType.ADHERENCE] == [
        (MemoryType.CONCERN, "diphenhydramine")
    ]


def test_drinking_as_nourishment_is_not_alcohol_use() -> None:
    lex = load_lexicon()
    for said in ("fortunately , he's eating and drinking well .", "i'm drinking plenty of water"):
        assert find_mentions(said, lex) == [], said
    [drinking] = find_mentions("i've been drinking a lot more since the move", lex)
    assert drinking.subject == "alcohol use"


def test_sleep_as_the_time_of_something_else_is_no_sleep_complaint() -> None:
    lex = load_lexicon()
    said = "sometimes when i am sleeping in the night , i feel this sharp pain"
    assert [m.subject for m in find_mentions(said, lex)] == ["pain"]
    assert [m.subject for m in find_mentions("i'm not sleeping well", lex)] == ["sleep"]


def test_falling_asleep_is_no_fall() -> None:
    lex = load_lexicon()
    assert find_mentions("i have been falling asleep at work .", lex) == []
    assert [m.subject for m in find_mentions("i keep falling down", lex)] == ["falls"]


def test_a_spoken_strength_is_compared_as_a_number() -> None:
    said = "ibuprofen eight hundred milligrams three times a day"
    assert dose_amounts(said) == dose_amounts("800 mg by mouth three times daily") == {800.0}
    assert frequencies(said) == {3.0} and frequencies("one time a day") == {1.0}
    assert frequencies("every six hours") == {4.0}


def test_a_wish_is_a_care_preference_only_when_it_names_the_care() -> None:
    surgery = run(
        ("provider", "so the options are a cast or surgery ."),
        ("patient", "okay , yes , i'd like to go forward with the surgery ."),
    )
    assert [(m.type, m.subject) for m in surgery] == [(MemoryType.PREFERENCE, "care")]
    staying = run(
        ("provider", "how are your sugars ?"),
        ("patient", "i wan na make sure i stay on top of that ."),
    )
    assert of_type(staying, MemoryType.PREFERENCE) == []


def test_not_right_now_declines_an_offer_but_not_a_question_about_how_the_patient_is() -> None:
    declined = run(
        ("provider", "and you do n't want that ?"),
        ("patient", "i mean , not right now ."),
    )
    assert [(m.type, m.subject) for m in declined] == [(MemoryType.PREFERENCE, "care")]
    for question in ("are you feeling suicidal right now ?", "are you working right now ?"):
        state = run(("provider", question), ("patient", "no , not right now ."))
        assert of_type(state, MemoryType.PREFERENCE) == []


def subjects(*texts: str) -> dict[str, list[str]]:
    """What each text mentions, by subject."""
    lex = load_lexicon()
    return {text: [m.subject for m in find_mentions(text, lex)] for text in texts}


def test_mechanical_joint_complaints_and_discomfort_are_body_complaints() -> None:
    found = subjects(
        "i had discomfort in both of my hands .",
        "the left knee just feels unstable",
        "i felt this popping in my elbow",
        "i popped in to see you",
    )
    assert found == {
        "i had discomfort in both of my hands .": ["hand discomfort"],
        "the left knee just feels unstable": ["knee instability"],
        "i felt this popping in my elbow": ["elbow popping"],
        "i popped in to see you": [],
    }


def test_a_stance_adverb_before_the_answer_keeps_its_polarity() -> None:
    assert polarity("Thankfully, no.") is Polarity.NO
    assert polarity("unfortunately , yes .") is Polarity.YES


def test_a_yes_while_the_clinician_presses_is_the_examination() -> None:
    memories = run(
        ("provider", "what brings you in today ?"),
        ("patient", "i am having a lot of pain at the end of my right middle finger ."),
        ("provider", "okay , so does it hurt when i push right here ?"),
        ("patient", "yes ."),
    )
    [pain] = of_type(memories, MemoryType.SYMPTOM)
    assert "yes ." not in {e.quote for e in pain.evidence}


def test_what_the_patient_cannot_do_is_the_vocabularys_difficulty() -> None:
    found = subjects(
        "i can't stand up .",
        "it's hard to run now",
        "it's hard to get around",
        "i could barely stand .",
        "she can barely move her arm .",
    )
    assert found == {
        "i can't stand up .": ["difficulty standing"],
        "it's hard to run now": ["difficulty running"],
        "it's hard to get around": [],
        "i could barely stand .": ["difficulty standing"],
        "she can barely move her arm .": [],  # weakness, not the paralysis of "can't move"
    }
    [own] = assertions("i can't sleep at night", [(2, 13)])
    assert not own.negated  # the mention's own "can't" is the complaint
    [denied] = assertions("i don't have any fever", [(17, 22)])
    assert denied.negated


def test_a_change_of_weight_said_in_its_amount_is_weight_loss_or_gain() -> None:
    found = subjects(
        "i've lost about eighteen pounds in the last month",
        "i lost 15 lbs",
        "even gained like twenty pounds in just a few months",
        "i want to lose ten pounds",
        "i lost my job and gained ten pounds",
    )
    assert found == {
        "i've lost about eighteen pounds in the last month": ["weight loss"],
        "i lost 15 lbs": ["weight loss"],
        "even gained like twenty pounds in just a few months": ["weight gain"],
        "i want to lose ten pounds": [],  # a goal, not a change
        "i lost my job and gained ten pounds": ["weight gain"],
    }


def test_a_loss_or_a_trouble_said_with_its_verb_is_the_vocabularys() -> None:
    found = subjects(
        "i have been losing a lot of hair recently .",
        "i feel like i've lost some of my hearing .",
        "i lost my sense of smell",
        "i've had some trouble with my balance",
        "i want to lose ten pounds of fat",
        "i lost my job",
    )
    assert found == {
        "i have been losing a lot of hair recently .": ["hair loss"],
        "i feel like i've lost some of my hearing .": ["hearing loss"],
        "i lost my sense of smell": ["loss of smell"],
        "i've had some trouble with my balance": ["balance problems"],
        "i want to lose ten pounds of fat": [],  # a goal
        "i lost my job": [],
    }


def test_pressure_is_a_sensation_at_a_part_not_blood_pressure_alone() -> None:
    found = subjects(
        "i have a lot of pressure in my ears",
        "i feel pressure in my sinuses",
        "there's a lot of pressure at school",
        "anytime i put any pressure on it , it hurts",
        "you were diagnosed with high blood pressure twenty years back ?",
    )
    assert found == {
        "i have a lot of pressure in my ears": ["ear pressure"],
        "i feel pressure in my sinuses": ["sinus pressure"],
        "there's a lot of pressure at school": [],
        "anytime i put any pressure on it , it hurts": ["pain"],
        "you were diagnosed with high blood pressure twenty years back ?": ["blood pressure"],
    }
    hypertension = condition("condition:snomed:59621000", "Essential hypertension")
    ears = run(
        ("provider", "anything else ?"),
        ("patient", "i have a lot of pressure in my ears"),
        facts=(hypertension,),
    )
    assert [m.subject for m in ears] == ["ear pressure"]
    assert relate(ears, [hypertension]) == []  # a pressure felt is no blood pressure


def test_a_prescription_the_patient_could_not_fill_is_never_started() -> None:
    cream = medication("medication:text:zostrix", "Zostrix (capsaicin) topical cream")
    memories = run(
        ("provider", "what did they do for you at that time ?"),
        (
            "patient",
            "they gave me a prescription for zostrix but i couldn't fill it because of my "
            "insurance .",
        ),
        facts=(cream,),
    )
    [taking] = of_type(memories, MemoryType.ADHERENCE)
    assert taking.attributes["behavior"] == "never_started"
    [edge] = relate([taking], [cream])
    assert edge.type is RelationshipType.CONFLICTS
    gave = run(("patient", "they gave me aspirin for it ."))
    assert of_type(gave, MemoryType.ADHERENCE) == []


def test_a_no_to_a_list_of_questions_denies_each_and_a_yes_only_the_last() -> None:
    heart = condition("condition:snomed:42343007", "Congestive heart failure", ref="Condition/hf")
    asked = ("provider", "okay . and how about any swelling in your legs ? fever , chills ?")
    [denied] = run(asked, ("patient", "uh , none of that ."), facts=(heart,))
    assert denied.subject == "leg swelling" and denied.attributes["present"] is False
    assert "and how about any swelling in your legs ?" in {e.quote for e in denied.evidence}
    confirmed = run(asked, ("patient", "yes ."), facts=(heart,))
    assert sorted(m.subject for m in confirmed) == ["chills", "fever"]
