"""Slugs: file and folder names made from labels, unique within their folder."""

import hashlib
import re
import unicodedata
from collections.abc import Iterable

MAX_LENGTH = 80
_NOT_SLUG = re.compile(r"[^a-z0-9]+")
SLUG = re.compile(r"^[a-z0-9]+(_[a-z0-9]+)*$")


def slugify(text: str) -> str:
    """Lower case ASCII, every run of other characters one `_`: `Type 2 diabetes` →
    `type_2_diabetes`; at most 80 characters; `unnamed` when nothing is left."""
    folded = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode().lower()
    slug = _NOT_SLUG.sub("_", folded).strip("_")[:MAX_LENGTH].rstrip("_")
    return slug or "unnamed"


def _suffixed(base: str, key: str, taken: set[str]) -> str:
    digest = hashlib.sha256(key.encode()).hexdigest()
    for size in range(6, len(digest) + 1, 2):
        candidate = f"{base}_{digest[:size]}"
        if candidate not in taken:
            return candidate
    raise ValueError(f"cannot make a unique slug for {key!r}")  # 2^256 collisions away


def assign(named: Iterable[tuple[str, str]], reserved: Iterable[str] = ()) -> dict[str, str]:
    """Unique slugs for (key, label) pairs of one folder, the same whatever their order.

    When labels slugify alike, the smallest key keeps the plain slug and each other key gets
    `_` and the first hex digits of its key's SHA-256, so its name does not depend on what
    else is in the folder. A reserved name (`latest` in /labs) is never handed out plain.

    Returns:
        key → slug.
    """
    groups: dict[str, list[str]] = {}
    for key, label in sorted(set(named)):
        groups.setdefault(slugify(label), []).append(key)
    blocked = set(reserved)
    taken = set(groups) | blocked
    slugs: dict[str, str] = {}
    for base, keys in sorted(groups.items()):
        first, *others = sorted(dict.fromkeys(keys))
        slugs[first] = base if base not in blocked else _suffixed(base, first, taken)
        taken.add(slugs[first])
        for key in others:
            slugs[key] = _suffixed(base, key, taken)
            taken.add(slugs[key])
    return slugs
