"""A comparable picture of everything an org holds, without ingestion times."""

from typing import Any

from engine.models import Scope
from engine.store import GraphStore


def snapshot(store: GraphStore, org: str) -> dict[str, Any]:
    """Per patient: facts (key, kind, status, label, fields, sources, conflicts) and links."""
    picture: dict[str, Any] = {}
    for patient in store.list_patients(org):
        scope = Scope(org=org, patient=patient)
        picture[patient] = {
            "facts": [
                (
                    f.fact_key,
                    f.kind.value,
                    f.status,
                    f.label,
                    sorted(f.fields.items(), key=lambda item: item[0]),
                    sorted(s.source_ref for s in f.sources),
                    sorted((c.field, repr(c.winner), c.winner_source) for c in f.conflicts),
                )
                for f in store.list_facts(scope)
            ],
            "links": store.list_fact_links(scope),
        }
    return picture
