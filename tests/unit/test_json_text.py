"""The ingest's JSON text: orjson's speed, the standard library's bytes and messages."""

import json

import pytest

from ingest import json_text
from ingest.fhir_map import canonical_hash

RESOURCE = {
    "resourceType": "Observation",
    "id": "bp-1",
    "status": "final",
    "code": {"text": "Blutdruck — systolisch", "coding": [{"code": "8480-6"}]},
    "valueQuantity": {"value": 132.5, "unit": "mm[Hg]"},
    "component": [{"valueInteger": 7}, {"valueBoolean": False}, {"valueString": None}],
}


def test_canonical_bytes_are_the_standard_librarys() -> None:
    expected = json.dumps(RESOURCE, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert json_text.canonical(RESOURCE) == expected.encode()
    # content hashes written by earlier versions stay the same
    assert canonical_hash(RESOURCE) == canonical_hash(json.loads(json.dumps(RESOURCE)))
    assert json_text.canonical({"big": 2**70}) == b'{"big":1180591620717411303424}'


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (b'{"resourceType": "Bundle", "entry": [', "Expecting value: line 1 column 38"),
        (b'{"a": 1,}', "Expecting property name enclosed in double quotes"),
    ],
)
def test_invalid_json_is_reported_as_the_standard_library_does(text: bytes, message: str) -> None:
    with pytest.raises(json.JSONDecodeError) as raised:
        json_text.loads(text)
    assert message in str(raised.value)


def test_what_only_the_standard_library_accepts_still_reads() -> None:
    assert json_text.loads(b'{"value": 1}') == {"value": 1}
    assert json_text.loads(b'{"value": NaN}')["value"] != 0  # NaN, as json reads it
