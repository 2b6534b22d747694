"""The HTTP API: `create_app()` builds it; the store opens and closes with the app.

Every module of `api.routes` with a `router` is included, authenticated unless the module
says `PUBLIC = True` (health); routes add their scope with `require(...)` (`api.deps`).
Middleware, outermost first: request id, body limits and the access log; the audit trail;
then FastAPI's problem-details exception handling.
"""

import importlib
import pkgutil
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from types import ModuleType

from fastapi import Depends, FastAPI

from api import auth, logs, mcp_server, problems, routes, viewer
from api.audit import AuditMiddleware
from api.deps import authenticate
from api.middleware import RequestContextMiddleware
from api.ratelimit import RateLimiter
from engine import lifelong
from engine.settings import Settings, get_settings
from engine.store import GraphStore, open_store


def create_app(store: GraphStore | None = None, settings: Settings | None = None) -> FastAPI:
    """The FastAPI app.

    Args:
        store: a store to share (tests, `cce serve`); else CCE_STORE_URL opens with the app.
        settings: settings to use instead of `get_settings()` (tests).
    """

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if store is None:
            app.state.store = open_store((settings or get_settings()).store_url, wait=True)
        lifelong.freeze()  # start-up is done: what it loaded stays for the app's life
        try:
            async with mcp_server.running(app):
                yield
        finally:
            if store is None:
                app.state.store.close()

    app = FastAPI(title="Clinical Context Engine", version="0.1.0", lifespan=lifespan)
    if settings is not None:
        app.dependency_overrides[get_settings] = lambda: settings
    auth.check(settings or get_settings())
    if store is not None:
        app.state.store = store
    app.state.authenticator = auth.Authenticator()
    app.state.limiter = RateLimiter()
    logs.configure()
    problems.install(app)
    app.add_middleware(AuditMiddleware)
    app.add_middleware(RequestContextMiddleware)
    for module in route_modules():
        public = getattr(module, "PUBLIC", False)
        dependencies = [] if public else [Depends(authenticate)]
        app.include_router(module.router, dependencies=dependencies)
    mcp_server.install(app)
    viewer.install(app, (settings or get_settings()).viewer_secret.get_secret_value())
    return app


def route_modules() -> list[ModuleType]:
    """Every module of `api.routes` that defines a `router`, by name."""
    modules = []
    for info in sorted(pkgutil.iter_modules(routes.__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{routes.__name__}.{info.name}")
        if hasattr(module, "router"):
            modules.append(module)
    return modules
