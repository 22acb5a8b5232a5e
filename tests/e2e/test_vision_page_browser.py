"""The Vision Transformer page in a real browser: a test digit is drawn as patches with the
prediction, the layer picker redraws [CLS]'s attention, an upload that is not a picture is
named and the previous picture stays. Screenshot: artifacts/screenshots/vision.png."""

from __future__ import annotations

import pytest

from tests.e2e import harness
from tests.e2e.test_pages import TITLES, assert_clean, url

pytestmark = pytest.mark.e2e


def test_the_vit_page_draws_a_digit_and_survives_a_bad_upload(
    app_server, page, screenshot_dir
) -> None:
    harness.open_app(page, url(app_server, "vision"), charts=True)
    assert page.locator("h1").first.inner_text().strip() == TITLES["vision"]
    texts = " ".join(harness.chart_texts(page))
    assert "patch 3,3" in texts and "the digits, most likely first" in texts
    assert_clean(page)
    page.screenshot(path=str(screenshot_dir / "vision.png"))

    assert "[CLS] → patches, layer 1" in " ".join(harness.chart_texts(page))
    harness.after_rerun(page, lambda: page.get_by_text("layer 3", exact=True).first.click())
    page.wait_for_function(
        """() => [...document.querySelectorAll('[data-testid="stPlotlyChart"] .gtitle')]
              .some(t => t.textContent.includes('[CLS] → patches, layer 3'))""",
        timeout=20000,
    )

    harness.after_rerun(page, lambda: page.get_by_text("your own picture").click())
    chooser = page.locator('[data-testid="stFileUploaderDropzoneInput"]')
    harness.after_rerun(
        page, lambda: chooser.set_input_files(
            files=[{"name": "fake.png", "mimeType": "image/png", "buffer": b"<b>no</b>"}]
        ),
    )  # fmt: skip
    error = page.get_by_test_id("stAlertContentError").first.inner_text()
    assert "fake.png" in error and "not a PNG or JPEG" in error
    assert_clean(page)
