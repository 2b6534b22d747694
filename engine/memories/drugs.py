"""Drug mentions → generic names, with the `drug-named-entity-recognition` dictionary.

The package ships DrugBank/MeSH/NHS names and brand synonyms in its wheel and looks them
up offline; loading it takes a few seconds, so it happens once per process on first use.
"""

import re
from collections.abc import Callable, Sequence
from functools import cache, lru_cache
from typing import Any

FindDrugs = Callable[[Sequence[str]], list[tuple[dict[str, Any], int, int]]]

_WORD = re.compile(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)*")
# Words the dictionary knows as drugs (or drug synonyms) that people say for other things.
_NOT_DRUGS = frozenset(
    {
        "today",
        "pressure",
        "blood",
        "sugar",
        "water",
        "iron",
        "sun",
        "ice",
        "air",
        "oxygen",
        "alcohol",
        "coffee",
        "caffeine",
        "salt",
        "juice",
        "cream",
        "gel",
        "test",
        "ready",
        "ct",
        "mri",
        "spray",
        "patch",
        "soda",
        "vitamin",
        "vitamins",
        "protein",
        "proteins",
        "fish",
        "egg",
        "sodium",
        "potassium",
        "calcium",
        "magnesium",
        "zinc",
    }
)


@cache
def _finder() -> FindDrugs:
    from drug_named_entity_recognition import find_drugs  # type: ignore[import-untyped]

    finder: FindDrugs = find_drugs
    return finder


# MeSH preparations the dictionary lists among drugs: how a drug is given, not which.
_DOSAGE_FORMS = frozenset(
    {"nasal sprays", "ophthalmic solutions", "aerosols", "ointments", "solutions", "tablets"}
)
# Forms people name alike: "vitamin D" is D2 (ergocalciferol) or D3 (cholecalciferol).
_SAME_AS = {"ergocalciferol": "vitamin d", "cholecalciferol": "vitamin d"}


def ingredients(name: str) -> frozenset[str]:
    """The single ingredients of a generic name: "fluticasone and salmeterol" → both."""
    parts = [p.strip() for p in re.split(r"\s*(?:/|\+|\band\b|,)\s*", name.lower())]
    found = {p for p in parts if p}
    return frozenset(found | {_SAME_AS[p] for p in found if p in _SAME_AS})


def find_in_tokens(tokens: Sequence[str]) -> list[tuple[int, int, str]]:
    """(first token, last token + 1, generic name) of each drug among lower-case tokens."""
    if not tokens:
        return []
    found: list[tuple[int, int, str]] = []
    for data, start, end in _finder()(list(tokens)):
        matched = str(data.get("matching_string", "")).lower()
        if matched in _NOT_DRUGS or len(matched) < 4:
            continue
        name = str(data.get("name") or matched).lower()
        if name in _DOSAGE_FORMS:
            continue
        found.append((start, end, _SAME_AS.get(name, name)))
    return sorted(found)


@lru_cache(maxsize=4096)
def generic_names(text: str) -> frozenset[str]:
    """Generic names of the drugs a medication label mentions ("Norvasc 10 mg" → amlodipine)."""
    return frozenset(name for _, _, name in find_in_tokens(_WORD.findall(text.lower())))
