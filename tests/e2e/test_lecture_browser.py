"""Lecture mode in a real browser at 1280x720 (a projector): walk every step with the Next
control in presenter mode; at each step reveal the model's answer and check that the figure
shows the step's example. The arrow keys step too, and plain mode shows the sidebar. Presenter-mode
screenshots: artifacts/screenshots/lecture-<slug>.png (copied to assets/ for the README and
the overview's thumbnails by `python -m tests.e2e.screenshots`)."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from tests.e2e import harness
from tests.e2e.test_pages import assert_clean
from tests.walk import EXAMPLE_TOKENS
from ui.lecture.syllabus import STEPS

pytestmark = pytest.mark.e2e
PROJECTOR = {"width": 1280, "height": 720}
N = len(STEPS)


@pytest.fixture
def projector(browser):
    ctx = harness.new_context(browser, viewport=PROJECTOR)
    pg = ctx.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda err: errors.append(str(err)))
    pg.js_errors = errors  # type: ignore[attr-defined]
    yield pg
    ctx.close()


def heading(page) -> str:
    return page.locator("h1").first.inner_text().strip()


def reveal_and_check(page, n: int) -> None:
    """Reveal step n's answer and wait for a figure that shows its example."""
    harness.after_rerun(page, lambda: page.get_by_role("button", name="Reveal").first.click())
    page.get_by_text("The model's answer").first.wait_for(timeout=30000)
    page.wait_for_selector(harness.DRAWN_CHART, state="visible", timeout=30000)
    wanted = EXAMPLE_TOKENS[STEPS[n - 1].key]
    try:
        page.wait_for_function(
            """wanted => { const t = [...document.querySelectorAll(
                   '.gb-chart svg text')].map(e => e.textContent).join(' ');
                 return wanted.every(w => t.includes(w)); }""",
            arg=wanted, timeout=30000,
        )  # fmt: skip
    except Exception:  # noqa: BLE001 - say which token is missing
        texts = " ".join(harness.chart_texts(page))
        missing = [w for w in wanted if w not in texts]
        raise AssertionError(f"step {n}: {missing} not in its figures: {texts[:300]}") from None


def test_walk_the_lecture_with_the_next_control(app_server, projector, screenshot_dir) -> None:
    """The whole lecture once, in presenter mode (its screenshots are the overview's
    thumbnails); plain mode is the arrow-keys test's, every step's both modes AppTest's
    (tests/test_walk.py)."""
    page = projector
    query = "?present=1"
    harness.open_app(page, f"{app_server.url}/{STEPS[0].key}{query}")
    sidebar = page.locator('section[data-testid="stSidebar"]')
    for n in range(1, N + 1):
        page.wait_for_function(
            "n => document.querySelector('h1')?.textContent.trim().startsWith(n + '. ')",
            arg=str(n), timeout=30000,
        )  # fmt: skip
        assert re.search(rf"/{STEPS[n - 1].key}(\?|$)", page.url), page.url
        assert "present=1" in page.url
        sidebar.wait_for(state="hidden", timeout=30000)
        reveal_and_check(page, n)
        assert_clean(page)
        page.evaluate("() => document.querySelectorAll('*').forEach(e => { e.scrollTop = 0; })")
        page.screenshot(path=str(screenshot_dir / f"{STEPS[n - 1].key}.png"))
        if n < N:
            page.get_by_role("button", name="Next").first.click()
    assert page.get_by_role("button", name="Next").first.is_disabled()


def press_to(page, key: str, path: str) -> None:
    """Press `key` once its button is on the page, and wait for the step at `path`. The
    press is repeated once after 15 s: a loaded machine (the class load test just before)
    showed a press that reached the page while it was still applying the last run's
    elements, and nothing happened."""
    name = "Next" if key == "ArrowRight" else "Previous"
    page.get_by_role("button", name=name).first.wait_for(state="visible", timeout=30000)
    for attempt in range(2):
        page.keyboard.press(key)
        try:
            page.wait_for_url(re.compile(f"/{path}"), timeout=15000)
            return
        except PlaywrightTimeout:
            if attempt:
                raise


def test_the_arrow_keys_step_and_the_overview_links_every_step(app_server, projector,
                                                               screenshot_dir) -> None:  # fmt: skip
    page = projector
    # An old numbered link (/lecture_2, before steps had slugs) opens the same step, at its
    # slug, keeping presenter mode.
    harness.open_app(page, f"{app_server.url}/lecture_2?present=1")
    page.wait_for_url(re.compile(f"/{STEPS[1].key}\\?present=1"), timeout=30000)
    assert heading(page) == f"2. {STEPS[1].title}"
    page.locator("h1").first.click()  # focus on the page, not on a widget
    press_to(page, "ArrowRight", STEPS[2].key)
    page.wait_for_function("() => document.querySelector('h1')?.textContent.startsWith('3. ')")
    press_to(page, "ArrowLeft", STEPS[1].key)

    # Plain mode (no ?present): the sidebar is there, and Next goes on without presenter mode.
    harness.open_app(page, f"{app_server.url}/{STEPS[-2].key}")
    page.locator('section[data-testid="stSidebar"]').wait_for(state="visible", timeout=30000)
    reveal_and_check(page, N - 1)
    page.get_by_role("button", name="Next").first.click()
    page.wait_for_url(re.compile(f"/{STEPS[-1].key}$"), timeout=30000)
    assert_clean(page)

    harness.open_app(page, f"{app_server.url}/lecture")
    assert heading(page) == "The lecture, step by step"
    for step in STEPS:  # waits: deltas land after the run
        page.get_by_role("link", name=f"{step.number}. {step.title}").first.wait_for(timeout=30000)
    page.screenshot(path=str(screenshot_dir / "lecture.png"))
    assert_clean(page)
