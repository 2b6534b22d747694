"""FHIR R4 input: JSON Bundles and resources, Bulk Data NDJSON → `Record | Problem`.

`fhir_bundle` and `fhir_ndjson` read (`fhir_ndjson_pool` validates an export's lines
in a process pool); `fhir_read` validates and resolves references and
patient identity; `fhir_map` turns resources into claims (its docstring has the status
tables and the fields of each kind) with `fhir_clinical` and `fhir_meds`, on top of
`fhir_claims` and `fhir_values`.
"""

from ingest.fhir_bundle import read_fhir_json
from ingest.fhir_ndjson import read_fhir_ndjson, read_fhir_ndjson_bytes

__all__ = ["read_fhir_json", "read_fhir_ndjson", "read_fhir_ndjson_bytes"]
