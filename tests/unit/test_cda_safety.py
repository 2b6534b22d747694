"""Unusable C-CDA input: refused or reported as one located Problem, never expanded or raised."""

from pathlib import Path

import pytest

from ingest.cda import read_cda
from ingest.records import Problem, Record

DATA = Path(__file__).resolve().parents[1] / "data" / "ccda"

BODY = (
    b'<ClinicalDocument xmlns="urn:hl7-org:v3"><id root="1.2.3"/>'
    b'<recordTarget><patientRole><id root="1.2" extension="P"/></patientRole></recordTarget>'
    b"<title>&x;</title></ClinicalDocument>"
)
BILLION_LAUGHS = (
    b'<?xml version="1.0"?>\n<!DOCTYPE ClinicalDocument [\n<!ENTITY a "lol">\n'
    + b"".join(
        b'<!ENTITY %s "%s">\n' % (bytes([98 + i]), (b"&%s;" % bytes([97 + i])) * 10)
        for i in range(9)
    )
    + b'<!ENTITY x "&j;">\n]>\n'
    + BODY
)
EXTERNAL_ENTITY = (
    b'<?xml version="1.0"?>\n<!DOCTYPE ClinicalDocument [\n'
    b'<!ENTITY x SYSTEM "file:///etc/passwd">\n]>\n' + BODY
)
EXTERNAL_DTD = (
    b'<?xml version="1.0"?>\n<!DOCTYPE ClinicalDocument SYSTEM "http://127.0.0.1:9/x.dtd">\n'
    + BODY.replace(b"&x;", b"t")
)


def only_problem(items: list[Record | Problem]) -> Problem:
    (problem,) = items
    assert isinstance(problem, Problem)
    assert problem.severity == "error"
    return problem


@pytest.mark.parametrize("document", [BILLION_LAUGHS, EXTERNAL_ENTITY, EXTERNAL_DTD])
def test_doctype_and_entities_are_refused_before_expansion(document: bytes) -> None:
    problem = only_problem(list(read_cda(document, "evil.xml")))
    assert problem.file == "evil.xml"
    assert "DOCTYPE" in problem.message
    assert "lol" not in problem.message and "root:" not in problem.message


def test_malformed_fragment_is_located() -> None:
    # HL7 section examples use the xsi: prefix without declaring it
    problem = only_problem(list(read_cda(DATA / "hl7/problem_resolved.xml", "frag.xml")))
    assert problem.line == 65
    assert problem.message.startswith("malformed XML: unbound prefix")


def test_truncated_document_is_located() -> None:
    whole = (DATA / "vendor/kareo_ccd_joey_miller.xml").read_bytes()
    cut = whole[: len(whole) // 2]
    problem = only_problem(list(read_cda(cut, "cut.xml")))
    assert problem.line == cut.count(b"\n") + 1  # where the input ran out
    assert problem.message.startswith("malformed XML")


@pytest.mark.parametrize("document", [b"", b"not xml", b"<a><b></a>"])
def test_not_xml_is_one_problem(document: bytes) -> None:
    assert only_problem(list(read_cda(document, "x"))).message.startswith("malformed XML")


def test_well_formed_but_not_a_clinical_document() -> None:
    problem = only_problem(list(read_cda(DATA / "hl7/allergy_no_information.xml", "frag")))
    assert "not a C-CDA document" in problem.message
    assert problem.path == "/component"


def test_document_without_patient_identifier() -> None:
    document = b'<ClinicalDocument xmlns="urn:hl7-org:v3"><id root="1.2.3"/></ClinicalDocument>'
    problem = only_problem(list(read_cda(document, "anon.xml")))
    assert problem.message == "no patient identifier"
    assert problem.path == "/ClinicalDocument/recordTarget/patientRole"


def test_unreadable_path_is_a_problem(tmp_path: Path) -> None:
    problem = only_problem(list(read_cda(tmp_path / "missing.xml", "missing.xml")))
    assert problem.message.startswith("cannot read C-CDA file")
