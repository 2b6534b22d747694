"""RFC 9457 problem details: the one place where engine errors become HTTP answers."""

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from engine.errors import (
    Conflict,
    EngineError,
    ExtractorFailed,
    IdentityMismatch,
    InvalidInput,
    NotFound,
    StoreUnavailable,
)

PROBLEM_JSON = "application/problem+json"
RETRY_AFTER_SECONDS = 5
log = logging.getLogger("cce.api")


class PayloadTooLarge(EngineError):
    """A request body over the configured limit."""


class UnsupportedMediaType(EngineError):
    """A request body of a media type the route does not read."""


class Unauthenticated(EngineError):
    """No credentials, or credentials that do not verify (401)."""

    def __init__(self, message: str, *, token_given: bool = True) -> None:
        super().__init__(message)
        self.token_given = token_given


class Forbidden(EngineError):
    """A principal without the scope a route needs (403)."""

    def __init__(self, scope: str) -> None:
        super().__init__(f"this operation needs the {scope!r} scope")
        self.scope = scope


class IdentityProviderUnavailable(EngineError):
    """The identity provider (its JWKS) cannot be reached; retrying later may succeed."""


class RateLimited(EngineError):
    """The principal sent more requests than its rate allows (429)."""

    def __init__(self, retry_after: float) -> None:
        super().__init__("too many requests; retry later")
        self.retry_after = max(1, int(retry_after + 0.999))


STATUS = {
    NotFound: 404,
    Conflict: 409,
    PayloadTooLarge: 413,
    UnsupportedMediaType: 415,
    InvalidInput: 422,
    StoreUnavailable: 503,
    ExtractorFailed: 502,
    Unauthenticated: 401,
    Forbidden: 403,
    RateLimited: 429,
    IdentityProviderUnavailable: 503,
}
TITLES = {
    400: "Bad request",
    401: "Unauthenticated",
    403: "Forbidden",
    404: "Not found",
    405: "Method not allowed",
    409: "Conflict",
    413: "Payload too large",
    415: "Unsupported media type",
    422: "Invalid request",
    429: "Too many requests",
    500: "Internal error",
    502: "Bad gateway",
    503: "Service unavailable",
}


def problem(
    status: int,
    title: str,
    detail: str,
    headers: dict[str, str] | None = None,
    **extra: Any,
) -> JSONResponse:
    """A problem-details response; a 503 always says when to retry."""
    body = {"type": "about:blank", "title": title, "status": status, "detail": detail, **extra}
    headers = dict(headers or {})
    if status == 503:
        headers.setdefault("Retry-After", str(RETRY_AFTER_SECONDS))
    return JSONResponse(body, status_code=status, media_type=PROBLEM_JSON, headers=headers)


def _headers(exc: Exception) -> dict[str, str]:
    if isinstance(exc, Unauthenticated):
        challenge = 'Bearer realm="cce"'
        if exc.token_given:
            description = str(exc).replace('"', "'").encode("ascii", "replace").decode()
            challenge += f', error="invalid_token", error_description="{description}"'
        return {"WWW-Authenticate": challenge}
    if isinstance(exc, Forbidden):
        return {
            "WWW-Authenticate": f'Bearer realm="cce", error="insufficient_scope", '
            f'scope="{exc.scope}"'
        }
    if isinstance(exc, RateLimited):
        return {"Retry-After": str(exc.retry_after)}
    return {}


def _engine_error(_: Request, exc: Exception) -> JSONResponse:
    status = next((code for kind, code in STATUS.items() if isinstance(exc, kind)), 500)
    if status == 500:
        log.error("unmapped engine error %s", type(exc).__name__, exc_info=exc)
        return problem(500, TITLES[500], "the server could not complete the request")
    extra: dict[str, Any] = {}
    if isinstance(exc, InvalidInput | IdentityMismatch) and exc.errors:
        extra["errors"] = exc.errors
    if isinstance(exc, IdentityMismatch):
        extra["type"] = exc.problem_type
    detail = str(exc)
    if isinstance(exc, StoreUnavailable):
        # The driver's message names hosts and ports: logged, not answered.
        log.warning("store unavailable: %s", exc)
        detail = "the store cannot be reached; retry later"
    if isinstance(exc, ExtractorFailed):
        # It names the endpoint and may quote its answer (which can echo the prompt).
        log.warning("memory extractor failed: %s", type(exc).__name__)
        detail = "the memory extractor's model endpoint failed; nothing was written; retry later"
    return problem(status, TITLES.get(status, type(exc).__name__), detail, _headers(exc), **extra)


def _validation_error(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    errors = [
        {"path": ".".join(str(part) for part in e["loc"]), "message": e["msg"]}
        for e in exc.errors()
    ]
    return problem(422, TITLES[422], "the request does not match the schema", errors=errors)


def _http_error(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    headers = dict(exc.headers or {})
    title = TITLES.get(exc.status_code, "HTTP error")
    return problem(exc.status_code, title, str(exc.detail), headers)


def _unexpected(request: Request, exc: Exception) -> JSONResponse:
    # No exception text in the answer: it could carry data of the request.
    log.error("unhandled %s", type(exc).__name__, exc_info=exc)
    request_id = getattr(request.state, "request_id", None)
    headers = {"X-Request-ID": request_id} if request_id else None
    return problem(500, TITLES[500], "the server could not complete the request", headers)


def install(app: FastAPI) -> None:
    """Registers the handlers on the app."""
    app.add_exception_handler(EngineError, _engine_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_exception_handler(Exception, _unexpected)
