"""Brand → generic drug names, from the `drug-named-entity-recognition` package.

The package ships its dictionary (DrugBank, MeSH, NHS and Wikipedia names and brand
synonyms) inside the wheel and looks names up offline. Importing it unpickles that
dictionary (about 2-3 s), so it is imported on first use only: medications coded in
RxNorm or NDC never need it.
"""

import gc
import re
from collections.abc import Callable, Sequence
from functools import cache, lru_cache
from typing import Any

_TOKEN = re.compile(r"[A-Za-z][A-Za-z0-9]*")

FindDrugs = Callable[[Sequence[str]], list[tuple[dict[str, Any], int, int]]]


@cache
def _finder() -> FindDrugs:
    from drug_named_entity_recognition import find_drugs  # type: ignore[import-untyped]

    # The dictionary is some 300,000 objects that live as long as the process: frozen, the
    # collector's full passes stop traversing them (they were a tenth of a bulk ingest).
    gc.freeze()
    finder: FindDrugs = find_drugs
    return finder


def preload() -> None:
    """Loads the dictionary now: processes forked afterwards share it instead of each
    loading its own."""
    _finder()


@lru_cache(maxsize=8192)
def generic_names(text: str) -> tuple[str, ...]:
    """The generic (canonical) names of the drugs that a medication text mentions.

    Exact matches only, on single words and word pairs, case-insensitive: fuzzy
    matching would turn misspelt non-drug words into drugs.

    Args:
        text: a medication name such as "Lipitor 20 mg oral tablet".

    Returns:
        Lower-case generic names, sorted and without duplicates ("atorvastatin",); empty
        when the text names no known drug.
    """
    tokens = _TOKEN.findall(text)
    if not tokens:
        return ()
    matches = _finder()(tokens)
    names = {str(data.get("name") or "").lower() for data, *_ in matches}
    return tuple(sorted(name for name in names if name))
