"""The offline extractor's general mechanisms, one conversation each (issue 9).

Written from the guideline's categories, not from any evaluation case: a dose or
frequency the patient states against the order's; as-needed use of a scheduled drug;
never picked up; "not anymore"; brand and older drug names (drug identity from the
drug-named-entity-recognition dictionary); a condition said gone; a resolved one back;
and speaker discipline: what the provider plans, examines, reviews or explains is not
the patient's memory, even when the patient says "okay" or "yes" to it.
"""

import pytest

from engine.memories.offline import OfflineExtractor
from engine.memories.relate import relate_all
from engine.memories.verify import checked
from engine.models import Fact
from tests.unit.test_memories_builders import condition, conversation, medication

LISIN = medication(
    "medication:rxnorm:29046", "Lisinopril 20 mg oral tablet", dose="20 mg by mouth once daily"
)
METF = medication(
    "medication:rxnorm:860975", "Metformin 500 MG Oral Tablet", dose="500 mg by mouth twice daily"
)
ALB = medication(
    "medication:rxnorm:745679",
    "Albuterol 90 mcg/actuation inhaler",
    dose="2 puffs every 4 hours as needed",
)
FLUT = medication(
    "medication:rxnorm:896188", "Fluticasone propionate 110 mcg inhaler", dose="2 puffs twice daily"
)
SERT = medication(
    "medication:text:sertraline", "Sertraline 50 mg tablet", dose="50 mg by mouth once daily"
)
HCTZ = medication(
    "medication:text:hctz", "Hydrochlorothiazide 25 mg tablet", dose="25 mg once daily"
)
APAP = medication(
    "medication:text:acet", "Acetaminophen 500 mg tablet", dose="1000 mg every 6 hours"
)
MELOX = medication("medication:text:melox", "Meloxicam 15 mg tablet", dose="15 mg once daily")
PRED_STOP = medication(
    "medication:text:pred", "Prednisone 10 mg tablet", status="stopped", dose="10 mg daily"
)
OMEP = medication(
    "medication:text:omep", "Omeprazole 20 mg capsule", dose="20 mg once daily before breakfast"
)
ATOR = medication("medication:text:ator", "Atorvastatin 40 mg tablet", dose="40 mg at bedtime")
LEVO = medication("medication:text:levo", "Levothyroxine 75 mcg tablet", dose="75 mcg once daily")
HTN = condition("condition:snomed:38341003", "Essential hypertension")
ASTH = condition("condition:snomed:195967001", "Asthma")
MIG = condition("condition:text:migraine", "Migraine")
GERD = condition("condition:text:gerd", "Gastroesophageal reflux disease")
LBP = condition("condition:text:lbp", "Chronic low back pain")
DEP = condition("condition:text:dep", "Major depressive disorder")
KNEE = condition("condition:text:knee", "Osteoarthritis of right knee")
ECZ_RES = condition("condition:text:ecz", "Eczema", status="resolved")
GOUT = condition("condition:text:gout", "Gout")
DM = condition("condition:snomed:44054006", "Type 2 diabetes mellitus")
FURO = medication("medication:text:furo", "Furosemide 40 mg tablet", dose="40 mg once daily")
CHF = condition("condition:text:chf", "Congestive heart failure")

Turns = list[tuple[str, str]]
Want = tuple[str, str, str] | None

CASES: list[tuple[str, Turns, list[Fact], Want]] = [
    (
        "a plan is not adherence, nor a conflict",
        [
            ("provider", "any questions about the lisinopril ?"),
            ("patient", "no . i'm gon na stop taking the lisinopril once my pressure is down ."),
        ],
        [LISIN, HTN],
        None,
    ),
    (
        "a provider's utterance interrupted by an acknowledgement is one",
        [
            ("provider", "and i see you had the gout flare in march-"),
            ("patient", "mm-hmm ."),
            ("provider", "so that was rough . have you been doing well since then ?"),
            ("patient", "yeah , no trouble at all since the spring ."),
        ],
        [GOUT],
        ("symptom", "gout", "enriches"),
    ),
    (
        "a confirmation after what it confirms",
        [
            ("provider", "how are you doing on the metformin ?"),
            ("patient", "good ."),
            ("provider", "and you take it every day ?"),
            ("patient", "every single day , yes ."),
        ],
        [METF, DM],
        ("adherence", "metformin", "corroborates"),
    ),
    (
        "a comparison says how a recorded condition is now",
        [
            ("provider", "is the back pain still keeping you up at night ?"),
            ("patient", "not like it used to ."),
        ],
        [LBP],
        ("symptom", "back pain", "enriches"),
    ),
    (
        "a yes after a false start",
        [
            ("provider", "and do you have any blood in your urine ?"),
            ("patient", "um , uh , it ... i think i do . it looks a little off-color ."),
        ],
        [condition("condition:text:stone", "Kidney stone", status="resolved")],
        ("symptom", "blood in urine", "conflicts"),
    ),
    (
        "unnamed medicine of the condition asked about, on a schedule of its own",
        [
            ("provider", "let's talk about your blood pressure . how has that been ?"),
            (
                "patient",
                "it's been okay . i take my pills every morning . "
                "i do eat salty food once in a while though .",
            ),
        ],
        [LISIN, HTN, SERT],
        ("adherence", "pill", "corroborates"),
    ),
    (
        "dose differs words",
        [
            ("provider", "how are you taking the lisinopril ?"),
            ("patient", "i take ten milligrams once a day ."),
        ],
        [LISIN, HTN],
        ("adherence", "lisinopril", "conflicts"),
    ),
    (
        "dose differs digits",
        [
            ("provider", "what dose of metformin are you on ?"),
            ("patient", "i'm taking 1000 mg twice a day"),
        ],
        [METF, DM],
        ("adherence", "metformin", "conflicts"),
    ),
    (
        "frequency differs",
        [
            ("provider", "and the metformin ?"),
            ("patient", "i only take it once a day in the morning ."),
        ],
        [METF, DM],
        ("adherence", "metformin", "conflicts"),
    ),
    (
        "prn of scheduled",
        [
            ("provider", "are you using the fluticasone inhaler ?"),
            ("patient", "only when i need it , like when i'm wheezing ."),
        ],
        [FLUT, ASTH],
        ("adherence", "fluticasone", "conflicts"),
    ),
    (
        "prn of scheduled 2",
        [("patient", "i just take the sertraline when i feel really down , not every day .")],
        [SERT, DEP],
        ("adherence", "sertraline", "conflicts"),
    ),
    (
        "never picked up",
        [
            ("provider", "did you start the atorvastatin ?"),
            ("patient", "no , i never picked it up from the pharmacy ."),
        ],
        [ATOR],
        ("adherence", "atorvastatin", "conflicts"),
    ),
    (
        "taking an as-needed drug says when it is used",
        [
            ("provider", "what have you taken for the wheezing ?"),
            ("patient", "i took some albuterol ."),
        ],
        [ALB, ASTH],
        ("adherence", "albuterol", "enriches"),
    ),
    (
        "taking a scheduled drug is taking it as prescribed",
        [("patient", "i take my fluticasone inhaler every morning and night .")],
        [FLUT, ASTH],
        ("adherence", "fluticasone", "corroborates"),
    ),
    (
        "never filled",
        [("patient", "i never got the omeprazole filled , it was too expensive .")],
        [OMEP, GERD],
        ("adherence", "omeprazole", "conflicts"),
    ),
    (
        "not anymore inhaler",
        [
            ("provider", "are you still using your albuterol inhaler ?"),
            ("patient", "not anymore ."),
        ],
        [ALB, ASTH],
        ("adherence", "albuterol", "conflicts"),
    ),
    (
        "no longer take",
        [
            (
                "patient",
                "i don't take the hydrochlorothiazide anymore , it made me pee all the time .",
            )
        ],
        [HCTZ, HTN],
        ("adherence", "hydrochlorothiazide", "conflicts"),
    ),
    (
        "brand name",
        [
            ("provider", "how about the zoloft ?"),
            ("patient", "i stopped the zoloft about a month ago ."),
        ],
        [SERT, DEP],
        ("adherence", "sertraline", "conflicts"),
    ),
    (
        "brand name prilosec",
        [("patient", "i've been taking my prilosec every morning like you said .")],
        [OMEP, GERD],
        ("adherence", "omeprazole", "corroborates"),
    ),
    (
        "older name",
        [("patient", "i take the tylenol , two of them every six hours .")],
        [APAP],
        ("adherence", "acetaminophen", "corroborates"),
    ),
    (
        "brand mobic",
        [("patient", "the mobic , i ran out of it last week .")],
        [MELOX, KNEE],
        ("adherence", "meloxicam", "conflicts"),
    ),
    (
        "synthroid",
        [
            ("provider", "are you taking your synthroid ?"),
            ("patient", "yes , every morning on an empty stomach ."),
        ],
        [LEVO],
        ("adherence", "levothyroxine", "corroborates"),
    ),
    (
        "symptom gone active",
        [
            ("provider", "how's your back ?"),
            ("patient", "my back pain is completely gone since i started swimming ."),
        ],
        [LBP],
        ("symptom", "back pain", "conflicts"),
    ),
    (
        "migraines gone",
        [("patient", "i haven't had a migraine in over a year , they just went away .")],
        [MIG],
        ("symptom", "migraine", "conflicts"),
    ),
    (
        "heartburn gone, GERD active: enriches",
        [("provider", "any more heartburn ?"), ("patient", "no , the heartburn is gone .")],
        [GERD],
        ("symptom", "heartburn", "enriches"),
    ),
    (
        "resolved recurs",
        [("patient", "the eczema came back on my hands last month , really itchy .")],
        [ECZ_RES],
        ("symptom", "eczema", "conflicts"),
    ),
    (
        "taking stopped",
        [("patient", "i'm still taking the prednisone , ten milligrams a day .")],
        [PRED_STOP],
        ("adherence", "prednisone", "conflicts"),
    ),
    (
        "missed doses",
        [("patient", "i forget the metformin a couple times a week .")],
        [METF, DM],
        ("adherence", "metformin", "enriches"),
    ),
    (
        "as prescribed",
        [
            ("provider", "are you taking the lisinopril every day ?"),
            ("patient", "yes , every single day ."),
        ],
        [LISIN, HTN],
        ("adherence", "lisinopril", "corroborates"),
    ),
    (
        "symptom enriches",
        [("patient", "i get these migraines about twice a week , usually in the afternoon .")],
        [MIG],
        ("symptom", "migraine", "enriches"),
    ),
    (
        "wheezing asthma",
        [("patient", "i've been wheezing at night a lot this week .")],
        [ASTH],
        ("symptom", "wheez", "enriches"),
    ),
    (
        "knee pain",
        [("patient", "my right knee hurts when i climb stairs .")],
        [KNEE],
        ("symptom", "knee", "enriches"),
    ),
    (
        "gout gone",
        [("patient", "the gout went away after a few days .")],
        [GOUT],
        ("symptom", "gout", "conflicts"),
    ),
    (
        "half dose",
        [("patient", "i cut the lisinopril in half because it made me dizzy .")],
        [LISIN, HTN],
        ("adherence", "lisinopril", "conflicts"),
    ),
    (
        "quit",
        [("patient", "i quit the metformin , it gave me diarrhea .")],
        [METF, DM],
        ("adherence", "metformin", "conflicts"),
    ),
    (
        "provider plan not memory",
        [
            ("provider", "i want you to start taking metformin 500 mg twice a day ."),
            ("patient", "okay ."),
        ],
        [METF, DM],
        None,
    ),
    (
        "provider exam not memory",
        [
            (
                "provider",
                "on exam , there is wheezing in both lungs and tenderness of the right knee .",
            ),
            ("patient", "okay ."),
        ],
        [ASTH, KNEE],
        None,
    ),
    (
        "provider ROS not memory",
        [
            (
                "provider",
                "review of systems is positive for headache and negative for chest pain .",
            ),
            ("patient", "mm-hmm ."),
        ],
        [MIG],
        None,
    ),
    (
        "provider explains",
        [
            ("provider", "so the lisinopril can cause a dry cough in some people ."),
            ("patient", "i see ."),
        ],
        [LISIN, HTN],
        None,
    ),
    (
        "what another drug is taken for is no effect of this one",
        [
            ("provider", "what medications do you take ?"),
            ("patient", "i take lisinopril daily and then tylenol for occasional pain ."),
        ],
        [LISIN, HTN],
        ("adherence", "lisinopril", "corroborates"),
    ),
    (
        "how often a scheduled drug is taken, asked",
        [
            ("provider", "how often do you take the lisinopril ?"),
            ("patient", "every other day ."),
        ],
        [LISIN, HTN],
        ("adherence", "lisinopril", "conflicts"),
    ),
]
PROVIDER_ONLY: list[tuple[str, Turns, list[Fact]]] = [
    (
        "a test result read out + mm-hmm",
        [
            (
                "provider",
                "so , this is the echocardiogram , and it also shows that leaky valve , the "
                "mitral regurgitation that , that you have , okay ?",
            ),
            ("patient", "mm-hmm ."),
        ],
        [CHF, FURO],
    ),
    (
        "plan + mm-hmm",
        [
            (
                "provider",
                "so i want you to continue the lisinopril 20 mg daily and we'll recheck your "
                "labs , okay ?",
            ),
            ("patient", "mm-hmm ."),
        ],
        [LISIN, HTN],
    ),
    (
        "exam + yes",
        [
            (
                "provider",
                "on your exam today i do see some swelling in your ankles , and your lungs sound "
                "clear , alright ?",
            ),
            ("patient", "yes ."),
        ],
        [CHF, FURO],
    ),
    (
        "ROS dictation",
        [
            (
                "provider",
                "review of systems : positive for shortness of breath , negative for chest pain "
                ", positive for ankle swelling .",
            ),
            ("patient", "right ."),
        ],
        [CHF],
    ),
    (
        "assessment + okay",
        [
            (
                "provider",
                "for your asthma , it sounds like it's well controlled , so we'll keep you on "
                "the fluticasone two puffs twice a day .",
            ),
            ("patient", "okay , sounds good ."),
        ],
        [ASTH, FLUT],
    ),
    (
        "exam maneuver + yes",
        [
            ("provider", "alright , let's go ahead and do a quick physical exam ."),
            ("patient", "okay ."),
            ("provider", "when i press on the inside of your knee , does that hurt ?"),
            ("patient", "yes ."),
            ("provider", "and when i bend it like this , any pain ?"),
            ("patient", "no ."),
        ],
        [KNEE],
    ),
    (
        "drug allergy question + no",
        [
            ("provider", "and do you have any allergies to medicines ?"),
            ("patient", "no , i do n't have any allergies ."),
        ],
        [condition("condition:text:ar", "Seasonal allergic rhinitis")],
    ),
    (
        "allergy list question + yes",
        [
            ("provider", "any known allergies ?"),
            ("patient", "oh yes , i cannot take sulfa drugs ."),
        ],
        [condition("condition:text:ar", "Seasonal allergic rhinitis")],
    ),
    (
        "explains + yeah",
        [
            (
                "provider",
                "the metformin can cause some stomach upset and diarrhea at first , that usually "
                "gets better .",
            ),
            ("patient", "yeah ."),
        ],
        [METF, DM],
    ),
]


def test_answers_count_again_once_the_exam_is_over() -> None:
    turns: Turns = [
        ("provider", "let me examine you now ."),
        ("provider", "does it hurt when i press here ?"),
        ("patient", "yes ."),
        (
            "provider",
            "okay , so my assessment is osteoarthritis of the knee . any knee pain at night ?",
        ),
        ("patient", "yes , most nights ."),
    ]
    memories, _ = _run(turns, [KNEE])
    assert memories == [("symptom", "knee pain")]


def test_a_complaint_without_its_part_takes_the_part_asked_about() -> None:
    turns: Turns = [
        ("provider", "so how is that right knee doing ?"),
        ("patient", "not great . i get a lot of swelling , mostly at night ."),
    ]
    memories, edges = _run(turns, [KNEE])
    assert ("symptom", "knee swelling") in memories
    assert [e for e in edges if e[1] == "knee swelling"]


def test_a_complaint_asked_about_after_joined_parts_is_each_parts() -> None:
    turns: Turns = [
        ("provider", "you're here about your right knee and hip pain ."),
        ("patient", "that's right ."),
        ("provider", "how has the pain been this month ?"),
        ("patient", "worse , especially on the stairs ."),
    ]
    hip = condition("condition:text:hip", "Osteoarthritis of right hip")
    facts = [KNEE, hip, DM]
    extractor = OfflineExtractor()
    messages = conversation(*turns)
    extraction = extractor.extract(messages, facts)
    accepted = checked(extraction.candidates, messages, extractor.name, extractor.version)
    # one memory per part, sharing the quotes, each linked to its own condition
    subjects = {m.memory_id: m.subject for m, _ in accepted}
    assert sorted(subjects.values()) == ["hip pain", "knee pain"]
    quotes = {tuple(e.quote for e in m.evidence) for m, _ in accepted}
    assert len(quotes) == 1
    linked = {(subjects[r.memory_id], r.fact_key) for r in relate_all(accepted, facts, "x")}
    assert linked == {("knee pain", KNEE.fact_key), ("hip pain", hip.fact_key)}


def test_a_part_only_complaint_alone_is_no_symptom() -> None:
    turns: Turns = [
        ("provider", "do those symptoms get better when you stand up ?"),
        ("patient", "yes , they do ."),
    ]
    assert _run(turns, [KNEE]) == ([], [])


def _run(
    turns: Turns, facts: list[Fact]
) -> tuple[list[tuple[str, str]], list[tuple[str, str, str]]]:
    extractor = OfflineExtractor()
    messages = conversation(*turns)
    extraction = extractor.extract(messages, facts)
    accepted = checked(extraction.candidates, messages, extractor.name, extractor.version)
    subjects = {m.memory_id: (m.type.value, m.subject) for m, _ in accepted}
    edges = [(*subjects[r.memory_id], r.type.value) for r in relate_all(accepted, facts, "x")]
    return list(subjects.values()), edges


@pytest.mark.parametrize(("name", "turns", "facts", "want"), CASES, ids=[c[0] for c in CASES])
def test_mechanism(name: str, turns: Turns, facts: list[Fact], want: Want) -> None:
    memories, edges = _run(turns, facts)
    if want is None:
        assert memories == []
    else:
        kind, subject, edge = want
        assert any(t == kind and subject in s and e == edge for t, s, e in edges), edges


@pytest.mark.parametrize(
    ("name", "turns", "facts"), PROVIDER_ONLY, ids=[c[0] for c in PROVIDER_ONLY]
)
def test_provider_words_are_not_memories(name: str, turns: Turns, facts: list[Fact]) -> None:
    assert _run(turns, facts) == ([], [])


def test_a_hedged_denial_denies() -> None:
    turns: Turns = [
        ("provider", "any numbness in your foot ?"),
        ("patient", "no , and i do n't think i've had any tingling either ."),
    ]
    foot = condition("condition:text:foot", "Right foot injury", status="resolved")
    _, edges = _run(turns, [foot])
    assert ("symptom", "foot tingling", "conflicts") not in edges
    assert ("symptom", "foot tingling", "corroborates") in edges  # absent, as recorded


def test_pain_said_with_what_brings_it_on_is_named_as_the_vocabulary_names_it() -> None:
    turns: Turns = [
        ("provider", "what brings you in ?"),
        ("patient", "i have pain when i swallow , down in my chest ."),
        ("provider", "any pain while you're urinating ?"),
        ("patient", "yes , a little ."),
    ]
    uti = condition("condition:text:uti", "Urinary tract infection")
    memories, edges = _run(turns, [uti])
    assert ("symptom", "painful swallowing") in memories
    assert ("symptom", "painful urination", "enriches") in edges


def test_a_lay_complaint_is_known_when_the_clinician_asks_it() -> None:
    turns: Turns = [
        ("provider", "any burning when you pee ?"),
        ("patient", "no ."),
    ]
    uti = condition("condition:text:uti", "Urinary tract infection")
    assert _run(turns, [uti])[1] == [("symptom", "painful urination", "enriches")]


def test_a_complaint_said_of_joined_parts_is_every_parts() -> None:
    for said, parts in (
        ("last week my right shoulder and neck started to hurt .", ["neck", "shoulder"]),
        ("i have a lot of pain in my back and knees .", ["back", "knee"]),
        ("my back hurts and my knee is fine .", ["back"]),
    ):
        memories, _ = _run([("patient", said)], [])
        assert sorted(s for _, s in memories) == [f"{p} pain" for p in parts], said


def test_complaints_joined_about_one_part_are_each_a_memory_of_it() -> None:
    # GUIDELINE §2: "headaches and dizziness" is two memories; so is "pain and stiffness"
    for said, want in (
        ("i have pain and stiffness in my knee every morning .", ["knee pain", "knee stiffness"]),
        ("my knee is stiff and swollen .", ["knee stiffness", "knee swelling"]),
        (
            "pain , swelling , and stiffness in my knee .",
            ["knee pain", "knee stiffness", "knee swelling"],
        ),
        ("my knee hurts and swelling in my ankle .", ["ankle swelling", "knee pain"]),
        # a complaint that says nothing of its own beside one that does
        ("i get pain and discomfort in my knee .", ["knee pain"]),
    ):
        memories, edges = _run([("provider", "how is the knee ?"), ("patient", said)], [KNEE])
        assert sorted(s for _, s in memories) == want, said
        assert ("symptom", "knee pain", "enriches") in edges or "knee pain" not in want, said


def test_a_habit_is_a_memory_only_about_a_recorded_condition() -> None:
    # social history is not a clinical state (GUIDELINE §2) unless it is the status of a
    # condition on record
    turns: Turns = [
        ("provider", "do you smoke or drink ?"),
        ("patient", "i smoke about half a pack a day and i drink a beer on weekends ."),
    ]
    assert _run(turns, [])[0] == []
    tobacco = condition("condition:text:tob", "Tobacco use disorder")
    memories, edges = _run(turns, [tobacco])
    assert memories == [("symptom", "smoking")]
    assert edges == [("symptom", "smoking", "enriches")]


def test_a_condition_named_by_its_site_is_the_complaint_there() -> None:
    # "lumbar" is the low back, "rotator cuff" the shoulder: the complaint at that site
    # is the condition's own, as "knee pain" is the "osteoarthritis of knee"
    said: Turns = [("provider", "how is the back ?"), ("patient", "my back pain is worse .")]
    ddd = condition("condition:text:ddd", "Degenerative disc disease, lumbar spine")
    assert _run(said, [ddd])[1] == [("symptom", "back pain", "enriches")]
    healed = condition("condition:text:ls", "Lumbar strain", status="resolved")
    assert _run(said, [healed])[1] == [("symptom", "back pain", "conflicts")]
    shoulder: Turns = [("patient", "my shoulder hurts when i reach up .")]
    cuff = condition("condition:text:rc", "Rotator cuff tendinitis, right")
    assert _run(shoulder, [cuff])[1] == [("symptom", "shoulder pain", "enriches")]
    # a complaint elsewhere is not the site's: numb feet are not the carpal tunnel
    feet: Turns = [("patient", "my feet are numb .")]
    tunnel = condition("condition:text:ct", "Carpal tunnel syndrome, left")
    assert _run(feet, [tunnel])[1] == []
    chest: Turns = [("provider", "any chest pain ?"), ("patient", "no .")]
    mi = condition("condition:text:mi", "Acute myocardial infarction, s/p stent")
    assert _run(chest, [mi])[1] == [("symptom", "chest pain", "enriches")]


def test_an_inflammation_named_by_its_organ_is_that_organs_complaint() -> None:
    # "otitis" is the ear's, "pharyngitis" the throat's: a denied earache bears on it
    otitis = condition("condition:text:om", "Otitis media")
    ear: Turns = [("provider", "any ear pain ?"), ("patient", "no .")]
    assert _run(ear, [otitis])[1] == [("symptom", "ear pain", "enriches")]
    throat = condition("condition:text:ph", "Acute viral pharyngitis")
    sore: Turns = [("patient", "my throat is still sore .")]
    assert _run(sore, [throat])[1] == [("symptom", "throat pain", "enriches")]
    # an eye disease is what the patient sees
    cataract = condition("condition:text:cat", "Senile cataract of both eyes")
    vision: Turns = [("patient", "my vision has been blurry .")]
    assert [e for _, _, e in _run(vision, [cataract])[1]] == ["enriches"]


def test_a_lay_part_and_the_vocabularys_anatomical_word_name_one_complaint() -> None:
    # "belly", "stomach" and "abdomen" are where HPO's abdominal pain hurts: said in turn,
    # they are one memory (GUIDELINE §2: a statement repeated later is the same memory)
    turns: Turns = [
        ("provider", "what brings you in ?"),
        ("patient", "i have pain in my belly ."),
        ("provider", "when is it worse ?"),
        ("patient", "the stomach pain is worse at night ."),
    ]
    assert _run(turns, [])[0] == [("symptom", "belly pain")]
    swollen: Turns = [("patient", "my tummy is swollen ."), ("patient", "my abdomen is bloated .")]
    assert len(_run(swollen, [])[0]) == 1
    # and bears on what the vocabulary's word is a sign of
    ibs = condition("condition:text:ibs", "Irritable bowel syndrome")
    tummy: Turns = [("patient", "my tummy hurts after meals .")]
    assert _run(tummy, [ibs])[1] == [("symptom", "tummy pain", "enriches")]
