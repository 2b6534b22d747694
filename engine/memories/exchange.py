"""One turn parsed into sentences with their mentions, and what a provider's turn asked.

A patient's reply is read against the provider turn just before it: the questions it
answers (with or without a question mark: speech recognition drops them), the condition
the provider brought up ("in terms of your gout, how are you doing with that?") and the
medications the provider named ("are you still taking the metformin?").
"""

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from engine.memories import cues
from engine.memories.context import Assertion, assertions
from engine.memories.lexicon import Lexicon
from engine.memories.mentions import MEDS, SYMPTOMISH, Mention, find_mentions, part_groups
from engine.memories.text import question_spans, sentences, tokenize, words
from engine.models import Message

# How far back from the question a provider's topic may be named ("i know you had that
# rotator cuff repaired . how are you doing ?").
TOPIC_SENTENCES = 3
# "let me press on your abdomen , does that hurt": the examination, not the history.
_EXAMINING = re.compile(
    r"\b(let me|i'm going to|i am going to|i'll|i will|gon na|press|push|feel|listen|look)\b",
    re.IGNORECASE,
)
ALLERGY = re.compile(r"allerg", re.IGNORECASE)
# The history's "any allergies?" asks for the allergy list (drugs, foods), not how allergies
# feel ("are your allergies acting up?", "any seasonal allergies?").
_ALLERGY_LIST = re.compile(
    r"^\W*(?:(?:and|so|okay|ok|now|also|alright|great|good|thanks|thank you)\W+)*"
    r"(?:(?:do you have|have you got|are there|you have|how about|what about)\W+)?"
    r"(?:any\W+)?(?:(?:known|drug|medication|medicine|food)\W+)*allerg(?:ies|y)"
    r"(?:\W+to\W+(?:any\W+)?\w+)?\W*(?:that you know of\W*)?$",
    re.IGNORECASE,
)
# ConText knows relatives; friends and colleagues who "have" something are someone else.
_OTHER_PERSON = re.compile(
    r"\b(friend|friends|coworker|co-worker|colleague|neighbou?r|cousin|boss|roommate|partner"
    r"|people|somebody|someone)\b(?:\W+\w+){0,6}?\W+(who|she|he|they)\s+"
    r"(has|had|have|does have|did have|got|is|was)\b",
    re.IGNORECASE,
)
_TAKEN_FOR = re.compile(
    r"\b(?:take|taking|took|tried|try|use|using|used)\s+(?:anything|something)"
    r"(?:\s+\w+)?\s+for\s+(?:the\s+|your\s+|my\s+|that\s+)?$"
)
# A question that points back ("is that helping", "one of these episodes") is about what
# the few words before it named ("they gave you a water pill and is that helping").
LEAD_IN_WORDS = 10
# Shorter trailing bits ("or-", "okay .") say nothing about what was asked.
MIN_SENTENCE_WORDS = 3
_CLITIC = re.compile(r"'(?:s|ve|re|ll|d|m)$")
_POINTS_BACK = re.compile(r"\b(?<!like )(that|it|this|these|those|them)\b")


@dataclass
class Sentence:
    """A sentence (or the asking part of one) with the mentions inside it."""

    start: int
    end: int
    text: str
    mentions: list[tuple[Mention, Assertion]]

    @property
    def question(self) -> bool:
        return self.text.rstrip().endswith("?")

    def about_a_drug(self, m: Mention, lex: Lexicon) -> bool:
        """ "blood pressure medication" is a drug, not a reading; "allergies to medicines",
        "allergic to penicillin" say what the allergy record holds, not a symptom."""
        rest = tokenize(self.text[m.end - self.start :])[:2]
        if any(t.text in lex.med_nouns for t in rest):
            return True
        if _TAKEN_FOR.search(self.text[: m.start - self.start].lower()):
            return True  # "are you taking anything for pain?" asks about a treatment
        allergy = bool(ALLERGY.search(m.canonical or m.subject))
        if allergy and _ALLERGY_LIST.match(self.text):
            return True  # "any known allergies?" asks for the allergy record
        if not (allergy and rest and rest[0].text == "to"):
            return False
        after = m.end + rest[0].end  # "allergic to| penicillin"
        return any(d.kind in MEDS and 0 <= d.start - after <= 2 for d, _ in self.mentions)

    def asks_about_a_drug(self, m: Mention, lex: Lexicon) -> bool:
        """This question names what `m` names as a drug ("any allergies to medicines?"),
        so "no, I don't have allergies" answers about the drug."""
        return self.question and any(
            q.canonical == m.canonical and self.about_a_drug(q, lex) for q, _ in self.mentions
        )


def generic(question: str, status_words: frozenset[str]) -> bool:
    """ "how are you doing with that?" asks about whatever was just named: it says nothing
    but `status_words` ("you've" and "everything's" read as "you" and "everything")."""
    return {_CLITIC.sub("", w) for w in words(question)} <= status_words


def parse(text: str, lex: Lexicon) -> list[Sentence]:
    """The sentences of a turn, with ConText modifiers on every mention."""
    mentions = find_mentions(text, lex)
    spans = sentences(text)
    masked = []
    for s, e in spans:
        n = cues.leading_answer(text[s:e])
        if n:
            masked.append((s, s + n))
    flags = assertions(text, [(m.start, m.end) for m in mentions], masked)
    pairs = [(m, _someone_else(text, spans, m, a)) for m, a in zip(mentions, flags, strict=True)]
    return [
        Sentence(s, e, text[s:e], [(m, a) for m, a in pairs if s <= m.start < e]) for s, e in spans
    ]


# The provider dictating to the note, not speaking to the patient: "beverly is a 53
# -year-old female with ... who presents for follow-up".
_DICTATION = re.compile(
    r"\b(?:is|am) an? \d+ ?-? ?(?:year|yr)s?[- ]old\b|\bwho presents\b"
    r"|\bpresents (?:today |here )?(?:for|with)\b",
    re.IGNORECASE,
)


@dataclass
class Asked:
    """The provider turn a reply answers: its sentences and its questions."""

    message: Message
    sentences: list[Sentence]
    # words of a question that only asks how things are (`Lexicon.status_question_words`)
    generic: frozenset[str] = frozenset()
    questions: list[Sentence] = field(default_factory=list)
    # index into `sentences` of each question
    _where: list[int] = field(default_factory=list)
    # the sentences of the same provider's turns just before, which the patient only
    # acknowledged ("i know you had the knee surgery-" / "mm-hmm" / "a couple months ago .
    # you've been feeling well since then ?"): one utterance, interrupted
    before: list[Sentence] = field(default_factory=list)

    @classmethod
    def of(cls, message: Message, lex: Lexicon, before: Sequence[Message] = ()) -> "Asked":
        """The provider's `message`, with the earlier turns of the same utterance."""
        parsed = parse(message.text, lex)
        earlier = [s for m in before for s in parse(m.text, lex)]
        asked = cls(message, parsed, lex.status_question_words, before=earlier)
        for k, sentence in enumerate(parsed):
            for s, e in question_spans(message.text, (sentence.start, sentence.end)):
                lead = _lead_in(message.text, sentence.start, s)
                inside = [(m, a) for m, a in sentence.mentions if lead <= m.start < e]
                asked.questions.append(Sentence(s, e, message.text[s:e], inside))
                asked._where.append(k)
        return asked

    @property
    def last(self) -> Sentence | None:
        return self.questions[-1] if self.questions else None

    def last_run(self) -> list[Sentence]:
        """The last question and the questions said right before it, with nothing between
        them ("how about any abdominal pain ? fever , chills ?")."""
        k = len(self.questions) - 1
        while k > 0 and self._where[k] - self._where[k - 1] <= 1:
            k -= 1
        return self.questions[k:]

    def words(self) -> set[str]:
        """Every word of the questions."""
        return {w for q in self.questions for w in words(q.text)}

    def _near_last(self) -> list[Sentence]:
        """The last question, then, when it only asks how things are ("how are you doing
        with that?"), what it refers to: the sentences after it when the turn goes on
        ("... i know you were making some diet changes ."), else those before it, back to
        `TOPIC_SENTENCES` or to the previous question about something in particular
        ("how is your diet?")."""
        if not self.questions:
            return []
        j = len(self.questions) - 1
        if self.follow_up():
            return [self.questions[j], *self._near(j - 1)]
        return self._near(j)

    def follow_up(self) -> bool:
        """The last question names nothing and follows another right away ("how are you
        doing with that ? did you buy the cuff i asked about ?"): it asks on about what
        that one does, and a yes or no answers the follow-up, not how things are."""
        j = len(self.questions) - 1
        if j < 1:
            return False
        last = self.questions[j]
        return (
            not last.mentions
            and not self._generic(last)
            and self._where[j - 1] >= self._where[j] - 1
        )

    def _near(self, j: int) -> list[Sentence]:
        """The `j`th question and, when it only asks how things are, what it refers to."""
        last = self.questions[j]
        out = [last]
        if not self._generic(last):
            return out
        k = self._where[j]
        after = [
            a
            for a in self.sentences[k + 1 :]
            if len(words(a.text)) >= MIN_SENTENCE_WORDS and not a.question
        ]
        if after:  # "how are you doing with those ? i know we started you on imitrex ."
            return out + after
        asked_at = dict(zip(self._where, self.questions, strict=True))
        back = [(s, s.question) for s in self.before]
        back += [(asked_at.get(i, s), i in asked_at) for i, s in enumerate(self.sentences[:k])]
        back = [(s, q) for s, q in back if q or len(words(s.text)) >= MIN_SENTENCE_WORDS]
        # neither the dictation to the note nor what the clinician found or thinks ("i
        # think you're having a recurrence of your kidney stones . okay ?" / "mm-hmm")
        back = [(s, q) for s, q in back if not (_DICTATION.search(s.text) or cues.findings(s.text))]
        said = 0  # another "how are you doing with that ?" refers back too: not counted
        for sentence, is_question in reversed(back):
            out.append(sentence)
            if is_question and self._generic(sentence):
                continue
            said += 1
            if is_question or said == TOPIC_SENTENCES:
                break
        return out

    def _generic(self, question: Sentence) -> bool:
        return generic(question.text, self.generic)

    def topic(self, conditions_of: Callable[[str], frozenset[str]]) -> Mention | None:
        """The recorded condition the last question is about, if the provider named one.

        `conditions_of` gives the record conditions a subject bears on. The nearest
        sentence naming any decides; when it names several conditions ("a history of
        heart failure, depression and hypertension") there is no single topic.
        """
        for sentence in self._near_last():
            found = [
                (m, conditions_of(m.subject))
                for m, a in sentence.mentions
                if m.kind in SYMPTOMISH and not (a.family or a.historical)
            ]
            found = [(m, c) for m, c in found if c]
            if not found:
                continue
            shared = frozenset.intersection(*(c for _, c in found))
            return found[-1][0] if shared else None
        return None

    def body_part(self, lex: Lexicon) -> str | None:
        """The body part the last question is about ("how is that right arm doing?"), or
        the parts it joins ("how are your knees and hips?")."""
        for sentence in self._near_last():
            parts = part_groups(tokenize(sentence.text), lex)
            if parts:
                return parts[-1][2]
        return None

    def meds_for(self, question: Sentence) -> list[tuple[Mention, Assertion]]:
        """The medications a question asks about: its own, or, when it points back ("do
        you need a refill of that?"), those of the sentence before it."""
        own = [(m, a) for m, a in question.mentions if m.kind in MEDS]
        if own or not _POINTS_BACK.search(question.text.lower()):
            return own
        k = max((j for j, s in enumerate(self.sentences) if s.start <= question.start), default=0)
        if k == 0:
            return []
        return [(m, a) for m, a in self.sentences[k - 1].mentions if m.kind in MEDS]

    def points_back(self, question: Sentence) -> bool:
        """The question refers to something named before ("are you taking it?")."""
        return bool(_POINTS_BACK.search(question.text.lower()))

    def asked_meds(self) -> list[Mention]:
        """The medications the provider's questions ask about."""
        return [m for q in self.questions for m, _ in self.meds_for(q)]

    def named_meds(self) -> list[Mention]:
        """Drugs, and medication phrases naming a class ("a water pill"), in the turn."""
        return [
            m
            for s in self.sentences
            for m, a in s.mentions
            if m.kind in MEDS and not a.negated and (m.drugs or m.class_drugs)
        ]


def _lead_in(text: str, sentence_start: int, start: int) -> int:
    """Where the mentions a question is about may start (see `LEAD_IN_WORDS`)."""
    opening = " ".join(words(text[start:])[:LEAD_IN_WORDS])
    if not _POINTS_BACK.search(opening) or _EXAMINING.search(text, sentence_start, start):
        return start
    before = tokenize(text[sentence_start:start])
    return (
        sentence_start + before[-LEAD_IN_WORDS].start
        if len(before) >= LEAD_IN_WORDS
        else sentence_start
    )


def _someone_else(text: str, spans: list[tuple[int, int]], m: Mention, a: Assertion) -> Assertion:
    """ "a coworker who has a thyroid issue": about someone else, like family history."""
    start = max((s for s, _ in spans if s <= m.start), default=0)
    other = None if a.family else _OTHER_PERSON.search(text[start : m.start])
    # "my friend who was visiting had to help me ... and now i'm still limping": the
    # patient's own clause after it is theirs again
    if other is None or cues.own_before(text[start + other.end() : m.start]):
        return a
    return replace(a, family=True)
