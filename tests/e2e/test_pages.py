"""Every page in a real browser: a shared URL opens its sentence, charts render, no
exceptions, a typed sentence updates the tokens shown; uploads; user text never as HTML;
layer/head pickers; navigation. Screenshots of every page: artifacts/screenshots/.

Pages, widget labels and keys come from the app (ui/frame.py, ui/registry.py, pages/*.py):
  sidebar: text area "Sentence" (Ctrl+Enter commits), file uploader (.txt/.md, <= 1 MB),
  URL: /<page>?sentence=...&model=...&page=...
  attention page: radios "Layer" (key att_layer) and "Head" (att_head), chart att_head_map.
"""

from __future__ import annotations

import time
from urllib.parse import quote, urlencode

import pytest
from playwright.sync_api import expect

from tests.e2e import harness
from tests.e2e.harness import axes_show
from ui.registry import PAGES

TITLES = {p.key: p.title for p in PAGES}

pytestmark = pytest.mark.e2e

PAGE_KEYS = [p.key for p in PAGES if p.reads == "sentence"]  # the shared sentence's pages
# Pages that always use one model whatever the sidebar says.

SHARED = "I walked across the road to get cash from the bank."
TYPED = "The teacher opened the old piano near the window."
XSS = '<img src=x onerror="window.__xss=1"> <b>bold</b> <script>window.__xss=2</script>'


def expected_tokens(tokenizers, page_key: str, text: str, sidebar_model: str = "mlm") -> list:
    return tokenizers[harness.page_model(page_key, sidebar_model)].encode(text).tokens


def url(server: harness.StreamlitServer, page_key: str, **params: str) -> str:
    path = "/" if page_key == PAGE_KEYS[0] else f"/{page_key}"
    return server.url + path + ("?" + urlencode(params, quote_via=quote) if params else "")


def shows_tokens(page, tokens: list[str], scope: str = "") -> bool:
    """Some chart axis on the page lists exactly these tokens, in order."""
    return axes_show(harness.axis_labels(page, scope), tokens)


def sentence_box(page):
    return page.get_by_test_id("stSidebar").get_by_role("textbox", name="Sentence")


def type_sentence(page, text: str) -> None:
    box = sentence_box(page)
    box.fill(text)
    harness.after_rerun(page, lambda: box.press("Control+Enter"))


def wait_for_tokens(page, tokens: list[str], timeout: float = 20.0) -> None:
    """Some chart shows these tokens within `timeout` (Plotly draws just after the run)."""
    deadline = time.monotonic() + timeout
    while not shows_tokens(page, tokens):
        if time.monotonic() > deadline:
            raise AssertionError(
                f"no chart axis shows {tokens}; axes: {harness.axis_labels(page)[:6]}"
            )
        page.wait_for_timeout(100)


def wait_until_gone(page, tokens: list[str], timeout: float = 20.0) -> None:
    """No chart shows these tokens any more within `timeout`: the whole page has redrawn.
    Charts arrive in several messages and each is drawn in the animation frame after its
    data (ui/workarounds/chart.js), so on a busy machine the first new chart can be drawn
    a frame or two before the last old one is replaced."""
    deadline = time.monotonic() + timeout
    while shows_tokens(page, tokens):
        if time.monotonic() > deadline:
            raise AssertionError(f"a chart still shows {tokens} after {timeout} s")
        page.wait_for_timeout(100)


def assert_clean(page) -> None:
    assert not harness.exceptions(page), harness.exceptions(page)
    assert not page.js_errors, page.js_errors


# Pages whose first tab has no axis of tokens (harness.TOKEN_TABS): the tab that has one,
# and a chart of the first view to wait for before the screenshot.
TOKEN_TAB = {"masked": (harness.TOKEN_TABS["masked"], "mask_topk_0")}


@pytest.mark.parametrize("page_key", PAGE_KEYS)
def test_page_from_shared_url_renders_and_follows_typing(
    app_server, page, tokenizers, screenshot_dir, page_key
) -> None:
    # A shared link opens that page with that sentence.
    harness.open_app(page, url(app_server, page_key, sentence=SHARED, model="mlm"), charts=True)
    harness.assert_on_page(page, page_key, TITLES[page_key])
    # The body writes the sidebar's part after the page: wait for it, not only for a chart.
    expect(sentence_box(page)).to_have_value(SHARED, timeout=30000)
    if page_key in TOKEN_TAB:
        tab, first = TOKEN_TAB[page_key]
        page.wait_for_selector(f".st-key-{first} .main-svg", state="visible", timeout=30000)
        page.screenshot(path=str(screenshot_dir / f"{page_key}.png"))
        harness.open_tab(page, tab)
    wait_for_tokens(page, expected_tokens(tokenizers, page_key, SHARED))
    assert harness.chart_count(page) >= 1
    assert_clean(page)
    if page_key not in TOKEN_TAB:
        page.screenshot(path=str(screenshot_dir / f"{page_key}.png"))

    # The sidebar's timing is written while "Device, timing, sharing" is open: open it.
    more = page.get_by_test_id("stSidebar").get_by_text("Device, timing, sharing", exact=True)
    harness.after_rerun(page, more.click)

    # Typing a new sentence updates the tokens shown (and the URL).
    type_sentence(page, TYPED)
    wait_for_tokens(page, expected_tokens(tokenizers, page_key, TYPED))
    wait_until_gone(page, expected_tokens(tokenizers, page_key, SHARED))
    assert "teacher" in page.url
    assert_clean(page)
    # Only the page's body ran again (ui.frame.body: the run ends as a fragment's run,
    # FINISHED_FRAGMENT_RUN_SUCCESSFULLY); it also wrote the sidebar's timing.
    assert page.evaluate("() => window.__glassbox.statuses.at(-1)") == 3
    n = len(expected_tokens(tokenizers, page_key, TYPED))
    sidebar = page.get_by_test_id("stSidebar").text_content() or ""
    assert f"· {n} tokens ·" in sidebar, (n, sidebar[-200:])

    # Every axis label is drawn inside its chart (not cut off by the chart's edge).
    clipped = harness.clipped_tick_labels(page)
    charts = sorted({c["chart"] for c in clipped})
    assert not clipped, f"{len(clipped)} tick labels cut off in charts {charts}: {clipped[:5]}"


# Heatmaps whose margins are estimated before drawing (viz.margins), by page and by the
# section tab they sit in (None: the page's first view).
ESTIMATED = {  # heatmaps, and charts with a legend below or a colour bar between panels
    "attention": {None: ("att_head_map", "att_mean_map")},
    "causal": {None: ("causal_mask", "causal_attention")},
    "positional": {"Sinusoidal": ("pos_waves",), "Embedding + position": ("pos_sum",)},
    "tokens": {
        None: ("tok_embeddings", "tok_cosine"),
        "Nearest neighbours": ("tok_map",),
        "Through the layers": ("tok_trajectory",),
    },
}


@pytest.mark.parametrize("page_key", sorted(ESTIMATED))
def test_charts_are_drawn_once_in_the_margins_given(
    app_server, page, tokenizers, page_key
) -> None:
    """The charts come with margins that already hold their labels, axis titles, colour bar
    and legend: Plotly grows none of them, so it draws each once on a new sentence, not a
    second time to make room (README, Benchmarks)."""
    harness.open_app(page, url(app_server, page_key, sentence=SHARED), charts=True)
    type_sentence(page, TYPED)
    wait_for_tokens(page, expected_tokens(tokenizers, page_key, TYPED))
    for tab, keys in ESTIMATED[page_key].items():
        if tab is not None:
            harness.open_tab(page, tab)
        for key in keys:
            scope = f".st-key-{key}"
            page.wait_for_selector(f"{scope} .main-svg", state="visible", timeout=30000)
            assert harness.grown_margins(page, scope) == [], key


def test_user_text_is_shown_as_text_never_as_html(app_server, page, tokenizers) -> None:
    """An HTML/JS payload typed as the sentence shows up as its characters on every page,
    and creates no element and runs no script."""
    harness.open_app(page, url(app_server, "tokens"), charts=True)
    type_sentence(page, XSS)
    for key in PAGE_KEYS:
        if key != "tokens":
            harness.after_rerun(page, lambda key=key: nav_link(page, key).click())
        if key in TOKEN_TAB:
            harness.open_tab(page, TOKEN_TAB[key][0])
        wait_for_tokens(page, expected_tokens(tokenizers, key, XSS))
        expect(sentence_box(page)).to_have_value(XSS)
        injected = page.evaluate(
            """() => ({
              xss: window.__xss === undefined ? null : window.__xss,
              img: document.querySelectorAll('img[src="x"]').length,
              bold: [...document.querySelectorAll('b')].filter(b => b.textContent === 'bold')
                      .length,
              script: [...document.querySelectorAll('script')]
                        .filter(s => s.textContent.includes('__xss')).length,
            })"""
        )
        assert injected == {"xss": None, "img": 0, "bold": 0, "script": 0}, (key, injected)
        # The characters themselves are drawn: "<" as a tick label (alone, or after its
        # position: "1 <"), not swallowed as markup.
        texts = harness.chart_texts(page)
        assert any(t == "<" or t.endswith(" <") for t in texts), key
        assert_clean(page)


def nav_link(page, key: str):
    return page.get_by_test_id("stSidebarNav").get_by_role("link", name=TITLES[key], exact=True)


def test_navigation_keeps_the_sentence(app_server, page, tokenizers) -> None:
    """The menu's link asks for the new page with the sentence already in its query string
    (the box is bound to the URL): a replica that dies before the new page's run has
    written the URL leaves a tab that still has it (docs/DEPLOY.md)."""
    sent: list[bytes] = []  # what the browser sends the server (Streamlit's BackMsgs)
    page.on("websocket", lambda ws: ws.on("framesent", lambda data: sent.append(data)))
    harness.open_app(page, url(app_server, "tokens"), charts=True)
    type_sentence(page, TYPED)
    clicked = len(sent)
    harness.after_rerun(page, lambda: nav_link(page, "attention").click())
    asks = [d for d in sent[clicked:] if isinstance(d, bytes)]  # the first: the new page's
    assert asks and urlencode({"sentence": TYPED}).encode() in asks[0], asks[:1]
    assert page.locator("h1").first.inner_text().strip() == TITLES["attention"]
    assert "/attention" in page.url and "teacher" in page.url
    expect(sentence_box(page)).to_have_value(TYPED)
    wait_for_tokens(page, expected_tokens(tokenizers, "attention", TYPED))
    assert_clean(page)


def test_a_shared_link_then_the_menu_keeps_the_sentence(app_server, page, tokenizers) -> None:
    """A link's sentence, with nothing typed, is kept by the menu's next page, also when the
    menu is clicked as soon as it shows, before the first run has drawn the sentence box:
    the browser then asks for the next page without the sentence (it sends the parameters
    of the widgets it shows), and the next run finds it in the box's key, put there at the
    first run's start (ui.frame.open_page). Before that fix, a click this early drew the
    default sentence (found by the fault benchmark: a tab moved to another replica clicked
    the menu during its first run there). Either order passes: whether the click came
    before the box is printed."""
    page.goto(url(app_server, "tokens", sentence=TYPED))
    link = nav_link(page, "attention")
    link.wait_for(timeout=60000)
    early = sentence_box(page).count() == 0
    link.click()
    print(f"menu clicked {'before' if early else 'after'} the sentence box was drawn")
    page.wait_for_function("t => document.querySelector('h1')?.textContent.trim() === t",
                           arg=TITLES["attention"], timeout=60000)  # fmt: skip
    harness.wait_idle(page)
    assert page.locator("h1").first.inner_text().strip() == TITLES["attention"]
    expect(sentence_box(page)).to_have_value(TYPED)
    wait_for_tokens(page, expected_tokens(tokenizers, "attention", TYPED))
    assert_clean(page)


def test_a_deep_link_is_the_first_visit_of_a_fresh_server(page, tokenizers) -> None:
    """Streamlit starts in its legacy pages/ mode; ui.workarounds.leave_legacy_mode makes the
    first visit, a shared link to a page, run through app.py (docs/ARCHITECTURE.md)."""
    with harness.StreamlitServer("app.py") as server:
        server.wait_healthy(timeout=90)
        harness.open_app(page, url(server, "attention", sentence=TYPED), charts=True)
        assert page.locator("h1").first.inner_text().strip() == TITLES["attention"]
        nav = page.get_by_test_id("stSidebarNav").inner_text()
        assert "Inside the Transformer" in nav and TITLES["masked"] in nav, nav  # app.py's menu
        wait_for_tokens(page, expected_tokens(tokenizers, "attention", TYPED))
        assert_clean(page)


def test_a_lecture_link_is_the_first_visit_of_a_fresh_server(page) -> None:
    """A lecture step has no file in pages/: in the legacy mode of a fresh server's first
    visit Streamlit says "Page not found" before app.py serves it, and the app closes that
    dialog (ui.workarounds.dismiss_page_not_found)."""
    from ui.lecture.syllabus import STEPS

    with harness.StreamlitServer("app.py") as server:
        server.wait_healthy(timeout=90)
        harness.open_app(page, f"{server.url}/{STEPS[1].key}?present=1")
        page.wait_for_function("t => document.querySelector('h1')?.textContent.trim() === t",
                               arg=f"2. {STEPS[1].title}", timeout=30000)  # fmt: skip
        page.get_by_role("dialog").wait_for(state="detached", timeout=10000)
        page.get_by_role("button", name="Reveal the model's answer").click(timeout=60000)
        assert_clean(page)


def test_shared_url_with_page_param_and_model(app_server, page, tokenizers) -> None:
    """?page=attention&model=clm on the root URL opens the attention page with the clm model."""
    harness.open_app(
        page, url(app_server, "tokens", sentence=TYPED, model="clm", page="attention"), charts=True
    )
    # The root URL's first run may draw before it moves to the page asked for: wait for it
    expect(page.locator("h1").first).to_have_text(TITLES["attention"], timeout=30000)
    wait_for_tokens(page, expected_tokens(tokenizers, "attention", TYPED, sidebar_model="clm"),
                    timeout=40)  # fmt: skip
    expect(sentence_box(page)).to_have_value(TYPED, timeout=30000)
    assert_clean(page)


def test_layer_and_head_change_updates_the_heatmap(app_server, page) -> None:
    harness.open_app(page, url(app_server, "attention", sentence=SHARED), charts=True)
    heatmap = ".st-key-att_head_map"
    page.wait_for_selector(f"{heatmap} .main-svg image")
    seen = {harness.heatmap_signature(page, heatmap)}
    assert "layer 1, head 1" in next(iter(seen))
    for group, choice, title in [
        ("att_head", "2", "layer 1, head 2"),
        ("att_layer", "3", "layer 3, head 2"),
        ("att_head", "4", "layer 3, head 4"),
    ]:
        option = page.locator(f".st-key-{group}").get_by_text(choice, exact=True)
        harness.after_rerun(page, option.click)
        # The chart is drawn in the animation frame after its data arrives (ui/workarounds/
        # chart.js): wait for the drawing itself, not only for the run to end.
        page.wait_for_function(
            """([scope, title]) => {
                 const t = document.querySelector(scope + ' .gtitle');
                 return !!t && t.textContent.startsWith(title); }""",
            arg=[heatmap, title], timeout=30000,
        )  # fmt: skip
        signature = harness.heatmap_signature(page, heatmap)
        assert signature.startswith(title), signature[:60]
        assert signature not in seen, f"{title}: the heatmap did not change"
        seen.add(signature)
    # The tab's state is its URL: a reload, and the link opened in another browser, show
    # the same sentence, layer and head.
    assert "att_layer=3" in page.url and "att_head=4" in page.url, page.url
    address = page.url
    other = harness.new_context(page.context.browser)  # a shared link: another browser
    for tab in (page, other.new_page()):
        harness.open_app(tab, address, charts=True)
        tab.wait_for_function(
            "([s, t]) => document.querySelector(s + ' .gtitle')?.textContent.startsWith(t)",
            arg=[heatmap, "layer 3, head 4"], timeout=30000,
        )  # fmt: skip
        expect(sentence_box(tab)).to_have_value(SHARED)
        assert not harness.exceptions(tab)
    other.close()
    assert_clean(page)


# -- uploads ----------------------------------------------------------------------------------

UPLOAD_INPUT = '[data-testid="stFileUploaderDropzoneInput"]'


def upload(page, name: str, data: bytes, mime: str = "text/plain") -> None:
    page.locator(UPLOAD_INPUT).set_input_files(
        files=[{"name": name, "mimeType": mime, "buffer": data}]
    )


def test_upload_a_text_file_sets_the_sentence(app_server, page, tokenizers) -> None:
    harness.open_app(page, url(app_server, "tokens", sentence=SHARED), charts=True)
    harness.after_rerun(page, lambda: upload(page, "lecture.txt", (TYPED + "\n").encode()))
    expect(sentence_box(page)).to_have_value(TYPED, timeout=30000)  # the upload's own rerun
    wait_for_tokens(page, expected_tokens(tokenizers, "tokens", TYPED))
    expect(page.get_by_test_id("stSidebar")).to_contain_text("lecture.txt")
    assert_clean(page)


@pytest.mark.parametrize(
    "name, data, message",
    [
        ("photo.txt", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 4, "binary"),
        ("latin1.txt", "café crème brûlée".encode("latin-1"), "UTF-8"),
    ],
    ids=["binary", "not-utf8"],
)
def test_upload_a_binary_file_shows_the_error(
    app_server, page, tokenizers, name, data, message
) -> None:
    harness.open_app(page, url(app_server, "tokens", sentence=SHARED), charts=True)
    harness.after_rerun(page, lambda: upload(page, name, data))
    alert = page.get_by_test_id("stSidebar").get_by_test_id("stAlertContentError")
    expect(alert).to_have_count(1)
    assert message in alert.inner_text() and name in alert.inner_text()
    # The previous sentence is kept and still drawn.
    expect(sentence_box(page)).to_have_value(SHARED)
    wait_for_tokens(page, expected_tokens(tokenizers, "tokens", SHARED))
    assert_clean(page)


def test_upload_over_one_megabyte_is_refused(app_server, page, tokenizers) -> None:
    """Streamlit's own limit (maxUploadSize = 1) refuses it in the browser; the app never
    sees it, and the sentence stays."""
    harness.open_app(page, url(app_server, "tokens", sentence=SHARED), charts=True)
    upload(page, "big.txt", b"the cat sat on the mat. " * 50_000)  # 1.2 MB
    uploader = page.get_by_test_id("stFileUploader")
    uploader.get_by_text("or smaller").wait_for(timeout=10_000)
    harness.wait_idle(page)
    expect(sentence_box(page)).to_have_value(SHARED)
    wait_for_tokens(page, expected_tokens(tokenizers, "tokens", SHARED))
    assert_clean(page)
