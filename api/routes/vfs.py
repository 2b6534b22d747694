"""The VFS over HTTP (SPEC §4, §5): files as markdown or JSON, directory listings, search.

A file answers with its etag; a conditional GET whose `If-None-Match` names it gets a 304
and no body. Bad paths raise the VFS errors (`VfsNotFound`, `VfsInvalidPath`), which the
problem-details handler turns into a 404 or 422 that lists the nearest directory.
"""

from typing import Annotated

from fastapi import APIRouter, Header, Query, Response
from pydantic import BaseModel

import vfs
from api.deps import RECORD_READ, ScopeDep, StoreDep, require
from engine.as_of import parse_as_of
from vfs import Format, SearchHit, VfsDir, VfsFile

router = APIRouter(prefix="/v1/patients/{pid}", tags=["vfs"])

MAX_BUDGET = 1_000_000
MAX_QUERY = 1000
AsOfQuery = Annotated[
    str | None,
    Query(
        max_length=64,
        description="Render as the engine knew the patient then: YYYY-MM-DD (end of that day,"
        " UTC) or an ISO 8601 instant with an offset. A bad value is a 422.",
    ),
]
# Clinical content: no shared cache may keep it, and a private one must revalidate.
CACHE_CONTROL = "private, no-cache"


class SearchResults(BaseModel):
    patient: str
    query: str
    hits: list[SearchHit]


def etag_header(etag: str) -> str:
    """The strong validator of a VFS file, quoted as RFC 9110 wants it."""
    return f'"{etag}"'


def matches(if_none_match: str | None, etag: str) -> bool:
    """Whether an `If-None-Match` value names `etag` (weak comparison, `*` included)."""
    if not if_none_match:
        return False
    wanted = etag_header(etag)
    for candidate in if_none_match.split(","):
        tag = candidate.strip().removeprefix("W/")
        if tag in ("*", wanted):
            return True
    return False


def file_response(found: VfsFile, if_none_match: str | None) -> Response:
    """The file with its validators, or a 304 when the caller already holds it."""
    headers = {"ETag": etag_header(found.etag), "Cache-Control": CACHE_CONTROL}
    if matches(if_none_match, found.etag):
        return Response(status_code=304, headers=headers)
    headers["X-Token-Estimate"] = str(found.tokens)
    if found.truncated:
        headers["X-Truncated"] = "true"
    media_type = found.media_type
    if media_type.startswith("text/"):
        media_type += "; charset=utf-8"
    return Response(found.content.encode(), media_type=media_type, headers=headers)


@router.get(
    "/vfs/{path:path}",
    dependencies=[require(RECORD_READ)],
    response_model=None,
    responses={
        200: {
            "description": "A file (markdown or JSON) or a directory listing",
            "content": {"text/markdown": {}, "application/json": {}},
        },
        304: {"description": "The file has not changed since the given ETag"},
    },
)
def read_path(
    store: StoreDep,
    scope: ScopeDep,
    path: str,
    format: Format = Format.NARRATIVE,
    token_budget: Annotated[int | None, Query(ge=1, le=MAX_BUDGET)] = None,
    include_dismissed: bool = False,
    if_none_match: Annotated[str | None, Header()] = None,
    as_of: AsOfQuery = None,
) -> Response | VfsDir:
    """A VFS file rendered from the graph (as of `as_of`, if given), or the listing of a
    directory (`/` is root).

    Memories a clinician dismissed are left out unless `include_dismissed=true`."""
    found = vfs.read(
        store,
        scope,
        path or "/",
        format=format,
        token_budget=token_budget,
        include_dismissed=include_dismissed,
        as_of=parse_as_of(as_of),
    )
    if isinstance(found, VfsFile):
        return file_response(found, if_none_match)
    return found


@router.get("/search", dependencies=[require(RECORD_READ)])
def search(
    store: StoreDep,
    scope: ScopeDep,
    q: Annotated[str, Query(max_length=MAX_QUERY)] = "",
    limit: Annotated[int, Query(ge=1, le=100)] = 10,
    as_of: AsOfQuery = None,
) -> SearchResults:
    """Ranked hits over facts, memories and rendered files; memory snippets are `untrusted`."""
    cutoff = parse_as_of(as_of)
    store.get_patient(scope)  # an unknown patient is a 404 whatever the query
    hits = vfs.search(store, scope, q, limit, as_of=cutoff)
    return SearchResults(patient=scope.patient, query=q, hits=hits)
