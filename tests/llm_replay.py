"""A loopback OpenAI-compatible endpoint that replays recorded chat-model answers.

Fixtures (tests/data/llm_recorded*/*.json, made by tools/llm_fixtures.py) name the request
they answer by the SHA-256 of its messages; a request that no fixture answers gets 404,
so a changed prompt fails the tests instead of replaying an answer to another prompt.
Usage is reported as an estimate (4 characters a token): the recordings carry no counts.
"""

import hashlib
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

RECORDED = Path(__file__).parent / "data" / "llm_recorded"
# A second recording of the same prompts, answered again from the prompt alone: how far
# two recordings of one model differ.
RECORDED_AGAIN = RECORDED.with_name("llm_recorded_again")


def request_digest(messages: list[dict[str, Any]]) -> str:
    """The SHA-256 that names a chat request by its messages."""
    canonical = json.dumps(messages, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def recorded(root: Path = RECORDED) -> dict[str, dict[str, Any]]:
    """The fixtures by case name."""
    return {p.stem: json.loads(p.read_text("utf-8")) for p in sorted(root.glob("*.json"))}


def _estimate(text: str) -> int:
    return max(1, len(text) // 4)


class _Handler(BaseHTTPRequestHandler):
    answers: dict[str, str] = {}
    served: list[str] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
        digest = request_digest(body.get("messages", []))
        answer = self.answers.get(digest)
        if self.path != "/v1/chat/completions" or answer is None:
            self._send(404, {"error": {"message": f"no recorded answer for request {digest}"}})
            return
        self.served.append(digest)
        prompt = "".join(str(m.get("content", "")) for m in body["messages"])
        self._send(
            200,
            {
                "object": "chat.completion",
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": answer},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {
                    "prompt_tokens": _estimate(prompt),
                    "completion_tokens": _estimate(answer),
                },
            },
        )

    def _send(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass


@contextmanager
def replaying(fixtures: dict[str, dict[str, Any]]) -> Iterator[tuple[str, list[str]]]:
    """Serves the fixtures on 127.0.0.1; yields the base URL and the digests served."""
    served: list[str] = []
    answers = {f["request_sha256"]: f["answer"] for f in fixtures.values()}
    handler = type("Replay", (_Handler,), {"answers": answers, "served": served})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", served
    finally:
        server.shutdown()
        server.server_close()
