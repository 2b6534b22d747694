"""Patient-reported data as FHIR R4 (issue 12): memories and discrepancies, never facts."""

import json
from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Query
from fastapi.responses import Response

from api.deps import RECORD_READ, ScopeDep, StoreDep, require
from engine.fhir_export import export_patient
from engine.models import MemoryType

router = APIRouter(prefix="/v1/patients/{pid}", tags=["fhir"])

FHIR_JSON = "application/fhir+json"


@router.get(
    "/fhir/patient-reported",
    dependencies=[require(RECORD_READ)],
    response_class=Response,
    responses={200: {"content": {FHIR_JSON: {}}, "description": "a FHIR R4 collection Bundle"}},
)
def patient_reported(
    store: StoreDep,
    scope: ScopeDep,
    since: Annotated[datetime | None, Query(description="memories created at or after")] = None,
    type: Annotated[list[MemoryType] | None, Query(description="only these types")] = None,
) -> Response:
    """What the patient said, as a FHIR R4 `collection` Bundle (MedicationStatement,
    Observation, DetectedIssue, Provenance), each resource tagged `patient-reported`."""
    bundle = export_patient(store, scope, since, frozenset(type) if type else None)
    return Response(json.dumps(bundle, ensure_ascii=False), media_type=FHIR_JSON)
