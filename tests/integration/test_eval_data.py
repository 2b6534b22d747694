"""The annotated cases are what GUIDELINE §1-3 says they are: a valid FHIR record, every
evidence quote verbatim in a turn, every edge naming a memory and a record resource."""

import json
from pathlib import Path

import pytest
from fhir.resources.R4B.bundle import Bundle

from api.evaluate import case_dirs

DATA = Path(__file__).parents[1] / "data"
ROOTS = [DATA / "eval", *sorted(p for p in (DATA / "eval-fresh").iterdir() if p.is_dir())]
CASES = [case for root in ROOTS if root.name != "llm_recorded" for case in case_dirs(root)]
TYPES = {"symptom", "adherence", "concern", "preference"}
EDGES = {"conflicts", "corroborates", "enriches"}


def test_every_annotated_set_is_found() -> None:
    assert {c.parent.name for c in CASES} == {"eval", "a", "b", "c", "d", "e", "f", "g", "h"}
    assert len(CASES) == 32 + 16 + 16 + 13 + 16 + 16 + 16 + 16 + 16


@pytest.mark.parametrize("case", CASES, ids=[f"{c.parent.name}/{c.name}" for c in CASES])
def test_a_case_is_well_formed(case: Path) -> None:
    record = json.loads((case / "record.json").read_text("utf-8"))
    assert Bundle.model_validate(record).type == "collection"
    resources = {f"{e['resource']['resourceType']}/{e['resource']['id']}" for e in record["entry"]}
    transcript = json.loads((case / "transcript.json").read_text("utf-8"))
    turns = [t["text"].lower() for t in transcript["turns"]]
    gold = json.loads((case / "gold.json").read_text("utf-8"))
    memories = {m["id"]: m for m in gold["memories"]}
    for memory in memories.values():
        assert memory["type"] in TYPES
        for quote in memory["evidence"]:
            assert any(quote.lower() in turn for turn in turns), (memory["id"], quote)
    for edge in gold["edges"]:
        assert edge["memory"] in memories and edge["fact"] in resources and edge["type"] in EDGES
