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
    LESS = "less"  # still there, less than it was: "not like it used to"
    NONE = "none"


# Fillers and the stance adverbs that may open a yes or no ("thankfully , no").
_FILLER = (
    r"(?:(?:um+|uh+|eh|oh|well|so|mm+|hmm+|ah|okay|ok|and|but|actually|really|thankfully|luckily"
    r"|fortunately|unfortunately|honestly|basically|i mean)\W+)*"
)
# An adverb between who and the verb of a short answer ("i still do", "they actually did").
_ADVERB = r"(?:(?:actually|really|definitely|certainly|still|usually|always|just|sure)\s+)?"
# "i am" and "i have" answer only alone ("i am .", "i have , yes", "i have but ..."), as
# the start of a perfect ("i have been having them") or of taking ("i am taking it"):
# "i am doing okay", "i have one older brother" say something else
_SAID_ALONE = (
    r"(?:am|have)(?=\s*(?:[.,!]|$)|\s+(?:and|but|though|too|been|had|got|noticed|felt)\b)"
    r"|am(?=\s+(?:taking|using|on)\b)"
)
_YES = re.compile(
    _FILLER + r"(yes|yeah|yep|yup|yea|uh-huh|mm-hmm|correct|right|sure|absolutely|definitely"
    r"|(?:i think )?i " + _ADVERB + r"(?:do|did|will|" + _SAID_ALONE + r")"
    r"|i think so|of course|that's right|that's correct|that is (?:right|correct)|i believe so"
    r"|(?:that|it)(?:'s| is| would be) a (?:yes|positive)\b|i would say (?:so|yes)"
    r"|(?:just |only )?a (?:little|bit|little bit|tad)(?=\s*(?:[.,!]|$))|slightly(?=\s*(?:[.,!]|$))"
    r"|(?:sometimes|occasionally|(?:every )?once in a while|at times|on and off|off and on"
    r"|(?:every )?now and then|once or twice|a couple (?:of )?times|all the time|constantly"
    r"|(?:only|just) (?:when|if|at|in|after|with|during)"
    r"|(?:just |only )?a (?:little|bit|little bit) (?:in|at|when|after|during))\b"
    r"|(?:i think |i believe )?(?:it|that|they) " + _ADVERB + r"(?:is|does|has|did|was|do|are|have)"
    r"(?=\s*(?:[.,!]|$)))"
)
_NO = re.compile(
    _FILLER + r"(no|nope|nah|not really|not that|never|none|nothing|not at all|negative"
    r"|neither|probably not|not yet"
    r"|(?:absolutely|definitely|certainly|of course|surely) not"
    r"|(?:that|it)(?:'s| is| would be) a (?:no|negative)|i would say no"
    r"|not (?:at this (?:point|time)|right now|currently)|usually (?:no|not)"
    r"|i " + _ADVERB + r"(?:do n't|don't|do not|have n't|haven't|have not|did n't|didn't"
    r"|did not|wo n't|won't)|i'm not|i am not|i've not|not anymore|not any more|no longer"
    r"|(?:it|that|they) " + _ADVERB + r"(?:is|does|has|did|was|do|are|have) (?:n't|not))\b"
)
_OPENING_FILLERS = re.compile("^" + _FILLER)
# A reply comparing the thing asked about with how it was: "not like it used to", "not as
# much", "no , not as bad as before", "less than it was".
_LESS = re.compile(
    _FILLER + r"(?:(?:no|nope)\W+)?(?:not (?:like|as|so) (?:it|they|that|i|much|bad|often"
    r"|many|severe|frequent|strong|high|badly)\b|(?:a (?:lot|little|bit) |much )?less\b)"
)
_GOOD = re.compile(r"\b(good|great|fine|better|well|excellent|perfect|alright|all right)\b")
_BAD = re.compile(r"\b(worse|bad|terrible|awful|horrible)\b")
_NOT_BEFORE = re.compile(r"\b(?:not|n't|never)\s+(?:\w+\s+)?$")
_UNSURE = re.compile(
    _FILLER + r"(i do n't know|i don't know|i do not know|i'm not sure|i am not sure|not sure"
    r"|i guess|maybe|i do n't remember|i don't remember)\b"
)
# Words a speaker breaks off: cut with a hyphen ("wh-", "i-") or trailed off ("it ...").
_FALSE_START = re.compile(_FILLER + r"(?:[\w']+-\s*|(?:[\w']+\s+){0,2}[\w']+\s*(?:\.\.\.|…)\s*)+")
# A confirmation after what it confirms, as people answer: "on the clock , yes ." /
# "every morning , yeah" / "just the one , no".
_TAG = re.compile(r"(?:[\w'-]+\s+){0,5}[\w'-]+\s*,\s*(?:(yes|yeah|yep|yup)|(no|nope))\s*[.!]?\s*$")
_NEGATED = re.compile(r"(?:\bnot|n't|\bno|\bnever)\b(?:\W+\w+)?\W*$")
_CHANGED_MIND = re.compile(r"\W*(?:\w+\W+){0,2}(?:yes|yeah|yep|i do(?!\s*(?:n'?t|not)))\b")
# "Gone" says the thing itself is over; "have n't had" / "no problems" only that it is
# quiet now, which the guideline treats as control, not resolution.
_GONE = re.compile(
    r"\b(gone(?! (?:down|up))|go away|went away|goes away|no longer|any ?more|used to|resolved"
    r"|cleared up|disappeared|have n't felt|haven't felt|have not felt|no more(?! than)"
    r"|(?:had|did have)(?: [\w']+){1,4} until)\b"  # "i did have heavy periods until ..."
)
_QUIET = re.compile(
    r"\b(have n't had|haven't had|have not had|not having"
    r"|no problems?|no issues?|no trouble"
    # "the gout has n't bothered me since last spring"
    r"|(?:has|have)\s*(?:n't|not)\s+(?:been\s+)?"
    r"(?:bother(?:ed|ing)|flared|acted up|been a problem))\b"
)
_IMPROVING = re.compile(
    r"\b(better|improv\w*|less|not as (?:much|bad|often|many|severe|frequent|strong|high)"
    r"|not like (?:it|they|that|i) used to|easing"
    r"|getting stronger)\b"
)
# "i just want this pain to go away" wishes, it does not report.
_WISH = re.compile(r"\b(want|wanted|hope|hoping|wish|need|until|if)\b(?:\W+\w+){0,4}\W+$")
# Readings and counts ("one forty", "in the low one hundreds", "my third time"); a lone
# "one" is too common to count.
_NUMBER = (
    r"\d+|one (?=\w+(?:ty|teen|hundred|hundreds|ties)\b)|two|three|four|five|six|seven|eight"
    r"|nine|ten|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|hundreds?|twenties"
    r"|thirties|forties|fifties|sixties|seventies|eighties|nineties|second|third"
)
# What a reply about a condition the provider just named says about its state.
_STATUS = re.compile(
    r"\b(still|better|worse|improv\w*|good|well|great|fine|bad"
    r"|(?:seems?|it's|is|are|was|were|doing|going|been|feels?|feeling) (?:okay|ok)"
    r"|gone|go away|went away"
    r"|episodes?|flares?|attacks?|under control|controlled|all over the place|running|stable"
    r"|same|helping|ups and downs|good days|bad days|again|back|times?|" + _NUMBER + r")\b"
)
_DETAILS = {
    "frequency": r"\b(every|times|always|constant|constantly|daily|often|sometimes|once|"
    r"at night|in the morning|mornings|nights|coming and going|off and on|all the time"
    r"|again|keeps? coming back|came back)\b",
    "severity": r"\b(severe|mild|bad|terrible|horrible|a lot|a little|really|pretty|worse|"
    r"better|much|so|out of 10|brutal)\b",
    "duration": r"\b(days?|weeks?|months?|years?|since|for the past|lately|recently)\b",
    "trigger": r"\b(when|whenever|because|'cause|after|if i|from)\b",
}
_REASON = re.compile(
    r"\b(because|'cause|cause|since|due to|it made|made me|upset|side effects?|stopped working"
    r"|did n't work|didn't work|was n't working|wasn't working|not working|did n't help"
    r"|didn't help)\b"
)
# Taking it now, as opposed to "I took Claritin in the past".
_CURRENT = re.compile(
    r"\b(i'm|i am|am|i've been|i have been|still|now|currently|again|restarted|started|back on"
    r"|these days|every day|everyday|daily|i take|i use|i'm taking|i'm using)\b"
)
# A question about how regularly, where "no" means doses are missed, not that it stopped.
_REGULARITY = re.compile(
    r"\b(regularly|every day|everyday|daily|as prescribed|as directed|consistently|on time"
    r"|as often as|like you should|as you should|every dose)\b"
)
_REGIMEN = re.compile(
    r"\b(once|twice|three times|four times|a day|daily|every \w+ hours|as needed|at night"
    r"|in the morning|at bedtime|milligrams?|mg|m g|you're on|you are on|you're taking"
    r"|you are taking|you're using|you are using)\b"
)
# A question about earlier use, where "no" means never before, not stopped now.
_EVER = re.compile(r"\b(before|ever|in the past|previously|prior)\b")


def false_start(sentence: str) -> bool:
    """The sentence is only fillers and words broken off ("um , uh , it ..."), no yes or no."""
    text = sentence.lower().strip()
    start = _FALSE_START.match(text)
    return start is not None and start.end() == len(text) and _polarity(text) is Polarity.NONE


def polarity(answer: str) -> Polarity:
    """How a patient's reply answers a yes/no question (first sentence only); a false
    start before it ("wh- yeah", "it ... yes") does not hide it."""
    text = answer.lower().strip()
    said = _polarity(text)
    if said is Polarity.NONE and (start := _FALSE_START.match(text)):
        return _polarity(text[start.end() :])
    return said


def _polarity(text: str) -> Polarity:
    if _UNSURE.match(text):
        return Polarity.NONE
    if _LESS.match(text):
        return Polarity.LESS
    yes, no = _YES.match(text), _NO.match(text)
    if no and _CHANGED_MIND.match(text[no.end() :]):  # "no i yeah i do"
        return Polarity.NONE
    if yes and (not no or yes.end() > no.end()):
        return Polarity.YES
    if no:
        return Polarity.NO
    if tag := _TAG.match(text):
        return Polarity.YES if tag[1] else Polarity.NO
    if len(words(text)) <= 8:
        # "well , since the fall of 2007": the filler "well" is no answer
        said = _OPENING_FILLERS.sub("", text)
        bad, good = _BAD.search(said), _GOOD.search(said)
        # "not great" is bad, "not too bad" good
        if bad and not _NOT_BEFORE.search(said[: bad.start()]):
            return Polarity.BAD
        if good and _NOT_BEFORE.search(said[: good.start()]):
            return Polarity.BAD
        if good or bad:
            return Polarity.GOOD
    return Polarity.NONE


# A listener's acknowledgement, which lets the speaker go on rather than answering.
_BACKCHANNEL = re.compile(
    r"\W*(?:(?:mm+-?hmm+|mhm+|mm+|hmm+|uh-huh|uh|um|yes|yeah|yep|okay|ok|right|sure)\W*){1,3}"
)


def backchannel(text: str) -> bool:
    """ "mm-hmm ." / "yes ." / "okay": an acknowledgement, which says nothing itself."""
    return _BACKCHANNEL.fullmatch(text.lower()) is not None


def leading_answer(text: str) -> int:
    """Length of a leading "no ," / "yes ," that answers a question rather than negates.

    ConText would read "no , i have a stuffy nose" (or, without the comma of speech
    recognition, "no i have a stuffy nose") as a negated stuffy nose.
    """
    match = re.match(
        r"\W*(no|nope|nah|yes|yeah|yep)(?:\s*[,.]\s*(?=\w)|\s+(?=(?:i|i'm|it|it's|but|just"
        r"|actually|we|my)\b))",
        text,
        re.IGNORECASE,
    )
    return match.end() if match else 0


# "as i used to be" compares with then: "i'm not as young as i used to be"
_AS_THEN = re.compile(r"\bas (?:i|it|he|she|we|they|you) $")


def gone(sentence: str) -> bool:
    """Whether the sentence says something is gone or no longer there (not just better;
    not a comparison with then: "i'm not as young as i used to be")."""
    text = sentence.lower()
    said = [
        m
        for m in _GONE.finditer(text)
        if not (_WISH.search(text[: m.start()]) or _AS_THEN.search(text[: m.start()]))
    ]
    return bool(said) and not _IMPROVING.search(text)


def absent(sentence: str) -> bool:
    """Gone, or not had lately ("have n't had any problems since")."""
    return gone(sentence) or bool(_QUIET.search(sentence.lower()))


def improving(text: str) -> bool:
    """ "a bit better", "getting stronger": still there, but less."""
    return bool(_IMPROVING.search(text.lower()))


def status(text: str) -> bool:
    """Whether a reply says how something is going (better, still, gone, readings; "not
    as often", "not like it used to")."""
    low = text.lower()
    return bool(_STATUS.search(low) or _IMPROVING.search(low))


def details(sentence: str) -> list[str]:
    """Which kinds of detail (frequency, severity, duration, trigger) the sentence adds.

    A negated degree adds nothing ("it has n't gotten worse" only says it is stable).
    """
    text = sentence.lower()
    out = []
    for name, pattern in _DETAILS.items():
        found = re.finditer(pattern, text)
        if name == "severity":
            found = (m for m in found if not _NEGATED.search(text[: m.start()]))
        if any(True for _ in found):
            out.append(name)
    return out


def behaviour(sentence: str, lex: Lexicon) -> str:
    """The adherence behaviour a sentence describes; `as_prescribed` by default."""
    return behaviour_phrase(sentence, lex)[0]


# Status statements, by construction rather than by phrase: a use verb under a negation
# with "anymore" / "now" ("i don't take the lasix anymore"), "no longer", "not anymore";
# never having filled, picked up or started it; taking it only when a need arises.
_NOT_ANYMORE = re.compile(
    r"\b(?:(?:do|does|am|is|are)\s*n't|don't|do not|not|am not|i'm not)\s+(?:\w+\s+)?"
    r"(?:take|taking|use|using|on)\b(?:\W+[\w']+){0,5}?\W+(?:anymore|any more|these days)\b"
    r"|\bnot (?:\w+ )?(?:anymore|any more)\b|\bno longer\b"
)
_NEVER_GOT = re.compile(
    r"\bnever (?:\w+ )?(?:got|get|picked|filled|started|start|took|take|used|use)\b"
    r"|\b(?:did|have|has)\s*(?:n't|not)\s+(?:\w+ )?(?:fill|filled|pick|picked|start|started)\b"
    r"|\b(?:didn't|haven't|hasn't) (?:\w+ )?(?:fill|filled|pick|picked|start|started)\b"
    r"|\b(?:could n't|couldn't|could not|was n't able to|wasn't able to|was not able to)"
    r" (?:\w+ )?(?:fill|pick|get (?:it|them|the|my))\b"
    r"|\b(?:would n't|wouldn't|did n't|didn't|does n't|doesn't|wo n't|won't) cover\b"
    r"|\bnot covered\b"
)
# A dose not taken on a day the patient names, or not as regularly as asked: "i did not
# take my pain medication this morning", "i have n't had it today", "i don't take it
# every day".
# A long time since the last dose: "i haven't taken my medicines in months", "it's been
# several months since she last took her medicines"
_NOT_FOR_LONG = re.compile(
    r"\b(?:have|has)\s*(?:n't|not)\s+(?:\w+ )?(?:taken|used|filled)\b(?:\W+[\w']+){0,4}?"
    r"\W+(?:in|for)\s+(?:(?:a few|several|many|a couple of|\w+)\s+)?"
    r"(?:weeks|months|years|a while|a long time|ages)\b"
    r"|\bsince (?:i|she|he|they|we) last (?:took|used|filled)\b"
)
# "he won't take the inhaler", "she refuses to use it"; not "i won't take more than two"
_REFUSES = re.compile(
    r"\b(?:won't|wo n't|will not|refuses? to|refused to)\s+(?:take|use)\b"
    r"(?!\s+(?:more|over|too|any more|extra)\b)"
)
_SKIPPED = re.compile(
    r"\b(?:did|have|has)\s*(?:n't|not)\s+(?:\w+ )?(?:take|taken|took|had|use|used)\b"
    r"(?:\W+[\w']+){0,4}?\W+(?:this morning|today|tonight|last night|yesterday)\b"
    r"|\b(?:do|does|did)\s*(?:n't|not)\s+(?:always\s+)?(?:take|use)\b(?:\W+[\w']+){0,3}?"
    r"\W+(?:every day|everyday|daily|regularly|every time|on time|as prescribed)\b"
    r"|\b(?:when|if) (?:i|she|he|they) remembers?\b"  # "only when i remember"
)
_ONLY_WHEN = re.compile(
    r"\b(?:only|just)\s+(?:\w+\s+)?(?:when|whenever|if)\b"
    r"|\b(?:only|just)\s+(?:take|use|took|used)\b(?:\W+[\w']+){0,4}?\W+(?:when|whenever|if)\b"
    r"|\b(?:when|whenever|if)\s+(?:i|it|my \w+)\s+(?:\w+\s+)?(?:need|needs|feel|hurts?"
    r"|flares?|acts? up|gets? (?:bad|worse)|bothers? me)\b"
    r"|\bas needed\b|\bon (?:the )?bad days\b|\bonce in a while\b|\bnow and then\b"
    r"|\bsometimes (?:take|takes|use|uses|took|used)\b"  # "i'll sometimes take allegra"
)


# A provider reporting what they found, not asking what the patient feels: a "yes" to it
# agrees with the clinician and is not the patient's own statement.
_FINDING = re.compile(
    r"\b(?:on (?:your |the )?(?:physical )?exam(?:ination)?|physical exam|review of systems"
    # (but "i see you had the gout flare in march" reads the chart)
    r"|i (?:do |can )?(?:see|hear|feel|notice|noticed|note|appreciate)"
    r"(?! (?:that )?you(?:'ve| have)? (?:had|were|went|got|saw|been))|your (?:x-ray|mri|ct|scan"
    r"|labs?|results?|ekg|echo)\w* (?:show|shows|showed|revealed?|came back)|(?:exam|x-rays?|mris?"
    r"|scans?|labs?|results?|findings?) (?:show|shows|showed|revealed?|demonstrate)"
    r"|(?:which|that|this|it) (?:also )?(?:showed|shows|revealed|demonstrated|demonstrates)"
    r"|show me the"
    r"|when i (?:push|press|touch|squeeze|tap|move|bend|pull)|(?:push|press)(?:ing)? (?:on )?"
    r"(?:right )?(?:here|there)"
    r"|(?:lungs?|heart|abdomen) (?:sounds?|is|are|looks?) (?:clear|good|normal|soft)"
    r"|(?:looking|look)(?: here)? at (?:this|that|these|your|the) (?:\w+ )?"
    r"(?:results?|labs?|x-rays?|images?|scans?|echo\w*|ekg|numbers|report)?)\b"
)
# The clinician's assessment: what they think the patient has.
_ASSESSMENT = re.compile(
    r"\b(?:what you have is|you have what(?:'s| is| we) call|my (?:impression|assessment|diagnosis)"
    r"|i (?:think|believe|suspect)(?: that)? you(?:'re| are)? (?:having|have|had)"
    r"|for your (?:first|second|third|fourth|fifth|next|last|other) problem)\b"
)
# The provider advises or plans ("try not to take any ibuprofen , okay ?", "we'll get an
# echo"): a "yup" to it acknowledges the plan, it says nothing of what the patient does.
_PLAN = re.compile(
    r"\b(?:i want you to|i'd like you to|i would like you to|try (?:not )?to|make sure"
    r"|you should|you need to|we need to|we want to|we'd like to|we'll|we will|we're going to"
    r"|we are going to|we can|we could|let's|go ahead"
    r"|i'm going to (?:have you|prescribe|order|start|refer|send|put|give|increase|decrease"
    r"|switch|change|recommend)|i (?:would |'d )?recommend|recommend that"
    r"|i (?:would|'d) like to (?:increase|decrease|start|switch|change|add|stop|prescribe|try))\b"
)
# The provider announces the physical examination ("let's do a quick physical exam", "let
# me examine you") and, later, turns from it to results, assessment or plan.
_EXAM_STARTS = re.compile(
    r"\b(?:(?:do|start|begin|perform)\s+(?:my|the|a|an|your)\s+(?:\w+\s+){0,2}?"
    r"exam(?:ination)?|examine (?:you|your)|(?:do|start) the exam)\b"
)
_EXAM_ENDS = re.compile(
    r"\b(?:x-?rays?|results?|labs?|assessment|impression|diagnosis|plan|recommend\w*)\b"
)
# Someone else's worry ("they were a little concerned about it"): not the patient's concern.
_OTHERS_WORRY = re.compile(
    r"\b(?:they|he|she|the doctors?|doctor|dr|the nurses?|the er|the hospital)\s+(?:\w+\s+){0,3}?"
    r"(?:concerned|worried|scared|afraid|nervous|wanted to make sure)\b"
)


# What may open a question before its first word that counts.
_QUESTION_LEAD = r"^(?:(?:okay|ok|so|and|but|um|uh|well|then|also|now|yeah|yes|no|like)\W+)*"
# A patient's question that speech recognition left without its mark opens with an
# inverted auxiliary, maybe after a wh-word: "is that golfer's elbow", "when can i play
# basketball again", "how long do you think it'll take to heal"; a subject between the two
# makes a clause ("when i do that , i feel it in my legs").
_ASKS_ITSELF = re.compile(
    _QUESTION_LEAD
    + r"(?:(?:what|when|how|why|which|where)(?: (?!(?:i|you|he|she|we|they|it)\b)\w+)? )?"
    r"(?:(?:is|was|will|would|can|could|should|do|does|did|am)"
    r" (?:i|it|that|this|we|there|my|the)\b|(?:do|does|did) you think\b)"
)
# Longer unmarked "questions" are statements with an inversion in them.
ASKS_ITSELF_WORDS = 15


# A question without a question word or an auxiliary only echoes what was said ("the
# one on my left wrist?", "like fever or chills?").
_QUESTION_OPENS = re.compile(
    r"(?:^|[,;-]\s*|\b(?:and|but|so|or|then|like|um|uh|well|okay|oh|now|also|wonder(?:ing)?|if"
    r"|doc|doctor|dad|mom)\s+)"
    r"(?:what|what's|when|how|how's|why|which|where|who|is|are|was|were|will|would|can"
    r"|could|should|do|does|did|am|have|has)\b"
    r"|,\s*(?:right|correct|is n't it|isn't it)\s*\?$"  # "this is the same procedure , right ?"
)
_RECALL = re.compile(
    r"\b(?:do|did|can|could) you (?:remember|recall|know)\b(?:\s+\w+){0,2}?"
    r"\s+(?:what|when|how|why|where|which|who)\b"
)
# Words of taking a drug, or of a way of taking it, in another sense: "it did take us some
# time to get rid of it", "take a look"; "i forgot why they gave it to me" (no dose
# missed); "there is yellow fluid coming out of it" (nothing ran out).
_OTHER_SENSES = re.compile(
    r"\b(?:take|takes|took|taken|taking) (?:us |me |him |her |them |you )?"
    r"(?:some time|a (?:long |little |good )?(?:while|time)|a lot of time"
    r"|(?:much |more |less )?time|longer|forever|a (?:quick )?look"
    r"|a (?:walk|break|nap|shower|bath|seat))\b"
    r"|\bforg(?:et|ets|ot|otten|etting) (?:why|what|which|how|where|when|who"
    r"|the names?|its name|their names?)\b"
    r"|\b(?:coming|came|come|comes|get|gets|got|getting) out of it\b"
)
_SELF = re.compile(r"\b(?:i|me|my|mine|we)\b")
_WH_OPENING = re.compile(_QUESTION_LEAD + r"(?:what|how|why|which|where|who)\b")


# A request that the clinician do something ("can you take a look?", "doctor , could you
# check my feet?"), not an open question; asking to be told ("can you remind me what
# operation i had?") is one.
_ACTS = re.compile(
    _QUESTION_LEAD + r"(?:(?:actually|doctor|doc)\W+)*(?:can|could|would|will) you "
    r"(?!(?:also |just |please )?(?:tell|explain|remind|show|go over|describe|clarify|say))\w+"
)


# "what is c diff ?", "what's that ?": what something the clinician just named is
_DEFINING = re.compile(
    _QUESTION_LEAD + r"(?:what is|what's|whats|what are)\s+(?:(?:a|an|the)\s+)?(?P<term>[^?]*?)"
    r"(?:\s*,?\s*(?:again|doctor|doc))?\s*\?$"
)
# Words that point back to what was said before ("what's that ?", "it gets worse").
POINTING_BACK = frozenset(
    {"it", "it's", "that", "that's", "this", "these", "those", "they", "they're", "them"}
    | {"there", "here"}
)


def asks_what_it_is(sentence: str) -> bool:
    """The sentence asks what something is ("what is c diff ?", "what's that ?")."""
    return bool(_DEFINING.match(sentence.strip().lower()))


def term_asked(sentence: str) -> str | None:
    """What a question asking what something is names: "c diff" of "what is c diff ?";
    None for "what's that ?", which points back."""
    said = _DEFINING.match(sentence.strip().lower())
    term = said["term"].strip() if said else ""
    return term if term and not set(words(term)) & POINTING_BACK and len(words(term)) <= 4 else None


def asks_to_act(sentence: str) -> bool:
    """The sentence asks the clinician to do something rather than to tell something."""
    return bool(_ACTS.match(sentence.strip().lower()))


def asks_itself(sentence: str) -> bool:
    """The sentence asks something, with or without its question mark."""
    text = sentence.strip().lower()
    if text.endswith("?"):
        # a question word opening a clause: "so what should i do ?", "i was wondering ,
        # is it bad ?"; not a statement said rising ("that seemed to help a little bit ?")
        return bool(_QUESTION_OPENS.search(text))
    return bool(_ASKS_ITSELF.match(text)) and len(words(text)) <= ASKS_ITSELF_WORDS


_FILLED = re.compile(r"\bpick(?:ed)?(?:\s+\w+){0,3}?\s+up\b|\bfill(?:ed)?\b")


# A question about what the patient just said, asking one of its attributes (GUIDELINE §2:
# onset, duration, frequency, severity, trigger) or its course, quality or place.
_ASKS_ATTRIBUTE = re.compile(
    r"\b(?:when did (?:it|that|this|they|these|those)|how long|since when|how bad|how severe"
    r"|scale of|out of (?:ten|10)|how often|how many times|how frequent|better or worse"
    r"|(?:getting|gotten|get|gets|got) (?:any )?(?:better|worse)|(?:make|makes|made) (?:it|that"
    r"|them|this) (?:better|worse)|bring (?:it|that|them|this) on|come and go|comes and goes"
    r"|constant|what does (?:it|that|this) feel like|describe (?:it|that|this|the)"
    r"|where (?:is|does|do) (?:it|that|this|they)|happened before|first time)\b"
)


def asks_attribute(question: str) -> bool:
    """ "when did that start ?", "how bad is it ?", "does anything make it worse ?"."""
    return bool(_ASKS_ATTRIBUTE.search(question.lower()))


def asks_filled(question: str) -> bool:
    """ "Did you pick up the metformin?", "have you filled it?": whether it was ever got."""
    return bool(_FILLED.search(question.lower()))


def asks_recall(question: str) -> bool:
    """ "Do you remember what caused the pain?": a yes or no says whether the patient
    knows, not whether the pain is there."""
    return bool(_RECALL.search(question.lower()))


def without_other_senses(sentence: str) -> str:
    """The sentence, lower case, without the words of taking a drug said in another sense
    ("take a look", "forgot why", "coming out of it")."""
    return _OTHER_SENSES.sub(" ", sentence.lower())


def about_self(sentence: str) -> bool:
    """The speaker speaks of themself: "i", "me", "my", "we"."""
    return bool(_SELF.search(sentence.lower()))


def asks_what(sentence: str) -> bool:
    """The sentence opens with a wh-word ("what can we do about this?")."""
    return bool(_WH_OPENING.match(sentence.strip().lower()))


# Someone's death: "how did your brother pass away?", "how did she pass?", "she died when
# she was seventy four". The patient is alive, so who died is someone else; a relative
# asked about may be the patient ("did your mother tell you about her condition?").
_DEATH = re.compile(r"\b(?:pass away|passed away|died|die|did (?:he|she|they) pass)\b")
_THIRD_PERSON = re.compile(
    r"^\W*(?:(?:well|um|uh|oh|yes|yeah|so)\W+)*(?:he|she|they|his|her|their)\b"
)


def of_a_death(text: str) -> bool:
    """The text speaks of someone's death."""
    return bool(_DEATH.search(text.lower()))


_RELATIVES = (
    r"(?:son|daughter|child|kid|baby|boy|girl|mother|mom|mum|father|dad|husband|wife|partner"
    r"|grandson|granddaughter|grandmother|grandma|grandfather|grandpa)"
)
# and the kin whose illness a patient is asked of or tells of
_KIN = rf"(?:{_RELATIVES}|brother|sister|sibling|aunt|uncle|cousin|parent|grandparent)"
_OWN_RELATIVE = re.compile(rf"\bmy {_RELATIVES}\b")
_THEIR_RELATIVE = re.compile(rf"\b(?:his|her|their) {_RELATIVES}\b")


# a relative of the one asked: "what about your mother?"
_YOUR_RELATIVE = re.compile(rf"\byour {_KIN}s?\b")


def asks_of_relative(question: str) -> bool:
    """ "What about your mother?": asked of the patient, the reply is about someone else."""
    return bool(_YOUR_RELATIVE.search(question.lower()))


def of_own_relative(sentence: str) -> bool:
    """The sentence speaks of "my son" (and of no "her brother"): said by a caregiver, the
    patient."""
    low = sentence.lower()
    return bool(_OWN_RELATIVE.search(low)) and not _THEIR_RELATIVE.search(low)


_FAMILY_QUESTION = re.compile(
    r"\b(?:in (?:the|your) family|family (?:medical )?history|runs? in (?:the|your) family"
    r"|running in (?:the|your) family)\b"
)


def asks_family(question: str) -> bool:
    """ "Any medical diseases in the family?": the reply is about the family."""
    return bool(_FAMILY_QUESTION.search(question.lower()))


_OWN = re.compile(r"\bi(?:'ve|'m| have| had| get| got| am)\b")


def own_before(text: str) -> bool:
    """The words say what the speaker has ("no , but i have had some chest pain")."""
    return bool(_OWN.search(text.lower()))


def of_third_person(sentence: str) -> bool:
    """The sentence is about "he", "she" or "they" ("he had pancreatitis")."""
    return bool(_THIRD_PERSON.match(sentence.lower()))


# "she has diabetes too", not "she said i have diabetes" (what she told the patient)
_HE_OR_SHE = re.compile(
    r"^\W*(?:(?:well|um|uh|oh|so|and|also|but)\W+)*(?:he|she)\b"
    r"(?!(?:'s| is)? (?:said|says|told|tells|thinks|thought)\b)"
)
# a relative the speaker has: "i have one sister", "my dad"
_HAS_RELATIVE = re.compile(
    rf"\b(?:my|i have (?:a|an|one|two|three|an older|a younger|a little|a big)) {_KIN}s?\b"
)


def of_he_or_she(sentence: str) -> bool:
    """The sentence is said of "he" or "she", not as what they told the speaker."""
    return bool(_HE_OR_SHE.match(sentence.lower()))


def names_relative(sentence: str) -> bool:
    """The speaker names a relative of theirs ("i have one sister", "my mother")."""
    return bool(_HAS_RELATIVE.search(sentence.lower()))


def others_worry(text: str) -> bool:
    """The worry in the sentence is someone else's (the clinicians', "they")."""
    return bool(_OTHERS_WORRY.search(text.lower()))


def examining(text: str, before: bool) -> bool:
    """Whether the provider is examining after saying `text` (`before`: they were)."""
    lowered = text.lower()
    if _EXAM_STARTS.search(lowered):
        return True
    return before and not _EXAM_ENDS.search(lowered)


# A question asking how, when, where or what (not whether): "how's the pain now?", "so
# when did the cough start?".
_WH = re.compile(
    _FILLER + r"(?:(?:now|then|and then|alright|all right)\W+)?(how|what|when|where|which)\b"
)


# "is the pain sharp or dull?": a choice, answered by naming one
_CHOICE = re.compile(r"\b(?:is|are|was|does|do|did) (?:it|the \w+|your \w+)\b.*\bor\b(?! not)")
# "and the swelling in your ankles?": how it is, said in a phrase
_ELLIPTICAL = re.compile(_FILLER + r"(?:and|so|okay|now)?\W*(?:the|your)\b[^?]{0,40}\?$")
# "can you tell me more about this low back pain?": a request to describe it
_OPEN = re.compile(
    r"\b(?:tell me|talk to me)(?: a (?:little )?(?:bit )?more| more)? about\b|\bdescribe\b"
    r"|\bwalk me through\b"
)


def asks_wh(question: str) -> bool:
    """The question asks how, when, where or what rather than yes or no, or which of two
    ("is the pain sharp or dull?"), or how a thing is ("and the swelling in your ankles?"),
    or asks to describe it."""
    low = question.lower().strip()
    return bool(_WH.match(low) or _CHOICE.search(low) or _ELLIPTICAL.match(low) or asks_open(low))


_HOW = re.compile(r"\bhow\b(?! about)")


def asks_how(question: str) -> bool:
    """The question asks how ("how are you doing with that?", "how long?"), which no yes
    or no answers; "how about any fever?" asks whether."""
    return bool(_HOW.search(question.lower()))


def asks_open(question: str) -> bool:
    """The provider asks the patient to describe something: whatever the reply opens with
    ("well , i'm not ..."), it answers no yes-or-no question."""
    return bool(_OPEN.search(question.lower()))


# Speech recognition's spellings of a clinician's phrases ("we're gon na order", "i wan na
# see you back"), said as the cues say them.
_SPOKEN = {"gon na": "going to", "wan na": "want to"}
_SPOKEN_FORMS = re.compile(r"\b(?:gon na|wan na)\b")


def _as_written(text: str) -> str:
    """The text, lower case, with speech recognition's "gon na" and "wan na" written out."""
    return _SPOKEN_FORMS.sub(lambda m: _SPOKEN[m.group()], text.lower())


def findings(text: str) -> bool:
    """The clinician reports an exam or test finding or assesses; unlike
    `clinicians_words`, not advice or a plan ("let's talk about your blood pressure")."""
    written = _as_written(text)
    return bool(_FINDING.search(written) or _ASSESSMENT.search(written))


# What only a clinician says to the patient: in a patient's turn, speech recognition gave
# the clinician's words to the wrong speaker ("you've got some arthritis in there , we
# call this hallux rigidus"; "we're gon na order some blood work", "i wan na see you back
# in two weeks", "for your first problem of sinusitis")
_CLINICIAN_ONLY = re.compile(
    r"\b(?:i want you to|i'd like you to|i would like you to|you should|you need to"
    r"|(?:i'm|we're|i am|we are) (?:also )?going to (?:go ahead and )?"
    r"(?:have you|prescribe|order|refer|send)|i (?:would |'d )?recommend"
    r"|(?:want|like) to see you back|your (?:first|second|third|next|last) problem"
    r"|we call (?:this|that|it)|you(?:'ve| have) got (?:a|an|some)"
    r"|on (?:your |the )?(?:physical )?exam(?:ination)?|my assessment and plan)\b"
)


def clinician_only(text: str) -> bool:
    """Words a patient does not say to their clinician."""
    return bool(_CLINICIAN_ONLY.search(_as_written(text)))


def clinicians_words(text: str) -> bool:
    """The provider's sentence reports an exam, test or review-of-systems finding, assesses,
    advises or plans: a yes to it agrees with the clinician (GUIDELINE §2, not memories)."""
    return findings(text) or bool(_PLAN.search(_as_written(text)))


def behaviour_phrase(sentence: str, lex: Lexicon) -> tuple[str, str | None]:
    """The behaviour and the words that said it ("as needed", "only when")."""
    text = without_other_senses(sentence)
    for name, pattern in (
        ("never_started", _NEVER_GOT),
        ("stopped", _NOT_ANYMORE),
        ("stopped", _NOT_FOR_LONG),
        ("stopped", _REFUSES),
        ("missed_doses", _SKIPPED),
        ("as_needed", _ONLY_WHEN),
    ):
        if match := pattern.search(text):
            return name, match.group(0)
    tokens = tokenize(text)
    for name, index in lex.behaviours:
        hits = index.find(tokens)
        if name == "missed_doses":  # "so i don't forget", "i never miss one"; but "i
            # don't always remember to take it" (and not "so i remember to take it")
            said = [t.text for t in tokens]
            hits = [h for h in hits if _negated_before(said, h[0]) == h[2].startswith("remember")]
        if hits:
            return name, hits[0][2]
    return "as_prescribed", None


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
            return _negated_before(list(tokens), k)
    return False


def _negated_before(tokens: list[str], k: int) -> bool:
    """A negation among the three words before word `k` ("not", "never", "don't")."""
    return any(w in {"not", "no", "never"} or w.endswith("n't") for w in tokens[max(0, k - 3) : k])


def current_use(text: str) -> bool:
    """The words place the use in the present ("I'm taking", "still", "again")."""
    return bool(_CURRENT.search(text.lower()))


def about_regularity(question: str) -> bool:
    """ "Are you taking it every day?": a "no" means missed doses."""
    return bool(_REGULARITY.search(question.lower()))


def about_earlier_use(question: str) -> bool:
    """ "Have you been on that before?": a "no" means it is new."""
    return bool(_EVER.search(question.lower()))


def states_regimen(sentence: str) -> bool:
    """The sentence says how a drug is taken ("three times a day", "you're on 10 mg")."""
    return bool(_REGIMEN.search(sentence.lower()))
