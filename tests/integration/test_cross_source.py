"""A FHIR bundle and C-CDA documents about one patient meet fact by fact, layer by layer."""

from fastapi.testclient import TestClient

from tests.conftest import DATA

CROSS = DATA / "cross"


def ingest(client: TestClient, name: str) -> dict[str, int]:
    route = "fhir" if name.endswith(".json") else "cda"
    response = client.post(
        f"/v1/patients/bea/ingest/{route}",
        content=(CROSS / name).read_bytes(),
        headers={"content-type": "application/json" if route == "fhir" else "application/xml"},
    )
    assert response.status_code == 200, response.text
    deltas: dict[str, int] = response.json()["deltas"]
    return deltas


def test_each_layer_merges_its_pair(client: TestClient) -> None:
    ingest(client, "record.fhir.json")
    deltas = ingest(client, "record.cda.xml")

    facts = {f["fact_id"]: f for f in client.get("/v1/patients/bea/facts").json()}
    merged_by = {key: [(m["layer"], m["key"]) for m in f["merged_by"]] for key, f in facts.items()}
    assert {key: by for key, by in merged_by.items() if by} == {
        "condition:snomed:239872002": [("text", "osteoarthritis of hip")],
        "condition:icd10cm:I10": [("code", "icd10cm i10")],
        "condition:icd10cm:E78.5": [("text", "hyperlipidemia")],
        "medication:rxnorm:855332": [("ingredient", "warfarin 5 mg tablet")],
        "allergy:rxnorm:723": [("ingredient", "amoxicillin")],
    }
    assert (deltas["facts_added"], deltas["facts_merged"]) == (1, 5)  # lisinopril is new
    assert len(facts) == 8
    warfarin = facts["medication:rxnorm:855332"]
    assert {s["format"] for s in warfarin["sources"]} == {"fhir", "cda"}
    assert "raw_status" in [c["field"] for c in warfarin["conflicts"]]


def test_a_claim_matching_two_facts_is_reported_not_merged(client: TestClient) -> None:
    ingest(client, "record.fhir.json")
    ingest(client, "record.cda.xml")
    ingest(client, "record.both.cda.xml")

    report = client.get("/v1/patients/bea/resolution").json()
    (candidate,) = report["candidates"]
    assert candidate["fact_id"] == "condition:snomed:239872002"
    assert candidate["also_matches"] == ["condition:icd10cm:M16.11"]
    assert report["merges_by_layer"] == {"text": 2, "code": 2, "ingredient": 2}
    hip_icd = client.get("/v1/patients/bea/facts/condition:icd10cm:M16.11").json()
    assert len(hip_icd["sources"]) == 1
    sources = client.get("/v1/patients/bea/vfs/sources.md").text
    assert "## Resolution Candidates" in sources
    assert "**DISCREPANCY** · **Hip arthritis**" in sources
    assert "Also matches: Unilateral primary osteoarthritis, right hip" in sources


def test_the_order_of_ingest_does_not_change_the_facts(client: TestClient) -> None:
    ingest(client, "record.cda.xml")
    ingest(client, "record.fhir.json")

    facts = client.get("/v1/patients/bea/facts").json()
    assert len(facts) == 8
    assert sorted(len(f["sources"]) for f in facts) == [1, 1, 1, 2, 2, 2, 2, 2]
