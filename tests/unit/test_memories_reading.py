"""Reading a turn: questions without "?", answer cues, and what a phrase mentions."""

from engine.memories import cues
from engine.memories.context import Assertion
from engine.memories.cues import Polarity
from engine.memories.exchange import parse
from engine.memories.lexicon import load_lexicon
from engine.memories.mentions import class_drugs, find_mentions
from engine.memories.text import question_spans, sentences


def asked(text: str) -> list[str]:
    return [text[s:e] for sentence in sentences(text) for s, e in question_spans(text, sentence)]


def subjects(text: str) -> list[str]:
    return [m.subject for m in find_mentions(text, load_lexicon())]


def assertions(text: str) -> list[Assertion]:
    """ConText's reading of each mention, in order."""
    return [a for s in parse(text, load_lexicon()) for _, a in s.mentions]


def canonical(text: str) -> list[str]:
    return [m.canonical for m in find_mentions(text, load_lexicon())]


def said(text: str) -> list[tuple[str, str]]:
    """Each mention as named and as the vocabulary's term."""
    return [(m.subject, m.canonical) for m in find_mentions(text, load_lexicon())]


# -- questions -------------------------------------------------------------------------


def test_an_unpunctuated_question_starts_at_its_inversion_and_we_have_you_is_no_question() -> None:
    text = "okay that's okay are you taking the lisinopril i think we have you on twenty a day"
    assert asked(text) == ["are you taking the lisinopril i think we have you on twenty a day"]


def test_a_patients_unmarked_question_opens_with_its_inversion_not_a_clause() -> None:
    assert cues.asks_itself("when can i play basketball again")
    assert cues.asks_itself("what else can i do")
    assert not cues.asks_itself("when i do that , i feel it in my legs .")


def test_run_on_questions_are_each_asked_in_turn() -> None:
    text = "alright and any nausea or diarrhea or anything like that are you peeing a lot"
    assert asked(text) == [
        "alright and any nausea or diarrhea or anything like that",
        "are you peeing a lot",
    ]
    text = "have you noticed any blood in your urine has it been darker than usual"
    assert asked(text) == [
        "have you noticed any blood in your urine",
        "has it been darker than usual",
    ]


def test_a_long_unmarked_explanation_and_an_announced_examination_are_not_questions() -> None:
    explanation = "what does this all mean so let me explain " + "that it is your heart " * 8
    assert asked(explanation) == []
    assert asked("let me just take a listen to your heart and lungs , okay ?") == []


def test_a_statement_folded_into_a_question_is_read_as_a_statement() -> None:
    text = "I have this wart on my right middle finger, are you able to freeze it off?"
    assert [text[s:e] for s, e in sentences(text)] == [
        "I have this wart on my right middle finger",
        "are you able to freeze it off?",
    ]
    topic_only = "so , with the thyroid , and the low vitamin d , does that happen together ?"
    assert len(sentences(topic_only)) == 1


# -- answer cues -----------------------------------------------------------------------


def test_how_often_answers_yes_and_neither_answers_no() -> None:
    for reply in ("sometimes", "occasionally yeah", "every once in a while , my elbow"):
        assert cues.polarity(reply) is Polarity.YES, reply
    assert cues.polarity("neither of them .") is Polarity.NO
    assert cues.polarity("probably not enough") is Polarity.NO
    # how seldom a drug is taken is how it is taken, not that it is not
    assert cues.polarity("hardly ever . maybe once a month .") is Polarity.NONE
    for reply in ("only when i climb stairs .", "all the time .", "a little in the mornings ."):
        assert cues.polarity(reply) is Polarity.YES, reply


def test_a_negated_good_is_bad_and_a_negated_bad_good() -> None:
    assert cues.polarity("not great .") is Polarity.BAD
    assert cues.polarity("not as good as before .") is Polarity.BAD
    assert cues.polarity("not too bad .") is Polarity.GOOD
    assert cues.polarity("pretty bad .") is Polarity.BAD


def test_remembering_to_take_it_is_no_missed_dose_and_only_when_remembered_is() -> None:
    lex = load_lexicon()
    assert cues.behaviour_phrase("so i remember to take it .", lex)[0] == "as_prescribed"
    assert cues.behaviour_phrase("i do n't always remember to take it .", lex)[0] == "missed_doses"
    assert cues.behaviour_phrase("only when i remember .", lex)[0] == "missed_doses"


def test_unsure_and_self_correcting_replies_are_neither_yes_nor_no() -> None:
    assert cues.polarity("i do n't know i might miss one now") is Polarity.NONE
    assert cues.polarity("no i yeah i do i like to eat") is Polarity.NONE
    assert cues.polarity("no , i do n't") is Polarity.NO
    assert cues.polarity("um , i think i do .") is Polarity.YES
    assert cues.polarity("wh- yeah , a little") is Polarity.YES  # a word broken off
    assert cues.polarity("yes ... well sometimes") is Polarity.YES
    assert cues.polarity("uh , they actually did .") is Polarity.YES  # an adverb between
    assert cues.polarity("i still do , every day") is Polarity.YES
    assert cues.polarity("i really do n't") is Polarity.NO
    assert cues.false_start("um , uh , it ...") and not cues.false_start("no ...")
    assert cues.status("not as often .") and cues.status("not like it used to .")
    assert not cues.gone("not like it used to .")
    assert cues.polarity("actually , i do need a refill .") is Polarity.YES
    assert cues.polarity("every morning , yeah .") is Polarity.YES  # confirmed after
    assert cues.polarity("just the one , no .") is Polarity.NO
    assert cues.polarity("i do n't know , no") is Polarity.NONE
    assert cues.polarity("absolutely not , i've never used that stuff .") is Polarity.NO
    assert cues.polarity("of course not") is Polarity.NO
    assert cues.polarity("that's a negative , doctor .") is Polarity.NO
    assert cues.polarity("that is correct .") is Polarity.YES
    assert cues.polarity("only a little bit .") is Polarity.YES  # a degree says yes
    assert cues.polarity("a little bit of pain in my knee") is Polarity.NONE
    assert cues.polarity("eh not really .") is Polarity.NO
    assert cues.polarity("not at this point .") is Polarity.NO
    # "i have" and "i am" answer alone, not as the start of saying something else
    assert cues.polarity("i have one older brother .") is Polarity.NONE
    assert cues.polarity("well , i am doing okay !") is Polarity.NONE
    assert cues.polarity("i have , but i miss them") is Polarity.YES
    assert cues.polarity("i am taking it .") is Polarity.YES
    less = ["not like it used to .", "not as bad as before", "no , not as often", "less now"]
    assert {cues.polarity(t) for t in less} == {Polarity.LESS}


def test_an_acknowledgement_is_a_backchannel_and_an_answer_is_not() -> None:
    assert all(cues.backchannel(t) for t in ["mm-hmm .", "mm .", "okay", "yes .", "uh-huh"])
    assert not any(cues.backchannel(t) for t in ["yes , i am .", "no .", "it hurts ."])


def test_a_leading_no_without_a_comma_does_not_negate_what_follows() -> None:
    [sentence] = parse("no i have a little bit of a stuffy nose", load_lexicon())
    [(mention, assertion)] = sentence.mentions
    assert mention.subject == "nasal congestion" or "stuffy" in mention.subject
    assert assertion.negated is False


def test_gone_is_said_of_the_thing_itself_not_of_a_wish_or_an_improvement() -> None:
    assert cues.gone("the medication helped it , you know , go down and go away .")
    assert cues.gone("i have n't felt it since then")
    assert not cues.gone("i just want this pain to go away")
    assert cues.gone("well i did have heavy periods until i had a hysterectomy in 1996 .")
    assert not cues.gone("i did n't have any pain until yesterday")
    assert cues.gone("no more chest pain since then") and not cues.gone("no more than two a day")
    assert cues.absent("the gout has n't bothered me since last spring")
    assert not cues.gone("it's a bit better , i do n't get up at night anymore")
    assert cues.absent("have n't had any problems since") and not cues.gone(
        "have n't had any problems since"
    )
    # a comparison with then is no end: "as i used to" is not "i used to"
    assert cues.gone("i used to get migraines")
    assert not cues.gone("well , i'm not as young as i used to be , i'm fifty nine .")


def test_a_request_to_describe_is_no_yes_or_no_question() -> None:
    assert cues.asks_open("can you tell me more about this low back pain?")
    assert cues.asks_wh("how would you describe your pain?")
    assert not cues.asks_open("do you have any back pain?")
    assert cues.asks_how("for your blood pressure , how are you doing with that ?")
    assert not cues.asks_how("how about any abdominal pain ?")


def test_a_negated_degree_is_no_severity_detail() -> None:
    assert "severity" not in cues.details("I've had it a long time, but it hasn't gotten worse.")
    assert "severity" in cues.details("it has gotten worse")


def test_status_words_and_readings_but_not_a_lone_one() -> None:
    assert cues.status("they are like in the low one hundreds")
    assert cues.status("i still have my good days and my bad days")
    assert not cues.status("it was just a normal one")


# -- mentions --------------------------------------------------------------------------


def test_a_complaint_shared_by_two_body_parts_is_two_mentions() -> None:
    assert subjects("the back and knee pain are age-related") == ["back pain", "knee pain"]


def test_lay_words_and_possessives_name_the_complaint() -> None:
    assert subjects("how is your heart burn doing ?") == ["heartburn"]
    assert subjects("my asthma's been acting up") == ["asthma"]
    assert subjects("My foot keeps breaking out.") == ["foot rash"]
    assert subjects("I have been having some severe bruising.") == ["bruising"]
    assert subjects("Well, I'm coughing up this yellow phlegm.") == ["cough"]


def test_amounts_and_who_it_is_hard_for_do_not_hide_the_complaint() -> None:
    assert canonical("it's been hard for me to swallow certain foods") == ["dysphagia"]
    assert canonical("i've lost a lot of weight") == ["weight loss"]
    assert canonical("i put on some weight") == ["weight gain"]
    assert canonical("i have some pain") == ["pain"]


def test_a_procedure_done_is_not_what_the_patient_has() -> None:
    assert subjects("i had cataract surgery on both eyes .") == []
    assert subjects("i had a hernia repair back in o ten .") == []
    assert subjects("my knee replacement hurts") == ["knee pain"]


def test_a_compound_heard_as_two_words_is_the_compound() -> None:
    assert canonical("i have a bad back ache") == ["back pain"]
    assert canonical("it's a pain killer that starts with an l .") == ["painkiller"]  # no pain


def test_whose_it_is_does_not_hide_the_complaint() -> None:
    assert canonical("i think i noticed some blood in my stool") == ["bloody diarrhea"]
    assert canonical("there is a ringing in my ears") == ["tinnitus"]
    assert canonical("would you be able to open his mouth for me ?") == []  # a request


def test_a_complaint_said_of_what_has_it_is_the_vocabularys_term() -> None:
    assert said("my mouth is dry") == [("dry mouth", "xerostomia")]
    assert said("my heart is really racing") == [("racing heart", "tachycardia")]  # not the heart
    assert said("my chest feels tight") == [("chest tightness", "chest tightness")]
    assert said("my knee is fine") == []


def test_a_wish_ends_where_a_new_clause_begins() -> None:
    lex = load_lexicon()
    [gained] = parse("no i wish , unfortunately i've gained some weight", lex)
    [wished] = parse("i wish i had some weight loss", lex)
    assert [a.hypothetical for _, a in gained.mentions] == [False]
    assert [a.hypothetical for _, a in wished.mentions] == [True]


def test_a_region_of_a_body_part_is_that_part() -> None:
    assert subjects("a dull pain in the back of my head") == ["head pain"]
    assert subjects("pain in the back of my left leg") == ["leg pain"]  # not too far off
    assert subjects("the side of my neck is sore") == ["neck pain"]
    assert subjects("my back hurts") == ["back pain"]


def test_what_someone_died_of_is_theirs_and_being_tired_of_is_no_fatigue() -> None:
    died = "she actually passed away due to a brain aneurysm ."
    assert [a.family for a in assertions(died)] == [True]
    assert [a.family for a in assertions("i almost died from the pain .")] == [False]
    assert subjects("i am tired of these regular blood draws .") == []
    assert subjects("i am tired all the time .") == ["fatigue"]


def test_trouble_with_a_function_is_said_with_any_trouble_word() -> None:
    assert subjects("i have memory issues lately .") == ["memory issues"]
    assert subjects("i've had some balance problems .") == ["balance problems"]


def test_a_complaint_takes_no_body_part_from_the_sentence_before() -> None:
    said = "My back hurts. I have had pain with urination for the last two days."
    assert subjects(said) == ["back pain", "painful urination"]
    assert subjects("my back hurts . i have had pain with urination") == [
        "back pain",
        "painful urination",
    ]


def test_a_part_and_its_ache_said_as_one_word() -> None:
    assert subjects("i've had a terrible toothache") == ["tooth pain"]
    assert subjects("i did have an earache") == ["ear pain"]
    assert subjects("i have a headache") == ["headache"]


def test_a_term_pairing_two_complaints_names_each() -> None:
    assert subjects("i do get occasional nausea and vomiting .") == ["nausea", "vomiting"]
    assert subjects("any malaise and fatigue ?") == ["malaise", "fatigue"]


def test_common_lay_names_of_complaints() -> None:
    assert subjects("i just can't catch my breath") == ["shortness of breath"]
    assert subjects("it burns when i pee") == ["painful urination"]
    assert subjects("my periods are really heavy") == ["heavy periods"]
    assert subjects("can you give me a quick run down of her history") == []


def test_a_part_the_patient_cannot_feel_is_numb() -> None:
    assert subjects("i ca n't feel my left hand at all") == ["hand numbness"]
    assert subjects("she lost feeling in her toes") == ["toe numbness"]
    assert subjects("i can't feel a difference") == []


def test_being_shocked_or_an_old_age_home_is_plain_english() -> None:
    assert subjects("it was sudden , everyone was shocked .") == []
    assert subjects("i live at an old age nursing home .") == []


def test_the_right_hand_side_is_a_side_not_the_hand() -> None:
    assert subjects("i have pain on the right hand side") == ["side pain"]
    assert subjects("my right hand hurts") == ["hand pain"]


def test_a_part_ending_in_s_in_the_singular_keeps_it() -> None:
    assert subjects("my pelvis hurts") == ["pelvis pain"]


def test_someone_elses_condition_is_like_family_history() -> None:
    [sentence] = parse("i also have a coworker who has a thyroid issue too", load_lexicon())
    assert [a.family for _, a in sentence.mentions] == [True]
    # the patient's own clause after it is theirs again
    own = "my friend who was visiting had to help me in and now i'm still limping"
    [sentence] = parse(own, load_lexicon())
    assert [a.family for _, a in sentence.mentions] == [False]


def test_a_class_named_in_the_plural_is_that_class() -> None:
    lex = load_lexicon()
    assert class_drugs("all my antibiotics", lex) == class_drugs("my antibiotic", lex) != ()
    assert "furosemide" in class_drugs("the water pills", lex)


def test_never_denies_with_any_verb_but_not_what_was_never_this_bad() -> None:
    def negated(text: str) -> list[bool]:
        return [a.negated for a in assertions(text)]

    assert negated("i've never smoked in my life .") == [True]
    assert negated("i never get headaches .") == [True]
    assert negated("i have never felt palpitations like this .") == [False]
    assert negated("i never took anything for my diabetes .") == [False]


def test_what_is_screened_or_tested_for_is_looked_into_not_had() -> None:
    for text in ["i am here for a breast cancer screening .", "they checked me for diabetes ."]:
        assert [a.hypothetical for a in assertions(text)] == [True]
    [had] = assertions("i have diabetes and they checked my sugar .")
    assert not had.hypothetical
