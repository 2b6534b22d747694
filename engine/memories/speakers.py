"""Who said it: a transcript whose patient and provider labels are the wrong way round.

Speech recognition tells voices apart but guesses which is the clinician, and a flipped
guess labels the whole conversation the wrong way round. Six of the 87 ACI-Bench
dialogues are like that; read as labelled, the clinician's plan and exam would become
the patient's statements and what the patient said would be lost. The two roles speak
differently: the clinician asks (the share of turns asking something,
`text.question_spans`) and examines, advises and plans (`cues.clinicians_words`). A
conversation is read with the labels swapped when its patient turns do both more often
than its provider turns, by `MARGIN` added over the two shares.

Measured: the six flipped ACI-Bench dialogues are read swapped; the other 81, and all
1,201 MTS-Dialog conversations, are read as labelled (in every one of those 81 the
patient turns ask less often than the provider turns). The 21 remaining dev
conversations with their labels flipped: 14 are read swapped (the other 7 are short, or
the clinician rarely asks); memory F1 0.662 and relationship F1 0.618, against 0.036 and
0.029 read as labelled and 0.831 and 0.733 for the conversations as recorded.
"""

from collections.abc import Sequence

from engine.memories import cues
from engine.memories.text import question_spans, sentences
from engine.models import Message, Role

# Turns of each role a conversation needs before its labels are judged.
MIN_TURNS = 8
# How much more often the patient turns ask and speak the clinician's words than the
# provider turns, the two shares' differences added, at least.
MARGIN = 0.25


def as_spoken(messages: Sequence[Message], whole: Sequence[Message]) -> tuple[list[Message], bool]:
    """The messages with patient and provider labels swapped when the whole conversation
    (`whole`, which holds them) is labelled the wrong way round; and whether it was."""
    if not labels_swapped(whole):
        return list(messages), False
    swap = {Role.PATIENT: Role.PROVIDER, Role.PROVIDER: Role.PATIENT}
    return [m.model_copy(update={"role": swap.get(m.role, m.role)}) for m in messages], True


def labels_swapped(messages: Sequence[Message]) -> bool:
    """Whether the patient turns ask and talk like the clinician (see the module doc)."""
    patient = [m.text for m in messages if m.role is Role.PATIENT]
    provider = [m.text for m in messages if m.role is Role.PROVIDER]
    if min(len(patient), len(provider)) < MIN_TURNS:
        return False
    asking = _asking(patient) - _asking(provider)
    clinical = _clinical(patient) - _clinical(provider)
    return asking > 0 and clinical > 0 and asking + clinical >= MARGIN


def _asking(texts: list[str]) -> float:
    return sum(1 for t in texts if any(question_spans(t, s) for s in sentences(t))) / len(texts)


def _clinical(texts: list[str]) -> float:
    return sum(1 for t in texts if cues.clinicians_words(t)) / len(texts)
