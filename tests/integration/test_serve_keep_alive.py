"""`cce serve` keeps an idle connection open for `CCE_KEEP_ALIVE_SECONDS` (75 s), longer
than the connection pools of clients and load balancers keep theirs: a request sent on
a pooled connection that the server has just closed would be lost in transit (uvicorn's
own default is 5 s)."""

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench.load import free_port, wait_ready

pytestmark = pytest.mark.slow
HOST = "127.0.0.1"
IDLE = 6.0  # seconds: beyond uvicorn's default of 5


@pytest.fixture
def port(tmp_path: Path) -> Iterator[int]:
    """`cce serve` on SQLite with the default keep-alive, ready on a free loopback port."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k != "CCE_KEEP_ALIVE_SECONDS"}
    command = [sys.executable, "-m", "api.cli", "serve", "--port", str(port)]
    process = subprocess.Popen(
        [*command, "--store", f"sqlite:///{tmp_path}/cce.db"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_ready(f"http://{HOST}:{port}", timeout=60)
        yield port
    finally:
        process.terminate()
        process.wait(timeout=30)


def test_an_idle_connection_stays_open_beyond_uvicorns_default(port: int) -> None:
    request = f"GET /health/live HTTP/1.1\r\nHost: {HOST}\r\n\r\n".encode()
    with socket.create_connection((HOST, port), timeout=5) as conn:
        conn.sendall(request)
        assert _response(conn).startswith(b"HTTP/1.1 200")
        time.sleep(IDLE)
        conn.setblocking(False)
        try:
            pending = conn.recv(1)  # b"": the server closed the connection
        except BlockingIOError:
            pending = None  # open, nothing to read
        conn.setblocking(True)
        assert pending is None
        conn.sendall(request)
        assert _response(conn).startswith(b"HTTP/1.1 200")


def _response(conn: socket.socket) -> bytes:
    """One whole response: its head, then as many body bytes as its Content-Length."""
    data = b""
    while b"\r\n\r\n" not in data:
        data += conn.recv(4096)
    head, body = data.split(b"\r\n\r\n", 1)
    length = next(
        int(line.split(b":", 1)[1])
        for line in head.split(b"\r\n")
        if line.lower().startswith(b"content-length:")
    )
    while len(body) < length:
        body += conn.recv(4096)
    return data
