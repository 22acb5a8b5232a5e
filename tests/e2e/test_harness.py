"""The harness itself, on the trivial one-widget page (bench/trivial_app.py): if these fail,
the browser, the server fixture or the "finished running" detection is broken, not the app."""

from __future__ import annotations

import pytest

from tests.e2e import harness

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def trivial_server(chromium_path):
    with harness.StreamlitServer("bench/trivial_app.py") as server:
        server.wait_healthy(timeout=60)
        yield server


def test_health_endpoint_and_first_run(trivial_server, page) -> None:
    harness.open_app(page, trivial_server.url)
    app = page.locator(harness.APP)
    assert app.get_attribute("data-test-connection-state") == "CONNECTED"
    assert app.get_attribute("data-test-script-state") == "notRunning"
    assert harness.runs(page) == 1
    assert "The cat sat on the mat." in page.get_by_test_id("stText").inner_text()


def test_every_rerun_is_seen(trivial_server, page) -> None:
    """Each widget change is one counted rerun, and the page shows its result right after."""
    harness.open_app(page, trivial_server.url)
    box = page.get_by_label("Sentence")
    for i in range(8):
        before = harness.runs(page)
        harness.after_rerun(page, lambda i=i: (box.fill(f"sentence {i}"), box.press("Enter")))
        assert harness.runs(page) == before + 1
        assert page.get_by_test_id("stText").inner_text() == f"echo: sentence {i} | head 0"
    assert not harness.exceptions(page)
    assert not page.js_errors
