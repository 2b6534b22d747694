"""The extract stage's port: what every extractor, offline or LLM, hands to `verify`.

An extractor proposes `Candidate`s, each optionally with the relationships it proposes
to the patient's facts (`Proposal`), and says what the call cost (`Usage`). Nothing it
returns is trusted: `verify` checks quotes and proposals before anything is written.
"""

from dataclasses import dataclass
from typing import Any, Protocol

from pydantic import BaseModel, Field

from engine.models import Fact, MemoryType, Message, Role


class Quote(BaseModel):
    """A quote an extractor claims; offsets are optional and checked when given."""

    message_id: str
    quote: str
    start: int | None = None
    end: int | None = None


class Proposal(BaseModel):
    """A relationship an extractor proposes: a fact (by key; None when the number it
    gave names no fact), a type as it was given, and why."""

    fact_key: str | None
    type: str
    why: str = ""


class Candidate(BaseModel):
    """A proposed memory, not yet checked."""

    type: str
    subject: str
    text: str
    evidence: list[Quote]
    speaker: str = Role.PATIENT.value
    attributes: dict[str, Any] = Field(default_factory=dict)
    confidence: float = Field(default=0.5, ge=0, le=1)
    # None: the extractor proposes no relationships (the offline inference decides);
    # a list, even empty: the extractor's own judgement, verified and then compared.
    relationships: list[Proposal] | None = None


@dataclass(frozen=True)
class Usage:
    """Tokens reported by a model endpoint, summed over the calls of one extraction."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    calls: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: "Usage") -> "Usage":
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.calls + other.calls,
        )


@dataclass(frozen=True)
class Extraction:
    """What one extraction proposes and what it cost."""

    candidates: list[Candidate]
    usage: Usage = Usage()


class Extractor(Protocol):
    """Turns conversation messages (and the patient's facts) into candidate memories."""

    name: str
    version: str

    def extract(self, messages: list[Message], facts: list[Fact], processed: int = 0) -> Extraction:
        """Candidates for `messages[processed:]`; the first `processed` messages were read
        by an earlier call and are context only. `verify` filters what this returns."""
        ...


MEMORY_TYPES = frozenset(t.value for t in MemoryType)
MEMORY_ROLES = frozenset({Role.PATIENT.value, Role.CAREGIVER.value})
