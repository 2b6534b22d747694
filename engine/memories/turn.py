"""The state the offline extractor keeps while it reads one patient turn.

`Collector` merges candidates by key, so a statement repeated later in the conversation
becomes one memory with several quotes (GUIDELINE §2). `Turn` holds the parsed turn, the
provider turn it answers, and the quoting helpers the readers share.
"""

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from engine.memories.confidence import CEILING, REPEAT_GAIN, memory_confidence
from engine.memories.drugs import ingredients
from engine.memories.entities import (
    ConditionView,
    concept,
    same_condition,
    same_sided_condition,
    side,
)
from engine.memories.exchange import Asked, Sentence
from engine.memories.extractor import Candidate, Quote
from engine.memories.lexicon import Lexicon
from engine.memories.mentions import Mention, each_part, part_groups, singular_part
from engine.memories.text import clause_around, tokenize, words
from engine.models import Message

# When one conversation says several things about a drug, the memory keeps the most
# consequential behaviour (a stop outweighs "I take it").
BEHAVIOUR_RANK = (
    "never_started",
    "stopped",
    "ran_out",
    "changed_dose",
    "missed_doses",
    "as_prescribed",
)


class Collector:
    """Candidates merged by key, so a repeated statement becomes one memory; a symptom's
    key is its name in the symptom vocabulary (its concept), whatever key it came with."""

    def __init__(self) -> None:
        self._items: dict[tuple[str, ...], Candidate] = {}
        # False while earlier (processed) messages are read: they give context only
        self.collecting = True
        # a symptom named more or less precisely than before ("pain", "dry cough") is
        # the one symptom it names (key → the key it was collected under)
        self._named: dict[tuple[str, ...], tuple[str, ...]] = {}

    def add(self, key: tuple[str, ...], candidate: Candidate) -> None:
        if not self.collecting:
            return
        if candidate.type == "symptom":  # one memory per symptom, however named and said
            key = ("symptom", concept(candidate.subject) or candidate.subject)
            if key not in self._items:
                key = self._same_symptom(key, candidate)
        existing = self._items.get(key)
        if existing is None:
            self._items[key] = candidate
            return
        seen = {(q.message_id, q.start) for q in existing.evidence}
        if any((q.message_id, q.start) not in seen for q in candidate.evidence):
            best = max(existing.confidence, candidate.confidence)
            existing.confidence = min(CEILING, best + REPEAT_GAIN)  # said again
        existing.evidence.extend(
            q for q in candidate.evidence if (q.message_id, q.start) not in seen
        )
        old = existing.attributes.get("details", [])
        new = candidate.attributes.get("details", [])
        existing.attributes["details"] = sorted(set(old) | set(new))
        if candidate.type == "adherence":
            if candidate.attributes.get("current"):
                existing.attributes["current"] = True
            ranks = [
                BEHAVIOUR_RANK.index(c.attributes.get("behavior", "as_prescribed"))
                for c in (existing, candidate)
            ]
            if ranks[1] < ranks[0]:
                for attr in ("behavior", "reason", "pattern", "pattern_said"):
                    if attr in candidate.attributes:
                        existing.attributes[attr] = candidate.attributes[attr]

    def candidates(self) -> list[Candidate]:
        return list(self._items.values())

    def said_in(self, message_id: str) -> list[Candidate]:
        """The candidates collected so far that quote this message."""
        return [
            c for c in self._items.values() if any(q.message_id == message_id for q in c.evidence)
        ]

    def _same_symptom(self, key: tuple[str, ...], candidate: Candidate) -> tuple[str, ...]:
        """The key of the one symptom collected so far that this names more or less
        precisely ("cough" and "dry cough", "pain" and "knee pain"), the more precise name
        kept; the key itself when there is none, or several ("pain" beside "knee pain"
        and "back pain")."""
        if key in self._named:
            return self._named[key]
        related = [
            k
            for k, c in self._items.items()
            if c.type == "symptom" and _narrower(c.subject, candidate.subject)
        ]
        if len(related) != 1:
            return key
        [found] = related
        self._named[key] = found
        existing = self._items[found]
        if len(words(candidate.subject)) > len(words(existing.subject)):
            existing.subject = candidate.subject
        return found


def _narrower(one: str, other: str) -> bool:
    """Whether one symptom name narrows the other: the same complaint, with words added
    ("lower back pain" and "back pain", "cough" and "dry cough")."""
    a, b = words(one), words(other)
    return a[-1:] == b[-1:] and (set(a) < set(b) or set(b) < set(a))


def quote(message: Message, start: int, end: int) -> Quote:
    """A verbatim quote of message[start:end] with its offsets."""
    return Quote(message_id=message.message_id, quote=message.text[start:end], start=start, end=end)


@dataclass
class Turn:
    """One patient or caregiver turn and what it answers."""

    message: Message
    parsed: list[Sentence]
    asked: Asked | None
    lex: Lexicon
    views: list[ConditionView]
    out: Collector
    # ingredients of the record's medications
    record_drugs: frozenset[str] = frozenset()
    # the last medication the turn named, for "I stopped those medications"
    last_med: Mention | None = None
    # the last medication named in the turns just before (either speaker)
    recent_med: Mention | None = None
    # the last body part named in the turns just before (either speaker)
    recent_part: str | None = None
    # the recorded condition the provider asked about last, in the turns just before
    recent_topic: Mention | None = None
    # the provider is examining the patient: a yes or no to "does that hurt?" is a finding
    examining: bool = False
    covered: set[str] = field(default_factory=set)
    # the patient goes on after the provider's "yeah .": the question was answered before
    continued: bool = False

    @property
    def question(self) -> Sentence | None:
        return self.asked.last if self.asked else None

    @property
    def text(self) -> str:
        return self.message.text

    def related(self, subject: str, said: str) -> bool:
        """Whether a symptom subject, as `said` (its side), bears on a condition in the
        record."""
        part_side = side(said, subject)
        return any(same_sided_condition(subject, part_side, v) for v in self.views)

    def conditions_of(self, subject: str) -> frozenset[str]:
        """The record conditions (fact keys) a symptom subject bears on."""
        return frozenset(v.fact.fact_key for v in self.views if same_condition(subject, v))

    def named_on_record(self, subject: str) -> frozenset[str]:
        """The record conditions (fact keys) a subject names by name (not by manifestation)."""
        return frozenset(
            v.fact.fact_key for v in self.views if same_condition(subject, v) == "name"
        )

    @cached_property
    def talked_about(self) -> frozenset[str]:
        """The record conditions (fact keys) the clinician names in the turn answered ("how
        are you doing with the heart failure ? any shortness of breath ?"), else the one
        asked about in the turns just before."""
        said = self.asked.sentences if self.asked else []
        named = frozenset().union(
            *(self.named_on_record(m.subject) for s in said for m, _ in s.mentions)
        )
        if named or self.recent_topic is None:
            return named
        return self.conditions_of(self.recent_topic.subject)

    def on_record(self, m: Mention) -> bool:
        """Whether a named drug is one of the record's medications."""
        return any(ingredients(d) & self.record_drugs for d in m.drugs)

    def with_part(
        self, m: Mention, said_before: str = "", answer: str = "", asked_only: bool = False
    ) -> str:
        """ "How is that right arm?" / "that pain is gone" → "arm pain"; "where's your
        pain?" / "in my left elbow" → "elbow pain"; "it's my right upper arm . it hurts
        really bad" → "arm pain": a bare complaint takes the body part of the question,
        else (unless `asked_only`) the first one of the `answer` to it, else the last one
        `said_before` it in the turn, else the one the conversation named last."""
        if m.kind != "symptom" or len(words(m.subject)) != 1:
            return m.subject
        hits = self.lex.complaints.find(tokenize(m.subject))
        if not hits:
            return m.subject
        part = self.asked.body_part(self.lex) if self.asked else None
        if part is None and not asked_only:
            part = (
                next((p for _, _, p in self.parts(answer)), None)
                or next((p for _, _, p in reversed(self.parts(said_before))), None)
                or self.recent_part
            )
        return f"{singular_part(part)} {hits[0][2]}" if part else m.subject

    def parts(self, text: str) -> list[tuple[int, int, str]]:
        """The body parts `text` names, parts joined by "and" as one ("my leg and knee")."""
        return part_groups(tokenize(text), self.lex) if text else []

    def quote(self, start: int, end: int) -> Quote:
        return quote(self.message, start, end)

    def asked_quote(self, question: Sentence) -> Quote:
        assert self.asked is not None
        return quote(self.asked.message, question.start, question.end)

    def with_question(self, quotes: list[Quote], first: bool) -> list[Quote]:
        """The quotes plus the provider's question, when the sentence opens the reply."""
        if first and self.question is not None:
            quotes.append(self.asked_quote(self.question))
        return quotes

    def clause(self, sentence: Sentence, m: Mention) -> Quote:
        s, e = clause_around(self.text, (sentence.start, sentence.end), m.start, m.end)
        return self.quote(s, e)

    def add(
        self,
        key: tuple[str, ...],
        type_: str,
        subject: str,
        text: str,
        evidence: list[Quote],
        attributes: dict[str, Any],
    ) -> None:
        if type_ == "symptom" and subject in self.lex.habits and not self.related(subject, text):
            return  # GUIDELINE §2: "i smoke" is a clinical state only of a recorded condition
        if type_ == "symptom" and len(parts := each_part(subject, self.lex)) > 1:
            for one in parts:  # each sharing the quotes
                self.add(("symptom", one), type_, one, text, list(evidence), dict(attributes))
            return
        own = [q.quote for q in evidence if q.message_id == self.message.message_id]
        if type_ == "symptom" and (part_side := side(" ".join(q.quote for q in evidence), subject)):
            attributes["side"] = part_side
        if type_ == "symptom" and (about := self.talked_about):
            attributes["talked_about"] = sorted(about)
        inferred = bool(attributes.get("class_drugs")) and not attributes.get("drugs")
        confidence = memory_confidence(str(attributes.get("via", "")), own, inferred)
        self.out.add(
            key,
            Candidate(
                type=type_,
                subject=subject,
                text=text,
                evidence=evidence,
                speaker=self.message.role.value,
                attributes=attributes,
                confidence=confidence,
            ),
        )
