"""The match keys of a claim: every way it can meet another source's claim (see engine.matching).

- code: every coding in a system that identifies the kind ("snomed 239872002"),
  C-CDA translations included;
- ingredient: for a medication, its generic ingredients (brand names mapped to generics
  by `drug-named-entity-recognition`) with strength and dose form ("warfarin 5 mg
  tablet"); for an allergy, the generic substance ("penicillin g");
- text: the folded text of the label and of every coding's display
  ("osteoarthritis of hip").

Dated kinds (observations, procedures...) only meet on the same date, so their keys end
in " on <date>".
"""

import re
from functools import lru_cache

from engine.models import Coding, FactKind, MatchKey, MatchLayer
from ingest.drugs import generic_names
from ingest.keys import DATED, PREFERRED, folded_text, normalize_date

_STRENGTH = re.compile(
    r"(\d+(?:\.\d+)?)\s*(mg|mcg|µg|g|ml|unt|units?|iu|meq|%)(?:\s*/\s*(ml|hr|actuat|l))?\b",
    re.IGNORECASE,
)
_UNITS = {"unt": "unit", "units": "unit", "µg": "mcg"}
# Dose forms as RxNorm and vendors write them, each to one word.
_FORMS = {
    "tablet": "tablet",
    "tab": "tablet",
    "capsule": "capsule",
    "cap": "capsule",
    "solution": "solution",
    "suspension": "suspension",
    "injection": "injection",
    "injectable": "injection",
    "cream": "cream",
    "ointment": "ointment",
    "patch": "patch",
    "inhaler": "inhaler",
    "inhalant": "inhaler",
    "spray": "spray",
    "syrup": "syrup",
    "lozenge": "lozenge",
    "suppository": "suppository",
}
_WORD = re.compile(r"[a-z]+")


def match_keys(
    kind: FactKind, codes: tuple[Coding, ...], label: str, date: str | None = None
) -> tuple[MatchKey, ...]:
    """Every match key of a claim, strongest layer first, without duplicates.

    Args:
        kind: the fact kind; it decides which code systems count.
        codes: the claim's normalised codings, translations included.
        label: the claim's text.
        date: the date of a dated kind, normalised with the fact key's rule.

    Returns:
        Code keys, then ingredient keys, then text keys.
    """
    suffix = f" on {normalize_date(date) or 'undated'}" if kind in DATED else ""
    found = [
        (MatchLayer.CODE, f"{c.system} {c.code.lower()}")
        for c in codes
        if c.system in PREFERRED[kind]
    ]
    texts = [label, *(c.display for c in codes if c.display)]
    if kind is FactKind.MEDICATION:
        found.extend((MatchLayer.INGREDIENT, k) for t in texts if (k := product(t)))
    elif kind is FactKind.ALLERGY:
        found.extend(
            (MatchLayer.INGREDIENT, " / ".join(g)) for t in texts if (g := generic_names(t))
        )
    found.extend((MatchLayer.TEXT, folded_text(kind, t).replace("-", " ")) for t in texts)
    return tuple(
        MatchKey(layer=layer, key=key + suffix) for layer, key in dict.fromkeys(found) if key
    )


@lru_cache(maxsize=8192)
def product(text: str) -> str | None:
    """Generic ingredients, strengths and dose form of a medication text, or None.

    "Coumadin 5 MG Oral Tablet" → "warfarin 5 mg tablet". A text with no known drug or
    no strength has none: an ingredient alone does not say which product it is.
    """
    generics = generic_names(text)
    strengths = sorted(_strength(m) for m in _STRENGTH.finditer(text))
    if not generics or not strengths:
        return None
    form = next((_FORMS[w] for w in _WORD.findall(text.lower()) if w in _FORMS), None)
    parts = [" / ".join(generics), " / ".join(strengths), form]
    return " ".join(part for part in parts if part)


def _strength(match: re.Match[str]) -> str:
    number, unit, per = match.groups()
    value = number.rstrip("0").rstrip(".") if "." in number else number
    unit = _UNITS.get(unit.lower(), unit.lower())
    return f"{value} {unit}/{per.lower()}" if per else f"{value} {unit}"
