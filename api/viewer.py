"""The clinician web viewer on `cce serve`: plain server-rendered HTML, no script at all.

Pages: `/` lists the org's patients; `/patients/{pid}/vfs/{path}` shows the VFS tree (the
directories on the way to `path`, opened) beside the file, its markdown rendered to HTML
on the server; `/patients/{pid}/search?q=` lists ranked hits. Reads go through the API's
authentication and need `record:read`; without configured auth they are the local
principal's, and only loopback Host headers are served (no DNS rebinding).

Markdown is rendered by markdown-it-py with raw HTML disabled, and every other value by
Jinja2 with autoescaping, so nothing from the record or a conversation becomes markup.
VFS links are rewritten to viewer pages (any other link loses its target); list items
that the VFS flags `**DISCREPANCY**` get the `discrepancy` class, and the quote blocks of
patient-reported text the `reported` class. A strict Content-Security-Policy forbids
scripts, frames and foreign resources on every page.
"""

from pathlib import Path as FilePath
from typing import Annotated, Any
from urllib.parse import quote, urlencode

from fastapi import APIRouter, Depends, FastAPI, Form, HTTPException, Path, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse
from fastapi.staticfiles import StaticFiles
from jinja2 import Environment, FileSystemLoader, select_autoescape
from markdown_it import MarkdownIt
from markdown_it.token import Token
from markupsafe import Markup

import vfs
from api import viewer_reviews
from api.charts import lab_chart, timeline_chart
from api.deps import (
    MEMORY_REVIEW,
    PID_PATTERN,
    RECORD_READ,
    PrincipalDep,
    ScopeDep,
    SettingsDep,
    StoreDep,
    authenticate,
    require,
)
from api.problems import STATUS
from engine.as_of import AsOf, parse_as_of
from engine.errors import EngineError, InvalidInput
from engine.memories.reviews import review_memory
from engine.models import DismissReason, ReviewAction, Scope
from engine.store import GraphStore
from vfs import Format, VfsDir, VfsEntry
from vfs.graph import PatientGraph

HERE = FilePath(__file__).parent
CSP = (
    "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self';"
    " base-uri 'none'; frame-ancestors 'none'"
)
SECURITY_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}
LOOPBACK = {"127.0.0.1", "localhost", "[::1]"}
MAX_PATIENTS = 500
DISCREPANCY = "DISCREPANCY"
REPORTED = "Patient-reported"

templates = Environment(
    loader=FileSystemLoader(HERE / "templates"),
    autoescape=select_autoescape(default=True, default_for_string=True),
    trim_blocks=True,
    lstrip_blocks=True,
)
_markdown = MarkdownIt("commonmark", {"html": False}).enable("table")


def _starts_with_strong(tokens: list[Token], index: int, word: str) -> bool:
    """Whether the first inline token after `index` opens with `**word...**`."""
    inline = next((t for t in tokens[index + 1 :] if t.type == "inline"), None)
    children = (
        [c for c in (inline.children or []) if c.type != "text" or c.content] if inline else []
    )
    return (
        len(children) >= 2
        and children[0].type == "strong_open"
        and children[1].type == "text"
        and children[1].content.startswith(word)
    )


def _relink(children: list[Token], base: str, query: str) -> None:
    for child in children:
        if child.type != "link_open":
            continue
        href = str(child.attrGet("href") or "")
        if href.startswith("/") and not href.startswith("//"):
            child.attrSet("href", base + quote(href.lstrip("/"), safe="/._-~") + query)
        else:
            child.attrs = {}


def render_markdown(text: str, base: str, query: str = "") -> Markup:
    """VFS markdown as safe HTML; VFS links point below `base` (a viewer URL ending in /).

    `query` (`?as_of=...` or empty) is appended to each VFS link, so a view stays as of.
    """
    tokens = _markdown.parse(text)
    for index, token in enumerate(tokens):
        if token.type == "list_item_open" and _starts_with_strong(tokens, index, DISCREPANCY):
            token.attrJoin("class", "discrepancy")
        elif token.type == "blockquote_open" and _starts_with_strong(tokens, index, REPORTED):
            token.attrJoin("class", "reported")
        elif token.type == "inline":
            _relink(token.children or [], base, query)
    return Markup(_markdown.renderer.render(tokens, _markdown.options, {}))


def page(name: str, status: int = 200, **values: Any) -> HTMLResponse:
    """A template rendered, with the security headers."""
    html = templates.get_template(name).render(**values)
    return HTMLResponse(html, status_code=status, headers=SECURITY_HEADERS)


def loopback_only(request: Request, settings: SettingsDep) -> None:
    """Without auth, a page for a non-loopback Host could be a DNS-rebinding attack."""
    host = (request.headers.get("host") or "").lower()
    name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
    if not settings.auth_configured and name not in LOOPBACK:
        raise HTTPException(403, "without authentication the viewer answers loopback hosts only")


router = APIRouter(include_in_schema=False, dependencies=[Depends(loopback_only)])
Reader = [require(RECORD_READ)]


def viewer_url(pid: str, path: str = "/", as_of: str | None = None) -> str:
    """The viewer page of a VFS path (as of `as_of`, when given)."""
    url = f"/patients/{quote(pid, safe='')}/vfs/{quote(path.lstrip('/'), safe='/._-~')}"
    return url + as_of_query(as_of)


def as_of_query(as_of: str | None) -> str:
    """`?as_of=...` for a viewer link, or nothing without a cutoff."""
    return "?" + urlencode({"as_of": as_of}) if as_of else ""


@router.get("/", dependencies=Reader)
def patients(store: StoreDep, principal: PrincipalDep) -> HTMLResponse:
    """The org's patients, by id, with their names."""
    rows = []
    for pid in store.list_patients(principal.org)[:MAX_PATIENTS]:
        demographics = store.get_patient(Scope(org=principal.org, patient=pid))
        rows.append({"id": pid, "url": viewer_url(pid, "/patient.md"), "patient": demographics})
    return page("patients.html", org=principal.org, patients=rows)


@router.get("/patients/{pid}/", dependencies=Reader)
def patient_home(scope: ScopeDep) -> RedirectResponse:
    """A patient opens on /patient.md."""
    return RedirectResponse(viewer_url(scope.patient, "/patient.md"), status_code=303)


def _ancestors(path: str) -> list[str]:
    parts = [p for p in path.split("/") if p]
    return ["/" + "".join(f"{p}/" for p in parts[:depth]) for depth in range(len(parts) + 1)]


def _tree(
    store: GraphStore, scope: Scope, path: str, as_of: str | None = None
) -> list[dict[str, Any]]:
    """The root's entries, and below each directory on the way to `path`, its entries."""
    opened: dict[str, tuple[VfsEntry, ...]] = {}
    cutoff = parse_as_of(as_of)
    for directory in _ancestors(path):
        try:
            opened[directory] = vfs.list_dir(store, scope, directory, cutoff).entries
        except EngineError:
            break

    def nodes(directory: str) -> list[dict[str, Any]]:
        return [
            {
                "entry": entry,
                "url": viewer_url(scope.patient, entry.path, as_of),
                "current": entry.path == path,
                "children": nodes(entry.path) if entry.path in opened else None,
            }
            for entry in opened.get(directory, ())
        ]

    return nodes("/")


def _frame(scope: Scope, q: str = "") -> dict[str, Any]:
    """What every patient page shows around its content: header links, search box."""
    return {
        "pid": scope.patient,
        "q": q,
        "home_url": viewer_url(scope.patient, "/patient.md"),
        "search_url": f"/patients/{quote(scope.patient, safe='')}/search",
        "fhir_url": f"/v1/patients/{quote(scope.patient, safe='')}/fhir/patient-reported",
    }


def _failed(error: EngineError, name: str, values: dict[str, Any]) -> HTMLResponse:
    """The page with the error's message (404, 422); a store outage is left to the API's 503."""
    status = next((code for kind, code in STATUS.items() if isinstance(error, kind)), 500)
    if status >= 500:
        raise error
    return page(name, status, error=str(error), **values)


@router.get("/patients/{pid}/vfs/{path:path}", dependencies=Reader)
def browse(
    request: Request,
    store: StoreDep,
    scope: ScopeDep,
    principal: PrincipalDep,
    path: str,
    format: Format = Format.NARRATIVE,
    as_of: Annotated[str | None, Query(max_length=64)] = None,
) -> HTMLResponse:
    """A file rendered to HTML, or a directory's entries, beside the tree (`as_of` as the
    API); a live memory file with a review form for each memory."""
    values = _frame(scope) | {"format": format.value, "formats": list(Format), "path": "/" + path}
    values["as_of"] = as_of = (as_of or "").strip() or None
    try:
        values["patient"] = store.get_patient(scope)
        cutoff = parse_as_of(as_of)
        found = vfs.read(store, scope, path or "/", format=format, as_of=cutoff)
    except EngineError as e:
        values["as_of"] = None  # the tree beside the error is the live one
        return _failed(e, "browse.html", values | {"nodes": _tree(store, scope, "/")})
    values |= {"path": found.path, "nodes": _tree(store, scope, found.path, as_of)}
    if isinstance(found, VfsDir):
        entries = [
            {"entry": e, "url": viewer_url(scope.patient, e.path, as_of)} for e in found.entries
        ]
        return page("browse.html", listing=entries, **values)
    values["file_url"] = viewer_url(scope.patient, found.path)
    values["chart"] = _chart(store, scope, found.path, cutoff)
    if found.media_type.startswith("text/markdown"):
        base = f"/patients/{quote(scope.patient, safe='')}/vfs/"
        values["html"] = render_markdown(found.content, base, as_of_query(as_of))
    else:
        values["text"] = found.content
    type = viewer_reviews.memory_type(found.path)
    if type is None or cutoff is not None:  # a past view is read, not reviewed
        return page("browse.html", **values)
    token = viewer_reviews.csrf_token(request, principal)
    response = page(
        "browse.html",
        reviews=viewer_reviews.review_rows(store, scope, type),
        reasons=viewer_reviews.REASONS,
        csrf=token,
        review_base=f"/patients/{quote(scope.patient, safe='')}/memories/",
        **values,
    )
    viewer_reviews.set_cookie(response, request, token)
    return response


@router.post(
    "/patients/{pid}/memories/{mid}/reviews",
    dependencies=[require(MEMORY_REVIEW)],
    response_model=None,
)
def review(
    request: Request,
    store: StoreDep,
    scope: ScopeDep,
    principal: PrincipalDep,
    mid: Annotated[str, Path(pattern=PID_PATTERN)],
    csrf: Annotated[str, Form()] = "",
    action: Annotated[str, Form()] = "",
    reason: Annotated[str, Form()] = "",
    note: Annotated[str, Form()] = "",
) -> HTMLResponse | RedirectResponse:
    """A review form's post: appended, then back to the memory page (post/redirect/get)."""
    if not viewer_reviews.csrf_ok(request, principal, csrf):
        raise HTTPException(403, "the form's CSRF token is missing or wrong: reload the page")
    try:
        type = store.get_memory(scope, mid).type
        chosen = _action(action)
        why = DismissReason(reason) if chosen is ReviewAction.DISMISS and reason else None
        review_memory(store, scope, mid, principal.actor, chosen, why, note)
    except (EngineError, ValueError) as e:
        error = e if isinstance(e, EngineError) else InvalidInput(f"unknown reason {reason!r}")
        values = _frame(scope) | {"path": f"/memory/{mid}", "nodes": _tree(store, scope, "/")}
        return _failed(error, "browse.html", values)
    back = viewer_url(scope.patient, f"/memory/{type.value}.md") + f"#memory-{mid}"
    return RedirectResponse(back, status_code=303)


def _action(value: str) -> ReviewAction:
    try:
        return ReviewAction(value)
    except ValueError as e:
        raise InvalidInput(f"unknown review action {value!r}") from e


def _chart(store: GraphStore, scope: Scope, path: str, cutoff: AsOf) -> Markup | None:
    """The chart of a lab's page (`/labs/{slug}.md`) or of `/timeline.md`; None elsewhere."""
    match path.strip("/").split("/"):
        case ["labs", name] if name.endswith(".md") and name != "latest.md":
            return lab_chart(PatientGraph(store, scope, as_of=cutoff), name.removesuffix(".md"))
        case ["timeline.md"]:
            return timeline_chart(PatientGraph(store, scope, as_of=cutoff))
    return None


@router.get("/patients/{pid}/search", dependencies=Reader)
def search(
    store: StoreDep, scope: ScopeDep, q: Annotated[str, Query(max_length=1000)] = ""
) -> HTMLResponse:
    """Ranked hits, each linking to its file; patient-reported snippets shown as quotes."""
    values = _frame(scope, q) | {"hits": [], "nodes": _tree(store, scope, "/")}
    try:
        values["patient"] = store.get_patient(scope)
        hits = vfs.search(store, scope, q, 30) if q.strip() else []
    except EngineError as e:
        return _failed(e, "search.html", values)
    values["hits"] = [{"hit": hit, "url": viewer_url(scope.patient, hit.path)} for hit in hits]
    return page("search.html", **values)


def install(app: FastAPI, secret: str = "") -> None:
    """Adds the viewer's pages (authenticated like the API), its stylesheet, and the CSRF
    signing key (`secret`, else one of this process)."""
    app.include_router(router, dependencies=[Depends(authenticate)])
    viewer_reviews.install(app, secret)
    app.mount("/static", StaticFiles(directory=HERE / "static"), name="static")
