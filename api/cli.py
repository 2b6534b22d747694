"""The `cce` command line: an interface beside the HTTP app, on the same engine."""

import secrets
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.progress import (
    BarColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

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
from engine.matching import describe
from engine.models import Fact, FactKind
from engine.settings import get_settings
from engine.store import GraphStore, open_store
from ingest.pipeline import IngestReport, expected_resources, ingest_paths

app = typer.Typer(help="Clinical Context Engine: patient facts and memories, linked.")


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
    workers: Annotated[
        int | None,
        typer.Option(
            help="Processes reading documents and validating NDJSON lines beside the writer"
            " (default: one per core; 1: none)."
        ),
    ] = None,
    accept_identity_mismatch: Annotated[
        bool,
        typer.Option(
            help="Write documents whose patient key matches a stored patient with other"
            " demographics (audited)."
        ),
    ] = False,
    patient: Annotated[
        str | None,
        typer.Option(
            help="Write every record to this patient id: an explicit assignment, which"
            " overrides (and audits) an identity refusal."
        ),
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Ingest EHR exports. Exit 0: all ingested; 1: some resources rejected or a document
    refused (its patient key matches a stored patient with other demographics); 2: unusable."""
    accept = accept_identity_mismatch
    with opened_store(store) as graph:
        if as_json:
            report = ingest_paths(
                graph,
                org_of(org),
                paths,
                patient_key,
                workers=workers,
                accept_identity_mismatch=accept,
                patient=patient,
            )
        else:
            report = _ingest_with_progress(
                graph, org_of(org), paths, patient_key, workers, accept, patient
            )
    if as_json:
        print_json(report.model_dump(mode="json") | {"exit_code": report.exit_code})
    else:
        _print_report(report)
    raise typer.Exit(report.exit_code)


def _ingest_with_progress(
    graph: GraphStore,
    org: str,
    paths: list[Path],
    patient_key: str | None,
    workers: int | None,
    accept: bool,
    patient: str | None,
) -> IngestReport:
    columns = (
        SpinnerColumn(),
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("{task.completed} resources"),
        TextColumn("[cyan]{task.fields[rate]}"),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=errors, transient=True) as progress:
        task = progress.add_task("ingesting", total=expected_resources(paths), rate="")

        def advance(n: int) -> None:
            progress.update(task, advance=n)
            speed = progress.tasks[0].speed
            progress.update(task, rate=f"{speed:,.0f} resources/s" if speed else "")

        return ingest_paths(
            graph,
            org,
            paths,
            patient_key,
            progress=advance,
            workers=workers,
            accept_identity_mismatch=accept,
            patient=patient,
        )


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
    explain: Annotated[
        bool, typer.Option("--explain", help="Say why each source joined its fact.")
    ] = False,
) -> None:
    """List a patient's merged facts, with resolution candidates (and merges, --explain)."""
    scope = scope_of(org, patient)
    with opened_store(store) as graph:
        found = graph.list_facts(scope, kind, status)
    if as_json:
        print_json([fact.model_dump(mode="json") for fact in found])
        return
    console.print(_facts_table(patient, found))
    for line in _resolution_lines(found, explain):
        console.print(line, markup=False, highlight=False)


def _facts_table(patient: str, found: list[Fact]) -> Table:
    table = Table(title=f"{len(found)} facts of {patient}")
    for column in ("kind", "label", "status", "key", "sources", "conflicts", "candidates"):
        table.add_column(column)
    for fact in found:
        table.add_row(
            escape(fact.kind.value),
            escape(fact.label),
            escape(fact.status or ""),
            escape(fact.fact_key),
            str(len(fact.sources)),
            ", ".join(c.field for c in fact.conflicts),
            str(len(fact.candidates) or ""),
        )
    return table


def _resolution_lines(found: list[Fact], explain: bool) -> list[str]:
    lines = [
        f"candidate: {c.source_ref} ({c.label}) is in {fact.fact_key}"
        f" and matches {', '.join(c.fact_keys)} too; not merged"
        for fact in found
        for c in fact.candidates
    ]
    if explain:
        lines += [
            f"{fact.fact_key}: {m.source_ref} merged by {describe(m)}"
            for fact in found
            for m in fact.merged_by
        ]
    return lines


@app.command()
def erase(
    patient: str,
    store: StoreOption = None,
    org: OrgOption = None,
    yes: Annotated[bool, typer.Option("--yes", help="Do not ask for confirmation.")] = False,
    as_json: JsonOption = False,
) -> None:
    """Erase everything of one patient, then verify that nothing remains."""
    scope = scope_of(org, patient)
    if not yes and not typer.confirm(f"Erase every record of patient {patient}?"):
        raise typer.Exit(1)
    with opened_store(store) as graph:
        removed = graph.erase_patient(scope)
        remaining = graph.count_patient_items(scope)
    if as_json:
        print_json({"patient": patient, "removed": removed, "remaining": remaining})
    else:
        console.print(f"erased {patient}: {removed} items removed, {remaining} remaining")
    if remaining:
        raise typer.Exit(1)


@app.command()
def serve(
    host: Annotated[str, typer.Option(help="Interface to bind.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="TCP port.")] = 8000,
    store: StoreOption = None,
    workers: Annotated[
        int, typer.Option(min=1, help="Worker processes, each with its own store connection.")
    ] = 1,
) -> None:
    """Serve the HTTP API, /mcp and the web viewer (loopback only until auth is configured).

    The server starts even while Neo4j is down: /health/ready answers 503 until it is up.
    """
    import ipaddress
    import os

    import uvicorn

    from api.app import create_app

    try:
        loopback = host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = False
    if not loopback and not get_settings().auth_configured:
        errors.print(
            f"[red]error:[/red] refusing to bind to {host}: no authentication is configured, so"
            " every caller would act with every scope in org"
            f" {get_settings().org!r}. Set CCE_OIDC_ISSUER and CCE_OIDC_AUDIENCE, or"
            " CCE_API_KEYS / CCE_API_KEYS_FILE, or bind to 127.0.0.1."
        )
        raise typer.Exit(2)
    # The app logs one JSON line per request; uvicorn's own line has the raw path and
    # query string, which can carry clinical search terms.
    options: dict[str, Any] = {
        "host": host,
        "port": port,
        "access_log": False,
        "timeout_keep_alive": get_settings().keep_alive_seconds,
    }
    if workers > 1:
        # Worker processes build the app themselves and read the store URL from the
        # environment they inherit, as they read every other setting.
        os.environ["CCE_STORE_URL"] = store or get_settings().store_url
        # one CSRF key for all workers: a form served by one may be posted to another
        if not get_settings().viewer_secret.get_secret_value():
            os.environ["CCE_VIEWER_SECRET"] = secrets.token_urlsafe(32)
        factory = "api.app:create_app"
        uvicorn.run(factory, factory=True, workers=workers, **options)
        return
    graph = open_store(store or get_settings().store_url, wait=True)
    try:
        uvicorn.run(create_app(graph), **options)
    finally:
        graph.close()


def _register() -> None:
    from api import cli_demo, cli_export, cli_memories, cli_vfs

    app.add_typer(cli_memories.session_app, name="session")
    app.command("generate-memories")(cli_memories.generate_memories_command)
    app.add_typer(cli_memories.memories_app, name="memories")
    app.command("eval")(cli_memories.eval_command)
    app.command("demo")(cli_demo.demo_command)
    app.command("export")(cli_export.export_command)
    app.add_typer(cli_vfs.vfs_app, name="vfs")
    app.command("mcp")(cli_vfs.mcp_command)


_register()


if __name__ == "__main__":
    app()
