"""Replies that only make sense with the provider's question: yes/no and status answers.

- "Any swelling in your legs?" / "No." → a symptom memory quoting both turns.
- "Are you still on an iron supplement?" / "Uh yes." → adherence, as prescribed.
- "In terms of your gout, how are you doing with that?" / "The medication helped it go
  away." → a symptom memory about the condition the provider brought up (the topic),
  when the record holds it and the reply says how it is going but does not name it.
"""

import re

from engine.memories import cues
from engine.memories.adherence import QUESTION_VERBS, key, resolve, specific
from engine.memories.context import Assertion
from engine.memories.cues import Polarity
from engine.memories.entities import content_words
from engine.memories.exchange import Sentence
from engine.memories.extractor import Quote
from engine.memories.mentions import MEDS, SYMPTOMISH, Mention
from engine.memories.text import words
from engine.memories.turn import Turn

_SIDE_EFFECT = ("side effect", "issues", "problems", "trouble")
# How many opening sentences of a reply may carry its status ("i'm doing well . the
# medication helped it go away .").
STATUS_SENTENCES = 3
# How many opening sentences of a reply say what its yes or no means.
REPLY_SENTENCES = 2
# A reply to a statement this short only agrees or disagrees with it.
CONFIRMATION_WORDS = 8
# A reply longer than this says more than yes or no.
BARE_ANSWER_WORDS = 4


def read_answer(turn: Turn, answer: Sentence, pol: Polarity) -> None:
    """Memories from a reply to the provider's questions (see the module docstring)."""
    assert turn.asked is not None
    last = turn.asked.last
    # "any medication for your asthma?" asks about a treatment, not the asthma
    about_meds = last is not None and any(m.kind in MEDS for m, _ in last.mentions)
    # "on exam i see some swelling in your ankles , alright ?" / "yes": agreeing with a
    # finding is not the patient saying it (speaker discipline)
    finding = last is not None and _finding(turn, last)
    # "do you remember what caused the pain?" / "i don't": the pain is not denied
    recall = last is not None and cues.asks_recall(last.text)
    if last is not None and pol is not Polarity.NONE and not (about_meds or finding or recall):
        for question, m, a in _denied_together(turn, answer, pol):
            # "a history of anaphylaxis , is that correct?" / "yes": the record, confirmed
            if m.kind in SYMPTOMISH and not (
                a.family or a.hypothetical or a.historical or question.about_a_drug(m, turn.lex)
            ):
                _symptom_answer(turn, answer, pol, question, m)
    if last is not None and pol is Polarity.NONE and not about_meds and not finding:
        _wh_answer(turn, answer, last)
    if pol in {Polarity.YES, Polarity.NO} and not any(m.kind in MEDS for m, _ in answer.mentions):
        for question in turn.asked.questions:
            # "would you like to try a different medication?" / "yes": a choice, not adherence
            offer = cues.has_any(question.text, turn.lex.offer_questions)
            if set(words(question.text)) & QUESTION_VERBS and not (
                offer or _finding(turn, question)
            ):
                _med_answer(turn, answer, pol, question)
    _topic_answer(turn, pol)


def _denied_together(
    turn: Turn, answer: Sentence, pol: Polarity
) -> list[tuple[Sentence, Mention, Assertion]]:
    """The mentions a reply answers: the last question's, and with a no, those of the
    questions right before it too ("how about any abdominal pain ? fever , chills ?" /
    "none of that"). A yes to such a list does not say which, and when the reply names
    a complaint of its own ("headaches , blurry vision or weakness?" / "yes , i have
    migraines"), the yes is that complaint. A no answers no "how": "how are you doing
    with that ? did you buy the cuff ?" / "no"."""
    assert turn.asked is not None and turn.asked.last is not None
    last = turn.asked.last
    listed = [m for m, _ in last.mentions if m.kind in SYMPTOMISH]
    if pol is Polarity.YES and len(listed) > 1 and _own_complaint(answer):
        return []
    run = [q for q in turn.asked.last_run() if q is last or not cues.asks_how(q.text)]
    asked = run if pol is Polarity.NO else [last]
    return [(question, m, a) for question in asked for m, a in question.mentions]


def _own_complaint(answer: Sentence) -> bool:
    return any(
        m.kind in SYMPTOMISH and not (a.negated or a.family or a.hypothetical)
        for m, a in answer.mentions
    )


def read_confirmation(turn: Turn, answer: Sentence, pol: Polarity) -> None:
    """ "And Bactroban ointment is three times a day for your bug bites." / "Yep.": a short
    yes (or no) to the provider stating the patient's regimen confirms (or denies) it."""
    if turn.asked is None or pol not in {Polarity.YES, Polarity.NO}:
        return
    if len(words(answer.text)) > CONFIRMATION_WORDS:
        return
    stated = turn.asked.sentences[-1] if turn.asked.sentences else None
    if stated is None or not cues.states_regimen(stated.text) or _finding(turn, stated):
        return  # "we can prescribe you meloxicam 15 mg once a day" / "mm-hmm": the plan
    named = [m for m, _ in turn.asked.meds_for(stated) if specific(m)]
    if named or (turn.recent_med is not None and turn.asked.points_back(stated)):
        _med_answer(turn, answer, pol, stated)


def _symptom_answer(
    turn: Turn, answer: Sentence, pol: Polarity, question: Sentence, m: Mention
) -> None:
    subject = turn.with_part(m, answer=answer.text)  # "yes , in my left knee"
    # "any pain with swallowing?" / "yes, i get some chest pain": the pain it asked about
    felt = m.extra.get("complaint", "")
    if any(_covered(turn, s) for s in (m.subject, subject, felt) if s):
        return
    present = pol in {Polarity.YES, Polarity.BAD, Polarity.LESS}
    # "able to walk without pain?" / "yes": no pain; "did the tingling go away?" / "yes"
    asks_gone = bool(_ASKS_GONE.search(question.text.lower()))
    if pol in {Polarity.YES, Polarity.NO} and (_without(question, m) or asks_gone):
        present = not present
    # the reply's own words about it over its yes or no: "no fever , right?" / "yeah , no
    # fever or anything"
    said = [
        (x, a)
        for x, a in answer.mentions
        if x.canonical == m.canonical and not (a.family or a.historical or a.hypothetical)
    ]
    if said and said[0][0].subject != subject:
        return  # "blood pressure problems?" / "yes , i have hypertension": the reply's own
    if present and _names_its_own(answer, subject):
        return  # "any other pain?" / "sometimes i have back pain": the reply's own
    if said:
        present = not said[0][1].negated
    if not present and not turn.related(subject, f"{question.text} {answer.text}"):
        return
    turn.covered.add(subject)
    details = cues.details(answer.text) if _says_more(answer) else []
    # "how is your gout?" / "i'm doing well . the medication helped it go away ."
    gone = [s for s in _opening(turn) if cues.gone(s.text)]
    went = (bool(gone) or asks_gone) and not present and not cues.improving(turn.text)
    quotes = [turn.quote(s.start, s.end) for s in [answer, *gone]]
    turn.add(
        ("symptom", subject),
        "symptom",
        subject,
        answer.text,
        [*_unique(quotes), turn.asked_quote(question)],
        {
            "present": present,
            "gone": went,
            "details": details,
            "canonical": m.canonical,
            "answer": pol.value,
            "via": "answer" if subject == m.subject else "asked-part",
        },
    )


def _names_its_own(answer: Sentence, subject: str) -> bool:
    """The reply names the complaint asked about at a body part of its own."""
    complaint = subject.split()[-1]
    return any(
        x.kind == "body" and x.subject != subject and x.subject.split()[-1] == complaint
        for x, a in answer.mentions
        if not (a.negated or a.family or a.historical or a.hypothetical)
    )


# "did the tingling go away?": a yes says it is not there (a question framed with "any
# more", "you do not have any more nausea?", is answered as asked)
_ASKS_GONE = re.compile(
    r"\b(?:go away|gone|went away|resolved?|clear(?:ed)? up|disappear(?:ed)?)\b"
)
# "are you able to walk without any pain or discomfort?": a yes says it is not there
_WITHOUT = re.compile(r"\bwithout(?: \w+){0,3}\W*$")


def _without(question: Sentence, m: Mention) -> bool:
    """The question asks about doing something without what `m` names."""
    return bool(_WITHOUT.search(question.text[: m.start - question.start]))


def _wh_answer(turn: Turn, answer: Sentence, question: Sentence) -> None:
    """ "how's your pain now?" / "manageable , i guess .", "how long have you had the
    cough?" / "about a week": a statement answering how, when, where or what about a
    symptom the question names is about that symptom (its body part taken from the
    question or the turns before, "neck and back pain"); so is a reply that only says
    where ("does the pain go anywhere?" / "down my left leg .")."""
    if answer.question or not (cues.asks_wh(question.text) or _says_where(turn, answer)):
        return
    if any(m.kind in SYMPTOMISH or m.kind in MEDS for m, _ in answer.mentions):
        return  # the reply names what it is about
    for m, a in question.mentions:
        if m.kind not in SYMPTOMISH or a.family or a.hypothetical or a.negated:
            continue
        if question.about_a_drug(m, turn.lex) or _covered(turn, m.subject):
            continue
        subject = turn.with_part(m, answer=answer.text)
        gone = cues.gone(answer.text) and not cues.improving(turn.text)
        present = not (gone or cues.absent(answer.text))
        turn.covered.add(subject)
        turn.add(
            ("symptom", subject),
            "symptom",
            subject,
            answer.text,
            [turn.quote(answer.start, answer.end), turn.asked_quote(question)],
            {
                "present": present,
                "gone": gone,
                "details": cues.details(answer.text),
                "canonical": m.canonical,
                "condition_term": m.kind == "condition",
                "via": "answer",
            },
        )


# Not a reply saying where: a denial ("on my body no not really"), a posture ("laying on my
# side helps"), or the clinician's words ("do you have a podiatrist for your foot exams").
_NOT_WHERE = re.compile(
    r"\b(?:no|not|n't|never|nothing|you|your|lay|laying|lie|lying|sleep|sleeping|sit|sitting"
    r"|stand|standing)\b"
)


def _says_where(turn: Turn, answer: Sentence) -> bool:
    """The reply names a body part, and neither denies, names a posture nor speaks of
    "your": it says where the complaint asked about is ("does the pain go anywhere?" /
    "down my left leg .")."""
    if _NOT_WHERE.search(answer.text.lower()):
        return False
    return bool(turn.parts(answer.text))


def _med_answer(turn: Turn, answer: Sentence, pol: Polarity, question: Sentence) -> None:
    assert turn.asked is not None
    if pol is Polarity.NO and cues.about_earlier_use(question.text):
        return  # "have you been on that before?" / "no, that's new"
    behaviour, inferred = _answered_behaviour(turn, answer, pol, question)
    current = cues.current_use(_reply(turn)) or (
        pol is Polarity.YES and cues.current_use(question.text)
    )
    effect = any(m.kind in SYMPTOMISH for s in turn.parsed[:2] for m, _ in s.mentions)
    why = cues.reason(_reply(turn)) if behaviour in {"stopped", "never_started"} else None
    targets = turn.asked.meds_for(question)
    if not targets and turn.recent_med is not None and turn.asked.points_back(question):
        targets = [(turn.recent_med, Assertion())]
    for mention, a in targets:
        if a.hypothetical or not specific(mention) and _others(turn, mention):
            continue
        for m, how in resolve(turn, mention):
            skip = inferred and behaviour != "as_prescribed"
            if (skip or behaviour == "never_started") and not turn.on_record(m):
                continue  # "ever tried clindamycin?" / "no": nothing to adhere to
            turn.add(
                key(m),
                "adherence",
                m.subject,
                answer.text,
                [turn.quote(answer.start, answer.end), turn.asked_quote(question)],
                {
                    "behavior": behaviour,
                    "drugs": list(m.drugs),
                    "class_drugs": list(m.class_drugs),
                    "plural": False,
                    "current": current,
                    **({"reason": why} if why else {}),
                    "via": "answer-" + (how or "named"),
                    "details": ["effect"] if effect else [],
                },
            )


def _answered_behaviour(
    turn: Turn, answer: Sentence, pol: Polarity, question: Sentence
) -> tuple[str, bool]:
    """What a yes or no says about taking the drug, and whether only the yes/no said it."""
    said, _ = cues.behaviour_phrase(_reply(turn), turn.lex)
    if said not in {"as_prescribed", "as_needed"}:
        return said, False
    if pol is Polarity.NO and cues.asks_filled(question.text):
        return "never_started", True  # "did you pick up the metformin?" / "not yet"
    asked, _ = cues.behaviour_phrase(question.text, turn.lex)
    if asked not in {"as_prescribed", "as_needed"}:  # "have you missed any doses?"
        return (asked if pol is Polarity.YES else "as_prescribed"), True
    if pol is Polarity.YES or any(w in question.text.lower() for w in _SIDE_EFFECT):
        return "as_prescribed", True
    if cues.about_regularity(question.text):  # "taking it every day?" / "no"
        return "missed_doses", True
    return "stopped", True


def _topic_answer(turn: Turn, pol: Polarity) -> None:
    """A status reply about the recorded condition the provider asked about."""
    topic = _topic(turn, pol)
    status = _status(turn, pol) if topic is not None else []
    if topic is None or turn.question is None or not status:
        return
    gone = any(cues.gone(s.text) for s in status) and not cues.improving(turn.text)
    assert turn.asked is not None
    denied = pol is Polarity.NO and not turn.asked.follow_up()
    absent = gone or denied or any(cues.absent(s.text) for s in status)
    details = {d for s in status for d in cues.details(s.text)} | {"status"}
    turn.covered.add(topic.subject)
    turn.add(
        ("symptom", topic.subject),
        "symptom",
        topic.subject,
        " ".join(s.text for s in status),
        [*(turn.quote(s.start, s.end) for s in status), turn.asked_quote(turn.question)],
        {
            "present": not absent,
            "gone": gone,
            "details": sorted(details),
            "canonical": topic.canonical,
            "condition_term": topic.kind == "condition",
            "answer": pol.value,
            "via": "topic",
        },
    )


def _topic(turn: Turn, pol: Polarity) -> Mention | None:
    """The asked condition, unless the reply is about something else."""
    assert turn.asked is not None
    topic = turn.asked.topic(turn.conditions_of)
    if topic is None or _covered(turn, topic.subject) or turn.question is None:
        return None
    if any(m.kind in MEDS for m, _ in turn.question.mentions):
        return None  # "any medication for your asthma?" / "no": about a treatment
    if turn.question.asks_about_a_drug(topic, turn.lex):
        return None  # "any known allergies?" / "yes": about the allergy record
    if _finding(turn, turn.question):
        return None  # "on exam i see swelling , alright?" / "yes": the clinician's words
    about = turn.conditions_of(topic.subject)
    if any(turn.conditions_of(c) & about for c in turn.covered):
        return None  # the reply names its own symptoms of the condition
    opening = _opening(turn)
    if pol is Polarity.NONE and opening and any(m.kind in MEDS for m, _ in opening[0].mentions):
        return None  # "i've been taking the meds": the reply is about the treatment
    return topic


def _finding(turn: Turn, question: Sentence) -> bool:
    """The provider examines ("does that hurt?" while pressing), reports a finding or
    advises ("try not to take any ibuprofen , okay ?")."""
    return turn.examining or cues.clinicians_words(question.text)


def _status(turn: Turn, pol: Polarity) -> list[Sentence]:
    """The opening sentences that say how it is going (the first one when it answers)."""
    assert turn.asked is not None
    answers = pol is not Polarity.NONE and not turn.asked.follow_up()
    return [s for k, s in enumerate(_opening(turn)) if cues.status(s.text) or (k == 0 and answers)]


def _covered(turn: Turn, subject: str) -> bool:
    """The reply already has a memory about this subject (it named it itself), or about a
    kind of it ("any pain?" / "yes, i get some chest pain")."""
    mine = content_words(subject)
    return any(
        c == subject or c.endswith(" " + subject) or mine & content_words(c) for c in turn.covered
    )


def _says_more(answer: Sentence) -> bool:
    return len(words(answer.text)) > BARE_ANSWER_WORDS and cues.status(answer.text)


def _others(turn: Turn, m: Mention) -> bool:
    """ "you're on other medicines twice a day": not the ones being talked about."""
    assert turn.asked is not None
    before = words(turn.asked.message.text[: m.start])[-2:]
    return bool(set(before) & {"other", "all", "rest", "any", "new", "another"})


def _reply(turn: Turn) -> str:
    """The opening of the reply: "yeah , that's correct . they stopped working after a
    while ." says in its second sentence what the yes was about."""
    return " ".join(s.text for s in turn.parsed[:REPLY_SENTENCES])


def _opening(turn: Turn) -> list[Sentence]:
    """The statements that open the reply, where it says how things are."""
    return [s for s in turn.parsed[:STATUS_SENTENCES] if not s.question]


def _unique(quotes: list[Quote]) -> list[Quote]:
    seen: set[tuple[str, int | None]] = set()
    out = []
    for q in quotes:
        if (q.message_id, q.start) not in seen:
            seen.add((q.message_id, q.start))
            out.append(q)
    return out
