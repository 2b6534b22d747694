"""The patient of a C-CDA document: recordTarget/patientRole → reference and demographics."""

from engine.errors import InvalidInput
from engine.models import Patient
from ingest.cda_xml import Element, attr, every, first, local, parse_ts, person_name

GENDERS = {"M": "male", "F": "female", "UN": "other"}


def patient_system(patient_key: str | None) -> str | None:
    """The identifier system (an OID) named by a `patient_key`, None for the default.

    Raises:
        InvalidInput: neither "id" nor "identifier:SYSTEM".
    """
    if patient_key in (None, "", "id"):
        return None
    system = str(patient_key).removeprefix("identifier:").removeprefix("urn:oid:")
    if system == patient_key or not system:
        raise InvalidInput(f"patient_key must be 'id' or 'identifier:SYSTEM', not {patient_key!r}")
    return system


def cda_patient_ref(document: Element, system: str | None = None) -> str | None:
    """The patient reference of a ClinicalDocument (or of a patientRole element).

    The first `recordTarget/patientRole/id` with an `extension` gives that extension
    (the MRN in practice); failing that, the first id's `root`. With `system` (an OID),
    only the extension of an id whose root is that OID. None when there is none.
    """
    role = document if local(document) == "patientRole" else None
    role = role if role is not None else first(document, "h:recordTarget/h:patientRole")
    ids = [i for i in every(role, "h:id") if not attr(i, "nullFlavor")]
    if system is not None:
        return next(
            (ext for i in ids if attr(i, "root") == system and (ext := attr(i, "extension"))), None
        )
    with_extension = next((i for i in ids if attr(i, "extension")), None)
    if with_extension is not None:
        return attr(with_extension, "extension")
    return next((r for i in ids if (r := attr(i, "root"))), None)


def cda_patient(document: Element) -> Patient:
    """Demographics from recordTarget/patientRole."""
    role = first(document, "h:recordTarget/h:patientRole")
    patient = first(role, "h:patient")
    names = every(patient, "h:name")
    legal = next((n for n in names if "L" in (attr(n, "use") or "").split()), None)
    name = person_name(legal if legal is not None else (names[0] if names else None))
    # The calendar date as written: a birth time's zone must not move it to another day.
    birth = parse_ts((attr(first(patient, "h:birthTime"), "value") or "")[:8])
    identifiers = tuple(
        f"{root}|{ext}" if ext else root
        for i in every(role, "h:id")
        if (root := attr(i, "root")) and not attr(i, "nullFlavor")
        for ext in [attr(i, "extension")]
    )
    gender = GENDERS.get(attr(first(patient, "h:administrativeGenderCode"), "code") or "")
    addr = first(role, "h:addr")
    parts = [
        *every(addr, "h:streetAddressLine"),
        first(addr, "h:city"),
        first(addr, "h:postalCode"),
    ]
    address = ", ".join(t.strip() for p in parts if p is not None and (t := p.text or "").strip())
    phones = [
        v for t in every(role, "h:telecom") if (v := attr(t, "value") or "").startswith("tel:")
    ]
    return Patient(
        name=name,
        birth_date=birth,
        gender=gender,
        identifiers=identifiers,
        address=address or None,
        phone=phones[0].removeprefix("tel:") if phones else None,
    )
