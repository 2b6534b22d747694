"""The VFS entry points: `read` and `list_dir` route a path to a directory or a renderer.

Paths are absolute from the patient's root (`/conditions/active/`), or relative to it
without the leading `/`. They are percent-decoded once; then every segment must be a plain
name (`A-Z a-z 0-9 _ . -`): `..`, `.`, empty segments, backslashes, drive letters, `~` and
leftover `%` are refused with `InvalidInput`, unknown names with `VfsNotFound`; both
messages list what the closest existing directory holds. Nothing is cached between calls.
"""

import re
from dataclasses import replace
from urllib.parse import unquote

from engine.as_of import AsOf
from engine.errors import InvalidInput
from engine.models import Scope
from engine.store import GraphStore
from vfs import markdown, structured
from vfs.budget import cut_chunks
from vfs.graph import PatientGraph
from vfs.models import JSON, Format, VfsDir, VfsEntry, VfsFile, VfsNotFound, make_file
from vfs.plan import request_for
from vfs.render_conditions import cut_raw
from vfs.tree import Children, FileNode, children

MAX_PATH = 1024
_SEGMENT = re.compile(r"^[A-Za-z0-9_.\-]{1,200}$")


class VfsInvalidPath(InvalidInput):
    """A path that is not a VFS path at all; `nearby` as for `VfsNotFound`."""

    def __init__(self, reason: str, directory: str, nearby: tuple[str, ...]) -> None:
        shown = ", ".join(nearby[:25]) or "(nothing)"
        super().__init__(f"{reason}; {directory} contains: {shown}")
        self.directory = directory
        self.nearby = nearby


def split(path: str) -> tuple[tuple[str, ...], str | None]:
    """Path segments, and why the path is invalid (None when it is fine).

    The segments returned with a reason are the valid ones before the bad segment.
    """
    if len(path) > MAX_PATH:
        return (), f"path longer than {MAX_PATH} characters"
    try:
        decoded = unquote(path, errors="strict") if "%" in path else path
    except UnicodeDecodeError:
        return (), "percent-encoding that is not UTF-8"
    body = decoded.removeprefix("/").removesuffix("/")
    if not body:
        return (), None
    segments: list[str] = []
    for segment in body.split("/"):
        if segment in {".", ".."}:
            return tuple(segments), f"{segment!r} is not allowed: VFS paths are absolute"
        if not _SEGMENT.match(segment):
            what = "an empty segment" if not segment else repr(segment)
            return tuple(segments), f"{what} is not a VFS name (letters, digits, _ . - only)"
        segments.append(segment)
    return tuple(segments), None


def _path(segments: tuple[str, ...], is_dir: bool) -> str:
    joined = "/" + "/".join(segments)
    return joined + "/" if is_dir and segments else joined


def _names(found: Children) -> tuple[str, ...]:
    dirs = sorted(name + "/" for name, node in found.items() if node is None)
    return tuple(dirs + sorted(name for name, node in found.items() if node is not None))


def _nearest(graph: PatientGraph, segments: tuple[str, ...]) -> tuple[str, tuple[str, ...]]:
    """The deepest existing directory on the way to `segments`, and its entries."""
    at: tuple[str, ...] = ()
    for segment in segments:
        found = children(graph, at) or {}
        if found.get(segment, False) is not None:
            break
        at = (*at, segment)
    return _path(at, True), _names(children(graph, at) or {})


def _lookup(found: Children, name: str, at: tuple[str, ...]) -> tuple[str, FileNode | None] | None:
    if name in found:
        return name, found[name]
    # Medication files have no extension (SPEC §4); `{slug}.md` is accepted for them too.
    if at and at[0] == "medications" and name.endswith(".md"):
        bare = name.removesuffix(".md")
        if isinstance(found.get(bare), FileNode):
            return bare, found[bare]
    return None


def resolve(graph: PatientGraph, path: str) -> tuple[str, FileNode | None]:
    """The canonical path and the node of `path` (None for a directory).

    Raises:
        VfsInvalidPath: the path is malformed.
        VfsNotFound: no such file or directory.
    """
    segments, invalid = split(path)
    if invalid:
        raise VfsInvalidPath(f"invalid VFS path {path!r}: {invalid}", *_nearest(graph, segments))
    at: tuple[str, ...] = ()
    node: FileNode | None = None
    for index, segment in enumerate(segments):
        found = children(graph, at) if node is None else None
        hit = _lookup(found, segment, at) if found is not None else None
        if hit is None:
            raise VfsNotFound(_path(segments, False), *_nearest(graph, segments[:index]))
        name, node = hit
        at = (*at, name)
    return _path(at, node is None), node


def _entries(graph: PatientGraph, path: str) -> VfsDir:
    segments = tuple(s for s in path.strip("/").split("/") if s)
    found = children(graph, segments) or {}
    entries = tuple(
        VfsEntry(
            name=name.removesuffix("/"),
            path=_path((*segments, name.removesuffix("/")), name.endswith("/")),
            kind="dir" if name.endswith("/") else "file",
        )
        for name in _names(found)
    )
    return VfsDir(path=path, entries=entries)


def _format(value: Format | str) -> Format:
    try:
        return Format(value)
    except ValueError:
        allowed = ", ".join(f.value for f in Format)
        raise InvalidInput(f"unknown format {value!r}: use one of {allowed}") from None


def _render(path: str, node: FileNode, fmt: Format, budget: int | None) -> VfsFile:
    if node.data is not None:
        data, truncated = {"path": path, **node.data()}, False
        if budget is not None:
            data, truncated = cut_raw(data, budget)
        content = structured.dump(data, pretty=fmt is not Format.COMPACT)
        return make_file(path, JSON, fmt, content, truncated)
    assert node.doc is not None
    doc = replace(node.doc(), path=path)
    if fmt is Format.STRUCTURED:
        data, omitted = structured.to_data(doc, budget)
        return make_file(path, JSON, fmt, structured.dump(data), bool(omitted))
    parts = markdown.chunks(doc, compact=fmt is Format.COMPACT)
    if budget is None:
        return make_file(path, node.media_type, fmt, markdown.join(parts), False)
    content, omissions = cut_chunks(doc, parts, budget)
    return make_file(path, node.media_type, fmt, content, bool(omissions))


def read(
    store: GraphStore,
    scope: Scope,
    path: str,
    format: Format | str = Format.NARRATIVE,
    token_budget: int | None = None,
    include_dismissed: bool = False,
    as_of: AsOf = None,
) -> VfsFile | VfsDir:
    """Renders one VFS path from the live graph.

    Args:
        store: the graph store.
        scope: the (org, patient) to read.
        path: a VFS path (`/patient.md`, `conditions/active/`...).
        format: narrative, compact or structured (see `Format`).
        token_budget: at most this many tokens (≈ characters / 4), cut on a whole item,
            with a closing note on what was left out; the header is always kept.
        include_dismissed: also show the memories a clinician dismissed where views leave
            them out (`/memory/{type}.md` always lists them under "Dismissed").
        as_of: render the record and the memories as the engine knew them at this
            instant (`engine.as_of`); None for the live graph.

    Returns:
        The file, or the listing when the path is a directory.

    Raises:
        NotFound: the patient does not exist, or `VfsNotFound` for the path.
        InvalidInput: a malformed path (`VfsInvalidPath`), format or budget.
    """
    fmt = _format(format)
    if token_budget is not None and token_budget < 1:
        raise InvalidInput(f"token_budget must be a positive number of tokens, not {token_budget}")
    graph = PatientGraph(store, scope, as_of=as_of, include_dismissed=include_dismissed)
    graph.load(request_for(split(path)[0]))  # NotFound for an unknown patient
    canonical, node = resolve(graph, path)
    if node is None:
        return _entries(graph, canonical)
    return _render(canonical, node, fmt, token_budget)


def list_dir(store: GraphStore, scope: Scope, path: str = "/", as_of: AsOf = None) -> VfsDir:
    """The entries of a VFS directory (as of `as_of`, as `read`), subdirectories first.

    Raises:
        NotFound: the patient or the path does not exist.
        InvalidInput: a malformed path, or the path of a file.
    """
    graph = PatientGraph(store, scope, as_of=as_of)
    graph.load(request_for(split(path)[0]))  # NotFound for an unknown patient
    canonical, node = resolve(graph, path)
    if node is not None:
        raise InvalidInput(f"{canonical} is a file, not a directory: read it instead")
    return _entries(graph, canonical)
