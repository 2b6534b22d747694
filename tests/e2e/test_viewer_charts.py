"""The viewer's charts in headless Chromium, against golden screenshots within a tolerance.

The trend of a real Synthea lab (body weight, four results) and the timeline strip are shot
at a fixed viewport and scale and compared pixel by pixel with `tests/e2e/golden/*.png`: at
most 2% of the pixels may differ by more than 48 in a channel (font rasterising varies a
little). To accept a change, run with CCE_UPDATE_GOLDEN=1 and look at the PNGs; that run
also saves the pages as `docs/viewer-lab-trend.png` and `docs/viewer-timeline.png`.
"""

import os
from pathlib import Path
from typing import Any

import pytest
from PIL import Image, ImageChops

from tests.e2e.test_viewer import base_url, browser  # noqa: F401 - fixtures
from tests.integration.test_mcp import PATIENT

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).parents[2]
GOLDEN = Path(__file__).parent / "golden"
LAB = f"/patients/{PATIENT}/vfs/labs/body_weight.md"
TOLERANCE, CHANNEL = 0.02, 48


def differing(shot: Path, golden: Path) -> float:
    """The fraction of pixels that differ by more than CHANNEL in some channel."""
    with Image.open(shot) as a, Image.open(golden) as b:
        assert a.size == b.size, f"size {a.size} against the golden {b.size}"
        delta = ImageChops.difference(a.convert("RGB"), b.convert("RGB"))
        mask = delta.point(lambda v: 255 if v > CHANNEL else 0).convert("L")
        histogram = mask.point(lambda v: 255 if v else 0).histogram()
        return histogram[255] / (a.size[0] * a.size[1])


def compare(page: Any, chart: Any, tmp_path: Path, name: str) -> None:
    """The chart's screenshot against its golden; an update also saves the page under docs/."""
    shot, golden = tmp_path / f"{name}.png", GOLDEN / f"{name}.png"
    chart.screenshot(path=str(shot))
    if os.environ.get("CCE_UPDATE_GOLDEN") == "1":
        GOLDEN.mkdir(exist_ok=True)
        golden.write_bytes(shot.read_bytes())
        page.screenshot(path=str(ROOT / "docs" / f"viewer-{name}.png"), full_page=True)
    assert differing(shot, golden) <= TOLERANCE


def test_a_lab_with_several_results_has_an_accessible_trend_chart(
    browser: Any,  # noqa: F811
    base_url: str,  # noqa: F811
    tmp_path: Path,
) -> None:
    page = browser.new_page(viewport={"width": 1100, "height": 900}, device_scale_factor=1)
    page.set_default_timeout(15_000)
    page.goto(base_url + LAB)

    chart = page.locator("svg.trend")
    assert chart.count() == 1 and page.locator("script").count() == 0
    assert chart.get_attribute("role") == "img"
    assert "Body Weight: trend of 4 results" in chart.locator("title").first.text_content() or ""
    assert "The results table below lists every value" in chart.locator("desc").text_content() or ""
    assert page.locator(".markdown table tbody tr").count() == 4  # the text alternative
    assert chart.locator("a circle").count() == 4

    compare(page, chart, tmp_path, "lab-trend")

    chart.locator("a").last.click()
    page.wait_for_url("**/v1/patients/*/facts/observation*")
    assert '"sources"' in page.content()
    page.close()


def test_the_timeline_opens_with_a_strip_of_encounters_conditions_and_sessions(
    browser: Any,  # noqa: F811
    base_url: str,  # noqa: F811
    tmp_path: Path,
) -> None:
    page = browser.new_page(viewport={"width": 1100, "height": 900}, device_scale_factor=1)
    page.set_default_timeout(15_000)
    page.goto(f"{base_url}/patients/{PATIENT}/vfs/timeline.md")

    strip = page.locator("svg.strip")
    assert strip.count() == 1 and page.locator("script").count() == 0
    assert (strip.locator("title").first.text_content() or "") == "Timeline at a glance"
    assert "2 sessions" in (strip.locator("desc").text_content() or "")
    assert strip.locator("circle.sessions").count() >= 1
    assert page.get_by_role("heading", name="At a glance").count() == 1  # the text version

    compare(page, strip, tmp_path, "timeline")
    page.close()
