"""Drug mentions → generic names, with the `drug-named-entity-recognition` dictionary.

The package ships DrugBank/MeSH/NHS names and brand synonyms in its wheel and looks them
up offline; loading it takes a few seconds, so it happens once per process on first use.
"""

import re
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any

from engine.lifelong import lifelong

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


@lifelong
def finder() -> FindDrugs:
    """The dictionary's `find_drugs`, loaded on first use."""
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
    """The single ingredients of a generic name: "fluticasone and salmeterol" → both,
    each under its canonical name."""
    parts = [p.strip() for p in re.split(r"\s*(?:/|\+|\band\b|,)\s*", name.lower())]
    found = {canonical(p) for p in parts if p}
    return frozenset(found | {_SAME_AS[p] for p in found if p in _SAME_AS})


# Salt and ester words: "levothyroxine sodium" is levothyroxine.
_SALTS = frozenset(
    {
        "sodium",
        "potassium",
        "calcium",
        "magnesium",
        "hydrochloride",
        "hcl",
        "dihydrochloride",
        "succinate",
        "tartrate",
        "besylate",
        "maleate",
        "citrate",
        "sulfate",
        "sulphate",
        "phosphate",
        "acetate",
        "mesylate",
        "fumarate",
        "bromide",
        "chloride",
        "nitrate",
        "hyclate",
        "monohydrate",
        "trihydrate",
        "propionate",
    }
)


_CANONICAL: dict[str, str] = {}  # by dictionary entry name (lower case)


def canonical(name: str, entry: dict[str, Any] | None = None) -> str:
    """One name per drug across the dictionary's entries.

    The dictionary keeps some drugs under two entries: "Thyroxine" (MeSH, with brands
    such as Synthroid) and "Levothyroxine" (the US generic, with a MedlinePlus
    monograph). An entry without a MedlinePlus id whose synonyms, salts set aside, name
    an entry with one is that drug: "thyroxine" → "levothyroxine". `entry` is the
    dictionary entry named `name` when the caller has it ("thyroxine" is no key of the
    dictionary, only the name of the entry Synthroid finds); a name with no entry found
    is returned as is and not remembered, so that a later call with its entry decides.
    """
    if name in _CANONICAL:
        return _CANONICAL[name]
    entry = entry or _entry(name)
    if entry is None:
        return name
    _CANONICAL[name] = _generic_of(name, entry)
    return _CANONICAL[name]


def _generic_of(name: str, entry: dict[str, Any]) -> str:
    if entry.get("medline_plus_id"):
        return name
    for synonym in sorted(entry.get("synonyms") or ()):
        base = " ".join(w for w in _WORD.findall(str(synonym).lower()) if w not in _SALTS)
        other = _entry(base) if base and base != name else None
        if other is not None and other.get("medline_plus_id"):
            return str(other["name"]).lower()
    return name


def _entry(text: str) -> dict[str, Any] | None:
    """The dictionary entry that `text`, as a whole, names."""
    tokens = _WORD.findall(text)
    for data, start, end in finder()(tokens) if tokens else ():
        if (start, end) == (0, len(tokens)):
            return data
    return None


def find_in_tokens(tokens: Sequence[str]) -> list[tuple[int, int, str, bool]]:
    """(first token, last token + 1, generic name, whether it names a class) of each drug
    among lower-case tokens: "statin" is MeSH's "hydroxymethylglutaryl-coa reductase
    inhibitors", a pharmacologic action, not one drug."""
    if not tokens:
        return []
    found: list[tuple[int, int, str, bool]] = []
    for data, start, end in finder()(list(tokens)):
        matched = str(data.get("matching_string", "")).lower()
        if matched in _NOT_DRUGS or len(matched) < 4:
            continue
        name = str(data.get("name") or matched).lower()
        if name in _DOSAGE_FORMS:
            continue
        name = canonical(name, data)
        found.append((start, end, _SAME_AS.get(name, name), _pharmacologic_action(data)))
    return sorted(found)


# MeSH tree D27.505: Pharmacologic Actions ("Anti-Bacterial Agents"), where the
# dictionary's drug classes sit; a drug has a place among the chemicals as well
_ACTIONS = "D27.505"


def _pharmacologic_action(entry: dict[str, Any]) -> bool:
    trees = re.findall(r"[A-Z]\d{2}(?:\.\d{3})*", str(entry.get("mesh_tree") or ""))
    return bool(trees) and all(t.startswith(_ACTIONS) for t in trees)


@lru_cache(maxsize=4096)
def generic_names(text: str) -> frozenset[str]:
    """Generic names of the drugs a medication label mentions ("Norvasc 10 mg" → amlodipine)."""
    return frozenset(name for _, _, name, _ in find_in_tokens(_WORD.findall(text.lower())))
