"""Reading a chat model's answer into candidate memories, as models really answer.

Answers come fenced, wrapped in prose, with trailing commas, as a bare list, with the
memories nested or grouped by type, cut off half way, or with fields of the wrong type.
A small tolerant JSON reader (never `eval`) scans the answer for JSON values and keeps
every whole item; an item cut off by the end of the answer is dropped. Quotes are then
pinned to the message that really holds them (`llm_quotes`); `accept` still checks them.
"""

import re
from dataclasses import dataclass, field
from typing import Any

from engine.memories.extractor import MEMORY_TYPES, Candidate, Proposal
from engine.memories.llm_quotes import as_text, for_relate, pinned_quotes, quotes_in
from engine.models import Fact, Message, RelationshipType

_WS = " \t\r\n"
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "/": "/"}
_NUMBER = re.compile(r"-?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")
_LITERALS: dict[str, Any] = {"true": True, "false": False, "null": None}
_LITERALS |= {"True": True, "False": False, "None": None}  # Python-style answers
# Attributes that models put beside the item's fields instead of inside `attributes`.
_SYMPTOM_KEYS = ("present", "onset", "duration", "frequency", "severity", "trigger")
_ATTRIBUTE_KEYS = (*_SYMPTOM_KEYS, "behavior", "reason", "detail")
_CONFIDENCE_WORDS = {"high": 0.9, "medium": 0.6, "moderate": 0.6, "low": 0.3}
_OPENING = re.compile(r"[{\[]")
_THINKING = re.compile(r"<(think|thinking|reasoning)>.*?</\1>", re.DOTALL | re.IGNORECASE)
_MAX_DEPTH = 6  # how deep items are looked for
_MAX_NESTING = 64  # deeper JSON is not an answer; refusing it keeps recursion bounded


class _Syntax(Exception):
    """Not JSON at this position."""


class _TooDeep(_Syntax):
    """Nested deeper than any answer; what lies before the limit is not worth rereading."""


class _Reader:
    """Recursive descent over lenient JSON; `(value, complete)` where EOF cut it short."""

    def __init__(self, text: str, pos: int) -> None:
        self.text = text
        self.pos = pos
        self.depth = 0

    def _skip(self) -> bool:
        """Skips whitespace; False at the end of the text."""
        while self.pos < len(self.text) and self.text[self.pos] in _WS:
            self.pos += 1
        return self.pos < len(self.text)

    def value(self) -> tuple[Any, bool]:
        if not self._skip():
            return None, False
        ch = self.text[self.pos]
        if ch in "\"'":
            return self._string()
        if ch not in "{[":
            return self._literal()
        self.depth += 1
        if self.depth > _MAX_NESTING:
            raise _TooDeep
        value, complete = self._container("}" if ch == "{" else "]")
        self.depth -= 1
        return value, complete

    def _container(self, close: str) -> tuple[Any, bool]:
        self.pos += 1
        out: dict[str, Any] | list[Any] = {} if close == "}" else []
        while self._skip():
            ch = self.text[self.pos]
            if ch == close:
                self.pos += 1
                return out, True
            if ch == ",":  # trailing, doubled or leading commas are harmless
                self.pos += 1
                continue
            if ch in "}]":
                raise _Syntax
            key = ""
            if isinstance(out, dict):
                key, done = self._key()
                if not done or not self._skip():
                    return out, False
                if self.text[self.pos] != ":":
                    raise _Syntax
                self.pos += 1
            val, done = self.value()
            if isinstance(out, list):
                if not done:  # the item cut off by the end of the answer is not kept
                    return out, False
                out.append(val)
            elif done or isinstance(val, dict | list):
                out[key] = val  # a cut-off container keeps its whole parts
            if not done:
                return out, False
        return out, False

    def _key(self) -> tuple[str, bool]:
        if self.text[self.pos] in "\"'":
            return self._string()
        match = _WORD.match(self.text, self.pos)
        if not match:
            raise _Syntax
        self.pos = match.end()
        return match.group(), self.pos < len(self.text)

    def _string(self) -> tuple[str, bool]:
        text, quote = self.text, self.text[self.pos]
        self.pos += 1
        buf: list[str] = []
        while self.pos < len(text):
            ch = text[self.pos]
            if ch == quote:
                self.pos += 1
                return _join(buf), True
            if ch != "\\":
                buf.append(ch)
                self.pos += 1
                continue
            if self.pos + 1 >= len(text):
                break
            esc = text[self.pos + 1]
            if esc == "u":
                digits = text[self.pos + 2 : self.pos + 6]
                if len(digits) < 4:
                    break
                try:
                    buf.append(chr(int(digits, 16)))
                except ValueError:
                    buf.append(digits)
                self.pos += 6
            else:
                buf.append(_ESCAPES.get(esc, esc))
                self.pos += 2
        self.pos = len(text)
        return _join(buf), False

    def _literal(self) -> tuple[Any, bool]:
        for pattern in (_NUMBER, _WORD):
            match = pattern.match(self.text, self.pos)
            if match:
                break
        else:
            raise _Syntax
        token = match.group()
        self.pos = match.end()
        complete = self.pos < len(self.text)
        if pattern is _WORD:
            if token not in _LITERALS:
                raise _Syntax
            return _LITERALS[token], complete
        if re.fullmatch(r"-?\d{1,18}", token):
            return int(token), complete
        return float(token), complete


def _join(buf: list[str]) -> str:
    """Joins characters, pairing the surrogates of `\\ud83d\\ude00`-style escapes."""
    text = "".join(buf)
    try:
        return text.encode("utf-16", "surrogatepass").decode("utf-16")
    except UnicodeDecodeError:
        return text


@dataclass
class Answer:
    """What a model's answer held: the item objects, and how it was read."""

    items: list[dict[str, Any]] = field(default_factory=list)
    found_json: bool = False  # an object or an empty list: the model did answer in JSON
    truncated: bool = False  # the answer ended inside a JSON value


def read_answer(text: str) -> Answer:
    """Every memory item in a model's answer, however it was wrapped.

    Scans for JSON values from each `{` or `[`; a value that does not parse is skipped
    one character on, so items survive a broken neighbour. Items are collected from
    every value found, after any `<think>...</think>` block is set aside.
    """
    # Reasoning models think aloud first; drafts there are not the answer.
    text = _THINKING.sub("", text)
    answer = Answer()
    pos = 0
    while opening := _OPENING.search(text, pos):
        start = opening.start()
        reader = _Reader(text, start)
        try:
            value, complete = reader.value()
        except _TooDeep:
            pos = reader.pos
            continue
        except _Syntax:
            pos = start + 1
            continue
        if isinstance(value, dict) or value == []:
            answer.found_json = True
        found = _items(value, None, 0)
        answer.found_json = answer.found_json or bool(found)
        answer.items.extend(found)
        if not complete:
            answer.truncated = True
            break
        pos = reader.pos
    return answer


def _type_key(key: str) -> str | None:
    """The one memory type a type or group name names ("Symptoms", "medication_adherence",
    "patient concern"); None for none or several ("family_history")."""
    said = {w[:-1] if w.endswith("s") else w for w in re.split(r"[^a-z]+", key.lower())}
    named = said & MEMORY_TYPES
    return next(iter(named)) if len(named) == 1 else None


def _items(value: Any, kind: str | None, depth: int) -> list[dict[str, Any]]:
    """Item dicts found in a value; `kind` comes from an enclosing `{"symptom": [...]}`."""
    if depth > _MAX_DEPTH:
        return []
    if isinstance(value, list):
        return [i for v in value for i in _items(v, kind, depth + 1)]
    if not isinstance(value, dict):
        return []
    lower = {str(k).lower(): v for k, v in value.items()}
    if "memories" in lower:
        return _items(lower["memories"], kind, depth + 1)
    if "type" in lower or "subject" in lower:
        return [{**lower, "type": lower.get("type") or kind}]
    out: list[dict[str, Any]] = []
    for key, v in lower.items():
        if isinstance(v, dict | list):
            out.extend(_items(v, _type_key(key) or kind, depth + 1))
    return out


def to_candidates(
    items: list[dict[str, Any]], messages: list[Message], numbered: list[Fact] | None = None
) -> list[Candidate]:
    """Candidates from item dicts; quotes numbered from 1 in `messages` order, facts
    from 1 in `numbered` order (the prompt's `F1`, `F2`, ...).

    Fields of the wrong type are coerced where the meaning is plain and dropped where it
    is not. Items without a subject or without quotes are skipped. The type is passed on
    as the model gave it (lower case), so `accept` refuses anything but the four types.
    """
    out: list[Candidate] = []
    for item in items:
        subject = as_text(item.get("subject"))
        quotes = [pinned for n, q in quotes_in(item) for pinned in pinned_quotes(n, q, messages)]
        if not subject or not quotes:
            continue
        type_ = _type_key(as_text(item.get("type"))) or as_text(item.get("type")).lower()
        text = as_text(item.get("text")) or " … ".join(q.quote for q in quotes)
        attributes = item.get("attributes")
        attrs = dict(attributes) if isinstance(attributes, dict) else {}
        attrs |= {k: item[k] for k in _ATTRIBUTE_KEYS if k in item and k not in attrs}
        said = " ".join([text, *(q.quote for q in quotes)])
        out.append(
            Candidate(
                type=type_,
                subject=subject,
                text=text,
                evidence=quotes,
                attributes=for_relate(type_, subject, attrs, said),
                confidence=_confidence(item.get("confidence")),
                relationships=_proposals(item, numbered) if numbered is not None else None,
            )
        )
    return out


# "F3", "3", "fact 3", "#3", "F3 (Lisinopril 20 mg)": the number the prompt gave the fact
_FACT_NUMBER = re.compile(r"^\s*(?:F|fact\s*)?#?\s*(\d+)\b", re.IGNORECASE)
_FACT_KEYS = ("fact", "fact_number", "fact_id", "id", "number")


def _proposals(item: dict[str, Any], numbered: list[Fact]) -> list[Proposal]:
    """The item's relationship proposals; a number naming no fact gives `fact_key` None
    (so that `verify` counts it as refused rather than it vanishing here)."""
    raw = next((item[k] for k in ("relationships", "links", "edges") if k in item), None)
    out = []
    for entry in raw if isinstance(raw, list) else [raw] if isinstance(raw, dict) else []:
        if not isinstance(entry, dict):
            continue
        lower = {str(k).lower(): v for k, v in entry.items()}
        named = next((lower[k] for k in _FACT_KEYS if lower.get(k) not in (None, "")), "")
        match = _FACT_NUMBER.match(as_text(named))
        n = int(match.group(1)) if match else 0
        fact_key = numbered[n - 1].fact_key if 1 <= n <= len(numbered) else None
        why = as_text(lower.get("why") or lower.get("rationale") or lower.get("reason"))
        out.append(Proposal(fact_key=fact_key, type=_relationship_type(lower.get("type")), why=why))
    return out


def _relationship_type(value: Any) -> str:
    """One of the three types however the model inflected it ("conflict", "Enriched",
    "corroborate"); anything else as given, for `verify` to refuse."""
    said = as_text(value).lower()
    stem = said[:6]
    return next((t.value for t in RelationshipType if len(stem) == 6 and t.value[:6] == stem), said)


def _confidence(value: Any) -> float:
    if isinstance(value, str):
        word = _CONFIDENCE_WORDS.get(value.strip().lower())
        if word is not None:
            return word
        try:
            value = float(value.strip().rstrip("%"))
        except ValueError:
            return 0.5
    if isinstance(value, bool) or not isinstance(value, int | float) or value != value:
        return 0.5
    number = float(value) / 100 if 1 < value <= 100 else float(value)
    return min(1.0, max(0.0, number))
