"""The two translation pages in a real browser: a lecture preset translates, the charts show
its tokens, a typed sentence updates them, an unknown word is named (as text, never HTML)
and the page keeps working. Screenshots: artifacts/screenshots/<page>.png."""

from __future__ import annotations

from urllib.parse import urlencode

import pytest
from playwright.sync_api import expect

import model
from tests.e2e import harness
from tests.e2e.test_pages import TITLES, assert_clean, nav_link, url, wait_for_tokens

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(
        not {"recurrent", "encoder-decoder"} <= {i.kind for i in model.catalogue().values()},
        reason="no shipped translator of each kind (assets/models/lstm, assets/models/translate)",
    ),
]

TRANSLATION_PAGES = ["rnn", "cross_attention"]
SECOND = "the dog bit the man"
UNKNOWN = "the zebra <b>bit</b> the man"


def english_box(page):
    return page.get_by_role("textbox", name="English sentence")


def type_english(page, text: str) -> None:
    box = english_box(page)
    box.fill(text)
    harness.after_rerun(page, lambda: box.press("Enter"))


@pytest.mark.parametrize("page_key", TRANSLATION_PAGES)
def test_a_translation_page_translates_and_follows_typing(
    app_server, page, screenshot_dir, page_key
) -> None:
    sent: list[bytes] = []  # what the browser sends the server (Streamlit's BackMsgs)
    page.on("websocket", lambda ws: ws.on("framesent", lambda data: sent.append(data)))
    harness.open_app(page, url(app_server, page_key), charts=True)
    harness.assert_on_page(page, page_key, TITLES[page_key])
    # A box may mount after the charts below it (its widget code loads lazily), and it
    # mounts empty for a frame before its value is set: wait for the value
    expect(english_box(page)).to_have_value("i go to school")
    expect(page.get_by_test_id("stCode").first).to_contain_text("나는 학교에 간다")
    wait_for_tokens(page, ["[BOS]", "i", "go", "to", "school", "[EOS]"])
    assert_clean(page)
    page.screenshot(path=str(screenshot_dir / f"{page_key}.png"))

    type_english(page, SECOND)
    wait_for_tokens(page, ["[BOS]", "the", "dog", "bit", "the", "man", "[EOS]"])
    expect(page.get_by_test_id("stCode").first).to_contain_text("개가 남자를 물었다")
    assert_clean(page)

    type_english(page, UNKNOWN)
    alert = page.get_by_test_id("stAlert").first
    expect(alert).to_contain_text("zebra")  # the body draws after the run
    assert "<b>" in alert.inner_text()  # shown as text
    assert not page.evaluate("() => !!document.querySelector('.stMain b')")
    assert_clean(page)
    type_english(page, SECOND)
    wait_for_tokens(page, ["[BOS]", "the", "dog", "bit", "the", "man", "[EOS]"])

    # The menu's link to the other translation page asks for it with the typed sentence in
    # its query string (the box is bound to the URL's `english`): a replica that dies before
    # the new page's run leaves a tab that still has it (docs/DEPLOY.md)
    other = TRANSLATION_PAGES[1 - TRANSLATION_PAGES.index(page_key)]
    clicked = len(sent)
    harness.after_rerun(page, lambda: nav_link(page, other).click())
    asks = [d for d in sent[clicked:] if isinstance(d, bytes)]  # the first: the new page's
    assert asks and urlencode({"english": SECOND}).encode() in asks[0], asks[:1]
    harness.assert_on_page(page, other, TITLES[other])
    expect(english_box(page)).to_have_value(SECOND)
    wait_for_tokens(page, ["[BOS]", "the", "dog", "bit", "the", "man", "[EOS]"])
    assert urlencode({"english": SECOND}) in page.url
    assert_clean(page)
