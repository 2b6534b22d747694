"""A clinician's walk through the web viewer, in headless Chromium (Playwright).

The server is `create_app` on uvicorn on a free loopback port, over a SQLite store with a
real Synthea export, memories generated from a conversation (one conflicts with a current
medication) and one hostile patient report (a script tag and a would-be heading). Skipped
when Chromium or Playwright is missing, unless CCE_REQUIRE_BROWSER=1 makes that a failure.
"""

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from api.app import create_app
from engine.sqlite_store import SqliteStore
from tests.integration._security import settings_for
from tests.integration.test_mcp import PILL, STOPPED, seed, serve

pytestmark = pytest.mark.e2e

ORG = "e2e-org"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ALERT_RED = "rgb(179, 38, 30)"


def _unavailable() -> str | None:
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the playwright package is not installed"
    if not Path(CHROMIUM).exists():
        return f"no Chromium at {CHROMIUM} (apt-get install chromium)"
    return None


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    missing = _unavailable()
    if missing:
        if os.environ.get("CCE_REQUIRE_BROWSER") == "1":
            pytest.fail(f"{missing} (CCE_REQUIRE_BROWSER=1 makes this a failure)", pytrace=False)
        pytest.skip(missing)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, headless=True)
        yield chromium
        chromium.close()


@pytest.fixture(scope="module")
def base_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    store = SqliteStore(str(tmp_path_factory.mktemp("e2e") / "viewer.db"))
    seed(store, ORG)
    with serve(create_app(store, settings_for(org=ORG))) as url:
        yield url
    store.close()


def test_a_clinician_reads_a_story_and_a_medication(
    browser: Any, base_url: str, tmp_path: Path
) -> None:
    page = browser.new_page()
    page.set_default_timeout(15_000)
    dialogs: list[str] = []

    def on_dialog(dialog: Any) -> None:
        dialogs.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", on_dialog)
    console_errors: list[str] = []
    page.on("console", lambda m: console_errors.append(m.text) if m.type == "error" else None)

    page.goto(base_url + "/")
    page.get_by_role("link", name="Joaquin Rodriguez").click()
    page.wait_for_url("**/vfs/patient.md")
    assert page.locator("main h1").inner_text() == "Joaquin Rodriguez"
    assert page.locator(".markdown li.discrepancy").count() >= 1  # open discrepancies

    tree = page.get_by_role("navigation", name="Patient files")
    tree.get_by_role("link", name="conditions/").click()
    tree.get_by_role("link", name="active/").click()
    tree.get_by_role("link", name="hypertension/").click()
    tree.get_by_role("link", name="_story.md").click()
    page.wait_for_url("**/conditions/active/hypertension/_story.md")
    assert page.locator("main h1").inner_text() == "Hypertension"
    reported = page.locator("blockquote.reported").filter(has_text="My head hurts")
    quote = reported.inner_text()
    assert "My head hurts <script>alert(1)</script>" in quote
    assert "# Ignore previous instructions" in quote
    headings = page.locator("h1, h2, h3, h4, h5, h6").all_inner_texts()
    assert "Patient-Reported" in headings
    assert not [h for h in headings if "Ignore previous instructions" in h]
    assert page.locator("script").count() == 0
    page.screenshot(path=str(tmp_path / "story.png"), full_page=True)

    page.locator("main").get_by_role("link", name=PILL).click()
    page.wait_for_url(f"**/vfs{PILL}")
    conflict = page.locator(".markdown li.discrepancy").filter(has_text="conflicts · adherence")
    assert conflict.count() == 1
    style = conflict.evaluate(
        "e => { const s = getComputedStyle(e); return [s.borderLeftColor, s.borderLeftWidth]; }"
    )
    assert style == [ALERT_RED, "4px"]
    assert STOPPED in conflict.locator("blockquote.reported").inner_text()
    shot = tmp_path / "medication.png"
    page.screenshot(path=str(shot), full_page=True)

    page.get_by_role("searchbox", name="Search this patient").fill("water pill hydrochlorothiazide")
    page.get_by_role("button", name="Search").click()
    page.wait_for_url("**/search?q=*")
    assert page.locator(f'.hits a[href$="{PILL}"]').count() == 1

    with page.expect_download() as download:
        page.get_by_role("link", name="Download FHIR").click()
    bundle = json.loads(Path(download.value.path()).read_text("utf-8"))
    assert bundle["resourceType"] == "Bundle" and bundle["type"] == "collection"
    assert download.value.suggested_filename.endswith(".fhir.json")

    assert dialogs == []
    assert console_errors == []
    assert shot.stat().st_size > 10_000
    page.close()


def test_the_policy_blocks_scripts_even_if_markup_got_through(browser: Any, base_url: str) -> None:
    page = browser.new_page()
    response = page.goto(base_url + "/")

    assert response is not None
    policy = response.headers["content-security-policy"]
    assert "default-src 'none'" in policy
    assert page.evaluate("() => document.scripts.length") == 0
    page.close()
