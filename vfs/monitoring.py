"""Which labs monitor which conditions, when the graph has no MONITORS links.

General medical knowledge, kept small on purpose: common chronic conditions and the LOINC
codes of the tests that follow them (guideline follow-up, not an exhaustive list).
A condition matches by SNOMED CT code, ICD-10(-CM) code prefix or a word in its label.
"""

import re
from dataclasses import dataclass

from engine.models import Fact

A1C = ("4548-4", "17856-6")
GLUCOSE = ("2345-7", "2339-0")
CREATININE = ("2160-0",)
EGFR = ("33914-3", "62238-1", "48642-3", "48643-1", "98979-8")
ALBUMIN_RATIO = ("9318-7", "14959-1")
POTASSIUM = ("2823-3", "6298-4")
SODIUM = ("2951-2",)
BUN = ("3094-0", "6299-2")
LIPIDS = ("2093-3", "18262-6", "13457-7", "2085-9", "2571-8")
BLOOD_PRESSURE = ("85354-9", "8480-6", "8462-4", "55284-4")


@dataclass(frozen=True)
class Monitoring:
    """One condition family and the LOINC codes that monitor it."""

    name: str
    snomed: frozenset[str]
    icd10: tuple[str, ...]
    words: re.Pattern[str]
    loinc: tuple[str, ...]


def _entry(name: str, snomed: str, icd10: str, words: str, *loinc: tuple[str, ...]) -> Monitoring:
    return Monitoring(
        name=name,
        snomed=frozenset(snomed.split()),
        icd10=tuple(icd10.split()),
        words=re.compile(rf"\b(?:{words})\b", re.IGNORECASE),
        loinc=tuple(code for group in loinc for code in group),
    )


TABLE = (
    _entry(
        "diabetes mellitus",
        "44054006 46635009 73211009 190331003 313436004",
        "E10 E11 E13",
        "diabetes mellitus|diabetes|t2dm|t1dm",
        A1C,
        GLUCOSE,
        CREATININE,
        EGFR,
        ALBUMIN_RATIO,
        LIPIDS,
    ),
    _entry("prediabetes", "15777000 714628002", "R73.0", "prediabetes", A1C, GLUCOSE),
    _entry(
        "hypertension",
        "38341003 59621000 1201005",
        "I10 I11 I12 I13 I15",
        "hypertension|hypertensive disorder",
        BLOOD_PRESSURE,
        CREATININE,
        EGFR,
        POTASSIUM,
        SODIUM,
    ),
    _entry(
        "hyperlipidemia",
        "55822004 13644009 267432004 398036000",
        "E78",
        "hyperlipidemia|hypercholesterolemia|dyslipidemia|hypertriglyceridemia",
        LIPIDS,
    ),
    _entry(
        "chronic kidney disease",
        "709044004 431855005 431856006 433144002 431857002 433146000 46177005",
        "N18",
        "chronic kidney disease|ckd|end stage renal disease",
        CREATININE,
        EGFR,
        ALBUMIN_RATIO,
        POTASSIUM,
        BUN,
        ("718-7",),
    ),
    _entry(
        "heart failure",
        "84114007 88805009 42343007 85232009",
        "I50",
        "heart failure",
        ("33762-6", "30934-4", "42637-9"),
        CREATININE,
        EGFR,
        POTASSIUM,
        SODIUM,
    ),
    _entry(
        "anemia",
        "271737000 87522002 234347009",
        "D50 D51 D52 D53 D63 D64",
        "anemia|anaemia",
        ("718-7", "4544-3", "787-2", "2276-4"),
    ),
    _entry(
        "hypothyroidism",
        "40930008 83664006",
        "E03",
        "hypothyroidism",
        ("3016-3", "3024-7"),
    ),
    _entry("hyperthyroidism", "34486009", "E05", "hyperthyroidism", ("3016-3", "3024-7")),
    _entry(
        "obesity",
        "414916001 162864005 408512008 238136002",
        "E66",
        "obesity|obese",
        ("39156-5", "29463-7"),
    ),
    _entry(
        "atrial fibrillation",
        "49436004 282825002",
        "I48",
        "atrial fibrillation",
        ("6301-6", "8867-4"),
    ),
    _entry(
        "chronic obstructive lung disease",
        "13645005 185086009",
        "J44",
        "chronic obstructive|copd|emphysema",
        ("59408-5", "2708-6", "9279-1", "19926-5"),
    ),
)


def _matches(entry: Monitoring, fact: Fact) -> bool:
    for coding in fact.codes:
        if coding.system == "snomed" and coding.code in entry.snomed:
            return True
        if coding.system in {"icd10cm", "icd10"} and coding.code.upper().startswith(entry.icd10):
            return True
    return bool(entry.words.search(fact.label))


def monitoring_loinc(condition: Fact) -> tuple[str, ...]:
    """LOINC codes of the labs that monitor a condition (empty when it is not in the table)."""
    codes: dict[str, None] = {}
    for entry in TABLE:
        if _matches(entry, condition):
            codes.update(dict.fromkeys(entry.loinc))
    return tuple(codes)
