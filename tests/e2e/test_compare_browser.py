"""Compare mode in a real browser at 1280x720: a link with ?compare= opens the Attention
page with both bank sentences side by side in the same head, and the Positional page with
the dog and the man in both orders. Screenshots: artifacts/screenshots/compare_*.png."""

from __future__ import annotations

from urllib.parse import quote, urlencode

import pytest
from playwright.sync_api import expect

from model.examples import PAIRS
from tests.e2e import harness
from tests.e2e.test_lecture_browser import projector  # noqa: F401 - the 1280x720 tab
from tests.e2e.test_pages import assert_clean

pytestmark = pytest.mark.e2e
RIVER, CASH = PAIRS[0]
DOG_MAN, MAN_DOG = PAIRS[1]


def link(server, page: str, **params: str) -> str:
    return f"{server.url}/{page}?" + urlencode(params, quote_via=quote)


def test_a_compare_link_shows_both_sentences_in_the_same_head(
    app_server, projector, screenshot_dir  # noqa: F811
) -> None:
    page = projector
    url = link(app_server, "attention", model="clm", sentence=RIVER, compare_on="true",
               compare=CASH)
    harness.open_app(page, url, charts=True)
    page.get_by_text("A: layer 1, head 1").first.wait_for(timeout=30000)
    for word in ("river", "cash"):  # both heatmaps drawn (the body draws chart by chart)
        harness.wait_for_chart_text(page, word, timeout=30)
    axes = harness.axis_labels(page)
    assert any("river" in a and "bank" in a for a in axes)
    assert any("cash" in a and "bank" in a for a in axes)
    expect(page.get_by_text("B: layer 1, head 1").first).to_be_visible()
    head_3 = page.locator(".st-key-att_head").get_by_text("3", exact=True)
    harness.after_rerun(page, head_3.click)
    page.get_by_text("B: layer 1, head 3").first.wait_for(timeout=30000)
    page.screenshot(path=str(screenshot_dir / "compare_attention.png"))
    assert_clean(page)

    url = link(app_server, "positional", model="mlm", sentence=DOG_MAN, compare_on="true",
               compare=MAN_DOG)
    harness.open_app(page, url, charts=True)
    page.get_by_text("cosine of its two vectors").first.wait_for(timeout=30000)
    harness.wait_for_chart_text(page, "without positions", timeout=30, exact=False)
    page.screenshot(path=str(screenshot_dir / "compare_positional.png"))
    assert_clean(page)
