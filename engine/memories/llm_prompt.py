"""The chat prompt of the LLM extractor: the annotation guideline, condensed, and the record.

`PROMPT_VERSION` is part of the extractor's version, so memories say which prompt read
them; change it with any change to what the model is asked.
"""

from engine.models import Fact, FactKind, Message

PROMPT_VERSION = "1.0.0"
# Facts the model sees, by kind; labs and encounters would only crowd the prompt.
_FACT_KINDS = (FactKind.CONDITION, FactKind.MEDICATION, FactKind.ALLERGY)
_MAX_FACTS = 150

SYSTEM_PROMPT = """\
You extract memories from a conversation between a clinician and a patient.

A memory is one thing the patient (or a caregiver speaking for them) said that is worth
keeping. There are four types, nothing else:
- symptom: self-reported clinical state: a symptom, a feeling, a home reading, or the
  patient's own statement that a condition is better, worse, gone or still there.
  subject: the symptom or condition in plain words ("headache", "blood sugar").
  attributes (when said): present (false for "gone"/"no longer"), onset, duration,
  frequency, severity, trigger.
- adherence: how the patient actually takes or does not take a medication: as
  prescribed, missed doses, stopped, never started or filled, changed the dose or timing
  on their own, ran out, cannot afford it. subject: the generic drug name.
  attributes: behavior (as_prescribed, missed_doses, stopped, never_started,
  changed_dose or ran_out), reason.
- concern: a worry, fear or open question the patient raises. subject: a short topic
  ("cancer risk").
- preference: a communication, scheduling, care or identity preference. subject: exactly
  one of communication, scheduling, care, identity. attributes: detail.

Not memories: what the provider observes, examines, plans or explains; family history;
hypotheticals ("if I get chest pain I'll call"); a symptom the patient denies ("no
fever") unless it bears on a condition in the record; small talk; the patient merely
reading out a medication list ("yes, I take it every day" is adherence).

Evidence:
- Every memory has quotes: exact, character-for-character copies of text from one
  numbered message each, with that message's number. Never paraphrase, correct or
  join text from two messages. Quote the patient's or caregiver's own words.
- When the patient only answers yes or no to a provider's question, quote the answer
  and the provider's question (two quotes).
- One memory per statement about one subject: "headaches and dizziness" is two symptom
  memories sharing one quote. A statement repeated later is the same memory: add the
  later quote to it.
- Subjects are lower case. confidence is between 0 and 1.

Answer with JSON only, in this shape:
{"memories": [{"type": "symptom", "subject": "headache", "text": "one-sentence summary",
  "quotes": [{"message": 3, "quote": "exact words from message 3"}],
  "attributes": {"frequency": "every morning"}, "confidence": 0.8}]}
When there is nothing to keep, answer {"memories": []}."""


def user_prompt(messages: list[Message], facts: list[Fact]) -> str:
    """The record (labels only) and the numbered transcript, as the model reads them."""
    lines = ["The patient's current record (context only; it is not a source of memories):"]
    shown = [f for kind in _FACT_KINDS for f in facts if f.kind is kind][:_MAX_FACTS]
    seen: set[str] = set()
    for fact in shown:
        status = f" ({fact.status})" if fact.status else ""
        line = f"- {fact.kind.value}: {fact.label}{status}"
        if line not in seen:
            seen.add(line)
            lines.append(line)
    if not seen:
        lines.append("- (nothing recorded)")
    lines += ["", "The conversation, one numbered message each:"]
    for n, message in enumerate(messages, start=1):
        text = message.text.replace("\n", "\n    ")
        lines.append(f"[{n}] {message.role.value}: {text}")
    return "\n".join(lines)
