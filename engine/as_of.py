""" "As of" views: a cutoff instant that store reads apply, so a view shows what the engine knew.

A read given `as_of` sees the sources ingested, and the sessions and memories created, at
or before that instant; facts are merged from the claims of those sources only. Patient
demographics and fact-to-fact links carry no time and are shown as they stand now.
`None` means no cutoff: the live graph.
"""

import re
from collections.abc import Iterable
from datetime import UTC, datetime, time

from engine.errors import InvalidInput
from engine.models import Claim, Source, as_utc

AsOf = datetime | None

_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_HINT = "use a date YYYY-MM-DD (the end of that day, UTC) or an ISO 8601 instant with an offset"


def parse_as_of(text: str | None) -> AsOf:
    """The cutoff `text` names: `YYYY-MM-DD` is the end of that day in UTC.

    Raises:
        InvalidInput: neither a date nor an instant with an offset (`Z` or `+01:00`).
    """
    if text is None or not text.strip():
        return None
    value = text.strip()
    try:
        if _DATE.match(value):
            return datetime.combine(datetime.fromisoformat(value).date(), time.max, UTC)
        instant = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise InvalidInput(f"as_of {text!r} is not a date or instant: {_HINT}") from None
    if instant.tzinfo is None or instant.utcoffset() is None:
        raise InvalidInput(f"as_of {text!r} has no UTC offset: {_HINT}")
    try:
        return as_utc(instant)
    except ValueError:
        raise InvalidInput(f"as_of {text!r} is not within years 1-9999 in UTC: {_HINT}") from None


def known(at: datetime, as_of: AsOf) -> bool:
    """Whether something recorded at `at` was known at the cutoff (always, without one)."""
    return as_of is None or at <= as_of


def known_claims(pairs: Iterable[tuple[Source, Claim]], as_of: AsOf) -> list[tuple[Source, Claim]]:
    """The (source, claim) pairs whose source was ingested by the cutoff."""
    return [(source, claim) for source, claim in pairs if known(source.ingested_at, as_of)]
