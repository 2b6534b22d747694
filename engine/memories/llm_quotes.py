"""A model's quotes pinned to the messages that hold them, and its attributes shaped.

Models paraphrase a little: curly quotes, other spacing or case, ellipses, the wrong
message number, and they undo a transcript's tokenisation ("i do n't know , doctor" quoted
as "i don't know, doctor"). `locate` finds the message text each quote really is, so that
`accept` can check it verbatim; `for_relate` gives attributes the form `relate` reads.
"""

import re
from bisect import bisect_left
from typing import Any

from engine.memories import cues
from engine.memories.drugs import generic_names
from engine.memories.extractor import Quote
from engine.models import Message

# A model's `behavior` words → the guideline's values, the first match winning.
_BEHAVIOURS = (
    ("never_started", ("never", "not start", "not fill", "not pick")),
    ("ran_out", ("ran out", "ran_out", "run out", "out of")),
    ("as_needed", ("as needed", "as_needed", "prn")),
    ("missed_doses", ("miss", "skip", "forg")),
    ("stopped", ("stop", "quit", "discontinu")),
    ("changed_dose", ("chang", "reduc", "increas", "half", "extra", "dose")),
)
_NO = frozenset({"false", "no", "0", "0.0", "absent", "gone", "resolved", "none", ""})
_FOLD = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u2013": "-"})
_WRAPPERS = "\"'\u2018\u2019\u201c\u201d"
# How the prompt shows a message ("[3] patient: "), which a model may copy into a quote.
_SPEAKER = re.compile(r"^(?:\[\d+\]\s*)?(?:provider|patient|caregiver)\s*:\s*", re.IGNORECASE)
# The end of a sentence inside a quote, where a model may have joined two messages.
_SENTENCE_END = re.compile(r"[?.!](?=\s+\S)\s+")
_ELISION = re.compile(r"\s*(?:\.\.\.|…)\s*")
_ELISION_AT_ENDS = re.compile(r"^(?:\.\.\.|…)\s*|\s*(?:\.\.\.|…)$")
# A word as spoken: letters and digits, with an apostrophe inside ("don't", "n't").
_WORD = re.compile(r"[^\W_]+(?:['\u2019][^\W_]+)*")
# What a speaker says without meaning it as a word, and a model leaves out of a quote.
_FILLERS = frozenset({"um", "umm", "uh", "uhm", "er", "erm", "hmm", "mm", "ah"})


def quotes_in(item: dict[str, Any]) -> list[tuple[int | None, str]]:
    """The item's quotes as `(message number or None, text)`, however the model gave them."""
    raw = _first(item, ("quotes", "evidence", "quote"))
    if raw is None:
        return []
    if isinstance(raw, str) and "quotes" not in item and "evidence" not in item:
        raw = {"message": item.get("message"), "quote": raw}
    out: list[tuple[int | None, str]] = []
    for q in raw if isinstance(raw, list) else [raw]:
        if isinstance(q, str):
            match = re.match(r"\s*\[(\d+)\]\s*", q)
            out.append((int(match.group(1)), q[match.end() :]) if match else (None, q))
        elif isinstance(q, dict):
            lower = {str(k).lower(): v for k, v in q.items()}
            number = _first(lower, ("message", "msg", "turn", "index"))
            text = _first(lower, ("quote", "text", "span"))
            if isinstance(text, str):
                out.append((_number(number), text))
    return [(n, q) for n, q in out if q.strip()]


def _number(value: Any) -> int | None:
    """A message number from 3, 3.0, "3", "[3]" or "message 3"."""
    match = None if isinstance(value, bool) else re.search(r"\d+", str(value))
    return int(match.group()) if match else None


def _first(d: dict[str, Any], keys: tuple[str, ...]) -> Any:
    return next((d[k] for k in keys if k in d), None)


def locate(number: int | None, quote: str, messages: list[Message]) -> Quote:
    """The quote pinned to the message text that really holds it.

    First the named message (numbered from 1), as `find_span` reads it (verbatim, then
    ignoring case, spacing, curly quotes, tokenisation, fillers and elisions); otherwise
    the one message that holds it, if exactly one does, or else the one next to the named
    number that does (a model counting from 0, or from its own first line, is one off).
    The quote returned is then the message's own text. A quote found nowhere is returned
    as named, for `accept` to refuse.
    """
    named = messages[number - 1] if number is not None and 0 < number <= len(messages) else None
    if named is not None and (span := find_span(named.text, quote)):
        return _pinned(named, span)
    hits = [(n, m, span) for n, m in enumerate(messages, 1) if (span := find_span(m.text, quote))]
    next_to = [hit for hit in hits if number is not None and abs(hit[0] - number) == 1]
    for only in (hits, next_to):
        if len(only) == 1:
            return _pinned(*only[0][1:])
    unknown = named.message_id if named is not None else f"unknown:{number}"
    return Quote(message_id=unknown, quote=quote)


def pinned_quotes(number: int | None, quote: str, messages: list[Message]) -> list[Quote]:
    """`locate`'s quote; or, for one that runs on from one message into the next, as a
    model quoting a question and its answer together writes it ("Any chest pain? No."),
    a quote from each: the two messages around the named number, cut after a sentence."""
    whole = locate(number, quote, messages)
    if whole.start is not None:
        return [whole]
    pairs = range(1, len(messages)) if number is None else (number - 1, number)
    found = [
        (_pinned(messages[k - 1], first), _pinned(messages[k], second))
        for cut in _SENTENCE_END.finditer(quote)
        for k in pairs
        if 0 < k < len(messages)
        and (first := find_span(messages[k - 1].text, quote[: cut.start() + 1]))
        and (second := find_span(messages[k].text, quote[cut.end() :]))
    ]
    return list(found[0]) if len(found) == 1 else [whole]


def _pinned(message: Message, span: tuple[int, int]) -> Quote:
    start, end = span
    return Quote(message_id=message.message_id, quote=message.text[start:end], start=start, end=end)


def find_span(text: str, quote: str) -> tuple[int, int] | None:
    """Where `quote` is in `text`: verbatim; else, without the speaker label the prompt
    shows, after folding case, spacing and quote marks; else as speech (`_spoken_span`);
    else, for a quote the model shortened with an ellipsis ("i felt ... all night"), the
    text from its first part to its last."""
    if quote and (i := text.find(quote)) >= 0:
        return i, i + len(quote)
    cleaned = _SPEAKER.sub("", quote.strip().strip(_WRAPPERS).strip())
    cleaned = _ELISION_AT_ENDS.sub("", cleaned.strip(_WRAPPERS).strip())
    if not cleaned:
        return None
    span = _located(text, cleaned)
    parts = [part for part in _ELISION.split(cleaned) if part.strip()]
    if span is not None or len(parts) < 2:
        return span
    spans: list[tuple[int, int]] = []
    for part in parts:
        found = _located(text, part, spans[-1][1] if spans else 0)
        if found is None:
            return None
        spans.append(found)
    return spans[0][0], spans[-1][1]


def _located(text: str, quote: str, after: int = 0) -> tuple[int, int] | None:
    return _folded_span(text, quote, after) or _spoken_span(text, quote, after)


def _folded_span(text: str, quote: str, after: int = 0) -> tuple[int, int] | None:
    """`quote` in `text[after:]`, ignoring case, quote marks and the length of spaces."""
    folded_quote, _ = _fold(quote)
    if not folded_quote:
        return None
    folded, index = _fold(text)
    i = folded.find(folded_quote, bisect_left(index, after))
    if i < 0:
        return None
    return index[i], index[i + len(folded_quote) - 1] + 1


def _spoken_span(text: str, quote: str, after: int = 0) -> tuple[int, int] | None:
    """`quote` in `text[after:]` read as speech: by letters and digits only (so "don't" is
    "do n't" and "pain." is "pain ."), with the text's fillers ("um", "uh") and repeated
    words ("i i think") free to be left out, from the start of a word to the end of one."""
    want = _alnum(quote.lower())
    if not want:
        return None
    have, index, starts, skips = _speech(text)
    bounds = {*starts, len(have)}
    first_word = _WORD.search(quote.lower())
    head = len(_alnum(first_word.group())) if first_word else 1
    for start in starts:
        if index[start] < after or not have.startswith(want[:head], start):
            continue
        ends = {start}
        for n, ch in enumerate(want):
            reach = _skipped(ends, skips) if n else ends
            ends = {j + 1 for j in reach if j < len(have) and have[j] == ch}
        found = sorted(ends & bounds) or sorted(_skipped(ends, skips) & bounds)
        if found:
            return index[start], index[found[0] - 1] + 1
    return None


def _alnum(text: str) -> str:
    return "".join(ch for ch in text if ch.isalnum())


def _speech(text: str) -> tuple[str, list[int], list[int], dict[int, int]]:
    """The letters and digits of `text`, lower case, with their offsets in `text`; where
    each word starts among them; and, for each filler or word said again at once, where it
    starts → where it ends."""
    chars: list[str] = []
    index: list[int] = []
    starts: list[int] = []
    skips: dict[int, int] = {}
    words = list(_WORD.finditer(text))
    for n, word in enumerate(words):
        first = len(chars)
        starts.append(first)
        for offset, ch in enumerate(word.group()):
            if ch.isalnum():
                low = ch.lower()
                chars.append(low if len(low) == 1 else ch)
                index.append(word.start() + offset)
        following = words[n + 1].group().lower() if n + 1 < len(words) else ""
        said = word.group().lower()
        if said in _FILLERS or following == said or following.startswith((said + "'", said + "’")):
            skips[first] = len(chars)  # "um", "i i think", "it it's"
    return "".join(chars), index, starts, skips


def _skipped(positions: set[int], skips: dict[int, int]) -> set[int]:
    """The positions, and those reached from them by leaving out fillers and repeats."""
    out, todo = set(positions), list(positions)
    while todo:
        j = skips.get(todo.pop())
        if j is not None and j not in out:
            out.add(j)
            todo.append(j)
    return out


def _fold(text: str) -> tuple[str, list[int]]:
    """Lower case, one space for any whitespace run, straight quotes; with source offsets."""
    chars: list[str] = []
    index: list[int] = []
    for i, ch in enumerate(text):
        if ch.isspace():
            if chars and chars[-1] == " ":
                continue
            ch = " "
        low = ch.translate(_FOLD).lower()
        chars.append(low if len(low) == 1 else ch)
        index.append(i)
    return "".join(chars), index


def for_relate(type_: str, subject: str, attrs: dict[str, Any], said: str) -> dict[str, Any]:
    """The attributes in the form `relate` reads them (as the offline extractor sets them).

    symptom: `present` a bool, `gone`, `details` (which kinds of detail were given);
    adherence: `behavior` one of the guideline's values, `drugs` the generic names.
    """
    out = dict(attrs)
    given = out.get("details")
    details = {str(d) for d in given} if isinstance(given, list) else set()
    if type_ == "symptom":
        out["present"] = present = _present(out.get("present"))
        out["gone"] = not present and cues.gone(said)
        details |= {k for k in ("frequency", "severity", "duration", "trigger") if out.get(k)}
        details |= {"duration"} if out.get("onset") else set()
    elif type_ == "adherence":
        said_behaviour = as_text(out.get("behavior")).lower().replace("-", "_")
        behaviour = next(
            (name for name, words in _BEHAVIOURS if any(w in said_behaviour for w in words)),
            "as_prescribed",
        )
        if behaviour == "as_needed":
            behaviour, out["pattern"] = "changed_dose", "as_needed"
        out["behavior"] = behaviour
        out["drugs"] = sorted(generic_names(subject))
        out["class_drugs"] = []
    out["details"] = sorted(details)
    return out


def _present(value: Any) -> bool:
    """False only for a plain no (`false`, "no", 0, "gone"...); unknown means present."""
    return value is None or str(value).strip().lower() not in _NO


def as_text(value: Any) -> str:
    """A field as text: a list's first item; "" for nothing, an object or a bool."""
    if isinstance(value, list):
        value = value[0] if value else ""
    if value is None or isinstance(value, dict | bool):
        return ""
    return str(value).strip()
