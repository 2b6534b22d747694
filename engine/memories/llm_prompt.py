"""The chat prompt of the LLM extractor: the annotation guideline, condensed, and the record.

The record's conditions and medications are numbered (`F1`, `F2`, ...) with what decides a
relationship type: status, dose, frequency, dates. The model proposes, per memory,
`relationships: [{fact, type, why}]`; `verify` checks each proposal against the same
numbering (`numbered_facts`). Messages already processed in an earlier call are shown
for context (a question that a new answer replies to) and marked as such.

`PROMPT_VERSION` is part of the extractor's version, so memories and relationships say
which prompt produced them; change it with any change to what the model is asked.
"""

from engine.models import Fact, FactKind, Message

PROMPT_VERSION = "2.3.0"
# Facts that memories link to; allergies are shown as context only.
LINKABLE = (FactKind.CONDITION, FactKind.MEDICATION)
_MAX_FACTS = 150
# Fact fields shown after the label, in this order: what decides a relationship type.
_SHOWN_FIELDS = ("dose", "frequency", "route", "onset", "abatement", "start", "end")

SYSTEM_PROMPT = """\
You extract memories from a conversation between a clinician and a patient, and link
each memory to the facts of the patient's record that it bears on.

A memory is one thing the patient (or a caregiver speaking for them) said that is worth
keeping. There are four types, nothing else:
- symptom: self-reported clinical state: a symptom, a feeling, a home reading, or the
  patient's own statement that a condition is better, worse, gone or still there.
  subject: the symptom or condition in plain words ("headache", "blood sugar").
  attributes (when said): present (false for "gone"/"no longer"), onset, duration,
  frequency, severity, trigger.
- adherence: how the patient actually takes or does not take a medication: as
  prescribed, missed doses, stopped, never started or filled, changed the dose or timing
  on their own, ran out, cannot afford it; over-the-counter drugs the patient takes on
  their own count too. subject: the generic drug name.
  attributes: behavior (as_prescribed, missed_doses, stopped, never_started,
  changed_dose or ran_out), reason. When the patient speaks of their medications in
  general ("I take my medications"), subject "medications", linked only to drugs the
  same exchange names.
- concern: a worry, fear or health question the patient raises (not logistics such as
  "when do I come back?"; not what a friend or relative suggested, unless the patient
  asks about it). subject: a short topic ("cancer risk").
- preference: a communication, scheduling, care or identity preference, including a
  treatment choice, request or refusal, or what the patient finds works better for them
  (not simple agreement with the plan; not a habit or reminder the patient describes,
  such as a pill calendar; identity is a name or pronouns, not age or ethnicity). subject:
  exactly one of communication, scheduling, care, identity. attributes: detail.

Not memories: what the provider observes, examines, plans or explains (even when the
patient agrees); family history; hypotheticals ("if I get chest pain I'll call"); a
symptom the patient denies ("no fever") unless it is a direct manifestation of a
condition in the record; a condition the patient says they never had; small talk. Nor
what the record below already lists that the patient merely repeats without their own
experience: naming a listed diagnosis, or listing the medications and supplements they
take (a list is not adherence; "yes, I take it every day" or "I've been skipping it"
is). The record holds no results: a test
result, reading or measurement the patient reports (a lab value, blood pressure,
sugars, weight) is a symptom memory. Ask of each candidate: does it tell the clinician
how the patient is, or what the patient does, that the record below cannot already say?

Evidence:
- Every memory has quotes: exact, character-for-character copies of text from one
  numbered message each, with that message's number. Never paraphrase, correct or
  join text from two messages. Quote the patient's or caregiver's own words.
- When the patient only answers yes or no to a provider's question, quote the answer
  and the provider's question (two quotes).
- One memory per statement about one subject: "headaches and dizziness" is two symptom
  memories sharing one quote. A statement repeated later is the same memory: add the
  later quote to it.
- Take memories only from the new messages; earlier messages are shown so that you can
  tell what a new message answers.
- Subjects are lower case. confidence is between 0 and 1.

Relationships: link a symptom memory to condition facts and an adherence memory to
medication facts, by the fact's number; concern and preference memories have none. A
link needs the same clinical entity: the medication's ingredient matches (brand and
generic names are the same drug, an older or brand name too), or the condition is the
symptom itself ("my asthma") or a direct manifestation of it (wheezing -> asthma, high
sugar readings -> diabetes, headache -> migraine). Loose associations are not links. At
most one relationship per memory and fact; a memory may link to several facts.
- conflicts: the statement contradicts the record: stopped, never started or never
  picked up a medication the record lists as active; takes it only when needed while
  the record schedules it; takes a dose or frequency different from the record's; takes
  a medication the record lists as stopped or completed; says a condition recorded
  active is gone (the condition itself, not just feeling better); ongoing symptoms of a
  condition recorded resolved.
- corroborates: agrees with the record and adds nothing: takes an active medication as
  prescribed; a symptom that simply confirms an active condition.
- enriches: agrees with the record and adds what it lacks: frequency, severity, timing,
  triggers, how it affects the patient, feeling better while the condition is still
  treated, a denied manifestation (current control); missed or late doses, side effects
  while still taking it, how often an as-needed drug is used, the reason for a stop the
  record already shows.
Compare what the patient says with each fact's status, dose and frequency as listed:
write "why" first, naming what the record says and what the patient says, then choose
the type from that comparison.

Answer with JSON only, in this shape:
{"memories": [{"type": "adherence", "subject": "metformin", "text": "one-sentence summary",
  "quotes": [{"message": 3, "quote": "exact words from message 3"}],
  "attributes": {"behavior": "stopped", "reason": "stomach upset"}, "confidence": 0.8,
  "relationships": [{"fact": 2,
    "why": "record: active, 500 mg twice daily; patient: stopped two weeks ago",
    "type": "conflicts"}]}]}
When there is nothing to keep, answer {"memories": []}."""


def numbered_facts(facts: list[Fact]) -> list[Fact]:
    """The facts the prompt shows, in order: `F1` is the first. Conditions and
    medications first (they are what memories link to), then allergies."""
    kinds = (*LINKABLE, FactKind.ALLERGY)
    ordered = [f for kind in kinds for f in sorted(facts, key=_order) if f.kind is kind]
    return ordered[:_MAX_FACTS]


def _order(fact: Fact) -> tuple[str, str]:
    return (fact.label.lower(), fact.fact_key)


def fact_line(number: int, fact: Fact) -> str:
    """`F3 medication: Lisinopril 20 mg oral tablet | status: active | dose: 20 mg daily`."""
    parts = [f"F{number} {fact.kind.value}: {_one_line(fact.label)}"]
    parts.append(f"status: {fact.status or 'unknown'}")
    for name in _SHOWN_FIELDS:
        value = fact.fields.get(name)
        if value not in (None, "", [], ()):
            parts.append(f"{name}: {_one_line(str(value))}")
    return " | ".join(parts)


def _one_line(text: str) -> str:
    return " ".join(text.split())


def user_prompt(messages: list[Message], facts: list[Fact], processed: int = 0) -> str:
    """The numbered record and the numbered transcript, as the model reads them.

    Args:
        messages: the messages shown, oldest first; numbered from 1.
        facts: the patient's facts.
        processed: how many leading messages an earlier call already read.
    """
    lines = ["The patient's record before this conversation (link memories by fact number):"]
    shown = numbered_facts(facts)
    lines += [fact_line(n, f) for n, f in enumerate(shown, start=1)]
    if not shown:
        lines.append("(nothing recorded)")
    if processed:
        lines += ["", "Earlier messages, already processed (context only, no memories):"]
        lines += [_message_line(n, m) for n, m in enumerate(messages[:processed], start=1)]
        lines += ["", "New messages (take memories from these only):"]
    else:
        lines += ["", "The conversation, one numbered message each:"]
    lines += [_message_line(n, m) for n, m in enumerate(messages[processed:], start=processed + 1)]
    return "\n".join(lines)


def _message_line(number: int, message: Message) -> str:
    text = message.text.replace("\n", "\n    ")
    return f"[{number}] {message.role.value}: {text}"
