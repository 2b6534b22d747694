"""What an unusable body holds, said plainly, so that a refusal names it."""

import codecs
import json
import re
from collections import Counter


def what_is_in(data: bytes) -> str:
    """A short account of what a body holds, for a clear refusal ("one resource of type
    Frobnicate", "a Bundle of 3 entries: Basic ×3", "XML with root <foo>")."""
    text = data.removeprefix(codecs.BOM_UTF8).lstrip()
    if text[:1] == b"<":
        match = re.search(
            rb"<([A-Za-z_][\w.:-]*)[\s>/]", re.sub(rb"<\?.*?\?>|<!--.*?-->", b"", text, flags=re.S)
        )
        return f"XML with root <{match.group(1).decode(errors='replace')[:60]}>" if match else "XML"
    try:
        value = json.loads(text)
    except ValueError:
        return "no JSON or XML"
    if not isinstance(value, dict):
        return f"a JSON {type(value).__name__}, not a FHIR resource"
    rtype = str(value.get("resourceType") or "none")[:60]
    if rtype != "Bundle":
        return f"one resource of type {rtype}"
    entries = [e for e in value.get("entry") or [] if isinstance(e, dict)]
    kinds = Counter(
        str((e.get("resource") or {}).get("resourceType") or "none")[:60]
        for e in entries
        if isinstance(e.get("resource") or {}, dict)
    )
    listed = ", ".join(f"{k} ×{n}" for k, n in kinds.most_common(5))
    return f"a Bundle of {len(entries)} entries" + (f": {listed}" if listed else "")
