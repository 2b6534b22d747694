"""Fact keys: code systems, text normalisation, dates, determinism."""

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.models import Coding, FactKind
from ingest.drugs import generic_names
from ingest.keys import (
    coding,
    fact_key,
    normalize_date,
    normalize_system,
    normalize_text,
    text_slug,
)


@pytest.mark.parametrize(
    ("system", "short"),
    [
        ("http://snomed.info/sct", "snomed"),
        ("urn:oid:2.16.840.1.113883.6.96", "snomed"),
        ("2.16.840.1.113883.6.88", "rxnorm"),
        ("http://loinc.org/", "loinc"),
        ("http://hl7.org/fhir/sid/cvx", "cvx"),
        (None, "unknown"),
        ("http://Example.org/Codes", "http://example.org/codes"),
    ],
)
def test_normalize_system(system: str | None, short: str) -> None:
    assert normalize_system(system) == short


def test_coding_strips_and_drops_missing_codes() -> None:
    assert coding("http://loinc.org", " 8480-6 ", "Systolic") == Coding(
        system="loinc", code="8480-6", display="Systolic"
    )
    assert coding("http://loinc.org", "  ") is None
    assert coding("http://loinc.org", None) is None


def test_code_beats_text_and_preferred_system_wins() -> None:
    codes = (
        Coding(system="icd10cm", code="E11.9"),
        Coding(system="snomed", code="44054006"),
    )
    assert fact_key(FactKind.CONDITION, codes, "Diabetes") == "condition:snomed:44054006"
    assert fact_key(FactKind.CONDITION, codes[:1], "Diabetes") == "condition:icd10cm:E11.9"
    local = (Coding(system="http://local", code="X1"),)
    assert fact_key(FactKind.CONDITION, local, "Type 2 Diabetes") == (
        "condition:text:type-2-diabetes"
    )


@pytest.mark.parametrize(
    ("label", "slug"),
    [
        ("Hypertension (disorder)", "hypertension"),
        ("HTN", "hypertension"),
        ("T2DM", "type-2-diabetes-mellitus"),
        ("Diabetes mellitus type II", "diabetes-mellitus-type-2"),
        ("Type I diabetes", "type-1-diabetes"),
        ("Chronic kidney disease stage 3", "chronic-kidney-disease-stage-3"),
    ],
)
def test_condition_text_is_normalised(label: str, slug: str) -> None:
    assert normalize_text(FactKind.CONDITION, label) == slug
    assert fact_key(FactKind.CONDITION, (), label) == f"condition:text:{slug}"


def test_abbreviations_only_expand_for_conditions() -> None:
    assert normalize_text(FactKind.PROCEDURE, "MI workup") == "mi-workup"


@pytest.mark.parametrize(
    ("label", "key"),
    [
        ("Lipitor 20 mg oral tablet", "medication:text:atorvastatin"),
        ("atorvastatin 20 MG", "medication:text:atorvastatin"),
        ("Zestril", "medication:text:lisinopril"),
        ("Acetaminophen 325 MG / HYDROcodone 7.5 MG", "medication:text:acetaminophen-hydrocodone"),
        ("Mystery pill 5 mg", "medication:text:mystery-pill-5-mg"),
    ],
)
def test_medication_text_key_uses_generic_names(label: str, key: str) -> None:
    assert fact_key(FactKind.MEDICATION, (), label) == key


def test_generic_names_are_exact_matches_only() -> None:
    assert generic_names("Coumadin 5mg") == ("warfarin",)
    assert generic_names("oral tablet once daily") == ()
    assert generic_names("") == ()


@pytest.mark.parametrize(
    ("value", "normalised"),
    [
        ("2012", "2012"),
        ("2012-09", "2012-09"),
        ("2012-09-17", "2012-09-17"),
        ("2012-09-17T10:00:00+02:00", "2012-09-17T08:00:00Z"),
        ("2012-09-17T23:30:00-01:00", "2012-09-18T00:30:00Z"),
        ("2012-09-17T10:00:00.123Z", "2012-09-17T10:00:00Z"),
        ("2012-09-17T10:00:00", "2012-09-17T10:00:00"),
        ("20120917", "2012-09-17"),
        ("201209", "2012-09"),
        ("20120917100000-0500", "2012-09-17T15:00:00Z"),
        ("20120917100000.5+0100", "2012-09-17T09:00:00Z"),
        ("201209171000", "2012-09-17T10:00:00"),
        ("2019-02-30T10:00:00Z", "2019-02-30T10:00:00Z"),
        ("0001-01-01T00:00:00+01:00", "0001-01-01T00:00:00+01:00"),  # before year 1 in UTC
        ("  ", None),
        (None, None),
        ("last spring", "last spring"),
    ],
)
def test_normalize_date(value: str | None, normalised: str | None) -> None:
    assert normalize_date(value) == normalised


def test_dated_kinds_key_on_the_normalised_date() -> None:
    codes = (Coding(system="loinc", code="8480-6"),)
    fhir = fact_key(FactKind.OBSERVATION, codes, "BP", "2012-09-17T10:00:00+02:00")
    cda = fact_key(FactKind.OBSERVATION, codes, "BP", "20120917080000+0000")
    assert fhir == cda == "observation:loinc:8480-6:2012-09-17T08:00:00Z"
    assert fact_key(FactKind.PROCEDURE, (), "Appendectomy") == "procedure:text:appendectomy:undated"
    assert fact_key(FactKind.CONDITION, (), "Asthma", "2012-01-01") == "condition:text:asthma"


@given(st.text())
def test_text_slug_is_a_clean_idempotent_slug(text: str) -> None:
    slug = text_slug(text)
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", slug)
    assert text_slug(slug) == slug
    assert text_slug(text.upper()) == text_slug(text.lower()) or not text.isascii()


@given(st.text(alphabet=st.characters(codec="ascii"), min_size=1))
def test_text_slug_ignores_case_and_punctuation(text: str) -> None:
    assert text_slug(text) == text_slug(f"  {text.upper()} !")


codings = st.builds(
    Coding,
    system=st.sampled_from(["snomed", "icd10cm", "rxnorm", "loinc", "cvx", "http://local"]),
    code=st.text(alphabet="0123456789.-", min_size=1, max_size=10),
)


@given(
    st.sampled_from(list(FactKind)),
    st.lists(codings, max_size=4).map(tuple),
    st.text(max_size=40),
    st.one_of(st.none(), st.dates().map(str)),
)
def test_fact_key_is_deterministic_and_well_formed(
    kind: FactKind, codes: tuple[Coding, ...], label: str, date: str | None
) -> None:
    key = fact_key(kind, codes, label, date)
    assert key == fact_key(kind, codes, label, date)
    assert key.startswith(f"{kind}:")
    assert len(key.split(":")) >= 3
    if kind in (FactKind.OBSERVATION, FactKind.PROCEDURE):
        assert key.endswith(f":{date or 'undated'}")
