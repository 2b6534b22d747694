"""Structured logs: one JSON object a line on stderr, no clinical content by construction.

Only the fields a caller passes in `extra={"fields": {...}}` are added to the message;
request logs pass the method, the route template, the status, the duration, the request
id and the org, never a raw path, a query string or a body.
"""

import json
import logging
import sys
from datetime import UTC, datetime

_HANDLER_NAME = "cce-json"


class JsonFormatter(logging.Formatter):
    """Formats a record as one JSON line."""

    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        fields = getattr(record, "fields", None)
        if isinstance(fields, dict):
            entry.update(fields)
        if record.exc_info and record.exc_info[0] is not None:
            # The type only: exception messages can quote the data that caused them.
            entry["exception"] = record.exc_info[0].__name__
        return json.dumps(entry, default=str)


def configure(level: int = logging.INFO) -> None:
    """Sends the `cce` loggers to stderr as JSON lines; idempotent."""
    logger = logging.getLogger("cce")
    if any(h.get_name() == _HANDLER_NAME for h in logger.handlers):
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.set_name(_HANDLER_NAME)
    handler.setFormatter(JsonFormatter())
    logger.addHandler(handler)
    logger.setLevel(level)
    logger.propagate = False
