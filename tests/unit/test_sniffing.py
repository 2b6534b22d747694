"""Input sniffing as vendor exports really start: a byte-order mark, an xml-stylesheet
processing instruction, CRLF line ends, a .ccd extension."""

import codecs
import shutil
import uuid
from pathlib import Path

import pytest

from engine.sqlite_store import SqliteStore
from ingest.pipeline import Ingestor, ingest_paths, read_bytes
from ingest.sniff import what_is_in

VENDOR = (
    Path(__file__).parents[1] / "data" / "ccda" / "vendor" / "cerner_problems_and_medications.xml"
)
BUNDLE = (
    b'{"resourceType": "Condition", "id": "c", "subject": {"reference": "Patient/p"},'
    b' "code": {"text": "Migraine"}}'
)


def _vendor_like(raw: bytes) -> bytes:
    """The same document as a Windows export with a stylesheet would carry it."""
    declaration = raw.index(b"?>") + 2
    styled = (
        raw[:declaration]
        + b'\n<?xml-stylesheet type="text/xsl" href="CDA.xsl"?>'
        + raw[declaration:]
    )
    return codecs.BOM_UTF8 + styled.replace(b"\n", b"\r\n")


def _facts(data: bytes, label: str) -> int:
    ingestor = Ingestor(SqliteStore(":memory:"), f"org-{uuid.uuid4().hex}", patient="p")
    ingestor.feed(label, read_bytes(data, label))
    assert ingestor.report.unusable == []
    return ingestor.report.deltas.facts_added


def test_bom_stylesheet_and_crlf_do_not_make_a_c_cda_unusable() -> None:
    raw = VENDOR.read_bytes()
    assert _facts(_vendor_like(raw), "styled.xml") == _facts(raw, "plain.xml") > 0


@pytest.mark.parametrize("prefix", [codecs.BOM_UTF8, b"\r\n\r\n", codecs.BOM_UTF8 + b"\r\n "])
def test_a_json_resource_behind_a_bom_or_blank_lines_is_read(prefix: bytes) -> None:
    assert _facts(prefix + BUNDLE, "c.json") == 1


def test_ccd_files_in_a_folder_are_ingested(tmp_path: Path) -> None:
    shutil.copy(VENDOR, tmp_path / "export.ccd")
    report = ingest_paths(SqliteStore(":memory:"), f"org-{uuid.uuid4().hex}", [tmp_path], workers=1)
    assert report.files == 1 and report.deltas.facts_added > 0


def test_what_a_body_holds_is_named() -> None:
    assert what_is_in(b'{"resourceType": "Frobnicate"}') == "one resource of type Frobnicate"
    assert what_is_in(codecs.BOM_UTF8 + b"[1, 2]") == "a JSON list, not a FHIR resource"
    assert what_is_in(b"<?xml version='1.0'?><!-- c --><foo/>") == "XML with root <foo>"
    assert what_is_in(b"hello") == "no JSON or XML"
