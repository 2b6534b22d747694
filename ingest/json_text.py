"""JSON text in and out of the ingest, by orjson.

With the standard library's `json`, parsing the input and hashing each resource's
canonical form took a tenth of an ingest (`bench.ingest`); orjson does both about five
times faster. What orjson refuses is read again by `json`, so invalid input is reported
with its messages ("Expecting ',' delimiter: line 3 column 5") and what `json` alone
accepts (NaN) reads as before.
"""

import json
from typing import Any

import orjson


def loads(data: bytes | str) -> Any:
    """The JSON value of `data`; raises `json.JSONDecodeError` (a `ValueError`)."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        return json.loads(data)


def canonical(value: Any) -> bytes:
    """Sorted keys, no whitespace, UTF-8: the bytes of `json.dumps(value, sort_keys=True,
    separators=(",", ":"), ensure_ascii=False)`, but for the floats that `json` writes in
    exponent form, which orjson writes otherwise (1e-05 → 0.00001, 1e+16 → 1e16)."""
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    except TypeError:  # an integer beyond 64 bits
        return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
