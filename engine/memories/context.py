"""medspaCy ConText over a message: negation, hypothetical, family, historical.

The pipeline is spaCy's blank English model with spaCy's rule-based sentencizer (it
splits at the spaced full stops of ASR transcripts, where PyRuSH does not) and medspaCy's
ConText, whose rules ship inside the medspacy wheel: nothing is downloaded. It is built
once per process. Mentions found by the lexicons are set as the document's
entities and ConText assigns their modifiers.
"""

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from engine.lifelong import lifelong

_SPLIT_NOT = re.compile(r"(\w) n't\b")


@dataclass(frozen=True)
class Assertion:
    """The ConText modifiers of one mention."""

    negated: bool = False
    hypothetical: bool = False
    family: bool = False
    historical: bool = False
    uncertain: bool = False
    # someone else's judgement relayed: "he said that i had a kidney stone"
    reported: bool = False


@lifelong
def pipeline() -> Any:
    """The cached spaCy + medspaCy pipeline (about 2 s to build)."""
    import medspacy
    import spacy

    nlp = medspacy.load(spacy.blank("en"), enable=["medspacy_context"])
    for name in ("medspacy_pyrush", "medspacy_target_matcher"):
        if name in nlp.pipe_names:
            nlp.remove_pipe(name)
    nlp.add_pipe("sentencizer", first=True)
    from medspacy.context import ConTextRule

    # Speech recognition drops the full stops that end ConText's scopes. A new clause's
    # subject ends a negation, a hypothetical or a history ("if i'm on my feet for long
    # i'll notice some swelling", "even if i'm just walking , i find myself palpitating":
    # it happens; not the "i" of the if-clause itself), as do what is there instead ("no
    # weakness , just the numbing", "not much pain , mostly stiffness") and a question
    # word ("you've got a history of diabetes and how are you doing with your blood
    # sugars"), and a quantity said of what is there ends a negation ("no fever some
    # chills").
    clause = ConTextRule(
        "a new clause",
        "CLAUSE",
        pattern=r"(?<!\bif )(?<!\bwhen )\b(?:i|just|mostly|how|what)\b",
        direction="FORWARD",
        allowed_types={"CLAUSE"},
    )
    quantities = [
        ConTextRule(literal, "QUANTITY", direction="FORWARD", allowed_types={"QUANTITY"})
        for literal in ("some", "a little", "a bit", "a lot")
    ]
    # What a clinician said or thought the patient has is their judgement, relayed ("he
    # said that i had a kidney stone", "she was diagnosed with ...", "they thought it was
    # neuropathy", "they were concerned that i might have ..."), and so is what the
    # patient feared it was ("i thought i was having a heart attack"); a wish is not a
    # report ("i wish i had some weight loss"). Each pattern takes in the clause's "i",
    # which would otherwise end it.
    relayed = [
        ConTextRule(
            "a clinician's words",
            "REPORTED",
            pattern=r"\b(?:said|says|told me|was told|were told|diagnosed(?: me| him| her)? with)"
            r"(?: that)?(?: i(?: had| have|'ve got| might have| may have)?)?\b",
            direction="FORWARD",
        ),
        ConTextRule(
            "a guess at a diagnosis",
            "POSSIBLE_EXISTENCE",
            pattern=r"\b(?:thought|think|thinks|concerned|worried|suspect|suspected)"
            r"(?: that)? (?:it was|it's|it is|it might be|i had|i have|i was having|i might have"
            r"|i may have)\b",
            direction="FORWARD",
        ),
        ConTextRule(
            "a wish",
            "HYPOTHETICAL",
            pattern=r"\bwish(?: i)?\b",
            direction="FORWARD",
            terminated_by={"CLAUSE"},  # "i wish , unfortunately i've gained some weight"
        ),
    ]
    # A plan is not what happens: "i'm going to start the metformin tomorrow", "i'm gon na
    # stop the lisinopril". "will" is not one: it says what tends to happen too ("i'll
    # take a tylenol when it flares", "i will start getting rashes").
    plan = ConTextRule(
        "a plan",
        "HYPOTHETICAL",
        pattern=r"\b(?:going to|gon na|gonna|plan to|planning to)(?: just| probably)?"
        r" (?:start|stop|take|use|try|begin|switch|quit|restart|resume|fill|pick up)\b"
        r"(?! getting| having| feeling)",
        direction="FORWARD",
        terminated_by={"CLAUSE"},
    )
    # "i don't think i've had any tingling": a denial, whose own "i" starts no new clause
    denial = ConTextRule(
        "a denial of having had it",
        "NEGATED_EXISTENCE",
        pattern=r"\b(?:don't|do not|didn't|did not)\s+(?:think|believe)(?:\s+that)?"
        r"\s+i(?:'ve|\s+have|\s+had)?(?:\s+ever)?(?:\s+had|\s+been|\s+gotten|\s+noticed)?\b",
        direction="FORWARD",
    )
    # "skin cancer does run in my family": what runs in the family is the words right
    # before ("i have diabetes and it runs in my family" is the patient's diabetes)
    runs = ConTextRule(
        "it runs in the family",
        "FAMILY",
        pattern=r"\b(?:does |do |did )?(?:runs?|ran) in (?:my|the|our|his|her|your) family\b",
        direction="BACKWARD",
        max_scope=2,  # "do migraines usually run in your family?"
    )
    # The patient is alive: what someone "passed away" or died of is theirs ("she actually
    # passed away due to a brain aneurysm"), not a patient's near miss ("i almost died")
    died = ConTextRule(
        "someone's death",
        "FAMILY",
        pattern=r"(?<!almost )(?<!nearly )\b(?:passed away|died|passed)"
        r" (?:of|from|due to|because of|with)\b",
        direction="FORWARD",
        max_scope=6,
        terminated_by={"CLAUSE"},
    )
    # "the same pain that i had when i had kidney stones", "since i had my last heart
    # attack": what the patient had at a time named by it is a past event, not how they are
    # ("ever since i had the surgery my knee has been swelling": the knee is now)
    then = ConTextRule(
        "a time named by a past event",
        "HISTORICAL",
        pattern=r"\b(?:when|since|after|before|the last time|the time) i (?:had|got)\b",
        direction="FORWARD",
        max_scope=3,
        terminated_by={"CLAUSE"},
    )
    # ConText knows "never had"; people say never with any verb ("i've never smoked", "i
    # never get headaches"). Not what was never this bad ("i have never felt palpitations
    # like this": they are there), nor a treatment never taken ("i never took anything
    # for diabetes": the diabetes is there).
    never = ConTextRule(
        "never",
        "NEGATED_EXISTENCE",
        pattern=r"\bnever\b(?!(?:\s+[\w']+){0,6}?\s+(?:like (?:this|that|it)|this (?:bad|much)"
        r"|so (?:bad|much)|before))(?!\s+(?:\w+\s+)?(?:took|take|taken|used|tried)"
        r"\s+(?:anything|something|any|medicine|medication))",
        direction="FORWARD",
        max_scope=4,
        terminated_by={"CLAUSE"},
    )
    # Whether anyone has it asks about others ("what about diabetes , does anyone have
    # that?", "does anybody else at home have a cough?"), never the patient
    anyone = ConTextRule(
        "anyone else",
        "FAMILY",
        pattern=r"\b(?:does|did|has|have|do) (?:any|some)(?:one|body)(?: else)?\b"
        r"|\bis there (?:any|some)(?:one|body)\b",
        direction="BIDIRECTIONAL",
        max_scope=8,
    )
    # What is screened or tested for is a possibility looked into, not what the patient
    # has: "i'm here for a breast cancer screening", "they checked me for diabetes"
    looked_for = [
        ConTextRule(
            "screened or tested for",
            "HYPOTHETICAL",
            pattern=r"\b(?:screen(?:ing|ed)?|check(?:ing|ed)?|test(?:ing|ed)?)(?: \w+)? for\b",
            direction="FORWARD",
            max_scope=4,
            terminated_by={"CLAUSE"},
        ),
        ConTextRule(
            "a screening",
            "HYPOTHETICAL",
            pattern=r"\bscreenings?\b",
            direction="BACKWARD",
            max_scope=3,
        ),
    ]
    ends = {
        "NEGATED_EXISTENCE": {"CLAUSE", "QUANTITY"},
        "HYPOTHETICAL": {"CLAUSE"},
        "HISTORICAL": {"CLAUSE"},
    }
    context = nlp.get_pipe("medspacy_context")
    for rule in context.rules:
        rule.terminated_by = {*rule.terminated_by, *ends.get(rule.category, ())}
    context.add(
        [clause, *quantities, *relayed, plan, denial, runs, died, then, never, anyone, *looked_for]
    )
    return nlp


def assertions(
    text: str, spans: Sequence[tuple[int, int]], masked: Sequence[tuple[int, int]] = ()
) -> list[Assertion]:
    """ConText modifiers for each (start, end) character span of `text`, in order.

    `masked` ranges are blanked (same length, so offsets hold) before ConText reads the
    text: a leading "no ," that answers a question must not negate what follows. The
    "do n't" of speech recognition is read as "don't".
    """
    if not spans:
        return []
    for lo, hi in masked:
        text = text[:lo] + " " * (hi - lo) + text[hi:]
    # speech recognition splits "do n't": ConText's rules know "don't" (same length);
    # a mention keeps its own words ("ca n't breathe" is the complaint, not its denial)
    joined = list(_SPLIT_NOT.sub(lambda m: m.group(1) + "n't ", text))
    for start, end in spans:
        joined[start:end] = text[start:end]
    text = "".join(joined)
    from spacy.tokens import Span
    from spacy.util import filter_spans

    nlp = pipeline()
    doc = nlp.make_doc(text)
    ents: dict[tuple[int, int], Span] = {}
    for start, end in spans:
        ent = doc.char_span(start, end, label="MENTION", alignment_mode="expand")
        if ent is not None:
            ents[(start, end)] = ent
    doc.ents = filter_spans(list(ents.values()))
    for _, component in nlp.pipeline:
        doc = component(doc)
    by_token = {(e.start, e.end): e for e in doc.ents}
    out: list[Assertion] = []
    for key in spans:
        ent = ents.get(key)
        found = by_token.get((ent.start, ent.end)) if ent is not None else None
        if found is None:
            out.append(Assertion())
            continue
        # a mention's own words negate nothing of it: "can't sleep" is the complaint
        outside = [
            mod
            for mod in found._.modifiers
            if not found.start <= mod.modifier_span[0] < mod.modifier_span[1] <= found.end
        ]
        out.append(
            Assertion(
                negated=any(mod.category == "NEGATED_EXISTENCE" for mod in outside),
                hypothetical=bool(found._.is_hypothetical),
                family=bool(found._.is_family),
                historical=bool(found._.is_historical),
                uncertain=bool(found._.is_uncertain),
                reported=any(mod.category == "REPORTED" for mod in found._.modifiers),
            )
        )
    return out
