"""Recorded chat-model answers for the LLM extractor's end-to-end tests.

    python tools/llm_fixtures.py prompts CASES_DIR OUT_DIR
        writes, per case, the exact chat request the extractor builds (`<case>.request.json`)
        and the same as plain text for whoever answers it (`<case>.prompt.txt`)
    python tools/llm_fixtures.py pack OUT_DIR FIXTURE_DIR --recorded-by TEXT
        packs each `<case>.answer.txt` beside its request into `FIXTURE_DIR/<case>.json`

The answer must be the model's raw text, unedited. A fixture names its request by the
SHA-256 of the request's messages, so the replaying endpoint (tests/llm_replay.py) answers
only the prompt that was recorded: a prompt change makes the tests fail until the cases
are recorded again. Answers come from whoever stands in for the model, given the
`.prompt.txt` alone (never the gold or this repository).
"""

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from api.evaluate import case_dirs, run_case  # noqa: E402
from engine.memories.llm import LlmExtractor  # noqa: E402
from engine.memories.llm_prompt import PROMPT_VERSION  # noqa: E402
from tests.llm_replay import request_digest  # noqa: E402


def capture(case: Path) -> list[dict[str, Any]]:
    """The chat requests the LLM extractor sends for one case (answered with no memories)."""
    sent: list[dict[str, Any]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        sent.append(json.loads(request.content))
        content = json.dumps({"memories": []})
        return httpx.Response(200, json={"choices": [{"message": {"content": content}}]})

    client = httpx.Client(transport=httpx.MockTransport(handler))
    run_case(case, LlmExtractor("http://recorder.invalid/v1", "recorder", client=client))
    return sent


def prompts(cases: Path, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for case in case_dirs(cases):
        [body] = capture(case)
        (out / f"{case.name}.request.json").write_text(json.dumps(body, indent=1), "utf-8")
        system, user = (m["content"] for m in body["messages"])
        text = f"=== SYSTEM ===\n{system}\n\n=== USER ===\n{user}\n"
        (out / f"{case.name}.prompt.txt").write_text(text, "utf-8")


def pack(out: Path, fixtures: Path, recorded_by: str) -> None:
    fixtures.mkdir(parents=True, exist_ok=True)
    for answer in sorted(out.glob("*.answer.txt")):
        case = answer.name.removesuffix(".answer.txt")
        body = json.loads((out / f"{case}.request.json").read_text("utf-8"))
        fixture = {
            "case": case,
            "prompt_version": PROMPT_VERSION,
            "recorded_by": recorded_by,
            "note": "recorded model answer to exactly this request; never edited by hand",
            "request_sha256": request_digest(body["messages"]),
            "answer": answer.read_text("utf-8"),
        }
        (fixtures / f"{case}.json").write_text(json.dumps(fixture, indent=1) + "\n", "utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(prog="tools/llm_fixtures.py")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("prompts")
    p.add_argument("cases", type=Path)
    p.add_argument("out", type=Path)
    k = sub.add_parser("pack")
    k.add_argument("out", type=Path)
    k.add_argument("fixtures", type=Path)
    k.add_argument("--recorded-by", required=True)
    args = parser.parse_args()
    if args.command == "prompts":
        prompts(args.cases, args.out)
    else:
        pack(args.out, args.fixtures, args.recorded_by)


if __name__ == "__main__":
    main()
