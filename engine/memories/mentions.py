"""Finding what a message mentions: symptoms, conditions, body complaints, medications."""

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import product

from engine.memories.drugs import find_in_tokens
from engine.memories.lexicon import Lexicon, SymptomTerm
from engine.memories.text import Token, stem, tokenize, words

SYMPTOMISH = frozenset({"symptom", "condition", "body"})
MEDS = frozenset({"drug", "mednoun"})
_IRREGULAR = {"feet": "foot", "teeth": "tooth", "calves": "calf", "sinuses": "sinus"}
_MODIFIER_STOP = frozenset(
    [
        "my",
        "the",
        "a",
        "an",
        "your",
        "his",
        "her",
        "their",
        "our",
        "this",
        "that",
        "these",
        "those",
        "all",
        "any",
        "some",
        "of",
        "for",
        "to",
        "and",
        "i",
        "you",
        "me",
        "it",
        "new",
        "old",
        "other",
        "same",
        "what",
        "which",
        "other",
        "was",
        "were",
        "is",
        "are",
        "been",
        "taking",
        "take",
        "on",
        "got",
        "get",
        "have",
        "had",
        "use",
        "using",
        "used",
        "need",
        "needs",
        "bought",
        "buy",
        "tried",
        "try",
        "took",
        "apply",
        "applying",
        "put",
        "gave",
        "give",
        # how many or how much, and who: not what kind of medicine ("three different
        # medications", "anymore medications", "he takes medications")
        "one",
        "two",
        "three",
        "four",
        "five",
        "many",
        "more",
        "few",
        "several",
        "different",
        "various",
        "anymore",
        "so",
        "too",
        "he",
        "she",
        "they",
        "we",
        "takes",
        "want",
        "wants",
    ]
)
_WINDOW = 6
_NOT_POSSESSIVE = frozenset(
    {"it", "that", "what", "there", "here", "he", "she", "let", "who", "where", "how", "this"}
)
# "blood pressure cuff" is a device, not a reading; "pain management", "sleep study",
# "allergy clinic" and "a heart doctor" name a service, "hay fever season" a time, not what
# the patient has; "falling asleep" is no fall.
_NOT_THE_THING = re.compile(
    r"\s*(cuff|machine|monitor|meter|log|check|management|clinic|specialist|study|studies"
    r"|team|program|center|centre|service|unit|asleep|doctor|surgeon|season)s?\b",
    re.IGNORECASE,
)

# "i am tired of these blood draws", "sick of it": fed up, not fatigue or illness
_FED_UP = re.compile(r"(?:tired|sick)\s+of\b")

# "cataract surgery", "a heart bypass", "hernia repair": a procedure done, not what the
# patient has (the body part stays: "my knee replacement hurts" is the knee)
_PROCEDURE = re.compile(
    r"\s*(?:bypass(?:es)?|surgery|surgeries|operations?|repairs?|removal|extractions?"
    r"|transplants?|replacements?|reconstructions?|fusions?|ablations?)\b",
    re.IGNORECASE,
)


# Drinking as nourishment, not alcohol: "he's eating and drinking well", "drinking plenty
# of water".
_DRINK = re.compile(r"\bdrink(?:s|ing)?\b", re.IGNORECASE)
_NOURISHMENT = re.compile(
    r"\b(?:eat|eats|eating|ate)\s+(?:and|or)\s+(?:drink|drinks|drinking)\b"
    r"|\b(?:drink|drinks|drinking)\s+(?:and|or)\s+(?:eat|eats|eating)\b"
    r"|\b(?:drink|drinks|drinking)\s+(?:a lot of |lots of |plenty of |enough |more |some )?"
    r"(?:water|fluids?|liquids?|juice|milk|tea|coffee|soda|pop|enough|plenty)\b",
    re.IGNORECASE,
)


@dataclass
class Mention:
    """One thing a message mentions, with character offsets into the message text."""

    kind: str  # symptom | condition | body | drug | mednoun
    start: int
    end: int
    subject: str
    canonical: str = ""
    source: str = ""
    drugs: tuple[str, ...] = ()
    class_drugs: tuple[str, ...] = ()
    extra: dict[str, str] = field(default_factory=dict)


def _nourishment(text: str, m: Mention) -> bool:
    """The mention is drinking said of nourishment."""
    if not _DRINK.fullmatch(text[m.start : m.end]):
        return False
    return any(n.start() <= m.start < n.end() for n in _NOURISHMENT.finditer(text))


# Sleep as the time something happens: "when i'm sleeping at night i feel a sharp pain",
# "a few minutes after i lay down to sleep".
_WHEN_ASLEEP = re.compile(
    r"\b(?:when|while|after|before|whenever)(?: \S+){0,4} (?:sleep|sleeping|asleep)$", re.IGNORECASE
)


def _time_of_sleep(text: str, m: Mention) -> bool:
    """The mention is sleep said only as the time of something else."""
    return m.canonical == "sleep" and bool(_WHEN_ASLEEP.search(text[: m.end]))


def singular(word: str) -> str:
    """A body-part or noun in the singular ("knees" → "knee", "feet" → "foot")."""
    if word in _IRREGULAR:
        return _IRREGULAR[word]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "is", "us")):
        return word[:-1]  # not "pelvis" or "sinus"
    return word


def find_mentions(text: str, lex: Lexicon) -> list[Mention]:
    """Everything of interest in `text`, without overlaps (longer and medication first)."""
    tokens = _unfused([_without_possessive(t) for t in tokenize(text)], lex)
    conditions = lex.conditions.find(tokens, plurals=True)
    found = _meds(tokens, lex) + _body(text, tokens, lex, conditions)
    found += _lexical(tokens, conditions, "condition")
    symptoms = _symptoms(tokens, lex)
    said = _predicates(text, lex)
    # "heart burn", "my heart is racing" are complaints, not the heart
    lay = [m for m in symptoms if m.source == "lay"] + said
    found = [m for m in found if m.kind != "condition" or not _inside_longer(m, lay)]
    found += symptoms + _inabilities(text, lex) + _with_activity(text, lex) + said
    found += _reworded(text, lex)
    found += _unfelt(tokens, lex)
    found += _caused_by(text, found)
    found = [m for m in found if m.kind in MEDS or not _NOT_THE_THING.match(text[m.end :])]
    found = [m for m in found if m.kind not in SYMPTOMISH or not _PROCEDURE.match(text[m.end :])]
    found = [m for m in found if not _nourishment(text, m) and not _time_of_sleep(text, m)]
    found = [m for m in found if not _FED_UP.match(text[m.start :].lower())]
    chosen: list[Mention] = []
    for m in sorted(found, key=lambda m: (_priority(m), -(m.end - m.start))):
        if all(m.end <= c.start or m.start >= c.end for c in chosen):
            chosen.append(m)
    return sorted(chosen, key=lambda m: m.start)


# A complaint said with the condition that causes it: "a lot of pain from my hernia" is the
# hernia's pain, as "pain in my knee" is the knee's.
_CAUSE = re.compile(
    r"\s+(?:from|due to|because of|caused by)\s+(?:(?:my|his|her|their|the|that|this)\s+)?$"
)


def _caused_by(text: str, found: list[Mention]) -> list[Mention]:
    """Complaint and cause as one mention, of the kind a part and its complaint have (it
    wins over the condition alone)."""
    out = []
    for cause in (m for m in found if m.kind == "condition"):
        for felt in (m for m in found if m.kind == "symptom" and m.end <= cause.start):
            if _CAUSE.fullmatch(text[felt.end : cause.start].lower()):
                subject = f"{cause.subject} {felt.subject}"
                out.append(Mention("body", felt.start, cause.end, subject, subject))
    return out


_FUSED_ACHE = re.compile(r"([a-z]+?)(aches?)")


def _unfused(tokens: list[Token], lex: Lexicon) -> list[Token]:
    """A body part and its ache said as one word ("a bellyache", "my toothache") as two,
    unless the vocabulary knows the word ("headache")."""
    out = []
    for token in tokens:
        fused = _FUSED_ACHE.fullmatch(token.text)
        if fused and fused[1] in lex.body_part_words and lex.symptoms.get(token.text) is None:
            cut = token.start + len(fused[1])
            out += [Token(fused[1], token.start, cut), Token(fused[2], cut, token.end)]
        else:
            out.append(token)
    return out


def _each_of_a_pair(m: Mention, lex: Lexicon) -> list[Mention]:
    """A term that pairs two the vocabulary knows names each ("nausea and vomiting" is
    nausea and vomiting: GUIDELINE §2, one memory per subject)."""
    pair = m.subject.split(" and ")
    if len(pair) != 2 or len(m.subject) != m.end - m.start:
        return [m]
    first, second = (lex.symptoms.get(p) for p in pair)
    if first is None or second is None:
        return [m]
    return [
        Mention("symptom", m.start, m.start + len(pair[0]), pair[0], first.canonical, first.source),
        Mention("symptom", m.end - len(pair[1]), m.end, pair[1], second.canonical, second.source),
    ]


def _without_possessive(token: Token) -> Token:
    """ "my asthma's been acting up" names asthma; "it's", "that's" stay as they are."""
    stem = token.text.removesuffix("'s")
    if stem == token.text or stem in _NOT_POSSESSIVE:
        return token
    return Token(stem, token.start, token.end - 2)


def _inside_longer(m: Mention, others: list[Mention]) -> bool:
    return any(
        o.start <= m.start and m.end <= o.end and o.end - o.start > m.end - m.start for o in others
    )


def _priority(m: Mention) -> int:
    return {"drug": 0, "mednoun": 1, "body": 2, "condition": 3, "symptom": 4}[m.kind]


def _lexical(tokens: list[Token], hits: list[tuple[int, int, str]], kind: str) -> list[Mention]:
    out = []
    for i, j, canonical in hits:
        surface = " ".join(t.text for t in tokens[i:j])
        out.append(Mention(kind, tokens[i].start, tokens[j - 1].end, surface, canonical))
    return out


# Words said inside a complaint that its name leaves out: amounts ("i've gained some
# weight", "lost a lot of weight"), and whose it is after a preposition ("blood in my
# stool", not "open his mouth").
_AMOUNTS = (
    ("a", "little", "bit", "of"),
    ("quite", "a", "bit", "of"),
    ("a", "lot", "of"),
    ("a", "bit", "of"),
    ("lots", "of"),
    ("a", "little"),
    ("a", "few"),
    ("some",),
)
_WHOSE = frozenset({"my", "his", "her", "their", "your"})
_PREPOSITIONS = frozenset({"in", "of", "on", "around", "behind", "under", "near", "at"})


def _without_inside(tokens: list[Token]) -> list[Token]:
    """The tokens without the words said inside a complaint, except at the start; each
    keeps its place in the text."""
    out: list[Token] = []
    i = 0
    while i < len(tokens):
        said = next(
            (len(a) for a in _AMOUNTS if tuple(t.text for t in tokens[i : i + len(a)]) == a), 0
        )
        if not said and tokens[i].text in _WHOSE and out and out[-1].text in _PREPOSITIONS:
            said = 1
        if not said or i == 0:
            out.append(tokens[i])
            i += 1
        else:
            i += said
    return out


def _symptoms(tokens: list[Token], lex: Lexicon) -> list[Mention]:
    found = _symptoms_in(tokens, lex)
    fewer = _without_inside(tokens)
    if len(fewer) < len(tokens):  # "gained some weight" is "gained weight"
        spans = {(m.start, m.end) for m in found}
        found += [
            m
            for m in _symptoms_in(fewer, lex)
            if (m.start, m.end) not in spans and any(m.start < t.start < m.end for t in fewer)
        ]
    return [each for m in found for each in _each_of_a_pair(m, lex)]


def _symptoms_in(tokens: list[Token], lex: Lexicon) -> list[Mention]:
    out = []
    lay = lex.lay_terms
    for i, j, term in lex.symptoms.find(tokens, plurals=lambda key: key not in lay):
        surface = " ".join(t.text for t in tokens[i:j])
        # "coughing" is said of a cough: the plain name when the words only inflect it
        plain = term.source == "lay" or (
            " " not in term.canonical
            and (surface.startswith(term.canonical) or stem(surface) == stem(term.canonical))
        )
        subject = term.canonical if plain else surface
        out.append(
            Mention(
                "symptom", tokens[i].start, tokens[j - 1].end, subject, term.canonical, term.source
            )
        )
    return out


# What the patient cannot do, named as the vocabulary names a difficulty: "i can't stand
# up" is difficulty standing, "it's hard (for me) to run" difficulty running, "i can
# barely walk" difficulty walking (HPO's terms).
_INABILITY = re.compile(
    r"\b(?:ca n't|can't|cannot|can not|could n't|couldn't|unable to"
    r"|(?:can|could) (?:barely|hardly)|(?:barely|hardly) able to"
    r"|(?:hard|harder|difficult)(?: for (?:me|him|her|them|us))? to"
    r"|trouble|difficulty)\s+(?:really |even |barely |hardly )?([a-z]+)"
    r"(?:\s+([a-z]+))?"
)
_BARELY = frozenset({"barely", "hardly"})


def _inabilities(text: str, lex: Lexicon) -> list[Mention]:
    out = []
    for match in _INABILITY.finditer(text.lower()):
        verb, after = match.group(1), match.group(2)
        gerunds = _gerunds(verb)
        tried = [(match.end(2), f"difficulty {g} {after}") for g in gerunds if after]
        tried += [
            (match.end(1), f"{lead} {g}")
            for lead in ("difficulty", "difficulty in")
            for g in gerunds
        ]
        # barely able to move is weakness, not the paralysis that cannot move is
        if not _BARELY & set(words(text[match.start() : match.start(1)])):
            tried.append((match.end(1), f"inability to {verb}"))
        if hit := _first_known(lex, tried):
            end, _, term = hit
            out.append(
                Mention("symptom", match.start(), end, term.canonical, term.canonical, term.source)
            )
    return out


# Complaints said in other words than the vocabulary's, each pattern with the names it may
# take there, tried in order:
# - a change of weight said in its amount: "i've lost about fifteen pounds" is weight loss,
#   "i gained like 20 lbs" weight gain (not "i want to lose ten pounds", a goal);
# - a loss said with its verb: "i've been losing a lot of hair" is hair loss, "i've lost some
#   of my hearing" hearing loss, "i lost my sense of smell" loss of smell;
# - trouble said of a function: "some trouble with my balance" is balance problems (HPO's
#   postural instability).
_REWORDED: tuple[tuple[re.Pattern[str], Callable[[re.Match[str]], list[str]]], ...] = (
    (
        re.compile(
            r"\b(?:(lost|losing|dropped|dropping)|(gained|gaining|put on|putting on))"
            r"(?:\s+(?!and\b|but\b|or\b)[\w',-]+){1,5}?\s+(?:pounds?|lbs?|kilos?|kilograms?|kgs?)\b"
        ),
        lambda m: ["weight loss" if m[1] else "weight gain"],
    ),
    (
        re.compile(
            r"(?<!\bto )\b(?:lost|losing|lose|loses)\s+(?:(?:a lot of|a little|a bit of|some of"
            r"|some|all of|all|most of|part of|much of|my|the|his|her|their|your|sense of)\s+)*"
            r"([a-z]+)"
        ),
        lambda m: [f"{m[1]} loss", f"loss of {m[1]}"],
    ),
    (
        re.compile(
            r"\b(?:trouble|problems?|issues?|difficulty|difficulties) with"
            r" (?:my |the |his |her )?([a-z]+)"
        ),
        lambda m: [f"{m[1]} problems"],
    ),
)


def _reworded(text: str, lex: Lexicon) -> list[Mention]:
    out = []
    for pattern, names in _REWORDED:
        for match in pattern.finditer(text.lower()):
            if hit := _first_known(lex, [(match.end(), name) for name in names(match)]):
                end, name, term = hit
                out.append(
                    Mention("symptom", match.start(), end, name, term.canonical, term.source)
                )
    return out


# Pain said with what brings it on, as the vocabulary names it: "pain when i swallow" is
# painful swallowing, "any pain while you're urinating?" painful urination (HPO's terms).
_WITH_ACTIVITY = re.compile(
    r"\b(pain|painful|hurts?|hurting|discomfort|burning)"
    r" (?:when|while|with|on|during) (?:(?:i|you|he|she|they)(?:'m|'re| am| are| is)? )?([a-z]+)"
)


def _with_activity(text: str, lex: Lexicon) -> list[Mention]:
    out = []
    for match in _WITH_ACTIVITY.finditer(text.lower()):
        tried = [(match.end(), f"painful {noun}") for noun in _nouns(match.group(2))]
        if hit := _first_known(lex, tried):
            end, phrase, term = hit
            felt = {"complaint": lex.body_complaint_words.get(match.group(1), "pain")}
            out.append(
                Mention(
                    "symptom", match.start(), end, phrase, term.canonical, term.source, extra=felt
                )
            )
    return out


def _nouns(verb: str) -> list[str]:
    """What an activity is called: swallow → swallowing, urinate, urinating → urination."""
    base = verb.removesuffix("ing")
    forms = [verb, *_gerunds(verb)]
    if base != verb:
        forms += [base + "ion", base + "ation"]
    elif verb.endswith("ate"):
        forms.append(verb[:-1] + "ion")
    return forms


# A complaint said of what has it, as the vocabulary says it the other way round: "my mouth
# is dry" is dry mouth, "my chest feels tight" chest tightness, "my heart is racing" a
# racing heart (the words between: "has been", "really", "a little").
_PREDICATE = re.compile(
    r"\b(?:my|his|her|their|the) ([a-z]+)"
    r" (?:is|are|was|were|feels?|felt|has been|have been|gets?|got|seems?|looks?|keeps? getting)"
    r"(?: (?:so|really|very|kind of|kinda|a little|a bit|pretty|always|all|still|too))*"
    r" ([a-z]+)\b"
)


def _predicates(text: str, lex: Lexicon) -> list[Mention]:
    out = []
    for match in _PREDICATE.finditer(text.lower()):
        thing, quality = match.group(1), match.group(2)
        said = (f"{quality} {thing}", f"{thing} {quality}ness", f"{thing} {quality}")
        if hit := _first_known(lex, [(match.end(), p) for p in said]):
            end, phrase, term = hit  # named as said ("dry mouth"), not as the term (xerostomia)
            out.append(Mention("symptom", match.start(1), end, phrase, term.canonical, term.source))
    return out


def _first_known(lex: Lexicon, tried: list[tuple[int, str]]) -> tuple[int, str, SymptomTerm] | None:
    """The first of the (end, phrase) pairs whose phrase the vocabulary knows, with its term."""
    return next(((e, p, t) for e, p in tried if (t := lex.symptoms.get(p)) is not None), None)


def _gerunds(verb: str) -> list[str]:
    """The -ing forms a verb may take: walk → walking, breathe → breathing, run → running."""
    if verb.endswith("ing"):
        return [verb]
    forms = [verb + "ing"]
    if verb.endswith("e"):
        forms.append(verb[:-1] + "ing")
    if len(verb) >= 3 and verb[-1] not in "aeiouwy" and verb[-2] in "aeiou":
        forms.append(verb + verb[-1] + "ing")
    return forms


# Words before a body part that make it one: "my knee", "the left knee".
PART_DETERMINERS = frozenset(
    {"my", "your", "his", "her", "their", "the", "this", "that", "both", "left", "right", "lower"}
    | {"upper", "low", "mid", "middle", "inner", "outer", "other", "whole"}
)
_ADVERBIAL_AFTER = frozenset({"to", "in", "on", "from", "into", "home", "here", "there", "up"})


def find_parts(tokens: list[Token], lex: Lexicon) -> list[tuple[int, int, str]]:
    """The body parts in `tokens`, without the adverbs that share their words: "get back
    to the house", "back in april" (a preposition after, no determiner or side before).
    A region of a part is that part: "the back of my head" is the head, from "back" on."""
    found = lex.body_parts.find(tokens)
    by_start = {i: (j, part) for i, j, part in found}
    out: list[tuple[int, int, str]] = []
    for i, j, part in found:
        if out and out[-1][0] < i < out[-1][1]:
            continue  # the part a region was named by
        after = tokens[j].text if j < len(tokens) else ""
        before = tokens[i - 1].text if i > 0 else ""
        if after in _ADVERBIAL_AFTER and before not in PART_DETERMINERS:
            continue
        if part == "hand" and after == "side":
            continue  # "the pain on the right hand side" is a side, not the hand
        if after == "of" and (whole := by_start.get(_after_determiners(tokens, j + 1))):
            j, part = whole
        out.append((i, j, part))
    return out


def _after_determiners(tokens: list[Token], k: int) -> int:
    """The first token from `k` on that is not a determiner or side ("of| my left| knee")."""
    while k < len(tokens) and tokens[k].text in PART_DETERMINERS:
        k += 1
    return k


# What joins body parts into one: "neck and back", "knees or hips".
_JOINED = (["and"], ["or"], [",", "and"])


def part_groups(tokens: list[Token], lex: Lexicon) -> list[tuple[int, int, str]]:
    """The body parts in `tokens`, parts joined by "and" or "or" as one ("your neck and
    back" → "neck and back"): a complaint said of them later ("how's your pain?") is
    every part's."""
    groups: list[tuple[int, int, str]] = []
    for i, j, part in find_parts(tokens, lex):
        between = [t.text for t in tokens[groups[-1][1] : i]] if groups else []
        if between in _JOINED:
            start, _, joined = groups[-1]
            groups[-1] = (start, j, f"{joined} {between[-1]} {part}")
        else:
            groups.append((i, j, part))
    return groups


def _body(
    text: str, tokens: list[Token], lex: Lexicon, conditions: list[tuple[int, int, str]]
) -> list[Mention]:
    """ "my knees hurt", "pain in my abdomen", "swelling in my ankles" → part + complaint;
    `conditions`, the condition names found in the tokens."""
    parts = find_parts(tokens, lex)
    # a complaint word inside a longer condition name is the condition's ("blood pressure")
    named = [(i, j) for i, j, _ in conditions if j - i > 1]
    complaints = [
        c for c in lex.complaints.find(tokens) if not any(i <= c[0] and c[1] <= j for i, j in named)
    ]
    runs = _runs(text, tokens, complaints)
    out = []
    for (ci, cj, complaint), run in zip(complaints, runs, strict=True):
        if complaint in lex.part_only_complaints and runs.count(run) > 1:
            continue  # "pain and discomfort in my head": the pain says it
        joined = [c for c, r in zip(complaints, runs, strict=True) if r == run and c[0] != ci]
        first, last = min([ci, *(c[0] for c in joined)]), max([cj, *(c[1] for c in joined)])
        near = [p for p in parts if p[1] > first - _WINDOW and p[0] < last + _WINDOW]
        # "my knee hurts and swelling in my ankle": the part no joined complaint stands before
        closest = (
            min(near, key=lambda p: (_behind(joined, p, ci), abs(p[0] - ci))) if near else None
        )
        if closest is None or _crosses_sentence(
            text, tokens, min(closest[0], ci), max(closest[1], cj)
        ):
            if (back := _pointed_back(tokens, parts, ci)) is not None:
                subject = f"{singular_part(back)} {complaint}"
                start = tokens[ci - 1].start
                out.append(Mention("body", start, tokens[cj - 1].end, subject, subject))
            elif complaint not in lex.part_only_complaints:
                # "i get a lot of swelling": a symptom; the part asked about or named
                # before may complete it (Turn.with_part)
                start, end = tokens[ci].start, tokens[cj - 1].end
                out.append(Mention("symptom", start, end, complaint, complaint, "lay"))
            continue
        pi, pj, part = closest
        lo, hi = min(pi, ci), max(pj, cj)
        if pj <= ci and _denied_verb(tokens[pj:ci]):
            lo = ci  # "my arm does not hurt": the negation is ConText's to read, not the mention's
        if _behind(joined, closest, ci):
            # "pain or stiffness in the knee", "my knee is stiff and swollen": each
            # complaint joined to the one next to the part is the part's, in its own words
            lo, hi = ci, cj
        subject = f"{singular_part(part)} {complaint}"
        out.append(Mention("body", tokens[lo].start, tokens[hi - 1].end, subject, subject))
        # "back and knee pain", "my shoulder and neck started to hurt", "pain in my neck
        # and back": the complaint is every joined part's
        for qi, qj, other in _joined_to(tokens, parts, closest):
            both = f"{singular_part(other)} {complaint}"
            out.append(Mention("body", tokens[qi].start, tokens[qj - 1].end, both, both))
    return out


_JOINING = re.compile(r"[\s,]*(?:\b(?:and|or)\b)?[\s,]*", re.IGNORECASE)


def _behind(joined: list[tuple[int, int, str]], part: tuple[int, int, str], ci: int) -> bool:
    """A joined complaint stands between the complaint at `ci` and the part."""
    return any(min(part[1], ci) <= c[0] < max(part[0], ci) for c in joined)


def _runs(text: str, tokens: list[Token], complaints: list[tuple[int, int, str]]) -> list[int]:
    """Which run of complaints joined by "and", "or" or commas each complaint is in."""
    runs: list[int] = []
    for k, (ci, _, _) in enumerate(complaints):
        joined = k > 0 and _JOINING.fullmatch(
            text[tokens[complaints[k - 1][1] - 1].end : tokens[ci].start]
        )
        runs.append(runs[-1] if joined else k)
    return runs


def _joined_to(
    tokens: list[Token], parts: list[tuple[int, int, str]], part: tuple[int, int, str]
) -> list[tuple[int, int, str]]:
    """The parts joined to `part` by "and" or "or", before and after it ("shoulder, neck
    and back")."""
    k = parts.index(part)
    joined = []
    for step in (-1, 1):
        j = k
        while 0 <= j + step < len(parts):
            a, b = sorted((parts[j], parts[j + step]))
            between = {t.text for t in tokens[a[1] : b[0]]}
            if not between or not between <= {"and", "or", ","}:
                break
            j += step
            joined.append(parts[j])
    return joined


# "i can't feel my toes", "she lost feeling in her left hand": numbness of that part
_UNFELT = (("ca", "n't", "feel"), ("can't", "feel"), ("cannot", "feel"), ("lost", "feeling", "in"))


def _unfelt(tokens: list[Token], lex: Lexicon) -> list[Mention]:
    out = []
    texts = [t.text for t in tokens]
    for i, j, part in find_parts(tokens, lex):
        # a determiner and a side between: "my", "her left"
        for lead, gap in product(_UNFELT, (1, 2)):
            k = i - len(lead) - gap
            if k >= 0 and tuple(texts[k : k + len(lead)]) == lead:
                subject = f"{singular_part(part)} numbness"
                out.append(Mention("body", tokens[k].start, tokens[j - 1].end, subject, subject))
    return out


_NEGATORS = frozenset({"not", "n't", "never"})
_AUXILIARIES = frozenset({"does", "do", "did", "has", "have", "is", "was", "had"})


def _denied_verb(between: list[Token]) -> bool:
    """The words between a part and its complaint deny the complaint's verb: "does not",
    "has n't been", "does n't really" ("my knee , not my ankle , hurts" denies the ankle)."""
    texts = [t.text for t in between]
    for k, word in enumerate(texts):
        contracted = word.endswith("n't") and word[:-3] in _AUXILIARIES  # "doesn't"
        if contracted or (
            word in _NEGATORS and (k == 0 or texts[k - 1] in _AUXILIARIES or word == "never")
        ):
            return set(texts[k + 1 :]) <= {"really", "been", "even", "ever", "actually"}
    return False


# "it's my right upper arm . it hurts really bad": "it" is the part named just before
_POINTERS = frozenset({"it", "that", "this", "they", "those"})
_BACK = 12  # tokens


def _pointed_back(tokens: list[Token], parts: list[tuple[int, int, str]], ci: int) -> str | None:
    """The body part a pronoun just before a complaint points back to, named at most
    `_BACK` tokens earlier in the message."""
    if ci == 0 or tokens[ci - 1].text not in _POINTERS:
        return None
    before = [p for p in parts if p[1] <= ci - 1 and ci - p[1] <= _BACK]
    return before[-1][2] if before else None


def each_part(subject: str, lex: Lexicon) -> list[str]:
    """A complaint of parts joined by "and" is each part's: "neck and back pain" is neck
    pain and back pain (one memory per subject); "knee or hip pain" says one of them."""
    *parts, complaint = subject.split()
    joined = " ".join(parts).split(" and ")
    if len(joined) < 2 or not all(j and set(j.split()) <= lex.body_part_words for j in joined):
        return [subject]
    return [f"{part} {complaint}" for part in joined]


def singular_part(part: str) -> str:
    """Every word of a body part in the singular ("knees and hips" → "knee and hip")."""
    return " ".join(singular(w) for w in part.split())


_STOP = re.compile(r"[.?!]")  # in the gap between two words: a sentence ends there


def _crosses_sentence(text: str, tokens: list[Token], lo: int, hi: int) -> bool:
    """Tokens lo..hi run over a sentence's end: a full stop, or speech recognition's
    spaced-out punctuation (" . ", " , ")."""
    gaps = (text[tokens[k].end : tokens[k + 1].start] for k in range(lo, hi - 1))
    return any(len(gap) > 2 or _STOP.search(gap) for gap in gaps)


def _meds(tokens: list[Token], lex: Lexicon) -> list[Mention]:
    out = []
    for i, j, name, action in find_in_tokens([t.text for t in tokens]):
        surface = " ".join(t.text for t in tokens[i:j])
        out.append(
            Mention(
                "drug",
                tokens[i].start,
                tokens[j - 1].end,
                surface if action else name,  # a class as said: "statins", not MeSH's name
                surface,
                drugs=(name,),
                class_drugs=class_drugs(surface, lex),
            )
        )
    nouns = lex.med_nouns.find(tokens, plurals=True)
    named = {m.start for m in out} | {tokens[i].start for i, _, _ in nouns}
    for i, j, noun in nouns:
        if _of_a_named_drug(tokens, j, named):
            continue  # "two tablets of tylenol" is the tylenol
        lo = i
        while lo > 0 and i - lo < 3 and tokens[lo - 1].text not in _MODIFIER_STOP:
            lo -= 1
        phrase = " ".join(t.text for t in tokens[lo:j])
        out.append(
            Mention(
                "mednoun",
                tokens[lo].start,
                tokens[j - 1].end,
                phrase,
                noun,
                class_drugs=class_drugs(phrase, lex),
            )
        )
    return out


def _of_a_named_drug(tokens: list[Token], j: int, named: set[int]) -> bool:
    """Token `j` starts "of [the|my] <drug>"."""
    if j >= len(tokens) or tokens[j].text != "of":
        return False
    k = j + 1 + (j + 1 < len(tokens) and tokens[j + 1].text in {"the", "my", "that", "this"})
    return k < len(tokens) and tokens[k].start in named


def class_drugs(phrase: str, lex: Lexicon) -> tuple[str, ...]:
    """The members of every medication class the phrase names ("blood pressure",
    "antibiotics")."""
    drugs: list[str] = []
    for key, members in lex.med_classes.items():
        if re.search(rf"\b{re.escape(key)}s?\b", phrase):
            drugs.extend(members)
    return tuple(dict.fromkeys(drugs))
