"""A class on the projector (issue 56), in English and in Korean: the teacher's 1280x720
presenter mode runs the poll.

- On every step, the first screen (no scrolling) holds the question, its choices, the live
  count, and the join code with how many students joined; once asked for, the histogram too.
- The reveal locks the votes: a student who picks again after it keeps the vote that
  counted, and the teacher and the student see the same final share.
- Ending the class asks first; the ended class shows its summary, and its results still
  answer (`python -m classroom results CODE --json`).
Screenshots: artifacts/screenshots/class-projector-<lang>-<before|after>.png and
class-summary-<lang>.png.
"""

from __future__ import annotations

import json
import subprocess
import sys
from urllib.parse import parse_qs, urlsplit

import pytest

import classroom
from tests.e2e import harness
from ui.lecture.syllabus import STEPS

pytestmark = pytest.mark.e2e
WAIT = 120_000  # ms
PROJECTOR = {"width": 1280, "height": 720}
STEP = "attention"
WORDS = {
    "en": {"predict": "Predict first.", "voted": "students have voted", "joined": "joined",
           "show": "Show the class's answers", "reveal": "Reveal to the class",
           "locked": "Revealed: the votes are locked.", "said": "of you said",
           "answer": "Your answer", "end": "End the class", "ended": "has ended: what it got right",
           "counted": "Your vote is counted.", "mine_locked": "the votes are locked"},
    "ko": {"predict": "먼저 예측해 보세요.", "voted": "투표했습니다", "joined": "참여",
           "show": "학생들의 답 보기", "reveal": "학생들에게 공개",
           "locked": "공개됨 · 투표가 마감되었습니다.", "said": "여러분 중",
           "answer": "내 답", "end": "수업 종료", "ended": "종료 · 학생들이 맞힌 것",
           "counted": "투표가 반영되었습니다.", "mine_locked": "투표를 더 바꿀 수 없습니다"},
}  # fmt: skip


def _on_first_screen(tab, locator) -> float:
    """`locator`'s first match is drawn whole within the 1280x720 window's first screen;
    the pixels left below it."""
    locator.first.wait_for(timeout=WAIT)
    box = None
    for _ in range(20):  # a live fragment may redraw it between finding and measuring it
        box = locator.first.bounding_box()
        if box is not None:
            break
        locator.first.wait_for(timeout=WAIT)  # drawn again: its replacement is there
    assert box is not None and box["y"] >= 0 and box["y"] + box["height"] <= PROJECTOR["height"], (
        box, tab.url)  # fmt: skip
    return PROJECTOR["height"] - box["y"] - box["height"]


def _class_bar(tab, code: str) -> str:
    """Open the class bar (its header names the code) and wait until all it holds is drawn
    (the join link and its QR code); returns the join link.

    The teacher's buttons are pressed with the keyboard (Enter), not clicked: on a page whose
    live parts redraw every second, a mouse click's press and release can fall on different
    places when the page moves between them (seen: "End the class" 75 px lower at the
    release than at the press), and the browser then clicks the bar, not the button. A key
    press reaches the button wherever it is."""
    bar = tab.locator("details").filter(has_text=f"{code} ·").first
    if bar.get_attribute("open") is None:
        tab.get_by_text(f"{code} ·").first.click()
    link = bar.get_by_test_id("stCode").filter(has_text="class=").first
    link.wait_for(timeout=WAIT)
    tab.wait_for_function("(d) => [...d.querySelectorAll('img')].every(i => i.complete)",
                          arg=bar.element_handle(), timeout=WAIT)  # fmt: skip
    return link.inner_text().strip()


def _top(tab) -> None:
    tab.evaluate("() => document.querySelector('[data-testid=stMain]')?.scrollTo(0, 0)")


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_the_projector_runs_the_poll(lang, app_server, browser, screenshot_dir,
                                    request) -> None:  # fmt: skip
    words, store = WORDS[lang], classroom.Store()
    opened = store.open()
    query = f"class={opened.code}&teacher={opened.key}&present=1" + (
        f"&lang={lang}" if lang != "en" else "")  # fmt: skip
    teacher_ctx = harness.new_context(browser, PROJECTOR)
    student_ctx = harness.new_context(browser, {"width": 900, "height": 1000})
    try:
        teacher = teacher_ctx.new_page()
        left = []  # the pixels below the lowest of them, per step
        for step in STEPS:  # the first screen of every step holds the poll
            harness.open_app(teacher, f"{app_server.url}/{step.key}?{query}", timeout=120)
            left.append(min(_on_first_screen(teacher, teacher.get_by_text(what)) for what in
                            (words["predict"], words["voted"], words["joined"])))  # fmt: skip
            _on_first_screen(teacher, teacher.locator("h4"))  # the choices
            assert not harness.exceptions(teacher), step.key

        harness.open_app(teacher, f"{app_server.url}/lecture-{STEP}?{query}", timeout=120)
        # the student opens the join link the step's screen shows: the lecture, in the
        # class's language, with the class's code; then follows the teacher to the step
        link = _class_bar(teacher, opened.code)
        parts = urlsplit(link)
        assert (parts.scheme, parts.path) == ("http", "/lecture"), link
        assert parse_qs(parts.query) == {"class": [opened.code]} | (
            {"lang": [lang]} if lang != "en" else {}), link  # fmt: skip
        teacher.get_by_text(f"{opened.code} ·").first.click()  # closed again: the poll shows
        student = student_ctx.new_page()
        student.goto(link.replace(f"{parts.scheme}://{parts.netloc}", app_server.url))
        picks = student.get_by_role("radiogroup", name=words["answer"]).locator("label")
        picks.first.wait_for(timeout=WAIT)
        harness.wait_idle(student, 1, WAIT / 1000)
        picks.nth(0).click()
        try:
            student.get_by_text(words["counted"]).wait_for(timeout=WAIT)
        except Exception:
            student.screenshot(path=str(screenshot_dir / f"FAILED-class-student-{lang}.png"))
            raise
        teacher.get_by_text(words["show"]).click()
        below = _on_first_screen(teacher, teacher.locator(harness.DRAWN_CHART))  # the histogram
        request.config.stash.setdefault(harness.REPORT_KEY, []).append(
            f"projector ({lang}): the count's line leaves {min(left):.0f} px below it at "
            f"least, the histogram {below:.0f} px")
        # its text grows with presenter mode, and its labels still fit its margins
        gd = teacher.locator(".js-plotly-plot").first
        assert gd.evaluate("g => g.layout.font.size") > 14
        assert not teacher.evaluate(harness.GROWN_MARGINS_JS, "body")
        _top(teacher)
        teacher.screenshot(path=str(screenshot_dir / f"class-projector-{lang}-before.png"))

        # the reveal locks the votes: the same final share on both screens
        teacher.get_by_role("button", name=words["reveal"]).press("Enter")  # see `_class_bar`
        teacher.get_by_text(words["locked"]).wait_for(timeout=WAIT)
        share = teacher.get_by_text(words["said"]).first
        share.wait_for(timeout=WAIT)
        said = share.inner_text()
        student.get_by_text(words["said"]).first.wait_for(timeout=WAIT)
        picks.nth(1).click()  # a changed pick after the reveal does not count
        student.get_by_text(words["mine_locked"]).first.wait_for(timeout=WAIT)
        first = picks.nth(0).inner_text()
        assert list(store.results(opened.code)["steps"][STEP].items()) and \
            store.results(opened.code)["steps"][STEP][first] == 1  # fmt: skip
        assert student.get_by_text(words["said"]).first.inner_text() == said
        teacher.screenshot(path=str(screenshot_dir / f"class-projector-{lang}-after.png"))

        # ending asks first; the ended class shows its summary and still answers
        _class_bar(teacher, opened.code)
        teacher.locator(".st-key-class_close button").press("Enter")
        confirm = teacher.locator(".st-key-class_close_yes button")
        confirm.wait_for(timeout=WAIT)
        assert store.closed(opened.code) is None  # it asks first
        confirm.press("Enter")
        teacher.get_by_text(words["ended"]).first.wait_for(timeout=WAIT)
        teacher.locator(harness.DRAWN_CHART).first.wait_for(timeout=WAIT)  # the summary
        assert store.closed(opened.code) is not None
        teacher.screenshot(path=str(screenshot_dir / f"class-summary-{lang}.png"))
        out = subprocess.run([sys.executable, "-m", "classroom", "results", opened.code,
                              "--json"], capture_output=True, text=True, timeout=60,
                             cwd=harness.ROOT)  # fmt: skip
        assert out.returncode == 0, out.stderr
        assert json.loads(out.stdout)["steps"][STEP][first] == 1
        assert not harness.exceptions(teacher) and not harness.exceptions(student)
    finally:
        student_ctx.close()
        teacher_ctx.close()
        store.close(opened.code, opened.key)
