"""The Vision Transformer page in a real browser: a test digit is drawn as patches with the
prediction, the layer picker redraws [CLS]'s attention, an upload that is not a picture is
named and the previous picture stays, and a digit drawn with the mouse is read.
Screenshot: artifacts/screenshots/vision.png."""

from __future__ import annotations

import pytest

from tests.e2e import harness
from tests.e2e.test_pages import TITLES, assert_clean, url

pytestmark = pytest.mark.e2e

WITHOUT_PLOTLY = "g => !!g.glassboxGrid && !g.querySelector('.plot-container')"


def hover(page, chart, row: int, col: int, size: int) -> str:
    """The hover text over pixel (row, col) of a chart's `size`x`size` image, which must be
    drawn square (its y axis scaled as its x)."""
    box = chart.locator("image").first.bounding_box()
    assert box and abs(box["width"] - box["height"]) < 1.5, box
    page.mouse.move(box["x"] + box["width"] * (col + 0.5) / size,
                    box["y"] + box["height"] * (row + 0.5) / size)  # fmt: skip
    said = chart.locator(".gb-hover")
    said.wait_for(state="visible")
    text = said.text_content()
    page.mouse.move(0, 0)
    return text


def test_the_vit_page_draws_a_digit_and_survives_a_bad_upload(
    app_server, page, screenshot_dir
) -> None:
    harness.open_app(page, url(app_server, "vision"), charts=True)
    harness.assert_on_page(page, "vision", TITLES["vision"])
    harness.wait_for_chart_title(page, "the digits, most likely first")  # chart by chart
    harness.wait_for_chart_text(page, "patch 3,3")
    assert_clean(page)
    page.screenshot(path=str(screenshot_dir / "vision.png"))

    # The image with its patch grid: one SVG (static/svg_chart.js), square, each patch named
    image = page.locator(".st-key-vit_image .gb-chart")
    assert image.evaluate(WITHOUT_PLOTLY)
    notes = image.locator(".annotation-text").all_text_contents()
    assert notes[:2] == ["0,0", "0,1"] and notes[-1] == "3,3", notes
    assert image.locator(".shape").count() == 10  # the grid's lines: 5 across, 5 down
    assert hover(page, image, 0, 0, 8).startswith("row 0, column 0: ")

    harness.open_tab(page, "Where [CLS] looks")  # drawn only when its tab is open
    harness.wait_for_chart_title(page, "[CLS] → patches, layer 1")  # drawn after the run
    layer_3 = page.locator(".st-key-vis_layer").get_by_text("3", exact=True)
    harness.after_rerun(page, layer_3.click)
    harness.wait_for_chart_title(page, "[CLS] → patches, layer 3", timeout=20)
    cls = page.locator(".st-key-vit_cls .gb-chart")  # the weights drawn over the image
    assert cls.evaluate(WITHOUT_PLOTLY) and cls.locator("image").count() == 2
    said = hover(page, cls, 7, 7, 8)  # the bottom-right pixel: the last patch's weight
    assert said.startswith("patch 3,3: 0.") and said.endswith("attention"), said

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


def test_a_digit_drawn_with_the_mouse_is_read(app_server, page) -> None:
    """streamlit-drawable-canvas in the real browser: one vertical stroke is read as a 1."""
    harness.open_app(page, url(app_server, "vision"), charts=True)
    harness.after_rerun(page, lambda: page.get_by_text("draw one").click())
    page.get_by_text("Draw a digit in the white box").wait_for(timeout=20000)
    box = page.locator("canvas.upper-canvas").first
    box.wait_for(timeout=20000)
    box.scroll_into_view_if_needed()
    b = box.bounding_box()
    assert b is not None
    x, top = b["x"] + b["width"] / 2, b["y"]

    def stroke() -> None:
        page.mouse.move(x, top + 0.12 * b["height"])
        page.wait_for_timeout(300)  # the canvas takes a stroke only after the pointer hovers
        page.mouse.down()
        page.mouse.move(x, top + 0.88 * b["height"], steps=25)
        page.mouse.up()

    harness.after_rerun(page, stroke)
    page.get_by_text("your drawing, converted to 8x8").wait_for(timeout=20000)
    harness.wait_for_chart_title(page, "most likely first", timeout=20)
    ranked = [labels for labels in harness.axis_labels(page) if len(labels) == 10]
    assert ranked and ranked[0][0] == "1", ranked
    assert_clean(page)
