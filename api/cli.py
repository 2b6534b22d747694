"""The `cce` command line: an interface beside the HTTP app, on the same engine."""

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table

from engine.errors import EngineError
from engine.models import Fact, FactKind, Scope
from engine.settings import get_settings
from engine.store import GraphStore, open_store
from ingest.pipeline import IngestReport, ingest_paths

app = typer.Typer(help="Clinical Context Engine: patient facts and memories, linked.")
console = Console()
errors = Console(stderr=True)

StoreOption = Annotated[
    str | None, typer.Option("--store", help="Store URL (default: CCE_STORE_URL).")
]
OrgOption = Annotated[str | None, typer.Option("--org", help="Tenant (default: CCE_ORG).")]
JsonOption = Annotated[bool, typer.Option("--json", help="Machine-readable output.")]


@contextmanager
def _store(url: str | None) -> Iterator[GraphStore]:
    store = open_store(url or get_settings().store_url)
    try:
        yield store
    except EngineError as e:
        errors.print(f"[red]error:[/red] {e}")
        raise typer.Exit(2) from e
    finally:
        store.close()


def _scope(org: str | None, patient: str) -> Scope:
    try:
        return Scope(org=org or get_settings().org, patient=patient)
    except ValueError as e:
        errors.print(f"[red]error:[/red] patient and org must match ^[A-Za-z0-9._-]{{1,128}}$: {e}")
        raise typer.Exit(2) from e


def _print_json(value: Any) -> None:
    typer.echo(json.dumps(value, indent=2, default=str))


@app.command()
def ingest(
    paths: Annotated[
        list[Path], typer.Argument(help="Files or folders: FHIR JSON, NDJSON, C-CDA.")
    ],
    store: StoreOption = None,
    org: OrgOption = None,
    patient_key: Annotated[
        str | None,
        typer.Option(help="Patient identity: FHIR Patient id (default) or identifier:SYSTEM."),
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Ingest EHR exports. Exit 0: all ingested; 1: some resources rejected; 2: unusable."""
    with _store(store) as graph:
        if as_json:
            report = ingest_paths(graph, org or get_settings().org, paths, patient_key)
        else:
            report = _ingest_with_progress(graph, org or get_settings().org, paths, patient_key)
    if as_json:
        _print_json(report.model_dump(mode="json") | {"exit_code": report.exit_code})
    else:
        _print_report(report)
    raise typer.Exit(report.exit_code)


def _ingest_with_progress(
    graph: GraphStore, org: str, paths: list[Path], patient_key: str | None
) -> IngestReport:
    columns = (
        SpinnerColumn(),
        TextColumn("{task.description}"),
        TextColumn("{task.completed} resources"),
        TextColumn("[cyan]{task.fields[rate]}"),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=errors, transient=True) as progress:
        task = progress.add_task("ingesting", rate="")

        def advance(n: int) -> None:
            progress.update(task, advance=n)
            speed = progress.tasks[0].speed
            progress.update(task, rate=f"{speed:,.0f} resources/s" if speed else "")

        return ingest_paths(graph, org, paths, patient_key, progress=advance)


def _print_report(report: IngestReport) -> None:
    table = Table(title=f"Ingested {report.files} input(s), {report.resources} resources")
    table.add_column("delta")
    table.add_column("count", justify="right")
    for name, value in report.deltas.model_dump().items():
        table.add_row(name.replace("_", " "), str(value))
    table.add_row("patients", str(len(report.patients)))
    table.add_row("rejected", str(report.rejected))
    table.add_row("warnings", str(len(report.warnings)))
    console.print(table)
    for problem in report.unusable + report.errors[:20]:
        where = ", ".join(
            f"{k}={v}"
            for k, v in problem.model_dump(exclude={"severity", "message", "file"}).items()
            if v not in (None, "")
        )
        errors.print(f"[red]{problem.file}[/red] {where}: {problem.message}")
    if len(report.errors) > 20:
        errors.print(f"... and {len(report.errors) - 20} more errors (see --json)")


@app.command()
def facts(
    patient: str,
    kind: Annotated[FactKind | None, typer.Option(help="Only facts of this kind.")] = None,
    status: Annotated[str | None, typer.Option(help="Only facts with this status.")] = None,
    store: StoreOption = None,
    org: OrgOption = None,
    as_json: JsonOption = False,
) -> None:
    """List a patient's merged facts."""
    scope = _scope(org, patient)
    with _store(store) as graph:
        found = graph.list_facts(scope, kind, status)
    if as_json:
        _print_json([fact.model_dump(mode="json") for fact in found])
        return
    console.print(_facts_table(patient, found))


def _facts_table(patient: str, found: list[Fact]) -> Table:
    table = Table(title=f"{len(found)} facts of {patient}")
    for column in ("kind", "label", "status", "key", "sources", "conflicts"):
        table.add_column(column)
    for fact in found:
        table.add_row(
            fact.kind.value,
            fact.label,
            fact.status or "",
            fact.fact_key,
            str(len(fact.sources)),
            ", ".join(c.field for c in fact.conflicts),
        )
    return table


@app.command()
def erase(
    patient: str,
    store: StoreOption = None,
    org: OrgOption = None,
    yes: Annotated[bool, typer.Option("--yes", help="Do not ask for confirmation.")] = False,
    as_json: JsonOption = False,
) -> None:
    """Erase everything of one patient, then verify that nothing remains."""
    scope = _scope(org, patient)
    if not yes and not typer.confirm(f"Erase every record of patient {patient}?"):
        raise typer.Exit(1)
    with _store(store) as graph:
        removed = graph.erase_patient(scope)
        remaining = graph.count_patient_items(scope)
    if as_json:
        _print_json({"patient": patient, "removed": removed, "remaining": remaining})
    else:
        console.print(f"erased {patient}: {removed} items removed, {remaining} remaining")
    if remaining:
        raise typer.Exit(1)


@app.command()
def serve(
    host: Annotated[str, typer.Option(help="Interface to bind.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="TCP port.")] = 8000,
    store: StoreOption = None,
) -> None:
    """Serve the HTTP API."""
    import uvicorn

    from api.app import create_app

    graph = open_store(store or get_settings().store_url)
    try:
        uvicorn.run(create_app(graph), host=host, port=port)
    finally:
        graph.close()
