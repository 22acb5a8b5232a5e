"""A class on a student's phone (issue 55), in English and in Korean: a 390x844 touch screen
(Playwright's device emulation) joins by the link the teacher shows, sees the question (not
the menu), taps an answer (each a target of at least 44 px), sees the reveal ("N% of you
said X" and the model's answer) and follows the teacher to the next step, whose address it
then holds; the menu stays closed throughout. The teacher's tab is a 1280x720 projector in
presenter mode. Screenshots: artifacts/screenshots/class-phone-<lang>.png.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

import pytest

import classroom
from tests.e2e import harness

pytestmark = pytest.mark.e2e
WAIT = 120_000  # ms: a loaded machine's first visit of a step may take long; never a sleep
PROJECTOR = {"width": 1280, "height": 720}
PHONE = {"viewport": {"width": 390, "height": 844}, "device_scale_factor": 3,
         "is_mobile": True, "has_touch": True,
         "user_agent": "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) "
                       "AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148"}  # fmt: skip
FIRST, SECOND = "attention", "query-key-value"
WORDS = {
    "en": {"in": "You are in class {code}.", "answer": "Your answer",
           "counted": "Your vote is counted.", "reveal": "Reveal to the class",
           "said": "of you said", "next": "Next"},
    "ko": {"in": "참여 중인 수업 · {code}", "answer": "내 답", "counted": "투표가 반영되었습니다.",
           "reveal": "학생들에게 공개", "said": "여러분 중", "next": "다음"},
}  # fmt: skip
# Scroll the first alert holding `text` into view, if there is one now
SCROLL_TO_JS = """(text) => {
  const el = [...document.querySelectorAll('[data-testid="stAlert"]')]
    .find((e) => e.textContent.includes(text));
  if (el) el.scrollIntoView({block: "center"});
}"""
MENU_CLOSED_JS = """() => {
  const bar = document.querySelector('[data-testid="stSidebar"]');
  if (!bar) return true;
  const box = bar.getBoundingClientRect();
  return bar.getAttribute('aria-expanded') === 'false' || box.right <= 1 || box.width < 2;
}"""


def _menu_closed(tab) -> bool:
    return tab.evaluate(MENU_CLOSED_JS)


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_a_student_on_a_phone(lang, app_server, browser, screenshot_dir) -> None:
    words, store = WORDS[lang], classroom.Store()
    opened = store.open()
    teacher_ctx = harness.new_context(browser, PROJECTOR)
    phone_ctx = harness.new_context(browser, PHONE["viewport"], **{
        k: v for k, v in PHONE.items() if k != "viewport"})  # fmt: skip
    try:
        teacher = teacher_ctx.new_page()
        suffix = f"&lang={lang}" if lang != "en" else ""
        harness.open_app(teacher, f"{app_server.url}/lecture-{FIRST}?class={opened.code}"
                         f"&teacher={opened.key}&present=1{suffix}", timeout=120)  # fmt: skip
        teacher.get_by_text(opened.code).first.wait_for(timeout=WAIT)

        # the join link as the teacher's page gives it (its language included)
        link = teacher.locator("code").filter(has_text=f"class={opened.code}").first
        link.wait_for(state="attached", timeout=WAIT)
        shown = (link.text_content() or "").strip()  # in the folded expander: text, not shown
        path = shown[shown.index("/lecture?"):]
        assert ("lang=ko" in path) == (lang == "ko"), path
        phone = phone_ctx.new_page()
        phone.goto(app_server.url + path, wait_until="domcontentloaded")
        phone.wait_for_url(re.compile(f"/lecture-{FIRST}\\?"), timeout=WAIT)
        phone.get_by_text(words["in"].format(code=opened.code)).wait_for(timeout=WAIT)
        assert _menu_closed(phone), "the menu covers the page on a phone"

        # the question, answers a thumb can tap, a vote
        choices = phone.get_by_role("radiogroup", name=words["answer"]).locator("label")
        choices.first.wait_for(timeout=WAIT)
        for n in range(choices.count()):
            box = choices.nth(n).bounding_box(timeout=WAIT)
            assert box and box["height"] >= 44 and box["width"] >= 44, (n, box)
        harness.wait_idle(phone, 1, WAIT / 1000)  # its first run done: the radio is final
        choices.first.tap()
        phone.get_by_text(words["counted"]).wait_for(timeout=WAIT)
        assert store.results(opened.code)["students"] == 1

        # the reveal reaches the phone: the class's share and the model's answer
        # the teacher's buttons are pressed with the keyboard (test_class_projector.py)
        teacher.get_by_role("button", name=words["reveal"]).press("Enter")
        phone.get_by_text(words["said"]).first.wait_for(timeout=WAIT)
        phone.evaluate(SCROLL_TO_JS, words["said"])  # for the screenshot (a redraw may replace it)
        assert _menu_closed(phone)
        phone.screenshot(path=str(screenshot_dir / f"class-phone-{lang}.png"))

        # the teacher moves on: the phone follows, and its address is the step it shows
        teacher.get_by_role("button", name=words["next"]).first.press("Enter")
        phone.wait_for_url(re.compile(f"/lecture-{SECOND}\\?"), timeout=WAIT)
        phone.get_by_role("radiogroup", name=words["answer"]).wait_for(timeout=WAIT)
        heading = phone.locator("h1").first.inner_text(timeout=WAIT).strip()
        assert heading.startswith("3."), heading
        assert urlsplit(phone.url).path.endswith(f"/lecture-{SECOND}"), phone.url
        assert f"class={opened.code}" in phone.url and "student=" in phone.url
        assert _menu_closed(phone), "a follow opened the menu"
        assert not harness.exceptions(phone) and not harness.exceptions(teacher)
    finally:
        phone_ctx.close()
        teacher_ctx.close()
        store.close(opened.code, opened.key)
