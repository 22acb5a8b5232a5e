"""Lecture mode in Korean in a real browser (issue 31): ?lang=ko&present=1 at 1280x720, a
projector. Every step is opened with the Next control (다음), its question revealed (모델의 답
보기) and its figure waited for; then: the title and the step's place are in Korean, no
catalogue message is left in English, no title is cut off (the page's, the bar's, a
chart's), no tick label is cut off or overlaps its neighbour. Screenshots:
artifacts/screenshots/lecture-ko-<slug>.png. Hangul needs a font with Korean glyphs
(Debian's fonts-noto-cjk): without one the screenshots would show boxes, so the test says so
and fails."""

from __future__ import annotations

import re
import subprocess

import pytest

from i18n import _, using
from tests.e2e import harness
from tests.e2e.test_lecture_browser import PROJECTOR, heading
from tests.e2e.test_pages import assert_clean
from tests.walk import EXAMPLE_TOKENS, english_left
from ui.lecture.syllabus import STEPS

pytestmark = pytest.mark.e2e
N = len(STEPS)
HANGUL = re.compile("[가-힣]")


def korean_examples() -> dict[str, list[str]]:
    """What each step's figure must show once revealed, in Korean: the model's tokens stay
    as they are, a legend the step names is in Korean."""
    with using("ko"):
        learn = _("{task}, without positions", task=_("reverse"))
    return EXAMPLE_TOKENS | {"lecture-rnn-bottleneck": ["lstm"],
                             "lecture-watch-it-learn": [learn]}  # fmt: skip


@pytest.fixture(scope="module")
def korean_font() -> None:
    try:
        fonts = subprocess.run(["fc-list", ":lang=ko", "family"], capture_output=True,
                               text=True, timeout=30).stdout  # fmt: skip
    except FileNotFoundError:
        fonts = ""
    if not fonts.strip():
        pytest.fail("no font with Hangul: apt-get install -y fonts-noto-cjk", pytrace=False)


@pytest.fixture
def projector(browser):
    ctx = harness.new_context(browser, viewport=PROJECTOR, locale="ko-KR")
    pg = ctx.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda err: errors.append(str(err)))
    pg.js_errors = errors  # type: ignore[attr-defined]
    yield pg
    ctx.close()


# Titles drawn wider than their box: the page's h1 and the bar's step line (as the browser
# lays them out, clipped by an ancestor's overflow or by the window), and each chart's title
# (outside its SVG, where Plotly cuts it off).
CUT_TITLES_JS = """(tol) => {
  const out = [], width = window.innerWidth;
  const over = (r, box) => r.left < box.left - tol || r.right > box.right + tol;
  document.querySelectorAll('h1, [data-testid="stMarkdownContainer"] strong').forEach((el) => {
    const r = el.getBoundingClientRect();
    if (r.width === 0) return;
    let box = {left: 0, right: width};
    for (let p = el.parentElement; p; p = p.parentElement) {
      const s = getComputedStyle(p);
      if (s.overflowX !== 'visible') {
        const b = p.getBoundingClientRect();
        box = {left: Math.max(box.left, b.left), right: Math.min(box.right, b.right)};
      }
    }
    if (over(r, box) || el.scrollWidth > el.clientWidth + tol && el.clientWidth > 0)
      out.push({title: el.textContent.trim().slice(0, 80), left: r.left, right: r.right});
  });
  document.querySelectorAll('.gb-chart').forEach((chart) => {
    const svg = chart.querySelector('.main-svg');
    if (!svg) return;
    const box = svg.getBoundingClientRect();
    chart.querySelectorAll('.gtitle, .g-xtitle text, .g-ytitle text').forEach((t) => {
      const r = t.getBoundingClientRect();
      if (r.width && (over(r, box) || r.top < box.top - tol || r.bottom > box.bottom + tol))
        out.push({chart: t.textContent.slice(0, 80), left: r.left, right: r.right});
    });
  });
  return out;
}"""

# Tick labels of one axis that overlap the next one (drawn on top of each other). A label
# is the rectangle of its own text box as drawn (rotated ticks too: the box's corners through
# the text's screen transform), and two overlap when no side of either separates them by
# more than `tol` pixels (the separating axis test for two convex shapes).
OVERLAPPING_TICKS_JS = """(tol) => {
  const corners = (t) => {
    const b = t.getBBox(), m = t.getScreenCTM();
    return [[b.x, b.y], [b.x + b.width, b.y], [b.x + b.width, b.y + b.height],
            [b.x, b.y + b.height]].map(([x, y]) => [m.a * x + m.c * y + m.e,
                                                     m.b * x + m.d * y + m.f]);
  };
  const overlap = (p, q) => {
    let least = Infinity;
    for (const shape of [p, q])
      for (let i = 0; i < 4; i++) {
        const [x1, y1] = shape[i], [x2, y2] = shape[(i + 1) % 4];
        const len = Math.hypot(x2 - x1, y2 - y1) || 1, n = [(y1 - y2) / len, (x2 - x1) / len];
        const on = (s) => s.map(([x, y]) => x * n[0] + y * n[1]);
        const a = on(p), c = on(q);
        least = Math.min(least, Math.min(Math.max(...a), Math.max(...c))
                                 - Math.max(Math.min(...a), Math.min(...c)));
      }
    return least;
  };
  const out = [];
  document.querySelectorAll('.gb-chart').forEach((chart, i) => {
    const key = (chart.closest('[class*="st-key-"]')?.className.match(/st-key-(\\S+)/)
                 || [null, String(i)])[1];
    chart.querySelectorAll('.xaxislayer-above, .yaxislayer-above').forEach((axis) => {
      const ticks = [...axis.querySelectorAll('.xtick text, .ytick text')]
        .filter((t) => t.textContent && t.getBoundingClientRect().width > 0)
        .map((t) => ({label: t.textContent, box: corners(t)}));
      for (let a = 0; a < ticks.length; a++)
        for (let b = a + 1; b < ticks.length; b++)
          if (overlap(ticks[a].box, ticks[b].box) > tol)
            out.push({chart: key, labels: [ticks[a].label, ticks[b].label]});
    });
  });
  return out;
}"""


def assert_laid_out(page, where: str) -> None:
    """No cut-off title, no cut-off or overlapping tick label."""
    cut = page.evaluate(CUT_TITLES_JS, 2)
    assert not cut, f"{where}: titles cut off: {cut[:5]}"
    clipped = harness.clipped_tick_labels(page)
    assert not clipped, f"{where}: tick labels cut off: {clipped[:5]}"
    overlapping = page.evaluate(OVERLAPPING_TICKS_JS, 1)
    assert not overlapping, f"{where}: tick labels overlap: {overlapping[:5]}"


def reveal(page, n: int, wanted: list[str]) -> None:
    """Reveal step n's answer and wait for a figure that shows its example."""
    button = page.get_by_role("button", name="모델의 답 보기").first
    harness.after_rerun(page, button.click)
    page.get_by_text("모델의 답:").first.wait_for(timeout=30000)
    page.wait_for_selector(harness.DRAWN_CHART, state="visible", timeout=30000)
    try:
        page.wait_for_function(
            """wanted => { const t = [...document.querySelectorAll(
                   '.gb-chart svg text')].map(e => e.textContent).join(' ');
                 return wanted.every(w => t.includes(w)); }""",
            arg=wanted, timeout=30000,
        )  # fmt: skip
    except Exception:  # noqa: BLE001 - say which one is missing
        texts = " ".join(harness.chart_texts(page))
        missing = [w for w in wanted if w not in texts]
        raise AssertionError(f"step {n}: {missing} not in its figures: {texts[:300]}") from None


def test_walk_the_lecture_in_korean_in_presenter_mode(app_server, projector, screenshot_dir,
                                                      korean_font) -> None:  # fmt: skip
    page = projector
    examples = korean_examples()
    with using("ko"):
        titles = [f"{s.number}. {s.title}" for s in STEPS]
        bar = [_("**Step {n} of {total}** · {title}", n=s.number, total=N, title=s.title)
               for s in STEPS]  # fmt: skip
    harness.open_app(page, f"{app_server.url}/{STEPS[0].key}?present=1&lang=ko")
    sidebar = page.locator('section[data-testid="stSidebar"]')
    for n, step in enumerate(STEPS, 1):
        page.wait_for_function("t => document.querySelector('h1')?.textContent.trim() === t",
                               arg=titles[n - 1], timeout=30000)  # fmt: skip
        assert HANGUL.search(heading(page)), heading(page)
        assert re.search(rf"/{step.key}\?", page.url), page.url
        assert "present=1" in page.url and "lang=ko" in page.url, page.url
        sidebar.wait_for(state="hidden", timeout=30000)
        page.get_by_text(bar[n - 1].replace("**", "").split(" · ")[0]).first.wait_for()
        reveal(page, n, examples[step.key])
        assert_clean(page)
        lines = [line for line in page.locator(harness.APP).inner_text().splitlines() if line]
        left = english_left(lines)
        assert not left, f"step {n} shows English: {left}"
        page.evaluate("() => document.querySelectorAll('*').forEach(e => { e.scrollTop = 0; })")
        page.screenshot(path=str(screenshot_dir / f"lecture-ko-{step.slug}.png"))
        assert_laid_out(page, f"step {n}")
        if n < N:
            page.get_by_role("button", name="다음").first.click()
    assert page.get_by_role("button", name="다음").first.is_disabled()


def test_the_korean_overview_links_every_step(app_server, projector, screenshot_dir,
                                              korean_font) -> None:  # fmt: skip
    page = projector
    harness.open_app(page, f"{app_server.url}/lecture?lang=ko")
    assert heading(page) == "단계별로 보는 강의"
    with using("ko"):
        links = [f"{s.number}. {s.title}" for s in STEPS]
    for label in links:
        page.get_by_role("link", name=label).first.wait_for(timeout=30000)
    assert_clean(page)
    assert_laid_out(page, "overview")
    page.screenshot(path=str(screenshot_dir / "lecture-ko-overview.png"))


SYNTHETIC = """<div style="width: 300px; overflow: hidden"><h1 style="white-space: nowrap">
  강의 제목이 아주 길어서 상자 밖으로 잘려 나가는 제목입니다</h1></div>
<div class="gb-chart"><svg class="main-svg" width="300" height="200">
  <g class="xaxislayer-above">
    <g class="xtick"><text x="100" y="150" transform="rotate(-60,100,150)">because</text></g>
    <g class="xtick"><text x="112" y="150" transform="rotate(-60,112,150)">warm</text></g>
    <g class="xtick"><text x="150" y="150" transform="rotate(-60,150,150)">mat</text></g>
    <g class="xtick"><text x="180" y="150" transform="rotate(-60,180,150)">it</text></g>
  </g></svg></div>"""


def test_the_layout_checks_see_a_cut_title_and_overlapping_ticks(browser) -> None:
    """On a made-up page: the cut h1 is found; of rotated ticks, only the two drawn on top
    of each other overlap (rotated boxes, not their upright bounding boxes)."""
    ctx = harness.new_context(browser, viewport=PROJECTOR)
    page = ctx.new_page()
    page.set_content(SYNTHETIC)
    cut = page.evaluate(CUT_TITLES_JS, 2)
    assert len(cut) == 1 and cut[0]["title"].startswith("강의 제목이")
    pairs = [c["labels"] for c in page.evaluate(OVERLAPPING_TICKS_JS, 1)]
    assert pairs == [["because", "warm"]]
    ctx.close()
