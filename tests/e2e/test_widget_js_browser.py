"""Streamlit's widget JavaScript fetched early (ui/workarounds/widget_js.py), in a real
browser: once a tab's warm-up is done, a walk through every explorer page and every tab
fetches none of Streamlit's chunks from the server. Every one is answered from the browser's
cache, so a replica that dies mid-lesson can no longer cut a chunk off halfway and leave
that tab broken until it is reloaded (the one session lost in the fault test, issue 30)."""

from __future__ import annotations

import pytest

from tests.e2e import harness
from tests.e2e.test_pages import TITLES, assert_clean, nav_link, url
from ui.registry import PAGES

pytestmark = pytest.mark.e2e

# Resource timings are kept in a buffer of 250 by default: the page, its entry's chunks and
# the warm-up's fill it, and a full buffer drops what comes after.
BUFFER_JS = "performance.setResourceTimingBufferSize(10000);"
WARM_DONE_JS = "() => window.__glassboxWarm && window.__glassboxWarm.done"
# Streamlit's chunks fetched from the server (not from the cache) after a moment, by name.
FETCHED_JS = """(after) => performance.getEntriesByType('resource')
  .filter(e => /\\/static\\/(js|css)\\//.test(e.name) && e.startTime > after
               && e.transferSize > 0)
  .map(e => e.name.split('/').pop())"""


def test_after_the_warm_up_no_page_fetches_streamlits_chunks(app_server, page, request) -> None:
    page.add_init_script(BUFFER_JS)
    harness.open_app(page, url(app_server, "tokens"), charts=True)
    page.wait_for_function(WARM_DONE_JS, timeout=60_000)
    warm = page.evaluate("() => window.__glassboxWarm")
    assert warm["failed"] == [] and warm["fetched"] == warm["total"] > 0, warm
    done_at = page.evaluate("() => performance.now()")
    # Every explorer page through the menu (as a student goes), every tab of each opened.
    for spec in PAGES:
        if spec.key != "tokens":
            harness.after_rerun(page, nav_link(page, spec.key).click, timeout=60)
        page.locator("h1").filter(has_text=TITLES[spec.key]).first.wait_for(timeout=30_000)
        tabs = page.get_by_role("tab")
        for i in range(tabs.count()):
            if tabs.nth(i).get_attribute("aria-selected") != "true":
                harness.after_rerun(page, tabs.nth(i).click, timeout=60)
        assert_clean(page)
    fetched = page.evaluate(FETCHED_JS, done_at)
    assert fetched == [], f"fetched from the server after the warm-up: {fetched}"
    request.config.stash.setdefault(harness.REPORT_KEY, []).append(
        f"widget JavaScript warm-up: {warm['fetched']} files before the walk, none fetched "
        f"in a walk of {len(PAGES)} pages and their tabs"
    )
