"""Sentence-level cues: answer polarity, adherence behaviour, details, resolution."""

import re
from enum import StrEnum

from engine.memories.lexicon import Lexicon
from engine.memories.text import PhraseIndex, tokenize, words


class Polarity(StrEnum):
    YES = "yes"
    NO = "no"
    GOOD = "good"
    BAD = "bad"
    NONE = "none"


_FILLER = r"(?:(?:um+|uh+|oh|well|so|mm+|hmm+|ah|okay|ok|and|but)\W+)*"
_YES = re.compile(
    _FILLER + r"(yes|yeah|yep|yup|yea|uh-huh|mm-hmm|correct|right|sure|absolutely|definitely"
    r"|i do|i am|i have|i did|i will|i think so|of course|that's right|that's correct|i sure)\b"
)
_NO = re.compile(
    _FILLER + r"(no|nope|nah|not really|not that|never|none|nothing|not at all|negative"
    r"|i do n't|i don't|i do not|i have n't|i haven't|i have not|i'm not|i am not|i did n't"
    r"|i didn't|i did not|i've not|i wo n't|i won't)\b"
)
_GOOD = re.compile(r"\b(good|great|fine|better|well|excellent|perfect|alright|all right)\b")
_BAD = re.compile(r"\b(worse|bad|terrible|awful|horrible)\b")
_GONE = re.compile(
    r"\b(gone|go away|went away|goes away|no longer|any ?more|used to|resolved|cleared up"
    r"|have n't had|haven't had|have n't felt|haven't felt|not having|since then"
    r"|went down|go down)\b"
)
_DETAILS = {
    "frequency": r"\b(every|times|always|constant|constantly|daily|often|sometimes|once|"
    r"at night|in the morning|mornings|nights|coming and going|off and on|all the time)\b",
    "severity": r"\b(severe|mild|bad|terrible|horrible|a lot|a little|really|pretty|worse|"
    r"better|much|so|out of 10|brutal)\b",
    "duration": r"\b(days?|weeks?|months?|years?|since|for the past|lately|recently)\b",
    "trigger": r"\b(when|whenever|because|'cause|after|if i|from)\b",
}
_REASON = re.compile(r"\b(because|'cause|cause|since|due to|it made|made me|upset|side effects?)\b")


def polarity(answer: str) -> Polarity:
    """How a patient's reply answers a yes/no question (first sentence only)."""
    text = answer.lower().strip()
    yes, no = _YES.match(text), _NO.match(text)
    if yes and (not no or yes.end() > no.end()):
        return Polarity.YES
    if no:
        return Polarity.NO
    if len(words(text)) <= 8:
        if _BAD.search(text):
            return Polarity.BAD
        if _GOOD.search(text):
            return Polarity.GOOD
    return Polarity.NONE


def leading_answer(text: str) -> int:
    """Length of a leading "no ," / "yes ," that answers a question rather than negates.

    ConText would read "no , i have a stuffy nose" as a negated stuffy nose.
    """
    match = re.match(r"\W*(no|nope|nah|yes|yeah|yep)\s*[,.]\s*(?=\w)", text, re.IGNORECASE)
    return match.end() if match else 0


def gone(sentence: str) -> bool:
    """Whether the sentence says something is gone or no longer there."""
    return bool(_GONE.search(sentence.lower()))


def details(sentence: str) -> list[str]:
    """Which kinds of detail (frequency, severity, duration, trigger) the sentence adds."""
    text = sentence.lower()
    return [name for name, pattern in _DETAILS.items() if re.search(pattern, text)]


def behaviour(sentence: str, lex: Lexicon) -> str:
    """The adherence behaviour a sentence describes; `as_prescribed` by default."""
    tokens = tokenize(sentence)
    for name, index in lex.behaviours:
        if index.find(tokens):
            return name
    return "as_prescribed"


def reason(sentence: str) -> str | None:
    """The stated reason ("because it upset my stomach"), if any."""
    match = _REASON.search(sentence.lower())
    return sentence[match.start() :].strip(" .") if match else None


def has_any(sentence: str, index: PhraseIndex[str]) -> str | None:
    """The first phrase of `index` found in the sentence."""
    hits = index.find(tokenize(sentence))
    return hits[0][2] if hits else None


def negated_cue(sentence: str, cue: str) -> bool:
    """ "i'm not worried": a negation just before the cue."""
    tokens = words(sentence)
    cue_words = words(cue)
    for k in range(len(tokens)):
        if tuple(tokens[k : k + len(cue_words)]) == cue_words:
            before = tokens[max(0, k - 3) : k]
            return any(w in {"not", "n't", "no", "never"} for w in before)
    return False
