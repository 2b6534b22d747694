"""What the VFS hands to its callers (HTTP routes, CLI, MCP, web viewer): plain data."""

import hashlib
from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict

from engine.errors import NotFound
from vfs.budget import estimate_tokens

MARKDOWN = "text/markdown"
JSON = "application/json"


class Format(StrEnum):
    """How a file is rendered.

    `narrative`: full markdown for people: headings, labelled fields, every detail.
    `compact`: the same headings, one line per item, empty sections left out; for agents
    with little context. `structured`: JSON (application/json) of the same document: title,
    header fields, sections of items; patient-reported text under `patient_reported`.
    """

    NARRATIVE = "narrative"
    COMPACT = "compact"
    STRUCTURED = "structured"


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class VfsEntry(_Frozen):
    """One entry of a directory listing."""

    name: str
    path: str
    kind: Literal["file", "dir"]


class VfsDir(_Frozen):
    """A directory: its absolute path (ending in `/`) and its entries, directories first."""

    path: str
    entries: tuple[VfsEntry, ...]


class VfsFile(_Frozen):
    """A rendered file; `etag` is the SHA-256 of `content`, so it changes with the graph."""

    path: str
    media_type: str
    format: Format
    content: str
    etag: str
    tokens: int
    truncated: bool = False


class SearchHit(_Frozen):
    """One ranked search result; `untrusted` when the snippet is patient-reported text."""

    path: str
    kind: Literal["fact", "memory", "file"]
    title: str
    snippet: str
    score: float
    untrusted: bool = False


class VfsNotFound(NotFound):
    """An unknown VFS path; `nearby` are the entries of its closest existing directory."""

    def __init__(self, path: str, directory: str, nearby: tuple[str, ...]) -> None:
        super().__init__("VFS path", path)
        self.directory = directory
        self.nearby = nearby
        self.args = (f"no such VFS path {path!r}; {directory} contains: {_names(nearby)}",)


def _names(names: tuple[str, ...], limit: int = 25) -> str:
    if not names:
        return "(nothing)"
    shown = ", ".join(names[:limit])
    return shown + (f", ... and {len(names) - limit} more" if len(names) > limit else "")


def make_file(path: str, media_type: str, fmt: Format, content: str, truncated: bool) -> VfsFile:
    """A VfsFile with its etag and approximate token count filled in."""
    etag = hashlib.sha256(content.encode()).hexdigest()
    tokens = estimate_tokens(content)
    return VfsFile(
        path=path,
        media_type=media_type,
        format=fmt,
        content=content,
        etag=etag,
        tokens=tokens,
        truncated=truncated,
    )
