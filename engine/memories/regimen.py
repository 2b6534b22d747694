"""What the patient says about dose and frequency, against what the order says.

GUIDELINE §3: "a dose or frequency different from the record's" conflicts. Only explicit
amounts count ("5 milligrams", "twice a day", "once a week", "every 8 hours"): "every
day" or "every morning" says the patient is regular, not how often the order is.
"""

import re

from text_to_num import alpha2digit

from engine.models import Fact, Memory

# Spoken amounts become digits first (text2num: "eight hundred milligrams" → "800
# milligrams", "three times a day" → "3 times a day").
# Not a concentration: "265 milligrams per deciliter" is a lab value.
_DOSE = re.compile(
    r"\b(\d+(?:\.\d+)?)\s*(?:mg|milligrams?|m g|mcg|micrograms?|units?)\b"
    r"(?!\s*(?:per|/|an?)\s*(?:deciliters?|dl|liters?|l|milliliters?|ml|kilograms?|kg)\b)"
)
_COUNT = {"once": 1.0, "twice": 2.0, "1 time": 1.0, "2 times": 2.0, "3 times": 3.0, "4 times": 4.0}
_PERIOD = {"day": 1.0, "daily": 1.0, "night": 1.0, "week": 7.0, "weekly": 7.0, "month": 30.0}
_TIMES = re.compile(
    r"\b(once|twice|1 time|[234] times)\s*"
    r"(?:a|per|each|every)?\s*(day|daily|night|week|weekly|month)\b"
)
_HOURS = re.compile(r"\bevery (\d+)(?:\s*(?:to|-)\s*\d+)? hours\b")
# "i take one metformin a day", "just 1 a day": one dose a day
_ONE_A_DAY = re.compile(r"\b1 (?:[a-z]+ ){0,2}?(?:a|per|each) day\b")
_TWO_MEALS = re.compile(
    r"\b(?:breakfast and (?:with )?(?:my )?(?:dinner|supper)|morning and (?:at )?night"
    r"|morning and (?:in the )?evening)\b"
)
_ORDER_DAILY = re.compile(r"\b(daily|once a day|every day|at bedtime|every morning)\b")
_REGULAR = re.compile(r"\b(regularly|every night|every evening|each day|everyday)\b")
_AS_NEEDED = re.compile(r"as needed|\bprn\b|when needed|if needed")
# What a patient says when the as-needed use is exactly the order, adding nothing.
PLAIN_AS_NEEDED = frozenset({"as needed", "when needed", "if needed", "prn", "as necessary"})


def frequencies(text: str) -> set[float]:
    """Doses per day of each explicit frequency the text states ("twice a day" → 2,
    "weekly" → 1/7); a speaker correcting themselves ("once a day, no, twice a day")
    states two."""
    text = _digits(text)
    found = {_COUNT[count] / _PERIOD[period] for count, period in _TIMES.findall(text)}
    found |= {24 / int(hours) for hours in _HOURS.findall(text)}
    if _TWO_MEALS.search(text):
        found.add(2.0)
    if re.search(r"\b(weekly|once a week|every week)\b", text):
        found.add(1 / 7)
    if _ONE_A_DAY.search(text):
        found.add(1.0)
    if "every other day" in text:
        found.add(0.5)
    return found


def on_schedule(text: str) -> bool:
    """The words say the drug is taken on a schedule ("daily", "twice a day", "every
    morning", "regularly")."""
    lower = text.lower()
    return bool(frequencies(lower) or _ORDER_DAILY.search(lower) or _REGULAR.search(lower))


def order_text(fact: Fact) -> str:
    """The order's dose instructions and label, lower case."""
    return (" ".join(str(v) for v in fact.fields.values()) + " " + fact.label).lower()


def as_needed_order(fact: Fact) -> bool:
    """The order is PRN."""
    return bool(_AS_NEEDED.search(order_text(fact)))


def patient_words(memory: Memory) -> list[str]:
    """The memory's quotes that are statements (a provider's question carries the order's
    dose, not the patient's)."""
    return [e.quote.lower() for e in memory.evidence if not e.quote.rstrip().endswith("?")]


def dose_amounts(text: str) -> set[float]:
    """The strengths a text names ("ten milligrams", "20 mg")."""
    return {float(m) for m in _DOSE.findall(_digits(text))}


def dose_differs(memory: Memory, fact: Fact) -> bool:
    """The patient names a strength and the order another."""
    said = {a for q in patient_words(memory) for a in dose_amounts(q)}
    recorded = dose_amounts(order_text(fact))
    return bool(said and recorded and not said & recorded)


def frequency_differs(memory: Memory, fact: Fact) -> bool:
    """The patient says how often, explicitly, and the scheduled order says otherwise."""
    if as_needed_order(fact):
        return False
    said = {f for q in patient_words(memory) for f in frequencies(q)}
    order = order_text(fact)
    recorded = frequencies(order) or ({1.0} if _ORDER_DAILY.search(order) else set())
    return bool(said and recorded) and not any(abs(f - r) < 1e-6 for f in said for r in recorded)


def _digits(text: str) -> str:
    """Lower case, every spelled-out number in digits."""
    digits: str = alpha2digit(text.lower(), "en", threshold=0)
    return digits
