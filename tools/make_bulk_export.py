"""Writes a FHIR Bulk Data export (`<Type>.ndjson` files) of N patients, for scale tests.

The patients are clones of the 20 Synthea bundles in tests/data (Apache-2.0, see their
SOURCE.md): clone k of a bundle gets every id (and every other copy of it, such as the
identifier that repeats the Patient id) replaced by a UUID derived from k and the old id,
and its `urn:uuid:` references rewritten as `Type/id`, as an `$export` writes them. The
output is large (about 0.2 MB a patient): write it to a temporary directory, never into
the repository.

    python -m tools.make_bulk_export OUT_DIR [--patients 5000]
"""

import argparse
import json
import re
import uuid
from pathlib import Path
from typing import IO, Any

SYNTHEA = Path(__file__).parent.parent / "tests/data/corpus/fhir/synthea-r4-bundles"
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_NAMESPACE = uuid.UUID("6f1c1c52-3a8e-4f0e-9a55-0c9d8f1b7e21")


def _as_export(value: Any, types: dict[str, str]) -> Any:
    """`urn:uuid:X` references → `Type/X`, everywhere in a resource."""
    if isinstance(value, dict):
        return {k: _as_export(v, types) for k, v in value.items()}
    if isinstance(value, list):
        return [_as_export(v, types) for v in value]
    if isinstance(value, str) and value.startswith("urn:uuid:"):
        old = value.removeprefix("urn:uuid:")
        return f"{types[old]}/{old}" if old in types else value
    return value


def templates(bundle: Path) -> tuple[list[tuple[str, str]], set[str]]:
    """A bundle's resources as (type, compact JSON line) in export form, and its ids."""
    resources = [e["resource"] for e in json.loads(bundle.read_bytes())["entry"]]
    types = {r["id"]: r["resourceType"] for r in resources}
    lines = [
        (r["resourceType"], json.dumps(_as_export(r, types), separators=(",", ":")))
        for r in resources
    ]
    return lines, set(types)


def clone(lines: list[tuple[str, str]], ids: set[str], k: int) -> list[tuple[str, str]]:
    """The bundle's lines with its ids replaced by clone `k`'s."""
    fresh: dict[str, str] = {}

    def new_id(match: re.Match[str]) -> str:
        old = match[0]
        if old not in ids:
            return old
        if old not in fresh:
            fresh[old] = str(uuid.uuid5(_NAMESPACE, f"{k}:{old}"))
        return fresh[old]

    return [(kind, _UUID.sub(new_id, line)) for kind, line in lines]


def write_export(out: Path, patients: int) -> int:
    """Writes `patients` cloned patients into `out`; returns the number of lines."""
    bundles = sorted(p for p in SYNTHEA.glob("*.json") if "Information" not in p.name)
    sources = [templates(b) for b in bundles]
    out.mkdir(parents=True, exist_ok=True)
    files: dict[str, IO[str]] = {}
    written = 0
    try:
        for k in range(patients):
            lines, ids = sources[k % len(sources)]
            for kind, line in clone(lines, ids, k):
                if kind not in files:
                    files[kind] = (out / f"{kind}.ndjson").open("w", encoding="utf-8")
                files[kind].write(line + "\n")
                written += 1
    finally:
        for file in files.values():
            file.close()
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("out", type=Path)
    parser.add_argument("--patients", type=int, default=5000)
    args = parser.parse_args()
    lines = write_export(args.out, args.patients)
    size = sum(f.stat().st_size for f in args.out.glob("*.ndjson"))
    print(f"{args.patients} patients, {lines} resources, {size / 1e6:.0f} MB in {args.out}")


if __name__ == "__main__":
    main()
