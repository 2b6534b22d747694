"""Adherence statements in a patient turn, and which medication they are about.

A drug named in the sentence is the subject. An unnamed one ("the medication", "those
pills", "it") is resolved from the conversation: first the medication the patient named
earlier in the same turn ("I was taking antiretroviral medications ... I stopped those
medications"); otherwise the drugs the provider named in the turn being answered ("are
you still taking the metformin?" / "I take it with breakfast"); otherwise, in reply to
a question about what is taken, the drug named in the last few turns ("I started my
ferrous sulfate again" / "and what are you taking?" / "25 milligram tablets, twice
daily"). A phrase that names a class ("my blood pressure pill") or a product ("the scar
gel") keeps those words for `relate` to resolve against the record. What others did
("they gave me aspirin") and reading out a list are not adherence.
"""

import re
from dataclasses import replace

from engine.memories import cues
from engine.memories.entities import product_words
from engine.memories.exchange import Asked, Sentence
from engine.memories.mentions import MEDS, SYMPTOMISH, Mention, class_drugs
from engine.memories.regimen import dose_amounts, frequencies, on_schedule
from engine.memories.text import clause_around, stem, tokenize, words
from engine.memories.turn import Turn

# Words of a provider question that ask how a medication is taken or working.
QUESTION_VERBS = frozenset(
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
        "helping",
        "helped",
        "working",
        "worked",
        "started",
        "start",
        "pick",
        "picked",
        "fill",
        "filled",
    ]
)
# A question about whether a medication works; the reply may describe it without a verb
# of taking ("is the medication helping?" / "the pain medication is horrible").
EFFECT_WORDS = frozenset(["helping", "helped", "working", "worked", "effects", "effect"])
PRONOUNS = frozenset({"it", "them", "that", "those", "these", "this", "one"})
_DEMONSTRATIVES = frozenset({"those", "these", "that", "this", "the", "them"})
_EFFECTS = ("side effect", "help", "only when", "almost out")
_OTHERS = frozenset({"other", "all", "rest", "any", "new", "another"})
# A question asking what the patient does for a complaint: "what are you doing for the
# pain?", "what have you done for it?" (not "what can i do for you?").
_DOING_FOR = re.compile(r"\b(?:do|doing|done|did)(?:\s+\w+)?\s+for\s+(?!you\b)")
# "for" and at most two words before a complaint: "for my pain", "for occasional pain".
_FOR = re.compile(r"\bfor(?:\s+[\w-]+){0,2}\s*$")
_LIST = re.compile(r"\b(list of|here are|here's|here is)\b", re.IGNORECASE)
_OTHERS_GAVE = re.compile(
    r"\b(they|she|he|doctor|dr|\w+ did)\s+(?:\w+\s+){0,2}?(gave|give|put|prescribed"
    r"|added|switched|increased|changed)\b",
    re.IGNORECASE,
)
_I_TAKE = re.compile(
    r"\b(i|i'm|i've|i am|i have)\b(?:\W+\w+){0,3}?\W+(take|taking|took|use|using|used|stopped"
    r"|quit|missed|miss|forget|forgot|skip|skipped|ran|run|started)\b",
    re.IGNORECASE,
)
MAX_PER_SENTENCE = 4


def key(m: Mention) -> tuple[str, ...]:
    """What one adherence memory is about: the drug, however it was said ("antibiotic" and
    "antibiotics" are one class)."""
    return ("adherence", *(m.drugs or (m.subject,)))


def specific(m: Mention) -> bool:
    """A drug, or a phrase that says which medication ("water pill", "antiretrovirals")."""
    return bool(m.drugs or m.class_drugs or product_words(m.subject))


def read_adherence(turn: Turn, sentence: Sentence, first: bool) -> None:
    """Adherence candidates of one sentence (see the module docstring)."""
    meds = [m for m, a in sentence.mentions if m.kind in MEDS and not a.hypothetical]
    own = [m for m in meds if specific(m)]
    try:
        if sentence.question:
            return
        _read(turn, sentence, first, meds)
    finally:
        if own:
            turn.last_med = own[-1]


def _read(turn: Turn, sentence: Sentence, first: bool, meds: list[Mention]) -> None:
    tokens = set(words(cues.without_other_senses(sentence.text)))
    question = _question(turn)
    asked = first and question is not None and _asks_use(question)
    effect = asked and question is not None and bool(question.words() & EFFECT_WORDS)
    # a behaviour said without a verb of taking ("never got it filled", "cut it in half",
    # "only when i need it") is as strong a cue as one
    status = cues.behaviour_phrase(sentence.text, turn.lex)[0] != "as_prescribed"
    strong = bool(tokens & turn.lex.adherence_verbs) or status
    weak = bool({stem(t) for t in tokens} & turn.lex.adherence_weak_verbs)
    meds = [m for m in meds if not _listed(turn, sentence, m)]
    if any(m.kind == "drug" for m in meds):
        meds = [m for m in meds if specific(m)]
    elif not (strong or effect):
        meds = []
    if not (strong or weak or asked):
        return
    asked_meds = question.asked_meds() if question else []
    if _prescribed_by_others(sentence.text) and not status:
        return  # "they gave me aspirin"; but "... but i couldn't fill it" is the patient's
    found = [(m, "named") for m in meds]
    if strong and tokens & PRONOUNS and first:
        found += [(m, "pronoun-asked") for m in asked_meds if m.kind == "drug"]
    elif not meds and strong and tokens & PRONOUNS:
        found = [(turn.last_med, "pronoun-own")] if turn.last_med else []
        found = found or [(m, "pronoun-asked") for m in asked_meds]
    if not found and asked and (strong or _states_regimen(sentence.text)):
        # "how are you taking the lisinopril?" / "i take ten milligrams once a day":
        # the answer's subject is the one drug the question named
        drugs = [m for m in asked_meds if m.kind == "drug"]
        found = [(drugs[0], "answer-asked")] if len(drugs) == 1 else []

    resolved: list[tuple[Mention, str]] = []
    for m, via in found:
        mine = any(m is x for x, _ in sentence.mentions)
        before = turn.text[sentence.start : m.start] if mine else None
        for r, how in resolve(turn, m, before):
            if all(r != x for x, _ in resolved):
                resolved.append((r, how or via))
    for m, via in resolved[:MAX_PER_SENTENCE]:
        add_candidate(turn, sentence, m, first, via)


def _asks_use(asked: Asked) -> bool:
    """The provider's question asks what the patient takes or does for something."""
    return bool(asked.words() & QUESTION_VERBS) or any(
        _DOING_FOR.search(q.text.lower()) for q in asked.questions
    )


def _question(turn: Turn) -> Asked | None:
    """The provider turn whose drugs an unnamed one may be; none for a reply the patient
    goes on with after the provider's "yeah ." ("is that helping control the pain ?" /
    "i think it is ." / "yeah ." / "but it does come every now and then": the pain)."""
    return None if turn.continued else turn.asked


def resolve(turn: Turn, m: Mention, before: str | None = None) -> list[tuple[Mention, str]]:
    """The medication(s) an unnamed mention stands for, and how; itself when it names one.

    `before` is the patient's text just before the mention when the patient said it
    (None for the provider's words): the patient's own unnamed "those medications" or "my
    medications" is what the patient named last in the turn, unless it says "other".
    """
    if specific(m):
        return [(m, "")]
    near = set(words(before or "")[-2:])
    if before is not None and turn.last_med is not None and not near & _OTHERS:
        # "Lamictal was okay ... I have been taking my medications very regularly"
        how = "demonstrative" if near & _DEMONSTRATIVES else "same-turn"
        return [(turn.last_med, how)]
    question = _question(turn)
    named = question.named_meds() if question else []
    if named:
        return [(n, "provider-named") for n in named]
    if question is not None and turn.recent_med is not None and _asks_use(question):
        # "i started taking my iron pills" / "and what are you taking?" / "25 mg tablets"
        return [(turn.recent_med, "recent")]
    # "in terms of your high blood pressure, how are you doing?" / "i take my medicine"
    topic = (question.topic(turn.conditions_of) if question else None) or turn.recent_topic
    treats = class_drugs(topic.subject, turn.lex) if topic else ()
    if treats:
        return [(replace(m, class_drugs=treats), "provider-topic")]
    return [(m, "unnamed")]


def add_candidate(turn: Turn, sentence: Sentence, m: Mention, first: bool, via: str) -> None:
    """One adherence candidate for medication `m`, quoting the sentence."""
    behaviour, phrase = cues.behaviour_phrase(sentence.text, turn.lex)
    if behaviour == "as_prescribed":
        behaviour, phrase = _pattern_nearby(turn, sentence) or (behaviour, phrase)
    attrs: dict[str, object] = {
        "drugs": list(m.drugs),
        "class_drugs": list(m.class_drugs),
        "via": via,
    }
    if behaviour == "as_needed":
        behaviour, attrs["pattern"], attrs["pattern_said"] = "changed_dose", "as_needed", phrase
    if behaviour == "never_started" and via != "named" and not turn.on_record(m):
        return  # "ever tried clindamycin?" / "never tried it": nothing to adhere to
    attrs["behavior"] = behaviour
    attrs["plural"] = plural(m)
    # what is said of this drug: its clause ("i take crestor daily and then tylenol for
    # occasional pain" says nothing of how often the crestor is missed)
    clause = _clause_text(turn, sentence, m)
    attrs["current"] = cues.current_use(clause)
    why = cues.reason(sentence.text)
    if why and behaviour in {"stopped", "never_started"}:
        attrs["reason"] = why
    detail = cues.details(clause)
    if any(w in clause.lower() for w in _EFFECTS) or _effect_nearby(turn, sentence):
        detail.append("effect")
    attrs["details"] = detail if behaviour != "as_prescribed" or "effect" in detail else []
    said = turn.clause(sentence, _anchor(turn, sentence, m))
    turn.add(
        key(m),
        "adherence",
        m.subject,
        sentence.text,
        turn.with_question([said], first),
        attrs,
    )


def _states_regimen(text: str) -> bool:
    """The sentence gives a dose or how often ("ten milligrams", "twice a day")."""
    return bool(dose_amounts(text) or frequencies(text))


def plural(m: Mention) -> bool:
    """ "my pills", "those medications": more than one product may be meant."""
    last = words(m.subject)[-1:]
    return m.kind == "mednoun" and bool(last) and last[0].endswith("s")


def _effect_nearby(turn: Turn, sentence: Sentence) -> bool:
    """A symptom in the sentence or next to it ("The pain medication is horrible. I have
    been throwing up"; "I have been having some severe bruising. I have been taking
    Coumadin"): an effect, wanted or not, of taking it."""
    k = turn.parsed.index(sentence)
    near = turn.parsed[max(0, k - 1) : k + 2]
    return any(
        m.kind in SYMPTOMISH and not a.negated and not _indication(turn.text, m)
        for s in near
        for m, a in s.mentions
    )


def _indication(text: str, m: Mention) -> bool:
    """ "tylenol for occasional pain": what a drug is taken for, not what it did."""
    return bool(_FOR.search(text[: m.start]))


def _listed(turn: Turn, sentence: Sentence, m: Mention) -> bool:
    """ "Here's a list of my medications": reading a list is not adherence (GUIDELINE §2)."""
    return bool(_LIST.search(turn.text[sentence.start : m.start]))


def _prescribed_by_others(text: str) -> bool:
    """ "They gave me an anticonvulsant and aspirin": what was prescribed, not how the
    patient takes it, unless the patient also says so ("... and I've been taking them")."""
    return bool(_OTHERS_GAVE.search(text)) and not _I_TAKE.search(text)


def _pattern_nearby(turn: Turn, sentence: Sentence) -> tuple[str, str | None] | None:
    """ "only when it goes over 85 degrees . so that's when i've been using it": the
    as-needed pattern said next to the sentence, in one that names no other drug, when
    the sentence gives no schedule of its own ("i take my medicine daily ." stands)."""
    if on_schedule(sentence.text):
        return None
    k = turn.parsed.index(sentence)
    for near in turn.parsed[max(0, k - 1) : k] + turn.parsed[k + 1 : k + 2]:
        if any(m.kind in MEDS for m, _ in near.mentions):
            continue
        name, phrase = cues.behaviour_phrase(near.text, turn.lex)
        if name == "as_needed":
            return name, phrase
    return None


def _anchor(turn: Turn, sentence: Sentence, m: Mention) -> Mention:
    """What to quote around: the drug when the sentence names it, else the verb of
    taking ("she added two medications ... i've been taking them")."""
    in_sentence = sentence.start <= m.start < sentence.end and m.end <= sentence.end
    if in_sentence and not _far_from_verb(turn, sentence, m):
        return m
    verbs = [t for t in tokenize(sentence.text) if t.text in turn.lex.adherence_verbs]
    offset = m.start - sentence.start if in_sentence else 0
    after = [t for t in verbs if t.start >= offset]
    verb = after[0] if after else (verbs[-1] if verbs else None)
    if verb is not None:
        return Mention("verb", sentence.start + verb.start, sentence.start + verb.end, verb.text)
    return m if in_sentence else Mention("sentence", sentence.start, sentence.end, "")


def _far_from_verb(turn: Turn, sentence: Sentence, m: Mention) -> bool:
    """The drug is named in one clause of a long run-on and taken in another."""
    s, e = clause_around(turn.text, (sentence.start, sentence.end), m.start, m.end)
    clause = set(words(turn.text[s:e]))
    return bool(set(words(sentence.text)) & turn.lex.adherence_verbs) and not (
        clause & turn.lex.adherence_verbs
    )


def _clause_text(turn: Turn, sentence: Sentence, m: Mention) -> str:
    """The clause naming the drug ("i was also on lisinopril before but ... i'm on" says
    nothing current about lisinopril), or the sentence when it names none."""
    if not sentence.start <= m.start < sentence.end:
        return sentence.text
    s, e = clause_around(turn.text, (sentence.start, sentence.end), m.start, m.end, always=True)
    return turn.text[s:e]
