"""Text helpers: tokens with offsets, sentences and clauses, phrase lookup."""

import re
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Generic, TypeVar

import snowballstemmer

V = TypeVar("V")

_TOKEN = re.compile(r"n't|[a-z0-9]+(?:'[a-z]+)?")
_SENTENCE_END = re.compile(r"(?<=[.?!])\s+")
_CLAUSE_BREAK = re.compile(r"\s*[,;]\s+|\s+(?:but|and then|so)\s+")
MAX_CLAUSE = 160
# Where a question starts, for transcripts that drop the question mark (ASR) and for
# "I have this wart on my finger, can you freeze it off?". Inversions with "you" count
# anywhere; the weaker openers only at the start of a sentence.
_ASK_ANYWHERE = (
    r"(?:are|do|did|have|were|can|could|would|will|should)\s+you(?![\w'])"
    r"|(?:has|does|did)\s+(?:it|that|this|the|your|anything|everything)(?![\w'])"
    r"|how(?:'s|\s+(?:are|is|was|were|have|has|do|does|did|about|long|many|often|much|bad))\b"
    r"|what(?:'s|\s+(?:are|is|was|were|have|has|do|does|did|kind|brings|about|seems))\b"
    r"|tell me (?:a little (?:bit )?)?(?:more )?about\b"
    r"|(?:is|was)\s+(?:that|it|this)\s+\w+ing\b"
)
_ASK = re.compile(r"\b(?:" + _ASK_ANYWHERE + r")", re.IGNORECASE)
_OPENER = re.compile(
    r"^(?:(?:okay|ok|so|and|alright|all right|now|um|uh|well|then|also|but)\W+)*"
    r"(?:any|is|was|are there|are they|were they)\b",
    re.IGNORECASE,
)
# "i think we have you on twenty milligrams": a statement, not "have you ...?"
_SUBJECT_BEFORE = re.compile(r"\b(?:we|i|they|he|she|i'll|we'll)\s+$", re.IGNORECASE)
MAX_QUESTION_WORDS = 30
_FIRST_PERSON = re.compile(r"\b(i|i'm|i've|i'd|my|me|mine)\b", re.IGNORECASE)
_OWN_ACTION = re.compile(
    r"^(?:(?:okay|ok|so|and|alright|all right|now|um|uh|well)\W+)*(?:let me|i'm going to"
    r"|i am going to|i'll|i will|we'll|we will|i'm gon na|i want to)\b",
    re.IGNORECASE,
)
_FOLDED_QUESTION = re.compile(r",\s+(?=(?:" + _ASK_ANYWHERE + r"))", re.IGNORECASE)


@dataclass(frozen=True)
class Token:
    text: str
    start: int
    end: int


def tokenize(text: str) -> list[Token]:
    """Lower-cased word tokens with character offsets into `text`."""
    return [Token(m.group(), m.start(), m.end()) for m in _TOKEN.finditer(text.lower())]


def words(text: str) -> tuple[str, ...]:
    """The lower-cased word tokens of `text`."""
    return tuple(t.text for t in tokenize(text))


def sentences(text: str) -> list[tuple[int, int]]:
    """(start, end) of each sentence, trimmed of surrounding whitespace."""
    spans: list[tuple[int, int]] = []
    start = 0
    for m in _SENTENCE_END.finditer(text):
        spans.append((start, m.start()))
        start = m.end()
    spans.append((start, len(text)))
    out: list[tuple[int, int]] = []
    for s, e in (_trim(text, s, e) for s, e in spans):
        if e > s:
            out.extend(_unfold(text, s, e))
    return out


def _unfold(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """ "I have a wart on my finger, can you freeze it off?" → the statement, the question."""
    if not text[start:end].rstrip().endswith("?"):
        return [(start, end)]
    cuts = list(_FOLDED_QUESTION.finditer(text, start, end))
    if not cuts or len(tokenize(text[start : cuts[-1].start()])) < 3:
        return [(start, end)]
    cut = cuts[-1]
    if not _FIRST_PERSON.search(text, start, cut.start()):
        return [(start, end)]  # "so , with the thyroid , does that always happen ?"
    return [_trim(text, start, cut.start()), (cut.end(), end)]


def question_spans(text: str, sentence: tuple[int, int]) -> list[tuple[int, int]]:
    """The parts of a sentence that ask something, in order; none for a statement.

    A sentence ending in "?" is one question. Without the mark (speech recognition drops
    it, and runs questions together), each inversion starts a question ("are you taking
    the lisinopril i think we have you on twenty": "we have you" is no inversion), as
    does an opening "any ..." / "is there ...": "have you noticed any blood in your urine
    has it been darker" asks two things. An unmarked "question" of more than
    `MAX_QUESTION_WORDS` words is an explanation that happens to contain "what does this
    mean".
    """
    s, e = sentence
    if _OWN_ACTION.match(text[s:e]):
        return []  # "let me listen to your heart , okay ?" announces, it does not ask
    if text[s:e].rstrip().endswith("?"):
        return [sentence]
    starts = [
        m.start()
        for m in _ASK.finditer(text, s, e)
        if not (m.group().lower().startswith("have") and _SUBJECT_BEFORE.search(text, s, m.start()))
    ]
    if _OPENER.match(text[s:e]) and s not in starts:
        starts.insert(0, s)
    if not starts:
        return []
    pieces = [_trim(text, a, b) for a, b in zip(starts, [*starts[1:], e], strict=True)]
    return [(a, b) for a, b in pieces if len(tokenize(text[a:b])) <= MAX_QUESTION_WORDS]


def clause_around(
    text: str, sentence: tuple[int, int], start: int, end: int, always: bool = False
) -> tuple[int, int]:
    """The clause of a long sentence that holds [start, end); short sentences stay whole
    unless `always`.

    Spoken transcripts often run many clauses together without a full stop; quoting the
    whole run would claim more than the patient said about the subject.
    """
    s, e = sentence
    if e - s <= MAX_CLAUSE and not always:
        return sentence
    cuts = [s] + [s + m.end() for m in _CLAUSE_BREAK.finditer(text[s:e])] + [e]
    # A mention may reach past the sentence (a span found in the whole turn): clamp to it.
    lo = max((c for c in cuts if c <= start), default=s)
    hi = min((c for c in cuts if c >= end), default=e)
    if hi - lo < 40:  # too short to stand alone: take a neighbour too
        lo = max([c for c in cuts if c < lo] or [lo])
        hi = min([c for c in cuts if c > hi] or [hi])
    return _trim(text, lo, hi)


def _trim(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start] in " ,;":
        start += 1
    while end > start and text[end - 1] in " ,;":
        end -= 1
    return start, end


# Word endings of the inflected and derived forms a stem may stand for: "palpitating" is
# said of palpitations, "painful" of pain, "dizzy" of dizziness; "prostate" is not
# prostatitis.
_DERIVED = re.compile(r"(?:ing|ed|ful|y|ies|es)$")
MIN_STEM = 4
# A Snowball stemmer keeps the word it works on in itself: threads sharing one (a server's
# requests) corrupt each other's stems, so each thread has its own.
_STEMMERS = threading.local()


def stem(word: str) -> str:
    """The Snowball (Porter 2) stem of one word: "palpitating" and "palpitations" → palpit."""
    stemmer = getattr(_STEMMERS, "english", None)
    if stemmer is None:
        stemmer = _STEMMERS.english = snowballstemmer.stemmer("english")
    return str(stemmer.stemWord(word))


class PhraseIndex(Generic[V]):
    """Longest-first lookup of multi-word phrases in a token sequence; a one-word phrase
    is also found written as two ("pain killer" for "painkiller").

    With `stems`, a single word also finds the one-word phrase of its Snowball stem when
    it is an inflected or derived form (`_DERIVED`) and no phrase matches it as it is.
    """

    def __init__(
        self, phrases: Mapping[str, V] | Iterable[tuple[str, V]], stems: bool = False
    ) -> None:
        items = phrases.items() if isinstance(phrases, Mapping) else phrases
        self._index: dict[tuple[str, ...], V] = {}
        for phrase, value in items:
            key = words(phrase)
            if key:
                self._index.setdefault(key, value)
        self._max = max((len(k) for k in self._index), default=0)
        self._stems: dict[str, V] = {}
        if stems:
            for key, value in self._index.items():
                if len(key) == 1 and len(root := stem(key[0])) >= MIN_STEM:
                    self._stems.setdefault(root, value)

    def extended(self, phrases: Iterable[tuple[str, V]]) -> "PhraseIndex[V]":
        """This index with more phrases (its own win where both have one)."""
        return PhraseIndex([*((" ".join(k), v) for k, v in self._index.items()), *phrases])

    def __contains__(self, phrase: str) -> bool:
        return words(phrase) in self._index

    def get(self, phrase: str) -> V | None:
        """The value of exactly this phrase."""
        return self._index.get(words(phrase))

    def find(
        self, tokens: list[Token], plurals: Callable[[tuple[str, ...]], bool] | bool = False
    ) -> list[tuple[int, int, V]]:
        """Non-overlapping (first token, last token + 1, value) matches, longest first."""
        found: list[tuple[int, int, V]] = []
        i = 0
        while i < len(tokens):
            hit = self._longest(tokens, i, plurals if callable(plurals) else lambda _: plurals)
            if hit is None:
                i += 1
                continue
            found.append((i, hit[0], hit[1]))
            i = hit[0]
        return found

    def _longest(
        self, tokens: list[Token], i: int, plurals: Callable[[tuple[str, ...]], bool]
    ) -> tuple[int, V] | None:
        for n in range(min(self._max, len(tokens) - i), 0, -1):
            key = tuple(t.text for t in tokens[i : i + n])
            if key in self._index:
                return i + n, self._index[key]
            last = key[-1]
            if len(last) > 3 and last.endswith("s"):
                singular = (*key[:-1], last[:-1])
                if singular in self._index and plurals(singular):
                    return i + n, self._index[singular]
        if i + 1 < len(tokens):  # a compound heard as two words: "pain killer", "back ache"
            joined = (tokens[i].text + tokens[i + 1].text,)
            if joined in self._index:
                return i + 2, self._index[joined]
        word = tokens[i].text
        acting = i + 1 < len(tokens) and tokens[i + 1].text == "to"  # "forgetting to take"
        if self._stems and _DERIVED.search(word) and not acting:
            root = stem(word)
            if root != word and root in self._stems:
                return i + 1, self._stems[root]
        return None
