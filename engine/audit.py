"""Audit events (SPEC §6): who did what to which patient, with what outcome, and when.

An event names the actor, the org, the patient, the action (a route template, never a
raw path or a body) and the outcome (an HTTP status), so it holds no clinical content.
Events are append-only; the one change a store makes to them is on erasure, when the
patient's identifier is replaced by `ERASED`.
"""

import uuid

from pydantic import Field

from engine.models import Frozen, Identifier, UtcDatetime, utcnow

ERASED = "erased"


def _event_id() -> str:
    return uuid.uuid4().hex


class AuditEvent(Frozen):
    """One read or write of the API, as it was answered."""

    event_id: str = Field(default_factory=_event_id, min_length=1, max_length=64)
    time: UtcDatetime = Field(default_factory=utcnow)
    org: Identifier
    actor: str = Field(min_length=1, max_length=256)
    patient: str | None = Field(default=None, max_length=128)
    action: str = Field(min_length=1, max_length=512)
    outcome: int = Field(ge=100, le=599)
    correlation_id: str = Field(min_length=1, max_length=128)
