"""A class in real browsers (issue 37): a teacher's tab on the projector and 6 students' tabs.
The students join by the link and land on the teacher's step, follow the teacher to the next
one, and vote; the teacher's count and histogram are exact; the teacher reveals and every
student sees the class's answers beside the model's. Uses the session's server (the app's
default database, the SQLite file in runs/ that the test reads too)."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

import classroom
from tests.e2e import harness

pytestmark = pytest.mark.e2e
STUDENTS = 6
PICKS = [0, 0, 0, 1, 1, 2]  # the option each student picks (by place)
STUDENT_VIEW = {"width": 1000, "height": 1400}
WAIT = 60_000  # ms: a loaded machine's first visit of a step may take long; never a sleep
FIRST, SECOND = "attention", "query-key-value"


def answers(tab):
    """The student's radio of answers (the sidebar's language menu is a radio too)."""
    return tab.get_by_role("radiogroup", name="Your answer").locator("label")


@pytest.fixture
def opened(app_server) -> Iterator[classroom.Opened]:
    """A class in the server's database (the default one), closed after the test (and
    after a failed test's screenshot: this fixture is set up before the tab)."""
    store = classroom.Store()
    opened = store.open()
    yield opened
    store.close(opened.code, opened.key)


def test_a_teacher_and_six_students(opened, app_server, browser, page, screenshot_dir) -> None:
    store = classroom.Store()
    teacher = page
    harness.open_app(teacher, f"{app_server.url}/lecture-{FIRST}?class={opened.code}"
                     f"&teacher={opened.key}&present=1")  # fmt: skip
    teacher.get_by_text(opened.code).first.wait_for(timeout=WAIT)
    assert store.snapshot(opened.code).step == FIRST

    contexts = [harness.new_context(browser, STUDENT_VIEW) for _ in range(STUDENTS)]
    try:
        tabs = [c.new_page() for c in contexts]
        for tab in tabs:  # the join link: /lecture?class=CODE lands on the teacher's step
            tab.goto(app_server.url + opened.student_url, wait_until="domcontentloaded")
        for tab in tabs:
            tab.wait_for_url(re.compile(f"/lecture-{FIRST}\\?"), timeout=WAIT)
            tab.get_by_text(f"You are in class {opened.code}").wait_for(timeout=WAIT)

        # the teacher moves on: every student follows
        teacher.get_by_role("button", name="Next").first.click()
        teacher.wait_for_url(re.compile(f"/lecture-{SECOND}\\?"), timeout=WAIT)
        for tab in tabs:
            tab.wait_for_url(re.compile(f"/lecture-{SECOND}\\?"), timeout=WAIT)
            answers(tab).first.wait_for(timeout=WAIT)
        assert store.snapshot(opened.code).step == SECOND

        # each student votes
        options = answers(tabs[0]).all_inner_texts()
        assert len(options) >= 3, options
        for tab, pick in zip(tabs, PICKS, strict=True):
            harness.wait_idle(tab, 1, 60)
            answers(tab).nth(pick).click()
            tab.get_by_text("Your vote is counted").wait_for(timeout=WAIT)
        expected = {options[p]: PICKS.count(p) for p in set(PICKS)}
        results = store.results(opened.code)
        assert results["students"] == STUDENTS
        assert {a: n for a, n in results["steps"][SECOND].items() if n} == expected

        # the teacher's live count and histogram (within a poll of the store)
        teacher.get_by_text(f"{STUDENTS} students have voted.").wait_for(timeout=WAIT)
        teacher.get_by_text("Show the class's answers").click()
        line = " · ".join(f"{o}: {expected.get(o, 0)}" for o in options)
        teacher.get_by_text(line, exact=True).wait_for(timeout=WAIT)
        teacher.locator(harness.DRAWN_CHART).first.wait_for(timeout=WAIT)
        teacher.screenshot(path=str(screenshot_dir / "class-projector.png"))

        # the reveal reaches every student who follows
        teacher.get_by_role("button", name="Reveal to the class").click()
        share = f"{max(expected.values()) / STUDENTS:.0%} of you said"
        teacher.get_by_text(share).first.wait_for(timeout=WAIT)
        for tab in tabs:
            tab.get_by_text(share).first.wait_for(timeout=WAIT)
        assert not harness.exceptions(teacher)
        assert not any(harness.exceptions(tab) for tab in tabs)
    finally:
        for c in contexts:
            c.close()
