""""Watch it learn" in a real browser (issue 28): after Train the accuracy curve grows while
the run trains (its fragment redraws it twice a second, in place), Stop ends the run, and
the slider scrubs back to the untrained model. Screenshot: artifacts/screenshots/learn.png."""

from __future__ import annotations

import time

import pytest

from tests.e2e import harness
from tests.e2e.test_pages import TITLES, assert_clean, url

pytestmark = pytest.mark.e2e

# The number of points of the chart whose title has `title`, read from Plotly's graph div.
POINTS_JS = """(title) => {
  for (const div of document.querySelectorAll('.gb-chart')) {
    const t = div.querySelector('.gtitle');
    if (t && t.textContent.includes(title) && div.data && div.data[0])
      return div.data[0].x.length;
  }
  return 0;
}"""
TITLE_JS = """(text) => [...document.querySelectorAll('.gb-chart .gtitle')]
  .some(t => t.textContent.includes(text))"""


def test_the_curve_grows_while_it_trains_and_the_slider_scrubs(
    app_server, page, screenshot_dir
) -> None:
    harness.open_app(page, url(app_server, "learn"))
    assert page.locator("h1").first.inner_text().strip() == TITLES["learn"]
    page.get_by_role("button", name="Train").click()
    page.wait_for_function(f"() => ({POINTS_JS})('held-out accuracy') >= 2", timeout=60000)
    counts = []
    for _ in range(6):  # three seconds of training, read twice a second
        counts.append(page.evaluate(POINTS_JS, "held-out accuracy"))
        time.sleep(0.5)
    print(f"points of the accuracy curve, read every 0.5 s: {counts}")
    assert counts[-1] >= counts[0] + 3, f"the curve grows: {counts}"
    assert page.evaluate(TITLE_JS, "attention at step"), "the heatmap is redrawn with it"
    page.screenshot(path=str(screenshot_dir / "learn.png"))
    page.get_by_role("button", name="Stop").click()
    page.get_by_text("Stop was pressed").wait_for(timeout=30000)
    slider = page.get_by_test_id("stSlider").filter(has_text="Scrub").get_by_role("slider")
    slider.focus()
    harness.after_rerun(page, lambda: slider.press("Home"))
    page.wait_for_function(f"() => ({TITLE_JS})('attention at step 0,')", timeout=20000)
    page.wait_for_function(f"() => ({TITLE_JS})('its answer at step 0')", timeout=20000)
    assert_clean(page)
