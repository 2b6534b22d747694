"""`cce demo`: the whole story on bundled sample data, on a fresh embedded store."""

from importlib.resources import files
from pathlib import Path
from typing import Annotated

import typer
from rich.markdown import Markdown
from rich.panel import Panel

from api.cli_common import console, errors, print_json
from api.cli_memories import Transcript
from engine.memories.select import extractor_for
from engine.memories.service import generate_memories
from engine.models import NewMessage, Scope, Session
from engine.settings import get_settings
from engine.store import GraphStore, open_store
from ingest.pipeline import ingest_paths
from vfs import VfsDir, VfsFile, list_dir, read

DEMO = files("api") / "demo"
ORG = "demo"


def demo_command(
    db: Annotated[Path, typer.Option(help="The embedded store to create (replaced).")] = Path(
        "cce-demo.db"
    ),
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
) -> None:
    """Ingest a sample patient, import a conversation, generate memories, show the views."""
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    url = f"sqlite:///{db}"
    store = open_store(url)
    try:
        shown = _run(store)
    finally:
        store.close()
    if as_json:
        print_json({"store": url, "org": ORG, "files": shown})
        return
    for path, content in shown.items():
        console.print(Panel(Markdown(content), title=path, title_align="left"))
    console.print(
        f"Open the viewer: [bold]CCE_ORG={ORG} cce serve --store {url}[/bold] "
        "then http://127.0.0.1:8000/"
    )


def _run(store: GraphStore) -> dict[str, str]:
    with console.status("ingesting the sample patient"):
        report = ingest_paths(store, ORG, [Path(str(DEMO / "patient.json"))], workers=1)
    (patient,) = report.patients
    scope = Scope(org=ORG, patient=patient)
    transcript = Transcript.model_validate_json((DEMO / "conversation.json").read_bytes())
    store.create_session(scope, Session(session_id="demo-visit"))
    store.append_messages(
        scope, "demo-visit", [NewMessage(role=t.role, text=t.text) for t in transcript.turns]
    )
    with console.status("generating memories (loads the NLP pipeline once)"):
        result = generate_memories(store, scope, "demo-visit", extractor_for(get_settings()))
    errors.print(
        f"patient {patient}: {report.deltas.facts_added} facts from {report.resources} "
        f"resources; {len(result.memories)} memories, {len(result.relationships)} relationships"
    )
    shown = {
        path: _content(store, scope, path)
        for path in (
            _first(store, scope, "/conditions/active/", "_story.md", "Patient-Reported", "> "),
            _first(store, scope, "/medications/current/", "", "conflicts"),
            "/memory/adherence.md",
        )
        if path
    }
    return shown


def _content(store: GraphStore, scope: Scope, path: str) -> str:
    found = read(store, scope, path)
    return found.content if isinstance(found, VfsFile) else ""


def _first(store: GraphStore, scope: Scope, folder: str, leaf: str, *needles: str) -> str | None:
    """The first file under `folder` whose text holds every needle."""
    listing = list_dir(store, scope, folder)
    assert isinstance(listing, VfsDir)
    for entry in listing.entries:
        path = f"{entry.path.rstrip('/')}/{leaf}" if leaf else entry.path
        if all(needle in _content(store, scope, path) for needle in needles):
            return path
    return None
