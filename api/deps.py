"""FastAPI dependencies: settings, the store, the caller and the caller's scope.

Routes state what they need and get the tenant from the principal, never from the URL:

    @router.get("/things", dependencies=[require(RECORD_READ)])
    def things(store: StoreDep, scope: ScopeDep) -> ...:   # scope.org is the principal's

`create_app()` also authenticates every router but health's, so a route that forgets
`require` still answers 401 to an anonymous caller (and fails the route-enumerating test).
"""

from typing import Annotated, Any

from fastapi import Depends, FastAPI, Path, Request

from api.auth import (
    ADMIN,
    INGEST_WRITE,
    MEMORY_REVIEW,
    MEMORY_WRITE,
    PATIENT_ERASE,
    RECORD_READ,
    Authenticator,
    Principal,
)
from api.problems import Forbidden, RateLimited
from api.ratelimit import RateLimiter
from engine.models import Scope
from engine.settings import Settings, get_settings
from engine.store import GraphStore

__all__ = [
    "ADMIN",
    "INGEST_WRITE",
    "MEMORY_REVIEW",
    "MEMORY_WRITE",
    "PATIENT_ERASE",
    "RECORD_READ",
    "PID_PATTERN",
    "PrincipalDep",
    "ScopeDep",
    "SettingsDep",
    "StoreDep",
    "authenticate",
    "require",
]

PID_PATTERN = r"^[A-Za-z0-9._-]{1,128}$"

SettingsDep = Annotated[Settings, Depends(get_settings)]


def app_settings(app: FastAPI) -> Settings:
    """The settings the app's routes see, overrides included (for ASGI middleware)."""
    provider = app.dependency_overrides.get(get_settings, get_settings)
    settings: Settings = provider()
    return settings


def _store(request: Request) -> GraphStore:
    store: GraphStore = request.app.state.store
    return store


StoreDep = Annotated[GraphStore, Depends(_store)]


def authenticate(request: Request, settings: SettingsDep) -> Principal:
    """The caller (401 without valid credentials), within its rate limit (else 429)."""
    authenticator: Authenticator = request.app.state.authenticator
    principal = authenticator.principal(
        request.headers.get("authorization"), request.headers.get("x-api-key"), settings
    )
    request.state.principal = principal
    limiter: RateLimiter = request.app.state.limiter
    wait = limiter.take(
        f"{principal.org}/{principal.actor}",
        settings.rate_limit_per_second,
        settings.rate_limit_burst,
    )
    if wait:
        request.state.rate_limited = True
        raise RateLimited(wait)
    return principal


PrincipalDep = Annotated[Principal, Depends(authenticate)]


class Requirement:
    """A dependency that lets through principals holding `scope` (else 403)."""

    def __init__(self, scope: str) -> None:
        self.scope = scope

    def __call__(self, principal: PrincipalDep) -> Principal:
        if self.scope not in principal.scopes:
            raise Forbidden(self.scope)
        return principal

    def __repr__(self) -> str:
        return f"require({self.scope!r})"


def require(scope: str) -> Any:
    """`Depends` on a principal with `scope`, for `dependencies=[...]` or `Annotated`."""
    return Depends(Requirement(scope))


def _scope(principal: PrincipalDep, pid: Annotated[str, Path(pattern=PID_PATTERN)]) -> Scope:
    return Scope(org=principal.org, patient=pid)


ScopeDep = Annotated[Scope, Depends(_scope)]
