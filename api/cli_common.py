"""What every `cce` command shares: options, consoles, opening the store, the scope."""

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated, Any

import typer
from rich.console import Console

from engine.as_of import AsOf, parse_as_of
from engine.errors import EngineError, InvalidInput
from engine.models import Scope
from engine.settings import get_settings
from engine.store import GraphStore, open_store

console = Console()
errors = Console(stderr=True)

StoreOption = Annotated[
    str | None, typer.Option("--store", help="Store URL (default: CCE_STORE_URL).")
]
OrgOption = Annotated[str | None, typer.Option("--org", help="Tenant (default: CCE_ORG).")]
JsonOption = Annotated[bool, typer.Option("--json", help="Machine-readable output.")]
AsOfOption = Annotated[
    str | None,
    typer.Option(
        "--as-of",
        help="Show the record as the engine knew it then: YYYY-MM-DD (end of day, UTC)"
        " or an ISO 8601 instant with an offset.",
    ),
]


@contextmanager
def opened_store(url: str | None) -> Iterator[GraphStore]:
    """The store named by `--store` or CCE_STORE_URL; engine errors exit with status 2."""
    store = open_store(url or get_settings().store_url)
    try:
        yield store
    except EngineError as e:
        errors.print(f"[red]error:[/red] {e}")
        raise typer.Exit(2) from e
    finally:
        store.close()


def org_of(org: str | None) -> str:
    return org or get_settings().org


def scope_of(org: str | None, patient: str) -> Scope:
    """The scope, or exit 2 with the rule that the ids break."""
    try:
        return Scope(org=org_of(org), patient=patient)
    except ValueError as e:
        errors.print("[red]error:[/red] patient and org ids must match ^[A-Za-z0-9._-]{1,128}$")
        raise typer.Exit(2) from e


def as_of_of(text: str | None) -> AsOf:
    """The `--as-of` cutoff, or exit 2 saying what a valid one looks like."""
    try:
        return parse_as_of(text)
    except InvalidInput as e:
        errors.print(f"[red]error:[/red] {e}")
        raise typer.Exit(2) from e


def print_json(value: Any) -> None:
    typer.echo(json.dumps(value, indent=2, default=str))
