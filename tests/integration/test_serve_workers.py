"""`cce serve --workers 2` on Neo4j: both worker processes answer, and a viewer form one
of them served is accepted by the other (the CSRF key `cce serve` makes for all workers).

Which worker takes a connection is the kernel's choice, so the test chooses for it: the
workers share one listening socket, and while one is stopped (SIGSTOP) the other accepts
every connection. Each stop lasts well under uvicorn's 5 s worker health check.
"""

import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from engine.models import Scope
from engine.store import GraphStore
from tests.integration._security import add_conversation, client, fhir_bundle, settings_for

pytestmark = [pytest.mark.neo4j, pytest.mark.slow]
FORM = "/patients/p1/vfs/memory/adherence.md"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _workers(pid: int) -> list[int]:
    """The supervisor's worker processes (not multiprocessing's resource tracker)."""
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    return [
        int(child)
        for child in children
        if b"resource_tracker" not in Path(f"/proc/{child}/cmdline").read_bytes()
    ]


@pytest.fixture
def server(neo4j_store: GraphStore, neo4j_uri: str, org: str) -> Iterator[tuple[str, list[int]]]:
    scope = Scope(org=org, patient="p1")
    api = client(neo4j_store, settings_for(org=org))
    fhir = {"content-type": "application/fhir+json"}
    ingested = api.post("/v1/patients/p1/ingest/fhir", content=fhir_bundle("w"), headers=fhir)
    assert ingested.is_success
    add_conversation(neo4j_store, scope, "w")
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if k != "CCE_VIEWER_SECRET"} | {"CCE_ORG": org}
    command = [sys.executable, "-m", "api.cli", "serve", "--port", str(port)]
    process = subprocess.Popen(
        [*command, "--store", neo4j_uri, "--workers", "2"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        yield base, _ready(base, process)
    finally:
        process.terminate()
        process.wait(timeout=60)


def _ready(base: str, process: subprocess.Popen[bytes]) -> list[int]:
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        assert process.poll() is None, "cce serve exited"
        try:
            ready = httpx.get(f"{base}/health/ready", timeout=5).status_code == 200
        except httpx.TransportError:
            ready = False
        workers = _workers(process.pid)
        if ready and len(workers) == 2:
            return workers
        time.sleep(0.5)
    raise AssertionError("cce serve --workers 2 was not ready within 90 s")


def _only(worker: int, others: list[int]) -> None:
    """Lets `worker` run and stops every other one."""
    os.kill(worker, signal.SIGCONT)
    for other in others:
        if other != worker:
            os.kill(other, signal.SIGSTOP)


def test_both_workers_answer_and_accept_each_others_forms(
    server: tuple[str, list[int]],
) -> None:
    base, (first, second) = server
    close = {"Connection": "close"}
    try:
        _only(first, [first, second])
        with httpx.Client(base_url=base, headers=close, timeout=10) as browser:
            page = browser.get(FORM)
            story = browser.get("/v1/patients/p1/vfs/patient.md")
            _only(second, [first, second])
            token = re.search(r'name="csrf" value="([^"]+)"', page.text)
            assert page.status_code == 200 and token is not None
            posted = browser.post(
                "/patients/p1/memories/m1/reviews",
                data={"action": "confirm", "csrf": token[1]},
            )
            reviews = browser.get("/v1/patients/p1/memories/m1/reviews")
    finally:
        for worker in (first, second):
            os.kill(worker, signal.SIGCONT)

    assert story.status_code == 200 and "adherence memory" in story.text
    assert posted.status_code == 303
    assert posted.headers["location"].endswith("/vfs/memory/adherence.md#memory-m1")
    assert [r["action"] for r in reviews.json()] == ["confirm"]
