"""A fake OpenAI-compatible endpoint on 127.0.0.1 for the LLM extractor's tests, and
its fixtures (`fake`, `waits`, `llm`, made available to every unit test by conftest)."""

import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from pydantic import SecretStr

from engine.memories.llm import LlmExtractor


@dataclass
class Reply:
    status: int = 200
    body: Any = None  # a dict is sent as JSON, a str as it is
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0


def chat(content: str, prompt: int = 120, completion: int = 30, finish: str = "stop") -> Reply:
    """A chat completion whose message content is `content`."""
    body = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": finish,
            }
        ],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        },
    }
    return Reply(body=body)


class FakeLLM:
    """Scripted replies (the last one repeats) and every request received."""

    def __init__(self) -> None:
        self.replies: list[Reply] = []
        self.requests: list[tuple[str, dict[str, str], Any]] = []
        self.base_url = ""

    def bodies(self) -> list[Any]:
        return [body for _, _, body in self.requests]


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    fake: FakeLLM


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def do_POST(self) -> None:
        fake = self.server.fake
        raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        fake.requests.append((self.path, dict(self.headers.items()), json.loads(raw)))
        reply = fake.replies.pop(0) if len(fake.replies) > 1 else fake.replies[0]
        time.sleep(reply.delay)
        payload = reply.body if isinstance(reply.body, str) else json.dumps(reply.body)
        try:
            self.send_response(reply.status)
            for name, value in {"Content-Type": "application/json", **reply.headers}.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(payload.encode())
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (timeout tests)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeLLM]:
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.delenv(var, raising=False)
    server = _Server(("127.0.0.1", 0), _Handler)
    server.fake = FakeLLM()
    server.fake.base_url = f"http://127.0.0.1:{server.server_address[1]}/v1/"
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield server.fake
    server.shutdown()
    server.server_close()
    thread.join()


@pytest.fixture
def waits() -> list[float]:
    return []


@pytest.fixture
def llm(fake: FakeLLM, waits: list[float]) -> Iterator[LlmExtractor]:
    with LlmExtractor(
        fake.base_url, "test-model", SecretStr("sk-test"), max_retries=2, sleep=waits.append
    ) as extractor:
        yield extractor
