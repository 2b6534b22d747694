"""The default extractor: lexicons + medspaCy ConText + question/answer pairing, no model.

Only patient and caregiver turns yield memories. A provider's question is quoted too when
the patient's reply only makes sense with it ("any swelling in your legs?" / "no"); see
`answers` for replies and `adherence` for medication-taking statements.
"""

import re
from dataclasses import replace

from engine.memories import cues
from engine.memories.adherence import read_adherence, specific
from engine.memories.answers import read_answer, read_confirmation
from engine.memories.context import Assertion
from engine.memories.cues import Polarity
from engine.memories.entities import condition_views, medication_generics, record_phrases
from engine.memories.exchange import Asked, Sentence, generic, parse
from engine.memories.extractor import Candidate, Extraction
from engine.memories.lexicon import Lexicon, load_lexicon
from engine.memories.mentions import (
    MEDS,
    PART_DETERMINERS,
    SYMPTOMISH,
    Mention,
    find_mentions,
    part_groups,
)
from engine.memories.text import Token, tokenize, words
from engine.memories.turn import Collector, Turn
from engine.models import Fact, FactKind, Message, Role

SPEAKERS = frozenset({Role.PATIENT, Role.CAREGIVER})
# "the medication" may point back to a drug named this many turns before.
RECENT_TURNS = 3
# How many acknowledged interruptions a provider's utterance is followed back across.
INTERRUPTIONS = 3
# "what is c diff?" asks something; "really?" or "like what?" does not.
MIN_QUESTION_WORDS = 3


class OfflineExtractor:
    """Model-free extraction; see the module docstring."""

    name = "offline-context"
    version = "1.131.0"

    def extract(self, messages: list[Message], facts: list[Fact], processed: int = 0) -> Extraction:
        """Candidate memories from the patient's and caregiver's turns.

        Earlier (processed) messages are read like the others: they pair answers with
        questions and name drugs that "it" points back to, but yield no memories, so what
        a new message says again about a subject is a memory of its own.
        """
        return Extraction(self.candidates(messages, facts, processed))

    def candidates(
        self, messages: list[Message], facts: list[Fact], processed: int = 0
    ) -> list[Candidate]:
        """The candidates of every patient and caregiver turn of `messages[processed:]`."""
        views = condition_views(facts)
        lex = load_lexicon()
        lex = replace(lex, conditions=lex.conditions.extended(record_phrases(views)))
        drugs = frozenset(
            i for f in facts if f.kind is FactKind.MEDICATION for i in medication_generics(f)
        )
        out = Collector()
        seen: list[tuple[int, Mention]] = []  # medications named so far, by turn
        parts: list[str] = []  # body parts named so far
        topics: list[tuple[int, Mention]] = []  # recorded conditions asked about, by turn
        examining = False
        for i, message in enumerate(messages):
            if message.role not in SPEAKERS:
                examining = cues.examining(message.text, examining)
                continue
            answered = _answered(messages, i)
            asked = None
            if answered is not None:
                asked = Asked.of(messages[answered], lex, _interrupted(messages, answered, lex))
            if asked is not None and answered == i - 1:
                seen += [(i - 1, m) for m in asked.named_meds()]
                parts += _body_parts(asked.message.text, lex)
            recent = [m for k, m in seen if k >= i - RECENT_TURNS]
            turn = Turn(message, parse(message.text, lex), asked, lex, views, out, drugs)
            turn.recent_med = recent[-1] if recent else None
            turn.continued = answered is not None and answered < i - 1
            # a bare "it hurts" is about the body part the conversation named last
            turn.recent_part = parts[-1] if parts else None
            if (
                asked is not None
                and not turn.continued
                and (topic := asked.topic(turn.conditions_of))
            ):
                topics.append((i - 1, topic))
            # "how about your high blood pressure ? ..." / ... / "and your medication ?"
            turn.recent_topic = next(
                (t for k, t in reversed(topics) if k >= i - RECENT_TURNS), None
            )
            turn.examining = examining
            out.collecting = i >= processed
            _read_turn(turn)
            if out.collecting and (turn.continued or _follows_up(turn)):
                _goes_on(turn, messages[i - 2], out)
            parts += _body_parts(turn.text, lex)
            seen += [
                (i, m) for s in turn.parsed for m, _ in s.mentions if m.kind in MEDS and specific(m)
            ]
        return out.candidates()


# What makes a turn go on with what was said before it: words pointing back ("it gets
# worse when i sit"), or an opening that continues ("but ...", "mostly in the morning").
_GOING_ON = frozenset({"but", "and", "so", "or", "mostly", "usually", "especially", "only"})


def _points_back(said: tuple[str, ...]) -> bool:
    return bool(set(said) & cues.POINTING_BACK) or bool(said) and said[0] in _GOING_ON


def _follows_up(turn: Turn) -> bool:
    """The turn answers a question about an attribute of what the patient just said,
    naming nothing itself ("my back has been hurting ." / "when did that start ?" / "two
    weeks ago .")."""
    asked = turn.asked
    return (
        asked is not None
        and not turn.examining
        and asked.last is not None
        and cues.asks_attribute(asked.last.text)
        and not any(s.mentions for s in asked.sentences)
        and not _body_parts(asked.message.text, turn.lex)
    )


def _goes_on(turn: Turn, before: Message, out: Collector) -> None:
    """A turn that only goes on with the symptom the patient spoke of before the
    clinician's acknowledgement ("it still hurts ." / "okay ." / "mostly in the morning .")
    or question about it ("when did that start ?" / "two weeks ago .") is more of that
    statement: its quote joins that memory's evidence (with the question, for a yes or
    no)."""
    if (
        before.role not in SPEAKERS
        or out.said_in(turn.message.message_id)
        or any(s.mentions for s in turn.parsed)
        or "?" in turn.text
        or _body_parts(turn.text, turn.lex)  # "they feel like sponges" of "my feet"
        or (turn.continued and not _points_back(words(turn.text)))
    ):
        return
    earlier = [c for c in out.said_in(before.message_id) if c.type == "symptom"]
    if len(earlier) == 1:
        text = turn.text.rstrip()
        quotes = [turn.quote(0, len(text))]
        if not turn.continued and cues.polarity(text) is not Polarity.NONE:
            quotes = turn.with_question(quotes, first=True)
        earlier[0].evidence.extend(quotes)


def _answered(messages: list[Message], i: int) -> int | None:
    """The provider turn that patient turn `i` answers: the one before it, or, when that
    only acknowledged the patient ("is that helping control the pain ?" / "i think it is
    ." / "yeah ." / "i feel better ."), the one the patient goes on answering."""
    k = i - 1
    if k < 0 or messages[k].role is not Role.PROVIDER:
        return None
    while (
        i - k < 2 * INTERRUPTIONS
        and k >= 2
        and cues.backchannel(messages[k].text)
        and messages[k - 1].role in SPEAKERS
        and messages[k - 2].role is Role.PROVIDER
    ):
        k -= 2
    return k


def _interrupted(messages: list[Message], k: int, lex: Lexicon) -> list[Message]:
    """The provider's turns before turn `k` that the patient only acknowledged: "i know
    you had the knee surgery-" / "mm-hmm ." / (turn `k`) "a couple months ago ...", or,
    when turn `k` only asks how "that" is going, answered with nothing named: "in terms of
    your anxiety , i'm sure that this did n't help much-" / "did n't help , no ." / "how
    are you doing with that ?"."""
    first = k
    while (
        first >= 2
        and k - first < 2 * INTERRUPTIONS
        and messages[first - 1].role in SPEAKERS
        and messages[first - 2].role is Role.PROVIDER
        and (
            cues.backchannel(messages[first - 1].text)
            or (
                first == k
                and _asks_how_that_goes(messages[k].text, lex)
                and not find_mentions(messages[first - 1].text, lex)
            )
        )
    ):
        first -= 2
    return messages[first:k:2]


def _asks_how_that_goes(text: str, lex: Lexicon) -> bool:
    """ "how are you doing with that ?": how something named before is going, in words
    that name nothing."""
    pointing = set(words(text)) & cues.POINTING_BACK
    return "?" in text and bool(pointing) and generic(text, lex.status_question_words)


def _body_parts(text: str, lex: Lexicon) -> list[str]:
    """The body parts a turn talks about: named after a determiner or a side ("my knee",
    "the left knee", "your neck and back"), not "are you back on your skis"."""
    tokens = tokenize(text)
    return [
        part
        for i, _, part in part_groups(tokens, lex)
        if i > 0 and tokens[i - 1].text in PART_DETERMINERS
    ]


def _read_turn(turn: Turn) -> None:
    _of_someone_else(turn)
    # a caregiver's "my son" is the patient they speak for ("my son has had a fever since
    # tuesday"), where "her brother" is still the patient's family
    if turn.message.role is Role.CAREGIVER:
        turn.parsed = [
            replace(s, mentions=[(m, replace(a, family=False)) for m, a in s.mentions])
            if cues.of_own_relative(s.text)
            else s
            for s in turn.parsed
        ]
    # the reply's first sentence, after any false start ("um , uh , it ... i think i do .")
    answer = next((s for s in turn.parsed if not cues.false_start(s.text)), None)
    last = turn.asked.last if turn.asked else None
    opened = last is not None and cues.asks_open(last.text)
    # a yes or no answers the question once, not again after the provider's "yeah ."
    answers = not (opened or turn.continued)
    pol = cues.polarity(answer.text) if answer and answers else Polarity.NONE
    for k, sentence in enumerate(turn.parsed):
        if cues.clinician_only(sentence.text):
            continue  # the clinician's words, given to the patient by speech recognition
        _symptoms(turn, sentence, k == 0)
        read_adherence(turn, sentence, k == 0)
        _concern(turn, sentence)
        _preference(turn, sentence, k == 0, pol)
    if turn.continued:
        return  # the reply to the question was read before the provider's "yeah ."
    if answer and turn.asked and turn.asked.questions:
        read_answer(turn, answer, pol)
    elif answer and turn.asked:
        read_confirmation(turn, answer, pol)


def _of_someone_else(turn: Turn) -> None:
    """Marks as another's what the reply says of them: its opening about someone else's
    illness (`_of_others`), but for what the patient says they have; and, from the patient,
    each later sentence about "he" or "she" once the reply is about a relative ("what about
    your mother?" / "she died too . she had kidney and heart failure ."; "do you have
    siblings?" / "i have one sister . she has attempted suicide two times .")."""
    if not turn.parsed:
        return
    about = _of_others(turn)
    if about:
        first = turn.parsed[0]
        others = [
            (m, a if cues.own_before(turn.text[first.start : m.start]) else replace(a, family=True))
            for m, a in first.mentions
        ]
        turn.parsed[0] = replace(first, mentions=others)
    if turn.message.role is not Role.PATIENT:
        return
    for k, s in enumerate(turn.parsed):
        if k > 0 and about and cues.of_he_or_she(s.text):
            turn.parsed[k] = replace(
                s, mentions=[(m, replace(a, family=True)) for m, a in s.mentions]
            )
        about = about or cues.names_relative(s.text)


def _of_others(turn: Turn) -> bool:
    """The reply opens about someone else's illness, but for what the patient says they
    have: the family's history ("any medical diseases in the family?" / "yeah , mainly
    heart issues"), or what the one who died had ("how did your brother pass away?" / "he
    had pancreatitis"; "what about your mother?" / "she died at seventy four , she had
    ..."), or the relative the patient was asked of ("what about your mother?" / "she had
    diabetes"; a relative a caregiver is asked of may be the patient)."""
    asked = turn.asked.message.text if turn.asked else ""
    first = turn.parsed[0].text
    if cues.asks_family(asked):
        return True
    if not cues.of_third_person(first):
        return False
    of_relative = turn.message.role is Role.PATIENT and cues.asks_of_relative(asked)
    return of_relative or cues.of_a_death(first) or cues.of_a_death(asked)


def _symptoms(turn: Turn, sentence: Sentence, first: bool) -> None:
    if sentence.question:
        return
    worry = _concern_cue(turn, sentence)
    listed = _record_list(turn, sentence)
    for m, a in sentence.mentions:
        if m.kind not in SYMPTOMISH or a.family or a.hypothetical or _restated(turn, m, a):
            continue
        if m in listed:
            continue
        # "i was worried about giving him something on top of the benadryl": the worry is
        # the concern the sentence raises, not a feeling to record as a symptom as well
        if _said_as(turn, m, worry):
            continue
        asked = turn.question if first else None
        if sentence.about_a_drug(m, turn.lex) or (asked and asked.asks_about_a_drug(m, turn.lex)):
            continue
        said = _after_contrast(sentence, m)
        gone = cues.gone(said) and not cues.improving(turn.text)
        # what the body does, denied, is a trouble with it: "i haven't been sleeping well"
        present = not (gone or cues.absent(said) or (a.negated and m.canonical not in _FUNCTIONS))
        # a complaint gone or denied takes the body part only from the question it answers
        if present:
            subject = turn.with_part(m, turn.text[: m.start])
        else:
            subject = turn.with_part(m, asked_only=True) if first else m.subject
        if not present and not turn.related(subject, sentence.text):
            continue
        turn.covered.add(subject)
        attrs = {
            "present": present,
            "gone": gone,
            "details": cues.details(sentence.text),
            "canonical": m.canonical,
            "source": m.source,
            "historical": a.historical,
            "condition_term": m.kind == "condition",
            "via": "statement" if subject == m.subject else "asked-part",
        }
        turn.add(
            ("symptom", subject),
            "symptom",
            subject,
            sentence.text,
            turn.with_question([turn.clause(sentence, m)], first),
            attrs,
        )


_FUNCTIONS = frozenset({"sleep", "appetite", "energy", "mood"})
_CONTRAST = re.compile(r"\b(?:but|however|though|although|except)\b")


def _after_contrast(sentence: Sentence, m: Mention) -> str:
    """The sentence from the last contrast before the mention: what was denied before a
    "but" is not the mention ("i have n't had any real problems there but i have had some
    swelling in my ankles"); what follows one still is ("it was bad but it's gone now")."""
    at = m.start - sentence.start
    lo = max((c.start() for c in _CONTRAST.finditer(sentence.text) if c.start() <= at), default=0)
    return sentence.text[lo:]


def _said_as(turn: Turn, m: Mention, cue: str | None) -> bool:
    return cue is not None and words(turn.text[m.start : m.end]) == words(cue)


def _record_list(turn: Turn, sentence: Sentence) -> list[Mention]:
    """The record's diagnoses, listed ("i have a lot going on , high cholesterol , high
    blood pressure , acid reflux"): two or more named as on record, and not how they
    are going; complaints of a body part are how one is going ("pain and stiffness in my
    knee")."""
    named = [
        m
        for m, a in sentence.mentions
        if m.kind in {"symptom", "condition"}
        and not a.negated
        # by its own name, or by a condition's everyday name ("high cholesterol")
        and (
            turn.named_on_record(m.subject)
            or (m.kind == "condition" and turn.conditions_of(m.subject))
        )
    ]
    return named if len(named) > 1 and not cues.status(sentence.text) else []


def _restated(turn: Turn, m: Mention, a: Assertion) -> bool:
    """What the record or a clinician says, in the patient's mouth: a history ("i have a
    history of lupus"), a clinician's words or guess about a diagnosis ("he said that i
    had a kidney stone", "they thought it was neuropathy"), a diagnosis the record holds
    by name as a clinician told it ("the p t said i have degenerative disc disease"); but
    what the patient feels is theirs ("they've said the back and knee pain are
    age-related")."""
    if a.historical:
        return True
    if m.kind == "condition":
        return a.reported or a.uncertain
    said_of_record = (a.reported and m.kind == "symptom") or _treated(turn, m)
    return said_of_record and bool(turn.named_on_record(m.subject))


# "he is taking coumadin for his atrial fibrillation": what a drug is taken for
_FOR = re.compile(r"^\W*for\s+(?:his|her|my|the|their|your)?\s*$")


def _treated(turn: Turn, m: Mention) -> bool:
    """The condition is named as what the drug just before it is taken for."""
    drugs = [d for s in turn.parsed for d, _ in s.mentions if d.kind in MEDS and d.end <= m.start]
    return bool(drugs) and bool(_FOR.match(turn.text[drugs[-1].end : m.start]))


def _concern_cue(turn: Turn, sentence: Sentence) -> str | None:
    """The words that raise a worry of the patient's in the sentence, if any."""
    cue = cues.has_any(sentence.text, turn.lex.concern_cues)
    if cue and (cues.negated_cue(sentence.text, cue) or cues.others_worry(sentence.text)):
        return None
    return cue


def _concern(turn: Turn, sentence: Sentence) -> None:
    cue = _concern_cue(turn, sentence)
    # asking what something the clinician just named is ("what is c diff ?") is a health
    # question, however short
    defines = turn.asked is not None and cues.asks_what_it_is(sentence.text)
    asks = defines or (
        cues.asks_itself(sentence.text) and len(words(sentence.text)) >= MIN_QUESTION_WORDS
    )
    if asks and (
        cues.has_any(sentence.text, turn.lex.logistic_questions) or cues.asks_to_act(sentence.text)
    ):
        asks = False
    topical = (
        defines or bool(sentence.mentions) or cues.has_any(sentence.text, turn.lex.concern_topics)
    )
    # the patient's own guess at what they have ("i think i have diabetes", "i thought i
    # was having a heart attack") is a worry about it, not a diagnosis
    guessed = [
        m.subject
        for m, a in sentence.mentions
        if m.kind == "condition"
        and _guess(a)
        and _OWN_GUESS.search(sentence.text[: m.start - sentence.start])
    ]
    # an open question is a concern when it is about something clinical or about the
    # patient ("will i be asleep for this?"), not any question ("is that okay?")
    if not (cue or guessed or (asks and (topical or cues.about_self(sentence.text)))):
        return
    if _requests(sentence.text, turn.lex):
        return
    # what the worry is about, not the worry ("worried about ... the benadryl")
    named = guessed or [m.subject for m, _ in sentence.mentions if not _said_as(turn, m, cue)]
    asked = cues.term_asked(sentence.text) if defines else None
    subject = named[0] if named else (cue or asked or _care_named(turn, sentence) or "question")
    turn.out.add(
        ("concern", turn.message.message_id),
        Candidate(
            type="concern",
            subject=subject,
            text=sentence.text,
            evidence=[turn.quote(sentence.start, sentence.end)],
            speaker=turn.message.role.value,
        ),
    )


def _care_named(turn: Turn, sentence: Sentence) -> str | None:
    """The first kind of care the sentence names ("will she be asleep for this procedure?":
    the procedure)."""
    found = turn.lex.care_objects.find(tokenize(sentence.text))
    return found[0][2] if found else None


def _guess(a: Assertion) -> bool:
    """Uncertain, and not negated, relayed, a relative's or hypothetical."""
    return a.uncertain and not (a.negated or a.reported or a.family or a.hypothetical)


# Of ConText's guesses at a diagnosis (`context.py`), the speaker's own, about now or as
# they had thought it ("i think it is", "i thought i was having"); not someone else's
# ("they thought it was"), nor a hedged account of what happened ("i think i had a seizure
# and then i passed out").
_OWN_GUESS = re.compile(
    r"\bi (?:think|suspect|guess)(?: that)? (?:i have|i've got|i'm having|i am having|it is"
    r"|it's|it might be|it could be|it may be|maybe)\b"
    r"|\bi thought(?: that)?(?: maybe)? (?:i had|i was having|i'm having|it was|it might be)\b",
    re.IGNORECASE,
)


def _preference(turn: Turn, sentence: Sentence, first: bool, pol: Polarity) -> None:
    tokens = tokenize(sentence.text)
    # a plain wish counts least ("i want to ... i'd rather")
    kind = min(_requests(sentence.text, turn.lex), key=lambda name: name == "wish", default=None)
    if kind in {"care", "wish"}:
        for topic, index in turn.lex.preference_topics:
            if index.find(tokens):
                kind = topic
                break
    if kind == "wish":
        # "i want to" says what a choice of care says only when it names the care
        kind = "care" if _names_care(turn, sentence, tokens) else None
    offered = (
        first
        and turn.asked is not None
        and any(cues.has_any(q.text, turn.lex.offer_questions) for q in turn.asked.sentences)
    )
    # the offer taken up or declined: by a yes or no, by naming the care, or by a try ("how
    # do you feel about that ?" / "well , i'll try something new just to help")
    answered = pol in {Polarity.YES, Polarity.NO} or "try" in words(sentence.text)
    if not kind and offered and (answered or _names_care(turn, sentence, tokens)):
        kind = "care"
    if not kind:
        return
    quotes = [turn.quote(sentence.start, sentence.end)]
    if offered:
        quotes = turn.with_question(quotes, first)
    turn.out.add(
        ("preference", turn.message.message_id, str(sentence.start)),
        Candidate(
            type="preference",
            subject=kind,
            text=sentence.text,
            evidence=quotes,
            speaker=turn.message.role.value,
            attributes={"detail": sentence.text},
        ),
    )


def _names_care(turn: Turn, sentence: Sentence, tokens: list[Token]) -> bool:
    """The sentence (`tokens`, its words) names a drug or a kind of care ("physical
    therapy", "the surgery")."""
    return any(m.kind in MEDS for m, _ in sentence.mentions) or bool(
        turn.lex.care_objects.find(tokens)
    )


def _requests(text: str, lex: Lexicon) -> list[str]:
    """The kinds of preference cue the sentence carries; none in a wh-question, which
    asks for options ("what can we do about this?" against "can we do the injection?")."""
    if cues.asks_what(text):
        return []
    said = [tokenize(t) for t in {text, _WE.sub("i", text)}]
    return [name for name, index in lex.preference_cues if any(index.find(t) for t in said)]


# A parent choosing with the child, a couple together: "we'd like to do the surgery" is
# said as "i'd like to do the surgery" is.
_WE = re.compile(r"\bwe\b", re.IGNORECASE)


def warm_up() -> None:
    """Loads the lexicons, the ConText pipeline and the drug dictionary (a few seconds)."""
    from engine.memories.context import pipeline
    from engine.memories.drugs import generic_names

    load_lexicon()
    pipeline()
    generic_names("aspirin")
