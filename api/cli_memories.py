"""`cce session`, `cce generate-memories`, `cce memories [review]` and `cce eval`."""

import getpass
import json
import uuid
from pathlib import Path
from typing import Annotated

import typer
from pydantic import BaseModel, ValidationError
from rich.table import Table
from typer import _click
from typer.core import TyperGroup

from api.cli_common import (
    JsonOption,
    OrgOption,
    StoreOption,
    console,
    errors,
    opened_store,
    org_of,
    print_json,
    scope_of,
)
from api.schemas import MemoryPublic, ReviewPublic, memories_public, new_session_id
from engine.audit import AuditEvent
from engine.errors import EngineError, InvalidInput, NotFound
from engine.memories.reviews import review_memory
from engine.memories.select import extractor_for
from engine.memories.service import generate_memories
from engine.models import (
    DismissReason,
    MemoryType,
    NewMessage,
    ReviewAction,
    Role,
    Scope,
    Session,
)
from engine.settings import get_settings
from engine.store import GraphStore

session_app = typer.Typer(help="Open sessions and import conversations.")


class _ListByDefault(TyperGroup):
    """`cce memories PATIENT` lists (as before); `cce memories review ...` reviews."""

    # typer vendors click: its groups take typer's own copy of click's Context.
    def parse_args(self, ctx: _click.Context, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] != "--help":
            args = ["list", *args]
        return super().parse_args(ctx, args)


memories_app = typer.Typer(cls=_ListByDefault, help="List and review a patient's memories.")


class Turn(BaseModel):
    role: Role
    text: str


class Transcript(BaseModel):
    """The eval transcript format: `{"id", "source", "turns": [{"role", "text"}]}`."""

    id: str | None = None
    source: str | None = None
    turns: list[Turn]


@session_app.command("new")
def session_new(
    patient: str, store: StoreOption = None, org: OrgOption = None, as_json: JsonOption = False
) -> None:
    """Open a session for a patient; prints its id."""
    scope = scope_of(org, patient)
    with opened_store(store) as graph:
        session = graph.create_session(scope, Session(session_id=new_session_id()))
    if as_json:
        print_json(session.model_dump(mode="json"))
    else:
        typer.echo(session.session_id)


@session_app.command("import")
def session_import(
    patient: str,
    transcript: Path,
    store: StoreOption = None,
    org: OrgOption = None,
    as_json: JsonOption = False,
) -> None:
    """Open a session and append a transcript's turns as its messages."""
    scope = scope_of(org, patient)
    try:
        parsed = Transcript.model_validate_json(transcript.read_bytes())
    except (OSError, ValidationError) as e:
        errors.print(f"[red]error:[/red] {transcript}: not a readable transcript: {e}")
        raise typer.Exit(2) from e
    messages = [NewMessage(role=t.role, text=t.text) for t in parsed.turns if t.text.strip()]
    with opened_store(store) as graph:
        session = graph.create_session(scope, Session(session_id=new_session_id()))
        added = graph.append_messages(scope, session.session_id, messages) if messages else []
    if as_json:
        print_json({"session_id": session.session_id, "messages": len(added)})
    else:
        console.print(f"{session.session_id}: {len(added)} messages imported for {patient}")
        typer.echo(session.session_id)


def _find_session(graph: GraphStore, org: str, session_id: str, patient: str | None) -> Scope:
    if patient is not None:
        return scope_of(org, patient)
    owners = []
    for candidate in graph.list_patients(org):
        scope = Scope(org=org, patient=candidate)
        try:
            graph.get_session(scope, session_id)
        except NotFound:
            continue
        owners.append(scope)
    if len(owners) != 1:
        raise (
            NotFound("session", session_id)
            if not owners
            else typer.BadParameter(
                f"session {session_id} exists for several patients; name one with --patient"
            )
        )
    return owners[0]


def generate_memories_command(
    session: str,
    patient: Annotated[str | None, typer.Option(help="The session's patient.")] = None,
    store: StoreOption = None,
    org: OrgOption = None,
    as_json: JsonOption = False,
) -> None:
    """Extract memories from a session's new messages and link them to facts."""
    with opened_store(store) as graph:
        scope = _find_session(graph, org_of(org), session, patient)
        result = generate_memories(graph, scope, session, extractor_for(get_settings()))
    if as_json:
        print_json(result.model_dump(mode="json"))
        return
    console.print(
        f"{result.status}: {len(result.memories)} memories, "
        f"{len(result.relationships)} relationships (processed through message "
        f"{result.processed_through})"
    )
    if result.labels_swapped:
        console.print("  the patient and provider labels read the wrong way round: read swapped")
    if result.usage.calls:
        u = result.usage
        console.print(f"  tokens: {u.prompt_tokens} prompt + {u.completion_tokens} completion")
    for memory in result.memories:
        console.print(f"  [bold]{memory.type.value}[/bold] {memory.subject}: {memory.text}")


@memories_app.command("list")
def memories_command(
    patient: str,
    type: Annotated[MemoryType | None, typer.Option(help="Only this type.")] = None,
    store: StoreOption = None,
    org: OrgOption = None,
    as_json: JsonOption = False,
) -> None:
    """A patient's memories with their relationships to facts."""
    scope = scope_of(org, patient)
    with opened_store(store) as graph:
        found = memories_public(graph, scope, graph.list_memories(scope, type))
    if as_json:
        print_json([m.model_dump(mode="json") for m in found])
        return
    console.print(_memories_table(patient, found))


@memories_app.command("review")
def review_command(
    patient: str,
    memory_id: str,
    confirm: Annotated[bool, typer.Option("--confirm", help="The memory is right.")] = False,
    dismiss: Annotated[
        DismissReason | None, typer.Option(help="Dismiss it: wrong, not_relevant, duplicate.")
    ] = None,
    note: Annotated[str, typer.Option(help="A note (alone, or with the decision).")] = "",
    store: StoreOption = None,
    org: OrgOption = None,
    as_json: JsonOption = False,
) -> None:
    """Confirm, dismiss (with a reason) or annotate a memory; the review is appended."""
    if confirm and dismiss is not None:
        errors.print("[red]error:[/red] --confirm and --dismiss exclude each other")
        raise typer.Exit(2)
    action = (
        ReviewAction.CONFIRM if confirm else ReviewAction.DISMISS if dismiss else ReviewAction.NOTE
    )
    scope = scope_of(org, patient)
    actor = f"cli:{getpass.getuser()}"
    with opened_store(store) as graph:
        review = review_memory(graph, scope, memory_id, actor, action, dismiss, note)
        graph.append_audit([_audit(scope, actor)])
    if as_json:
        print_json(ReviewPublic.of(review).model_dump(mode="json"))
    else:
        why = f" ({review.reason.value})" if review.reason else ""
        console.print(f"{review.action.value}{why}: memory {memory_id} of {patient}")


def _audit(scope: Scope, actor: str) -> AuditEvent:
    """The CLI's review is audited as the API's is: who, which patient, no content."""
    return AuditEvent(
        org=scope.org,
        actor=actor[:256],
        patient=scope.patient,
        action="cce memories review",
        outcome=201,
        correlation_id=uuid.uuid4().hex,
    )


def _memories_table(patient: str, found: list[MemoryPublic]) -> Table:
    table = Table(title=f"{len(found)} memories of {patient}")
    for column in ("date", "type", "subject", "quote", "relationships", "review"):
        table.add_column(column)
    for memory in found:
        quote = " … ".join(str(e["quote"]) for e in memory.evidence)
        links = ", ".join(
            f"{r.type.value} {r.fact_label or r.fact_id}" for r in memory.relationships
        )
        review = memory.review.action.value if memory.review else ""
        table.add_row(
            memory.created_at.date().isoformat(),
            memory.type.value,
            memory.subject,
            quote,
            links,
            review,
        )
    return table


def eval_command(
    directory: Annotated[Path, typer.Argument(help="A folder of cases in the eval format.")],
    extractor: Annotated[
        str | None,
        typer.Option(help="offline or llm (CCE_LLM_* name the endpoint); default CCE_EXTRACTOR."),
    ] = None,
    case: Annotated[
        list[str] | None, typer.Option(help="Score only this case (repeatable).")
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Score extraction and relationships on annotated cases (GUIDELINE §4)."""
    from rich.progress import Progress

    from api.evaluate import case_dirs, evaluate_dir, render

    found = case_dirs(directory) if directory.is_dir() else []
    if not found:
        errors.print(f"[red]error:[/red] {directory}: no case folders (transcript, record, gold)")
        raise typer.Exit(2)
    unknown = sorted(set(case or ()) - {p.name for p in found})
    if unknown:
        errors.print(f"[red]error:[/red] no such case in {directory}: {', '.join(unknown)}")
        raise typer.Exit(2)
    settings = get_settings()
    if extractor is not None:
        if extractor not in ("offline", "llm"):
            errors.print(f"[red]error:[/red] --extractor is offline or llm, not {extractor!r}")
            raise typer.Exit(2)
        settings = settings.model_copy(update={"extractor": extractor})
    try:
        chosen = extractor_for(settings)
    except InvalidInput as e:
        errors.print(f"[red]error:[/red] {e}")
        raise typer.Exit(2) from e
    total = len(case) if case else len(found)
    try:
        with Progress(console=errors, transient=True, disable=as_json) as bar:
            task = bar.add_task("scoring cases", total=total)
            report = evaluate_dir(
                directory,
                chosen,
                only=set(case) if case else None,
                progress=lambda name: bar.update(task, advance=1, description=name),
            )
    except EngineError as e:  # the LLM endpoint failed, or a case is malformed
        errors.print(f"[red]error:[/red] {e}")
        raise typer.Exit(1) from e
    if as_json:
        typer.echo(json.dumps(report.model_dump(mode="json"), indent=2))
    else:
        typer.echo(render(report))
