"""Validating an NDJSON export's lines in a process pool, a few chunks ahead of its reader.

JSON parsing, fhir.resources validation and content hashes need none of the reader's
state (patient identities, Medications, Condition keys), so the pool's processes work them
out while the reader maps the lines before, in order, with that state: the records and
problems are the same, in the same order, as without the pool.
"""

import re
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from multiprocessing.pool import AsyncResult, Pool

from ingest import json_text
from ingest.fhir_map import MAPPERS, canonical_hash
from ingest.fhir_read import Where, is_mapped, resource_type, validate
from ingest.records import Problem

# Lines per chunk handed to the pool, and chunks in flight: enough to keep its processes
# busy while the reader maps, and a bound on what is held.
CHUNK_LINES = 128
AHEAD = 8
Lines = list[tuple[int, bytes]]
# A line of a type that the reader validates names it (a line naming one only in a
# contained resource is merely sent to the pool for nothing).
_VALIDATED = re.compile(
    rb'"resourceType"\s*:\s*"(?:' + "|".join(["Medication", "Patient", *MAPPERS]).encode() + rb')"'
)


@dataclass(frozen=True, slots=True)
class Known:
    """What a pool process found out about a line of a validated type: the problem that
    validation found, or (for a clinical resource) its content hash."""

    problem: Problem | None = None
    content_hash: str | None = None


def checked(
    pool: Pool | None, name: str, lines: Iterator[tuple[int, bytes]]
) -> Iterator[tuple[int, bytes, Known | None]]:
    """The lines, each with what the pool found out about it; None: the reader validates
    it itself (no pool, or a line the pool was not given)."""
    if pool is None:
        yield from ((number, line, None) for number, line in lines)
        return
    chunks = _chunks(lines)
    ahead: deque[tuple[Lines, AsyncResult[dict[int, Known]] | None]] = deque()
    failure: OSError | EOFError | None = None
    while True:
        while failure is None and len(ahead) < AHEAD:
            try:
                chunk = next(chunks)
            except StopIteration:
                break
            except (OSError, EOFError) as exc:  # a corrupt .gz: the lines before it count
                failure = exc
                break
            # lines that name no validated type need no verdict (exports hold large ones)
            sent = [(number, line) for number, line in chunk if _VALIDATED.search(line)]
            result = pool.apply_async(_validate_lines, (name, sent)) if sent else None
            ahead.append((chunk, result))
        if not ahead:
            break
        chunk, result = ahead.popleft()
        known = result.get() if result is not None else {}
        yield from ((number, line, known.get(number)) for number, line in chunk)
    if failure is not None:
        raise failure


def _chunks(lines: Iterator[tuple[int, bytes]]) -> Iterator[Lines]:
    """The lines in chunks growing from 8 to `CHUNK_LINES` lines (small at first, so that
    the start of each file keeps the reader waiting briefly); a read error comes after
    the lines before it."""
    chunk: Lines = []
    size = 8
    try:
        for item in lines:
            chunk.append(item)
            if len(chunk) >= min(size, CHUNK_LINES):
                yield chunk
                chunk, size = [], size * 2
    except (OSError, EOFError):
        if chunk:
            yield chunk
        raise
    if chunk:
        yield chunk


def _validate_lines(name: str, lines: Lines) -> dict[int, Known]:
    """In a pool process: what the reader needs of the lines it validates, by line."""
    known = {}
    for number, line in lines:
        try:
            res = json_text.loads(line)
        except ValueError:
            continue  # the reader reports it as it parses the line itself
        rtype = resource_type(res)
        if rtype is not None and (rtype == "Medication" or is_mapped(rtype)):
            problem = validate(res, Where(file=name, line=number))
            clinical = problem is None and rtype in MAPPERS
            known[number] = Known(problem, canonical_hash(res) if clinical else None)
    return known
