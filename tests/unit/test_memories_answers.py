"""The offline extractor reading replies against the provider turn they answer."""

from engine.memories.offline import OfflineExtractor
from engine.memories.relate import relate
from engine.memories.verify import accept
from engine.models import Fact, Memory, MemoryType, RelationshipType
from tests.unit.test_memories_builders import condition, conversation, medication

GOUT = condition("condition:snomed:90560007", "Gout", ref="Condition/gout")
FLARE = condition("condition:text:gout-flare", "Acute gout flare, right big toe", ref="Condition/f")
ARM = condition("condition:text:arm-pain", "Right arm pain", ref="Condition/arm")
HTN = condition("condition:snomed:38341003", "Hypertensive disorder", ref="Condition/htn")
T2DM = condition("condition:snomed:44054006", "Diabetes mellitus type 2", ref="Condition/dm")
THYROID = condition("condition:snomed:40930008", "Hypothyroidism", ref="Condition/thy")
METFORMIN = medication("medication:rxnorm:6809", "Metformin 1000 mg", dose="1000 mg twice daily")
PANTOPRAZOLE = medication("medication:rxnorm:40790", "Protonix 40 mg", dose="40 mg daily")
MUPIROCIN = medication("medication:rxnorm:42372", "Bactroban 2% ointment", dose="three times a day")
ARV = medication("medication:text:antiretroviral-therapy", "Antiretroviral therapy for HIV")


def run(*turns: tuple[str, str], facts: tuple[Fact, ...] = ()) -> list[Memory]:
    messages = conversation(*turns)
    return accept(OfflineExtractor().candidates(messages, list(facts)), messages, "offline", "1")


def of_type(memories: list[Memory], kind: MemoryType) -> list[Memory]:
    return [m for m in memories if m.type is kind]


# -- the condition the provider asked about --------------------------------------------


def test_a_status_reply_about_the_asked_condition_is_a_memory_about_it() -> None:
    facts = (GOUT, FLARE)
    memories = run(
        ("provider", "and then , in terms of your gout , um , how are you doing with that ?"),
        ("patient", "i'm doing well . the medication helped it , you know , go down and go away ."),
        facts=facts,
    )
    [gout] = of_type(memories, MemoryType.SYMPTOM)
    assert gout.subject == "gout"
    assert gout.attributes["present"] is False and gout.attributes["gone"] is True
    assert any("go away" in e.quote for e in gout.evidence)
    edges = {e.fact_key: e.type for e in relate([gout], list(facts))}
    # the flare is over; the disease itself is not: GUIDELINE §3 conflicts / enriches
    assert edges == {FLARE.fact_key: RelationshipType.CONFLICTS, GOUT.fact_key: "enriches"}


def test_they_are_okay_says_how_the_asked_condition_goes_after_a_follow_up() -> None:
    memories = run(
        ("provider", "how are you doing with your sugars are you watching your diet"),
        ("patient", "i'm trying to yeah i think they are okay"),
        facts=(T2DM,),
    )
    [sugars] = of_type(memories, MemoryType.SYMPTOM)
    assert sugars.subject == "sugars" and sugars.attributes["via"] == "topic"
    assert any("they are okay" in e.quote for e in sugars.evidence)


def test_a_topic_is_looked_up_before_a_question_that_only_asks_how_it_goes() -> None:
    memories = run(
        (
            "provider",
            "in terms of your high blood pressure , how are you doing with that ? "
            "i know we were struggling with it . how are you doing ?",
        ),
        ("patient", "i still have my good days and my bad days ."),
        facts=(HTN,),
    )
    [bp] = of_type(memories, MemoryType.SYMPTOM)
    assert bp.subject == "blood pressure" and bp.attributes["via"] == "topic"
    assert bp.attributes["present"] is True and "status" in bp.attributes["details"]
    assert {e.quote for e in bp.evidence} == {
        "how are you doing ?",
        "i still have my good days and my bad days .",
    }


def test_a_topic_is_found_across_three_interruptions_and_another_how_is_it_going() -> None:
    memories = run(
        ("provider", "now , i know that you've had the thyroid problem for a few years ."),
        ("patient", "mm-hmm ."),
        ("provider", "um , how are you doing with that ? i know that you told dr. gutierrez-"),
        ("patient", "mm ."),
        ("provider", ". about it a couple of weeks ago ."),
        ("patient", "yes ."),
        ("provider", "everything's okay ?"),
        ("patient", "so far , so good ."),
        facts=(THYROID,),
    )
    [thyroid] = of_type(memories, MemoryType.SYMPTOM)
    assert thyroid.attributes["via"] == "topic"
    assert {e.quote for e in thyroid.evidence} == {"everything's okay ?", "so far , so good ."}


def test_how_that_is_going_asks_of_the_condition_named_before_a_reply_naming_nothing() -> None:
    anxiety = condition("condition:text:gad", "Generalized anxiety disorder", ref="Condition/a")

    def anxiety_memories(reply: str) -> list[Memory]:
        memories = run(
            ("provider", "and in terms of your anxiety , i'm sure that this did n't help much-"),
            ("patient", reply),
            ("provider", "how are you doing with that ?"),
            ("patient", "i had my moments but it's been a little bit better ."),
            facts=(anxiety,),
        )
        return [m for m in memories if m.subject == "anxiety"]

    [memory] = anxiety_memories("did n't help , no , not at all .")
    assert memory.attributes["via"] == "topic"
    # a reply that names something is what "that" points back to
    assert anxiety_memories("no , and my knee has been hurting too .") == []


def test_what_the_patient_goes_on_to_say_after_an_acknowledgement_is_the_same_statement() -> None:
    back = condition("condition:text:back-pain", "Chronic back pain", ref="Condition/back")

    def back_pain_quotes(going_on: str) -> list[str]:
        memories = run(
            ("provider", "how is the back pain ?"),
            ("patient", "it still hurts ."),
            ("provider", "okay ."),
            ("patient", going_on),
            facts=(back,),
        )
        return [e.quote for m in memories if m.subject == "back pain" for e in m.evidence]

    for going_on in ("mostly in the morning .", "but it does come every now and then ."):
        assert back_pain_quotes(going_on)[-1] == going_on
    # a new subject, a body part, a question or a bare yes is not more of it
    for other in (
        "I get frequent urinary infections.",
        "They feel like sponges in my feet.",
        "is that normal ?",
        "yeah .",
    ):
        assert other not in back_pain_quotes(other)


def test_an_answer_about_what_the_patient_just_said_is_more_of_that_statement() -> None:
    def back_pain_quotes(question: str, answer: str) -> list[str]:
        memories = run(
            ("provider", "what brings you in ?"),
            ("patient", "my back has been hurting ."),
            ("provider", question),
            ("patient", answer),
        )
        return [e.quote for m in memories if m.subject == "back pain" for e in m.evidence]

    assert back_pain_quotes("when did that start ?", "about two weeks ago .")[-1] == (
        "about two weeks ago ."
    )
    assert {"is it getting worse ?", "yes ."} <= set(
        back_pain_quotes("is it getting worse ?", "yes .")
    )
    # what asks of something else, names a body part or asks for a record is no detail of it
    for question, answer in (
        ("do you have the report of that scan ?", "yes , right here ."),
        ("when did that start in your knee ?", "last week ."),
        ("do you have any other conditions that i should be aware of ?", "a few ."),
    ):
        assert answer not in back_pain_quotes(question, answer), question


def test_no_topic_from_the_providers_dictation_to_the_note() -> None:
    memories = run(
        (
            "provider",
            "so beverly is a 53 -year-old female with high blood pressure who presents for "
            "follow-up . how are you ?",
        ),
        ("patient", "i'm good today ."),
        facts=(HTN,),
    )
    assert of_type(memories, MemoryType.SYMPTOM) == []


def test_no_topic_when_the_provider_names_several_conditions_or_the_reply_is_about_a_drug() -> None:
    several = run(
        (
            "provider",
            "she has a history of diabetes , hypothyroidism and hypertension . how are you doing ?",
        ),
        ("patient", "i'm doing well ."),
        facts=(HTN, T2DM, THYROID),
    )
    assert of_type(several, MemoryType.SYMPTOM) == []
    about_drug = run(
        ("provider", "let's talk about your diabetes . how are you doing with that ?"),
        ("patient", "i've been pretty diligent about taking the metformin ."),
        facts=(T2DM, METFORMIN),
    )
    assert of_type(about_drug, MemoryType.SYMPTOM) == []


def test_a_bare_complaint_takes_the_body_part_the_provider_asked_about() -> None:
    memories = run(
        ("provider", "Good, so back to that right arm, how is that doing today?"),
        ("patient", "Well, that pain is basically gone now."),
        facts=(ARM,),
    )
    [arm] = of_type(memories, MemoryType.SYMPTOM)
    assert arm.subject == "arm pain" and arm.attributes["gone"] is True
    [edge] = relate([arm], [ARM])
    assert edge.type is RelationshipType.CONFLICTS


def test_a_reply_saying_only_where_answers_a_yes_or_no_question_about_a_complaint() -> None:
    [leg] = run(("provider", "Does the pain go anywhere?"), ("patient", "Down my left leg."))
    assert leg.subject == "leg pain" and leg.attributes["present"] is True
    # not a denial, a posture, or the clinician's words given to the patient
    for reply in (
        "On my body no not really.",
        "Laying on my side helps a little.",
        "okay and do you have a podiatrist for your yearly foot exams",
    ):
        asked = ("provider", "Have you noticed any rash anywhere else?")
        assert of_type(run(asked, ("patient", reply)), MemoryType.SYMPTOM) == [], reply


def test_a_no_answers_every_question_run_together_without_question_marks() -> None:
    stone = condition("condition:text:kidney-stone", "Kidney stone, right", ref="Condition/ks")
    memories = run(
        (
            "provider",
            "okay have you noticed any blood in your urine i know you've been straining"
            " has it been darker than usual",
        ),
        ("patient", "no not really not really darker"),
        facts=(stone,),
    )
    [blood] = of_type(memories, MemoryType.SYMPTOM)
    assert blood.subject == "blood in urine" and blood.attributes["present"] is False
    assert any("blood in your urine" in e.quote for e in blood.evidence)
    [edge] = relate([blood], [stone])
    assert edge.type is RelationshipType.ENRICHES


def test_a_yes_to_a_list_naming_a_complaint_of_its_own_is_that_complaint() -> None:
    memories = run(
        ("provider", "have you ever had symptoms like headaches , blurry vision , or weakness ?"),
        ("patient", "actually yes , i have migraines when i'm having my period ."),
    )
    assert [m.subject for m in memories] == ["migraines"]
    both = run(("provider", "any nausea or vomiting ?"), ("patient", "yes ."))
    assert [m.subject for m in both] == ["nausea", "vomiting"]


# -- medications -----------------------------------------------------------------------


def test_a_question_without_a_question_mark_is_answered() -> None:
    memories = run(
        (
            "provider",
            "okay alright and are you still taking the metformin we have you on a thousand "
            "milligrams twice a day",
        ),
        ("patient", "uh uh yes i do take it i take it with my breakfast and with my dinner"),
        facts=(METFORMIN,),
    )
    [metformin] = of_type(memories, MemoryType.ADHERENCE)
    assert metformin.subject == "metformin"
    assert metformin.attributes["behavior"] == "as_prescribed"
    [edge] = relate([metformin], [METFORMIN])
    assert edge.type is RelationshipType.CORROBORATES  # twice a day, as the order says


def test_a_question_pointing_back_asks_about_the_drug_just_named() -> None:
    memories = run(
        (
            "provider",
            "we have you on the protonix 40 milligrams a day . do you need a refill of that ?",
        ),
        ("patient", "actually , i do need a refill ."),
        facts=(PANTOPRAZOLE,),
    )
    [memory] = of_type(memories, MemoryType.ADHERENCE)
    assert memory.subject == "pantoprazole" and memory.attributes["behavior"] == "as_prescribed"


def test_those_medications_are_the_ones_the_patient_just_named() -> None:
    memories = run(
        (
            "patient",
            "I was taking antiretroviral medications for it. I stopped those medications "
            "around six or seven years ago.",
        ),
        facts=(ARV,),
    )
    [memory] = of_type(memories, MemoryType.ADHERENCE)
    assert memory.subject == "antiretroviral medications"
    assert memory.attributes["behavior"] == "stopped"
    [edge] = relate([memory], [ARV])
    assert edge.type is RelationshipType.CONFLICTS


def test_pills_unnamed_in_reply_to_what_is_taken_are_the_drug_just_talked_about() -> None:
    memories = run(
        ("provider", "are you taking any supplements such as iron ?"),
        ("patient", "i started taking my ferrous sulfate again ."),
        ("provider", "and what are you taking ?"),
        ("patient", "i'm taking 25 milligram tablets , twice daily ."),
    )
    [memory] = of_type(memories, MemoryType.ADHERENCE)
    assert memory.subject == "ferrous sulfate"
    assert any("25 milligram tablets" in e.quote for e in memory.evidence)


def test_no_to_taking_it_regularly_is_missed_doses_not_a_stop() -> None:
    memories = run(
        ("provider", "are you taking the metformin every day ?"),
        ("patient", "no , not really ."),
        facts=(METFORMIN,),
    )
    [memory] = of_type(memories, MemoryType.ADHERENCE)
    assert memory.attributes["behavior"] == "missed_doses"


def test_a_yes_to_an_offered_drug_is_a_choice_not_adherence() -> None:
    memories = run(
        ("provider", "would you like to try a different medication ?"),
        ("patient", "yes , let's try that ."),
    )
    assert [(m.type, m.subject) for m in memories] == [(MemoryType.PREFERENCE, "care")]


def test_an_offer_asked_before_the_last_question_is_answered_by_a_no() -> None:
    memories = run(
        (
            "provider",
            "we can give you some pain medication . how do you feel about that ? "
            "do you need some pain medication ?",
        ),
        ("patient", "no , i think physical therapy is the right way to start out on this ."),
    )
    assert [(m.type, m.subject) for m in memories] == [(MemoryType.PREFERENCE, "care")]


def test_a_reply_to_an_offer_that_takes_it_up_is_a_choice() -> None:
    offer = "you might have some trouble leading into the winter . how do you feel about that ?"
    memories = run(("provider", offer), ("patient", "well , i'll try something new just to help ."))
    assert [(m.type, m.subject) for m in memories] == [(MemoryType.PREFERENCE, "care")]
    # not every reply to an offer takes something up
    assert run(("provider", offer), ("patient", "well , it has been a hard year .")) == []


def test_an_offer_made_as_a_statement_is_answered_too() -> None:
    memories = run(
        ("provider", "we do n't need to start any medications , unless you feel differently ."),
        ("patient", "no , i feel the same way ."),
    )
    assert [(m.type, m.subject) for m in memories] == [(MemoryType.PREFERENCE, "care")]


def test_a_yes_to_taking_anything_for_a_complaint_is_about_the_treatment() -> None:
    memories = run(
        ("provider", "okay and are you taking anything for pain ?"),
        ("patient", "ah yes , i am taking lyrica ."),
    )
    assert [(m.type, m.subject) for m in memories] == [(MemoryType.ADHERENCE, "pregabalin")]


def test_not_yet_to_picking_up_a_prescription_is_never_started() -> None:
    memories = run(
        ("provider", "did you pick up the metformin ?"),
        ("patient", "not yet ."),
        facts=(METFORMIN,),
    )
    assert [(m.subject, m.attributes["behavior"]) for m in memories] == [
        ("metformin", "never_started")
    ]


def test_no_to_earlier_use_or_to_a_drug_never_prescribed_is_not_adherence() -> None:
    before = run(
        ("provider", "i saw that dr. brown put you on buspar . have you been on that before ?"),
        ("patient", "no , that's new ."),
    )
    never = run(
        ("provider", "and have you ever tried clindamycin topical for your acne ?"),
        ("patient", "no , i've never tried anything for it ."),
    )
    assert of_type(before, MemoryType.ADHERENCE) == of_type(never, MemoryType.ADHERENCE) == []


def test_a_short_yes_to_the_provider_stating_the_regimen_confirms_it() -> None:
    memories = run(
        ("provider", "And Bactroban ointment is also three times a day as needed for your bites."),
        ("patient", "Yep."),
        facts=(MUPIROCIN,),
    )
    [memory] = of_type(memories, MemoryType.ADHERENCE)
    assert memory.subject == "mupirocin" and memory.attributes["behavior"] == "as_prescribed"


def test_a_yes_to_the_providers_plan_for_a_regimen_is_no_adherence() -> None:
    for plan in (
        "we can prescribe you some meloxicam 15 mg once a day .",
        "i'd like to go ahead increase the lisinopril from 10 mg to 20 mg a day .",
        "i would like to increase your metformin to 1,000 milligrams twice daily .",
    ):
        assert not run(("provider", plan), ("patient", "mm-hmm ."))


def test_an_answer_about_whether_it_works_is_adherence_with_its_effects() -> None:
    memories = run(
        ("provider", "Is the medication not helping?"),
        ("patient", "The pain medication is horrible. I have been throwing up, off and on."),
    )
    [memory] = of_type(memories, MemoryType.ADHERENCE)
    assert memory.subject == "pain medication" and "effect" in memory.attributes["details"]


def test_the_as_needed_pattern_said_next_to_the_use_counts() -> None:
    memories = run(
        ("provider", "how often are you using your inhaler ?"),
        (
            "patient",
            "only when it seems to go over about 85 degrees out . so that's when i use it .",
        ),
    )
    [memory] = of_type(memories, MemoryType.ADHERENCE)
    assert memory.attributes.get("pattern") == "as_needed"


def test_lists_and_what_others_prescribed_are_not_adherence() -> None:
    memories = run(
        ("patient", "Here's a list of past and current medications I'm taking."),
        ("provider", "Did they put you on some medications?"),
        ("patient", "They gave me an anticonvulsant and aspirin."),
    )
    assert of_type(memories, MemoryType.ADHERENCE) == []


def test_someone_elses_condition_is_not_the_patients() -> None:
    memories = run(
        ("patient", "i also have a coworker who has a thyroid issue too ."),
        facts=(THYROID,),
    )
    assert of_type(memories, MemoryType.SYMPTOM) == []


def test_whether_anyone_has_it_asks_about_others() -> None:
    for asked in (
        "what about diabetes , does anyone have that ?",
        "does anybody else at home have a cough ?",
    ):
        assert run(("provider", asked), ("patient", "yes .")) == [], asked


def test_a_caregivers_own_child_is_the_patient_and_their_relative_is_family() -> None:
    [fever] = run(("caregiver", "my son has had a fever since tuesday ."))
    assert fever.subject == "fever" and fever.speaker == "caregiver"
    assert run(("caregiver", "her brother has asthma too .")) == []
    assert run(("patient", "my son has had a fever since tuesday .")) == []


def test_a_reply_about_the_family_history_is_the_familys() -> None:
    for asked, said in (
        ("any medical diseases in the family ?", "yeah , mainly heart issues ."),
        ("do migraines usually run in your family ?", "they do ."),
    ):
        assert run(("provider", asked), ("patient", said)) == [], asked
    [own] = run(
        ("provider", "any family history of cancer ?"),
        ("patient", "no , but i have had some chest pain lately ."),
    )
    assert own.subject == "chest pain"


def test_what_runs_in_the_family_is_not_the_patients() -> None:
    memories = run(
        ("provider", "so you went to the dermatologist to get it checked out ?"),
        ("patient", "yes , i was extra cautious because skin cancer does run in my family ."),
        ("patient", "i have high blood pressure and it runs in my family ."),
    )
    assert [m.subject for m in of_type(memories, MemoryType.SYMPTOM)] == ["blood pressure"]


def test_a_yes_to_doing_something_without_a_complaint_denies_it() -> None:
    knee = condition("condition:text:knee", "Osteoarthritis of right knee", ref="Condition/knee")
    denied = run(
        ("provider", "are you able to walk normally without any knee pain ?"),
        ("patient", "yes ."),
        facts=(knee,),
    )
    said = run(
        ("provider", "can you walk without knee pain ?"),
        ("patient", "no ."),
        facts=(knee,),
    )
    assert [m.attributes["present"] for m in of_type(denied, MemoryType.SYMPTOM)] == [False]
    assert [m.attributes["present"] for m in of_type(said, MemoryType.SYMPTOM)] == [True]


def test_a_complaint_from_a_condition_is_that_conditions() -> None:
    hernia = condition("condition:text:hernia", "Ventral hernia", ref="Condition/hernia")
    memories = run(
        ("provider", "so , tell me what's going on ?"),
        ("patient", "but i have a lot of pain from my hernia ."),
        facts=(hernia,),
    )
    [pain] = of_type(memories, MemoryType.SYMPTOM)
    assert pain.subject == "hernia pain"
    assert [e.type for e in relate([pain], [hernia])] == [RelationshipType.ENRICHES]


def test_a_drug_said_to_help_is_taken_in_any_form_of_the_verb() -> None:
    memories = run(("patient", "i've done some ibuprofen sometimes and that does help"))
    assert [m.subject for m in of_type(memories, MemoryType.ADHERENCE)] == ["ibuprofen"]


def test_a_no_to_remembering_denies_nothing_and_a_leading_well_is_no_answer() -> None:
    knees = condition("condition:text:knee-pain", "Bilateral knee pain", ref="Condition/knee")
    memories = run(
        ("patient", "my knees hurt a lot ."),
        ("provider", "do you remember what caused the pain initially ?"),
        ("patient", "honestly i do n't ."),
        ("provider", "how long has this knee been hurting you ?"),
        ("patient", "well , since the fall of two thousand seven ."),
        facts=(knees,),
    )
    [pain] = of_type(memories, MemoryType.SYMPTOM)
    assert pain.subject == "knee pain" and pain.attributes["present"] is True


def test_an_okay_to_the_clinicians_assessment_is_no_status_of_the_condition() -> None:
    stone = condition("condition:snomed:95570007", "Kidney stone", ref="Condition/stone")
    memories = run(
        (
            "provider",
            "so , for your first problem , your back pain , i think you're having a recurrence"
            " of your kidney stones . okay ?",
        ),
        ("patient", "mm-hmm ."),
        facts=(stone,),
    )
    assert memories == []


def test_take_in_another_sense_is_not_taking_a_drug() -> None:
    memories = run(
        ("provider", "how was it last time after the steroid injection ?"),
        ("patient", "it worked fine . it did take us some time to get rid of it ."),
        ("provider", "and the metformin ?"),
        ("patient", "it took a while but i take it every day now ."),
    )
    assert [m.subject for m in of_type(memories, MemoryType.ADHERENCE)] == ["metformin"]


def test_forgetting_why_and_fluid_coming_out_of_it_are_no_ways_of_taking_a_drug() -> None:
    memories = run(
        ("provider", "what about the antibiotics ?"),
        ("patient", "i forgot why they gave it to me ."),
        ("provider", "and the wound ?"),
        ("patient", "there is yellow fluid coming out of it ."),
        ("provider", "and the metformin ?"),
        ("patient", "i forgot to take it twice last week ."),
    )
    adherence = of_type(memories, MemoryType.ADHERENCE)
    assert [(m.subject, m.attributes["behavior"]) for m in adherence] == [
        ("metformin", "missed_doses")
    ]


def test_not_taking_it_as_regularly_as_asked_is_missing_doses() -> None:
    [metformin] = run(("patient", "i do n't take my metformin every day ."))
    assert metformin.attributes["behavior"] == "missed_doses"


def test_taking_no_medicine_at_all_is_not_taking_it() -> None:
    [none] = run(
        ("provider", "do you have any other medical problems that you take medicine for ?"),
        ("patient", "no i do n't have any medical problems and i do n't take any medicines ."),
    )
    assert none.attributes["behavior"] == "stopped"


def test_a_dose_not_taken_on_a_named_day_is_missed() -> None:
    [missed] = run(("patient", "i did not take my metformin this morning though ."))
    assert missed.subject == "metformin" and missed.attributes["behavior"] == "missed_doses"
    edges = relate([missed], [METFORMIN])
    assert [e.type for e in edges] == [RelationshipType.ENRICHES]


def test_yes_to_whether_it_went_away_says_it_is_gone() -> None:
    [gone] = run(
        ("provider", "did the pain in your arm go away ?"),
        ("patient", "yes , it went away the next day ."),
        facts=(ARM,),
    )
    assert gone.attributes["present"] is False and gone.attributes["gone"] is True
    [still] = run(("provider", "has the arm pain gone away ?"), ("patient", "no ."), facts=(ARM,))
    assert still.attributes["present"] is True
    [none] = run(
        ("provider", "so you do not have any more arm pain ?"),
        ("patient", "no i do n't ."),
        facts=(ARM,),
    )
    assert none.attributes["present"] is False


def test_the_replys_own_words_about_it_outweigh_its_yes_or_no() -> None:
    memories = run(
        ("provider", "no fever or chills , right ?"),
        ("patient", "yeah , no fever or anything ."),
        ("provider", "any headaches ?"),
        ("patient", "nah , just the usual headaches around my periods ."),
    )
    said = {m.subject: m.attributes["present"] for m in of_type(memories, MemoryType.SYMPTOM)}
    assert "fever" not in said  # denied, and no recorded condition it bears on
    assert said["headache"] is True


def test_a_part_that_does_not_hurt_is_no_pain_there() -> None:
    stopped = condition("condition:text:knee-injury", "Knee injury", status="resolved")
    for said in (
        "my knee does not hurt .",
        "my knee does n't really hurt anymore .",
        "my knee has not been bothering me .",
        "my knee doesn't hurt.",
    ):
        [knee] = run(("patient", said), facts=(stopped,))
        assert knee.attributes["present"] is False, said
    [hurts] = run(("patient", "my knee hurts ."), facts=(stopped,))
    assert hurts.attributes["present"] is True


def test_a_part_on_the_other_side_is_not_the_recorded_one() -> None:
    right = condition("condition:text:right-knee-injury", "Right knee injury", ref="Condition/r")
    assert run(("patient", "yeah my left knee does n't really hurt ."), facts=(right,)) == []
    [left] = run(("patient", "my left knee hurts ."), facts=(right,))
    assert left.attributes["side"] == "left" and relate([left], [right]) == []
    [same] = run(("patient", "my right knee hurts ."), facts=(right,))
    assert [e.type for e in relate([same], [right])] == [RelationshipType.ENRICHES]


def test_a_choice_or_a_phrase_about_a_complaint_is_answered_by_how_it_is() -> None:
    for asked, said, subject in (
        ("is the pain sharp or dull ?", "sharp , like a knife .", "pain"),
        ("and the swelling in your ankles ?", "it's gone down a lot .", "ankle swelling"),
    ):
        [memory] = run(("provider", asked), ("patient", said))
        assert (memory.subject, memory.attributes["present"]) == (subject, True), asked


def test_a_reply_naming_what_was_asked_in_its_own_words_is_one_memory() -> None:
    memories = run(
        ("provider", "do you have diabetes or blood pressure problems ?"),
        ("patient", "yes , i have hypertension but no diabetes ."),
    )
    assert [m.subject for m in of_type(memories, MemoryType.SYMPTOM)] == ["hypertension"]
    back = run(
        ("provider", "any other pain throughout the body ?"),
        ("patient", "sometimes i have back pain ."),
    )
    assert [m.subject for m in of_type(back, MemoryType.SYMPTOM)] == ["back pain"]


def test_the_part_a_reply_names_completes_the_complaint_asked_about() -> None:
    [elbow] = run(("provider", "where are you having pain ?"), ("patient", "my left elbow ."))
    assert elbow.subject == "elbow pain"
    [back] = run(
        ("provider", "where is your pain located ?"),
        ("patient", "it's in my right lower back , and then into my butt ."),
    )
    assert back.subject == "lower back pain"
    [knee] = run(("provider", "any pain ?"), ("patient", "yes , in my left knee ."))
    assert knee.subject == "knee pain"


def test_a_reply_that_it_is_less_than_it_was_says_it_is_still_there() -> None:
    memories = run(
        ("provider", "do you still get those headaches ?"),
        ("patient", "not like i used to ."),
    )
    [headache] = of_type(memories, MemoryType.SYMPTOM)
    assert headache.subject == "headache" and headache.attributes["present"] is True


def test_a_drug_named_for_what_the_patient_does_for_a_complaint_is_taken() -> None:
    [mobic] = run(
        ("provider", "what are you doing for the pain today"),
        ("patient", "some exercises ice and mobic"),
    )
    assert mobic.type is MemoryType.ADHERENCE and mobic.subject == "meloxicam"
    assert not run(("provider", "what can i do for you today ?"), ("patient", "mobic ?"))


def test_a_reply_to_a_request_to_describe_the_asked_symptom_is_about_it() -> None:
    back = condition("condition:text:low-back-pain", "Low back pain", ref="Condition/lbp")
    memories = run(
        ("provider", "good morning . can you tell me more about this low back pain ?"),
        ("patient", "well , i'm not as young as i used to be , i'm fifty nine ."),
        facts=(back,),
    )
    [pain] = of_type(memories, MemoryType.SYMPTOM)
    assert pain.subject == "back pain" and pain.attributes["present"] is True
    assert relate([pain], [back])[0].type is RelationshipType.ENRICHES


def test_a_follow_up_naming_nothing_asks_on_about_the_question_before_it() -> None:
    memories = run(
        (
            "provider",
            "and lastly , for your high blood pressure , how are you doing with that ? "
            "did you buy the cuff like i asked ?",
        ),
        ("patient", "no , not yet . but it's been pretty good ."),
        facts=(HTN,),
    )
    [bp] = of_type(memories, MemoryType.SYMPTOM)
    assert bp.subject == "blood pressure" and bp.attributes["via"] == "topic"
    # the no answers the follow-up about the cuff, not how the blood pressure is
    assert bp.attributes["present"] is True
    assert "but it's been pretty good ." in {e.quote for e in bp.evidence}
    assert "no , not yet ." not in {e.quote for e in bp.evidence}


def test_your_medication_is_for_the_condition_asked_about_a_turn_before() -> None:
    lisinopril = medication("medication:rxnorm:29046", "Lisinopril 10 mg", dose="10 mg daily")
    facts = (HTN, T2DM, METFORMIN, lisinopril)
    memories = run(
        ("provider", "and how about your high blood pressure ? are you checking it at home ?"),
        ("patient", "i'm good about it during the week , and it's been under control ."),
        ("provider", "okay , and you're taking your medication ?"),
        ("patient", "yes , i am ."),
        facts=facts,
    )
    [taken] = of_type(memories, MemoryType.ADHERENCE)
    edges = relate([taken], list(facts))
    assert {e.fact_key for e in edges} == {lisinopril.fact_key}


def test_a_reply_the_patient_goes_on_with_after_a_yeah_answers_the_question() -> None:
    memories = run(
        ("provider", "does it hurt all the time , or only when it comes on ?"),
        ("patient", "well , let me think ."),
        ("provider", "okay ."),
        ("patient", "once i'm on my feet all day , my foot starts to ache ."),
    )
    [foot] = [m for m in of_type(memories, MemoryType.SYMPTOM) if m.subject == "foot pain"]
    quotes = {e.quote for e in foot.evidence}
    assert "does it hurt all the time , or only when it comes on ?" in quotes


def test_what_goes_on_after_a_yeah_is_no_drug_the_question_named() -> None:
    gabapentin = medication("medication:rxnorm:25480", "Neurontin 300 mg", dose="300 mg daily")
    memories = run(
        ("provider", "we've been giving you the gabapentin . is that helping control the pain ?"),
        ("patient", "i think it is ."),
        ("provider", "yeah ."),
        ("patient", "but it does come every now and then ."),
        facts=(gabapentin,),
    )
    # the yes says it helps; "it does come" is the pain, not the drug taken now and then
    [taken] = of_type(memories, MemoryType.ADHERENCE)
    assert taken.attributes["behavior"] == "as_prescribed"
    assert all("every now and then" not in e.quote for e in taken.evidence)


def test_a_manifestation_of_several_conditions_is_of_the_one_talked_about() -> None:
    chf = condition("condition:snomed:42343007", "Congestive heart failure", ref="Condition/chf")
    copd = condition("condition:snomed:13645005", "Chronic obstructive lung disease")
    facts = (chf, copd)
    memories = run(
        ("provider", "so how are you doing with the heart failure ? any shortness of breath ?"),
        ("patient", "yes , i get short of breath when i climb the stairs ."),
        facts=facts,
    )
    [breath] = of_type(memories, MemoryType.SYMPTOM)
    assert {e.fact_key for e in relate([breath], list(facts))} == {chf.fact_key}
    # asked about nothing in particular, it bears on both
    memories = run(
        ("provider", "anything else going on ?"),
        ("patient", "i get short of breath when i climb the stairs ."),
        facts=facts,
    )
    [breath] = of_type(memories, MemoryType.SYMPTOM)
    assert {e.fact_key for e in relate([breath], list(facts))} == {chf.fact_key, copd.fact_key}


def test_a_denied_complaint_takes_no_body_part_named_elsewhere() -> None:
    back = condition("condition:snomed:279039007", "Low back pain", ref="Condition/back")
    memories = run(
        ("provider", "and your back , how is it doing with the new mattress ?"),
        ("patient", "much better , thanks ."),
        ("provider", "good . any other concerns today ?"),
        ("patient", "no , no pain at all right now ."),
        facts=(back,),
    )
    # "no pain" answers "any other concerns ?", not the back asked about two turns before
    assert not [
        m for m in of_type(memories, MemoryType.SYMPTOM) if m.attributes["present"] is False
    ]
    # gone, said in reply to the question naming the part, it is that part's
    memories = run(
        ("provider", "how is your back doing ?"),
        ("patient", "the pain is gone ."),
        facts=(back,),
    )
    [gone] = of_type(memories, MemoryType.SYMPTOM)
    assert gone.subject == "back pain" and gone.attributes["present"] is False
    assert relate([gone], [back])[0].type is RelationshipType.CONFLICTS
