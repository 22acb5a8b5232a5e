"""The chart element (ui/workarounds/chart.py) in a real browser: Plotly's cartesian bundle
comes from static/ and Streamlit's full one is never loaded; a heatmap is drawn without
Plotly (static/svg_chart.js) with its tokens as tick labels and its hover text; every chart has the
camera and full-screen buttons and no upload button; another head redraws the same chart in
place; full screen fills the screen and gives the chart its own size back; a chart taken off
the page is not resized until it is back."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlencode

import pytest

from tests.e2e import harness
from ui.workarounds.chart import PLOTLY_URL, SVG_CHART_URL

pytestmark = pytest.mark.e2e

HEATMAP = ".st-key-att_head_map .gb-chart"
BUTTON_TITLES = "g => [...g.querySelectorAll('.modebar-btn')].map(b => b.dataset.title)"


def show_head_2(page) -> None:
    """Pick head 2 and wait until the head's heatmap shows it, drawn anew."""
    before = harness.heatmap_signature(page, ".st-key-att_head_map")
    option = page.locator(".st-key-att_head").get_by_text("2", exact=True)
    harness.after_rerun(page, option.click)
    page.wait_for_function(
        "(sel) => document.querySelector(sel + ' .gtitle')?.textContent.includes('head 2')",
        arg=HEATMAP,
    )
    assert harness.heatmap_signature(page, ".st-key-att_head_map") != before


def test_the_cartesian_bundle_is_served_and_the_full_one_never_loaded(app_server, page) -> None:
    requested: list[str] = []
    page.on("request", lambda request: requested.append(request.url))
    harness.open_app(page, f"{app_server.url}/tokens", charts=True)
    assert any(url.endswith(PLOTLY_URL) for url in requested), "the bundle ui.plot names"
    assert not [url for url in requested if "PlotlyChart" in url], "Streamlit's 4.7 MB chunk"
    response = page.request.get(f"{app_server.url}/{PLOTLY_URL}")
    assert response.ok and "javascript" in response.headers["content-type"]
    assert "plotly.js (cartesian - minified)" in response.text()[:200]


def test_toolbar_redraw_in_place_and_full_screen(app_server, page) -> None:
    query = urlencode({"sentence": "the river bank was quiet"})
    harness.open_app(page, f"{app_server.url}/attention?{query}", charts=True)
    page.wait_for_selector(f"{HEATMAP} .main-svg image")
    chart = page.locator(HEATMAP)
    titles = chart.evaluate(BUTTON_TITLES)
    assert "Download plot as a PNG" in titles and "Full screen" in titles, titles
    assert not [t for t in titles if "Share" in t or "Edit" in t], "nothing leaves the machine"

    chart.evaluate("g => { g.dataset.mark = 'first'; }")
    show_head_2(page)
    assert chart.evaluate("g => g.dataset.mark") == "first", "updated in place"

    height = chart.evaluate("g => g.layout.height")
    chart.hover()
    chart.locator('[data-title="Full screen"]').click()
    page.wait_for_function(
        "(sel) => document.fullscreenElement === document.querySelector(sel)"
        " && document.fullscreenElement.layout.width === window.innerWidth",
        arg=HEATMAP,
    )
    page.evaluate("document.exitFullscreen()")
    page.wait_for_function(
        "([sel, h]) => !document.fullscreenElement"
        " && document.querySelector(sel).layout.height === h",
        arg=[HEATMAP, height],
    )
    assert not harness.exceptions(page)


# The tick labels a chart drew, axis by axis (SVG text, in Plotly's classes).
DRAWN_TICKS = """(g) => ['.xtick text', '.ytick text'].map(
  (sel) => [...g.querySelectorAll(sel)].map((t) => t.textContent))"""


def test_a_heatmap_is_drawn_without_plotly_with_its_tokens_and_hovers(app_server, page) -> None:
    """The head's heatmap is one SVG drawn by the chart element (no Plotly plot inside): the
    sentence's tokens in order on both axes (the repeated "the" twice), each cell's hover
    naming its query, key and weight, the camera saving a PNG, and another head drawn in the
    same element."""
    query = urlencode({"sentence": "the river bank and the boat"})
    harness.open_app(page, f"{app_server.url}/attention?{query}", charts=True)
    page.wait_for_selector(f"{HEATMAP} .main-svg image")
    chart = page.locator(HEATMAP)
    assert chart.evaluate("g => !!g.glassboxGrid && !g.querySelector('.plot-container')")
    keys, queries = chart.evaluate(DRAWN_TICKS)
    words = ["the", "river", "bank", "and", "the", "boat"]
    assert [k for k in keys if k in words] == words and queries == keys, (keys, queries)

    image = chart.locator(".main-svg image").bounding_box()
    page.mouse.move(image["x"] + image["width"] * 0.99, image["y"] + image["height"] * 0.01)
    hover = chart.locator(".gb-hover")
    hover.wait_for(state="visible")
    last = keys[-1]
    assert hover.text_content().startswith(f"{keys[0]} (0) → {last} ({len(keys) - 1}): 0."), (
        hover.text_content()
    )
    page.mouse.move(0, 0)
    hover.wait_for(state="hidden")

    chart.hover()
    with page.expect_download() as download:
        chart.locator('[data-title="Download plot as a PNG"]').click()
    png = download.value
    assert png.suggested_filename.endswith(".png")
    assert Path(png.path()).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    show_head_2(page)
    assert chart.evaluate(DRAWN_TICKS) == [keys, queries]
    assert not harness.exceptions(page)


WIDTHS = """(sel) => [...document.querySelectorAll(sel)].map(
  (g) => [Math.round(g.clientWidth), Math.round(g._fullLayout.width), g._fullLayout.height])"""


def test_a_chart_follows_its_column_when_the_sidebar_closes(app_server, page) -> None:
    """Nothing resizes the window, only the column: the chart takes the new width and keeps
    its height."""
    harness.open_app(page, f"{app_server.url}/attention", charts=True)
    page.wait_for_selector(f"{HEATMAP} .main-svg image")
    before = page.evaluate(WIDTHS, ".gb-chart")
    assert all(abs(width - drawn) <= 1 for width, drawn, _ in before), before
    page.locator('[data-testid="stSidebar"]').hover()
    page.locator('[data-testid="stSidebarCollapseButton"] button').first.click()
    page.wait_for_function(
        "(sel) => [...document.querySelectorAll(sel)].every("
        "(g) => Math.abs(g.clientWidth - g._fullLayout.width) <= 1)"
        " && document.querySelector(sel).clientWidth > " + str(before[0][0] + 50),
        arg=".gb-chart",
    )
    after = page.evaluate(WIDTHS, ".gb-chart")
    assert [h for *_, h in after] == [h for *_, h in before], "the heights stay"
    assert not harness.exceptions(page)


PLOTLY_CHART = ("[...document.querySelectorAll('.gb-chart')]"
                ".find((g) => g._fullLayout && !g.glassboxGrid)")  # drawn by Plotly, not svg_chart


def test_a_plotly_chart_taken_off_the_page_is_not_resized(app_server, page) -> None:
    """A chart Plotly draws (the positional page's compare-mode cosine lines) taken off the
    page, then put back, as React does with an element it moves: its width watcher leaves it
    alone while it is off the page (Plotly refuses to resize a chart that is not displayed,
    "Resize must be passed a displayed plot div element", a JavaScript error the page's
    checks would catch) and gives it its column's width back once it is on the page again."""
    query = urlencode({"model": "mlm", "sentence": "the dog bit the man", "compare_on": "true",
                       "compare": "the man bit the dog"})  # fmt: skip
    harness.open_app(page, f"{app_server.url}/positional?{query}", charts=True)
    page.wait_for_function(f"() => !!({PLOTLY_CHART})?._fullLayout?.width", timeout=60_000)
    page.evaluate(f"() => {{ const g = {PLOTLY_CHART}; window.gbTaken = [g, g.parentElement]; "
                  "g.remove(); }")  # fmt: skip
    page.evaluate("() => new Promise((done) => setTimeout(done, 300))")  # the watcher's turn
    page.evaluate("() => { const [g, parent] = window.gbTaken; parent.appendChild(g); }")
    page.wait_for_function(
        "() => { const [g] = window.gbTaken; "
        "return Math.abs(g.clientWidth - g._fullLayout.width) <= 1; }"
    )
    assert not page.js_errors, page.js_errors
    assert not harness.exceptions(page)


def test_a_failed_chart_library_download_is_tried_again(app_server, page) -> None:
    """The first two downloads of the chart script fail (as when the replica that served
    them died, or nginx was restarting): the page tries again by itself and draws every
    chart, with no "could not be drawn" and no reload (ui/workarounds/load_plotly.js)."""
    tries: list[str] = []

    def flaky(route) -> None:
        tries.append(route.request.url)
        if len(tries) <= 2:
            route.abort("connectionreset")
        else:
            route.continue_()

    page.route(f"**/{SVG_CHART_URL.split('?')[0]}*", flaky)
    harness.open_app(page, f"{app_server.url}/tokens", charts=True)
    assert len(tries) == 3, tries
    assert not page.get_by_text("could not be drawn").count()
    assert harness.chart_count(page) >= 2
