"""The shared acceptance checks and the offline extractor's reading of a conversation."""

from engine.memories.extractor import Candidate, Quote
from engine.memories.offline import OfflineExtractor
from engine.memories.turn import Collector
from engine.memories.verify import accept, memory_id
from engine.models import Fact, Memory, MemoryType, Role
from tests.unit.test_memories_builders import condition, conversation, medication

CHF = condition("condition:snomed:42343007", "Congestive heart failure", ref="Condition/chf")


def run(*turns: tuple[str, str], facts: tuple[Fact, ...] = ()) -> list[Memory]:
    messages = conversation(*turns)
    extractor = OfflineExtractor()
    return accept(extractor.candidates(messages, list(facts)), messages, "offline", "1")


def by_type(memories: list[Memory], kind: MemoryType) -> list[Memory]:
    return [m for m in memories if m.type is kind]


# -- verbatim quotes -------------------------------------------------------------------


def test_a_hallucinated_quote_is_rejected_and_a_verbatim_one_kept() -> None:
    messages = conversation(("patient", "I stopped the metformin last week."))
    mid = messages[0].message_id
    good = Candidate(
        type="adherence",
        subject="metformin",
        text="stopped",
        evidence=[Quote(message_id=mid, quote="I stopped the metformin")],
    )
    invented = Candidate(
        type="adherence",
        subject="metformin",
        text="stopped",
        evidence=[Quote(message_id=mid, quote="I quit metformin")],
    )
    kept = accept([good, invented], messages, "x", "1")
    assert [m.evidence[0].quote for m in kept] == ["I stopped the metformin"]
    assert (kept[0].evidence[0].start, kept[0].evidence[0].end) == (0, 23)


def test_quotes_are_case_sensitive_and_offsets_are_checked() -> None:
    messages = conversation(("patient", "My knee hurts."))
    mid = messages[0].message_id
    wrong_case = Candidate(
        type="symptom",
        subject="knee pain",
        text="",
        evidence=[Quote(message_id=mid, quote="my knee hurts")],
    )
    wrong_offset = Candidate(
        type="symptom",
        subject="knee pain",
        text="",
        evidence=[Quote(message_id=mid, quote="knee", start=0, end=4)],
    )
    assert accept([wrong_case, wrong_offset], messages, "x", "1") == []


def test_unknown_types_and_provider_only_evidence_are_rejected() -> None:
    messages = conversation(("provider", "Your blood pressure is high."), ("patient", "Okay."))
    odd = Candidate(
        type="diagnosis",
        subject="x",
        text="",
        evidence=[Quote(message_id=messages[1].message_id, quote="Okay.")],
    )
    provider = Candidate(
        type="symptom",
        subject="blood pressure",
        text="",
        evidence=[Quote(message_id=messages[0].message_id, quote="blood pressure")],
    )
    assert accept([odd, provider], messages, "x", "1") == []


def test_memory_ids_are_deterministic() -> None:
    messages = conversation(("patient", "I have a headache every morning."))
    candidate = Candidate(
        type="symptom",
        subject="headache",
        text="",
        evidence=[Quote(message_id=messages[0].message_id, quote="a headache")],
    )
    first = accept([candidate], messages, "x", "1")[0]
    again = accept([candidate], messages, "x", "1")[0]
    assert (
        first.memory_id == again.memory_id == memory_id("s1", "symptom", "headache", first.evidence)
    )


# -- speaker roles ---------------------------------------------------------------------


def test_a_provider_statement_is_not_a_memory() -> None:
    memories = run(
        ("provider", "You have some swelling in your legs and a headache."), ("patient", "Okay.")
    )
    assert memories == []


def test_a_patient_yes_to_a_question_is_a_memory_quoting_both() -> None:
    memories = run(("provider", "Any constipation?"), ("patient", "Yes."))
    [memory] = by_type(memories, MemoryType.SYMPTOM)
    assert memory.subject == "constipation"
    assert memory.attributes["present"] is True
    assert {e.quote for e in memory.evidence} == {"Yes.", "Any constipation?"}
    assert memory.speaker is Role.PATIENT


def test_yes_to_are_you_taking_is_adherence_with_the_generic_name() -> None:
    memories = run(("provider", "Are you taking the Norvasc?"), ("patient", "Yep."))
    [memory] = by_type(memories, MemoryType.ADHERENCE)
    assert memory.subject == "amlodipine"
    assert memory.attributes["behavior"] == "as_prescribed"


def test_a_caregiver_statement_counts_with_its_speaker() -> None:
    memories = run(("caregiver", "She has been very dizzy since Monday."))
    [memory] = by_type(memories, MemoryType.SYMPTOM)
    assert memory.subject == "dizziness" and memory.speaker is Role.CAREGIVER


# -- ConText: negation, family, hypothetical -------------------------------------------


def test_a_denied_symptom_with_nothing_on_file_is_not_a_memory() -> None:
    assert by_type(run(("patient", "I have no fever.")), MemoryType.SYMPTOM) == []


def test_a_denied_manifestation_of_a_recorded_condition_is_kept_as_absent() -> None:
    memories = run(
        ("provider", "Any swelling in your legs?"), ("patient", "No, not at all."), facts=(CHF,)
    )
    [memory] = by_type(memories, MemoryType.SYMPTOM)
    assert memory.subject == "leg swelling" and memory.attributes["present"] is False


def test_what_was_denied_before_a_but_is_not_what_follows_it() -> None:
    asked = ("provider", "how is the blood pressure ?")
    said = "i have n't had any real problems there but i have had some swelling in my ankles"
    [swelling] = [m for m in run(asked, ("patient", said)) if m.subject == "ankle swelling"]
    assert swelling.attributes["present"] is True
    # what follows the "but" still says how the thing before it is
    back = condition("condition:text:back-pain", "Chronic back pain", ref="Condition/back")
    gone = ("patient", "the back pain was bad for a while but it's gone now")
    [pain] = run(("provider", "how are you ?"), gone, facts=(back,))
    assert pain.attributes["present"] is False and pain.attributes["gone"] is True


def test_the_suicide_screen_in_its_everyday_words_bears_on_a_recorded_depression() -> None:
    depression = condition("condition:text:mdd", "Major depressive disorder", ref="Condition/d")
    for asked, subject in (
        ("Are you feeling suicidal right now?", "suicidal ideation"),
        ("any thoughts of suicide?", "suicidal ideation"),
        ("no feelings of wanting to harm yourself or hurt others ?", "self harm"),
    ):
        memories = run(
            ("provider", asked), ("patient", "No, nothing like that."), facts=(depression,)
        )
        [memory] = by_type(memories, MemoryType.SYMPTOM)
        assert (memory.subject, memory.attributes["present"]) == (subject, False), asked


def test_what_the_one_who_died_had_is_theirs() -> None:
    for asked, said in (
        ("How did your brother pass away?", "He had pancreatitis."),
        ("what about your mother?", "She died at seventy four , she had emphysema ."),
    ):
        assert run(("provider", asked), ("patient", said)) == [], said
    # a relative asked about may be the patient, spoken of by a caregiver
    told = run(
        ("provider", "Did your mother tell you anything about her condition?"),
        ("caregiver", "She said she threw up and she had diarrhea."),
    )
    assert {m.subject for m in told} == {"vomiting", "diarrhea"}
    # but not by the patient, whose mother's illness is the family's history
    of_mother = ("provider", "What about your mother?")
    assert run(of_mother, ("patient", "She had the second type of diabetes.")) == []
    # nor is what the patient goes on to say of the relative
    assert run(of_mother, ("patient", "She died too. She had kidney and heart failure.")) == []
    sister = "Yes, I have one sister. She is thirty eight. She has attempted suicide twice."
    assert run(("provider", "Do you have siblings?"), ("patient", sister)) == []


def test_family_history_and_hypotheticals_are_not_memories() -> None:
    memories = run(
        ("patient", "My mother had terrible migraines."),
        ("patient", "If I get chest pain I will call you."),
    )
    assert by_type(memories, MemoryType.SYMPTOM) == []


def test_a_leading_no_answers_the_question_and_does_not_negate() -> None:
    memories = run(("provider", "Any cough?"), ("patient", "No, but I have a stuffy nose."))
    subjects = {m.subject for m in by_type(memories, MemoryType.SYMPTOM)}
    assert subjects == {"stuffy nose"}


# -- adherence, concerns, preferences --------------------------------------------------


def test_stopping_a_brand_name_drug_is_adherence_stopped_under_its_generic() -> None:
    memories = run(("patient", "I stopped taking the Prozac because it made me sleepy."))
    [memory] = by_type(memories, MemoryType.ADHERENCE)
    assert memory.subject == "fluoxetine"
    assert memory.attributes["behavior"] == "stopped"
    assert "because" in memory.attributes["reason"]


def test_a_stop_is_said_in_many_ways() -> None:
    for said in (
        "I had to stop Advair because it started to bother me.",
        "I haven't taken my medicines in months.",
        "It's been several months since she last took her medicines.",
        "i have n't used the inhaler in a while .",
    ):
        [memory] = by_type(run(("patient", said)), MemoryType.ADHERENCE)
        assert memory.attributes["behavior"] == "stopped", said


def test_not_forgetting_is_no_missed_dose() -> None:
    for said in ("I use a pill box so I don't forget my metformin.", "i never miss my metformin ."):
        [memory] = by_type(run(("patient", said)), MemoryType.ADHERENCE)
        assert memory.attributes["behavior"] == "as_prescribed", said
    [missed] = by_type(run(("patient", "sometimes I forget my metformin.")), MemoryType.ADHERENCE)
    assert missed.attributes["behavior"] == "missed_doses"


def test_an_extra_dose_changes_the_dose_and_an_extra_blanket_does_not() -> None:
    for said, behaviour in (
        ("i take an extra pill of the lasix when my ankles swell .", "changed_dose"),
        ("i take my lasix , and i put on an extra blanket at night .", "as_prescribed"),
    ):
        found = {m.subject: m for m in by_type(run(("patient", said)), MemoryType.ADHERENCE)}
        assert found["furosemide"].attributes["behavior"] == behaviour, said


def test_common_ways_of_saying_how_a_drug_is_taken() -> None:
    for said, behaviour in (
        ("i only take the metformin when my sugars are high .", "as_needed"),
        ("i'll sometimes take the metformin .", "as_needed"),
        ("i doubled up on the metformin .", "changed_dose"),
        ("the pharmacy did n't have my metformin so i've been without it .", "ran_out"),
        ("i take the metformin most days .", "missed_doses"),
        ("he wo n't take the metformin , he hates it .", "stopped"),
        ("i will not take more than one metformin .", "as_prescribed"),
    ):
        [memory] = by_type(run(("patient", said)), MemoryType.ADHERENCE)
        assert behaviour in {memory.attributes["behavior"], memory.attributes.get("pattern")}, said


def test_a_drug_class_is_named_as_the_patient_says_it_and_is_one_memory() -> None:
    memories = run(
        ("patient", "i'm still taking the antibiotics ."),
        ("patient", "i take that antibiotic every morning ."),
        ("patient", "i take a statin ."),
    )
    assert sorted(m.subject for m in by_type(memories, MemoryType.ADHERENCE)) == [
        "antibiotics",
        "statin",
    ]  # not MeSH's "anti-bacterial agents" and "hydroxymethylglutaryl-coa reductase ..."


def test_tablets_of_a_named_drug_are_that_drug() -> None:
    memories = run(("patient", "i take two tablets of tylenol ."))
    assert [m.subject for m in by_type(memories, MemoryType.ADHERENCE)] == ["acetaminophen"]


def test_sleep_appetite_energy_or_mood_denied_is_a_trouble_with_it() -> None:
    for said, subject in (
        ("no , i'm not able to sleep at all .", "sleep"),
        ("i don't have much of an appetite .", "appetite"),
        ("not much pain , mostly stiffness .", "stiffness"),
    ):
        [memory] = by_type(run(("patient", said)), MemoryType.SYMPTOM)
        assert (memory.subject, memory.attributes["present"]) == (subject, True), said
    assert by_type(run(("patient", "i don't have any fever .")), MemoryType.SYMPTOM) == []


def test_a_clinicians_words_in_a_patient_turn_are_no_memories() -> None:
    said = "you've got some arthritis in there , we call this hallux rigidus ."
    assert run(("patient", said)) == []
    assert by_type(run(("patient", "i've got some arthritis in my toe .")), MemoryType.SYMPTOM)
    # the plan and the problem list as speech recognition writes them ("gon na", "wan na")
    for plan in (
        "we're gon na order some blood work that includes checking your iga antibodies .",
        "and i wan na see you back in two weeks , i'd like to avoid surgery .",
        "for your first problem of sinusitis , it is a very common infection .",
    ):
        assert run(("patient", plan)) == [], plan


def test_reading_out_a_drug_name_without_taking_is_not_adherence() -> None:
    facts = (medication("medication:rxnorm:6809", "Metformin 500 mg"),)
    assert (
        by_type(run(("patient", "Metformin, lisinopril."), facts=facts), MemoryType.ADHERENCE) == []
    )


def test_a_worry_said_not_to_be_there_is_no_concern() -> None:
    for said in ("I'm not worried about it.", "Don't worry doctor."):
        assert by_type(run(("patient", said)), MemoryType.CONCERN) == [], said


def test_a_worried_question_is_a_concern_and_a_stated_wish_a_preference() -> None:
    memories = run(
        ("patient", "I'm scared this lump could be cancer."),
        ("patient", "Please text me rather than call."),
    )
    assert len(by_type(memories, MemoryType.CONCERN)) == 1
    [preference] = by_type(memories, MemoryType.PREFERENCE)
    assert preference.subject == "communication"


def test_what_suits_the_patient_and_what_they_cannot_do_are_preferences() -> None:
    for said, kind in (
        ("Mornings work best for me.", "scheduling"),
        ("I can't come on Tuesdays because of work.", "scheduling"),
        ("I only speak Spanish, I need an interpreter.", "communication"),
    ):
        [preference] = by_type(run(("patient", said)), MemoryType.PREFERENCE)
        assert preference.subject == kind, said


def test_rather_than_is_a_preference_only_of_care_or_contact() -> None:
    said = "i am assuming it was mostly from the old age rather than any nerve problem ."
    assert by_type(run(("patient", said)), MemoryType.PREFERENCE) == []
    [care] = by_type(run(("patient", "pills rather than shots , please .")), MemoryType.PREFERENCE)
    assert care.subject == "care"


def test_a_question_about_the_next_visit_is_logistics_not_a_concern() -> None:
    for asked in ("and when should i see you again ?", "Can I make that appointment today?"):
        assert by_type(run(("patient", asked)), MemoryType.CONCERN) == [], asked
    [worry] = by_type(run(("patient", "will i be able to drive ?")), MemoryType.CONCERN)
    assert worry.evidence[0].quote == "will i be able to drive ?"


def test_an_open_question_about_the_patient_is_a_concern_and_small_talk_is_not() -> None:
    memories = run(
        ("provider", "we'll do the repair under general anesthesia ."),
        ("patient", "Will I be asleep for this?"),
        ("provider", "yes , the whole time ."),
        ("patient", "Is that okay?"),
        ("provider", "and then physical therapy for six weeks ."),
        ("patient", "so will i be able to run again"),
    )
    concerns = by_type(memories, MemoryType.CONCERN)
    assert [c.evidence[0].quote for c in concerns] == [
        "Will I be asleep for this?",
        "so will i be able to run again",
    ]


def test_a_choice_made_together_is_a_care_preference() -> None:
    for said in ("Yes, we'd like to do the surgery.", "We want to go through with the procedure."):
        [care] = by_type(run(("caregiver", said)), MemoryType.PREFERENCE)
        assert care.subject == "care", said
    # "can we do" asks for care as it stands, not as "can i do"
    [asked] = by_type(run(("patient", "Can we do blood work too?")), MemoryType.PREFERENCE)
    assert asked.subject == "care"


def test_a_patient_asking_what_the_doctor_thinks_asks_without_its_mark() -> None:
    [worry] = by_type(
        run(("patient", "so how long do you think it'll take to heal")), MemoryType.CONCERN
    )
    assert worry.evidence[0].quote == "so how long do you think it'll take to heal"


def test_asking_the_clinician_to_do_something_is_no_open_question() -> None:
    for request in ("Can you take a look at my eye?", "Could you also check my feet?"):
        assert by_type(run(("patient", request)), MemoryType.CONCERN) == [], request
    # asking to be told is one
    told = run(("patient", "Can you remind me what operation I had?"))
    assert len(by_type(told, MemoryType.CONCERN)) == 1


def test_asking_what_the_clinician_just_named_is_a_health_question() -> None:
    for term, question in (
        ("You may have picked up C diff in the hospital.", "What is C diff?"),
        ("We could do a lateral capsular release.", "What's that?"),
    ):
        said = run(("provider", term), ("patient", question))
        assert [m.evidence[0].quote for m in by_type(said, MemoryType.CONCERN)] == [question]
    # about what it names, when it names something
    [c_diff] = run(("provider", "It may be C diff."), ("patient", "What is C diff?"))
    assert c_diff.subject == "c diff"
    # only asked of what a clinician said: not a word of the patient's own
    assert by_type(run(("patient", "What's that?")), MemoryType.CONCERN) == []


def test_a_symptom_said_again_is_one_memory_however_it_is_named() -> None:
    """GUIDELINE §2: a statement repeated later is the same memory, its quote added."""
    # parts of a joined complaint, named again by a bare "the pain"
    said = run(
        ("patient", "I have pain in my right neck and shoulder."),
        ("provider", "Is it worse at any time?"),
        ("patient", "The pain is worse at night."),
    )
    assert sorted(m.subject for m in said) == ["neck pain", "shoulder pain"]
    assert all(len(m.evidence) == 3 for m in said)
    # two names of one symptom vocabulary concept (dyspnea)
    [breath] = run(
        ("patient", "I get short of breath on the stairs."),
        ("provider", "Okay."),
        ("patient", "And I have trouble breathing at night."),
    )
    assert [q.quote for q in breath.evidence][-1] == "And I have trouble breathing at night."
    # said, then denied for today: one memory, as first said, with both statements
    back = condition("condition:text:lbp", "Low back pain", ref="Condition/b")
    [pain] = run(
        ("patient", "My back hurts a lot."),
        ("provider", "Any back pain today?"),
        ("patient", "No, not today."),
        facts=(back,),
    )
    assert pain.attributes["present"] is True
    assert [q.quote for q in pain.evidence][-1] == "No, not today."


def test_a_symptom_named_more_precisely_is_the_same_memory_under_the_precise_name() -> None:
    [cough] = run(
        ("patient", "I've had a cough for two weeks."),
        ("provider", "Is it productive?"),
        ("patient", "No, it's a dry cough, mostly at night."),
    )
    assert cough.subject == "dry cough"
    assert len(cough.evidence) == 3
    [back] = run(
        ("patient", "My lower back pain is back."),
        ("provider", "Okay."),
        ("patient", "The back pain gets worse when I sit."),
    )
    assert back.subject == "lower back pain"
    assert back.evidence[-1].quote == "The back pain gets worse when I sit."


def test_a_bare_complaint_beside_several_precise_ones_stays_apart() -> None:
    def said(subject: str, text: str) -> Candidate:
        return Candidate(
            type="symptom", subject=subject, text=text, evidence=[Quote(message_id="m", quote=text)]
        )

    out = Collector()
    out.add(("symptom", "knee pain"), said("knee pain", "my knee hurts"))
    out.add(("symptom", "back pain"), said("back pain", "my back hurts"))
    out.add(("symptom", "pain"), said("pain", "the pain is bad"))
    assert [c.subject for c in out.candidates()] == ["knee pain", "back pain", "pain"]
