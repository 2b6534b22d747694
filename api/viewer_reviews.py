"""Review forms of the viewer's memory pages, and their CSRF protection.

Every memory on `/memory/{type}.md` gets a server-rendered form (confirm, dismiss with a
reason, note) that posts without any script. A form carries a token that the server also
sets as a cookie (double submit); the token is signed (itsdangerous) for the principal's
org and actor with `CCE_VIEWER_SECRET` (else a key made when the app starts), and expires
after `MAX_AGE`. A post
whose form token is missing, differs from the cookie, or does not verify is refused with
403. The cookie is HttpOnly, SameSite=Strict and scoped to `/patients/`. (Without the
secret, a restart makes a new key: an open page must be reloaded before its form posts.)
"""

import hmac
import re
import secrets
from typing import Any

from fastapi import FastAPI, Request, Response
from itsdangerous import BadSignature, URLSafeTimedSerializer

from api.auth import Principal
from engine.models import DismissReason, MemoryRecord, MemoryType, ReviewAction, Scope
from engine.store import GraphStore
from vfs.render_memory import badge
from vfs.values import when

COOKIE = "cce_csrf"
FIELD = "csrf"
MAX_AGE = 8 * 3600
MEMORY_PAGE = re.compile(r"^/memory/(symptom|adherence|concern|preference)\.md$")
REASONS = [(r.value, r.value.replace("_", " ")) for r in DismissReason]
ACTIONS = [a.value for a in ReviewAction]


def install(app: FastAPI, secret: str = "") -> None:
    """Sets the app's signing key for CSRF tokens: `secret` (`CCE_VIEWER_SECRET`, shared by
    the processes behind one address), else a random key of this process."""
    key = secret.encode() or secrets.token_bytes(32)
    app.state.csrf = URLSafeTimedSerializer(key, salt="cce-viewer-review")


def _serializer(request: Request) -> URLSafeTimedSerializer:
    serializer: URLSafeTimedSerializer = request.app.state.csrf
    return serializer


def _owner(principal: Principal) -> list[str]:
    return [principal.org, principal.actor]


def _verifies(request: Request, principal: Principal, token: str) -> bool:
    try:
        owner = _serializer(request).loads(token, max_age=MAX_AGE)
    except BadSignature:
        return False
    return bool(owner == _owner(principal))


def csrf_token(request: Request, principal: Principal) -> str:
    """The caller's token: the cookie's when it still verifies, else a new one."""
    held = request.cookies.get(COOKIE, "")
    if held and _verifies(request, principal, held):
        return held
    return str(_serializer(request).dumps(_owner(principal)))


def set_cookie(response: Response, request: Request, token: str) -> None:
    """Sets the double-submit cookie on a page that shows review forms."""
    response.set_cookie(
        COOKIE,
        token,
        max_age=MAX_AGE,
        path="/patients/",
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
    )


def csrf_ok(request: Request, principal: Principal, form_token: str) -> bool:
    """Whether a post's form token matches its cookie and verifies for the caller."""
    cookie = request.cookies.get(COOKIE, "")
    if not form_token or not cookie or not hmac.compare_digest(form_token, cookie):
        return False
    return _verifies(request, principal, form_token)


def memory_type(path: str) -> MemoryType | None:
    """The memory type of a `/memory/{type}.md` path, else None."""
    found = MEMORY_PAGE.match(path)
    return MemoryType(found[1]) if found else None


def review_rows(store: GraphStore, scope: Scope, type: MemoryType) -> list[dict[str, Any]]:
    """One row per memory of the type (dismissed ones too), most recent first: what the
    form shows beside its buttons. The subject and note are escaped by the template."""
    return [_row(record) for record in store.list_memories(scope, type)]


def _row(record: MemoryRecord) -> dict[str, Any]:
    memory, review = record.memory, record.review
    latest = None
    if review is not None:
        reason = f" ({review.reason.value.replace('_', ' ')})" if review.reason else ""
        latest = f"{review.action.value}{reason} by {review.actor}, {when(review.created_at)}"
    return {
        "id": memory.memory_id,
        "stamp": f"{when(memory.created_at)} · session {memory.session_id}",
        "subject": memory.subject,
        "badge": "dismissed" if record.dismissed else badge(record),
        "latest": latest,
        "note": record.note,
    }
