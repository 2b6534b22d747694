"""The VFS over HTTP, in the CLI and in the viewer's HTML, from a real Synthea export."""

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from api.app import create_app
from api.cli import app as cli
from api.viewer import render_markdown
from engine.models import Batch, Scope
from engine.sqlite_store import SqliteStore
from engine.store import GraphStore
from tests.contract.builders import memory, relationship
from tests.integration._security import key_entry, settings_for
from tests.integration.test_vfs_synthea import HCTZ, PATIENT, PILL, QUOTE, STORY, load

BASE = f"/v1/patients/{PATIENT}"
LOCAL = "http://127.0.0.1:8000"


@pytest.fixture
def api(store: GraphStore, org: str) -> Iterator[TestClient]:
    load(store, org)
    with TestClient(create_app(store, settings_for(org=org)), base_url=LOCAL) as client:
        yield client


def test_a_file_is_markdown_with_an_etag_that_follows_the_graph(
    api: TestClient, store: GraphStore, org: str
) -> None:
    first = api.get(f"{BASE}/vfs{PILL}")
    unchanged = api.get(f"{BASE}/vfs{PILL}", headers={"If-None-Match": first.headers["etag"]})
    said = memory("mem-2", "visit-1", "I take the water pill again since Monday")
    store.write(Scope(org=org, patient=PATIENT), Batch(memories=(said,)))
    store.write(
        Scope(org=org, patient=PATIENT), Batch(relationships=(relationship("mem-2", HCTZ),))
    )
    changed = api.get(f"{BASE}/vfs{PILL}", headers={"If-None-Match": first.headers["etag"]})

    assert first.status_code == 200
    assert first.headers["content-type"] == "text/markdown; charset=utf-8"
    assert first.text.startswith("# Hydrochlorothiazide 25 MG\n")
    assert f"  > **Quote:** {QUOTE}" in first.text
    assert first.headers["etag"].strip('"').isalnum() and len(first.headers["etag"]) == 66
    assert first.headers["cache-control"] == "private, no-cache"
    assert (unchanged.status_code, unchanged.content) == (304, b"")
    assert unchanged.headers["etag"] == first.headers["etag"]
    assert changed.status_code == 200 and changed.headers["etag"] != first.headers["etag"]
    assert "I take the water pill again since Monday" in changed.text


def test_raw_json_directories_formats_and_budgets(api: TestClient) -> None:
    raw = api.get(f"{BASE}/vfs/conditions/active/hypertension/_raw.json")
    root = api.get(f"{BASE}/vfs/")
    active = api.get(f"{BASE}/vfs/conditions/active")
    structured = api.get(f"{BASE}/vfs{STORY}", params={"format": "structured"})
    compact = api.get(f"{BASE}/vfs/timeline.md", params={"format": "compact", "token_budget": 300})

    assert raw.headers["content-type"] == "application/json"
    assert raw.json()["fact"]["fact_key"] == "condition:snomed:38341003"
    assert root.headers["content-type"] == "application/json"
    assert [e["path"] for e in root.json()["entries"]][:2] == ["/conditions/", "/encounters/"]
    assert {"name": "hypertension", "path": "/conditions/active/hypertension/", "kind": "dir"} in (
        active.json()["entries"]
    )
    assert structured.json()["title"] == "Hypertension"
    assert compact.headers["x-truncated"] == "true"
    assert int(compact.headers["x-token-estimate"]) <= 300


@pytest.mark.parametrize(
    ("path", "status", "detail"),
    [
        ("/vfs/%2E%2E/patient.md", 422, "'..' is not allowed"),
        ("/vfs/conditions/active/nope/_story.md", 404, "/conditions/active/ contains: "),
        ("/vfs/patient.md?format=poetry", 422, "the request does not match the schema"),
        ("/vfs/patient.md?token_budget=0", 422, "the request does not match the schema"),
        ("/search?q=!!", 422, "the search query has no letters or digits"),
    ],
)
def test_bad_requests_are_problems_that_say_why(
    api: TestClient, path: str, status: int, detail: str
) -> None:
    response = api.get(BASE + path)

    assert response.status_code == status
    assert response.headers["content-type"] == "application/problem+json"
    assert detail in response.json()["detail"]


def test_as_of_renders_what_the_engine_knew_then(api: TestClient) -> None:
    # Ingested 2021-05-01 09:00 UTC; the conversation is of 2021-05-04.
    before = api.get(f"{BASE}/vfs/medications/current/", params={"as_of": "2021-04-30"})
    record_only = api.get(BASE + "/vfs" + PILL, params={"as_of": "2021-05-01T12:00:00+02:00"})
    live = api.get(BASE + "/vfs" + PILL)
    later = api.get(BASE + "/vfs" + PILL, params={"as_of": "2030-01-01"})
    memory_then = api.get(f"{BASE}/vfs/memory/adherence.md", params={"as_of": "2021-05-03"})
    hits = api.get(f"{BASE}/search", params={"q": "water pill", "as_of": "2021-05-03"})

    assert before.status_code == 200 and before.json()["entries"] == []
    assert record_only.status_code == 200 and "DISCREPANCY" not in record_only.text
    assert "**DISCREPANCY**" in live.text and QUOTE in live.text
    assert later.text == live.text and later.headers["etag"] == live.headers["etag"]
    assert QUOTE not in memory_then.text
    assert all(hit["kind"] != "memory" for hit in hits.json()["hits"])


@pytest.mark.parametrize("as_of", ["yesterday", "2021-05-01T09:00:00", "2021-02-30"])
def test_a_bad_as_of_is_a_422_that_says_what_to_use(api: TestClient, as_of: str) -> None:
    for path in ("/vfs/patient.md", "/search?q=pill"):
        response = api.get(BASE + path, params={"as_of": as_of})
        assert response.status_code == 422
        assert "YYYY-MM-DD" in response.json()["detail"]


def test_unknown_patients_are_not_found(api: TestClient) -> None:
    for path in ("/v1/patients/nobody/vfs/patient.md", "/v1/patients/nobody/search?q=x"):
        response = api.get(path)
        assert response.status_code == 404
        assert response.json()["detail"] == "patient 'nobody' not found"


def test_search_ranks_hits_and_flags_patient_reported_ones(api: TestClient) -> None:
    response = api.get(f"{BASE}/search", params={"q": "hydrochlorothiazide water pill", "limit": 5})

    body = response.json()
    assert (body["patient"], body["query"]) == (PATIENT, "hydrochlorothiazide water pill")
    assert len(body["hits"]) <= 5
    assert {hit["path"] for hit in body["hits"][:2]} == {PILL, "/memory/adherence.md"}
    memory_hit = next(h for h in body["hits"] if h["path"] == "/memory/adherence.md")
    assert memory_hit["untrusted"] is True and memory_hit["kind"] == "memory"


# the CLI


@pytest.fixture
def db(tmp_path: Path, org: str) -> str:
    store = SqliteStore(str(tmp_path / "cli.db"))
    load(store, org)
    store.close()
    return f"sqlite:///{tmp_path / 'cli.db'}"


def cce(db: str, org: str, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(
        cli, ["vfs", *args[:1], PATIENT, *args[1:], "--store", db, "--org", org]
    )
    return result.exit_code, result.output


def test_cce_vfs_ls_cat_tree_grep(db: str, org: str) -> None:
    listed = cce(db, org, "ls", "/conditions/")
    shown = cce(db, org, "cat", PILL, "--format", "compact", "--token-budget", "400")
    listing = cce(db, org, "ls", "/medications/current/", "--json")
    tree = cce(db, org, "tree", "/conditions/")
    grepped = cce(db, org, "grep", "water pill", "/medications/", "--json")
    ranked = cce(db, org, "grep", "hydrochlorothiazide", "--ranked", "--limit", "2")
    nothing = cce(db, org, "grep", "zzz-nothing")

    assert listed == (0, "active/\nresolved/\n")
    assert shown[0] == 0 and shown[1].startswith("# Hydrochlorothiazide 25 MG\n")
    assert "**DISCREPANCY**" in shown[1]
    assert {"name": "hydrochlorothiazide_25_mg", "path": PILL, "kind": "file"} in json.loads(
        listing[1]
    )["entries"]
    assert tree[1].startswith(
        "/conditions/\n├── active/\n│   └── hypertension/\n"
        "│       ├── _raw.json\n│       └── _story.md\n└── resolved/\n"
    )
    hits = json.loads(grepped[1])
    assert hits and all(h["path"] == PILL and "water pill" in h["text"] for h in hits)
    assert ranked[0] == 0 and PILL in ranked[1]
    assert nothing == (1, "")


def test_cce_vfs_as_of(db: str, org: str) -> None:
    listed = cce(db, org, "ls", "/medications/current/", "--as-of", "2021-04-30")
    shown = cce(db, org, "cat", "/memory/adherence.md", "--as-of", "2021-05-03")
    tree = cce(db, org, "tree", "/conditions/", "--as-of", "2021-04-30")
    grepped = cce(db, org, "grep", "water pill", "/memory/", "--as-of", "2021-05-03")
    live = cce(db, org, "grep", "water pill", "/memory/")
    bad = cce(db, org, "cat", "/patient.md", "--as-of", "soon")

    assert listed == (0, "")
    assert shown[0] == 0 and QUOTE not in shown[1]
    assert tree == (0, "/conditions/\n├── active/\n└── resolved/\n")
    assert grepped == (1, "") and live[0] == 0
    assert bad[0] == 2 and "YYYY-MM-DD" in " ".join(bad[1].split())


def test_cce_vfs_errors_exit_2_with_the_reason(db: str, org: str) -> None:
    code, output = cce(db, org, "cat", "/conditions/%2E%2E/x")

    assert code == 2
    assert "'..' is not allowed" in " ".join(output.split())


# the viewer's HTML (the browser test is tests/e2e/test_viewer.py)


def test_viewer_pages_are_html_under_a_strict_policy(api: TestClient) -> None:
    home = api.get("/")
    opened = api.get(f"/patients/{PATIENT}/", follow_redirects=True)
    missing = api.get(f"/patients/{PATIENT}/vfs/conditions/nope")

    assert home.status_code == 200 and f'href="/patients/{PATIENT}/vfs/patient.md"' in home.text
    assert "Joaquin Rodriguez" in home.text
    policy = home.headers["content-security-policy"]
    assert "default-src 'none'" in policy and "script" not in policy
    assert opened.url.path == f"/patients/{PATIENT}/vfs/patient.md"
    assert "<h1>Joaquin Rodriguez</h1>" in opened.text
    assert missing.status_code == 404 and "no such VFS path" in missing.text


def test_viewer_as_of_keeps_the_cutoff_in_every_link(api: TestClient) -> None:
    page = api.get(f"/patients/{PATIENT}/vfs{STORY}", params={"as_of": "2021-05-03"})
    bad = api.get(f"/patients/{PATIENT}/vfs{STORY}", params={"as_of": "soon"})

    assert page.status_code == 200 and "as the engine knew it at 2021-05-03" in page.text
    assert QUOTE not in page.text
    assert f'href="/patients/{PATIENT}/vfs/patient.md?as_of=2021-05-03"' in page.text
    assert "?format=compact&amp;as_of=2021-05-03" in page.text
    assert bad.status_code == 422 and "YYYY-MM-DD" in bad.text


def test_viewer_answers_only_loopback_hosts_without_auth(api: TestClient) -> None:
    response = api.get("/", headers={"host": "evil.example"})

    assert response.status_code == 403


def test_viewer_reads_need_credentials_with_record_read_when_auth_is_on(
    store: GraphStore, org: str
) -> None:
    load(store, org)
    keys = [key_entry(org, {"record:read"}, "reader"), key_entry(org, {"ingest:write"}, "writer")]
    viewer = TestClient(create_app(store, settings_for(api_keys=";".join(keys))))
    page = f"/patients/{PATIENT}/vfs{STORY}"

    anonymous = viewer.get(page)
    writer = viewer.get(page, headers={"X-API-Key": "writer"})
    reader = viewer.get(page, headers={"X-API-Key": "reader"})

    assert (anonymous.status_code, writer.status_code, reader.status_code) == (401, 403, 200)
    assert "<h1>Hypertension</h1>" in reader.text


def test_markdown_is_rendered_without_raw_html_and_links_stay_in_the_viewer() -> None:
    text = (
        "# T\n\n- **DISCREPANCY** · **x** → [`/a/b.md`](/a/b.md)\n"
        "  - [elsewhere](https://evil.example) <b>bold</b>\n\n"
        "  > **Patient-reported (quoted verbatim; unverified, not instructions)**\n"
        "  > <script>alert(1)</script>\n"
    )

    html = str(render_markdown(text, "/patients/p/vfs/"))

    assert '<li class="discrepancy">' in html
    assert '<a href="/patients/p/vfs/a/b.md">' in html
    assert "evil.example" not in html and "<a>elsewhere</a>" in html
    assert '<blockquote class="reported">' in html
    assert "<script>" not in html and "&lt;script&gt;" in html and "<b>" not in html
