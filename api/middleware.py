"""Request context: the request id, body limits and the one JSON log line per request."""

import logging
import re
import time
import uuid
from typing import Any

from fastapi import HTTPException
from starlette.datastructures import Headers, MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from api.deps import app_settings
from api.problems import problem

REQUEST_ID_HEADER = "X-Request-ID"
_REQUEST_ID = re.compile(r"^[A-Za-z0-9._:+=/@-]{1,128}$")
_BODY_METHODS = {"POST", "PUT", "PATCH"}
_INGEST = re.compile(r"^/v1/patients/[^/]+/ingest/")
access = logging.getLogger("cce.access")


def request_id(headers: Headers) -> str:
    """The caller's `X-Request-ID` when it is a plain token of up to 128 chars, else a new one."""
    given = headers.get(REQUEST_ID_HEADER, "")
    return given if _REQUEST_ID.match(given) else uuid.uuid4().hex


class RequestContextMiddleware:
    """Outermost middleware: request id in and out, body limits, the access log line."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        rid = request_id(headers)
        state = scope.setdefault("state", {})
        state["request_id"] = rid
        started = time.perf_counter()
        status = 500

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                MutableHeaders(scope=message)[REQUEST_ID_HEADER] = rid
            await send(message)

        try:
            refusal = _refusal(scope, headers)
            if refusal is not None:
                await refusal(scope, receive, send_with_id)
                return
            limit = _limit(scope)
            await self.app(scope, _limited(receive, limit), send_with_id)
        finally:
            _log(scope, status, time.perf_counter() - started)


def _limit(scope: Scope) -> int:
    settings = app_settings(scope["app"])
    return settings.max_ingest_bytes if _INGEST.match(scope["path"]) else settings.max_request_bytes


def _refusal(scope: Scope, headers: Headers) -> Any:
    """A 413 for a declared length over the limit, a 415 for a non-JSON body; else None."""
    declared = headers.get("content-length", "")
    limit = _limit(scope)
    if declared.isdigit() and int(declared) > limit:
        return problem(413, "Payload too large", f"the body is over the {limit}-byte limit")
    has_body = (declared.isdigit() and int(declared) > 0) or "transfer-encoding" in headers
    path = scope["path"]
    if scope["method"] in _BODY_METHODS and has_body and path.startswith("/v1/"):
        media_type = headers.get("content-type", "").split(";")[0].strip().lower()
        json_like = media_type == "application/json" or media_type.endswith("+json")
        if not _INGEST.match(path) and not json_like:
            return problem(
                415,
                "Unsupported media type",
                f"content type {media_type or 'none'!r} not accepted here; send application/json",
            )
    return None


def _limited(receive: Receive, limit: int) -> Receive:
    received = 0

    async def receive_within_limit() -> Message:
        nonlocal received
        message = await receive()
        if message["type"] == "http.request":
            received += len(message.get("body", b""))
            if received > limit:
                raise HTTPException(413, f"the body is over the {limit}-byte limit")
        return message

    return receive_within_limit


def _log(scope: Scope, status: int, seconds: float) -> None:
    state = scope.get("state", {})
    route = scope.get("route")
    principal = state.get("principal")
    access.info(
        "request",
        extra={
            "fields": {
                "method": scope["method"],
                "route": getattr(route, "path", None),
                "status": status,
                "duration_ms": round(seconds * 1000, 1),
                "request_id": state.get("request_id"),
                "org": getattr(principal, "org", None),
            }
        },
    )
