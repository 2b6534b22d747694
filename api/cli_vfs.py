"""`cce vfs ls|cat|tree|grep PATIENT [PATH]`: the VFS of one patient in a terminal."""

import re
from collections.abc import Iterator
from typing import Annotated, Any

import typer

import vfs
from api.cli_common import (
    AsOfOption,
    JsonOption,
    OrgOption,
    StoreOption,
    as_of_of,
    errors,
    opened_store,
    print_json,
    scope_of,
)
from engine.as_of import AsOf
from engine.models import Scope
from engine.settings import get_settings
from engine.store import GraphStore
from vfs import Format, VfsDir, VfsFile

vfs_app = typer.Typer(help="Browse a patient's virtual filesystem (markdown views).")

PathArgument = Annotated[str, typer.Argument(help="A VFS path; `/` is the patient's root.")]
# Text from the graph may hold terminal control sequences (patient-reported search
# snippets are not escaped): they are shown, never sent to the terminal.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def printable(text: str) -> str:
    """Text with control characters other than newlines shown as `?`."""
    return _CONTROL.sub("?", text)


def _listing(graph: GraphStore, scope: Scope, path: str, as_of: AsOf) -> VfsDir:
    found = vfs.read(graph, scope, path, as_of=as_of)
    if isinstance(found, VfsFile):
        errors.print(f"[red]error:[/red] {found.path} is a file: use `cce vfs cat`")
        raise typer.Exit(2)
    return found


@vfs_app.command("ls")
def ls(
    patient: str,
    path: PathArgument = "/",
    store: StoreOption = None,
    org: OrgOption = None,
    as_json: JsonOption = False,
    as_of: AsOfOption = None,
) -> None:
    """List a directory: subdirectories (ending in `/`) first, then files."""
    scope, cutoff = scope_of(org, patient), as_of_of(as_of)
    with opened_store(store) as graph:
        listing = _listing(graph, scope, path, cutoff)
    if as_json:
        print_json(listing.model_dump(mode="json"))
        return
    for entry in listing.entries:
        typer.echo(entry.name + ("/" if entry.kind == "dir" else ""))


@vfs_app.command("cat")
def cat(
    patient: str,
    path: PathArgument,
    format: Annotated[Format, typer.Option(help="narrative, compact or structured.")] = (
        Format.NARRATIVE
    ),
    token_budget: Annotated[
        int | None, typer.Option(min=1, help="Cut to about this many tokens, on whole items.")
    ] = None,
    store: StoreOption = None,
    org: OrgOption = None,
    as_json: JsonOption = False,
    as_of: AsOfOption = None,
) -> None:
    """Print a file rendered from the live graph (a directory prints its listing)."""
    scope, cutoff = scope_of(org, patient), as_of_of(as_of)
    with opened_store(store) as graph:
        found = vfs.read(graph, scope, path, format=format, token_budget=token_budget, as_of=cutoff)
    if as_json:
        print_json(found.model_dump(mode="json"))
    elif isinstance(found, VfsFile):
        typer.echo(found.content, nl=not found.content.endswith("\n"))
    else:
        for entry in found.entries:
            typer.echo(entry.name + ("/" if entry.kind == "dir" else ""))


def _subtree(graph: GraphStore, scope: Scope, path: str, as_of: AsOf) -> dict[str, Any]:
    entries = []
    for entry in vfs.list_dir(graph, scope, path, as_of).entries:
        if entry.kind == "dir":
            entries.append(_subtree(graph, scope, entry.path, as_of) | {"name": entry.name})
        else:
            entries.append({"name": entry.name, "path": entry.path, "kind": "file"})
    return {"path": path, "kind": "dir", "entries": entries}


def _tree_lines(node: dict[str, Any], prefix: str = "") -> Iterator[str]:
    entries = node["entries"]
    for index, entry in enumerate(entries):
        last = index == len(entries) - 1
        suffix = "/" if entry["kind"] == "dir" else ""
        yield f"{prefix}{'└── ' if last else '├── '}{entry['name']}{suffix}"
        if entry["kind"] == "dir":
            yield from _tree_lines(entry, prefix + ("    " if last else "│   "))


@vfs_app.command("tree")
def tree(
    patient: str,
    path: PathArgument = "/",
    store: StoreOption = None,
    org: OrgOption = None,
    as_json: JsonOption = False,
    as_of: AsOfOption = None,
) -> None:
    """Walk a directory and everything below it."""
    scope, cutoff = scope_of(org, patient), as_of_of(as_of)
    with opened_store(store) as graph:
        root = _subtree(graph, scope, _listing(graph, scope, path, cutoff).path, cutoff)
    if as_json:
        print_json(root)
        return
    typer.echo(root["path"])
    for line in _tree_lines(root):
        typer.echo(line)


def _files(graph: GraphStore, scope: Scope, path: str, as_of: AsOf) -> Iterator[str]:
    found = vfs.read(graph, scope, path, as_of=as_of)
    if isinstance(found, VfsFile):
        yield found.path
        return
    for entry in found.entries:
        if entry.kind == "dir":
            yield from _files(graph, scope, entry.path, as_of)
        else:
            yield entry.path


def _grep(
    graph: GraphStore, scope: Scope, pattern: re.Pattern[str], path: str, as_of: AsOf
) -> list[dict[str, Any]]:
    matched = []
    for file_path in _files(graph, scope, path, as_of):
        found = vfs.read(graph, scope, file_path, as_of=as_of)
        assert isinstance(found, VfsFile)
        for number, line in enumerate(found.content.splitlines(), start=1):
            if pattern.search(line):
                matched.append({"path": file_path, "line": number, "text": line})
    return matched


def _compile(pattern: str, ignore_case: bool) -> re.Pattern[str]:
    try:
        return re.compile(pattern, re.IGNORECASE if ignore_case else 0)
    except re.error as e:
        errors.print(f"[red]error:[/red] {pattern!r} is not a regular expression: {e}")
        raise typer.Exit(2) from e


@vfs_app.command("grep")
def grep(
    patient: str,
    pattern: Annotated[str, typer.Argument(help="A regular expression (or words, --ranked).")],
    path: PathArgument = "/",
    ignore_case: Annotated[
        bool, typer.Option("--ignore-case", "-i", help="Match regardless of case.")
    ] = False,
    ranked: Annotated[
        bool, typer.Option("--ranked", help="Ranked search (BM25) over facts, memories, files.")
    ] = False,
    limit: Annotated[int, typer.Option(min=1, max=100, help="Hits of --ranked.")] = 10,
    store: StoreOption = None,
    org: OrgOption = None,
    as_json: JsonOption = False,
    as_of: AsOfOption = None,
) -> None:
    """Lines of the rendered files under PATH that match PATTERN. Exit 1 when none match."""
    scope, cutoff = scope_of(org, patient), as_of_of(as_of)
    regex = None if ranked else _compile(pattern, ignore_case)
    with opened_store(store) as graph:
        if regex is None:
            found = vfs.search(graph, scope, pattern, limit, as_of=cutoff)
            hits = [hit.model_dump(mode="json") for hit in found]
        else:
            hits = _grep(graph, scope, regex, path, cutoff)
    if as_json:
        print_json(hits)
    elif regex is None:
        for hit in hits:
            mark = " [patient-reported, unverified]" if hit["untrusted"] else ""
            typer.echo(f"{hit['path']}  {hit['score']:.2f}  {printable(hit['title'])}{mark}")
            typer.echo(f"    {printable(hit['snippet'])}")
    else:
        for hit in hits:
            typer.echo(f"{hit['path']}:{hit['line']}: {printable(hit['text'])}")
    if not hits:
        raise typer.Exit(1)


def mcp_command(store: StoreOption = None, org: OrgOption = None) -> None:
    """Serve the MCP tools over stdio for a local agent, as the org's local principal."""
    from api.mcp_server import serve_stdio

    scope = scope_of(org, "mcp")  # validates the org id
    with opened_store(store) as graph:
        serve_stdio(graph, get_settings(), scope.org)
