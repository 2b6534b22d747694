"""Ingesting real third-party exports (tests/data/corpus) on both backends."""

import os
import signal
import subprocess
import sys
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from engine.models import Scope
from engine.store import GraphStore, open_store
from ingest.pipeline import ingest_paths
from tests.conftest import DATA
from tests.integration.raw_counts import bundle_resources, expected_counts, ndjson_resources
from tests.integration.snapshot import snapshot

CORPUS = DATA / "corpus"
SYNTHEA = CORPUS / "fhir" / "synthea-r4-bundles"
BULK = CORPUS / "fhir" / "bulk-ndjson-10-patients"
HL7_FHIR = CORPUS / "fhir" / "hl7-r4-examples"
PATIENT_BUNDLES = sorted(p for p in SYNTHEA.glob("*.json") if "Information" not in p.name)


def _kinds(store: GraphStore, org: str) -> dict[str, Counter[str]]:
    return {
        patient: Counter(f.kind.value for f in store.list_facts(Scope(org=org, patient=patient)))
        for patient in store.list_patients(org)
    }


@pytest.mark.slow
def test_synthea_bundles_match_an_independent_count(store: GraphStore, org: str) -> None:
    report = ingest_paths(store, org, [SYNTHEA])

    assert report.exit_code == 0, report.errors
    assert _kinds(store, org) == expected_counts(bundle_resources(PATIENT_BUNDLES))


@pytest.mark.slow
def test_bulk_export_matches_an_independent_count(store: GraphStore, org: str) -> None:
    report = ingest_paths(store, org, [BULK])

    assert report.exit_code == 0, report.errors
    assert _kinds(store, org) == expected_counts(ndjson_resources(BULK))


@pytest.mark.slow
def test_every_corpus_file_is_ingested_or_rejected_with_a_located_error(
    store: GraphStore, org: str
) -> None:
    report = ingest_paths(store, org, [CORPUS / "fhir", CORPUS / "ccda"])

    # HL7 example files reuse patient ids for different people: those documents are
    # refused (wrong-patient protection) and their resources counted as rejected
    assert report.resources + report.rejected > 9000
    assert len(report.patients) > 300
    # Sources keep their own facts: files that reuse resource ids, setIds and entry ids
    # (HL7 examples) are kept apart, and no file of the corpus is a newer version of another
    deltas = report.deltas
    assert (deltas.facts_removed, deltas.sources_replaced, deltas.sources_retired) == (0, 0, 0)
    assert deltas.sources_kept_apart == 18
    for problem in report.errors + report.unusable:
        assert problem.file and problem.message
        assert (
            problem.fatal
            or problem.index is not None
            or problem.line is not None
            or (problem.resource_type is not None)
        ), problem
    # The only unusable inputs are the HL7 C-CDA section snippets: fragments, not documents.
    snippets = CORPUS / "ccda" / "hl7-examples"
    assert report.unusable
    for problem in report.unusable:
        section = Path(problem.file).relative_to(snippets).parts[0]
        assert section in {"Allergies", "Medications", "Problems"}, problem


def test_hl7_fhir_examples_never_raise(store: GraphStore, org: str) -> None:
    report = ingest_paths(store, org, sorted(HL7_FHIR.glob("*.json")))

    assert report.files == 242
    assert report.unusable == []
    for problem in report.errors:
        assert problem.resource_type and problem.message, problem


@pytest.mark.slow
def test_ingesting_twice_changes_nothing(store: GraphStore, org: str) -> None:
    ingest_paths(store, org, [SYNTHEA])
    before = snapshot(store, org)

    again = ingest_paths(store, org, [SYNTHEA])

    assert again.deltas.facts_added == again.deltas.sources_added == 0
    assert again.deltas.sources_unchanged == again.resources - len(PATIENT_BUNDLES)
    assert snapshot(store, org) == before


@pytest.mark.slow
def test_concurrent_overlapping_ingests_create_no_duplicates(store: GraphStore, org: str) -> None:
    halves = [PATIENT_BUNDLES[:12], PATIENT_BUNDLES[6:]]
    with ThreadPoolExecutor(max_workers=2) as pool:
        reports = list(pool.map(lambda paths: ingest_paths(store, org, paths), halves))
    reference = f"{org}-ref"
    ingest_paths(store, reference, PATIENT_BUNDLES)

    assert all(r.exit_code == 0 for r in reports)
    assert snapshot(store, org) == snapshot(store, reference)


def test_fhir_and_cda_of_one_patient_merge_with_a_conflict(store: GraphStore, org: str) -> None:
    report = ingest_paths(store, org, [DATA / "pair"])
    scope = Scope(org=org, patient="pair-patient-1")

    assert report.exit_code == 0
    facts = {f.fact_key: f for f in store.list_facts(scope)}
    diabetes = facts["condition:snomed:44054006"]
    metformin = facts["medication:rxnorm:860975"]
    assert {s.format.value for s in diabetes.sources} == {"fhir", "cda"}
    assert {s.format.value for s in metformin.sources} == {"fhir", "cda"}
    (conflict,) = [c for c in diabetes.conflicts if c.field == "status"]
    assert conflict.winner == "resolved"
    assert conflict.winner_source.startswith("cda:") and conflict.winner_source.endswith(
        ":pair-concern-1"
    )
    assert diabetes.status == "resolved"
    assert metformin.status == "current" and not metformin.conflicts


@pytest.mark.slow
def test_ingest_killed_part_way_converges_on_rerun(
    store: GraphStore, org: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    url = _url_of(request, tmp_path)
    killed, reference = f"{org}-killed", f"{org}-ref"
    graph = open_store(url)
    try:
        command = [sys.executable, "-m", "api.cli", "ingest", "--store", url, "--json"]
        process = subprocess.Popen(
            [*command, "--org", killed, str(CORPUS / "fhir")],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 120
        while not graph.list_patients(killed) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert process.poll() is None, "the ingest finished before it could be killed"
        process.send_signal(signal.SIGKILL)
        process.wait()
        partial = snapshot(graph, killed)

        for org_name in (killed, reference):
            subprocess.run([*command, "--org", org_name, str(CORPUS / "fhir")], check=False)

        assert partial != snapshot(graph, reference)
        assert snapshot(graph, killed) == snapshot(graph, reference)
    finally:
        graph.close()


def _url_of(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    backend = request.node.callspec.params["store"]
    if backend == "sqlite":
        return f"sqlite:///{tmp_path / 'killed.db'}"
    uri: str = request.getfixturevalue("neo4j_uri")
    return uri


def test_cli_reports_exit_codes(tmp_path: Path) -> None:
    env = os.environ | {"CCE_STORE_URL": f"sqlite:///{tmp_path / 'cli.db'}"}
    command = [sys.executable, "-m", "api.cli", "ingest", "--json"]

    ok = subprocess.run([*command, str(DATA / "pair")], env=env, capture_output=True, check=False)
    missing = subprocess.run(
        [*command, str(tmp_path / "nope.json")], env=env, capture_output=True, check=False
    )

    assert ok.returncode == 0, ok.stderr
    assert missing.returncode == 2
    assert b"no such file" in missing.stdout
