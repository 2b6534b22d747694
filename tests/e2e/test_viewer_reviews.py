"""A clinician reviews memories in the viewer, in headless Chromium with JavaScript off.

The forms are plain server-rendered posts with a double-submit CSRF token. The test takes a
screenshot of the memory page with its review buttons; with CCE_SCREENSHOT_DIR set it
keeps it there (`docs/viewer-review.png` was made so).
"""

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from api.app import create_app
from engine.sqlite_store import SqliteStore
from tests.e2e.test_viewer import browser
from tests.integration._security import settings_for
from tests.integration.test_mcp import PATIENT, PILL, STOPPED, seed, serve

__all__ = ["browser"]

pytestmark = pytest.mark.e2e

ORG = "e2e-review-org"
NOTE = "<b>rang</b> the patient **today**"


@pytest.fixture(scope="module")
def base_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    store = SqliteStore(str(tmp_path_factory.mktemp("e2e") / "reviews.db"))
    seed(store, ORG)
    with serve(create_app(store, settings_for(org=ORG))) as url:
        yield url
    store.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    page.set_default_timeout(15_000)
    yield page
    context.close()


def _memory_page(page: Any, base_url: str, type: str) -> None:
    page.goto(f"{base_url}/patients/{PATIENT}/vfs/memory/{type}.md")
    assert page.locator("main h1").inner_text().startswith("Patient-reported")


def test_dismiss_note_and_confirm_without_javascript(
    page: Any, base_url: str, tmp_path: Path
) -> None:
    _memory_page(page, base_url, "adherence")
    stopped = page.locator("form.review").filter(has_text="hydrochlorothiazide")
    assert stopped.count() == 1
    assert page.locator(".markdown li.discrepancy").filter(has_text=STOPPED).count() == 1

    stopped.get_by_label("Reason").select_option("wrong")
    stopped.get_by_role("button", name="Dismiss").click()

    page.wait_for_url("**/vfs/memory/adherence.md*")
    assert "Dismissed" in page.locator("main h2").all_inner_texts()
    assert page.locator(".markdown li.discrepancy").filter(has_text=STOPPED).count() == 0
    assert stopped.locator(".badge").inner_text() == "dismissed"
    assert "dismiss (wrong) by local" in stopped.locator(".latest").inner_text()
    page.goto(f"{base_url}/patients/{PATIENT}/vfs{PILL}")
    assert page.locator(".markdown li.discrepancy").filter(has_text=STOPPED).count() == 0

    _memory_page(page, base_url, "symptom")
    hostile = page.locator("#memory-hostile-1")
    hostile.get_by_label("Note").fill(NOTE)
    hostile.get_by_role("button", name="Add note").click()
    page.wait_for_url("**/vfs/memory/symptom.md*")
    hostile.get_by_role("button", name="Confirm").click()
    page.wait_for_url("**/vfs/memory/symptom.md*")

    assert hostile.locator(".badge").inner_text() == "confirmed"
    assert page.locator("b").filter(has_text="rang").count() == 0
    assert NOTE in page.locator(".markdown").inner_text()  # the latest review's note, escaped
    assert "Confidence: 0.7 (confirmed)" in page.locator(".markdown").inner_text()
    page.set_viewport_size({"width": 1280, "height": 900})
    shot = Path(os.environ.get("CCE_SCREENSHOT_DIR") or tmp_path) / "viewer-review.png"
    page.screenshot(path=str(shot), full_page=True)
    assert shot.stat().st_size > 10_000


def test_a_post_without_the_right_token_is_refused(page: Any, browser: Any, base_url: str) -> None:
    _memory_page(page, base_url, "symptom")
    token = page.locator("#memory-hostile-1 input[name=csrf]").input_value()
    url = f"{base_url}/patients/{PATIENT}/memories/hostile-1/reviews"

    missing = page.request.post(url, form={"action": "confirm"}, max_redirects=0)
    wrong = page.request.post(url, form={"action": "confirm", "csrf": token + "x"}, max_redirects=0)
    other = browser.new_context()  # a cross-site form: it has the token but not the cookie
    stolen = other.request.post(url, form={"action": "confirm", "csrf": token}, max_redirects=0)
    right = page.request.post(url, form={"action": "confirm", "csrf": token}, max_redirects=0)
    other.close()

    assert [missing.status, wrong.status, stolen.status] == [403, 403, 403]
    assert right.status == 303
