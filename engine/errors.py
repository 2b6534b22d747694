"""The engine's one family of errors; only `api/` maps them to HTTP."""

from typing import Any


class EngineError(Exception):
    """Base of every error the engine raises on purpose."""


class NotFound(EngineError):
    """A patient, fact, session or memory that does not exist in this scope."""

    def __init__(self, kind: str, id: str) -> None:
        super().__init__(f"{kind} {id!r} not found")
        self.kind = kind
        self.id = id


class InvalidInput(EngineError, ValueError):
    """Input that cannot be used; `errors` keeps every located problem."""

    def __init__(self, message: str, errors: list[dict[str, Any]] | None = None) -> None:
        super().__init__(message)
        self.errors = errors or []


class Conflict(EngineError):
    """A write that contradicts the current state (closed session, stale watermark)."""


class IdentityMismatch(Conflict):
    """An ingest whose patient key matches a stored patient with other demographics."""

    problem_type = "https://clinical-context-engine.dev/problems/identity-mismatch"

    def __init__(self, message: str, errors: list[dict[str, Any]] | None = None) -> None:
        super().__init__(message)
        self.errors = errors or []


class ExtractorFailed(EngineError):
    """The memory extractor's model endpoint failed or answered unusably; nothing was
    written, and the same call may be retried."""


class StoreUnavailable(EngineError):
    """The graph store cannot be reached; retrying later may succeed."""
