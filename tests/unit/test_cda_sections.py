"""C-CDA section mappings: what each kind of entry yields, across vendors and HL7 examples."""

import re
from pathlib import Path

import pytest

from engine.models import Claim, FactKind, FactLinkType
from ingest.cda import read_cda
from ingest.records import Problem, Record

DATA = Path(__file__).resolve().parents[1] / "data" / "ccda"

# The HL7 section examples are fragments; this puts one in a minimal document.
HEADER = (
    b'<ClinicalDocument xmlns="urn:hl7-org:v3" xmlns:sdtc="urn:hl7-org:sdtc"'
    b' xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">'
    b'<id root="2.16.840.1.113883.19.5" extension="doc-1"/>'
    b'<effectiveTime value="20200101120000-0500"/>'
    b'<recordTarget><patientRole><id root="2.16.840.1.113883.19.5" extension="P1"/>'
    b"</patientRole></recordTarget><component><structuredBody>"
)
FOOTER = b"</structuredBody></component></ClinicalDocument>"


def wrap(fragment: bytes) -> bytes:
    body = re.sub(rb"^\s*<\?xml[^>]*\?>", b"", fragment).strip()
    if not body.startswith(b"<component"):
        body = b"<component>" + body + b"</component>"
    return HEADER + body + FOOTER


def read(name: str) -> list[Record | Problem]:
    return list(read_cda(DATA / name, name))


def read_fragment(name: str) -> list[Record | Problem]:
    return list(read_cda(wrap((DATA / name).read_bytes()), name))


def claims(items: list[Record | Problem], kind: FactKind | None = None) -> list[Claim]:
    return [
        claim
        for item in items
        if isinstance(item, Record) and item.source is not None
        for claim in item.source.claims
        if kind is None or claim.kind == kind
    ]


def by_key(items: list[Record | Problem], kind: FactKind) -> dict[str, Claim]:
    return {c.fact_key: c for c in claims(items, kind)}


def warnings(items: list[Record | Problem]) -> list[str]:
    return [i.message for i in items if isinstance(i, Problem) and i.severity == "warning"]


def errors(items: list[Record | Problem]) -> list[Problem]:
    return [i for i in items if isinstance(i, Problem) and i.severity == "error"]


# --- problems ------------------------------------------------------------------------


def test_cerner_problems_keyed_on_icd9_translation_named_from_the_narrative() -> None:
    conditions = by_key(read("vendor/cerner_problems_and_medications.xml"), FactKind.CONDITION)
    # value is nullFlavor="OTH" with an ICD-9-CM translation; one concern act has no templateId
    assert set(conditions) == {
        "condition:icd9cm:434.91",
        "condition:icd9cm:496",
        "condition:icd9cm:401.9",
        "condition:icd9cm:780.2",
        "condition:icd9cm:599.0",
    }
    hypertension = conditions["condition:icd9cm:401.9"]
    assert hypertension.label == "Hypertension, essential"
    assert hypertension.status == "active"
    assert hypertension.fields == {"onset": "2006-05-16"}


def test_resolved_problem_has_abatement_in_utc_and_every_coding() -> None:
    (claim,) = claims(read_fragment("hl7/problem_resolved.xml"), FactKind.CONDITION)
    assert claim.fact_key == "condition:snomed:363746003"
    assert claim.label == "Acute pharyngitis"
    assert claim.status == "resolved"
    assert claim.fields == {"onset": "2014-04-02", "abatement": "2014-04-06T04:59:59Z"}
    assert {(c.system, c.code) for c in claim.codes} == {
        ("snomed", "363746003"),
        ("icd9cm", "462"),
        ("icd10cm", "J02.9"),
    }


def test_negated_problem_is_a_warning_not_a_condition() -> None:
    items = read_fragment("hl7/problem_negated.xml")
    assert claims(items) == []
    assert any("negationInd" in w for w in warnings(items))


def test_greenway_resolved_problem_and_placeholder_dates() -> None:
    conditions = by_key(read("vendor/greenway_clinical_visit_summary.xml"), FactKind.CONDITION)
    pharyngitis = conditions["condition:snomed:363746003"]
    assert pharyngitis.status == "resolved"
    assert pharyngitis.fields == {"onset": "2011-10-28", "abatement": "2011-11-07"}
    asthma = conditions["condition:snomed:195967001"]  # low value="000000": no onset
    assert asthma.status == "active"
    assert asthma.fields == {}


# --- medications ---------------------------------------------------------------------


def test_medication_indication_becomes_reason_and_prescribed_for_link() -> None:
    items = read_fragment("hl7/med_indications.xml")
    records = [i for i in items if isinstance(i, Record) and i.links]
    (record,) = records
    assert record.source is not None
    (claim,) = record.source.claims
    assert claim.fact_key == "medication:rxnorm:197806"
    assert claim.fields["reason"] == "Joint pain"
    (link,) = record.links
    assert (link.from_key, link.to_key) == (claim.fact_key, "condition:snomed:57676002")
    assert link.type == FactLinkType.PRESCRIBED_FOR


def test_medication_dose_route_frequency_prescriber() -> None:
    (claim,) = claims(read_fragment("hl7/med_every_4_6_hours.xml"), FactKind.MEDICATION)
    assert claim.label == "pseudoephedrine hydrochloride 30 MG Oral Tablet [Sudafed]"
    assert claim.status == "current"
    assert claim.fields == {
        "dose": "2",
        "route": "Oral Route of Administration",
        "frequency": "every 4-6 hours",
        "start": "2014-01-18",
        "prescriber": "Heartly Sixer",
        "raw_status": "active",
    }


def test_refused_medication_is_not_recorded() -> None:
    items = read_fragment("hl7/med_refused.xml")
    assert claims(items) == []
    assert any("negationInd" in w for w in warnings(items))


def test_greenway_medications_ended_before_the_document_are_discontinued() -> None:
    meds = by_key(read("vendor/greenway_clinical_visit_summary.xml"), FactKind.MEDICATION)
    # the primary code has no codeSystem; the RxNorm translation keys the fact
    azithromycin = meds["medication:rxnorm:308460"]
    assert azithromycin.status == "discontinued"
    assert azithromycin.fields["end"] == "2013-01-26"
    assert azithromycin.fields["dose"] == "2 tablet"
    assert azithromycin.fields["raw_status"] == "completed"


def test_cerner_completed_without_end_is_current() -> None:
    meds = by_key(read("vendor/cerner_problems_and_medications.xml"), FactKind.MEDICATION)
    lisinopril = meds["medication:rxnorm:314076"]
    assert lisinopril.label == "lisinopril 10 mg oral tablet"  # displayName "????" ignored
    assert lisinopril.status == "current"
    assert lisinopril.fields["raw_status"] == "completed"
    assert lisinopril.fields["dose"] == "1 cap(s)"
    assert lisinopril.fields["start"] == "2008-09-22T13:58:00Z"
    assert "medication:text:aspirin" in meds  # no RxNorm code: keyed on its text


# --- allergies -----------------------------------------------------------------------


def test_food_allergy_with_reaction_and_partial_onset() -> None:
    (claim,) = claims(read_fragment("hl7/allergy_egg.xml"), FactKind.ALLERGY)
    assert claim.fact_key == "allergy:snomed:102263004"
    assert claim.status == "active"
    assert claim.fields == {"category": "food", "reactions": ["Wheal"], "onset": "1998"}


@pytest.mark.parametrize(
    ("name", "key", "label"),
    [
        ("hl7/allergy_no_known.xml", "allergy:snomed:716186003", "No known allergy"),
        ("hl7/allergy_not_peanuts.xml", "allergy:snomed:762952008", "No known allergy to Peanut"),
    ],
)
def test_negated_allergies_are_no_known(name: str, key: str, label: str) -> None:
    (claim,) = claims(read_fragment(name), FactKind.ALLERGY)
    assert (claim.fact_key, claim.label) == (key, label)
    assert claim.fields["no_known"] is True


def test_negated_allergy_to_any_substance_is_no_known_allergy() -> None:
    (claim,) = claims(read("hl7/ccd2.xml"), FactKind.ALLERGY)  # playingEntity 105590001
    assert claim.fact_key == "allergy:snomed:716186003"
    assert claim.fields == {"no_known": True}


def test_kareo_ccd_r1_allergy_substance_from_text_and_closed_concern() -> None:
    (claim,) = claims(read("vendor/kareo_ccd_joey_miller.xml"), FactKind.ALLERGY)
    assert claim.fact_key == "allergy:text:sulfa-drug"
    assert claim.status == "resolved"  # concern act statusCode completed, no status observation
    assert "no_known" not in claim.fields


def test_allergy_with_no_information_is_skipped_not_known_allergy() -> None:
    items = read("vendor/practicefusion_summary_of_care.xml")
    assert claims(items, FactKind.ALLERGY) == []  # value nullFlavor NI: no information
    assert "allergy observation with neither code nor text skipped" in warnings(items)


# --- results and vital signs ---------------------------------------------------------


def test_greenway_lab_result() -> None:
    labs = by_key(read("vendor/greenway_clinical_visit_summary.xml"), FactKind.OBSERVATION)
    hgb = labs["observation:loinc:718-7:2013-01-21T13:35:18"]
    assert hgb.label == "Hgb Bld-mCnc"
    assert hgb.status == "final"
    assert hgb.fields == {
        "value": 13.4,
        "unit": "g/dL",
        "effective": "2013-01-21T13:35:18",
        "category": "laboratory",
    }


def test_pending_result_without_value_and_interpretation_text() -> None:
    labs = claims(read("hl7/ccd2.xml"), FactKind.OBSERVATION)
    (wbc,) = [c for c in labs if c.fields["category"] == "laboratory"]
    assert wbc.fact_key == "observation:loinc:804-5:2014-10-15T15:30:26Z"
    assert wbc.status == "preliminary"
    assert "value" not in wbc.fields


def test_kareo_ccd_r1_vital_signs() -> None:
    vitals = by_key(read("vendor/kareo_ccd_joey_miller.xml"), FactKind.OBSERVATION)
    height = vitals["observation:loinc:8302-2:2014-05-15"]
    assert height.fields == {
        "value": 71.0,
        "unit": "[in_us]",
        "effective": "2014-05-15",
        "category": "vital-signs",
    }
    assert sum(c.fields["category"] == "vital-signs" for c in vitals.values()) == 8


# --- immunizations, procedures, encounters -------------------------------------------

REFUSED_IMMUNIZATION = b"""<section>
<templateId root="2.16.840.1.113883.10.20.22.2.2.1"/><code code="11369-6"/><text/>
<entry><substanceAdministration classCode="SBADM" moodCode="EVN" negationInd="true">
  <templateId root="2.16.840.1.113883.10.20.22.4.52"/><id root="imm-1"/>
  <statusCode code="completed"/><effectiveTime value="20121015"/>
  <consumable><manufacturedProduct><manufacturedMaterial>
    <code code="88" codeSystem="2.16.840.1.113883.12.292" displayName="influenza vaccine"/>
  </manufacturedMaterial></manufacturedProduct></consumable>
  <entryRelationship typeCode="RSON"><observation classCode="OBS" moodCode="EVN">
    <templateId root="2.16.840.1.113883.10.20.22.4.53"/>
    <code code="PATOBJ" codeSystem="2.16.840.1.113883.5.8" displayName="patient objection"/>
  </observation></entryRelationship>
</substanceAdministration></entry></section>"""


def test_refused_immunization_is_not_done_with_reason() -> None:
    items = list(read_cda(wrap(REFUSED_IMMUNIZATION), "inline"))
    (claim,) = claims(items, FactKind.IMMUNIZATION)
    assert claim.fact_key == "immunization:cvx:88:2012-10-15"
    assert claim.status == "not-done"
    assert claim.fields == {"occurrence": "2012-10-15", "status_reason": "patient objection"}


def test_kareo_immunization_and_uncoded_placeholder_entries() -> None:
    (claim,) = claims(read("vendor/kareo_ccd_joey_miller.xml"), FactKind.IMMUNIZATION)
    assert claim.label == "Pneumococcal (PCV, PPSV)"
    assert claim.status == "completed"
    assert claim.fields == {"occurrence": "2014-05-15T00:53:16"}
    assert tuple(c.code for c in claim.codes) == ("33",)


def test_procedure_activities_of_each_statement_type() -> None:
    items = read("hl7/ccd2.xml")
    procedures = {
        item.source.source.resource_type: item.source.claims[0]
        for item in items
        if isinstance(item, Record) and item.source is not None
        if item.source.claims[0].kind == FactKind.PROCEDURE
    }
    assert set(procedures) == {
        "ProcedureActivityProcedure",
        "ProcedureActivityObservation",
        "ProcedureActivityAct",
    }
    appendectomy = procedures["ProcedureActivityProcedure"]
    assert appendectomy.fact_key == "procedure:snomed:6025007:2014-10-02T15:30:26Z"
    assert appendectomy.status == "completed"
    assert appendectomy.fields == {"performed": "2014-10-02T15:30:26Z"}


def test_emerge_encounters() -> None:
    encounters = by_key(read("vendor/emerge_patient_5.xml"), FactKind.ENCOUNTER)
    assert len(encounters) == 5
    visit = encounters["encounter:cpt:99281:2010-08-26T10:00:00"]
    assert visit.status == "finished"
    assert visit.fields == {"start": "2010-08-26T10:00:00", "type": "Emergency dept visit"}


def test_placeholder_entries_are_skipped_with_warnings() -> None:
    items = read("vendor/practicefusion_summary_of_care.xml")
    assert claims(items, FactKind.ENCOUNTER) == []
    assert claims(items, FactKind.IMMUNIZATION) == []
    found = warnings(items)
    assert "encounter 'No Encounters Indicated' records nothing; skipped" in found
    assert "procedure with neither code nor text skipped" in found


# --- sections without entries --------------------------------------------------------


def test_narrative_only_section_is_a_located_warning() -> None:
    items = read("vendor/greenway_clinical_visit_summary.xml")
    (problem,) = [i for i in items if isinstance(i, Problem) and "section" in i.message]
    assert problem.severity == "warning"
    assert problem.message.startswith("immunizations section has no entries (narrative only)")
    assert problem.line == 927
    assert problem.path.endswith("/section")


def test_null_flavor_sections_are_warnings() -> None:
    items = read("hl7/ccd2.xml")
    assert {w.split(" section")[0] for w in warnings(items) if "nullFlavor" in w} == {
        "medications",
        "problems",
    }
    assert errors(items) == []


# --- vendors -------------------------------------------------------------------------

VENDORS = {
    "vendor/cerner_problems_and_medications.xml": {"condition", "medication"},
    "vendor/greenway_clinical_visit_summary.xml": {
        "allergy",
        "condition",
        "medication",
        "observation",
        "procedure",
    },
    "vendor/kareo_ccd_joey_miller.xml": {
        "allergy",
        "condition",
        "medication",
        "immunization",
        "observation",
    },
    "vendor/practicefusion_summary_of_care.xml": {"condition", "medication", "observation"},
    "vendor/emerge_patient_5.xml": {
        "allergy",
        "condition",
        "encounter",
        "medication",
        "observation",
        "procedure",
    },
}


@pytest.mark.parametrize("name", sorted(VENDORS))
def test_vendor_documents_map_without_errors(name: str) -> None:
    items = read(name)
    assert isinstance(items[0], Record) and items[0].patient is not None
    assert errors(items) == []
    assert {c.kind.value for c in claims(items)} == VENDORS[name]
    refs = [i.source.source.source_ref for i in items if isinstance(i, Record) and i.source]
    assert len(refs) == len(set(refs))
    assert all(c.label and c.fact_key.startswith(f"{c.kind.value}:") for c in claims(items))
