"""Text helpers: tokens with offsets, sentences and clauses, phrase lookup."""

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Generic, TypeVar

V = TypeVar("V")

_TOKEN = re.compile(r"n't|[a-z0-9]+(?:'[a-z]+)?")
_SENTENCE_END = re.compile(r"(?<=[.?!])\s+")
_CLAUSE_BREAK = re.compile(r"\s*[,;]\s+|\s+(?:but|and then|so)\s+")
MAX_CLAUSE = 160


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
    return [(s, e) for s, e in (_trim(text, s, e) for s, e in spans) if e > s]


def clause_around(text: str, sentence: tuple[int, int], start: int, end: int) -> tuple[int, int]:
    """The clause of a long sentence that holds [start, end); short sentences stay whole.

    Spoken transcripts often run many clauses together without a full stop; quoting the
    whole run would claim more than the patient said about the subject.
    """
    s, e = sentence
    if e - s <= MAX_CLAUSE:
        return sentence
    cuts = [s] + [s + m.end() for m in _CLAUSE_BREAK.finditer(text[s:e])] + [e]
    lo = max(c for c in cuts if c <= start)
    hi = min(c for c in cuts if c >= end)
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


class PhraseIndex(Generic[V]):
    """Longest-first lookup of multi-word phrases in a token sequence."""

    def __init__(self, phrases: Mapping[str, V] | Iterable[tuple[str, V]]) -> None:
        items = phrases.items() if isinstance(phrases, Mapping) else phrases
        self._index: dict[tuple[str, ...], V] = {}
        for phrase, value in items:
            key = words(phrase)
            if key:
                self._index.setdefault(key, value)
        self._max = max((len(k) for k in self._index), default=0)

    def __contains__(self, phrase: str) -> bool:
        return words(phrase) in self._index

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
        return None
