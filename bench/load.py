"""Many agents and clinicians at once against `cce serve` on Neo4j, loopback only.

Starts its own Neo4j (tools/neo4j-local, a temporary data dir) and `cce serve --workers W`
on 127.0.0.1, then for each N drives N simulated users for a fixed time in a fresh org:
agents open sessions, post messages, generate memories and read `/memory/symptom.md`
and `/context`; clinicians ingest a real Synthea bundle and read the hypertension story,
`/context` and the facts. Two users share each patient, so ingests and memory writes to
one patient overlap. Prints p50/p95/p99 per route and the errors, then checks the store
through the API: no duplicate memories, every acknowledged message, memory and ingest
present. An untimed warm-up on other patients comes first. The rate limit is off: one
local principal makes every request.

With --restart-neo4j, Neo4j is stopped a third of the way in and started again on the
same data dir: requests meanwhile must answer 503 with Retry-After, nothing acknowledged
may be lost, and throughput after recovery is printed against before the stop.

    python -m bench.load [--agents 8,32,128] [--seconds 30] [--workers 4] [--restart-neo4j]
"""

import argparse
import asyncio
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import httpx

ROOT = Path(__file__).parent.parent
LAUNCHER = ROOT / "tools" / "neo4j-local"
SYNTHEA = ROOT / "tests" / "data" / "corpus" / "fhir" / "synthea-r4-bundles"
BUNDLE = sorted(SYNTHEA.glob("Joaquin_Rodriguez_*.json"))[0].read_bytes()
FHIR = {"content-type": "application/fhir+json"}
SAID = (
    "My blood pressure has been running high in the mornings.",
    "I get headaches most afternoons.",
    "I stopped taking the lisinopril last week because it made me cough.",
)
RECOVERY_GRACE = 10.0  # seconds after /health/ready is 200 in which a 503 still counts


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Neo4j:
    """tools/neo4j-local on one port and one data dir, so a restart keeps the data."""

    def __init__(self, tmp: Path) -> None:
        self.env = os.environ | {
            "NEO4J_LOCAL_PORT": str(free_port()),
            "NEO4J_LOCAL_HOME": str(tmp / "home"),
            "NEO4J_LOCAL_RUN_DIR": str(tmp / "run"),
        }

    def start(self) -> str:
        done = subprocess.run(
            ["bash", str(LAUNCHER / "start.sh")], env=self.env, capture_output=True, check=True
        )
        return done.stdout.decode().strip().splitlines()[-1]

    def stop(self) -> None:
        subprocess.run(["bash", str(LAUNCHER / "stop.sh")], env=self.env, capture_output=True)


def serve(uri: str, port: int, workers: int, org: str) -> subprocess.Popen[bytes]:
    env = os.environ | {
        "CCE_ORG": org,
        "CCE_RATE_LIMIT_PER_SECOND": "0",
        "CCE_NEO4J_PASSWORD": "",
        "CCE_NEO4J_MAX_RETRY_SECONDS": "2",
        "CCE_NEO4J_CONNECTION_TIMEOUT": "2",
        "CCE_EXTRACTOR": "offline",
    }
    command = [sys.executable, "-m", "api.cli", "serve", "--port", str(port), "--store", uri]
    return subprocess.Popen(
        [*command, "--workers", str(workers)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


@dataclass
class Tally:
    """What the users saw, and what the server acknowledged."""

    samples: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    errors: Counter[str] = field(default_factory=Counter)
    unavailable: list[float] = field(default_factory=list)  # when 503 + Retry-After came
    done_at: list[float] = field(default_factory=list)  # when each success came
    messages: dict[tuple[str, str], set[int]] = field(default_factory=lambda: defaultdict(set))
    memories: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    ingested: set[str] = field(default_factory=set)
    started: float = 0.0
    end: float = 0.0  # when the users stop


async def call(
    client: httpx.AsyncClient, tally: Tally, route: str, method: str, url: str, **kw: object
) -> httpx.Response | None:
    """One request, timed under `route`; the response only when it succeeded."""
    started = time.monotonic()
    try:
        response = await client.request(method, url, **kw)  # type: ignore[arg-type]
    except httpx.HTTPError as e:
        tally.errors[f"{route}: {type(e).__name__}"] += 1
        return None
    now = time.monotonic()
    tally.samples[route].append(now - started)
    if response.is_success:
        tally.done_at.append(now)
        return response
    if response.status_code == 503 and response.headers.get("Retry-After"):
        tally.unavailable.append(now)
    else:
        tally.errors[f"{route}: {response.status_code}"] += 1
    return None


async def agent(client: httpx.AsyncClient, tally: Tally, pid: str) -> None:
    base = f"/v1/patients/{pid}"
    while time.monotonic() < tally.end:
        opened = await call(client, tally, "POST sessions", "POST", f"{base}/sessions")
        if opened is None:
            await asyncio.sleep(1)
            continue
        sid = opened.json()["session_id"]
        for text in SAID:
            if time.monotonic() >= tally.end:
                return
            body = {"messages": [{"role": "patient", "text": text}]}
            url = f"{base}/sessions/{sid}/messages"
            if added := await call(client, tally, "POST messages", "POST", url, json=body):
                tally.messages[(pid, sid)].update(m["seq"] for m in added.json())
            url = f"{base}/sessions/{sid}/generate-memories"
            if made := await call(client, tally, "POST generate-memories", "POST", url):
                tally.memories[pid].update(m["id"] for m in made.json()["memories"])
            await call(client, tally, "GET vfs memory", "GET", f"{base}/vfs/memory/symptom.md")
            await call(client, tally, "GET context", "GET", f"{base}/context")


async def clinician(client: httpx.AsyncClient, tally: Tally, pid: str) -> None:
    base = f"/v1/patients/{pid}"
    story = f"{base}/vfs/conditions/active/hypertension/_story.md"
    while time.monotonic() < tally.end:
        url = f"{base}/ingest/fhir"
        if await call(client, tally, "POST ingest", "POST", url, content=BUNDLE, headers=FHIR):
            tally.ingested.add(pid)
        await call(client, tally, "GET vfs story", "GET", story)
        await call(client, tally, "GET context", "GET", f"{base}/context")
        await call(client, tally, "GET facts", "GET", f"{base}/facts")


async def _ready(client: httpx.AsyncClient) -> bool:
    try:
        return (await client.get("/health/ready")).status_code == 200
    except httpx.HTTPError:
        return False


async def restart(
    neo4j: Neo4j, client: httpx.AsyncClient, tally: Tally, seconds: float
) -> tuple[float, float, float]:
    """Stops Neo4j a third of the way in and starts it again.

    Returns when it stopped, when it was back, and when the API was ready again; the run
    goes on for a third of `seconds` after that, however long it took.
    """
    await asyncio.sleep(seconds / 3)
    stopped = time.monotonic()
    await asyncio.to_thread(neo4j.stop)
    await asyncio.to_thread(neo4j.start)
    back = time.monotonic()
    while not await _ready(client):
        await asyncio.sleep(0.2)
    ready = time.monotonic()
    tally.end = max(tally.end, ready + seconds / 3)
    return stopped, back, ready


async def drive(
    base_url: str, users: int, seconds: float, neo4j: Neo4j | None, prefix: str = "p"
) -> Tally:
    tally = Tally()
    started = time.monotonic()
    tally.started, tally.end = started, started + seconds
    limits = httpx.Limits(max_connections=users + 1)
    async with httpx.AsyncClient(base_url=base_url, timeout=120, limits=limits) as client:
        tasks = [
            (agent if i % 2 == 0 else clinician)(client, tally, f"{prefix}{i // 2}")
            for i in range(users)
        ]
        outage = asyncio.create_task(restart(neo4j, client, tally, seconds)) if neo4j else None
        await asyncio.gather(*tasks)
        if outage:
            report_outage(tally, *await outage)
    return tally


def report_outage(tally: Tally, stopped: float, back: float, ready: float) -> None:
    late = sum(t > ready + RECOVERY_GRACE for t in tally.unavailable)
    if late:
        tally.errors["503 after the outage"] += late
    before = sum(t <= stopped for t in tally.done_at) / (stopped - tally.started)
    after = sum(t > ready for t in tally.done_at) / (tally.end - ready)
    print(f"  Neo4j down for {back - stopped:.1f} s; /health/ready 200 {ready - back:.1f} s later")
    print(f"  503 with Retry-After: {len(tally.unavailable) - late} during the outage")
    print(f"  throughput {before:.1f} req/s before the stop, {after:.1f} req/s after ready")


def percentile_table(tally: Tally) -> None:
    seconds = tally.end - tally.started
    print(f"  {'route':24} {'requests':>8} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8}")
    for route, samples in sorted(tally.samples.items()):
        cuts = statistics.quantiles(samples, n=100) if len(samples) > 1 else samples * 99
        p50, p95, p99 = (cuts[i] * 1000 for i in (49, 94, 98))
        print(f"  {route:24} {len(samples):8d} {p50:8.1f} {p95:8.1f} {p99:8.1f}")
    rate = len(tally.done_at) / seconds
    print(f"  {rate:.1f} successful req/s over {seconds:.0f} s; errors: {dict(tally.errors)}")


def check_store(base_url: str, tally: Tally) -> list[str]:
    """What the store lost or duplicated of what the server acknowledged."""
    problems: list[str] = []
    with httpx.Client(base_url=base_url, timeout=120) as client:
        facts: set[int] = set()
        for pid in sorted(tally.ingested):
            facts.add(len(client.get(f"/v1/patients/{pid}/facts").raise_for_status().json()))
        if len(facts) > 1:
            problems.append(f"patients ingested from one bundle hold {sorted(facts)} facts")
        for (pid, sid), seqs in tally.messages.items():
            session = client.get(f"/v1/patients/{pid}/sessions/{sid}").raise_for_status().json()
            held = [m["seq"] for m in session["messages"]]
            if not seqs <= set(held) or len(held) != len(set(held)):
                problems.append(f"session {sid}: acknowledged {sorted(seqs)}, holds {held}")
        for pid, acked in tally.memories.items():
            listed = client.get(f"/v1/patients/{pid}/memories").raise_for_status().json()
            ids = [m["id"] for m in listed]
            same = Counter(
                (m["session_id"], m["type"], m["subject"], m["evidence"][0]["message_id"])
                for m in listed
            )
            if missing := acked - set(ids):
                problems.append(f"{pid}: {len(missing)} acknowledged memories missing")
            if len(ids) != len(set(ids)) or max(same.values(), default=1) > 1:
                problems.append(f"{pid}: duplicate memories")
    return problems


def wait_ready(base_url: str, timeout: float = 180) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{base_url}/health/ready", timeout=5).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    raise SystemExit(f"cce serve was not ready at {base_url} within {timeout:.0f} s")


def warm_up(base_url: str, workers: int, rounds: int = 12) -> None:
    """Untimed rounds on other patients until generate-memories is quick on every worker.

    Each worker loads its lexicons and query plans on first use, which takes seconds.
    """
    for _ in range(rounds):
        tally = asyncio.run(drive(base_url, 4 * workers, 10, None, prefix="warm"))
        slowest = max(tally.samples.get("POST generate-memories", [99.0]))
        if slowest < 2.0:
            return


def run(users: int, args: argparse.Namespace, neo4j: Neo4j, uri: str) -> bool:
    org = f"load-{uuid.uuid4().hex[:8]}"
    port = free_port()
    base_url = f"http://127.0.0.1:{port}"
    server = serve(uri, port, args.workers, org)
    try:
        wait_ready(base_url)
        warm_up(base_url, args.workers)
        mode = ", Neo4j restarted mid-run" if args.restart_neo4j else ""
        print(f"N={users} users, {args.seconds:.0f} s, {args.workers} workers{mode}")
        outage = neo4j if args.restart_neo4j else None
        tally = asyncio.run(drive(base_url, users, args.seconds, outage))
        percentile_table(tally)
        wait_ready(base_url)
        problems = check_store(base_url, tally)
    finally:
        server.terminate()
        server.wait(timeout=60)
    acked = sum(map(len, tally.messages.values())), sum(map(len, tally.memories.values()))
    print(
        f"  acknowledged: {acked[0]} messages, {acked[1]} memories, {len(tally.ingested)} ingests"
    )
    print(f"  store check: {'; '.join(problems) or 'nothing lost, no duplicates'}")
    return not problems and not tally.errors


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--agents", default="8,32,128", help="user counts, one run each")
    parser.add_argument("--seconds", type=float, default=30)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--restart-neo4j", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        neo4j = Neo4j(Path(tmp))
        uri = neo4j.start()
        try:
            ok = [run(int(n), args, neo4j, uri) for n in args.agents.split(",")]
        finally:
            neo4j.stop()
    raise SystemExit(0 if all(ok) else 1)


if __name__ == "__main__":
    main()
