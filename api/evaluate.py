"""`cce eval DIR`: runs generate-memories on every case folder and scores it (GUIDELINE §4).

Each case gets a fresh SQLite store in a temporary directory: `record.json` goes through
the ingest pipeline, the transcript's turns become one session's messages, and
generate-memories runs once. The report sums counts over the cases (micro averages).
"""

import hashlib
import json
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel, Field

from engine.evaluation import (
    PRF,
    TYPES,
    Gold,
    PredictedMemory,
    PredictedQuote,
    PredictedRelationship,
    Scores,
    score_case,
)
from engine.memories.extractor import Extractor, Usage
from engine.memories.offline import warm_up
from engine.memories.service import generate_memories
from engine.models import NewMessage, Role, Scope, Session
from engine.sqlite_store import SqliteStore
from engine.store import GraphStore
from ingest.pipeline import Ingestor, read_bytes

ORG = "eval"
PATIENT = "patient"
SESSION = "transcript"


class Rates(BaseModel):
    tp: int
    fp: int
    fn: int
    precision: float
    recall: float
    f1: float

    @classmethod
    def of(cls, prf: PRF) -> "Rates":
        return cls(
            tp=prf.tp,
            fp=prf.fp,
            fn=prf.fn,
            precision=round(prf.precision, 4),
            recall=round(prf.recall, 4),
            f1=round(prf.f1, 4),
        )


class ScoreReport(BaseModel):
    memories: dict[str, Rates]
    memories_overall: Rates
    relationships: Rates
    conflicts_recall: float
    conflicts_found: int
    conflicts_total: int

    @classmethod
    def of(cls, scores: Scores) -> "ScoreReport":
        return cls(
            memories={t: Rates.of(scores.memories[t]) for t in TYPES},
            memories_overall=Rates.of(scores.overall),
            relationships=Rates.of(scores.relationships),
            conflicts_recall=round(scores.conflicts_recall, 4),
            conflicts_found=scores.conflicts_found,
            conflicts_total=scores.conflicts_total,
        )


class CaseReport(BaseModel):
    case: str
    scores: ScoreReport
    seconds: float
    ingest_errors: int = 0
    usage: Usage = Usage()


class EvalReport(BaseModel):
    extractor: str
    cases: list[CaseReport] = Field(default_factory=list)
    overall: ScoreReport
    mean_seconds: float
    max_seconds: float
    usage: Usage = Usage()


def case_dirs(root: Path) -> list[Path]:
    """The case folders under `root` (those holding transcript, record and gold)."""
    return sorted(
        p
        for p in root.iterdir()
        if p.is_dir()
        and all((p / f).exists() for f in ("transcript.json", "record.json", "gold.json"))
    )


def run_case(
    case: Path, extractor: Extractor | None = None, store: GraphStore | None = None
) -> tuple[Scores, CaseReport]:
    """Scores one case folder: the counts, and the case's report.

    Without `store`, the case runs in a fresh SQLite store in a temporary directory;
    with one, in a fresh org of it named after the case and a random suffix.
    """
    if store is not None:
        scope = Scope(org=f"{ORG}-{uuid.uuid4().hex[:12]}", patient=PATIENT)
        return run_in_store(case, extractor, store, scope)
    with tempfile.TemporaryDirectory() as tmp:
        own = SqliteStore(str(Path(tmp) / "eval.db"))
        try:
            return run_in_store(case, extractor, own, Scope(org=ORG, patient=PATIENT))
        finally:
            own.close()


def run_in_store(
    case: Path, extractor: Extractor | None, store: GraphStore, scope: Scope
) -> tuple[Scores, CaseReport]:
    """Scores one case in `scope` of `store` (a scope that holds nothing yet)."""
    transcript = json.loads((case / "transcript.json").read_text("utf-8"))
    gold = Gold.model_validate_json((case / "gold.json").read_text("utf-8"))
    turns = [t["text"] for t in transcript["turns"]]
    ingestor = Ingestor(store, scope.org, patient=scope.patient)
    ingestor.feed("record.json", read_bytes((case / "record.json").read_bytes(), "record.json"))
    store.create_session(scope, Session(session_id=SESSION))
    messages = store.append_messages(
        scope,
        SESSION,
        [NewMessage(role=Role(t["role"]), text=t["text"]) for t in transcript["turns"]],
    )
    turn_of = {m.message_id: i for i, m in enumerate(messages)}
    started = time.perf_counter()
    result = generate_memories(store, scope, SESSION, extractor)
    seconds = time.perf_counter() - started
    sources = {
        f.fact_key: [f"{s.resource_type}/{s.resource_id}" for s in f.sources]
        for f in store.list_facts(scope)
    }
    predicted = [
        PredictedMemory(
            id=m.memory_id,
            type=m.type.value,
            subject=m.subject,
            evidence=[
                PredictedQuote(turn=turn_of[e.message_id], start=e.start, end=e.end)
                for e in m.evidence
            ],
        )
        for m in result.memories
    ]
    relationships = [
        PredictedRelationship(
            memory_id=r.memory_id, type=r.type.value, fact_resources=sources.get(r.fact_key, [])
        )
        for r in result.relationships
    ]
    scores = score_case(turns, gold, predicted, relationships)
    report = CaseReport(
        case=case.name,
        scores=ScoreReport.of(scores),
        seconds=round(seconds, 4),
        ingest_errors=len(ingestor.report.errors),
        usage=result.usage,
    )
    return scores, report


def evaluate_dir(
    root: Path,
    extractor: Extractor | None = None,
    only: set[str] | None = None,
    progress: Callable[[str], None] | None = None,
) -> EvalReport:
    """Runs and scores every case folder under `root` (or only the named ones).

    `progress` is called with each case's name once it is scored.
    """
    warm_up()  # so that per-case seconds measure extraction, not loading
    total = Scores()
    reports = []
    for case in case_dirs(root):
        if only is not None and case.name not in only:
            continue
        scores, report = run_case(case, extractor)
        total = total + scores
        reports.append(report)
        if progress is not None:
            progress(case.name)
    times = [r.seconds for r in reports] or [0.0]
    return EvalReport(
        extractor=f"{extractor.name} {extractor.version}" if extractor else "offline-context",
        cases=reports,
        overall=ScoreReport.of(total),
        mean_seconds=round(sum(times) / len(times), 4),
        max_seconds=max(times),
        usage=sum((r.usage for r in reports), Usage()),
    )


def render(report: EvalReport) -> str:
    """A plain-text table of the overall scores."""
    o = report.overall
    lines = [f"{'':14} {'P':>6} {'R':>6} {'F1':>6}  tp/fp/fn"]
    rows = [(t, o.memories[t]) for t in TYPES] + [
        ("memories", o.memories_overall),
        ("relationships", o.relationships),
    ]
    for name, r in rows:
        lines.append(
            f"{name:14} {r.precision:6.3f} {r.recall:6.3f} {r.f1:6.3f}  {r.tp}/{r.fp}/{r.fn}"
        )
    lines.append(
        f"conflicts recall {o.conflicts_recall:.3f} ({o.conflicts_found}/{o.conflicts_total})"
    )
    lines.append(
        f"generate-memories seconds: mean {report.mean_seconds:.3f}, "
        f"max {report.max_seconds:.3f} over {len(report.cases)} cases ({report.extractor})"
    )
    if report.usage.calls:
        u, n = report.usage, len(report.cases)
        lines.append(
            f"tokens: {u.prompt_tokens} prompt + {u.completion_tokens} completion in {u.calls}"
            f" calls ({(u.prompt_tokens + u.completion_tokens) / n:.0f} per case)"
        )
    return "\n".join(lines)


def held_out(names: list[str]) -> set[str]:
    """The third of the cases set aside while developing (issue 9), fixed by a hash of
    each name so that it does not follow name order or corpus."""
    ranked = sorted(names, key=lambda n: hashlib.sha256(n.encode()).hexdigest())
    return set(ranked[: -(-len(names) // 3)])


def main(argv: list[str]) -> str:
    """`python -m api.evaluate DIR [--split dev|held-out]`: the table for all or a part."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m api.evaluate")
    parser.add_argument("root", type=Path)
    parser.add_argument("--split", choices=["dev", "held-out"])
    args = parser.parse_args(argv)
    names = [p.name for p in case_dirs(args.root)]
    held = held_out(names)
    only = None
    if args.split:
        only = held if args.split == "held-out" else set(names) - held
    return render(evaluate_dir(args.root, only=only))


if __name__ == "__main__":
    import sys

    sys.stdout.write(main(sys.argv[1:]) + "\n")
