"""The audit trail of the API: one event per authenticated request (SPEC §6).

The event is written before the answer leaves: when it cannot be written, the caller gets
a 503 instead of data that left no trace. It holds the actor, org, patient, the action as
method and route template (a VFS path with its names masked), the status and the request
id — no query string, no body, no fact key, so no clinical content.
"""

import logging
import re
from typing import Any

from fastapi import Request
from starlette.concurrency import run_in_threadpool
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from api.problems import problem
from engine.audit import ERASED, AuditEvent
from engine.errors import EngineError
from engine.store import GraphStore

log = logging.getLogger("cce.audit")
# The MCP endpoint records one event per tool call (with its patient) instead.
SELF_AUDITED = ("/mcp",)
_PID = re.compile(r"^[A-Za-z0-9._-]{1,128}$")
# VFS path segments that name structure, not content (SPEC §4); others are masked.
_VFS_WORDS = frozenset(
    {
        "patient.md",
        "conditions",
        "active",
        "resolved",
        "_story.md",
        "_raw.json",
        "medications",
        "current",
        "discontinued",
        "allergies.md",
        "immunizations.md",
        "procedures.md",
        "labs",
        "latest.md",
        "encounters",
        "timeline.md",
        "sources.md",
        "memory",
        "symptom.md",
        "adherence.md",
        "concern.md",
        "preference.md",
    }
)


def anonymise(request: Request) -> None:
    """Route dependency: this request's event names no patient (erasure)."""
    request.state.audit_patient = ERASED


def mask_vfs_path(path: str) -> str:
    """`conditions/active/type_2_diabetes/_story.md` → `conditions/active/*/_story.md`."""
    parts = path.strip("/").split("/")
    return "/".join(p if p in _VFS_WORDS or re.fullmatch(r"\d{4}", p) else "*" for p in parts)


def audit_event(scope: Scope, status: int) -> AuditEvent | None:
    """The event of a request, or None for one that no principal made."""
    state: dict[str, Any] = scope.get("state", {})
    principal = state.get("principal")
    # A 503 served nothing (the store or the identity provider is down, and the event
    # could not be written either); a 429 is not worth a write while being flooded.
    if principal is None or state.get("rate_limited") or status == 503:
        return None
    params: dict[str, Any] = scope.get("path_params", {})
    template = getattr(scope.get("route"), "path", "(unmatched)")
    action = f"{scope['method']} {template}"
    if "/vfs/" in template and isinstance(params.get("path"), str):
        action += f" /{mask_vfs_path(params['path'])}"
    pid = params.get("pid")
    patient = state.get("audit_patient") or (
        pid if isinstance(pid, str) and _PID.match(pid) else None
    )
    return AuditEvent(
        org=principal.org,
        actor=principal.actor,
        patient=patient,
        action=action[:512],
        outcome=status,
        correlation_id=state.get("request_id") or "none",
    )


class AuditMiddleware:
    """Writes the audit event of each request that authenticated (API and viewer).

    The event is written when the answer starts, after routing and the route have run;
    requests without a principal (health, static files, refused credentials) have none.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"].startswith(SELF_AUDITED):
            await self.app(scope, receive, send)
            return
        started = False
        withheld = False

        async def send_audited(message: Message) -> None:
            nonlocal started, withheld
            if withheld:
                return
            if message["type"] == "http.response.start":
                started = True
                if not await _record(scope, message["status"]):
                    withheld = True
                    await _unrecorded(scope, receive, send)
                    return
            await send(message)

        try:
            await self.app(scope, receive, send_audited)
        except Exception:
            if not started:
                await _record(scope, 500)
            raise


async def _record(scope: Scope, status: int) -> bool:
    event = audit_event(scope, status)
    if event is None:
        return True
    store: GraphStore = scope["app"].state.store
    try:
        await run_in_threadpool(store.append_audit, [event])
    except EngineError as e:
        log.error("audit event not written: %s", type(e).__name__)
        return False
    return True


async def _unrecorded(scope: Scope, receive: Receive, send: Send) -> None:
    response = problem(
        503, "Service unavailable", "the request could not be audited; nothing was returned"
    )
    await response(scope, receive, send)
