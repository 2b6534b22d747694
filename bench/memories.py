"""generate-memories latency on ACI-Bench transcripts, and resident memory.

Each of the 20 ACI-Bench validation dialogues (about 1,200 words) becomes a session of a
patient whose record is a real Synthea bundle; generate-memories is timed per session,
after one warm-up that loads the NLP pipeline. Baseline, in the same run: tokenising the
same transcripts with a blank spaCy pipeline (the least any NLP over them costs).

    python -m bench.memories [--repeat 3]
"""

import argparse
import csv
import re
import resource
import statistics
import time
from pathlib import Path

import spacy

from bench.stats import percentile
from engine.memories.offline import warm_up
from engine.memories.service import generate_memories
from engine.models import NewMessage, Role, Scope, Session
from engine.store import open_store
from ingest.pipeline import ingest_paths

DATA = Path(__file__).parent.parent / "tests" / "data" / "corpus"
DIALOGUES = DATA / "dialogues" / "aci-bench" / "valid.csv"
RECORD = sorted((DATA / "fhir" / "synthea-r4-bundles").glob("Max_*.json"))[0]
TURN = re.compile(r"^\[(\w+)\]\s*(.*)$")
ROLES = {"doctor": Role.PROVIDER, "patient": Role.PATIENT}


def transcripts() -> list[list[NewMessage]]:
    with DIALOGUES.open(encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    result = []
    for row in rows:
        turns = [TURN.match(line.strip()) for line in row["dialogue"].splitlines()]
        result.append(
            [
                NewMessage(role=ROLES.get(m[1], Role.CAREGIVER), text=m[2])
                for m in turns
                if m and m[2].strip()
            ]
        )
    return result


def rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    sessions = transcripts()
    rss_before = rss_mib()
    warm_up()
    rss_loaded = rss_mib()

    store = open_store("sqlite:///:memory:")
    report = ingest_paths(store, "bench", [RECORD], workers=1)
    (patient,) = report.patients
    scope = Scope(org="bench", patient=patient)
    latencies, memories = [], 0
    for round_ in range(args.repeat):
        for i, messages in enumerate(sessions):
            session_id = f"r{round_}-s{i}"
            store.create_session(scope, Session(session_id=session_id))
            store.append_messages(scope, session_id, messages)
            started = time.perf_counter()
            result = generate_memories(store, scope, session_id)
            latencies.append(time.perf_counter() - started)
            memories += len(result.memories)

    nlp = spacy.blank("en")
    baseline = []
    for _ in range(args.repeat):
        for messages in sessions:
            started = time.perf_counter()
            for message in messages:
                nlp(message.text)
            baseline.append(time.perf_counter() - started)

    words = statistics.mean(sum(len(m.text.split()) for m in s) for s in sessions)
    p50, p95 = percentile(latencies, 0.5), percentile(latencies, 0.95)
    b50, b95 = percentile(baseline, 0.5), percentile(baseline, 0.95)
    print(f"{len(sessions)} ACI-Bench transcripts (mean {words:.0f} words) × {args.repeat}")
    print(f"{'run':32} {'p50 ms':>8} {'p95 ms':>8} {'× baseline p50':>15}")
    print(f"{'tokenise only (baseline)':32} {b50 * 1000:8.1f} {b95 * 1000:8.1f} {1:15.1f}")
    print(f"{'generate-memories':32} {p50 * 1000:8.1f} {p95 * 1000:8.1f} {p50 / b50:15.1f}")
    print(f"memories per transcript: {memories / len(latencies):.1f}")
    print(f"resident memory: {rss_before:.0f} MiB before, {rss_loaded:.0f} MiB with the NLP loaded")


if __name__ == "__main__":
    main()
