""""Watch it learn" in a real browser (issue 28): after Train the accuracy curve grows while
the run trains (its fragment redraws it twice a second, in place), Stop ends the run, and
the slider scrubs back to the untrained model; the same for the translator of the second
tab (cross-attention forming). Screenshots: artifacts/screenshots/learn.png and
learn_cross.png."""

from __future__ import annotations

import time

import pytest

from tests.e2e import harness
from tests.e2e.harness import CHART_TITLE_JS
from tests.e2e.test_pages import (
    TITLES,
    assert_clean,
    expected_tokens,
    type_sentence,
    url,
    wait_for_tokens,
)
from ui.parts.learn import XATTN

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


def test_the_curve_grows_while_it_trains_and_the_slider_scrubs(
    app_server, page, screenshot_dir
) -> None:
    harness.open_app(page, url(app_server, "learn"))
    harness.assert_on_page(page, "learn", TITLES["learn"])
    page.get_by_role("button", name="Train").click()
    page.wait_for_function(f"() => ({POINTS_JS})('held-out accuracy') >= 2", timeout=60000)
    # The curve grows while it trains: three more points drawn, waited for (not slept on)
    first = page.evaluate(POINTS_JS, "held-out accuracy")
    page.wait_for_function(f"() => ({POINTS_JS})('held-out accuracy') >= {first + 3}",
                           timeout=60000)  # fmt: skip
    assert page.evaluate(CHART_TITLE_JS, "attention at step"), "the heatmap is redrawn with it"
    page.screenshot(path=str(screenshot_dir / "learn.png"))
    page.get_by_role("button", name="Stop").click()
    page.get_by_text("Stop was pressed").wait_for(timeout=30000)
    slider = page.get_by_test_id("stSlider").filter(has_text="Scrub").get_by_role("slider")
    slider.focus()
    harness.after_rerun(page, lambda: slider.press("Home"))
    harness.wait_for_chart_title(page, "attention at step 0,", timeout=20)
    harness.wait_for_chart_title(page, "its answer at step 0", timeout=20)
    assert_clean(page)


def test_another_visitors_page_answers_while_one_trains(
    app_server, page, context, tokenizers
) -> None:
    """Measured, not a timed assert: a new sentence on the attention page in a second tab,
    idle and then while the first tab trains (the seconds are printed)."""
    other = context.new_page()
    other.js_errors = []  # type: ignore[attr-defined]
    harness.open_app(other, url(app_server, "attention"), charts=True)
    seconds = {}
    for when, text in (("warm-up", "A bird sang in the tall tree."),
                       ("idle", "The cat sat on the warm mat."),
                       ("training", "The dog slept under the old table.")):  # fmt: skip
        if when == "training":
            harness.open_app(page, url(app_server, "learn"))
            page.get_by_role("button", name="Train").click()
            page.get_by_text("Training: step").wait_for(timeout=60000)
        start = time.monotonic()
        type_sentence(other, text)
        wait_for_tokens(other, expected_tokens(tokenizers, "attention", text), timeout=60)
        seconds[when] = round(time.monotonic() - start, 2)
    assert page.get_by_text("Training: step").count(), "it was still training"
    print(f"a new sentence on the attention page, another tab: {seconds} s")
    page.get_by_role("button", name="Stop").click()
    assert_clean(other)


def test_cross_attention_forms_while_a_translator_trains(
    app_server, page, screenshot_dir
) -> None:
    """The second tab: the translator's curves grow (a point every half second of
    training, or as long as the last point took to measure), its cross-attention is redrawn
    with them, and after Stop the slider scrubs back to the untrained model."""
    harness.open_app(page, url(app_server, "learn"))
    harness.open_tab(page, "Cross-attention forming")
    # Both sections have a Train button: press this section's, once drawn (by its key).
    page.locator(f".st-key-{XATTN}_train button").click(timeout=30000)
    page.wait_for_function(f"() => ({POINTS_JS})('held-out accuracy') >= 2", timeout=90000)
    first, start = page.evaluate(POINTS_JS, "held-out accuracy"), time.monotonic()
    page.wait_for_function(f"() => ({POINTS_JS})('held-out accuracy') >= {first + 3}",
                           timeout=60000)  # fmt: skip
    print(f"the translator's accuracy curve grew from {first} to {first + 3} points in "
          f"{time.monotonic() - start:.1f} s")  # fmt: skip
    assert page.evaluate(CHART_TITLE_JS, "this run at step"), "its cross-attention is redrawn"
    assert page.evaluate(CHART_TITLE_JS, "the shipped translator"), "beside the shipped one"
    page.screenshot(path=str(screenshot_dir / "learn_cross.png"))
    page.get_by_role("button", name="Stop").click()
    page.get_by_text("Stop was pressed").wait_for(timeout=30000)
    slider = page.get_by_test_id("stSlider").filter(has_text="Scrub").get_by_role("slider")
    slider.focus()
    harness.after_rerun(page, lambda: slider.press("Home"))
    harness.wait_for_chart_title(page, "this run at step 0,", timeout=20)
    assert_clean(page)
