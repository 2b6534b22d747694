"""`cce export PATIENT --fhir`: what the patient said, as FHIR R4 for the EHR (issue 12)."""

import json
from datetime import datetime
from pathlib import Path
from typing import Annotated

import typer

from api.cli_common import OrgOption, StoreOption, console, errors, opened_store, scope_of
from engine.errors import NotFound
from engine.fhir_export import by_type, export_patient
from engine.models import MemoryType


def export_command(
    patient: str,
    fhir: Annotated[
        bool, typer.Option("--fhir", help="FHIR R4: a collection Bundle (the only format).")
    ] = False,
    out: Annotated[Path | None, typer.Option(help="Write the Bundle to this file.")] = None,
    ndjson: Annotated[
        Path | None, typer.Option(help="Write Bulk-style NDJSON, one file per resource type.")
    ] = None,
    since: Annotated[
        datetime | None, typer.Option(help="Only memories created at or after (UTC).")
    ] = None,
    type: Annotated[
        list[MemoryType] | None, typer.Option(help="Only this type (repeatable).")
    ] = None,
    store: StoreOption = None,
    org: OrgOption = None,
) -> None:
    """Export a patient's memories and discrepancies as FHIR R4, kept apart from the record."""
    if not fhir:
        errors.print("[red]error:[/red] say the format: --fhir (FHIR R4 is the only one)")
        raise typer.Exit(2)
    if out is not None and ndjson is not None:
        errors.print("[red]error:[/red] --out and --ndjson exclude each other")
        raise typer.Exit(2)
    scope = scope_of(org, patient)
    with opened_store(store) as graph:
        try:
            bundle = export_patient(graph, scope, since, frozenset(type) if type else None)
        except NotFound as e:
            errors.print(f"[red]error:[/red] {e}")
            raise typer.Exit(1) from e
    if ndjson is not None:
        ndjson.mkdir(parents=True, exist_ok=True)
        grouped = sorted(by_type(bundle).items())
        for rtype, resources in grouped:
            lines = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in resources)
            (ndjson / f"{rtype}.ndjson").write_text(lines, "utf-8")
        counts = ", ".join(f"{len(v)} {k}" for k, v in grouped)
        errors.print(f"wrote {ndjson}/: {counts}")
        return
    text = json.dumps(bundle, ensure_ascii=False, indent=2) + "\n"
    if out is None:
        console.out(text, end="", highlight=False)
        return
    out.write_text(text, "utf-8")
    errors.print(f"wrote {out}: {len(bundle['entry'])} resources")
