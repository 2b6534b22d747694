"""How far two independent annotations of the same conversations agree: a ceiling for
what any extractor can score against one of them.

    python tools/annotator_agreement.py tests/data/eval-fresh/a tests/data/eval-fresh/b
        [--case NAME ...]

The second annotation's memories and edges are scored as predictions against the first,
with the scorer `cce eval` uses (`engine.evaluation.score_case`), over the cases both
folders hold. Each annotator also wrote the case's record, so an edge can only agree when
both records hold its fact: the relationship figures are given over every edge and over
the edges to facts both records hold. Only sums are printed, never a case's content, so
held-out cases stay unread.
"""

import argparse
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from api.evaluate import case_dirs  # noqa: E402
from engine.evaluation import (  # noqa: E402
    Gold,
    PredictedMemory,
    PredictedQuote,
    PredictedRelationship,
    Scores,
    locate,
    score_case,
)


def as_predictions(
    gold: Gold, turns: list[str]
) -> tuple[list[PredictedMemory], list[PredictedRelationship]]:
    """An annotation as an extractor's output: each quote located in the turns."""
    memories = [
        PredictedMemory(
            id=m.id,
            type=m.type,
            subject=m.subject,
            evidence=[
                PredictedQuote(turn=t, start=s, end=e) for t, s, e in locate(m.evidence, turns)
            ],
        )
        for m in gold.memories
    ]
    edges = [
        PredictedRelationship(memory_id=e.memory, type=e.type, fact_resources=[e.fact])
        for e in gold.edges
    ]
    return memories, edges


def record_resources(record: Path) -> set[str]:
    """The "Type/id" of every resource of a case's record bundle."""
    bundle: dict[str, Any] = json.loads(record.read_text("utf-8"))
    resources = (entry["resource"] for entry in bundle.get("entry", []))
    return {f"{r['resourceType']}/{r['id']}" for r in resources if "id" in r}


def agreement(first: Path, second: Path, names: set[str] | None) -> tuple[Scores, Scores]:
    """The second annotation scored against the first: over every edge, and over the
    edges to facts both records hold."""
    every, shared = Scores(), Scores()
    for case in case_dirs(first):
        other = second / case.name
        if (names and case.name not in names) or not (other / "gold.json").exists():
            continue
        transcript = json.loads((case / "transcript.json").read_text("utf-8"))
        turns = [t["text"] for t in transcript["turns"]]
        gold = Gold.model_validate_json((case / "gold.json").read_text("utf-8"))
        theirs = Gold.model_validate_json((other / "gold.json").read_text("utf-8"))
        every += score_case(turns, gold, *as_predictions(theirs, turns))
        both = record_resources(case / "record.json") & record_resources(other / "record.json")
        gold.edges = [e for e in gold.edges if e.fact in both]
        theirs.edges = [e for e in theirs.edges if e.fact in both]
        shared += score_case(turns, gold, *as_predictions(theirs, turns))
    return every, shared


def main() -> None:
    parser = argparse.ArgumentParser(prog="tools/annotator_agreement.py", description=__doc__)
    parser.add_argument("first", type=Path)
    parser.add_argument("second", type=Path)
    parser.add_argument("--case", action="append", default=[], help="only these cases")
    args = parser.parse_args()
    every, shared = agreement(args.first, args.second, set(args.case))
    lines = [f"memory F1 {every.overall.f1:.3f}"]
    for name, scores in (("every edge", every), ("edges to facts in both records", shared)):
        rel = scores.relationships
        lines.append(
            f"relationship F1, {name}: {rel.f1:.3f} (tp {rel.tp}, fp {rel.fp}, fn {rel.fn});"
            f" conflicts of the first also conflicts in the second:"
            f" {scores.conflicts_found} of {scores.conflicts_total}"
        )
    sys.stdout.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
