"""The default extractor: lexicons + medspaCy ConText + question/answer pairing, no model.

Only patient and caregiver turns yield memories. A provider's question is quoted too when
the patient's reply only makes sense with it ("any swelling in your legs?" / "no").
"""

from collections.abc import Sequence
from dataclasses import dataclass

from engine.memories import cues
from engine.memories.context import Assertion, assertions
from engine.memories.cues import Polarity
from engine.memories.extractor import Candidate, Quote
from engine.memories.lexicon import Lexicon, load_lexicon
from engine.memories.mentions import MEDS, SYMPTOMISH, Mention, find_mentions
from engine.memories.relate import ConditionView, condition_views, same_condition
from engine.memories.text import clause_around, sentences, tokenize, words
from engine.models import Fact, Message, Role

SPEAKERS = frozenset({Role.PATIENT, Role.CAREGIVER})
_QUESTION_VERBS = frozenset(
    [
        "take",
        "taking",
        "took",
        "taken",
        "using",
        "use",
        "used",
        "tried",
        "try",
        "applying",
        "apply",
        "on",
        "refill",
    ]
)
_PRONOUNS = frozenset({"it", "them", "that", "those", "these", "this", "one"})
_SIDE_EFFECT = ("side effect", "issues", "problems", "trouble")
# When one conversation says several things about a drug, the memory keeps the most
# consequential behaviour (a stop outweighs "I take it").
_BEHAVIOUR_RANK = (
    "never_started",
    "stopped",
    "ran_out",
    "changed_dose",
    "missed_doses",
    "as_prescribed",
)


@dataclass
class _Sentence:
    start: int
    end: int
    text: str
    mentions: list[tuple[Mention, Assertion]]

    @property
    def question(self) -> bool:
        return self.text.rstrip().endswith("?")


class _Collector:
    """Candidates merged by key, so a repeated statement becomes one memory."""

    def __init__(self) -> None:
        self._items: dict[tuple[str, ...], Candidate] = {}

    def add(self, key: tuple[str, ...], candidate: Candidate) -> None:
        existing = self._items.get(key)
        if existing is None:
            self._items[key] = candidate
            return
        seen = {(q.message_id, q.start) for q in existing.evidence}
        existing.evidence.extend(
            q for q in candidate.evidence if (q.message_id, q.start) not in seen
        )
        old = existing.attributes.get("details", [])
        new = candidate.attributes.get("details", [])
        existing.attributes["details"] = sorted(set(old) | set(new))
        if candidate.type == "adherence":
            ranks = [
                _BEHAVIOUR_RANK.index(c.attributes.get("behavior", "as_prescribed"))
                for c in (existing, candidate)
            ]
            if ranks[1] < ranks[0]:
                for attr in ("behavior", "reason", "pattern"):
                    if attr in candidate.attributes:
                        existing.attributes[attr] = candidate.attributes[attr]

    def candidates(self) -> list[Candidate]:
        return list(self._items.values())


def _quote(message: Message, start: int, end: int) -> Quote:
    return Quote(message_id=message.message_id, quote=message.text[start:end], start=start, end=end)


class OfflineExtractor:
    """Model-free extraction; see the module docstring."""

    name = "offline-context"
    version = "1.0.0"

    def extract(self, messages: list[Message], facts: list[Fact]) -> list[Candidate]:
        """Candidate memories from the patient's and caregiver's turns."""
        lex = load_lexicon()
        views = condition_views(facts)
        out = _Collector()
        for i, message in enumerate(messages):
            if message.role not in SPEAKERS:
                continue
            prev = messages[i - 1] if i > 0 and messages[i - 1].role is Role.PROVIDER else None
            parsed = _parse(message.text, lex)
            question = _question(prev, lex) if prev else None
            _Turn(self, message, parsed, prev, question, lex, views, out).run()
        return out.candidates()


def _parse(text: str, lex: Lexicon) -> list[_Sentence]:
    mentions = find_mentions(text, lex)
    masked = []
    for s, e in sentences(text):
        n = cues.leading_answer(text[s:e])
        if n:
            masked.append((s, s + n))
    flags = assertions(text, [(m.start, m.end) for m in mentions], masked)
    pairs = list(zip(mentions, flags, strict=True))
    return [
        _Sentence(s, e, text[s:e], [(m, a) for m, a in pairs if s <= m.start < e])
        for s, e in sentences(text)
    ]


def _question(prev: Message, lex: Lexicon) -> _Sentence | None:
    """The provider's question sentence that a reply answers (the last one with '?')."""
    parsed = _parse(prev.text, lex)
    asked = [s for s in parsed if s.question]
    return asked[-1] if asked else None


@dataclass
class _Turn:
    extractor: OfflineExtractor
    message: Message
    parsed: list[_Sentence]
    prev: Message | None
    question: _Sentence | None
    lex: Lexicon
    views: list[ConditionView]
    out: _Collector

    def run(self) -> None:
        answer = self.parsed[0] if self.parsed else None
        pol = cues.polarity(answer.text) if answer else Polarity.NONE
        covered: set[str] = set()
        for k, sentence in enumerate(self.parsed):
            covered |= self._symptoms(sentence, k == 0)
            self._adherence(sentence, k == 0)
            self._concern(sentence)
            self._preference(sentence, k == 0, pol)
        if answer and self.question and pol is not Polarity.NONE:
            self._answered(answer, pol, covered)

    # -- helpers -----------------------------------------------------------------------
    def _related(self, subject: str) -> bool:
        return any(same_condition(subject, v) for v in self.views)

    def _with_question(self, quotes: list[Quote], first: bool) -> list[Quote]:
        if first and self.question and self.prev:
            quotes.append(_quote(self.prev, self.question.start, self.question.end))
        return quotes

    def _clause(self, sentence: _Sentence, m: Mention) -> Quote:
        s, e = clause_around(self.message.text, (sentence.start, sentence.end), m.start, m.end)
        return _quote(self.message, s, e)

    # -- symptoms ----------------------------------------------------------------------
    def _symptoms(self, sentence: _Sentence, first: bool) -> set[str]:
        subjects: set[str] = set()
        if sentence.question:
            return subjects
        gone = cues.gone(sentence.text)
        for m, a in sentence.mentions:
            if m.kind not in SYMPTOMISH or a.family or a.hypothetical:
                continue
            if _followed_by_med(sentence, m, self.lex):
                continue
            present = not (a.negated or gone)
            if not present and not self._related(m.subject):
                continue
            subjects.add(m.subject)
            attrs = {
                "present": present,
                "gone": gone,
                "details": cues.details(sentence.text),
                "canonical": m.canonical,
                "source": m.source,
                "historical": a.historical,
                "condition_term": m.kind == "condition",
            }
            quotes = self._with_question([self._clause(sentence, m)], first)
            self.out.add(
                ("symptom", m.subject, str(present)),
                Candidate(
                    type="symptom",
                    subject=m.subject,
                    text=sentence.text,
                    evidence=quotes,
                    speaker=self.message.role.value,
                    attributes=attrs,
                    confidence=0.6 if m.source else 0.5,
                ),
            )
        return subjects

    # -- adherence ---------------------------------------------------------------------
    def _adherence(self, sentence: _Sentence, first: bool) -> None:
        if sentence.question:
            return
        tokens = set(words(sentence.text))
        asked = (
            first
            and self.question is not None
            and bool(set(words(self.question.text)) & _QUESTION_VERBS)
        )
        strong = bool(tokens & self.lex.adherence_verbs)
        weak = bool(tokens & self.lex.adherence_weak_verbs)
        meds = [m for m, a in sentence.mentions if m.kind in MEDS and not a.hypothetical]
        if any(m.kind == "drug" for m in meds):
            meds = [m for m in meds if m.kind == "drug"]
        elif not strong:
            meds = []
        if not (strong or weak or asked):
            return
        if strong and tokens & _PRONOUNS and self.question and first:
            meds += [m for m, _ in self.question.mentions if m.kind == "drug"]
        elif not meds and strong and tokens & _PRONOUNS and self.question:
            meds = [m for m, _ in self.question.mentions if m.kind in MEDS]
        for m in meds[:4]:
            self._adherence_candidate(sentence, m, first)

    def _adherence_candidate(self, sentence: _Sentence, m: Mention, first: bool) -> None:
        behaviour = cues.behaviour(sentence.text, self.lex)
        attrs: dict[str, object] = {"drugs": list(m.drugs), "class_drugs": list(m.class_drugs)}
        if behaviour == "as_needed":
            behaviour, attrs["pattern"] = "changed_dose", "as_needed"
        attrs["behavior"] = behaviour
        why = cues.reason(sentence.text)
        if why and behaviour in {"stopped", "never_started"}:
            attrs["reason"] = why
        detail = cues.details(sentence.text)
        effects = ("side effect", "help", "only when", "almost out")
        if any(w in sentence.text.lower() for w in effects) or any(
            k in SYMPTOMISH for k in (x.kind for x, _ in sentence.mentions)
        ):
            detail.append("effect")
        attrs["details"] = detail if behaviour != "as_prescribed" or "effect" in detail else []
        in_sentence = sentence.start <= m.start < sentence.end
        quote = (
            self._clause(sentence, m)
            if in_sentence
            else _quote(self.message, sentence.start, sentence.end)
        )
        quotes = self._with_question([quote], first)
        self.out.add(
            ("adherence", m.subject),
            Candidate(
                type="adherence",
                subject=m.subject,
                text=sentence.text,
                evidence=quotes,
                speaker=self.message.role.value,
                attributes=attrs,
                confidence=0.6,
            ),
        )

    # -- concerns and preferences ------------------------------------------------------
    def _concern(self, sentence: _Sentence) -> None:
        cue = cues.has_any(sentence.text, self.lex.concern_cues)
        if cue and cues.negated_cue(sentence.text, cue):
            cue = None
        asks = sentence.question and len(words(sentence.text)) >= 4
        if asks and cues.has_any(sentence.text, self.lex.logistic_questions):
            asks = False
        topical = bool(sentence.mentions) or cues.has_any(sentence.text, self.lex.concern_topics)
        if not (cue or (asks and topical)):
            return
        if _asks_for_something(sentence.text, self.lex):
            return
        subject = sentence.mentions[0][0].subject if sentence.mentions else (cue or "question")
        self.out.add(
            ("concern", self.message.message_id),
            Candidate(
                type="concern",
                subject=subject,
                text=sentence.text,
                evidence=[_quote(self.message, sentence.start, sentence.end)],
                speaker=self.message.role.value,
                confidence=0.5,
            ),
        )

    def _preference(self, sentence: _Sentence, first: bool, pol: Polarity) -> None:
        tokens = tokenize(sentence.text)
        kind = None
        for name, index in self.lex.preference_cues:
            if index.find(tokens):
                kind = name
        if kind == "care":
            for topic, index in self.lex.preference_topics:
                if index.find(tokens):
                    kind = topic
                    break
        offered = (
            first
            and self.question is not None
            and cues.has_any(self.question.text, self.lex.offer_questions)
        )
        if not kind and offered and pol in {Polarity.YES, Polarity.NO}:
            kind = "care"
        if not kind:
            return
        quotes = [_quote(self.message, sentence.start, sentence.end)]
        if offered:
            quotes = self._with_question(quotes, first)
        self.out.add(
            ("preference", self.message.message_id, str(sentence.start)),
            Candidate(
                type="preference",
                subject=kind,
                text=sentence.text,
                evidence=quotes,
                speaker=self.message.role.value,
                attributes={"detail": sentence.text},
                confidence=0.5,
            ),
        )

    # -- yes/no answers ----------------------------------------------------------------
    def _answered(self, answer: _Sentence, pol: Polarity, covered: set[str]) -> None:
        assert self.question is not None and self.prev is not None
        quotes = [
            _quote(self.message, answer.start, answer.end),
            _quote(self.prev, self.question.start, self.question.end),
        ]
        asked_taking = bool(set(words(self.question.text)) & _QUESTION_VERBS)
        own_meds = any(m.kind in MEDS for m, _ in answer.mentions)
        for m, a in self.question.mentions:
            if a.family or a.hypothetical:
                continue
            if m.kind in SYMPTOMISH and m.subject not in covered:
                present = pol in {Polarity.YES, Polarity.BAD}
                if not present and not self._related(m.subject):
                    continue
                attrs = {
                    "present": present,
                    "gone": cues.gone(answer.text),
                    "details": [],
                    "canonical": m.canonical,
                    "answer": pol.value,
                }
                self.out.add(
                    ("symptom", m.subject, str(present)),
                    Candidate(
                        type="symptom",
                        subject=m.subject,
                        text=answer.text,
                        evidence=list(quotes),
                        speaker=self.message.role.value,
                        attributes=attrs,
                        confidence=0.5,
                    ),
                )
            elif (
                m.kind in MEDS
                and asked_taking
                and not own_meds
                and pol in {Polarity.YES, Polarity.NO}
            ):
                side = any(w in self.question.text.lower() for w in _SIDE_EFFECT)
                behaviour = "as_prescribed" if pol is Polarity.YES or side else "stopped"
                self.out.add(
                    ("adherence", m.subject),
                    Candidate(
                        type="adherence",
                        subject=m.subject,
                        text=answer.text,
                        evidence=list(quotes),
                        speaker=self.message.role.value,
                        attributes={
                            "behavior": behaviour,
                            "drugs": list(m.drugs),
                            "class_drugs": list(m.class_drugs),
                            "details": [],
                        },
                        confidence=0.5,
                    ),
                )


def _followed_by_med(sentence: _Sentence, m: Mention, lex: Lexicon) -> bool:
    """ "blood pressure medication" is about a drug, not a reading."""
    rest = words(sentence.text[m.end - sentence.start :])[:2]
    return any(w in lex.med_nouns for w in rest)


def _asks_for_something(text: str, lex: Lexicon) -> bool:
    tokens = tokenize(text)
    return any(index.find(tokens) for _, index in lex.preference_cues)


def extract_all(messages: Sequence[Message], facts: list[Fact]) -> list[Candidate]:
    """Convenience: the default extractor over a message list."""
    return OfflineExtractor().extract(list(messages), facts)


def warm_up() -> None:
    """Loads the lexicons, the ConText pipeline and the drug dictionary (a few seconds)."""
    from engine.memories.context import pipeline
    from engine.memories.drugs import generic_names

    load_lexicon()
    pipeline()
    generic_names("aspirin")
