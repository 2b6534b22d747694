"""Wrong-patient protection: a document whose patient key matches a stored patient with
other demographics is not written (issue 10).

Identity is decided by the birth date (both known and different) and the name (both
known and no part in common); address or phone never decide it. What is said about either
person is masked to initials and birth year, so a refusal names no one.
"""

import re

from engine.models import FieldConflict, Patient

_NAME_PART = re.compile(r"[^\W\d_]{2,}")
MISMATCH = "identity mismatch"


def identity_conflict(stored: Patient, incoming: Patient) -> str | None:
    """Why the two are not the same person, or None when nothing says so."""
    born = (stored.birth_date or "")[:10], (incoming.birth_date or "")[:10]
    if all(born) and born[0] != born[1]:
        return "the birth date differs"
    mine, theirs = _parts(stored.name), _parts(incoming.name)
    if mine and theirs and not mine & theirs:
        return "no name part in common"
    return None


def demographic_conflicts(
    stored: Patient, incoming: Patient, label: str
) -> tuple[FieldConflict, ...]:
    """Address and phone differences as conflict records; the incoming document's wins."""
    found = []
    for name in ("address", "phone"):
        old, new = getattr(stored, name), getattr(incoming, name)
        if old and new and old != new:
            found.append(
                FieldConflict(
                    field=name,
                    values=((old, "stored"), (new, label)),
                    winner=new,
                    winner_source=label,
                    strategy="the latest ingested document",
                    explanation=f"documents disagree on the {name}; kept the one of {label},"
                    " ingested last (it does not decide identity)",
                )
            )
    return tuple(found)


def masked(patient: Patient) -> str:
    """Initials and birth year: "J. D., born 1970"."""
    initials = " ".join(f"{p[0].upper()}." for p in _NAME_PART.findall(patient.name or ""))
    year = (patient.birth_date or "")[:4]
    return ", ".join(x for x in (initials or "no name", f"born {year}" if year else "") if x)


def _parts(name: str | None) -> frozenset[str]:
    return frozenset(p.lower() for p in _NAME_PART.findall(name or ""))
