"""The lab trend chart of the viewer: points, links, the shaded range, escaping."""

from xml.etree import ElementTree

from api.charts import lab_chart, reference_range, timeline_chart
from engine.models import Batch, FieldValue, Scope
from engine.sqlite_store import SqliteStore
from tests.unit.test_vfs_builders import asserting, claim, jane
from vfs.graph import PatientGraph

SVG = "{http://www.w3.org/2000/svg}"
HOSTILE = "A1c <script>alert(1)</script>"


def _graph(ranged: bool) -> PatientGraph:
    store, scope = SqliteStore(":memory:"), Scope(org="charts", patient=f"p-{ranged}")
    extra: dict[str, FieldValue] | None = {"reference_range": "4 % - 5.6 %"} if ranged else None
    results = [("2025-01-10", 7.9), ("2025-06-02", 6.1), ("2025-11-20", 5.4)]
    store.write(
        scope,
        Batch(
            sources=tuple(
                asserting(
                    f"fhir:Observation/a1c-{date}",
                    "Observation",
                    claim(
                        f"observation:loinc:4548-4:{date}",
                        HOSTILE,
                        "final",
                        value=value,
                        unit="%",
                        effective=date,
                        extra=extra,
                    ),
                )
                for date, value in results
            )
        ),
    )
    return PatientGraph(store, scope)


def _parsed(graph: PatientGraph) -> ElementTree.Element:
    (slug,) = graph.lab_slugs.values()
    chart = lab_chart(graph, slug)
    assert chart is not None
    return ElementTree.fromstring(str(chart))


def test_each_result_is_a_point_linked_to_its_fact_in_date_order() -> None:
    svg = _parsed(_graph(ranged=True))

    links = [a.get("href") for a in svg.iter(f"{SVG}a")]
    assert links == [
        f"/v1/patients/p-True/facts/observation%3Aloinc%3A4548-4%3A{d}"
        for d in ("2025-01-10", "2025-06-02", "2025-11-20")
    ]
    tips = [c.findtext(f"{SVG}title") for c in svg.iter(f"{SVG}circle")]
    assert tips == ["2025-01-10: 7.9 %", "2025-06-02: 6.1 %", "2025-11-20: 5.4 %"]
    assert svg.get("role") == "img"


def test_the_reference_range_is_shaded_only_when_the_record_has_one() -> None:
    ranged, bare = _parsed(_graph(ranged=True)), _parsed(_graph(ranged=False))

    (band,) = [r for r in ranged.iter(f"{SVG}rect") if r.get("class") == "range"]
    assert float(band.get("height") or 0) > 0
    assert "Reference range 4–5.6 % shaded" in (ranged.findtext(f"{SVG}desc") or "")
    assert not list(bare.iter(f"{SVG}rect"))


def test_labels_from_the_record_are_escaped() -> None:
    graph = _graph(ranged=False)
    (slug,) = graph.lab_slugs.values()

    chart = str(lab_chart(graph, slug))

    assert "<script>" not in chart and "&lt;script&gt;" in chart


def test_a_lab_with_one_result_or_another_page_has_no_chart() -> None:
    store, scope = jane()
    graph = PatientGraph(store, scope)

    assert lab_chart(graph, "blood_pressure_panel") is None  # no numeric value
    assert lab_chart(graph, "nothing_like_this") is None
    assert lab_chart(graph, "hemoglobin_a1c_hemoglobin_total_in_blood") is not None


def test_reference_ranges_are_read_from_the_forms_the_ingest_writes() -> None:
    graph = _graph(ranged=True)
    facts = next(iter(graph.lab_groups.values()))

    assert reference_range(facts) == (4.0, 5.6)
    assert reference_range([]) is None


def test_the_timeline_strip_has_a_dot_per_year_and_lane_with_the_count() -> None:
    store, scope = jane()

    svg = ElementTree.fromstring(str(timeline_chart(PatientGraph(store, scope))))

    tips = sorted(c.findtext(f"{SVG}title") or "" for c in svg.iter(f"{SVG}circle"))
    assert "2024: 2 sessions" in tips and "2024: 2 encounters" in tips
    assert [t.text for t in svg.iter(f"{SVG}text") if t.get("class") == "tick"] == [
        "2001",
        "2015",
        "2018",
        "2023",
        "2024",
    ]
    assert "2 sessions" in (svg.findtext(f"{SVG}desc") or "")


def test_a_patient_with_nothing_dated_has_no_strip() -> None:
    store, scope = SqliteStore(":memory:"), Scope(org="charts", patient="empty")
    store.write(scope, Batch())

    assert timeline_chart(PatientGraph(store, scope)) is None
